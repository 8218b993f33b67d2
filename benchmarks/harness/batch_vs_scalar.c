/* Batch kernels against the scalar kernels. benchmarks/batch.py writes a copy with the sizes,
 * the repeat count and the robot's C prefix filled in and compiles it once per build. For each
 * size N: N scalar calls vs one batch call of compute_A and of compute_C, and a memset of the
 * same outputs (the floor of any kernel that writes them); the best of the repeats, ns per
 * state, one line per N. */
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
        double *out = malloc(sizeof(double) * n * N * N);
        unsigned st = 12345u;
        for (int i = 0; i < n * N; ++i) {
            st = st * 1103515245u + 12345u; q[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 6.0;
            st = st * 1103515245u + 12345u; dq[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 4.0;
        }
        double best[5] = {1e300, 1e300, 1e300, 1e300, 1e300}, sink = 0.0;
        for (int r = 0; r < REPEATS; ++r) {
            double t0 = now();
            for (int k = 0; k < n; ++k) krang_compute_A(q + k * N, p, out + k * N * N);
            double t1 = now(); sink += out[n * N * N - 1];
            krang_compute_A_batch(n, q, p, out);
            double t2 = now(); sink += out[n * N * N - 1];
            for (int k = 0; k < n; ++k) krang_compute_C(q + k * N, dq + k * N, p, out + k * N * N);
            double t3 = now(); sink += out[n * N * N - 1];
            krang_compute_C_batch(n, q, dq, p, out);
            double t4 = now(); sink += out[n * N * N - 1];
            memset(out, r & 1, sizeof(double) * n * N * N);  /* writing the outputs, nothing else */
            double t5 = now(); sink += out[n * N * N - 1];
            const double d[5] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4};
            for (int i = 0; i < 5; ++i) if (d[i] < best[i]) best[i] = d[i];
        }
        printf("%d %.3f %.3f %.3f %.3f %.3f %g\n", n, best[0] / n, best[1] / n, best[2] / n, best[3] / n,
               best[4] / n, sink * 0.0);
        free(q); free(dq); free(out);
    }
    return 0;
}
