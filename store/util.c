/* util.c: small containers shared by the writer and the run builder: the index hash table
 * (open addressing, linear probing, keys kept in the caller's arrays), the string arena and
 * geometric array growth; and the guard every reader puts on a file from others (SQLite's
 * defences for untrusted databases, a time limit, plain tables only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

void store_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- files from others */

double store_read_base_s = 10.0;   /* enough for any schema and metadata on a loaded machine */
double store_read_s_per_mib = 1.0; /* 1 MiB/s: 100x slower than a real read, NFS included */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double file_mib(const char *path)
{
    char wal[4096];
    struct stat sb;
    double bytes = stat(path, &sb) == 0 ? (double)sb.st_size : 0;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &sb) == 0)
        bytes += (double)sb.st_size;
    return bytes / (1024 * 1024);
}

void store_guard_start(store_guard *g, const char *path)
{
    g->limit_s = store_read_base_s + store_read_s_per_mib * file_mib(path);
    g->deadline = now_ns() + (int64_t)(g->limit_s * 1e9);
    g->expired = 0;
}

/* SQLite's progress handler: interrupts the statement once the file's time is up. */
static int guard_tick(void *arg)
{
    store_guard *g = arg;
    if (now_ns() < g->deadline)
        return 0;
    g->expired = 1;
    return 1;
}

#define GUARD_TICK_OPS 10000 /* VM instructions between clock reads (tens of microseconds) */

int store_guard_attach(sqlite3 *db, store_guard *g, const char *path, char *err, size_t errlen)
{
    static const int off[] = {SQLITE_DBCONFIG_ENABLE_VIEW, SQLITE_DBCONFIG_ENABLE_TRIGGER,
                              SQLITE_DBCONFIG_TRUSTED_SCHEMA};
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    for (size_t i = 0; i < sizeof off / sizeof off[0] && rc == SQLITE_OK; i++)
        rc = sqlite3_db_config(db, off[i], 0, (int *)NULL);
    if (rc != SQLITE_OK) {
        store_fmt(err, errlen, "%s: cannot turn on SQLite's defences for untrusted files: %s", path,
                  sqlite3_errstr(rc));
        return STORE_EIO;
    }
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, STORE_MAX_VALUE);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_progress_handler(db, GUARD_TICK_OPS, guard_tick, g);
    return STORE_OK;
}

/* The message of a schema that cannot be read: damage, or an SQLite without table_list. */
static int schema_error(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    int ec = sqlite3_extended_errcode(db) & 0xff;
    if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || ec == SQLITE_FORMAT)
        store_fmt(err, errlen, "%s: truncated or corrupt (%s)", path, sqlite3_errmsg(db));
    else
        store_fmt(err, errlen, "%s: cannot read the schema: %s", path, sqlite3_errmsg(db));
    return STORE_EFORMAT;
}

int store_guard_tables(sqlite3 *db, const char *path, const char *const *names, int *pRefused,
                       char *err, size_t errlen)
{
    /* table_list and table_xinfo read SQLite's parsed schema: the sql text of sqlite_schema can
     * be written to look like anything. */
    sqlite3_stmt *kind = NULL, *gen = NULL;
    int rc = STORE_OK, refused = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT type FROM pragma_table_list WHERE schema = 'main' AND"
                           " name = ?1 COLLATE NOCASE",
                           -1, &kind, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT name FROM pragma_table_xinfo(?1) WHERE hidden IN (2, 3)"
                           " LIMIT 1",
                           -1, &gen, NULL) != SQLITE_OK) {
        rc = schema_error(db, path, err, errlen);
    }
    for (; rc == STORE_OK && *names; names++) {
        sqlite3_reset(kind);
        sqlite3_bind_text(kind, 1, *names, -1, SQLITE_STATIC);
        int step = sqlite3_step(kind);
        if (step == SQLITE_DONE)
            continue;
        const char *type = step == SQLITE_ROW ? (const char *)sqlite3_column_text(kind, 0) : NULL;
        if (!type) {
            rc = schema_error(db, path, err, errlen);
        } else if (strcmp(type, "table") != 0) {
            store_fmt(err, errlen, "%s: '%s' is a %s%s, not a table", path, *names, type,
                      strcmp(type, "view") == 0 ? "" : " table");
            rc = STORE_EFORMAT;
            refused = 1;
        } else {
            sqlite3_reset(gen);
            sqlite3_bind_text(gen, 1, *names, -1, SQLITE_STATIC);
            if ((step = sqlite3_step(gen)) == SQLITE_ROW) {
                store_fmt(err, errlen,
                          "%s: table '%s' has a generated column '%s' (a hostile or damaged "
                          "file?)",
                          path, *names, (const char *)sqlite3_column_text(gen, 0));
                rc = STORE_EFORMAT;
                refused = 1;
            } else if (step != SQLITE_DONE) {
                rc = schema_error(db, path, err, errlen);
            }
        }
    }
    sqlite3_finalize(kind);
    sqlite3_finalize(gen);
    if (pRefused)
        *pRefused = refused;
    return rc;
}

int store_guard_explain(const store_guard *g, sqlite3 *db, const char *path, int rc, char *err,
                        size_t errlen)
{
    if (rc != STORE_EFORMAT && rc != STORE_EIO)
        return rc;
    char secs[32];
    if (g->limit_s < 1) /* only a test sets a limit this low */
        store_fmt(secs, sizeof secs, "%.3g", g->limit_s);
    else
        store_fmt(secs, sizeof secs, "%.0f", g->limit_s);
    if (g->expired)
        store_fmt(err, errlen, "%s: reading took over %s s (a hostile or damaged file?)", path,
                  secs);
    else if (db && sqlite3_errcode(db) == SQLITE_TOOBIG)
        store_fmt(err, errlen, "%s: a value over %d MiB (a hostile or damaged file?)", path,
                  STORE_MAX_VALUE >> 20);
    else
        return rc;
    return STORE_EFORMAT;
}

size_t store_utf8_decode(const char *s, uint32_t *pCp)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char b = p[0];
    if (b < 0x80) {
        *pCp = b;
        return 1;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (b >= 0xc2 && b <= 0xdf)
        n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        lo = b == 0xe0 ? 0xa0 : 0x80;
        hi = b == 0xed ? 0x9f : 0xbf;
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        lo = b == 0xf0 ? 0x90 : 0x80;
        hi = b == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = b & (0x7f >> n);
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    *pCp = cp;
    return n;
}
