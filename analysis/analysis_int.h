/* analysis_int.h: private to the analysis/ sources. The analysis handle's layout and the passes
 * that fill it: sweep.c (concurrency sweep, windows, overlap clocks), verdict.c (signatures,
 * references, stretch where it happened, evidence, verdicts), query.c (profile queries on demand),
 * analysis.c (slots, share groups, warnings, names, accessors). */
#ifndef ANALYSIS_INT_H
#define ANALYSIS_INT_H

#include "analysis.h"

/* What MPS costs on one GPU model (calibration.c): the pessimistic bound of the predicted gain
 * assumes these. */
typedef struct analysis_calibration {
    const char *gpu;    /* the device name it was measured on ("NVIDIA H200") */
    double launch_ns;   /* extra time per kernel launched through the MPS server */
    double slowdown[4]; /* the worst measured slowdown of kernels that fit the GPU together, side
                           by side under MPS, for 2, 4, 8 and 16 clients */
    double packing[4];  /* the lowest effective parallelism measured in MPS runs' overlapped
                           windows (real workloads), for 2, 4, 8 and 16 clients, at most 1: how
                           slowly kernels that do not fit the GPU together may run side by side */
    double tail_ns;     /* the drain of a kernel's last wave that another client's kernel fills
                           under MPS: fixed ns */
    double tail_share;  /* and its share of the kernel's solo duration (tail_ns + tail_share x d) */
    double tail_max;    /* never more than this share of d (the shortest kernel measured's) */
    double wait_latency_ns; /* from a launch call's return to its kernel's start on a free GPU
                               (at most, but for outliers): a longer delay is a wait (wait.c) */
    double slice_ns;        /* the longest time slice measured without MPS: a context with a
                               ready kernel waits at most this long behind each other context */
    double first_rounds;    /* a context's first kernel may wait this many rounds of the other
                               contexts' slices (its module loaded in one, itself run in the next) */
    double switch_lo_ns, switch_hi_ns; /* an idle gap between two contexts' kernels the size of
                                          a context switch (the signature's mark) */
    double quick_ns;    /* a turn shorter than this is quicker than any context switch */
    double handover_ns; /* a kernel start this close after another share group's kernel end, or
                           an end this close after another group's start, is quicker than any
                           context switch (analysis_device quick_handovers) */
} analysis_calibration;

/* A running count of turns (analysis_window turns, quick_turns, switch_turns), kept by the
 * sweep as clocks are: a window's are the difference at its ends. uint32_t wraps: differences
 * stay right for fewer than 2^32 turns in one window. */
typedef struct analysis_tcount {
    uint32_t turns, quick, marked;
} analysis_tcount;

/* The calibration for a GPU named `gpu` (may be NULL); *pExact (may be NULL) says whether it was
 * measured on that model (else the H200's stands in). */
const analysis_calibration *analysis_calibration_for(const char *gpu, int *pExact);

/* The calibration's slowdown for `clients` clients side by side (a mean over time, so maybe
 * fractional): the figure of the first measured count (2, 4, 8, 16) at or above `clients` rounded
 * to a whole number (x.5 down), 16's beyond 16. Pessimistic between measured counts, as the bound
 * it feeds: 3 clients take the 4-client figure, 5 the 8-client one. */
double analysis_calibration_slowdown(const analysis_calibration *c, double clients);

/* The calibration's packing for `clients` clients side by side, picked as
 * analysis_calibration_slowdown() picks its figure (the lower between measured counts). */
double analysis_calibration_packing(const analysis_calibration *c, double clients);

/* What the kernels of one window did while a single context ran and other contexts' ready
 * kernels waited for it (wait.c): the time; the solo work done in it as if the waiting contexts'
 * kernels had run beside (each instant's work over the kernels in flight plus the contexts
 * waiting); that work weighted by SM share; the tails (analysis_calibration) in it. */
typedef struct analysis_waitsum {
    double ns, packed, sm, tail;
    double gap; /* idle gaps between one context's kernels, in its slice, while other
                   contexts' ready kernels waited (the window where each gap began) */
} analysis_waitsum;

/* The walk that finds waiting contexts (wait.c), driven by the judge in kernel start order. */
typedef struct analysis_waitwalk analysis_waitwalk;

/* Prepares the walk over a's kernels, which adds to each window's and device's waiting_ns and
 * sums each window's analysis_waitsum. *pOut is NULL (and ANALYSIS_OK returned) when no kernel
 * has a launch API record: there is nothing to walk. ANALYSIS_ENOMEM when out of memory. */
int analysis_waitwalk_init(analysis *a, analysis_waitwalk **pOut);

/* Kernel k (in flight: a positive duration) starts, doing `rate` ns of solo work per ns while
 * no other context is in flight, holding `share` of the SMs, with `tail` ns of tail per ns
 * (analysis_calibration). Kernels come in start order. 0, or ANALYSIS_ENOMEM. */
int analysis_waitwalk_kernel(analysis_waitwalk *w, const store_kernel *k, double rate, double share,
                             double tail);

/* Ends the walk after the last kernel and hands its sums to a->waits. 0, or ANALYSIS_ENOMEM. */
int analysis_waitwalk_finish(analysis_waitwalk *w);

/* Frees the walk (NULL is fine). */
void analysis_waitwalk_free(analysis_waitwalk *w);

/* ANALYSIS_MINHEAP(NAME, OWNER, ELEM, KEY, CAP0) defines a binary min-heap of ELEM ordered by
 * their int64_t member KEY, kept in OWNER's members `heap` (ELEM *), `n` and `cap` (uint64_t),
 * for the passes that visit events in time order (sweep.c, query.c, wait.c):
 *   static int NAME_push(OWNER *o, ELEM e): adds e; ANALYSIS_ENOMEM when the heap cannot grow
 *     (it starts at CAP0 entries and doubles);
 *   static ELEM NAME_pop(OWNER *o): removes and returns the least (o->n > 0). */
#define ANALYSIS_MINHEAP(NAME, OWNER, ELEM, KEY, CAP0)                                             \
    static int NAME##_push(OWNER *o, ELEM e)                                                       \
    {                                                                                              \
        if (o->n == o->cap) {                                                                      \
            uint64_t cap = o->cap ? 2 * o->cap : (CAP0);                                           \
            ELEM *h = realloc(o->heap, cap * sizeof *h);                                           \
            if (!h)                                                                                \
                return ANALYSIS_ENOMEM;                                                            \
            o->heap = h;                                                                           \
            o->cap = cap;                                                                          \
        }                                                                                          \
        uint64_t i = o->n++;                                                                       \
        while (i > 0 && o->heap[(i - 1) / 2].KEY > e.KEY) {                                        \
            o->heap[i] = o->heap[(i - 1) / 2];                                                     \
            i = (i - 1) / 2;                                                                       \
        }                                                                                          \
        o->heap[i] = e;                                                                            \
        return ANALYSIS_OK;                                                                        \
    }                                                                                              \
    static ELEM NAME##_pop(OWNER *o)                                                               \
    {                                                                                              \
        ELEM top = o->heap[0], last = o->heap[--o->n];                                             \
        uint64_t i = 0;                                                                            \
        for (;;) {                                                                                 \
            uint64_t c = 2 * i + 1;                                                                \
            if (c >= o->n)                                                                         \
                break;                                                                             \
            /* the smaller child without a branch: which one it is is unpredictable */             \
            c += (uint64_t)(c + 1 < o->n && o->heap[c + 1].KEY < o->heap[c].KEY);                  \
            if (last.KEY <= o->heap[c].KEY)                                                        \
                break;                                                                             \
            o->heap[i] = o->heap[c];                                                               \
            i = c;                                                                                 \
        }                                                                                          \
        if (o->n)                                                                                  \
            o->heap[i] = last;                                                                     \
        return top;                                                                                \
    }

/* Left in a->stretch by the sweep for a zero-length kernel (never in flight, never a reference);
 * other kernels hold their overlapped time (ns, >= 0) until stretches replace it. */
#define ANALYSIS_MARK_ZERO (-1.0f)

/* What the sweep keeps of each window for the judge, parallel to a->windows. */
typedef struct analysis_winx {
    int64_t ovl0, ovl1; /* the device's overlap clock at t0 and at t1 */
    uint8_t turns;      /* a quiet window that spans a cluster of switches (sweep.c,
                           emit_quiet()): the contexts took turns in it */
    uint32_t nsig;      /* the switches of unknown MPS state inside (analysis_switch sig) */
    int64_t siggap;     /* their idle gaps, summed */
} analysis_winx;

/* The ends of a time-sliced stretch folded together at best (verdict.c, analysis/README.md,
 * Gains): contexts whose first kernel started, or whose last ended, up to one slice per other
 * context away from the stretch's edge taken as in flight all through window w (the packed term
 * scaled by pk); the single-kernel solo windows h before and t after it (UINT64_MAX: none) run
 * beside w's kernels, as far as their SM share lets them; never shorter than the longest solo
 * duration of a kernel so moved. */
typedef struct analysis_fold {
    uint64_t w, h, t;
    double pk;    /* the factor on w's packed term: kernel time over kernel time and stagger */
    double floor; /* w's side-by-side time by the SMs alone (unchanged by the fold) */
    double cap;   /* h's and t's time times their kernels' SM share */
    double chain; /* the longest solo duration of a kernel the fold moves */
} analysis_fold;

/* A context switch the sweep saw (analysis_device.switches): when the next context's kernel
 * started, and the idle gap before it. Kept from the sweep to the judge, which counts those
 * inside the measured interval. */
typedef struct analysis_switch {
    int64_t t, gap;
    int64_t busy;       /* the device's busy clock then (and all through the gap) */
    uint32_t epoch;     /* idle stretches longer than ANALYSIS_SWITCH_GAP_NS on the device before
                           it: two switches with different epochs have such a stretch between
                           them, which no took-turns window may bridge */
    analysis_tcount tc; /* the device's turn counts with its own turn (below) */
    uint8_t own;        /* its own turn: 1 a turn, 2 quick, 4 marked */
    uint8_t sig;        /* 1: between share groups not both known to be plain (the files do not
                           say), a gap the size of a switch: a switch only where the signature
                           judges its window time-sliced (counted: 1, by the judge) */
    uint8_t counted;    /* the judge counts it as a switch */
    uint64_t win;       /* the window that holds it (index into a->windows, set by the sweep
                           relative to its slot, made absolute when the windows are gathered) */
} analysis_switch;

/* The switches of one device slot, in time order. */
typedef struct analysis_switches {
    analysis_switch *at;
    uint64_t n, cap;
    uint64_t next; /* the first not yet in an emitted window (sweep) */
} analysis_switches;

/* A call site: kernels of one signature launched right after kernels of signature `pred` on
 * their stream (UINT32_MAX: the first kernel of its stream). Its solo reference, where it has
 * one, stands for its kernels' (analysis/README.md, Terms): a signature's instances that differ
 * in work the launch does not show (a matrix product's inner dimension) come from different
 * places in the program. */
typedef struct analysis_site {
    uint32_t sig, pred;
    uint64_t nsolo;      /* solo instances (in the run, or the baseline's where it has the site) */
    double reference_ns; /* their median duration; 0 when none (the signature's stands in) */
} analysis_site;

struct analysis {
    const store_run *run;
    analysis_options opt;
    float *stretch;         /* run->nkernels: overlapped time from the sweep, then stretches
                               (in `cache`'s mapping when thawed from one: not freed) */
    store_cache *cache;     /* the cache analysis_thaw() read stretch from in place, or NULL */
    int64_t *ovl_start;     /* run->nkernels: the device's overlap clock at each kernel's start
                               (sweep to judge only) */
    uint32_t *ctx_slot;     /* run->ncontexts: device slot of each context (UINT32_MAX: none) */
    uint32_t *ctx_group;    /* run->ncontexts: share group of each context */
    uint8_t *group_plain;   /* ngroups: 1 when the group is known not to be MPS (every context
                               in it plain CUDA): it takes turns with every other group; 0 for the
                               MPS clients and for groups with a context of unknown MPS state */
    uint8_t *group_unknown; /* ngroups: 1 when a context in the group is of unknown MPS state
                               (its file does not say): the timing signature is read between
                               such groups */
    uint32_t ngroups;
    uint32_t *slot_sms; /* ndevs: the whole GPU's SMs (analysis_device_sms) */
    uint32_t *ctx_sms;  /* run->ncontexts: its SM partition, 0 the whole GPU (..._context_sms) */
    uint32_t part_unmatched; /* signatures run in a partition that the --baseline has no
                                reference for, not even sized for the whole GPU (verdict.c) */
    analysis_device *devs;   /* device slots, ndevs */
    uint32_t ndevs;
    int64_t *dev_maxdur;      /* ndevs: longest kernel of each slot (profile queries) */
    analysis_window *windows; /* grouped by slot, each slot's in time order */
    analysis_winx *winx;      /* parallel to windows (sweep to judge only) */
    analysis_switches *sw;    /* ndevs: each slot's context switches (sweep to judge only) */
    int64_t *switch_in;       /* ndevs: their idle gaps inside the measured interval (judge) */
    analysis_waitsum *waits;  /* nwindows, or NULL when no kernel has a launch record: what
                                 each window's kernels did while others waited (wait.c) */
    uint64_t nwindows;
    analysis_fold *folds; /* the folded stretch ends, at most two per slot, by window (judge) */
    uint64_t nfolds;
    analysis_signature *sigs;
    uint32_t nsigs;
    uint32_t *launch_sig; /* run->nlaunches: signature of each launch */
    analysis_site *sites; /* call sites (verdict.c), nsites, in order of first use */
    uint32_t nsites;
    uint32_t *site_slot; /* open addressing over sites: index + 1, 0 empty; site_mask + 1 slots */
    uint64_t site_mask;
    analysis_process *procs;         /* run->nprocesses */
    int64_t *proc_first, *proc_last; /* run->nprocesses: first kernel start, last kernel end */
    analysis_summary sum;
    uint64_t nout;               /* kernels beyond +-STORE_TIME_MAX (analysis_kernel_in_range()) */
    int measure_missing;         /* the NVTX or capture range to measure over was not in the
                                    run; --measure together: no two processes ran kernels at
                                    once */
    uint32_t measure_in;         /* --measure together: the processes that ran kernels together
                                    over the whole interval */
    uint32_t measure_out;        /* ... and those with kernels left out (never beside them) */
    store_idx measure_out_first; /* the first of those left out */
    char **warnings;
    uint32_t nwarnings;
};

/* Context c's compute API kind (1 plain CUDA, 2 MPS client, 0 unknown), with the options'
 * assume_mps standing in for what its file does not say. */
static inline uint32_t analysis_ctx_kind(const analysis *a, store_idx c)
{
    uint32_t k = a->run->contexts[c].compute_api_kind;
    return k == 1 || k == 2 ? k : a->opt.assume_mps == 1 ? 1 : a->opt.assume_mps == 2 ? 2 : 0;
}

/* The slot of kernel k's device. */
static inline uint32_t analysis_kernel_slot(const analysis *a, const store_kernel *k)
{
    return a->ctx_slot[a->run->streams[k->stream].context];
}

/* Whether kernel k lies within the times tlview computes with (+-STORE_TIME_MAX: the difference
 * of any two such times fits an int64). A kernel beyond them (a damaged or hostile file, or an
 * importer that does not check) is counted but never in flight. */
static inline int analysis_kernel_in_range(const store_kernel *k)
{
    return k->start >= -STORE_TIME_MAX && k->end <= STORE_TIME_MAX;
}

/* A time in ns computed in double (a prediction: a window's time at best or at worst) as an
 * int64: rounded toward 0, held within +-STORE_TIME_MAX (a window of a run 73 years wide
 * slowed 4x at worst is beyond any int64 ns), NaN as 0. */
static inline int64_t analysis_ns(double v)
{
    if (!(v == v))
        return 0;
    return v >= (double)STORE_TIME_MAX    ? STORE_TIME_MAX
           : v <= -(double)STORE_TIME_MAX ? -STORE_TIME_MAX
                                          : (int64_t)v;
}

/* A kernel's duration; an end before its start, and a kernel out of range, read as zero length. */
static inline int64_t analysis_kernel_dur(const store_kernel *k)
{
    return analysis_kernel_in_range(k) && k->end > k->start ? k->end - k->start : 0;
}

/* The concurrency sweep (sweep.c): fills devs[] times and counts, the windows in slot then time
 * order (bounds, contexts, groups, max counts, MPS flag, overlap time, physics; IDLE/SOLO
 * verdicts of quiet windows) with a->winx, procs[] busy and overlap times, and for each kernel
 * its overlapped time in a->stretch (ANALYSIS_MARK_ZERO for zero-length ones) and the overlap
 * clock at its start in a->ovl_start. */
int analysis_sweep(analysis *a);

/* Signatures and solo references (verdict.c), from the run's solo kernels (overlapped time 0)
 * or from `baseline`. */
int analysis_references(analysis *a);

/* Sets a->sum.measure, measure_t0 and measure_t1 from the options (analysis.c); needs the
 * processes' first and last kernels (a->proc_first, proc_last). */
void analysis_measure_interval(analysis *a);

/* Sets a->sum.nproc_spans, proc_span_min_ns and proc_span_max_ns (analysis.c): each process's
 * own part of the measured interval; and a->sum.together_ns. Needs the interval and the
 * processes' first and last kernels. Out of memory leaves them 0 (advisory figures). */
void analysis_process_spans(analysis *a);

/* Stretch of every kernel, window evidence and verdicts, process and device figures (verdict.c). */
int analysis_judge(analysis *a);

#endif
