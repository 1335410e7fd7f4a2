/* web_ivl.c: sorted interval lists with a uniform bucket grid, the core of the level-of-detail
 * queries. For any instant T, web_ivl_at() gives how many intervals started before T, how many of
 * them are still running at T and the busy time before T, in one bucket lookup plus a short scan;
 * per-pixel counts and busy shares are differences of these at the pixel edges, so a viewport
 * query costs O(width x bucket size), whatever the zoom and the size of the run. */
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define IVL_PER_BUCKET                                                                             \
    8 /* mean intervals per bucket: 16 B per bucket (2 B per interval), scan length */

static int64_t clip_overlap(int64_t s, int64_t e, int64_t a, int64_t b)
{
    if (s < a)
        s = a;
    if (e > b)
        e = b;
    return e > s ? e - s : 0;
}

int web_ivl_begin(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n,
                  int64_t lo, int64_t hi)
{
    *v = (web_ivl){.base = base, .stride = stride, .idx = idx, .n = n, .bw = 1};
    if (n == 0)
        return WEB_OK;
    uint32_t nb = n / IVL_PER_BUCKET + 1;
    v->t0 = lo;
    v->bw = (hi - lo) / nb + 1;
    v->nb = nb;
    v->first = malloc(sizeof *v->first * (nb + 1));
    v->carry = malloc(sizeof *v->carry * nb);
    v->busy = malloc(sizeof *v->busy * nb);
    if (!v->first || !v->carry || !v->busy) {
        web_ivl_free(v);
        return WEB_ENOMEM;
    }
    v->first[nb] = n;
    return WEB_OK;
}

/* close_buckets: fills every bucket that starts at or before `upto` (all when upto is INT64_MAX),
 * given that intervals [0, b->pos) are pushed and all start before upto. */
static void close_buckets(web_ivl *v, web_ivl_build_state *b, int64_t upto)
{
    while (b->next < v->nb) {
        int64_t bs = v->t0 + (int64_t)b->next * v->bw;
        if (bs > upto)
            break;
        while (b->carry < b->pos && web_ivl_end(v, b->carry) <= bs)
            b->carry++;
        int64_t tail = 0; /* time after bs of intervals started before it */
        for (uint32_t i = b->carry; i < b->pos; i++) {
            int64_t e = web_ivl_end(v, i);
            if (e > bs)
                tail += e - bs;
        }
        v->first[b->next] = b->pos;
        v->carry[b->next] = b->carry;
        v->busy[b->next] = b->durs - tail;
        b->next++;
    }
}

void web_ivl_push(web_ivl *v, web_ivl_build_state *b)
{
    int64_t s = web_ivl_start(v, b->pos), e = web_ivl_end(v, b->pos);
    /* buckets starting at or before s hold only intervals that start before them: close them */
    close_buckets(v, b, s);
    b->durs += e > s ? e - s : 0;
    b->pos++;
}

void web_ivl_end_build(web_ivl *v, web_ivl_build_state *b)
{
    close_buckets(v, b, INT64_MAX);
}

int web_ivl_build(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n)
{
    web_ivl tmp = {.base = base, .stride = stride, .idx = idx, .n = n};
    int64_t lo = n ? web_ivl_start(&tmp, 0) : 0, hi = n ? web_ivl_start(&tmp, n - 1) : 0;
    if (web_ivl_begin(v, base, stride, idx, n, lo, hi))
        return WEB_ENOMEM;
    web_ivl_build_state b = {0, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++)
        web_ivl_push(v, &b);
    web_ivl_end_build(v, &b);
    return WEB_OK;
}

void web_ivl_free(web_ivl *v)
{
    free(v->first);
    free(v->carry);
    free(v->busy);
    v->first = v->carry = NULL;
    v->busy = NULL;
    v->nb = 0;
}

static uint32_t bucket_of(const web_ivl *v, int64_t T)
{
    if (T <= v->t0)
        return 0;
    uint64_t b = (uint64_t)(T - v->t0) / (uint64_t)v->bw;
    return b >= v->nb ? v->nb - 1 : (uint32_t)b;
}

/* lower_in: the first position in [lo, hi) whose start >= T (hi when none). */
static uint32_t lower_in(const web_ivl *v, uint32_t lo, uint32_t hi, int64_t T)
{
    while (hi - lo > 8) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (web_ivl_start(v, mid) < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo < hi && web_ivl_start(v, lo) < T)
        lo++;
    return lo;
}

web_ivl_pt web_ivl_at(const web_ivl *v, int64_t T)
{
    web_ivl_pt p = {0, 0, 0};
    if (v->n == 0 || T <= v->t0)
        return p;
    uint32_t b = bucket_of(v, T);
    int64_t bs = v->t0 + (int64_t)b * v->bw;
    p.pos = lower_in(v, v->first[b], v->first[b + 1], T);
    p.busy = v->busy[b];
    for (uint32_t i = v->carry[b]; i < p.pos; i++) {
        int64_t s = web_ivl_start(v, i), e = web_ivl_end(v, i);
        p.busy += clip_overlap(s, e, bs, T);
        if (e > T)
            p.running++;
    }
    return p;
}

web_ivl_pt web_ivl_at_grid(const web_ivl *v, int64_t T)
{
    if (v->n == 0 || T <= v->t0)
        return web_ivl_at(v, T);
    uint64_t b = ((uint64_t)(T - v->t0) + (uint64_t)v->bw / 2) / (uint64_t)v->bw;
    if (b == 0 || b >= v->nb)
        return web_ivl_at(v, T);
    int64_t bs = v->t0 + (int64_t)b * v->bw;
    web_ivl_pt p = {v->first[b], 0, v->busy[b]};
    for (uint32_t i = v->carry[b]; i < p.pos; i++)
        p.running += web_ivl_end(v, i) > bs;
    return p;
}

/* edge_bucket: the bucket web_ivl_at() (snap 0) or web_ivl_at_grid() (snap 1) reads for T. */
static uint32_t edge_bucket(const web_ivl *v, int64_t T, int snap)
{
    if (snap && T > v->t0) {
        uint64_t b = ((uint64_t)(T - v->t0) + (uint64_t)v->bw / 2) / (uint64_t)v->bw;
        if (b > 0 && b < v->nb)
            return (uint32_t)b;
    }
    return bucket_of(v, T);
}

void web_ivl_at_many(const web_ivl *v, const int64_t *T, uint32_t n, int snap, web_ivl_pt *out)
{
    enum { GRID_AHEAD = 24, IDX_AHEAD = 12, REC_AHEAD = 6, REC_MAX = 16 };
    if (v->n == 0) {
        memset(out, 0, sizeof *out * n);
        return;
    }
    for (uint32_t j = 0; j < n; j++) {
        if (j + GRID_AHEAD < n) {
            uint32_t b = edge_bucket(v, T[j + GRID_AHEAD], snap);
            __builtin_prefetch(&v->first[b]);
            __builtin_prefetch(&v->first[b + 1]);
            __builtin_prefetch(&v->carry[b]);
            __builtin_prefetch(&v->busy[b]);
        }
        if (v->idx && j + IDX_AHEAD < n) {
            uint32_t b = edge_bucket(v, T[j + IDX_AHEAD], snap);
            __builtin_prefetch(&v->idx[v->carry[b]]);
            __builtin_prefetch(&v->idx[v->first[b + 1] > 0 ? v->first[b + 1] - 1 : 0]);
        }
        if (j + REC_AHEAD < n) {
            uint32_t b = edge_bucket(v, T[j + REC_AHEAD], snap);
            /* web_ivl_at_grid() reads those still running at the bucket start, web_ivl_at()
             * also those that start in the bucket */
            uint32_t lo = v->carry[b], hi = snap ? v->first[b] : v->first[b + 1];
            if (hi - lo > REC_MAX)
                hi = lo + REC_MAX;
            for (uint32_t i = lo; i < hi; i++)
                __builtin_prefetch(v->base + (size_t)web_ivl_item(v, i) * v->stride);
        }
        out[j] = snap ? web_ivl_at_grid(v, T[j]) : web_ivl_at(v, T[j]);
    }
}

uint32_t web_ivl_scan_from(const web_ivl *v, int64_t a)
{
    if (v->n == 0 || a <= v->t0)
        return 0;
    return v->carry[bucket_of(v, a)];
}
