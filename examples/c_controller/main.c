/* A computed-torque controller for Krang in plain C, no Python: all 17
 * joints track q_d(t) = AMP (1 - cos(w t)) at 1 kHz for 10^5 ticks against a
 * plant integrated with RK4 on krang_forward_dynamics, and the per-tick
 * latency of the control law is measured.
 *
 *   tau = krang_inverse_dynamics(q, dq, ddq_d + KP (q_d - q) + KD (dq_d - dq))
 *
 * Build and run from the repository root:
 *   cc -O2 -std=c99 -I generated examples/c_controller/main.c generated/krang_kernels.c -lm
 *   ./a.out [ticks]          (default 100000)
 *
 * Prints the tracking error and the latency of one control tick (the PD
 * correction plus inverse dynamics, timed with clock_gettime(CLOCK_MONOTONIC))
 * as percentiles p50, p99 and max, in nanoseconds. The kernels allocate
 * nothing; the latency buffer is allocated once before the loop. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "krang_kernels.h"

enum { N = KRANG_NDOF };

static const double DT = 1e-3;
static const double KP = 2500.0, KD = 100.0; /* critically damped, 50 rad/s */
static const double PI = 3.14159265358979323846;

static void desired(double t, double *qd, double *dqd, double *ddqd)
{
    for (int i = 0; i < N; ++i) {
        double amp = i < 3 ? 0.2 : 0.4;                     /* rad: the base joints move less */
        double w = 2.0 * PI * (0.3 + 0.5 * i / (N - 1.0)); /* 0.3 .. 0.8 Hz */
        qd[i] = amp * (1.0 - cos(w * t));
        dqd[i] = amp * w * sin(w * t);
        ddqd[i] = amp * w * w * cos(w * t);
    }
}

/* One RK4 step of (q, dq)' = (dq, forward_dynamics(q, dq, tau)), tau held. */
static void rk4(double *q, double *dq, const double *tau, const double *p)
{
    double kq[4][N], kv[4][N], qs[N], vs[N];
    static const double h[4] = {0.0, 0.5, 0.5, 1.0};
    for (int s = 0; s < 4; ++s) {
        for (int i = 0; i < N; ++i) {
            qs[i] = q[i] + (s ? h[s] * DT * kq[s - 1][i] : 0.0);
            vs[i] = dq[i] + (s ? h[s] * DT * kv[s - 1][i] : 0.0);
            kq[s][i] = vs[i];
        }
        krang_forward_dynamics(qs, vs, tau, p, kv[s]);
    }
    for (int i = 0; i < N; ++i) {
        q[i] += DT / 6.0 * (kq[0][i] + 2.0 * kq[1][i] + 2.0 * kq[2][i] + kq[3][i]);
        dq[i] += DT / 6.0 * (kv[0][i] + 2.0 * kv[1][i] + 2.0 * kv[2][i] + kv[3][i]);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
    long ticks = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    if (ticks < 1) {
        fprintf(stderr, "usage: %s [ticks >= 1]\n", argv[0]);
        return 2;
    }
    double *lat = malloc((size_t)ticks * sizeof *lat);
    if (!lat) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double p[KRANG_NP], q[N] = {0}, dq[N] = {0}, qd[N], dqd[N], ddqd[N], a[N], tau[N];
    double max_err = 0.0, final_err = 0.0;
    krang_default_params(p);
    for (int i = 3; i < 10; ++i)
        q[i] = 0.02; /* start the left arm a little off the trajectory */

    for (long k = 0; k < ticks; ++k) {
        desired((double)k * DT, qd, dqd, ddqd);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < N; ++i)
            a[i] = ddqd[i] + KP * (qd[i] - q[i]) + KD * (dqd[i] - dq[i]);
        krang_inverse_dynamics(q, dq, a, p, tau);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        lat[k] = elapsed_ns(&t0, &t1);
        double err = 0.0;
        for (int i = 0; i < N; ++i)
            err = fmax(err, fabs(qd[i] - q[i]));
        if ((double)k * DT >= 0.3) /* after the initial offset has decayed */
            max_err = fmax(max_err, err);
        final_err = err;
        rk4(q, dq, tau, p);
    }
    qsort(lat, (size_t)ticks, sizeof *lat, by_value);
    printf("Krang computed torque in C: %ld ticks of %g ms, RK4 on krang_forward_dynamics\n", ticks, DT * 1e3);
    printf("max tracking error: %.3e rad (after 0.3 s), final %.3e rad\n", max_err, final_err);
    printf("control tick latency (ns): p50 %.0f  p99 %.0f  max %.0f\n", lat[(ticks - 1) / 2],
           lat[(long)((ticks - 1) * 0.99)], lat[ticks - 1]);
    free(lat);
    return 0;
}
