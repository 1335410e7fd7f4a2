/* launch: the launch-bound cost of tracing. Launches N empty <<<1,1>>> kernels back to back on one
 * stream and prints the wall time per launch, from the first launch to the end of the last kernel.
 * One kernel launched and waited for beforehand takes CUDA's (and an injection's) start-up out of
 * the figure. Usage: launch [N] (default 200000) */
#include <cuda_runtime.h>

#include "tlsample.h"

__global__ void bench_empty(void) {}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    if (n < 1) {
        fprintf(stderr, "usage: launch [N]\n");
        return 2;
    }
    bench_empty<<<1, 1>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < n; i++)
        bench_empty<<<1, 1>>>();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    int64_t dt = tls_now_ns(CLOCK_MONOTONIC) - t0;
    printf("launch: %ld kernels in %.3f s: %.3f us per launch, %.0f kernels/s\n", n, dt / 1e9,
           dt / 1e3 / n, n / (dt / 1e9));
    printf("launch: pid=%d launched=%ld\n", (int)getpid(), n + 1);
    return 0;
}
