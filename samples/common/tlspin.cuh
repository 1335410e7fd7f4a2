/* tlspin.cuh: the seed's one-thread testMaxFlopsKernel and its CPU replay, shared by samples/spin,
 * tests/gpu/contexts.cu and bench/mps_cost.cu, so that every program launches the same kernel
 * (same name, arguments and code: a recording of `spin` alone is the others' solo reference).
 * Header-only, for .cu files. */
#ifndef TLSPIN_CUH
#define TLSPIN_CUH

#include <math.h>
#include <string.h>

/* The kernel's body: a dependent chain of FMAs on one float. The seed's listing reads
 * `s2=v1-s1*v2;` but declares no s1; the chain s -> s2 -> s3 -> s4 means `s`. */
__device__ __forceinline__ void tls_spin_chain(float *pData, int nRepeats, float v1, float v2)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float s = pData[tid], s2 = 10.0f - s, s3 = 9.0f - s, s4 = 9.0f - s2;
    for (int i = 0; i < nRepeats; i++) {
        s = v1 - s * v2;
        s2 = v1 - s * v2;
        s3 = v1 - s2 * v2;
        s4 = v1 - s3 * v2;
    }
    pData[tid] = ((s + s2) + (s3 + s4));
}

/* The seed's kernel (000), with its typo fixed (tls_spin_chain). */
__global__ void testMaxFlopsKernel(float *pData, int nRepeats, float v1, float v2)
{
    tls_spin_chain(pData, nRepeats, v1, v2);
}

/* The same arithmetic on the CPU (nvcc contracts v1 - s*v2 into one fused multiply-add, hence
 * fmaf): what the kernel leaves in pData[tid] after n iterations from `init`. Only s carries from
 * one iteration to the next, so once s repeats the value it had two iterations before (a fixed
 * point, or the +inf/-inf swing the seed's constants end in) the rest of the loop is known and is
 * skipped. */
static inline float tls_spin_replay(float init, long long n, float v1, float v2)
{
    float s = init, s2 = 10.0f - s, s3 = 9.0f - s, s4 = 9.0f - s2;
    float back2 = NAN, back1 = NAN; /* s two and one iterations ago */
    for (long long i = 0; i < n; i++) {
        s = fmaf(-s, v2, v1);
        if (i >= 2 && memcmp(&s, &back2, sizeof s) == 0) {
            if ((n - 1 - i) % 2 == 1)
                s = back1; /* an odd number of steps left in a cycle of two */
            break;
        }
        back2 = back1;
        back1 = s;
    }
    if (n > 0) {
        s2 = fmaf(-s, v2, v1);
        s3 = fmaf(-s2, v2, v1);
        s4 = fmaf(-s3, v2, v1);
    }
    return (s + s2) + (s3 + s4);
}

#endif
