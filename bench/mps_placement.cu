/* mps_placement.cu: one copy of the MPS placement probe (bench/mps_placement.sh runs N of them).
 * Launches K kernels of one block (the seed's Triton single-SM recurrence in CUDA: 128 threads,
 * 8 lanes each, acc += sin(acc + i) * cos(acc - i)) one after another, from a common start
 * instant, and prints per kernel the SM it ran on (%smid), its start (%globaltimer, ns) and its
 * duration: "K <rank> <kernel> <smid> <start_ns> <dur_ns>".
 * Usage: mps_placement LOOPS KERNELS START_AT_NS RANK */
#include <cuda_runtime.h>

#include "tlsample.h"

__global__ void probe(float *out, long long loops, unsigned long long *info)
{
    unsigned smid;
    unsigned long long t0, t1;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    float acc[8] = {0};
    for (long long i = 0; i < loops; i++) {
        float f = (float)i;
        for (int k = 0; k < 8; k++)
            acc[k] += sinf(acc[k] + f) * cosf(acc[k] - f);
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    float sum = 0;
    for (int k = 0; k < 8; k++)
        sum += acc[k];
    out[threadIdx.x] = sum;
    if (threadIdx.x == 0) {
        info[0] = smid;
        info[1] = t0;
        info[2] = t1 - t0;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mps_placement LOOPS KERNELS START_AT_NS RANK\n");
        return 2;
    }
    long long loops = atoll(argv[1]);
    int kernels = atoi(argv[2]);
    float *out;
    unsigned long long *info, h[3];
    CHECK_CUDA(cudaMalloc(&out, 128 * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&info, sizeof h));
    CHECK_CUDA(cudaDeviceSynchronize());
    if (tls_start_barrier(NULL, atoll(argv[3]), 60) != 0)
        return 1;
    for (int k = 0; k < kernels; k++) {
        probe<<<1, 128>>>(out, loops, info);
        CHECK_CUDA(cudaMemcpy(h, info, sizeof h, cudaMemcpyDeviceToHost));
        printf("K %s %d %llu %llu %llu\n", argv[4], k, h[0], h[1], h[2]);
    }
    return 0;
}
