/* util.c: small containers shared by the writer and the run builder: the index hash table
 * (open addressing, linear probing, keys kept in the caller's arrays), the string arena and
 * geometric array growth, with huge pages asked for the big arrays. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store_int.h"

uint64_t store_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    /* Eight bytes a step, each folded in by a multiply (keys here are small structs). */
    const unsigned char *b = p;
    uint64_t h = seed ^ 0x9E3779B97F4A7C15ULL ^ n;
    for (; n >= 8; n -= 8, b += 8) {
        uint64_t v;
        memcpy(&v, b, 8);
        h = (h ^ v) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    for (; n; n--, b++)
        h = (h ^ *b) * 1099511628211ULL;
    h ^= h >> 29;
    h *= 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 32);
}

/* The home slot of a hash. The table keeps only 32 bits of each hash and re-places entries
 * from them when it grows, so the home is derived from those 32 bits alone. */
static uint32_t home(uint32_t h32)
{
    uint32_t x = h32 * 0x9E3779B1u;
    return x ^ (x >> 16);
}

uint32_t store_htab_get(const store_htab *h, uint64_t hash, store_htab_eq eq, const void *ctx,
                        const void *key)
{
    if (!h->cap)
        return STORE_NONE;
    uint32_t mask = h->cap - 1, h32 = (uint32_t)hash;
    for (uint32_t i = home(h32) & mask;; i = (i + 1) & mask) {
        uint32_t v = h->slot[2 * i];
        if (!v)
            return STORE_NONE;
        if (h->slot[2 * i + 1] == h32 && eq(ctx, v - 1, key))
            return v - 1;
    }
}

/* Places (v, h32) in the first free slot from the hash's home slot; no growth. */
static void htab_place(uint32_t *slot, uint32_t cap, uint32_t v, uint32_t h32, uint32_t at)
{
    uint32_t mask = cap - 1;
    uint32_t i = at & mask;
    while (slot[2 * i])
        i = (i + 1) & mask;
    slot[2 * i] = v;
    slot[2 * i + 1] = h32;
}

int store_htab_put(store_htab *h, uint64_t hash, uint32_t idx)
{
    if ((uint64_t)(h->n + 1) * 10 > (uint64_t)h->cap * 7) {
        uint32_t ncap = h->cap ? h->cap * 2 : 64;
        uint32_t *ns = calloc((size_t)ncap * 2, sizeof *ns);
        if (!ns)
            return STORE_ENOMEM;
        for (uint32_t i = 0; i < h->cap; i++)
            if (h->slot[2 * i])
                htab_place(ns, ncap, h->slot[2 * i], h->slot[2 * i + 1], home(h->slot[2 * i + 1]));
        free(h->slot);
        h->slot = ns;
        h->cap = ncap;
    }
    htab_place(h->slot, h->cap, idx + 1, (uint32_t)hash, home((uint32_t)hash));
    h->n++;
    return STORE_OK;
}

void store_htab_free(store_htab *h)
{
    free(h->slot);
    memset(h, 0, sizeof *h);
}

struct store_arena_chunk {
    store_arena_chunk *next;
    size_t used, cap;
    char data[];
};

const char *store_arena_strndup(store_arena *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    store_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = n + 1 > 65536 - sizeof *c ? n + 1 : 65536 - sizeof *c;
        store_arena_chunk *nc = malloc(sizeof *nc + cap);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->cap = cap;
        /* A big string gets its own chunk behind the current one, so the current chunk's
         * free space stays in use. */
        if (c && n + 1 > 65536 / 4) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    char *d = c->data + c->used;
    memcpy(d, s, n);
    d[n] = 0;
    c->used += n + 1;
    return d;
}

const char *store_arena_strdup(store_arena *a, const char *s)
{
    return s ? store_arena_strndup(a, s, strlen(s)) : NULL;
}

void store_arena_free(store_arena *a)
{
    for (store_arena_chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
}

int store_grow(void **pArr, uint64_t *pCap, uint64_t need, size_t size)
{
    if (need <= *pCap)
        return STORE_OK;
    uint64_t ncap = *pCap ? *pCap : 16;
    while (ncap < need)
        ncap *= 2;
    if (ncap > SIZE_MAX / size)
        return STORE_ENOMEM;
    void *p = realloc(*pArr, ncap * size);
    if (!p)
        return STORE_ENOMEM;
    *pArr = p;
    *pCap = ncap;
    return STORE_OK;
}

void store_blob_put(store_blob *f, const void *p, size_t n)
{
    size_t need = f->n + (n + 7) / 8 * 8;
    if (f->bad || need < f->n)
        return;
    if (need > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *b = realloc(f->b, cap);
        if (!b) {
            f->bad = 1;
            return;
        }
        store_hint_huge(b);
        f->b = b;
        f->cap = cap;
    }
    if (p && n)
        memcpy(f->b + f->n, p, n);
    memset(f->b + f->n + n, 0, need - f->n - n);
    f->n = need;
}

const void *store_blob_take(store_blob *f, uint64_t n, size_t size)
{
    if (f->bad || (size && n > (f->cap - f->n) / size)) {
        f->bad = 1;
        return NULL;
    }
    const void *p = f->b + f->n;
    size_t len = (size_t)n * size, step = (len + 7) / 8 * 8;
    f->n = step < f->cap - f->n ? f->n + step : f->cap;
    return p;
}

#define HUGE_MIN                                                                                   \
    ((size_t)32 << 20) /* glibc's largest mmap threshold: blocks this big are mappings */

void store_hint_huge(void *p)
{
#ifdef MADV_HUGEPAGE
    size_t n = p ? malloc_usable_size(p) : 0;
    if (n < HUGE_MIN)
        return;
    /* the whole pages of the block: a mapping's first page holds glibc's header, and the usable
     * size reaches its end, so the advice covers the mapping exactly and does not split it */
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(pg - 1);
    uintptr_t b = ((uintptr_t)p + n + pg - 1) & ~(pg - 1);
    (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* a hint: its failure changes nothing */
#else
    (void)p;
#endif
}

void store_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}
