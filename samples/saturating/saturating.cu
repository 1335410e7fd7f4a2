/* saturating: kernels that fill every SM, the case where MPS gains nothing.
 *   tlview record --procs 4 -- saturating         time-sliced: each kernel stretched ~4x
 *   tlview record --procs 4 --mps -- saturating   MPS clients, still stretched ~4x: contended
 * One launch is `waves` full waves of blocks (as many resident blocks as every SM holds, times
 * waves), each thread running four independent FMA chains, so the FP32 units are busy on the whole
 * GPU. Another process's kernel can only take SMs away from it: the work of N copies takes N times
 * as long whether they are time-sliced or merged by MPS. tlview should say so ("contended"),
 * unlike the one-thread kernels of spin and streams_vs_processes. */
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "tlsample.h"
#include "tlsat.cuh"

#define THREADS TLS_SAT_THREADS

static void usage(void)
{
    fprintf(stderr,
            "usage: saturating [--iters N] [--waves W] [--launches L] [--barrier DIR]\n"
            "                  [--timeout S]\n"
            "  --iters N     FMA steps per chain (default 1800000: about 0.5 s on an H200)\n"
            "  --waves W     full waves of blocks per launch (default 8)\n"
            "  --launches L  kernels launched one after another (default 1)\n"
            "  --barrier D   wait in folder D for all TLVIEW_NPROCS copies before launching\n"
            "                (default under tlview record:\n"
            "                TLVIEW_RECORD_DIR/barrier-TLVIEW_RUN_ID)\n"
            "  --timeout S   give up waiting at the barrier after S seconds (default 120)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int iters = 1800000, waves = 8, launches = 1;
    const char *barrier = NULL;
    double timeout_s = 120;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--iters"))
            iters = (int)tls_parse_count("saturating", argv[i], argv[i + 1], INT_MAX);
        else if (!strcmp(argv[i], "--waves"))
            waves = (int)tls_parse_count("saturating", argv[i], argv[i + 1], 1024);
        else if (!strcmp(argv[i], "--launches"))
            launches = (int)tls_parse_count("saturating", argv[i], argv[i + 1], 100000);
        else if (!strcmp(argv[i], "--barrier"))
            barrier = argv[i + 1];
        else if (!strcmp(argv[i], "--timeout"))
            timeout_s = (double)tls_parse_count("saturating", argv[i], argv[i + 1], 86400);
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
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_sms, THREADS, 0));
    long long blocks = (long long)waves * prop.multiProcessorCount * per_sm;
    if (per_sm < 1 || blocks > INT_MAX / THREADS) {
        fprintf(stderr, "saturating: %d blocks per SM, %lld blocks: cannot launch\n", per_sm,
                blocks);
        return 1;
    }
    size_t n = (size_t)blocks * THREADS;
    float *d_out, *h_out = (float *)malloc(sizeof(float) * n);
    if (!h_out) {
        fprintf(stderr, "saturating: out of memory\n");
        return 1;
    }
    CHECK_CUDA(cudaMalloc(&d_out, sizeof(float) * n));
    CHECK_CUDA(cudaMemset(d_out, 0, sizeof(float) * n));
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("saturating: pid %d (copy %d of %d), %d launch(es) <<<%lld,%d>>> = %d wave(s) of %d SMs "
           "x %d blocks, %d steps x 4 chains, %s\n",
           (int)getpid(), rank, nprocs, launches, blocks, THREADS, waves, prop.multiProcessorCount,
           per_sm, iters, prop.name);
    fflush(stdout);
    if (barrier && tls_rank_barrier(barrier, rank, nprocs, timeout_s) != 0)
        return 1;

    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    CHECK_CUDA(cudaEventRecord(e0));
    for (int l = 0; l < launches; l++) {
        fill_sms<<<(unsigned)blocks, THREADS>>>(d_out, iters);
        CHECK_CUDA(cudaGetLastError());
    }
    CHECK_CUDA(cudaEventRecord(e1));
    CHECK_CUDA(cudaDeviceSynchronize());
    double wall_ms = (tls_now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    CHECK_CUDA(cudaMemcpy(h_out, d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));

    /* Check the first and last thread of ~8 blocks spread over the grid (the CPU replays a
     * thread at about a thousandth of the GPU's rate: replaying more would outlast the run). */
    int bad = 0;
    long long step = blocks > 8 ? blocks / 8 : 1;
    for (long long blk = 0; blk < blocks; blk += step)
        for (int t = 0; t < THREADS; t += THREADS - 1) {
            size_t g = (size_t)blk * THREADS + (size_t)t;
            float want = tls_sat_chains((unsigned)g, iters);
            if (memcmp(&h_out[g], &want, sizeof want) != 0 && bad++ < 5)
                fprintf(stderr, "saturating: thread %zu computed %.9g, the CPU replay %.9g\n", g,
                        h_out[g], want);
        }
    double tflops = 2.0 * 4.0 * (double)iters * (double)n * launches / (ms * 1e-3) / 1e12;
    printf("saturating: %d launch(es) %.1f ms (cudaEvent), wall %.1f ms, %.1f FP32 TFLOP/s\n",
           launches, ms, wall_ms, tflops);
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    CHECK_CUDA(cudaFree(d_out));
    free(h_out);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
