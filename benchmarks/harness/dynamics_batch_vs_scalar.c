/* The dynamics' batch kernels against their scalar kernels. benchmarks/batch_dynamics.py writes a
 * copy with the sizes, the repeat count and the robot's C prefix filled in and compiles it once
 * per build. For each size N: N scalar calls vs one batch call of inverse_dynamics, bias and
 * forward_dynamics, then (with -DDERIVATIVES, for a robot generated with them) of
 * inverse_dynamics_derivatives and forward_dynamics_derivatives, outputs to N separate rows in
 * both cases; the best of the repeats, ns per state, one line per N: N, then for each kernel in
 * that order the scalar loop, the batch call and the batch call's first run after the scalar loop
 * (TIMED). Throughput is the steady state of each side, so both are timed hot; the first call
 * is printed too: its cold code (a batch body is tens of KB, beyond L1i) costs it a fixed few
 * hundred ns, which a small batch called between other code pays. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "krang_kernels.h"
#define N KRANG_NDOF
#define NQ KRANG_NQ  /* q's row: NDOF + 1 on a free-flying base */
#ifdef DERIVATIVES
#define NK 5
#else
#define NK 3
#endif
/* Kernel k's three timings into best[3k .. 3k + 2] (the least over the repeats): the scalar loop
 * SCALAR after an untimed run of it (hot), the batch call BATCH right after that loop (first call),
 * and BATCH again (hot: after a call of itself). READ: an output element, summed so that no call is
 * dropped. */
#define TIMED(k, SCALAR, BATCH, READ)                                          \
    do {                                                                       \
        double t0, t1, t2, t3;                                                 \
        SCALAR;                                                                \
        sink += READ;                                                          \
        t0 = now();                                                            \
        SCALAR;                                                                \
        t1 = now();                                                            \
        sink += READ;                                                          \
        t2 = now();                                                            \
        BATCH;                                                                 \
        t3 = now();                                                            \
        sink += READ;                                                          \
        if (t1 - t0 < best[3 * (k)]) best[3 * (k)] = t1 - t0;                  \
        if (t3 - t2 < best[3 * (k) + 2]) best[3 * (k) + 2] = t3 - t2;          \
        t2 = now();                                                            \
        BATCH;                                                                 \
        t3 = now();                                                            \
        sink += READ;                                                          \
        if (t3 - t2 < best[3 * (k) + 1]) best[3 * (k) + 1] = t3 - t2;          \
    } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void)
{
    const int sizes[] = {@SIZES@};
    double p[KRANG_NP];
    krang_default_params(p);
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s) {
        const int n = sizes[s];
        double *q = malloc(sizeof(double) * n * NQ), *dq = malloc(sizeof(double) * n * N);
        double *u = malloc(sizeof(double) * n * N), *out = malloc(sizeof(double) * n * N * N * 3);
        unsigned st = 12345u;
        for (int i = 0; i < n * NQ; ++i) {
            st = st * 1103515245u + 12345u; q[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 6.0;
        }
        for (int i = 0; i < n * N; ++i) {
            st = st * 1103515245u + 12345u; dq[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 4.0;
            st = st * 1103515245u + 12345u; u[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 10.0;
        }
        for (int k = 0; k < n && NQ != N; ++k) {  /* a unit quaternion (q[3..6]) on a free-flying base */
            double *x = q + k * NQ + 3, m = 0.0;
            for (int i = 0; i < 4; ++i) m += x[i] * x[i];
            for (int i = 0; i < 4; ++i) x[i] /= m > 0.0 ? __builtin_sqrt(m) : 1.0;
        }
        double *o2 = out + n * N * N, *o3 = out + 2 * n * N * N;
        double best[3 * NK], sink = 0.0;
        for (int i = 0; i < 3 * NK; ++i) best[i] = 1e300;
        for (int r = 0; r < REPEATS; ++r) {
            /* per kernel: the scalar loop (after an untimed one), the batch call right after it
             * (first: its code and predictors cold), then again (hot) */
            TIMED(0, for (int k = 0; k < n; ++k) krang_inverse_dynamics(q + k * NQ, dq + k * N, u + k * N, p, out + k * N),
                  krang_inverse_dynamics_batch(n, q, dq, u, p, out), out[n * N - 1]);
            TIMED(1, for (int k = 0; k < n; ++k) krang_bias(q + k * NQ, dq + k * N, p, out + k * N),
                  krang_bias_batch(n, q, dq, p, out), out[n * N - 1]);
            TIMED(2, for (int k = 0; k < n; ++k) krang_forward_dynamics(q + k * NQ, dq + k * N, u + k * N, p, out + k * N),
                  krang_forward_dynamics_batch(n, q, dq, u, p, out), out[n * N - 1]);
#ifdef DERIVATIVES
            TIMED(3, for (int k = 0; k < n; ++k)
                      krang_inverse_dynamics_derivatives(q + k * NQ, dq + k * N, u + k * N, p, out + k * N * N, o2 + k * N * N),
                  krang_inverse_dynamics_derivatives_batch(n, q, dq, u, p, out, o2), o2[n * N * N - 1]);
            TIMED(4, for (int k = 0; k < n; ++k)
                      krang_forward_dynamics_derivatives(q + k * NQ, dq + k * N, u + k * N, p, out + k * N * N,
                                                         o2 + k * N * N, o3 + k * N * N),
                  krang_forward_dynamics_derivatives_batch(n, q, dq, u, p, out, o2, o3), o3[n * N * N - 1]);
#endif
        }
        printf("%d", n);
        for (int i = 0; i < 3 * NK; ++i) printf(" %.3f", best[i] / n);
        printf(" %g\n", sink * 0.0);
        free(q); free(dq); free(u); free(out);
    }
    return 0;
}
