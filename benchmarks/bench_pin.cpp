// Pinocchio side of `make bench`: times Pinocchio's C++ algorithms on the same
// states as bench_c.c. Usage:
//   bench_pin MODEL.txt STATES.bin [--target-ms T] [--inner N] [--only NAME] [--no-tick] [--cold-kib K]
//             [--dump FILE K]
// MODEL.txt is written by bench.py from the Pinocchio model that
// pin.buildModelFromUrdf makes of benchmarks/build/krang_aligned.urdf (joint
// axes +x/+y/+z, so JointModelRX/RY/RZ). Two builds of this file:
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
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/multibody/joint.hpp"
#ifdef BENCH_PIN_LIB
#include "pinocchio/parsers/urdf.hpp"
#endif

#include "bench_common.h"

namespace pin = pinocchio;

struct Loaded {
    pin::Model model;
    std::vector<int> perm;  // perm[i] = Pinocchio's q index of our q[i]
    pin::JointIndex ee_left = 0, ee_right = 0;
    pin::FrameIndex fr_left = 0, fr_right = 0;  // the JOINT frames of the end-effector joints
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
    std::string ee_l, ee_r;
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
            if (type == "RX") m.addJoint(pid, pin::JointModelRX(), placement, name);
            else if (type == "RY") m.addJoint(pid, pin::JointModelRY(), placement, name);
            else if (type == "RZ") m.addJoint(pid, pin::JointModelRZ(), placement, name);
            else if (type == "PX") m.addJoint(pid, pin::JointModelPX(), placement, name);
            else if (type == "PY") m.addJoint(pid, pin::JointModelPY(), placement, name);
            else if (type == "PZ") m.addJoint(pid, pin::JointModelPZ(), placement, name);
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
            std::string which, name;
            ls >> which >> name;
            (which == "left" ? ee_l : ee_r) = name;
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
    if ((int)order.size() != m.nv || m.nq != m.nv) throw std::runtime_error("order line does not match the model");
    for (const auto &name : order) {
        pin::JointIndex j = m.getJointId(name);
        if (j >= (pin::JointIndex)m.njoints || m.joints[j].nv() != 1)
            throw std::runtime_error("bad joint in order line: " + name);
        L.perm.push_back(m.joints[j].idx_q());
    }
    L.ee_left = m.getJointId(ee_l);
    L.ee_right = m.getJointId(ee_r);
    if (L.ee_left >= (pin::JointIndex)m.njoints || L.ee_right >= (pin::JointIndex)m.njoints)
        throw std::runtime_error("end-effector joints not found");
    L.fr_left = m.getFrameId(ee_l, pin::JOINT);
    L.fr_right = m.getFrameId(ee_r, pin::JOINT);
    if (L.fr_left >= m.frames.size() || L.fr_right >= m.frames.size())
        throw std::runtime_error("end-effector joint frames not found");
    return L;
}

// Joint Jacobian in LOCAL frame of `jid` (support-chain pass), then rotated to LOCAL_WORLD_ALIGNED.
// After computeJointJacobian, data.iMf[0] is the world placement of joint jid.
static inline void jac_world(const pin::Model &m, pin::Data &d, const Eigen::VectorXd &q, pin::JointIndex jid,
                             pin::Data::Matrix6x &Jloc, pin::Data::Matrix6x &Jw)
{
    pin::computeJointJacobian(m, d, q, jid, Jloc);
    const Eigen::Matrix3d R = d.iMf[0].rotation();
    Jw.topRows<3>().noalias() = R * Jloc.topRows<3>();
    Jw.bottomRows<3>().noalias() = R * Jloc.bottomRows<3>();
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
    // The same states, in Pinocchio's joint order, as Eigen::VectorXd (the argument type
    // Pinocchio's explicit instantiations are declared for, so that the BENCH_PIN_LIB build
    // really runs the library's code). The timed statements index them by the state number s_.
    bench_states st = st0;
    std::vector<Eigen::VectorXd> qs(st.nstates, Eigen::VectorXd(nd)), vs = qs;
    for (int s = 0; s < st.nstates; s++)
        for (int i = 0; i < nd; i++) {
            qs[s][L.perm[i]] = st0.q[s * nd + i];
            vs[s][L.perm[i]] = st0.dq[s * nd + i];
        }
    const pin::JointIndex jl = L.ee_left, jr = L.ee_right;
    pin::Data::Matrix6x Jl = pin::Data::Matrix6x::Zero(6, nd), Jr = Jl, Jlw = Jl, Jrw = Jl, Jl2 = Jl, Jr2 = Jl;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nd);

    int kdump = 0;
    const char *dump = bench_dump_path(argc, argv, 3, &kdump);
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        std::vector<double> buf;
        for (int s = 0; s < kdump && s < st.nstates; s++) {
            const Eigen::VectorXd &q = qs[s], &v = vs[s];
            Eigen::MatrixXd M = pin::crba(model, data, q);
            M.triangularView<Eigen::StrictlyLower>() = M.transpose().triangularView<Eigen::StrictlyLower>();
            Eigen::MatrixXd C = pin::computeCoriolisMatrix(model, data, q, v);
            Eigen::VectorXd G = pin::computeGeneralizedGravity(model, data, q);
            jac_world(model, data, q, jl, Jl, Jlw);
            jac_world(model, data, q, jr, Jr, Jrw);
            buf.clear();
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nd; j++) buf.push_back(M(L.perm[i], L.perm[j]));
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nd; j++) buf.push_back(C(L.perm[i], L.perm[j]));
            for (int i = 0; i < nd; i++) buf.push_back(G[L.perm[i]]);
            for (int r = 0; r < 6; r++)
                for (int i = 0; i < nd; i++) buf.push_back(Jlw(r, L.perm[i]));
            for (int r = 0; r < 6; r++)
                for (int i = 0; i < nd; i++) buf.push_back(Jrw(r, L.perm[i]));
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
    BENCH_TIME(o, st, "A", pin::crba(model, data, Q_));
    BENCH_TIME(o, st, "A_sym", {
        pin::crba(model, data, Q_);
        data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
    });
    BENCH_TIME(o, st, "A_worldconv", pin::crba(model, data, Q_, pin::Convention::WORLD));
    BENCH_TIME(o, st, "C", pin::computeCoriolisMatrix(model, data, Q_, V_));
    BENCH_TIME(o, st, "Q", pin::computeGeneralizedGravity(model, data, Q_));
    BENCH_TIME(o, st, "nle_rnea", pin::rnea(model, data, Q_, V_, zero));
    BENCH_TIME(o, st, "J_left", jac_world(model, data, Q_, jl, Jl, Jlw));
    BENCH_TIME(o, st, "J_right", jac_world(model, data, Q_, jr, Jr, Jrw));
    BENCH_TIME(o, st, "J_both", {
        jac_world(model, data, Q_, jl, Jl, Jlw);
        jac_world(model, data, Q_, jr, Jr, Jrw);
    });
    BENCH_TIME(o, st, "J_both_alljac", {
        pin::computeJointJacobians(model, data, Q_);
        pin::getJointJacobian(model, data, jl, pin::LOCAL_WORLD_ALIGNED, Jl2);
        pin::getJointJacobian(model, data, jr, pin::LOCAL_WORLD_ALIGNED, Jr2);
    });
    BENCH_TIME(o, st, "J_both_framejac", {
        pin::computeFrameJacobian(model, data, Q_, L.fr_left, pin::LOCAL_WORLD_ALIGNED, Jl2);
        pin::computeFrameJacobian(model, data, Q_, L.fr_right, pin::LOCAL_WORLD_ALIGNED, Jr2);
    });
    BENCH_TIME(o, st, "J_left_local", pin::computeJointJacobian(model, data, Q_, jl, Jl));
    BENCH_TIME(o, st, "J_both_local", {
        pin::computeJointJacobian(model, data, Q_, jl, Jl);
        pin::computeJointJacobian(model, data, Q_, jr, Jr);
    });
    BENCH_TIME(o, st, "all_seq", {
        pin::crba(model, data, Q_);
        pin::computeCoriolisMatrix(model, data, Q_, V_);
        pin::computeGeneralizedGravity(model, data, Q_);
        jac_world(model, data, Q_, jl, Jl, Jlw);
        jac_world(model, data, Q_, jr, Jr, Jrw);
    });
    printf("\n  }");

    // Control tick: the calls of all_seq in sequence, each timed on its own (bench_common.h).
    // The Jacobians are the main table's J_left / J_right method, once per arm.
    if (!o.only) {
        static const char *const names[] = {"A", "C", "Q", "J_left", "J_right"};
        bench_tick T;
        bench_tick_init(&T, &o, names, 5, 3, "J_left+J_right");
        BENCH_TICK(o, st, T, pin::crba(model, data, Q_); BENCH_MARK(1);
                   pin::computeCoriolisMatrix(model, data, Q_, V_); BENCH_MARK(2);
                   pin::computeGeneralizedGravity(model, data, Q_); BENCH_MARK(3);
                   jac_world(model, data, Q_, jl, Jl, Jlw); BENCH_MARK(4);
                   jac_world(model, data, Q_, jr, Jr, Jrw));
    }
    // Keep every output observable.
    double sink = data.M.sum() + data.C.sum() + data.g.sum() + Jlw.sum() + Jrw.sum() + Jl2.sum() + Jr2.sum() +
                  data.tau.sum();
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
