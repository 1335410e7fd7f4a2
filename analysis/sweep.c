/* sweep.c: the concurrency sweep. Kernels come sorted by start; each device slot keeps a min-heap
 * of its kernels in flight keyed by end, so the events of a device are visited in time order
 * (ends before starts at the same instant: intervals are half-open). Between events the counts of
 * processes, contexts and share groups in flight are constant, which gives busy/overlap/idle time,
 * the overlap windows (>= 2 contexts in flight) with the physics of what overlapped, per-process
 * busy and overlap time, and each kernel's overlapped time (0: it ran solo). */
#include <math.h>
#include <stdlib.h>

#include "analysis_int.h"

/* A kernel in flight. `ovl` is the device's overlap clock when it started: the kernel's
 * overlapped time is how far the clock moved by its end (while it is in flight, >= 2 contexts in
 * flight means another context). */
typedef struct inflight {
    int64_t end;
    uint64_t k; /* index into run->kernels */
    int64_t ovl;
    store_idx ctx, proc; /* its context and process (saves the lookups at its end) */
} inflight;

/* A window under construction, or the clocks at one instant of it. */
typedef struct clocks {
    int64_t busy, ovl;     /* see sweepdev */
    double ctxint, grpint; /* in double: contexts x ns overflow an int64 in a run 73 years wide
                              (exact to 2^53, 13 days of 8 contexts overlapped) */
    double gkint;          /* the most kernels one group can have in flight (kernels less the
                              other groups in flight) x ns, over the overlap */
    int64_t phys[ANALYSIS_NPHYSICS];
    analysis_tcount tc; /* turns so far (analysis_tcount) */
} clocks;

/* The latest events of one kind (kernel starts, or ends) of a device's share groups that may share
 * the GPU: the latest one's time and group, and the latest of another group than that (INT64_MIN:
 * none yet). Events come in time order. */
typedef struct handtrack {
    int64_t t, t2;
    uint32_t g;
} handtrack;

/* Notes an event of group g at t. */
static void handtrack_note(handtrack *h, uint32_t g, int64_t t)
{
    if (h->g != g) {
        h->t2 = h->t;
        h->g = g;
    }
    h->t = t;
}

/* The time of the latest event of another group than g (INT64_MIN: none). */
static int64_t handtrack_other(const handtrack *h, uint32_t g)
{
    return h->g != g ? h->t : h->t2;
}

/* Whether an event of group g at t (a start where `other` holds the ends, an end where it holds
 * the starts) is a quick handover: another group's opposite event less than the calibration's
 * handover_ns before it (analysis_device quick_handovers). */
static int quick_handover(const handtrack *other, uint32_t g, int64_t t, double handover_ns)
{
    int64_t o = handtrack_other(other, g);
    return o != INT64_MIN && (double)(t - o) < handover_ns;
}

/* The state of one device slot during the sweep. */
typedef struct sweepdev {
    inflight *heap; /* min-heap on end */
    uint64_t n, cap;
    int64_t now;                /* time of the last event */
    uint32_t nproc, nctx, nmps; /* processes, contexts, MPS contexts in flight */
    uint32_t ngrp, nplain;      /* share groups in flight; of which plain (a->group_plain) */
    clocks c;                   /* busy (>= 1 kernel), overlap (>= 2 contexts), integrals of
                                   contexts and groups in flight over the overlap time, overlap
                                   time by physics: all ns since the device's first start */
    /* the overlap window being built */
    int open;                  /* a window is open (maybe pending: overlap ended < join gap ago) */
    int64_t win_t0;            /* its start */
    int64_t cursor;            /* end of the last emitted window */
    int64_t drop_t;            /* when the overlap last fell below 2 contexts */
    clocks at_open, at_drop;   /* the clocks at win_t0 and drop_t */
    int64_t cursor_busy;       /* busy clock at cursor */
    analysis_tcount cursor_tc; /* turn counts at cursor */
    analysis_tcount tc_before; /* the turn counts before the turns of instant tc_time */
    int64_t tc_time;           /* the instant of the latest turn */
    uint16_t maxp, maxc;       /* of the open window (updated only while >= 2 in flight) */
    uint8_t mps;               /* an MPS client context ran in the open window */
    int64_t last_end;          /* when the device last went idle */
    uint32_t last_group;       /* the share group of the kernel that ended then; UINT32_MAX none */
    uint32_t long_idles;       /* idle stretches longer than ANALYSIS_SWITCH_GAP_NS so far */
    uint32_t turn_group;       /* the share group of the last kernel start; UINT32_MAX none */
    int64_t turn_t0;           /* when its turn began: its first start since another group's */
    handtrack ends, starts;    /* the latest kernel ends and starts of groups that may share the
                                  GPU (not plain), for the quick handovers */
    const analysis_calibration *cal; /* the device's (switch and slice figures) */
    analysis_window *win;            /* this slot's windows, in time order */
    analysis_winx *winx;             /* parallel to win */
    uint64_t nwin, capwin;
} sweepdev;

typedef struct sweep {
    analysis *a;
    sweepdev *dev;          /* ndevs */
    uint32_t *pcount;       /* ndevs * nprocesses: kernels in flight per (slot, process) */
    int64_t *psince, *povl; /* when the (slot, process) became busy; overlap clock then */
    uint32_t *ccount;       /* ncontexts: kernels in flight per context */
    uint32_t *gcount;       /* ngroups: contexts in flight per share group */
} sweep;

/* heap_push(), heap_pop(): the kernels in flight of a device slot, by end */
ANALYSIS_MINHEAP(heap, sweepdev, inflight, end, 4) /* small: a run may hold 100k device slots */

/* The physics of the current instant, when >= 2 contexts are in flight. */
static analysis_physics physics_now(const sweepdev *d)
{
    if (d->ngrp < 2)
        return ANALYSIS_PHYS_SHARED; /* >= 2 contexts of one share group */
    return d->nplain ? ANALYSIS_PHYS_SLICED : ANALYSIS_PHYS_UNKNOWN;
}

/* Moves the device's clocks forward to t (counts are constant since the last event). */
static void advance(sweepdev *d, int64_t t)
{
    int64_t dt = t - d->now;
    if (dt <= 0)
        return;
    if (d->n)
        d->c.busy += dt;
    if (d->nctx >= 2) {
        d->c.ovl += dt;
        d->c.ctxint += (double)d->nctx * (double)dt;
        d->c.grpint += (double)d->ngrp * (double)dt;
        d->c.gkint += (double)(d->n - d->ngrp + 1) * (double)dt;
        d->c.phys[physics_now(d)] += dt;
    }
    d->now = t;
}

static uint16_t clamp16(uint32_t v)
{
    return (uint16_t)(v > UINT16_MAX ? UINT16_MAX : v);
}

/* Appends a window (and what the judge needs of it) to slot d's list. */
static int push_window(sweepdev *d, const analysis_window *w, const analysis_winx *x)
{
    if (d->nwin == d->capwin) {
        uint64_t cap = d->capwin ? 2 * d->capwin : 2; /* most slots hold one or two */
        analysis_window *pw = realloc(d->win, cap * sizeof *pw);
        if (!pw)
            return ANALYSIS_ENOMEM;
        d->win = pw;
        analysis_winx *px = realloc(d->winx, cap * sizeof *px);
        if (!px)
            return ANALYSIS_ENOMEM;
        d->winx = px;
        d->capwin = cap;
    }
    d->win[d->nwin] = *w;
    d->winx[d->nwin++] = *x;
    return ANALYSIS_OK;
}

/* Counts switch x into window w (known ones) or its winx x (those of unknown MPS state, which
 * the judge counts only where the signature says time-sliced), and notes the window's index
 * (slot-relative: the window is the slot's next). */
static void count_switch(sweepdev *d, analysis_switch *e, analysis_window *w, analysis_winx *x)
{
    if (e->sig) {
        x->nsig++;
        x->siggap += e->gap;
    } else {
        w->switches++;
        w->switch_gap_ns += e->gap;
    }
    e->win = d->nwin;
}

/* Takes the context switches of slot s before t that no window holds yet into the window about
 * to be emitted (w and x). */
static void take_switches(analysis *a, uint32_t s, sweepdev *d, int64_t t, analysis_window *w,
                          analysis_winx *x)
{
    analysis_switches *l = &a->sw[s];
    for (; l->next < l->n && l->at[l->next].t < t; l->next++)
        count_switch(d, &l->at[l->next], w, x);
}

/* a - b, count by count */
static analysis_tcount tc_sub(analysis_tcount a, analysis_tcount b)
{
    return (analysis_tcount){a.turns - b.turns, a.quick - b.quick, a.marked - b.marked};
}

/* The turn counts before switch e's own turn */
static analysis_tcount tc_before(const analysis_switch *e)
{
    return tc_sub(e->tc, (analysis_tcount){e->own & 1u, (e->own >> 1) & 1u, (e->own >> 2) & 1u});
}

/* Appends a quiet window [t0, t1) with busy time `busy` (SOLO if any, else IDLE), turn counts
 * tc, holding the switches of sw (counted by count_switch() into it and its winx sx; NULL:
 * none); `turns` when it spans a cluster of them. */
static int push_quiet(analysis *a, uint32_t s, sweepdev *d, int64_t t0, int64_t t1, int64_t busy,
                      analysis_tcount tc, const analysis_window *sw, const analysis_winx *sx,
                      int turns)
{
    analysis_window w = {0};
    w.contexts = w.groups = w.group_kernels = NAN; /* no overlap to take the means over */
    w.t0 = t0;
    w.t1 = t1;
    w.device = a->devs[s].device;
    w.busy_ns = busy;
    w.switches = sw ? sw->switches : 0;
    w.switch_gap_ns = sw ? sw->switch_gap_ns : 0;
    w.turns = tc.turns;
    w.quick_turns = tc.quick;
    w.switch_turns = tc.marked;
    w.verdict = w.busy_ns > 0 ? ANALYSIS_SOLO : ANALYSIS_IDLE;
    analysis_winx x = {d->c.ovl, d->c.ovl, (uint8_t)turns, sx ? sx->nsig : 0, sx ? sx->siggap : 0};
    return push_window(d, &w, &x);
}

/* The turn counts of slot d before instant t (turns at t belong to the window from t on) */
static analysis_tcount tc_at(const sweepdev *d, int64_t t)
{
    return d->tc_time == t ? d->tc_before : d->c.tc;
}

/* Emits the quiet window [cursor, t) of slot s (SOLO if the busy clock moved in it). Where its
 * contexts switched twice or more with no idle stretch longer than a switch between them (a
 * cluster: switches of one epoch), the stretch from the cluster's first switch's idle gap to its
 * last switch is a window of its own holding them (the judge calls it time-sliced when they are
 * known switches, or when the timing's signature says so: they took turns); the quiet time
 * before, between and after such windows stays quiet, and holds the switches of clusters of one.
 * A took-turns window thus never bridges an idle stretch that no switch explains: bursts of turns
 * apart by the processes' own idle time are windows apart. */
static int emit_quiet(analysis *a, uint32_t s, sweepdev *d, int64_t t)
{
    int rc = ANALYSIS_OK;
    if (t > d->cursor) {
        analysis_switches *l = &a->sw[s];
        int64_t pos = d->cursor, busy = d->cursor_busy; /* the quiet piece not emitted yet */
        analysis_tcount tc = d->cursor_tc;
        uint64_t lone = l->next; /* its switches (clusters of one) start here */
        while (!rc && l->next < l->n && l->at[l->next].t < t) {
            uint64_t i0 = l->next, i1 = i0;
            while (i1 + 1 < l->n && l->at[i1 + 1].t < t && l->at[i1 + 1].epoch == l->at[i0].epoch)
                i1++;
            l->next = i1 + 1;
            if (i1 == i0) /* one switch: it stays in the quiet piece */
                continue;
            const analysis_switch *f = &l->at[i0], *e = &l->at[i1];
            int64_t a0 = f->t - f->gap > pos ? f->t - f->gap : pos;
            analysis_window sw = {0}, pw = {0};
            analysis_winx sx = {0}, px = {0};
            if (a0 > pos) {
                for (uint64_t i = lone; i < i0; i++)
                    count_switch(d, &l->at[i], &pw, &px);
                rc = push_quiet(a, s, d, pos, a0, f->busy - busy, tc_sub(tc_before(f), tc), &pw,
                                &px, 0);
                tc = tc_before(f);
            }
            for (uint64_t i = a0 > pos ? i0 : lone; i <= i1; i++)
                count_switch(d, &l->at[i], &sw, &sx);
            if (!rc)
                rc = push_quiet(a, s, d, a0, e->t, e->busy - f->busy, tc_sub(e->tc, tc), &sw, &sx,
                                1);
            lone = i1 + 1;
            pos = e->t;
            busy = e->busy;
            tc = e->tc;
        }
        if (!rc && t > pos) {
            analysis_window pw = {0};
            analysis_winx px = {0};
            for (uint64_t i = lone; i < l->next; i++)
                count_switch(d, &l->at[i], &pw, &px);
            rc =
                push_quiet(a, s, d, pos, t, d->c.busy - busy, tc_sub(tc_at(d, t), tc), &pw, &px, 0);
        }
    }
    d->cursor = t;
    d->cursor_busy = d->c.busy;
    d->cursor_tc = tc_at(d, t);
    return rc;
}

/* Emits the open overlap window of slot s, which ends where the overlap last dropped. Its
 * verdict is set by analysis_judge(). */
static int close_window(analysis *a, uint32_t s, sweepdev *d)
{
    const clocks *o = &d->at_open, *e = &d->at_drop;
    analysis_window w = {0};
    analysis_winx x = {o->ovl, e->ovl, 0, 0, 0};
    w.t0 = d->win_t0;
    w.t1 = d->drop_t;
    w.device = a->devs[s].device;
    w.verdict = ANALYSIS_UNKNOWN;
    w.max_processes = d->maxp;
    w.max_contexts = d->maxc;
    w.mps = d->mps;
    w.busy_ns = e->busy - o->busy;
    w.overlap_ns = e->ovl - o->ovl;
    take_switches(a, s, d, d->drop_t, &w, &x);
    w.turns = e->tc.turns - o->tc.turns;
    w.quick_turns = e->tc.quick - o->tc.quick;
    w.switch_turns = e->tc.marked - o->tc.marked;
    w.contexts = w.groups = w.group_kernels = NAN;
    if (w.overlap_ns > 0) {
        w.contexts = (float)((e->ctxint - o->ctxint) / (double)w.overlap_ns);
        w.groups = (float)((e->grpint - o->grpint) / (double)w.overlap_ns);
        w.group_kernels = (float)((e->gkint - o->gkint) / (double)w.overlap_ns);
    }
    int64_t most = -1; /* the physics holding the most overlap time inside */
    for (int p = ANALYSIS_PHYS_SLICED; p < ANALYSIS_NPHYSICS; p++) {
        int64_t ns = e->phys[p] - o->phys[p];
        if (ns > most) { /* ties: SLICED, then SHARED, then UNKNOWN */
            most = ns;
            w.physics = (analysis_physics)p;
        }
    }
    d->open = 0;
    d->cursor = d->drop_t;
    d->cursor_busy = e->busy;
    d->cursor_tc = e->tc;
    return push_window(d, &w, &x);
}

/* Runs after every event of slot s at time t: the window state machine. `was` is the number of
 * contexts in flight before the event. */
static int window_step(analysis *a, uint32_t s, sweepdev *d, uint32_t was, int64_t t)
{
    int rc;
    if (was < 2 && d->nctx >= 2) {
        if (d->open && t - d->drop_t >= a->opt.join_gap_ns && (rc = close_window(a, s, d)) != 0)
            return rc;
        if (!d->open) {
            if ((rc = emit_quiet(a, s, d, t)) != 0)
                return rc;
            d->open = 1;
            d->win_t0 = t;
            d->at_open = d->c;
            d->at_open.tc = tc_at(d, t);
            d->maxp = d->maxc = 0;
            d->mps = 0;
        }
    }
    if (d->open && d->nctx >= 2) {
        if (clamp16(d->nproc) > d->maxp)
            d->maxp = clamp16(d->nproc);
        if (clamp16(d->nctx) > d->maxc)
            d->maxc = clamp16(d->nctx);
        if (d->nmps)
            d->mps = 1;
    }
    if (d->open && was >= 2 && d->nctx < 2) {
        d->drop_t = t;
        d->at_drop = d->c;
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

/* Counts context ctx in or out of flight on slot d (delta +1 or -1 on its kernels in flight). */
static void context_step(sweep *sw, sweepdev *d, store_idx ctx, int delta)
{
    analysis *a = sw->a;
    if (delta > 0 ? sw->ccount[ctx]++ != 0 : --sw->ccount[ctx] != 0)
        return; /* the context was and stays in flight */
    uint32_t g = a->ctx_group[ctx];
    d->nctx += (uint32_t)delta;
    d->nmps += (uint32_t)(analysis_ctx_kind(a, ctx) == 2 ? delta : 0);
    if (delta > 0 ? sw->gcount[g]++ != 0 : --sw->gcount[g] != 0)
        return;
    d->ngrp += (uint32_t)delta;
    d->nplain += a->group_plain[g] ? (uint32_t)delta : 0;
}

/* Ends the in-flight kernel e of slot s at e.end (the clocks are already there). */
static int kernel_end(sweep *sw, uint32_t s, inflight e)
{
    analysis *a = sw->a;
    const store_run *run = a->run;
    sweepdev *d = &sw->dev[s];
    store_idx p = e.proc;
    uint64_t ps = (uint64_t)s * run->nprocesses + p;
    uint32_t was = d->nctx;

    a->stretch[e.k] = (float)(d->c.ovl - e.ovl);
    a->ovl_start[e.k] = e.ovl;
    uint32_t g = a->ctx_group[e.ctx];
    if (!a->group_plain[g]) {
        a->devs[s].quick_handovers += quick_handover(&d->starts, g, e.end, d->cal->handover_ns);
        handtrack_note(&d->ends, g, e.end);
    }
    context_step(sw, d, e.ctx, -1);
    if (d->nctx == 0) {
        d->last_end = e.end;
        d->last_group = g;
    }
    if (--sw->pcount[ps] == 0) {
        d->nproc--;
        a->procs[p].busy_ns += e.end - sw->psince[ps];
        a->procs[p].overlap_ns += d->c.ovl - sw->povl[ps];
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
    uint32_t was = d->nctx;

    advance(d, k->start);
    /* the processes' own idle time: no switch explains a gap this long */
    if (was == 0 && d->last_group != UINT32_MAX && k->start - d->last_end > ANALYSIS_SWITCH_GAP_NS)
        d->long_idles++;
    uint32_t g = a->ctx_group[ctx];
    if (!a->group_plain[g]) {
        a->devs[s].quick_handovers += quick_handover(&d->ends, g, k->start, d->cal->handover_ns);
        handtrack_note(&d->starts, g, k->start);
    }
    /* a handover: from an idle GPU to another share group than the one that ran last */
    int64_t gap =
        was == 0 && d->last_group != UINT32_MAX && d->last_group != g ? k->start - d->last_end : -1;
    int switch_like = gap >= d->cal->switch_lo_ns && gap <= d->cal->switch_hi_ns;
    /* a turn: another share group's kernel starts (analysis_window turns) */
    unsigned own = 0;
    if (d->turn_group != UINT32_MAX && d->turn_group != g) {
        double len = (double)(k->start - d->turn_t0);
        int slice = len >= 0.8 * d->cal->slice_ns && len <= 1.3 * d->cal->slice_ns;
        own = 1u | (len < d->cal->quick_ns ? 2u : 0) | (switch_like || slice ? 4u : 0);
    }
    if (d->turn_group != g) {
        d->turn_group = g;
        d->turn_t0 = k->start;
    }
    analysis_tcount tc = {d->c.tc.turns + (own & 1u), d->c.tc.quick + ((own >> 1) & 1u),
                          d->c.tc.marked + ((own >> 2) & 1u)};
    /* a context switch: between plain share groups within 1 us to 1 ms; between groups that
     * may share the GPU, one of them of unknown MPS state, a gap the size of one (sig: counted
     * where the signature says time-sliced) */
    int plain = gap >= 0 && a->group_plain[g] && a->group_plain[d->last_group];
    int sig = gap >= 0 && !a->group_plain[g] && !a->group_plain[d->last_group] &&
              (a->group_unknown[g] || a->group_unknown[d->last_group]) && switch_like;
    if ((plain && gap >= ANALYSIS_SWITCH_GAP_MIN_NS && gap <= ANALYSIS_SWITCH_GAP_NS) || sig) {
        analysis_switches *l = &a->sw[s];
        if (l->n == l->cap) {
            uint64_t cap = l->cap ? 2 * l->cap : 16;
            analysis_switch *p = realloc(l->at, cap * sizeof *p);
            if (!p)
                return ANALYSIS_ENOMEM;
            l->at = p;
            l->cap = cap;
        }
        l->at[l->n++] = (analysis_switch){
            k->start, gap, d->c.busy, d->long_idles, tc, (uint8_t)own, (uint8_t)sig, 0, 0};
        if (!sig) {
            a->devs[s].switches++;
            a->devs[s].switch_gap_ns += gap;
        }
    }
    context_step(sw, d, ctx, +1);
    if (sw->pcount[ps]++ == 0) {
        d->nproc++;
        sw->psince[ps] = k->start;
        sw->povl[ps] = d->c.ovl;
    }
    inflight e = {k->end, i, d->c.ovl, ctx, p};
    int rc = heap_push(d, e);
    if (rc)
        return rc;
    /* if another context was in flight, the overlap clock starts moving right away, which
     * kernel_end() sees */
    device_max(&a->devs[s], d);
    /* its turn counts after the window step: a quiet window ending at its start does not hold
     * it, the overlap window it opens does */
    if ((rc = window_step(a, s, d, was, k->start)) != 0)
        return rc;
    if (own && d->tc_time != k->start) {
        d->tc_before = d->c.tc;
        d->tc_time = k->start;
    }
    d->c.tc = tc;
    return ANALYSIS_OK;
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
    ad->busy_ns = d->c.busy;
    ad->overlap_ns = d->c.ovl;
    ad->idle_ns = (ad->t_end - ad->t_begin) - d->c.busy;
    return ANALYSIS_OK;
}

/* Moves the slots' window lists into a->windows / a->winx, slot after slot, and gives each
 * device its slice. */
static int gather_windows(analysis *a, sweep *sw)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < a->ndevs; s++)
        n += sw->dev[s].nwin;
    a->windows = malloc((n ? n : 1) * sizeof *a->windows);
    a->winx = malloc((n ? n : 1) * sizeof *a->winx);
    if (!a->windows || !a->winx)
        return ANALYSIS_ENOMEM;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        const sweepdev *d = &sw->dev[s];
        a->devs[s].first_window = a->nwindows;
        a->devs[s].nwindows = d->nwin;
        for (uint64_t i = 0; i < a->sw[s].n; i++) /* their windows' absolute indices */
            a->sw[s].at[i].win += a->nwindows;
        for (uint64_t w = 0; w < d->nwin; w++) {
            a->windows[a->nwindows] = d->win[w];
            a->winx[a->nwindows++] = d->winx[w];
        }
    }
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
                calloc(run->ncontexts ? run->ncontexts : 1, sizeof(uint32_t)),
                calloc(a->ngroups ? a->ngroups : 1, sizeof(uint32_t))};
    int rc = ANALYSIS_ENOMEM;
    a->sw = calloc(a->ndevs ? a->ndevs : 1, sizeof *a->sw);
    if (!sw.dev || !sw.pcount || !sw.psince || !sw.povl || !sw.ccount || !sw.gcount || !a->sw)
        goto out;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        sw.dev[s].now = sw.dev[s].cursor = a->devs[s].t_begin;
        sw.dev[s].last_group = sw.dev[s].turn_group = UINT32_MAX;
        sw.dev[s].tc_time = INT64_MIN;
        sw.dev[s].ends = sw.dev[s].starts = (handtrack){INT64_MIN, INT64_MIN, UINT32_MAX};
        store_idx dv = a->devs[s].device;
        sw.dev[s].cal =
            analysis_calibration_for(dv != STORE_NONE ? run->devices[dv].name : NULL, NULL);
    }
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (analysis_kernel_dur(k) == 0) {
            a->stretch[i] = ANALYSIS_MARK_ZERO; /* never in flight, never a reference */
            a->ovl_start[i] = 0;
            continue;
        }
        uint32_t s = analysis_kernel_slot(a, k);
        if ((rc = drain(&sw, s, k->start)) != 0)
            goto out;
        if ((rc = kernel_start(&sw, s, i)) != 0)
            goto out;
    }
    for (uint32_t s = 0; s < a->ndevs; s++)
        if ((rc = device_finish(&sw, s)) != 0)
            goto out;
    rc = gather_windows(a, &sw);
out:
    if (sw.dev)
        for (uint32_t s = 0; s < a->ndevs; s++) {
            free(sw.dev[s].heap);
            free(sw.dev[s].win);
            free(sw.dev[s].winx);
        }
    free(sw.dev);
    free(sw.pcount);
    free(sw.psince);
    free(sw.povl);
    free(sw.ccount);
    free(sw.gcount);
    return rc;
}
