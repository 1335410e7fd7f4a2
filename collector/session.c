/* collector session: one process's file from start to finish. Opening writes the process row,
 * its descriptive metadata and the start clock calibration, then starts the writer thread;
 * finishing (on that thread, after the final forced flush and drain) writes the counts, the
 * end calibration, the end wall time and `complete`, and closes the file. complete = 1 means
 * the file holds every record CUPTI produced; any loss is explained in process.error. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector_int.h"

#define LOG_PREFIX "session"

struct collector_session {
    collector_config cfg;
    collector_hooks hooks;
    store_writer *store; /* written on the writer thread once it runs */
    char path[4096];     /* the file's name, kept after the writer closes it */
    int64_t process;     /* process row id */
    collector_sink *sink;
    collector_writer *writer;
    pthread_mutex_t lock;         /* guards error */
    char error[1024];             /* the first reason the file is incomplete, "" if none */
    atomic_uint_fast64_t dropped; /* sum of cuptiActivityGetNumDroppedRecords */
    atomic_int signo;             /* the signal that ended the process, 0 if none */
    int64_t runtime_version;      /* -1 until known */
};

/* The MPS environment and the device selection, stored as env.NAME when set. */
static const char *const env_keys[] = {
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_LOG_DIRECTORY",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
    "CUDA_VISIBLE_DEVICES",
};

typedef struct calibration {
    int64_t cupti, realtime, monotonic;
} calibration;

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reads the three clocks together: CLOCK_REALTIME around the GPU clock, averaged, so the pair's
 * error is half the (sub-microsecond) read time. */
static calibration calibrate(const collector_hooks *h)
{
    calibration c;
    int64_t before = clock_ns(CLOCK_REALTIME);
    c.cupti = h->gpu_clock();
    int64_t after = clock_ns(CLOCK_REALTIME);
    c.monotonic = clock_ns(CLOCK_MONOTONIC);
    c.realtime = before + (after - before) / 2;
    return c;
}

/* Keeps the first reason the file is incomplete (written to the process row at the end). */
static void note_error(collector_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note_error(collector_session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->lock);
    if (!s->error[0])
        vsnprintf(s->error, sizeof s->error, fmt, ap);
    pthread_mutex_unlock(&s->lock);
    va_end(ap);
}

void collector_session_fail(collector_session *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_err("%s", line);
    note_error(s, "%s", line);
}

/* process_meta rows written at the start; one transaction, so one sync to disk. */
static int write_start_meta(collector_session *s, const calibration *c)
{
    store_writer *w = s->store;
    int64_t p = s->process;
    int rc = store_writer_begin(w);
    rc = rc ? rc : store_writer_process_meta(w, p, "collector_version", COLLECTOR_VERSION);
    int64_t v = s->hooks.cupti_version ? s->hooks.cupti_version() : -1;
    if (!rc && v >= 0)
        rc = store_writer_process_meta_int(w, p, "cupti_version", v);
    v = collector_driver_version();
    if (!rc && v >= 0)
        rc = store_writer_process_meta_int(w, p, "driver_version", v);
    s->runtime_version = collector_runtime_version();
    if (!rc && s->runtime_version >= 0)
        rc = store_writer_process_meta_int(w, p, "runtime_version", s->runtime_version);
    for (size_t i = 0; !rc && i < sizeof env_keys / sizeof env_keys[0]; i++) {
        const char *value = getenv(env_keys[i]);
        char key[64];
        snprintf(key, sizeof key, "env.%s", env_keys[i]);
        if (value)
            rc = store_writer_process_meta(w, p, key, value);
    }
    rc = rc ? rc : collector_launcher_meta(w, p);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "buffer_size", (int64_t)s->cfg.buffer_size);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "buffer_count", s->cfg.buffer_count);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "flush_ms", s->cfg.flush_ms);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "api_tracing", s->cfg.api);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "nvtx_tracing", s->cfg.nvtx);
    rc = rc ? rc : store_writer_calibration(w, p, "start", c->cupti, c->realtime, c->monotonic);
    int crc = store_writer_commit(w);
    return rc ? rc : crc;
}

/* The closing work, run on the writer thread after the final flush and drain. */
static void finish_work(void *arg)
{
    collector_session *s = arg;
    store_writer *w = s->store;
    int64_t p = s->process;
    if (s->hooks.dropped)
        atomic_fetch_add(&s->dropped, s->hooks.dropped());
    collector_counts n;
    collector_sink_counts(s->sink, &n);
    collector_writer_stats b;
    collector_writer_get_stats(s->writer, &b);
    uint64_t dropped = atomic_load(&s->dropped);
    int signo = atomic_load(&s->signo);

    /* One stderr line per process: reasons already reported (a CUPTI failure, the disk, the
     * queue) are only recorded; a new one found here is also said once. */
    pthread_mutex_lock(&s->lock);
    int said = s->error[0] != '\0';
    pthread_mutex_unlock(&s->lock);
    const char *write_error = collector_sink_error(s->sink);
    said |= write_error[0] != '\0' || b.buffers_dropped > 0;
    if (write_error[0])
        note_error(s, "writing the file failed: %s; %llu records lost", write_error,
                   (unsigned long long)n.lost);
    if (b.buffers_requested > b.buffers_completed) {
        /* CUPTI gives every buffer back on a forced flush, unless another client (PyTorch's
         * profiler, for one) registered its own buffer callbacks and received ours. */
        char earlier[sizeof s->error];
        pthread_mutex_lock(&s->lock);
        snprintf(earlier, sizeof earlier, "%s", s->error);
        s->error[0] = '\0'; /* the takeover explains the rest: it goes first */
        pthread_mutex_unlock(&s->lock);
        note_error(s,
                   "%llu of %llu activity buffers never came back from CUPTI: another "
                   "CUPTI client (torch.profiler?) took over activity tracing; records from "
                   "then on are missing%s%s%s",
                   (unsigned long long)(b.buffers_requested - b.buffers_completed),
                   (unsigned long long)b.buffers_requested, earlier[0] ? " (also: " : "", earlier,
                   earlier[0] ? ")" : "");
        if (!said++)
            log_err("%s: %llu of %llu activity buffers never came back: another CUPTI client "
                    "(torch.profiler?) took over; the trace is incomplete",
                    s->path, (unsigned long long)(b.buffers_requested - b.buffers_completed),
                    (unsigned long long)b.buffers_requested);
    }
    if (n.lost && !write_error[0])
        note_error(s, "%llu records lost: the writer fell behind (%llu buffers dropped)",
                   (unsigned long long)n.lost, (unsigned long long)b.buffers_dropped);
    if (dropped) {
        note_error(s, "CUPTI dropped %llu records (no buffer space)", (unsigned long long)dropped);
        if (!said++)
            log_warn("%s: CUPTI dropped %llu records; raise TLVIEW_BUFFER_SIZE or "
                     "TLVIEW_BUFFER_COUNT",
                     s->path, (unsigned long long)dropped);
    }

    calibration c = calibrate(&s->hooks);
    int rc = store_writer_begin(w);
    const struct {
        const char *key;
        uint64_t value;
    } counts[] = {
        {"count.kernel", n.kernel},
        {"count.memcpy", n.memcpy},
        {"count.memset", n.memset},
        {"count.api", n.api},
        {"count.range", n.range},
        {"count.context", n.context},
        {"count.device", n.device},
        {"records_dropped", dropped},
        {"records_unknown", n.unknown},
        {"records_lost", n.lost},
        {"records_incomplete", n.incomplete},
        {"ranges_open", n.open_ranges},
        {"buffers_requested", b.buffers_requested},
        {"buffers_completed", b.buffers_completed},
        {"buffers_dropped", b.buffers_dropped},
    };
    for (size_t i = 0; !rc && i < sizeof counts / sizeof counts[0]; i++)
        rc = store_writer_process_meta_int(w, p, counts[i].key, (int64_t)counts[i].value);
    if (!rc && s->runtime_version < 0 && (s->runtime_version = collector_runtime_version()) >= 0)
        rc = store_writer_process_meta_int(w, p, "runtime_version", s->runtime_version);
    if (!rc && signo)
        rc = store_writer_process_meta_int(w, p, "exit_signal", signo);
    rc = rc ? rc : store_writer_calibration(w, p, "end", c.cupti, c.realtime, c.monotonic);
    pthread_mutex_lock(&s->lock);
    int complete = !s->error[0] && !rc;
    rc = rc ? rc
            : store_writer_process_end(w, p, c.realtime, complete, s->error[0] ? s->error : NULL);
    pthread_mutex_unlock(&s->lock);
    int crc = store_writer_commit(w);
    rc = rc ? rc : crc;
    if (rc)
        log_err("%s: the closing metadata could not be written: %s", s->path,
                store_writer_errmsg(w));
    crc = store_writer_close(w);
    if (crc && !rc)
        log_err("%s: closing failed (code %d)", s->path, crc);
    log_dbg("%s: %llu kernels, %llu memcpy, %llu memset, %llu api, %llu ranges; complete=%d",
            s->path, (unsigned long long)n.kernel, (unsigned long long)n.memcpy,
            (unsigned long long)n.memset, (unsigned long long)n.api, (unsigned long long)n.range,
            complete);
    s->store = NULL;
}

int collector_session_open(const collector_config *cfg, const collector_hooks *hooks,
                           collector_session **ppS)
{
    *ppS = NULL;
    collector_session *s = calloc(1, sizeof *s);
    if (!s) {
        log_err("out of memory; tracing disabled");
        return -1;
    }
    s->cfg = *cfg;
    s->hooks = *hooks;
    pthread_mutex_init(&s->lock, NULL);
    calibration c = calibrate(hooks);
    if (collector_output_open(cfg->output, STORE_CLOCK_CUPTI, c.cupti, &s->store) != 0)
        goto fail;
    snprintf(s->path, sizeof s->path, "%s", store_writer_path(s->store));

    collector_facts f;
    int rc = collector_facts_read(&f);
    store_process_info info = {
        .pid = f.pid,
        .ppid = f.ppid,
        .host = f.host,
        .exe = f.exe,
        .argv = f.argv,
        .run_id = cfg->run_id[0] ? cfg->run_id : NULL,
        .source = "libcollect",
        .start_wall = c.realtime,
    };
    rc = rc ? rc : store_writer_process(s->store, &info, &s->process);
    collector_facts_free(&f);
    rc = rc ? rc : write_start_meta(s, &c);
    rc = rc ? rc : collector_sink_new(s->store, s->process, hooks->api_name, &s->sink);
    if (rc) {
        log_err("cannot write %s: %s; tracing disabled", s->path,
                rc == STORE_ENOMEM ? "out of memory" : store_writer_errmsg(s->store));
        goto fail;
    }
    collector_writer_config wc = {
        .store = s->store,
        .sink = s->sink,
        .hooks = &s->hooks,
        .buffer_size = cfg->buffer_size,
        .capacity = cfg->buffer_count,
        .flush_ms = cfg->flush_ms,
        .finish = finish_work,
        .finish_arg = s,
    };
    if (collector_writer_start(&wc, &s->writer) != 0) {
        store_writer_process_error(s->store, s->process, "the writer thread could not start");
        goto fail;
    }
    log_dbg("writing %s", s->path);
    *ppS = s;
    return 0;

fail:
    collector_sink_free(s->sink);
    store_writer_close(s->store);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return -1;
}

uint8_t *collector_session_buffer(collector_session *s)
{
    return collector_writer_buffer(s->writer);
}

void collector_session_submit(collector_session *s, uint8_t *buf, size_t valid)
{
    if (s->hooks.dropped)
        atomic_fetch_add(&s->dropped, s->hooks.dropped());
    collector_writer_submit(s->writer, buf, valid);
}

int collector_session_sync(collector_session *s, int forced, uint32_t timeout_ms)
{
    return collector_writer_sync(s->writer, forced, timeout_ms);
}

int collector_session_finish(collector_session *s, int signo, uint32_t timeout_ms)
{
    if (signo)
        atomic_store(&s->signo, signo);
    return collector_writer_stop(s->writer, timeout_ms);
}

const char *collector_session_path(const collector_session *s)
{
    return s->path;
}

void collector_session_free(collector_session *s)
{
    if (!s)
        return;
    collector_writer_free(s->writer);
    collector_sink_free(s->sink);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
