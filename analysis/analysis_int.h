/* analysis_int.h: private to the analysis/ sources. The analysis handle's layout and the passes
 * that fill it: sweep.c (concurrency sweep, windows, solo marks), verdict.c (signatures,
 * references, stretch, evidence, verdicts), query.c (profile queries on demand), analysis.c (the
 * rest). */
#ifndef ANALYSIS_INT_H
#define ANALYSIS_INT_H

#include "analysis.h"

/* Per-kernel marks left in the stretch array by the sweep, before stretches replace them. */
#define ANALYSIS_MARK_SOLO 1.0f
#define ANALYSIS_MARK_SHARED 0.0f

struct analysis {
    const store_run *run;
    analysis_options opt;
    float *stretch;        /* run->nkernels: sweep marks, then stretches */
    uint32_t *ctx_slot;    /* run->ncontexts: device slot of each context (UINT32_MAX: none) */
    analysis_device *devs; /* device slots, ndevs */
    uint32_t ndevs;
    int64_t *dev_maxdur;      /* ndevs: longest kernel of each slot (profile queries) */
    analysis_window *windows; /* sorted by slot, then t0 */
    uint64_t nwindows, capwindows;
    analysis_signature *sigs;
    uint32_t nsigs;
    uint32_t *launch_sig;            /* run->nlaunches: signature of each launch */
    analysis_process *procs;         /* run->nprocesses */
    int64_t *proc_first, *proc_last; /* run->nprocesses: first kernel start, last kernel end */
    analysis_summary sum;
    char **warnings;
    uint32_t nwarnings;
};

/* The slot of kernel k's device. */
static inline uint32_t analysis_kernel_slot(const analysis *a, const store_kernel *k)
{
    return a->ctx_slot[a->run->streams[k->stream].context];
}

/* A kernel's duration; an end before its start reads as zero length. */
static inline int64_t analysis_kernel_dur(const store_kernel *k)
{
    return k->end > k->start ? k->end - k->start : 0;
}

/* Appends a window; 0 or ANALYSIS_ENOMEM. */
int analysis_push_window(analysis *a, const analysis_window *w);

/* The concurrency sweep (sweep.c): fills devs[] times and counts, windows (bounds, contexts,
 * max counts, MPS flag, IDLE/SOLO verdicts of quiet windows), procs[] busy and overlap times,
 * and marks each kernel in a->stretch as ANALYSIS_MARK_SOLO or _SHARED. */
int analysis_sweep(analysis *a);

/* Signatures and solo references (verdict.c), from the run's marks or from `baseline`. */
int analysis_references(analysis *a);

/* Stretch of every kernel, window evidence and verdicts, process and device figures (verdict.c). */
int analysis_judge(analysis *a);

#endif
