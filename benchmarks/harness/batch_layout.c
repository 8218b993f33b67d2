/* Row-major against lane-interleaved batch outputs (issue #36). benchmarks/batch_layout.py
 * fills in the sizes and the robot's C prefix and compiles it with the generated kernels (the
 * default KKSTREAMBYTES). For each size N, the median over the repeats, ns per state, of:
 * compute_A N scalar calls, compute_A_batch (row-major), compute_A_batch_interleaved full and
 * packed as one call on a 64-byte aligned output (streamed where it reaches KKSTREAMBYTES) and
 * as calls of at most CHUNK states on consecutive slices of it (each below KKSTREAMBYTES: plain
 * stores); compute_C the same way; a plain C Cholesky of each row-major A state by state against
 * cholesky_batch_interleaved of the packed A; the two solves the same way. One line per N. */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "krang_kernels.h"
#define N KRANG_NDOF
#define T (N * (N + 1) / 2)
#define NM 14
#define CHUNK 512  /* states: 512 x 17 x 17 doubles, 1.18 MB, below KKSTREAMBYTES */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { const double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double *alloc64(size_t count) { void *p = NULL; return posix_memalign(&p, 64, sizeof(double) * (count + 8)) ? NULL : p; }
/* the per-state reference consumer: Cholesky-Crout of a row-major NxN matrix, in place (lower) */
static void chol(double *a)
{
    for (int j = 0; j < N; ++j) {
        double d = a[j * N + j];
        for (int k = 0; k < j; ++k) d -= a[j * N + k] * a[j * N + k];
        d = d > 0.0 ? sqrt(d) : NAN;
        a[j * N + j] = d;
        for (int i = j + 1; i < N; ++i) {
            double r = a[i * N + j];
            for (int k = 0; k < j; ++k) r -= a[i * N + k] * a[j * N + k];
            a[i * N + j] = r / d;
        }
    }
}
static void solve(const double *l, const double *b, double *x)
{
    for (int i = 0; i < N; ++i) { double r = b[i]; for (int k = 0; k < i; ++k) r -= l[i * N + k] * x[k]; x[i] = r / l[i * N + i]; }
    for (int i = N - 1; i >= 0; --i) { double r = x[i]; for (int k = i + 1; k < N; ++k) r -= l[k * N + i] * x[k]; x[i] = r / l[i * N + i]; }
}
int main(void)
{
    const int sizes[] = {@SIZES@};
    double p[KRANG_NP];
    krang_default_params(p);
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); ++s) {
        const int n = sizes[s], nb = (n + 7) / 8, reps = n <= 64 ? 4000 : n <= 1024 ? 300 : 40;
        const size_t full = (size_t)nb * 8 * N * N, tri = (size_t)nb * 8 * T;
        double *q = malloc(sizeof(double) * n * N), *dq = malloc(sizeof(double) * n * N), *rhs = malloc(sizeof(double) * n * N);
        double *x = malloc(sizeof(double) * n * N), *out = alloc64(full), *work = alloc64(full), *packed = alloc64(tri);
        double *il = alloc64(full), *L = alloc64(tri), *ts = malloc(sizeof(double) * reps * NM);
        unsigned st = 12345u;
        for (int i = 0; i < n * N; ++i) {
            st = st * 1103515245u + 12345u; q[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 6.0;
            st = st * 1103515245u + 12345u; dq[i] = ((double)(st >> 8) / 16777216.0 - 0.5) * 4.0;
            rhs[i] = dq[i];
        }
        double sink = 0.0;
        krang_compute_A_batch(n, q, p, out);
        krang_compute_A_batch_interleaved(n, q, p, 1, packed);
        for (int r = 0; r < reps; ++r) {
#define TIME(i, stmt) do { const double t0 = now(); stmt; ts[(i) * reps + r] = now() - t0; } while (0)
            TIME(0, for (int k = 0; k < n; ++k) krang_compute_A(q + k * N, p, work + (size_t)k * N * N));
            TIME(1, krang_compute_A_batch(n, q, p, work));
#define CHUNKED(call, k) for (int c = 0; c < n; c += CHUNK) call(n - c < CHUNK ? n - c : CHUNK, q + (size_t)c * N, \
                                                                 p, k, il + (size_t)c * (k ? T : N * N))
            TIME(2, CHUNKED(krang_compute_A_batch_interleaved, 0));
            TIME(3, CHUNKED(krang_compute_A_batch_interleaved, 1));
            TIME(4, krang_compute_A_batch_interleaved(n, q, p, 0, il));  /* one call: streamed if large */
            TIME(5, krang_compute_A_batch_interleaved(n, q, p, 1, il));
            sink += il[0] + work[0];
            TIME(6, for (int k = 0; k < n; ++k) krang_compute_C(q + k * N, dq + k * N, p, work + (size_t)k * N * N));
            TIME(7, krang_compute_C_batch(n, q, dq, p, work));
            TIME(8, for (int c = 0; c < n; c += CHUNK) krang_compute_C_batch_interleaved(
                n - c < CHUNK ? n - c : CHUNK, q + (size_t)c * N, dq + (size_t)c * N, p, il + (size_t)c * N * N));
            TIME(9, krang_compute_C_batch_interleaved(n, q, dq, p, il));
            sink += il[0] + work[0];
            memcpy(work, out, sizeof(double) * n * N * N);  /* untimed: the factorizations' inputs */
            TIME(10, for (int k = 0; k < n; ++k) chol(work + (size_t)k * N * N));
            TIME(11, krang_cholesky_batch_interleaved(n, packed, L));
            TIME(12, for (int k = 0; k < n; ++k) solve(work + (size_t)k * N * N, rhs + k * N, x + k * N));
            sink += x[0];
            TIME(13, krang_solve_batch_interleaved(n, L, rhs, x));
            sink += x[0] + L[0];
        }
        printf("%d", n);
        for (int i = 0; i < NM; ++i) {
            qsort(ts + i * reps, reps, sizeof(double), cmp);
            printf(" %.3f", ts[i * reps + reps / 2] / n);
        }
        printf(" %g\n", sink * 0.0);
        free(q); free(dq); free(rhs); free(x); free(out); free(work); free(packed); free(il); free(L); free(ts);
    }
    return 0;
}
