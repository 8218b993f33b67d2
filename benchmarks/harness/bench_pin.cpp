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
#include "pinocchio/algorithm/aba-derivatives.hpp"
#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/algorithm/regressor.hpp"
#include "pinocchio/algorithm/rnea-derivatives.hpp"

#include "bench_common.h"
#include "bench_pin_model.hpp"


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
    bench_states st = bench_read_states(argv[2]);
    const Loaded L = load_checked(argv[1], st, "bench_pin");
    const pin::Model &model = L.model;
    pin::Data data(model);
    const int nd = st.ndof;
    // The same states in Pinocchio's joint order (bench_pin_model.hpp); the timed statements index
    // them by the state number s_.
    std::vector<Eigen::VectorXd> qs, vs;
    pin_states(L, st, qs, vs);
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
