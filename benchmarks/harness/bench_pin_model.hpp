// The Pinocchio model of the C++ harnesses (bench_pin.cpp, bench_contacts_pin.cpp), read from
// the model file that benchmarks/pin_model.py writes (pin_harness_text), and the states of the
// states file in Pinocchio's joint order. Header-only build: the model is rebuilt joint by joint
// from the file; -DBENCH_PIN_LIB: loaded from the URDF by pinocchio::urdf::buildModel.
// Lines: urdf PATH; gravity x y z; joint NAME PARENT TYPE R(9) p(3) [axis(3)]; inertia NAME m c(3)
// I(9); armature NAME a; order JOINT...; ee NAME JOINT x y z; group KEY TICKKEY;
// contact NAME JOINT 3d|6d R(9) p(3).
#ifndef BENCH_PIN_MODEL_HPP
#define BENCH_PIN_MODEL_HPP

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pinocchio/multibody.hpp"
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

// A frame that can touch (bench_contacts_pin.cpp): a point contact (3d: Pinocchio's CONTACT_3D,
// LOCAL_WORLD_ALIGNED) or a flat one (6d: CONTACT_6D, LOCAL) at `placement` in its joint's frame.
struct Contact {
    std::string name;
    pin::JointIndex joint = 0;
    pin::SE3 placement = pin::SE3::Identity();
    bool flat = false;
    pin::FrameIndex frame = 0;  // an OP_FRAME added here at the contact
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
    std::vector<Contact> contacts;  // `contact` lines (bench_contacts_pin.cpp); none for bench_pin.cpp
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
    std::vector<std::string> contact_joint;
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
        } else if (tag == "contact") {  // contact NAME JOINT 3d|6d R(3x3, row-major) p(3)
            Contact c;
            std::string joint, kind;
            Eigen::Matrix3d R;
            Eigen::Vector3d p;
            ls >> c.name >> joint >> kind;
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) ls >> R(r, k);
            ls >> p[0] >> p[1] >> p[2];
            if (!ls || (kind != "3d" && kind != "6d")) throw std::runtime_error("bad contact line: " + line);
            c.flat = kind == "6d";
            c.placement = pin::SE3(R, p);
            L.contacts.push_back(c);
            contact_joint.push_back(joint);
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
    for (size_t k = 0; k < L.contacts.size(); k++) {
        Contact &c = L.contacts[k];
        c.joint = m.getJointId(contact_joint[k]);
        if (c.joint >= (pin::JointIndex)m.njoints) throw std::runtime_error("contact joint not found: " + contact_joint[k]);
        const pin::FrameIndex parent = m.getFrameId(contact_joint[k], pin::JOINT);
        c.frame = m.addFrame(pin::Frame("bench_contact_" + c.name, c.joint, parent, c.placement, pin::OP_FRAME));
    }
    return L;
}

// The states of the states file in Pinocchio's joint order, as Eigen::VectorXd (the argument type
// Pinocchio's explicit instantiations are declared for, so that the BENCH_PIN_LIB build really runs
// the library's code): qs (our angle -> (cos, sin) for a continuous joint) and vs (permuted).
static void pin_states(const Loaded &L, const bench_states &st, std::vector<Eigen::VectorXd> &qs,
                       std::vector<Eigen::VectorXd> &vs)
{
    const pin::Model &model = L.model;
    const int nd = st.ndof;
    qs.assign(st.nstates, Eigen::VectorXd(model.nq));
    vs.assign(st.nstates, Eigen::VectorXd(nd));
    for (int s = 0; s < st.nstates; s++) {
        const double *q = st.q + (size_t)s * st.nq;
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
        for (int i = 0; i < nd; i++) vs[s][L.perm[i]] = st.dq[s * nd + i];
    }
}

// The model of MODEL.txt, checked against the states file; exits on an error (`who`: the harness).
static Loaded load_checked(const char *model_txt, const bench_states &st, const char *who)
{
    Loaded L;
    try {
        L = load(model_txt);
    } catch (const std::exception &e) {
        fprintf(stderr, "%s: %s\n", who, e.what());
        exit(2);
    }
    if (st.ndof != L.model.nv) bench_die("states file ndof differs from the model's nv");
    if (st.nq != L.nq_ours) bench_die("states file nq differs from the model's (floating base?)");
    return L;
}

#endif
