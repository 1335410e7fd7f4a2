/* cache.c: when tlview reads a run and its analysis from the cache beside the traces, and when it
 * writes them (store/SCHEMA.md, "The cache"). cli_load() asks cli_cache_load_run() before
 * reading the files and hands the run to cli_cache_save_run() after; cli_analyse() does the same
 * for the analysis of a run read so (not a run cut to a range, nor one judged against a baseline
 * read otherwise). The cache folder is ".tlview-cache" in the first input's folder, else the
 * per-user "$XDG_CACHE_HOME/tlview" (~/.cache/tlview); each write there is followed by a prune of
 * that folder (store_cache_prune, to TLVIEW_CACHE_MAX). --no-cache or TLVIEW_CACHE=off skips it;
 * TLVIEW_CACHE=verbose says on stderr what was read, written, refused or removed, and why. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int cache_mode = -1; /* -1 not yet read; 0 off; 1 on; 2 on and said */
static int deferred;        /* cli_cache_defer(): nothing written until cli_cache_keep() */

/* The mode: cli_cache_disable()'s, else TLVIEW_CACHE's (off, 0, no: off; verbose: said). */
static int mode(void)
{
    if (cache_mode < 0) {
        const char *e = getenv("TLVIEW_CACHE");
        cache_mode = !e || !*e                                                  ? 1
                     : !strcmp(e, "off") || !strcmp(e, "0") || !strcmp(e, "no") ? 0
                     : !strcmp(e, "verbose")                                    ? 2
                                                                                : 1;
    }
    return cache_mode;
}

void cli_cache_disable(void)
{
    cache_mode = 0;
    setenv("TLVIEW_CACHE", "off", 1); /* and for the tlview commands this one starts */
}

/* Says what the cache did on stderr, under TLVIEW_CACHE=verbose. */
__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
    if (mode() < 2)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cli_msg(stderr, "tlview: cache: %s\n", buf);
}

/* The bytes the caches of one folder may hold: TLVIEW_CACHE_MAX ("20G", "500M", "4096K", bytes;
 * "0" keeps only the files of the run just written for), else CACHE_MAX_DEFAULT. */
#define CACHE_MAX_DEFAULT ((uint64_t)16 << 30)
static uint64_t max_bytes(void)
{
    const char *e = getenv("TLVIEW_CACHE_MAX");
    uint64_t v;
    if (!e || !*e)
        return CACHE_MAX_DEFAULT;
    if (store_parse_size(e, &v) != 0) {
        static int said;
        if (!said++)
            cli_msg(stderr,
                    "tlview: TLVIEW_CACHE_MAX='%.64s' is not a size (20G, 500M, bytes): "
                    "the caches keep to %llu GiB a folder\n",
                    e, (unsigned long long)(CACHE_MAX_DEFAULT >> 30));
        return CACHE_MAX_DEFAULT;
    }
    return v;
}

/* Bounds the folder `dir` after `name` was written there (store_cache_prune: the caches no one
 * can read again, then the least recently used beyond TLVIEW_CACHE_MAX), keeping every file of
 * its run: those whose names begin with the run's hash ("<H>.run", "<H>-<O>.analysis" and
 * ".index"), so that a bound smaller than one run's files never removes the run its analysis
 * was just written for; said under verbose. */
static void prune(const char *dir, const char *name)
{
    store_cache_pruned p;
    char run[64];
    snprintf(run, sizeof run, "%.*s", (int)strcspn(name, ".-"), name);
    if (store_cache_prune(dir, max_bytes(), run, &p) == 0 && (p.dead || p.evicted))
        note("removed from %s: %u that could not be read again, %u least recently used "
             "(%.1f MiB); %.1f MiB left",
             dir, p.dead, p.evicted, (double)p.freed_bytes / (1 << 20),
             (double)p.kept_bytes / (1 << 20));
}

/* CLOCK_MONOTONIC in seconds, for the notes. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The folder of `path` (a file or a folder given on the command line) into dir (n bytes). */
static void folder_of(const char *path, char *dir, size_t n)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(dir, n, "%s", path);
        return;
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* The identity of this tlview binary (its file's device, inode, size and mtime): a cache holds
 * raw structs and results of this build's code, so another build never reads it. */
static void build_id(char *buf, size_t n)
{
    struct stat st;
    if (stat("/proc/self/exe", &st) != 0)
        memset(&st, 0, sizeof st);
    snprintf(buf, n, "tlview %s %llu:%llu %lld %lld.%09ld", CLI_VERSION,
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* A run's cache tag, kept on the run (store_run_set_key):
 * "<len of dir> <dir><len of first> <first><name>\n<key>". */
typedef struct tag {
    char dir[4096];   /* the cache folder it was read from or written to ("" none yet) */
    char first[4096]; /* the first input, whose folder the cache goes beside */
    char name[64];    /* the file's name in it */
    const char *key;  /* the key text */
} tag;

/* Reads "<len> <text>" at *s into buf (n bytes) and moves *s past it; -1 when malformed. */
static int counted(const char **s, char *buf, size_t n)
{
    char *end;
    unsigned long len = strtoul(*s, &end, 10);
    if (*end != ' ' || len >= n || strnlen(end + 1, len) < len)
        return -1;
    memcpy(buf, end + 1, len);
    buf[len] = 0;
    *s = end + 1 + len;
    return 0;
}

/* Splits the run's tag; 0, or -1 when the run has none. */
static int tag_of(const store_run *run, tag *t)
{
    const char *s = run ? store_run_key(run) : NULL;
    if (!s || counted(&s, t->dir, sizeof t->dir) || counted(&s, t->first, sizeof t->first))
        return -1;
    const char *nl = strchr(s, '\n');
    if (!nl || (size_t)(nl - s) >= sizeof t->name)
        return -1;
    snprintf(t->name, sizeof t->name, "%.*s", (int)(nl - s), s);
    t->key = nl + 1;
    return 0;
}

/* Sets the run's tag; a failure only loses the run's cache. */
static void set_tag(store_run *run, const tag *t)
{
    size_t n = strlen(t->dir) + strlen(t->first) + strlen(t->name) + strlen(t->key) + 64;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%zu %s%zu %s%s\n%s", strlen(t->dir), t->dir, strlen(t->first), t->first,
                 t->name, t->key);
        store_run_set_key(run, s);
    }
    free(s);
}

/* The two folders a cache may be in, in the order looked at: [0] beside the traces, [1] the
 * user's; dirs[i][0] = 0 for one that is not usable. `create` makes them. */
static void cache_dirs(const char *first, int create, char dirs[2][4000])
{
    char tdir[4096];
    folder_of(first, tdir, sizeof tdir);
    if (store_cache_dir(tdir, create, dirs[0], sizeof dirs[0]) != 0)
        dirs[0][0] = 0;
    if (store_cache_dir(NULL, create, dirs[1], sizeof dirs[1]) != 0)
        dirs[1][0] = 0;
}

int cli_cache_load_run(char *const *paths, size_t n, int separate_gpus, store_run **ppRun)
{
    *ppRun = NULL;
    if (!mode() || !n || n > UINT32_MAX)
        return -1;
    char extra[512], id[256], *key = NULL, name_src[64];
    const char *me = getenv("TLVIEW_MAX_EVENTS"), *mm = getenv("TLVIEW_MAX_MEMORY");
    build_id(id, sizeof id);
    snprintf(extra, sizeof extra, "%s, separate_gpus %d, max_events '%.64s', max_memory '%.64s'",
             id, separate_gpus, me ? me : "", mm ? mm : "");
    if (store_cache_key((const char *const *)paths, (uint32_t)n, extra, &key) != 0)
        return -1; /* an input that is not a regular file: no cache */
    /* the name: by the inputs' paths as given (the run holds them: each process's file) and the
     * option, so that a changed input (or a new build of tlview) replaces its cache rather than
     * adding one */
    uint64_t h = (uint64_t)separate_gpus + 1;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + store_cache_name_hash(paths[i]);
    snprintf(name_src, sizeof name_src, "%016llx.run", (unsigned long long)h);
    tag t = {.key = key};
    snprintf(t.name, sizeof t.name, "%s", name_src);
    snprintf(t.first, sizeof t.first, "%s", paths[0]);
    char dirs[2][4000];
    cache_dirs(paths[0], 0, dirs);
    for (int i = 0; i < 2 && !*ppRun; i++) {
        char path[4096 + 64], err[1024];
        if (!dirs[i][0])
            continue;
        snprintf(path, sizeof path, "%.3999s/%s", dirs[i], t.name);
        if (access(path, F_OK) != 0 && errno == ENOENT)
            continue;
        double t0 = now_s();
        if (store_run_cache_load(path, key, ppRun, err, sizeof err) == 0) {
            note("read %s in %.3f s", path, now_s() - t0);
            snprintf(t.dir, sizeof t.dir, "%.3999s", dirs[i]);
        } else
            note("not used: %s", err);
    }
    if (*ppRun) {
        set_tag(*ppRun, &t);
        free(key);
        return 0;
    }
    /* a miss: the key waits on a run of no records for cli_cache_save_run() */
    if (!(*ppRun = store_run_new())) {
        free(key);
        return -1;
    }
    set_tag(*ppRun, &t);
    free(key);
    return 1;
}

/* Writes the run's cache (key `key`, file `name`) into the first usable cache folder for
 * `first` (beside the traces, else the user's), that folder into used (usedlen bytes); a
 * ".tlview-cache" made here and left empty is removed again. */
static void write_run(const store_run *run, const char *first, const char *name, const char *key,
                      char *used, size_t usedlen)
{
    char tdir[4096], dir[4096], err[1024] = "";
    folder_of(first, tdir, sizeof tdir);
    for (int i = 0; i < 2; i++) {
        int existed = 0;
        if (i == 0) {
            struct stat st;
            char d[4200];
            snprintf(d, sizeof d, "%s/.tlview-cache", tdir);
            existed = lstat(d, &st) == 0;
        }
        if (store_cache_dir(i == 0 ? tdir : NULL, 1, dir, sizeof dir) != 0)
            continue;
        double t0 = now_s();
        if (store_run_cache_save(run, dir, name, key, err, sizeof err) == 0) {
            note("wrote run %s/%s in %.3f s", dir, name, now_s() - t0);
            snprintf(used, usedlen, "%s", dir);
            prune(dir, name);
            return;
        }
        note("not written: %s", err);
        if (i == 0 && !existed)
            rmdir(dir); /* only when empty: what another command wrote meanwhile stays */
    }
}

void cli_cache_defer(int on)
{
    deferred = on;
}

/* Writes the run's cache when it was neither read from one nor written yet; 0 when the run has
 * one now (its tag names the folder), else -1. */
static int keep_run(store_run *run, tag *t)
{
    if (!mode() || tag_of(run, t) != 0)
        return -1;
    if (!t->dir[0]) {
        write_run(run, t->first, t->name, t->key, t->dir, sizeof t->dir);
        set_tag(run, t);         /* with the folder it went to, where its analyses go */
        if (tag_of(run, t) != 0) /* t->key pointed into the tag set_tag() replaced */
            return -1;
    }
    return t->dir[0] ? 0 : -1;
}

void cli_cache_save_run(store_run *run)
{
    tag t;
    if (!deferred)
        keep_run(run, &t);
}

/* The analysis's key and file name for run tag `t`, options `o` and baseline `base` (NULL, or a
 * run with a tag); -1 when there is none (a baseline read otherwise). */
static int analysis_key(const tag *t, const analysis_options *o, const store_run *base, char **pKey,
                        char *name, size_t n)
{
    tag bt = {.key = ""};
    if (base && tag_of(base, &bt) != 0)
        return -1;
    const char *mr = o->measure_range ? o->measure_range : "";
    size_t len = strlen(t->key) + strlen(bt.key) + strlen(mr) + 1024;
    char *k = malloc(len);
    if (!k)
        return -1;
    int w = snprintf(k, len,
                     "%s\nanalysis %a %a %a %a %a %a %a %lld %d %d %lld %lld range %zu:%s\n"
                     "baseline %s\n",
                     t->key, o->concurrent_max_stretch, o->sliced_max_parallelism,
                     o->queued_max_overlap, o->min_reference_coverage, o->quick_min_share,
                     o->switch_min_share, o->switch_max_quick, (long long)o->join_gap_ns,
                     o->assume_mps, (int)o->measure, (long long)o->measure_t0,
                     (long long)o->measure_t1, strlen(mr), mr, bt.key);
    uint64_t h = store_cache_name_hash(k + strlen(t->key));
    snprintf(name, n, "%.16s-%016llx.analysis", t->name, (unsigned long long)h);
    *pKey = k;
    return w < 0 ? -1 : 0;
}

/* An analysis's frozen block and key, for save_analysis(). */
typedef struct frozen {
    const void *blob;
    size_t len;
    const char *key;
} frozen;

static int save_analysis(const void *obj, const char *dir, const char *name, char *err,
                         size_t errlen)
{
    const frozen *f = obj;
    store_cache_part part = {1, 1, f->blob, f->len};
    return store_cache_write(dir, name, f->key, &part, 1, err, errlen);
}

/* Writes a's block under key `key` as "<dir>/<name>" (said under verbose). */
static void keep_analysis(const analysis *a, const char *dir, const char *name, const char *key)
{
    void *blob = NULL;
    size_t len = 0;
    char err[1024];
    if (analysis_freeze(a, &blob, &len) != ANALYSIS_OK)
        return;
    frozen f = {blob, len, key};
    if (save_analysis(&f, dir, name, err, sizeof err) == 0) {
        note("wrote analysis %s/%s", dir, name);
        prune(dir, name);
    } else
        note("not written: %s", err);
    free(blob);
}

int cli_cache_analyse(const store_run *run, const analysis_options *o, analysis **ppOut)
{
    *ppOut = NULL;
    tag t;
    char name[128], path[4300], err[1024];
    char *key = NULL;
    if (!mode() || tag_of(run, &t) != 0 || !t.dir[0] ||
        analysis_key(&t, o, o->baseline, &key, name, sizeof name) != 0)
        return analysis_run(run, o, ppOut);
    snprintf(path, sizeof path, "%s/%s", t.dir, name);
    store_cache *c = NULL;
    double t0 = now_s();
    if (access(path, F_OK) == 0 || errno != ENOENT) {
        if (store_cache_open(path, key, &c, err, sizeof err) == 0) {
            void *blob;
            uint64_t len;
            int rc = store_cache_section(c, 1, 1, NULL, NULL, &blob, &len, err, sizeof err);
            if (rc == 0 && analysis_thaw(run, o, blob, len, c, ppOut) == ANALYSIS_OK) {
                note("read %s in %.3f s", path, now_s() - t0); /* c is the analysis's now */
                free(key);
                return ANALYSIS_OK;
            }
            if (rc == 0)
                snprintf(err, sizeof err, "%.900s: the analysis does not fit the run", path);
            store_cache_close(c);
        }
        note("not used: %s", err);
    }
    int rc = analysis_run(run, o, ppOut);
    /* one against a baseline is kept now, deferred or not: the baseline may be gone by
     * cli_cache_keep() (analysis_options.baseline is read during analysis_run() only) */
    if (rc == ANALYSIS_OK && (!deferred || o->baseline))
        keep_analysis(*ppOut, t.dir, name, key);
    free(key);
    return rc;
}

void cli_cache_keep(store_run *run, const analysis *a)
{
    tag t;
    char name[128], path[4300];
    char *key = NULL;
    if (keep_run(run, &t) != 0 || !a || analysis_get_run(a) != run)
        return;
    const analysis_options *o = analysis_get_options(a);
    if (o->baseline || analysis_key(&t, o, NULL, &key, name, sizeof name) != 0)
        return; /* one against a baseline was kept when made (cli_cache_analyse) */
    snprintf(path, sizeof path, "%s/%s", t.dir, name);
    if (access(path, F_OK) != 0) /* not there yet (one there that did not hold was rewritten) */
        keep_analysis(a, t.dir, name, key);
    free(key);
}

/* The index file's path and key for run `run` (read or written through the cache, with its
 * folder) and its analysis a: the analysis's, with ".index" and one more line. -1 when there is
 * none (a run without a cache, an analysis not of that run or against a baseline read otherwise).
 */
static int index_key(const store_run *run, const analysis *a, char *path, size_t n, char **pKey)
{
    tag t;
    char name[128];
    char *key = NULL;
    if (!mode() || !a || analysis_get_run(a) != run || tag_of(run, &t) != 0 || !t.dir[0])
        return -1;
    const analysis_options *o = analysis_get_options(a);
    if (o->baseline || analysis_key(&t, o, NULL, &key, name, sizeof name) != 0)
        return -1; /* the baseline may be gone by now: its key cannot be read */
    size_t len = strlen(key);
    char *k = realloc(key, len + 32);
    if (!k) {
        free(key);
        return -1;
    }
    snprintf(k + len, 32, "web index\n");
    snprintf(path, n, "%s/%.*s.index", t.dir, (int)(strlen(name) - strlen(".analysis")), name);
    *pKey = k;
    return 0;
}

int cli_cache_index_open(const store_run *run, const analysis *a, store_cache **ppC,
                         const void **ppBlob, size_t *pLen)
{
    char path[4400], err[1024];
    char *key = NULL;
    void *blob;
    uint64_t len;
    *ppC = NULL;
    *ppBlob = NULL;
    *pLen = 0;
    if (index_key(run, a, path, sizeof path, &key) != 0)
        return -1;
    double t0 = now_s();
    int rc = -1;
    if (access(path, F_OK) == 0 || errno != ENOENT) {
        if (store_cache_open(path, key, ppC, err, sizeof err) == 0 &&
            store_cache_section(*ppC, 1, 1, NULL, NULL, &blob, &len, err, sizeof err) == 0) {
            note("read %s in %.3f s", path, now_s() - t0);
            *ppBlob = blob;
            *pLen = (size_t)len;
            rc = 0;
        } else {
            note("not used: %s", err);
            store_cache_close(*ppC);
            *ppC = NULL;
        }
    }
    free(key);
    return rc;
}

void cli_cache_index_keep(const store_run *run, const analysis *a, const void *blob, size_t len)
{
    char path[4400], err[1024];
    char *key = NULL;
    if (!blob || index_key(run, a, path, sizeof path, &key) != 0)
        return;
    char *slash = strrchr(path, '/');
    *slash = 0;
    double t0 = now_s();
    store_cache_part part = {1, 1, blob, len};
    if (store_cache_write(path, slash + 1, key, &part, 1, err, sizeof err) == 0) {
        note("wrote index %s/%s in %.3f s", path, slash + 1, now_s() - t0);
        prune(path, slash + 1);
    } else
        note("not written: %s", err);
    free(key);
}
