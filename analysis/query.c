/* query.c: questions asked of an analysis after it is made, computed on demand so that nothing
 * per event is kept: the exact concurrency profile of a time range, the same summarised per
 * pixel bin, and the stretch histogram. A range query sweeps only the kernels that can be in
 * flight in it (those starting after t0 minus the device's longest kernel). */
#include <math.h>
#include <stdlib.h>

#include "analysis_int.h"

/* A kernel in flight during a query. */
typedef struct qent {
    int64_t end;
    store_idx ctx, proc;
} qent;

/* Receives each step [x0, x1) of the profile, already clipped to the query range. */
typedef void (*seg_fn)(void *ctx, int64_t x0, int64_t x1, uint32_t np, uint32_t nc);

typedef struct qsweep {
    qent *heap;
    uint64_t n, cap;
    uint32_t *pcount, *ccount; /* kernels in flight per process, per context */
    uint32_t np, nc;           /* processes, contexts in flight */
    int64_t cur, t1;           /* time emitted up to; end of the range */
    seg_fn fn;
    void *fctx;
} qsweep;

/* Emits the current counts over [cur, x) and moves cur to x. */
static void step_to(qsweep *q, int64_t x)
{
    if (x > q->t1)
        x = q->t1;
    if (x > q->cur) {
        q->fn(q->fctx, q->cur, x, q->np, q->nc);
        q->cur = x;
    }
}

/* qheap_push(), qheap_pop(): the kernels in flight, by end */
ANALYSIS_MINHEAP(qheap, qsweep, qent, end, 64)

static void qpop(qsweep *q)
{
    qent top = qheap_pop(q);
    step_to(q, top.end);
    if (--q->ccount[top.ctx] == 0)
        q->nc--;
    if (--q->pcount[top.proc] == 0)
        q->np--;
}

static int qpush(qsweep *q, qent e)
{
    if (qheap_push(q, e))
        return ANALYSIS_ENOMEM;
    if (q->ccount[e.ctx]++ == 0)
        q->nc++;
    if (q->pcount[e.proc]++ == 0)
        q->np++;
    return ANALYSIS_OK;
}

/* The first kernel index whose start is >= t. */
static uint64_t lower_bound(const store_run *run, int64_t t)
{
    uint64_t lo = 0, hi = run->nkernels;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (run->kernels[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sweeps slot dev's kernels over [t0, t1), handing every step (idle ones included) to fn. */
static int profile_sweep(const analysis *a, uint32_t dev, int64_t t0, int64_t t1, seg_fn fn,
                         void *fctx)
{
    const store_run *run = a->run;
    qsweep q = {0};
    q.pcount = calloc(run->nprocesses + 1, sizeof *q.pcount);
    q.ccount = calloc(run->ncontexts + 1, sizeof *q.ccount);
    q.cur = t0;
    q.t1 = t1;
    q.fn = fn;
    q.fctx = fctx;
    int rc = ANALYSIS_ENOMEM;
    if (!q.pcount || !q.ccount)
        goto out;
    int64_t from = t0 - a->dev_maxdur[dev];
    for (uint64_t i = lower_bound(run, from > t0 ? INT64_MIN : from);
         i < run->nkernels && run->kernels[i].start < t1; i++) {
        const store_kernel *k = &run->kernels[i];
        if (!analysis_kernel_dur(k) || k->end <= t0 || analysis_kernel_slot(a, k) != dev)
            continue;
        while (q.n && q.heap[0].end <= k->start)
            qpop(&q);
        step_to(&q, k->start);
        store_idx ctx = run->streams[k->stream].context;
        qent e = {k->end, ctx, run->contexts[ctx].process};
        if ((rc = qpush(&q, e)) != 0)
            goto out;
    }
    while (q.n)
        qpop(&q);
    step_to(&q, t1);
    rc = ANALYSIS_OK;
out:
    free(q.heap);
    free(q.pcount);
    free(q.ccount);
    return rc;
}

/* Collects merged segments for analysis_profile(). */
typedef struct segout {
    analysis_segment *out;
    size_t cap, n;
    analysis_segment last; /* the segment being extended (valid when n > 0) */
} segout;

static uint16_t c16(uint32_t v)
{
    return (uint16_t)(v > UINT16_MAX ? UINT16_MAX : v);
}

static void seg_collect(void *ctx, int64_t x0, int64_t x1, uint32_t np, uint32_t nc)
{
    segout *so = ctx;
    if (so->n && so->last.processes == c16(np) && so->last.contexts == c16(nc) &&
        so->last.t1 == x0) {
        so->last.t1 = x1;
    } else {
        so->n++;
        so->last = (analysis_segment){x0, x1, c16(np), c16(nc)};
    }
    if (so->n <= so->cap)
        so->out[so->n - 1] = so->last;
}

int analysis_profile(const analysis *a, uint32_t dev, int64_t t0, int64_t t1, analysis_segment *out,
                     size_t cap, size_t *pCount)
{
    *pCount = 0;
    if (!a || dev >= a->ndevs || t1 < t0 || (cap && !out))
        return ANALYSIS_EINVAL;
    segout so = {out, cap, 0, {0}};
    int rc = t1 > t0 ? profile_sweep(a, dev, t0, t1, seg_collect, &so) : ANALYSIS_OK;
    *pCount = so.n;
    return rc;
}

/* Spreads steps over pixel bins for analysis_profile_bins(). Everything is integer ns relative to
 * t0: bin b covers [edge(b), edge(b + 1)) with edge(b) = floor(span * b / nbins). (On the realtime
 * axis t0 is ~1.8e18 ns, where doubles are 256 ns apart: bins computed in double dropped or
 * doubled whole steps when zoomed in, giving a busy share of 0 or 1.024.) A bin narrower than
 * 1 ns (edge(b) == edge(b + 1): more bins than ns) holds the state at its instant edge(b).
 * The steps come in time order, so the edges are walked, never divided for: with span = q * nbins
 * + r, edge(b) = q * b + floor(r * b / nbins), and the remainder of r * b / nbins, kept beside the
 * edge, says when the next edge takes one more ns (a 128-bit division per step and two per bin
 * were ~40% of a lane's cost at 0.001 of a 10M-kernel run, bench/bench_serve.md). */
typedef struct bincur {
    uint64_t b;   /* a bin, 0..nbins */
    uint64_t e;   /* edge(b), relative to t0 */
    uint64_t rem; /* r * b mod nbins */
} bincur;

typedef struct binout {
    int64_t t0;
    uint64_t nbins;           /* bins (> 0) */
    uint64_t q, r;            /* span = q * nbins + r, r < nbins; span = t1 - t0 > 0 */
    bincur cur;               /* the first bin whose edge is >= where the last step ended */
    bincur prev;              /* the bin before cur (when cur.b > 0) */
    analysis_bin *out;        /* max_processes and max_contexts, filled as steps come */
    uint64_t *busy;           /* per bin: ns with a kernel in flight (1 for an instant bin) */
    unsigned __int128 *procs; /* per bin: processes in flight x ns (np for an instant bin) */
} binout;

/* bin_next: c moved to the next bin (r < nbins, so the remainder carries at most 1 ns). */
static void bin_next(const binout *bo, bincur *c)
{
    c->b++;
    c->e += bo->q;
    c->rem += bo->r;
    if (c->rem >= bo->nbins) {
        c->rem -= bo->nbins;
        c->e++;
    }
}

static void seg_bins(void *ctx, int64_t x0, int64_t x1, uint32_t np, uint32_t nc)
{
    binout *bo = ctx;
    if (!np)
        return;
    uint64_t a = (uint64_t)x0 - (uint64_t)bo->t0, z = (uint64_t)x1 - (uint64_t)bo->t0;
    /* from the first bin whose edge is >= a (instant bins at a belong to this step), else the
     * bin holding a (the one before: edge(0) = 0 <= a < span = edge(nbins)); to the bin holding
     * z - 1 */
    while (bo->cur.b < bo->nbins && bo->cur.e < a) {
        bo->prev = bo->cur;
        bin_next(bo, &bo->cur);
    }
    bincur c = bo->cur.b < bo->nbins && bo->cur.e == a ? bo->cur : bo->prev, last;
    uint16_t p16 = c16(np), c16nc = c16(nc);
    do {
        last = c;
        bin_next(bo, &c);
        uint64_t e0 = last.e, e1 = c.e;
        analysis_bin *bin = &bo->out[last.b];
        if (p16 > bin->max_processes)
            bin->max_processes = p16;
        if (c16nc > bin->max_contexts)
            bin->max_contexts = c16nc;
        if (e1 == e0) { /* an instant inside [a, z): its state */
            bo->busy[last.b] = 1;
            bo->procs[last.b] = p16;
            continue;
        }
        uint64_t from = a > e0 ? a : e0, to = z < e1 ? z : e1;
        bo->busy[last.b] += to - from;
        bo->procs[last.b] += (unsigned __int128)p16 * (to - from);
    } while (c.b < bo->nbins && c.e < z);
    bo->prev = last; /* the next step starts at or after z */
    bo->cur = c;
}

int analysis_profile_bins(const analysis *a, uint32_t dev, int64_t t0, int64_t t1,
                          analysis_bin *out, uint32_t nbins)
{
    if (!a || dev >= a->ndevs || t1 <= t0 || !nbins || !out)
        return ANALYSIS_EINVAL;
    for (uint32_t b = 0; b < nbins; b++)
        out[b] = (analysis_bin){0, 0, 0.0f, 0.0f};
    uint64_t span = (uint64_t)t1 - (uint64_t)t0;
    binout bo = {.t0 = t0,
                 .nbins = nbins,
                 .q = span / nbins,
                 .r = span % nbins,
                 .out = out,
                 .busy = calloc(nbins, sizeof *bo.busy),
                 .procs = calloc(nbins, sizeof *bo.procs)};
    int rc = ANALYSIS_ENOMEM;
    if (bo.busy && bo.procs)
        rc = profile_sweep(a, dev, t0, t1, seg_bins, &bo);
    bincur c = {0, 0, 0};
    for (uint32_t b = 0; rc == ANALYSIS_OK && b < nbins; b++) {
        uint64_t e0 = c.e;
        bin_next(&bo, &c);
        uint64_t w = c.e - e0;
        w = w ? w : 1; /* an instant bin: its accumulators hold the state itself */
        /* busy <= w and procs <= max_processes * w by construction, so the shares stay within
         * [0, 1] and the mean within [0, max] after rounding */
        out[b].busy = (float)((double)bo.busy[b] / (double)w);
        out[b].mean_processes = (float)((double)bo.procs[b] / (double)w);
    }
    free(bo.busy);
    free(bo.procs);
    return rc;
}

int analysis_stretch_histogram(const analysis *a, uint32_t dev, double lo, double hi,
                               uint64_t *counts, uint32_t nbins, uint64_t *pNoRef)
{
    if (!a || (dev != UINT32_MAX && dev >= a->ndevs) || !(lo > 0) || !(hi > lo) || !nbins ||
        !counts)
        return ANALYSIS_EINVAL;
    const store_run *run = a->run;
    double l0 = log2(lo), scale = nbins / (log2(hi) - l0);
    uint64_t noref = 0;
    for (uint32_t b = 0; b < nbins; b++)
        counts[b] = 0;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        if (dev != UINT32_MAX && analysis_kernel_slot(a, &run->kernels[i]) != dev)
            continue;
        float s = a->stretch[i];
        if (isnan(s)) {
            noref++;
            continue;
        }
        double x = s > 0 ? (log2(s) - l0) * scale : -1;
        counts[x < 0 ? 0 : x >= nbins ? nbins - 1 : (uint32_t)x]++;
    }
    if (pNoRef)
        *pNoRef = noref;
    return ANALYSIS_OK;
}
