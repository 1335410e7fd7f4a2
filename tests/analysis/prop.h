/* prop.h: the analysis's property test. prop_check() turns any bytes into a run model (processes,
 * shared and private GPUs, contexts of every MPS state, green families, streams, kernels with
 * extreme, negative and zero-length times, launch records, NVTX and capture ranges), analyses it
 * with options the bytes also choose (a range of the run, a baseline, --assume-mps, --measure)
 * and checks what must hold whatever the input: no crash, no undefined behaviour (the callers
 * build with ASan+UBSan), and the invariants of the results against a brute-force recount.
 * tests/analysis/test_prop.c drives it from a PRNG in ctest; fuzz/fuzz_analysis.c from
 * libFuzzer. */
#ifndef PROP_H
#define PROP_H

#include <stddef.h>
#include <stdint.h>

/* Builds, analyses and checks the run that `data` (n bytes, any) describes. Returns 0 when every
 * invariant held (or the run was refused as the store's contract says it must be), 1 with the
 * broken invariant in why (len bytes) otherwise. */
int prop_check(const uint8_t *data, size_t n, char *why, size_t len);

#endif
