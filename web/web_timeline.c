/* web_timeline.c: GET /api/timeline, the viewport query. For each requested row (kernels, copies,
 * API calls or NVTX ranges) it returns the records overlapping [t0, t1) when there are few enough
 * to draw one by one, else per-pixel aggregates (count, busy share; for kernels the dominant
 * verdict; for nested rows per level); per lane it returns the concurrency profile and the
 * dominant verdict per pixel, and the overlap windows with their evidence when few. The cost
 * depends on the width in pixels, the rows and the records returned, not on the size of the run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define WINDOWS_MAX_LIST 4000 /* overlap windows listed one by one up to this many per lane */
#define DIRECT_MAX 300000     /* kernels profiled directly per query without the grid */
#define SNAP_BUCKETS 8 /* pixel edges snap to the row grid when a pixel spans this many buckets */

typedef struct tl_query {
    const web_runix *r;
    int64_t t0, t1;       /* absolute ns (common axis) */
    uint32_t width;       /* pixels */
    uint32_t kmax;        /* kernels per row listed one by one at most */
    int64_t *T;           /* width + 1 pixel edges, absolute */
    int8_t *lane_verdict; /* nlanes x width: dominant verdict per pixel */
} tl_query;

static void emit_i64_array(web_buf *b, const int64_t *v, uint32_t n)
{
    web_buf_ch(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            web_buf_ch(b, ',');
        web_buf_i64(b, v[i]);
    }
    web_buf_ch(b, ']');
}

/* lane_verdicts: per pixel, the verdict holding most of the pixel's overlap time (overlap verdicts
 * win over SOLO/IDLE whenever any overlap is there, so short overlaps stay visible when zoomed
 * out); also the overlap share in permille. Each verdict's windows are read at the pixel edges:
 * the time of verdict v in pixel j is the difference of its busy time before both edges. */
static void lane_verdicts(const tl_query *q, const web_lane *l, int8_t *verdict, int64_t *overlap)
{
    int64_t prev[ANALYSIS_NVERDICTS], t[ANALYSIS_NVERDICTS];
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        prev[v] = l->win[v].n ? web_ivl_at(&l->win[v], q->T[0]).busy : 0;
    for (uint32_t j = 0; j < q->width; j++) {
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++) {
            if (!l->win[v].n) {
                t[v] = 0;
                continue;
            }
            int64_t cur = web_ivl_at(&l->win[v], q->T[j + 1]).busy;
            t[v] = cur - prev[v];
            prev[v] = cur;
        }
        int best = -1;
        int64_t best_ns = 0, ov = 0;
        for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
            ov += t[v];
            if (t[v] > best_ns) {
                best_ns = t[v];
                best = v;
            }
        }
        if (best < 0)
            best = t[ANALYSIS_SOLO] > 0 ? ANALYSIS_SOLO : t[ANALYSIS_IDLE] > 0 ? ANALYSIS_IDLE : -1;
        int64_t px = q->T[j + 1] - q->T[j];
        verdict[j] = (int8_t)best;
        overlap[j] = px > 0 ? (ov * 1000 + px / 2) / px : 0;
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
 * its bins, else computed on demand by the analysis over the (then small) range. Without the
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
    if (state != 1 || !l->grid || px < 4.0 * (double)l->gw) {
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

static void emit_lane(web_buf *b, const tl_query *q, uint32_t slot, int64_t *scratch,
                      analysis_bin *bins)
{
    const web_lane *l = &q->r->lanes[slot];
    int8_t *verdict = q->lane_verdict + (size_t)slot * q->width;
    lane_verdicts(q, l, verdict, scratch);
    web_buf_str(b, "{\"lane\":");
    web_buf_i64(b, slot);
    web_buf_str(b, ",\"verdict\":[");
    for (uint32_t j = 0; j < q->width; j++) {
        if (j)
            web_buf_ch(b, ',');
        web_buf_i64(b, verdict[j]);
    }
    web_buf_str(b, "],\"overlap\":");
    emit_i64_array(b, scratch, q->width);
    int conc = lane_concurrency(q, l, slot, bins);
    if (conc == 1)
        web_buf_str(b, ",\"conc_pending\":true");
    if (conc == 0) {
        web_buf_str(b, ",\"conc_max\":[");
        for (uint32_t j = 0; j < q->width; j++) {
            if (j)
                web_buf_ch(b, ',');
            web_buf_i64(b, bins[j].max_processes);
        }
        web_buf_str(b, "],\"conc_mean\":[");
        for (uint32_t j = 0; j < q->width; j++) {
            if (j)
                web_buf_ch(b, ',');
            web_buf_fixed2(b, bins[j].mean_processes);
        }
        web_buf_str(b, "],\"busy\":[");
        for (uint32_t j = 0; j < q->width; j++) {
            if (j)
                web_buf_ch(b, ',');
            web_buf_i64(b, (int64_t)lround(bins[j].busy * 1000));
        }
        web_buf_ch(b, ']');
    }
    /* effective parallelism per pixel (web_range.c) */
    web_buf_str(b, ",\"par\":[");
    for (uint32_t j = 0; j < q->width; j++) {
        if (j)
            web_buf_ch(b, ',');
        web_buf_fixed2(b, web_lane_parallelism(q->r, slot, q->T[j], q->T[j + 1]));
    }
    web_buf_ch(b, ']');
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
        int first = 1;
        web_buf_str(b, ",\"windows\":[");
        for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
            for (uint32_t i = from[v]; i < to[v]; i++) {
                uint32_t wi = web_ivl_item(&l->win[v], i);
                const analysis_window *w = &all[l->dev->first_window + wi];
                if (w->t1 <= q->t0)
                    continue;
                web_buf_str(b, first ? "[" : ",[");
                first = 0;
                web_buf_i64(b, (int64_t)(l->dev->first_window + wi));
                web_buf_ch(b, ',');
                web_buf_i64(b, w->t0 - q->r->origin);
                web_buf_ch(b, ',');
                web_buf_i64(b, w->t1 - q->r->origin);
                web_buf_ch(b, ',');
                web_buf_i64(b, w->verdict);
                web_buf_ch(b, ']');
            }
        }
        web_buf_ch(b, ']');
    }
    web_buf_ch(b, '}');
}

/* The records of one row listed one by one: per level, the list positions that may overlap the
 * range (from, to) and what each column is. */
typedef struct row_items {
    const web_row *row;
    uint32_t from[WEB_DEPTH_MAX], to[WEB_DEPTH_MAX];
    /* API and NVTX rows: each distinct name once per row (a call's name repeats thousands of
     * times): an open-addressing table from the run's string index to the row's name index */
    uint32_t *key, *val; /* cap entries (key UINT32_MAX: free) */
    uint32_t cap, nnames;
    store_idx *names; /* the row's names, by name index */
} row_items;

/* item_name: the run's string index of the name of record k of an API or NVTX row. */
static store_idx item_name(const store_run *run, int kind, uint32_t k)
{
    return kind == WEB_ROW_API ? run->apis[k].name : run->ranges[k].name;
}

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

/* emit_column: column c of every record of the row drawn in the query's range, level by level
 * (within a level by start). Columns: 'i' id, 's' start, 'd' duration, 'z' level, then per kind:
 * kernels 'l' launch, 'x' stretch, 'v' verdict; copies 't' type, 'k' kind, 'b' bytes; API calls
 * and NVTX ranges 'n' the index of the name in the row's "names" (the columns "id" and "name",
 * the others named by their letter). */
static void emit_column(web_buf *b, const tl_query *q, row_items *ri, char c)
{
    const web_runix *r = q->r;
    const web_row *row = ri->row;
    const web_items *it = &r->items[row->kind];
    const store_run *run = r->run;
    int first = 1;
    for (uint32_t l = 0; l < row->nlev; l++) {
        const web_ivl *v = &row->lev[l];
        for (uint32_t i = ri->from[l]; i < ri->to[l]; i++) {
            uint32_t k = web_ivl_item(v, i);
            int64_t s = web_item_start(it, k), e = web_item_end(it, k);
            if (!web_span_in(s, e, q->t0, q->t1))
                continue;
            if (!first)
                web_buf_ch(b, ',');
            first = 0;
            switch (c) {
            case 'i': web_buf_i64(b, k); break;
            case 's': web_buf_i64(b, s - r->origin); break;
            case 'd': web_buf_i64(b, e > s ? e - s : 0); break;
            case 'z': web_buf_i64(b, l); break;
            case 'l': web_buf_i64(b, run->kernels[k].launch); break;
            case 'x': web_buf_num(b, analysis_stretch(r->an)[k]); break;
            case 'v': web_buf_i64(b, web_kernel_verdict(r, row->slot, &run->kernels[k])); break;
            case 't': web_buf_i64(b, run->copies[k].type); break;
            case 'k': web_buf_i64(b, run->copies[k].kind); break;
            case 'b': web_buf_i64(b, (int64_t)run->copies[k].bytes); break;
            default: web_buf_i64(b, name_index(ri, item_name(run, row->kind, k))); break; /* 'n' */
            }
        }
    }
}

/* level_points: what level v of a row holds before each pixel edge. When a pixel spans
 * SNAP_BUCKETS buckets or more, its edges are read at the nearest bucket start (moved by at most
 * 1/(2 * SNAP_BUCKETS) pixel): no scan, a few cache misses per edge. */
static void level_points(const tl_query *q, const web_ivl *v, web_ivl_pt *pts)
{
    int snap = (double)(q->t1 - q->t0) / q->width >= (double)SNAP_BUCKETS * (double)v->bw;
    for (uint32_t j = 0; j <= q->width; j++)
        pts[j] = snap ? web_ivl_at_grid(v, q->T[j]) : web_ivl_at(v, q->T[j]);
}

/* emit_level_bins: "count":[..],"busy":[..] of one level per pixel (pts from level_points). */
static void emit_level_bins(web_buf *b, const tl_query *q, const web_ivl_pt *pts)
{
    web_buf_str(b, "\"count\":[");
    for (uint32_t j = 0; j < q->width; j++) {
        if (j)
            web_buf_ch(b, ',');
        web_buf_i64(b, (int64_t)(pts[j + 1].pos - pts[j].pos + pts[j].running));
    }
    web_buf_str(b, "],\"busy\":[");
    for (uint32_t j = 0; j < q->width; j++) {
        int64_t px = q->T[j + 1] - q->T[j], busy = pts[j + 1].busy - pts[j].busy;
        int64_t pm = px > 0 ? (busy * 1000 + px - 1) / px : 0;
        if (j)
            web_buf_ch(b, ',');
        web_buf_i64(b, pm > 1000 ? 1000 : pm);
    }
    web_buf_ch(b, ']');
}

static void emit_row(web_buf *b, const tl_query *q, uint32_t ri, web_ivl_pt *pts)
{
    const web_runix *r = q->r;
    const web_row *row = &r->rows[ri];
    row_items items = {.row = row};
    uint64_t n = 0;
    for (uint32_t l = 0; l < row->nlev; l++) {
        web_ivl_pt pa = web_ivl_at(&row->lev[l], q->t0), pb = web_ivl_at(&row->lev[l], q->t1);
        n += pb.pos - pa.pos + pa.running;
        items.from[l] = web_ivl_scan_from(&row->lev[l], q->t0);
        items.to[l] = pb.pos;
    }
    web_buf_str(b, "{\"row\":");
    web_buf_i64(b, ri);
    web_buf_str(b, ",\"n\":");
    web_buf_i64(b, (int64_t)n);
    if (n <= q->kmax) {
        static const char *const cols[WEB_NROW_KINDS] = {"isdlxv", "isdtkb", "isdzn", "isdzn"};
        const char *col = cols[row->kind];
        web_buf_str(b,
                    row->kind == WEB_ROW_KERNELS ? ",\"mode\":\"kernels\"" : ",\"mode\":\"items\"");
        if (web_kind_threaded(row->kind)) { /* n <= kmax names at most */
            items.cap = 16;
            while (items.cap < 2 * n)
                items.cap *= 2;
            items.key = malloc(sizeof *items.key * items.cap);
            items.val = malloc(sizeof *items.val * items.cap);
            items.names = malloc(sizeof *items.names * (n ? n : 1));
            if (!items.key || !items.val || !items.names) {
                b->failed = 1;
                goto done;
            }
            memset(items.key, 0xff, sizeof *items.key * items.cap);
        }
        for (const char *c = col; *c; c++) {
            web_buf_str(b, ",\"");
            if (*c == 'i' || *c == 'n') /* "id" and "name", the others one letter */
                web_buf_str(b, *c == 'i' ? "id" : "name");
            else
                web_buf_raw(b, c, 1);
            web_buf_str(b, "\":[");
            emit_column(b, q, &items, *c);
            web_buf_ch(b, ']');
        }
        if (items.names) {
            web_buf_str(b, ",\"names\":[");
            for (uint32_t i = 0; i < items.nnames; i++) {
                const store_string *str =
                    items.names[i] < r->run->nstrings ? &r->run->strings[items.names[i]] : NULL;
                if (i)
                    web_buf_ch(b, ',');
                web_buf_json_str(b, str ? (str->demangled ? str->demangled : str->text) : "");
            }
            web_buf_ch(b, ']');
        }
        web_buf_ch(b, '}');
    done:
        free(items.key);
        free(items.val);
        free(items.names);
        return;
    }
    web_buf_str(b, ",\"mode\":\"bins\",");
    if (web_kind_threaded(row->kind)) { /* a count and a busy share per level */
        web_buf_str(b, "\"levels\":[");
        for (uint32_t l = 0; l < row->nlev; l++) {
            level_points(q, &row->lev[l], pts);
            web_buf_str(b, l ? ",{" : "{");
            emit_level_bins(b, q, pts);
            web_buf_ch(b, '}');
        }
        web_buf_str(b, "]}");
        return;
    }
    level_points(q, &row->lev[0], pts);
    emit_level_bins(b, q, pts);
    if (row->kind == WEB_ROW_KERNELS) {
        const int8_t *lv = q->lane_verdict + (size_t)row->slot * q->width;
        web_buf_str(b, ",\"verdict\":[");
        for (uint32_t j = 0; j < q->width; j++) {
            int busy =
                pts[j + 1].busy > pts[j].busy || pts[j + 1].pos > pts[j].pos || pts[j].running;
            if (j)
                web_buf_ch(b, ',');
            web_buf_i64(b, busy && row->slot < r->nlanes ? lv[j] : -1);
        }
        web_buf_ch(b, ']');
    }
    web_buf_ch(b, '}');
}

int web_timeline(const web_runix *r, unsigned run_id, int64_t t0, int64_t t1, uint32_t width,
                 uint32_t kmax, const uint8_t *rowsel, web_buf *b)
{
    tl_query q = {.r = r, .t0 = r->origin + t0, .t1 = r->origin + t1, .width = width, .kmax = kmax};
    q.T = malloc(sizeof *q.T * (width + 1));
    q.lane_verdict = malloc((size_t)(r->nlanes ? r->nlanes : 1) * width);
    int64_t *scratch = malloc(sizeof *scratch * width);
    analysis_bin *bins = malloc(sizeof *bins * width);
    web_ivl_pt *pts = malloc(sizeof *pts * (width + 1));
    int rc = WEB_ENOMEM;
    if (!q.T || !q.lane_verdict || !scratch || !bins || !pts)
        goto out;
    /* pixel j is [T[j], T[j + 1]): integer ns, as analysis_profile_bins() cuts its bins */
    uint64_t span = (uint64_t)q.t1 - (uint64_t)q.t0;
    for (uint32_t j = 0; j <= width; j++)
        q.T[j] = q.t0 + (int64_t)((unsigned __int128)span * j / width);
    web_buf_str(b, "{\"run\":");
    web_buf_i64(b, run_id);
    web_buf_str(b, ",\"t0\":");
    web_buf_i64(b, t0);
    web_buf_str(b, ",\"t1\":");
    web_buf_i64(b, t1);
    web_buf_str(b, ",\"width\":");
    web_buf_i64(b, width);
    web_buf_str(b, ",\"lanes\":[");
    for (uint32_t i = 0; i < r->nlanes; i++) {
        if (i)
            web_buf_ch(b, ',');
        emit_lane(b, &q, i, scratch, bins);
    }
    web_buf_str(b, "],\"rows\":[");
    int first = 1;
    for (uint32_t i = 0; i < r->nrows; i++) {
        if (rowsel && !rowsel[i])
            continue;
        if (!first)
            web_buf_ch(b, ',');
        first = 0;
        emit_row(b, &q, i, pts);
    }
    web_buf_str(b, "]}");
    rc = b->failed ? WEB_ENOMEM : WEB_OK;
out:
    free(q.T);
    free(q.lane_verdict);
    free(scratch);
    free(bins);
    free(pts);
    return rc;
}
