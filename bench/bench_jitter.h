/* bench_jitter.h: the deterministic +-2% duration jitter of the synthetic-run generators
 * (bench_report_gen, bench_job_gen), one xorshift sequence per program. */
#ifndef BENCH_JITTER_H
#define BENCH_JITTER_H

#include <stdint.h>

/* d with +-2% jitter, the same sequence in every run of the program. */
static inline int64_t bench_jitter(int64_t d)
{
    static uint64_t rng = 0x9e3779b97f4a7c15ULL;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return d + (int64_t)((double)d * 0.04 * ((double)(rng % 10000) / 10000.0 - 0.5));
}

#endif
