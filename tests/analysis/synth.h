/* synth.h: synthetic runs for the analysis and CLI tests, built with the store's builder calls:
 * processes on one GPU, one context and stream each, kernels of a named signature at given
 * times. */
#ifndef SYNTH_H
#define SYNTH_H

#include "store.h"

/* A process of pid `pid` (host and run id may be NULL) with a context (MPS client when mps) on
 * the device of uuid `uuid` (NULL: "0123456789abcdef0123456789abcdef"). Returns its stream. */
store_idx synth_process(store_run *run, int64_t pid, const char *host, const char *run_id, int mps,
                        const char *uuid);

/* A kernel `name` (grid 1, block 1) on `stream` over [start, end). Returns 0 or a STORE_E code. */
int synth_kernel(store_run *run, store_idx stream, const char *name, int64_t start, int64_t end);

/* n kernels of `dur` ns back to back from t with `gap` ns between them. Returns the end time. */
int64_t synth_train(store_run *run, store_idx stream, const char *name, int64_t t, int n,
                    int64_t dur, int64_t gap);

#endif
