/* sort.c: sorts a run's record arrays by start, cheaply in time and memory. Each file's records
 * arrive mostly sorted, so each segment (one per source) is fixed in place by a bounded
 * insertion sort, or by an LSD radix sort in 1M-record pieces when it is too disordered; the
 * sorted segments are then k-way merged into a new array while the pages of the old one are
 * handed back, so the peak stays near one copy of the records. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store_int.h"

#define PIECE ((uint64_t)1 << 20) /* records per radix-sorted piece */

static inline int64_t key_at(const char *base, uint64_t i, size_t size)
{
    int64_t k;
    memcpy(&k, base + i * size, sizeof k);
    return k;
}

/* Insertion sort of [lo, hi) giving up after `budget` moves; returns 1 when sorted. */
static int insertion_sort(char *base, uint64_t lo, uint64_t hi, size_t size, uint64_t budget)
{
    char tmp[64];
    uint64_t moves = 0;
    for (uint64_t i = lo + 1; i < hi; i++) {
        int64_t k = key_at(base, i, size);
        if (key_at(base, i - 1, size) <= k)
            continue;
        memcpy(tmp, base + i * size, size);
        uint64_t j = i;
        while (j > lo && key_at(base, j - 1, size) > k)
            j--;
        memmove(base + (j + 1) * size, base + j * size, (i - j) * size);
        memcpy(base + j * size, tmp, size);
        moves += i - j;
        if (moves > budget)
            return 0;
    }
    return 1;
}

/* Stable LSD radix sort of [lo, hi) by start, 8 bits a pass over the bytes that differ. */
static int radix_sort(char *base, uint64_t lo, uint64_t hi, size_t size)
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

static int is_sorted(const char *base, uint64_t lo, uint64_t hi, size_t size)
{
    for (uint64_t i = lo + 1; i < hi; i++)
        if (key_at(base, i - 1, size) > key_at(base, i, size))
            return 0;
    return 1;
}

/* A merge input: the next record and the end of its segment. */
typedef struct cursor {
    int64_t key;
    uint64_t pos, end;
} cursor;

static void sift_down(cursor *h, uint64_t n, uint64_t i)
{
    cursor c = h[i];
    for (;;) {
        uint64_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && h[l + 1].key < h[l].key)
            l++;
        if (h[l].key >= c.key)
            break;
        h[i] = h[l];
        i = l;
    }
    h[i] = c;
}

/* Hands back to the OS the whole pages of the old array below `upto` (bytes from its start)
 * that the merge has consumed; the first page (malloc's header) is never touched. */
static void release(char *old, uint64_t total, uint64_t from, uint64_t upto)
{
    uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)old + from + ps) & ~(ps - 1);
    uintptr_t hi = ((uintptr_t)old + upto) & ~(ps - 1);
    if (upto > total)
        return;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

int store_sort_records(void **pBase, uint64_t n, size_t size, const store_segs *segs)
{
    char *base = *pBase;
    if (n < 2)
        return STORE_OK;
    /* Segment boundaries: the recorded ones, cut to size; radix-sorted pieces add more. */
    uint64_t cap = (segs ? segs->n : 0) + 2 + n / PIECE + 1, nb = 0;
    uint64_t *b = malloc(cap * 2 * sizeof *b); /* room for the pieces of every segment */
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
    /* Merge adjacent segments that are already in order with each other. */
    uint64_t nm = 0;
    for (uint64_t s = 0; s < nout; s++) {
        uint64_t lo = out[s];
        if (nm && key_at(base, lo - 1, size) <= key_at(base, lo, size))
            continue;
        out[nm++] = lo;
    }
    if (nm <= 1) {
        free(b);
        return STORE_OK;
    }
    cursor *h = malloc(nm * sizeof *h);
    char *dst = malloc(n * size);
    if (!h || !dst) {
        free(h);
        free(dst);
        free(b);
        return STORE_ENOMEM;
    }
    uint64_t *released = b; /* per segment: bytes of it handed back (reuses b) */
    for (uint64_t s = 0; s < nm; s++) {
        h[s].pos = out[s];
        h[s].end = s + 1 < nm ? out[s + 1] : n;
        h[s].key = key_at(base, h[s].pos, size);
        released[s] = h[s].pos * size;
    }
    /* Heap order by key; each cursor remembers its segment through its position. */
    for (uint64_t i = nm / 2; i-- > 0;)
        sift_down(h, nm, i);
    int big = n * size >= ((uint64_t)16 << 20);
    uint64_t live = nm, w = 0;
    const uint64_t step = (uint64_t)4 << 20; /* release in 4 MiB steps */
    uint64_t since = 0;
    while (live) {
        cursor *c = &h[0];
        memcpy(dst + w * size, base + c->pos * size, size);
        w++;
        c->pos++;
        if (c->pos < c->end) {
            c->key = key_at(base, c->pos, size);
        } else {
            h[0] = h[--live];
        }
        if (live)
            sift_down(h, live, 0);
        if (big && (since += size) >= step) {
            since = 0;
            for (uint64_t i = 0; i < live; i++) {
                /* The segment's start is the largest boundary <= pos. */
                uint64_t lo = 0, hi = nm;
                while (hi - lo > 1) {
                    uint64_t mid = (lo + hi) / 2;
                    if (out[mid] <= h[i].pos)
                        lo = mid;
                    else
                        hi = mid;
                }
                if (h[i].pos * size > released[lo] + step) {
                    release(base, n * size, released[lo], h[i].pos * size);
                    released[lo] = h[i].pos * size;
                }
            }
        }
    }
    free(h);
    free(b);
    free(base);
    *pBase = dst;
    return STORE_OK;
}
