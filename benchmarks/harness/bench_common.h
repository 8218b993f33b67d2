/* Shared by bench_c.c and bench_pin.cpp: the states file and the timing loop.
 *
 * States file (written by benchmarks/timing.py, little-endian):
 *   char magic[4] = "KRBS"; int32 version = 1; int32 nstates; int32 ndof; int32 np;
 *   double params[np]; double q[nstates][ndof]; double dq[nstates][ndof];
 * Version 2 (a floating base: q has nq = ndof + 1 entries, the base quaternion) adds int32 nq
 * after np, and q is double q[nstates][nq].
 *
 * Timing: every kernel is called on every state in turn (the same pre-drawn
 * states for both harnesses), `reps` times over, between two reads of
 * CLOCK_MONOTONIC; ns/call = elapsed / (reps * nstates). `reps` is calibrated
 * so that one such measurement lasts about target_ms; `inner` measurements
 * are taken and the harness prints their median and minimum. The driver runs the
 * harnesses several times, alternating, and takes the median across runs.
 *
 * That is the throughput of one hot kernel: its code and data stay in the
 * caches from one call to the next. The "control tick" (BENCH_TICK below)
 * measures latency instead: per pre-drawn state, the kernels of one controller
 * tick are called in sequence (A, C, Q, then each end effector's Jacobian) and each call is
 * timed on its own with a cheap timestamp (rdtsc between lfences on x86,
 * else CLOCK_MONOTONIC), minus the timer overhead (median of empty timed
 * regions). A second pass times the whole tick with no timestamps inside it.
 * The "cold" variant reads a buffer of --cold-kib KiB (default 4096; 0: off)
 * before every tick, evicting L1/L2 of code and data. The "flush" variant
 * (--flush) instead flushes, before every tick, every cache line of the
 * process's own memory that a tick can touch out of every cache level
 * (clflushopt, or clflush, then mfence; Linux x86-64 only): every readable
 * mapping of the executable (its machine code, read-only data, .data and
 * .bss, which holds bench_c's outputs), the anonymous mapping right after it
 * (the rest of .bss), the malloc heap ([heap]: the states, the parameter
 * vector, Pinocchio's Model and Data and its Eigen vectors), the main stack
 * ([stack]: the kernels' frames and spills) and libm (Pinocchio's sin/cos).
 * So the figure does not depend on cache sizes. Not flushed: other shared
 * libraries (libc, libstdc++), TLBs, branch predictors.
 */
#ifndef KRANG_BENCH_COMMON_H
#define KRANG_BENCH_COMMON_H

#if !defined(__cplusplus) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200112L /* clock_gettime, readlink */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_TSC 1
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <unistd.h>
#define BENCH_FLUSH 1
#endif

typedef struct {
    int nstates, ndof, np, nq; /* nq: entries of one q (ndof, or ndof + 1 with a floating base) */
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
    size_t nv, nq;
    if (!f) bench_die("cannot open the states file");
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "KRBS", 4) != 0) bench_die("not a states file");
    if (fread(head, sizeof(int32_t), 4, f) != 4 || (head[0] != 1 && head[0] != 2)) bench_die("bad states file header");
    s.nstates = head[1];
    s.ndof = head[2];
    s.np = head[3];
    s.nq = s.ndof;
    if (head[0] == 2) {
        int32_t nq;
        if (fread(&nq, sizeof(int32_t), 1, f) != 1) bench_die("bad states file header");
        s.nq = nq;
    }
    if (s.nstates <= 0 || s.ndof <= 0 || s.np < 0 || s.nq < s.ndof) bench_die("bad states file sizes");
    nv = (size_t)s.nstates * (size_t)s.ndof;
    nq = (size_t)s.nstates * (size_t)s.nq;
    s.params = (double *)malloc(sizeof(double) * (size_t)(s.np > 0 ? s.np : 1));
    s.q = (double *)malloc(sizeof(double) * nq);
    s.dq = (double *)malloc(sizeof(double) * nv);
    if (!s.params || !s.q || !s.dq) bench_die("out of memory");
    if (fread(s.params, sizeof(double), (size_t)s.np, f) != (size_t)s.np ||
        fread(s.q, sizeof(double), nq, f) != nq || fread(s.dq, sizeof(double), nv, f) != nv)
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
    int tick;  /* run the control-tick measurement (--no-tick: 0) */
    long cold_kib;
    int flush; /* --flush: also the flushed tick */
} bench_opts;

/* reps x every state: the statement(s) in ... with `q`, `dq` (const double *) and s_ the state's index. */
#define BENCH_REPS_(st, reps, ...)                                                        \
    for (r_ = 0; r_ < (reps); r_++)                                                       \
        for (s_ = 0; s_ < (st).nstates; s_++) {                                           \
            const double *q = (st).q + (size_t)s_ * (st).nq;                              \
            const double *dq = (st).dq + (size_t)s_ * (st).ndof;                          \
            (void)q; (void)dq;                                                            \
            __VA_ARGS__;                                                                  \
        }

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
            BENCH_REPS_(st, reps_, __VA_ARGS__);                                          \
            el_ = bench_now_ns() - t0_;                                                   \
            if (el_ >= 0.25 * (opts).target_ns) break;                                    \
            reps_ *= 2;                                                                   \
        }                                                                                 \
        reps_ = (long)(reps_ * (opts).target_ns / el_) + 1;                               \
        for (k_ = 0; k_ < (opts).inner; k_++) {                                           \
            t0_ = bench_now_ns();                                                         \
            BENCH_REPS_(st, reps_, __VA_ARGS__);                                          \
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
    o->tick = 1;
    o->cold_kib = 4096;
    o->flush = 0;
    for (i = start; i < argc; i++) {
        if (!strcmp(argv[i], "--target-ms") && i + 1 < argc) o->target_ns = atof(argv[++i]) * 1e6;
        else if (!strcmp(argv[i], "--no-tick")) o->tick = 0;
        else if (!strcmp(argv[i], "--flush")) o->flush = 1;
        else if (!strcmp(argv[i], "--cold-kib") && i + 1 < argc) o->cold_kib = atol(argv[++i]);
        else if (!strcmp(argv[i], "--inner") && i + 1 < argc) o->inner = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) o->only = argv[++i];
        else if (!strcmp(argv[i], "--dump") && i + 2 < argc) i += 2; /* handled by the harness */
        else bench_die("unknown option (use --target-ms T --inner N --only NAME --no-tick --cold-kib K --flush "
                       "--dump FILE K)");
    }
    if (o->inner < 1 || o->inner > BENCH_MAX_INNER) bench_die("--inner must be 1..64");
    if (o->target_ns <= 0) bench_die("--target-ms must be > 0");
    if (o->cold_kib < 0) bench_die("--cold-kib must be >= 0");
}

/* ------------------------------------------------------------------ control tick */

/* Timestamp in counts: the TSC between lfences (so the calls around it do not
 * overlap it), or CLOCK_MONOTONIC ns where there is no TSC. */
static inline uint64_t bench_stamp(void)
{
#ifdef BENCH_TSC
    uint64_t t;
    _mm_lfence();
    t = __rdtsc();
    _mm_lfence();
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

#define BENCH_TICK_MAXCALLS 32
#define BENCH_TICK_CAP 65536L /* ticks kept per measurement */
#define BENCH_FLUSH_MAX 32    /* flushed address ranges */

typedef struct {
    int ncalls;                /* calls per tick, separated by BENCH_MARK(1..ncalls-1) */
    const char *const *names;  /* their names */
    int group, ngroup;         /* calls group .. group+ngroup-1 are also reported together as group_name
                                  (ngroup 0: none) */
    const char *group_name;
    double target_ns;
    double ns_per_count, overhead_counts, overhead_ns, clock_gettime_ns;
    unsigned char *evict;
    size_t evict_bytes;
    int flush;                                 /* the flushed tick is measured */
    int flush_opt;                             /* with clflushopt (else clflush) */
    int nflush;                                /* address ranges flushed before each flushed tick */
    uintptr_t flush_lo[BENCH_FLUSH_MAX], flush_hi[BENCH_FLUSH_MAX];
    char flush_what[BENCH_FLUSH_MAX][16];      /* exe, bss, heap, stack, libm */
    double *raw; /* BENCH_TICK_CAP rows of ncalls + 1 deltas in counts (per call, then the whole tick) */
    double *col;
    long n;
} bench_tick;

static volatile double bench_sink_;

/* Read one byte of every cache line of the eviction buffer. */
static void bench_evict(const bench_tick *T)
{
    const volatile unsigned char *b = T->evict;
    unsigned acc = 0;
    size_t i;
    for (i = 0; i < T->evict_bytes; i += 64) acc += b[i];
    bench_sink_ += acc;
}

/* The ranges to flush (see the top of this file), from /proc/self/maps. */
static void bench_flush_ranges(bench_tick *T)
{
#ifdef BENCH_FLUSH
    char exe[4096], line[4600], path[4096], perm[8];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    FILE *f = fopen("/proc/self/maps", "r");
    int after_exe = 0;
    if (n <= 0 || !f) bench_die("--flush: cannot read /proc/self/exe or /proc/self/maps");
    exe[n] = 0;
    T->nflush = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        const char *what = NULL;
        path[0] = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi, perm, path) < 3) continue;
        if (!strcmp(path, exe)) what = "exe";
        else if (!path[0] && after_exe) what = "bss";
        else if (!strcmp(path, "[heap]")) what = "heap";
        else if (!strcmp(path, "[stack]")) what = "stack";
        else if (strstr(path, "/libm.so") || strstr(path, "/libm-")) what = "libm";
        after_exe = !strcmp(path, exe);
        if (!what || perm[0] != 'r') continue; /* clflush needs read access */
        if (T->nflush == BENCH_FLUSH_MAX) bench_die("--flush: too many mappings");
        T->flush_lo[T->nflush] = lo;
        T->flush_hi[T->nflush] = hi;
        snprintf(T->flush_what[T->nflush], sizeof T->flush_what[0], "%s", what);
        T->nflush++;
    }
    fclose(f);
#else
    (void)T;
    bench_die("--flush: Linux x86-64 only");
#endif
}

#ifdef BENCH_FLUSH
/* clflushopt where the CPU has it (CPUID.7.0:EBX bit 23) whatever the build's -march:
 * clflush is ordered against every other clflush, several times slower per line. */
__attribute__((target("clflushopt"))) static void bench_flush_opt_(uintptr_t lo, uintptr_t hi)
{
    uintptr_t a;
    for (a = lo & ~(uintptr_t)63; a < hi; a += 64) _mm_clflushopt((void *)a);
}

static int bench_have_clflushopt_(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 23 & 1u);
}
#endif

/* Flush every cache line of the ranges out of every cache level. */
static void bench_flush(const bench_tick *T)
{
#ifdef BENCH_FLUSH
    int r;
    for (r = 0; r < T->nflush; r++) {
        uintptr_t a;
        if (T->flush_opt) {
            bench_flush_opt_(T->flush_lo[r], T->flush_hi[r]);
            continue;
        }
        for (a = T->flush_lo[r] & ~(uintptr_t)63; a < T->flush_hi[r]; a += 64) _mm_clflush((const void *)a);
    }
    _mm_mfence();
#else
    (void)T;
#endif
}

static void bench_tick_init(bench_tick *T, const bench_opts *o, const char *const *names, int ncalls, int group,
                            int ngroup, const char *group_name)
{
    enum { NE = 100001 };
    double *e;
    double t0, t1;
    uint64_t c0, c1;
    int i;
    if (ncalls < 1 || ncalls > BENCH_TICK_MAXCALLS) bench_die("bad tick call count");
    T->ncalls = ncalls;
    T->names = names;
    if (ngroup < 0 || group < 0 || group + ngroup > ncalls) bench_die("bad tick group");
    T->group = group;
    T->ngroup = ngroup;
    T->group_name = group_name;
    T->target_ns = o->target_ns;
    T->raw = (double *)malloc(sizeof(double) * (size_t)BENCH_TICK_CAP * (size_t)(ncalls + 1));
    T->col = (double *)malloc(sizeof(double) * (size_t)BENCH_TICK_CAP);
    T->evict_bytes = (size_t)o->cold_kib * 1024u;
    T->evict = T->evict_bytes ? (unsigned char *)malloc(T->evict_bytes) : NULL;
    if (!T->raw || !T->col || (T->evict_bytes && !T->evict)) bench_die("out of memory");
    e = T->raw; /* scratch for the timer calibration below (>= 2 * BENCH_TICK_CAP doubles) */
    if (T->evict) memset(T->evict, 1, T->evict_bytes); /* real pages, not the shared zero page */
    T->flush = o->flush;
    T->nflush = 0;
    T->flush_opt = 0;
    if (T->flush) {
        bench_flush_ranges(T);
#ifdef BENCH_FLUSH
        T->flush_opt = bench_have_clflushopt_();
#endif
    }
    /* counts -> ns, against CLOCK_MONOTONIC over ~50 ms */
#ifdef BENCH_TSC
    t0 = bench_now_ns();
    c0 = bench_stamp();
    do t1 = bench_now_ns(); while (t1 - t0 < 50e6);
    c1 = bench_stamp();
    T->ns_per_count = (t1 - t0) / (double)(c1 - c0);
#else
    (void)c0; (void)c1;
    T->ns_per_count = 1.0;
#endif
    /* timer overhead: median of empty timed regions */
    for (i = 0; i < NE; i++) {
        c0 = bench_stamp();
        c1 = bench_stamp();
        e[i] = (double)(c1 - c0);
    }
    T->overhead_counts = bench_median(e, NE);
    T->overhead_ns = T->overhead_counts * T->ns_per_count;
    for (i = 0; i < NE; i++) {
        t0 = bench_now_ns();
        t1 = bench_now_ns();
        e[i] = t1 - t0;
    }
    T->clock_gettime_ns = bench_median(e, NE);
}

/* Quantile (0..1, nearest rank) of v[0..n), sorting v. */
static double bench_quantile(double *v, long n, double f)
{
    long k = (long)(f * (double)(n - 1) + 0.5);
    qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
    return v[k < 0 ? 0 : (k >= n ? n - 1 : k)];
}

/* Statistics of one measurement, in ns, overhead subtracted: out[c][0] median, out[c][1] p90,
 * for c = each call, the group, the sum of the calls (instrumented pass) -- or, for the
 * uninstrumented pass, only out[0] = the whole tick. */
static void bench_tick_stats(bench_tick *T, int instr, double out[][2])
{
    const int nc = T->ncalls, w = nc + 1;
    long t;
    int c;
    if (!instr) {
        for (t = 0; t < T->n; t++) T->col[t] = (T->raw[t * w + nc] - T->overhead_counts) * T->ns_per_count;
        out[0][1] = bench_quantile(T->col, T->n, 0.9);
        out[0][0] = bench_quantile(T->col, T->n, 0.5);
        return;
    }
    for (c = 0; c < nc + 2; c++) {
        for (t = 0; t < T->n; t++) {
            const double *r = T->raw + t * w;
            double d;
            if (c < nc) d = r[c] - T->overhead_counts;
            else if (c == nc) {
                int g;
                d = -T->ngroup * T->overhead_counts;
                for (g = 0; g < T->ngroup; g++) d += r[T->group + g];
            }
            else d = r[nc] - nc * T->overhead_counts;
            T->col[t] = d * T->ns_per_count;
        }
        out[c][1] = bench_quantile(T->col, T->n, 0.9);
        out[c][0] = bench_quantile(T->col, T->n, 0.5);
    }
}

/* Inside the tick body: the timestamp after call i (i = 1 .. ncalls-1). */
#define BENCH_MARK(i)                              \
    do {                                           \
        if (instr_) tk_[i] = bench_stamp();        \
    } while (0)

/* One measurement: ticks over the states in turn until ~target_ns has passed (or
 * BENCH_TICK_CAP ticks), each preceded by the eviction if cold_. */
#define BENCH_TICK_RUN_(T, st, body)                                                      \
    do {                                                                                  \
        const int nc_ = (T).ncalls;                                                       \
        long n_ = 0;                                                                      \
        int s_ = 0, c_;                                                                   \
        double ts_ = bench_now_ns();                                                      \
        for (;;) {                                                                        \
            const double *q = (st).q + (size_t)s_ * (st).nq;                              \
            const double *dq = (st).dq + (size_t)s_ * (st).ndof;                          \
            double *row_ = (T).raw + n_ * (nc_ + 1);                                      \
            (void)q; (void)dq;                                                            \
            if (cold_ == 1) bench_evict(&(T));                                            \
            else if (cold_ == 2) bench_flush(&(T));                                       \
            tk_[0] = bench_stamp();                                                       \
            body;                                                                         \
            tk_[nc_] = bench_stamp();                                                     \
            if (instr_)                                                                   \
                for (c_ = 0; c_ < nc_; c_++) row_[c_] = (double)(tk_[c_ + 1] - tk_[c_]);  \
            row_[nc_] = (double)(tk_[nc_] - tk_[0]);                                      \
            n_++;                                                                         \
            if (++s_ == (st).nstates) s_ = 0;                                             \
            if (n_ == BENCH_TICK_CAP) break;                                              \
            if ((cold_ || (n_ & 15) == 0) && bench_now_ns() - ts_ >= (T).target_ns) break; \
        }                                                                                 \
        (T).n = n_;                                                                       \
    } while (0)

/* Tick modes: 0 warm, 1 cold (buffer read), 2 flush (clflush). */
static const char *const bench_mode_name_[3] = {"warm", "cold", "flush"};

static int bench_mode_on_(const bench_tick *T, int mode)
{
    return mode == 0 || (mode == 1 && T->evict_bytes) || (mode == 2 && T->flush);
}

/* "flush_bytes": total, "flush_ranges": {"exe": bytes, ...} (JSON members, leading comma). */
static void bench_flush_print_(const bench_tick *T)
{
    static const char *const kinds[] = {"exe", "bss", "heap", "stack", "libm"};
    unsigned long total = 0, per;
    int r, k;
    if (!T->flush) return;
    for (r = 0; r < T->nflush; r++) total += (unsigned long)(T->flush_hi[r] - T->flush_lo[r]);
    printf(",\n    \"flush_insn\": \"%s\",\n    \"flush_bytes\": %lu,\n    \"flush_ranges\": {",
           T->flush_opt ? "clflushopt" : "clflush", total);
    for (k = 0; k < 5; k++) {
        per = 0;
        for (r = 0; r < T->nflush; r++)
            if (!strcmp(T->flush_what[r], kinds[k])) per += (unsigned long)(T->flush_hi[r] - T->flush_lo[r]);
        printf("%s\"%s\": %lu", k ? ", " : "", kinds[k], per);
    }
    printf("}");
}

static void bench_tick_print_row(const char *name, double *med, double *p90, int inner, int *first)
{
    double mn = med[0];
    int k;
    for (k = 1; k < inner; k++) if (med[k] < mn) mn = med[k];
    printf("%s\n      \"%s\": [%.3f, %.3f, %.3f]", *first ? "" : ",", name, bench_median(med, inner), mn,
           bench_median(p90, inner));
    *first = 0;
}

/* The control tick: the statements in ... are one tick (they may use q, dq, s_ as in
 * BENCH_TIME and must contain BENCH_MARK(1) .. BENCH_MARK(ncalls-1) between the calls).
 * Prints  "tick": {...}  as one JSON member (leading comma included): per mode (warm,
 * cold if --cold-kib > 0, flush if --flush), "NAME": [median over measurements of the per-tick median,
 * min over measurements, median of the per-measurement p90], in ns. BENCH_TICK_AS: the
 * same as the JSON member `member` (a string literal). */
#define BENCH_TICK(opts, st, T, ...) BENCH_TICK_AS(opts, st, T, "tick", __VA_ARGS__)
#define BENCH_TICK_AS(opts, st, T, member, ...)                                             \
    do {                                                                                    \
        static double m_[3][BENCH_TICK_MAXCALLS + 3][BENCH_MAX_INNER];                      \
        static double p_[3][BENCH_TICK_MAXCALLS + 3][BENCH_MAX_INNER];                      \
        double one_[BENCH_TICK_MAXCALLS + 2][2];                                            \
        long nt_[3][BENCH_MAX_INNER];                                                       \
        uint64_t tk_[BENCH_TICK_MAXCALLS + 1];                                              \
        int mode_, k_, instr_, cold_, c2_, first_;                                          \
        const int ncs_ = (T).ncalls;                                                        \
        if (!(opts).tick) break;                                                            \
        for (mode_ = 0; mode_ < 3; mode_++) {                                               \
            if (!bench_mode_on_(&(T), mode_)) continue;                                     \
            cold_ = mode_;                                                                  \
            double tgt_ = (T).target_ns;                                                    \
            (T).target_ns = 0.1 * tgt_; /* warm-up */                                       \
            instr_ = 1;                                                                     \
            BENCH_TICK_RUN_(T, st, __VA_ARGS__);                                            \
            (T).target_ns = tgt_;                                                           \
            for (k_ = 0; k_ < (opts).inner; k_++) {                                         \
                instr_ = 1;                                                                 \
                BENCH_TICK_RUN_(T, st, __VA_ARGS__);                                        \
                nt_[mode_][k_] = (T).n;                                                     \
                bench_tick_stats(&(T), 1, one_);                                            \
                for (c2_ = 0; c2_ < ncs_ + 2; c2_++) {                                      \
                    m_[mode_][c2_][k_] = one_[c2_][0];                                      \
                    p_[mode_][c2_][k_] = one_[c2_][1];                                      \
                }                                                                           \
                instr_ = 0;                                                                 \
                BENCH_TICK_RUN_(T, st, __VA_ARGS__);                                        \
                bench_tick_stats(&(T), 0, one_);                                            \
                m_[mode_][ncs_ + 2][k_] = one_[0][0];                                       \
                p_[mode_][ncs_ + 2][k_] = one_[0][1];                                       \
            }                                                                               \
        }                                                                                   \
        printf(",\n  \"" member "\": {\n    \"timer\": \"%s\",\n    \"ns_per_count\": %.6g,\n"  \
               "    \"overhead_ns\": %.3f,\n    \"clock_gettime_ns\": %.3f,\n"                  \
               "    \"cold_bytes\": %lu",                                                       \
               BENCH_TIMER_NAME, (T).ns_per_count, (T).overhead_ns, (T).clock_gettime_ns,       \
               (unsigned long)(T).evict_bytes);                                                 \
        bench_flush_print_(&(T));                                                           \
        for (mode_ = 0; mode_ < 3; mode_++) {                                               \
            double nn_[BENCH_MAX_INNER];                                                    \
            if (!bench_mode_on_(&(T), mode_)) continue;                                     \
            for (k_ = 0; k_ < (opts).inner; k_++) nn_[k_] = (double)nt_[mode_][k_];         \
            printf(",\n    \"%s_ticks\": %.0f,\n    \"%s\": {", bench_mode_name_[mode_],     \
                   bench_median(nn_, (opts).inner), bench_mode_name_[mode_]);                   \
            first_ = 1;                                                                     \
            for (c2_ = 0; c2_ < ncs_; c2_++)                                                \
                bench_tick_print_row((T).names[c2_], m_[mode_][c2_], p_[mode_][c2_],        \
                                     (opts).inner, &first_);                                \
            if ((T).ngroup > 0)                                                             \
                bench_tick_print_row((T).group_name, m_[mode_][ncs_], p_[mode_][ncs_],      \
                                     (opts).inner, &first_);                                \
            bench_tick_print_row("sum", m_[mode_][ncs_ + 1], p_[mode_][ncs_ + 1],           \
                                 (opts).inner, &first_);                                    \
            bench_tick_print_row("tick", m_[mode_][ncs_ + 2], p_[mode_][ncs_ + 2],          \
                                 (opts).inner, &first_);                                    \
            printf("\n    }");                                                              \
        }                                                                                   \
        printf("\n  }");                                                                    \
        fflush(stdout);                                                                     \
    } while (0)

#ifdef BENCH_TSC
#define BENCH_TIMER_NAME "rdtsc between lfences"
#else
#define BENCH_TIMER_NAME "clock_gettime(CLOCK_MONOTONIC)"
#endif

/* --dump FILE K: write the outputs for the first K states (see benchmarks/timing.py) instead of timing. */
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
