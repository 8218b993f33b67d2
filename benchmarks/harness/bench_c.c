/* Our side of `make bench`: times the generated C kernels on the same
 * pre-drawn states as bench_pin.cpp. Usage:
 *   bench_c STATES.bin [--target-ms T] [--inner N] [--only NAME] [--no-tick] [--cold-kib K] [--flush] [--dump FILE K]
 * The parameter vector is the one stored in STATES.bin (the driver writes the
 * parameters there that the Pinocchio model is built from).
 * Generic over the robot: bench_robot.h, written by benchmarks/robot.py next
 * to the build, names the kernel header, the C prefix (BR_* macros) and the end
 * effectors. Keys: J_<ee> per end effector, BR_GROUP for all of them in sequence.
 * Plain C99; compiled with the same flags as bench_pin.cpp (-O3 -march=native).
 */
#include "bench_common.h"

#include "bench_robot.h"

static const char *const ee_names[BR_NEE] = BR_EE_NAMES;

int main(int argc, char **argv)
{
    static double A[BR_NDOF * BR_NDOF], C[BR_NDOF * BR_NDOF], Qv[BR_NDOF];
    static double J[BR_NEE][6 * BR_NDOF], tau[BR_NDOF], T[16], acc[6];
    static char keys[BR_NEE][80], key[96];
    bench_states st;
    bench_opts o;
    const double *p;
    const char *dump;
    int kdump = 0, s, i, e;
    double sink = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s STATES.bin [--target-ms T] [--inner N] [--only NAME] [--dump FILE K]\n", argv[0]);
        return 2;
    }
    st = bench_read_states(argv[1]);
    if (st.ndof != BR_NDOF) bench_die("states file ndof differs from the kernels' NDOF");
    if (st.nq != BR_NQ) bench_die("states file nq differs from the kernels' NQ (floating base?)");
    if (st.np != BR_NP) bench_die("states file parameter count differs from the kernels' NP");
    p = st.params;
    for (e = 0; e < BR_NEE; e++) snprintf(keys[e], sizeof keys[e], "J_%s", ee_names[e]);

    dump = bench_dump_path(argc, argv, 2, &kdump);
    if (dump) { /* A, C, Q, then each end effector's world Jacobian, per state */
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        for (s = 0; s < kdump && s < st.nstates; s++) {
            const double *q = st.q + (size_t)s * BR_NQ, *dq = st.dq + (size_t)s * BR_NDOF;
            BR_compute_A(q, p, A);
            BR_compute_C(q, dq, p, C);
            BR_compute_Q(q, p, Qv);
            fwrite(A, sizeof(double), BR_NDOF * BR_NDOF, f);
            fwrite(C, sizeof(double), BR_NDOF * BR_NDOF, f);
            fwrite(Qv, sizeof(double), BR_NDOF, f);
            for (e = 0; e < BR_NEE; e++) {
                BR_jacobian(q, p, e, BR_WORLD, J[e]);
                fwrite(J[e], sizeof(double), 6 * BR_NDOF, f);
            }
        }
        fclose(f);
        return 0;
    }

    bench_parse_opts(argc, argv, 2, &o);
    printf("{\n  \"harness\": \"ours\",\n  \"nstates\": %d,\n  \"ns\": {", st.nstates);
    BENCH_TIME(o, st, "A", BR_compute_A(q, p, A));
    BENCH_TIME(o, st, "C", BR_compute_C(q, dq, p, C));
    BENCH_TIME(o, st, "Q", BR_compute_Q(q, p, Qv));
    for (e = 0; e < BR_NEE; e++) BENCH_TIME(o, st, keys[e], BR_jacobian(q, p, e, BR_WORLD, J[e]));
    BENCH_TIME(o, st, BR_GROUP, for (i = 0; i < BR_NEE; i++) BR_jacobian(q, p, i, BR_WORLD, J[i]));
#if BR_HAVE_DIRECT /* the per-end-effector functions, without the jacobian() dispatch */
    snprintf(key, sizeof key, "%s_direct", keys[0]);
    BENCH_TIME(o, st, key, BR_J_DIRECT_FIRST(q, p, J));
    BENCH_TIME(o, st, BR_GROUP "_direct", BR_J_SEQ(q, p, J));
#endif
    snprintf(key, sizeof key, "%s_local", keys[0]);
    BENCH_TIME(o, st, key, BR_jacobian(q, p, 0, BR_LOCAL, J[0]));
    BENCH_TIME(o, st, BR_GROUP "_local", for (i = 0; i < BR_NEE; i++) BR_jacobian(q, p, i, BR_LOCAL, J[i]));
#if BR_HAVE_FRICTION
    BENCH_TIME(o, st, "friction", BR_friction(dq, p, tau));
#endif
#if BR_HAVE_CONTROLLER /* the controller kernels, end effector 0; ddq and tau: the state's dq (timing only) */
    BENCH_TIME(o, st, "ID", BR_inverse_dynamics(q, dq, dq, p, tau));
    BENCH_TIME(o, st, "NLE", BR_bias(q, dq, p, tau));
    BENCH_TIME(o, st, "FD", BR_forward_dynamics(q, dq, dq, p, tau));
    BENCH_TIME(o, st, "FK", BR_fk(q, p, 0, T));
    BENCH_TIME(o, st, "JdotQdot", BR_jdot_qdot(q, dq, p, 0, acc));
#endif
#if BR_HAVE_REGRESSOR /* the joint-torque regressor and its base columns; ddq: the state's dq (timing only) */
    {
        static double Y[BR_NDOF * BR_NPI], Yb[BR_NDOF * BR_NBASE];
        BENCH_TIME(o, st, "regressor", BR_regressor(q, dq, dq, p, Y));
        BENCH_TIME(o, st, "base_regressor", BR_base_regressor(q, dq, dq, p, Yb));
        sink += Y[BR_NPI - 1] + Yb[BR_NBASE - 1];
    }
#endif
#if BR_HAVE_DERIVATIVES /* derivatives of ID and FD; a and tau: the state's dq (timing only) */
    {
        static double D1[BR_NDOF * BR_NDOF], D2[BR_NDOF * BR_NDOF], D3[BR_NDOF * BR_NDOF];
        BENCH_TIME(o, st, "ID_derivatives", BR_inverse_dynamics_derivatives(q, dq, dq, p, D1, D2));
        BENCH_TIME(o, st, "FD_derivatives", BR_forward_dynamics_derivatives(q, dq, dq, p, D1, D2, D3));
        sink += D1[BR_NDOF * BR_NDOF - 1] + D2[0] + D3[BR_NDOF * BR_NDOF - 1];
    }
#endif
#if BR_HAVE_ALL
    BENCH_TIME(o, st, "all", BR_COMPUTE_ALL(q, dq, p, A, C, Qv, J));
#endif
    /* The control tick's sequence, in a tight loop (no timestamps inside). */
    BENCH_TIME(o, st, "all_seq", BR_compute_A(q, p, A); BR_compute_C(q, dq, p, C); BR_compute_Q(q, p, Qv);
               BR_J_SEQ(q, p, J));
    printf("\n  }");

    /* Control tick: the same calls in sequence, each timed on its own (bench_common.h). */
    if (!o.only) {
        static const char *names[3 + BR_NEE] = {"A", "C", "Q"};
        bench_tick T;
        for (e = 0; e < BR_NEE; e++) names[3 + e] = keys[e];
        bench_tick_init(&T, &o, names, 3 + BR_NEE, 3, BR_NEE, BR_TICK_GROUP);
        BENCH_TICK(o, st, T, BR_compute_A(q, p, A); BENCH_MARK(1);
                   BR_compute_C(q, dq, p, C); BENCH_MARK(2);
                   BR_compute_Q(q, p, Qv); BENCH_MARK(3);
                   BR_TICK_J(q, p, J));
#if BR_HAVE_ALL
        /* The same outputs from one compute_all call (shared subexpressions and subtree routine). */
        {
            static const char *const all_names[1] = {"all"};
            bench_tick T1;
            bench_tick_init(&T1, &o, all_names, 1, 0, 0, "");
            BENCH_TICK_AS(o, st, T1, "tick_all", BR_COMPUTE_ALL(q, dq, p, A, C, Qv, J));
        }
#endif
    }
    for (i = 0; i < BR_NDOF; i++) sink += A[i * BR_NDOF + i] + C[i] + Qv[i] + tau[i];
    for (e = 0; e < BR_NEE; e++) sink += J[e][e % (6 * BR_NDOF)];
    for (i = 0; i < 6; i++) sink += T[i] + acc[i];
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
