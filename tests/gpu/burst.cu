/* burst.cu: many short one-thread kernels back to back in one process, the other side of
 * tests/gpu/verdicts.sh's "uneven" scenario (one long spin kernel in another process). Its kernel
 * has a name of its own, so its solo reference never mixes with spin's. Each launch runs the same
 * chain of `iters` fused multiply-adds into its own slot; every slot must equal the CPU replay.
 * Prints the wall time from the start to the last kernel's end, `pid=<pid> launched=<n>`, then
 * `Test PASSED` (or `Test FAILED`, exit 1).
 * Usage: burst [--iters N] [--launches L] [--start-at NS] [--timeout S] */
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "tlsample.h"

#define A 0.999f /* x <- x*A + B stays finite for any number of steps */
#define B 1e-3f

__global__ void burst_kernel(float *out, int iters)
{
    float x = 1.0f;
    for (int i = 0; i < iters; i++)
        x = fmaf(x, A, B);
    out[blockIdx.x] = x;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: burst [--iters N] [--launches L] [--start-at NS] [--timeout S]\n"
            "  --iters N      FMA steps per kernel (default 2e4: tens of microseconds)\n"
            "  --launches L   kernels launched back to back on one stream (default 4000)\n"
            "  --start-at NS  launch once CLOCK_REALTIME reaches NS nanoseconds\n"
            "  --timeout S    give up waiting for --start-at after S seconds (default 120)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int iters = 20000, launches = 4000;
    int64_t start_at = 0;
    double timeout_s = 120;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--iters"))
            iters = (int)tls_parse_count("burst", argv[i], argv[i + 1], INT_MAX);
        else if (!strcmp(argv[i], "--launches"))
            launches = (int)tls_parse_count("burst", argv[i], argv[i + 1], 1000000);
        else if (!strcmp(argv[i], "--start-at"))
            start_at = tls_parse_count("burst", argv[i], argv[i + 1], LLONG_MAX);
        else if (!strcmp(argv[i], "--timeout"))
            timeout_s = (double)tls_parse_count("burst", argv[i], argv[i + 1], 86400);
        else
            usage();
    }
    float *d_out, *h_out = (float *)malloc(sizeof(float) * launches);
    if (!h_out) {
        fprintf(stderr, "burst: out of memory\n");
        return 1;
    }
    CHECK_CUDA(cudaMalloc(&d_out, sizeof(float) * launches));
    CHECK_CUDA(cudaMemset(d_out, 0, sizeof(float) * launches));
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaFuncAttributes attr; /* loads the kernel before the clock starts */
    CHECK_CUDA(cudaFuncGetAttributes(&attr, burst_kernel));
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("burst: pid %d, %d launches of %d steps, one thread each\n", (int)getpid(), launches,
           iters);
    fflush(stdout);
    if (tls_start_barrier(NULL, start_at, timeout_s) != 0)
        return 1;

    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    for (int k = 0; k < launches; k++) {
        /* one block per launch, at blockIdx 0: the slot is chosen by the pointer */
        burst_kernel<<<1, 1, 0, st>>>(d_out + k, iters);
        CHECK_CUDA(cudaGetLastError());
    }
    CHECK_CUDA(cudaStreamSynchronize(st));
    double wall_ms = (tls_now_ns(CLOCK_MONOTONIC) - t0) / 1e6;

    CHECK_CUDA(cudaMemcpy(h_out, d_out, sizeof(float) * launches, cudaMemcpyDeviceToHost));
    float want = 1.0f;
    for (int i = 0; i < iters; i++)
        want = fmaf(want, A, B);
    int bad = 0;
    for (int k = 0; k < launches; k++)
        if (memcmp(&h_out[k], &want, sizeof want) != 0 && bad++ < 5)
            fprintf(stderr, "burst: launch %d computed %.9g, the CPU replay %.9g\n", k, h_out[k],
                    want);
    printf("burst: wall %.1f ms from the start to the last kernel's end (%.1f us per kernel)\n",
           wall_ms, wall_ms * 1e3 / launches);
    printf("burst: pid=%d launched=%d\n", (int)getpid(), launches);
    CHECK_CUDA(cudaStreamDestroy(st));
    CHECK_CUDA(cudaFree(d_out));
    free(h_out);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
