/* Shared by bench_c.c and bench_pin.cpp: the states file and the timing loop.
 *
 * States file (written by bench.py, little-endian):
 *   char magic[4] = "KRBS"; int32 version = 1; int32 nstates; int32 ndof; int32 np;
 *   double params[np]; double q[nstates][ndof]; double dq[nstates][ndof];
 *
 * Timing: every kernel is called on every state in turn (the same pre-drawn
 * states for both harnesses), `reps` times over, between two reads of
 * CLOCK_MONOTONIC; ns/call = elapsed / (reps * nstates). `reps` is calibrated
 * so that one such measurement lasts about target_ms; `inner` measurements
 * are taken and the harness prints their median and minimum. bench.py runs the
 * harnesses several times, alternating, and takes the median across runs.
 */
#ifndef KRANG_BENCH_COMMON_H
#define KRANG_BENCH_COMMON_H

#if !defined(__cplusplus) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int nstates, ndof, np;
    double *params, *q, *dq;
} bench_states;

static double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void bench_die(const char *what)
{
    fprintf(stderr, "bench: %s\n", what);
    exit(2);
}

static bench_states bench_read_states(const char *path)
{
    bench_states s;
    char magic[4];
    int32_t head[4];
    FILE *f = fopen(path, "rb");
    size_t nv;
    if (!f) bench_die("cannot open the states file");
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "KRBS", 4) != 0) bench_die("not a states file");
    if (fread(head, sizeof(int32_t), 4, f) != 4 || head[0] != 1) bench_die("bad states file header");
    s.nstates = head[1];
    s.ndof = head[2];
    s.np = head[3];
    if (s.nstates <= 0 || s.ndof <= 0 || s.np < 0) bench_die("bad states file sizes");
    nv = (size_t)s.nstates * (size_t)s.ndof;
    s.params = (double *)malloc(sizeof(double) * (size_t)(s.np > 0 ? s.np : 1));
    s.q = (double *)malloc(sizeof(double) * nv);
    s.dq = (double *)malloc(sizeof(double) * nv);
    if (!s.params || !s.q || !s.dq) bench_die("out of memory");
    if (fread(s.params, sizeof(double), (size_t)s.np, f) != (size_t)s.np ||
        fread(s.q, sizeof(double), nv, f) != nv || fread(s.dq, sizeof(double), nv, f) != nv)
        bench_die("truncated states file");
    fclose(f);
    return s;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define BENCH_MAX_INNER 64

/* Options shared by both harnesses: --target-ms T --inner N --only NAME. */
typedef struct {
    double target_ns;
    int inner;
    const char *only;
    int first; /* for the JSON separator */
} bench_opts;

/* Time the statement(s) in ... (which may use `q`, `dq`: const double * of the current state,
 * and s_, the index of the current state)
 * and print  "NAME": [median_ns, min_ns]  as one JSON member. */
#define BENCH_TIME(opts, st, NAME, ...)                                                   \
    do {                                                                                  \
        if ((opts).only && strcmp((opts).only, NAME) != 0) break;                         \
        long reps_ = 1, r_;                                                               \
        int s_, k_;                                                                       \
        double t0_, el_ = 0, v_[BENCH_MAX_INNER], vmin_;                                  \
        for (;;) { /* calibrate (also warms up) */                                        \
            t0_ = bench_now_ns();                                                         \
            for (r_ = 0; r_ < reps_; r_++)                                                \
                for (s_ = 0; s_ < (st).nstates; s_++) {                                   \
                    const double *q = (st).q + (size_t)s_ * (st).ndof;                    \
                    const double *dq = (st).dq + (size_t)s_ * (st).ndof;                  \
                    (void)q; (void)dq;                                                    \
                    __VA_ARGS__;                                                          \
                }                                                                         \
            el_ = bench_now_ns() - t0_;                                                   \
            if (el_ >= 0.25 * (opts).target_ns) break;                                    \
            reps_ *= 2;                                                                   \
        }                                                                                 \
        reps_ = (long)(reps_ * (opts).target_ns / el_) + 1;                               \
        for (k_ = 0; k_ < (opts).inner; k_++) {                                           \
            t0_ = bench_now_ns();                                                         \
            for (r_ = 0; r_ < reps_; r_++)                                                \
                for (s_ = 0; s_ < (st).nstates; s_++) {                                   \
                    const double *q = (st).q + (size_t)s_ * (st).ndof;                    \
                    const double *dq = (st).dq + (size_t)s_ * (st).ndof;                  \
                    (void)q; (void)dq;                                                    \
                    __VA_ARGS__;                                                          \
                }                                                                         \
            v_[k_] = (bench_now_ns() - t0_) / ((double)reps_ * (st).nstates);             \
        }                                                                                 \
        vmin_ = v_[0];                                                                    \
        for (k_ = 1; k_ < (opts).inner; k_++) if (v_[k_] < vmin_) vmin_ = v_[k_];         \
        printf("%s\n    \"%s\": [%.3f, %.3f]", (opts).first ? "" : ",", NAME,             \
               bench_median(v_, (opts).inner), vmin_);                                    \
        fflush(stdout);                                                                   \
        (opts).first = 0;                                                                 \
    } while (0)

static void bench_parse_opts(int argc, char **argv, int start, bench_opts *o)
{
    int i;
    o->target_ns = 20e6;
    o->inner = 5;
    o->only = NULL;
    o->first = 1;
    for (i = start; i < argc; i++) {
        if (!strcmp(argv[i], "--target-ms") && i + 1 < argc) o->target_ns = atof(argv[++i]) * 1e6;
        else if (!strcmp(argv[i], "--inner") && i + 1 < argc) o->inner = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) o->only = argv[++i];
        else if (!strcmp(argv[i], "--dump") && i + 2 < argc) i += 2; /* handled by the harness */
        else bench_die("unknown option (use --target-ms T --inner N --only NAME --dump FILE K)");
    }
    if (o->inner < 1 || o->inner > BENCH_MAX_INNER) bench_die("--inner must be 1..64");
    if (o->target_ns <= 0) bench_die("--target-ms must be > 0");
}

/* --dump FILE K: write the outputs for the first K states (see bench.py) instead of timing. */
static const char *bench_dump_path(int argc, char **argv, int start, int *k)
{
    int i;
    for (i = start; i + 2 < argc; i++)
        if (!strcmp(argv[i], "--dump")) {
            *k = atoi(argv[i + 2]);
            return argv[i + 1];
        }
    return NULL;
}

#endif
