/* web_freeze.c: a run's viewport index as one flat block of bytes and back (web_runix_freeze,
 * web_runix_thaw), so that a caller may keep it beside the run and its analysis (the cache of
 * cli/cache.c) and skip the index on reopening. No I/O here. What is kept is what the index
 * computes from the records: each kind's positions by row and level with their offsets, the flow
 * index, the rows and their interval grids, the rows of each stream and the lane of each process,
 * each lane's context switches and, once the stats thread has built them, each lane's concurrency
 * grid and the GET /api/stats body (the costliest part after start: a sweep of every kernel); the
 * lanes' windows and work are made again from the analysis (a pass over the windows). A thawed
 * index lends its arrays from the block, which must outlive it; every size is checked against the
 * block and the run, every position against the records, every grid bin's figures against their
 * range, and the statistics must be a JSON object of the same run. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define FRZ_MAGIC 0x58444E4956544C54ULL /* "TLTVINDX" */
#define FRZ_VERSION 2u

/* The block's head. */
typedef struct frz_head {
    uint64_t magic;
    uint32_t version, nlanes;
    uint64_t n[WEB_NROW_KINDS];     /* records of each kind (the run's) */
    uint32_t nrows[WEB_NROW_KINDS]; /* rows of each kind */
    uint32_t ncorr[WEB_NROW_KINDS]; /* flow index entries (0 and no array for NVTX) */
    uint32_t has_corr[WEB_NROW_KINDS];
    uint32_t nprocesses, nstreams, ncontexts, has_stream_row[2];
    uint32_t reserved;
} frz_head;

/* One row; its levels follow it (frz_lev each, with its grid). */
typedef struct frz_row {
    uint8_t kind, nlev;
    uint16_t reserved;
    uint32_t slot, process, context, stream, off, n;
    uint32_t reserved2; /* 0: no padding left undefined */
    uint64_t thread;
} frz_row;

/* One level of a row: the interval grid's parameters; first[nb + 1], carry[nb], busy[nb] follow. */
typedef struct frz_lev {
    uint32_t n, nb;
    int64_t t0, bw;
} frz_lev;

/* A lane's concurrency grid (after its switches): ngrid analysis_bin follow when `has`. */
typedef struct frz_grid {
    uint32_t has, ngrid;
    int64_t g0, gw;
} frz_grid;

/* The GET /api/stats body (last): len bytes and a NUL follow when `has`. */
typedef struct frz_stats {
    uint32_t has, id; /* id: the run's position it was built for (its "run") */
    uint64_t len;
} frz_stats;

int web_runix_freeze(const web_runix *r, void **ppBlob, size_t *pLen)
{
    *ppBlob = NULL;
    *pLen = 0;
    const store_run *run = r->run;
    frz_head h = {.magic = FRZ_MAGIC,
                  .version = FRZ_VERSION,
                  .nlanes = r->nlanes,
                  .nprocesses = run->nprocesses,
                  .nstreams = run->nstreams,
                  .ncontexts = run->ncontexts,
                  .has_stream_row = {r->stream_row[0] != NULL, r->stream_row[1] != NULL}};
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        const web_items *it = &r->items[k];
        h.n[k] = it->n;
        h.nrows[k] = it->nrows;
        h.has_corr[k] = it->by_corr != NULL;
        h.ncorr[k] = it->by_corr ? it->corr_off[run->nprocesses] : 0;
    }
    store_blob f = {0};
    store_blob_put(&f, &h, sizeof h);
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        const web_items *it = &r->items[k];
        if (!it->n)
            continue;
        store_blob_put(&f, it->idx, sizeof *it->idx * it->n);
        store_blob_put(&f, it->off, sizeof *it->off * 2 * it->n);
        if (it->by_corr) {
            store_blob_put(&f, it->corr_off, sizeof *it->corr_off * (run->nprocesses + 1));
            store_blob_put(&f, it->by_corr, sizeof *it->by_corr * h.ncorr[k]);
        }
    }
    for (int k = 0; k < 2; k++)
        if (r->stream_row[k])
            store_blob_put(&f, r->stream_row[k], sizeof *r->stream_row[k] * run->nstreams);
    store_blob_put(&f, r->process_lane, sizeof *r->process_lane * run->nprocesses);
    for (uint32_t i = 0; i < r->nrows; i++) {
        const web_row *w = &r->rows[i];
        frz_row fr;
        memset(&fr, 0, sizeof fr); /* no byte of it undefined */
        fr = (frz_row){.kind = w->kind,
                       .nlev = w->nlev,
                       .slot = w->slot,
                       .process = w->process,
                       .context = w->context,
                       .stream = w->stream,
                       .off = w->off,
                       .n = w->n,
                       .thread = w->thread};
        store_blob_put(&f, &fr, sizeof fr);
        for (uint32_t l = 0; l < w->nlev; l++) {
            const web_ivl *v = &w->lev[l];
            frz_lev fl = {v->n, v->nb, v->t0, v->bw};
            store_blob_put(&f, &fl, sizeof fl);
            if (v->n) {
                store_blob_put(&f, v->first, sizeof *v->first * (v->nb + 1));
                store_blob_put(&f, v->carry, sizeof *v->carry * v->nb);
                store_blob_put(&f, v->busy, sizeof *v->busy * v->nb);
            }
        }
    }
    for (uint32_t i = 0; i < r->nlanes; i++) {
        const web_lane *l = &r->lanes[i];
        store_blob_put(&f, &l->nsw, sizeof l->nsw);
        store_blob_put(&f, l->sw_t, sizeof *l->sw_t * l->nsw);
        store_blob_put(&f, l->sw_gap, sizeof *l->sw_gap * l->nsw);
    }
    for (uint32_t i = 0; i < r->nlanes; i++) {
        const web_lane *l = &r->lanes[i];
        int has = __atomic_load_n(&l->grid_state, __ATOMIC_ACQUIRE) == 1 && l->grid;
        frz_grid fg = {.has = (uint32_t)has,
                       .ngrid = has ? l->ngrid : 0,
                       .g0 = has ? l->g0 : 0,
                       .gw = has ? l->gw : 0};
        store_blob_put(&f, &fg, sizeof fg);
        if (has)
            store_blob_put(&f, l->grid, sizeof *l->grid * l->ngrid);
    }
    frz_stats fs = {.has = r->stats_body != NULL,
                    .id = r->stats_id,
                    .len = r->stats_body ? r->stats_body->len : 0};
    store_blob_put(&f, &fs, sizeof fs);
    if (r->stats_body)
        store_blob_put(&f, r->stats_body->data, r->stats_body->len + 1);
    if (f.bad) {
        free(f.b);
        return WEB_ENOMEM;
    }
    *ppBlob = f.b;
    *pLen = f.n;
    return WEB_OK;
}

/* 1 when every a[0..n) is below `lim` (or equal to `none`, when none is not 0). */
static int below(const uint32_t *a, uint64_t n, uint32_t lim, uint32_t none)
{
    for (uint64_t i = 0; i < n; i++)
        if (a[i] >= lim && !(none && a[i] == none))
            return 0;
    return 1;
}

/* Thaws lane l's concurrency grid when the block has it: the shape build_grid() gives the lane,
 * each bin's figures in range (at most the run's processes and contexts in flight, busy a share,
 * the mean at most the most). 1 when it fits (or is absent: the stats thread builds it). */
static int thaw_grid(web_runix *r, web_lane *l, store_blob *f)
{
    const frz_grid *fg = store_blob_take(f, 1, sizeof *fg);
    if (!fg || fg->has > 1)
        return 0;
    if (!fg->has)
        return 1;
    int64_t g0, gw;
    uint32_t n;
    if (!web_lane_grid_shape(l, &g0, &gw, &n) || fg->ngrid != n || fg->g0 != g0 || fg->gw != gw)
        return 0;
    const analysis_bin *b = store_blob_take(f, n, sizeof *b);
    if (!b)
        return 0;
    for (uint32_t j = 0; j < n; j++)
        if (b[j].max_processes > r->run->nprocesses || b[j].max_contexts > r->run->ncontexts ||
            !(b[j].busy >= 0.0f && b[j].busy <= 1.0f) || !(b[j].mean_processes >= 0.0f) ||
            b[j].mean_processes > (float)b[j].max_processes)
            return 0;
    l->grid = (analysis_bin *)b;
    l->ngrid = n;
    l->g0 = g0;
    l->gw = gw;
    l->grid_lent = 1;
    __atomic_store_n(&l->grid_state, 1, __ATOMIC_RELEASE);
    return 1;
}

/* Thaws the statistics' body when the block has it: a JSON object whose "run" is the position it
 * was built for (the stats thread keeps it only for that position). 1 when it fits or is absent. */
static int thaw_stats(web_runix *r, store_blob *f)
{
    const frz_stats *fs = store_blob_take(f, 1, sizeof *fs);
    if (!fs || fs->has > 1 || (!fs->has && fs->len))
        return 0;
    if (!fs->has)
        return 1;
    const char *s = fs->len < SIZE_MAX ? store_blob_take(f, fs->len + 1, 1) : NULL;
    if (!s || s[fs->len] != 0 || memchr(s, 0, fs->len))
        return 0;
    json_t *o = json_loadb(s, fs->len, JSON_REJECT_DUPLICATES, NULL);
    json_t *id = json_object_get(o, "run");
    int fits = json_is_object(o) && json_is_integer(id) && json_integer_value(id) == fs->id;
    json_decref(o);
    if (!fits || !(r->stats_body = web_blob_new(s, fs->len)))
        return 0;
    r->stats_id = fs->id;
    return 1;
}

/* Thaws the rows, their levels and the lanes' switches, grids and statistics; the items are set.
 * 1 when all fit. */
static int thaw_rows(web_runix *r, store_blob *f, const frz_head *h)
{
    const store_run *run = r->run;
    uint32_t total = 0, next[WEB_NROW_KINDS] = {0};
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        total += h->nrows[k];
    r->rows = calloc(total ? total : 1, sizeof *r->rows);
    if (!r->rows)
        return 0;
    int kind_at = 0;
    for (uint32_t i = 0; i < total; i++) {
        const frz_row *fr = store_blob_take(f, 1, sizeof *fr);
        if (!fr)
            return 0;
        while (kind_at < WEB_NROW_KINDS && r->items[kind_at].first + h->nrows[kind_at] <= i)
            kind_at++;
        web_items *it = &r->items[kind_at];
        if (kind_at >= WEB_NROW_KINDS || fr->kind != kind_at || fr->nlev == 0 ||
            fr->nlev > WEB_DEPTH_MAX || fr->off != next[kind_at] || fr->n > it->n - fr->off ||
            fr->process >= run->nprocesses || fr->slot >= (r->nlanes ? r->nlanes : 1) ||
            (!web_kind_threaded(kind_at) &&
             (fr->context >= run->ncontexts || fr->stream >= run->nstreams)))
            return 0;
        web_row *w = &r->rows[i];
        *w = (web_row){.kind = fr->kind,
                       .nlev = fr->nlev,
                       .slot = fr->slot,
                       .process = fr->process,
                       .context = fr->context,
                       .stream = fr->stream,
                       .thread = fr->thread,
                       .off = fr->off,
                       .n = fr->n};
        r->nrows = i + 1; /* web_runix_free frees the levels of those counted */
        if (!(w->lev = calloc(w->nlev, sizeof *w->lev))) {
            w->nlev = 0;
            return 0;
        }
        uint32_t loff = w->off;
        for (uint32_t l = 0; l < w->nlev; l++) {
            const frz_lev *fl = store_blob_take(f, 1, sizeof *fl);
            if (!fl || fl->n > w->off + w->n - loff || fl->bw < 1 ||
                (fl->n && (fl->nb == 0 || fl->nb > fl->n)))
                return 0;
            web_ivl *v = &w->lev[l];
            *v = (web_ivl){.base = it->base,
                           .stride = it->stride,
                           .idx = it->idx + loff,
                           .n = fl->n,
                           .t0 = fl->t0,
                           .bw = fl->bw,
                           .nb = fl->nb,
                           .off_lent = 1,
                           .grid_lent = 1};
            if (fl->n) {
                v->first = (uint32_t *)store_blob_take(f, (uint64_t)fl->nb + 1, sizeof *v->first);
                v->carry = (uint32_t *)store_blob_take(f, fl->nb, sizeof *v->carry);
                v->busy = (int64_t *)store_blob_take(f, fl->nb, sizeof *v->busy);
                if (!v->first || !v->carry || !v->busy ||
                    !below(v->first, fl->nb + 1, fl->n + 1, 0) ||
                    !below(v->carry, fl->nb, fl->n + 1, 0))
                    return 0;
                if ((uint64_t)fl->bw < UINT32_MAX) /* as web_ivl_begin() lends them */
                    v->off = it->off + 2 * (size_t)loff;
            } else
                v->nb = 0;
            loff += fl->n;
        }
        if (loff != w->off + w->n)
            return 0;
        next[kind_at] += w->n;
    }
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        if (next[k] != r->items[k].n)
            return 0;
    for (uint32_t i = 0; i < r->nlanes; i++) {
        web_lane *l = &r->lanes[i];
        const uint64_t *nsw = store_blob_take(f, 1, sizeof *nsw);
        if (!nsw)
            return 0;
        l->nsw = *nsw;
        l->sw_t = (int64_t *)store_blob_take(f, l->nsw, sizeof *l->sw_t);
        l->sw_gap = (int64_t *)store_blob_take(f, l->nsw, sizeof *l->sw_gap);
        l->sw_lent = 1;
        if (!l->sw_t || !l->sw_gap) {
            l->nsw = 0;
            return 0;
        }
    }
    for (uint32_t i = 0; i < r->nlanes; i++)
        if (!thaw_grid(r, &r->lanes[i], f))
            return 0;
    return thaw_stats(r, f) && f->n == f->cap;
}

int web_runix_thaw(web_runix *r, const void *blob, size_t len)
{
    const store_run *run = r->run;
    frz_head h;
    if (!blob || len < sizeof h)
        return WEB_EINVAL;
    memcpy(&h, blob, sizeof h);
    static const size_t stride[WEB_NROW_KINDS] = {sizeof(store_kernel), sizeof(store_copy),
                                                  sizeof(store_api), sizeof(store_range)};
    const void *base[WEB_NROW_KINDS] = {run->kernels, run->copies, run->apis, run->ranges};
    uint64_t n[WEB_NROW_KINDS] = {run->nkernels, run->ncopies, run->napis, run->nranges};
    if (h.magic != FRZ_MAGIC || h.version != FRZ_VERSION || h.nlanes != r->nlanes ||
        h.nprocesses != run->nprocesses || h.nstreams != run->nstreams ||
        h.ncontexts != run->ncontexts)
        return WEB_EINVAL;
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        if (h.n[k] != n[k] || n[k] > UINT32_MAX || h.ncorr[k] > n[k] || h.nrows[k] > n[k] ||
            (h.has_corr[k] && k == WEB_ROW_NVTX) || (!n[k] && h.nrows[k]))
            return WEB_EINVAL;
    store_blob f = {.b = (char *)blob, .n = (sizeof h + 7) / 8 * 8, .cap = len};
    r->lent = blob;
    r->lent_len = len;
    uint32_t first = 0;
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        web_items *it = &r->items[k];
        *it = (web_items){
            .base = base[k], .stride = stride[k], .n = n[k], .first = first, .nrows = h.nrows[k]};
        first += h.nrows[k];
        if (!n[k])
            continue;
        it->idx = (uint32_t *)store_blob_take(&f, n[k], sizeof *it->idx);
        it->off = (uint32_t *)store_blob_take(&f, 2 * n[k], sizeof *it->off);
        if (!it->idx || !below(it->idx, n[k], (uint32_t)n[k], 0))
            return WEB_EINVAL;
        if (h.has_corr[k]) {
            it->corr_off = (uint32_t *)store_blob_take(&f, (uint64_t)run->nprocesses + 1,
                                                       sizeof *it->corr_off);
            it->by_corr = (uint32_t *)store_blob_take(&f, h.ncorr[k], sizeof *it->by_corr);
            if (!it->corr_off || !it->by_corr || it->corr_off[0] != 0 ||
                it->corr_off[run->nprocesses] != h.ncorr[k] ||
                !below(it->by_corr, h.ncorr[k], (uint32_t)n[k], 0))
                return WEB_EINVAL;
            for (uint32_t p = 0; p < run->nprocesses; p++)
                if (it->corr_off[p] > it->corr_off[p + 1])
                    return WEB_EINVAL;
        }
    }
    for (int k = 0; k < 2; k++)
        if (h.has_stream_row[k] && (!(r->stream_row[k] = (uint32_t *)store_blob_take(
                                          &f, run->nstreams, sizeof(uint32_t))) ||
                                    !below(r->stream_row[k], run->nstreams, first, UINT32_MAX)))
            return WEB_EINVAL;
    r->process_lane = (uint32_t *)store_blob_take(&f, run->nprocesses, sizeof *r->process_lane);
    if (!r->process_lane || !below(r->process_lane, run->nprocesses, r->nlanes ? r->nlanes : 1, 0))
        return WEB_EINVAL;
    return thaw_rows(r, &f, &h) ? WEB_OK : WEB_EINVAL;
}

int web_runix_lent(const web_runix *r, const void *p)
{
    return r->lent && (const char *)p >= (const char *)r->lent &&
           (const char *)p < (const char *)r->lent + r->lent_len;
}
