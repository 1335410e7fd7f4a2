/* bench_serve_gen: synthetic runs for the serve benchmark and the browser tests: N processes
 * sharing one H200, each on its own stream(s), a solo phase (each process alone, which gives every
 * kernel signature a solo reference) then iterations where all of them run together, separated
 * by a barrier (idle gap); without MPS the overlapped kernels are stretched by the number of
 * processes (time-sliced), with MPS by about 1.1 (concurrent). Deterministic for a given seed. */
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
} bench_gen_opts;

/* A new finished run (store_run_finish done), or NULL when out of memory. */
store_run *bench_gen_run(const bench_gen_opts *o);

#endif
