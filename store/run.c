/* run.c: the in-memory run model's builder: growable arrays, a string arena, interning tables
 * for strings, devices (by uuid, or matched without one), contexts, streams and launch
 * signatures, and the mark/rollback that lets a failed load leave the run as it was. The loader
 * (load.c) and the importers build runs through these calls; store_run_finish() sorts them
 * (sort.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

store_run *store_run_new(void)
{
    store_run *run = calloc(1, sizeof *run);
    store_run_priv *p = calloc(1, sizeof *p);
    if (!run || !p) {
        free(run);
        free(p);
        return NULL;
    }
    run->priv = p;
    return run;
}

static void free_process_meta(store_process *pr)
{
    free(pr->meta_keys);
    free(pr->meta_values);
    pr->meta_keys = pr->meta_values = NULL;
    pr->nmeta = 0;
}

void store_run_free(store_run *run)
{
    if (!run)
        return;
    store_run_priv *p = STORE_PRIV(run);
    for (uint32_t i = 0; i < run->nprocesses; i++)
        free_process_meta(&run->processes[i]);
    free(run->processes);
    free(run->devices);
    free(run->contexts);
    free(run->streams);
    free(run->launches);
    free(run->strings);
    for (int i = 0; i < 4; i++) {
        store_recs r = store_run_recs(run, (store_rec)i);
        if (!store_cache_owns(p->cache, *r.arr))
            free(*r.arr);
    }
    free(run->captures);
    store_cache_close(p->cache);
    free(p->key);
    store_arena_free(&p->arena);
    store_htab_free(&p->h_strings);
    store_htab_free(&p->h_launches);
    store_htab_free(&p->h_contexts);
    store_htab_free(&p->h_streams);
    store_htab_free(&p->h_devices);
    store_htab_free(&p->h_pd_device);
    store_htab_free(&p->h_pd_ordinal);
    store_htab_free(&p->h_pd_host);
    free(p->meta_cap);
    free(p->gpus_apart);
    free(p->procdevs);
    for (int i = 0; i < 4; i++)
        free(p->segs[i].start);
    free(p);
    free(run);
}

int store_run_set_key(store_run *run, const char *key)
{
    store_run_priv *p = STORE_PRIV(run);
    char *k = key ? strdup(key) : NULL;
    if (key && !k)
        return STORE_ENOMEM;
    free(p->key);
    p->key = k;
    return STORE_OK;
}

const char *store_run_key(const store_run *run)
{
    return STORE_PRIV(run)->key;
}

const char *store_run_errmsg(const store_run *run)
{
    return run ? STORE_PRIV(run)->errmsg : "out of memory";
}

int store_run_error(store_run *run, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(STORE_PRIV(run)->errmsg, sizeof STORE_PRIV(run)->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* ---------------------------------------------------------------- strings */

static int string_eq(const void *ctx, uint32_t idx, const void *key)
{
    return strcmp(((const store_run *)ctx)->strings[idx].text, key) == 0;
}

/* Interns text, whose store_hash_str is h and which is not in the table, with demangled as its
 * readable form (NULL or equal: the text itself). */
static store_idx intern_new(store_run *run, const char *text, uint64_t h, const char *demangled)
{
    store_run_priv *p = STORE_PRIV(run);
    if (run->nstrings == STORE_NONE - 1 ||
        store_grow((void **)&run->strings, &p->cap_strings, (uint64_t)run->nstrings + 1,
                   sizeof *run->strings))
        return STORE_NONE;
    const char *t = store_arena_strdup(&p->arena, text);
    const char *d = t;
    if (t && demangled && strcmp(demangled, text) != 0)
        d = store_arena_strdup(&p->arena, demangled);
    if (!t || !d || store_htab_put(&p->h_strings, h, run->nstrings))
        return STORE_NONE;
    run->strings[run->nstrings].text = t;
    run->strings[run->nstrings].demangled = d;
    return run->nstrings++;
}

store_idx store_run_intern2(store_run *run, const char *text, const char *demangled)
{
    if (!text)
        return STORE_NONE;
    uint64_t h = store_hash_str(text);
    store_idx idx = store_htab_get(&STORE_PRIV(run)->h_strings, h, string_eq, run, text);
    return idx != STORE_NONE ? idx : intern_new(run, text, h, demangled);
}

store_idx store_run_intern(store_run *run, const char *text)
{
    if (!text)
        return STORE_NONE;
    /* a name seen before (e.g. in another file of the run) is not demangled again */
    uint64_t h = store_hash_str(text);
    store_idx idx = store_htab_get(&STORE_PRIV(run)->h_strings, h, string_eq, run, text);
    if (idx != STORE_NONE)
        return idx;
    char *dem = store_demangle(text);
    idx = intern_new(run, text, h, dem);
    free(dem);
    return idx;
}

/* ---------------------------------------------------------------- processes */

void store_run_new_segment(store_run *run)
{
    store_run_priv *p = STORE_PRIV(run);
    uint64_t n[4] = {run->nkernels, run->ncopies, run->napis, run->nranges};
    for (int i = 0; i < 4; i++) {
        store_segs *s = &p->segs[i];
        if (s->n && s->start[s->n - 1] == n[i])
            continue;
        if (store_grow((void **)&s->start, &s->cap, s->n + 1, sizeof *s->start))
            continue; /* only sorting speed is lost */
        s->start[s->n++] = n[i];
    }
}

store_idx store_run_add_process(store_run *run, const store_process_info *info, const char *file)
{
    store_run_priv *p = STORE_PRIV(run);
    if (!info || run->nprocesses == STORE_NONE - 1)
        return STORE_NONE;
    uint64_t cap = p->cap_processes;
    if (store_grow((void **)&run->processes, &cap, (uint64_t)run->nprocesses + 1,
                   sizeof *run->processes))
        return STORE_NONE;
    uint64_t mcap = p->cap_processes;
    uint64_t acap = p->cap_processes;
    if (store_grow((void **)&p->meta_cap, &mcap, cap, sizeof *p->meta_cap) ||
        store_grow((void **)&p->gpus_apart, &acap, cap, sizeof *p->gpus_apart))
        return STORE_NONE;
    p->cap_processes = cap;
    store_process *pr = &run->processes[run->nprocesses];
    memset(pr, 0, sizeof *pr);
    pr->pid = info->pid;
    pr->ppid = info->ppid;
    pr->host = store_arena_strdup(&p->arena, info->host);
    pr->exe = store_arena_strdup(&p->arena, info->exe);
    pr->argv = store_arena_strdup(&p->arena, info->argv);
    pr->run_id = store_arena_strdup(&p->arena, info->run_id);
    pr->source = store_arena_strdup(&p->arena, info->source);
    pr->file = store_arena_strdup(&p->arena, file);
    pr->start_wall = info->start_wall;
    if ((info->host && !pr->host) || (info->exe && !pr->exe) || (info->argv && !pr->argv) ||
        (info->run_id && !pr->run_id) || (info->source && !pr->source) || (file && !pr->file))
        return STORE_NONE;
    p->meta_cap[run->nprocesses] = 0;
    p->gpus_apart[run->nprocesses] = (uint8_t)p->gpu_separate;
    store_run_new_segment(run);
    return run->nprocesses++;
}

int store_run_process_meta(store_run *run, store_idx process, const char *key, const char *value)
{
    store_run_priv *p = STORE_PRIV(run);
    if (process >= run->nprocesses || !key)
        return STORE_EINVAL;
    store_process *pr = &run->processes[process];
    if (!strcmp(key, "rows_refused")) { /* a field only: store_run_save() writes it back */
        if (value &&
            __builtin_add_overflow(pr->rows_refused, strtoull(value, NULL, 10), &pr->rows_refused))
            pr->rows_refused = UINT64_MAX;
        return STORE_OK;
    }
    const char *v = store_arena_strdup(&p->arena, value);
    if (value && !v)
        return STORE_ENOMEM;
    if (!strcmp(key, "records_dropped") && value)
        pr->records_dropped = strtoull(value, NULL, 10);
    if (!strcmp(key, "gpu_identity") && value && !strcmp(value, "separate"))
        p->gpus_apart[process] = 1;
    for (uint32_t i = 0; i < pr->nmeta; i++)
        if (!strcmp(pr->meta_keys[i], key)) {
            pr->meta_values[i] = v;
            return STORE_OK;
        }
    uint64_t cap = p->meta_cap[process], cap2 = cap;
    if (store_grow((void **)&pr->meta_keys, &cap, (uint64_t)pr->nmeta + 1, sizeof(char *)) ||
        store_grow((void **)&pr->meta_values, &cap2, (uint64_t)pr->nmeta + 1, sizeof(char *)))
        return STORE_ENOMEM;
    /* Both arrays grow to the same capacity; a failure between them leaves one larger,
     * which is harmless. */
    p->meta_cap[process] = (uint32_t)(cap < cap2 ? cap : cap2);
    const char *k = store_arena_strdup(&p->arena, key);
    if (!k)
        return STORE_ENOMEM;
    pr->meta_keys[pr->nmeta] = k;
    pr->meta_values[pr->nmeta] = v;
    pr->nmeta++;
    return STORE_OK;
}

/* ---------------------------------------------------------------- devices */

static int device_eq(const void *ctx, uint32_t idx, const void *key)
{
    const char *u = ((const store_run *)ctx)->devices[idx].uuid;
    return u && strcmp(u, key) == 0;
}

/* The keys of the three procdev tables; the hashes as pd_hash() computes them. */
typedef struct pd_key {
    store_idx process; /* or, in h_pd_host, STORE_NONE */
    uint32_t id;       /* the device (h_pd_device) or the ordinal */
    uint64_t host;     /* h_pd_host only: store_hash_str of the process's host ("" when none) */
} pd_key;

static uint64_t pd_hash(store_idx process, uint32_t id, const char *host, int which)
{
    pd_key k = {process, id, which == 2 ? store_hash_str(host ? host : "") : 0};
    if (which == 2)
        k.process = STORE_NONE;
    return store_hash_bytes(&k, sizeof k, 5 + (uint64_t)which);
}

static int pd_device_eq(const void *ctx, uint32_t idx, const void *key)
{
    const store_procdev *pd = &STORE_PRIV((const store_run *)ctx)->procdevs[idx];
    const pd_key *k = key;
    return pd->process == k->process && pd->device == k->id;
}

static int pd_ordinal_eq(const void *ctx, uint32_t idx, const void *key)
{
    const store_run *run = ctx;
    const store_procdev *pd = &STORE_PRIV(run)->procdevs[idx];
    const pd_key *k = key;
    return pd->process == k->process && pd->ordinal == k->id && !run->devices[pd->device].uuid;
}

/* Files procdev i in the tables (the uuid-less ones in all three). Out of memory, an entry is
 * missing: a later lookup then adds a duplicate pair or a second device, never a wrong one. */
static void procdev_index(store_run *run, uint64_t i)
{
    store_run_priv *p = STORE_PRIV(run);
    const store_procdev *pd = &p->procdevs[i];
    store_htab_put(&p->h_pd_device, pd_hash(pd->process, pd->device, NULL, 0), (uint32_t)i);
    if (run->devices[pd->device].uuid)
        return;
    store_htab_put(&p->h_pd_ordinal, pd_hash(pd->process, pd->ordinal, NULL, 1), (uint32_t)i);
    store_htab_put(&p->h_pd_host,
                   pd_hash(STORE_NONE, pd->ordinal, run->processes[pd->process].host, 2),
                   (uint32_t)i);
}

static int add_procdev(store_run *run, store_idx process, store_idx device, uint32_t ordinal)
{
    store_run_priv *p = STORE_PRIV(run);
    pd_key k = {process, device, 0};
    if (store_htab_get(&p->h_pd_device, pd_hash(process, device, NULL, 0), pd_device_eq, run, &k) !=
        STORE_NONE)
        return STORE_OK;
    if (p->nprocdevs >= STORE_NONE - 1 ||
        store_grow((void **)&p->procdevs, &p->cap_procdevs, p->nprocdevs + 1, sizeof *p->procdevs))
        return STORE_ENOMEM;
    p->procdevs[p->nprocdevs] = (store_procdev){process, device, ordinal};
    procdev_index(run, p->nprocdevs++);
    return STORE_OK;
}

uint32_t store_run_device_ordinal(const store_run *run, store_idx process, store_idx device)
{
    const store_run_priv *p = STORE_PRIV(run);
    pd_key k = {process, device, 0};
    uint32_t i =
        store_htab_get(&p->h_pd_device, pd_hash(process, device, NULL, 0), pd_device_eq, run, &k);
    return i == STORE_NONE ? STORE_NONE : p->procdevs[i].ordinal;
}

int store_run_set_gpu_identity(store_run *run, int separate)
{
    if (run->ndevices)
        return store_run_error(run, STORE_EINVAL,
                               "the GPU identity must be chosen before the first device is added");
    STORE_PRIV(run)->gpu_separate = separate != 0;
    return STORE_OK;
}

static int same_host(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* What infer_device looks for: another process's uuid-less device on the same host, ordinal,
 * name and memory. */
typedef struct infer_key {
    store_idx process;
    const store_device_info *d;
} infer_key;

static int infer_eq(const void *ctx, uint32_t idx, const void *key)
{
    const store_run *run = ctx;
    const store_run_priv *p = STORE_PRIV(run);
    const store_procdev *pd = &p->procdevs[idx];
    const infer_key *q = key;
    const store_device *dv = &run->devices[pd->device];
    return pd->process != q->process && !p->gpus_apart[pd->process] &&
           pd->ordinal == q->d->device_id && !dv->uuid && dv->name &&
           strcmp(dv->name, q->d->name) == 0 && dv->global_memory == q->d->global_memory &&
           same_host(run->processes[pd->process].host, run->processes[q->process].host);
}

/* The uuid-less device another process saw as the same GPU: same host, ordinal, name and
 * memory (a PyTorch trace per process, each naming "device 0, NVIDIA H200"); STORE_NONE when
 * none does or `d` has no name. */
static store_idx infer_device(const store_run *run, store_idx process, const store_device_info *d)
{
    const store_run_priv *p = STORE_PRIV(run);
    if (p->gpus_apart[process] || !d->name)
        return STORE_NONE;
    infer_key q = {process, d};
    uint32_t i = store_htab_get(&p->h_pd_host,
                                pd_hash(STORE_NONE, d->device_id, run->processes[process].host, 2),
                                infer_eq, run, &q);
    return i == STORE_NONE ? STORE_NONE : p->procdevs[i].device;
}

/* Marks again which uuid-less devices two or more processes share (after a rollback dropped
 * processes). Out of memory, the marks stay as they were. */
static void mark_inferred(store_run *run)
{
    const store_run_priv *p = STORE_PRIV(run);
    store_idx *first = malloc((run->ndevices + 1) * sizeof *first); /* a process seeing it */
    if (!first)
        return;
    for (uint32_t d = 0; d < run->ndevices; d++) {
        run->devices[d].inferred = 0;
        first[d] = STORE_NONE;
    }
    for (uint64_t i = 0; i < p->nprocdevs; i++) {
        const store_procdev *pd = &p->procdevs[i];
        if (first[pd->device] == STORE_NONE)
            first[pd->device] = pd->process;
        else if (first[pd->device] != pd->process && !run->devices[pd->device].uuid)
            run->devices[pd->device].inferred = 1;
    }
    free(first);
}

store_idx store_run_add_device(store_run *run, store_idx process, const store_device_info *d)
{
    store_run_priv *p = STORE_PRIV(run);
    if (!d || process >= run->nprocesses)
        return STORE_NONE;
    store_idx idx = STORE_NONE;
    uint64_t h = 0;
    if (d->uuid) {
        h = store_hash_str(d->uuid);
        idx = store_htab_get(&p->h_devices, h, device_eq, run, d->uuid);
    } else { /* without a uuid, a device is the process's ordinal, or another's by inference */
        pd_key k = {process, d->device_id, 0};
        uint32_t i = store_htab_get(&p->h_pd_ordinal, pd_hash(process, d->device_id, NULL, 1),
                                    pd_ordinal_eq, run, &k);
        if (i != STORE_NONE)
            idx = p->procdevs[i].device;
        if (idx == STORE_NONE && (idx = infer_device(run, process, d)) != STORE_NONE)
            run->devices[idx].inferred = 1;
    }
    if (idx == STORE_NONE) {
        if (store_grow((void **)&run->devices, &p->cap_devices, (uint64_t)run->ndevices + 1,
                       sizeof *run->devices))
            return STORE_NONE;
        store_device *dv = &run->devices[run->ndevices];
        memset(dv, 0, sizeof *dv);
        dv->uuid = store_arena_strdup(&p->arena, d->uuid);
        if ((d->uuid && !dv->uuid) || (d->uuid && store_htab_put(&p->h_devices, h, run->ndevices)))
            return STORE_NONE;
        idx = run->ndevices++;
    }
    /* Fill what this process knows and earlier ones did not. */
    store_device *dv = &run->devices[idx];
    if (!dv->name && d->name)
        dv->name = store_arena_strdup(&p->arena, d->name);
    /* the whole GPU: the most SMs any process was shown (an MPS client limited by an active
     * thread percentage is shown its partition's) */
    if (d->sm_count > dv->sm_count)
        dv->sm_count = d->sm_count;
    if (!dv->cc_major && !dv->cc_minor) {
        dv->cc_major = d->cc_major;
        dv->cc_minor = d->cc_minor;
    }
    if (!dv->global_memory)
        dv->global_memory = d->global_memory;
    if (add_procdev(run, process, idx, d->device_id))
        return STORE_NONE;
    return idx;
}

/* ---------------------------------------------------------------- contexts, streams, launches */

typedef struct ctx_key {
    store_idx process;
    uint32_t context_id;
} ctx_key;

static int context_eq(const void *ctx, uint32_t idx, const void *key)
{
    const store_context *c = &((const store_run *)ctx)->contexts[idx];
    const ctx_key *k = key;
    return c->process == k->process && c->context_id == k->context_id;
}

store_idx store_run_context(store_run *run, store_idx process, uint32_t context_id,
                            store_idx device, uint32_t compute_api_kind)
{
    store_run_priv *p = STORE_PRIV(run);
    if (process >= run->nprocesses || (device != STORE_NONE && device >= run->ndevices))
        return STORE_NONE;
    ctx_key k = {process, context_id};
    uint64_t h = store_hash_bytes(&k, sizeof k, 1);
    store_idx idx = store_htab_get(&p->h_contexts, h, context_eq, run, &k);
    if (idx != STORE_NONE) {
        store_context *c = &run->contexts[idx];
        if (c->device == STORE_NONE)
            c->device = device;
        if (compute_api_kind)
            c->compute_api_kind = compute_api_kind;
        return idx;
    }
    if (run->ncontexts == STORE_NONE - 1 ||
        store_grow((void **)&run->contexts, &p->cap_contexts, (uint64_t)run->ncontexts + 1,
                   sizeof *run->contexts))
        return STORE_NONE;
    if (store_htab_put(&p->h_contexts, h, run->ncontexts))
        return STORE_NONE;
    run->contexts[run->ncontexts] = (store_context){.process = process,
                                                    .device = device,
                                                    .context_id = context_id,
                                                    .compute_api_kind = compute_api_kind};
    return run->ncontexts++;
}

int store_run_context_green(store_run *run, store_idx context, int green, uint32_t parent_id,
                            uint32_t sm_count)
{
    if (context >= run->ncontexts)
        return STORE_EINVAL;
    store_context *c = &run->contexts[context];
    if (green)
        c->green = 1;
    if (parent_id)
        c->parent_id = parent_id;
    if (sm_count)
        c->sm_count = sm_count;
    return STORE_OK;
}

static int stream_eq(const void *ctx, uint32_t idx, const void *key)
{
    const store_stream *s = &((const store_run *)ctx)->streams[idx];
    const store_stream *k = key;
    return s->context == k->context && s->stream_id == k->stream_id;
}

store_idx store_run_stream(store_run *run, store_idx context, uint32_t stream_id)
{
    store_run_priv *p = STORE_PRIV(run);
    if (context >= run->ncontexts)
        return STORE_NONE;
    store_stream k = {context, stream_id};
    uint64_t h = store_hash_bytes(&k, sizeof k, 2);
    store_idx idx = store_htab_get(&p->h_streams, h, stream_eq, run, &k);
    if (idx != STORE_NONE)
        return idx;
    if (run->nstreams == STORE_NONE - 1 ||
        store_grow((void **)&run->streams, &p->cap_streams, (uint64_t)run->nstreams + 1,
                   sizeof *run->streams))
        return STORE_NONE;
    if (store_htab_put(&p->h_streams, h, run->nstreams))
        return STORE_NONE;
    run->streams[run->nstreams] = k;
    return run->nstreams++;
}

static int launch_eq(const void *ctx, uint32_t idx, const void *key)
{
    return memcmp(&((const store_run *)ctx)->launches[idx], key, sizeof(store_launch)) == 0;
}

store_idx store_run_launch(store_run *run, const store_launch *l)
{
    store_run_priv *p = STORE_PRIV(run);
    if (!l || (l->name != STORE_NONE && l->name >= run->nstrings))
        return STORE_NONE;
    uint64_t h = store_hash_bytes(l, sizeof *l, 3);
    store_idx idx = store_htab_get(&p->h_launches, h, launch_eq, run, l);
    if (idx != STORE_NONE)
        return idx;
    if (run->nlaunches == STORE_NONE - 1 ||
        store_grow((void **)&run->launches, &p->cap_launches, (uint64_t)run->nlaunches + 1,
                   sizeof *run->launches))
        return STORE_NONE;
    if (store_htab_put(&p->h_launches, h, run->nlaunches))
        return STORE_NONE;
    run->launches[run->nlaunches] = *l;
    return run->nlaunches++;
}

/* ---------------------------------------------------------------- records */

store_recs store_run_recs(store_run *run, store_rec which)
{
    store_run_priv *p = STORE_PRIV(run);
    switch (which) {
    case STORE_REC_KERNEL:
        return (store_recs){(void **)&run->kernels, &run->nkernels, &p->cap_kernels,
                            sizeof *run->kernels};
    case STORE_REC_COPY:
        return (store_recs){(void **)&run->copies, &run->ncopies, &p->cap_copies,
                            sizeof *run->copies};
    case STORE_REC_API:
        return (store_recs){(void **)&run->apis, &run->napis, &p->cap_apis, sizeof *run->apis};
    default:
        return (store_recs){(void **)&run->ranges, &run->nranges, &p->cap_ranges,
                            sizeof *run->ranges};
    }
}

int store_run_own(store_run *run)
{
    store_run_priv *p = STORE_PRIV(run);
    for (int i = 0; p->cache && i < 4; i++) {
        store_recs r = store_run_recs(run, (store_rec)i);
        if (!store_cache_owns(p->cache, *r.arr))
            continue;
        void *a = malloc(*r.n ? *r.n * r.size : 1);
        if (!a)
            return STORE_ENOMEM;
        store_hint_huge(a);
        memcpy(a, *r.arr, *r.n * r.size);
        *r.arr = a;
        *r.cap = *r.n;
    }
    return STORE_OK;
}

int store_run_reserve(store_run *run, store_rec which, uint64_t n, int exact)
{
    if (store_run_own(run))
        return STORE_ENOMEM;
    store_recs r = store_run_recs(run, which);
    uint64_t need = *r.n + n;
    if (need <= *r.cap)
        return STORE_OK;
    if (!exact)
        return store_grow(r.arr, r.cap, need, r.size);
    void *a = realloc(*r.arr, need * r.size);
    if (!a)
        return STORE_ENOMEM;
    store_hint_huge(a);
    *r.arr = a;
    *r.cap = need;
    return STORE_OK;
}

#define ADD_RECORD(arr, n, cap, rec)                                                               \
    do {                                                                                           \
        if (STORE_PRIV(run)->cache && store_run_own(run))                                          \
            return STORE_ENOMEM;                                                                   \
        if ((n) >= (cap) && store_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr)))           \
            return STORE_ENOMEM;                                                                   \
        (arr)[(n)++] = *(rec);                                                                     \
    } while (0)

int store_run_add_kernel(store_run *run, const store_kernel *k)
{
    ADD_RECORD(run->kernels, run->nkernels, STORE_PRIV(run)->cap_kernels, k);
    return STORE_OK;
}

int store_run_add_copy(store_run *run, const store_copy *c)
{
    ADD_RECORD(run->copies, run->ncopies, STORE_PRIV(run)->cap_copies, c);
    return STORE_OK;
}

int store_run_add_api(store_run *run, const store_api *a)
{
    ADD_RECORD(run->apis, run->napis, STORE_PRIV(run)->cap_apis, a);
    return STORE_OK;
}

int store_run_add_range(store_run *run, const store_range *r)
{
    ADD_RECORD(run->ranges, run->nranges, STORE_PRIV(run)->cap_ranges, r);
    return STORE_OK;
}

int store_run_add_capture(store_run *run, const store_capture *c)
{
    store_run_priv *p = STORE_PRIV(run);
    if (!c || c->process >= run->nprocesses || c->end < c->start ||
        run->ncaptures == STORE_NONE - 1)
        return STORE_EINVAL;
    store_capture copy = *c;
    const char *const *src[3] = {&c->name, &c->start_reason, &c->end_reason};
    const char **dst[3] = {&copy.name, &copy.start_reason, &copy.end_reason};
    for (int i = 0; i < 3; i++)
        if (*src[i] && !(*dst[i] = store_arena_strdup(&p->arena, *src[i])))
            return STORE_ENOMEM;
    uint64_t cap = p->cap_captures;
    if (store_grow((void **)&run->captures, &cap, (uint64_t)run->ncaptures + 1,
                   sizeof *run->captures))
        return STORE_ENOMEM;
    p->cap_captures = cap;
    run->captures[run->ncaptures++] = copy;
    return STORE_OK;
}

/* ---------------------------------------------------------------- mark and rollback */

void store_run_get_mark(const store_run *run, store_run_mark *m)
{
    const store_run_priv *p = STORE_PRIV(run);
    m->nprocesses = run->nprocesses;
    m->ndevices = run->ndevices;
    m->ncontexts = run->ncontexts;
    m->nstreams = run->nstreams;
    m->nlaunches = run->nlaunches;
    m->nstrings = run->nstrings;
    m->nprocdevs = (uint32_t)p->nprocdevs;
    for (int i = 0; i < 4; i++)
        m->nsegs[i] = p->segs[i].n;
    m->nkernels = run->nkernels;
    m->ncopies = run->ncopies;
    m->napis = run->napis;
    m->nranges = run->nranges;
    m->ncaptures = run->ncaptures;
}

/* Rebuilds a hash table over the first n entries; hashes as the add calls compute them. */
static void rebuild(store_run *run, store_htab *h, uint32_t n, int which)
{
    store_htab_free(h);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t hash;
        switch (which) {
        case 0: hash = store_hash_str(run->strings[i].text); break;
        case 1:
            if (!run->devices[i].uuid)
                continue;
            hash = store_hash_str(run->devices[i].uuid);
            break;
        case 2: {
            ctx_key k = {run->contexts[i].process, run->contexts[i].context_id};
            hash = store_hash_bytes(&k, sizeof k, 1);
            break;
        }
        case 3: hash = store_hash_bytes(&run->streams[i], sizeof run->streams[i], 2); break;
        default: hash = store_hash_bytes(&run->launches[i], sizeof run->launches[i], 3); break;
        }
        /* The tables were this size before, so only an allocation failure can stop this;
         * a missing entry then costs a duplicate later, never a wrong answer. */
        store_htab_put(h, hash, i);
    }
}

void store_run_rollback(store_run *run, const store_run_mark *m)
{
    store_run_priv *p = STORE_PRIV(run);
    for (uint32_t i = m->nprocesses; i < run->nprocesses; i++)
        free_process_meta(&run->processes[i]);
    run->nprocesses = m->nprocesses;
    run->ndevices = m->ndevices;
    run->ncontexts = m->ncontexts;
    run->nstreams = m->nstreams;
    run->nlaunches = m->nlaunches;
    run->nstrings = m->nstrings;
    run->nkernels = m->nkernels;
    run->ncopies = m->ncopies;
    run->napis = m->napis;
    run->nranges = m->nranges;
    run->ncaptures = m->ncaptures;
    p->nprocdevs = m->nprocdevs;
    for (int i = 0; i < 4; i++)
        p->segs[i].n = m->nsegs[i];
    store_run_reindex(run);
}

void store_run_reindex(store_run *run)
{
    store_run_priv *p = STORE_PRIV(run);
    rebuild(run, &p->h_strings, run->nstrings, 0);
    rebuild(run, &p->h_devices, run->ndevices, 1);
    rebuild(run, &p->h_contexts, run->ncontexts, 2);
    rebuild(run, &p->h_streams, run->nstreams, 3);
    rebuild(run, &p->h_launches, run->nlaunches, 4);
    store_htab_free(&p->h_pd_device);
    store_htab_free(&p->h_pd_ordinal);
    store_htab_free(&p->h_pd_host);
    for (uint64_t i = 0; i < p->nprocdevs; i++)
        procdev_index(run, i);
    mark_inferred(run);
}

/* ---------------------------------------------------------------- finish */

/* The process of record j of kind `which` (the process of its stream's context for kernels and
 * copies). */
static store_idx rec_process(const store_run *run, store_rec which, uint64_t j)
{
    switch (which) {
    case STORE_REC_KERNEL:
        return run->contexts[run->streams[run->kernels[j].stream].context].process;
    case STORE_REC_COPY: return run->contexts[run->streams[run->copies[j].stream].context].process;
    case STORE_REC_API: return run->apis[j].process;
    default: return run->ranges[j].process;
    }
}

/* Refuses a run whose times (starts and ends of its records and capture ranges) lie further
 * apart than STORE_SPAN_MAX, naming the files at both ends. t: the earliest and the latest time,
 * kind and at: the kind (store_rec; 4 a capture range) and index of their records. */
static int check_span(store_run *run, const int64_t *t, const int *kind, const uint64_t *at)
{
    uint64_t span = (uint64_t)t[1] - (uint64_t)t[0];
    if (t[1] < t[0] || span <= (uint64_t)STORE_SPAN_MAX)
        return STORE_OK;
    store_idx p[2];
    for (int i = 0; i < 2; i++)
        p[i] = kind[i] == 4 ? run->captures[at[i]].process
                            : rec_process(run, (store_rec)kind[i], at[i]);
    const store_process *a = &run->processes[p[0]], *b = &run->processes[p[1]];
    return store_run_error(run, STORE_EFORMAT,
                           "%s: the records span %.1f years (pid %lld at %.6g s, to pid %lld of "
                           "%s at %.6g s on the common axis): more than the %.0f years one time "
                           "axis holds; a file's clock is wrong",
                           a->file ? a->file : "?", (double)span / 1e9 / 86400 / 365.25,
                           (long long)a->pid, (double)t[0] / 1e9, (long long)b->pid,
                           b->file ? b->file : "?", (double)t[1] / 1e9,
                           (double)STORE_SPAN_MAX / 1e9 / 86400 / 365.25);
}

int store_run_finish(store_run *run)
{
    store_run_priv *p = STORE_PRIV(run);
    if (store_run_own(run))
        return store_run_error(run, STORE_ENOMEM, "out of memory copying the cached records");
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int64_t t[2] = {INT64_MAX, INT64_MIN}; /* every start and end, for the span */
    int kind[2] = {0, 0};
    uint64_t at[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        store_recs a = store_run_recs(run, (store_rec)i);
        void *before = *a.arr;
        if (store_sort_records(a.arr, *a.n, a.size, &p->segs[i]))
            return store_run_error(run, STORE_ENOMEM, "out of memory sorting %llu records",
                                   (unsigned long long)*a.n);
        if (*a.arr != before)
            *a.cap = *a.n;
        p->segs[i].n = 0; /* all one sorted segment now */
        const char *base = *a.arr;
        for (uint64_t j = 0; j < *a.n; j++) {
            int64_t s, e;
            memcpy(&s, base + j * a.size, sizeof s);
            memcpy(&e, base + j * a.size + sizeof s, sizeof e);
            if (j == 0 && s < lo)
                lo = s;
            if (e > hi)
                hi = e;
            /* an end may come before its start; a time beyond +-STORE_TIME_MAX (a builder's
             * that does not check: readers refuse them) is never on the time axis */
            int64_t x = s < e ? s : e, y = s < e ? e : s;
            if (x < -STORE_TIME_MAX || y > STORE_TIME_MAX)
                continue;
            if (x < t[0]) {
                t[0] = x;
                kind[0] = i;
                at[0] = j;
            }
            if (y > t[1]) {
                t[1] = y;
                kind[1] = i;
                at[1] = j;
            }
        }
    }
    for (uint32_t j = 0; j < run->ncaptures; j++) {
        const store_capture *c = &run->captures[j];
        if (c->start < -STORE_TIME_MAX || c->end > STORE_TIME_MAX)
            continue;
        if (c->start < t[0]) {
            t[0] = c->start;
            kind[0] = 4;
            at[0] = j;
        }
        if (c->end > t[1]) {
            t[1] = c->end;
            kind[1] = 4;
            at[1] = j;
        }
    }
    run->t_begin = lo == INT64_MAX ? 0 : lo;
    run->t_end = hi == INT64_MIN ? 0 : hi;
    return check_span(run, t, kind, at);
}
