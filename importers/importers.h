/* importers: foreign profiler files -> the store run model (store/store.h).
 *
 * imp_load() detects a file's format by its content (never its name) and appends the file's
 * processes and records to a run through the store_run_add_* builder calls, on the common axis
 * (CLOCK_REALTIME ns). Formats: nvprof SQLite (.nvvp/.nvprof/...), NVIDIA Visual Profiler session
 * files (XML embedding nvprof databases, read through the nvprof importer), Nsight Systems SQLite
 * exports, Chrome trace JSON (PyTorch/Kineto, plain or gzip); tlview's own files are passed to
 * store_run_load(). Each format is one imp_ops table (importers/<format>.c).
 *
 * Errors: every call returns 0 or a negative STORE_E* code; the message goes into the caller's
 * imp_error (first error wins, NULL allowed, like jansson's json_error_t) and is also set on the
 * run (store_run_errmsg()), so callers that only hold the run can print it.
 * Records that cannot be mapped are never dropped silently: they are counted per kind in the
 * process_meta keys `import.unmapped.<kind>` and in imp_stats. The import.* keys describe the
 * whole file and sit on the first process it added (an nsys export can hold several):
 * import.format, import.unmapped.<kind>, import.warning, import.gpu_clock_shift_ns (nvprof).
 * Other keys: nvprof.version, chrome.rank. */
#ifndef IMPORTERS_H
#define IMPORTERS_H

#include <stdint.h>

#include "store.h"

struct sqlite3;

/* Where and why an import failed. */
typedef struct imp_error {
    char file[256];    /* the file as given to imp_load */
    int64_t row;       /* SQLite row number or JSON line of the failure; 0 when not applicable */
    char text[320];    /* the problem, without the file name */
    char message[640]; /* "<file>: <text>" or "<file>:<row>: <text>", ready to print */
} imp_error;

#define IMP_MAX_UNMAPPED 32 /* kinds kept by name in imp_stats; the rest add up in "other" */

/* What one imp_load_ex() call read. */
typedef struct imp_stats {
    const char *format; /* "nvprof", "nvvp", "nsys", "chrome", "tlview" (static string) */
    uint32_t processes; /* processes added */
    uint64_t kernels, copies, apis, ranges; /* records added */
    uint64_t unmapped_total;                /* records seen but not mapped, all kinds */
    uint32_t nunmapped;                     /* entries used in unmapped[] */
    struct {
        char kind[48]; /* "kernel_without_time", "table.OVERHEAD", "chrome.cpu_op" */
        uint64_t count;
    } unmapped[IMP_MAX_UNMAPPED];
    int64_t gpu_clock_shift; /* ns added to GPU records of the last process (0: none) */
    char warning[256];       /* first non-fatal oddity (unknown version...), "" when none */
} imp_stats;

/* Progress callback: `done` of `total` units (bytes or rows) of `path` have been read. Called a
 * few times per second at most; total may be 0 when unknown; done == total at the end. Drawing it
 * is the caller's (tlview's bar: cli/progress.c). */
typedef void (*imp_progress_fn)(void *ctx, const char *path, uint64_t done, uint64_t total);

/* The limits of a Chrome JSON import, the one format that can grow far beyond its file (a 6 MB
 * gzip can inflate to 17 million events). The SQLite formats hold no more than their file and
 * have a time limit instead. A file past a limit fails with a message naming the limit and how
 * to raise it: "FILE:LINE: more than 10000000 events (the limit; TLVIEW_MAX_EVENTS=N raises it)".
 * IMP_MAX_EVENTS: events kept as records (kernels, copies, API calls, ranges, and those refused
 * for their times); IMP_MAX_MEMORY: bytes the import may hold (an estimate: the JSON arena, the
 * kept records, new strings, declarations; an NVVP session's database while it is inflated).
 * With imp_options.total the limits hold for the run, every file of it together: a file that
 * takes the total past one fails with "FILE:LINE: more than 10000000 events in the run (9999990
 * of them in the files before this one; the limit holds for the run's total; ...)". */
#define IMP_MAX_EVENTS 10000000ull
#define IMP_MAX_MEMORY (2048ull << 20)

/* What the imports of one run have taken so far, which the limits bound when it is handed to
 * each imp_load_ex() of the run (imp_options.total). Zero it before the run's first file; each
 * import that succeeds adds to it, one that fails leaves it as it was. */
typedef struct imp_total {
    uint64_t events; /* events kept as records by the run's Chrome imports */
    uint64_t memory; /* bytes those imports left held in the run (estimate, as counted for
                        IMP_MAX_MEMORY: records, strings, declarations; not what was freed) */
} imp_total;

typedef struct imp_options {
    imp_progress_fn progress; /* NULL: no progress reports */
    void *progress_ctx;       /* handed to progress */
    /* the run's totals so far, counted toward the limits and updated by a successful import;
     * NULL: the limits hold for this file alone */
    imp_total *total;
    /* 0: $TLVIEW_MAX_EVENTS when set (a whole number; 0 there: no limit), else IMP_MAX_EVENTS;
     * UINT64_MAX: no limit */
    uint64_t max_events;
    /* bytes; 0: $TLVIEW_MAX_MEMORY when set (whole MiB; 0 there: no limit), else
     * IMP_MAX_MEMORY; UINT64_MAX: no limit */
    uint64_t max_memory;
} imp_options;

/* What a probe sees of a file: its first bytes (gunzipped when the file is gzip) and, when it is
 * an SQLite database, an open read-only handle. */
typedef struct imp_probe {
    const char *path;
    const unsigned char *head; /* first bytes of the (decompressed) content */
    size_t nhead;
    struct sqlite3 *db; /* NULL unless the file starts with the SQLite magic */
} imp_probe;

typedef struct imp_reader imp_reader; /* one file being read; private (imp_int.h) */

/* One importer. Detection asks every probe in turn; the first that says yes reads the file. */
typedef struct imp_ops {
    const char *name; /* "nvprof": also the process source */
    /* called when detecting a format: 1 if this importer reads the file, 0 otherwise; must not
     * fail loudly nor keep anything */
    int (*probe)(const imp_probe *p);
    /* called once the format is chosen: opens the file and allocates the format's state in r */
    int (*open)(imp_reader *r);
    /* called after a successful open: appends the file to r's run (may be called only once) */
    int (*load)(imp_reader *r);
    /* called always after open, even a failed one: frees what open and load allocated */
    void (*close)(imp_reader *r);
} imp_ops;

extern const imp_ops imp_nvprof_ops;
extern const imp_ops imp_nsys_ops;
extern const imp_ops imp_chrome_ops;
extern const imp_ops imp_nvvp_ops;

/* The format of `path` by content: "nvprof", "nvvp", "nsys", "chrome", "tlview", or NULL (then err
 * says what the file looks like instead: legacy nvprof, other XML, pgprof, another database...). */
const char *imp_detect(const char *path, imp_error *err);

/* Detects the format of `path` and appends its processes and records to `run`. Returns 0 or a
 * negative STORE_E* code with err (may be NULL) and the run's message set. On error the run may
 * hold part of the file (processes, strings, records read before the failure): callers discard
 * the run, as `tlview` does. */
int imp_load(store_run *run, const char *path, imp_error *err);

/* imp_load with options (NULL: defaults) and statistics (NULL: not wanted). */
int imp_load_ex(store_run *run, const char *path, const imp_options *opt, imp_stats *stats,
                imp_error *err);

#endif
