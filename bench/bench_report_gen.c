/* bench_report_gen: writes the input of bench_report: F trace files (one process each, default
 * 16) holding N kernels in all (default 10M), through the store writer, like libcollect would.
 * Every process first runs alone (a solo phase giving each of its 8 kernel signatures a
 * reference), then all run together in iterations separated by an idle barrier; overlapped
 * kernels are stretched F times (time-sliced), with 2% deterministic jitter.
 *   bench_report_gen DIR [-n KERNELS] [-f FILES] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench_jitter.h"
#include "store.h"

#define NSIG 8
#define SOLO 64          /* solo kernels per process */
#define PER_ITER 8       /* kernels per process per iteration */
#define BARRIER 200000LL /* ns idle between iterations */

static int64_t base_dur(int sig)
{
    return 4000 + 3000 * sig; /* 4 us .. 25 us */
}

static int write_file(const char *path, int p, int nfiles, uint64_t per_proc)
{
    static const char *const names[NSIG] = {"_Z6gemm_aPfS_S_i", "_Z6gemm_bPfS_S_i",  "_Z4reluPfi",
                                            "_Z7softmaxPfi",    "_Z9layernormPfS_i", "_Z4copyPfS_i",
                                            "_Z6reducePfi",     "_Z4spinPfi"};
    store_writer *w = NULL;
    int64_t id;
    store_process_info pi = {0};
    pi.pid = 5000 + p;
    pi.host = "bench";
    pi.run_id = "bench-run";
    pi.source = "libcollect";
    store_device_info di = {
        0, "00112233445566778899aabbccddeeff", "NVIDIA H200", 132, 9, 0, 150ULL << 30};
    store_context_info ci = {
        .context_id = 1, .device_id = 0, .compute_api_kind = 1, .null_stream_id = 7};
    if (store_writer_open(path, STORE_CLOCK_REALTIME, 0, &w) || store_writer_process(w, &pi, &id) ||
        store_writer_device(w, id, &di) || store_writer_context(w, id, &ci) ||
        store_writer_begin(w))
        goto fail;
    /* solo phase: process p alone in slot p */
    int64_t solo_len = 0;
    for (int i = 0; i < SOLO; i++)
        solo_len += base_dur(i % NSIG) * 11 / 10;
    int64_t t = (int64_t)p * (solo_len + BARRIER);
    store_kernel_info k = {0};
    k.context_id = 1;
    k.stream_id = 7;
    k.grid[0] = 132;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    uint64_t n = 0;
    for (int i = 0; i < SOLO && n < per_proc; i++, n++) {
        k.name = names[i % NSIG];
        k.start = t;
        k.end = t + bench_jitter(base_dur(i % NSIG));
        k.correlation_id = (uint32_t)n + 1;
        t = k.end + 1000;
        if (store_writer_kernel(w, id, &k))
            goto fail;
    }
    /* iterations: everybody together, each kernel stretched nfiles times */
    int64_t iter_len = BARRIER;
    for (int i = 0; i < PER_ITER; i++)
        iter_len += base_dur(i % NSIG) * nfiles * 11 / 10 + 1000;
    int64_t t0 = (int64_t)nfiles * (solo_len + BARRIER);
    for (uint64_t it = 0; n < per_proc; it++) {
        t = t0 + (int64_t)it * iter_len + p * 500;
        for (int i = 0; i < PER_ITER && n < per_proc; i++, n++) {
            k.name = names[i % NSIG];
            k.start = t;
            k.end = t + bench_jitter(base_dur(i % NSIG) * nfiles);
            k.correlation_id = (uint32_t)n + 1;
            t = k.end + 1000;
            if (store_writer_kernel(w, id, &k))
                goto fail;
        }
    }
    if (store_writer_commit(w) || store_writer_process_end(w, id, t, 1, NULL))
        goto fail;
    return store_writer_close(w) ? 1 : 0;
fail:
    fprintf(stderr, "bench_report_gen: %s\n", w ? store_writer_errmsg(w) : "out of memory");
    store_writer_close(w);
    return 1;
}

int main(int argc, char **argv)
{
    uint64_t total = 10000000;
    int nfiles = 16, c;
    while ((c = getopt(argc, argv, "n:f:")) != -1) {
        if (c == 'n')
            total = strtoull(optarg, NULL, 10);
        else if (c == 'f')
            nfiles = atoi(optarg);
        else
            return 2;
    }
    if (optind != argc - 1 || nfiles < 1 || nfiles > 4096) {
        fprintf(stderr, "usage: bench_report_gen DIR [-n KERNELS] [-f FILES]\n");
        return 2;
    }
    const char *dir = argv[optind];
    mkdir(dir, 0755);
    for (int p = 0; p < nfiles; p++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bench.%d.db", dir, 5000 + p);
        uint64_t per = total / nfiles + ((uint64_t)p < total % nfiles);
        if (write_file(path, p, nfiles, per))
            return 1;
    }
    printf("bench_report_gen: %llu kernels in %d files in %s\n", (unsigned long long)total, nfiles,
           dir);
    return 0;
}
