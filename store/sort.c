/* sort.c: sorts a run's record arrays by start, cheaply in time and memory. Each source's
 * records arrive mostly sorted, so each segment (one per source) is fixed in place by a bounded
 * insertion sort, or by an LSD radix sort in 1M-record pieces when it is too disordered. The
 * sorted segments are then merged (a loser tree) into a new array, split by key ranges across
 * one thread per CPU, while the consumed pages of the old array are handed back to the OS, so
 * the peak stays near one copy of the records. Also the radix sort of 64-bit keys by their upper
 * half that joins by correlation id use (store_sort_hi32). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store_int.h"

#define PIECE ((uint64_t)1 << 20)        /* records per radix-sorted piece */
#define RELEASE_STEP ((uint64_t)2 << 20) /* bytes consumed before pages are handed back */
#define MAX_THREADS 8
#define INLINE static inline __attribute__((always_inline))

INLINE int64_t key_at(const char *base, uint64_t i, size_t size)
{
    int64_t k;
    memcpy(&k, base + i * size, sizeof k);
    return k;
}

/* Insertion sort of [lo, hi) giving up after `budget` moves; returns 1 when sorted. */
INLINE int insertion_sort(char *base, uint64_t lo, uint64_t hi, size_t size, uint64_t budget)
{
    char tmp[64];
    uint64_t moves = 0;
    for (uint64_t i = lo + 1; i < hi; i++) {
        int64_t k = key_at(base, i, size);
        if (key_at(base, i - 1, size) <= k)
            continue;
        memcpy(tmp, base + i * size, size);
        uint64_t j = i;
        while (j > lo && key_at(base, j - 1, size) > k) {
            memcpy(base + j * size, base + (j - 1) * size, size);
            j--;
        }
        memcpy(base + j * size, tmp, size);
        moves += i - j;
        if (moves > budget)
            return 0;
    }
    return 1;
}

/* Stable LSD radix sort of [lo, hi) by start, 8 bits a pass over the bytes that differ. */
INLINE int radix_sort(char *base, uint64_t lo, uint64_t hi, size_t size)
{
    uint64_t n = hi - lo;
    char *src = base + lo * size;
    int64_t mn = key_at(src, 0, size), mx = mn;
    for (uint64_t i = 1; i < n; i++) {
        int64_t k = key_at(src, i, size);
        if (k < mn)
            mn = k;
        if (k > mx)
            mx = k;
    }
    uint64_t range = (uint64_t)mx - (uint64_t)mn;
    int passes = 0;
    while (range) {
        passes++;
        range >>= 8;
    }
    if (!passes)
        return STORE_OK;
    char *tmp = malloc(n * size);
    if (!tmp)
        return STORE_ENOMEM;
    char *a = src, *b = tmp;
    for (int p = 0; p < passes; p++) {
        uint64_t count[256] = {0};
        int shift = 8 * p;
        for (uint64_t i = 0; i < n; i++)
            count[((uint64_t)key_at(a, i, size) - (uint64_t)mn) >> shift & 0xff]++;
        uint64_t sum = 0;
        for (int d = 0; d < 256; d++) {
            uint64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++) {
            unsigned d = ((uint64_t)key_at(a, i, size) - (uint64_t)mn) >> shift & 0xff;
            memcpy(b + count[d]++ * size, a + i * size, size);
        }
        char *t = a;
        a = b;
        b = t;
    }
    if (a != src)
        memcpy(src, a, n * size);
    free(tmp);
    return STORE_OK;
}

INLINE int is_sorted(const char *base, uint64_t lo, uint64_t hi, size_t size)
{
    for (uint64_t i = lo + 1; i < hi; i++)
        if (key_at(base, i - 1, size) > key_at(base, i, size))
            return 0;
    return 1;
}

/* First index in [lo, hi) whose key is >= v. */
static uint64_t lower_bound(const char *base, uint64_t lo, uint64_t hi, size_t size, int64_t v)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (key_at(base, mid, size) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Hands back to the OS the whole pages of old[from, upto) (bytes), which the merge has read and
 * will not read again. Rounding inward keeps every page another range still needs. */
static void release(char *old, uint64_t from, uint64_t upto)
{
    uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)old + from + ps - 1) & ~(ps - 1);
    uintptr_t hi = ((uintptr_t)old + upto) & ~(ps - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* One thread's share of the merge: from each segment s the records [pos[s], end[s]), written
 * to dst from `out` on. */
typedef struct merge_job {
    const char *base;
    char *dst;
    size_t size;
    uint32_t nseg;
    uint64_t *pos, *end, *released; /* per segment */
    uint64_t out;
    int release_pages; /* hand consumed pages back */
} merge_job;

/* A loser tree over the segments' next keys. An exhausted segment's key is INT64_MAX; ties go
 * to the lower segment (a stable merge). The replay is written without branches on the keys:
 * with interleaved sources the comparisons are unpredictable. */
INLINE void merge_run(merge_job *j, size_t size)
{
    uint32_t k = 1;
    while (k < j->nseg)
        k *= 2;
    int64_t key[1024]; /* merge_segments is never given more than 1024 segments */
    uint32_t tree[1024], win[2048];
    uint64_t total = 0;
    for (uint32_t s = 0; s < k; s++) {
        int live = s < j->nseg && j->pos[s] < j->end[s];
        key[s] = live ? key_at(j->base, j->pos[s], size) : INT64_MAX;
        if (s < j->nseg)
            total += j->end[s] - j->pos[s];
    }
    /* Build bottom-up: the winner of each subtree goes up, its loser stays in tree[]. */
    for (uint32_t s = 0; s < k; s++)
        win[k + s] = s;
    for (uint32_t node = k - 1; node >= 1; node--) {
        uint32_t a = win[2 * node], b = win[2 * node + 1];
        int a_first = key[a] < key[b] || (key[a] == key[b] && a < b);
        win[node] = a_first ? a : b;
        tree[node] = a_first ? b : a;
    }
    uint32_t w = k > 1 ? win[1] : 0;
    char *out = j->dst + j->out * size;
    for (uint64_t i = 0; i < total; i++) {
        if (__builtin_expect(j->pos[w] >= j->end[w], 0)) {
            /* Only when real keys equal INT64_MAX: any live segment is then a right pick. */
            uint32_t s = 0;
            while (j->pos[s] >= j->end[s])
                s++;
            w = s;
        }
        uint64_t p = j->pos[w]++;
        memcpy(out + i * size, j->base + p * size, size);
        key[w] = p + 1 < j->end[w] ? key_at(j->base, p + 1, size) : INT64_MAX;
        if (j->release_pages && (p + 1) * size - j->released[w] >= RELEASE_STEP) {
            release((char *)j->base, j->released[w], (p + 1) * size);
            j->released[w] = (p + 1) * size;
        }
        for (uint32_t node = (w + k) >> 1; node >= 1; node >>= 1) {
            uint32_t l = tree[node];
            int64_t kl = key[l], kw = key[w];
            int swap = (kl < kw) | ((kl == kw) & (l < w));
            tree[node] = swap ? w : l;
            w = swap ? l : w;
        }
    }
}

static void *merge_thread(void *arg)
{
    merge_job *j = arg;
    switch (j->size) {
    case 32: merge_run(j, 32); break;
    case 40: merge_run(j, 40); break;
    case 48: merge_run(j, 48); break;
    default: merge_run(j, j->size); break;
    }
    return NULL;
}

/* The key below which about `want` of the records lie (a split point between threads). */
static int64_t split_key(const char *base, size_t size, uint32_t nseg, const uint64_t *lo,
                         const uint64_t *hi, uint64_t want, int64_t kmin, int64_t kmax)
{
    /* Binary search on the key value: count(keys < v) is monotone in v. */
    int64_t a = kmin, b = kmax;
    while (a < b) {
        int64_t mid = a + (int64_t)(((uint64_t)b - (uint64_t)a) / 2);
        uint64_t c = 0;
        for (uint32_t s = 0; s < nseg; s++)
            c += lower_bound(base, lo[s], hi[s], size, mid) - lo[s];
        if (c < want)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* Merges the sorted segments starting at seg[0..nseg) into a new array; *pBase is replaced. */
static int merge_segments(char **pBase, uint64_t n, size_t size, const uint64_t *seg, uint32_t nseg)
{
    char *base = *pBase;
    char *dst = malloc(n * size);
    uint64_t *arr = malloc((size_t)nseg * (MAX_THREADS * 3 + 2) * sizeof *arr);
    if (!dst || !arr) {
        free(dst);
        free(arr);
        return STORE_ENOMEM;
    }
    store_hint_huge(dst);
    uint64_t *lo = arr, *hi = arr + nseg;
    int64_t kmin = INT64_MAX, kmax = INT64_MIN;
    for (uint32_t s = 0; s < nseg; s++) {
        lo[s] = seg[s];
        hi[s] = s + 1 < nseg ? seg[s + 1] : n;
        int64_t a = key_at(base, lo[s], size), b = key_at(base, hi[s] - 1, size);
        kmin = a < kmin ? a : kmin;
        kmax = b > kmax ? b : kmax;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt = n < PIECE ? 1 : cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (uint32_t)cpus;
    merge_job jobs[MAX_THREADS];
    int big = n * size >= ((uint64_t)16 << 20);
    uint64_t out = 0;
    for (uint32_t t = 0; t < nt; t++) {
        merge_job *j = &jobs[t];
        *j = (merge_job){base,
                         dst,
                         size,
                         nseg,
                         arr + nseg * (2 + 3 * t),
                         arr + nseg * (3 + 3 * t),
                         arr + nseg * (4 + 3 * t),
                         out,
                         big};
        /* Thread t takes the keys in [split t, split t+1): every key below a split goes to an
         * earlier thread, so the outputs are disjoint and in order. */
        int64_t v =
            t + 1 < nt ? split_key(base, size, nseg, lo, hi, n / nt * (t + 1), kmin, kmax) : 0;
        for (uint32_t s = 0; s < nseg; s++) {
            j->pos[s] = t ? jobs[t - 1].end[s] : lo[s];
            j->end[s] = t + 1 < nt ? lower_bound(base, j->pos[s], hi[s], size, v) : hi[s];
            j->released[s] = j->pos[s] * size;
            out += j->end[s] - j->pos[s];
        }
    }
    pthread_t th[MAX_THREADS];
    uint32_t started = 0;
    for (uint32_t t = 1; t < nt; t++)
        if (pthread_create(&th[t], NULL, merge_thread, &jobs[t]) == 0)
            started |= 1u << t;
        else
            merge_thread(&jobs[t]);
    merge_thread(&jobs[0]);
    for (uint32_t t = 1; t < nt; t++)
        if (started & 1u << t)
            pthread_join(th[t], NULL);
    free(arr);
    free(base);
    *pBase = dst;
    return STORE_OK;
}

INLINE int sort_records(void **pBase, uint64_t n, size_t size, const store_segs *segs)
{
    char *base = *pBase;
    if (n < 2)
        return STORE_OK;
    /* Segment boundaries: the recorded ones, cut to size; radix-sorted pieces add more. */
    uint64_t cap = (segs ? segs->n : 0) + 2 + n / PIECE + 1, nb = 0;
    uint64_t *b = malloc(cap * 2 * sizeof *b);
    if (!b)
        return STORE_ENOMEM;
    b[nb++] = 0;
    for (uint64_t i = 0; segs && i < segs->n; i++)
        if (segs->start[i] > b[nb - 1] && segs->start[i] < n)
            b[nb++] = segs->start[i];
    b[nb] = n;
    uint64_t *out = b + cap, nout = 0; /* boundaries after sorting, pieces included */
    for (uint64_t s = 0; s < nb; s++) {
        uint64_t lo = b[s], hi = b[s + 1];
        out[nout++] = lo;
        if (insertion_sort(base, lo, hi, size, 8 * (hi - lo) + 1024))
            continue;
        for (uint64_t p = lo; p < hi; p += PIECE) {
            uint64_t e = p + PIECE < hi ? p + PIECE : hi;
            if (p > lo)
                out[nout++] = p;
            if (!is_sorted(base, p, e, size) && radix_sort(base, p, e, size)) {
                free(b);
                return STORE_ENOMEM;
            }
        }
    }
    /* Join adjacent segments that are already in order with each other. */
    uint64_t nm = 0;
    for (uint64_t s = 0; s < nout; s++) {
        uint64_t lo = out[s];
        if (nm && key_at(base, lo - 1, size) <= key_at(base, lo, size))
            continue;
        out[nm++] = lo;
    }
    int rc = STORE_OK;
    /* More segments than the loser tree holds: merge the first ones together first. */
    while (rc == STORE_OK && nm > 1) {
        uint32_t take = nm > 1024 ? 1024 : (uint32_t)nm;
        uint64_t upto = take < nm ? out[take] : n;
        char *part = base;
        if (take == nm) {
            rc = merge_segments(&part, n, size, out, take);
            base = part;
            nm = 1;
        } else {
            /* Merge records [0, upto) in a side buffer and copy them back. */
            char *side = malloc(upto * size);
            if (!side) {
                rc = STORE_ENOMEM;
                break;
            }
            memcpy(side, base, upto * size);
            rc = merge_segments(&side, upto, size, out, take);
            if (rc == STORE_OK)
                memcpy(base, side, upto * size);
            free(side);
            memmove(out + 1, out + take, (nm - take) * sizeof *out);
            nm -= take - 1;
        }
    }
    free(b);
    *pBase = base;
    return rc;
}

int store_sort_nearly(void *base, uint64_t n, size_t size)
{
    if (size == 32)
        return insertion_sort(base, 0, n, 32, 8 * n + 1024);
    return size <= 64 ? insertion_sort(base, 0, n, size, 8 * n + 1024) : 0;
}

/* The record sizes of a run get their own copies of the code, so every memcpy above is a
 * fixed-size move instead of a call. */
int store_sort_records(void **pBase, uint64_t n, size_t size, const store_segs *segs)
{
    switch (size) {
    case 32: return sort_records(pBase, n, 32, segs);
    case 40: return sort_records(pBase, n, 40, segs);
    case 48: return sort_records(pBase, n, 48, segs);
    default: return size <= 64 ? sort_records(pBase, n, size, segs) : STORE_EINVAL;
    }
}

void store_sort_hi32(uint64_t *a, uint64_t *tmp, size_t n)
{
    if (n < 2)
        return;
    uint64_t *src = a, *dst = tmp;
    for (int shift = 32; shift < 64; shift += 8) {
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 255]++;
        if (cnt[(src[0] >> shift) & 255] == n)
            continue;
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst, dst = t;
    }
    if (src != a)
        memcpy(a, src, sizeof *a * n);
}
