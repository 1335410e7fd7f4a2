/* load.c: store_run_load() and store_run_load_files(): load one or many tlview files into a run,
 * scanning the kernel tables (and the big API and range tables) on one thread per CPU, all or
 * nothing (a failed load rolls the run back); store_run_load_meta(), the same checks for an index
 * that reads no records; and store_probe(), which recognises a tlview file. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

/* Phase 2: worker threads take shares of the kernel tables (and of big API and range tables) in
 * turn. */
typedef struct scan_pool {
    scan_part *part;
    uint32_t n;
    uint32_t next; /* next share to scan (atomic) */
} scan_pool;

static void *scan_worker(void *arg)
{
    scan_pool *pool = arg;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
        if (i >= pool->n)
            return NULL;
        scan_part *s = &pool->part[i];
        s->rc = store_load_scan(s);
        /* A file's own connection serves its first kernel share only: its pages can go now. */
        if (!s->own_db && s->rc == STORE_OK)
            store_load_close_db(s->L);
    }
}

static uint32_t threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 16 ? 16 : (uint32_t)cpus;
}

static void scan_all(scan_part *part, uint32_t n)
{
    scan_pool pool = {part, n, 0};
    uint32_t nt = threads() < n ? threads() : n;
    pthread_t th[16];
    uint32_t started = 0;
    for (uint32_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, scan_worker, &pool) == 0)
            started++;
    scan_worker(&pool); /* this thread works too; alone if no thread could start */
    for (uint32_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

/* Cuts each file's kernel table, and the API and range tables phase 1 left (rows[].late), into
 * shares: one per table when there are files enough to keep every CPU busy, else rowid ranges,
 * so that one big file is read by every CPU. Shares go in the order the threads take them: the
 * kernels first (a file's connection closes after its first kernel share, freeing its cache),
 * the smaller range tables last; each file after the one before. The slices of each array are
 * laid out from at[kind] on. Returns the number of shares written to part (room for n * 48). */
static uint32_t make_parts(loader *L, uint32_t n, char *at[4], scan_part *part)
{
    static const store_rec kinds[3] = {STORE_REC_KERNEL, STORE_REC_API, STORE_REC_RANGE};
    uint32_t nt = threads(), np = 0;
    for (int k = 0; k < 3; k++) {
        store_rec kind = kinds[k];
        size_t size = store_run_recs(L[0].run, kind).size;
        for (uint32_t i = 0; i < n; i++) {
            const store_rowids *r = &L[i].rows[kind];
            if (kind != STORE_REC_KERNEL && !r->late)
                continue;
            /* Split only where rowids are dense from 1, so no share can hold more rows than
             * its range of rowids. */
            uint32_t shares = 1;
            if (n < nt && r->min == 1 && r->cap == (uint64_t)r->max &&
                r->cap >= 2 * STORE_MIN_SHARE) {
                shares = (nt + n - 1) / n;
                if (shares > r->cap / STORE_MIN_SHARE)
                    shares = (uint32_t)(r->cap / STORE_MIN_SHARE);
            }
            uint64_t chunk = r->cap / shares;
            for (uint32_t p = 0; p < shares; p++) {
                scan_part *s = &part[np++];
                memset(s, 0, sizeof *s);
                s->L = &L[i];
                s->kind = kind;
                /* The file's connection serves its first kernel share; the rest open their own. */
                s->own_db = kind != STORE_REC_KERNEL || p > 0;
                s->cap = p + 1 < shares ? chunk : r->cap - p * chunk;
                if (!s->own_db && shares == 1) {
                    s->lo = INT64_MIN;
                } else {
                    s->lo = r->min + (int64_t)(p * chunk);
                    /* The last share takes every row above: a kernel table that grew keeps none
                     * back. API and range rows stop where the file's read saw them end, as the
                     * strings and processes they name did. */
                    s->hi = p + 1 < shares             ? s->lo + (int64_t)chunk - 1
                            : kind == STORE_REC_KERNEL ? INT64_MAX
                                                       : r->max;
                }
                s->out = at[kind];
                at[kind] += s->cap * size;
            }
        }
    }
    return np;
}

/* Loads paths[0..n) (n <= GROUP) into the run: metadata one file after the other, then the kernel
 * scans, and the API and range scans of big tables, side by side. On error the message is left
 * in `err`; the caller rolls back. */
static int load_group(store_run *run, const char *const *paths, uint32_t n, loader *L,
                      scan_part *part, char *err, size_t errlen)
{
    int rc = STORE_OK;
    uint32_t bad = 0;
    uint64_t total[4] = {0};
    memset(L, 0, n * sizeof *L); /* the ones never opened are closed too */
    for (uint32_t i = 0; i < n && rc == STORE_OK; i++) {
        L[i] = (loader){.run = run, .path = paths[i]};
        /* Once one file's API or range table is left to phase 2, the next files' are too, so
         * that the records stay in file order. */
        for (int k = 0; i && k < 4; k++)
            L[i].rows[k].late = L[i - 1].rows[k].late;
        rc = store_load_open(&L[i]);
        for (int k = 0; k < 4; k++)
            if (k == STORE_REC_KERNEL || L[i].rows[k].late)
                total[k] += L[i].rows[k].cap;
        bad = i;
    }
    /* Every share gets its slice of one array, so the scans can run side by side. At least one
     * kernel slot, so the slices below never offset a null array (files with no kernels). */
    total[STORE_REC_KERNEL] += !total[STORE_REC_KERNEL];
    for (int k = 0; k < 4 && rc == STORE_OK; k++)
        if (total[k] && store_run_reserve(run, (store_rec)k, total[k], 1))
            rc = STORE_ENOMEM;
    if (rc == STORE_ENOMEM)
        store_fmt(err, errlen, "%s: out of memory while loading", L[bad].path);
    else if (rc != STORE_OK)
        store_fmt(err, errlen, "%s", L[bad].err);
    if (rc == STORE_OK) {
        char *at[4];
        for (int k = 0; k < 4; k++) {
            store_recs a = store_run_recs(run, (store_rec)k);
            at[k] = total[k] ? (char *)*a.arr + *a.n * a.size : NULL; /* NULL: no shares */
        }
        uint32_t np = make_parts(L, n, at, part);
        scan_all(part, np);
        /* The first error in the order the tables were always read: the API calls, the ranges,
         * then the kernels (each file's shares in file and rowid order). */
        static const store_rec told[3] = {STORE_REC_API, STORE_REC_RANGE, STORE_REC_KERNEL};
        for (int k = 0; k < 3 && rc == STORE_OK; k++)
            for (uint32_t i = 0; i < np && rc == STORE_OK; i++)
                if (part[i].kind == told[k] && (rc = part[i].rc) != STORE_OK)
                    store_fmt(err, errlen, "%s", part[i].err);
        /* Close the gaps that shares with fewer rows than row ids left, in order; each share
         * starts a sort segment. */
        for (uint32_t i = 0; i < np && rc == STORE_OK; i++) {
            scan_part *s = &part[i];
            store_recs a = store_run_recs(run, s->kind);
            store_segs *segs = &STORE_PRIV(run)->segs[s->kind];
            char *end = (char *)*a.arr + *a.n * a.size;
            if (end != s->out)
                memmove(end, s->out, s->n * a.size);
            if (store_grow((void **)&segs->start, &segs->cap, segs->n + 1, sizeof *segs->start) ==
                    STORE_OK &&
                (!segs->n || segs->start[segs->n - 1] < *a.n))
                segs->start[segs->n++] = *a.n;
            *a.n += s->n;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        store_load_close(&L[i]);
    return rc;
}

/* Files open at once: bounded so thousands of files fit in the descriptor limit. */
#define GROUP 64

int store_run_load_files(store_run *run, const char *const *paths, uint32_t npaths)
{
    if (!run || (!paths && npaths))
        return STORE_EINVAL;
    for (uint32_t i = 0; i < npaths; i++)
        if (!paths[i])
            return STORE_EINVAL;
    loader *L = calloc(GROUP, sizeof *L);
    scan_part *part = calloc((size_t)GROUP * 48, sizeof *part);
    if (!L || !part) {
        free(L);
        free(part);
        return store_run_error(run, STORE_ENOMEM, "out of memory loading %u files", npaths);
    }
    store_run_mark mark;
    store_run_get_mark(run, &mark);
    store_run_priv *p = STORE_PRIV(run);
    int rc = STORE_OK;
    for (uint32_t g = 0; g < npaths && rc == STORE_OK; g += GROUP) {
        uint32_t n = npaths - g < GROUP ? npaths - g : GROUP;
        rc = load_group(run, paths + g, n, L, part, p->errmsg, sizeof p->errmsg);
    }
    if (rc != STORE_OK)
        store_run_rollback(run, &mark);
    else
        p->errmsg[0] = 0;
    free(L);
    free(part);
    return rc;
}

int store_run_load_meta(store_run *run, const char *const *paths, uint32_t npaths,
                        uint64_t *kernels)
{
    if (!run || (!paths && npaths))
        return STORE_EINVAL;
    for (uint32_t i = 0; i < npaths; i++)
        if (!paths[i])
            return STORE_EINVAL;
    store_run_mark mark;
    store_run_get_mark(run, &mark);
    store_run_priv *p = STORE_PRIV(run);
    int rc = STORE_OK;
    for (uint32_t i = 0; i < npaths && rc == STORE_OK; i++) {
        loader L = {.run = run, .path = paths[i], .meta_only = 1};
        rc = store_load_open(&L);
        if (rc == STORE_ENOMEM)
            store_fmt(p->errmsg, sizeof p->errmsg, "%s: out of memory while loading", paths[i]);
        else if (rc != STORE_OK)
            store_fmt(p->errmsg, sizeof p->errmsg, "%s", L.err);
        else if (kernels)
            kernels[i] = L.rows[STORE_REC_KERNEL].cap;
        store_load_close(&L);
    }
    if (rc != STORE_OK)
        store_run_rollback(run, &mark);
    else
        p->errmsg[0] = 0;
    return rc;
}

int store_run_load(store_run *run, const char *path)
{
    if (!path)
        return STORE_EINVAL;
    return store_run_load_files(run, &path, 1);
}

int store_probe(const char *path)
{
    char err[1024];
    sqlite3 *db = NULL;
    int64_t t0, schema;
    store_clock clock;
    store_guard guard;
    if (!path || store_file_check(path, err, sizeof err) != STORE_OK)
        return 0;
    store_guard_start(&guard, path);
    if (store_open_read(path, &db, err, sizeof err) != STORE_OK)
        return 0;
    /* Guarded like a load. A meta that is not a plain table (a view...) is not read, but the
     * file is taken, so that its load says what is wrong with it. */
    int refused = 0;
    int rc = store_guard_attach(db, &guard, path, err, sizeof err);
    if (rc == STORE_OK)
        rc = store_guard_tables(db, path, (const char *const[]){"meta", NULL}, &refused, err,
                                sizeof err);
    if (rc == STORE_OK)
        rc = store_schema_check(db, path, &t0, &clock, &schema, err, sizeof err);
    sqlite3_close(db);
    /* A newer tlview file is still a tlview file: the load then says why it cannot be read. */
    return rc == STORE_OK || rc == STORE_ENEWER || refused;
}
