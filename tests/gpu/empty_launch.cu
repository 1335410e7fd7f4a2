/* empty_launch: launches N empty <<<1,1>>> kernels and says how many, so the collector's count
 * can be compared with the truth. With --wait-file several copies start launching together.
 * Usage: empty_launch N [--wait-file PATH] */
#include <cuda_runtime.h>

#include "tlsample.h"

__global__ void tlgpu_empty(void) {}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    const char *wait_file = argc > 3 && !strcmp(argv[2], "--wait-file") ? argv[3] : NULL;
    if (n < 1 || (argc != 2 && !wait_file)) {
        fprintf(stderr, "usage: empty_launch N [--wait-file PATH]\n");
        return 2;
    }
    CHECK_CUDA(cudaFree(0)); /* create the context before the barrier */
    if (tls_start_barrier(wait_file, 0, 120) != 0)
        return 1;
    for (long i = 0; i < n; i++)
        tlgpu_empty<<<1, 1>>>();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("empty_launch: pid=%d launched=%ld\n", (int)getpid(), n);
    return 0;
}
