/* web_ivl.c: sorted interval lists with a uniform bucket grid, the core of the level-of-detail
 * queries. For any instant T, web_ivl_at() gives how many intervals started before T, how many of
 * them are still running at T and the busy time before T, in one bucket lookup plus a short scan;
 * per-pixel counts and busy shares are differences of these at the pixel edges, so a viewport
 * query costs O(width x bucket size), whatever the zoom and the size of the run. */
#include <stdlib.h>

#include "web_int.h"

#define IVL_PER_BUCKET 16 /* mean intervals per bucket: memory 16 B per bucket, scan length */

static int64_t clip_overlap(int64_t s, int64_t e, int64_t a, int64_t b)
{
    if (s < a)
        s = a;
    if (e > b)
        e = b;
    return e > s ? e - s : 0;
}

int web_ivl_build(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n)
{
    *v = (web_ivl){.base = base, .stride = stride, .idx = idx, .n = n, .bw = 1};
    if (n == 0)
        return WEB_OK;
    int64_t lo = web_ivl_start(v, 0), hi = web_ivl_start(v, n - 1);
    uint32_t nb = n / IVL_PER_BUCKET + 1;
    int64_t bw = (hi - lo) / nb + 1;
    v->t0 = lo;
    v->bw = bw;
    v->nb = nb;
    v->first = malloc(sizeof *v->first * (nb + 1));
    v->carry = malloc(sizeof *v->carry * nb);
    v->busy = malloc(sizeof *v->busy * nb);
    if (!v->first || !v->carry || !v->busy) {
        web_ivl_free(v);
        return WEB_ENOMEM;
    }
    uint32_t pos = 0, carry = 0;
    int64_t durs = 0; /* sum of durations of intervals [0, pos) */
    for (uint32_t b = 0; b < nb; b++) {
        int64_t bs = lo + (int64_t)b * bw;
        while (pos < n && web_ivl_start(v, pos) < bs) {
            int64_t d = web_ivl_end(v, pos) - web_ivl_start(v, pos);
            durs += d > 0 ? d : 0;
            pos++;
        }
        while (carry < pos && web_ivl_end(v, carry) <= bs)
            carry++;
        int64_t tail = 0; /* time after bs of intervals started before it */
        for (uint32_t i = carry; i < pos; i++) {
            int64_t e = web_ivl_end(v, i);
            if (e > bs)
                tail += e - bs;
        }
        v->first[b] = pos;
        v->carry[b] = carry;
        v->busy[b] = durs - tail;
    }
    v->first[nb] = n;
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

uint32_t web_ivl_scan_from(const web_ivl *v, int64_t a)
{
    if (v->n == 0 || a <= v->t0)
        return 0;
    return v->carry[bucket_of(v, a)];
}
