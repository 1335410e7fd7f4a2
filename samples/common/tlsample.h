/* tlsample.h: small helpers shared by the tlview samples, GPU test scenarios and benchmarks.
 * CHECK_CUDA() aborts the program with the failing call, file and line; tls_now_ns() reads a
 * clock in ns; tls_start_barrier() makes several processes start their GPU work together: each one
 * announces itself ready (PATH.ready.<pid>) and spins until PATH exists, or until a given
 * CLOCK_REALTIME instant. Header-only so a demo stays one .cu file plus this. */
#ifndef TLSAMPLE_H
#define TLSAMPLE_H

#include <dirent.h>
#include <errno.h>
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
        FILE *f = fopen(ready, "w");
        if (!f) {
            fprintf(stderr, "barrier: cannot create %s: %s\n", ready, strerror(errno));
            return -1;
        }
        fclose(f);
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

/* tls_rank_barrier: the copies of one `tlview record --procs N` run wait here, once CUDA is up,
 * until all N have arrived: each creates DIR/ready.<rank>, then polls until N ready files exist.
 * Returns 0, or -1 with a message after timeout_s seconds. */
static inline int tls_rank_barrier(const char *dir, int rank, int nprocs, double timeout_s)
{
    char path[4200];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "barrier: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    fclose(f);
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
