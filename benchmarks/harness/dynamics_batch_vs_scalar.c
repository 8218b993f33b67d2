/* The dynamics' batch kernels against their scalar kernels. benchmarks/batch_dynamics.py writes a
 * copy with the sizes, the repeat count and the robot's C prefix filled in and compiles it once
 * per build. For each size N: N scalar calls vs one batch call of inverse_dynamics, bias and
 * forward_dynamics, outputs to N separate rows in both cases; the best of the repeats, ns per
 * state, one line per N: N, then scalar and batch of each kernel in that order. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "krang_kernels.h"
#define N KRANG_NDOF
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void)
{
    const int sizes[] = {@SIZES@};
    double p[KRANG_NP];
    krang_default_params(p);
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s) {
        const int n = sizes[s];
        double *q = malloc(sizeof(double) * n * N), *dq = malloc(sizeof(double) * n * N);
        double *u = malloc(sizeof(double) * n * N), *out = malloc(sizeof(double) * n * N);
        unsigned st = 12345u;
        for (int i = 0; i < n * N; ++i) {
            st = st * 1103515245u + 12345u; q[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 6.0;
            st = st * 1103515245u + 12345u; dq[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 4.0;
            st = st * 1103515245u + 12345u; u[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 10.0;
        }
        double best[6] = {1e300, 1e300, 1e300, 1e300, 1e300, 1e300}, sink = 0.0;
        for (int r = 0; r < REPEATS; ++r) {
            double t[7];
            t[0] = now();
            for (int k = 0; k < n; ++k) krang_inverse_dynamics(q + k * N, dq + k * N, u + k * N, p, out + k * N);
            t[1] = now(); sink += out[n * N - 1];
            krang_inverse_dynamics_batch(n, q, dq, u, p, out);
            t[2] = now(); sink += out[n * N - 1];
            for (int k = 0; k < n; ++k) krang_bias(q + k * N, dq + k * N, p, out + k * N);
            t[3] = now(); sink += out[n * N - 1];
            krang_bias_batch(n, q, dq, p, out);
            t[4] = now(); sink += out[n * N - 1];
            for (int k = 0; k < n; ++k) krang_forward_dynamics(q + k * N, dq + k * N, u + k * N, p, out + k * N);
            t[5] = now(); sink += out[n * N - 1];
            krang_forward_dynamics_batch(n, q, dq, u, p, out);
            t[6] = now(); sink += out[n * N - 1];
            for (int i = 0; i < 6; ++i) if (t[i + 1] - t[i] < best[i]) best[i] = t[i + 1] - t[i];
        }
        printf("%d", n);
        for (int i = 0; i < 6; ++i) printf(" %.3f", best[i] / n);
        printf(" %g\n", sink * 0.0);
        free(q); free(dq); free(u); free(out);
    }
    return 0;
}
