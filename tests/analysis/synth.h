/* synth.h: synthetic runs for the analysis and CLI tests, built with the store's builder calls:
 * processes on one GPU, one context and stream each (more with synth_context()), kernels of a
 * named signature at given times. */
#ifndef SYNTH_H
#define SYNTH_H

#include "store.h"

/* What a synthetic context's file says of MPS (its compute_api_kind 1, 2 or 0). */
enum { SYNTH_PLAIN = 0, SYNTH_MPS = 1, SYNTH_UNKNOWN = 2 };

/* A process of pid `pid` (host and run id may be NULL) with a context (context id 1) whose MPS
 * state is `mps` (SYNTH_*) on the device of uuid `uuid` (NULL: "0123456789abcdef0123456789abcdef").
 * Returns its stream. */
store_idx synth_process(store_run *run, int64_t pid, const char *host, const char *run_id, int mps,
                        const char *uuid);

/* Another context `context_id` in the process of `stream`, on the same device, with MPS state
 * `mps` (SYNTH_*); green contexts name their parent's context id. Returns its stream. */
store_idx synth_context(store_run *run, store_idx stream, uint32_t context_id, int mps, int green,
                        uint32_t parent_id);

/* A kernel `name` (grid 1, block 1) on `stream` over [start, end). Returns 0 or a STORE_E code. */
int synth_kernel(store_run *run, store_idx stream, const char *name, int64_t start, int64_t end);

/* A kernel like synth_kernel() with correlation id `corr` (> 0), launched by a runtime API call
 * (cudaLaunchKernel, same correlation id, in the stream's process) that returned at `ret`: its
 * launch time, when the kernel waited to start. Returns 0 or a STORE_E code. */
int synth_launched(store_run *run, store_idx stream, const char *name, uint32_t corr, int64_t ret,
                   int64_t start, int64_t end);
/* n kernels of `dur` ns back to back from t with `gap` ns between them. Returns the end time. */
int64_t synth_train(store_run *run, store_idx stream, const char *name, int64_t t, int n,
                    int64_t dur, int64_t gap);

#endif
