/* The dynamics' batch kernels against their scalar kernels. benchmarks/batch_dynamics.py writes a
 * copy with the sizes, the repeat count and the robot's C prefix filled in and compiles it once
 * per build. For each size N: N scalar calls vs one batch call of inverse_dynamics, bias and
 * forward_dynamics, then (with -DDERIVATIVES, for a robot generated with them) of
 * inverse_dynamics_derivatives and forward_dynamics_derivatives, outputs to N separate rows in
 * both cases; the best of the repeats, ns per state, one line per N: N, then scalar and batch of
 * each kernel in that order. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "krang_kernels.h"
#define N KRANG_NDOF
#define NQ KRANG_NQ  /* q's row: NDOF + 1 on a free-flying base */
#ifdef DERIVATIVES
#define NT 10
#else
#define NT 6
#endif
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
        double best[NT], sink = 0.0;
        for (int i = 0; i < NT; ++i) best[i] = 1e300;
        for (int r = 0; r < REPEATS; ++r) {
            double t[NT + 1];
            t[0] = now();
            for (int k = 0; k < n; ++k) krang_inverse_dynamics(q + k * NQ, dq + k * N, u + k * N, p, out + k * N);
            t[1] = now(); sink += out[n * N - 1];
            krang_inverse_dynamics_batch(n, q, dq, u, p, out);
            t[2] = now(); sink += out[n * N - 1];
            for (int k = 0; k < n; ++k) krang_bias(q + k * NQ, dq + k * N, p, out + k * N);
            t[3] = now(); sink += out[n * N - 1];
            krang_bias_batch(n, q, dq, p, out);
            t[4] = now(); sink += out[n * N - 1];
            for (int k = 0; k < n; ++k) krang_forward_dynamics(q + k * NQ, dq + k * N, u + k * N, p, out + k * N);
            t[5] = now(); sink += out[n * N - 1];
            krang_forward_dynamics_batch(n, q, dq, u, p, out);
            t[6] = now(); sink += out[n * N - 1];
#ifdef DERIVATIVES
            for (int k = 0; k < n; ++k)
                krang_inverse_dynamics_derivatives(q + k * NQ, dq + k * N, u + k * N, p, out + k * N * N, o2 + k * N * N);
            t[7] = now(); sink += o2[n * N * N - 1];
            krang_inverse_dynamics_derivatives_batch(n, q, dq, u, p, out, o2);
            t[8] = now(); sink += o2[n * N * N - 1];
            for (int k = 0; k < n; ++k)
                krang_forward_dynamics_derivatives(q + k * NQ, dq + k * N, u + k * N, p, out + k * N * N, o2 + k * N * N,
                                                   o3 + k * N * N);
            t[9] = now(); sink += o3[n * N * N - 1];
            krang_forward_dynamics_derivatives_batch(n, q, dq, u, p, out, o2, o3);
            t[10] = now(); sink += o3[n * N * N - 1];
#endif
            for (int i = 0; i < NT; ++i) if (t[i + 1] - t[i] < best[i]) best[i] = t[i + 1] - t[i];
        }
        printf("%d", n);
        for (int i = 0; i < NT; ++i) printf(" %.3f", best[i] / n);
        printf(" %g\n", sink * 0.0);
        free(q); free(dq); free(u); free(out);
    }
    return 0;
}
