/* streams_vs_processes: the same small GPU work done three ways, to see which ones really overlap.
 *   streams_vs_processes --streams 4                      4 kernels, 4 streams, ONE process:
 *                                                         concurrent inside one CUDA context
 *   tlview record --procs 4 -- streams_vs_processes       4 processes, one kernel each:
 *                                                         time-sliced between 4 contexts
 *   tlview record --procs 4 --mps -- streams_vs_processes the same under MPS: concurrent again
 * Each kernel is one block of 64 threads running a long dependent FMA chain: it needs one SM's
 * sliver, so four fit side by side whenever the GPU is allowed to run them together. */
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "tlsample.h"

#define THREADS 64
#define A 0.75f /* x <- x*A + b: a contraction, so x settles on b/(1-A) and stays finite */

/* One block: every thread runs its own chain of `iters` dependent fused multiply-adds. */
__global__ void small_work(float *out, int iters)
{
    int t = threadIdx.x;
    float b = 0.001f * (float)(t + 1 + blockIdx.x);
    float x = 1.0f + (float)t;
    for (int i = 0; i < iters; i++)
        x = fmaf(x, A, b);
    out[blockIdx.x * blockDim.x + t] = x;
}

/* The kernel's chain on the CPU. Once x maps to itself the rest of the loop cannot change it, so
 * the replay stops there (after a few dozen steps) instead of running all `iters`. */
static float replay(int t, int block, long long iters)
{
    float b = 0.001f * (float)(t + 1 + block);
    float x = 1.0f + (float)t;
    for (long long i = 0; i < iters; i++) {
        float next = fmaf(x, A, b);
        if (memcmp(&next, &x, sizeof x) == 0)
            break;
        x = next;
    }
    return x;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: streams_vs_processes [--streams N] [--iters N] [--barrier DIR] [--timeout S]\n"
            "  --streams N   launch N kernels at once, one per stream, in this process\n"
            "                (default 1)\n"
            "  --iters N     FMA steps per thread (default 2e8: about 0.4 s on an H200)\n"
            "  --barrier D   wait in folder D for all TLVIEW_NPROCS copies before launching\n"
            "                (default under tlview record:\n"
            "                TLVIEW_RECORD_DIR/barrier-TLVIEW_RUN_ID)\n"
            "  --timeout S   give up waiting at the barrier after S seconds (default 120)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int streams = 1;
    long long iters = 200000000LL;
    const char *barrier = NULL;
    double timeout_s = 120;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--streams"))
            streams = (int)tls_parse_count("streams_vs_processes", argv[i], argv[i + 1], 128);
        else if (!strcmp(argv[i], "--iters"))
            iters = tls_parse_count("streams_vs_processes", argv[i], argv[i + 1], INT_MAX);
        else if (!strcmp(argv[i], "--barrier"))
            barrier = argv[i + 1];
        else if (!strcmp(argv[i], "--timeout"))
            timeout_s =
                (double)tls_parse_count("streams_vs_processes", argv[i], argv[i + 1], 86400);
        else
            usage();
        i++;
    }
    const char *np = getenv("TLVIEW_NPROCS"), *rk = getenv("TLVIEW_RANK");
    int nprocs = np ? atoi(np) : 1, rank = rk ? atoi(rk) : 0;
    char defbarrier[4096];
    if (!barrier)
        barrier = tls_record_barrier(defbarrier, sizeof defbarrier, nprocs);

    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    size_t n = (size_t)streams * THREADS;
    float *d_out, *h_out = (float *)malloc(sizeof(float) * n);
    cudaStream_t *st = (cudaStream_t *)malloc(sizeof(cudaStream_t) * streams);
    cudaEvent_t *ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * 2 * streams);
    if (!h_out || !st || !ev) {
        fprintf(stderr, "streams_vs_processes: out of memory\n");
        return 1;
    }
    CHECK_CUDA(cudaMalloc(&d_out, sizeof(float) * n));
    CHECK_CUDA(cudaMemset(d_out, 0, sizeof(float) * n));
    for (int s = 0; s < streams; s++) {
        CHECK_CUDA(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        CHECK_CUDA(cudaEventCreate(&ev[2 * s]));
        CHECK_CUDA(cudaEventCreate(&ev[2 * s + 1]));
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("streams_vs_processes: pid %d (copy %d of %d), %d kernel(s) <<<1,%d>>> of %lld steps "
           "on %d stream(s), %s\n",
           (int)getpid(), rank, nprocs, streams, THREADS, iters, streams, prop.name);
    fflush(stdout);
    if (barrier && tls_rank_barrier(barrier, rank, nprocs, timeout_s) != 0)
        return 1;

    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    for (int s = 0; s < streams; s++) {
        CHECK_CUDA(cudaEventRecord(ev[2 * s], st[s]));
        small_work<<<1, THREADS, 0, st[s]>>>(d_out + (size_t)s * THREADS, (int)iters);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(ev[2 * s + 1], st[s]));
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    double wall_ms = (tls_now_ns(CLOCK_MONOTONIC) - t0) / 1e6;

    CHECK_CUDA(cudaMemcpy(h_out, d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));
    int bad = 0;
    double sum_ms = 0;
    for (int s = 0; s < streams; s++) {
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * s], ev[2 * s + 1]));
        sum_ms += ms;
        printf("streams_vs_processes: kernel on stream %d: %.1f ms (cudaEvent)\n", s, ms);
        for (int t = 0; t < THREADS; t++) {
            float want = replay(t, 0, iters), got = h_out[(size_t)s * THREADS + t];
            if (memcmp(&got, &want, sizeof got) != 0 && bad++ < 5)
                fprintf(stderr,
                        "streams_vs_processes: stream %d thread %d computed %.9g, the CPU "
                        "replay %.9g\n",
                        s, t, got, want);
        }
    }
    printf("streams_vs_processes: wall %.1f ms for %d kernel(s) in this process; their sum %.1f ms "
           "(wall/sum %.2f: 1/%d means they ran side by side)\n",
           wall_ms, streams, sum_ms, sum_ms > 0 ? wall_ms / sum_ms : 0.0, streams);
    for (int s = 0; s < streams; s++) {
        CHECK_CUDA(cudaEventDestroy(ev[2 * s]));
        CHECK_CUDA(cudaEventDestroy(ev[2 * s + 1]));
        CHECK_CUDA(cudaStreamDestroy(st[s]));
    }
    CHECK_CUDA(cudaFree(d_out));
    free(ev);
    free(st);
    free(h_out);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
