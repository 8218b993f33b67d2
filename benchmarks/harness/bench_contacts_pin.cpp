// Pinocchio side of the contact benchmark (python -m benchmarks.contacts): times Pinocchio's
// constraint algorithms on the same states as bench_contacts_c.c. Usage:
//   bench_contacts_pin MODEL.txt STATES.bin MASK RESTITUTION [--target-ms T] [--inner N] [--only NAME]
//                      [--dump FILE K]
// MODEL.txt: the model file of bench_pin.cpp (bench_pin_model.hpp) with one `contact` line per
// contact frame, in the order of our mask's bits. One RigidConstraintModel per active contact (bit
// k of MASK): a point contact CONTACT_3D in LOCAL_WORLD_ALIGNED, a flat one CONTACT_6D in LOCAL,
// anchored in the world (joint2 = 0), Baumgarte gains 0, as docs/contact-dynamics.md matches them.
// tau: the state's dq (timing only, as in bench_c.c). Header-only, compiled with the same flags as
// our kernels (-O3 -march=native).
#include "pinocchio/algorithm/constrained-dynamics-derivatives.hpp"
#include "pinocchio/algorithm/constrained-dynamics.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/impulse-dynamics.hpp"
#include "pinocchio/algorithm/impulse-dynamics-derivatives.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics.hpp"

#include "bench_common.h"
#include "bench_pin_model.hpp"

typedef pin::RigidConstraintModel ConstraintModel;
typedef pin::RigidConstraintData ConstraintData;
typedef std::vector<ConstraintModel, Eigen::aligned_allocator<ConstraintModel>> ConstraintModels;
typedef std::vector<ConstraintData, Eigen::aligned_allocator<ConstraintData>> ConstraintDatas;

// The active contacts' Jacobian (m x nv), after computeJointJacobians: per contact its frame's
// LOCAL_WORLD_ALIGNED linear rows (3d) or LOCAL twist rows (6d).
static void contact_jacobian(const pin::Model &m, pin::Data &d, const std::vector<const Contact *> &active,
                             pin::Data::Matrix6x &J6, Eigen::MatrixXd &Jc)
{
    Eigen::Index r = 0;
    for (const Contact *c : active) {
        J6.setZero();
        pin::getFrameJacobian(m, d, c->frame, c->flat ? pin::LOCAL : pin::LOCAL_WORLD_ALIGNED, J6);
        const int n = c->flat ? 6 : 3;
        Jc.middleRows(r, n) = J6.topRows(n);
        r += n;
    }
}

// The active contacts' drift (m), after forwardKinematics(q, v, 0): a point's classical
// acceleration (LOCAL_WORLD_ALIGNED), a flat contact's spatial acceleration (LOCAL).
static void contact_drift(const pin::Model &m, pin::Data &d, const std::vector<const Contact *> &active,
                          Eigen::VectorXd &gamma)
{
    Eigen::Index r = 0;
    for (const Contact *c : active) {
        if (c->flat) {
            gamma.segment<6>(r) = pin::getFrameAcceleration(m, d, c->frame, pin::LOCAL).toVector();
            r += 6;
        } else {
            gamma.segment<3>(r) = pin::getFrameClassicalAcceleration(m, d, c->frame, pin::LOCAL_WORLD_ALIGNED).linear();
            r += 3;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL.txt STATES.bin MASK RESTITUTION [--target-ms T] [--inner N] [--only NAME] "
                        "[--dump FILE K]\n", argv[0]);
        return 2;
    }
    bench_states st = bench_read_states(argv[2]);
    const Loaded L = load_checked(argv[1], st, "bench_contacts_pin");
    const pin::Model &model = L.model;
    pin::Data data(model);
    const int nd = st.ndof, mask = atoi(argv[3]);
    const double restitution = atof(argv[4]);
    const int ncontacts = (int)L.contacts.size();
    if (ncontacts < 1 || ncontacts > 16) bench_die("need 1 to 16 contact lines");
    if (mask <= 0 || mask >= (1 << ncontacts)) bench_die("MASK: a bit of no contact, or none");
    std::vector<Eigen::VectorXd> qs, vs;
    pin_states(L, st, qs, vs);

    ConstraintModels cms;
    std::vector<const Contact *> active;
    for (int k = 0; k < ncontacts; k++) {
        if (!((mask >> k) & 1)) continue;
        const Contact &c = L.contacts[k];
        cms.emplace_back(c.flat ? pin::CONTACT_6D : pin::CONTACT_3D, model, c.joint, c.placement,
                         c.flat ? pin::LOCAL : pin::LOCAL_WORLD_ALIGNED);
        active.push_back(&c);
    }
    ConstraintDatas cds;
    for (const auto &cm : cms) cds.emplace_back(cm);
    pin::initConstraintDynamics(model, data, cms, cds);
    pin::ProximalSettings prox;  // mu = 0, one iteration: the plain Cholesky solve (our mu = 0)
    int m = 0;
    for (const Contact *c : active) m += c->flat ? 6 : 3;
    pin::Data::Matrix6x J6 = pin::Data::Matrix6x::Zero(6, nd);
    Eigen::MatrixXd Jc = Eigen::MatrixXd::Zero(m, nd);
    Eigen::VectorXd gamma = Eigen::VectorXd::Zero(m);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nd);

    int kdump = 0;
    const char *dump = bench_dump_path(argc, argv, 5, &kdump);
    if (dump) {  // per state, in our q order: the layout of bench_contacts_c.c's dump
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        std::vector<double> buf;
        auto vec = [&](const Eigen::VectorXd &v) { for (int i = 0; i < nd; i++) buf.push_back(v[L.perm[i]]); };
        auto rows = [&](const Eigen::VectorXd &v) { for (int i = 0; i < m; i++) buf.push_back(v[i]); };
        auto square = [&](const Eigen::MatrixXd &M) {
            for (int i = 0; i < nd; i++)
                for (int j = 0; j < nd; j++) buf.push_back(M(L.perm[i], L.perm[j]));
        };
        auto wide = [&](const Eigen::MatrixXd &M) {  // m x nv: contact rows, our columns
            for (int i = 0; i < m; i++)
                for (int j = 0; j < nd; j++) buf.push_back(M(i, L.perm[j]));
        };
        for (int s = 0; s < kdump && s < st.nstates; s++) {
            const Eigen::VectorXd &q = qs[s], &v = vs[s];
            buf.clear();
            pin::constraintDynamics(model, data, q, v, v, cms, cds, prox);
            vec(data.ddq);
            rows(data.lambda_c);
            pin::computeConstraintDynamicsDerivatives(model, data, cms, cds, prox);
            square(data.ddq_dq);
            square(data.ddq_dv);
            square(data.ddq_dtau);
            wide(data.dlambda_dq);
            wide(data.dlambda_dv);
            wide(data.dlambda_dtau);
            // Pinocchio 4.1.0 adds the impulse derivatives' terms to those left on the Data: cleared first
            pin::initConstraintDynamics(model, data, cms, cds);
            pin::impulseDynamics(model, data, q, v, cms, cds, restitution, prox);
            vec(data.dq_after);
            rows(data.impulse_c);
            pin::computeImpulseDynamicsDerivatives(model, data, cms, cds, restitution, prox);
            square(data.ddq_dq);
            square(data.ddq_dv + Eigen::MatrixXd::Identity(nd, nd));  // its ddq_dv: d(v_plus - v)/dv
            wide(data.dlambda_dq);
            wide(data.dlambda_dv);
            pin::computeJointJacobians(model, data, q);
            contact_jacobian(model, data, active, J6, Jc);
            wide(Jc);
            pin::forwardKinematics(model, data, q, v, zero);
            contact_drift(model, data, active, gamma);
            rows(gamma);
            fwrite(buf.data(), sizeof(double), buf.size(), f);
        }
        fclose(f);
        return 0;
    }

    bench_opts o;
    bench_parse_opts(argc, argv, 5, &o);
    printf("{\n  \"harness\": \"pin\",\n  \"nstates\": %d,\n  \"ns\": {", st.nstates);
#define Q_ qs[s_]
#define V_ vs[s_]
    BENCH_TIME(o, st, "constrained_dynamics", pin::constraintDynamics(model, data, Q_, V_, V_, cms, cds, prox));
    // The derivatives need constraintDynamics at the same state first: both, the sequence that gives
    // them from (q, v, tau) as our kernel does.
    BENCH_TIME(o, st, "constrained_dynamics_derivatives", {
        pin::constraintDynamics(model, data, Q_, V_, V_, cms, cds, prox);
        pin::computeConstraintDynamicsDerivatives(model, data, cms, cds, prox);
    });
    BENCH_TIME(o, st, "impulse_dynamics", pin::impulseDynamics(model, data, Q_, V_, cms, cds, restitution, prox));
    // The same sequence for the impact's derivatives (without initConstraintDynamics, which their
    // values need between calls on one Data in 4.1.0, about 1 us: the algorithms' cost only)
    BENCH_TIME(o, st, "impulse_dynamics_derivatives", {
        pin::impulseDynamics(model, data, Q_, V_, cms, cds, restitution, prox);
        pin::computeImpulseDynamicsDerivatives(model, data, cms, cds, restitution, prox);
    });
    BENCH_TIME(o, st, "contact_jacobian", {
        pin::computeJointJacobians(model, data, Q_);
        contact_jacobian(model, data, active, J6, Jc);
    });
    BENCH_TIME(o, st, "contact_drift", {
        pin::forwardKinematics(model, data, Q_, V_, zero);
        contact_drift(model, data, active, gamma);
    });
    printf("\n  }");
    const double sink = data.ddq.sum() + data.lambda_c.sum() + data.ddq_dq.sum() + data.dlambda_dq.sum()
                        + data.dq_after.sum() + data.impulse_c.sum() + Jc.sum() + gamma.sum();
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
