/* restrict.c: store_run_restrict(), a run cut down to a time range: the same processes, GPUs,
 * contexts, streams, launch signatures and strings (at the same indices), and only the records
 * in flight in the range, each kept whole. `tlview report --from/--to/--range` analyses this copy,
 * so a report on a range is the one analysis of a smaller run, not a second code path. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Copies n elements of `size` bytes from src into a new array *pDst (cap set to n). */
static int dup_array(void **pDst, uint64_t *pCap, const void *src, uint64_t n, size_t size)
{
    if (!n)
        return STORE_OK;
    if (store_grow(pDst, pCap, n, size))
        return STORE_ENOMEM;
    memcpy(*pDst, src, n * size);
    return STORE_OK;
}

/* A copy of s in the run's arena (NULL stays NULL); *bad is set when out of memory. */
static const char *dup_str(store_run *run, const char *s, int *bad)
{
    const char *d = store_arena_strdup(&STORE_PRIV(run)->arena, s);
    if (s && !d)
        *bad = 1;
    return d;
}

/* Copies what the records point at: strings, processes with their meta, devices, contexts,
 * streams, launches and the process-device pairs, index for index, then rebuilds the lookup
 * tables so the copy is a run like any other. */
static int copy_model(store_run *run, const store_run *src)
{
    store_run_priv *p = STORE_PRIV(run);
    const store_run_priv *sp = STORE_PRIV(src);
    int bad = 0;
    p->gpu_separate = sp->gpu_separate;
    if (dup_array((void **)&run->strings, &p->cap_strings, src->strings, src->nstrings,
                  sizeof *run->strings) ||
        dup_array((void **)&run->processes, &p->cap_processes, src->processes, src->nprocesses,
                  sizeof *run->processes) ||
        dup_array((void **)&run->devices, &p->cap_devices, src->devices, src->ndevices,
                  sizeof *run->devices) ||
        dup_array((void **)&run->contexts, &p->cap_contexts, src->contexts, src->ncontexts,
                  sizeof *run->contexts) ||
        dup_array((void **)&run->streams, &p->cap_streams, src->streams, src->nstreams,
                  sizeof *run->streams) ||
        dup_array((void **)&run->launches, &p->cap_launches, src->launches, src->nlaunches,
                  sizeof *run->launches) ||
        dup_array((void **)&p->procdevs, &p->cap_procdevs, sp->procdevs, sp->nprocdevs,
                  sizeof *p->procdevs))
        return STORE_ENOMEM;
    run->nstrings = src->nstrings;
    run->ndevices = src->ndevices;
    run->ncontexts = src->ncontexts;
    run->nstreams = src->nstreams;
    run->nlaunches = src->nlaunches;
    p->nprocdevs = sp->nprocdevs;
    /* the processes' meta arrays are the copy's own from here on (store_run_free frees them) */
    for (uint32_t i = 0; i < src->nprocesses; i++) {
        store_process *pr = &run->processes[i];
        pr->meta_keys = pr->meta_values = NULL;
        pr->nmeta = 0;
    }
    run->nprocesses = src->nprocesses;
    /* per-process arrays as long as the processes' capacity, as store_run_add_process keeps
     * them */
    uint64_t n = p->cap_processes ? p->cap_processes : 1, c1 = 0, c2 = 0;
    if (store_grow((void **)&p->meta_cap, &c1, n, sizeof *p->meta_cap) ||
        store_grow((void **)&p->gpus_apart, &c2, n, sizeof *p->gpus_apart))
        return STORE_ENOMEM;
    if (src->nprocesses)
        memcpy(p->gpus_apart, sp->gpus_apart, src->nprocesses * sizeof *p->gpus_apart);
    for (uint32_t i = 0; i < src->nstrings; i++) {
        const store_string *s = &src->strings[i];
        run->strings[i].text = dup_str(run, s->text, &bad);
        run->strings[i].demangled =
            s->demangled == s->text ? run->strings[i].text : dup_str(run, s->demangled, &bad);
    }
    for (uint32_t i = 0; i < src->nprocesses; i++) {
        const store_process *s = &src->processes[i];
        store_process *pr = &run->processes[i];
        p->meta_cap[i] = 0;
        pr->host = dup_str(run, s->host, &bad);
        pr->exe = dup_str(run, s->exe, &bad);
        pr->argv = dup_str(run, s->argv, &bad);
        pr->run_id = dup_str(run, s->run_id, &bad);
        pr->source = dup_str(run, s->source, &bad);
        pr->file = dup_str(run, s->file, &bad);
        pr->error = dup_str(run, s->error, &bad);
        if (s->nmeta) {
            pr->meta_keys = malloc(s->nmeta * sizeof *pr->meta_keys);
            pr->meta_values = malloc(s->nmeta * sizeof *pr->meta_values);
            if (!pr->meta_keys || !pr->meta_values) {
                free(pr->meta_keys);
                free(pr->meta_values);
                pr->meta_keys = pr->meta_values = NULL;
                return STORE_ENOMEM;
            }
            pr->nmeta = p->meta_cap[i] = s->nmeta;
            for (uint32_t m = 0; m < s->nmeta; m++) {
                pr->meta_keys[m] = dup_str(run, s->meta_keys[m], &bad);
                pr->meta_values[m] = dup_str(run, s->meta_values[m], &bad);
            }
        }
    }
    for (uint32_t i = 0; i < src->ndevices; i++) {
        run->devices[i].uuid = dup_str(run, src->devices[i].uuid, &bad);
        run->devices[i].name = dup_str(run, src->devices[i].name, &bad);
    }
    if (bad)
        return STORE_ENOMEM;
    store_run_reindex(run);
    for (uint32_t i = 0; i < src->ndevices; i++) /* as the source matched them */
        run->devices[i].inferred = src->devices[i].inferred;
    return STORE_OK;
}

/* 1 when a record [start, end) counts in [t0, t1): in flight there at some instant, or, when it
 * has no length (or an end before its start, as importers may give), starting inside. */
static int in_range(int64_t start, int64_t end, int64_t t0, int64_t t1)
{
    return start < t1 && (end > t0 || start >= t0);
}

/* Appends the records of src's sorted array (n of `size` bytes, int64 start and end first) that
 * count in [t0, t1) to *pDst. Sorted by start, so the scan stops at the first start >= t1. */
static int copy_records(void **pDst, uint64_t *pN, uint64_t *pCap, const void *src, uint64_t n,
                        size_t size, int64_t t0, int64_t t1)
{
    const char *base = src;
    for (uint64_t i = 0; i < n; i++) {
        int64_t se[2];
        memcpy(se, base + i * size, sizeof se);
        if (se[0] >= t1)
            break;
        if (!in_range(se[0], se[1], t0, t1))
            continue;
        if (*pN >= *pCap && store_grow(pDst, pCap, *pN + 1, size))
            return STORE_ENOMEM;
        memcpy((char *)*pDst + *pN * size, base + i * size, size);
        (*pN)++;
    }
    return STORE_OK;
}

int store_run_restrict(const store_run *src, int64_t t0, int64_t t1, store_run **ppOut)
{
    *ppOut = NULL;
    if (!src || t1 <= t0)
        return STORE_EINVAL;
    store_run *run = store_run_new();
    if (!run)
        return STORE_ENOMEM;
    store_run_priv *p = STORE_PRIV(run);
    int rc = copy_model(run, src);
    if (!rc)
        rc = copy_records((void **)&run->kernels, &run->nkernels, &p->cap_kernels, src->kernels,
                          src->nkernels, sizeof *src->kernels, t0, t1);
    if (!rc)
        rc = copy_records((void **)&run->copies, &run->ncopies, &p->cap_copies, src->copies,
                          src->ncopies, sizeof *src->copies, t0, t1);
    if (!rc)
        rc = copy_records((void **)&run->apis, &run->napis, &p->cap_apis, src->apis, src->napis,
                          sizeof *src->apis, t0, t1);
    if (!rc)
        rc = copy_records((void **)&run->ranges, &run->nranges, &p->cap_ranges, src->ranges,
                          src->nranges, sizeof *src->ranges, t0, t1);
    for (uint32_t i = 0; !rc && i < src->ncaptures; i++) { /* in file order, not by start */
        const store_capture *c = &src->captures[i];
        if (in_range(c->start, c->end, t0, t1))
            rc = store_run_add_capture(run, c);
    }
    if (!rc)
        rc = store_run_finish(run); /* already in order: computes t_begin and t_end */
    if (rc) {
        store_run_free(run);
        return rc;
    }
    *ppOut = run;
    return STORE_OK;
}

int64_t store_run_origin(const store_run *run)
{
    return run->nkernels ? run->kernels[0].start : run->t_begin;
}

/* The first start and last end, over every process, of the captured ranges named `name`, else
 * of the NVTX ranges so named (*pKind says which). 0, or STORE_RANGE_NONAME when neither exists. */
static int find_named(const store_run *run, const char *name, int64_t *pT0, int64_t *pT1,
                      int *pKind)
{
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (uint32_t i = 0; i < run->ncaptures; i++) {
        const store_capture *c = &run->captures[i];
        if (c->name && !strcmp(c->name, name)) {
            t0 = c->start < t0 ? c->start : t0;
            t1 = c->end > t1 ? c->end : t1;
        }
    }
    *pKind = STORE_RANGE_CAPTURE;
    if (t1 < t0) {
        for (uint64_t i = 0; i < run->nranges; i++) {
            const store_range *g = &run->ranges[i];
            if (g->name < run->nstrings && !strcmp(run->strings[g->name].text, name)) {
                t0 = g->start < t0 ? g->start : t0;
                t1 = g->end > t1 ? g->end : t1;
            }
        }
        *pKind = STORE_RANGE_NVTX;
    }
    if (t1 < t0)
        return STORE_RANGE_NONAME;
    *pT0 = t0;
    *pT1 = t1 > t0 ? t1 : t0 + 1; /* a range of no length still names its instant */
    return 0;
}

int store_run_range(const store_run *run, const store_range_ask *ask, int64_t *pT0, int64_t *pT1,
                    int *pKind)
{
    if (ask->name)
        return find_named(run, ask->name, pT0, pT1, pKind);
    *pKind = STORE_RANGE_TIME;
    int64_t origin = store_run_origin(run);
    int64_t t[2] = {ask->has_from ? ask->from : -STORE_TIME_MAX,
                    ask->has_to ? ask->to : STORE_TIME_MAX};
    const uint8_t rel[2] = {ask->has_from && ask->from_rel, ask->has_to && ask->to_rel};
    for (int i = 0; i < 2; i++)
        if (rel[i] && !store_time_add(origin, t[i], &t[i])) {
            *pT0 = i;
            return STORE_RANGE_BEYOND;
        }
    if (t[1] <= t[0])
        return STORE_RANGE_ORDER;
    *pT0 = t[0];
    *pT1 = t[1];
    return 0;
}
