/* sweep.c: the concurrency sweep. Kernels come sorted by start; each device slot keeps a min-heap
 * of its kernels in flight keyed by end, so the events of a device are visited in time order
 * (ends before starts at the same instant: intervals are half-open). Between events the counts of
 * processes and contexts in flight are constant, which gives busy/overlap/idle time, the overlap
 * windows, per-process busy and overlap time, and whether each kernel ran solo. */
#include <stdlib.h>

#include "analysis_int.h"

/* A kernel in flight. `ovl` is the device's overlap clock when it started: the kernel ran solo
 * exactly when the clock has not moved by its end (while it is in flight, >= 2 processes in
 * flight means another process). */
typedef struct inflight {
    int64_t end;
    uint64_t k; /* index into run->kernels */
    int64_t ovl;
    store_idx ctx, proc; /* its context and process (saves the lookups at its end) */
} inflight;

/* The state of one device slot during the sweep. */
typedef struct sweepdev {
    inflight *heap; /* min-heap on end */
    uint64_t n, cap;
    int64_t now;                /* time of the last event */
    uint32_t nproc, nctx, nmps; /* processes, contexts, MPS contexts in flight */
    int64_t busy, ovl;          /* busy and overlap clocks (ns since the device's first start) */
    int64_t ctxint;             /* integral of contexts in flight over time */
    /* the overlap window being built */
    int open;       /* a window is open (maybe pending: overlap ended < join gap ago) */
    int64_t win_t0; /* its start */
    int64_t cursor; /* end of the last emitted window */
    int64_t drop_t; /* when the overlap last fell below 2 processes */
    int64_t drop_busy, drop_ctxint; /* busy and ctxint clocks at drop_t */
    int64_t open_busy, open_ctxint; /* at win_t0 */
    int64_t cursor_busy;            /* busy clock at cursor */
    uint16_t maxp, maxc;            /* of the open window (updated only while >= 2 in flight) */
    uint8_t mps;                    /* an MPS client context ran in the open window */
} sweepdev;

typedef struct sweep {
    analysis *a;
    sweepdev *dev;          /* ndevs */
    uint32_t *pcount;       /* ndevs * nprocesses: kernels in flight per (slot, process) */
    int64_t *psince, *povl; /* when the (slot, process) became busy; overlap clock then */
    uint32_t *ccount;       /* ncontexts: kernels in flight per context */
} sweep;

static int heap_push(sweepdev *d, inflight e)
{
    if (d->n == d->cap) {
        uint64_t cap = d->cap ? 2 * d->cap : 64;
        inflight *h = realloc(d->heap, cap * sizeof *h);
        if (!h)
            return ANALYSIS_ENOMEM;
        d->heap = h;
        d->cap = cap;
    }
    uint64_t i = d->n++;
    while (i > 0) {
        uint64_t p = (i - 1) / 2;
        if (d->heap[p].end <= e.end)
            break;
        d->heap[i] = d->heap[p];
        i = p;
    }
    d->heap[i] = e;
    return ANALYSIS_OK;
}

static inflight heap_pop(sweepdev *d)
{
    inflight top = d->heap[0], last = d->heap[--d->n];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= d->n)
            break;
        /* the smaller child without a branch: which one it is is unpredictable */
        c += (uint64_t)(c + 1 < d->n && d->heap[c + 1].end < d->heap[c].end);
        if (last.end <= d->heap[c].end)
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (d->n)
        d->heap[i] = last;
    return top;
}

/* Moves the device's clocks forward to t (counts are constant since the last event). */
static void advance(sweepdev *d, int64_t t)
{
    int64_t dt = t - d->now;
    if (dt <= 0)
        return;
    if (d->n) {
        d->busy += dt;
        d->ctxint += (int64_t)d->nctx * dt;
    }
    if (d->nproc >= 2)
        d->ovl += dt;
    d->now = t;
}

static uint16_t clamp16(uint32_t v)
{
    return (uint16_t)(v > UINT16_MAX ? UINT16_MAX : v);
}

/* Emits the quiet window [cursor, t) of slot s (SOLO if the busy clock moved in it). */
static int emit_quiet(analysis *a, uint32_t s, sweepdev *d, int64_t t)
{
    if (t > d->cursor) {
        analysis_window w = {0};
        w.t0 = d->cursor;
        w.t1 = t;
        w.device = a->devs[s].device;
        w.busy_ns = d->busy - d->cursor_busy;
        w.verdict = w.busy_ns > 0 ? ANALYSIS_SOLO : ANALYSIS_IDLE;
        int rc = analysis_push_window(a, &w);
        if (rc)
            return rc;
    }
    d->cursor = t;
    d->cursor_busy = d->busy;
    return ANALYSIS_OK;
}

/* Emits the open overlap window of slot s, which ends where the overlap last dropped. Its
 * verdict is set by analysis_judge(). */
static int close_window(analysis *a, uint32_t s, sweepdev *d)
{
    analysis_window w = {0};
    w.t0 = d->win_t0;
    w.t1 = d->drop_t;
    w.device = a->devs[s].device;
    w.verdict = ANALYSIS_UNKNOWN;
    w.max_processes = d->maxp;
    w.max_contexts = d->maxc;
    w.mps = d->mps;
    w.busy_ns = d->drop_busy - d->open_busy;
    w.contexts =
        w.busy_ns > 0 ? (float)((double)(d->drop_ctxint - d->open_ctxint) / (double)w.busy_ns) : 0;
    d->open = 0;
    d->cursor = d->drop_t;
    d->cursor_busy = d->drop_busy;
    return analysis_push_window(a, &w);
}

/* Runs after every event of slot s at time t: the window state machine. `was` is the number of
 * processes in flight before the event. */
static int window_step(analysis *a, uint32_t s, sweepdev *d, uint32_t was, int64_t t)
{
    int rc;
    if (was < 2 && d->nproc >= 2) {
        if (d->open && t - d->drop_t >= a->opt.join_gap_ns && (rc = close_window(a, s, d)) != 0)
            return rc;
        if (!d->open) {
            if ((rc = emit_quiet(a, s, d, t)) != 0)
                return rc;
            d->open = 1;
            d->win_t0 = t;
            d->open_busy = d->busy;
            d->open_ctxint = d->ctxint;
            d->maxp = d->maxc = 0;
            d->mps = 0;
        }
    }
    if (d->open && d->nproc >= 2) {
        if (clamp16(d->nproc) > d->maxp)
            d->maxp = clamp16(d->nproc);
        if (clamp16(d->nctx) > d->maxc)
            d->maxc = clamp16(d->nctx);
        if (d->nmps)
            d->mps = 1;
    }
    if (d->open && was >= 2 && d->nproc < 2) {
        d->drop_t = t;
        d->drop_busy = d->busy;
        d->drop_ctxint = d->ctxint;
    }
    return ANALYSIS_OK;
}

/* Updates the device-wide maxima after an event. */
static void device_max(analysis_device *ad, const sweepdev *d)
{
    if (clamp16(d->nproc) > ad->max_processes)
        ad->max_processes = clamp16(d->nproc);
    if (clamp16(d->nctx) > ad->max_contexts)
        ad->max_contexts = clamp16(d->nctx);
    if (d->n > ad->max_kernels)
        ad->max_kernels = d->n > UINT32_MAX ? UINT32_MAX : (uint32_t)d->n;
}

/* Ends the in-flight kernel e of slot s at e.end (the clocks are already there). */
static int kernel_end(sweep *sw, uint32_t s, inflight e)
{
    analysis *a = sw->a;
    const store_run *run = a->run;
    sweepdev *d = &sw->dev[s];
    store_idx ctx = e.ctx, p = e.proc;
    uint64_t ps = (uint64_t)s * run->nprocesses + p;
    uint32_t was = d->nproc;

    a->stretch[e.k] = d->ovl == e.ovl ? ANALYSIS_MARK_SOLO : ANALYSIS_MARK_SHARED;
    if (--sw->ccount[ctx] == 0) {
        d->nctx--;
        if (run->contexts[ctx].compute_api_kind == 2)
            d->nmps--;
    }
    if (--sw->pcount[ps] == 0) {
        d->nproc--;
        a->procs[p].busy_ns += e.end - sw->psince[ps];
        a->procs[p].overlap_ns += d->ovl - sw->povl[ps];
    }
    return window_step(a, s, d, was, e.end);
}

/* Ends every kernel of slot s that ends at or before t. */
static int drain(sweep *sw, uint32_t s, int64_t t)
{
    sweepdev *d = &sw->dev[s];
    while (d->n && d->heap[0].end <= t) {
        advance(d, d->heap[0].end); /* while the kernel still counts as in flight */
        int rc = kernel_end(sw, s, heap_pop(d));
        if (rc)
            return rc;
    }
    return ANALYSIS_OK;
}

/* Starts kernel i (positive length) on slot s. */
static int kernel_start(sweep *sw, uint32_t s, uint64_t i)
{
    analysis *a = sw->a;
    const store_run *run = a->run;
    sweepdev *d = &sw->dev[s];
    const store_kernel *k = &run->kernels[i];
    store_idx ctx = run->streams[k->stream].context;
    store_idx p = run->contexts[ctx].process;
    uint64_t ps = (uint64_t)s * run->nprocesses + p;
    uint32_t was = d->nproc;

    advance(d, k->start);
    if (sw->ccount[ctx]++ == 0) {
        d->nctx++;
        if (run->contexts[ctx].compute_api_kind == 2)
            d->nmps++;
    }
    if (sw->pcount[ps]++ == 0) {
        d->nproc++;
        sw->psince[ps] = k->start;
        sw->povl[ps] = d->ovl;
    }
    inflight e = {k->end, i, d->ovl, ctx, p};
    int rc = heap_push(d, e);
    if (rc)
        return rc;
    /* the kernel's own process is now in flight; if others were, it is not solo: the overlap
     * clock starts moving right away, which kernel_end() sees */
    device_max(&a->devs[s], d);
    return window_step(a, s, d, was, k->start);
}

/* Finishes slot s at its last kernel end: closes windows and stores the clocks. */
static int device_finish(sweep *sw, uint32_t s)
{
    analysis *a = sw->a;
    sweepdev *d = &sw->dev[s];
    analysis_device *ad = &a->devs[s];
    int rc;
    if (!ad->nkernels)
        return ANALYSIS_OK;
    if ((rc = drain(sw, s, INT64_MAX)) != 0)
        return rc;
    if (d->open && (rc = close_window(a, s, d)) != 0)
        return rc;
    if ((rc = emit_quiet(a, s, d, ad->t_end)) != 0)
        return rc;
    ad->busy_ns = d->busy;
    ad->overlap_ns = d->ovl;
    ad->idle_ns = (ad->t_end - ad->t_begin) - d->busy;
    return ANALYSIS_OK;
}

int analysis_sweep(analysis *a)
{
    const store_run *run = a->run;
    uint64_t nps = (uint64_t)a->ndevs * run->nprocesses;
    sweep sw = {a,
                calloc(a->ndevs ? a->ndevs : 1, sizeof(sweepdev)),
                calloc(nps ? nps : 1, sizeof(uint32_t)),
                calloc(nps ? nps : 1, sizeof(int64_t)),
                calloc(nps ? nps : 1, sizeof(int64_t)),
                calloc(run->ncontexts ? run->ncontexts : 1, sizeof(uint32_t))};
    int rc = ANALYSIS_ENOMEM;
    if (!sw.dev || !sw.pcount || !sw.psince || !sw.povl || !sw.ccount)
        goto out;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        sw.dev[s].now = sw.dev[s].cursor = a->devs[s].t_begin;
    }
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        uint32_t s = analysis_kernel_slot(a, k);
        if ((rc = drain(&sw, s, k->start)) != 0)
            goto out;
        if (k->end <= k->start) {
            a->stretch[i] = ANALYSIS_MARK_SHARED; /* zero length: never a reference */
            continue;
        }
        if ((rc = kernel_start(&sw, s, i)) != 0)
            goto out;
    }
    for (uint32_t s = 0; s < a->ndevs; s++)
        if ((rc = device_finish(&sw, s)) != 0)
            goto out;
    rc = ANALYSIS_OK;
out:
    if (sw.dev)
        for (uint32_t s = 0; s < a->ndevs; s++)
            free(sw.dev[s].heap);
    free(sw.dev);
    free(sw.pcount);
    free(sw.psince);
    free(sw.povl);
    free(sw.ccount);
    return rc;
}
