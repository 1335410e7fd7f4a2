/* collector session: one process's file from start to finish. Opening writes the process row,
 * its descriptive metadata and the start clock calibration, then starts the writer thread;
 * finishing (on that thread, after the final forced flush and drain) writes the counts, the
 * end calibration, the end wall time and `complete`, and closes the file. complete = 1 means
 * the file holds every record CUPTI produced; any loss is explained in process.error. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    char abs_path[PATH_MAX];      /* the file's absolute path: dumps go beside it */
    collector_capture *capture;   /* capture ranges */
    collector_control *control;   /* the control FIFO; NULL when off or not possible */
    /* the rest is the writer thread's */
    int64_t cap_row;    /* the open range's row id, 0 when none is open */
    int64_t cap_start;  /* its start, GPU clock */
    uint32_t cap_range; /* its number */
    int cap_failed;     /* writing a capture row failed (said once) */
    struct flight_mark {
        store_rowmark mark; /* the tables' ends at a flush */
        int64_t max_end;    /* every row up to mark had ended by then (GPU clock) */
    } * fl;                 /* flight recorder checkpoints, oldest first */
    size_t nfl, capfl;      /* checkpoints held, room */
    int64_t flight_from;    /* rows that ended before it were rotated out, 0 none */
    uint64_t flight_prunes; /* rotations done */
};

#define SETTLE_MS 100u /* the longest a dump or a range's end waits for CUPTI's last records */
#define FLIGHT_SETTLE_MS 20u /* the same for a periodic flush, with the flight recorder on */

static const char *const capture_mode_names[] = {"all", "cudaProfilerApi", "control"};

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
    int64_t bracket; /* ns between the CLOCK_REALTIME reads around the GPU clock's */
} calibration;

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define CALIBRATION_READS 7 /* brackets tried; the tightest is kept */

/* Reads the three clocks together: the GPU clock between two CLOCK_REALTIME reads, whose middle
 * is the pair's realtime, so the pair is off by at most half the bracket. The first
 * cuptiGetTimestamp of a process initialises CUPTI's clock (0.1-0.4 ms: the committed samples'
 * start pairs were 75-400 us off, their end pairs 0.1-0.6 us), so one read goes first, unused,
 * and of the brackets after it the tightest is kept: a read preempted or slowed is not. */
static calibration calibrate(const collector_hooks *h)
{
    calibration c = {0, 0, 0, INT64_MAX};
    h->gpu_clock();
    for (int i = 0; i < CALIBRATION_READS; i++) {
        int64_t before = clock_ns(CLOCK_REALTIME);
        int64_t gpu = h->gpu_clock();
        int64_t after = clock_ns(CLOCK_REALTIME);
        if (after - before < c.bracket) {
            c.bracket = after - before;
            c.cupti = gpu;
            c.realtime = before + (after - before) / 2;
            c.monotonic = clock_ns(CLOCK_MONOTONIC);
        }
    }
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
    rc = rc ? rc : store_writer_process_meta(w, p, "capture", capture_mode_names[s->cfg.capture]);
    const struct {
        const char *key;
        uint64_t value;
    } opt[] = {
        {"capture_delay_ms", s->cfg.capture_delay_ms},
        {"capture_duration_ms", s->cfg.capture_duration_ms},
        {"flight_ms", s->cfg.flight_ms},
        {"flight_bytes", s->cfg.flight_bytes},
    };
    for (size_t i = 0; !rc && i < sizeof opt / sizeof opt[0]; i++)
        if (opt[i].value)
            rc = store_writer_process_meta_int(w, p, opt[i].key, (int64_t)opt[i].value);
    if (!rc && s->control)
        rc = store_writer_process_meta(w, p, "control", collector_control_path(s->control));
    rc = rc ? rc : store_writer_calibration(w, p, "start", c->cupti, c->realtime, c->monotonic);
    rc = rc ? rc : store_writer_process_meta_int(w, p, "calibration_start_bracket_ns", c->bracket);
    int crc = store_writer_commit(w);
    return rc ? rc : crc;
}

/* ---------------------------------------------------------------- capture, control, flight */

static uint64_t mono_ms(void)
{
    return (uint64_t)(clock_ns(CLOCK_MONOTONIC) / 1000000);
}

/* A failed capture row: the file cannot say what it covers; said once, and the file is
 * incomplete. */
static void capture_failed(collector_session *s, const char *what)
{
    if (s->cap_failed++)
        return;
    collector_session_fail(s, "%s: cannot write %s: %s", s->path, what,
                           store_writer_errmsg(s->store));
}

/* Writes the ranges opened and closed since the last turn. Returns the end (GPU clock) of the
 * last one that closed, 0 when none did. */
static int64_t write_events(collector_session *s)
{
    collector_capture_event ev;
    int64_t closed = 0;
    while (collector_capture_next_event(s->capture, &ev)) {
        if (ev.open) {
            s->cap_row = 0;
            if (store_writer_capture(s->store, s->process, ev.at, ev.name[0] ? ev.name : NULL,
                                     ev.reason, &s->cap_row) != 0)
                capture_failed(s, "a capture range");
            s->cap_start = ev.at;
            s->cap_range = ev.range;
        } else {
            if (s->cap_row && store_writer_capture_end(s->store, s->cap_row, ev.at, ev.reason) != 0)
                capture_failed(s, "the end of a capture range");
            s->cap_row = 0;
            closed = ev.at;
        }
    }
    return closed;
}

/* A range closed at `end`: its records, into the file now. CUPTI may keep the last of them back
 * while a kernel runs (collector_writer_settle), so the flush is repeated until the file is
 * complete to the range's end, for SETTLE_MS at most: a reader of the file after `stop` then sees
 * the whole range. (Whatever stays back comes with a later flush.) */
static void close_flush(collector_writer *w, int64_t end)
{
    collector_writer_flush_now(w);
    collector_writer_settle(w, end, SETTLE_MS);
}

/* The open range reaches `at`: every kernel that had ended by then is written. */
static void extend_open_range(collector_session *s, int64_t at)
{
    if (s->cap_row && at > s->cap_start &&
        store_writer_capture_end(s->store, s->cap_row, at, NULL) != 0)
        capture_failed(s, "the end of a capture range");
}

/* Rotates the rows of checkpoints fl[0..i] out of the file. */
static void prune_to(collector_session *s, size_t i)
{
    if (store_writer_prune(s->store, &s->fl[i].mark, s->fl[i].max_end) != 0) {
        capture_failed(s, "the flight recorder's rotation");
        return;
    }
    s->flight_from = s->fl[i].max_end;
    s->flight_prunes++;
    memmove(s->fl, s->fl + i + 1, (s->nfl - i - 1) * sizeof *s->fl);
    s->nfl -= i + 1;
}

/* The flight recorder, after a flush was written: a checkpoint of where the tables end, then the
 * oldest rows out while they are older than the window (TLVIEW_FLIGHT=30s) or the data is over
 * its size (TLVIEW_FLIGHT=64M). Rows go by checkpoint, so what stays is whole: every row that
 * ended after s->flight_from is in the file, and the capture ranges are cut to begin there. */
static void flight(collector_session *s)
{
    if (!s->cfg.flight_ms && !s->cfg.flight_bytes)
        return;
    struct flight_mark m;
    m.max_end = collector_sink_max_end(s->sink);
    if (store_writer_rowmark(s->store, &m.mark) != 0) {
        capture_failed(s, "the flight recorder's rotation");
        return;
    }
    if (!s->nfl || memcmp(&m.mark, &s->fl[s->nfl - 1].mark, sizeof m.mark) != 0) {
        if (s->nfl == s->capfl) {
            if (s->capfl >= 4096) {
                /* A long window: every other checkpoint goes (the rotation gets coarser, never
                 * wrong: each checkpoint stands on its own). */
                for (size_t i = 0; 2 * i + 1 < s->nfl; i++)
                    s->fl[i] = s->fl[2 * i + 1];
                s->nfl /= 2;
            } else {
                size_t cap = s->capfl ? 2 * s->capfl : 64;
                struct flight_mark *grown = realloc(s->fl, cap * sizeof *grown);
                if (!grown)
                    return; /* no checkpoint this time: the next flush tries again */
                s->fl = grown;
                s->capfl = cap;
            }
        }
        s->fl[s->nfl++] = m;
    }
    if (s->cfg.flight_ms) {
        int64_t cutoff = s->hooks.gpu_clock() - (int64_t)s->cfg.flight_ms * 1000000;
        size_t last = SIZE_MAX;
        for (size_t i = 0; i + 1 < s->nfl && s->fl[i].max_end < cutoff; i++)
            last = i;
        if (last != SIZE_MAX)
            prune_to(s, last);
    }
    int64_t used = 0;
    while (s->cfg.flight_bytes && s->nfl > 1 && store_writer_used_bytes(s->store, &used) == 0 &&
           used > (int64_t)s->cfg.flight_bytes) {
        uint64_t before = s->flight_prunes;
        prune_to(s, 0);
        if (s->flight_prunes == before)
            break;
    }
}

/* Appends printf-style text to reply (n bytes), cutting what does not fit. */
static void say(char *reply, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *reply, size_t n, const char *fmt, ...)
{
    size_t len = strnlen(reply, n);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reply + len, n - len, fmt, ap);
    va_end(ap);
}

/* A `tlview capture dump`: what is written now, copied to DIR/NAME/BASE beside the file (NAME
 * defaults to dump-<unix time>); the reply names the copy. The copy's range ends where the file
 * is complete (collector_writer_horizon): at the request, or later when the flushes repeated for
 * it went on (every row after it is from those few ms); when CUPTI kept the newest records back
 * for all of SETTLE_MS, earlier, and the reply says by how much. */
static void dump(collector_session *s, collector_writer *w, const char *name, char *reply, size_t n)
{
    collector_writer_flush_now(w);
    write_events(s);
    int64_t asked = collector_writer_last_flush(w);
    int64_t at = collector_writer_settle(w, asked, SETTLE_MS);
    extend_open_range(s, at);
    char dir[PATH_MAX] = "", path[PATH_MAX] = "", first[PATH_MAX] = "", fallback[64] = "";
    if (!name[0]) {
        say(fallback, sizeof fallback, "dump-%lld",
            (long long)(clock_ns(CLOCK_REALTIME) / 1000000000));
        name = fallback;
    }
    const char *slash = strrchr(s->abs_path, '/'), *base = slash ? slash + 1 : s->abs_path;
    say(dir, sizeof dir, "%.*s%s%s", slash ? (int)(slash - s->abs_path) : 0, s->abs_path,
        slash ? "/" : "", name);
    say(first, sizeof first, "%s/%s", dir, base);
    if (strlen(first) + 8 >= sizeof first) {
        say(reply, n, "error the dump's path is too long");
        return;
    }
    struct stat st;
    if (mkdir(dir, 0755) != 0 && (errno != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        say(reply, n, "error cannot make the folder %s: %s", dir,
            errno == EEXIST ? "a file has that name" : strerror(errno));
        return;
    }
    say(path, sizeof path, "%s", first);
    char err[1024] = "";
    int64_t kernels = 0;
    int rc = STORE_EEXIST;
    for (unsigned i = 1; rc == STORE_EEXIST && i < 1000; i++) {
        rc = store_writer_snapshot(s->store, path, at, &kernels, err, sizeof err);
        if (rc == STORE_EEXIST && collector_numbered_path(first, i, path, sizeof path) != 0)
            break;
    }
    if (rc != STORE_OK) {
        say(reply, n, "error %s", err);
        return;
    }
    if (s->flight_from)
        say(reply, n, "ok dumped %lld kernels (the last %.1f s) to %s", (long long)kernels,
            (double)(at - s->flight_from) / 1e9, path);
    else
        say(reply, n, "ok dumped %lld kernels to %s", (long long)kernels, path);
    if (at < asked)
        say(reply, n,
            "; complete only to %.1f ms before the request: CUPTI still held a buffer after "
            "%u ms of flushes (a kernel running)",
            (double)(asked - at) / 1e6, SETTLE_MS);
}

/* What `tlview capture status` says. */
static void status(collector_session *s, char *reply, size_t n)
{
    collector_capture_state st;
    collector_capture_get(s->capture, &st);
    if (st.active)
        say(reply, n, "ok capturing range %u for %.1f s", st.range,
            (double)(mono_ms() - st.open_ms) / 1e3);
    else
        say(reply, n, "ok not capturing (%u ranges so far%s)", st.range,
            st.start_at_ms ? "; the delayed start is still to come" : "");
    if (s->cfg.flight_ms)
        say(reply, n, "; flight recorder: the last %.1f s", (double)s->cfg.flight_ms / 1e3);
    else if (s->cfg.flight_bytes)
        say(reply, n, "; flight recorder: the last %.1f MiB",
            (double)s->cfg.flight_bytes / (1 << 20));
    say(reply, n, "; writing %s", s->abs_path);
}

/* Serves the requests waiting on the control FIFO. */
static void serve_control(collector_session *s, collector_writer *w)
{
    collector_request req;
    char err[256], reply[COLLECTOR_CONTROL_LINE_MAX];
    int r;
    while ((r = collector_control_poll(s->control, &req, err, sizeof err)) != 0) {
        if (r < 0) {
            log_dbg("control: %s", err);
            continue;
        }
        collector_capture_state st;
        reply[0] = '\0';
        switch (req.cmd) {
        case COLLECTOR_CONTROL_START:
            r = collector_capture_start(s->capture, "control", req.arg, mono_ms());
            write_events(s);
            collector_capture_get(s->capture, &st);
            if (r == 0)
                say(reply, sizeof reply, "ok capturing: range %u opened", st.range);
            else if (r == 1)
                say(reply, sizeof reply, "ok already capturing (range %u, for %.1f s)", st.range,
                    (double)(mono_ms() - st.open_ms) / 1e3);
            else
                say(reply, sizeof reply,
                    "error tracing is off (CUPTI refused, or another CUPTI client took it over): "
                    "nothing opened");
            break;
        case COLLECTOR_CONTROL_STOP:
            collector_capture_get(s->capture, &st);
            r = collector_capture_stop(s->capture, "control");
            if (r == 0) {
                close_flush(w, write_events(s));
                say(reply, sizeof reply, "ok stopped: range %u closed after %.1f s", st.range,
                    (double)(mono_ms() - st.open_ms) / 1e3);
            } else {
                say(reply, sizeof reply, "ok not capturing: nothing to stop");
            }
            break;
        case COLLECTOR_CONTROL_DUMP: dump(s, w, req.arg, reply, sizeof reply); break;
        case COLLECTOR_CONTROL_STATUS: status(s, reply, sizeof reply); break;
        }
        if (collector_control_reply(s->control, &req, reply) != 0)
            log_dbg("control: the requester of '%s' is gone", reply);
    }
}

/* The writer thread's turn: requests, the delayed start and the duration's end, the rows of the
 * ranges, and after a flush the open range's reach and the flight recorder. */
static void tick(void *arg, collector_writer *w, int flushed)
{
    collector_session *s = arg;
    if (s->control)
        serve_control(s, w);
    collector_capture_tick(s->capture, mono_ms());
    int64_t closed = write_events(s);
    if (closed)
        close_flush(w, closed);
    else if (!flushed)
        return;
    /* A checkpoint of the flight recorder needs a flush that wrote something: one CUPTI answered
     * short (a buffer kept while a kernel runs) would leave a flush period without one, and the
     * window that much longer; tried again a few ms later, it seldom stays short. */
    if (flushed && (s->cfg.flight_ms || s->cfg.flight_bytes))
        collector_writer_settle(w, collector_writer_last_flush(w), FLIGHT_SETTLE_MS);
    extend_open_range(s, collector_writer_horizon(w));
    flight(s);
}

/* The capture work of the end, on the writer thread after the final flush: the open range
 * closes ("exit"), the flight recorder rotates once more, waiting requests are refused and the
 * control FIFO goes. */
static void finish_capture(collector_session *s)
{
    collector_capture_end(s->capture, "exit");
    write_events(s);
    flight(s);
    if (s->control) {
        collector_request req;
        char err[256];
        int r;
        while ((r = collector_control_poll(s->control, &req, err, sizeof err)) != 0)
            if (r > 0)
                collector_control_reply(s->control, &req, "error the process is ending");
        collector_control_close(s->control);
        s->control = NULL;
    }
    if (s->cfg.flight_ms || s->cfg.flight_bytes)
        store_writer_process_meta_int(s->store, s->process, "flight_rotations",
                                      (int64_t)s->flight_prunes);
    collector_capture_state st;
    collector_capture_get(s->capture, &st);
    if (st.range)
        store_writer_process_meta_int(s->store, s->process, "capture_switch_max_ns",
                                      st.switch_max_ns);
}

/* The closing work, run on the writer thread after the final flush and drain. */
static void finish_work(void *arg)
{
    collector_session *s = arg;
    store_writer *w = s->store;
    int64_t p = s->process;
    finish_capture(s);
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
    rc = rc ? rc : store_writer_process_meta_int(w, p, "calibration_end_bracket_ns", c.bracket);
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

/* Pokes the writer thread for a turn (a range opened or closed on another thread). */
static void session_wake(void *arg)
{
    collector_session *s = arg;
    if (s->writer)
        collector_writer_wake(s->writer);
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
    if (!realpath(s->path, s->abs_path))
        snprintf(s->abs_path, sizeof s->abs_path, "%s", s->path);
    if (cfg->control_dir[0]) {
        char err[512];
        if (collector_control_open(cfg->control_dir, (long)getpid(), &s->control, err,
                                   sizeof err) != 0) {
            /* With TLVIEW_CAPTURE=control nothing opens a range now: the process runs untraced,
             * as it would until a `capture start`. Never the whole run instead: a server traced
             * in full costs it for days (a folder another user made must not turn that on). */
            log_warn("no control channel (%s): `tlview capture` cannot reach this process%s", err,
                     cfg->capture == COLLECTOR_CAPTURE_CONTROL
                         ? "; with TLVIEW_CAPTURE=control nothing is traced (set "
                           "TLVIEW_CONTROL_DIR to a folder of yours)"
                         : "");
            if (s->cfg.capture == COLLECTOR_CAPTURE_CONTROL)
                note_error(s,
                           "TLVIEW_CAPTURE=control without a control channel (%s): nothing "
                           "traced",
                           err);
        }
    }
    if (collector_capture_new(&s->cfg, &s->hooks, session_wake, s, &s->capture) != 0) {
        log_err("out of memory; tracing disabled");
        goto fail;
    }

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
        .tick = tick,
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
    collector_capture_free(s->capture);
    collector_control_close(s->control);
    store_writer_close(s->store);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return -1;
}

void collector_session_begin_capture(collector_session *s)
{
    collector_capture_begin(s->capture, mono_ms());
}

int collector_session_capture(collector_session *s, int start, const char *reason)
{
    return start ? collector_capture_start(s->capture, reason, NULL, mono_ms())
                 : collector_capture_stop(s->capture, reason);
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
    collector_capture_free(s->capture);
    free(s->fl);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
