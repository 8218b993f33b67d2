/* Our side of `make bench`: times the generated C kernels (generated/ *.c) on
 * the same pre-drawn states as bench_pin.cpp. Usage:
 *   bench_c STATES.bin [--target-ms T] [--inner N] [--only NAME] [--no-tick] [--cold-kib K] [--dump FILE K]
 * The parameter vector is the one stored in STATES.bin (bench.py writes the
 * default parameters there, the same values the Pinocchio model is built from).
 * Plain C99; compiled with the same flags as bench_pin.cpp (-O3 -march=native).
 */
#include "bench_common.h"

#include "krang_kernels.h"

#ifdef BENCH_HAVE_EE_FUNCS
#define TICK_J_LEFT krang_jacobian_left_world(q, p, Jl)
#define TICK_J_RIGHT krang_jacobian_right_world(q, p, Jr)
#else
#define TICK_J_LEFT krang_jacobian(q, p, KRANG_LEFT, KRANG_WORLD, Jl)
#define TICK_J_RIGHT krang_jacobian(q, p, KRANG_RIGHT, KRANG_WORLD, Jr)
#endif

int main(int argc, char **argv)
{
    static double A[KRANG_NDOF * KRANG_NDOF], C[KRANG_NDOF * KRANG_NDOF], Qv[KRANG_NDOF];
    static double Jl[6 * KRANG_NDOF], Jr[6 * KRANG_NDOF], tau[KRANG_NDOF];
    bench_states st;
    bench_opts o;
    const double *p;
    const char *dump;
    int kdump = 0, s, i;
    double sink = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s STATES.bin [--target-ms T] [--inner N] [--only NAME] [--dump FILE K]\n", argv[0]);
        return 2;
    }
    st = bench_read_states(argv[1]);
    if (st.ndof != KRANG_NDOF) bench_die("states file ndof differs from KRANG_NDOF");
    if (st.np != KRANG_NP) bench_die("states file parameter count differs from KRANG_NP");
    p = st.params;

    dump = bench_dump_path(argc, argv, 2, &kdump);
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (!f) bench_die("cannot write the dump file");
        for (s = 0; s < kdump && s < st.nstates; s++) {
            const double *q = st.q + (size_t)s * KRANG_NDOF, *dq = st.dq + (size_t)s * KRANG_NDOF;
            krang_compute_A(q, p, A);
            krang_compute_C(q, dq, p, C);
            krang_compute_Q(q, p, Qv);
            krang_jacobian(q, p, KRANG_LEFT, KRANG_WORLD, Jl);
            krang_jacobian(q, p, KRANG_RIGHT, KRANG_WORLD, Jr);
            fwrite(A, sizeof(double), KRANG_NDOF * KRANG_NDOF, f);
            fwrite(C, sizeof(double), KRANG_NDOF * KRANG_NDOF, f);
            fwrite(Qv, sizeof(double), KRANG_NDOF, f);
            fwrite(Jl, sizeof(double), 6 * KRANG_NDOF, f);
            fwrite(Jr, sizeof(double), 6 * KRANG_NDOF, f);
        }
        fclose(f);
        return 0;
    }

    bench_parse_opts(argc, argv, 2, &o);
    printf("{\n  \"harness\": \"ours\",\n  \"nstates\": %d,\n  \"ns\": {", st.nstates);
    BENCH_TIME(o, st, "A", krang_compute_A(q, p, A));
    BENCH_TIME(o, st, "C", krang_compute_C(q, dq, p, C));
    BENCH_TIME(o, st, "Q", krang_compute_Q(q, p, Qv));
    BENCH_TIME(o, st, "J_left", krang_jacobian(q, p, KRANG_LEFT, KRANG_WORLD, Jl));
    BENCH_TIME(o, st, "J_right", krang_jacobian(q, p, KRANG_RIGHT, KRANG_WORLD, Jr));
    BENCH_TIME(o, st, "J_both", krang_jacobian(q, p, KRANG_LEFT, KRANG_WORLD, Jl);
               krang_jacobian(q, p, KRANG_RIGHT, KRANG_WORLD, Jr));
#ifdef BENCH_HAVE_EE_FUNCS /* the per-end-effector functions, without krang_jacobian's dispatch */
    BENCH_TIME(o, st, "J_left_direct", krang_jacobian_left_world(q, p, Jl));
    BENCH_TIME(o, st, "J_both_direct", krang_jacobian_left_world(q, p, Jl); krang_jacobian_right_world(q, p, Jr));
#endif
    BENCH_TIME(o, st, "J_left_local", krang_jacobian(q, p, KRANG_LEFT, KRANG_LOCAL, Jl));
    BENCH_TIME(o, st, "J_both_local", krang_jacobian(q, p, KRANG_LEFT, KRANG_LOCAL, Jl);
               krang_jacobian(q, p, KRANG_RIGHT, KRANG_LOCAL, Jr));
    BENCH_TIME(o, st, "friction", krang_friction(dq, p, tau));
    BENCH_TIME(o, st, "all", krang_compute_all(q, dq, p, A, C, Qv, Jl, Jr));
    /* The control tick's sequence, in a tight loop (no timestamps inside). */
    BENCH_TIME(o, st, "all_seq", krang_compute_A(q, p, A); krang_compute_C(q, dq, p, C); krang_compute_Q(q, p, Qv);
               TICK_J_LEFT; TICK_J_RIGHT);
    printf("\n  }");

    /* Control tick: the same calls in sequence, each timed on its own (bench_common.h). */
    if (!o.only) {
        static const char *const names[] = {"A", "C", "Q", "J_left", "J_right"};
        bench_tick T;
        bench_tick_init(&T, &o, names, 5, 3, "J_left+J_right");
        BENCH_TICK(o, st, T, krang_compute_A(q, p, A); BENCH_MARK(1);
                   krang_compute_C(q, dq, p, C); BENCH_MARK(2);
                   krang_compute_Q(q, p, Qv); BENCH_MARK(3);
                   TICK_J_LEFT; BENCH_MARK(4);
                   TICK_J_RIGHT);
    }
    for (i = 0; i < KRANG_NDOF; i++) sink += A[i * KRANG_NDOF + i] + C[i] + Qv[i] + Jl[i] + Jr[i] + tau[i];
    printf(",\n  \"checksum\": %.17g\n}\n", sink);
    return 0;
}
