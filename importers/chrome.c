/* importers/chrome.c: Chrome trace JSON (PyTorch profiler / Kineto *.pt.trace.json, plain or gzip)
 * -> one run process per file. The file is streamed (importers/imp_json.c): only one event is held
 * at a time, plus the GPU, API and annotation records kept for the run. Records are kept until the
 * end because what places them comes anywhere in the file: baseTimeNanoseconds (ts is then
 * relative to it; else ts is Unix-epoch us) and the process metadata naming the real pid (GPU
 * events carry the device index as their pid). Both the {"traceEvents": [...]} form and the 2021
 * bare array are read; categories compare case-insensitively (2021: "Kernel", "Memcpy", ...). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_int.h"

typedef enum { REC_KERNEL, REC_COPY, REC_API, REC_RANGE } rec_type;

/* One kept record; times in ns, still relative to baseTimeNanoseconds when there is one. */
typedef struct ch_rec {
    int64_t ts, dur;
    uint8_t type;       /* rec_type */
    uint8_t api_domain; /* store_api_domain for REC_API */
    uint16_t kind;      /* copy kind / memory kind */
    uint16_t copy_type; /* store_copy_type */
    uint32_t device, context, stream, correlation;
    store_idx what;  /* REC_KERNEL: launch; REC_API, REC_RANGE: name */
    uint64_t bytes;  /* REC_COPY */
    uint64_t thread; /* REC_API, REC_RANGE */
} ch_rec;

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
    int64_t rank;
    int have_rank;
    int64_t schema; /* schemaVersion, 0 when absent */
    uint64_t events, events_with_ph;
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
    return imp_json_open(r, &ch->j);
}

static void ch_close(imp_reader *r)
{
    chrome *ch = r->state;
    if (!ch)
        return;
    imp_json_close(ch->j);
    free(ch->recs);
    for (size_t i = 0; i < ch->ndevs; i++)
        free((char *)ch->devs[i].info.name);
    free(ch->devs);
    for (size_t i = 0; i < ch->npnames; i++)
        free(ch->pnames[i].name);
    free(ch->host);
    free(ch);
    r->state = NULL;
}

static ch_rec *new_rec(imp_reader *r, chrome *ch)
{
    if (imp_grow(r, (void **)&ch->recs, ch->nrecs, &ch->caprecs, sizeof *ch->recs))
        return NULL;
    ch_rec *c = &ch->recs[ch->nrecs++];
    memset(c, 0, sizeof *c);
    return c;
}

static int64_t arg_int(imp_json *j, imp_jref args, const char *key, int64_t dflt)
{
    int64_t v = dflt;
    imp_json_int(j, imp_json_geti(j, args, key), &v);
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

/* ph "M": process_labels "CPU" marks the OS pid; process_name names it. */
static void metadata(chrome *ch, imp_jref ev)
{
    imp_json *j = ch->j;
    const char *what = imp_json_str(j, imp_json_get(j, ev, "name"));
    imp_jref args = imp_json_get(j, ev, "args");
    int64_t pid;
    if (!what || !imp_json_int(j, imp_json_get(j, ev, "pid"), &pid) ||
        imp_json_type(j, imp_json_get(j, ev, "pid")) != IMP_JNUM)
        return;
    if (strcmp(what, "process_labels") == 0) {
        const char *labels = imp_json_str(j, imp_json_get(j, args, "labels"));
        if (labels && strcmp(labels, "CPU") == 0 && !ch->have_cpu_pid) {
            ch->have_cpu_pid = 1;
            ch->cpu_pid = pid;
        }
    } else if (strcmp(what, "process_name") == 0) {
        const char *name = imp_json_str(j, imp_json_get(j, args, "name"));
        for (size_t i = 0; i < ch->npnames; i++)
            if (ch->pnames[i].pid == pid)
                return;
        if (name && ch->npnames < sizeof ch->pnames / sizeof ch->pnames[0]) {
            ch->pnames[ch->npnames].pid = pid;
            if ((ch->pnames[ch->npnames].name = strdup(name)))
                ch->npnames++;
        }
    }
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
    if (strcmp(ph, "M") == 0) {
        metadata(ch, ev);
        return 0;
    }
    const char *cat = imp_json_str(j, imp_json_get(j, ev, "cat"));
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
    imp_jref durv = imp_json_get(j, ev, "dur");
    if (!imp_json_milli(j, imp_json_get(j, ev, "ts"), &ts) ||
        (durv != IMP_JNONE && !imp_json_milli(j, durv, &dur)) || dur < 0) {
        unmapped_cat(r, "without_time.", cat);
        return 0;
    }
    ch_rec *c = new_rec(r, ch);
    if (!c)
        return STORE_ENOMEM;
    c->ts = ts;
    c->dur = dur;
    c->type = (uint8_t)type;
    imp_jref args = imp_json_get(j, ev, "args");
    const char *name = imp_json_str(j, imp_json_get(j, ev, "name"));
    c->correlation = (uint32_t)arg_int(j, args, "correlation", 0);
    c->thread = (uint64_t)tid;
    if (type == REC_KERNEL || type == REC_COPY) {
        c->device = (uint32_t)arg_int(j, args, "device", pid);
        /* without one, a context per device (the run keys contexts by id: a fixed default would
         * put every device's records on the first device), numbered as its device */
        c->context = (uint32_t)arg_int(j, args, "context", c->device);
        c->stream = (uint32_t)arg_int(j, args, "stream", tid);
    }
    if (type == REC_KERNEL) {
        store_launch l = {.name = imp_intern(r, name)};
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
        l.static_smem = (uint32_t)arg_int(j, args, "shared memory", 0); /* Kineto gives one total */
        if (l.name == STORE_NONE)
            return STORE_ENOMEM;
        if ((c->what = store_run_launch(r->run, &l)) == STORE_NONE)
            return imp_fail(r, STORE_ENOMEM, "out of memory");
    } else if (type == REC_COPY) {
        c->copy_type = (uint16_t)copy_type;
        c->kind = copy_type == STORE_COPY_MEMCPY ? memcpy_kind(name) : memory_kind(name);
        c->bytes = (uint64_t)arg_int(j, args, "bytes", 0);
    } else {
        c->api_domain = (uint8_t)api_domain;
        if ((c->what = imp_intern(r, name)) == STORE_NONE)
            return STORE_ENOMEM;
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
 * "computeMajor": 8, "computeMinor": 0, "numSms": 108, ...}]. */
static int device_properties(imp_reader *r, chrome *ch, imp_jref arr)
{
    imp_json *j = ch->j;
    for (uint32_t i = 0; i < imp_json_len(j, arr); i++) {
        imp_jref d = imp_json_at(j, arr, i);
        int64_t id;
        if (!imp_json_int(j, imp_json_get(j, d, "id"), &id))
            continue;
        int rc = imp_grow(r, (void **)&ch->devs, ch->ndevs, &ch->capdevs, sizeof *ch->devs);
        if (rc)
            return rc;
        imp_gpu *dev = &ch->devs[ch->ndevs++];
        memset(dev, 0, sizeof *dev);
        dev->id = id;
        const char *name = imp_json_str(j, imp_json_get(j, d, "name"));
        dev->info.device_id = (uint32_t)id;
        dev->info.name = name ? strdup(name) : NULL;
        dev->info.sm_count = (uint32_t)arg_int(j, d, "numSms", 0);
        dev->info.cc_major = (uint32_t)arg_int(j, d, "computeMajor", 0);
        dev->info.cc_minor = (uint32_t)arg_int(j, d, "computeMinor", 0);
        dev->info.global_memory = (uint64_t)arg_int(j, d, "totalGlobalMem", 0);
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
            else if (key[0] == 'd')
                ch->have_rank = imp_json_int(j, imp_json_get(j, v, "rank"), &ch->rank);
            else if (key[0] == 'b')
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

/* Everything read: the process, its devices, contexts, streams, then the kept records. */
static int finish(imp_reader *r, chrome *ch)
{
    if (ch->events > 0 && ch->events_with_ph == 0)
        return imp_fail(r, STORE_EFORMAT, "no event has a \"ph\" member: not a Chrome trace");
    if (ch->schema > 1)
        imp_warn(r, "Chrome trace schemaVersion %lld not seen before", (long long)ch->schema);
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
        return imp_fail(r, STORE_ENOMEM, "out of memory adding the process");
    char v[24];
    if (ch->have_rank) {
        snprintf(v, sizeof v, "%lld", (long long)ch->rank);
        if (store_run_process_meta(r->run, proc, "chrome.rank", v))
            return imp_fail(r, STORE_ENOMEM, "out of memory");
    }
    /* contexts of this file: (context id) -> run context; few, so a short list */
    struct {
        uint32_t id;
        store_idx idx;
    } ctx[64];
    size_t nctx = 0;
    store_idx last_ctx = STORE_NONE, last_stream = STORE_NONE;
    uint32_t last_stream_id = 0;
    for (size_t i = 0; i < ch->nrecs; i++) {
        ch_rec *c = &ch->recs[i];
        int64_t start, end;
        if (!imp_add(ch->base, c->ts, &start) || !imp_add(start, c->dur, &end)) {
            imp_unmapped(r, "without_time.overflow", 1);
            continue;
        }
        store_idx stream = STORE_NONE;
        if (c->type == REC_KERNEL || c->type == REC_COPY) {
            store_idx cx = STORE_NONE;
            for (size_t k = 0; k < nctx && cx == STORE_NONE; k++)
                if (ctx[k].id == c->context)
                    cx = ctx[k].idx;
            if (cx == STORE_NONE) {
                store_idx dev = imp_gpu_device(r, proc, ch->devs, ch->ndevs, c->device);
                if (dev == STORE_NONE)
                    return STORE_ENOMEM;
                if ((cx = store_run_context(r->run, proc, c->context, dev, 0)) == STORE_NONE)
                    return imp_fail(r, STORE_ENOMEM, "out of memory adding a context");
                if (nctx < sizeof ctx / sizeof ctx[0])
                    ctx[nctx].id = c->context, ctx[nctx++].idx = cx;
            }
            if (cx != last_ctx || c->stream != last_stream_id) {
                if ((last_stream = store_run_stream(r->run, cx, c->stream)) == STORE_NONE)
                    return imp_fail(r, STORE_ENOMEM, "out of memory adding a stream");
                last_ctx = cx;
                last_stream_id = c->stream;
            }
            stream = last_stream;
        }
        int rc;
        if (c->type == REC_KERNEL) {
            store_kernel k = {start, end, stream, c->what, c->correlation, 0};
            rc = store_run_add_kernel(r->run, &k);
        } else if (c->type == REC_COPY) {
            store_copy k = {start, end, stream, c->correlation, c->copy_type, c->kind, c->bytes};
            rc = store_run_add_copy(r->run, &k);
        } else if (c->type == REC_API) {
            store_api a = {.start = start,
                           .end = end,
                           .process = proc,
                           .correlation_id = c->correlation,
                           .thread_id = c->thread,
                           .name = c->what,
                           .domain = c->api_domain};
            rc = store_run_add_api(r->run, &a);
        } else {
            store_range g = {.start = start,
                             .end = end,
                             .process = proc,
                             .thread_id = c->thread,
                             .domain = STORE_NONE,
                             .name = c->what};
            rc = store_run_add_range(r->run, &g);
        }
        if (rc)
            return imp_fail(r, STORE_ENOMEM, "out of memory adding records");
    }
    return 0;
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
