/* web_index.c: the per-run index built once at start so that viewport queries never walk the run:
 * one row per stream that ran kernels (grouped by lane = GPU, then process, context, stream) with
 * its kernels' indexes sorted by start and an interval grid over them; per lane, the analysis
 * windows split by verdict with a grid each, and a cached concurrency profile at fine resolution
 * for zoomed-out views. Memory: 4 B per kernel for the row arrays plus ~1 B per kernel of grids. */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define GRID_MAX 262144u      /* concurrency bins cached per lane (12 B each) */
#define PROFILE_CHUNK 1048576 /* profile segments read at once while indexing (16 MiB) */

/* row_cmp: rows by lane, process pid, context id, stream id (qsort_r with the run). */
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
    uint32_t ca = run->contexts[a->context].context_id, cb = run->contexts[b->context].context_id;
    if (ca != cb)
        return ca < cb ? -1 : 1;
    uint32_t sa = run->streams[a->stream].stream_id, sb = run->streams[b->stream].stream_id;
    return sa < sb ? -1 : sa > sb;
}

uint32_t web_kernel_lane(const web_runix *r, const store_kernel *k)
{
    return web_device_lane(r, store_kernel_device(r->run, k));
}

const analysis_window *web_kernel_window(const web_runix *r, uint32_t lane, const store_kernel *k)
{
    if (lane >= r->nlanes)
        return NULL;
    const analysis_device *dev = r->lanes[lane].dev;
    const analysis_window *w = analysis_windows(r->an) + dev->first_window;
    uint64_t lo = 0, hi = dev->nwindows; /* first window with t1 > k->start */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (w[mid].t1 <= k->start)
            lo = mid + 1;
        else
            hi = mid;
    }
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

/* build_rows: two passes over the kernels (sorted by start): count them per stream, then place
 * their ids in their row's slice while building every row's grid on the fly, so the 320 MB of a
 * 10M-kernel run are streamed twice instead of once per row. */
static int build_rows(web_runix *r)
{
    const store_run *run = r->run;
    size_t ns = run->nstreams ? run->nstreams : 1;
    uint32_t *count = calloc(ns, sizeof *count);
    int64_t *last = malloc(ns * sizeof *last);
    web_ivl_build_state *st = calloc(ns, sizeof *st);
    r->stream_row = malloc(sizeof *r->stream_row * ns);
    r->kidx = malloc(sizeof *r->kidx * (run->nkernels ? run->nkernels : 1));
    int rc = WEB_ENOMEM;
    if (!count || !last || !st || !r->stream_row || !r->kidx)
        goto out;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        count[run->kernels[i].stream]++;
        last[run->kernels[i].stream] = run->kernels[i].start;
    }
    for (uint32_t s = 0; s < run->nstreams; s++)
        r->nrows += count[s] > 0;
    r->rows = calloc(r->nrows ? r->nrows : 1, sizeof *r->rows);
    if (!r->rows)
        goto out;
    uint32_t n = 0;
    for (uint32_t s = 0; s < run->nstreams; s++) {
        if (!count[s])
            continue;
        web_row *row = &r->rows[n++];
        row->stream = s;
        row->context = run->streams[s].context;
        row->process = run->contexts[row->context].process;
        row->slot = web_device_lane(r, run->contexts[row->context].device);
        row->n = count[s];
    }
    qsort_r(r->rows, r->nrows, sizeof *r->rows, row_cmp, (void *)run);
    uint32_t off = 0;
    for (uint32_t i = 0; i < r->nrows; i++) {
        r->rows[i].off = off;
        off += r->rows[i].n;
        r->stream_row[r->rows[i].stream] = i;
    }
    /* a row's grid begins at its first kernel (rows are calloc'd: ivl.n is 0 until then) */
    for (uint64_t i = 0; i < run->nkernels; i++) {
        web_row *row = &r->rows[r->stream_row[run->kernels[i].stream]];
        if (row->ivl.n == 0) {
            if (web_ivl_begin(&row->ivl, run->kernels, sizeof *run->kernels, r->kidx + row->off,
                              row->n, run->kernels[i].start, last[row->stream]))
                goto out;
        }
        r->kidx[row->off + st[row->stream].pos] = (uint32_t)i;
        web_ivl_push(&row->ivl, &st[row->stream]);
    }
    for (uint32_t i = 0; i < r->nrows; i++)
        web_ivl_end_build(&r->rows[i].ivl, &st[r->rows[i].stream]);
    rc = WEB_OK;
out:
    free(count);
    free(last);
    free(st);
    return rc;
}

/* build_grid: the concurrency bins cached for zoomed-out views, one sweep of the analysis'
 * profile over the lane (the costliest part of the index: it runs after start, on the stats
 * thread, so that the first paint does not wait for it). */
static int build_grid(web_runix *r, web_lane *l)
{
    int64_t span = l->dev->t_end - l->dev->t_begin;
    if (span <= 0)
        return WEB_OK;
    uint64_t ng = l->dev->nkernels * 2 < GRID_MAX ? l->dev->nkernels * 2 : GRID_MAX;
    if (ng < 64)
        ng = 64;
    l->gw = (span + (int64_t)ng - 1) / (int64_t)ng;
    l->ngrid = (uint32_t)((span + l->gw - 1) / l->gw);
    l->g0 = l->dev->t_begin;
    l->grid = malloc(sizeof *l->grid * l->ngrid);
    if (!l->grid)
        return WEB_ENOMEM;
    uint32_t slot = (uint32_t)(l - r->lanes);
    if (analysis_profile_bins(r->an, slot, l->g0, l->g0 + (int64_t)l->ngrid * l->gw, l->grid,
                              l->ngrid) != ANALYSIS_OK)
        return WEB_ENOMEM;
    return WEB_OK;
}

/* build_lane: the lane's windows split by verdict, each with its interval grid. */
static int build_lane(web_runix *r, web_lane *l)
{
    const analysis_window *w = analysis_windows(r->an) + l->dev->first_window;
    uint32_t nw = (uint32_t)l->dev->nwindows, off[ANALYSIS_NVERDICTS + 1] = {0};
    l->widx = malloc(sizeof *l->widx * (nw ? nw : 1));
    if (!l->widx)
        return WEB_ENOMEM;
    for (uint32_t i = 0; i < nw; i++)
        off[w[i].verdict + 1]++;
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        off[v + 1] += off[v];
    uint32_t fill[ANALYSIS_NVERDICTS];
    memcpy(fill, off, sizeof fill);
    for (uint32_t i = 0; i < nw; i++)
        l->widx[fill[w[i].verdict]++] = i;
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        if (web_ivl_build(&l->win[v], w, sizeof *w, l->widx + off[v], off[v + 1] - off[v]))
            return WEB_ENOMEM;
    return WEB_OK;
}

int web_lane_levels(const web_runix *r, uint32_t slot, int64_t *ns_at)
{
    const web_lane *l = &r->lanes[slot];
    memset(ns_at, 0, sizeof *ns_at * WEB_CONC_LEVELS);
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
            ns_at[lv] += seg[i].t1 - seg[i].t0;
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
    if (build_rows(r))
        goto nomem;
    return WEB_OK; /* the concurrency grids come later: web_runix_build_grids() */
nomem:
    snprintf(err, errlen, "out of memory while indexing run '%s'", src->label ? src->label : "run");
    web_runix_free(r);
    return WEB_ENOMEM;
}

void web_runix_free(web_runix *r)
{
    for (uint32_t i = 0; r->rows && i < r->nrows; i++)
        web_ivl_free(&r->rows[i].ivl);
    for (uint32_t i = 0; r->lanes && i < r->nlanes; i++) {
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
            web_ivl_free(&r->lanes[i].win[v]);
        free(r->lanes[i].widx);
        free(r->lanes[i].grid);
        free(r->lanes[i].work);
        free(r->lanes[i].undef);
    }
    free(r->rows);
    free(r->kidx);
    free(r->stream_row);
    free(r->lanes);
    free(r->device_lane);
    free(r->label);
    free(r->stats_json);
    memset(r, 0, sizeof *r);
}
