/* web_index.c: the per-run index built once at start so that viewport queries never walk the run:
 * a row per stream that ran kernels, per stream that ran copies or memsets, per thread that made
 * CUDA API calls and per thread that opened NVTX ranges (each kind grouped by lane = GPU, process,
 * then stream or thread), with its records' positions sorted by start and an interval grid over
 * them; thread rows are split into levels by nesting depth, a grid per level. Per kind with
 * correlation ids (kernels, copies, API calls), the positions sorted by (process, correlation)
 * for the flows. Per lane, the analysis windows split by verdict with a grid each, and a cached
 * concurrency profile at fine resolution for zoomed-out views. Memory: 4 B per record for the
 * row arrays and 8 B for their offsets (web_ivl; one allocation of each per kind, in huge pages
 * where Linux gives them), ~1 B of grids, 4 B of flow index (kernels, copies, API calls), and
 * while building 1 B of depth and 4 B of group (API calls, NVTX ranges). */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define GRID_MAX 262144u      /* concurrency bins cached per lane (12 B each) */
#define PROFILE_CHUNK 1048576 /* profile segments read at once while indexing (16 MiB) */

/* row_cmp: rows by lane, process pid, process, then context id and stream id (stream rows) or
 * thread id (thread rows) (qsort_r with the run); rows of one kind only are compared. */
static int row_cmp(const void *pa, const void *pb, void *ctx)
{
    const web_row *a = pa, *b = pb;
    const store_run *run = ctx;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    int64_t pa_ = run->processes[a->process].pid, pb_ = run->processes[b->process].pid;
    if (pa_ != pb_)
        return pa_ < pb_ ? -1 : 1;
    if (a->process != b->process)
        return a->process < b->process ? -1 : 1;
    if (web_kind_threaded(a->kind))
        return a->thread < b->thread ? -1 : a->thread > b->thread;
    uint32_t ca = run->contexts[a->context].context_id, cb = run->contexts[b->context].context_id;
    if (ca != cb)
        return ca < cb ? -1 : 1;
    uint32_t sa = run->streams[a->stream].stream_id, sb = run->streams[b->stream].stream_id;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return a->stream < b->stream ? -1 : a->stream > b->stream; /* same ids in two contexts */
}

uint32_t web_kernel_lane(const web_runix *r, const store_kernel *k)
{
    return web_device_lane(r, store_kernel_device(r->run, k));
}

const analysis_window *web_kernel_window(const web_runix *r, uint32_t lane, const store_kernel *k)
{
    uint64_t from = 0;
    return web_kernel_window_from(r, lane, k, &from);
}

const analysis_window *web_kernel_window_from(const web_runix *r, uint32_t lane,
                                              const store_kernel *k, uint64_t *hint)
{
    if (lane >= r->nlanes)
        return NULL;
    const analysis_device *dev = r->lanes[lane].dev;
    const analysis_window *w = analysis_windows(r->an) + dev->first_window;
    /* the first window with t1 > k->start (windows follow one another: t1 grows): galloping
     * from the hint when every window before it ends by the kernel's start, else from 0 */
    uint64_t lo = *hint <= dev->nwindows && (*hint == 0 || w[*hint - 1].t1 <= k->start) ? *hint : 0;
    uint64_t hi = lo, step = 1;
    while (hi < dev->nwindows && w[hi].t1 <= k->start) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > dev->nwindows)
        hi = dev->nwindows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (w[mid].t1 <= k->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    *hint = lo;
    const analysis_window *best = NULL;
    int64_t best_ns = -1;
    for (uint64_t i = lo, seen = 0; i < dev->nwindows && w[i].t0 < k->end && seen < 64;
         i++, seen++) {
        int64_t s = w[i].t0 > k->start ? w[i].t0 : k->start;
        int64_t e = w[i].t1 < k->end ? w[i].t1 : k->end;
        if (e - s > best_ns) {
            best_ns = e - s;
            best = &w[i];
        }
    }
    return best;
}

/* ---------------------------------------------------------------- rows of every kind */

/* item_stream, item_thread: the stream of a record of a stream kind, the thread of a record of
 * a thread kind. */
static store_idx item_stream(const web_runix *r, int kind, uint64_t i)
{
    return kind == WEB_ROW_KERNELS ? r->run->kernels[i].stream : r->run->copies[i].stream;
}
static uint64_t item_thread(const web_runix *r, int kind, uint64_t i)
{
    return kind == WEB_ROW_API ? r->run->apis[i].thread_id : r->run->ranges[i].thread_id;
}

uint32_t web_item_row(const web_runix *r, int kind, uint64_t i)
{
    const web_items *it = &r->items[kind];
    if (!web_kind_threaded(kind)) {
        const uint32_t *sr = r->stream_row[kind];
        return sr ? sr[item_stream(r, kind, i)] : UINT32_MAX;
    }
    if (!it->nrows)
        return UINT32_MAX;
    web_row probe = {.kind = (uint8_t)kind, .process = web_item_process(r, kind, i)};
    probe.slot = r->process_lane[probe.process];
    probe.thread = item_thread(r, kind, i);
    uint32_t lo = it->first, hi = it->first + it->nrows; /* the row is there: binary search */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (row_cmp(&r->rows[mid], &probe, (void *)r->run) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

unsigned web_item_depth(const web_runix *r, int kind, uint64_t i)
{
    uint32_t ri = web_kind_threaded(kind) ? web_item_row(r, kind, i) : UINT32_MAX;
    if (ri >= r->nrows)
        return 0;
    const web_row *row = &r->rows[ri];
    int64_t s = web_item_start(&r->items[kind], i);
    for (uint32_t l = 0; l < row->nlev; l++) { /* its level lists it among those starting at s */
        const web_ivl *v = &row->lev[l];
        for (uint32_t p = web_ivl_at(v, s).pos; p < v->n && web_ivl_start(v, p) == s; p++)
            if (web_ivl_item(v, p) == i)
                return l;
    }
    return 0;
}

/* What one level of a row in the making holds. */
typedef struct lev_acc {
    uint32_t n;     /* records */
    int64_t lo, hi; /* first and last start */
} lev_acc;

/* A row in the making: the records of one stream, or of one (process, thread). While the records
 * are read in start order, a thread's group keeps the ends of its open calls or ranges (the level
 * of the next one is how many are still open) and the run of records that start at the same ns:
 * those are levelled together, longest first, so that a call and the calls it makes in the same
 * ns nest the right way round. */
typedef struct grp {
    store_idx process, context, stream;
    uint64_t thread;
    uint32_t n, nlev;  /* records; levels */
    int64_t lo, hi;    /* stream groups: first and last start (of their one level) */
    lev_acc *lev;      /* nlev (grown) */
    int64_t *stack;    /* ends of the open records, innermost last */
    uint32_t sp, scap; /* stack depth and capacity */
    uint32_t *tie;     /* records that start at the same ns, not levelled yet */
    uint32_t ntie, tcap;
    uint32_t row; /* its row */
    uint32_t st0; /* its first level's build state */
} grp;

/* The state of building one kind's rows. */
typedef struct kind_build {
    web_runix *r;
    web_row *rows; /* the kind's rows, apart from the other kinds' while they are built */
    int kind;
    web_items *it;
    grp *g; /* groups, in order of first record */
    uint32_t ng, gcap;
    uint32_t *stream_grp; /* stream kinds: run->nstreams, the group of each stream */
    uint32_t *h_grp;      /* thread kinds: open-addressing table of group ids (UINT32_MAX free) */
    uint32_t hcap;        /* its size, a power of two */
    uint32_t *rec_grp;    /* thread kinds: each record's group, from pass A for pass B */
    int corr;             /* the kind carries correlation ids: build its flow index too */
    uint32_t *cfill;      /* nprocesses: next free position of each process in by_corr */
    uint32_t *clast;      /* nprocesses: the last correlation id put there */
    uint8_t *cunsorted;   /* nprocesses: its ids came out of order (a radix sort follows) */
} kind_build;

static uint32_t hash_thread(store_idx p, uint64_t t)
{
    uint64_t h = (t ^ ((uint64_t)p << 40) ^ p) * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32);
}

/* new_group: appends a group (UINT32_MAX when out of memory). */
static uint32_t new_group(kind_build *kb, store_idx process, store_idx stream, uint64_t thread)
{
    if (kb->ng == kb->gcap) {
        uint32_t cap = kb->gcap ? kb->gcap * 2 : 64;
        grp *g = realloc(kb->g, sizeof *g * cap);
        if (!g)
            return UINT32_MAX;
        kb->g = g, kb->gcap = cap;
    }
    const store_run *run = kb->r->run;
    grp *g = &kb->g[kb->ng];
    memset(g, 0, sizeof *g);
    g->process = process;
    g->stream = stream;
    g->context = stream == STORE_NONE ? STORE_NONE : run->streams[stream].context;
    g->thread = thread;
    return kb->ng++;
}

/* group_of: the group of record i, made on first sight (UINT32_MAX when out of memory). */
static uint32_t group_of(kind_build *kb, uint64_t i)
{
    const web_runix *r = kb->r;
    if (!web_kind_threaded(kb->kind)) {
        store_idx s = item_stream(r, kb->kind, i);
        if (kb->stream_grp[s] == UINT32_MAX) {
            store_idx p = r->run->contexts[r->run->streams[s].context].process;
            kb->stream_grp[s] = new_group(kb, p, s, 0);
        }
        return kb->stream_grp[s];
    }
    store_idx p = web_item_process(r, kb->kind, i);
    uint64_t t = item_thread(r, kb->kind, i);
    if (kb->ng * 2 >= kb->hcap) { /* keep the table at most half full */
        uint32_t cap = kb->hcap ? kb->hcap * 2 : 256;
        uint32_t *h = malloc(sizeof *h * cap);
        if (!h)
            return UINT32_MAX;
        memset(h, 0xff, sizeof *h * cap);
        for (uint32_t k = 0; k < kb->ng; k++) {
            uint32_t at = hash_thread(kb->g[k].process, kb->g[k].thread) & (cap - 1);
            while (h[at] != UINT32_MAX)
                at = (at + 1) & (cap - 1);
            h[at] = k;
        }
        free(kb->h_grp);
        kb->h_grp = h, kb->hcap = cap;
    }
    uint32_t at = hash_thread(p, t) & (kb->hcap - 1);
    for (;;) {
        uint32_t k = kb->h_grp[at];
        if (k == UINT32_MAX)
            return kb->h_grp[at] = new_group(kb, p, STORE_NONE, t);
        if (kb->g[k].process == p && kb->g[k].thread == t)
            return k;
        at = (at + 1) & (kb->hcap - 1);
    }
}

/* put_level: counts a record that starts at s at level d of g (d <= g->nlev). */
static int put_level(grp *g, unsigned d, int64_t s)
{
    if (d == g->nlev) {
        lev_acc *l = realloc(g->lev, sizeof *l * (d + 1));
        if (!l)
            return WEB_ENOMEM;
        g->lev = l;
        g->lev[d] = (lev_acc){0, s, s};
        g->nlev++;
    }
    if (g->lev[d].n++ == 0)
        g->lev[d].lo = s;
    g->lev[d].hi = s;
    return WEB_OK;
}

/* tie_cmp: records of one start by end, longest first, then by position (qsort_r with the
 * items). */
static int tie_cmp(const void *pa, const void *pb, void *ctx)
{
    const web_items *it = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ea = web_item_end(it, a), eb = web_item_end(it, b);
    if (ea != eb)
        return ea > eb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* flush_ties: levels the records of g that start at the same ns: each gets the number of the
 * group's records still open at its start (closed ones are popped from the top of the stack, so
 * that two records of one level never overlap), capped at WEB_DEPTH_MAX - 1. */
static int flush_ties(kind_build *kb, grp *g)
{
    web_items *it = kb->it;
    if (g->ntie > 1)
        qsort_r(g->tie, g->ntie, sizeof *g->tie, tie_cmp, it);
    for (uint32_t k = 0; k < g->ntie; k++) {
        uint32_t i = g->tie[k];
        int64_t s = web_item_start(it, i);
        while (g->sp && g->stack[g->sp - 1] <= s)
            g->sp--;
        unsigned d = g->sp < WEB_DEPTH_MAX - 1 ? g->sp : WEB_DEPTH_MAX - 1;
        if (g->sp == g->scap) {
            uint32_t cap = g->scap ? g->scap * 2 : 8;
            int64_t *st = realloc(g->stack, sizeof *st * cap);
            if (!st)
                return WEB_ENOMEM;
            g->stack = st, g->scap = cap;
        }
        g->stack[g->sp++] = web_item_end(it, i);
        it->depth[i] = (uint8_t)d;
        if (put_level(g, d, s))
            return WEB_ENOMEM;
    }
    g->ntie = 0;
    return WEB_OK;
}

/* count_records: pass A over the kind's records in start order: their groups, counts per group
 * and level, (thread kinds) each record's level, and (kinds with correlation ids) how many
 * records with one each process has. */
static int count_records(kind_build *kb)
{
    web_items *it = kb->it;
    const web_runix *r = kb->r;
    uint32_t *ccount = kb->corr ? it->corr_off + 1 : NULL;
    if (!web_kind_threaded(kb->kind)) { /* the hot loop at 10M kernels: no call per record */
        for (uint64_t i = 0; i < it->n; i++) {
            uint32_t gi = kb->stream_grp[item_stream(r, kb->kind, i)];
            if (gi == UINT32_MAX && (gi = group_of(kb, i)) == UINT32_MAX)
                return WEB_ENOMEM;
            grp *g = &kb->g[gi];
            int64_t s = web_item_start(it, i);
            if (g->n++ == 0)
                g->lo = s;
            g->hi = s;
            if (ccount && web_item_correlation(r, kb->kind, i))
                ccount[g->process]++;
        }
        for (uint32_t k = 0; k < kb->ng; k++) {
            grp *g = &kb->g[k];
            if (!(g->lev = malloc(sizeof *g->lev)))
                return WEB_ENOMEM;
            g->lev[0] = (lev_acc){g->n, g->lo, g->hi};
            g->nlev = 1;
        }
        return WEB_OK;
    }
    for (uint64_t i = 0; i < it->n; i++) {
        uint32_t gi = group_of(kb, i);
        if (gi == UINT32_MAX)
            return WEB_ENOMEM;
        grp *g = &kb->g[gi];
        g->n++;
        kb->rec_grp[i] = gi;
        if (ccount && web_item_correlation(r, kb->kind, i))
            ccount[g->process]++;
        if (g->ntie && web_item_start(it, g->tie[0]) != web_item_start(it, i) && flush_ties(kb, g))
            return WEB_ENOMEM;
        if (g->ntie == g->tcap) {
            uint32_t cap = g->tcap ? g->tcap * 2 : 4;
            uint32_t *t = realloc(g->tie, sizeof *t * cap);
            if (!t)
                return WEB_ENOMEM;
            g->tie = t, g->tcap = cap;
        }
        g->tie[g->ntie++] = (uint32_t)i;
    }
    for (uint32_t k = 0; k < kb->ng; k++)
        if (flush_ties(kb, &kb->g[k]))
            return WEB_ENOMEM;
    return WEB_OK;
}

/* make_rows: one row per group, in row_cmp order, into kb->rows (ids local to the kind until
 * build_rows puts the kinds together), with their slices of idx and the interval lists of their
 * levels begun. */
static int make_rows(kind_build *kb, uint32_t *nstates)
{
    web_runix *r = kb->r;
    web_items *it = kb->it;
    if (kb->ng == 0)
        return WEB_OK;
    web_row *mine = calloc(kb->ng, sizeof *mine);
    if (!mine)
        return WEB_ENOMEM;
    kb->rows = mine;
    it->nrows = kb->ng;
    for (uint32_t k = 0; k < kb->ng; k++) {
        const grp *g = &kb->g[k];
        uint32_t slot = r->process_lane ? r->process_lane[g->process] : 0;
        if (!web_kind_threaded(kb->kind)) {
            uint32_t dl = web_device_lane(r, r->run->contexts[g->context].device);
            if (kb->kind == WEB_ROW_KERNELS || dl != UINT32_MAX)
                slot = dl;
        }
        /* off holds the group until the rows are sorted */
        mine[k] = (web_row){.kind = (uint8_t)kb->kind,
                            .nlev = (uint8_t)g->nlev,
                            .slot = slot,
                            .process = g->process,
                            .context = g->context,
                            .stream = g->stream,
                            .thread = g->thread,
                            .off = k,
                            .n = g->n};
    }
    qsort_r(mine, kb->ng, sizeof *mine, row_cmp, (void *)r->run);
    uint32_t off = 0, st = 0;
    for (uint32_t k = 0; k < kb->ng; k++) {
        web_row *row = &mine[k];
        grp *g = &kb->g[row->off];
        g->row = k;
        g->st0 = st;
        st += g->nlev;
        row->off = off;
        off += row->n;
        row->lev = calloc(row->nlev, sizeof *row->lev);
        if (!row->lev) {
            row->nlev = 0;
            return WEB_ENOMEM;
        }
        uint32_t loff = row->off;
        for (uint32_t l = 0; l < row->nlev; l++) {
            if (web_ivl_begin(&row->lev[l], it->base, it->stride, it->idx + loff, g->lev[l].n,
                              g->lev[l].lo, g->lev[l].hi, it->off + 2 * (size_t)loff))
                return WEB_ENOMEM;
            loff += g->lev[l].n;
        }
    }
    *nstates = st;
    return WEB_OK;
}

/* ---------------------------------------------------------------- flows */

/* corr_begin: after pass A, the flow index's slices: process p's records with a correlation id
 * go to by_corr[corr_off[p] ..), in position order as pass B meets them (corr_put). */
static int corr_begin(kind_build *kb)
{
    web_items *it = kb->it;
    uint32_t np = kb->r->run->nprocesses;
    for (uint32_t p = 0; p < np; p++)
        it->corr_off[p + 1] += it->corr_off[p];
    it->by_corr = malloc(sizeof *it->by_corr * (it->corr_off[np] ? it->corr_off[np] : 1));
    store_hint_huge(it->by_corr);
    kb->cfill = malloc(sizeof *kb->cfill * (np ? np : 1));
    kb->clast = calloc(np ? np : 1, sizeof *kb->clast);
    kb->cunsorted = calloc(np ? np : 1, 1);
    if (!it->by_corr || !kb->cfill || !kb->clast || !kb->cunsorted)
        return WEB_ENOMEM;
    memcpy(kb->cfill, it->corr_off, sizeof *kb->cfill * np);
    return WEB_OK;
}

/* corr_put: record i of process p, with correlation id c (not 0), into the flow index; notes
 * when the process's ids come out of order. */
static inline void corr_put(kind_build *kb, store_idx p, uint32_t c, uint64_t i)
{
    kb->cunsorted[p] |= c < kb->clast[p];
    kb->clast[p] = c;
    kb->it->by_corr[kb->cfill[p]++] = (uint32_t)i;
}

/* corr_end: sorts by correlation id the slices that came out of order (most come sorted: API
 * calls get their ids in order; kernels of several streams of a process do not). */
static int corr_end(kind_build *kb)
{
    web_items *it = kb->it;
    uint32_t np = kb->r->run->nprocesses, most = 0;
    for (uint32_t p = 0; p < np; p++)
        if (kb->cunsorted[p] && it->corr_off[p + 1] - it->corr_off[p] > most)
            most = it->corr_off[p + 1] - it->corr_off[p];
    if (!most)
        return WEB_OK;
    uint64_t *key = malloc(sizeof *key * most), *tmp = malloc(sizeof *tmp * most);
    if (!key || !tmp) {
        free(key);
        free(tmp);
        return WEB_ENOMEM;
    }
    for (uint32_t p = 0; p < np; p++) {
        if (!kb->cunsorted[p])
            continue;
        uint32_t *a = it->by_corr + it->corr_off[p], n = it->corr_off[p + 1] - it->corr_off[p];
        for (uint32_t j = 0; j < n; j++)
            key[j] = (uint64_t)web_item_correlation(kb->r, kb->kind, a[j]) << 32 | a[j];
        store_sort_hi32(key, tmp, n);
        for (uint32_t j = 0; j < n; j++)
            a[j] = (uint32_t)key[j];
    }
    free(key);
    free(tmp);
    return WEB_OK;
}

/* build_kind: the rows of one kind (web_row_kind) with their interval lists, and its flow index,
 * in two passes over its records in start order: groups, counts and levels (count_records), then
 * each record placed in its row's level and pushed into that level's grid, and into its process's
 * slice of the flow index; so that the records (320 MB at 10M kernels) are streamed twice
 * instead of once per row. */
static int build_kind(web_runix *r, int kind, web_row **pRows /* OUT */)
{
    const store_run *run = r->run;
    web_items *it = &r->items[kind];
    static const size_t stride[WEB_NROW_KINDS] = {sizeof(store_kernel), sizeof(store_copy),
                                                  sizeof(store_api), sizeof(store_range)};
    const void *base[WEB_NROW_KINDS] = {run->kernels, run->copies, run->apis, run->ranges};
    uint64_t n[WEB_NROW_KINDS] = {run->nkernels, run->ncopies, run->napis, run->nranges};
    *it = (web_items){.base = base[kind], .stride = stride[kind], .n = n[kind]};
    *pRows = NULL;
    if (it->n == 0)
        return WEB_OK;
    if (it->n > UINT32_MAX)
        return WEB_ENOMEM; /* positions are 32-bit */
    kind_build kb = {.r = r, .kind = kind, .it = it, .corr = kind != WEB_ROW_NVTX};
    web_ivl_build_state *st = NULL;
    int rc = WEB_ENOMEM;
    it->idx = malloc(sizeof *it->idx * it->n);
    it->off = malloc(sizeof *it->off * 2 * it->n);
    if (!it->idx || !it->off)
        goto out;
    store_hint_huge(it->idx);
    store_hint_huge(it->off);
    if (web_kind_threaded(kind)) {
        if (!(it->depth = malloc(it->n)) || !(kb.rec_grp = malloc(sizeof *kb.rec_grp * it->n)))
            goto out;
        store_hint_huge(kb.rec_grp);
    } else {
        size_t ns = run->nstreams ? run->nstreams : 1;
        kb.stream_grp = malloc(sizeof *kb.stream_grp * ns);
        r->stream_row[kind] = malloc(sizeof *r->stream_row[kind] * ns);
        if (!kb.stream_grp || !r->stream_row[kind])
            goto out;
        memset(kb.stream_grp, 0xff, sizeof *kb.stream_grp * ns);
        memset(r->stream_row[kind], 0xff, sizeof *r->stream_row[kind] * ns);
    }
    if (kb.corr && !(it->corr_off = calloc((size_t)run->nprocesses + 1, sizeof *it->corr_off)))
        goto out;
    uint32_t nst = 0;
    if (count_records(&kb) || make_rows(&kb, &nst) || (kb.corr && corr_begin(&kb)))
        goto out;
    for (uint32_t k = 0; kb.stream_grp && k < run->nstreams; k++)
        if (kb.stream_grp[k] != UINT32_MAX)
            r->stream_row[kind][k] = kb.g[kb.stream_grp[k]].row;
    st = calloc(nst ? nst : 1, sizeof *st);
    if (!st)
        goto out;
    for (uint64_t i = 0; i < it->n; i++) {
        const grp *g = &kb.g[kb.rec_grp ? kb.rec_grp[i] : kb.stream_grp[item_stream(r, kind, i)]];
        unsigned l = it->depth ? it->depth[i] : 0;
        web_ivl *v = &kb.rows[g->row].lev[l];
        web_ivl_build_state *b = &st[g->st0 + l];
        ((uint32_t *)v->idx)[b->pos] = (uint32_t)i; /* v->idx is this row's slice of it->idx */
        web_ivl_push(v, b);
        uint32_t c = kb.corr ? web_item_correlation(r, kind, i) : 0;
        if (c)
            corr_put(&kb, g->process, c, i);
    }
    if (kb.corr && corr_end(&kb))
        goto out;
    for (uint32_t k = 0; k < kb.ng; k++) {
        const grp *g = &kb.g[k];
        for (uint32_t l = 0; l < g->nlev; l++)
            web_ivl_end_build(&kb.rows[g->row].lev[l], &st[g->st0 + l]);
    }
    rc = WEB_OK;
out:
    free(it->depth); /* placed: web_item_depth() finds a record's level from now on */
    it->depth = NULL;
    *pRows = kb.rows; /* also after a failure: build_rows keeps them for web_runix_free */
    for (uint32_t k = 0; k < kb.ng; k++) {
        free(kb.g[k].lev);
        free(kb.g[k].stack);
        free(kb.g[k].tie);
    }
    free(kb.g);
    free(kb.stream_grp);
    free(kb.h_grp);
    free(kb.rec_grp);
    free(kb.cfill);
    free(kb.clast);
    free(kb.cunsorted);
    free(st);
    return rc;
}

uint32_t web_flow_find(const web_runix *r, int kind, store_idx p, uint32_t corr, uint32_t *pFirst)
{
    const web_items *it = &r->items[kind];
    *pFirst = 0;
    if (!it->by_corr || p >= r->run->nprocesses || corr == 0)
        return 0;
    uint32_t lo = it->corr_off[p], hi = it->corr_off[p + 1];
    while (lo < hi) { /* first with correlation >= corr */
        uint32_t mid = lo + (hi - lo) / 2;
        if (web_item_correlation(r, kind, it->by_corr[mid]) < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t first = lo;
    hi = it->corr_off[p + 1];
    while (lo < hi) { /* first with correlation > corr */
        uint32_t mid = lo + (hi - lo) / 2;
        if (web_item_correlation(r, kind, it->by_corr[mid]) <= corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pFirst = first;
    return lo - first;
}

/* One kind's build on a thread of its own. */
typedef struct kind_job {
    web_runix *r;
    int kind;
    web_row *rows; /* its rows (ids local to the kind) */
    int rc;
} kind_job;

/* The kinds to build, most records first, taken in turn by two workers. */
typedef struct kind_queue {
    kind_job *job;                /* WEB_NROW_KINDS, by kind */
    int order[WEB_NROW_KINDS], n; /* the kinds to build, most records first */
    int next;                     /* the next to take (atomic) */
} kind_queue;

static void *kind_worker(void *arg)
{
    kind_queue *q = arg;
    for (int i; (i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->n;) {
        kind_job *j = &q->job[q->order[i]];
        j->rc = build_kind(j->r, j->kind, &j->rows);
    }
    return NULL;
}

/* process_lanes: the lane the thread rows (and the copies of a GPU without kernels) of each
 * process sit under: its first lane with kernels (the lowest slot of the streams that ran its
 * kernels, as its kernel rows have them), else lane 0. One pass over the kernels' streams. */
static int process_lanes(web_runix *r)
{
    const store_run *run = r->run;
    uint8_t *ran = calloc(run->nstreams ? run->nstreams : 1, 1);
    r->process_lane = malloc(sizeof *r->process_lane * (run->nprocesses ? run->nprocesses : 1));
    if (!ran || !r->process_lane) {
        free(ran);
        return WEB_ENOMEM;
    }
    for (uint64_t i = 0; i < run->nkernels; i++)
        ran[run->kernels[i].stream] = 1;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        r->process_lane[p] = UINT32_MAX;
    for (uint32_t st = 0; st < run->nstreams; st++) {
        const store_context *c = &run->contexts[run->streams[st].context];
        uint32_t slot = web_device_lane(r, c->device);
        if (ran[st] && slot < r->process_lane[c->process])
            r->process_lane[c->process] = slot;
    }
    for (uint32_t p = 0; p < run->nprocesses; p++)
        if (r->process_lane[p] == UINT32_MAX)
            r->process_lane[p] = 0;
    free(ran);
    return WEB_OK;
}

/* build_rows: every kind's rows (each kind with its flow index but NVTX), built by this thread and
 * one more, each taking the next kind with the most records (at 22.9M records: the API calls on
 * one, the kernels, NVTX ranges and copies on the other), then all of them put together in kind
 * order (web_row_kind) with their ids made global. A run without kernels has no lane, and shows
 * no other kind either. */
static int build_rows(web_runix *r)
{
    const store_run *run = r->run;
    uint64_t count[WEB_NROW_KINDS] = {run->nkernels, run->ncopies, run->napis, run->nranges};
    kind_job job[WEB_NROW_KINDS];
    kind_queue q = {.job = job};
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        job[k] = (kind_job){.r = r, .kind = k, .rc = WEB_OK};
        if (k == WEB_ROW_KERNELS || r->nlanes) { /* insertion, most records first */
            int i = q.n++;
            for (; i > 0 && count[q.order[i - 1]] < count[k]; i--)
                q.order[i] = q.order[i - 1];
            q.order[i] = k;
        }
    }
    if (process_lanes(r))
        return WEB_ENOMEM;
    pthread_t t;
    int threaded = pthread_create(&t, NULL, kind_worker, &q) == 0;
    kind_worker(&q);
    if (threaded)
        pthread_join(t, NULL);
    int rc = WEB_OK;
    uint32_t total = 0;
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        total += r->items[k].nrows;
    r->rows = malloc(sizeof *r->rows * (total ? total : 1));
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        web_items *it = &r->items[k];
        if (job[k].rc)
            rc = WEB_ENOMEM;
        if (!r->rows) { /* free what the kind built */
            for (uint32_t i = 0; i < it->nrows; i++) {
                for (uint32_t l = 0; job[k].rows[i].lev && l < job[k].rows[i].nlev; l++)
                    web_ivl_free(&job[k].rows[i].lev[l]);
                free(job[k].rows[i].lev);
            }
            free(job[k].rows);
            it->nrows = 0;
            continue;
        }
        it->first = r->nrows;
        if (it->nrows)
            memcpy(r->rows + r->nrows, job[k].rows, sizeof *r->rows * it->nrows);
        free(job[k].rows);
        for (uint32_t s = 0; k < 2 && r->stream_row[k] && s < r->run->nstreams; s++)
            if (r->stream_row[k][s] != UINT32_MAX)
                r->stream_row[k][s] += it->first;
        r->nrows += it->nrows;
    }
    return r->rows ? rc : WEB_ENOMEM;
}

/* build_grid: the concurrency bins cached for zoomed-out views, one sweep of the analysis'
 * profile over the lane (the costliest part of the index: it runs after start, on the stats
 * thread, so that the first paint does not wait for it). */
int web_lane_grid_shape(const web_lane *l, int64_t *pG0, int64_t *pGw, uint32_t *pN)
{
    int64_t span = l->dev->t_end - l->dev->t_begin;
    if (span <= 0)
        return 0;
    uint64_t ng = l->dev->nkernels * 2 < GRID_MAX ? l->dev->nkernels * 2 : GRID_MAX;
    if (ng < 64)
        ng = 64;
    *pGw = (span + (int64_t)ng - 1) / (int64_t)ng;
    *pN = (uint32_t)((span + *pGw - 1) / *pGw);
    *pG0 = l->dev->t_begin;
    return 1;
}

static int build_grid(web_runix *r, web_lane *l)
{
    if (!web_lane_grid_shape(l, &l->g0, &l->gw, &l->ngrid))
        return WEB_OK;
    l->grid = malloc(sizeof *l->grid * l->ngrid);
    if (!l->grid)
        return WEB_ENOMEM;
    uint32_t slot = (uint32_t)(l - r->lanes);
    if (analysis_profile_bins(r->an, slot, l->g0, l->g0 + (int64_t)l->ngrid * l->gw, l->grid,
                              l->ngrid) != ANALYSIS_OK)
        return WEB_ENOMEM;
    return WEB_OK;
}

/* win_list: where window w goes in a lane's lists: its verdict's, the took-turns windows apart. */
static int win_list(const analysis_window *w)
{
    return w->rule == ANALYSIS_RULE_TOOK_TURNS ? WEB_WIN_TURNS : (int)w->verdict;
}

/* build_lane: the lane's windows split by verdict (took-turns apart), each with its interval
 * grid. */
static int build_lane(web_runix *r, web_lane *l)
{
    const analysis_window *w = analysis_windows(r->an) + l->dev->first_window;
    uint32_t nw = (uint32_t)l->dev->nwindows, off[ANALYSIS_NVERDICTS + 2] = {0};
    l->widx = malloc(sizeof *l->widx * (nw ? nw : 1));
    if (!l->widx)
        return WEB_ENOMEM;
    for (uint32_t i = 0; i < nw; i++)
        off[win_list(&w[i]) + 1]++;
    for (int v = 0; v <= ANALYSIS_NVERDICTS; v++)
        off[v + 1] += off[v];
    uint32_t fill[ANALYSIS_NVERDICTS + 1];
    memcpy(fill, off, sizeof fill);
    for (uint32_t i = 0; i < nw; i++)
        l->widx[fill[win_list(&w[i])]++] = i;
    for (int v = 0; v <= ANALYSIS_NVERDICTS; v++)
        if (web_ivl_build(&l->win[v], w, sizeof *w, l->widx + off[v], off[v + 1] - off[v]))
            return WEB_ENOMEM;
    return WEB_OK;
}

/* sw_push: one more switch on lane l. 0 or WEB_ENOMEM. */
static int sw_push(web_lane *l, uint64_t *cap, int64_t t, int64_t gap)
{
    if (l->nsw == *cap) {
        uint64_t c = *cap ? 2 * *cap : 64;
        int64_t *a = realloc(l->sw_t, sizeof *a * c),
                *g = a ? realloc(l->sw_gap, sizeof *g * c) : NULL;
        if (a)
            l->sw_t = a;
        if (!g)
            return WEB_ENOMEM;
        l->sw_gap = g;
        *cap = c;
    }
    l->sw_t[l->nsw] = t;
    l->sw_gap[l->nsw++] = gap;
    return WEB_OK;
}

/* build_switches: the context switches of every lane, found again in the run as the analysis'
 * sweep counts them (analysis_device.switches): a kernel (of positive length) that starts on an
 * idle GPU, of another share group than the kernel that ended last, both groups known not to be
 * MPS, after an idle gap of ANALYSIS_SWITCH_GAP_MIN_NS to ANALYSIS_SWITCH_GAP_NS. One pass over
 * the kernels in start order: the page draws each handover of a took-turns window where it was. */
static int build_switches(web_runix *r)
{
    const store_run *run = r->run;
    int64_t *end = malloc(sizeof *end * (r->nlanes ? r->nlanes : 1));
    uint32_t *last = malloc(sizeof *last * (r->nlanes ? r->nlanes : 1));
    uint64_t *cap = calloc(r->nlanes ? r->nlanes : 1, sizeof *cap);
    uint8_t *last_plain = calloc(r->nlanes ? r->nlanes : 1, 1);
    /* per stream, once: its lane, its context's share group and whether that is plain */
    uint32_t *st_lane = malloc(sizeof *st_lane * (run->nstreams ? run->nstreams : 1));
    uint32_t *st_group = malloc(sizeof *st_group * (run->nstreams ? run->nstreams : 1));
    uint8_t *st_plain = malloc(run->nstreams ? run->nstreams : 1);
    int rc =
        end && last && cap && last_plain && st_lane && st_group && st_plain ? WEB_OK : WEB_ENOMEM;
    for (uint32_t s = 0; s < r->nlanes && rc == WEB_OK; s++) {
        end[s] = INT64_MIN;
        last[s] = UINT32_MAX;
    }
    for (uint32_t st = 0; st < run->nstreams && rc == WEB_OK; st++) {
        int plain;
        store_idx cx = run->streams[st].context;
        st_group[st] = analysis_context_group(r->an, cx, &plain);
        st_plain[st] = (uint8_t)plain;
        st_lane[st] = web_device_lane(r, run->contexts[cx].device);
    }
    for (uint64_t i = 0; i < run->nkernels && rc == WEB_OK; i++) {
        const store_kernel *k = &run->kernels[i];
        if (k->end <= k->start) /* never in flight (analysis_kernel_dur() 0) */
            continue;
        uint32_t s = st_lane[k->stream];
        if (s >= r->nlanes)
            continue;
        int plain = st_plain[k->stream];
        uint32_t g = st_group[k->stream];
        /* a run's times lie at most STORE_SPAN_MAX apart: the gap fits */
        int64_t gap = last[s] != UINT32_MAX && end[s] <= k->start ? k->start - end[s] : -1;
        if (gap >= ANALYSIS_SWITCH_GAP_MIN_NS && gap <= ANALYSIS_SWITCH_GAP_NS && last[s] != g &&
            plain && last_plain[s])
            rc = sw_push(&r->lanes[s], &cap[s], k->start, gap);
        if (k->end >= end[s]) { /* the kernel that ends last is the one the GPU went idle after */
            end[s] = k->end;
            last[s] = g;
            last_plain[s] = (uint8_t)plain;
        }
    }
    free(end);
    free(last);
    free(cap);
    free(last_plain);
    free(st_lane);
    free(st_group);
    free(st_plain);
    return rc;
}

uint64_t web_lane_switches(const web_runix *r, uint32_t slot, int64_t a, int64_t b,
                           uint64_t *pFirst)
{
    const web_lane *l = &r->lanes[slot];
    uint64_t lo = 0, hi = l->nsw;
    while (lo < hi) { /* the first with t >= a */
        uint64_t mid = lo + (hi - lo) / 2;
        if (l->sw_t[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pFirst = lo;
    uint64_t first = lo;
    hi = l->nsw;
    while (lo < hi) { /* the first with t >= b */
        uint64_t mid = lo + (hi - lo) / 2;
        if (l->sw_t[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* the gaps are disjoint (the GPU runs a kernel between two): one at most starts before b
     * and ends after it */
    if (lo < l->nsw && l->sw_t[lo] - l->sw_gap[lo] < b)
        lo++;
    return lo - first;
}

int web_lane_levels(const web_runix *r, uint32_t slot, int64_t *ns_at, int64_t *ns_ctx)
{
    const web_lane *l = &r->lanes[slot];
    memset(ns_at, 0, sizeof *ns_at * WEB_CONC_LEVELS);
    memset(ns_ctx, 0, sizeof *ns_ctx * WEB_CONC_LEVELS);
    if (l->dev->t_end <= l->dev->t_begin)
        return WEB_OK;
    analysis_segment *seg = malloc(sizeof *seg * PROFILE_CHUNK);
    if (!seg)
        return WEB_ENOMEM;
    int64_t a = l->dev->t_begin, step = (l->dev->t_end - l->dev->t_begin) / 64 + 1;
    int rc = WEB_OK;
    while (a < l->dev->t_end) {
        int64_t b = a + step < l->dev->t_end ? a + step : l->dev->t_end;
        size_t n = 0;
        if (analysis_profile(r->an, slot, a, b, seg, PROFILE_CHUNK, &n) != ANALYSIS_OK) {
            rc = WEB_ENOMEM;
            break;
        }
        if (n > PROFILE_CHUNK && b - a > 1) {
            step = (b - a) / 2; /* too many steps in this chunk: retry on half of it */
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            unsigned lv =
                seg[i].processes < WEB_CONC_LEVELS ? seg[i].processes : WEB_CONC_LEVELS - 1;
            unsigned lc = seg[i].contexts < WEB_CONC_LEVELS ? seg[i].contexts : WEB_CONC_LEVELS - 1;
            ns_at[lv] += seg[i].t1 - seg[i].t0;
            ns_ctx[lc] += seg[i].t1 - seg[i].t0;
        }
        a = b;
        if (n < PROFILE_CHUNK / 4)
            step *= 2;
    }
    free(seg);
    return rc;
}

int web_runix_build_grids(web_runix *r)
{
    int rc = WEB_OK;
    for (uint32_t i = 0; i < r->nlanes; i++) {
        if (__atomic_load_n(&r->lanes[i].grid_state, __ATOMIC_ACQUIRE) == 1)
            continue; /* thawed with the index */
        if (rc == WEB_OK)
            rc = build_grid(r, &r->lanes[i]);
        if (rc != WEB_OK) { /* no grid: queries compute the profile directly */
            free(r->lanes[i].grid);
            r->lanes[i].grid = NULL;
            r->lanes[i].ngrid = 0;
        }
        __atomic_store_n(&r->lanes[i].grid_state, rc == WEB_OK ? 1 : 2, __ATOMIC_RELEASE);
    }
    return rc;
}

int web_runix_build(web_runix *r, const web_run *src, char *err, size_t errlen)
{
    return web_runix_build_lent(r, src, NULL, 0, err, errlen);
}

int web_runix_build_lent(web_runix *r, const web_run *src, const void *index, size_t index_len,
                         char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->run = src->run;
    r->an = src->an;
    r->label = strdup(src->label ? src->label : "run");
    const analysis_summary *sum = analysis_get_summary(src->an);
    r->origin = sum->nkernels ? sum->t_begin : src->run->t_begin;
    r->nlanes = analysis_ndevices(src->an);
    r->lanes = calloc(r->nlanes ? r->nlanes : 1, sizeof *r->lanes);
    r->device_lane = malloc(sizeof *r->device_lane * (src->run->ndevices + 1));
    if (!r->label || !r->lanes || !r->device_lane)
        goto nomem;
    for (uint32_t d = 0; d <= src->run->ndevices; d++)
        r->device_lane[d] = UINT32_MAX;
    for (uint32_t i = 0; i < r->nlanes; i++) {
        r->lanes[i].dev = analysis_get_device(src->an, i);
        r->device_lane[web_device_index(src->run, r->lanes[i].dev->device)] = i;
    }
    for (uint32_t i = 0; i < r->nlanes; i++)
        if (build_lane(r, &r->lanes[i]) || web_lane_work_build(r, &r->lanes[i]))
            goto nomem;
    if (index) { /* a frozen index of this run: used when it fits, else built */
        r->thawed = web_runix_thaw(r, index, index_len) == WEB_OK;
        if (!r->thawed) {
            web_runix_free(r);
            return web_runix_build(r, src, err, errlen);
        }
    } else if (build_rows(r) || build_switches(r))
        goto nomem;
    r->cache = web_tl_cache_new(); /* NULL: answers are not cached */
    return WEB_OK;                 /* the concurrency grids come later: web_runix_build_grids() */
nomem:
    snprintf(err, errlen, "out of memory while indexing run '%s'", src->label ? src->label : "run");
    web_runix_free(r);
    return WEB_ENOMEM;
}

void web_runix_free(web_runix *r)
{
    for (uint32_t i = 0; r->rows && i < r->nrows; i++) {
        for (uint32_t l = 0; r->rows[i].lev && l < r->rows[i].nlev; l++)
            web_ivl_free(&r->rows[i].lev[l]);
        free(r->rows[i].lev);
    }
    for (uint32_t i = 0; r->lanes && i < r->nlanes; i++) {
        for (int v = 0; v <= ANALYSIS_NVERDICTS; v++)
            web_ivl_free(&r->lanes[i].win[v]);
        free(r->lanes[i].widx);
        if (!r->lanes[i].sw_lent) {
            free(r->lanes[i].sw_t);
            free(r->lanes[i].sw_gap);
        }
        if (!r->lanes[i].grid_lent)
            free(r->lanes[i].grid);
        free(r->lanes[i].work);
        free(r->lanes[i].undef);
    }
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        void *own[] = {r->items[k].idx, r->items[k].off, r->items[k].depth, r->items[k].by_corr,
                       r->items[k].corr_off};
        for (size_t i = 0; i < sizeof own / sizeof *own; i++)
            if (!web_runix_lent(r, own[i]))
                free(own[i]);
    }
    free(r->rows);
    for (int k = 0; k < 2; k++)
        if (!web_runix_lent(r, r->stream_row[k]))
            free(r->stream_row[k]);
    if (!web_runix_lent(r, r->process_lane))
        free(r->process_lane);
    free(r->lanes);
    free(r->device_lane);
    free(r->label);
    web_blob_release(r->stats_body);
    web_tl_cache_free(r->cache);
    memset(r, 0, sizeof *r);
}
