/* store_int.h: private to the store/ sources. The index hash table shared by the writer and the run
 * builder, the string arena, the schema SQL and the run's private state. Nothing here is part
 * of the public API (store/store.h is). */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* ---------------------------------------------------------------- hashing */

/* FNV-1a over bytes, then a final mix; `seed` chains several fields. */
uint64_t store_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t store_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ^ (h >> 29);
}

/* An open-addressing table of array indexes: the keys live in the caller's arrays, the table
 * holds (index + 1, 32 bits of hash) per slot. `eq` compares the key at `idx` with `key`. */
typedef struct store_htab {
    uint32_t *slot; /* 2 words per slot: idx + 1 (0 = empty), hash */
    uint32_t cap;   /* slots, a power of two (0 before first use) */
    uint32_t n;     /* used slots */
} store_htab;

typedef int (*store_htab_eq)(const void *ctx, uint32_t idx, const void *key);

/* The index stored for `key`, or STORE_NONE. */
uint32_t store_htab_get(const store_htab *h, uint64_t hash, store_htab_eq eq, const void *ctx,
                        const void *key);
/* Adds idx under `hash` (the caller checked it is absent). Returns 0 or STORE_ENOMEM. */
int store_htab_put(store_htab *h, uint64_t hash, uint32_t idx);
void store_htab_free(store_htab *h);

/* ---------------------------------------------------------------- arena */

typedef struct store_arena_chunk store_arena_chunk;
typedef struct store_arena {
    store_arena_chunk *head; /* newest chunk first */
} store_arena;

/* A copy of s (NULL stays NULL) that lives until store_arena_free(). NULL if out of memory. */
const char *store_arena_strdup(store_arena *a, const char *s);
const char *store_arena_strndup(store_arena *a, const char *s, size_t n);
void store_arena_free(store_arena *a);

/* Grows *pArr (element size `size`) so it holds at least `need` elements; capacity doubles.
 * Returns 0 or STORE_ENOMEM (the array is then unchanged). */
int store_grow(void **pArr, uint64_t *pCap, uint64_t need, size_t size);

/* ---------------------------------------------------------------- schema */

/* Creates the tables, the view and the meta rows of a new file. */
int store_schema_create(sqlite3 *db, store_clock clock, int64_t t0, char *err, size_t errlen);

/* Checks that db is a tlview file this reader can read and returns its t0, clock and
 * schema_version (which columns it has: 1 lacks the context table's green-context columns).
 * STORE_EFORMAT or STORE_ENEWER with the message (prefixed with `path`) in err. */
int store_schema_check(sqlite3 *db, const char *path, int64_t *pT0, store_clock *pClock,
                       int64_t *pSchema, char *err, size_t errlen);

/* Checks the first bytes and the size of `path` before SQLite opens it (empty, not SQLite,
 * truncated). 0 or STORE_EFORMAT / STORE_EIO with the message in err. */
int store_file_check(const char *path, char *err, size_t errlen);

/* Opens an existing file for reading; a killed writer's journal or WAL is recovered when the
 * folder is writable. */
int store_open_read(const char *path, sqlite3 **pDb, char *err, size_t errlen);

/* ---------------------------------------------------------------- run */

/* A device a process saw under a CUDA ordinal (kept so a saved run keeps the ordinals). */
typedef struct store_procdev {
    store_idx process, device;
    uint32_t ordinal;
} store_procdev;

/* Sizes of every array of a run, for rolling a failed load back. */
typedef struct store_run_mark {
    uint32_t nprocesses, ndevices, ncontexts, nstreams, nlaunches, nstrings, nprocdevs;
    uint64_t nsegs[4];
    uint64_t nkernels, ncopies, napis, nranges;
    uint32_t ncaptures;
} store_run_mark;

/* A run's four record arrays, in the order of store_run_priv.segs. */
typedef enum store_rec {
    STORE_REC_KERNEL,
    STORE_REC_COPY,
    STORE_REC_API,
    STORE_REC_RANGE
} store_rec;

/* Where each batch of appended records begins, so finish can sort batches then merge them. */
typedef struct store_segs {
    uint64_t *start; /* first index of each segment, ascending */
    uint64_t n, cap;
} store_segs;

typedef struct store_run_priv {
    char errmsg[1024];
    int gpu_separate; /* store_run_set_gpu_identity(): 1 = no matching of uuid-less GPUs */
    store_arena arena;
    store_htab h_strings, h_launches, h_contexts, h_streams, h_devices;
    uint64_t cap_processes, cap_devices, cap_contexts, cap_streams, cap_launches, cap_strings;
    uint64_t cap_kernels, cap_copies, cap_apis, cap_ranges, cap_captures;
    uint32_t *meta_cap;  /* per process: capacity of meta_keys/meta_values */
    uint8_t *gpus_apart; /* per process: 1 = its uuid-less GPUs are never matched to another
                            process's (gpu_separate, or process_meta gpu_identity=separate) */
    store_procdev *procdevs;
    uint64_t nprocdevs, cap_procdevs;
    /* over procdevs: by (process, device); by (process, ordinal) of uuid-less devices; by
     * (ordinal, host) of uuid-less devices, where GPU inference looks */
    store_htab h_pd_device, h_pd_ordinal, h_pd_host;
    store_segs segs[4]; /* by store_rec: kernels, copies, apis, ranges */
    char *key;          /* store_run_set_key() */
    store_cache *cache; /* a run read from the cache (cache_run.c): its mapped file, which holds
                           its strings and, until a builder call copies them out
                           (store_run_own), its records; NULL otherwise */
} store_run_priv;

#define STORE_PRIV(run) ((store_run_priv *)(run)->priv)

/* Copies the records of a run read from the cache out of the mapped file (its strings stay
 * there), so that a builder call may grow or sort them. 0, or STORE_ENOMEM (nothing changed).
 * Called by every call that changes the record arrays. */
int store_run_own(store_run *run);

/* Interns text with a known demangled form (NULL: not mangled; skips store_demangle). */
store_idx store_run_intern2(store_run *run, const char *text, const char *demangled);
/* Starts a new sort segment in every record array (called when a new source begins). */
void store_run_new_segment(store_run *run);
void store_run_get_mark(const store_run *run, store_run_mark *m);
/* Drops everything added after the mark (a failed load). */
void store_run_rollback(store_run *run, const store_run_mark *m);
/* Rebuilds every lookup table (strings, devices, contexts, streams, launches, the process-device
 * pairs) from the arrays, and the devices' inferred marks: after a rollback, or after the arrays
 * were filled directly (store_run_restrict). */
void store_run_reindex(store_run *run);
/* One record array of a run, for code that fills it directly (the loader, finish). */
typedef struct store_recs {
    void **arr;    /* &run->kernels, ... */
    uint64_t *n;   /* records in it */
    uint64_t *cap; /* room */
    size_t size;   /* bytes a record */
} store_recs;
/* The record array `which` of run: pointers into the run and its private part, valid until the
 * run is freed (the array itself moves when it grows). */
store_recs store_run_recs(store_run *run, store_rec which);
/* Reserves room for `n` more records of `which`: exactly that when `exact` (one allocation for a
 * known count), else by doubling (store_grow). Returns 0 or STORE_ENOMEM (nothing changed). */
int store_run_reserve(store_run *run, store_rec which, uint64_t n, int exact);

/* Sorts n records of `size` bytes (int64 start at offset 0) in place when they are nearly
 * sorted; gives up (leaving a permutation) when they are not. Returns 1 when sorted. */
int store_sort_nearly(void *base, uint64_t n, size_t size);

/* Sorts n records of `size` bytes (an int64 start at offset 0) by start: each segment in place,
 * then one k-way merge. *pBase may be replaced. Returns 0 or STORE_ENOMEM. */
int store_sort_records(void **pBase, uint64_t n, size_t size, const store_segs *segs);

/* ---------------------------------------------------------------- loading one file */

/* What a file's launch row id resolves to. */
typedef struct launch_ref {
    store_idx stream, launch;
    int64_t base;      /* t0 + the process's clock offset */
    int valid;         /* 0: no such row; 1: read; 2: base overflows (its kernels are refused) */
    store_idx process; /* the run process, which counts refused kernels */
} launch_ref;

#define STORE_ERRLEN 1024 /* bytes of a loader's or a scan share's message */

/* Rows: a table smaller than this is not worth a connection of its own. */
#define STORE_MIN_SHARE ((uint64_t)1 << 18)

/* The row ids of one record table as the file's read transaction saw them. */
typedef struct store_rowids {
    uint64_t cap;     /* room for its rows: the span of row ids, bounded by the file's size */
    int64_t min, max; /* the smallest (1 in files tlview wrote) and the largest row id */
    int late;         /* API and range tables: 1 = read in phase 2, in shares beside the kernels
                         (those of STORE_MIN_SHARE rows or more, and any the caller sets) */
} store_rowids;

/* The state of one file being loaded (load_file.c; load.c drives it). */
typedef struct loader {
    store_run *run;
    const char *path;
    sqlite3 *db;
    store_guard guard; /* the file's time limit, for every connection to it */
    char err[STORE_ERRLEN];
    int64_t t0;
    store_clock clock;
    int64_t schema; /* the file's schema_version */
    /* file row id -> run index; ids are dense in every file tlview writes */
    store_idx *proc;
    uint64_t nproc;
    int64_t *offset; /* per file process id: clock offset */
    store_idx *ctx;
    uint64_t nctx;
    store_idx *str;
    uint64_t nstr;
    launch_ref *launch;
    uint64_t nlaunch;
    /* (file process id, ordinal) -> run device */
    struct ldev {
        int64_t process;
        uint32_t ordinal;
        store_idx device;
        uint32_t sm_count; /* the SMs the process's device row says it was shown */
    } * devs;
    uint64_t ndevs, cap_devs;
    store_rowids rows[4]; /* by store_rec: the kernel, API and range tables (copies: unused) */
    int meta_only; /* store_run_load_meta(): processes, devices, contexts and the streams of the
                      launch rows only; no strings, launches or records */
} loader;

/* A share of one file's kernel, API or range table: the rows with lo <= rowid <= hi (all rows
 * when lo is INT64_MIN), written to out[0 .. cap). A file's first kernel share reads through the
 * file's own connection; the others open their own, so shares of one file can be read side by
 * side. */
typedef struct scan_part {
    loader *L;
    store_rec kind; /* STORE_REC_KERNEL, _API or _RANGE */
    int64_t lo, hi;
    int own_db;      /* 1: open a connection of its own */
    void *out;       /* store_kernel, store_api or store_range by kind */
    uint64_t cap, n; /* room, rows read */
    int rc;
    char err[STORE_ERRLEN];
} scan_part;

/* Phase 1, serial: checks the file, reads everything but the kernels and the big API and range
 * tables into the run, and sizes what phase 2 reads (L->rows); with L->meta_only set, only what
 * store_run_load_meta() reads. Phase 2, on any thread: scans a share of one of those tables, in
 * start order when its rows were nearly so. */
int store_load_open(loader *L);
int store_load_scan(scan_part *s);
/* Ends the read transaction and closes the database; store_load_close() also frees L's maps. */
void store_load_close_db(loader *L);
void store_load_close(loader *L);

/* ---------------------------------------------------------------- writer internals (save.c) */

/* The file's context row for (process, context_id), created with kind 0 when new. */
int store_writer_context_row(store_writer *w, int64_t process, uint32_t context_id,
                             uint32_t device_id, int64_t *pRow);
/* The file's strings id of text (interned). A new row gets demangled as its demangled column
 * (NULL: left NULL, for the reader to demangle); when text is already there, its row is kept. */
int store_writer_string_id(store_writer *w, const char *text, const char *demangled, int64_t *pId);
/* The launch row for a signature on (context_row, stream_id); name_id from string_id. */
int store_writer_launch_id(store_writer *w, int64_t context_row, uint32_t stream_id,
                           int64_t name_id, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t registers, uint32_t static_smem, uint32_t dynamic_smem,
                           uint32_t local_mem, int64_t *pId);
/* A kernel row with ids already resolved; start is absolute on the writer's clock. */
int store_writer_kernel_row(store_writer *w, int64_t start, int64_t dur, int64_t launch_id,
                            uint32_t correlation_id);

/* printf into a fixed buffer. */
void store_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
