/* web_timeline.c: GET /api/timeline, the viewport query. For each requested row (kernels, copies,
 * API calls or NVTX ranges) it returns the records overlapping [t0, t1) when there are few enough
 * to draw one by one, else per-pixel aggregates (count, busy share; for kernels the dominant
 * verdict; for nested rows per level); per lane it returns the concurrency profile and the
 * dominant verdict per pixel, and the overlap windows with their evidence when few. The cost
 * depends on the width in pixels, the rows and the records returned, not on the size of the run.
 * Arrays are written as JSON or, for format=bin, as typed arrays (web_bin.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define WINDOWS_MAX_LIST 4000  /* overlap windows listed one by one up to this many per lane */
#define SWITCHES_MAX_LIST 4000 /* context switches listed one by one up to this many per lane */
#define DIRECT_MAX 300000      /* kernels profiled directly per query without the grid */
#define DIRECT_CHEAP 20000     /* kernels profiled directly per query when the grid is coarse */
#define SNAP_BUCKETS 8 /* pixel edges snap to the row grid when a pixel spans this many buckets */
/* Exact aggregates by one pass over the records in range while they are at most this many per
 * pixel, else by a lookup per pixel edge. Measured at 10M kernels (bench_serve's run, 2026-12-02):
 * a pass costs ~10 ns a record, a lookup ~45-50 ns an edge, so from ~5 records per pixel the
 * lookups cost less (NVTX layers at 8 per pixel: a tenth of the query at 0.1 of the run). */
#define SWEEP_PER_PIXEL 4

typedef struct tl_query {
    const web_runix *r;
    int64_t t0, t1;       /* absolute ns (common axis) */
    int64_t rel0;         /* t0 relative to the run's origin: the base of compact times */
    uint32_t width;       /* pixels */
    uint32_t kmax;        /* kernels per row listed one by one at most */
    int64_t *T;           /* width + 1 pixel edges, absolute */
    int8_t *lane_verdict; /* nlanes x width: dominant verdict per pixel */
    web_out *o;           /* where the answer goes */
    int64_t *a, *c;       /* width + 1 each: per-pixel integers (counts, busy shares) */
    int64_t *cover;       /* width + 1: web_ivl_sweep()'s scratch */
    int64_t *vns;         /* (ANALYSIS_NVERDICTS + 1) x width: ns of each verdict per pixel, the
                             took-turns windows' last (WEB_WIN_TURNS) */
    double *f;            /* width: per-pixel reals */
    analysis_bin *bins;   /* width: the concurrency profile */
    web_ivl_pt *pts;      /* width + 1: a level at the pixel edges */
    double *inv;          /* width: 1 / the pixel's length in ns (0 for an empty pixel) */
} tl_query;

/* div_floor: floor(a / b) for a >= 0 and b > 0, with inv = 1.0 / b: a multiplication and a
 * correction instead of a division (a few per pixel and row). The products are checked: a view
 * of +-4e18 ns on one pixel makes b as large as a. */
static inline int64_t div_floor(int64_t a, int64_t b, double inv)
{
    if (a < b)
        return 0;
    int64_t d = (int64_t)((double)a * inv), p;
    while (d > 0 && (__builtin_mul_overflow(d, b, &p) || p > a))
        d--;
    while (!__builtin_mul_overflow(d + 1, b, &p) && p <= a)
        d++;
    return d;
}

/* instant: 1 when pixel j is narrower than 1 ns (T[j] == T[j + 1]: more pixels than ns), else 0.
 * Such a pixel shows the instant T[j] (web/API.md), as analysis_profile_bins() has it: what is in
 * flight at T[j] is what overlaps [T[j], T[j] + 1), and that is the next pixel (pixels are then 0
 * or 1 ns wide, and T[j] < t1, so one of 1 ns starts at T[j]): an aggregate measured over the
 * pixel's own length (no ns at all) is taken from there instead, last pixel to first. */
static inline int instant(const tl_query *q, uint32_t j)
{
    return q->T[j + 1] == q->T[j];
}

/* level_points: what level v of a row holds before each pixel edge. When a pixel spans
 * SNAP_BUCKETS buckets or more, its edges are read at the nearest bucket start (moved by at most
 * 1/(2 * SNAP_BUCKETS) pixel): no scan, a few cache misses per edge. */
static void level_points(const tl_query *q, const web_ivl *v, web_ivl_pt *pts)
{
    int snap = (double)(q->t1 - q->t0) / q->width >= (double)SNAP_BUCKETS * (double)v->bw;
    web_ivl_at_many(v, q->T, q->width + 1, snap, pts);
}

/* level_bins: per pixel, the records of level v (list positions from..to may overlap the range)
 * counted into q->a and their busy permille (rounded up, at most 1000) into q->c: from the grid
 * when a pixel spans SNAP_BUCKETS buckets or more, else exact, by web_ivl_sweep() while the records
 * are few enough, else by a lookup per pixel edge. */
static void level_bins(const tl_query *q, const web_ivl *v, uint32_t from, uint32_t to)
{
    uint32_t W = q->width;
    int snap = (double)(q->t1 - q->t0) / W >= (double)SNAP_BUCKETS * (double)v->bw;
    if (!snap && to - from <= (uint64_t)SWEEP_PER_PIXEL * W) {
        web_ivl_sweep(v, q->T, W, from, to, q->a, q->c, q->cover);
    } else {
        level_points(q, v, q->pts);
        for (uint32_t j = 0; j < W; j++) {
            q->a[j] = (int64_t)(q->pts[j + 1].pos - q->pts[j].pos + q->pts[j].running);
            q->c[j] = q->pts[j + 1].busy - q->pts[j].busy;
        }
    }
    for (uint32_t j = W; j-- > 0;) { /* last to first: an instant takes the next pixel's */
        if (instant(q, j)) {
            q->a[j] = q->a[j + 1];
            q->c[j] = q->c[j + 1];
            continue;
        }
        int64_t px = q->T[j + 1] - q->T[j], a = q->c[j] * 1000 + px - 1, pm;
        if (a >= 0 && a < (INT64_C(1) << 52)) {
            /* a * inv is within 1 of a / px: one step either way, without branches */
            pm = (int64_t)((double)a * q->inv[j]);
            int64_t r = a - pm * px;
            pm += (r >= px) - (r < 0);
        } else {
            pm = div_floor(a, px, q->inv[j]);
        }
        q->c[j] = pm > 1000 ? 1000 : pm;
    }
}

/* lane_verdicts: per pixel, the verdict holding most of the pixel's overlap time (overlap verdicts
 * win over SOLO/IDLE whenever any overlap is there, so short overlaps stay visible when zoomed
 * out); also the overlap share in permille (into q->a). The time of verdict v in pixel j is its
 * windows' time inside the pixel: by web_ivl_sweep() over the windows in range, or, when they are
 * many per pixel, as the difference of their busy time before both edges. A took-turns window
 * (time-sliced without overlap) is no overlap window: its pixels are time-sliced where no overlap
 * window is, with an overlap share of 0. */
static void lane_verdicts(const tl_query *q, const web_lane *l, int8_t *verdict)
{
    uint32_t W = q->width;
    for (int v = 0; v <= ANALYSIS_NVERDICTS; v++) {
        const web_ivl *w = &l->win[v];
        int64_t *t = q->vns + (size_t)v * W;
        if (!w->n) {
            memset(t, 0, sizeof *t * W);
            continue;
        }
        uint32_t from = web_ivl_scan_from(w, q->t0), to = web_ivl_at(w, q->t1).pos;
        if (to - from <= (uint64_t)SWEEP_PER_PIXEL * W) {
            web_ivl_sweep(w, q->T, W, from, to, NULL, t, q->cover);
            continue;
        }
        web_ivl_at_many(w, q->T, W + 1, 0, q->pts);
        for (uint32_t j = 0; j < W; j++)
            t[j] = q->pts[j + 1].busy - q->pts[j].busy;
    }
    for (uint32_t j = W; j-- > 0;) { /* last to first: an instant takes the next pixel's */
        if (instant(q, j)) {
            verdict[j] = verdict[j + 1];
            q->a[j] = q->a[j + 1];
            continue;
        }
        int best = -1;
        int64_t best_ns = 0, ov = 0;
        for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
            int64_t t = q->vns[(size_t)v * W + j];
            ov += t;
            if (t > best_ns) {
                best_ns = t;
                best = v;
            }
        }
        if (best < 0)
            best = q->vns[(size_t)WEB_WIN_TURNS * W + j] > 0   ? ANALYSIS_TIME_SLICED
                   : q->vns[(size_t)ANALYSIS_SOLO * W + j] > 0 ? ANALYSIS_SOLO
                   : q->vns[(size_t)ANALYSIS_IDLE * W + j] > 0 ? ANALYSIS_IDLE
                                                               : -1;
        int64_t px = q->T[j + 1] - q->T[j];
        verdict[j] = (int8_t)best;
        q->a[j] = div_floor(ov * 1000 + px / 2, px, q->inv[j]);
    }
}

/* lane_kernels_in: kernels of the lane's rows overlapping [a, b) (what a direct profile costs). */
static uint64_t lane_kernels_in(const tl_query *q, uint32_t slot, int64_t a, int64_t b)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < q->r->items[WEB_ROW_KERNELS].nrows; i++) {
        const web_row *row = &q->r->rows[i];
        if (row->slot != slot)
            continue;
        web_ivl_pt pa = web_ivl_at(&row->lev[0], a), pb = web_ivl_at(&row->lev[0], b);
        n += pb.pos - pa.pos + pa.running;
    }
    return n;
}

/* lane_concurrency: the profile per pixel, from the cached grid when a pixel spans several of
 * its bins (one is enough when the range holds many kernels), else computed on demand by the
 * analysis over the (then small) range. Without the
 * grid a range holding more than DIRECT_MAX kernels is not computed: before the grid is built
 * (just after start) returns 1 (pending) and the page asks again; when building it failed returns
 * 2 (no profile at this zoom). 0 on success, -1 on failure. */
static int lane_concurrency(const tl_query *q, const web_lane *l, uint32_t slot, analysis_bin *out)
{
    memset(out, 0, sizeof *out * q->width);
    double px = (double)(q->t1 - q->t0) / q->width;
    int state = __atomic_load_n(&l->grid_state, __ATOMIC_ACQUIRE);
    if (l->dev->t_end <= l->dev->t_begin)
        return 0;
    int64_t a = q->t0 > l->dev->t_begin ? q->t0 : l->dev->t_begin;
    int64_t b = q->t1 < l->dev->t_end ? q->t1 : l->dev->t_end;
    if (b <= a)
        return 0;
    /* the grid when a pixel spans 4 of its bins or more; from one bin on when the exact profile
     * would read more than DIRECT_CHEAP kernels (it then costs more than the rest of the query) */
    int grid = state == 1 && l->grid && px >= (double)l->gw &&
               (px >= 4.0 * (double)l->gw || lane_kernels_in(q, slot, a, b) > DIRECT_CHEAP);
    if (!grid) {
        if (state != 1 && lane_kernels_in(q, slot, a, b) > DIRECT_MAX)
            return state == 0 ? 1 : 2;
        /* the analysis' bins over [t0, t1) are the pixels: same integer edges as q->T */
        return analysis_profile_bins(q->r->an, slot, q->t0, q->t1, out, q->width) ? -1 : 0;
    }
    for (uint32_t j = 0; j < q->width; j++) {
        int64_t a = q->T[j], b = q->T[j + 1];
        if (b <= l->g0 || a >= l->g0 + (int64_t)l->ngrid * l->gw || b <= a)
            continue;
        int64_t ga = a > l->g0 ? (a - l->g0) / l->gw : 0;
        int64_t gb = (b - l->g0 + l->gw - 1) / l->gw;
        if (gb > l->ngrid)
            gb = l->ngrid;
        double busy = 0, mean = 0, wsum = 0;
        for (int64_t g = ga; g < gb; g++) {
            const analysis_bin *x = &l->grid[g];
            int64_t s = l->g0 + g * l->gw, e = s + l->gw;
            double w = (double)((e < b ? e : b) - (s > a ? s : a));
            if (w <= 0)
                continue;
            if (x->max_processes > out[j].max_processes)
                out[j].max_processes = x->max_processes;
            if (x->max_contexts > out[j].max_contexts)
                out[j].max_contexts = x->max_contexts;
            busy += x->busy * w;
            mean += x->mean_processes * w;
            wsum += w;
        }
        if (wsum > 0) {
            out[j].busy = (float)(busy / (double)(b - a));
            out[j].mean_processes = (float)(mean / (double)(b - a));
        }
    }
    return 0;
}

/* emit_turns: the lane's took-turns windows in range (nturns; listed as [id, t0, t1, switches]
 * when at most WINDOWS_MAX_LIST) and the context switches of those windows whose idle gap meets
 * the range (nswitches; listed as [t, gap] when at most SWITCHES_MAX_LIST): the page draws a
 * took-turns window as its handovers, not as an overlap. The switches of other windows (inside
 * overlap windows) are left out: nothing is drawn of them, and a query without took-turns windows
 * in range pays nothing. */
static void emit_turns(const tl_query *q, uint32_t slot)
{
    web_out *o = q->o;
    web_buf *b = o->b;
    const web_lane *l = &q->r->lanes[slot];
    const web_ivl *tt = &l->win[WEB_WIN_TURNS];
    web_ivl_pt pa = web_ivl_at(tt, q->t0), pb = web_ivl_at(tt, q->t1);
    uint64_t nturns = tt->n ? pb.pos - pa.pos + pa.running : 0;
    web_buf_str(b, ",\"nturns\":");
    web_buf_i64(b, (int64_t)nturns);
    if (nturns > WINDOWS_MAX_LIST) { /* too many to list: the switches too many to place */
        web_buf_str(b, ",\"nswitches\":");
        web_buf_i64(b, (int64_t)web_lane_switches(q->r, slot, q->t0, q->t1, &(uint64_t){0}));
        return;
    }
    const analysis_window *all = analysis_windows(q->r->an);
    int64_t *col = malloc(sizeof *col * 4 * (nturns ? nturns : 1));
    uint64_t *first = malloc(sizeof *first * (nturns ? nturns : 1));
    uint64_t *count = malloc(sizeof *count * (nturns ? nturns : 1));
    if (!col || !first || !count) {
        free(col), free(first), free(count);
        b->failed = 1;
        return;
    }
    uint32_t n = 0;
    uint64_t nsw = 0, upto = 0; /* switches counted, distinct (two windows may meet one gap) */
    for (uint32_t i = tt->n ? web_ivl_scan_from(tt, q->t0) : 0; i < pb.pos && n < nturns; i++) {
        uint32_t wi = web_ivl_item(tt, i);
        const analysis_window *w = &all[l->dev->first_window + wi];
        if (w->t1 <= q->t0)
            continue;
        /* its switches in range: those whose gap meets both the window and the range */
        int64_t a = w->t0 > q->t0 ? w->t0 : q->t0, e = w->t1 < q->t1 ? w->t1 : q->t1;
        count[n] = web_lane_switches(q->r, slot, a, e > a ? e : a + 1, &first[n]);
        uint64_t from = first[n] > upto ? first[n] : upto, to = first[n] + count[n];
        nsw += to > from ? to - from : 0;
        upto = to > upto ? to : upto;
        col[n] = (int64_t)(l->dev->first_window + wi);
        col[nturns + n] = w->t0 - q->r->origin;
        col[2 * nturns + n] = w->t1 - q->r->origin;
        col[3 * nturns + n++] = w->switches;
    }
    static const int is_time[4] = {0, 1, 1, 0};
    const int64_t *const cols[4] = {col, col + nturns, col + 2 * nturns, col + 3 * nturns};
    web_buf_str(b, ",\"turns\":");
    web_out_tuples(o, cols, is_time, 4, n, q->rel0);
    web_buf_str(b, ",\"nswitches\":");
    web_buf_i64(b, (int64_t)nsw);
    int64_t *sc = nsw <= SWITCHES_MAX_LIST ? malloc(sizeof *sc * 2 * (nsw ? nsw : 1)) : NULL;
    if (nsw <= SWITCHES_MAX_LIST && !sc)
        b->failed = 1;
    if (sc) {
        uint64_t k = 0, next = 0; /* a switch met by two windows listed once */
        for (uint32_t i = 0; i < n; i++)
            for (uint64_t j = first[i] > next ? first[i] : next; j < first[i] + count[i]; j++) {
                sc[k] = l->sw_t[j] - q->r->origin;
                sc[nsw + k++] = l->sw_gap[j];
                next = j + 1;
            }
        static const int sw_time[2] = {1, 0};
        const int64_t *const swc[2] = {sc, sc + nsw};
        web_buf_str(b, ",\"switches\":");
        web_out_tuples(o, swc, sw_time, 2, (uint32_t)k, q->rel0);
        free(sc);
    }
    free(col), free(first), free(count);
}

static void emit_lane(const tl_query *q, uint32_t slot)
{
    web_out *o = q->o;
    web_buf *b = o->b;
    const web_lane *l = &q->r->lanes[slot];
    uint32_t W = q->width;
    int8_t *verdict = q->lane_verdict + (size_t)slot * W;
    lane_verdicts(q, l, verdict);
    web_buf_str(b, "{\"lane\":");
    web_buf_i64(b, slot);
    web_buf_str(b, ",\"verdict\":");
    for (uint32_t j = 0; j < W; j++)
        q->c[j] = verdict[j];
    web_out_ints(o, q->c, W);
    web_buf_str(b, ",\"overlap\":");
    web_out_ints(o, q->a, W);
    int conc = lane_concurrency(q, l, slot, q->bins);
    if (conc == 1)
        web_buf_str(b, ",\"conc_pending\":true");
    if (conc == 0) {
        web_buf_str(b, ",\"conc_max\":");
        for (uint32_t j = 0; j < W; j++)
            q->a[j] = q->bins[j].max_processes;
        web_out_ints(o, q->a, W);
        web_buf_str(b, ",\"conc_mean\":");
        for (uint32_t j = 0; j < W; j++)
            q->f[j] = q->bins[j].mean_processes;
        web_out_fixed2(o, q->f, W);
        web_buf_str(b, ",\"busy\":");
        for (uint32_t j = 0; j < W; j++)
            q->a[j] = (int64_t)lround(q->bins[j].busy * 1000);
        web_out_ints(o, q->a, W);
    }
    /* effective parallelism per pixel (web_range.c) */
    web_buf_str(b, ",\"par\":");
    web_lane_parallelism_many(q->r, slot, q->T, W, q->f);
    web_out_fixed2(o, q->f, W);
    /* overlap windows in range, listed with their evidence when few enough */
    uint64_t nover = 0;
    uint32_t from[ANALYSIS_NVERDICTS], to[ANALYSIS_NVERDICTS];
    for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
        web_ivl_pt pa = web_ivl_at(&l->win[v], q->t0), pb = web_ivl_at(&l->win[v], q->t1);
        nover += pb.pos - pa.pos + pa.running;
        from[v] = web_ivl_scan_from(&l->win[v], q->t0);
        to[v] = pb.pos;
    }
    web_buf_str(b, ",\"nwindows\":");
    web_buf_i64(b, (int64_t)nover);
    if (nover <= WINDOWS_MAX_LIST) {
        const analysis_window *all = analysis_windows(q->r->an);
        int64_t *col[4];
        col[0] = malloc(sizeof **col * 4 * (nover ? nover : 1));
        if (!col[0]) {
            b->failed = 1;
            return;
        }
        for (int c = 1; c < 4; c++)
            col[c] = col[0] + c * nover;
        uint32_t n = 0;
        for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
            for (uint32_t i = from[v]; i < to[v] && n < nover; i++) {
                uint32_t wi = web_ivl_item(&l->win[v], i);
                const analysis_window *w = &all[l->dev->first_window + wi];
                if (w->t1 <= q->t0)
                    continue;
                col[0][n] = (int64_t)(l->dev->first_window + wi);
                col[1][n] = w->t0 - q->r->origin;
                col[2][n] = w->t1 - q->r->origin;
                col[3][n++] = w->verdict;
            }
        }
        static const int is_time[4] = {0, 1, 1, 0};
        const int64_t *const cols[4] = {col[0], col[1], col[2], col[3]};
        web_buf_str(b, ",\"windows\":");
        web_out_tuples(o, cols, is_time, 4, n, q->rel0);
        free(col[0]);
    }
    emit_turns(q, slot);
    web_buf_ch(b, '}');
}

/* The records of one row listed one by one, level by level (within a level by start): their
 * positions in the run's array of their kind, starts, ends and levels (read from the row's
 * offsets, in list order), then the columns of each kind, gathered in one pass over the records
 * (scattered in the run's arrays: each is read once, asked for ahead); for API and NVTX rows each
 * distinct name once (a call's name repeats thousands of times): an open-addressing table from the
 * run's string index to the row's name index. */
typedef struct row_items {
    const web_row *row;
    uint32_t n;       /* records listed */
    uint32_t *k;      /* n: their positions in the run's array */
    int64_t *s, *e;   /* n: their starts and ends */
    uint8_t *z;       /* n: their levels */
    int64_t *col;     /* 3 x n: the kind's columns (below), then one column at a time to write */
    double *x;        /* n: kernels' stretches */
    uint32_t *key;    /* cap entries (UINT32_MAX: free) */
    uint32_t *val;    /* cap: the row's name index of key */
    uint32_t cap;     /* a power of two, at least twice n */
    uint32_t nnames;  /* names met */
    store_idx *names; /* the row's names, by name index */
} row_items;

/* name_index: the row's index of string nm (added when new). */
static uint32_t name_index(row_items *ri, store_idx nm)
{
    uint32_t at = (nm * 0x9E3779B1u) & (ri->cap - 1);
    while (ri->key[at] != UINT32_MAX && ri->key[at] != nm)
        at = (at + 1) & (ri->cap - 1);
    if (ri->key[at] == UINT32_MAX) {
        ri->key[at] = nm;
        ri->val[at] = ri->nnames;
        ri->names[ri->nnames++] = nm;
    }
    return ri->val[at];
}

/* items_collect: the records of the row drawn in the query's range, level by level: from[l], to[l]
 * the list positions of level l that may overlap (ri's arrays hold the sum of to[l] - from[l]). */
static void items_collect(const tl_query *q, row_items *ri, const uint32_t *from,
                          const uint32_t *to)
{
    const web_row *row = ri->row;
    uint32_t n = 0;
    for (uint32_t l = 0; l < row->nlev; l++) {
        const web_ivl *v = &row->lev[l];
        web_ivl_spans(v, from[l], to[l], ri->s + n, ri->e + n); /* then kept in place */
        for (uint32_t i = from[l], at = n; i < to[l]; i++, at++) {
            if (!web_span_in(ri->s[at], ri->e[at], q->t0, q->t1))
                continue;
            ri->k[n] = web_ivl_item(v, i);
            ri->s[n] = ri->s[at];
            ri->e[n] = ri->e[at];
            ri->z[n++] = (uint8_t)l;
        }
    }
    ri->n = n;
}

#define GATHER_AHEAD 12 /* records asked for ahead of the one read */

/* items_gather: the kind's own columns of the listed records, in one pass over them: kernels
 * launch, stretch (into ri->x), verdict; copies type, kind, bytes; API calls and NVTX ranges the
 * index of the name in the row's "names"; into ri->col (column c at c * n). */
static void items_gather(const tl_query *q, row_items *ri)
{
    const web_runix *r = q->r;
    const store_run *run = r->run;
    const uint32_t *k = ri->k, n = ri->n;
    int64_t *c0 = ri->col, *c1 = ri->col + n, *c2 = ri->col + 2 * (size_t)n;
    switch (ri->row->kind) {
    case WEB_ROW_KERNELS: {
        const float *stretch = analysis_stretch(r->an);
        uint64_t hint = 0; /* a level's kernels come by start */
        for (uint32_t i = 0; i < n; i++) {
            if (i + GATHER_AHEAD < n) {
                __builtin_prefetch(&run->kernels[k[i + GATHER_AHEAD]]);
                __builtin_prefetch(&stretch[k[i + GATHER_AHEAD]]);
            }
            const store_kernel *kr = &run->kernels[k[i]];
            c0[i] = kr->launch;
            ri->x[i] = stretch[k[i]];
            c2[i] = web_window_verdict(web_kernel_window_from(r, ri->row->slot, kr, &hint));
        }
        break;
    }
    case WEB_ROW_COPIES:
        for (uint32_t i = 0; i < n; i++) {
            if (i + GATHER_AHEAD < n)
                __builtin_prefetch(&run->copies[k[i + GATHER_AHEAD]]);
            const store_copy *c = &run->copies[k[i]];
            c0[i] = c->type;
            c1[i] = c->kind;
            c2[i] = (int64_t)c->bytes;
        }
        break;
    case WEB_ROW_API:
        for (uint32_t i = 0; i < n; i++) {
            if (i + GATHER_AHEAD < n)
                __builtin_prefetch(&run->apis[k[i + GATHER_AHEAD]].name);
            c0[i] = name_index(ri, run->apis[k[i]].name);
        }
        break;
    default:
        for (uint32_t i = 0; i < n; i++) {
            if (i + GATHER_AHEAD < n)
                __builtin_prefetch(&run->ranges[k[i + GATHER_AHEAD]].name);
            c0[i] = name_index(ri, run->ranges[k[i]].name);
        }
        break;
    }
}

/* item_column: column c of the listed records into v (n values). Columns: 'i' id, 's' start, 'd'
 * duration, 'z' level, then per kind: kernels 'l' launch, 'x' stretch (written from ri->x), 'v'
 * verdict; copies 't' type, 'k' kind, 'b' bytes; API calls and NVTX ranges 'n' the index of the
 * name in the row's "names" (the kind's columns gathered by items_gather(), in this order). */
static void item_column(const tl_query *q, const row_items *ri, char c, int64_t *v)
{
    static const char *const own[WEB_NROW_KINDS] = {"lxv", "tkb", "n", "n"};
    uint32_t n = ri->n;
    switch (c) {
    case 'i':
        for (uint32_t i = 0; i < n; i++)
            v[i] = ri->k[i];
        break;
    case 's':
        for (uint32_t i = 0; i < n; i++)
            v[i] = ri->s[i] - q->r->origin;
        break;
    case 'd':
        for (uint32_t i = 0; i < n; i++)
            v[i] = ri->e[i] > ri->s[i] ? ri->e[i] - ri->s[i] : 0;
        break;
    case 'z':
        for (uint32_t i = 0; i < n; i++)
            v[i] = ri->z[i];
        break;
    default: {
        const int64_t *src =
            ri->col + (size_t)(strchr(own[ri->row->kind], c) - own[ri->row->kind]) * n;
        memcpy(v, src, sizeof *v * n);
    }
    }
}

/* name_text: the text of string sid of run ctx as the page shows it ("" out of range). */
static const char *name_text(const void *ctx, uint32_t sid)
{
    const store_run *run = ctx;
    const store_string *str = sid < run->nstrings ? &run->strings[sid] : NULL;
    return str ? str->demangled : "";
}

/* emit_items: the row's records in range one by one (list positions from[l] to to[l] of each
 * level may hold them), as parallel arrays. */
static void emit_items(const tl_query *q, const web_row *row, const uint32_t *from,
                       const uint32_t *to)
{
    static const char *const cols[WEB_NROW_KINDS] = {"isdlxv", "isdtkb", "isdzn", "isdzn"};
    web_out *o = q->o;
    web_buf *b = o->b;
    const store_run *run = q->r->run;
    uint64_t m = 1; /* positions to read: the records in range, and a few that ended before */
    for (uint32_t l = 0; l < row->nlev; l++)
        m += to[l] - from[l];
    row_items ri = {.row = row};
    int64_t *v = NULL;
    ri.k = malloc(sizeof *ri.k * m);
    ri.s = malloc(sizeof *ri.s * m);
    ri.e = malloc(sizeof *ri.e * m);
    ri.z = malloc(m);
    ri.col = malloc(sizeof *ri.col * 3 * m);
    v = malloc(sizeof *v * m);
    ri.x = row->kind == WEB_ROW_KERNELS ? malloc(sizeof *ri.x * m) : NULL;
    if (!ri.k || !ri.s || !ri.e || !ri.z || !ri.col || !v ||
        (row->kind == WEB_ROW_KERNELS && !ri.x)) {
        b->failed = 1;
        goto done;
    }
    if (web_kind_threaded(row->kind)) { /* m names at most */
        ri.cap = 16;
        while (ri.cap < 2 * m)
            ri.cap *= 2;
        ri.key = malloc(sizeof *ri.key * ri.cap);
        ri.val = malloc(sizeof *ri.val * ri.cap);
        ri.names = malloc(sizeof *ri.names * m);
        if (!ri.key || !ri.val || !ri.names) {
            b->failed = 1;
            goto done;
        }
        memset(ri.key, 0xff, sizeof *ri.key * ri.cap);
    }
    items_collect(q, &ri, from, to);
    items_gather(q, &ri);
    web_buf_str(b, row->kind == WEB_ROW_KERNELS ? ",\"mode\":\"kernels\"" : ",\"mode\":\"items\"");
    for (const char *c = cols[row->kind]; *c; c++) {
        web_buf_str(b, ",\"");
        if (*c == 'i' || *c == 'n') /* "id" and "name", the others one letter */
            web_buf_str(b, *c == 'i' ? "id" : "name");
        else
            web_buf_raw(b, c, 1);
        web_buf_str(b, "\":");
        if (*c == 'x') {
            web_out_num4(o, ri.x, ri.n);
            continue;
        }
        item_column(q, &ri, *c, v);
        if (*c == 's')
            web_out_times(o, v, ri.n, q->rel0);
        else
            web_out_ints(o, v, ri.n);
    }
    if (ri.names) {
        web_buf_str(b, ",\"names\":");
        web_out_names(o, ri.names, ri.nnames, name_text, run);
    }
done:
    free(ri.k);
    free(ri.s);
    free(ri.e);
    free(ri.z);
    free(ri.col);
    free(v);
    free(ri.x);
    free(ri.key);
    free(ri.val);
    free(ri.names);
}

static void emit_row(const tl_query *q, uint32_t ri)
{
    const web_runix *r = q->r;
    const web_row *row = &r->rows[ri];
    web_out *o = q->o;
    web_buf *b = o->b;
    uint32_t W = q->width, from[WEB_DEPTH_MAX], to[WEB_DEPTH_MAX];
    uint64_t n = 0;
    for (uint32_t l = 0; l < row->nlev; l++) {
        web_ivl_pt pa = web_ivl_at(&row->lev[l], q->t0), pb = web_ivl_at(&row->lev[l], q->t1);
        n += pb.pos - pa.pos + pa.running;
        from[l] = web_ivl_scan_from(&row->lev[l], q->t0);
        to[l] = pb.pos;
    }
    web_buf_str(b, "{\"row\":");
    web_buf_i64(b, ri);
    web_buf_str(b, ",\"n\":");
    web_buf_i64(b, (int64_t)n);
    if (n <= q->kmax) {
        emit_items(q, row, from, to);
        web_buf_ch(b, '}');
        return;
    }
    web_buf_str(b, ",\"mode\":\"bins\",");
    if (web_kind_threaded(row->kind)) { /* a count and a busy share per level */
        web_buf_str(b, "\"levels\":[");
        for (uint32_t l = 0; l < row->nlev; l++) {
            level_bins(q, &row->lev[l], from[l], to[l]);
            web_buf_str(b, l ? ",{\"count\":" : "{\"count\":");
            web_out_ints(o, q->a, W);
            web_buf_str(b, ",\"busy\":");
            web_out_ints(o, q->c, W);
            web_buf_ch(b, '}');
        }
        web_buf_str(b, "]}");
        return;
    }
    level_bins(q, &row->lev[0], from[0], to[0]);
    web_buf_str(b, "\"count\":");
    web_out_ints(o, q->a, W);
    web_buf_str(b, ",\"busy\":");
    web_out_ints(o, q->c, W);
    if (row->kind == WEB_ROW_KERNELS) { /* the lane's verdict where the row has a kernel */
        const int8_t *lv = q->lane_verdict + (size_t)row->slot * W;
        for (uint32_t j = 0; j < W; j++)
            q->c[j] = q->a[j] > 0 && row->slot < r->nlanes ? lv[j] : -1;
        web_buf_str(b, ",\"verdict\":");
        web_out_ints(o, q->c, W);
    }
    web_buf_ch(b, '}');
}

/* ---------------------------------------------------------------- the answer cache */

#define CACHE_ENTRIES 64            /* answers kept at most */
#define CACHE_BYTES (32u << 20)     /* their bytes at most */
#define CACHE_ONE (CACHE_BYTES / 8) /* a larger answer is not kept */
#define CACHE_PENDING 64            /* answers being computed, noted so that the same query waits */

typedef struct tl_key {
    int64_t t0, t1;
    uint32_t width, kmax, nrows; /* nrows: bytes of rowsel, 0 for every row */
    int compact;
    unsigned run_id;
    uint64_t hash; /* of the above and rowsel */
} tl_key;

typedef struct tl_entry {
    tl_key key;
    uint8_t *rowsel; /* key.nrows flags (owned) */
    web_blob *body;  /* the answer (one reference), NULL: a free entry */
    uint64_t used;   /* the tick of its last use */
} tl_entry;

/* An answer being computed: a request for the same query waits for it (cache_claim()) instead of
 * computing it again, as the same view asked by many clients at once would be. */
typedef struct tl_pending {
    tl_key key;
    const uint8_t *rowsel; /* key.nrows flags, the computing request's (borrowed) */
    int busy;              /* the slot is taken */
} tl_pending;

struct web_tl_cache {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* broadcast when a pending answer is done (cached or not) */
    tl_entry e[CACHE_ENTRIES];
    tl_pending p[CACHE_PENDING];
    size_t bytes;      /* held by the bodies */
    uint64_t tick;     /* counts lookups */
    uint64_t computed; /* answers computed for the cache (web_tl_cache_computed()) */
};

web_tl_cache *web_tl_cache_new(void)
{
    web_tl_cache *c = calloc(1, sizeof *c);
    if (c) {
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->ready, NULL);
    }
    return c;
}

void web_tl_cache_free(web_tl_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        web_blob_release(c->e[i].body);
        free(c->e[i].rowsel);
    }
    pthread_cond_destroy(&c->ready);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static tl_key make_key(unsigned run_id, int64_t t0, int64_t t1, uint32_t width, uint32_t kmax,
                       const uint8_t *rowsel, uint32_t nrows, int compact)
{
    tl_key k = {t0, t1, width, kmax, rowsel ? nrows : 0, compact, run_id, 0};
    uint64_t h = 0xcbf29ce484222325ULL;
    int64_t v[7] = {t0, t1, width, kmax, k.nrows, compact, run_id};
    h = fnv(h, v, sizeof v);
    k.hash = rowsel ? fnv(h, rowsel, nrows) : h;
    return k;
}

/* Whether key a with row flags ra is key b with row flags rb. */
static int key_equal(const tl_key *a, const uint8_t *ra, const tl_key *b, const uint8_t *rb)
{
    return a->hash == b->hash && a->t0 == b->t0 && a->t1 == b->t1 && a->width == b->width &&
           a->kmax == b->kmax && a->nrows == b->nrows && a->compact == b->compact &&
           a->run_id == b->run_id && (!b->nrows || !memcmp(ra, rb, b->nrows));
}

static int same_key(const tl_entry *e, const tl_key *k, const uint8_t *rowsel)
{
    return e->body && key_equal(&e->key, e->rowsel, k, rowsel);
}

static int same_pending(const tl_pending *p, const tl_key *k, const uint8_t *rowsel)
{
    return p->busy && key_equal(&p->key, p->rowsel, k, rowsel);
}

/* cache_claim: the cached answer of key k, held (web_blob_release() it). When another request is
 * computing it, waits for it first, its turn given back (web_gate_give_back(): waiting is no work).
 * NULL when not there: then the caller computes it, noted as pending in *pSlot (-1 when every
 * slot is taken) until cache_done(). */
static web_blob *cache_claim(web_tl_cache *c, const tl_key *k, const uint8_t *rowsel, int *pSlot)
{
    web_blob *found = NULL;
    *pSlot = -1;
    pthread_mutex_lock(&c->lock);
    c->tick++;
    for (;;) {
        for (int i = 0; i < CACHE_ENTRIES && !found; i++)
            if (same_key(&c->e[i], k, rowsel)) {
                c->e[i].used = c->tick;
                found = c->e[i].body;
                web_blob_hold(found);
            }
        int pending = 0;
        for (int i = 0; i < CACHE_PENDING && !found && !pending; i++)
            pending = same_pending(&c->p[i], k, rowsel);
        if (found || !pending)
            break;
        web_gate_give_back();
        pthread_cond_wait(&c->ready, &c->lock);
    }
    for (int i = 0; i < CACHE_PENDING && !found && *pSlot < 0; i++)
        if (!c->p[i].busy) {
            c->p[i] = (tl_pending){*k, rowsel, 1};
            *pSlot = i;
            c->computed++;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* cache_done: the answer of pending slot `slot` (-1: none) is cached, or will not be: the requests
 * waiting for it look again. */
static void cache_done(web_tl_cache *c, int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&c->lock);
    c->p[slot].busy = 0;
    pthread_cond_broadcast(&c->ready);
    pthread_mutex_unlock(&c->lock);
}

uint64_t web_tl_cache_computed(web_tl_cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->computed;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* cache_drop_lru: frees the least recently used answer (the cache holds one at least). */
static void cache_drop_lru(web_tl_cache *c)
{
    int lru = -1;
    for (int i = 0; i < CACHE_ENTRIES; i++)
        if (c->e[i].body && (lru < 0 || c->e[i].used < c->e[lru].used))
            lru = i;
    c->bytes -= c->e[lru].body->len;
    web_blob_release(c->e[lru].body); /* freed once the replies sending it are done */
    free(c->e[lru].rowsel);
    c->e[lru].body = NULL;
    c->e[lru].rowsel = NULL;
}

/* cache_put: keeps the answer `answer` of key k (one more reference on it), dropping the least
 * recently used answers to make room (nothing when out of memory, too large, or already there). */
static void cache_put(web_tl_cache *c, const tl_key *k, const uint8_t *rowsel, web_blob *answer)
{
    size_t len = answer->len;
    if (len > CACHE_ONE)
        return;
    uint8_t *sel = k->nrows ? malloc(k->nrows) : NULL;
    if (k->nrows && !sel)
        return;
    web_blob *body = answer;
    web_blob_hold(body);
    if (k->nrows)
        memcpy(sel, rowsel, k->nrows);
    pthread_mutex_lock(&c->lock);
    int held = 0, slot = -1;
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        if (same_key(&c->e[i], k, rowsel)) { /* another thread answered it first */
            web_blob_release(body), free(sel);
            body = NULL;
            break;
        }
        held += c->e[i].body != NULL;
    }
    while (body && held && (held == CACHE_ENTRIES || c->bytes + len > CACHE_BYTES)) {
        cache_drop_lru(c);
        held--;
    }
    for (int i = 0; body && i < CACHE_ENTRIES && slot < 0; i++)
        if (!c->e[i].body)
            slot = i;
    if (slot >= 0) {
        c->e[slot] = (tl_entry){*k, sel, body, ++c->tick};
        c->bytes += len;
    }
    pthread_mutex_unlock(&c->lock);
}

/* hand_over: web_timeline()'s answer (held) to its caller: as is into *pAnswer, else appended to b
 * and let go. 0 or WEB_ENOMEM. */
static int hand_over(web_blob *answer, web_buf *b, web_blob **pAnswer)
{
    if (pAnswer) {
        *pAnswer = answer;
        return WEB_OK;
    }
    web_buf_raw(b, answer->data, answer->len);
    web_blob_release(answer);
    return b->failed ? WEB_ENOMEM : WEB_OK;
}

int web_timeline(const web_runix *r, unsigned run_id, int64_t t0, int64_t t1, uint32_t width,
                 uint32_t kmax, const uint8_t *rowsel, int compact, web_buf *b, web_blob **pAnswer)
{
    /* answers are kept once every lane's concurrency grid is settled (before, a wide range may
     * be pending or profiled otherwise) */
    int cacheable = r->cache != NULL;
    for (uint32_t i = 0; i < r->nlanes && cacheable; i++)
        cacheable = __atomic_load_n(&r->lanes[i].grid_state, __ATOMIC_ACQUIRE) != 0;
    tl_key key = make_key(run_id, t0, t1, width, kmax, rowsel, r->nrows, compact);
    int pending = -1; /* the cache's note that this request computes the answer */
    web_blob *answer = cacheable ? cache_claim(r->cache, &key, rowsel, &pending) : NULL;
    if (answer)
        return hand_over(answer, b, pAnswer);
    size_t nsel = 0;
    for (uint32_t i = 0; i < r->nrows; i++)
        nsel += !rowsel || rowsel[i];
    /* written after room for a blob's header, so that the answer becomes the blob the cache and
     * the reply share without a copy (of ~300 KiB); about what a binned row and a lane take (a
     * listed row takes less at kmax = width) */
    web_buf body = {0}, header = {0};
    web_buf_room(&body,
                 WEB_BLOB_HEAD + 4096 +
                     (size_t)width * (nsel * (compact ? 6 : 14) + r->nlanes * (compact ? 12 : 36)));
    web_buf_reserve(&body, WEB_BLOB_HEAD);
    web_out o;
    web_out_begin(&o, &body, &header, compact);
    tl_query q = {.r = r,
                  .t0 = r->origin + t0,
                  .t1 = r->origin + t1,
                  .rel0 = t0,
                  .width = width,
                  .kmax = kmax,
                  .o = &o};
    size_t w1 = (size_t)width + 1;
    q.T = malloc(sizeof *q.T * w1);
    q.lane_verdict = malloc((size_t)(r->nlanes ? r->nlanes : 1) * width);
    q.a = malloc(sizeof *q.a * w1);
    q.c = malloc(sizeof *q.c * w1);
    q.cover = malloc(sizeof *q.cover * w1);
    q.vns = malloc(sizeof *q.vns * (ANALYSIS_NVERDICTS + 1) * width);
    q.f = malloc(sizeof *q.f * width);
    q.bins = malloc(sizeof *q.bins * width);
    q.pts = malloc(sizeof *q.pts * w1);
    q.inv = malloc(sizeof *q.inv * width);
    int rc = WEB_ENOMEM;
    if (!q.T || !q.lane_verdict || !q.a || !q.c || !q.cover || !q.vns || !q.f || !q.bins ||
        !q.pts || !q.inv)
        goto out;
    /* pixel j is [T[j], T[j + 1]): integer ns, as analysis_profile_bins() cuts its bins:
     * t0 + floor(span * j / width), here without dividing (span = whole * width + part) */
    uint64_t span = (uint64_t)q.t1 - (uint64_t)q.t0, whole = span / width, part = span % width;
    uint64_t extra = 0, acc = 0; /* floor(part * j / width) and its remainder */
    for (uint32_t j = 0; j <= width; j++) {
        q.T[j] = q.t0 + (int64_t)(whole * j + extra);
        if ((acc += part) >= width)
            acc -= width, extra++;
    }
    for (uint32_t j = 0; j < width; j++)
        q.inv[j] = q.T[j + 1] > q.T[j] ? 1.0 / (double)(q.T[j + 1] - q.T[j]) : 0;
    web_buf_str(o.b, "{\"run\":");
    web_buf_i64(o.b, run_id);
    web_buf_str(o.b, ",\"t0\":");
    web_buf_i64(o.b, t0);
    web_buf_str(o.b, ",\"t1\":");
    web_buf_i64(o.b, t1);
    web_buf_str(o.b, ",\"width\":");
    web_buf_i64(o.b, width);
    web_buf_str(o.b, ",\"lanes\":[");
    for (uint32_t i = 0; i < r->nlanes; i++) {
        if (i)
            web_buf_ch(o.b, ',');
        emit_lane(&q, i);
    }
    web_buf_str(o.b, "],\"rows\":[");
    int first = 1;
    for (uint32_t i = 0; i < r->nrows; i++) {
        if (rowsel && !rowsel[i])
            continue;
        if (!first)
            web_buf_ch(o.b, ',');
        first = 0;
        emit_row(&q, i);
    }
    web_buf_ch(o.b, ']');
    web_out_strings(&o, name_text, r->run);
    web_buf_ch(o.b, '}');
    rc = web_out_finish(&o);
    if (rc == WEB_OK && !(answer = web_blob_from_buf(&body)))
        rc = WEB_ENOMEM;
    if (answer && cacheable)
        cache_put(r->cache, &key, rowsel, answer);
out:
    if (cacheable)
        cache_done(r->cache, pending);
    free(body.s); /* when not made a blob */
    free(q.T);
    free(q.lane_verdict);
    free(q.a);
    free(q.c);
    free(q.cover);
    free(q.vns);
    free(q.f);
    free(q.bins);
    free(q.pts);
    free(q.inv);
    web_out_free(&o);
    free(header.s);
    if (rc != WEB_OK) {
        if (pAnswer)
            *pAnswer = NULL;
        return rc;
    }
    return hand_over(answer, b, pAnswer);
}
