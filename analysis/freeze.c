/* freeze.c: an analysis as one flat block of bytes and back (analysis_freeze, analysis_thaw), so
 * that a caller may keep it beside the run it was made of (the cache of cli/cache.c) and skip the
 * analysis on reopening. No I/O here: the block is the caller's to write and read. What is kept
 * is what the accessors, the profile queries and analysis_compare() read after analysis_run();
 * the passes' scratch (call sites, the sweep's switches) is not. A block is checked whole before
 * use: its sizes against its length and the run, every index against what it indexes. */
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

#define FRZ_MAGIC 0x545A5246564C5400ULL /* "\0TLVFRZT" */
#define FRZ_VERSION 1u

/* The block's head; the arrays follow, each at a multiple of 8 bytes. */
typedef struct frz_head {
    uint64_t magic;
    uint32_t version;
    uint32_t ndevs, ngroups, nsigs, nwarnings, part_unmatched;
    uint32_t measure_in, measure_out, measure_out_first;
    int32_t measure_missing;
    uint32_t has_waits;
    uint32_t reserved;
    uint64_t nkernels, ncontexts, nlaunches, nprocesses, ndevices, nstrings; /* the run's */
    uint64_t nwindows, nfolds, nout, warn_bytes;
    analysis_summary sum;
} frz_head;

int analysis_freeze(const analysis *a, void **ppBlob, size_t *pLen)
{
    *ppBlob = NULL;
    *pLen = 0;
    const store_run *run = a->run;
    frz_head h = {.magic = FRZ_MAGIC,
                  .version = FRZ_VERSION,
                  .ndevs = a->ndevs,
                  .ngroups = a->ngroups,
                  .nsigs = a->nsigs,
                  .nwarnings = a->nwarnings,
                  .part_unmatched = a->part_unmatched,
                  .measure_in = a->measure_in,
                  .measure_out = a->measure_out,
                  .measure_out_first = a->measure_out_first,
                  .measure_missing = a->measure_missing,
                  .has_waits = a->waits != NULL,
                  .nkernels = run->nkernels,
                  .ncontexts = run->ncontexts,
                  .nlaunches = run->nlaunches,
                  .nprocesses = run->nprocesses,
                  .ndevices = run->ndevices,
                  .nstrings = run->nstrings,
                  .nwindows = a->nwindows,
                  .nfolds = a->nfolds,
                  .nout = a->nout,
                  .sum = a->sum};
    for (uint32_t i = 0; i < a->nwarnings; i++)
        h.warn_bytes += strlen(a->warnings[i]) + 1;
    store_blob f = {0};
    store_blob_put(&f, &h, sizeof h);
    store_blob_put(&f, a->stretch, run->nkernels * sizeof *a->stretch);
    store_blob_put(&f, a->ctx_slot, run->ncontexts * sizeof *a->ctx_slot);
    store_blob_put(&f, a->ctx_group, run->ncontexts * sizeof *a->ctx_group);
    store_blob_put(&f, a->ctx_sms, run->ncontexts * sizeof *a->ctx_sms);
    store_blob_put(&f, a->group_plain, a->ngroups * sizeof *a->group_plain);
    store_blob_put(&f, a->group_unknown, a->ngroups * sizeof *a->group_unknown);
    store_blob_put(&f, a->slot_sms, a->ndevs * sizeof *a->slot_sms);
    store_blob_put(&f, a->devs, a->ndevs * sizeof *a->devs);
    store_blob_put(&f, a->dev_maxdur, a->ndevs * sizeof *a->dev_maxdur);
    store_blob_put(&f, a->switch_in, a->ndevs * sizeof *a->switch_in);
    store_blob_put(&f, a->windows, a->nwindows * sizeof *a->windows);
    if (a->waits)
        store_blob_put(&f, a->waits, a->nwindows * sizeof *a->waits);
    store_blob_put(&f, a->folds, a->nfolds * sizeof *a->folds);
    store_blob_put(&f, a->sigs, a->nsigs * sizeof *a->sigs);
    store_blob_put(&f, a->launch_sig, run->nlaunches * sizeof *a->launch_sig);
    store_blob_put(&f, a->procs, (run->nprocesses + 1) * sizeof *a->procs);
    store_blob_put(&f, a->proc_first, (run->nprocesses + 1) * sizeof *a->proc_first);
    store_blob_put(&f, a->proc_last, (run->nprocesses + 1) * sizeof *a->proc_last);
    char *warn = malloc(h.warn_bytes + 1); /* one after another, each with its NUL */
    size_t at = 0;
    for (uint32_t i = 0; warn && i < a->nwarnings; i++) {
        size_t len = strlen(a->warnings[i]) + 1;
        memcpy(warn + at, a->warnings[i], len);
        at += len;
    }
    f.bad |= !warn;
    store_blob_put(&f, warn, h.warn_bytes);
    free(warn);
    if (f.bad) {
        free(f.b);
        return ANALYSIS_ENOMEM;
    }
    *ppBlob = f.b;
    *pLen = f.n;
    return ANALYSIS_OK;
}

/* A malloc'd copy of the next n elements of `size` bytes of the block (at least one element's
 * room), or NULL with f->bad set when they lie beyond it or memory runs out. */
static void *take(store_blob *f, uint64_t n, size_t size)
{
    const void *at = store_blob_take(f, n, size);
    size_t len = at ? (size_t)n * size : 0;
    void *p = at ? malloc(len ? len : size) : NULL;
    if (!p) {
        f->bad = 1;
        return NULL;
    }
    store_hint_huge(p); /* before the copy faults its pages in: 2 MiB at a time, not 4 KiB */
    memcpy(p, at, len);
    return p;
}

/* 1 when every value checked in the thawed analysis lies in bounds. */
static int in_bounds(const analysis *a, const store_run *run)
{
    for (uint32_t c = 0; c < run->ncontexts; c++)
        if ((a->ctx_slot[c] != UINT32_MAX && a->ctx_slot[c] >= a->ndevs) ||
            a->ctx_group[c] >= a->ngroups)
            return 0;
    for (uint32_t d = 0; d < a->ndevs; d++) {
        const analysis_device *ad = &a->devs[d];
        if ((ad->device != STORE_NONE && ad->device >= run->ndevices) ||
            (unsigned)ad->verdict >= ANALYSIS_NVERDICTS || ad->first_window > a->nwindows ||
            ad->nwindows > a->nwindows - ad->first_window)
            return 0;
    }
    for (uint64_t w = 0; w < a->nwindows; w++)
        if ((a->windows[w].device != STORE_NONE && a->windows[w].device >= run->ndevices) ||
            (unsigned)a->windows[w].verdict >= ANALYSIS_NVERDICTS)
            return 0;
    for (uint64_t f = 0; f < a->nfolds; f++) {
        const analysis_fold *fd = &a->folds[f];
        if (fd->w >= a->nwindows || (fd->h != UINT64_MAX && fd->h >= a->nwindows) ||
            (fd->t != UINT64_MAX && fd->t >= a->nwindows))
            return 0;
    }
    for (uint32_t s = 0; s < a->nsigs; s++)
        if (a->sigs[s].launch >= run->nlaunches || a->sigs[s].name >= run->nstrings)
            return 0;
    for (uint32_t l = 0; l < run->nlaunches; l++)
        if (a->launch_sig[l] != UINT32_MAX && a->launch_sig[l] >= a->nsigs)
            return 0;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        if (a->procs[p].process != p)
            return 0;
    return !a->measure_out || a->measure_out_first < run->nprocesses;
}

int analysis_thaw(const store_run *run, const analysis_options *opt, const void *blob, size_t len,
                  store_cache *owner, analysis **ppOut)
{
    *ppOut = NULL;
    frz_head h;
    if (!run || !blob || len < sizeof h)
        return ANALYSIS_EINVAL;
    memcpy(&h, blob, sizeof h);
    if (h.magic != FRZ_MAGIC || h.version != FRZ_VERSION || h.nkernels != run->nkernels ||
        h.ncontexts != run->ncontexts || h.nlaunches != run->nlaunches ||
        h.nprocesses != run->nprocesses || h.ndevices != run->ndevices ||
        h.nstrings != run->nstrings || h.ndevs > run->ndevices + 1 || h.ngroups > run->ncontexts ||
        h.nsigs > run->nlaunches || h.nwarnings > h.warn_bytes ||
        h.nfolds > 2 * ((uint64_t)h.ndevs + 1) || h.warn_bytes > len)
        return ANALYSIS_EINVAL;
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        return ANALYSIS_ENOMEM;
    a->run = run;
    if (opt)
        a->opt = *opt;
    else
        analysis_options_default(&a->opt);
    a->ndevs = h.ndevs;
    a->ngroups = h.ngroups;
    a->nsigs = h.nsigs;
    a->part_unmatched = h.part_unmatched;
    a->measure_in = h.measure_in;
    a->measure_out = h.measure_out;
    a->measure_out_first = h.measure_out_first;
    a->measure_missing = h.measure_missing;
    a->nwindows = h.nwindows;
    a->nfolds = h.nfolds;
    a->nout = h.nout;
    a->sum = h.sum;
    store_blob f = {.b = (char *)blob, .n = (sizeof h + 7) / 8 * 8, .cap = len};
    if (f.n > len)
        f.bad = 1;
    if (owner && store_cache_owns(owner, blob)) { /* read in place: a float has no bad value */
        a->cache = owner;
        a->stretch = (float *)store_blob_take(&f, run->nkernels, sizeof *a->stretch);
        if (!a->stretch)
            f.bad = 1;
    } else
        a->stretch = take(&f, run->nkernels, sizeof *a->stretch);
    a->ctx_slot = take(&f, run->ncontexts, sizeof *a->ctx_slot);
    a->ctx_group = take(&f, run->ncontexts, sizeof *a->ctx_group);
    a->ctx_sms = take(&f, run->ncontexts, sizeof *a->ctx_sms);
    a->group_plain = take(&f, a->ngroups, sizeof *a->group_plain);
    a->group_unknown = take(&f, a->ngroups, sizeof *a->group_unknown);
    a->slot_sms = take(&f, a->ndevs, sizeof *a->slot_sms);
    a->devs = take(&f, a->ndevs, sizeof *a->devs);
    a->dev_maxdur = take(&f, a->ndevs, sizeof *a->dev_maxdur);
    a->switch_in = take(&f, a->ndevs, sizeof *a->switch_in);
    a->windows = take(&f, a->nwindows, sizeof *a->windows);
    if (h.has_waits)
        a->waits = take(&f, a->nwindows, sizeof *a->waits);
    a->folds = take(&f, a->nfolds, sizeof *a->folds);
    a->sigs = take(&f, a->nsigs, sizeof *a->sigs);
    a->launch_sig = take(&f, run->nlaunches, sizeof *a->launch_sig);
    a->procs = take(&f, (uint64_t)run->nprocesses + 1, sizeof *a->procs);
    a->proc_first = take(&f, (uint64_t)run->nprocesses + 1, sizeof *a->proc_first);
    a->proc_last = take(&f, (uint64_t)run->nprocesses + 1, sizeof *a->proc_last);
    char *warn = take(&f, h.warn_bytes, 1);
    int rc = f.bad ? ANALYSIS_EINVAL : ANALYSIS_OK;
    if (!rc && h.warn_bytes && warn[h.warn_bytes - 1] != 0)
        rc = ANALYSIS_EINVAL;
    if (!rc && !(a->warnings = calloc(h.nwarnings + 1, sizeof *a->warnings)))
        rc = ANALYSIS_ENOMEM;
    for (uint64_t at = 0; !rc && a->nwarnings < h.nwarnings; a->nwarnings++) {
        if (at >= h.warn_bytes) {
            rc = ANALYSIS_EINVAL;
            break;
        }
        size_t n = strlen(warn + at) + 1;
        if (!(a->warnings[a->nwarnings] = malloc(n))) {
            rc = ANALYSIS_ENOMEM;
            break;
        }
        memcpy(a->warnings[a->nwarnings], warn + at, n);
        at += n;
    }
    free(warn);
    if (!rc && !in_bounds(a, run))
        rc = ANALYSIS_EINVAL;
    if (rc) {
        a->cache = NULL; /* the caller's again: not closed with a */
        if (store_cache_owns(owner, a->stretch))
            a->stretch = NULL;
        analysis_free(a);
        return rc;
    }
    *ppOut = a;
    return ANALYSIS_OK;
}
