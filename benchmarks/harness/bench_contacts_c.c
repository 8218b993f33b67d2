/* Our side of the contact benchmark (python -m benchmarks.contacts): times the contact kernels of
 * a robot generated with --contact on the same pre-drawn states as bench_contacts_pin.cpp. Usage:
 *   bench_contacts_c STATES.bin MASK RESTITUTION [--target-ms T] [--inner N] [--only NAME] [--dump FILE K]
 * bench_contacts_robot.h, written by benchmarks/contacts.py next to the build, names the kernel
 * header, the C prefix (CR_* macros) and the rows of each contact. tau: the state's dq (timing
 * only, as in bench_c.c); gains kp = kd = 0, mu = 0, reference points 0. Plain C99, compiled with
 * the same flags as bench_contacts_pin.cpp (-O3 -march=native).
 */
#include "bench_common.h"

#include "bench_contacts_robot.h"

int main(int argc, char **argv)
{
    static double ddq[CR_NDOF], lam[CR_NCROWS], vp[CR_NDOF], imp[CR_NCROWS], Jc[CR_NCROWS * CR_NDOF], gam[CR_NCROWS];
    static double D1[CR_NDOF * CR_NDOF], D2[CR_NDOF * CR_NDOF], D3[CR_NDOF * CR_NDOF];
    static double L1[CR_NCROWS * CR_NDOF], L2[CR_NCROWS * CR_NDOF], L3[CR_NCROWS * CR_NDOF];
    static double I1[CR_NDOF * CR_NDOF], I2[CR_NDOF * CR_NDOF], I3[CR_NCROWS * CR_NDOF], I4[CR_NCROWS * CR_NDOF];
    static const double ref[3 * CR_NCONTACTS];
    static const int rows[CR_NCONTACTS] = CR_ROWS;
    bench_states st;
    bench_opts o;
    const double *p;
    const char *dump;
    double r, sink = 0;
    int kdump = 0, mask, m = 0, s, k;

    if (argc < 4) {
        fprintf(stderr, "usage: %s STATES.bin MASK RESTITUTION [--target-ms T] [--inner N] [--only NAME] "
                        "[--dump FILE K]\n", argv[0]);
        return 2;
    }
    st = bench_read_states(argv[1]);
    if (st.ndof != CR_NDOF) bench_die("states file ndof differs from the kernels' NDOF");
    if (st.nq != CR_NQ) bench_die("states file nq differs from the kernels' NQ");
    if (st.np != CR_NP) bench_die("states file parameter count differs from the kernels' NP");
    p = st.params;
    mask = atoi(argv[2]);
    r = atof(argv[3]);
    if (mask <= 0 || mask >= (1 << CR_NCONTACTS)) bench_die("MASK: a bit of no contact, or none");
    for (k = 0; k < CR_NCONTACTS; k++)
        if ((mask >> k) & 1) m += rows[k];

    dump = bench_dump_path(argc, argv, 4, &kdump);
    if (dump) { /* per state: ddq, lambda (m), the six derivatives, v_plus, impulse, its four derivatives, Jc,
                * gamma (active rows) */
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        for (s = 0; s < kdump && s < st.nstates; s++) {
            const double *q = st.q + (size_t)s * CR_NQ, *dq = st.dq + (size_t)s * CR_NDOF;
            CR_constrained_dynamics(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, ddq, lam);
            CR_constrained_dynamics_derivatives(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, D1, D2, D3, L1, L2, L3);
            CR_impulse_dynamics(q, dq, p, mask, r, 0.0, vp, imp);
            CR_impulse_dynamics_derivatives(q, dq, p, mask, r, 0.0, I1, I2, I3, I4);
            CR_contact_jacobian(q, p, mask, Jc);
            CR_contact_drift(q, dq, p, mask, gam);
            fwrite(ddq, sizeof(double), CR_NDOF, f);
            fwrite(lam, sizeof(double), (size_t)m, f);
            fwrite(D1, sizeof(double), CR_NDOF * CR_NDOF, f);
            fwrite(D2, sizeof(double), CR_NDOF * CR_NDOF, f);
            fwrite(D3, sizeof(double), CR_NDOF * CR_NDOF, f);
            fwrite(L1, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(L2, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(L3, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(vp, sizeof(double), CR_NDOF, f);
            fwrite(imp, sizeof(double), (size_t)m, f);
            fwrite(I1, sizeof(double), CR_NDOF * CR_NDOF, f);
            fwrite(I2, sizeof(double), CR_NDOF * CR_NDOF, f);
            fwrite(I3, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(I4, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(Jc, sizeof(double), (size_t)m * CR_NDOF, f);
            fwrite(gam, sizeof(double), (size_t)m, f);
        }
        fclose(f);
        return 0;
    }

    bench_parse_opts(argc, argv, 4, &o);
    printf("{\n  \"harness\": \"ours\",\n  \"nstates\": %d,\n  \"ns\": {", st.nstates);
    BENCH_TIME(o, st, "constrained_dynamics", CR_constrained_dynamics(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, ddq, lam));
    BENCH_TIME(o, st, "constrained_dynamics_derivatives",
               CR_constrained_dynamics_derivatives(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, D1, D2, D3, L1, L2, L3));
    /* both outputs, as Pinocchio's constraintDynamics + computeConstraintDynamicsDerivatives give them */
    BENCH_TIME(o, st, "constrained_dynamics+derivatives",
               CR_constrained_dynamics(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, ddq, lam);
               CR_constrained_dynamics_derivatives(q, dq, dq, p, mask, 0.0, 0.0, 0.0, ref, D1, D2, D3, L1, L2, L3));
    BENCH_TIME(o, st, "impulse_dynamics", CR_impulse_dynamics(q, dq, p, mask, r, 0.0, vp, imp));
    BENCH_TIME(o, st, "impulse_dynamics_derivatives",
               CR_impulse_dynamics_derivatives(q, dq, p, mask, r, 0.0, I1, I2, I3, I4));
    BENCH_TIME(o, st, "contact_jacobian", CR_contact_jacobian(q, p, mask, Jc));
    BENCH_TIME(o, st, "contact_drift", CR_contact_drift(q, dq, p, mask, gam));
    printf("\n  }");
    for (k = 0; k < CR_NDOF; k++) sink += ddq[k] + vp[k] + D1[k] + D2[k] + D3[k] + I1[k] + I2[k];
    for (k = 0; k < m; k++) sink += lam[k] + imp[k] + gam[k] + L1[k] + L2[k] + L3[k] + Jc[k] + I3[k] + I4[k];
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
