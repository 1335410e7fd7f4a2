/* fuzz/fuzz_analysis.c: libFuzzer target for the analysis itself. Each input is turned into a run
 * model (processes on shared and private GPUs, contexts of every MPS state, green families,
 * kernels at extreme, negative and zero-length times, launch records, NVTX and capture ranges),
 * analysed with options the input also picks (a range of the run, a baseline, --assume-mps,
 * --measure) and checked (tests/analysis/prop.c: the invariants against a brute-force recount,
 * the verdicts each physics allows). Besides crashes, leaks and ASan/UBSan reports, a broken
 * invariant is a bug: it aborts with the invariant named. The importer fuzzers cannot reach most
 * of these runs (an MPS context with no kernel in range crashed the analysis in 2026-12). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "prop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    if (prop_check(data, size, why, sizeof why)) {
        fprintf(stderr, "fuzz_analysis: %s\n", why);
        abort();
    }
    return 0;
}
