/* tlsample.h: small helpers shared by the tlview samples, GPU test scenarios and benchmarks.
 * CHECK_CUDA() (and CHECK_CU() for the driver API, where cuda.h came first) aborts the program
 * with the failing call, file and line; tls_now_ns() reads a
 * clock in ns; tls_parse_count() reads a count option; tls_start_barrier() makes several processes
 * start their GPU work together: each one announces itself ready (PATH.ready.<pid>) and spins until
 * PATH exists, or until a given CLOCK_REALTIME instant; tls_rank_barrier() does the same for the
 * copies of one `tlview record --procs N` run, in the folder tls_record_barrier() names.
 * Header-only so a demo stays one .cu file plus this. */
#ifndef TLSAMPLE_H
#define TLSAMPLE_H

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t tls_err_ = (call);                                                             \
        if (tls_err_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                    cudaGetErrorString(tls_err_));                                                 \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

#ifdef __cuda_cuda_h__ /* cuda.h came first: the driver API's check too */
/* CHECK_CU: CHECK_CUDA for a driver API call (cuCtxCreate, green contexts). */
#define CHECK_CU(call)                                                                             \
    do {                                                                                           \
        CUresult cu_err_ = (call);                                                                 \
        if (cu_err_ != CUDA_SUCCESS) {                                                             \
            const char *cu_msg_ = NULL;                                                            \
            cuGetErrorString(cu_err_, &cu_msg_);                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                    cu_msg_ ? cu_msg_ : "unknown error");                                          \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)
#endif

/* tls_now_ns: the clock `clk` (CLOCK_MONOTONIC, CLOCK_REALTIME) in nanoseconds. */
static inline int64_t tls_now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* tls_sleep_ns: sleep about `ns` nanoseconds. */
static inline void tls_sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* tls_parse_count: the value of option `opt` given as `text`: a whole number from 1 to max, which
 * may be written like 2e8 (strtod). Anything else (empty, trailing characters, a fraction, out of
 * range) prints "PROG: OPT wants a whole number from 1 to MAX, not 'TEXT'" on stderr, PROG being
 * `prog`, and exits with status 2. */
static inline long long tls_parse_count(const char *prog, const char *opt, const char *text,
                                        long long max)
{
    char *end;
    double v = strtod(text, &end);
    if (*text == 0 || *end != 0 || v < 1 || v > (double)max || v != floor(v)) {
        fprintf(stderr, "%s: %s wants a whole number from 1 to %lld, not '%s'\n", prog, opt, max,
                text);
        exit(2);
    }
    return (long long)v;
}

/* tls_touch: create the empty file `path` (emptying it if it exists) for a barrier; returns 0, or
 * -1 after printing "barrier: cannot create PATH: REASON" on stderr. */
static inline int tls_touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "barrier: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

/* tls_start_barrier: wait for the start signal, then return 0.
 * wait_file (may be NULL): create wait_file.ready.<pid>, then poll every 0.1 ms until wait_file
 * exists; gives up after timeout_s seconds (returns -1 with a message on stderr).
 * start_at_ns (0 = none): then sleep, and spin the last millisecond, until CLOCK_REALTIME reaches
 * it. With neither, it returns at once. */
static inline int tls_start_barrier(const char *wait_file, int64_t start_at_ns, double timeout_s)
{
    if (wait_file) {
        char ready[4096];
        snprintf(ready, sizeof ready, "%s.ready.%ld", wait_file, (long)getpid());
        if (tls_touch(ready) != 0)
            return -1;
        int64_t deadline = tls_now_ns(CLOCK_MONOTONIC) + (int64_t)(timeout_s * 1e9);
        while (access(wait_file, F_OK) != 0) {
            if (tls_now_ns(CLOCK_MONOTONIC) > deadline) {
                fprintf(stderr, "barrier: %s did not appear within %.0f s\n", wait_file, timeout_s);
                return -1;
            }
            tls_sleep_ns(100000);
        }
    }
    if (start_at_ns > 0) {
        int64_t left = start_at_ns - tls_now_ns(CLOCK_REALTIME);
        if (left > (int64_t)(timeout_s * 1e9)) {
            fprintf(stderr, "barrier: start time is %.1f s away (more than %.0f s)\n", left / 1e9,
                    timeout_s);
            return -1;
        }
        if (left > 1000000)
            tls_sleep_ns(left - 1000000);
        while (tls_now_ns(CLOCK_REALTIME) < start_at_ns) {
        }
    }
    return 0;
}

/* tls_record_barrier: the barrier folder of a copy started by `tlview record --procs N` whose
 * command line named none: TLVIEW_RECORD_DIR/barrier-TLVIEW_RUN_ID, written into buf (size bytes)
 * and returned when nprocs > 1 and both variables are set; otherwise NULL (no barrier). */
static inline const char *tls_record_barrier(char *buf, size_t size, int nprocs)
{
    const char *dir = getenv("TLVIEW_RECORD_DIR"), *run = getenv("TLVIEW_RUN_ID");
    if (nprocs <= 1 || !dir || !run)
        return NULL;
    snprintf(buf, size, "%s/barrier-%s", dir, run);
    return buf;
}

/* tls_rank_barrier: the copies of one `tlview record --procs N` run wait here, once CUDA is up,
 * until all N have arrived: each creates DIR/ready.<rank>, then polls until N ready files exist.
 * Returns 0, or -1 with a message after timeout_s seconds. */
static inline int tls_rank_barrier(const char *dir, int rank, int nprocs, double timeout_s)
{
    char path[4200];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    if (tls_touch(path) != 0)
        return -1;
    int64_t deadline = tls_now_ns(CLOCK_MONOTONIC) + (int64_t)(timeout_s * 1e9);
    for (;;) {
        int ready = 0;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            ready += strncmp(e->d_name, "ready.", 6) == 0;
        if (d)
            closedir(d);
        if (ready >= nprocs)
            return 0;
        if (tls_now_ns(CLOCK_MONOTONIC) > deadline) {
            fprintf(stderr, "barrier: only %d of %d copies reached %s within %.0f s\n", ready,
                    nprocs, dir, timeout_s);
            return -1;
        }
        tls_sleep_ns(100000);
    }
}

#endif
