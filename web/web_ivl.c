/* web_ivl.c: sorted interval lists with a uniform bucket grid, the core of the level-of-detail
 * queries. For any instant T, web_ivl_at() gives how many intervals started before T, how many of
 * them are still running at T and the busy time before T, in one bucket lookup plus a short scan;
 * per-pixel counts and busy shares are differences of these at the pixel edges, so a viewport
 * query costs O(width x bucket size), whatever the zoom and the size of the run. Each interval's
 * start and end are also kept as 32-bit offsets from its bucket's start, in list order, so that
 * the scans and web_ivl_sweep() read a few contiguous bytes instead of scattered records. */
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define IVL_PER_BUCKET                                                                             \
    8 /* mean intervals per bucket: 16 B per bucket (2 B per interval), scan length */

#define OFF_NONE UINT32_MAX /* an offset that does not fit: read the record */

/* bucket_of: the bucket holding instant T (the first for T <= t0, the last beyond the grid). */
static uint32_t bucket_of(const web_ivl *v, int64_t T)
{
    if (T <= v->t0)
        return 0;
    uint64_t b = (uint64_t)(T - v->t0) / (uint64_t)v->bw;
    return b >= v->nb ? v->nb - 1 : (uint32_t)b;
}

static int64_t clip_overlap(int64_t s, int64_t e, int64_t a, int64_t b)
{
    if (s < a)
        s = a;
    if (e > b)
        e = b;
    return e > s ? e - s : 0;
}

int web_ivl_begin(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n,
                  int64_t lo, int64_t hi, uint32_t *off)
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
    if ((uint64_t)v->bw < OFF_NONE) { /* else offsets within a bucket may not fit: none */
        v->off = off ? off : malloc(sizeof *v->off * 2 * (size_t)n);
        v->off_lent = off != NULL;
    }
    if (!v->first || !v->carry || !v->busy || ((uint64_t)v->bw < OFF_NONE && !v->off)) {
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

/* offset_of: t - bs as an offset (OFF_NONE when it does not fit in [0, OFF_NONE)). */
static uint32_t offset_of(int64_t t, int64_t bs)
{
    return t >= bs && (uint64_t)(t - bs) < OFF_NONE ? (uint32_t)(t - bs) : OFF_NONE;
}

void web_ivl_push(web_ivl *v, web_ivl_build_state *b)
{
    int64_t s = web_ivl_start(v, b->pos), e = web_ivl_end(v, b->pos);
    /* buckets starting at or before s hold only intervals that start before them: close them */
    close_buckets(v, b, s);
    if (v->off) { /* position pos is in the last bucket that starts at or before s */
        int64_t bs = v->t0 + (int64_t)bucket_of(v, s) * v->bw;
        v->off[2 * (size_t)b->pos] = offset_of(s, bs);
        v->off[2 * (size_t)b->pos + 1] = offset_of(e, bs);
    }
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
    if (web_ivl_begin(v, base, stride, idx, n, lo, hi, NULL))
        return WEB_ENOMEM;
    web_ivl_build_state b = {0, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++)
        web_ivl_push(v, &b);
    web_ivl_end_build(v, &b);
    return WEB_OK;
}

void web_ivl_free(web_ivl *v)
{
    if (!v->grid_lent) {
        free(v->first);
        free(v->carry);
        free(v->busy);
    }
    if (!v->off_lent)
        free(v->off);
    v->first = v->carry = v->off = NULL;
    v->busy = NULL;
    v->nb = 0;
}

/* start_in, end_in: start and end of position i of the bucket starting at bs, from the offsets
 * when there are some and they fit, else from the record. */
static inline int64_t start_in(const web_ivl *v, uint32_t i, int64_t bs)
{
    uint32_t o = v->off ? v->off[2 * (size_t)i] : OFF_NONE;
    return o != OFF_NONE ? bs + o : web_ivl_start(v, i);
}
static inline int64_t end_in(const web_ivl *v, uint32_t i, int64_t bs)
{
    uint32_t o = v->off ? v->off[2 * (size_t)i + 1] : OFF_NONE;
    return o != OFF_NONE ? bs + o : web_ivl_end(v, i);
}

/* end_early: the end of position i of a bucket before b (i < first[b]): from its bucket's offsets
 * when that bucket is among the 16 before b (found walking first[] down: a line or two), else
 * from the record. */
static inline int64_t end_early(const web_ivl *v, uint32_t i, uint32_t b)
{
    for (uint32_t k = 1; v->off && k <= 16 && k <= b; k++)
        if (v->first[b - k] <= i) {
            uint32_t o = v->off[2 * (size_t)i + 1];
            if (o != OFF_NONE)
                return v->t0 + (int64_t)(b - k) * v->bw + o;
            break;
        }
    return web_ivl_end(v, i);
}

/* lower_in: the first position in [lo, hi) of the bucket starting at bs whose start >= T (hi when
 * none). */
static uint32_t lower_in(const web_ivl *v, uint32_t lo, uint32_t hi, int64_t T, int64_t bs)
{
    while (hi - lo > 8) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (start_in(v, mid, bs) < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo < hi && start_in(v, lo, bs) < T)
        lo++;
    return lo;
}

/* at_in: web_ivl_at(v, T) for T > v->t0 in bucket b (bucket_of(v, T)). */
static inline web_ivl_pt at_in(const web_ivl *v, uint32_t b, int64_t T)
{
    web_ivl_pt p = {0, 0, 0};
    uint32_t fb = v->first[b];
    int64_t bs = v->t0 + (int64_t)b * v->bw;
    p.pos = lower_in(v, fb, v->first[b + 1], T, bs);
    p.busy = v->busy[b];
    /* those of earlier buckets (still running at bs, or between two that are) */
    for (uint32_t i = v->carry[b]; i < p.pos && i < fb; i++) {
        int64_t e = end_early(v, i, b);
        p.busy += clip_overlap(bs - 1, e, bs, T); /* they started before bs */
        if (e > T)
            p.running++;
    }
    for (uint32_t i = fb; i < p.pos; i++) {
        int64_t s = start_in(v, i, bs), e = end_in(v, i, bs);
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
        p.running += end_early(v, i, (uint32_t)b) > bs;
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

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define IVL_VECTORS 1
#endif
#endif

#ifdef IVL_VECTORS
/* Four 32-bit lanes (GCC and Clang vector extensions: SSE2 on x86-64, NEON on arm64). */
typedef uint32_t u32x4 __attribute__((vector_size(16)));

/* lanes_sum: the sum of v's four lanes, modulo 2^32. */
static inline uint32_t lanes_sum(u32x4 v)
{
    return v[0] + v[1] + v[2] + v[3];
}

/* scan8: what positions i .. i + 7 of a bucket add at offset x (the lanes at or beyond `left`
 * positions masked off), read from their offsets (off: the bucket's first); 0, or -1 when one of
 * them has an end that does not fit (OFF_NONE: the caller reads those one by one). x < 2^29, so
 * that the eight clipped lengths sum within 32 bits. */
static inline int scan8(const uint32_t *off, uint32_t x, uint32_t left, uint32_t *pos,
                        uint32_t *running, int64_t *busy)
{
    static const u32x4 lane = {0, 1, 2, 3}, four = {4, 4, 4, 4};
    const u32x4 xv = {x, x, x, x}, nv = {left, left, left, left};
    const u32x4 none = {OFF_NONE, OFF_NONE, OFF_NONE, OFF_NONE};
    u32x4 a, b, c, d;
    memcpy(&a, off, 16); /* start, end, start, end */
    memcpy(&b, off + 4, 16);
    memcpy(&c, off + 8, 16);
    memcpy(&d, off + 12, 16);
    u32x4 s0 = __builtin_shufflevector(a, b, 0, 2, 4, 6),
          e0 = __builtin_shufflevector(a, b, 1, 3, 5, 7);
    u32x4 s1 = __builtin_shufflevector(c, d, 0, 2, 4, 6),
          e1 = __builtin_shufflevector(c, d, 1, 3, 5, 7);
    u32x4 in0 = (u32x4)(lane < nv), in1 = (u32x4)(lane + four < nv); /* all ones: in the bucket */
    if (lanes_sum(((u32x4)(e0 == none) & in0) | ((u32x4)(e1 == none) & in1)))
        return -1;
    /* the same sums as at_off's loop, in masks (all ones is -1: subtracted to count) */
    u32x4 lt0 = (u32x4)(s0 < xv) & in0, lt1 = (u32x4)(s1 < xv) & in1;
    u32x4 m0 = (u32x4)(e0 < xv), m1 = (u32x4)(e1 < xv);
    u32x4 y0 = (e0 & m0) | (xv & ~m0), y1 = (e1 & m1) | (xv & ~m1); /* min(end, x) */
    u32x4 d0 = (y0 - s0) & (u32x4)(y0 > s0) & in0, d1 = (y1 - s1) & (u32x4)(y1 > s1) & in1;
    *pos -= lanes_sum(lt0 + lt1);
    *running -= lanes_sum((lt0 & (u32x4)(e0 > xv)) + (lt1 & (u32x4)(e1 > xv)));
    *busy += lanes_sum(d0 + d1);
    return 0;
}
#endif

/* at_off: web_ivl_at(v, T) for T > v->t0 in bucket b (bucket_of(v, T)) of a list with offsets: the
 * bucket's intervals read whole, in 32 bits, without a branch on T (those starting at or after T
 * add nothing to the sums), eight at a time in vectors where the compiler has them (about a third
 * less per lookup at 10M kernels); a start's offset always fits (the grid covers every start), an
 * end's that does not (OFF_NONE) is read from its record. */
static inline web_ivl_pt at_off(const web_ivl *v, uint32_t b, int64_t T)
{
    uint32_t fb = v->first[b], fe = v->first[b + 1];
    int64_t bs = v->t0 + (int64_t)b * v->bw;
    if ((uint64_t)(T - bs) >= OFF_NONE) /* beyond the last bucket */
        return at_in(v, b, T);
    uint32_t x = (uint32_t)(T - bs), pos = fb, running = 0, i = 0;
    int64_t busy = v->busy[b];
    for (uint32_t k = v->carry[b]; k < fb; k++) { /* earlier buckets' (started before bs) */
        int64_t e = end_early(v, k, b);
        busy += clip_overlap(bs - 1, e, bs, T);
        running += e > T;
    }
    const uint32_t *off = v->off + 2 * (size_t)fb;
#ifdef IVL_VECTORS
    /* eight by eight while eight positions are in the list (the lanes beyond the bucket masked) */
    if (x < (UINT32_C(1) << 29))
        for (; i < fe - fb && fb + i + 8 <= v->n; i += 8)
            if (scan8(off + 2 * (size_t)i, x, fe - fb - i, &pos, &running, &busy))
                break;
#endif
    for (; i < fe - fb; i++) {
        uint32_t s = off[2 * i], e = off[2 * i + 1];
        if (__builtin_expect(e == OFF_NONE, 0)) { /* far after bs, or before it (no length) */
            int64_t ea = web_ivl_end(v, fb + i);
            e = ea >= T ? x + (ea > T) : ea <= bs + s ? s : (uint32_t)(ea - bs);
        }
        uint32_t y = e < x ? e : x;
        pos += s < x;
        busy += y > s ? y - s : 0;
        running += (s < x) & (e > x);
    }
    return (web_ivl_pt){pos, running, busy};
}

web_ivl_pt web_ivl_at(const web_ivl *v, int64_t T)
{
    if (v->n == 0 || T <= v->t0)
        return (web_ivl_pt){0, 0, 0};
    uint32_t b = bucket_of(v, T);
    return v->off ? at_off(v, b, T) : at_in(v, b, T);
}

void web_ivl_at_many(const web_ivl *v, const int64_t *T, uint32_t n, int snap, web_ivl_pt *out)
{
    enum { GRID_AHEAD = 24, IDX_AHEAD = 12, REC_AHEAD = 6, REC_MAX = 16 };
    if (v->n == 0) {
        memset(out, 0, sizeof *out * n);
        return;
    }
    /* each instant's bucket, once (a division each), kept in out[j].pos until out[j] is written:
     * the lookups and the requests ahead of them read it */
    for (uint32_t j = 0; j < n; j++)
        out[j].pos = edge_bucket(v, T[j], snap);
    for (uint32_t j = 0; j < n; j++) {
        if (j + GRID_AHEAD < n) {
            uint32_t b = out[j + GRID_AHEAD].pos;
            __builtin_prefetch(&v->first[b]);
            __builtin_prefetch(&v->first[b + 1]);
            __builtin_prefetch(&v->carry[b]);
            __builtin_prefetch(&v->busy[b]);
        }
        /* web_ivl_at_grid() reads the ends of earlier buckets' intervals still running at the
         * bucket start, web_ivl_at() also the bucket's own intervals: their offsets, else their
         * records */
        if (j + IDX_AHEAD < n) {
            uint32_t b = out[j + IDX_AHEAD].pos;
            if (v->off) {
                __builtin_prefetch(&v->off[2 * (size_t)v->carry[b]]);
                if (!snap) {
                    __builtin_prefetch(&v->off[2 * (size_t)v->first[b]]);
                    __builtin_prefetch(&v->off[2 * (size_t)v->first[b] + 16]);
                }
            } else if (v->idx) {
                __builtin_prefetch(&v->idx[v->carry[b]]);
            }
        }
        if (!v->off && j + REC_AHEAD < n) {
            uint32_t b = out[j + REC_AHEAD].pos;
            uint32_t lo = v->carry[b], hi = snap ? v->first[b] : v->first[b + 1];
            if (hi - lo > REC_MAX)
                hi = lo + REC_MAX;
            for (uint32_t i = lo; i < hi; i++)
                __builtin_prefetch(v->base + (size_t)web_ivl_item(v, i) * v->stride);
        }
        if (snap)
            out[j] = web_ivl_at_grid(v, T[j]);
        else if (T[j] <= v->t0)
            out[j] = (web_ivl_pt){0, 0, 0};
        else
            out[j] = v->off ? at_off(v, out[j].pos, T[j]) : at_in(v, out[j].pos, T[j]);
    }
}

/* last_before: the last pixel k in [lo, W) that starts before e (T[k] < e), lo - 1 when none.
 * Most intervals end in the pixel they start in: two comparisons; longer ones gallop. */
static int64_t last_before(const int64_t *T, uint32_t W, uint32_t lo, int64_t e)
{
    if (lo >= W || T[lo] >= e)
        return (int64_t)lo - 1;
    if (lo + 1 == W || T[lo + 1] >= e)
        return lo;
    uint32_t a = lo + 1, step = 1; /* T[a] < e */
    while (a + step < W && T[a + step] < e) {
        a += step;
        step *= 2;
    }
    uint32_t b = a + step < W ? a + step : W; /* b == W or T[b] >= e */
    while (b - a > 1) {
        uint32_t m = a + (b - a) / 2;
        if (T[m] < e)
            a = m;
        else
            b = m;
    }
    return a;
}

/* sweep_one: adds interval [s, e) to the sums of web_ivl_sweep(); *j: the pixel of the previous
 * start (starts come in order). */
static inline void sweep_one(const int64_t *T, uint32_t W, uint32_t *j, int64_t s, int64_t e,
                             int64_t *count, int64_t *ns, int64_t *cover)
{
    while (*j + 1 < W && T[*j + 1] <= s)
        ++*j; /* j is the pixel of s (0 when s < T[0]) */
    int64_t lo = *j;
    if (s >= T[lo] && e <= T[lo + 1]) { /* inside its pixel: most intervals */
        if (count) {
            count[lo]++;
            count[lo + 1]--;
        }
        ns[lo] += e > s ? e - s : 0;
        return;
    }
    int64_t hi = last_before(T, W, *j, e);
    if (s >= T[lo]) {
        if (hi < lo)
            hi = lo; /* of no length: counted in its pixel */
    } else if (hi < 0) {
        return; /* ended before the range */
    }
    if (count) {
        count[lo]++;
        count[hi + 1]--;
    }
    if (e <= s)
        return;
    int64_t x = s > T[lo] ? s : T[lo], y = e < T[lo + 1] ? e : T[lo + 1];
    ns[lo] += y > x ? y - x : 0;
    if (hi > lo) {
        x = T[hi], y = e < T[hi + 1] ? e : T[hi + 1];
        ns[hi] += y > x ? y - x : 0;
        cover[lo + 1]++;
        cover[hi]--;
    }
}

/* pos_bucket: the bucket of list position i (< n): the last one whose first position is <= i. */
static uint32_t pos_bucket(const web_ivl *v, uint32_t i)
{
    uint32_t lo = 0, hi = v->nb - 1;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo + 1) / 2;
        if (v->first[m] <= i)
            lo = m;
        else
            hi = m - 1;
    }
    return lo;
}

void web_ivl_spans(const web_ivl *v, uint32_t from, uint32_t to, int64_t *s, int64_t *e)
{
    enum { AHEAD = 16 }; /* records asked for ahead of the one read, when read from records */
    if (from >= to)
        return;
    if (!v->off) {
        for (uint32_t i = from; i < to; i++) {
            if (i + AHEAD < to)
                __builtin_prefetch(v->base + (size_t)web_ivl_item(v, i + AHEAD) * v->stride);
            s[i - from] = web_ivl_start(v, i);
            e[i - from] = web_ivl_end(v, i);
        }
        return;
    }
    for (uint32_t b = pos_bucket(v, from), i = from; i < to; b++) {
        int64_t bs = v->t0 + (int64_t)b * v->bw;
        uint32_t end = b + 1 < v->nb && v->first[b + 1] < to ? v->first[b + 1] : to;
        for (; i < end; i++) {
            s[i - from] = start_in(v, i, bs);
            e[i - from] = end_in(v, i, bs);
        }
    }
}

void web_ivl_sweep(const web_ivl *v, const int64_t *T, uint32_t W, uint32_t from, uint32_t to,
                   int64_t *count, int64_t *ns, int64_t *cover)
{
    enum { AHEAD = 16 }; /* records asked for ahead of the one read, when read from records */
    memset(cover, 0, sizeof *cover * (W + 1));
    memset(ns, 0, sizeof *ns * W);
    if (count)
        memset(count, 0, sizeof *count * (W + 1));
    uint32_t j = 0;
    if (from < to && v->off) {
        /* bucket by bucket, each position's start and end from its bucket's offsets */
        for (uint32_t b = pos_bucket(v, from), i = from; i < to; b++) {
            int64_t bs = v->t0 + (int64_t)b * v->bw;
            uint32_t end = b + 1 < v->nb && v->first[b + 1] < to ? v->first[b + 1] : to;
            for (; i < end; i++)
                sweep_one(T, W, &j, start_in(v, i, bs), end_in(v, i, bs), count, ns, cover);
        }
    } else {
        for (uint32_t i = from; i < to; i++) {
            if (i + AHEAD < to) /* the records are scattered: ask for them ahead */
                __builtin_prefetch(v->base + (size_t)web_ivl_item(v, i + AHEAD) * v->stride);
            sweep_one(T, W, &j, web_ivl_start(v, i), web_ivl_end(v, i), count, ns, cover);
        }
    }
    int64_t run = 0, c = 0;
    for (uint32_t k = 0; k < W; k++) {
        run += cover[k];
        ns[k] += run * (T[k + 1] - T[k]);
        if (count)
            count[k] = c += count[k];
    }
}

uint32_t web_ivl_scan_from(const web_ivl *v, int64_t a)
{
    if (v->n == 0 || a <= v->t0)
        return 0;
    return v->carry[bucket_of(v, a)];
}
