/* importers/imp.c: the entry point. Detects a file's format by content (SQLite tables, JSON shape,
 * known foreign magics), runs the matching imp_ops table over a reader object, and keeps what every
 * importer shares: the first error with its row, the unmapped counters, warnings, progress. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "imp_int.h"

static const imp_ops *const formats[] = {&imp_nvprof_ops, &imp_nsys_ops, &imp_chrome_ops,
                                         &imp_nvvp_ops};

static void set_error(imp_error *err, const char *file, int64_t row, const char *text)
{
    if (!err || err->message[0])
        return; /* first error wins */
    snprintf(err->file, sizeof err->file, "%s", file);
    err->row = row;
    snprintf(err->text, sizeof err->text, "%s", text);
    if (row > 0)
        snprintf(err->message, sizeof err->message, "%s:%lld: %s", file, (long long)row, text);
    else
        snprintf(err->message, sizeof err->message, "%s: %s", file, text);
}

int imp_fail(imp_reader *r, int code, const char *fmt, ...)
{
    char text[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    set_error(r->err, r->path, r->row, text);
    return code;
}

void imp_warn(imp_reader *r, const char *fmt, ...)
{
    if (r->stats->warning[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->stats->warning, sizeof r->stats->warning, fmt, ap);
    va_end(ap);
}

void imp_unmapped(imp_reader *r, const char *kind, uint64_t n)
{
    imp_stats *s = r->stats;
    if (n == 0)
        return;
    s->unmapped_total += n;
    uint32_t i;
    for (i = 0; i < s->nunmapped; i++)
        if (strcmp(s->unmapped[i].kind, kind) == 0)
            break;
    if (i == s->nunmapped) {
        if (s->nunmapped == IMP_MAX_UNMAPPED - 1)
            kind = "other"; /* last slot collects the kinds that did not fit */
        for (i = 0; i < s->nunmapped; i++)
            if (strcmp(s->unmapped[i].kind, kind) == 0)
                break;
        if (i == s->nunmapped) {
            snprintf(s->unmapped[i].kind, sizeof s->unmapped[i].kind, "%s", kind);
            s->unmapped[i].count = 0;
            s->nunmapped++;
        }
    }
    s->unmapped[i].count += n;
}

void imp_refuse(imp_reader *r, store_idx process)
{
    r->run->processes[process].rows_refused++;
    imp_unmapped(r, "time_overflow", 1);
}

int imp_flush_meta(imp_reader *r, store_idx process)
{
    char key[96], val[32];
    int rc = store_run_process_meta(r->run, process, "import.format", r->ops->name);
    for (uint32_t i = 0; rc == 0 && i < r->stats->nunmapped; i++) {
        snprintf(key, sizeof key, "import.unmapped.%s", r->stats->unmapped[i].kind);
        snprintf(val, sizeof val, "%llu", (unsigned long long)r->stats->unmapped[i].count);
        rc = store_run_process_meta(r->run, process, key, val);
    }
    if (rc == 0 && r->stats->warning[0])
        rc = store_run_process_meta(r->run, process, "import.warning", r->stats->warning);
    return rc ? imp_fail(r, rc, "out of memory writing process metadata") : 0;
}

void imp_progress(imp_reader *r, uint64_t done, uint64_t total)
{
    if (total && done >= total)
        done = total - 1;
    if (!r->opt->progress || done < r->progress_next)
        return;
    r->progress_next = done + (total ? total / 200 + 1 : 1u << 20);
    r->opt->progress(r->opt->progress_ctx, r->path, done, total);
}

void imp_progress_end(imp_reader *r, uint64_t total)
{
    if (r->opt->progress)
        r->opt->progress(r->opt->progress_ctx, r->path, total, total);
}

int imp_charge(imp_reader *r, uint64_t bytes)
{
    if (r->memory <= UINT64_MAX - bytes && (r->memory += bytes) <= r->max_memory)
        return 0;
    char size[40];
    uint64_t m = r->max_memory;
    if (m % (1 << 20) == 0)
        snprintf(size, sizeof size, "%llu MiB", (unsigned long long)(m >> 20));
    else
        snprintf(size, sizeof size, "%llu bytes", (unsigned long long)m);
    if (r->memory_before)
        return imp_fail(r, STORE_ENOMEM,
                        "the import would hold more than %s in the run (%.1f MiB of it for the "
                        "files before this one; the limit holds for the run's total; "
                        "TLVIEW_MAX_MEMORY=N (MiB) raises it)",
                        size, (double)r->memory_before / (1 << 20));
    return imp_fail(
        r, STORE_ENOMEM,
        "the import would hold more than %s (the limit; TLVIEW_MAX_MEMORY=N (MiB) raises it)",
        size);
}

int imp_count_event(imp_reader *r)
{
    if (r->events < r->max_events) {
        r->events++;
        return 0;
    }
    if (r->events_before)
        return imp_fail(r, STORE_ENOMEM,
                        "more than %llu events in the run (%llu of them in the files before this "
                        "one; the limit holds for the run's total; TLVIEW_MAX_EVENTS=N raises it)",
                        (unsigned long long)r->max_events, (unsigned long long)r->events_before);
    return imp_fail(r, STORE_ENOMEM,
                    "more than %llu events (the limit; TLVIEW_MAX_EVENTS=N raises it)",
                    (unsigned long long)r->max_events);
}

store_idx imp_device(imp_reader *r, store_idx process, const store_device_info *d)
{
    store_idx idx = store_run_add_device(r->run, process, d);
    if (idx == STORE_NONE)
        imp_fail(r, STORE_ENOMEM, "out of memory adding a device");
    return idx;
}

store_idx imp_gpu_device(imp_reader *r, store_idx process, const imp_gpu *gpus, size_t n,
                         uint32_t device_id)
{
    for (size_t i = n; i-- > 0;)
        if (gpus[i].id == device_id)
            return imp_device(r, process, &gpus[i].info);
    store_device_info bare = {.device_id = device_id};
    return imp_device(r, process, &bare);
}

int imp_add_kernel(imp_reader *r, const store_launch *l, store_kernel *k)
{
    if ((k->launch = store_run_launch(r->run, l)) == STORE_NONE ||
        store_run_add_kernel(r->run, k) != 0)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding kernels");
    return 0;
}

int imp_grow(imp_reader *r, void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *g = c <= SIZE_MAX / size ? realloc(*arr, c * size) : NULL;
    if (!g)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    *arr = g;
    *cap = c;
    return 0;
}

int imp_add_copy(imp_reader *r, const store_copy *c)
{
    if (store_run_add_copy(r->run, c) != 0)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding copies");
    return 0;
}

int imp_add_api(imp_reader *r, const store_api *a)
{
    if (store_run_add_api(r->run, a) != 0)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding API calls");
    return 0;
}

int imp_add_range(imp_reader *r, const store_range *g)
{
    if (store_run_add_range(r->run, g) != 0)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding ranges");
    return 0;
}

store_idx imp_intern(imp_reader *r, const char *text)
{
    store_idx s = store_run_intern(r->run, text ? text : "(unknown)");
    if (s == STORE_NONE)
        imp_fail(r, STORE_ENOMEM, "out of memory interning a string");
    return s;
}

int imp_open(imp_reader *r, int *pFd)
{
    char e[4400];
    if ((*pFd = store_fs_open_read(r->path, e, sizeof e)) >= 0)
        return 0;
    size_t pl = strlen(r->path); /* the message names the file already: set_error() does */
    return imp_fail(r, STORE_EIO, "%s", strncmp(e, r->path, pl) == 0 ? e + pl + 2 : e);
}

/* Reads up to cap bytes of the file's content, gunzipped when it is gzip. Returns the count, -1
 * (errno set) or -2 (why set: not a regular file, broken gzip). *gz tells whether it was
 * compressed. */
static long read_head(const char *path, unsigned char *buf, size_t cap, int *gz, char *why,
                      size_t whycap)
{
    char e[4400];
    int fd = store_fs_open_read(path, e, sizeof e); /* a FIFO never blocks the probe */
    if (fd < 0) {
        size_t pl = strlen(path);
        snprintf(why, whycap, "%.290s", strncmp(e, path, pl) == 0 ? e + pl + 2 : e);
        return -2;
    }
    size_t n = 0;
    ssize_t got = 1;
    while (n < cap && (got = read(fd, buf + n, cap - n)) > 0)
        n += (size_t)got;
    if (got < 0) {
        int e2 = errno;
        close(fd);
        errno = e2 ? e2 : EIO;
        return -1;
    }
    *gz = n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
    gzFile g = *gz && lseek(fd, 0, SEEK_SET) == 0 ? gzdopen(fd, "rb") : NULL;
    if (!g) {
        close(fd);
        if (*gz)
            return -1;
        return (long)n;
    }
    int m = gzread(g, buf, (unsigned)cap), zerr = Z_OK;
    const char *msg = m <= 0 ? gzerror(g, &zerr) : "", *colon = strstr(msg, ": ");
    if (!strncmp(msg, "<fd:", 4) && colon) /* zlib's message starts with "<fd:N>: " */
        msg = colon + 2;
    if (m <= 0 && zerr != Z_OK && zerr != Z_BUF_ERROR)
        snprintf(why, whycap, "corrupt gzip data: %s", msg);
    gzclose(g);
    return m <= 0 && why[0] ? -2 : m < 0 ? 0 : m;
}

/* Names what a file is when no importer takes it. */
static void explain(const char *path, const unsigned char *h, size_t n, sqlite3 *db, imp_error *err)
{
    static const unsigned char legacy[] = {0x00, 0x04, 0x00, 0x00, 0x04,
                                           0x00, 0x00, 0x00, 0x01, 0x04};
    const char *why;
    if (n == 0)
        why = "empty file";
    else if (db && imp_sql_has_table(db, "profStringTable"))
        why = "a PGI pgprof profile (SQLite without nvprof's Version table): not supported";
    else if (db) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        char text[300];
        if (rc != SQLITE_ROW)
            snprintf(text, sizeof text, "corrupt or truncated SQLite database (%s)",
                     sqlite3_errmsg(db));
        else
            snprintf(text, sizeof text,
                     "an SQLite database of unknown kind (no nvprof Version/StringTable, no Nsight "
                     "Systems StringIds, not a tlview file)");
        sqlite3_finalize(st);
        set_error(err, path, 0, text);
        return;
    } else if (n >= sizeof legacy && memcmp(h, legacy, sizeof legacy) == 0)
        why = "a legacy (pre-SQLite, 2013-2015) nvprof file: not supported; re-export it with a "
              "newer nvprof";
    else if (n >= 5 && memcmp(h, "<?xml", 5) == 0)
        why = "XML, but not an NVIDIA Visual Profiler session (no <session> root element)";
    else if (n >= 16 && memcmp(h, "SQLite format 3", 16) == 0)
        why = "unreadable SQLite database";
    else
        why = "unknown format (neither an SQLite profile nor a JSON trace)";
    set_error(err, path, 0, why);
}

/* Runs the probes; returns the matching ops (or NULL, err set), *native when it is a tlview file.
 */
static const imp_ops *detect(const char *path, int *native, imp_error *err)
{
    unsigned char head[4096];
    int gz = 0;
    *native = 0;
    char text[300] = "";
    long n = read_head(path, head, sizeof head, &gz, text, sizeof text);
    if (n < 0) {
        if (n == -1)
            snprintf(text, sizeof text, "cannot open: %s", strerror(errno));
        set_error(err, path, 0, text);
        return NULL;
    }
    imp_probe p = {path, head, (size_t)n, NULL};
    if (!gz && n >= 16 && memcmp(head, "SQLite format 3", 16) == 0) {
        if (store_probe(path)) {
            *native = 1;
            return NULL;
        }
        if (sqlite3_open_v2(path, &p.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
            sqlite3_close(p.db);
            p.db = NULL;
        }
    }
    const imp_ops *found = NULL;
    for (size_t i = 0; !found && i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i]->probe(&p))
            found = formats[i];
    if (!found)
        explain(path, head, (size_t)n, p.db, err);
    sqlite3_close(p.db);
    return found;
}

const char *imp_detect(const char *path, imp_error *err)
{
    int native;
    const imp_ops *ops = detect(path, &native, err);
    return native ? "tlview" : ops ? ops->name : NULL;
}

/* The record counts of a run, to tell what one import added. */
typedef struct run_counts {
    uint32_t processes;
    uint64_t kernels, copies, apis, ranges;
} run_counts;

static run_counts counts_of(const store_run *run)
{
    return (run_counts){run->nprocesses, run->nkernels, run->ncopies, run->napis, run->nranges};
}

static void count_added(imp_stats *stats, const store_run *run, const run_counts *before)
{
    run_counts now = counts_of(run);
    stats->processes = now.processes - before->processes;
    stats->kernels = now.kernels - before->kernels;
    stats->copies = now.copies - before->copies;
    stats->apis = now.apis - before->apis;
    stats->ranges = now.ranges - before->ranges;
}

/* A limit: `set` when not 0, else the environment's `env` (a whole number of `unit`s, 0 for no
 * limit) when set, else `dflt`. 0, or STORE_EINVAL with the error set for a malformed value. */
static int limit(imp_reader *r, uint64_t set, const char *env, uint64_t unit, uint64_t dflt,
                 uint64_t *out /* OUT */)
{
    const char *v = set ? NULL : getenv(env);
    *out = set ? set : dflt;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || *v < '0' || *v > '9' || n > UINT64_MAX / unit)
        return imp_fail(r, STORE_EINVAL, "%s=%.40s: not a whole number%s", env, v,
                        unit > 1 ? " of MiB" : "");
    *out = n ? n * unit : UINT64_MAX;
    return 0;
}

int imp_limits(imp_reader *r)
{
    int rc = limit(r, r->opt->max_events, "TLVIEW_MAX_EVENTS", 1, IMP_MAX_EVENTS, &r->max_events);
    return rc ? rc
              : limit(r, r->opt->max_memory, "TLVIEW_MAX_MEMORY", 1 << 20, IMP_MAX_MEMORY,
                      &r->max_memory);
}

int imp_load_ex(store_run *run, const char *path, const imp_options *opt, imp_stats *stats,
                imp_error *err)
{
    static const imp_options no_options;
    imp_error local_err;
    imp_stats local_stats;
    if (!err)
        err = &local_err;
    if (!stats)
        stats = &local_stats;
    memset(err, 0, sizeof *err);
    memset(stats, 0, sizeof *stats);
    if (!run || !path)
        return STORE_EINVAL;

    int native;
    const imp_ops *ops = detect(path, &native, err);
    run_counts before = counts_of(run);
    if (native) {
        stats->format = "tlview";
        int rc = store_run_load(run, path);
        if (rc)
            set_error(err, path, 0, store_run_errmsg(run));
        count_added(stats, run, &before);
        return rc;
    }
    if (!ops) {
        store_run_error(run, STORE_EFORMAT, "%s", err->message);
        return STORE_EFORMAT;
    }

    imp_total *total = opt ? opt->total : NULL;
    imp_reader r = {.ops = ops,
                    .path = path,
                    .run = run,
                    .err = err,
                    .stats = stats,
                    .opt = opt ? opt : &no_options,
                    .events = total ? total->events : 0,
                    .memory = total ? total->memory : 0};
    r.events_before = r.events;
    r.memory_before = r.memory;
    stats->format = ops->name;
    int rc = ops->open(&r);
    if (rc == 0)
        rc = ops->load(&r);
    ops->close(&r); /* gives back what the import held only while it read */
    count_added(stats, run, &before);
    if (rc == 0 && run->nprocesses > before.processes)
        rc = imp_flush_meta(&r, before.processes);
    if (rc == 0 && total) {
        total->events = r.events;
        total->memory = r.memory;
    }
    if (rc) {
        if (!err->message[0])
            imp_fail(&r, rc, "import failed (code %d)", rc);
        store_run_error(run, rc, "%s", err->message);
    }
    return rc;
}

int imp_load(store_run *run, const char *path, imp_error *err)
{
    return imp_load_ex(run, path, NULL, NULL, err);
}
