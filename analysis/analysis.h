/* analysis: what the kernels of several processes really did on each GPU of one run.
 *
 * analysis_run() walks a finished store_run (store/store.h) once per device and computes the
 * concurrency profile, the solo reference duration of every launch signature, the stretch of every
 * kernel, the windows where kernels of several contexts overlapped with a verdict (concurrent /
 * time-sliced / contended / queued / unknown), the rule that decided it and its evidence,
 * per-process and per-device totals, and the most MPS could gain. The unit of contention is the
 * CUDA context: the GPU time-slices contexts, not processes. Pure C: no I/O,
 * no printing; cli/ and web/ present these numbers. The rules and thresholds are explained in
 * analysis/README.md.
 *
 * Lifetime: the analysis keeps pointers into the run (and reads it again for profile queries), so
 * the run must outlive the analysis and must not be modified while it exists. Everything returned
 * by the accessors is owned by the analysis and valid until analysis_free().
 *
 * Times are ns on the run's common axis. Intervals are half-open [t0, t1): a kernel that ends at
 * the instant another starts does not overlap it. Device indices are positions in run->devices;
 * kernels whose context has no known device are gathered on one extra device whose `device`
 * field is STORE_NONE. Process indices are positions in run->processes. */
#ifndef ANALYSIS_H
#define ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum {
    ANALYSIS_OK = 0,
    ANALYSIS_EINVAL = -1, /* a NULL run, a run not finished (store_run_finish), bad options */
    ANALYSIS_ENOMEM = -2,
};

/* The judgement of a stretch of a device's timeline. Windows of overlap (>= 2 contexts with a
 * kernel in flight) get CONCURRENT, TIME_SLICED, CONTENDED, QUEUED or UNKNOWN; IDLE and SOLO name
 * the stretches between them (see analysis_window). The order is stable (used as array index). */
typedef enum analysis_verdict {
    ANALYSIS_IDLE = 0,        /* no kernel in flight */
    ANALYSIS_SOLO = 1,        /* kernels of one context only (its streams may overlap each other) */
    ANALYSIS_CONCURRENT = 2,  /* contexts side by side, their kernels not stretched */
    ANALYSIS_TIME_SLICED = 3, /* contexts that cannot share the GPU took turns on it */
    ANALYSIS_CONTENDED = 4,   /* side by side, but slowing each other down */
    ANALYSIS_QUEUED = 5,      /* side by side possible, yet the kernels ran one after another:
                                 they overlapped only where one handed the GPU to the next */
    ANALYSIS_UNKNOWN = 6,     /* overlapped; the files do not say whether MPS was on, and the
                                 timing does not tell: too few solo references (rule
                                 no-reference), or one kernel's work at a time with no mark of
                                 either kind (rule one-at-a-time: time-sliced, or MPS clients each
                                 filling the GPU) */
} analysis_verdict;
#define ANALYSIS_NVERDICTS 7

/* What the contexts in flight allow, before any timing evidence. A share group is a set of
 * contexts that may run kernels side by side: the MPS clients of one GPU (they run inside the MPS
 * server's context), or a process's green contexts with their parent; every other context is a
 * group of its own. Different groups take turns on the GPU unless both could be MPS clients. */
typedef enum analysis_physics {
    ANALYSIS_PHYS_NONE = 0,    /* a quiet window: no overlap */
    ANALYSIS_PHYS_SLICED = 1,  /* a group known not to be MPS (every context in it plain CUDA)
                                  was in flight with another group: the GPU time-sliced them,
                                  whatever the timing */
    ANALYSIS_PHYS_SHARED = 2,  /* only contexts of one share group: side by side is possible */
    ANALYSIS_PHYS_UNKNOWN = 3, /* groups with a context whose MPS state its file does not say
                                  (imports) */
} analysis_physics;
#define ANALYSIS_NPHYSICS 4

/* The rule that decided a window's verdict (analysis/README.md has the table). */
typedef enum analysis_rule {
    ANALYSIS_RULE_NONE = 0,             /* idle and solo windows */
    ANALYSIS_RULE_NO_MPS = 1,           /* SLICED physics: time-sliced by construction */
    ANALYSIS_RULE_NOT_STRETCHED = 2,    /* stretch <= concurrent_max_stretch: concurrent */
    ANALYSIS_RULE_HANDOVER = 3,         /* SHARED, stretched, overlap share <= queued_max_overlap:
                                           the kernels overlapped only at their ends */
    ANALYSIS_RULE_SHARED_SLOW = 4,      /* SHARED and stretched: contended */
    ANALYSIS_RULE_ONE_AT_A_TIME = 5,    /* UNKNOWN physics, parallelism <= sliced_max_parallelism
                                           and no signature: undecided (verdict UNKNOWN) */
    ANALYSIS_RULE_PARALLEL_SLOW = 6,    /* UNKNOWN physics, stretched with parallelism: contended */
    ANALYSIS_RULE_NO_REFERENCE = 7,     /* UNKNOWN physics, too few solo references, no signature */
    ANALYSIS_RULE_TOOK_TURNS = 8,       /* no overlap, but >= 2 context switches between share
                                           groups known not to be MPS: time-sliced */
    ANALYSIS_RULE_SWITCH_TURNS = 9,     /* UNKNOWN physics, the signature of time-slicing
                                           (analysis_window_signature()): no turn quicker than a
                                           switch, most turns marked by one (its idle gap, or a
                                           whole time slice): time-sliced */
    ANALYSIS_RULE_QUICK_TURNS = 10,     /* UNKNOWN physics, the GPU changed between contexts
                                           quicker than a context switch allows: not time-sliced;
                                           the stretch and overlap share then say concurrent,
                                           queued or contended, as for one share group */
    ANALYSIS_RULE_QUICK_HANDOVERS = 11, /* UNKNOWN physics, no signature in the window's own
                                           turns, but the device's quick handovers
                                           (analysis_device) say not time-sliced: judged as
                                           quick-turns */
} analysis_rule;
#define ANALYSIS_NRULES 12

/* What the timing alone says of a window whose contexts' MPS state the files do not say
 * (analysis_window_signature(); analysis/README.md, "When the file does not say"). */
typedef enum analysis_signature_kind {
    ANALYSIS_SIG_NONE = 0,     /* too few turns, or marks of both kinds: undecided */
    ANALYSIS_SIG_SWITCHED = 1, /* time-slicing: every turn lasted a context switch or more, most
                                  of them marked by one */
    ANALYSIS_SIG_QUICK = 2,    /* side by side possible: turns quicker than any switch */
} analysis_signature_kind;

/* Where a stretch figure comes from. */
typedef enum analysis_basis {
    ANALYSIS_BASIS_NONE = 0,      /* no figure (NaN) */
    ANALYSIS_BASIS_REFERENCE = 1, /* measured: solo references cover enough of the kernel time */
    ANALYSIS_BASIS_TURNS = 2,     /* estimated for time-slicing without references: the number of
                                     share groups taking turns (each progresses at 1/N) */
    ANALYSIS_BASIS_SHORTEST = 3,  /* estimated side by side without references: each kernel's
                                     shortest instance taken as its solo time (so at least this
                                     stretched) */
} analysis_basis;

/* The MPS state of a set of contexts, from their files. */
typedef enum analysis_mps {
    ANALYSIS_MPS_OFF = 0,     /* every context known to be plain CUDA */
    ANALYSIS_MPS_ON = 1,      /* every context an MPS client */
    ANALYSIS_MPS_MIXED = 2,   /* MPS clients and plain contexts */
    ANALYSIS_MPS_UNKNOWN = 3, /* a context whose file does not say (imported files) */
} analysis_mps;

/* Over what time the gains are measured and predicted (analysis_summary.measure_t0, t1). */
typedef enum analysis_measure {
    ANALYSIS_MEASURE_ALL = 0,      /* the whole recording: first kernel start to last kernel end */
    ANALYSIS_MEASURE_TOGETHER = 1, /* while every process with kernels was running them: from
                                      the last process's first kernel to the first process's last
                                      one (staggered start-up and tails left out); where they
                                      never all ran at once, the longest time the most of them
                                      (at least two) did, the others left out (a warning) */
    ANALYSIS_MEASURE_RANGE = 2,    /* the NVTX ranges named measure_range, first start to last
                                      end over every process: the work the application timed */
    ANALYSIS_MEASURE_CAPTURE = 3,  /* the capture ranges named measure_range (run->captures:
                                      `tlview capture start --name`), first start to last end
                                      over every process: the window a user captured */
    ANALYSIS_MEASURE_SPAN = 4,     /* [measure_t0, measure_t1) as given (a report on a time
                                      range), cut to the first kernel start and last kernel end */
} analysis_measure;

/* Thresholds and inputs. Fill with analysis_options_default() then change what you need. */
typedef struct analysis_options {
    const store_run *baseline;      /* a run of the same kernels alone (e.g. one process): when
                                       set, solo references come from it; NULL: from the run's own
                                       solo instances. Must be finished; read only during
                                       analysis_run(). */
    double concurrent_max_stretch;  /* window stretch <= this: not stretched (1.25) */
    double sliced_max_parallelism;  /* effective parallelism <= this: the GPU did about one
                                       kernel's solo work at a time (1.3) */
    double queued_max_overlap;      /* overlap share <= this: the kernels overlapped only at their
                                       ends (0.25) */
    double min_reference_coverage;  /* share of a set's kernel time that must have a solo
                                       reference for a measured stretch (0.5) */
    double quick_min_share;         /* the signature of side by side (MPS): turns quicker than a
                                       context switch are at least this share of the turns
                                       (0.1), and at least ANALYSIS_SIGNATURE_MIN_TURNS */
    double switch_min_share;        /* the signature of time-slicing: turns marked by a switch
                                       (its idle gap, or a whole slice) are at least this share of
                                       the turns (0.5), and at least ANALYSIS_SIGNATURE_MIN_TURNS,
                                       and quick turns at most switch_max_quick of them */
    double switch_max_quick;        /* (0.02): clock error between files, not a quick turn */
    int64_t join_gap_ns;            /* overlap windows closer than this are one window (1 ms) */
    int assume_mps;                 /* for contexts whose files do not say whether they were MPS
                                       clients (imports): 0 leave them unknown (default), 1 take
                                       them as plain CUDA, 2 as MPS clients */
    analysis_measure measure;       /* over what the gains are measured (ALL) */
    const char *measure_range;      /* the NVTX or capture range's name for
                                       ANALYSIS_MEASURE_RANGE and _CAPTURE; borrowed during
                                       analysis_run() only */
    int64_t measure_t0, measure_t1; /* the interval of ANALYSIS_MEASURE_SPAN (common axis, ns;
                                       t1 > t0) */
} analysis_options;

/* Sets every field of *o to its documented default. */
void analysis_options_default(analysis_options *o);

typedef struct analysis analysis;

/* Analyses `run` (finished, kernels sorted by start). `opt` may be NULL for the defaults. On
 * success returns ANALYSIS_OK and *ppOut owns the result (free with analysis_free()); on error
 * returns ANALYSIS_EINVAL or ANALYSIS_ENOMEM and sets *ppOut to NULL. Never prints. Memory kept:
 * one float per kernel (the stretch); while computing, 12 more bytes per kernel. */
int analysis_run(const store_run *run, const analysis_options *opt, analysis **ppOut /* OUT */);

/* Frees the analysis. NULL is a no-op. The run is not touched. */
void analysis_free(analysis *a);

/* A short English text for an ANALYSIS_E* code ("out of memory"). Static. */
const char *analysis_strerror(int code);

/* "idle", "solo", "concurrent", "time-sliced", "contended", "queued", "unknown"; "?" for other
 * values. Static strings, lower case (callers upper-case them for headlines). */
const char *analysis_verdict_name(analysis_verdict v);

/* What a verdict word means, one English sentence (for help texts and the page). Static. */
const char *analysis_verdict_meaning(analysis_verdict v);

/* "none", "sliced", "shared", "unknown"; "?" for other values. Static. */
const char *analysis_physics_name(analysis_physics p);

/* A short name of a rule ("no-mps", "not-stretched", "handover", "shared-slow",
 * "one-at-a-time", "parallel-slow", "no-reference", "none") and the English sentence that
 * explains it ("contexts that cannot share the GPU were in flight together (no MPS): they took
 * turns"). Static strings; "?" for other values. */
const char *analysis_rule_name(analysis_rule r);
const char *analysis_rule_text(analysis_rule r);

/* "none", "reference", "turns", "shortest"; "?" for other values. Static. */
const char *analysis_basis_name(analysis_basis b);

/* What bounds the predicted gain, in English, with the figures of the calibration that stands
 * for the GPU named `gpu` (NULL: the H200's; analysis_calibration_for): the assumptions of its
 * best case (`worst` 0: predicted_gain) or of its worst case (`worst` 1: predicted_gain_low).
 * One definition for the report, its JSON and the page (analysis/README.md, Gains, says why each
 * holds). Written into buf (n bytes, truncated); returns buf. */
const char *analysis_gain_bound_text(const char *gpu, int worst, char *buf, size_t n);

/* "all", "together", "range", "capture", "span"; "?" for other values. Static. */
const char *analysis_measure_name(analysis_measure m);

/* "off", "on", "mixed", "unknown"; "?" for other values. Static. */
const char *analysis_mps_name(analysis_mps m);

/* The run and options the analysis was made with (options with defaults filled in). */
const store_run *analysis_get_run(const analysis *a);
const analysis_options *analysis_get_options(const analysis *a);

/* The analysis a as one block of bytes (malloc'd into *ppBlob, *pLen bytes; the caller frees
 * it), for a cache beside the run: everything the accessors, queries and analysis_compare()
 * read, not the options (the caller keys the block by them) nor the run. The block is tied to
 * this build (raw structs): keep it only under a key that names the build. ANALYSIS_OK or
 * ANALYSIS_ENOMEM. */
int analysis_freeze(const analysis *a, void **ppBlob /* OUT */, size_t *pLen /* OUT */);

/* The analysis frozen in blob (len bytes, borrowed) for `run`, which must be the run it was made
 * of (or one equal to it, such as the same files reloaded), with the options `opt` it was made
 * with (NULL: the defaults; copied as analysis_run() does). Every size is checked against len
 * and the run, every index against what it indexes: a block that does not fit gives
 * ANALYSIS_EINVAL, never a read out of bounds. On success *ppOut owns the result, as from
 * analysis_run(); otherwise ANALYSIS_EINVAL or ANALYSIS_ENOMEM and *ppOut NULL. With `owner` (a
 * cache whose mapping holds blob; NULL: none) the per-kernel stretches are read in place instead
 * of copied (tens of MB at 10M kernels, whose fresh pages cost more than the rest of the thaw),
 * and on success the analysis takes owner, closing it with analysis_free(); on failure owner
 * stays the caller's. */
int analysis_thaw(const store_run *run, const analysis_options *opt, const void *blob, size_t len,
                  store_cache *owner, analysis **ppOut /* OUT */);

/* ------------------------------------------------------------ per-kernel results */

/* The stretch of every kernel: an array of run->nkernels floats parallel to run->kernels;
 * stretch = duration / solo reference of its signature. NaN when the signature has no reference,
 * and for zero-length kernels (a reference of 0 is never used). */
const float *analysis_stretch(const analysis *a);

/* ------------------------------------------------------------ launch signatures */

/* Where a signature's solo reference comes from. */
typedef enum analysis_ref_source {
    ANALYSIS_REF_NONE = 0,     /* no solo instance anywhere: stretch is NaN */
    ANALYSIS_REF_SOLO = 1,     /* median of this run's instances that ran with no other context */
    ANALYSIS_REF_BASELINE = 2, /* median of the baseline run's solo instances */
} analysis_ref_source;

/* "none", "solo", "baseline"; "?" for other values. Static strings, lower case (the names the
 * text, CSV and JSON reports print). */
const char *analysis_ref_source_name(analysis_ref_source s);

/* A launch signature: name, grid, block and shared memory, the stream dropped. Several
 * run->launches (same kernel on different streams or processes) map to one signature. */
typedef struct analysis_signature {
    store_idx launch; /* one run->launches entry of this signature (name, grid, block) */
    store_idx name;   /* index into run->strings */
    analysis_ref_source source;
    double reference_ns; /* solo reference duration (median); 0 when source is NONE */
    uint64_t nsolo;      /* instances the median was taken over (in the run or baseline) */
    uint64_t nkernels;   /* instances in the run */
    int64_t total_ns;    /* sum of their durations */
    int64_t shortest_ns; /* its shortest instance of positive length in the run (0: none) */
    double stretch;      /* total_ns / (nkernels with positive length x reference_ns): how much
                            longer than alone its instances ran; NaN without reference */
} analysis_signature;

uint32_t analysis_nsignatures(const analysis *a);
/* The i-th signature (i < analysis_nsignatures()); NULL when out of range. */
const analysis_signature *analysis_get_signature(const analysis *a, uint32_t i);
/* The signature of run->launches[launch], or UINT32_MAX when out of range. A kernel's signature
 * is analysis_launch_signature(a, run->kernels[k].launch). */
uint32_t analysis_launch_signature(const analysis *a, store_idx launch);

/* ------------------------------------------------------------ windows */

/* A stretch [t0, t1) of one device's timeline with its verdict and the evidence for it. Each
 * device's busy span [first kernel start, last kernel end) is cut into alternating windows:
 * overlap windows (>= 2 contexts in flight at some instant; overlaps closer than join_gap_ns
 * are joined into one window) and the quiet windows between them (SOLO when a kernel was in
 * flight in it, IDLE otherwise).
 *
 * Stretch where it happened: a kernel runs at its solo speed while no other context is in
 * flight, so its extra time (duration - reference) belongs to the part of its life where others
 * were. A window is judged on its overlapped time: its stretch is the kernels' time there over
 * the solo work they did there (each kernel at the rate left once its time alone is counted at
 * solo speed); the alone time of joined gaps does not dilute it. */
typedef struct analysis_window {
    int64_t t0, t1;   /* ns, common axis */
    store_idx device; /* index into run->devices (STORE_NONE: unknown device) */
    analysis_verdict verdict;
    analysis_physics physics; /* of the overlap inside (the kind holding most of it) */
    analysis_rule rule;       /* the rule that decided the verdict */
    analysis_basis basis;     /* where `stretch` comes from */
    uint32_t nkernels;        /* kernels with time inside the window */
    uint16_t max_processes;   /* most processes with a kernel in flight at one instant */
    uint16_t max_contexts;    /* most contexts with a kernel in flight at one instant */
    int64_t busy_ns;          /* time inside with >= 1 kernel in flight (less than t1 - t0 when
                                 joined overlaps left idle gaps inside) */
    int64_t overlap_ns;       /* time inside with >= 2 contexts in flight */
    uint32_t switches;        /* context switches inside (analysis_device.switches) */
    int64_t switch_gap_ns;    /* their idle gaps, summed */
    /* The timing signature (analysis/README.md, "When the file does not say"): a turn is a run
     * of kernel starts of one share group in the device's start order; it ends where another
     * group's kernel starts. Counted where that start lies. */
    uint32_t turns;        /* changes of share group in the start order inside */
    uint32_t quick_turns;  /* of those, less than the calibration's quick_ns (100 us on the
                              H200) after the previous group's turn began: quicker than any
                              context switch */
    uint32_t switch_turns; /* of those, ended by an idle gap the size of a context switch
                              (switch_lo_ns to switch_hi_ns after the GPU went idle) or lasting
                              about a time slice (0.8 to 1.3 slice_ns) */
    int64_t waiting_ns;    /* time inside when one context ran alone while another, that
                              could not share the GPU with it, had a launched kernel ready
                              and waiting (analysis_device.waiting_ns) */
    /* The figures of the overlap: NaN where they are not defined, in quiet windows (no overlap)
     * always, and stretch and parallelism also where there is no basis. */
    float contexts;           /* mean contexts in flight over its overlap time */
    float groups;             /* mean share groups in flight over its overlap time */
    float group_kernels;      /* the most kernels one share group can have had in flight (those in
                                 flight less the other groups in flight), mean over its overlap
                                 time: 1 when each group ran one kernel at a time. Time-slicing runs
                                 one group at a time, so its solo work per unit of overlap cannot
                                 exceed this */
    float partition_share;    /* share of its overlapped kernel time that ran in SM partitions
                                 (analysis_context_sms: green contexts, MPS clients limited by
                                 an active thread percentage); NaN without overlap */
    float partition_slowdown; /* how much slower those kernels ran than they would on the whole
                                 GPU, by the partitions alone: their waves on the partition's
                                 SMs over their waves on the whole GPU's (a grid that filled the
                                 GPU: whole / part), time-weighted; NaN when none ran in one. The
                                 stretch is against references in the partition (contention
                                 beyond it); times this, against the whole GPU */
    float own_share;          /* share of the solo work behind its stretch done by kernels whose
                                 overlapped time lies mostly (half or more) inside it: the rest is
                                 at rates averaged over other windows too (a long kernel's), which
                                 the rate rules where the files do not say need to be small */
    float stretch;        /* while the kernels overlapped: their time / the solo work they did in
                             it */
    float parallelism;    /* effective parallelism: solo work done while overlapped / overlap_ns */
    float coverage;       /* share of the overlapped kernel time that has a solo reference */
    float overlap_share;  /* the overlapped time of its kernels inside / their whole durations:
                             small when they overlapped only at their ends */
    uint8_t mps;          /* 1 when an MPS client context ran in it */
    int64_t mps_best_ns;  /* the busy time the window would need with its overlapped kernels
                             side by side at best: its time with one context, plus the larger
                             of overlap_ns / stretch (each at its solo speed) and their solo
                             work weighted by the share of the GPU's SMs each holds (kernels
                             that fill the GPU cannot overlap); 0 if unknown */
    int64_t mps_worst_ns; /* the same at worst (analysis/README.md, Gains): kernels that fit
                             the GPU together slowed as much as the calibration ever saw MPS
                             clients slow each other, kernels that do not fit one after
                             another at solo speed, and every kernel paying the MPS launch
                             cost; >= mps_best_ns; 0 if unknown */
} analysis_window;

/* All windows, sorted by device then t0; analysis_device gives each device's slice. */
uint64_t analysis_nwindows(const analysis *a);
const analysis_window *analysis_windows(const analysis *a);

/* ------------------------------------------------------------ devices */

/* A device's windows of one verdict, summed (one definition for every presenter). */
typedef struct analysis_verdict_time {
    uint64_t nwindows;
    int64_t ns;             /* total window length */
    double share;           /* ns / the device's span (0..1) */
    double stretch;         /* overlapped kernel time / the solo work done in it, over these
                               windows; NaN for idle and solo, and when no window has a basis */
    analysis_basis basis;   /* of the most window time among them */
    double contexts;        /* mean contexts in flight over their overlap time; NaN: idle, solo */
    double parallelism;     /* solo work done while overlapped / overlap time; NaN: idle, solo,
                               no basis */
    uint8_t mps;            /* an MPS client context ran in one of them */
    analysis_rule rule;     /* the rule that decided the most window time among them */
    double partition_share; /* share of their overlapped kernel time that ran in SM
                               partitions (analysis_window); NaN: idle, solo */
    double partition_slowdown; /* how much slower than on the whole GPU the partitions alone
                                  made those kernels, time-weighted; NaN when none ran in one */
} analysis_verdict_time;

typedef struct analysis_device {
    store_idx device; /* index into run->devices; STORE_NONE: kernels of unknown device */
    uint64_t nkernels;
    uint32_t nprocesses;                  /* distinct processes with kernels on it */
    uint32_t ncontexts;                   /* distinct contexts with kernels on it */
    uint32_t ngreen;                      /* of which green contexts */
    uint32_t ngroups;                     /* distinct share groups with kernels on it */
    int64_t t_begin, t_end;               /* first kernel start, last kernel end */
    int64_t busy_ns;                      /* >= 1 kernel in flight */
    int64_t overlap_ns;                   /* >= 2 contexts with a kernel in flight */
    int64_t idle_ns;                      /* (t_end - t_begin) - busy_ns */
    uint16_t max_processes, max_contexts; /* most in flight at one instant */
    uint32_t max_kernels;     /* most kernels in flight at one instant (streams of one context
                                 count: concurrency inside a context shows here) */
    analysis_mps mps;         /* of its contexts with kernels */
    analysis_verdict verdict; /* the verdict holding the most overlap-window time; SOLO when
                                 there is no overlap window (a device has >= 1 kernel) */
    analysis_verdict_time by_verdict[ANALYSIS_NVERDICTS]; /* by_verdict[verdict]: its evidence */
    double predicted_gain;           /* over the measured interval (summary measure_t0, t1):
                                        its span on this device / the predicted span if its
                                        time-sliced windows had run side by side at best (each
                                        window's busy time shrunk to mps_best_ns; idle gaps
                                        kept); 1.0 when nothing would be saved */
    double predicted_gain_low;       /* the same at worst (mps_worst_ns): <= predicted_gain */
    analysis_basis gain_basis;       /* TURNS when an estimated stretch went into it */
    uint64_t first_window, nwindows; /* its slice of analysis_windows() */
    uint64_t switches;               /* context switches seen: the GPU went idle after a kernel
                                        of one share group known not to be MPS and started
                                        another such group's kernel within
                                        ANALYSIS_SWITCH_GAP_MIN_NS to ANALYSIS_SWITCH_GAP_NS: the
                                        contexts took turns without
                                        overlapping (each kernel fit its time slice); and, where
                                        the files do not say, the gaps the size of a switch
                                        inside windows the signature judged time-sliced */
    int64_t switch_gap_ns;           /* the idle gaps of those switches, summed */
    uint64_t turns, quick_turns, switch_turns; /* its windows' (analysis_window), summed */
    uint64_t quick_handovers; /* between share groups that may share the GPU, one of them of
                                 unknown MPS state: kernel starts less than the calibration's
                                 handover_ns (20 us) after another group's kernel end, and ends
                                 as close after another group's start. Time-slicing puts a
                                 context switch (135 us or more) between any two contexts'
                                 work: these say it was not (ANALYSIS_RULE_QUICK_HANDOVERS) */
    int64_t idle_in_ns;       /* inside the measured interval: no kernel in flight and
                                 no context switch's gap (the processes had no work on
                                 the GPU: their CPUs set the pace) */
    int64_t waiting_ns;       /* time when one context ran alone while another context,
                                 not sharing the GPU with it (no MPS between them), had a
                                 launched kernel waiting for the GPU (ready: its launch
                                 call had returned and its stream's kernel before it had
                                 ended, more than a launch latency before it started).
                                 Needs the launch API records (TLVIEW_API=1, or an
                                 imported trace's launches); 0 without */
} analysis_device;

/* The share of a window's solo work its own kernels must hold (analysis_window own_share) for
 * its stretch and parallelism to decide where the files do not say: a long kernel overlapped in
 * many windows progresses at its average rate in each, which in a short window beside another
 * context's burst reads as side by side (tests/verdicts/uneven-mps-off, 1.42 in 2 ms windows
 * under a 450 ms kernel, read as if its files did not say). */
#define ANALYSIS_OWN_MIN_SHARE 0.8

/* The fewest turns a signature is read from (analysis_window_signature()): two turns could be
 * chance (host-paced clients), three of one kind in a row are not. */
#define ANALYSIS_SIGNATURE_MIN_TURNS 3

/* The signature of window w (analysis_signature_kind) under options o (NULL: the defaults):
 * SWITCHED when at least ANALYSIS_SIGNATURE_MIN_TURNS and switch_min_share of its turns were
 * marked by a context switch and at most switch_max_quick were quick; QUICK when at least
 * ANALYSIS_SIGNATURE_MIN_TURNS and quick_min_share were quick, more than were marked; NONE
 * otherwise. Read only where the physics is unknown; the judge's rules say how it decides. */
analysis_signature_kind analysis_window_signature(const analysis_window *w,
                                                  const analysis_options *o);

/* "none", "switched", "quick"; "?" for other values. Static. */
const char *analysis_signature_name(analysis_signature_kind k);

/* The idle gaps between two share groups' kernels counted as a context switch: 1 us to 1 ms. On
 * the H200 a switch leaves the GPU idle 142-144 us (tests/gpu/RESULTS.md, 2026-12-01 18:20); a
 * gap under 1 us is no switch a GPU can make (clock error between processes' files, or rounded
 * times), a gap over 1 ms the processes' own idle time. */
#define ANALYSIS_SWITCH_GAP_MIN_NS 1000
#define ANALYSIS_SWITCH_GAP_NS 1000000

/* The idle share of the measured interval (analysis_device idle_in_ns over its length) from
 * which the processes count as paced by their CPUs (host-paced): what MPS gains then depends on
 * the hosts' pace, which a GPU trace does not time. On the H200 (tests/gpu/RESULTS.md,
 * 2026-12-01) GPU-bound pairs time-sliced left the GPU idle 0-1% of their timed loops,
 * launch-bound pairs 2-27%, and those pairs' own MPS gain moved by +-20% between identical runs. */
#define ANALYSIS_HOST_PACED_IDLE 0.02

/* The SMs of device slot `slot`'s whole GPU: its device's SM count (the most any process was
 * shown), or more where MPS clients were shown only their partitions (a client at 50% shown 66:
 * 132); 0 when unknown or out of range. */
uint32_t analysis_device_sms(const analysis *a, uint32_t slot);

/* The device slot of context c (index into run->contexts): that of its device, where the device
 * ran kernels; UINT32_MAX otherwise or out of range. */
uint32_t analysis_context_slot(const analysis *a, store_idx c);

/* The SM partition context c (index into run->contexts) ran in: the SMs a green context, or an
 * MPS client limited by an active thread percentage (store_context thread_pct, sm_count), may
 * use, where fewer than its GPU's; 0 for the whole GPU, unknown, or out of range. */
uint32_t analysis_context_sms(const analysis *a, store_idx c);

/* Devices that ran kernels, in run->devices order (the unknown device last). */
uint32_t analysis_ndevices(const analysis *a);
const analysis_device *analysis_get_device(const analysis *a, uint32_t i);

/* ------------------------------------------------------------ concurrency profile */

/* One step of a device's concurrency profile: over [t0, t1), `processes` processes and
 * `contexts` contexts had a kernel in flight. */
typedef struct analysis_segment {
    int64_t t0, t1;
    uint16_t processes, contexts;
} analysis_segment;

/* The exact step function of device slot `dev` (< analysis_ndevices) clipped to [t0, t1): the
 * segments in time order, adjacent equal steps merged, zero steps (idle) included. Writes at most
 * `cap` segments into `out` and sets *pCount to the number there are in the range (which may be
 * larger than cap: call again with a bigger buffer or a smaller range). Computed on demand by a
 * sweep over the kernels in range: cost grows with the kernels there, not with the run. Returns
 * ANALYSIS_OK, ANALYSIS_EINVAL (bad dev, t1 < t0) or ANALYSIS_ENOMEM. */
int analysis_profile(const analysis *a, uint32_t dev, int64_t t0, int64_t t1,
                     analysis_segment *out, /* OUT: up to cap segments */
                     size_t cap,            /* room in out */
                     size_t *pCount /* OUT: segments in the range */);

/* The profile summarised into `nbins` equal bins over [t0, t1) (one bin per pixel, for
 * drawing): per bin the most processes and contexts in flight at any instant, and the busy share.
 * Bin b covers [t0 + floor(span * b / nbins), t0 + floor(span * (b + 1) / nbins)), span = t1 - t0,
 * in exact integer ns; a bin narrower than 1 ns holds the state at its first instant.
 * Returns ANALYSIS_OK, ANALYSIS_EINVAL (bad dev, t1 <= t0, nbins 0) or ANALYSIS_ENOMEM. */
typedef struct analysis_bin {
    uint16_t max_processes, max_contexts;
    float busy;           /* share of the bin with >= 1 kernel in flight (0..1) */
    float mean_processes; /* time-weighted mean processes in flight */
} analysis_bin;
int analysis_profile_bins(const analysis *a, uint32_t dev, int64_t t0, int64_t t1,
                          analysis_bin *out, /* OUT: nbins bins */
                          uint32_t nbins);

/* A histogram of kernel stretch on device slot `dev` (or every device when dev is UINT32_MAX):
 * `nbins` bins of equal width on a log2 scale over [lo, hi) (lo > 0); values below lo count in bin
 * 0, at or above hi in the last bin; kernels without stretch count in *pNoRef (may be NULL).
 * Returns ANALYSIS_OK or ANALYSIS_EINVAL (bad dev, lo <= 0, hi <= lo, nbins 0). */
int analysis_stretch_histogram(const analysis *a, uint32_t dev, double lo, double hi,
                               uint64_t *counts, /* OUT: nbins counters */
                               uint32_t nbins,
                               uint64_t *pNoRef /* OUT: kernels without stretch, or NULL */);

/* ------------------------------------------------------------ processes */

typedef struct analysis_process {
    store_idx process; /* index into run->processes */
    uint64_t nkernels;
    uint64_t nreferenced; /* kernels with a stretch */
    uint32_t ncontexts;   /* contexts with kernels */
    int64_t kernel_ns;    /* sum of kernel durations */
    int64_t busy_ns;      /* union of its kernels' intervals on each device, summed over devices */
    int64_t overlap_ns;   /* time one of its kernels was in flight with another context's (its
                             own other contexts included) */
    double stretch;       /* its referenced kernels' durations / their solo references: how much
                             longer its GPU work took than alone; NaN when they hold less than
                             min_reference_coverage of its kernel time */
    analysis_mps mps;     /* of its contexts with kernels */
} analysis_process;

/* One entry per run->processes entry, same order (processes without kernels included, with 0s). */
uint32_t analysis_nprocesses(const analysis *a);
const analysis_process *analysis_get_process(const analysis *a, uint32_t i);

/* The share group of run->contexts[ctx] (analysis_physics: the contexts that may run kernels side
 * by side; two groups take turns unless both could be MPS clients), numbered from 0, and in
 * *pPlain (may be NULL) 1 when the group is known not to be MPS (every context in it plain CUDA:
 * a switch to or from it is a context switch, analysis_device.switches), else 0. UINT32_MAX for a
 * context out of range. For presenters that place the switches the analysis counted. */
uint32_t analysis_context_group(const analysis *a, store_idx ctx, int *pPlain /* OUT */);

/* The MPS state of run->contexts[ctx] as the analysis took it (its file's, or --assume-mps for a
 * context whose file does not say): ANALYSIS_MPS_OFF, _ON or _UNKNOWN (also for a context out of
 * range). */
analysis_mps analysis_context_mps(const analysis *a, store_idx ctx);

/* ------------------------------------------------------------ run level */

typedef struct analysis_summary {
    uint64_t nkernels;
    uint64_t nzero;              /* zero-length kernels (and end < start, read as zero-length) */
    uint64_t nreferenced;        /* kernels with a stretch */
    int64_t t_begin, t_end;      /* first kernel start, last kernel end, all devices */
    int64_t busy_ns, overlap_ns; /* summed over devices */
    double stretch;              /* referenced kernels' durations / their solo references: how much
                                    slower than alone the kernels ran, long ones weighing more;
                                    NaN when they hold less than min_reference_coverage of the
                                    kernel time */
    double predicted_gain;       /* the measured interval's length / its predicted length if
                                    every time-sliced window had run side by side at best (the
                                    device that finishes last decides) */
    double predicted_gain_low;   /* the same at worst: the prediction is [low, predicted_gain] */
    analysis_basis gain_basis;   /* TURNS when an estimated stretch went into it */
    analysis_measure measure;    /* what the interval is (RANGE and CAPTURE fall back to ALL,
                                    with a warning, when no such range was recorded; SPAN too
                                    when it holds no kernel time) */
    int64_t measure_t0, measure_t1; /* the measured interval on the common axis */
    int64_t idle_in_ns;             /* idle_in_ns of the device that decides predicted_gain */
    double idle_share;              /* idle_in_ns / the measured interval's length (0..1) */
    uint8_t host_paced;             /* idle_share >= ANALYSIS_HOST_PACED_IDLE: the prediction
                                       assumes the hosts keep the pace they had */
    /* The processes' own spans: each process's part of the measured interval, from its first
     * start to its last end (RANGE and CAPTURE: its own ranges of that name; otherwise its
     * kernels inside the measured interval). The measured gain counts the interval, i.e. the
     * process that ends last; the spread says how far apart the processes finished. */
    uint32_t nproc_spans;                       /* processes with a span (0 when none) */
    int64_t proc_span_min_ns, proc_span_max_ns; /* the shortest and the longest; 0 when none */
    int64_t together_ns; /* the time `--measure together` measures over (ANALYSIS_MEASURE_TOGETHER):
                            the most processes running kernels together, at least two (one
                            process: its span); 0 when no two ever ran at once */
} analysis_summary;

const analysis_summary *analysis_get_summary(const analysis *a);

/* Warnings about the run's consistency, in English, one per problem found: files from
 * different hosts or with different run ids, processes whose kernels lie 10 s or more away from
 * every other process's (likely another run), incomplete recordings, dropped records, processes
 * without kernels, kernels read as zero-length, GPUs identified without a UUID.
 * analysis_warning() returns NULL when i is out of range. */
uint32_t analysis_nwarnings(const analysis *a);
const char *analysis_warning(const analysis *a, uint32_t i);

/* ------------------------------------------------------------ comparison */

/* Two analyses of the same work, e.g. `a` with MPS off and `b` with MPS on. */
typedef struct analysis_comparison {
    int64_t span_a, span_b;             /* each run's measured interval (measure_t1 - t0) */
    double measured_gain;               /* span_a / span_b: how much faster b finished */
    double predicted_gain;              /* a's predicted_gain, to set beside the measured one */
    double predicted_gain_low;          /* a's predicted_gain_low */
    double stretch_a, stretch_b;        /* each run's summary stretch */
    double predicted_gain_at_stretch_b; /* a's prediction redone with its time-sliced kernels side
                                           by side at b's stretch (when above 1) rather than at
                                           their solo speed: what b should gain if it ran them
                                           that slowly; NaN when b has no stretch */
    uint32_t common_signatures;         /* signatures (by name, grid, block, smem) found in both */
    double duration_ratio;              /* median over common signatures of mean duration a / mean
                                           duration b; NaN when none in common */
} analysis_comparison;

/* Compares a with b into *pOut. Returns ANALYSIS_OK, ANALYSIS_EINVAL (NULL argument) or
 * ANALYSIS_ENOMEM. A run with no kernels gives spans of 0 and a NaN gain. */
int analysis_compare(const analysis *a, const analysis *b, analysis_comparison *pOut /* OUT */);

#endif
