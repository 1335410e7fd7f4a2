/* importers/chrome.c: Chrome trace JSON (PyTorch profiler / Kineto *.pt.trace.json, plain or gzip,
 * and `tlview export --chrome`) -> run processes. The file is streamed (importers/imp_json.c): only
 * one event is held at a time, plus the GPU, API and annotation records kept for the run. Records
 * are kept until the end because what places them comes anywhere in the file: baseTimeNanoseconds
 * (ts is then relative to it; else ts is Unix-epoch us) and the process metadata naming the real
 * pid (GPU events carry the device index as their pid). A Kineto file is one process. A tlview
 * export declares each of its processes in the args of its process_name event (under "tlview":
 * pid, host, command, process_meta, contexts with their MPS and green-context state, streams);
 * records on a declared Chrome pid belong to that process, the others to one process found as in
 * a Kineto file. Categories tlview_* (verdict windows, counters, flow arrows) are tlview's view of
 * the run, not records, and are skipped. Both the {"traceEvents": [...]} form and the 2021 bare
 * array are read; categories compare case-insensitively (2021: "Kernel", "Memcpy", ...).
 * What a file may grow to is bounded (importers.h: r->max_events records, r->max_memory bytes
 * counted by imp_charge), and every lookup is by sort or hash, so time grows as n log n: a file
 * names its GPUs and processes as many times as it likes. A record whose time lies beyond
 * +-STORE_TIME_MAX is refused and counted in its process's rows_refused. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_int.h"

typedef enum { REC_KERNEL, REC_COPY, REC_API, REC_RANGE } rec_type;

/* ch_rec.flags; REC_REFUSED: its ts or dur does not fit int64 ns; refused and counted
 * (imp_refuse) once its process is known */
enum { REC_HAS_DEVICE = 1, REC_GREEN = 2, REC_REFUSED = 4 };

/* One kept record; times in ns, still relative to baseTimeNanoseconds when there is one. */
typedef struct ch_rec {
    int64_t ts, dur;
    int64_t pid;     /* the event's Chrome pid (0 when it has none) */
    uint64_t u64;    /* REC_COPY: bytes; REC_API, REC_RANGE: thread */
    uint32_t device; /* REC_KERNEL, REC_COPY: args.device, else the event's pid */
    uint32_t context, stream, correlation;
    store_idx what;     /* REC_KERNEL: launch; REC_API, REC_RANGE: name */
    uint32_t aux;       /* REC_API: status; REC_RANGE: domain (STORE_NONE: none); REC_KERNEL,
                           REC_COPY: the context's parent context id (green) */
    uint32_t sm_count;  /* REC_KERNEL, REC_COPY: SMs of the context (green); 0 unknown */
    uint32_t slot;      /* finish(): index of its process in the file's processes */
    uint8_t type;       /* rec_type */
    uint8_t api_domain; /* store_api_domain for REC_API */
    uint8_t api_kind;   /* REC_KERNEL, REC_COPY: the context's compute_api_kind, 0 unknown */
    uint8_t flags;      /* REC_HAS_DEVICE, REC_GREEN, REC_REFUSED */
    uint16_t kind;      /* copy kind / memory kind */
    uint16_t copy_type; /* store_copy_type */
} ch_rec;

/* A context a tlview export declares for a process. */
typedef struct ch_ctx {
    uint32_t id, device;                    /* CUDA context id; the device id of deviceProperties */
    int has_device;                         /* device is known */
    uint32_t kind, green, parent, sm_count; /* store_context's fields */
    uint32_t *streams;                      /* CUDA stream ids, in the run's order */
    uint32_t nstreams;
} ch_ctx;

/* A capture range a tlview export declares for a process: ns after baseTimeNanoseconds. */
typedef struct ch_cap {
    int64_t start, end;
    char *name, *start_reason, *end_reason; /* NULL when null */
} ch_cap;

/* A process a tlview export declares (process_name args.tlview); strings owned here. */
typedef struct ch_proc {
    int64_t chrome_pid; /* the pid its events carry */
    int64_t pid, ppid, start_wall;
    char *host, *exe, *argv, *run_id;
    char **meta; /* nmeta (key, value) pairs, value may be NULL */
    uint32_t nmeta;
    ch_ctx *ctxs;
    uint32_t nctxs;
    ch_cap *caps;
    uint32_t ncaps;
    store_idx idx; /* the run process, once added */
} ch_proc;

typedef struct chrome {
    imp_json *j;
    ch_rec *recs;
    size_t nrecs, caprecs;
    imp_gpu *devs; /* info.name owned here */
    size_t ndevs, capdevs;
    int64_t base; /* baseTimeNanoseconds, 0 when absent */
    int have_cpu_pid;
    int64_t cpu_pid; /* from process_labels "CPU" */
    int have_any_pid;
    int64_t any_pid; /* first pid of a CPU-side event */
    struct {
        int64_t pid;
        char *name;
    } pnames[16]; /* process_name metadata, first 16 pids */
    size_t npnames;
    char *host;
    int64_t rank, world_size; /* distributedInfo's rank and world_size */
    int have_rank, have_world;
    int64_t schema; /* schemaVersion, 0 when absent */
    uint64_t events, events_with_ph;
    ch_proc *procs; /* declared by a tlview export, in file order */
    size_t nprocs, capprocs;
} chrome;

static int ch_probe(const imp_probe *p)
{
    size_t i = 0;
    if (p->nhead >= 3 && memcmp(p->head, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* a UTF-8 byte order mark */
    while (i < p->nhead && isspace(p->head[i]))
        i++;
    return i < p->nhead && (p->head[i] == '{' || p->head[i] == '[');
}

static int ch_open(imp_reader *r)
{
    chrome *ch = calloc(1, sizeof *ch);
    if (!ch)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    r->state = ch;
    int rc = imp_limits(r);
    return rc ? rc : imp_json_open(r, &ch->j);
}

static void proc_free(ch_proc *p)
{
    free(p->host);
    free(p->exe);
    free(p->argv);
    free(p->run_id);
    for (uint32_t i = 0; i < 2 * p->nmeta; i++)
        free(p->meta[i]);
    free(p->meta);
    for (uint32_t i = 0; i < p->nctxs; i++)
        free(p->ctxs[i].streams);
    free(p->ctxs);
    for (uint32_t i = 0; i < p->ncaps; i++) {
        free(p->caps[i].name);
        free(p->caps[i].start_reason);
        free(p->caps[i].end_reason);
    }
    free(p->caps);
}

static void ch_close(imp_reader *r)
{
    chrome *ch = r->state;
    if (!ch)
        return;
    /* what only the reading held goes back: the JSON buffers and each record's staging (its
     * ch_rec and its place in finish()'s order); the run keeps its rows, strings and the rest */
    r->memory -= imp_json_charged(ch->j) + ch->nrecs * (uint64_t)(sizeof(ch_rec) + sizeof(size_t));
    imp_json_close(ch->j);
    free(ch->recs);
    for (size_t i = 0; i < ch->ndevs; i++)
        free((char *)ch->devs[i].info.name);
    free(ch->devs);
    for (size_t i = 0; i < ch->npnames; i++)
        free(ch->pnames[i].name);
    for (size_t i = 0; i < ch->nprocs; i++)
        proc_free(&ch->procs[i]);
    free(ch->procs);
    free(ch->host);
    free(ch);
    r->state = NULL;
}

/* The bytes a kept record of `type` costs until the end of the import: its ch_rec, its row in
 * the run, its place in finish()'s order. */
static uint64_t rec_cost(rec_type type)
{
    size_t row = type == REC_KERNEL ? sizeof(store_kernel)
                 : type == REC_COPY ? sizeof(store_copy)
                 : type == REC_API  ? sizeof(store_api)
                                    : sizeof(store_range);
    return sizeof(ch_rec) + row + sizeof(size_t);
}

/* A new zeroed record of `type`, within the import's limits; NULL with the error set. */
static ch_rec *new_rec(imp_reader *r, chrome *ch, rec_type type)
{
    if (imp_count_event(r) || imp_charge(r, rec_cost(type)) ||
        imp_grow(r, (void **)&ch->recs, ch->nrecs, &ch->caprecs, sizeof *ch->recs))
        return NULL;
    ch_rec *c = &ch->recs[ch->nrecs++];
    memset(c, 0, sizeof *c);
    c->type = (uint8_t)type;
    return c;
}

/* imp_intern() that counts a new string toward the memory limit; STORE_NONE with the error set. */
static store_idx intern(imp_reader *r, const char *text)
{
    uint32_t before = r->run->nstrings;
    store_idx s = imp_intern(r, text);
    if (s == STORE_NONE || r->run->nstrings == before)
        return s;
    const store_string *t = &r->run->strings[s];
    uint64_t bytes = strlen(t->text) + 1 + sizeof *t + 16; /* 16: its hash table slot */
    if (t->demangled != t->text)
        bytes += strlen(t->demangled) + 1;
    return imp_charge(r, bytes) ? STORE_NONE : s;
}

static int64_t arg_int(imp_json *j, imp_jref args, const char *key, int64_t dflt)
{
    int64_t v = dflt;
    imp_json_int(j, imp_json_geti(j, args, key), &v);
    return v;
}

/* arg_int() for the keys only tlview writes: their case is known (and strcmp is cheaper). */
static int64_t arg_tl(imp_json *j, imp_jref args, const char *key, int64_t dflt)
{
    int64_t v = dflt;
    imp_json_int(j, imp_json_get(j, args, key), &v);
    return v;
}

/* "Memcpy HtoD (Pageable -> Device)" -> CUpti_ActivityMemcpyKind 1. */
static uint16_t memcpy_kind(const char *name)
{
    static const char *const kinds[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    for (size_t i = 0; name && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strstr(name, kinds[i]))
            return (uint16_t)(i + 1);
    return 0;
}

/* "Memset (Device)" -> CUpti_ActivityMemoryKind 3. */
static uint16_t memory_kind(const char *name)
{
    static const char *const kinds[] = {"Pageable", "Pinned", "Device", "Array", "Managed"};
    for (size_t i = 0; name && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strstr(name, kinds[i]))
            return (uint16_t)(i + 1);
    return 0;
}

/* A copy of a string value in *out (NULL when v is not a string), counted toward the memory
 * limit; 0 or STORE_ENOMEM. */
static int dup_str(imp_reader *r, imp_json *j, imp_jref v, char **out)
{
    const char *text = imp_json_type(j, v) == IMP_JSTR ? imp_json_str(j, v) : NULL;
    *out = NULL;
    if (!text)
        return 0;
    int rc = imp_charge(r, strlen(text) + 1);
    if (rc)
        return rc;
    *out = strdup(text);
    return *out ? 0 : imp_fail(r, STORE_ENOMEM, "out of memory");
}

/* The contexts of a declared process: [{"id": 1, "device": 0, "compute_api_kind": 1, "green": 0,
 * "parent_context": 0, "sm_count": 0, "streams": [13, 7]}]. */
static int declare_contexts(imp_reader *r, imp_json *j, imp_jref arr, ch_proc *p)
{
    uint32_t n = imp_json_len(j, arr);
    int rc;
    if (imp_json_type(j, arr) != IMP_JARR || n == 0)
        return 0;
    if ((rc = imp_charge(r, (uint64_t)n * sizeof *p->ctxs)))
        return rc;
    if (!(p->ctxs = calloc(n, sizeof *p->ctxs)))
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    for (imp_jref c = imp_json_first(j, arr); c != IMP_JNONE; c = imp_json_next(j, c)) {
        ch_ctx *x = &p->ctxs[p->nctxs];
        int64_t v;
        if (!imp_json_int(j, imp_json_get(j, c, "id"), &v))
            continue;
        x->id = (uint32_t)v;
        x->has_device = imp_json_int(j, imp_json_get(j, c, "device"), &v);
        x->device = x->has_device ? (uint32_t)v : 0;
        x->kind = (uint32_t)arg_tl(j, c, "compute_api_kind", 0);
        x->green = (uint32_t)arg_tl(j, c, "green", 0);
        x->parent = (uint32_t)arg_tl(j, c, "parent_context", 0);
        x->sm_count = (uint32_t)arg_tl(j, c, "sm_count", 0);
        imp_jref st = imp_json_get(j, c, "streams");
        uint32_t ns = imp_json_len(j, st);
        if (ns && (rc = imp_charge(r, (uint64_t)ns * sizeof *x->streams)))
            return rc;
        if (ns && !(x->streams = malloc(ns * sizeof *x->streams)))
            return imp_fail(r, STORE_ENOMEM, "out of memory");
        for (imp_jref k = imp_json_first(j, st); k != IMP_JNONE; k = imp_json_next(j, k))
            if (imp_json_int(j, k, &v))
                x->streams[x->nstreams++] = (uint32_t)v;
        p->nctxs++;
    }
    return 0;
}

/* The capture ranges of a declared process: [[start, end, name, start_reason, end_reason], ...]
 * with integer ns after baseTimeNanoseconds; an entry of another shape is counted as unmapped. */
static int declare_captures(imp_reader *r, imp_json *j, imp_jref arr, ch_proc *p)
{
    uint32_t n = imp_json_len(j, arr);
    int rc;
    if (imp_json_type(j, arr) != IMP_JARR || n == 0)
        return 0;
    if ((rc = imp_charge(r, (uint64_t)n * sizeof *p->caps)))
        return rc;
    if (!(p->caps = calloc(n, sizeof *p->caps)))
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    for (imp_jref c = imp_json_first(j, arr); c != IMP_JNONE; c = imp_json_next(j, c)) {
        imp_jref f[5] = {IMP_JNONE, IMP_JNONE, IMP_JNONE, IMP_JNONE, IMP_JNONE};
        if (imp_json_type(j, c) == IMP_JARR && imp_json_len(j, c) == 5) {
            f[0] = imp_json_first(j, c);
            for (int k = 1; k < 5; k++)
                f[k] = imp_json_next(j, f[k - 1]);
        }
        ch_cap *x = &p->caps[p->ncaps];
        if (f[0] == IMP_JNONE || !imp_json_int(j, f[0], &x->start) ||
            !imp_json_int(j, f[1], &x->end) || x->end < x->start) {
            imp_unmapped(r, "tlview.capture_invalid", 1);
            continue;
        }
        p->ncaps++;
        if ((rc = dup_str(r, j, f[2], &x->name)) || (rc = dup_str(r, j, f[3], &x->start_reason)) ||
            (rc = dup_str(r, j, f[4], &x->end_reason)))
            return rc;
    }
    return 0;
}

/* process_name args.tlview of a tlview export: the process behind Chrome pid `pid`. Every
 * declaration is kept here; finish() keeps the first of each pid (dedupe_procs). */
static int declare_process(imp_reader *r, chrome *ch, int64_t pid, imp_jref t)
{
    imp_json *j = ch->j;
    int64_t v;
    int rc = imp_charge(r, sizeof *ch->procs);
    if (rc || (rc = imp_grow(r, (void **)&ch->procs, ch->nprocs, &ch->capprocs, sizeof *ch->procs)))
        return rc;
    ch_proc *p = &ch->procs[ch->nprocs++];
    memset(p, 0, sizeof *p);
    p->chrome_pid = pid;
    p->pid = imp_json_int(j, imp_json_get(j, t, "pid"), &v) ? v : pid;
    p->ppid = arg_tl(j, t, "ppid", 0);
    p->start_wall = arg_tl(j, t, "start_wall", 0);
    if ((rc = dup_str(r, j, imp_json_get(j, t, "host"), &p->host)) ||
        (rc = dup_str(r, j, imp_json_get(j, t, "exe"), &p->exe)) ||
        (rc = dup_str(r, j, imp_json_get(j, t, "argv"), &p->argv)) ||
        (rc = dup_str(r, j, imp_json_get(j, t, "run_id"), &p->run_id)))
        return rc;
    imp_jref meta = imp_json_get(j, t, "meta"); /* [[key, value], ...] */
    uint32_t n = imp_json_len(j, meta);
    if (imp_json_type(j, meta) == IMP_JARR && n &&
        ((rc = imp_charge(r, 2 * (uint64_t)n * sizeof *p->meta)) ||
         !(p->meta = calloc(2 * (size_t)n, sizeof *p->meta))))
        return rc ? rc : imp_fail(r, STORE_ENOMEM, "out of memory");
    for (imp_jref kv = imp_json_first(j, meta); p->meta && kv != IMP_JNONE;
         kv = imp_json_next(j, kv)) {
        imp_jref key = imp_json_first(j, kv), value = imp_json_next(j, key);
        if (imp_json_type(j, kv) != IMP_JARR || imp_json_type(j, key) != IMP_JSTR)
            continue;
        char **pair = &p->meta[2 * p->nmeta];
        if ((rc = dup_str(r, j, key, &pair[0])))
            return rc;
        p->nmeta++;
        if ((rc = dup_str(r, j, value, &pair[1])))
            return rc;
    }
    if ((rc = declare_contexts(r, j, imp_json_get(j, t, "contexts"), p)))
        return rc;
    return declare_captures(r, j, imp_json_get(j, t, "captures"), p);
}

/* ph "M": process_labels "CPU" marks the OS pid; process_name names it, and in a tlview export
 * declares the process. */
static int metadata(imp_reader *r, chrome *ch, imp_jref ev)
{
    imp_json *j = ch->j;
    const char *what = imp_json_str(j, imp_json_get(j, ev, "name"));
    imp_jref args = imp_json_get(j, ev, "args");
    int64_t pid;
    if (!what || !imp_json_int(j, imp_json_get(j, ev, "pid"), &pid) ||
        imp_json_type(j, imp_json_get(j, ev, "pid")) != IMP_JNUM)
        return 0;
    if (strcmp(what, "process_labels") == 0) {
        const char *labels = imp_json_str(j, imp_json_get(j, args, "labels"));
        if (labels && strcmp(labels, "CPU") == 0 && !ch->have_cpu_pid) {
            ch->have_cpu_pid = 1;
            ch->cpu_pid = pid;
        }
    } else if (strcmp(what, "process_name") == 0) {
        imp_jref t = imp_json_get(j, args, "tlview");
        if (imp_json_type(j, t) == IMP_JOBJ)
            return declare_process(r, ch, pid, t);
        const char *name = imp_json_str(j, imp_json_get(j, args, "name"));
        for (size_t i = 0; i < ch->npnames; i++)
            if (ch->pnames[i].pid == pid)
                return 0;
        if (name && ch->npnames < sizeof ch->pnames / sizeof ch->pnames[0]) {
            ch->pnames[ch->npnames].pid = pid;
            if ((ch->pnames[ch->npnames].name = strdup(name)))
                ch->npnames++;
        }
    }
    return 0;
}

static void unmapped_cat(imp_reader *r, const char *prefix, const char *cat)
{
    char kind[48];
    size_t n = (size_t)snprintf(kind, sizeof kind, "%s", prefix);
    for (const char *c = cat ? cat : "none"; *c && n < 40; c++)
        kind[n++] = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '_';
    kind[n] = 0;
    imp_unmapped(r, kind, 1);
}

static int event(imp_reader *r, chrome *ch, imp_jref ev)
{
    imp_json *j = ch->j;
    ch->events++;
    if (imp_json_type(j, ev) != IMP_JOBJ)
        return imp_fail(r, STORE_EFORMAT, "trace event %llu is not an object: not a Chrome trace",
                        (unsigned long long)ch->events - 1);
    const char *ph = imp_json_str(j, imp_json_get(j, ev, "ph"));
    if (!ph || imp_json_type(j, imp_json_get(j, ev, "ph")) != IMP_JSTR) {
        imp_unmapped(r, "event.no_ph", 1);
        return 0;
    }
    ch->events_with_ph++;
    if (strcmp(ph, "M") == 0)
        return metadata(r, ch, ev);
    const char *cat = imp_json_str(j, imp_json_get(j, ev, "cat"));
    if (cat && strncmp(cat, "tlview_", 7) == 0)
        return 0; /* tlview's verdicts, counters and arrows: its view of the run, not records */
    if (strcmp(ph, "X") != 0) {
        unmapped_cat(r, "event.ph_",
                     ph[0] == 's' || ph[0] == 'f' || ph[0] == 't' ? "flow"
                     : ph[0] == 'i' || ph[0] == 'I'               ? "instant"
                                                                  : ph);
        return 0;
    }
    rec_type type;
    int api_domain = 0, copy_type = 0;
    if (!cat)
        type = (rec_type)-1;
    else if (strcasecmp(cat, "kernel") == 0)
        type = REC_KERNEL;
    else if (strcasecmp(cat, "gpu_memcpy") == 0 || strcasecmp(cat, "memcpy") == 0)
        type = REC_COPY, copy_type = STORE_COPY_MEMCPY;
    else if (strcasecmp(cat, "gpu_memset") == 0 || strcasecmp(cat, "memset") == 0)
        type = REC_COPY, copy_type = STORE_COPY_MEMSET;
    else if (strcasecmp(cat, "cuda_runtime") == 0 || strcasecmp(cat, "runtime") == 0)
        type = REC_API, api_domain = STORE_API_RUNTIME;
    else if (strcasecmp(cat, "cuda_driver") == 0 || strcasecmp(cat, "driver") == 0)
        type = REC_API, api_domain = STORE_API_DRIVER;
    else if (strcasecmp(cat, "user_annotation") == 0)
        type = REC_RANGE;
    else
        type = (rec_type)-1;

    int64_t pid = 0, tid = 0;
    int pid_num = imp_json_type(j, imp_json_get(j, ev, "pid")) == IMP_JNUM &&
                  imp_json_int(j, imp_json_get(j, ev, "pid"), &pid);
    imp_json_int(j, imp_json_get(j, ev, "tid"), &tid);
    if (pid_num && !ch->have_any_pid && type != REC_KERNEL && type != REC_COPY) {
        ch->have_any_pid = 1; /* CPU-side events carry the OS pid */
        ch->any_pid = pid;
    }
    if ((int)type < 0) {
        unmapped_cat(r, "event.", cat);
        return 0;
    }
    int64_t ts, dur = 0;
    imp_jref tsv = imp_json_get(j, ev, "ts"), durv = imp_json_get(j, ev, "dur");
    int ts_ok = imp_json_milli(j, tsv, &ts),
        dur_ok = durv == IMP_JNONE || imp_json_milli(j, durv, &dur);
    /* a number that does not fit int64 ns is a time, refused (counted in its process's
     * rows_refused by finish()); a missing or non-numeric one is no time at all */
    int refused = (!ts_ok && imp_json_type(j, tsv) == IMP_JNUM) ||
                  (!dur_ok && imp_json_type(j, durv) == IMP_JNUM);
    if (!refused && (!ts_ok || !dur_ok || dur < 0)) {
        unmapped_cat(r, "without_time.", cat);
        return 0;
    }
    ch_rec *c = new_rec(r, ch, type);
    if (!c)
        return STORE_ENOMEM;
    c->pid = pid;
    if (refused) {
        c->flags = REC_REFUSED;
        return 0;
    }
    c->ts = ts;
    c->dur = dur;
    imp_jref args = imp_json_get(j, ev, "args");
    const char *name = imp_json_str(j, imp_json_get(j, ev, "name"));
    c->correlation = (uint32_t)arg_int(j, args, "correlation", 0);
    c->u64 = (uint64_t)tid;
    if (type == REC_KERNEL || type == REC_COPY) {
        int64_t v;
        c->flags = imp_json_int(j, imp_json_geti(j, args, "device"), &v) ? REC_HAS_DEVICE : 0;
        c->device = (uint32_t)(c->flags ? v : pid);
        /* without one, a context per device (the run keys contexts by id: a fixed default would
         * put every device's records on the first device), numbered as its device */
        c->context = (uint32_t)arg_int(j, args, "context", c->device);
        c->stream = (uint32_t)arg_int(j, args, "stream", tid);
        /* the context's sharing state, as tlview writes it (Kineto says nothing: unknown) */
        c->api_kind = (uint8_t)arg_tl(j, args, "compute_api_kind", 0);
        c->flags |= arg_tl(j, args, "green", 0) ? REC_GREEN : 0;
        c->aux = (uint32_t)arg_tl(j, args, "parent_context", 0);
        c->sm_count = (uint32_t)arg_tl(j, args, "sm_count", 0);
    }
    if (type == REC_KERNEL) {
        /* tlview writes the recorded (mangled) name beside the readable one: solo references
         * are keyed on it */
        const char *mangled = imp_json_str(j, imp_json_get(j, args, "mangled"));
        store_launch l = {.name = intern(r, mangled ? mangled : name)};
        imp_jref grid = imp_json_geti(j, args, "grid"), block = imp_json_geti(j, args, "block");
        for (int i = 0; i < 3; i++) {
            int64_t v = 0;
            imp_json_int(j, imp_json_at(j, grid, (uint32_t)i), &v);
            l.grid[i] = (uint32_t)v;
            v = 0;
            imp_json_int(j, imp_json_at(j, block, (uint32_t)i), &v);
            l.block[i] = (uint32_t)v;
        }
        l.registers = (uint32_t)arg_int(j, args, "registers per thread", 0);
        /* Kineto gives one total; tlview adds the dynamic part when there is one */
        uint64_t smem = (uint64_t)arg_int(j, args, "shared memory", 0);
        l.dynamic_smem = (uint32_t)arg_tl(j, args, "dynamic shared memory", 0);
        l.static_smem = (uint32_t)(smem >= l.dynamic_smem ? smem - l.dynamic_smem : smem);
        if (l.name == STORE_NONE)
            return STORE_ENOMEM;
        uint32_t before = r->run->nlaunches;
        if ((c->what = store_run_launch(r->run, &l)) == STORE_NONE)
            return imp_fail(r, STORE_ENOMEM, "out of memory");
        if (r->run->nlaunches != before && imp_charge(r, sizeof l + 16))
            return STORE_ENOMEM;
    } else if (type == REC_COPY) {
        int64_t kind;
        c->copy_type = (uint16_t)copy_type;
        if (imp_json_type(j, imp_json_get(j, args, "kind")) == IMP_JNUM &&
            imp_json_int(j, imp_json_get(j, args, "kind"), &kind)) /* tlview's exact kind */
            c->kind = (uint16_t)kind;
        else
            c->kind = copy_type == STORE_COPY_MEMCPY ? memcpy_kind(name) : memory_kind(name);
        c->u64 = (uint64_t)arg_int(j, args, "bytes", 0);
    } else {
        int64_t thread;
        if (imp_json_int(j, imp_json_get(j, args, "thread"), &thread)) /* tlview: the OS thread */
            c->u64 = (uint64_t)thread;
        c->api_domain = (uint8_t)api_domain;
        if ((c->what = intern(r, name)) == STORE_NONE)
            return STORE_ENOMEM;
        if (type == REC_API)
            c->aux = (uint32_t)arg_tl(j, args, "status", 0);
        else {
            const char *domain = imp_json_str(j, imp_json_get(j, args, "domain"));
            c->aux = domain ? intern(r, domain) : STORE_NONE;
            if (domain && c->aux == STORE_NONE)
                return STORE_ENOMEM;
        }
    }
    return 0;
}

static int events(imp_reader *r, chrome *ch)
{
    int rc = imp_json_expect(ch->j, '[');
    if (rc)
        return rc;
    if (imp_json_peek(ch->j) == ']')
        return imp_json_expect(ch->j, ']');
    for (;;) {
        imp_jref ev;
        imp_json_reset(ch->j);
        if ((rc = imp_json_parse(ch->j, &ev)) || (rc = event(r, ch, ev)))
            return rc;
        imp_progress(r, imp_json_offset(ch->j), imp_json_size(ch->j));
        int c = imp_json_peek(ch->j);
        if (c == ']')
            return imp_json_expect(ch->j, ']');
        if ((rc = imp_json_expect(ch->j, ',')))
            return rc;
    }
}

/* deviceProperties: [{"id": 0, "name": "NVIDIA A100-PG509-200", "totalGlobalMem": 42297524224,
 * "computeMajor": 8, "computeMinor": 0, "numSms": 108, ...}]; tlview adds "uuid": 32 hex digits
 * (info.uuid is pointed at it by dedupe_devs(), once the array no longer moves). */
static int device_properties(imp_reader *r, chrome *ch, imp_jref arr)
{
    imp_json *j = ch->j;
    if (imp_json_type(j, arr) != IMP_JARR)
        return 0;
    for (imp_jref d = imp_json_first(j, arr); d != IMP_JNONE; d = imp_json_next(j, d)) {
        int64_t id;
        if (!imp_json_int(j, imp_json_get(j, d, "id"), &id))
            continue;
        const char *name = imp_json_str(j, imp_json_get(j, d, "name"));
        int rc = imp_charge(r, sizeof *ch->devs + (name ? strlen(name) + 1 : 0));
        if (rc || (rc = imp_grow(r, (void **)&ch->devs, ch->ndevs, &ch->capdevs, sizeof *ch->devs)))
            return rc;
        imp_gpu *dev = &ch->devs[ch->ndevs++];
        memset(dev, 0, sizeof *dev);
        dev->id = id;
        dev->info.device_id = (uint32_t)id;
        if (name && !(dev->info.name = strdup(name)))
            return imp_fail(r, STORE_ENOMEM, "out of memory");
        dev->info.sm_count = (uint32_t)arg_int(j, d, "numSms", 0);
        dev->info.cc_major = (uint32_t)arg_int(j, d, "computeMajor", 0);
        dev->info.cc_minor = (uint32_t)arg_int(j, d, "computeMinor", 0);
        dev->info.global_memory = (uint64_t)arg_int(j, d, "totalGlobalMem", 0);
        /* tlview adds the UUID (Kineto has none): GPUs are then matched by it */
        const char *uuid = imp_json_str(j, imp_json_get(j, d, "uuid"));
        size_t n = 0;
        while (uuid && n < 32 && isxdigit((unsigned char)uuid[n]))
            n++;
        if (uuid && n == 32 && !uuid[32]) {
            for (size_t k = 0; k < 32; k++)
                dev->uuid[k] = (char)tolower((unsigned char)uuid[k]);
            dev->uuid[32] = 0;
        }
    }
    return 0;
}

/* The top-level object: traceEvents streamed, the few header members parsed, the rest skipped. */
static int top_object(imp_reader *r, chrome *ch)
{
    imp_json *j = ch->j;
    int rc, seen_events = 0;
    if ((rc = imp_json_expect(j, '{')))
        return rc;
    for (int first = 1;; first = 0) {
        int c = imp_json_peek(j);
        if (c == '}' && first) {
            imp_json_expect(j, '}');
            break;
        }
        if (c != '"')
            return imp_fail(r, STORE_EFORMAT, "invalid JSON: expected a member name");
        imp_jref keyv;
        imp_json_reset(j);
        if ((rc = imp_json_parse(j, &keyv)))
            return rc;
        char key[32];
        snprintf(key, sizeof key, "%s", imp_json_str(j, keyv));
        if ((rc = imp_json_expect(j, ':')))
            return rc;
        if (strcmp(key, "traceEvents") == 0) {
            if (imp_json_peek(j) != '[')
                return imp_fail(r, STORE_EFORMAT, "traceEvents is not an array");
            if ((rc = events(r, ch)))
                return rc;
            seen_events = 1;
        } else if (strcmp(key, "deviceProperties") == 0 || strcmp(key, "distributedInfo") == 0 ||
                   strcmp(key, "baseTimeNanoseconds") == 0 || strcmp(key, "host_name") == 0 ||
                   strcmp(key, "schemaVersion") == 0) {
            imp_jref v;
            imp_json_reset(j);
            if ((rc = imp_json_parse(j, &v)))
                return rc;
            if (key[0] == 'd' && key[1] == 'e')
                rc = device_properties(r, ch, v);
            else if (key[0] == 'd') {
                ch->have_rank = imp_json_int(j, imp_json_get(j, v, "rank"), &ch->rank);
                ch->have_world = imp_json_int(j, imp_json_get(j, v, "world_size"), &ch->world_size);
            } else if (key[0] == 'b')
                imp_json_int(j, v, &ch->base);
            else if (key[0] == 's')
                imp_json_int(j, v, &ch->schema);
            else if (imp_json_str(j, v) && !ch->host && !(ch->host = strdup(imp_json_str(j, v))))
                rc = imp_fail(r, STORE_ENOMEM, "out of memory");
            if (rc)
                return rc;
        } else if ((rc = imp_json_skip(j)))
            return rc;
        c = imp_json_peek(j);
        if ((rc = imp_json_expect(j, c == '}' ? '}' : ',')))
            return rc;
        if (c == '}')
            break;
    }
    if (!seen_events)
        return imp_fail(r, STORE_EFORMAT,
                        "JSON object without a traceEvents array: not a Chrome trace");
    return 0;
}

/* Orders (key, index) pairs by key, then index. */
static int cmp_i64pair(const void *p, const void *q)
{
    const int64_t *a = p, *b = q;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] < b[1] ? -1 : a[1] > b[1]);
}

/* Finds a key among pairs of distinct keys. */
static int cmp_i64key(const void *p, const void *q)
{
    const int64_t *a = p, *b = q;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* (key(i), i) for i < n, sorted by key then i: the order that finds the first or the last of
 * equal keys; NULL when out of memory. Free it. */
static int64_t *sorted_pairs(size_t n, int64_t (*key)(const chrome *, size_t), const chrome *ch)
{
    int64_t *k = malloc((n ? n : 1) * 2 * sizeof *k);
    if (!k)
        return NULL;
    for (size_t i = 0; i < n; i++)
        k[2 * i] = key(ch, i), k[2 * i + 1] = (int64_t)i;
    qsort(k, n, 2 * sizeof *k, cmp_i64pair);
    return k;
}

static int64_t proc_pid(const chrome *ch, size_t i)
{
    return ch->procs[i].chrome_pid;
}

static int64_t dev_id(const chrome *ch, size_t i)
{
    return ch->devs[i].id;
}

/* Keeps the first declaration of each Chrome pid, in file order. */
static int dedupe_procs(imp_reader *r, chrome *ch)
{
    size_t n = ch->nprocs, m = 0;
    int64_t *k = sorted_pairs(n, proc_pid, ch);
    unsigned char *drop = calloc(n ? n : 1, 1);
    if (!k || !drop) {
        free(k);
        free(drop);
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    }
    for (size_t i = 1; i < n; i++)
        if (k[2 * i] == k[2 * i - 2])
            drop[k[2 * i + 1]] = 1; /* a later declaration of the pid */
    for (size_t i = 0; i < n; i++) {
        if (drop[i])
            proc_free(&ch->procs[i]);
        else
            ch->procs[m++] = ch->procs[i];
    }
    free(k);
    free(drop);
    ch->nprocs = m;
    return 0;
}

/* Keeps the last description of each device id, sorted by id for gpu_device(); points each
 * info.uuid at its uuid (the array no longer moves). */
static int dedupe_devs(imp_reader *r, chrome *ch)
{
    size_t n = ch->ndevs, m = 0;
    int64_t *k = sorted_pairs(n, dev_id, ch);
    imp_gpu *d = malloc((n ? n : 1) * sizeof *d);
    if (!k || !d) {
        free(k);
        free(d);
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        imp_gpu *g = &ch->devs[k[2 * i + 1]];
        if (i + 1 < n && k[2 * i + 2] == k[2 * i])
            free((char *)g->info.name); /* a later one describes this id */
        else
            d[m++] = *g;
    }
    free(k);
    free(ch->devs);
    ch->devs = d;
    ch->capdevs = n ? n : 1;
    ch->ndevs = m;
    for (size_t i = 0; i < m; i++)
        d[i].info.uuid = d[i].uuid[0] ? d[i].uuid : NULL;
    return 0;
}

/* The run device of CUDA ordinal `id` of process `proc`, described by deviceProperties when it
 * has that id (ch->devs sorted by dedupe_devs). STORE_NONE with the error set. */
static store_idx gpu_device(imp_reader *r, chrome *ch, store_idx proc, uint32_t id)
{
    const imp_gpu *g = NULL;
    for (size_t lo = 0, hi = ch->ndevs; lo < hi && !g;) {
        size_t mid = lo + (hi - lo) / 2;
        if (ch->devs[mid].id == (int64_t)id)
            g = &ch->devs[mid];
        else if (ch->devs[mid].id < (int64_t)id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return imp_device(r, proc, g ? &g->info : &(store_device_info){.device_id = id});
}

/* The one process of a Kineto trace (and of the records a tlview export did not declare): the
 * pid of the CPU process, named by its process_name. */
static store_idx add_kineto_process(imp_reader *r, chrome *ch)
{
    int64_t pid = ch->have_cpu_pid ? ch->cpu_pid : ch->have_any_pid ? ch->any_pid : 0;
    if (!ch->have_cpu_pid && !ch->have_any_pid)
        imp_warn(r, "no CPU process in the trace: pid 0");
    const char *pname = NULL;
    for (size_t i = 0; i < ch->npnames; i++)
        if (ch->pnames[i].pid == pid)
            pname = ch->pnames[i].name;
    store_process_info info = {.pid = pid, .host = ch->host, .exe = pname, .source = "chrome"};
    store_idx proc = store_run_add_process(r->run, &info, r->path);
    if (proc == STORE_NONE)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding the process"), STORE_NONE;
    char v[24];
    if (ch->have_rank) {
        snprintf(v, sizeof v, "%lld", (long long)ch->rank);
        if (store_run_process_meta(r->run, proc, "chrome.rank", v))
            return imp_fail(r, STORE_ENOMEM, "out of memory"), STORE_NONE;
    }
    if (ch->have_rank && ch->have_world) {
        snprintf(v, sizeof v, "%lld", (long long)ch->world_size);
        if (store_run_process_meta(r->run, proc, "chrome.world_size", v))
            return imp_fail(r, STORE_ENOMEM, "out of memory"), STORE_NONE;
    }
    return proc;
}

/* A process a tlview export declared, with its process_meta (but the import.* keys, which
 * described the reading of its first file; this import writes its own), its contexts and
 * streams in their order. */
static store_idx add_declared_process(imp_reader *r, chrome *ch, const ch_proc *p)
{
    store_run *run = r->run;
    store_process_info info = {.pid = p->pid,
                               .ppid = p->ppid,
                               .host = p->host,
                               .exe = p->exe,
                               .argv = p->argv,
                               .run_id = p->run_id,
                               .source = "chrome",
                               .start_wall = p->start_wall};
    store_idx proc = store_run_add_process(run, &info, r->path);
    if (proc == STORE_NONE)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding a process"), STORE_NONE;
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (strncmp(p->meta[2 * i], "import.", 7) != 0 &&
            store_run_process_meta(run, proc, p->meta[2 * i], p->meta[2 * i + 1]))
            return imp_fail(r, STORE_ENOMEM, "out of memory"), STORE_NONE;
    for (uint32_t i = 0; i < p->nctxs; i++) {
        const ch_ctx *x = &p->ctxs[i];
        store_idx dev = STORE_NONE, cx;
        if (x->has_device && (dev = gpu_device(r, ch, proc, x->device)) == STORE_NONE)
            return STORE_NONE;
        if ((cx = store_run_context(run, proc, x->id, dev, x->kind)) == STORE_NONE ||
            store_run_context_green(run, cx, x->green != 0, x->parent, x->sm_count))
            return imp_fail(r, STORE_ENOMEM, "out of memory adding a context"), STORE_NONE;
        for (uint32_t k = 0; k < x->nstreams; k++)
            if (store_run_stream(run, cx, x->streams[k]) == STORE_NONE)
                return imp_fail(r, STORE_ENOMEM, "out of memory adding a stream"), STORE_NONE;
    }
    for (uint32_t i = 0; i < p->ncaps; i++) {
        const ch_cap *x = &p->caps[i];
        store_capture c = {.process = proc,
                           .name = x->name,
                           .start_reason = x->start_reason,
                           .end_reason = x->end_reason};
        if (!store_time_add(ch->base, x->start, &c.start) ||
            !store_time_add(ch->base, x->end, &c.end)) {
            imp_unmapped(r, "tlview.capture_invalid", 1);
            continue;
        }
        if (store_run_add_capture(run, &c) == STORE_ENOMEM)
            return imp_fail(r, STORE_ENOMEM, "out of memory adding a capture range"), STORE_NONE;
    }
    return proc;
}

/* Adds one kept record to process `proc` (declared: of a tlview export); `cache` remembers the
 * process's contexts and last stream (zeroed when the process changes). */
typedef struct rec_cache {
    struct {
        uint32_t id;
        store_idx idx;
    } ctx[64]; /* (context id) -> run context; few, so a short list */
    size_t nctx;
    store_idx last_ctx, last_stream;
    uint32_t last_stream_id;
} rec_cache;

static int add_record(imp_reader *r, chrome *ch, const ch_rec *c, store_idx proc, int declared,
                      rec_cache *k)
{
    int64_t start, end;
    if ((c->flags & REC_REFUSED) || !store_time_add(ch->base, c->ts, &start) ||
        !store_time_add(start, c->dur, &end)) {
        imp_refuse(r, proc); /* outside +-STORE_TIME_MAX: not in the run, counted */
        return 0;
    }
    store_idx stream = STORE_NONE;
    if (c->type == REC_KERNEL || c->type == REC_COPY) {
        store_idx cx = STORE_NONE;
        for (size_t i = 0; i < k->nctx && cx == STORE_NONE; i++)
            if (k->ctx[i].id == c->context)
                cx = k->ctx[i].idx;
        if (cx == STORE_NONE) {
            store_idx dev = STORE_NONE; /* a tlview export names the device when it knows it */
            if ((!declared || (c->flags & REC_HAS_DEVICE)) &&
                (dev = gpu_device(r, ch, proc, c->device)) == STORE_NONE)
                return STORE_ENOMEM;
            if ((cx = store_run_context(r->run, proc, c->context, dev, c->api_kind)) ==
                    STORE_NONE ||
                store_run_context_green(r->run, cx, (c->flags & REC_GREEN) != 0, c->aux,
                                        c->sm_count))
                return imp_fail(r, STORE_ENOMEM, "out of memory adding a context");
            if (k->nctx < sizeof k->ctx / sizeof k->ctx[0])
                k->ctx[k->nctx].id = c->context, k->ctx[k->nctx++].idx = cx;
        }
        if (cx != k->last_ctx || c->stream != k->last_stream_id) {
            if ((k->last_stream = store_run_stream(r->run, cx, c->stream)) == STORE_NONE)
                return imp_fail(r, STORE_ENOMEM, "out of memory adding a stream");
            k->last_ctx = cx;
            k->last_stream_id = c->stream;
        }
        stream = k->last_stream;
    }
    int rc;
    if (c->type == REC_KERNEL) {
        store_kernel kr = {start, end, stream, c->what, c->correlation, 0};
        rc = store_run_add_kernel(r->run, &kr);
    } else if (c->type == REC_COPY) {
        store_copy cp = {start, end, stream, c->correlation, c->copy_type, c->kind, c->u64};
        rc = store_run_add_copy(r->run, &cp);
    } else if (c->type == REC_API) {
        store_api a = {.start = start,
                       .end = end,
                       .process = proc,
                       .correlation_id = c->correlation,
                       .thread_id = c->u64,
                       .name = c->what,
                       .domain = c->api_domain,
                       .status = (int32_t)c->aux};
        rc = store_run_add_api(r->run, &a);
    } else {
        store_range g = {.start = start,
                         .end = end,
                         .process = proc,
                         .thread_id = c->u64,
                         .domain = c->aux,
                         .name = c->what};
        rc = store_run_add_range(r->run, &g);
    }
    return rc ? imp_fail(r, STORE_ENOMEM, "out of memory adding records") : 0;
}

/* Everything read: the processes, their devices, contexts, streams, then the kept records,
 * process by process (each process is a sort segment of the run). */
static int finish(imp_reader *r, chrome *ch)
{
    if (ch->events > 0 && ch->events_with_ph == 0)
        return imp_fail(r, STORE_EFORMAT, "no event has a \"ph\" member: not a Chrome trace");
    if (ch->schema > 1)
        imp_warn(r, "Chrome trace schemaVersion %lld not seen before", (long long)ch->schema);
    int rc = dedupe_devs(r, ch);
    if (rc || (rc = dedupe_procs(r, ch)))
        return rc;
    size_t np = ch->nprocs, nslots = np + 1;          /* slot np: the Kineto process */
    int64_t *by_pid = sorted_pairs(np, proc_pid, ch); /* (Chrome pid, slot) */
    uint64_t *count = calloc(nslots + 1, sizeof *count);
    store_idx *procs = malloc(nslots * sizeof *procs);
    size_t *order = NULL;
    if (!by_pid || !count || !procs) {
        rc = imp_fail(r, STORE_ENOMEM, "out of memory");
        goto out;
    }
    int64_t last_pid = 0;
    uint32_t last_slot = (uint32_t)np;
    for (size_t i = 0; i < ch->nrecs; i++) {
        ch_rec *c = &ch->recs[i];
        if (i == 0 || c->pid != last_pid) {
            int64_t key[2] = {c->pid, 0};
            const int64_t *hit = bsearch(key, by_pid, np, 2 * sizeof *by_pid, cmp_i64key);
            last_pid = c->pid;
            last_slot = hit ? (uint32_t)hit[1] : (uint32_t)np;
        }
        c->slot = last_slot;
        count[last_slot]++;
    }
    for (size_t i = 0; i < np; i++)
        if ((procs[i] = add_declared_process(r, ch, &ch->procs[i])) == STORE_NONE) {
            rc = STORE_ENOMEM;
            goto out;
        }
    procs[np] = STORE_NONE;
    if ((np == 0 || count[np]) && (procs[np] = add_kineto_process(r, ch)) == STORE_NONE) {
        rc = STORE_ENOMEM;
        goto out;
    }
    /* the records in the order of their process (a counting sort), unless one process has all */
    size_t nonempty = 0;
    for (size_t s = 0; s < nslots; s++)
        nonempty += count[s] != 0;
    if (nonempty > 1) {
        if (!(order = malloc(ch->nrecs * sizeof *order))) {
            rc = imp_fail(r, STORE_ENOMEM, "out of memory");
            goto out;
        }
        uint64_t at = 0;
        for (size_t s = 0; s < nslots; s++) {
            uint64_t n = count[s];
            count[s] = at;
            at += n;
        }
        for (size_t i = 0; i < ch->nrecs; i++)
            order[count[ch->recs[i].slot]++] = i;
    }
    rec_cache cache;
    uint32_t cur = UINT32_MAX;
    for (size_t i = 0; i < ch->nrecs && rc == 0; i++) {
        const ch_rec *c = &ch->recs[order ? order[i] : i];
        if (c->slot != cur) {
            memset(&cache, 0, sizeof cache);
            cache.last_ctx = cache.last_stream = STORE_NONE;
            cur = c->slot;
        }
        rc = add_record(r, ch, c, procs[c->slot], c->slot < np, &cache);
    }
out:
    free(by_pid);
    free(count);
    free(procs);
    free(order);
    return rc;
}

static int ch_load(imp_reader *r)
{
    chrome *ch = r->state;
    int c = imp_json_peek(ch->j), rc;
    if (c == '[')
        rc = events(r, ch);
    else if (c == '{')
        rc = top_object(r, ch);
    else
        return imp_fail(r, STORE_EFORMAT, "not JSON");
    if (rc)
        return rc;
    if (imp_json_peek(ch->j) != -1 || r->err->message[0])
        return imp_fail(r, STORE_EFORMAT, "invalid JSON: data after the end of the trace");
    imp_progress_end(r, imp_json_size(ch->j));
    return finish(r, ch);
}

const imp_ops imp_chrome_ops = {"chrome", ch_probe, ch_open, ch_load, ch_close};
