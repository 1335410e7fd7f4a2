/* store: the tlview file format (SQLite, described in store/SCHEMA.md), its writer, and the
 * in-memory run model that every reader of tlview works on.
 *
 * Writing: store_writer_open() creates a new file (never overwriting one), then rows are added
 * inside store_writer_begin()/store_writer_commit() batches; store_writer_close() ends it.
 * Reading: store_run_new() makes an empty run; store_run_load() appends one file's processes to it
 * (importers append theirs through the store_run_add_* builder calls); store_run_finish() sorts
 * and indexes it; store_run_free() frees it. store_run_save() writes a run as one file. Every
 * reader of a SQLite file from others (the loader, the nvprof and nsys importers) guards its
 * connections with store_guard_*() (bottom of this header).
 *
 * The run model is plain data (public structs in arrays) rather than an opaque handle: the
 * analysis walks tens of millions of kernels and must read them without a call per field. It is
 * owned by the store_run and is read-only for everyone but its builders.
 *
 * Errors: every call returns 0 (STORE_OK) or a negative STORE_E* code; the message is kept on the
 * handle (store_writer_errmsg(), store_run_errmsg()) and always names the file. */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define STORE_SCHEMA_VERSION 3     /* written into new files */
#define STORE_MIN_READER_VERSION 1 /* written into new files: v2 and v3 only added to v1 */
#define STORE_READER_VERSION 3     /* files with a higher min_reader_version are refused */

enum {
    STORE_OK = 0,
    STORE_EIO = -1,     /* the file system or SQLite failed (disk full, unwritable, ...) */
    STORE_EEXIST = -2,  /* store_writer_open: the file already exists */
    STORE_EFORMAT = -3, /* not a tlview file: not SQLite, another database, truncated */
    STORE_ENEWER = -4,  /* written by a newer tlview than this one */
    STORE_EINVAL = -5,  /* bad argument */
    STORE_ENOMEM = -6,
};

/* ---------------------------------------------------------------- writer */

typedef struct store_writer store_writer;

/* Which clock the absolute times handed to the writer are on (meta.clock). */
typedef enum { STORE_CLOCK_CUPTI = 0, STORE_CLOCK_REALTIME = 1 } store_clock;

/* Describes one process; strings may be NULL; they are copied. */
typedef struct store_process_info {
    int64_t pid, ppid;
    const char *host;   /* gethostname() */
    const char *exe;    /* executable path */
    const char *argv;   /* command line, space separated */
    const char *run_id; /* TLVIEW_RUN_ID or NULL */
    const char *source; /* "libcollect", "nvprof", "nsys", "chrome" */
    int64_t start_wall; /* CLOCK_REALTIME ns at start, 0 if unknown */
} store_process_info;

typedef struct store_device_info {
    uint32_t device_id; /* CUDA ordinal as seen by the process */
    const char *uuid;   /* 32 lowercase hex digits, or NULL */
    const char *name;   /* "NVIDIA H200" */
    uint32_t sm_count;  /* multiprocessors */
    uint32_t cc_major, cc_minor;
    uint64_t global_memory; /* bytes */
} store_device_info;

/* One kernel execution, absolute times on the writer's clock. `name` is copied (interned). */
typedef struct store_kernel_info {
    int64_t start, end;                 /* ns */
    uint32_t device_id;                 /* CUDA ordinal */
    uint32_t context_id;                /* CUDA context id */
    uint32_t stream_id;                 /* CUDA stream id */
    uint32_t correlation_id;            /* links to the launching API call */
    uint32_t grid[3], block[3];         /* x, y, z */
    uint32_t registers;                 /* per thread */
    uint32_t static_smem, dynamic_smem; /* bytes per block */
    uint32_t local_mem;                 /* bytes per thread */
    const char *name;                   /* mangled name as CUPTI gives it */
} store_kernel_info;

typedef struct store_memcpy_info {
    int64_t start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t copy_kind;          /* CUpti_ActivityMemcpyKind */
    uint32_t src_kind, dst_kind; /* CUpti_ActivityMemoryKind */
    uint64_t bytes;
    uint32_t flags;
} store_memcpy_info;

typedef struct store_memset_info {
    int64_t start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t value;
    uint64_t bytes;
    uint32_t mem_kind; /* CUpti_ActivityMemoryKind */
} store_memset_info;

typedef enum { STORE_API_RUNTIME = 1, STORE_API_DRIVER = 2 } store_api_domain;

typedef struct store_api_info {
    int64_t start, end;
    uint64_t thread_id;
    uint32_t correlation_id;
    store_api_domain domain;
    uint32_t cbid;    /* CUPTI callback id */
    const char *name; /* "cudaLaunchKernel" (interned) */
    int32_t status;   /* return value */
} store_api_info;

typedef struct store_range_info {
    int64_t start, end;
    uint64_t thread_id;
    const char *domain; /* NVTX domain or NULL */
    const char *name;   /* the range's message */
} store_range_info;

/* Creates `path` as a new tlview file and writes its tables and meta rows. The file must not
 * exist: then STORE_EEXIST is returned and nothing is touched (it is created with O_EXCL). Other
 * failures (unwritable folder, ...) give STORE_EIO, and a half-made file is removed. `t0` is the
 * time base (absolute ns on `clock`) every later row is stored relative to. On success *ppW owns
 * the open file, which stays in WAL mode until closed (committed batches survive a SIGKILL); on
 * error *ppW is still set (unless out of memory) so the message can be read, and must be closed.
 * A writer is used by one thread at a time; never carry it across fork(). */
int store_writer_open(const char *path, store_clock clock, int64_t t0,
                      store_writer **ppW /* OUT */);

/* The last error of the writer, naming the file ("" when none). Owned by the writer. */
const char *store_writer_errmsg(const store_writer *w);

/* The file's path as opened. */
const char *store_writer_path(const store_writer *w);

/* Sets a file-level meta row, e.g. ("writer", "libcollect 0.1.0"); the reserved keys format,
 * schema_version, min_reader_version, t0 and clock must not be changed. */
int store_writer_meta(store_writer *w, const char *key, const char *value);

/* Adds a process; *pId receives its row id for later calls. Commits at once (not batched).
 * Calls on a writer whose open failed return STORE_EINVAL. */
int store_writer_process(store_writer *w, const store_process_info *p, int64_t *pId /* OUT */);

/* Sets or replaces a process_meta key. Value NULL deletes nothing and stores NULL. */
int store_writer_process_meta(store_writer *w, int64_t process, const char *key, const char *value);
int store_writer_process_meta_int(store_writer *w, int64_t process, const char *key, int64_t value);

/* Marks the process finished: end_wall and complete are set; error may be NULL. */
int store_writer_process_end(store_writer *w, int64_t process, int64_t end_wall, int complete,
                             const char *error);

/* Records the reason tracing stopped or is incomplete (process.error), keeping complete = 0. */
int store_writer_process_error(store_writer *w, int64_t process, const char *error);

/* Adds a clock calibration pair (label "start" or "end"). */
int store_writer_calibration(store_writer *w, int64_t process, const char *label, int64_t cupti,
                             int64_t realtime, int64_t monotonic);

/* Adds or replaces a device of the process. */
int store_writer_device(store_writer *w, int64_t process, const store_device_info *d);

/* What CUDA says of one context (CUPTI's CONTEXT record, CUpti_ActivityContext3). */
typedef struct store_context_info {
    uint32_t context_id;        /* CUDA's id, unique within the process */
    uint32_t device_id;         /* CUDA ordinal */
    uint32_t compute_api_kind;  /* 1 CUDA, 2 CUDA under MPS, 0 unknown */
    uint32_t null_stream_id;    /* the context's NULL stream */
    uint8_t green;              /* 1: a green context (cuGreenCtxCreate: an SM partition) */
    uint32_t parent_context_id; /* a green context's parent context id; 0 none or unknown */
    uint32_t sm_count;          /* SMs the context may use (green); 0 unknown or whole device */
} store_context_info;

/* Adds or updates the context (process, c->context_id) with everything in *c (copied). A
 * context first seen through a kernel, memcpy or memset is created with kind 0 and no green
 * fields (NULL in the file) and is completed by this call, which overwrites every field. 0,
 * STORE_EINVAL (c NULL, or the writer's open failed) or STORE_EIO with the message on w. */
int store_writer_context(store_writer *w, int64_t process, const store_context_info *c);

/* Row batching: rows added between begin and commit land in one transaction. Rows added outside
 * a batch are committed one by one (slow; meant for metadata). Commit returns STORE_EIO when the
 * batch did not reach the file: the COMMIT failed, or SQLite rolled the batch back on its own
 * after a failed row (disk full), in which case none of its rows were kept. */
int store_writer_begin(store_writer *w);
int store_writer_commit(store_writer *w);

/* Record rows. A record whose end is before its start is refused with STORE_EINVAL (nothing
 * is written, the writer stays usable). Contexts first met here are created (kind 0) with the
 * record's device; names are interned. STORE_EIO when SQLite fails (disk full). */
int store_writer_kernel(store_writer *w, int64_t process, const store_kernel_info *k);
int store_writer_memcpy(store_writer *w, int64_t process, const store_memcpy_info *m);
int store_writer_memset(store_writer *w, int64_t process, const store_memset_info *m);
int store_writer_api(store_writer *w, int64_t process, const store_api_info *a);
int store_writer_range(store_writer *w, int64_t process, const store_range_info *r);

/* ---- capture ranges and the flight recorder (what libcollect's TLVIEW_CAPTURE* and
 * TLVIEW_FLIGHT write; store/SCHEMA.md, table capture) ---- */

/* Opens a capture range of `process` at `start` (absolute, on the writer's clock): the span in
 * which every kernel, copy, API call and NVTX range the process launched is in the file. name
 * may be NULL; start_reason says what opened it ("start", "delay", "cudaProfilerStart",
 * "control"). The range stays open (dur 0, end_reason NULL) until store_writer_capture_end();
 * *pId receives its row id. 0, STORE_EINVAL or STORE_EIO with the message on w. */
int store_writer_capture(store_writer *w, int64_t process, int64_t start, const char *name,
                         const char *start_reason, int64_t *pId /* OUT */);

/* Moves the end of capture range `id` to `end` (absolute; an end before the range's start is
 * taken as its start). end_reason NULL keeps the range open: it is known to reach `end`, which
 * is what a killed process leaves; otherwise it is closed ("duration", "cudaProfilerStop",
 * "control", "exit"). */
int store_writer_capture_end(store_writer *w, int64_t id, int64_t end, const char *end_reason);

/* How far the record tables reach: the largest rowid of kernel, memcpy, memset, api and range
 * (0 for an empty table), in that order. */
typedef struct store_rowmark {
    int64_t row[5];
} store_rowmark;

/* Reads the tables' current ends into *out. */
int store_writer_rowmark(store_writer *w, store_rowmark *out /* OUT */);

/* The flight recorder's rotation: deletes the record rows up to `upto` (each table's rows with
 * rowid <= its mark; the table's last row is always kept, so that new rows keep getting larger
 * rowids) and trims the capture ranges to begin no earlier than `from` (absolute; a closed range
 * that ends before `from` is deleted, an open one is kept from `from` on). One transaction, or part
 * of the open batch. SQLite reuses the freed pages, so a file pruned as it grows stays the size of
 * what it keeps. */
int store_writer_prune(store_writer *w, const store_rowmark *upto, int64_t from);

/* The bytes the file's data takes now: pages in use (the free list left out) times the page
 * size. */
int store_writer_used_bytes(store_writer *w, int64_t *pBytes /* OUT */);

/* Writes a consistent copy of what is committed to `path` (VACUUM INTO; not inside a batch):
 * a plain file (no WAL) whose open capture ranges are closed at `at` (absolute) with end_reason
 * "dump", and whose processes carry process_meta 'snapshot' = 1. `path` must not exist
 * (STORE_EEXIST); on any failure nothing is left at `path`, the message is in err (errlen
 * bytes) and the writer goes on unharmed. *pKernels (may be NULL): the copy's kernel rows. */
int store_writer_snapshot(store_writer *w, const char *path, int64_t at, int64_t *pKernels,
                          char *err, size_t errlen);

/* Commits an open batch, folds the WAL back into the file and leaves it in rollback-journal mode
 * (one plain .db file), closes it and frees w (NULL is a no-op). Returns the first error met
 * while closing. It does not mark processes complete: call store_writer_process_end() first. */
int store_writer_close(store_writer *w);

/* ---------------------------------------------------------------- run model */

/* Index types: positions in the run's arrays. */
typedef uint32_t store_idx;
#define STORE_NONE UINT32_MAX

/* Every time a reader puts in a run (store_run_load and the SQL importers) lies within
 * [-STORE_TIME_MAX, STORE_TIME_MAX] ns (+-146 years around 1970), so the difference of any two
 * fits in an int64; a record outside is refused and counted (store_process.rows_refused). */
#define STORE_TIME_MAX ((int64_t)1 << 62)

/* The most a run's times may lie apart (first to last start or end of its records and capture
 * ranges, those within +-STORE_TIME_MAX): 2^61 ns, 73 years. Each time fits +-STORE_TIME_MAX, but
 * two at opposite ends would lie 2^63 apart; within one span, a difference of two times and the sum
 * of three differences fit in an int64, so a merged run of a relative clock (Kineto's ~0) and an
 * epoch one (~1.8e18) still fits until 2043. store_run_finish() refuses a wider run
 * (STORE_EFORMAT). */
#define STORE_SPAN_MAX ((int64_t)1 << 61)

/* *out = a + b when the sum fits in [-STORE_TIME_MAX, STORE_TIME_MAX]; 0 (and *out untouched)
 * otherwise: files carry any value, and such a record has no place on the time axis (its reader
 * refuses it and counts it in store_process.rows_refused). */
static inline int store_time_add(int64_t a, int64_t b, int64_t *out)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s) || s > STORE_TIME_MAX || s < -STORE_TIME_MAX)
        return 0;
    *out = s;
    return 1;
}

typedef struct store_process {
    int64_t pid, ppid;
    const char *host, *exe, *argv, *run_id, *source; /* owned by the run; may be NULL */
    const char *file;                                /* the file it was read from */
    int64_t start_wall, end_wall; /* common axis (CLOCK_REALTIME ns), 0 if unknown */
    int complete;                 /* 1 if the collector finished cleanly */
    const char *error;            /* process.error or NULL */
    int64_t clock_offset;         /* added to the file's absolute times to reach the common axis */
    int64_t clock_drift;          /* end-pair offset minus start-pair offset, ns (0 if unknown) */
    uint64_t records_dropped;     /* from process_meta; 0 if unknown */
    uint64_t rows_refused; /* records of this process a reader refused because their times lie
                              outside +-STORE_TIME_MAX (overflow: a hostile or damaged file);
                              they are not in the run. Saved as process_meta 'rows_refused'. */
    const char **meta_keys, **meta_values; /* process_meta, nmeta pairs */
    uint32_t nmeta;
} store_process;

/* The value of process_meta key `key` of p (the first pair of that key), NULL when absent.
 * Owned by the run. */
const char *store_process_meta_get(const store_process *p, const char *key);

/* A whole decimal number >= 0 in s (nothing else, no sign, no blank): 1 with *pV set, 0
 * otherwise (s NULL, not a number, beyond int64). */
int store_parse_count(const char *s, int64_t *pV /* OUT */);

/* The active thread percentage process p ran its MPS clients at (0 < x <= 100), from its
 * process_meta env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (what libcollect records); 0 when not set or
 * not a number in (0, 100]. The reader gives it to the process's MPS client contexts
 * (store_context.thread_pct). */
double store_thread_pct(const store_process *p);

/* Which rank of which launch a process was (store_process_rank). */
typedef struct store_rank {
    int64_t rank;         /* its rank in the job (world), -1 when not known */
    int64_t local_rank;   /* its rank among the job's processes on its host, -1 when not known */
    int64_t world_size;   /* the job's number of ranks (> 0), -1 when not known */
    const char *launcher; /* whose variables gave the rank: "openmpi", "pmix", "pmi", "slurm",
                             "mvapich2", "torchrun"; "pytorch" for a PyTorch profiler trace's
                             distributedInfo; NULL when not known. Static. */
} store_rank;

/* The launcher's rank of process p, from the variables libcollect records in process_meta
 * (store/SCHEMA.md): the rank is the first of env.OMPI_COMM_WORLD_RANK (openmpi), PMIX_RANK
 * (pmix), PMI_RANK (pmi), SLURM_PROCID (slurm), MV2_COMM_WORLD_RANK (mvapich2), RANK (torchrun)
 * that holds a whole number; the local rank and the world size are that launcher's
 * (OMPI_COMM_WORLD_LOCAL_RANK / OMPI_COMM_WORLD_SIZE, MPI_LOCALRANKID / PMI_SIZE, SLURM_LOCALID /
 * SLURM_NTASKS, MV2_COMM_WORLD_LOCAL_RANK, LOCAL_RANK / WORLD_SIZE), else those of the first
 * later launcher in that order whose own rank variable holds the same rank (srun --mpi=pmix:
 * PMIX_RANK, then Slurm's). Without any, a PyTorch profiler trace's distributedInfo as its
 * importer keeps it (process_meta chrome.rank, chrome.world_size; launcher "pytorch", no local
 * rank). Returns 1 when the rank is known, 0 when not (*out then says -1 and NULL throughout);
 * the local rank and the size may be unknown (-1) with a known rank. */
int store_process_rank(const store_process *p, store_rank *out /* OUT */);

typedef struct store_device {
    const char *uuid; /* merge key; NULL when unknown (see store_run_add_device) */
    const char *name;
    uint32_t sm_count, cc_major, cc_minor;
    uint64_t global_memory;
    uint8_t inferred; /* 1: no uuid; stands for the devices of 2 or more processes that were
                         matched by host, ordinal, name and memory (store_run_add_device) */
} store_device;

typedef struct store_context {
    store_idx process;         /* index into processes */
    store_idx device;          /* index into devices (merged by uuid) */
    uint32_t context_id;       /* CUDA's id, unique within the process only */
    uint32_t compute_api_kind; /* 1 CUDA, 2 MPS client, 0 unknown */
    uint8_t green;             /* 1: a green context (its own SM partition); 0 no or unknown */
    uint32_t parent_id;        /* a green context's parent CUDA context id; 0 none or unknown */
    uint32_t sm_count;         /* SMs the context may use: a green context's partition; an MPS
                                  client's limited by an active thread percentage (what the
                                  device reported to the client: the context row where the
                                  file gives it, else its process's device row); 0 unknown or
                                  the whole device */
    float thread_pct;          /* an MPS client's active thread percentage (0 < x <= 100), from
                                  its process's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
                                  (store_thread_pct); 0 not limited or not known */
} store_context;

typedef struct store_stream {
    store_idx context;  /* index into contexts */
    uint32_t stream_id; /* CUDA's id, unique within the context only */
} store_stream;

/* A launch signature: what the solo-duration reference is keyed on (with the stream dropped). */
typedef struct store_launch {
    store_idx name; /* index into strings */
    uint32_t grid[3], block[3];
    uint32_t registers, static_smem, dynamic_smem;
} store_launch;

/* 32 bytes: the run holds one per kernel, so keep it small. */
typedef struct store_kernel {
    int64_t start, end;      /* common axis, ns */
    store_idx stream;        /* index into streams (stream -> context -> process, device) */
    store_idx launch;        /* index into launches */
    uint32_t correlation_id; /* unique per process */
    uint32_t flags;          /* reserved, 0 */
} store_kernel;

typedef enum { STORE_COPY_MEMCPY = 1, STORE_COPY_MEMSET = 2 } store_copy_type;

typedef struct store_copy {
    int64_t start, end; /* common axis */
    store_idx stream;
    uint32_t correlation_id;
    uint16_t type; /* store_copy_type */
    uint16_t kind; /* memcpy: CUpti_ActivityMemcpyKind; memset: memory kind */
    uint64_t bytes;
} store_copy;

typedef struct store_api {
    int64_t start, end;
    store_idx process;
    uint32_t correlation_id;
    uint64_t thread_id;
    store_idx name;  /* index into strings */
    uint16_t domain; /* store_api_domain */
    int32_t status;
} store_api;

typedef struct store_range {
    int64_t start, end;
    store_idx process;
    uint64_t thread_id;
    store_idx domain; /* index into strings or STORE_NONE */
    store_idx name;
} store_range;

/* A capture range of one process (libcollect, TLVIEW_CAPTURE* and TLVIEW_FLIGHT): every kernel,
 * copy, API call and NVTX range the process launched between start and end is in the run; what
 * it launched outside its capture ranges is not (a kernel launched inside that ran past the end
 * is kept whole). A file without capture ranges (older files, other sources) holds the whole
 * run. */
typedef struct store_capture {
    int64_t start, end;       /* common axis, ns */
    store_idx process;        /* index into processes */
    const char *name;         /* `tlview capture start --name`; NULL when unnamed */
    const char *start_reason; /* what opened it: "start", "delay", "cudaProfilerStart",
                                 "control"; NULL when not known */
    const char *end_reason;   /* what closed it: "duration", "cudaProfilerStop", "control",
                                 "exit", "dump"; NULL when it was never closed (the process was
                                 killed inside it: end is the last time the collector wrote) */
} store_capture;

typedef struct store_string {
    const char *text;      /* as recorded (mangled) */
    const char *demangled; /* readable form; == text when not mangled: never NULL, what
                              people read (the report, the page) */
} store_string;

typedef struct store_run {
    store_process *processes;
    uint32_t nprocesses;
    store_device *devices;
    uint32_t ndevices;
    store_context *contexts;
    uint32_t ncontexts;
    store_stream *streams;
    uint32_t nstreams;
    store_launch *launches;
    uint32_t nlaunches;
    store_string *strings;
    uint32_t nstrings;
    store_kernel *kernels;
    uint64_t nkernels; /* sorted by start after store_run_finish */
    store_copy *copies;
    uint64_t ncopies; /* sorted by start */
    store_api *apis;
    uint64_t napis; /* sorted by start */
    store_range *ranges;
    uint64_t nranges; /* sorted by start */
    store_capture *captures;
    uint32_t ncaptures;     /* in the order read: by process, then start */
    int64_t t_begin, t_end; /* min start / max end over all records (0, 0 when empty) */
    void *priv;             /* builder state: interning tables, error text, arenas */
} store_run;

/* A new empty run. NULL when out of memory. Free with store_run_free(). */
store_run *store_run_new(void);

/* How a run identifies GPUs that have no uuid (PyTorch/Kineto traces, some nvprof files).
 * separate = 0 (the default): a device without a uuid is matched across the run's processes
 * by (host of the process, CUDA ordinal, name, global memory), so processes that shared one
 * GPU share one store_device (marked inferred). separate = 1: each process keeps its GPUs
 * apart, one device per (process, ordinal). A process whose process_meta says gpu_identity =
 * separate is kept apart in either mode; store_run_save() writes that key for the processes
 * kept apart, so a merged file remembers the choice. Call before the first device is added
 * (before loading): later calls return STORE_EINVAL with the message on the run. */
int store_run_set_gpu_identity(store_run *run, int separate);

/* Frees the run and everything it owns. NULL is a no-op. */
void store_run_free(store_run *run);

/* A text that names what the run was read from, for its reader's caches (cli/: the cache key of
 * its input files); copied, NULL clears it. A run made otherwise (store_run_restrict, a new run)
 * has none, so nothing cached for its inputs is taken for it. 0 or STORE_ENOMEM. */
int store_run_set_key(store_run *run, const char *key);

/* The run's key (store_run_set_key), NULL when none. Owned by the run. */
const char *store_run_key(const store_run *run);

/* The last error met by a load/save on this run ("" when none); it names the file. */
const char *store_run_errmsg(const store_run *run);

/* Sets the run's error message (printf-style); returns `code`. For importers, which report
 * through the run like the native loader does. */
int store_run_error(store_run *run, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads the tlview file at `path` and appends its processes and records to the run, on the common
 * time axis. A file that is not a tlview file fails with STORE_EFORMAT, one written by a newer
 * tlview with STORE_ENEWER, a missing or unreadable one with STORE_EIO; the run is then
 * unchanged and store_run_errmsg() starts with the path. The file is opened read-write when
 * possible (never created) so that a killed writer's WAL is recovered. Devices are merged by
 * uuid; a context whose device has no row gets a device of its own (uuid NULL). Kernels are
 * appended unsorted: call store_run_finish() before reading them. */
int store_run_load(store_run *run, const char *path);

/* Every reader connection opened after this call (store_run_load*, store_probe) is read-only
 * when `on` is 1: it never writes the file, never recovers a killed writer's WAL and never
 * checkpoints or removes the WAL of a writer still at work, whose committed batches it still
 * reads (WAL mode: readers and the writer do not block each other). For files that are being
 * written (tlview serve --follow). Process-wide; 0 (the default) opens read-write when possible,
 * which recovers what a killed writer left. */
void store_set_read_only(int on);

/* Loads several files at once, as store_run_load() does one by one but faster: the kernel
 * tables are scanned on one thread per CPU, and files are opened 64 at a time (thousands of files
 * are fine). All or nothing: when one file fails, the run is left unchanged and the message names
 * that file. Processes appear in the order of `paths`. */
int store_run_load_files(store_run *run, const char *const *paths, uint32_t npaths);

/* Reads only what says which processes shared which GPU, for an index of many files (a job):
 * each file's process, process_meta, calibration, device and context rows, and a stream for each
 * (context, stream) of its launch rows, so a context with streams is one that ran kernels. No
 * strings, launches or records; the files are checked, their devices matched (uuid, or inferred:
 * store_run_add_device) and their failures reported as store_run_load_files() does, all or
 * nothing, one file open at a time. kernels[i] (may be NULL) receives the kernel rows of paths[i]
 * as the loader sizes them: the span of the kernel table's rowids (no count(*): that reads every
 * page), exact for the files tlview writes. Processes appear in the order of `paths`. */
int store_run_load_meta(store_run *run, const char *const *paths, uint32_t npaths,
                        uint64_t *kernels /* OUT: npaths counts, or NULL */);

/* True (1) when `path` starts like a tlview file (SQLite with a meta table whose format is
 * "tlview", or whose meta is not a plain table but a view...: loading it then says so); 0
 * otherwise. Never fails loudly: used for format detection. */
int store_probe(const char *path);

/* Sorts records by start and computes t_begin/t_end. Call once after the last load/add (calling it
 * again after more adds is allowed). The record arrays may be reallocated: pointers into
 * run->kernels/copies/apis/ranges taken before are invalid after it. Uses one thread per CPU
 * for large runs. STORE_ENOMEM when out of memory (the records are then unsorted);
 * STORE_EFORMAT, with the files at both ends named, when the run's times lie more than
 * STORE_SPAN_MAX apart (sorted, but not to be analysed or shown). */
int store_run_finish(store_run *run);

/* A copy of the finished run `src` restricted to [t0, t1) (common axis, ns): the same processes,
 * devices, contexts, streams, launch signatures and strings, at the same indices, and only the
 * records that count there, each kept whole (never clipped): a kernel, copy, API call or NVTX
 * range that is in flight at some instant of [t0, t1) (start < t1 and end > t0), or that has no
 * length and starts inside; and the capture ranges that overlap it. So a kernel that straddles
 * t0 or t1 keeps its whole duration, and the copy's t_begin/t_end may lie outside [t0, t1). The
 * copy is finished and owns everything (src may be freed first); *ppOut is freed with
 * store_run_free(). STORE_EINVAL (src NULL, t1 <= t0) or STORE_ENOMEM, *ppOut NULL then. */
int store_run_restrict(const store_run *src, int64_t t0, int64_t t1, store_run **ppOut /* OUT */);

/* The run's origin, the 0 of relative times (tlview's --from/--to, the page's time axis): the
 * start of its first kernel, or its first record when it has no kernel (a finished run). */
int64_t store_run_origin(const store_run *run);

/* A part of a run as tlview's --from/--to/--range ask for it (store_run_range). */
typedef struct store_range_ask {
    const char *name;         /* the captured ranges of this name, else the NVTX ranges of
                                 this name; NULL: the times below */
    int64_t from, to;         /* ns: relative to store_run_origin() or absolute (common axis) */
    uint8_t has_from, has_to; /* the end is given (else open: -+STORE_TIME_MAX) */
    uint8_t from_rel, to_rel; /* the end is relative to the origin */
} store_range_ask;

enum { STORE_RANGE_TIME = 0, STORE_RANGE_CAPTURE = 1, STORE_RANGE_NVTX = 2 }; /* its kind */

/* What store_run_range() found wrong. */
enum {
    STORE_RANGE_NONAME = 1, /* no captured or NVTX range of that name */
    STORE_RANGE_BEYOND = 2, /* origin + a relative end lies beyond +-STORE_TIME_MAX (*pT0 says
                               which: 0 from, 1 to) */
    STORE_RANGE_ORDER = 3,  /* the end is not after the start */
};

/* Resolves *ask on the finished run into [*pT0, *pT1) on the common axis and its kind
 * (STORE_RANGE_*). A name: the first start to the last end of every process's captured ranges of
 * that name (the capture table), else of its NVTX ranges of that name (a captured name wins); a
 * range of no length still names its instant (t1 = t0 + 1). Times: relative ends from
 * store_run_origin(run). Returns 0, or STORE_RANGE_NONAME, STORE_RANGE_BEYOND, STORE_RANGE_ORDER.
 */
int store_run_range(const store_run *run, const store_range_ask *ask, int64_t *pT0 /* OUT */,
                    int64_t *pT1 /* OUT */, int *pKind /* OUT */);

/* Writes the whole run as one new tlview file (clock realtime, t0 = run->t_begin, meta.writer =
 * writer_name), normally after store_run_finish(). Fails with STORE_EEXIST if `path` exists (the
 * file is untouched) and STORE_EIO when it cannot be written (a partial file is removed); the
 * message is on the run. Each process keeps the device ordinals it had; a process's clock_drift
 * is kept as process_meta 'clock_drift', its rows_refused (when not 0) as 'rows_refused', and a
 * process kept apart (store_run_set_gpu_identity) gets process_meta 'gpu_identity' =
 * 'separate'. The capture ranges are kept. */
int store_run_save(const store_run *run, const char *path, const char *writer_name);

/* --- builder calls, for importers (and the native loader). All strings are copied. The
 * store_idx calls return STORE_NONE when out of memory or given an index that does not exist.
 * Records from one source should be added after that source's store_run_add_process(): each
 * process starts a new sort segment, which keeps store_run_finish() fast. --- */

/* Interns a string; returns its index. The demangled form is computed here. */
store_idx store_run_intern(store_run *run, const char *text);
store_idx store_run_add_process(store_run *run, const store_process_info *p, const char *file);
/* Sets a process_meta pair; the keys records_dropped and gpu_identity (= separate: keep this
 * process's uuid-less GPUs apart) are also acted on. Add it before the process's devices.
 * rows_refused is not kept as a pair: its value is added to store_process.rows_refused (a file
 * made by a merge, or an export, said how many records were refused before this reading). */
int store_run_process_meta(store_run *run, store_idx process, const char *key, const char *value);
/* The run device of (process, d->device_id). Devices with a uuid are merged by uuid. A device
 * without one is the same device for the same (process, ordinal); across processes it is
 * matched to a uuid-less device of another process with the same host (NULL matches only
 * NULL), ordinal, name and global_memory, which is then marked inferred; a NULL name never
 * matches, nor does a process kept apart (store_run_set_gpu_identity). Fields the device lacks
 * are filled from d. */
store_idx store_run_add_device(store_run *run, store_idx process, const store_device_info *d);
/* The CUDA ordinal under which `process` saw run device `device`, or STORE_NONE when it did not
 * see it. */
uint32_t store_run_device_ordinal(const store_run *run, store_idx process, store_idx device);
/* Finds or creates the context (process, context_id); device may be STORE_NONE when unknown. */
store_idx store_run_context(store_run *run, store_idx process, uint32_t context_id,
                            store_idx device, uint32_t compute_api_kind);
/* Sets what CUDA says of a context's SM partition: green (1: a green context), the parent
 * context's CUDA id and the SMs it may use. 0 means unknown and leaves a value set before.
 * STORE_EINVAL when `context` does not exist. */
int store_run_context_green(store_run *run, store_idx context, /* from store_run_context */
                            int green,                         /* 1: a green context */
                            uint32_t parent_id,                /* parent's CUDA context id */
                            uint32_t sm_count);                /* SMs it may use */
store_idx store_run_stream(store_run *run, store_idx context, uint32_t stream_id);
store_idx store_run_launch(store_run *run, const store_launch *l);
/* Appends a record (times already on the common axis). Returns 0 or STORE_ENOMEM. */
int store_run_add_kernel(store_run *run, const store_kernel *k);
int store_run_add_copy(store_run *run, const store_copy *c);
int store_run_add_api(store_run *run, const store_api *a);
int store_run_add_range(store_run *run, const store_range *r);
/* Appends a capture range (times on the common axis, strings copied). 0, STORE_EINVAL (no such
 * process, end before start) or STORE_ENOMEM. */
int store_run_add_capture(store_run *run, const store_capture *c);

/* The process a kernel belongs to, and its device (helpers over the index chain). The device is
 * STORE_NONE only for contexts an importer created without a device. */
static inline store_idx store_kernel_process(const store_run *run, const store_kernel *k)
{
    return run->contexts[run->streams[k->stream].context].process;
}
static inline store_idx store_kernel_device(const store_run *run, const store_kernel *k)
{
    return run->contexts[run->streams[k->stream].context].device;
}

/* Asks the kernel to back block p (from malloc, calloc or realloc; NULL is ignored) with huge
 * pages when it is large (32 MiB or more: glibc then holds it in a mapping of its own, which the
 * advice covers whole, so that realloc can still move it by remapping and the advice moves with
 * it). The big record, analysis and index arrays then fault 2 MiB at a time instead of 4 KiB (a
 * page fault cost 17 us on the virtual machine of bench/bench_serve.md) and miss the TLB less.
 * Only a hint: nothing changes where transparent huge pages are off or the block is elsewhere. */
void store_hint_huge(void *p);

/* A flat block of bytes written or read piece by piece, each piece at a multiple of 8 bytes (the
 * frozen analysis and viewport index of the cache: analysis/freeze.c, web/web_freeze.c).
 * Written: b grows (malloc'd, the writer's to free), n is its length. Read: b is the caller's
 * block of cap bytes, n where the next piece starts. bad: memory ran out (written) or a piece lay
 * beyond the end (read); once set, the calls below do nothing. */
typedef struct store_blob {
    char *b;
    size_t n, cap;
    int bad;
} store_blob;

/* Appends n bytes at p (NULL: n zeros), padded with zeros to a multiple of 8 bytes. */
void store_blob_put(store_blob *f, const void *p, size_t n);

/* The next n elements of `size` bytes, lent from the block, and moves past them and their
 * padding; NULL, with f->bad set, when they lie beyond the block's end. */
const void *store_blob_take(store_blob *f, uint64_t n, size_t size);

/* Sorts a[0..n) by their upper 32 bits, stably, with tmp holding n more: keys made as
 * `id << 32 | position` come out by id, ties in position order. An LSD radix sort, a byte at a
 * time, that skips the bytes all keys share (O(n) per byte that differs). Joins by correlation id
 * use it (the launch records in analysis/, the flow index in web/). */
void store_sort_hi32(uint64_t *a, uint64_t *tmp, size_t n);

/* The length of the valid UTF-8 sequence that starts at s (1 to 4 bytes) with its code point in
 * *pCp, or 0 when the byte at s does not start one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF). Strings from files are kept as their bytes; every output checks them
 * with this one function (view/ for JSON, cli/ for the terminal). */
size_t store_utf8_decode(const char *s, uint32_t *pCp /* OUT */);

/* Demangles an Itanium C++ name into a malloc'd string; NULL if `name` is not mangled. */
char *store_demangle(const char *name);

/* ---------------------------------------------------------------- files and folders
 *
 * Traces live in folders others may write (a shared scratch space, /tmp, a job's folder), so
 * every command opens files one way (fs.c): what it reads must be a regular file, opened without
 * blocking (a FIFO in place of a trace never hangs a command, even when swapped in between a
 * check and the open: the check is made on the opened descriptor); what it writes is never
 * written through a link nor over a file someone else made; a folder it writes into or reads
 * control FIFOs from is checked for owner and mode. The calls return a descriptor (or 0) on
 * success, -1 with "PATH: why" in err (errlen bytes; err may be NULL) otherwise. */

/* What a file of mode `mode` (st_mode) is, for messages: "a FIFO", "a character device", "a
 * block device", "a socket", "a folder", "a symbolic link", "a regular file", "a special file".
 * Static. */
const char *store_fs_kind(unsigned mode);

/* Opens `path` for reading when it is a regular file (a link to one is followed): a FIFO, device
 * or socket is refused without blocking ("PATH: not a regular file (a FIFO)"). The descriptor
 * is close-on-exec and blocking; the caller closes it. */
int store_fs_open_read(const char *path, char *err, size_t errlen);

/* store_fs_open_read() as a stdio stream ("rb"), NULL on error. The caller fcloses it. */
FILE *store_fs_fopen_read(const char *path, char *err, size_t errlen);

/* Creates `path` as a new file for writing with `mode`, refusing any existing name: a file, or a
 * link (dangling or not; "PATH: a symbolic link is in the way"). Close-on-exec. */
int store_fs_create(const char *path, int mode, char *err, size_t errlen);

/* Opens `path` for appending, creating it with `mode` when absent: never through a link, and only
 * a regular file of this user (a log another user left in a shared folder is refused). */
int store_fs_open_append(const char *path, int mode, char *err, size_t errlen);

/* Opens `path` for reading when it is a file tlview keeps for this user (a cache): a regular file,
 * not a link (never followed: "PATH: cannot open: ... (a symbolic link: not followed)"), owned by
 * this user ("PATH: the file belongs to another user (uid 1001)") and writable by no other ("PATH:
 * other users may write the file (mode 0666)"). Close-on-exec, blocking; the caller closes it. */
int store_fs_open_private(const char *path, char *err, size_t errlen);

/* Checks that folder `dir` is safe to write into or read commands from: a folder (not a link to
 * one) of this user whose mode has none of the bits of `forbidden` (STORE_FS_SHARED: every user
 * may write it; STORE_FS_WRITABLE: another user may; STORE_FS_PRIVATE: another user may do
 * anything with it). "DIR: every user may write into the folder (mode 1777)", "DIR: the folder
 * belongs to another user (uid 1001)", "DIR: not a folder (a symbolic link)". */
#define STORE_FS_SHARED 0002u
#define STORE_FS_WRITABLE 0022u
#define STORE_FS_PRIVATE 0077u
int store_fs_check_dir(const char *dir, unsigned forbidden, char *err, size_t errlen);

/* 1 when `path`, found in a folder (not named by the user), may be read: by lstat() a file or a
 * link that this user made or the folder's owner `dir_uid` made (-1: none but this user), and by
 * stat() a regular file; 0 otherwise (a link another user dropped into a shared folder). */
int store_fs_trusted(const char *path, long dir_uid);

/* Puts every file SQLite opens in this process through the same checks: regular files and
 * folders only, opened without blocking; the journals and WAL files it creates never through a
 * link. Process-wide (SQLite's unix VFS): for tlview's own commands, never for libcollect, which
 * lives in other people's processes. Call before the first connection. 0, or -1 when SQLite
 * lacks the hook. */
int store_fs_harden_sqlite(void);

/* ---------------------------------------------------------------- the cache beside the traces
 *
 * A file of sections (arrays of fixed-size elements) under a key text, laid out to be mapped
 * (store/SCHEMA.md, "The cache"). The key says what the content was made from: every input
 * file's device, inode, size, mtime and ctime (ns) and path, and the caller's `extra` (its
 * version, options). A cache is reused only when its key matches byte for byte; it is never
 * trusted blindly: store_cache_open() refuses a link, a file of another user or one others may
 * write, a truncated file, a bad magic, format or checksum, sizes beyond the file; and each
 * section's checksum (and the caller's check of its values) is verified before it is handed
 * out. Every failure is "no cache": the caller rebuilds. Messages go to the caller's err
 * (errlen bytes), "PATH: why". */

typedef struct store_cache store_cache;

/* One section to write: `count` elements of `elem` bytes at data (borrowed during the call). */
typedef struct store_cache_part {
    uint32_t id;      /* the caller's id of the section */
    uint32_t elem;    /* bytes of one element, > 0 */
    const void *data; /* count * elem bytes */
    uint64_t count;   /* elements */
} store_cache_part;

/* Checks elements [first, first + n) of section `id` at base (called from several threads at
 * once, for shares of the section): 0 when every value is in bounds, else non-zero. */
typedef int (*store_cache_check)(void *ctx, uint32_t id, const void *base, uint64_t first,
                                 uint64_t n);

/* The key text of the inputs paths[0..npaths) (regular files, after stat()) and `extra` in
 * *ppKey (malloc'd; the caller frees it): a "file" line per input with its absolute path (so that
 * store_cache_prune() can find it), and a "named" line with the path as given where that differs
 * (a run holds the names it was given). STORE_EIO when a path cannot be resolved, stat()ed or is
 * not a regular file (no key: no cache), STORE_ENOMEM. */
int store_cache_key(const char *const *paths, uint32_t npaths, const char *extra,
                    char **ppKey /* OUT */);

/* A 64-bit hash of `text`, for naming cache files (the key inside decides, not the name). */
uint64_t store_cache_name_hash(const char *text);

/* The cache folder into `out` (n bytes): with trace_dir, "<trace_dir>/.tlview-cache"; without,
 * the per-user folder "$XDG_CACHE_HOME/tlview" (else "$HOME/.cache/tlview"). With `create` the
 * folder is made (mode 0700) when absent. 0 when it is a folder of this user that no other user
 * may write (store_fs_check_dir STORE_FS_WRITABLE); -1 otherwise (absent, unwritable, someone
 * else's, a link): no cache there. */
int store_cache_dir(const char *trace_dir, int create, char *out, size_t n);

/* Reads a size: bytes, or a number with K, M, G or T (powers of 1024: "20G", "500M"); one too
 * large for 64 bits is UINT64_MAX. 0 with *out set, or -1 for NULL, "", a sign, a fraction, or
 * another unit. */
int store_parse_size(const char *text, uint64_t *out);

/* Writes "<dir>/<name>" with the key and the sections: into a new temporary file in `dir`
 * (store_fs_create, mode 0600), synced, then renamed over the old one, so that a reader sees
 * the old cache or the new one, never a part. A write failure (disk full, a file size limit:
 * SIGXFSZ is ignored meanwhile) removes the temporary file; one a process that has ended left
 * (stopped while writing) is removed by the next write of that name. A cache is only a cache:
 * nothing is written that would leave its file system less free than TLVIEW_CACHE_FREE
 * (store_parse_size) or, unset, the smaller of 1 GiB and 5% of it. 0, or -1 with the reason in
 * err. */
int store_cache_write(const char *dir, const char *name, const char *key,
                      const store_cache_part *parts, uint32_t nparts, char *err, size_t errlen);

/* What store_cache_prune() did. */
typedef struct store_cache_pruned {
    uint32_t dead;        /* caches removed that could never be read again */
    uint32_t evicted;     /* caches removed, least recently used first, to fit max_bytes */
    uint64_t freed_bytes; /* their bytes */
    uint64_t kept_bytes;  /* the bytes of the caches left */
} store_cache_pruned;

/* Bounds the cache folder `dir` (one store_cache_dir() accepts; else -1 and nothing is touched).
 * Only the tlview caches there (regular files of this user with the cache's magic) are judged;
 * anything else is left alone. First every cache that no reader can match again is removed: a
 * broken header, or a key that names an input file gone or changed since (by absolute path;
 * relative paths prove nothing). Then, while the caches left hold more than max_bytes, the least
 * recently used (its stamp's modification time, which store_cache_open() moves; without a stamp,
 * its own) is removed. A cache whose name begins with `keep` (may be NULL) is never removed: the
 * cache just written and those that go with it. A cache's stamp goes with it, and stamps without
 * their cache go too. A cache mapped by a running tlview stays readable to it. 0 with *out, or -1.
 */
int store_cache_prune(const char *dir, uint64_t max_bytes, const char *keep,
                      store_cache_pruned *out);

/* Opens and maps the cache at `path` (store_fs_open_private) and checks its header, section
 * table and key against `key`; a stamp that vouches for it is touched (its last use). 0 with
 * *ppC (close with store_cache_close()), or -1 with the reason in err. */
int store_cache_open(const char *path, const char *key, store_cache **ppC /* OUT */, char *err,
                     size_t errlen);

/* Section `id` of elements of `elem` bytes: checksummed (and checked by `check`, may be NULL,
 * on one thread per CPU) before *ppData (inside the mapping, valid until store_cache_close();
 * writable, copy on write) and *pCount are set. 0, or -1 with the reason in err: no such section,
 * another element size, a checksum that does not hold, a value `check` refused. */
int store_cache_section(store_cache *c, uint32_t id, uint32_t elem, store_cache_check check,
                        void *ctx, void **ppData /* OUT */, uint64_t *pCount /* OUT */, char *err,
                        size_t errlen);

/* 1 when p points inside c's mapping (c may be NULL: 0). */
int store_cache_owns(const store_cache *c, const void *p);

/* 1 when c's stamp (".<name>.ok" beside it, written with it) names this very file, unchanged since
 * it was written: store_cache_section() then checks every value but skips the checksums (a pass
 * over every byte). 0 otherwise (no stamp, another file's, the file changed since), or c NULL. */
int store_cache_vouched(const store_cache *c);

/* Unmaps and frees c (NULL is a no-op). */
void store_cache_close(store_cache *c);

/* Writes `run` (finished) as the cache "<dir>/<name>" under `key` (store_cache_write). 0, or -1
 * with the reason in err. */
int store_run_cache_save(const store_run *run, const char *dir, const char *name, const char *key,
                         char *err, size_t errlen);

/* Reads the run cached at `path` under `key`: a finished run (free with store_run_free()) whose
 * records and strings stay in the mapped file, every index and string offset checked against
 * the file's own counts first. A later builder call copies the records out of the mapping
 * before changing them. 0 with *ppRun, or -1 with the reason in err (*ppRun NULL). */
int store_run_cache_load(const char *path, const char *key, store_run **ppRun /* OUT */, char *err,
                         size_t errlen);

/* ---------------------------------------------------------------- SQLite files from others */

/* A SQLite file may come from anyone, and SQLite runs what a file's schema says: a `kernel` that
 * is a view over an endless recursive CTE hangs the reader, a view of randomblob(1e9) takes 2 GB.
 * Every reader connection (the loader's, the nvprof and nsys importers') is therefore guarded with
 * SQLite's defences for untrusted databases (sqlite.org/security.html): views and triggers off,
 * trusted_schema off, SQLITE_DBCONFIG_DEFENSIVE, no value longer than STORE_MAX_VALUE, and a time
 * limit per file; and the tables a reader reads must be plain tables. In the calls below `path`
 * names the file in messages ("PATH: ..."); NULL leaves it out (the importers add the file and the
 * row themselves). */
#define STORE_MAX_VALUE (16 << 20) /* bytes in one string, blob or row (names, argv: far less) */

struct sqlite3;

/* The time limit of one file's reading, shared by the connections that read it. */
typedef struct store_guard {
    int64_t deadline; /* CLOCK_MONOTONIC ns after which SQLite is interrupted */
    double limit_s;   /* the limit in seconds, for the message */
    int expired;      /* set by the progress handler when it interrupted SQLite */
} store_guard;

/* A file may take store_read_base_s + store_read_s_per_mib per MiB (file + WAL) to read: a
 * real file reads at 100+ MiB/s, so this only stops a file that makes SQLite compute. Globals so
 * that a test can lower them; nothing else writes them. */
extern double store_read_base_s, store_read_s_per_mib;

/* Starts the clock of the file at `path`: its limit follows from its size (file + WAL). */
void store_guard_start(store_guard *g, const char *path);

/* Applies the defences to a new connection and installs g's time limit (g is the caller's and
 * must outlive db; a copy of g with the same deadline serves another connection to the same
 * file). 0, or STORE_EIO with "[PATH: ]cannot turn on SQLite's defences ..." in err. */
int store_guard_attach(struct sqlite3 *db, store_guard *g, const char *path, char *err,
                       size_t errlen);

/* Checks that each of names[] (NULL-terminated) that db holds is a plain table: not a view, a
 * virtual or shadow table, and without generated columns. Absent names pass (the reader's own
 * query says what is missing). 0, or STORE_EFORMAT with "[PATH: ]'kernel' is a view, not a table"
 * (*pRefused = 1) or, when the schema cannot be read, "[PATH: ]truncated or corrupt (...)" or
 * "[PATH: ]cannot read the schema: ..." (*pRefused = 0); STORE_ENOMEM when SQLite ran out of
 * memory. */
int store_guard_tables(struct sqlite3 *db, const char *path, const char *const *names,
                       int *pRefused /* OUT, may be NULL */, char *err, size_t errlen);

/* After a failed read on db, a connection guarded by g: 1 when the guard made it fail, with why
 * in err: "[PATH: ]reading took over N s (a hostile or damaged file?)" or "[PATH: ]a value over
 * 16 MiB[ in table TABLE] (a hostile or damaged file?)" (`table` may be NULL); 0 otherwise, err
 * untouched. */
int store_guard_explain(const store_guard *g, struct sqlite3 *db, const char *path,
                        const char *table, char *err, size_t errlen);

#endif
