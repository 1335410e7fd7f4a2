/* spin: the seed's one-thread testMaxFlopsKernel, the smallest program that shows the difference
 * between N processes time-sliced on one GPU and N processes running concurrently under MPS.
 * Each launch is <<<1,1>>>: one thread, a dependent chain of FMAs, so it uses almost nothing of the
 * GPU and lasts long. Run N copies together (--wait-file or --start-at) and compare the stopwatch.
 * Usage: spin [--iters N] [--launches L] [--streams S] [--wait-file PATH | --start-at NS] */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "tlsample.h"
#include "tlspin.cuh"

static void usage(void)
{
    fprintf(
        stderr,
        "usage: spin [--iters N] [--launches L] [--streams S] [--wait-file PATH | --start-at NS]\n"
        "  --iters N       loop iterations per launch (default 2e8: about 0.45 s on an H200)\n"
        "  --launches L    kernels to launch (default 1), spread over the streams in turn\n"
        "  --streams S     CUDA streams in this process (default 1)\n"
        "  --wait-file P   create P.ready.<pid> once CUDA is up, then wait until P exists\n"
        "  --start-at NS   then wait until CLOCK_REALTIME reaches NS nanoseconds\n"
        "  --timeout S     give up waiting after S seconds (default 120)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long long iters = 200000000LL;
    int launches = 1, streams = 1;
    const char *wait_file = NULL;
    int64_t start_at = 0;
    double timeout_s = 120;
    const float v1 = 10.0f, v2 = 9.9899f, init = 1.0f; /* v1, v2 as in the seed */

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            usage();
        if (!strcmp(a, "--iters"))
            iters = tls_parse_count("spin", a, argv[++i], INT_MAX);
        else if (!strcmp(a, "--launches"))
            launches = (int)tls_parse_count("spin", a, argv[++i], 1000000);
        else if (!strcmp(a, "--streams"))
            streams = (int)tls_parse_count("spin", a, argv[++i], 1024);
        else if (!strcmp(a, "--wait-file"))
            wait_file = argv[++i];
        else if (!strcmp(a, "--start-at"))
            start_at = tls_parse_count("spin", a, argv[++i], LLONG_MAX);
        else if (!strcmp(a, "--timeout"))
            timeout_s = (double)tls_parse_count("spin", a, argv[++i], 86400);
        else
            usage();
    }

    /* CUDA first: it loads a tracer named by CUDA_INJECTION64_PATH, which points NVTX at CUPTI;
     * NVTX reads that once, at its first call, so a range pushed before would not be seen */
    CHECK_CUDA(cudaFree(0));
    nvtxRangePushA("setup");
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    float *d_data, *h_data = (float *)malloc(sizeof(float) * launches);
    cudaStream_t *st = (cudaStream_t *)malloc(sizeof(cudaStream_t) * streams);
    cudaEvent_t *ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * 2 * launches);
    if (!h_data || !st || !ev) {
        fprintf(stderr, "spin: out of memory\n");
        return 1;
    }
    for (int k = 0; k < launches; k++)
        h_data[k] = init;
    CHECK_CUDA(cudaMalloc(&d_data, sizeof(float) * launches));
    CHECK_CUDA(cudaMemcpy(d_data, h_data, sizeof(float) * launches, cudaMemcpyHostToDevice));
    for (int s = 0; s < streams; s++)
        CHECK_CUDA(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    for (int e = 0; e < 2 * launches; e++)
        CHECK_CUDA(cudaEventCreate(&ev[e]));
    CHECK_CUDA(cudaDeviceSynchronize());
    nvtxRangePop();

    printf("spin: pid %d, %d launch(es) of %lld iterations, one thread each, on %d stream(s), %s\n",
           (int)getpid(), launches, iters, streams, prop.name);
    fflush(stdout);
    if (tls_start_barrier(wait_file, start_at, timeout_s) != 0)
        return 1;

    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    int64_t go_wall = tls_now_ns(CLOCK_REALTIME);
    nvtxRangePushA("launch");
    for (int k = 0; k < launches; k++) {
        cudaStream_t s = st[k % streams];
        CHECK_CUDA(cudaEventRecord(ev[2 * k], s));
        testMaxFlopsKernel<<<1, 1, 0, s>>>(d_data + k, (int)iters, v1, v2);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(ev[2 * k + 1], s));
    }
    nvtxRangePop();
    nvtxRangePushA("wait");
    CHECK_CUDA(cudaDeviceSynchronize());
    nvtxRangePop();
    int64_t wall = tls_now_ns(CLOCK_MONOTONIC) - t0;

    nvtxRangePushA("check");
    CHECK_CUDA(cudaMemcpy(h_data, d_data, sizeof(float) * launches, cudaMemcpyDeviceToHost));
    float want = tls_spin_replay(init, iters, v1, v2);
    int bad = 0;
    for (int k = 0; k < launches; k++) {
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
        printf("spin: launch %d on stream %d: %.1f ms (cudaEvent)\n", k, k % streams, ms);
        if (memcmp(&h_data[k], &want, sizeof want) != 0 && !(isnan(h_data[k]) && isnan(want))) {
            fprintf(stderr, "spin: launch %d computed %g, the CPU replay %g\n", k, h_data[k], want);
            bad++;
        }
    }
    printf("spin: wall %.1f ms from the start signal (CLOCK_REALTIME %lld ns) to the last kernel's "
           "end\n",
           wall / 1e6, (long long)go_wall);
    nvtxRangePop();
    printf("spin: result %g, CPU replay %g\n", h_data[0], want);
    printf("spin: pid=%d launched=%d\n", (int)getpid(), launches);

    for (int e = 0; e < 2 * launches; e++)
        CHECK_CUDA(cudaEventDestroy(ev[e]));
    for (int s = 0; s < streams; s++)
        CHECK_CUDA(cudaStreamDestroy(st[s]));
    CHECK_CUDA(cudaFree(d_data));
    free(ev);
    free(st);
    free(h_data);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
