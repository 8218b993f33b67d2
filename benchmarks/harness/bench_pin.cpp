// Pinocchio side of `make bench`: times Pinocchio's C++ algorithms on the same
// states as bench_c.c. Usage:
//   bench_pin MODEL.txt STATES.bin [--target-ms T] [--inner N] [--only NAME] [--no-tick] [--cold-kib K] [--flush]
//             [--dump FILE K]
// MODEL.txt is written by benchmarks/pin_model.py from the Pinocchio model that
// pin.buildModelFromUrdf makes of a URDF (for a frame table: benchmarks/build/NAME_aligned.urdf,
// joint axes +x/+y/+z, so JointModelRX/RY/RZ). Its `ee NAME JOINT x y z` lines list the
// end effectors (a point fixed in a joint's frame), its `group KEY TICKKEY` line the keys
// of all of them together; nothing here names a robot. Two builds of this file:
//  * default: header-only. Every algorithm is instantiated here, compiled with
//    the same flags as our kernels (-O3 -march=native), no Pinocchio library
//    linked; the model is rebuilt joint by joint from MODEL.txt.
//  * -DBENCH_PIN_LIB: Pinocchio as the wheel ships it. With
//    -DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION the algorithms run from
//    libpinocchio_default (the wheel's own compiler flags), the model is loaded
//    with pinocchio::urdf::buildModel from libpinocchio_parsers. Built without
//    -march=native so that Eigen's alignment matches the shipped libraries.
// Jacobians: Pinocchio's LOCAL_WORLD_ALIGNED is our "world" Jacobian (linear
// velocity of the end-effector origin and angular velocity, in frame 0).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pinocchio/algorithm/aba-derivatives.hpp"
#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/algorithm/regressor.hpp"
#include "pinocchio/algorithm/rnea-derivatives.hpp"
#include "pinocchio/multibody/joint.hpp"
#ifdef BENCH_PIN_LIB
#include "pinocchio/parsers/urdf.hpp"
#endif

#include "bench_common.h"

namespace pin = pinocchio;

struct EndEffector {
    std::string name, key;       // key: "J_" + name
    pin::JointIndex joint = 0;
    Eigen::Vector3d offset = Eigen::Vector3d::Zero();  // origin in the joint's frame
    bool at_joint = true;        // offset zero: the joint's own JOINT frame
    pin::FrameIndex frame = 0;   // the JOINT frame, or an OP_FRAME added here
};

struct Loaded {
    pin::Model model;
    std::vector<int> perm;  // perm[i] = Pinocchio's velocity index of our dq[i] (rows/columns of A, C, Q, J)
    // per joint of the order line, in our order: Pinocchio's configuration index and its kind
    // (0: one angle or length, 1: our angle -> Pinocchio's (cos, sin), 7: a free-flyer, whose
    // 7 configuration entries (position, quaternion x-y-z-w) are ours as they are)
    std::vector<int> qidx;
    std::vector<int> kind;
    int nq_ours = 0;
    std::vector<EndEffector> ees;
    std::string group = "J_all", tick_group = "J";
};

static Loaded load(const char *path)
{
    std::ifstream in(path);
    if (!in) throw std::runtime_error(std::string("cannot open ") + path);
    Loaded L;
    pin::Model &m = L.model;
    std::string line, urdf;
    Eigen::Vector3d gravity(0, 0, -9.81);
    std::map<std::string, double> armature;
    std::vector<std::string> order;
    std::vector<std::string> ee_joint;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string tag;
        if (!(ls >> tag) || tag[0] == '#') continue;
        if (tag == "urdf") {
            ls >> urdf;
        } else if (tag == "gravity") {
            ls >> gravity[0] >> gravity[1] >> gravity[2];
        } else if (tag == "joint") {
#ifndef BENCH_PIN_LIB
            std::string name, parent, type;
            Eigen::Matrix3d R;
            Eigen::Vector3d p;
            ls >> name >> parent >> type;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) ls >> R(r, c);
            ls >> p[0] >> p[1] >> p[2];
            if (!ls) throw std::runtime_error("bad joint line: " + line);
            pin::JointIndex pid = parent == "universe" ? 0 : m.getJointId(parent);
            if (pid >= (pin::JointIndex)m.njoints) throw std::runtime_error("unknown parent " + parent);
            pin::SE3 placement(R, p);
            Eigen::Vector3d axis;
            if (type == "RU" || type == "PU") {  // unaligned axis, after the placement
                ls >> axis[0] >> axis[1] >> axis[2];
                if (!ls) throw std::runtime_error("bad joint line (axis): " + line);
            }
            if (type == "RX") m.addJoint(pid, pin::JointModelRX(), placement, name);
            else if (type == "RY") m.addJoint(pid, pin::JointModelRY(), placement, name);
            else if (type == "RZ") m.addJoint(pid, pin::JointModelRZ(), placement, name);
            else if (type == "PX") m.addJoint(pid, pin::JointModelPX(), placement, name);
            else if (type == "PY") m.addJoint(pid, pin::JointModelPY(), placement, name);
            else if (type == "PZ") m.addJoint(pid, pin::JointModelPZ(), placement, name);
            else if (type == "RU") m.addJoint(pid, pin::JointModelRevoluteUnaligned(axis), placement, name);
            else if (type == "PU") m.addJoint(pid, pin::JointModelPrismaticUnaligned(axis), placement, name);
            // URDF `continuous`: Pinocchio's (cos, sin) joints; the states are converted below
            else if (type == "RUBX") m.addJoint(pid, pin::JointModelRUBX(), placement, name);
            else if (type == "RUBY") m.addJoint(pid, pin::JointModelRUBY(), placement, name);
            else if (type == "RUBZ") m.addJoint(pid, pin::JointModelRUBZ(), placement, name);
            // a floating base (Pinocchio's JointModelFreeFlyer): the states carry its 7 q and 6 v entries
            else if (type == "FF") m.addJoint(pid, pin::JointModelFreeFlyer(), placement, name);
            else throw std::runtime_error("unsupported joint type " + type);
            m.addJointFrame(m.getJointId(name));  // as the URDF parser does: a JOINT frame named after it
#endif
        } else if (tag == "inertia") {
#ifndef BENCH_PIN_LIB
            std::string name;
            double mass;
            Eigen::Vector3d c;
            Eigen::Matrix3d I;
            ls >> name >> mass >> c[0] >> c[1] >> c[2];
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) ls >> I(r, k);
            if (!ls) throw std::runtime_error("bad inertia line: " + line);
            m.appendBodyToJoint(m.getJointId(name), pin::Inertia(mass, c, I), pin::SE3::Identity());
#endif
        } else if (tag == "armature") {
            std::string name;
            double a;
            ls >> name >> a;
            armature[name] = a;
        } else if (tag == "order") {
            std::string name;
            while (ls >> name) order.push_back(name);
        } else if (tag == "ee") {
            EndEffector e;
            std::string joint;
            ls >> e.name >> joint >> e.offset[0] >> e.offset[1] >> e.offset[2];
            if (!ls) throw std::runtime_error("bad ee line: " + line);
            e.key = "J_" + e.name;
            L.ees.push_back(e);
            ee_joint.push_back(joint);
        } else if (tag == "group") {
            ls >> L.group >> L.tick_group;
        } else {
            throw std::runtime_error("unknown line in model file: " + line);
        }
    }
#ifdef BENCH_PIN_LIB
    if (urdf.empty()) throw std::runtime_error("model file has no urdf line");
    pin::urdf::buildModel(urdf, m);
#endif
    m.gravity.linear(gravity);
    for (const auto &kv : armature) {
        pin::JointIndex j = m.getJointId(kv.first);
        if (j >= (pin::JointIndex)m.njoints) throw std::runtime_error("unknown joint " + kv.first);
        m.armature[m.joints[j].idx_v()] = kv.second;
    }
    for (const auto &name : order) {
        pin::JointIndex j = m.getJointId(name);
        if (j >= (pin::JointIndex)m.njoints) throw std::runtime_error("bad joint in order line: " + name);
        const int nv = m.joints[j].nv(), nq = m.joints[j].nq();
        if (!((nv == 1 && nq <= 2) || (nv == 6 && nq == 7 && L.perm.empty())))  // a free-flyer comes first
            throw std::runtime_error("bad joint in order line: " + name);
        for (int k = 0; k < nv; k++) L.perm.push_back(m.joints[j].idx_v() + k);
        L.qidx.push_back(m.joints[j].idx_q());
        L.kind.push_back(nq == 7 ? 7 : nq == 2 ? 1 : 0);
        L.nq_ours += nq == 7 ? 7 : 1;
    }
    if ((int)L.perm.size() != m.nv) throw std::runtime_error("order line does not match the model");
    if (L.ees.empty() || L.ees.size() > 29) throw std::runtime_error("need 1 to 29 ee lines");
    for (size_t k = 0; k < L.ees.size(); k++) {
        EndEffector &e = L.ees[k];
        e.joint = m.getJointId(ee_joint[k]);
        if (e.joint >= (pin::JointIndex)m.njoints) throw std::runtime_error("end-effector joint not found: " + ee_joint[k]);
        e.at_joint = e.offset.isZero(0.0);
        if (e.at_joint) {
            e.frame = m.getFrameId(ee_joint[k], pin::JOINT);
            if (e.frame >= m.frames.size()) throw std::runtime_error("joint frame not found: " + ee_joint[k]);
        } else {
            const pin::FrameIndex parent = m.getFrameId(ee_joint[k], pin::JOINT);
            e.frame = m.addFrame(pin::Frame("bench_ee_" + e.name, e.joint, parent,
                                            pin::SE3(Eigen::Matrix3d::Identity(), e.offset), pin::OP_FRAME));
        }
    }
    return L;
}

// Joint Jacobian in LOCAL frame of the end effector's joint (support-chain pass), then rotated to
// LOCAL_WORLD_ALIGNED. After computeJointJacobian, data.iMf[0] is the world placement of that joint.
// An end effector off the joint's origin: its linear velocity is v + w x r, r = R * offset.
static inline void jac_world(const pin::Model &m, pin::Data &d, const Eigen::VectorXd &q, const EndEffector &e,
                             pin::Data::Matrix6x &Jloc, pin::Data::Matrix6x &Jw)
{
    pin::computeJointJacobian(m, d, q, e.joint, Jloc);
    const Eigen::Matrix3d R = d.iMf[0].rotation();
    Jw.topRows<3>().noalias() = R * Jloc.topRows<3>();
    Jw.bottomRows<3>().noalias() = R * Jloc.bottomRows<3>();
    if (!e.at_joint) {
        const Eigen::Vector3d r = R * e.offset;
        for (int c = 0; c < Jw.cols(); c++) Jw.col(c).head<3>() += Jw.col(c).tail<3>().cross(r);
    }
}

// After computeJointJacobians: the end effector's LOCAL_WORLD_ALIGNED Jacobian.
static inline void get_jac(const pin::Model &m, pin::Data &d, const EndEffector &e, pin::Data::Matrix6x &J)
{
    if (e.at_joint) pin::getJointJacobian(m, d, e.joint, pin::LOCAL_WORLD_ALIGNED, J);
    else pin::getFrameJacobian(m, d, e.frame, pin::LOCAL_WORLD_ALIGNED, J);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.txt STATES.bin [--target-ms T] [--inner N] [--only NAME] [--dump FILE K]\n",
                argv[0]);
        return 2;
    }
    Loaded L;
    try {
        L = load(argv[1]);
    } catch (const std::exception &e) {
        fprintf(stderr, "bench_pin: %s\n", e.what());
        return 2;
    }
    const pin::Model &model = L.model;
    pin::Data data(model);
    bench_states st0 = bench_read_states(argv[2]);
    const int nd = st0.ndof;
    if (nd != model.nv) bench_die("states file ndof differs from the model's nv");
    if (st0.nq != L.nq_ours) bench_die("states file nq differs from the model's (floating base?)");
    // The same states, in Pinocchio's joint order, as Eigen::VectorXd (the argument type
    // Pinocchio's explicit instantiations are declared for, so that the BENCH_PIN_LIB build
    // really runs the library's code). The timed statements index them by the state number s_.
    bench_states st = st0;
    std::vector<Eigen::VectorXd> qs(st.nstates, Eigen::VectorXd(model.nq)), vs(st.nstates, Eigen::VectorXd(nd));
    for (int s = 0; s < st.nstates; s++) {
        const double *q = st0.q + (size_t)s * st0.nq;
        for (size_t k = 0, i = 0; k < L.kind.size(); k++) {
            if (L.kind[k] == 7) {
                for (int c = 0; c < 7; c++) qs[s][L.qidx[k] + c] = q[i++];
            } else if (L.kind[k] == 1) {
                qs[s][L.qidx[k]] = std::cos(q[i]);
                qs[s][L.qidx[k] + 1] = std::sin(q[i++]);
            } else {
                qs[s][L.qidx[k]] = q[i++];
            }
        }
        for (int i = 0; i < nd; i++) vs[s][L.perm[i]] = st0.dq[s * nd + i];
    }
    const size_t ne = L.ees.size();
    std::vector<pin::Data::Matrix6x> Jloc(ne, pin::Data::Matrix6x::Zero(6, nd)), Jw = Jloc, J2 = Jloc;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nd);

    int kdump = 0;
    const char *dump = bench_dump_path(argc, argv, 3, &kdump);
    if (dump) {  // A, C, Q, then each end effector's world Jacobian, per state, in our q order
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        std::vector<double> buf;
        for (int s = 0; s < kdump && s < st.nstates; s++) {
            const Eigen::VectorXd &q = qs[s], &v = vs[s];
            Eigen::MatrixXd M = pin::crba(model, data, q);
            M.triangularView<Eigen::StrictlyLower>() = M.transpose().triangularView<Eigen::StrictlyLower>();
            Eigen::MatrixXd C = pin::computeCoriolisMatrix(model, data, q, v);
            Eigen::VectorXd G = pin::computeGeneralizedGravity(model, data, q);
            buf.clear();
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nd; j++) buf.push_back(M(L.perm[i], L.perm[j]));
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nd; j++) buf.push_back(C(L.perm[i], L.perm[j]));
            for (int i = 0; i < nd; i++) buf.push_back(G[L.perm[i]]);
            for (size_t e = 0; e < ne; e++) {
                jac_world(model, data, q, L.ees[e], Jloc[e], Jw[e]);
                for (int r = 0; r < 6; r++)
                    for (int i = 0; i < nd; i++) buf.push_back(Jw[e](r, L.perm[i]));
            }
            fwrite(buf.data(), sizeof(double), buf.size(), f);
        }
        fclose(f);
        return 0;
    }

    bench_opts o;
    bench_parse_opts(argc, argv, 3, &o);
#ifdef BENCH_PIN_LIB
    printf("{\n  \"harness\": \"pin-lib\",\n");
#else
    printf("{\n  \"harness\": \"pin\",\n");
#endif
    printf("  \"nstates\": %d,\n  \"ns\": {", st.nstates);
#define Q_ qs[s_]
#define V_ vs[s_]
    const std::string &G = L.group;
    const EndEffector &e0 = L.ees[0];
    BENCH_TIME(o, st, "A", pin::crba(model, data, Q_));
    BENCH_TIME(o, st, "A_sym", {
        pin::crba(model, data, Q_);
        data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
    });
    BENCH_TIME(o, st, "A_worldconv", pin::crba(model, data, Q_, pin::Convention::WORLD));
    BENCH_TIME(o, st, "C", pin::computeCoriolisMatrix(model, data, Q_, V_));
    BENCH_TIME(o, st, "Q", pin::computeGeneralizedGravity(model, data, Q_));
    BENCH_TIME(o, st, "nle_rnea", pin::rnea(model, data, Q_, V_, zero));
    for (size_t e = 0; e < ne; e++)
        BENCH_TIME(o, st, L.ees[e].key.c_str(), jac_world(model, data, Q_, L.ees[e], Jloc[e], Jw[e]));
    BENCH_TIME(o, st, G.c_str(), {
        for (size_t e = 0; e < ne; e++) jac_world(model, data, Q_, L.ees[e], Jloc[e], Jw[e]);
    });
    BENCH_TIME(o, st, (G + "_alljac").c_str(), {
        pin::computeJointJacobians(model, data, Q_);
        for (size_t e = 0; e < ne; e++) get_jac(model, data, L.ees[e], J2[e]);
    });
    BENCH_TIME(o, st, (G + "_framejac").c_str(), {
        for (size_t e = 0; e < ne; e++)
            pin::computeFrameJacobian(model, data, Q_, L.ees[e].frame, pin::LOCAL_WORLD_ALIGNED, J2[e]);
    });
    BENCH_TIME(o, st, (e0.key + "_local").c_str(), pin::computeJointJacobian(model, data, Q_, e0.joint, Jloc[0]));
    BENCH_TIME(o, st, (G + "_local").c_str(), {
        for (size_t e = 0; e < ne; e++) pin::computeJointJacobian(model, data, Q_, L.ees[e].joint, Jloc[e]);
    });
    // The controller kernels against their Pinocchio counterparts (end effector 0; ddq and tau: the
    // state's dq, as in bench_c.c; timing only).
    pin::Motion acc = pin::Motion::Zero();
    BENCH_TIME(o, st, "ID", pin::rnea(model, data, Q_, V_, V_));
    BENCH_TIME(o, st, "NLE", pin::nonLinearEffects(model, data, Q_, V_));
    BENCH_TIME(o, st, "FD", pin::aba(model, data, Q_, V_, V_));
    BENCH_TIME(o, st, "FK", {
        pin::forwardKinematics(model, data, Q_);
        pin::updateFramePlacement(model, data, e0.frame);
    });
    BENCH_TIME(o, st, "JdotQdot", {
        pin::forwardKinematics(model, data, Q_, V_, zero);
        acc = pin::getFrameClassicalAcceleration(model, data, e0.frame, pin::LOCAL_WORLD_ALIGNED);
    });
    // The joint-torque regressor (ddq: the state's dq, as in bench_c.c): Pinocchio's ten inertial
    // columns per joint, in data.jointTorqueRegressor.
    BENCH_TIME(o, st, "regressor", pin::computeJointTorqueRegressor(model, data, Q_, V_, V_));
    // Analytical derivatives of RNEA and ABA (Carpentier and Mansard 2018; a and tau: the state's
    // dq, as in bench_c.c): data.dtau_dq, dtau_dv; data.ddq_dq, ddq_dv, Minv.
    BENCH_TIME(o, st, "ID_derivatives", pin::computeRNEADerivatives(model, data, Q_, V_, V_));
    BENCH_TIME(o, st, "FD_derivatives", pin::computeABADerivatives(model, data, Q_, V_, V_));
    BENCH_TIME(o, st, "all_seq", {
        pin::crba(model, data, Q_);
        pin::computeCoriolisMatrix(model, data, Q_, V_);
        pin::computeGeneralizedGravity(model, data, Q_);
        for (size_t e = 0; e < ne; e++) jac_world(model, data, Q_, L.ees[e], Jloc[e], Jw[e]);
    });
    printf("\n  }");

    // Control tick: the calls of all_seq in sequence, each timed on its own (bench_common.h).
    // The Jacobians are the main table's J_<ee> method, once per end effector.
    if (!o.only) {
        std::vector<const char *> names = {"A", "C", "Q"};
        for (const auto &e : L.ees) names.push_back(e.key.c_str());
        bench_tick T;
        bench_tick_init(&T, &o, names.data(), (int)names.size(), 3, (int)ne, L.tick_group.c_str());
        BENCH_TICK(o, st, T, pin::crba(model, data, Q_); BENCH_MARK(1);
                   pin::computeCoriolisMatrix(model, data, Q_, V_); BENCH_MARK(2);
                   pin::computeGeneralizedGravity(model, data, Q_); BENCH_MARK(3);
                   for (size_t e = 0; e < ne; e++) {
                       if (e) BENCH_MARK(3 + (int)e);
                       jac_world(model, data, Q_, L.ees[e], Jloc[e], Jw[e]);
                   });
    }
    // Keep every output observable.
    double sink = data.M.sum() + data.C.sum() + data.g.sum() + data.tau.sum() + data.ddq.sum() + data.nle.sum()
                  + data.oMf[e0.frame].translation().sum() + acc.toVector().sum()
                  + data.jointTorqueRegressor.sum() + data.dtau_dq.sum() + data.ddq_dq.sum() + data.Minv.sum();
    for (size_t e = 0; e < ne; e++) sink += Jw[e].sum() + J2[e].sum() + Jloc[e].sum();
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
