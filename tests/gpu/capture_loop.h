/* capture_loop.h: the server-like loop of tests/gpu/capture.sh, shared by the CUDA worker
 * (capture_server.cu) and its CPU stand-in (capture_standin.c), so both log the same requests.
 * A worker serves requests for --seconds: each request launches --kernels kernels and waits for
 * them, then the worker idles --gap-us. Every request is one line of the log,
 *   <index> <start ns> <end ns> <kernels>      (CLOCK_REALTIME, before the first launch and
 *                                               after the wait; request 0 is the warm-up)
 * so a judge can tell which launches fell inside a capture range. --profiler-ranges A:B,C:D
 * calls cudaProfilerStart before request A and cudaProfilerStop after request B-1 (and so on),
 * and says how many kernels each such range launched. Header-only, C and CUDA C++ alike. */
#ifndef CAPTURE_LOOP_H
#define CAPTURE_LOOP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_LOOP_MAX_RANGES 8

typedef struct capture_loop_ops {
    const char *prog;                        /* name in messages */
    void *arg;                               /* handed to the calls below */
    void (*request)(void *arg, int kernels); /* launches the kernels and waits for them */
    void (*profiler)(void *arg, int start);  /* cudaProfilerStart (1) / cudaProfilerStop (0) */
} capture_loop_ops;

static inline int64_t capture_loop_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int capture_loop_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--seconds S] [--kernels K] [--gap-us G] [--log FILE] "
            "[--profiler-ranges A:B,...] [--requests N]\n"
            "  FILE may hold %%p (the pid); defaults: 10 s, 20 kernels, 500 us, no log\n",
            prog);
    return 2;
}

/* Runs the loop; returns the exit status. */
static inline int capture_loop_main(int argc, char **argv, const capture_loop_ops *ops)
{
    double seconds = 10;
    long kernels = 20, gap_us = 500, max_requests = 0;
    const char *log_pattern = NULL;
    long ra[CAPTURE_LOOP_MAX_RANGES], rb[CAPTURE_LOOP_MAX_RANGES];
    int nranges = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v)
            return capture_loop_usage(ops->prog);
        if (!strcmp(argv[i], "--seconds"))
            seconds = strtod(v, &end);
        else if (!strcmp(argv[i], "--kernels"))
            kernels = strtol(v, &end, 10);
        else if (!strcmp(argv[i], "--gap-us"))
            gap_us = strtol(v, &end, 10);
        else if (!strcmp(argv[i], "--requests"))
            max_requests = strtol(v, &end, 10);
        else if (!strcmp(argv[i], "--log")) {
            log_pattern = v;
            end = (char *)v + strlen(v);
        } else if (!strcmp(argv[i], "--profiler-ranges")) {
            const char *p = v;
            while (*p && nranges < CAPTURE_LOOP_MAX_RANGES) {
                ra[nranges] = strtol(p, &end, 10);
                if (*end != ':')
                    return capture_loop_usage(ops->prog);
                rb[nranges] = strtol(end + 1, &end, 10);
                if (rb[nranges] <= ra[nranges] || ra[nranges] < 1 ||
                    (nranges && ra[nranges] < rb[nranges - 1]))
                    return capture_loop_usage(ops->prog);
                nranges++;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                    return capture_loop_usage(ops->prog);
            }
        } else
            return capture_loop_usage(ops->prog);
        if (!end || *end || seconds <= 0 || kernels < 1 || gap_us < 0 || max_requests < 0)
            return capture_loop_usage(ops->prog);
        i++;
    }
    FILE *log = NULL;
    if (log_pattern) {
        char path[4096];
        size_t o = 0;
        for (const char *p = log_pattern; *p && o + 16 < sizeof path; p++) {
            if (p[0] == '%' && p[1] == 'p') {
                o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)getpid());
                p++;
            } else {
                path[o++] = *p;
            }
        }
        path[o] = '\0';
        log = fopen(path, "w");
        if (!log) {
            fprintf(stderr, "%s: cannot write %s: %s\n", ops->prog, path, strerror(errno));
            return 1;
        }
    }
    long launched = 0, requests = 0, in_range[CAPTURE_LOOP_MAX_RANGES] = {0};
    int64_t t = capture_loop_now();
    ops->request(ops->arg, 1); /* the warm-up: CUDA (and the collector) start here */
    int64_t te = capture_loop_now();
    if (log)
        fprintf(log, "0 %lld %lld 1\n", (long long)t, (long long)te);
    launched = 1;
    printf("%s: pid=%ld ready\n", ops->prog, (long)getpid());
    fflush(stdout);
    int64_t stop_at = te + (int64_t)(seconds * 1e9);
    int r = 0;
    for (long i = 1;; i++) {
        if ((max_requests && i > max_requests) || (!max_requests && capture_loop_now() >= stop_at))
            break;
        if (r < nranges && i == ra[r])
            ops->profiler(ops->arg, 1);
        t = capture_loop_now();
        ops->request(ops->arg, (int)kernels);
        te = capture_loop_now();
        if (log)
            fprintf(log, "%ld %lld %lld %ld\n", i, (long long)t, (long long)te, kernels);
        launched += kernels;
        requests = i;
        if (r < nranges && i >= ra[r])
            in_range[r] += kernels;
        if (r < nranges && i == rb[r] - 1) {
            ops->profiler(ops->arg, 0);
            r++;
        }
        if (gap_us) {
            struct timespec ts = {gap_us / 1000000, (gap_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (r < nranges && requests >= ra[r]) { /* a range still open at the end */
        ops->profiler(ops->arg, 0);
        r++;
    }
    if (log)
        fclose(log);
    for (int k = 0; k < nranges; k++)
        printf("%s: pid=%ld profiler range %d: requests %ld-%ld launched %ld\n", ops->prog,
               (long)getpid(), k + 1, ra[k], rb[k] - 1, in_range[k]);
    printf("%s: pid=%ld requests=%ld launched=%ld\n", ops->prog, (long)getpid(), requests,
           launched);
    return r == nranges ? 0 : 1;
}

#endif
