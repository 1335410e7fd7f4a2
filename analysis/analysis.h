/* analysis: what the kernels of several processes really did on each GPU of one run.
 *
 * analysis_run() walks a finished store_run (store/store.h) once per device and computes the
 * concurrency profile, the solo reference duration of every launch signature, the stretch of every
 * kernel, the overlap windows with a verdict (concurrent / time-sliced / contended / unknown) and
 * their evidence, per-process and per-device totals, and the most MPS could gain. Pure C: no I/O,
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

/* The judgement of a stretch of a device's timeline. Windows of overlap (>= 2 processes with a
 * kernel in flight) get CONCURRENT, TIME_SLICED, CONTENDED or UNKNOWN; IDLE and SOLO name the
 * stretches between them (see analysis_window). The order is stable (used as array index). */
typedef enum analysis_verdict {
    ANALYSIS_IDLE = 0,       /* no kernel in flight */
    ANALYSIS_SOLO = 1,       /* kernels of one process only (some idle time possible) */
    ANALYSIS_CONCURRENT = 2, /* several processes, kernels not stretched: really side by side */
    ANALYSIS_TIME_SLICED =
        3, /* several contexts, no MPS, the GPU did ~one context's work at a time */
    ANALYSIS_CONTENDED = 4, /* overlapped and stretched, but with real parallelism or under MPS */
    ANALYSIS_UNKNOWN = 5,   /* overlapped, but too few kernels have a solo reference to judge */
} analysis_verdict;
#define ANALYSIS_NVERDICTS 6

/* Thresholds and inputs. Fill with analysis_options_default() then change what you need. */
typedef struct analysis_options {
    const store_run *baseline;       /* a run of the same kernels alone (e.g. one process): when
                                        set, solo references come from it; NULL: from the run's own
                                        solo instances. Must be finished; read only during
                                        analysis_run(). */
    double concurrent_max_stretch;   /* window mean stretch <= this: CONCURRENT (1.25) */
    double sliced_max_parallelism;   /* effective parallelism <= this: the GPU worked for about
                                        one context at a time (1.3) */
    double sliced_stretch_tolerance; /* |stretch - contexts| <= tol * contexts: the stretch is
                                        explained by time-slicing (0.30); evidence flag */
    double min_reference_coverage;   /* share of a window's kernel time that must have a
                                        reference, else UNKNOWN (0.5) */
    int64_t join_gap_ns;             /* overlap windows closer than this are one window (1 ms) */
} analysis_options;

/* Sets every field of *o to its documented default. */
void analysis_options_default(analysis_options *o);

typedef struct analysis analysis;

/* Analyses `run` (finished, kernels sorted by start). `opt` may be NULL for the defaults. On
 * success returns ANALYSIS_OK and *ppOut owns the result (free with analysis_free()); on error
 * returns ANALYSIS_EINVAL or ANALYSIS_ENOMEM and sets *ppOut to NULL. Never prints. Memory: one
 * float per kernel kept (the stretch) plus one float per solo kernel while computing. */
int analysis_run(const store_run *run, const analysis_options *opt, analysis **ppOut /* OUT */);

/* Frees the analysis. NULL is a no-op. The run is not touched. */
void analysis_free(analysis *a);

/* A short English text for an ANALYSIS_E* code ("out of memory"). Static. */
const char *analysis_strerror(int code);

/* "idle", "solo", "concurrent", "time-sliced", "contended", "unknown"; "?" for other values.
 * Static strings, lower case (callers upper-case them for headlines). */
const char *analysis_verdict_name(analysis_verdict v);

/* The run and options the analysis was made with (options with defaults filled in). */
const store_run *analysis_get_run(const analysis *a);
const analysis_options *analysis_get_options(const analysis *a);

/* ------------------------------------------------------------ per-kernel results */

/* The stretch of every kernel: an array of run->nkernels floats parallel to run->kernels;
 * stretch = duration / solo reference of its signature. NaN when the signature has no reference,
 * and for zero-length kernels (a reference of 0 is never used). */
const float *analysis_stretch(const analysis *a);

/* ------------------------------------------------------------ launch signatures */

/* Where a signature's solo reference comes from. */
typedef enum analysis_ref_source {
    ANALYSIS_REF_NONE = 0,     /* no solo instance anywhere: stretch is NaN */
    ANALYSIS_REF_SOLO = 1,     /* median of this run's instances that ran with no other process */
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
    double mean_stretch; /* mean over instances with a stretch; NaN when none */
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
 * overlap windows (>= 2 processes in flight at some instant; overlaps closer than
 * join_gap_ns are joined into one window) and the quiet windows between them (SOLO when a
 * kernel was in flight in it, IDLE otherwise). The stretch figures are weighted by each
 * kernel's time inside the window (partial kernels clipped proportionally). */
typedef struct analysis_window {
    int64_t t0, t1;   /* ns, common axis */
    store_idx device; /* index into run->devices (STORE_NONE: unknown device) */
    analysis_verdict verdict;
    uint32_t nkernels;      /* kernels with time inside the window */
    uint16_t max_processes; /* most processes with a kernel in flight at one instant */
    uint16_t max_contexts;  /* most contexts with a kernel in flight at one instant */
    int64_t busy_ns;        /* time inside with >= 1 kernel in flight (less than t1 - t0 when
                               joined overlaps left idle gaps inside) */
    float contexts;         /* mean contexts in flight over the window's busy time */
    float mean_stretch; /* time-weighted mean stretch of kernels with a reference; NaN if none */
    float parallelism;  /* effective parallelism: reference work done inside / busy_ns
                           (idle gaps inside a joined window do not dilute it) */
    float coverage;     /* share of kernel time inside that has a reference (0..1) */
    uint8_t mps;        /* 1 when an MPS client context (compute_api_kind 2) ran in it */
    uint8_t stretch_matches_contexts; /* |mean_stretch - contexts| <= tolerance * contexts */
    int64_t concurrent_ns;            /* least time the kernels inside would need side by side: the
                                         larger of busy_ns / mean_stretch and their reference work
                                         weighted by the share of the GPU's SMs each one occupies
                                         (kernels that fill the GPU cannot overlap); 0 if unknown */
} analysis_window;

/* All windows, sorted by device then t0; analysis_device gives each device's slice. */
uint64_t analysis_nwindows(const analysis *a);
const analysis_window *analysis_windows(const analysis *a);

/* ------------------------------------------------------------ devices */

typedef struct analysis_device {
    store_idx device; /* index into run->devices; STORE_NONE: kernels of unknown device */
    uint64_t nkernels;
    uint32_t nprocesses;                  /* distinct processes with kernels on it */
    uint32_t ncontexts;                   /* distinct contexts with kernels on it */
    int64_t t_begin, t_end;               /* first kernel start, last kernel end */
    int64_t busy_ns;                      /* >= 1 kernel in flight */
    int64_t overlap_ns;                   /* >= 2 processes with a kernel in flight */
    int64_t idle_ns;                      /* (t_end - t_begin) - busy_ns */
    uint16_t max_processes, max_contexts; /* most in flight at one instant */
    uint32_t max_kernels;     /* most kernels in flight at one instant (streams of one process
                                 count: concurrency inside a context shows here) */
    uint8_t mps;              /* an MPS client context ran kernels on it */
    analysis_verdict verdict; /* the verdict holding the most overlap-window time; SOLO when
                                 there is no overlap window (a device has >= 1 kernel) */
    double verdict_ns;        /* total length of the windows with that verdict */
    double mean_stretch;      /* over the windows with that verdict, time weighted; NaN if none */
    double contexts;          /* mean contexts in flight over those windows */
    double parallelism;       /* effective parallelism over those windows */
    double ns_by_verdict[ANALYSIS_NVERDICTS]; /* total window length per verdict */
    double predicted_gain;           /* span / predicted span if its time-sliced windows had run
                                        concurrently (each window's busy time shrunk by its mean
                                        stretch, but not below its SM-share bound concurrent_ns;
                                        its idle gaps kept); 1.0 when nothing would be saved */
    uint64_t first_window, nwindows; /* its slice of analysis_windows() */
} analysis_device;

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
    int64_t kernel_ns;    /* sum of kernel durations */
    int64_t busy_ns;      /* union of its kernels' intervals (all devices) */
    int64_t overlap_ns;   /* time one of its kernels was in flight with another process's */
    double mean_stretch;  /* mean stretch of its referenced kernels; NaN if none */
    double slowdown;      /* sum of durations / sum of references over its referenced
                             kernels: how much longer its GPU work took than alone; NaN */
    uint8_t mps;          /* one of its contexts is an MPS client */
} analysis_process;

/* One entry per run->processes entry, same order (processes without kernels included, with 0s). */
uint32_t analysis_nprocesses(const analysis *a);
const analysis_process *analysis_get_process(const analysis *a, uint32_t i);

/* ------------------------------------------------------------ run level */

typedef struct analysis_summary {
    uint64_t nkernels;
    uint64_t nzero;              /* zero-length kernels (and end < start, read as zero-length) */
    uint64_t nreferenced;        /* kernels with a stretch */
    int64_t t_begin, t_end;      /* first kernel start, last kernel end, all devices */
    int64_t busy_ns, overlap_ns; /* summed over devices */
    double mean_stretch;         /* over referenced kernels; NaN if none */
    double slowdown;             /* their total duration / their total solo reference: how much
                                    slower than alone the kernels ran, long ones weighing more;
                                    NaN when they are under min_reference_coverage of the
                                    kernel time */
    double predicted_gain;       /* span / predicted span if every time-sliced window had run
                                    concurrently (the device that finishes last decides): an
                                    upper bound, since kernels side by side are assumed to run
                                    at their solo speed */
} analysis_summary;

const analysis_summary *analysis_get_summary(const analysis *a);

/* Warnings about the run's consistency, in English, one per problem found: files from
 * different hosts or with different run ids, processes whose kernels lie 10 s or more away from
 * every other process's (likely another run), incomplete processes, dropped records, processes
 * without kernels, kernels read as zero-length. analysis_warning() returns NULL when i is out of
 * range. */
uint32_t analysis_nwarnings(const analysis *a);
const char *analysis_warning(const analysis *a, uint32_t i);

/* ------------------------------------------------------------ comparison */

/* Two analyses of the same work, e.g. `a` with MPS off and `b` with MPS on. */
typedef struct analysis_comparison {
    int64_t span_a, span_b; /* t_end - t_begin of each run's kernels */
    double measured_gain;   /* span_a / span_b: how much faster b finished */
    double predicted_gain;  /* a's predicted_gain, to set beside the measured one */
    double mean_stretch_a, mean_stretch_b;
    double slowdown_b; /* b's summary slowdown: e.g. MPS clients slowing each other */
    double predicted_gain_at_slowdown_b; /* a's prediction redone with its time-sliced kernels
                                            side by side at b's slowdown (when above 1) rather
                                            than at their solo speed: what b should gain if it
                                            ran them that slowly; NaN when b has no references */
    uint32_t common_signatures;          /* signatures (by name, grid, block, smem) found in both */
    double duration_ratio;               /* median over common signatures of mean duration a / mean
                                            duration b; NaN when none in common */
} analysis_comparison;

/* Compares a with b into *pOut. Returns ANALYSIS_OK, ANALYSIS_EINVAL (NULL argument) or
 * ANALYSIS_ENOMEM. A run with no kernels gives spans of 0 and a NaN gain. */
int analysis_compare(const analysis *a, const analysis *b, analysis_comparison *pOut /* OUT */);

#endif
