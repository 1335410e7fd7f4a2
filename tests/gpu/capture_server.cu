/* capture_server: one worker of tests/gpu/capture.sh's server-like workload (capture_loop.h):
 * requests of short kernels (the seed's one-thread kernel, tlspin.cuh, ~10 us each at the
 * default --iters) on a stream of its own, each waited for, logged with their times so that the
 * judge can count the launches inside each capture range. --profiler-ranges brackets requests
 * with cudaProfilerStart/Stop (TLVIEW_CAPTURE=cudaProfilerApi).
 * Usage: capture_server [--iters N] [capture_loop.h options] */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "capture_loop.h"
#include "tlsample.h"
#include "tlspin.cuh"

typedef struct worker {
    float *data;
    cudaStream_t stream;
    int iters;
} worker;

static void request(void *arg, int kernels)
{
    worker *w = (worker *)arg;
    for (int i = 0; i < kernels; i++)
        testMaxFlopsKernel<<<1, 32, 0, w->stream>>>(w->data, w->iters, 1.0f, 0.999f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(w->stream));
}

static void profiler(void *arg, int start)
{
    (void)arg;
    CHECK_CUDA(start ? cudaProfilerStart() : cudaProfilerStop());
}

int main(int argc, char **argv)
{
    worker w = {NULL, 0, 4000};
    if (argc > 2 && !strcmp(argv[1], "--iters")) {
        w.iters = (int)tls_parse_count("capture_server", "--iters", argv[2], 1000000000);
        argc -= 2;
        argv += 2;
    }
    CHECK_CUDA(cudaMalloc(&w.data, 32 * sizeof(float)));
    CHECK_CUDA(cudaMemset(w.data, 0, 32 * sizeof(float)));
    CHECK_CUDA(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaDeviceSynchronize());
    capture_loop_ops ops = {"capture_server", &w, request, profiler};
    int rc = capture_loop_main(argc, argv, &ops);
    CHECK_CUDA(cudaStreamDestroy(w.stream));
    CHECK_CUDA(cudaFree(w.data));
    return rc;
}
