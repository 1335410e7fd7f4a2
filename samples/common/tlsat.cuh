/* tlsat.cuh: the saturating kernel (fill_sms: every thread four independent FMA chains, so the FP32
 * units of every SM it reaches are busy) and its CPU replay, shared by samples/saturating and
 * samples/partitions so that both launch the same kernel (a recording of one is the other's
 * reference). Header-only, for .cu files. */
#ifndef TLSAT_CUH
#define TLSAT_CUH

#include <math.h>

#define TLS_SAT_THREADS 256 /* threads per block */
#define TLS_SAT_A 0.999f    /* x <- x*A + b stays finite for any number of steps */

/* Thread g's work, run by the kernel and replayed by the CPU check. Four independent chains per
 * thread keep the FMA pipes full (one chain would leave them waiting on each result). fmaf rounds
 * once on both sides and nothing else is fused or reordered, so the CPU gets the GPU's bits. */
static __host__ __device__ inline float tls_sat_chains(unsigned g, int iters)
{
    float b = 1e-4f * (float)(g % 13);
    float x0 = 1.0f, x1 = 2.0f, x2 = 3.0f, x3 = 4.0f;
    for (int i = 0; i < iters; i++) {
        x0 = fmaf(x0, TLS_SAT_A, b);
        x1 = fmaf(x1, TLS_SAT_A, b);
        x2 = fmaf(x2, TLS_SAT_A, b);
        x3 = fmaf(x3, TLS_SAT_A, b);
    }
    return (x0 + x1) + (x2 + x3);
}

__global__ void fill_sms(float *out, int iters)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = tls_sat_chains(g, iters);
}

#endif
