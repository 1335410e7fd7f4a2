/* load.c: store_run_load() and store_run_load_files(): load one or many tlview files into a run,
 * scanning the kernel tables on one thread per CPU, all or nothing (a failed load rolls the run
 * back); and store_probe(), which recognises a tlview file. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

/* Phase 2: worker threads take files in turn and scan their kernels. */
typedef struct scan_pool {
    loader *L;
    uint32_t n;
    uint32_t next; /* next file to scan (atomic) */
} scan_pool;

static void *scan_worker(void *arg)
{
    scan_pool *pool = arg;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
        if (i >= pool->n)
            return NULL;
        pool->L[i].rc = store_load_scan(&pool->L[i]);
        /* Its pages are no longer needed: only as many files as threads hold memory. */
        if (pool->L[i].rc == STORE_OK)
            store_load_close_db(&pool->L[i]);
    }
}

static void scan_all(loader *L, uint32_t n)
{
    scan_pool pool = {L, n, 0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt = cpus < 1 ? 1 : cpus > 16 ? 16 : (uint32_t)cpus;
    if (nt > n)
        nt = n;
    pthread_t th[16];
    uint32_t started = 0;
    for (uint32_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, scan_worker, &pool) == 0)
            started++;
    scan_worker(&pool); /* this thread works too; alone if no thread could start */
    for (uint32_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

/* Loads paths[0..n) (n <= GROUP) into the run: metadata one file after the other, then the kernel
 * scans side by side. On error the message is left in `err`; the caller rolls back. */
static int load_group(store_run *run, const char *const *paths, uint32_t n, loader *L, char *err,
                      size_t errlen)
{
    int rc = STORE_OK;
    uint32_t bad = 0;
    uint64_t total = 0;
    memset(L, 0, n * sizeof *L); /* the ones never opened are closed too */
    for (uint32_t i = 0; i < n && rc == STORE_OK; i++) {
        L[i] = (loader){.run = run, .path = paths[i]};
        rc = store_load_open(&L[i]);
        total += L[i].kcap;
        bad = i;
    }
    /* Every file gets its slice of one array, so the scans can run side by side. */
    if (rc == STORE_OK && total && store_run_reserve_kernels(run, total))
        rc = STORE_ENOMEM;
    if (rc == STORE_OK) {
        uint64_t at = run->nkernels;
        for (uint32_t i = 0; i < n; i++) {
            L[i].kout = run->kernels + at;
            at += L[i].kcap;
        }
        scan_all(L, n);
        /* Close the gaps that files with fewer rows than row ids left, in file order. */
        store_segs *segs = &STORE_PRIV(run)->segs[0];
        for (uint32_t i = 0; i < n && rc == STORE_OK; i++) {
            if ((rc = L[i].rc) != STORE_OK) {
                bad = i;
                break;
            }
            if (run->kernels + run->nkernels != L[i].kout)
                memmove(run->kernels + run->nkernels, L[i].kout, L[i].kn * sizeof *L[i].kout);
            if (store_grow((void **)&segs->start, &segs->cap, segs->n + 1, sizeof *segs->start) ==
                STORE_OK && (!segs->n || segs->start[segs->n - 1] < run->nkernels))
                segs->start[segs->n++] = run->nkernels;
            run->nkernels += L[i].kn;
        }
    }
    if (rc == STORE_ENOMEM)
        store_fmt(err, errlen, "%s: out of memory while loading", L[bad].path);
    else if (rc != STORE_OK)
        store_fmt(err, errlen, "%s", L[bad].err);
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
    if (!L)
        return store_run_error(run, STORE_ENOMEM, "out of memory loading %u files", npaths);
    store_run_mark mark;
    store_run_get_mark(run, &mark);
    store_run_priv *p = STORE_PRIV(run);
    int rc = STORE_OK;
    for (uint32_t g = 0; g < npaths && rc == STORE_OK; g += GROUP) {
        uint32_t n = npaths - g < GROUP ? npaths - g : GROUP;
        rc = load_group(run, paths + g, n, L, p->errmsg, sizeof p->errmsg);
    }
    if (rc != STORE_OK)
        store_run_rollback(run, &mark);
    else
        p->errmsg[0] = 0;
    free(L);
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
    int64_t t0;
    store_clock clock;
    if (!path || store_file_check(path, err, sizeof err) != STORE_OK)
        return 0;
    if (store_open_read(path, &db, err, sizeof err) != STORE_OK)
        return 0;
    int rc = store_schema_check(db, path, &t0, &clock, err, sizeof err);
    sqlite3_close(db);
    /* A newer tlview file is still a tlview file: the load then says why it cannot be read. */
    return rc == STORE_OK || rc == STORE_ENEWER;
}
