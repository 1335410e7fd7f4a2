/* importers/ private header: the reader object every importer fills (file, run, error text with its
 * row, unmapped counters, progress), the SQLite helpers shared by the nvprof and nsys importers,
 * the streaming JSON reader used by the Chrome importer, and the CUPTI cbid name tables. */
#ifndef IMP_INT_H
#define IMP_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "importers.h"

struct imp_reader {
    const imp_ops *ops;
    const char *path;       /* as given */
    store_run *run;         /* where records go */
    imp_error *err;         /* never NULL inside the importers */
    imp_stats *stats;       /* never NULL inside the importers */
    const imp_options *opt; /* never NULL */
    int64_t row;            /* current row (SQLite) or line (JSON), for messages */
    const char *table;      /* table of the last query built by imp_sql_select, or NULL */
    void *state;            /* the format's own state, owned by open/close */
    uint64_t progress_next; /* next `done` worth reporting */
    uint64_t rows_done;     /* SQLite: record rows read so far, of */
    uint64_t rows_total;    /* the rows of every table to read (0: unknown), for progress */
    store_guard guard;      /* SQLite: the file's time limit (imp_sql_open), for every query */
    uint64_t max_events;    /* Chrome: records the run may keep (imp_options.max_events) */
    uint64_t max_memory;    /* Chrome: bytes the run's imports may hold (imp_options.max_memory) */
    uint64_t events;        /* Chrome: records kept so far, the run's earlier files' included */
    uint64_t memory;        /* bytes held so far, as counted by imp_charge(), the same way */
    uint64_t events_before; /* of events, the run's earlier files' (imp_options.total) */
    uint64_t memory_before; /* of memory, the run's earlier files' (imp_options.total) */
    /* SQLite: a database held in memory (from sqlite3_malloc64()), which imp_sql_open() opens
     * instead of path and hands to SQLite (an NVVP session's embedded nvprof database); NULL
     * for a file */
    unsigned char *image;
    uint64_t nimage; /* bytes of image */
};

/* Sets r->max_events and r->max_memory from r->opt, else the environment (TLVIEW_MAX_EVENTS,
 * TLVIEW_MAX_MEMORY in MiB; 0: no limit), else IMP_MAX_EVENTS and IMP_MAX_MEMORY. 0, or
 * STORE_EINVAL with the error set for a value that is not a whole number. */
int imp_limits(imp_reader *r);

/* Counts `bytes` more held by this import (an estimate of what grows with the file: the JSON
 * arena, kept records, new strings, declarations). 0, or STORE_ENOMEM with the error "the
 * import would hold more than N MiB (the limit; TLVIEW_MAX_MEMORY=N (MiB) raises it)" once the
 * total passes r->max_memory ("... more than N MiB in the run (M MiB of it for the files before
 * this one; the limit holds for the run's total; ...)" when earlier files hold some). What is
 * freed before the import ends is given back by subtracting it from r->memory. */
int imp_charge(imp_reader *r, uint64_t bytes);

/* Counts one more record kept toward r->max_events. 0, or STORE_ENOMEM with the error "more than
 * N events (the limit; TLVIEW_MAX_EVENTS=N raises it)" ("... more than N events in the run (M of
 * them in the files before this one; the limit holds for the run's total; ...)" when earlier
 * files kept some) once the run's records would pass the limit. */
int imp_count_event(imp_reader *r);

/* Records the first error (printf-style) with the reader's current row; returns `code`. */
int imp_fail(imp_reader *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Opens the reader's file for reading (store_fs_open_read(): a regular file, never blocking on
 * a FIFO): 0 with the descriptor in *pFd (the caller closes it), or imp_fail()'s STORE_EIO with
 * why ("not a regular file (a FIFO)", "cannot open: ..."). */
int imp_open(imp_reader *r, int *pFd /* OUT */);

/* Counts `n` records of `kind` that could not be mapped (file-level; written to process_meta by
 * imp_flush_meta()). */
void imp_unmapped(imp_reader *r, const char *kind, uint64_t n);

/* Counts a record of `process` refused because its time overflows (store_time_add failed): in
 * the process's rows_refused (which store_run_save keeps) and as unmapped kind "time_overflow". */
void imp_refuse(imp_reader *r, store_idx process);

/* Keeps the first non-fatal warning. */
void imp_warn(imp_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes import.* keys (format, counts, unmapped, warning, clock shift) on `process`. */
int imp_flush_meta(imp_reader *r, store_idx process);

/* Reports progress when enough happened since the last report; `done` stays below `total` until
 * imp_progress_end() (buffered readers reach the end of the file before the end of the data). */
void imp_progress(imp_reader *r, uint64_t done, uint64_t total);
/* Reports the end (done = total) once. */
void imp_progress_end(imp_reader *r, uint64_t total);

/* The run device of (process, CUDA ordinal), added on first use (store_run_add_device: merged
 * by uuid, else one per pair). STORE_NONE (error set) when out of memory. */
store_idx imp_device(imp_reader *r, store_idx process, const store_device_info *d);

/* A GPU the file describes (nvprof DEVICE, nsys TARGET_INFO_GPU, Chrome deviceProperties). */
typedef struct imp_gpu {
    int64_t id;             /* CUDA ordinal = the device id of activity records */
    store_device_info info; /* whether info.name is owned here is the importer's business */
    char uuid[33];          /* info.uuid points here when known */
} imp_gpu;

/* imp_device() for the CUDA ordinal device_id of `process`, described by the last of gpus[0..n)
 * with that id, else by the ordinal alone. STORE_NONE (error set) when out of memory. */
store_idx imp_gpu_device(imp_reader *r, store_idx process, const imp_gpu *gpus, size_t n,
                         uint32_t device_id);

/* Adds kernel *k with the launch signature *l (k->launch is set here). 0, or STORE_ENOMEM with
 * the error set. */
int imp_add_kernel(imp_reader *r, const store_launch *l, store_kernel *k);
/* Adds a copy, an API call, a range. 0, or STORE_ENOMEM with the error set. */
int imp_add_copy(imp_reader *r, const store_copy *c);
int imp_add_api(imp_reader *r, const store_api *a);
int imp_add_range(imp_reader *r, const store_range *g);

/* Makes room for one more element in the array *arr of n elements (`size` bytes each) with
 * capacity *cap: when n == *cap the array is reallocated to double the capacity (16 at first) and
 * *arr and *cap are updated; else nothing happens. 0, or STORE_ENOMEM with the error set ("out of
 * memory"), *arr and *cap then unchanged (the caller still frees *arr). */
int imp_grow(imp_reader *r, void **arr, size_t n, size_t *cap, size_t size);

/* Interns text, or "(unknown)" for NULL; STORE_NONE on out of memory. */
store_idx imp_intern(imp_reader *r, const char *text);

/* ----- SQLite helpers (imp_sql.c) */

/* 1 if the database has a table (or view) of that name. */
int imp_sql_has_table(sqlite3 *db, const char *table);

/* 1 when the database has a table named CUPTI_ACTIVITY_KIND_* (nvprof and Nsight Systems both
 * name their activity tables so); 0 otherwise or on error. */
int imp_sql_has_cupti_tables(sqlite3 *db);

/* The columns of a table, for building SELECTs from what a version really has. */
typedef struct imp_cols {
    int n;
    char **names;
} imp_cols;
int imp_sql_cols(imp_reader *r, sqlite3 *db, const char *table, imp_cols *cols /* OUT */);
void imp_sql_cols_free(imp_cols *cols);
int imp_sql_col_has(const imp_cols *cols, const char *name);

/* Prepares "SELECT <cols> FROM table [tail]" where a column the table lacks reads as NULL (so
 * one query serves every version); messages then name the table, and r->row counts from 0. The
 * columns named in `required` (NULL-terminated, may be NULL) must exist: else the error names the
 * table and the column. */
int imp_sql_select(imp_reader *r, sqlite3 *db, const char *table, const char *const *cols,
                   const char *const *required, const char *tail, sqlite3_stmt **ppStmt /* OUT */);

/* The loop over the record rows of a query from imp_sql_select():
 *     while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) { ... break with rc set on errors ... }
 *     return imp_sql_end(r, st, rc);
 * imp_sql_next() steps (as imp_sql_step()) and on SQLITE_ROW counts the row in r->row, for
 * messages, and in r->rows_done, for progress. imp_sql_end() finalizes st, puts r->row back to 0
 * and returns 0 when rc is SQLITE_DONE, else rc. */
int imp_sql_next(imp_reader *r, sqlite3_stmt *st);
int imp_sql_end(imp_reader *r, sqlite3_stmt *st, int rc);

/* Prepares sql; on failure records "<what>: <sqlite message>" and returns STORE_EFORMAT. */
int imp_sql_prepare(imp_reader *r, sqlite3 *db, const char *sql, sqlite3_stmt **ppStmt /* OUT */);

/* Steps; returns SQLITE_ROW, SQLITE_DONE, or a negative STORE_E* code after imp_fail. */
int imp_sql_step(imp_reader *r, sqlite3_stmt *st);

/* Counts rows of every table that has a time column (start or timestamp) and is not in `mapped`
 * (NULL-terminated list), as unmapped kind "table.<name without CUPTI_ACTIVITY_KIND_>". */
int imp_sql_count_unmapped(imp_reader *r, sqlite3 *db, const char *const *mapped);

/* Opens a file read-only as SQLite under store/'s guard on files from others (r->guard:
 * store_guard_start, store_guard_attach), as the native loader does: views and triggers off,
 * trusted_schema off, SQLITE_DBCONFIG_DEFENSIVE, values up to STORE_MAX_VALUE, and a time limit
 * of store_read_base_s + store_read_s_per_mib per MiB of the file and its WAL, after which queries
 * fail with "reading took over N s". The caller checks what it holds. With r->image set, that
 * database is opened instead (sqlite3_deserialize, read-only; its time limit follows from its
 * size) and belongs to the connection from then on, also on failure: r->image is NULL after. */
int imp_sql_open(imp_reader *r, sqlite3 **pdb /* OUT */);

/* 0 when `table` is a plain table (or absent); else fails naming it ("'X' is a view, not a
 * table", a virtual table, a generated column: store_guard_tables). imp_sql_cols (so
 * imp_sql_select) checks every table it is given; queries written by hand check theirs with
 * this. */
int imp_sql_table(imp_reader *r, sqlite3 *db, const char *table);

/* Total rows of the named tables that exist (for progress); 0 when unknown. */
uint64_t imp_sql_total_rows(sqlite3 *db, const char *const *tables);

/* Id -> text tables read from the database (nvprof StringTable, nsys StringIds and NVTX domain
 * names); the text is interned into the run only when a record uses it. */
typedef struct imp_str {
    int64_t id;
    char *text;
    store_idx idx; /* interned text, STORE_NONE until first used */
} imp_str;

typedef struct imp_strs {
    imp_str *v; /* sorted by id */
    size_t n, cap;
} imp_strs;

/* Appends the (id, text) rows of st (columns 0 and 1) to the empty table t, then finalizes st.
 * Rows with a NULL id or text are skipped; t ends sorted by id (a query already ordered by id is
 * kept as it is). With count_rows, r->row counts the rows read, for messages, and is 0 again on
 * return. 0, or a negative STORE_E* code with the error set (t keeps what was read). */
int imp_strs_load(imp_reader *r, sqlite3_stmt *st, imp_strs *t, int count_rows);
/* The entry of an id (the first of equal ids), or NULL. */
imp_str *imp_strs_find(const imp_strs *t, int64_t id);
/* s's text interned, on first use; STORE_NONE (error set) when out of memory. */
store_idx imp_str_intern(imp_reader *r, imp_str *s);
void imp_strs_free(imp_strs *t);

/* ----- streaming JSON reader (imp_json.c) */

typedef enum { IMP_JNULL, IMP_JFALSE, IMP_JTRUE, IMP_JNUM, IMP_JSTR, IMP_JARR, IMP_JOBJ } imp_jtype;

typedef uint32_t imp_jref; /* node index in the current arena */
#define IMP_JNONE UINT32_MAX

#define IMP_JSON_MAX_STRING (1u << 20) /* longest string or number token, bytes */
#define IMP_JSON_MAX_NODES (1u << 20)  /* values in one parsed element */
#define IMP_JSON_MAX_DEPTH 64

typedef struct imp_json imp_json;

/* Opens a JSON file, plain or gzip. */
int imp_json_open(imp_reader *r, imp_json **pj /* OUT */);
void imp_json_close(imp_json *j);
/* Next significant byte without consuming it, or -1 at the end of the input. */
int imp_json_peek(imp_json *j);
/* Consumes the next significant byte, which must be c. */
int imp_json_expect(imp_json *j, int c);
/* Forgets every parsed node (the arena is reused). */
void imp_json_reset(imp_json *j);
/* Parses one value into the arena. */
int imp_json_parse(imp_json *j, imp_jref *out /* OUT */);
/* Reads and drops one value, keeping no more than one byte at a time. */
int imp_json_skip(imp_json *j);
/* Bytes of the file read so far (compressed bytes for gzip) and the file size. */
uint64_t imp_json_offset(imp_json *j);
uint64_t imp_json_size(imp_json *j);
/* Bytes of its arena (values and text) the reader counted toward the memory limit (imp_charge),
 * to give back when it is closed; 0 for NULL. */
uint64_t imp_json_charged(const imp_json *j);

imp_jtype imp_json_type(const imp_json *j, imp_jref v);
/* Member of an object by key (exact), or IMP_JNONE. */
imp_jref imp_json_get(const imp_json *j, imp_jref obj, const char *key);
/* Member by key, ASCII case-insensitive. */
imp_jref imp_json_geti(const imp_json *j, imp_jref obj, const char *key);
/* The first element of an array or member of an object, and the one after v; IMP_JNONE ends.
 * Walk long arrays so: imp_json_at() is linear in i. */
imp_jref imp_json_first(const imp_json *j, imp_jref v);
imp_jref imp_json_next(const imp_json *j, imp_jref v);
/* Element i of an array, or IMP_JNONE (walks i elements: for short arrays). */
imp_jref imp_json_at(const imp_json *j, imp_jref arr, uint32_t i);
uint32_t imp_json_len(const imp_json *j, imp_jref v);
/* A string's (or number's) text, NUL-terminated; NULL for other types. */
const char *imp_json_str(const imp_json *j, imp_jref v);
/* An integer value: numbers (truncated), or strings whose text ends in digits ("stream 7");
 * returns 0 and leaves *out when absent or not a number. */
int imp_json_int(const imp_json *j, imp_jref v, int64_t *out);
/* A decimal number scaled by 1000 exactly, rounded (microseconds -> ns); 0 when not a number. */
int imp_json_milli(const imp_json *j, imp_jref v, int64_t *out);

/* ----- CUPTI callback names (cbid.c, generated) */
extern const char *const imp_cbid_runtime[];
extern const unsigned imp_cbid_runtime_count;
extern const char *const imp_cbid_driver[];
extern const unsigned imp_cbid_driver_count;

#endif
