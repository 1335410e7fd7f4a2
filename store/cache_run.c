/* cache_run.c: a finished run as a cache file (cache.c) and back. The record arrays (kernels,
 * copies, API calls, NVTX ranges) are written as they lie in memory and read back in place: the
 * run points into the mapped file, so reopening a run of tens of millions of records costs its
 * checksum pass, not a load. The small tables are copied out; their strings stay in the mapping.
 * Every index a record holds is checked against the counts of the file before the run is handed
 * out, so a damaged cache is refused, never followed out of bounds. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The sections of a run's cache (store_cache_part ids). */
enum {
    SEC_META = 1,
    SEC_STRTAB,   /* every string, NUL-terminated, one after another */
    SEC_PROCS,    /* c_proc */
    SEC_PAIRS,    /* c_pair: the processes' meta, each process's a slice */
    SEC_DEVICES,  /* c_dev */
    SEC_CONTEXTS, /* store_context as in memory */
    SEC_STREAMS,  /* store_stream */
    SEC_LAUNCHES, /* store_launch */
    SEC_STRINGS,  /* c_str */
    SEC_KERNELS,  /* store_kernel, sorted by start */
    SEC_COPIES,   /* store_copy, sorted */
    SEC_APIS,     /* store_api, sorted */
    SEC_RANGES,   /* store_range, sorted */
    SEC_CAPTURES, /* c_cap */
    SEC_PROCDEVS, /* store_procdev */
    SEC_APART,    /* uint8_t per process: its uuid-less GPUs kept apart */
    SEC_N = SEC_APART
};

#define NOSTR UINT64_MAX /* a NULL string's offset */

typedef struct c_meta {
    int64_t t_begin, t_end;
    uint32_t gpu_separate;
    uint32_t reserved;
} c_meta;

typedef struct c_proc {
    int64_t pid, ppid, start_wall, end_wall, clock_offset, clock_drift;
    uint64_t records_dropped, rows_refused;
    uint64_t host, exe, argv, run_id, source, file, error; /* offsets into SEC_STRTAB */
    uint64_t meta_first;                                   /* its first pair in SEC_PAIRS */
    uint32_t nmeta;
    int32_t complete;
} c_proc;

typedef struct c_pair {
    uint64_t key, value;
} c_pair;

typedef struct c_dev {
    uint64_t uuid, name, global_memory;
    uint32_t sm_count, cc_major, cc_minor, inferred;
} c_dev;

typedef struct c_str {
    uint64_t text, demangled; /* equal when the text is not mangled */
} c_str;

typedef struct c_cap {
    int64_t start, end;
    uint64_t name, start_reason, end_reason;
    uint32_t process, reserved;
} c_cap;

/* ---------------------------------------------------------------- saving */

/* The string table being written. */
typedef struct strtab {
    char *b;
    uint64_t n, cap;
    int oom;
} strtab;

/* The offset of a copy of s in t (NOSTR for NULL). */
static uint64_t put(strtab *t, const char *s)
{
    if (!s)
        return NOSTR;
    uint64_t len = strlen(s) + 1, at = t->n;
    if (store_grow((void **)&t->b, &t->cap, t->n + len, 1)) {
        t->oom = 1;
        return NOSTR;
    }
    memcpy(t->b + at, s, len);
    t->n += len;
    return at;
}

int store_run_cache_save(const store_run *run, const char *dir, const char *name, const char *key,
                         char *err, size_t errlen)
{
    const store_run_priv *p = STORE_PRIV(run);
    strtab t = {0};
    uint64_t npairs = 0;
    for (uint32_t i = 0; i < run->nprocesses; i++)
        npairs += run->processes[i].nmeta;
    c_proc *procs = calloc(run->nprocesses + 1, sizeof *procs);
    c_pair *pairs = calloc(npairs + 1, sizeof *pairs);
    c_dev *devs = calloc(run->ndevices + 1, sizeof *devs);
    c_str *strs = calloc(run->nstrings + 1, sizeof *strs);
    c_cap *caps = calloc(run->ncaptures + 1, sizeof *caps);
    int rc = -1;
    if (!procs || !pairs || !devs || !strs || !caps)
        goto oom;
    uint64_t at = 0;
    for (uint32_t i = 0; i < run->nprocesses; i++) {
        const store_process *s = &run->processes[i];
        procs[i] = (c_proc){s->pid,
                            s->ppid,
                            s->start_wall,
                            s->end_wall,
                            s->clock_offset,
                            s->clock_drift,
                            s->records_dropped,
                            s->rows_refused,
                            put(&t, s->host),
                            put(&t, s->exe),
                            put(&t, s->argv),
                            put(&t, s->run_id),
                            put(&t, s->source),
                            put(&t, s->file),
                            put(&t, s->error),
                            at,
                            s->nmeta,
                            s->complete};
        for (uint32_t m = 0; m < s->nmeta; m++, at++)
            pairs[at] = (c_pair){put(&t, s->meta_keys[m]), put(&t, s->meta_values[m])};
    }
    for (uint32_t i = 0; i < run->ndevices; i++) {
        const store_device *d = &run->devices[i];
        devs[i] = (c_dev){put(&t, d->uuid), put(&t, d->name), d->global_memory, d->sm_count,
                          d->cc_major,      d->cc_minor,      d->inferred};
    }
    for (uint32_t i = 0; i < run->nstrings; i++) {
        const store_string *s = &run->strings[i];
        strs[i].text = put(&t, s->text);
        strs[i].demangled = s->demangled == s->text ? strs[i].text : put(&t, s->demangled);
    }
    for (uint32_t i = 0; i < run->ncaptures; i++) {
        const store_capture *c = &run->captures[i];
        caps[i] = (c_cap){
            c->start,   c->end, put(&t, c->name), put(&t, c->start_reason), put(&t, c->end_reason),
            c->process, 0};
    }
    if (t.oom)
        goto oom;
    c_meta meta = {run->t_begin, run->t_end, (uint32_t)p->gpu_separate, 0};
    const store_cache_part parts[SEC_N] = {
        {SEC_META, sizeof meta, &meta, 1},
        {SEC_STRTAB, 1, t.b, t.n},
        {SEC_PROCS, sizeof *procs, procs, run->nprocesses},
        {SEC_PAIRS, sizeof *pairs, pairs, npairs},
        {SEC_DEVICES, sizeof *devs, devs, run->ndevices},
        {SEC_CONTEXTS, sizeof *run->contexts, run->contexts, run->ncontexts},
        {SEC_STREAMS, sizeof *run->streams, run->streams, run->nstreams},
        {SEC_LAUNCHES, sizeof *run->launches, run->launches, run->nlaunches},
        {SEC_STRINGS, sizeof *strs, strs, run->nstrings},
        {SEC_KERNELS, sizeof *run->kernels, run->kernels, run->nkernels},
        {SEC_COPIES, sizeof *run->copies, run->copies, run->ncopies},
        {SEC_APIS, sizeof *run->apis, run->apis, run->napis},
        {SEC_RANGES, sizeof *run->ranges, run->ranges, run->nranges},
        {SEC_CAPTURES, sizeof *caps, caps, run->ncaptures},
        {SEC_PROCDEVS, sizeof *p->procdevs, p->procdevs, p->nprocdevs},
        {SEC_APART, 1, p->gpus_apart, p->gpus_apart ? run->nprocesses : 0},
    };
    rc = store_cache_write(dir, name, key, parts, SEC_N, err, errlen);
    goto out;
oom:
    store_fmt(err, errlen, "%s/%s: out of memory", dir, name);
out:
    free(t.b);
    free(procs);
    free(pairs);
    free(devs);
    free(strs);
    free(caps);
    return rc;
}

/* ---------------------------------------------------------------- loading */

/* The counts every index is checked against (the check of store_cache_section). */
typedef struct bounds {
    uint64_t nproc, ndev, nctx, nstreams, nlaunches, nstrings, strtab, npairs;
} bounds;

/* 1 when a string offset is NULL or inside the table (whose last byte is a NUL). */
static int str_ok(const bounds *b, uint64_t off)
{
    return off == NOSTR || off < b->strtab;
}

/* 1 when the records [first, first + n) of `size` bytes at base start in order (the one before
 * `first` included). */
static int sorted(const void *base, size_t size, uint64_t first, uint64_t n)
{
    const char *c = base;
    int64_t prev = INT64_MIN;
    if (first)
        memcpy(&prev, c + (first - 1) * size, sizeof prev);
    for (uint64_t i = first; i < first + n; i++) {
        int64_t s;
        memcpy(&s, c + i * size, sizeof s);
        if (s < prev)
            return 0;
        prev = s;
    }
    return 1;
}

static int check(void *ctx, uint32_t id, const void *base, uint64_t first, uint64_t n)
{
    const bounds *b = ctx;
    switch (id) {
    case SEC_PROCS:
        for (const c_proc *e = (const c_proc *)base + first, *end = e + n; e < end; e++)
            if (!str_ok(b, e->host) || !str_ok(b, e->exe) || !str_ok(b, e->argv) ||
                !str_ok(b, e->run_id) || !str_ok(b, e->source) || !str_ok(b, e->file) ||
                !str_ok(b, e->error) || e->meta_first > b->npairs ||
                e->nmeta > b->npairs - e->meta_first)
                return 1;
        return 0;
    case SEC_PAIRS:
        for (const c_pair *e = (const c_pair *)base + first, *end = e + n; e < end; e++)
            if (!str_ok(b, e->key) || !str_ok(b, e->value))
                return 1;
        return 0;
    case SEC_DEVICES:
        for (const c_dev *e = (const c_dev *)base + first, *end = e + n; e < end; e++)
            if (!str_ok(b, e->uuid) || !str_ok(b, e->name) || e->inferred > 1)
                return 1;
        return 0;
    case SEC_CONTEXTS:
        for (const store_context *e = (const store_context *)base + first, *end = e + n; e < end;
             e++)
            if (e->process >= b->nproc || (e->device != STORE_NONE && e->device >= b->ndev))
                return 1;
        return 0;
    case SEC_STREAMS:
        for (const store_stream *e = (const store_stream *)base + first, *end = e + n; e < end; e++)
            if (e->context >= b->nctx)
                return 1;
        return 0;
    case SEC_LAUNCHES:
        for (const store_launch *e = (const store_launch *)base + first, *end = e + n; e < end; e++)
            if (e->name >= b->nstrings)
                return 1;
        return 0;
    case SEC_STRINGS:
        for (const c_str *e = (const c_str *)base + first, *end = e + n; e < end; e++)
            if (e->text >= b->strtab || e->demangled >= b->strtab)
                return 1;
        return 0;
    case SEC_KERNELS:
        for (const store_kernel *e = (const store_kernel *)base + first, *end = e + n; e < end; e++)
            if (e->stream >= b->nstreams || e->launch >= b->nlaunches)
                return 1;
        return !sorted(base, sizeof(store_kernel), first, n);
    case SEC_COPIES:
        for (const store_copy *e = (const store_copy *)base + first, *end = e + n; e < end; e++)
            if (e->stream >= b->nstreams)
                return 1;
        return !sorted(base, sizeof(store_copy), first, n);
    case SEC_APIS:
        for (const store_api *e = (const store_api *)base + first, *end = e + n; e < end; e++)
            if (e->process >= b->nproc || e->name >= b->nstrings)
                return 1;
        return !sorted(base, sizeof(store_api), first, n);
    case SEC_RANGES:
        for (const store_range *e = (const store_range *)base + first, *end = e + n; e < end; e++)
            if (e->process >= b->nproc || e->name >= b->nstrings ||
                (e->domain != STORE_NONE && e->domain >= b->nstrings))
                return 1;
        return !sorted(base, sizeof(store_range), first, n);
    case SEC_CAPTURES:
        for (const c_cap *e = (const c_cap *)base + first, *end = e + n; e < end; e++)
            if (e->process >= b->nproc || e->end < e->start || !str_ok(b, e->name) ||
                !str_ok(b, e->start_reason) || !str_ok(b, e->end_reason))
                return 1;
        return 0;
    case SEC_PROCDEVS:
        for (const store_procdev *e = (const store_procdev *)base + first, *end = e + n; e < end;
             e++)
            if (e->process >= b->nproc || e->device >= b->ndev)
                return 1;
        return 0;
    case SEC_APART:
        for (const uint8_t *e = (const uint8_t *)base + first, *end = e + n; e < end; e++)
            if (*e > 1)
                return 1;
        return 0;
    default: return 0;
    }
}

/* A copy of n elements of `size` bytes into a new malloc'd array (at least one element). */
static void *dup_n(const void *src, uint64_t n, size_t size)
{
    void *d = malloc((n ? n : 1) * size);
    if (d && n)
        memcpy(d, src, n * size);
    return d;
}

int store_run_cache_load(const char *path, const char *key, store_run **ppRun, char *err,
                         size_t errlen)
{
    *ppRun = NULL;
    store_cache *c = NULL;
    if (store_cache_open(path, key, &c, err, errlen) != 0)
        return -1;
    store_run *run = store_run_new();
    if (!run) {
        store_fmt(err, errlen, "%s: out of memory", path);
        store_cache_close(c);
        return -1;
    }
    store_run_priv *p = STORE_PRIV(run);
    p->cache = c;
    void *sec[SEC_N + 1] = {0};
    uint64_t cnt[SEC_N + 1] = {0};
    bounds b = {0};
    char why[256] = "";
    /* in this order: each section's values are checked against the counts of those before */
    static const uint8_t order[SEC_N] = {SEC_META,     SEC_STRTAB,   SEC_PAIRS,    SEC_PROCS,
                                         SEC_DEVICES,  SEC_CONTEXTS, SEC_STREAMS,  SEC_STRINGS,
                                         SEC_LAUNCHES, SEC_KERNELS,  SEC_COPIES,   SEC_APIS,
                                         SEC_RANGES,   SEC_CAPTURES, SEC_PROCDEVS, SEC_APART};
    static const uint32_t elem[SEC_N + 1] = {[SEC_META] = sizeof(c_meta),
                                             [SEC_STRTAB] = 1,
                                             [SEC_PROCS] = sizeof(c_proc),
                                             [SEC_PAIRS] = sizeof(c_pair),
                                             [SEC_DEVICES] = sizeof(c_dev),
                                             [SEC_CONTEXTS] = sizeof(store_context),
                                             [SEC_STREAMS] = sizeof(store_stream),
                                             [SEC_LAUNCHES] = sizeof(store_launch),
                                             [SEC_STRINGS] = sizeof(c_str),
                                             [SEC_KERNELS] = sizeof(store_kernel),
                                             [SEC_COPIES] = sizeof(store_copy),
                                             [SEC_APIS] = sizeof(store_api),
                                             [SEC_RANGES] = sizeof(store_range),
                                             [SEC_CAPTURES] = sizeof(c_cap),
                                             [SEC_PROCDEVS] = sizeof(store_procdev),
                                             [SEC_APART] = 1};
    for (int i = 0; i < SEC_N; i++) {
        uint32_t id = order[i];
        if (store_cache_section(c, id, elem[id], check, &b, &sec[id], &cnt[id], why, sizeof why) !=
            0)
            goto bad;
        switch (id) {
        case SEC_META:
            if (cnt[id] != 1) {
                snprintf(why, sizeof why, "no run");
                goto bad;
            }
            break;
        case SEC_STRTAB:
            if (cnt[id] && ((const char *)sec[id])[cnt[id] - 1] != 0) {
                snprintf(why, sizeof why, "strings not terminated");
                goto bad;
            }
            b.strtab = cnt[id];
            break;
        case SEC_PROCS: b.nproc = cnt[id]; break;
        case SEC_PAIRS: b.npairs = cnt[id]; break;
        case SEC_DEVICES: b.ndev = cnt[id]; break;
        case SEC_CONTEXTS: b.nctx = cnt[id]; break;
        case SEC_STREAMS: b.nstreams = cnt[id]; break;
        case SEC_LAUNCHES: b.nlaunches = cnt[id]; break;
        case SEC_STRINGS: b.nstrings = cnt[id]; break;
        default: break;
        }
        if (cnt[id] >= STORE_NONE && id != SEC_STRTAB && id != SEC_KERNELS && id != SEC_COPIES &&
            id != SEC_APIS && id != SEC_RANGES && id != SEC_PAIRS && id != SEC_PROCDEVS) {
            snprintf(why, sizeof why, "section %u: too many entries", id);
            goto bad;
        }
    }
    if (cnt[SEC_APART] && cnt[SEC_APART] != b.nproc) {
        snprintf(why, sizeof why, "section %u: %llu entries for %llu processes", SEC_APART,
                 (unsigned long long)cnt[SEC_APART], (unsigned long long)b.nproc);
        goto bad;
    }
    const char *strtab = sec[SEC_STRTAB];
#define S(off) ((off) == NOSTR ? NULL : strtab + (off))
    const c_meta *meta = sec[SEC_META];
    p->gpu_separate = meta->gpu_separate != 0;
    run->t_begin = meta->t_begin;
    run->t_end = meta->t_end;
    uint32_t np = (uint32_t)b.nproc;
    run->processes = calloc(np + 1, sizeof *run->processes);
    p->meta_cap = calloc(np + 1, sizeof *p->meta_cap);
    p->gpus_apart = calloc(np + 1, sizeof *p->gpus_apart);
    run->devices = calloc(b.ndev + 1, sizeof *run->devices);
    run->strings = calloc(b.nstrings + 1, sizeof *run->strings);
    run->captures = calloc(cnt[SEC_CAPTURES] + 1, sizeof *run->captures);
    run->contexts = dup_n(sec[SEC_CONTEXTS], b.nctx, sizeof *run->contexts);
    run->streams = dup_n(sec[SEC_STREAMS], b.nstreams, sizeof *run->streams);
    run->launches = dup_n(sec[SEC_LAUNCHES], b.nlaunches, sizeof *run->launches);
    p->procdevs = dup_n(sec[SEC_PROCDEVS], cnt[SEC_PROCDEVS], sizeof *p->procdevs);
    if (!run->processes || !p->meta_cap || !p->gpus_apart || !run->devices || !run->strings ||
        !run->captures || !run->contexts || !run->streams || !run->launches || !p->procdevs) {
        snprintf(why, sizeof why, "out of memory");
        goto bad;
    }
    p->cap_processes = np + 1;
    p->cap_devices = b.ndev + 1;
    p->cap_strings = b.nstrings + 1;
    p->cap_captures = cnt[SEC_CAPTURES] + 1;
    p->cap_contexts = b.nctx ? b.nctx : 1;
    p->cap_streams = b.nstreams ? b.nstreams : 1;
    p->cap_launches = b.nlaunches ? b.nlaunches : 1;
    p->cap_procdevs = p->nprocdevs = cnt[SEC_PROCDEVS];
    if (cnt[SEC_APART])
        memcpy(p->gpus_apart, sec[SEC_APART], np);
    const c_pair *pairs = sec[SEC_PAIRS];
    for (uint32_t i = 0; i < np; i++) {
        const c_proc *s = (const c_proc *)sec[SEC_PROCS] + i;
        store_process *pr = &run->processes[i];
        *pr = (store_process){.pid = s->pid,
                              .ppid = s->ppid,
                              .host = S(s->host),
                              .exe = S(s->exe),
                              .argv = S(s->argv),
                              .run_id = S(s->run_id),
                              .source = S(s->source),
                              .file = S(s->file),
                              .start_wall = s->start_wall,
                              .end_wall = s->end_wall,
                              .complete = s->complete,
                              .error = S(s->error),
                              .clock_offset = s->clock_offset,
                              .clock_drift = s->clock_drift,
                              .records_dropped = s->records_dropped,
                              .rows_refused = s->rows_refused};
        run->nprocesses = i + 1; /* store_run_free frees the meta arrays of those counted */
        if (s->nmeta) {
            pr->meta_keys = malloc(s->nmeta * sizeof *pr->meta_keys);
            pr->meta_values = malloc(s->nmeta * sizeof *pr->meta_values);
            if (!pr->meta_keys || !pr->meta_values) {
                snprintf(why, sizeof why, "out of memory");
                goto bad;
            }
            for (uint32_t m = 0; m < s->nmeta; m++) {
                pr->meta_keys[m] = S(pairs[s->meta_first + m].key);
                pr->meta_values[m] = S(pairs[s->meta_first + m].value);
            }
            pr->nmeta = p->meta_cap[i] = s->nmeta;
        }
    }
    for (uint32_t i = 0; i < b.ndev; i++) {
        const c_dev *d = (const c_dev *)sec[SEC_DEVICES] + i;
        run->devices[i] =
            (store_device){S(d->uuid),  S(d->name),       d->sm_count,         d->cc_major,
                           d->cc_minor, d->global_memory, (uint8_t)d->inferred};
    }
    run->ndevices = (uint32_t)b.ndev;
    for (uint32_t i = 0; i < b.nstrings; i++) {
        const c_str *s = (const c_str *)sec[SEC_STRINGS] + i;
        run->strings[i] = (store_string){strtab + s->text, strtab + s->demangled};
    }
    run->nstrings = (uint32_t)b.nstrings;
    for (uint32_t i = 0; i < cnt[SEC_CAPTURES]; i++) {
        const c_cap *s = (const c_cap *)sec[SEC_CAPTURES] + i;
        run->captures[i] = (store_capture){
            s->start, s->end, s->process, S(s->name), S(s->start_reason), S(s->end_reason)};
    }
    run->ncaptures = (uint32_t)cnt[SEC_CAPTURES];
#undef S
    run->ncontexts = (uint32_t)b.nctx;
    run->nstreams = (uint32_t)b.nstreams;
    run->nlaunches = (uint32_t)b.nlaunches;
    /* the records stay in the mapping (copied out by a later builder call: store_run_own) */
    run->kernels = sec[SEC_KERNELS];
    run->nkernels = p->cap_kernels = cnt[SEC_KERNELS];
    run->copies = sec[SEC_COPIES];
    run->ncopies = p->cap_copies = cnt[SEC_COPIES];
    run->apis = sec[SEC_APIS];
    run->napis = p->cap_apis = cnt[SEC_APIS];
    run->ranges = sec[SEC_RANGES];
    run->nranges = p->cap_ranges = cnt[SEC_RANGES];
    store_run_reindex(run);
    for (uint32_t i = 0; i < run->ndevices; i++) /* as the run that was saved matched them */
        run->devices[i].inferred = (uint8_t)((const c_dev *)sec[SEC_DEVICES] + i)->inferred;
    *ppRun = run;
    return 0;
bad:
    store_fmt(err, errlen, "%s: %s", path, why);
    store_run_free(run);
    return -1;
}
