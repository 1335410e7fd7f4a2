/* bench_serve_gen: synthetic runs for the serve benchmark and the browser tests: N processes
 * sharing one H200, each on its own stream(s), a solo phase (each process alone, which gives every
 * kernel signature a solo reference) then iterations where all of them run together, separated
 * by a barrier (idle gap); without MPS the overlapped kernels are stretched by the number of
 * processes (time-sliced), with MPS by about 1.1 (concurrent). Optionally what a traced program
 * has besides kernels, in realistic ratios: a cudaLaunchKernel call per kernel on one thread per
 * process (with the kernel's correlation id), a copy or memset (and its API call) every so many
 * kernels, and nested NVTX ranges (iteration > step > layer). Deterministic for a given seed. */
#ifndef BENCH_SERVE_GEN_H
#define BENCH_SERVE_GEN_H

#include <stdint.h>

#include "store.h"

typedef struct bench_gen_opts {
    uint64_t nkernels; /* total kernels (approximately: rounded to whole iterations) */
    unsigned nprocs;   /* processes (pids 4100, 4101, ...) */
    unsigned streams;  /* streams per process (1 or more) */
    unsigned per_iter; /* kernels per process between two barriers */
    int mps;           /* 1: MPS clients (concurrent), 0: time-sliced */
    uint64_t seed;
    int api; /* 1: a cudaLaunchKernel call before each kernel (thread 1 of its process) */
    unsigned copy_every; /* a copy or memset every this many kernels of a process (0: none), with
                            its cudaMemcpyAsync / cudaMemsetAsync call when api is set */
    int nvtx;            /* 1: NVTX ranges on that thread: "warmup" over the solo phase, then per
                            iteration "iteration N" > "step K" (20 kernels) > "layer L" (5) */
} bench_gen_opts;

/* A new finished run (store_run_finish done), or NULL when out of memory. */
store_run *bench_gen_run(const bench_gen_opts *o);

#endif
