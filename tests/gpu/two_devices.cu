/* two_devices.cu: one process that uses two GPUs at once (issue 7's GPU check, two_gpus.sh).
 * Launches one one-thread spin kernel on device 0 and one on device 1, back to back without
 * waiting, so they run at the same instants, then waits for both; from --start-at NS on
 * (CLOCK_REALTIME), like the samples. Prints "two_devices: N devices, kernels done" and exits 0.
 * Usage: two_devices [--iters N] [--start-at NS] */
#include <cuda_runtime.h>

#include "tlsample.h"

__global__ void two_devices_spin(float *p, int iters)
{
    float s = p[0];
    for (int i = 0; i < iters; i++)
        s = 0.999f * s + 1e-6f;
    p[0] = s;
}

int main(int argc, char **argv)
{
    long long iters = 200000000, start_at = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters"))
            iters = (long long)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--start-at"))
            start_at = atoll(argv[i + 1]);
        else {
            fprintf(stderr, "usage: two_devices [--iters N] [--start-at NS]\n");
            return 2;
        }
    }
    int n = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n));
    if (n < 2) {
        fprintf(stderr, "two_devices: %d device(s) visible, 2 needed\n", n);
        return 1;
    }
    float *p[2];
    for (int d = 0; d < 2; d++) {
        CHECK_CUDA(cudaSetDevice(d));
        CHECK_CUDA(cudaMalloc(&p[d], sizeof(float)));
        CHECK_CUDA(cudaMemset(p[d], 0, sizeof(float)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    if (tls_start_barrier(NULL, start_at, 60) != 0)
        return 1;
    for (int d = 0; d < 2; d++) {
        CHECK_CUDA(cudaSetDevice(d));
        two_devices_spin<<<1, 1>>>(p[d], (int)iters);
        CHECK_CUDA(cudaGetLastError());
    }
    for (int d = 0; d < 2; d++) {
        CHECK_CUDA(cudaSetDevice(d));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaFree(p[d]));
    }
    printf("two_devices: 2 devices, kernels done\n");
    return 0;
}
