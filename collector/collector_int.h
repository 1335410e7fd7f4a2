/* collector: the private interface shared by the collector's .c files and its tests.
 *
 * libcollect.so exports one symbol, InitializeInjection (inject.c). Everything it does is split
 * into parts a CPU-only test can drive: configuration from the environment (config.c), the
 * output file name (pattern.c), CUPTI record -> store row conversion (records.c), the buffer
 * queue and its writer thread (writer_thread.c), facts about the process (meta.c), the capture
 * ranges (capture.c), the control channel (control.c, control.h: no CUDA, the tlview binary
 * links it too) and the per-process file with its metadata and flight recorder (session.c).
 * Only inject.c calls CUPTI functions; the others see CUPTI's record structs only, and reach
 * CUPTI through the hooks below. */
#ifndef COLLECTOR_INT_H
#define COLLECTOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>

#include "control.h"
#include "store.h"

#define COLLECTOR_VERSION "0.1.0"

/* ---------------------------------------------------------------- logging (log.c) */

/* 0 quiet, 1 errors and warnings (default), 2 debug; set from TLVIEW_LOG. */
extern int collector_log_level;

/* Writes one line "tlview: MSG" (debug lines: "tlview: PREFIX: MSG") to stderr with one
 * write(2), so lines of several processes do not interleave. Never touches stdout. */
void collector_log(const char *prefix, int debug, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Each .c file defines LOG_PREFIX before using these; the level is checked before the
 * arguments are evaluated. */
#define log_err(...)                                                                               \
    do {                                                                                           \
        if (collector_log_level >= 1)                                                              \
            collector_log(LOG_PREFIX, 0, __VA_ARGS__);                                             \
    } while (0)
#define log_warn log_err
#define log_dbg(...)                                                                               \
    do {                                                                                           \
        if (collector_log_level >= 2)                                                              \
            collector_log(LOG_PREFIX, 1, __VA_ARGS__);                                             \
    } while (0)

/* ---------------------------------------------------------------- configuration (config.c) */

#define COLLECTOR_DEFAULT_OUTPUT "output.%p.db"
#define COLLECTOR_DEFAULT_BUFFER_SIZE (8u << 20)
#define COLLECTOR_DEFAULT_BUFFER_COUNT 64u
#define COLLECTOR_DEFAULT_FLUSH_MS 500u
#define COLLECTOR_DEFAULT_EXIT_TIMEOUT_MS 30000u
#define COLLECTOR_SIGNAL_TIMEOUT_MS 2000u /* bounded wait in SIGINT/SIGTERM handlers */

/* What TLVIEW_API records (collector_config api). */
enum { COLLECTOR_API_CALLS = 1, COLLECTOR_API_ALL = 2 };

/* TLVIEW_CAPTURE: what opens capture ranges (outside them the launch activity kinds are off). */
typedef enum {
    COLLECTOR_CAPTURE_ALL = 0,      /* "all": one range from the start (or TLVIEW_CAPTURE_DELAY) */
    COLLECTOR_CAPTURE_PROFILER_API, /* "cudaProfilerApi": cudaProfilerStart/Stop (callbacks) */
    COLLECTOR_CAPTURE_CONTROL,      /* "control": only `tlview capture start` */
} collector_capture_mode;

typedef struct collector_config {
    char output[4096];        /* TLVIEW_OUTPUT pattern */
    size_t buffer_size;       /* TLVIEW_BUFFER_SIZE: bytes per CUPTI activity buffer */
    uint32_t buffer_count;    /* TLVIEW_BUFFER_COUNT: completed buffers the queue may hold */
    uint32_t flush_ms;        /* TLVIEW_FLUSH_MS: periodic flush, 0 = CUPTI's heuristics only */
    uint32_t exit_timeout_ms; /* TLVIEW_EXIT_TIMEOUT_MS: longest wait for the drain at exit */
    int api;                  /* TLVIEW_API: 0 none; COLLECTOR_API_CALLS runtime and driver API
                                 records but the queries (collector_quiet_api()); COLLECTOR_API_ALL
                                 every one */
    int nvtx;                 /* TLVIEW_NVTX=1: NVTX markers, paired into ranges */
    int callbacks;            /* TLVIEW_CALLBACKS=1: hold the CUPTI subscription (fatal-error and
                                 cudaDeviceReset callbacks); blocks the app's own CUPTI use */
    char run_id[256];         /* TLVIEW_RUN_ID, "" when unset */
    collector_capture_mode capture;   /* TLVIEW_CAPTURE */
    uint64_t capture_delay_ms;        /* TLVIEW_CAPTURE_DELAY (mode all), 0 none */
    uint64_t capture_duration_ms;     /* TLVIEW_CAPTURE_DURATION: longest range, 0 no limit */
    char control_dir[4096];           /* TLVIEW_CONTROL_DIR (default /tmp/tlview-<uid>); "" off */
    uint64_t flight_ms, flight_bytes; /* TLVIEW_FLIGHT: keep the last N ms or N bytes; 0 off */
} collector_config;

/* Reads every TLVIEW_* variable into *cfg (defaults for those unset) and sets
 * collector_log_level. A malformed value is reported once on stderr and its default used.
 * Always returns 0: configuration never stops the host application. */
int collector_startup(collector_config *cfg /* OUT */);

/* Parses a span of time: "10s", "500ms", "2m", "1h", "1.5s"; a bare number is seconds when
 * `bare_seconds`, else refused. Returns 0 and *ms, or -1. */
int collector_parse_ms(const char *text, int bare_seconds, uint64_t *ms /* OUT */);

/* ---------------------------------------------------------------- output name (pattern.c) */

/* Expands %p (pid), %h (host name), %q{VAR} (the variable's value, empty when unset) and %%
 * of `pattern` into out[size]. An unknown %x is copied as is. Returns 0, or -1 when the
 * result does not fit (out then holds a truncated string). */
int collector_pattern_expand(const char *pattern, char *out, size_t size);

/* Writes into out (size bytes) `path` with ".<n>" inserted before its base name's extension
 * ("a/out.db", 2 -> "a/out.2.db"; no extension: appended). Returns 0 or -1 (does not fit). */
int collector_numbered_path(const char *path, unsigned n, char *out, size_t size);

/* Creates the output file for `pattern`: expands it, and when that file exists picks
 * "<stem>.N<ext>" (N = 1, 2, ...; ext = the text from the last '.' of the base name), saying so
 * on stderr once, without touching the existing file. On success *ppW is open and 0 is
 * returned; on failure one line naming the path and the reason goes to stderr, *ppW is NULL
 * and -1 is returned. `clock`/`t0` are passed to store_writer_open(). */
int collector_output_open(const char *pattern, store_clock clock, int64_t t0,
                          store_writer **ppW /* OUT */);

/* ---------------------------------------------------------------- records (records.c) */

/* How many records of each kind reached the file, and how many did not. */
typedef struct collector_counts {
    uint64_t kernel, memcpy, memset, api, range, context, device; /* rows written */
    uint64_t unknown;     /* activity kinds tlview does not store */
    uint64_t incomplete;  /* kernels/copies without an end timestamp (forced flush) */
    uint64_t lost;        /* records not written: queue full, write failure, stop */
    uint64_t open_ranges; /* NVTX starts never ended */
} collector_counts;

/* Names an API callback id; NULL when unknown. inject.c passes cuptiGetCallbackName. */
typedef const char *(*collector_api_name_fn)(store_api_domain domain, uint32_t cbid);

typedef struct collector_sink collector_sink;

/* A sink converts CUPTI activity records into rows of process `process` of writer `w` (not
 * owned). Returns 0, or STORE_ENOMEM. */
int collector_sink_new(store_writer *w, int64_t process, collector_api_name_fn api_name,
                       collector_sink **ppS /* OUT */);

/* Steps through a completed CUPTI buffer like cuptiActivityGetNextRecord: 0 and *rec set for
 * a record, 1 at the end, -1 on a corrupt buffer. *rec is NULL on the first call. */
typedef int (*collector_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);

/* Writes every record of one completed buffer in one transaction; kinds tlview does not store
 * are counted as unknown, records the store refuses (ending before they start: kernels and
 * copies without an end) as incomplete. Returns 0, or the
 * STORE_E* code when a write failed: the sink is then failed, this buffer's unwritten records
 * and every later one are counted as lost (a failed commit loses the whole batch, and the
 * counts say so), and collector_sink_error() says why. */
int collector_sink_buffer(collector_sink *s, collector_next_fn next, uint8_t *buf, size_t valid);

/* The number of records in a completed buffer (walked with `next`). */
uint64_t collector_count_records(collector_next_fn next, uint8_t *buf, size_t valid);

/* The latest end (GPU clock, ns) of the records written so far; 0 before the first. The flight
 * recorder prunes with it: every row written before it ended by then. */
int64_t collector_sink_max_end(const collector_sink *s);

/* Counts `n` records as lost (never written). */
void collector_sink_lost(collector_sink *s, uint64_t n);

/* The first write error ("" when none); owned by the sink. */
const char *collector_sink_error(const collector_sink *s);

void collector_sink_counts(const collector_sink *s, collector_counts *out /* OUT */);

/* Frees the sink and its pending NVTX ranges (counted in open_ranges). NULL is a no-op. */
void collector_sink_free(collector_sink *s);

/* ---------------------------------------------------------------- hooks into CUPTI */

/* The CUPTI-dependent pieces, filled by inject.c with CUPTI calls and by the tests with
 * stand-ins, so everything below runs without a GPU. */
typedef struct collector_hooks {
    collector_next_fn next_record; /* cuptiActivityGetNextRecord */
    /* Asks CUPTI to hand back its buffers (forced: incomplete ones too). Called on the
     * writer thread only; may be NULL. Returns 0 or -1. */
    int (*flush)(int forced);
    /* The GPU timestamp clock (cuptiGetTimestamp), ns. */
    int64_t (*gpu_clock)(void);
    /* Records dropped by CUPTI since the last call (cuptiActivityGetNumDroppedRecords);
     * may be NULL. */
    uint64_t (*dropped)(void);
    /* CUPTI's version (cuptiGetVersion), -1 when unknown; may be NULL. */
    int64_t (*cupti_version)(void);
    collector_api_name_fn api_name;
    /* Turns the activity kinds of launches (kernels, copies, API calls, NVTX) on or off, at
     * capture range boundaries; any thread. Returns 0 or -1. May be NULL (nothing to switch). */
    int (*set_tracing)(int on);
} collector_hooks;

/* ---------------------------------------------------------------- capture ranges (capture.c) */

typedef struct collector_capture collector_capture;

/* A range opening or closing, for the writer thread to write to the file. */
typedef struct collector_capture_event {
    int open;        /* 1: a range opened; 0: it closed */
    uint32_t range;  /* 1, 2, ...: the range's number in this process */
    int64_t at;      /* GPU clock, ns */
    char reason[32]; /* "start", "delay", "cudaProfilerStart", "control"; closing: "duration",
                        "cudaProfilerStop", "control", "exit" */
    char name[256];  /* `tlview capture start --name`; "" none */
} collector_capture_event;

/* What a status request reports. */
typedef struct collector_capture_state {
    int active;            /* a range is open */
    uint32_t range;        /* the open range's number, else the last one's (0: none yet) */
    uint64_t open_ms;      /* monotonic ms when the open range opened */
    uint64_t start_at_ms;  /* a delayed start still to come (monotonic ms), 0 none */
    int64_t switch_max_ns; /* the longest CUPTI switch so far: a launch that close to a range's
                              start or end may or may not be recorded */
} collector_capture_state;

/* The capture state machine of one process. Ranges open and close on any thread (cudaProfilerStart
 * on the application's, the rest on the writer's): hooks->set_tracing switches CUPTI there and
 * then, and an event is queued for the writer thread, which `wake(wake_arg)` pokes. Returns 0 or
 * -1 (out of memory). */
int collector_capture_new(const collector_config *cfg, const collector_hooks *hooks,
                          void (*wake)(void *), void *wake_arg, collector_capture **ppC /* OUT */);
void collector_capture_free(collector_capture *c);

/* Applies TLVIEW_CAPTURE at start: mode all opens range 1 ("start") now, or schedules it after
 * TLVIEW_CAPTURE_DELAY ("delay"); the other modes wait. now_ms: CLOCK_MONOTONIC ms. */
void collector_capture_begin(collector_capture *c, uint64_t now_ms);

/* Opens a range: CUPTI on, then its start time read (every launch after it is recorded).
 * Returns 0 opened, 1 already open (nothing changes), -1 when CUPTI refused (nothing opened). */
int collector_capture_start(collector_capture *c, const char *reason, const char *name,
                            uint64_t now_ms);

/* Closes the open range: its end time read, then CUPTI off (every launch before it is
 * recorded; kernels still running arrive later, whole). Returns 0 closed, 1 none was open. */
int collector_capture_stop(collector_capture *c, const char *reason);

/* The delayed start and the duration's end, when due; on the writer thread. */
void collector_capture_tick(collector_capture *c, uint64_t now_ms);

/* Closes the open range at the process's end without touching CUPTI (reason "exit"). */
void collector_capture_end(collector_capture *c, const char *reason);

/* Takes the oldest event not yet written: 1 and *ev, or 0. */
int collector_capture_next_event(collector_capture *c, collector_capture_event *ev /* OUT */);

void collector_capture_get(collector_capture *c, collector_capture_state *out /* OUT */);

/* ---------------------------------------------------------------- writer thread */

typedef struct collector_writer collector_writer;

/* Work the writer thread does once, after the final flush and drain (the session writes its
 * closing metadata there, so no other thread ever touches SQLite). */
typedef void (*collector_finish_fn)(void *arg);

/* Work the writer thread does on every turn (at least every 0.1 s), after writing what was
 * queued: `flushed` is 1 when this turn flushed CUPTI (collector_writer_last_flush() says
 * when). The session polls the control channel, applies capture ranges and rotates the flight
 * recorder there. */
typedef void (*collector_tick_fn)(void *arg, collector_writer *w, int flushed);

typedef struct collector_writer_config {
    store_writer *store;          /* written by the writer thread only (not owned) */
    collector_sink *sink;         /* not owned */
    const collector_hooks *hooks; /* next_record, flush (not owned) */
    size_t buffer_size;           /* bytes per buffer handed out */
    uint32_t capacity;            /* completed buffers the queue holds */
    uint32_t flush_ms;            /* periodic hooks->flush(0), 0 = never */
    collector_finish_fn finish;   /* may be NULL */
    void *finish_arg;             /* also tick's */
    collector_tick_fn tick;       /* may be NULL */
} collector_writer_config;

/* Counters of buffers, readable at any time. */
typedef struct collector_writer_stats {
    uint64_t buffers_requested; /* handed out by collector_writer_buffer() */
    uint64_t buffers_completed; /* given back through collector_writer_submit() */
    uint64_t buffers_dropped;   /* not queued: the queue was full or the writer stopped */
    uint64_t buffers_written;   /* processed by the writer thread */
} collector_writer_stats;

/* Starts the writer thread (all signals blocked in it). Returns 0 or -1 (no thread, no
 * memory: nothing to free then). */
int collector_writer_start(const collector_writer_config *cfg, collector_writer **ppW /* OUT */);

/* An empty buffer of cfg->buffer_size bytes, 8-byte aligned, from the free pool or malloc;
 * NULL when out of memory or stopped. Never blocks on the writer. */
uint8_t *collector_writer_buffer(collector_writer *w);

/* Hands a completed buffer (from collector_writer_buffer) to the writer, which owns it from
 * now on. Never blocks on the writer: when the queue is full the buffer's records are counted
 * as lost, one warning is printed, the buffer is freed and -1 returned. On the writer thread
 * itself (CUPTI completing buffers inside hooks->flush) a full queue does not drop: the buffer
 * is written at once. */
int collector_writer_submit(collector_writer *w, uint8_t *buf, size_t valid);

/* Asks the writer to flush CUPTI (hooks->flush(forced)) and write everything queued, and
 * waits at most timeout_ms. Only an atomic store, sem_post and nanosleep are used, so it may be
 * called from a signal handler. Returns 0 when done, -1 on timeout or when stopped. */
int collector_writer_sync(collector_writer *w, int forced, uint32_t timeout_ms);

/* Asks the writer to do a forced flush, drain the queue, run cfg->finish and end, and waits
 * at most timeout_ms (signal-safe like collector_writer_sync). Returns 0 when the thread has
 * finished (it is then joined), -1 on timeout: the thread is left running and the caller must
 * not free what it uses. Later calls return the first outcome's code at once. */
int collector_writer_stop(collector_writer *w, uint32_t timeout_ms);

void collector_writer_get_stats(collector_writer *w, collector_writer_stats *out /* OUT */);

/* Wakes the writer thread for a turn now (signal-safe: sem_post). */
void collector_writer_wake(collector_writer *w);

/* On the writer thread only (in tick): flushes CUPTI (not forced) and writes everything that
 * came back, now. */
void collector_writer_flush_now(collector_writer *w);

/* The GPU clock (hooks->gpu_clock) read just before the latest flush (0: none yet). Not every
 * kernel that had ended by then need be written: see collector_writer_horizon(). */
int64_t collector_writer_last_flush(collector_writer *w);

/* How far the file is complete (GPU clock, ns): every kernel that ended before it is written (or
 * counted as lost). It starts at the writer's start (nothing was launched before); after a flush
 * it is the flush's clock when CUPTI gave back every buffer it had taken, else the latest end
 * written, capped by the flush's clock: a default flush leaves a buffer with a kernel still running
 * in CUPTI's hands, and with it the kernels that ended before. Never moves back. */
int64_t collector_writer_horizon(collector_writer *w);

/* On the writer thread only: repeats the default flush (never a forced one, which would hand
 * over records still incomplete, losing those kernels) a few ms apart until the horizon reaches
 * `target`, at most timeout_ms. Returns the horizon reached (below `target` on a timeout; the
 * horizon as it is, off the writer thread). */
int64_t collector_writer_settle(collector_writer *w, int64_t target, uint32_t timeout_ms);

/* Frees a writer whose collector_writer_stop() returned 0. */
void collector_writer_free(collector_writer *w);

/* ---------------------------------------------------------------- process facts (meta.c) */

/* Facts about this process for the process row; strings are malloc'd, free with
 * collector_facts_free(). */
typedef struct collector_facts {
    int64_t pid, ppid;
    char *host, *exe, *argv; /* argv: shell-quoted where needed, separated by spaces */
} collector_facts;

/* Fills *f from getpid(), gethostname(), /proc/self/exe and /proc/self/cmdline. Missing
 * facts are left NULL. Returns 0 or STORE_ENOMEM. */
int collector_facts_read(collector_facts *f /* OUT */);
void collector_facts_free(collector_facts *f);

/* Writes the launcher's rank variables that are set (OMPI_COMM_WORLD_RANK, PMIX_RANK,
 * SLURM_PROCID, ...: the list in meta.c, store/SCHEMA.md) as process_meta env.NAME of `process`.
 * 0 or the writer's error code. */
int collector_launcher_meta(store_writer *w, int64_t process);

/* Quotes one argument for a POSIX shell when it needs it ('it'\''s'); malloc'd. */
char *collector_shell_quote(const char *arg);

/* The CUDA driver (cuDriverGetVersion) and runtime (cudaRuntimeGetVersion) versions, found
 * with dlsym in what the process has loaded; -1 when not found (the runtime is often linked
 * statically into the application, and then not visible). */
int64_t collector_driver_version(void);
int64_t collector_runtime_version(void);

/* ---------------------------------------------------------------- session (session.c) */

typedef struct collector_session collector_session;

/* Opens this process's file for `cfg`, writes the process row, its metadata and the start
 * calibration, and starts the writer thread. On failure a line has gone to stderr, *ppS is
 * NULL and -1 is returned: tracing is then off and the application runs on untouched. */
int collector_session_open(const collector_config *cfg, const collector_hooks *hooks,
                           collector_session **ppS /* OUT */);

/* Called by the CUPTI buffer callbacks (any thread). */
uint8_t *collector_session_buffer(collector_session *s);
void collector_session_submit(collector_session *s, uint8_t *buf, size_t valid);

/* Records why tracing is stopped or incomplete (the first reason wins; thread-safe, not
 * signal-safe). It is written as process.error when the session finishes, with complete=0. */
void collector_session_fail(collector_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Applies TLVIEW_CAPTURE at start (collector_capture_begin): call once CUPTI is set up, so that
 * a range opened now switches CUPTI on. */
void collector_session_begin_capture(collector_session *s);

/* Opens (start = 1) or closes a capture range for `reason` ("cudaProfilerStart", ...); any
 * thread, not signal-safe. Returns what collector_capture_start/stop return. */
int collector_session_capture(collector_session *s, int start, const char *reason);

/* Flushes and writes what CUPTI holds (hooks->flush(forced)), waiting at most timeout_ms.
 * Signal-safe. Returns 0 or -1 (timeout, finished). */
int collector_session_sync(collector_session *s, int forced, uint32_t timeout_ms);

/* Ends the session: forced flush, drain, closing metadata (counts, buffers, dropped records,
 * end calibration, end wall time, complete flag, error) and close, all on the writer thread;
 * waits at most timeout_ms. `signo` (0 if none) is recorded as exit_signal. Signal-safe, and
 * may be called again (a later call waits for the same finish). Returns 0 once the file is
 * closed; -1 on timeout (the file keeps complete = 0 and whatever was committed). */
int collector_session_finish(collector_session *s, int signo, uint32_t timeout_ms);

/* The output file's path (valid until collector_session_free()). */
const char *collector_session_path(const collector_session *s);

/* Frees a finished session (collector_session_finish returned 0). For tests: the injected
 * library keeps its session until the process ends, since CUPTI may still call back. */
void collector_session_free(collector_session *s);

#endif
