/* cache.c: the cache file beside the traces (store/SCHEMA.md, "The cache"): a flat container of
 * named sections (the run model's arrays, an analysis's blob) laid out to be mapped, not parsed,
 * under a key text that says which inputs it was made from. Written to a temporary file in the
 * same folder, synced, then renamed over the old one; read only when it is a regular file of
 * this user in a folder no other user may write, whose key matches byte for byte, whose sizes all
 * lie inside the file and whose checksums hold. Anything else is "no cache" (the caller rebuilds).
 */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store_int.h"

#define CACHE_MAGIC "TLVCACHE"
#define CACHE_FORMAT 1u
#define CACHE_ENDIAN 0x01020304u
#define CACHE_ALIGN 4096u                  /* sections start on a page: mapped arrays align */
#define CACHE_CHUNK ((uint64_t)16 << 20)   /* bytes a checksum share covers, at most */
#define CACHE_MAX_SECTIONS 64u             /* more is not a file tlview wrote */
#define CACHE_MAX_KEY ((uint64_t)16 << 20) /* bytes of key text, at most */

/* The file's first bytes. */
typedef struct cache_header {
    char magic[8];      /* CACHE_MAGIC */
    uint32_t format;    /* CACHE_FORMAT */
    uint32_t endian;    /* CACHE_ENDIAN as written: a file of another byte order is refused */
    uint64_t size;      /* the whole file's bytes */
    uint64_t key_len;   /* bytes of key text after the section table */
    uint32_t nsections; /* entries of the section table after the header */
    uint32_t reserved;  /* 0 */
    uint64_t sum;       /* checksum of the header (this field 0), the table and the key */
} cache_header;

/* One entry of the section table. */
typedef struct cache_entry {
    uint32_t id;     /* the caller's section id */
    uint32_t elem;   /* bytes of one element (> 0) */
    uint64_t offset; /* from the file's start, CACHE_ALIGN-aligned */
    uint64_t count;  /* elements */
    uint64_t sum;    /* checksum of the section's bytes (cache_sum_section) */
} cache_entry;

struct store_cache {
    void *map;              /* the whole file, mapped private (copy on write) */
    size_t len;             /* its bytes */
    const cache_entry *tab; /* the section table, inside map */
    uint32_t nsections;
    int vouched;   /* its stamp names this very file: its sections' checksums held when written */
    char err[512]; /* why the file was refused */
};

/* ---------------------------------------------------------------- checksum */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* A checksum of n bytes (xxHash64's rounds over four lanes): it catches a changed byte, not an
 * attacker (the owner check does that), at memory speed. */
static uint64_t cache_hash(const void *p, uint64_t n, uint64_t seed)
{
    const unsigned char *b = p;
    /* four lanes in four variables, so that their multiplies overlap at any optimisation level
     * (in an array, -O2 ran them one after the other: 8 GB/s here against 16) */
    uint64_t v0 = seed + P1 + P2, v1 = seed + P2, v2 = seed, v3 = seed - P1;
    uint64_t left = n;
    for (; left >= 32; left -= 32, b += 32) {
        uint64_t w[4];
        memcpy(w, b, sizeof w);
        v0 = rotl(v0 + w[0] * P2, 31) * P1;
        v1 = rotl(v1 + w[1] * P2, 31) * P1;
        v2 = rotl(v2 + w[2] * P2, 31) * P1;
        v3 = rotl(v3 + w[3] * P2, 31) * P1;
    }
    uint64_t h = rotl(v0, 1) + rotl(v1, 7) + rotl(v2, 12) + rotl(v3, 18) + n;
    for (; left; left--, b++)
        h = (h ^ *b) * P1;
    h ^= h >> 33;
    h *= P2;
    return h ^ (h >> 29);
}

/* Bytes of the checksum shares of a section of `elem`-byte elements: whole elements, so that a
 * share can be checked on its own. */
static uint64_t chunk_bytes(uint32_t elem)
{
    uint64_t per = CACHE_CHUNK / elem;
    return (per ? per : 1) * elem;
}

/* The checksums of a section's shares, and the section's: the checksum of those. */
typedef struct sum_job {
    const unsigned char *base; /* the section's bytes */
    uint64_t len, chunk;
    uint64_t *sums; /* one per share */
    uint64_t nchunks;
    atomic_uint_fast64_t next; /* the next share to take */
    store_cache_check check;   /* NULL, or checks a share's elements */
    void *check_ctx;
    int hash; /* 0: the checks only (a vouched file: store_cache_open) */
    uint32_t id, elem;
    atomic_int bad; /* a share failed its check */
} sum_job;

static void *sum_worker(void *arg)
{
    sum_job *j = arg;
    for (;;) {
        uint64_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks)
            return NULL;
        uint64_t off = c * j->chunk, n = j->len - off < j->chunk ? j->len - off : j->chunk;
        j->sums[c] = j->hash ? cache_hash(j->base + off, n, c) : 0;
        if (j->check && j->check(j->check_ctx, j->id, j->base, off / j->elem, n / j->elem) != 0)
            atomic_store(&j->bad, 1);
    }
}

/* The section's checksum, its shares summed on up to one thread per CPU (with `hash`; else 0);
 * with `check`, each share's elements are checked too (*pBad set when one fails). 0, or -1 when
 * out of memory. */
static int cache_sum_section(const void *base, uint64_t len, uint32_t elem, uint32_t id,
                             store_cache_check check, void *ctx, int hash, uint64_t *pSum,
                             int *pBad)
{
    sum_job j = {.base = base,
                 .len = len,
                 .chunk = chunk_bytes(elem),
                 .check = check,
                 .check_ctx = ctx,
                 .hash = hash,
                 .id = id,
                 .elem = elem};
    j.nchunks = len ? (len + j.chunk - 1) / j.chunk : 0;
    j.sums = calloc(j.nchunks ? j.nchunks : 1, sizeof *j.sums);
    if (!j.sums)
        return -1;
    atomic_init(&j.next, 0);
    atomic_init(&j.bad, 0);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t nthreads = ncpu > 1 ? (uint64_t)ncpu : 1;
    if (nthreads > 16)
        nthreads = 16;
    if (nthreads > j.nchunks)
        nthreads = j.nchunks ? j.nchunks : 1;
    pthread_t th[16];
    uint64_t started = 0;
    for (uint64_t t = 1; t < nthreads; t++, started++)
        if (pthread_create(&th[started], NULL, sum_worker, &j) != 0)
            break;
    sum_worker(&j);
    for (uint64_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    *pSum = cache_hash(j.sums, j.nchunks * sizeof *j.sums, len);
    *pBad = atomic_load(&j.bad);
    free(j.sums);
    return 0;
}

/* ---------------------------------------------------------------- key */

/* Appends printf-style text to the growing key *k (len *n, room *cap). -1 when out of memory. */
__attribute__((format(printf, 4, 5))) static int key_add(char **k, size_t *n, size_t *cap,
                                                         const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(*k ? *k + *n : NULL, *k ? *cap - *n : 0, fmt, ap);
        va_end(ap);
        if (w < 0)
            return -1;
        if (*k && *n + (size_t)w < *cap) {
            *n += (size_t)w;
            return 0;
        }
        size_t c = (*cap ? 2 * *cap : 1024) + (size_t)w;
        char *p = realloc(*k, c);
        if (!p)
            return -1;
        *k = p;
        *cap = c;
    }
}

int store_cache_key(const char *const *paths, uint32_t npaths, const char *extra,
                    char **ppKey /* OUT */)
{
    *ppKey = NULL;
    char *k = NULL;
    size_t n = 0, cap = 0;
    int rc = key_add(&k, &n, &cap, "tlview cache %u, schema %d, %s\n", CACHE_FORMAT,
                     STORE_SCHEMA_VERSION, extra ? extra : "");
    for (uint32_t i = 0; !rc && i < npaths; i++) {
        struct stat st;
        char *abs = realpath(paths[i], NULL);
        if (!abs || stat(abs, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(abs);
            free(k);
            return STORE_EIO; /* gone or not a file: no key, no cache */
        }
        rc = key_add(&k, &n, &cap, "file %llu:%llu %lld %lld.%09ld %lld.%09ld %s\n",
                     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                     (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                     (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, abs);
        if (!rc && strcmp(abs, paths[i]) != 0)
            rc = key_add(&k, &n, &cap, "named %s\n", paths[i]);
        free(abs);
    }
    if (rc) {
        free(k);
        return STORE_ENOMEM;
    }
    *ppKey = k;
    return STORE_OK;
}

uint64_t store_cache_name_hash(const char *text)
{
    return cache_hash(text, strlen(text), 0x746C76);
}

/* ---------------------------------------------------------------- folders */

/* mkdir(dir, 0700), an existing folder being fine. 0 or -1 (errno set). */
static int make_dir(const char *dir)
{
    return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int store_cache_dir(const char *trace_dir, int create, char *out, size_t n)
{
    char err[512];
    if (trace_dir) {
        if (snprintf(out, n, "%s/.tlview-cache", trace_dir) >= (int)n)
            return -1;
        if ((!create || make_dir(out) == 0) &&
            store_fs_check_dir(out, STORE_FS_WRITABLE, err, sizeof err) == 0)
            return 0;
        return -1;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[4096];
    if (xdg && xdg[0] == '/')
        snprintf(base, sizeof base, "%s", xdg);
    else if (home && home[0] == '/')
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return -1;
    if (create && make_dir(base) != 0)
        return -1;
    if (snprintf(out, n, "%s/tlview", base) >= (int)n)
        return -1;
    if ((!create || make_dir(out) == 0) &&
        store_fs_check_dir(out, STORE_FS_WRITABLE, err, sizeof err) == 0)
        return 0;
    return -1;
}

/* ---------------------------------------------------------------- stamp */

/* A cache's stamp, ".<name>.ok" beside it, says that the file with this identity (device, inode,
 * size, modification and change times) and header checksum is the one whose sections' checksums
 * were computed as it was written: a reader that finds the file so skips them (they cost a pass
 * over every byte, 0.06 s a GB on one core, on the path to the first paint) and checks every value
 * as always. Changed in any way since (its bytes written, truncated, replaced, touched), the file
 * no longer matches (its change time moves, which no caller can set) and is checked in full. The
 * file's identity is trusted here as the inputs' is in the key (store_cache_key). */
#define STAMP_FORMAT "tlview cache stamp 1\n%llu %llu %lld %lld.%09ld %lld.%09ld %016llx\n"

/* The stamp's path for cache `path` into out (n bytes). 0, or -1 when too long. */
static int stamp_path(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path + 1) : 0;
    return snprintf(out, n, "%.*s.%s.ok", dl, path, path + dl) < (int)n ? 0 : -1;
}

/* The stamp's text for the file of `st` whose header checksum is `sum`, into out (n bytes). */
static void stamp_text(const struct stat *st, uint64_t sum, char *out, size_t n)
{
    snprintf(out, n, STAMP_FORMAT, (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
             (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
             (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, (unsigned long long)sum);
}

/* Writes the stamp of the cache just renamed into `path` (header checksum `sum`): a temporary
 * file renamed over the old stamp. Best effort: without a stamp the cache is checked in full. */
static void stamp_write(const char *path, uint64_t sum)
{
    char sp[4200], tmp[4300], text[256], err[512];
    struct stat st;
    if (stamp_path(path, sp, sizeof sp) != 0 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    stamp_text(&st, sum, text, sizeof text);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* named as the cache's own temporary files, so that remove_stale() takes it once its writer
     * is gone */
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path + 1) : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%s.%ld.%09ld.ok.tmp", dl, path, path + dl, (long)getpid(),
             ts.tv_nsec);
    int fd = store_fs_create(tmp, 0600, err, sizeof err);
    if (fd < 0)
        return;
    size_t len = strlen(text);
    int ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok && rename(tmp, sp) == 0;
    if (!ok)
        unlink(tmp);
}

/* 1 when the stamp of cache `path` names the file `st` with header checksum `sum`. */
static int stamp_vouches(const char *path, const struct stat *st, uint64_t sum)
{
    char sp[4200], want[256], have[256], err[512];
    if (stamp_path(path, sp, sizeof sp) != 0)
        return 0;
    int fd = store_fs_open_private(sp, err, sizeof err);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, have, sizeof have - 1);
    close(fd);
    if (n <= 0)
        return 0;
    have[n] = 0;
    stamp_text(st, sum, want, sizeof want);
    return strcmp(have, want) == 0;
}

/* Marks cache `path` as used now: its stamp's mtime, store_cache_prune()'s last use (the cache's
 * own times cannot move: the stamp names them). Best effort. */
static void stamp_touch(const char *path)
{
    char sp[4200];
    if (stamp_path(path, sp, sizeof sp) == 0)
        (void)utimensat(AT_FDCWD, sp, NULL, AT_SYMLINK_NOFOLLOW);
}

/* ---------------------------------------------------------------- writing */

/* Writes n bytes at the file's current end. 0, or -1 with errno. */
static int write_all(int fd, const void *p, uint64_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        b += w;
        n -= (uint64_t)w;
    }
    return 0;
}

/* Pads the file from `at` to the next CACHE_ALIGN boundary; returns that offset, or 0 on error. */
static uint64_t pad_to(int fd, uint64_t at)
{
    static const char zero[CACHE_ALIGN];
    uint64_t to = (at + CACHE_ALIGN - 1) / CACHE_ALIGN * CACHE_ALIGN;
    return to == at || write_all(fd, zero, to - at) == 0 ? to : 0;
}

/* Removes the temporary files of `name` in dir that a process no longer alive left (one stopped
 * while writing: `tlview serve` ends without waiting for its cache); those of live writers, and
 * anything not a regular file of this user, are left alone. */
static void remove_stale(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = strlen(name);
    while (d && (e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        size_t len = strlen(s);
        char *end;
        struct stat st;
        if (s[0] != '.' || strncmp(s + 1, name, n) != 0 || s[1 + n] != '.' || len < n + 6 ||
            strcmp(s + len - 4, ".tmp") != 0)
            continue;
        long pid = strtol(s + 2 + n, &end, 10);
        if (pid <= 0 || *end != '.' || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;
        if (fstatat(dirfd(d), s, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid())
            unlinkat(dirfd(d), s, 0);
    }
    if (d)
        closedir(d);
}

int store_parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text || *text == '-' || *text == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = !*end                ? 0
                : strchr("kK", *end) ? 10
                : strchr("mM", *end) ? 20
                : strchr("gG", *end) ? 30
                : strchr("tT", *end) ? 40
                                     : -1;
    if (errno || end == text || shift < 0 || (*end && end[1]))
        return -1;
    *out = v > (UINT64_MAX >> shift) ? UINT64_MAX : (uint64_t)v << shift;
    return 0;
}

/* The bytes a cache write must leave free on its file system of `fs_bytes`: TLVIEW_CACHE_FREE
 * (store_parse_size) when set, else the smaller of STORE_CACHE_FREE_MAX and STORE_CACHE_FREE_SHARE
 * of the file system (the way journald keeps free space: a share, capped). A value that is not a
 * size counts as unset. */
#define STORE_CACHE_FREE_MAX ((uint64_t)1 << 30)
#define STORE_CACHE_FREE_SHARE 0.05
static uint64_t free_to_leave(uint64_t fs_bytes)
{
    uint64_t v;
    if (store_parse_size(getenv("TLVIEW_CACHE_FREE"), &v) == 0)
        return v;
    uint64_t share = (uint64_t)((double)fs_bytes * STORE_CACHE_FREE_SHARE);
    return share < STORE_CACHE_FREE_MAX ? share : STORE_CACHE_FREE_MAX;
}

/* 0 when writing `bytes` into `dir` leaves free_to_leave() free on its file system (or the file
 * system does not say); else -1 with the reason in err. */
static int room_for(const char *dir, const char *path, uint64_t bytes, char *err, size_t errlen)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0 || !v.f_frsize)
        return 0;
    uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize, size = (uint64_t)v.f_blocks * v.f_frsize;
    uint64_t keep = free_to_leave(size);
    if (avail >= bytes && avail - bytes >= keep)
        return 0;
    snprintf(err, errlen,
             "%s: its %.1f MiB would leave less than %.1f MiB free of the %.1f MiB "
             "free on that disk (a cache leaves the smaller of 1 GiB and 5%% of it free, or "
             "TLVIEW_CACHE_FREE)",
             path, (double)bytes / (1 << 20), (double)keep / (1 << 20), (double)avail / (1 << 20));
    return -1;
}

int store_cache_write(const char *dir, const char *name, const char *key,
                      const store_cache_part *parts, uint32_t nparts, char *err, size_t errlen)
{
    char path[4096], tmp[4200];
    cache_entry *tab = NULL;
    int fd = -1, rc = -1;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    if (nparts > CACHE_MAX_SECTIONS ||
        snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        snprintf(err, errlen, "%s/%s: name too long or too many sections", dir, name);
        return -1;
    }
    remove_stale(dir, name);
    uint64_t bytes =
        sizeof(cache_header) + nparts * (sizeof(cache_entry) + CACHE_ALIGN) + strlen(key);
    for (uint32_t i = 0; i < nparts; i++)
        bytes += parts[i].count * parts[i].elem;
    if (room_for(dir, path, bytes, err, errlen) != 0)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%09ld.tmp", dir, name, (long)getpid(), ts.tv_nsec);
    /* a file size limit makes the write fail (EFBIG) instead of ending the process */
    sigaction(SIGXFSZ, &ign, &old);
    if ((fd = store_fs_create(tmp, 0600, err, errlen)) < 0)
        goto out;
    tab = calloc(nparts ? nparts : 1, sizeof *tab);
    if (!tab) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    uint64_t key_len = strlen(key);
    uint64_t at = sizeof(cache_header) + nparts * sizeof(cache_entry) + key_len;
    /* the sections first, after room for the header, table and key */
    if (lseek(fd, (off_t)at, SEEK_SET) < 0)
        goto io;
    for (uint32_t i = 0; i < nparts; i++) {
        const store_cache_part *p = &parts[i];
        int bad = 0;
        if (!(at = pad_to(fd, at)))
            goto io;
        tab[i] = (cache_entry){.id = p->id, .elem = p->elem, .offset = at, .count = p->count};
        uint64_t len = p->count * p->elem;
        if (cache_sum_section(p->data, len, p->elem, p->id, NULL, NULL, 1, &tab[i].sum, &bad) !=
            0) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto out;
        }
        if (write_all(fd, p->data, len) != 0)
            goto io;
        at += len;
    }
    cache_header h = {.format = CACHE_FORMAT,
                      .endian = CACHE_ENDIAN,
                      .size = at,
                      .key_len = key_len,
                      .nsections = nparts};
    memcpy(h.magic, CACHE_MAGIC, 8);
    uint64_t s = cache_hash(&h, sizeof h, 1);
    s = cache_hash(tab, nparts * sizeof *tab, s);
    h.sum = cache_hash(key, key_len, s);
    if (lseek(fd, 0, SEEK_SET) < 0 || write_all(fd, &h, sizeof h) != 0 ||
        write_all(fd, tab, nparts * sizeof *tab) != 0 || write_all(fd, key, key_len) != 0 ||
        fsync(fd) != 0)
        goto io;
    int c = close(fd);
    fd = -1;
    if (c != 0 || rename(tmp, path) != 0)
        goto io;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the rename on disk too: best effort, the cache is only a cache */
        (void)fsync(dfd);
        close(dfd);
    }
    stamp_write(path, h.sum);
    rc = 0;
    goto out;
io:
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    if (rc)
        unlink(tmp); /* never a half-written cache */
    sigaction(SIGXFSZ, &old, NULL);
    free(tab);
    return rc;
}

/* ---------------------------------------------------------------- pruning */

/* One cache file of a folder being pruned. */
typedef struct prune_file {
    char name[256];
    dev_t dev;
    ino_t ino;
    uint64_t bytes;  /* its size */
    int64_t used_ns; /* last use: its stamp's mtime (touched on use), else its own */
    int dead;        /* it can never be read again */
} prune_file;

/* 1 when key text `key` names an input that is gone or changed since (a "file" line of
 * store_cache_key() whose absolute path is no longer there, or not that file of those times):
 * no reader can ever match that key again. A relative path, or one stat() cannot answer for
 * (no permission), proves nothing: 0. */
static int key_is_stale(const char *key)
{
    for (const char *l = key; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        unsigned long long dev, ino;
        long long size, ms, cs;
        long mns, cns;
        int off = 0;
        if (strncmp(l, "file ", 5) != 0 ||
            sscanf(l, "file %llu:%llu %lld %lld.%ld %lld.%ld %n", &dev, &ino, &size, &ms, &mns, &cs,
                   &cns, &off) != 7 ||
            !off || l[off] != '/')
            continue;
        const char *nl = strchr(l + off, '\n');
        size_t len = nl ? (size_t)(nl - (l + off)) : strlen(l + off);
        char path[4096];
        struct stat st;
        if (len >= sizeof path)
            continue;
        memcpy(path, l + off, len);
        path[len] = 0;
        if (stat(path, &st) != 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return 1;
            continue;
        }
        if ((unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino ||
            (long long)st.st_size != size || (long long)st.st_mtim.tv_sec != ms ||
            st.st_mtim.tv_nsec != mns || (long long)st.st_ctim.tv_sec != cs ||
            st.st_ctim.tv_nsec != cns)
            return 1;
    }
    return 0;
}

/* Reads the cache file open at fd (st its fstat): -1 when it is not a tlview cache (no magic: not
 * ours to touch), else 0 with *dead set when it can never be read again (a broken header, or a
 * key naming an input gone or changed). A cache of another format or byte order is left to the
 * size bound: another tlview may read it. */
static int prune_judge(int fd, const struct stat *st, int *dead)
{
    cache_header h;
    *dead = 0;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, CACHE_MAGIC, 8) != 0)
        return -1;
    if (h.format != CACHE_FORMAT || h.endian != CACHE_ENDIAN)
        return 0;
    uint64_t head = sizeof h + (uint64_t)h.nsections * sizeof(cache_entry);
    if (h.size != (uint64_t)st->st_size || h.nsections > CACHE_MAX_SECTIONS ||
        h.key_len > CACHE_MAX_KEY || head + h.key_len > h.size) {
        *dead = 1;
        return 0;
    }
    char *buf = malloc(head + h.key_len + 1);
    if (!buf)
        return 0; /* unjudged: kept */
    if (pread(fd, buf, head + h.key_len, 0) != (ssize_t)(head + h.key_len)) {
        free(buf);
        *dead = 1;
        return 0;
    }
    buf[head + h.key_len] = 0;
    uint64_t want = h.sum;
    cache_header z = h;
    z.sum = 0;
    uint64_t s = cache_hash(&z, sizeof z, 1);
    s = cache_hash(buf + sizeof h, head - sizeof h, s);
    *dead = cache_hash(buf + head, h.key_len, s) != want || strlen(buf + head) != h.key_len ||
            key_is_stale(buf + head);
    free(buf);
    return 0;
}

/* Oldest use first. */
static int by_use(const void *a, const void *b)
{
    const prune_file *x = a, *y = b;
    return (x->used_ns > y->used_ns) - (x->used_ns < y->used_ns);
}

/* Removes cache `f` (and its stamp) from the folder open as dfd, unless the name now holds
 * another file (replaced since it was judged). Its bytes are added to *freed. */
static void prune_remove(int dfd, const prune_file *f, uint64_t *freed, uint32_t *count)
{
    struct stat st;
    char sp[300];
    if (fstatat(dfd, f->name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != f->dev ||
        st.st_ino != f->ino || unlinkat(dfd, f->name, 0) != 0)
        return;
    snprintf(sp, sizeof sp, ".%s.ok", f->name);
    unlinkat(dfd, sp, 0);
    *freed += f->bytes;
    (*count)++;
}

int store_cache_prune(const char *dir, uint64_t max_bytes, const char *keep,
                      store_cache_pruned *out)
{
    memset(out, 0, sizeof *out);
    char err[512];
    if (store_fs_check_dir(dir, STORE_FS_WRITABLE, err, sizeof err) != 0)
        return -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    prune_file *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st, ss;
        const char *s = e->d_name;
        size_t len = strlen(s);
        if (s[0] == '.') {
            /* a stamp whose cache is gone */
            char name[256];
            if (len > 4 && len - 4 < sizeof name && strcmp(s + len - 3, ".ok") == 0 &&
                strchr(s + 1, '.') && fstatat(dfd, s, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
                snprintf(name, sizeof name, "%.*s", (int)(len - 4), s + 1);
                if (fstatat(dfd, name, &ss, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
                    unlinkat(dfd, s, 0);
            }
            continue;
        }
        if (len >= sizeof v->name || fstatat(dfd, s, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue;
        int fd = openat(dfd, s, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int dead = 0;
        if (fd < 0)
            continue;
        int ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && prune_judge(fd, &st, &dead) == 0;
        close(fd);
        if (!ours)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            prune_file *nv = realloc(v, nc * sizeof *v);
            if (!nv)
                break;
            v = nv;
            cap = nc;
        }
        prune_file *f = &v[n++];
        snprintf(f->name, sizeof f->name, "%s", s);
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->bytes = (uint64_t)st.st_size;
        f->used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        f->dead = dead;
        char sp[300];
        snprintf(sp, sizeof sp, ".%s.ok", s);
        if (fstatat(dfd, sp, &ss, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ss.st_mode))
            f->used_ns = (int64_t)ss.st_mtim.tv_sec * 1000000000 + ss.st_mtim.tv_nsec;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int kept = keep && strncmp(v[i].name, keep, strlen(keep)) == 0;
        if (v[i].dead && !kept)
            prune_remove(dfd, &v[i], &out->freed_bytes, &out->dead);
        else
            total += v[i].bytes;
        v[i].dead = v[i].dead && !kept; /* now: gone */
    }
    if (total > max_bytes) {
        qsort(v, n, sizeof *v, by_use);
        for (size_t i = 0; i < n && total > max_bytes; i++) {
            if (v[i].dead || (keep && strncmp(v[i].name, keep, strlen(keep)) == 0))
                continue;
            uint64_t before = out->freed_bytes;
            prune_remove(dfd, &v[i], &out->freed_bytes, &out->evicted);
            total -= out->freed_bytes - before;
        }
    }
    out->kept_bytes = total;
    free(v);
    closedir(d);
    return 0;
}

/* ---------------------------------------------------------------- reading */

/* Refuses the file with a message; returns -1. */
__attribute__((format(printf, 2, 3))) static int refuse(store_cache *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* Checks the mapped file against its header, table and `key`. 0, or -1 with the reason. */
static int cache_verify(store_cache *c, const char *path, const char *key)
{
    cache_header h;
    if (c->len < sizeof h)
        return refuse(c, "%s: truncated (%zu bytes)", path, c->len);
    memcpy(&h, c->map, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, 8) != 0)
        return refuse(c, "%s: not a tlview cache", path);
    if (h.format != CACHE_FORMAT || h.endian != CACHE_ENDIAN)
        return refuse(c, "%s: another cache format (%u)", path, h.format);
    if (h.size != c->len)
        return refuse(c, "%s: %zu bytes, the header says %llu", path, c->len,
                      (unsigned long long)h.size);
    if (h.nsections > CACHE_MAX_SECTIONS || h.key_len > CACHE_MAX_KEY ||
        sizeof h + h.nsections * sizeof(cache_entry) + h.key_len > c->len)
        return refuse(c, "%s: sizes out of bounds", path);
    const cache_entry *tab = (const cache_entry *)((const char *)c->map + sizeof h);
    const char *fkey = (const char *)(tab + h.nsections);
    uint64_t want = h.sum;
    h.sum = 0;
    uint64_t s = cache_hash(&h, sizeof h, 1);
    s = cache_hash(tab, h.nsections * sizeof *tab, s);
    if (cache_hash(fkey, h.key_len, s) != want)
        return refuse(c, "%s: the header's checksum does not hold", path);
    if (h.key_len != strlen(key) || memcmp(fkey, key, h.key_len) != 0)
        return refuse(c, "%s: made from other inputs or by another tlview", path);
    uint64_t end = sizeof h + h.nsections * sizeof *tab + h.key_len;
    for (uint32_t i = 0; i < h.nsections; i++) {
        const cache_entry *e = &tab[i];
        if (!e->elem || e->offset % CACHE_ALIGN || e->offset < end || e->offset > c->len ||
            e->count > (c->len - e->offset) / e->elem)
            return refuse(c, "%s: section %u out of bounds", path, e->id);
        end = e->offset + e->count * e->elem;
    }
    c->tab = tab;
    c->nsections = h.nsections;
    return 0;
}

int store_cache_open(const char *path, const char *key, store_cache **ppC /* OUT */, char *err,
                     size_t errlen)
{
    *ppC = NULL;
    store_cache *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int fd = store_fs_open_private(path, c->err, sizeof c->err);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
        c->len = (size_t)st.st_size;
        c->map = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (c->map == MAP_FAILED) {
            c->map = NULL;
            refuse(c, "%s: cannot map: %s", path, strerror(errno));
        }
    } else if (fd >= 0)
        refuse(c, "%s: empty", path);
    if (!c->map || cache_verify(c, path, key) != 0) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "%s", c->err);
        store_cache_close(c);
        return -1;
    }
    cache_header h;
    memcpy(&h, c->map, sizeof h);
    c->vouched = stamp_vouches(path, &st, h.sum);
    if (c->vouched)
        stamp_touch(path);
    close(fd);
    *ppC = c;
    return 0;
}

int store_cache_section(store_cache *c, uint32_t id, uint32_t elem, store_cache_check check,
                        void *ctx, void **ppData /* OUT */, uint64_t *pCount /* OUT */, char *err,
                        size_t errlen)
{
    for (uint32_t i = 0; i < c->nsections; i++) {
        const cache_entry *e = &c->tab[i];
        if (e->id != id)
            continue;
        if (e->elem != elem) {
            snprintf(err, errlen, "section %u: elements of %u bytes, not %u", id, e->elem, elem);
            return -1;
        }
        void *p = (char *)c->map + e->offset;
        uint64_t sum;
        int bad = 0;
        if (cache_sum_section(p, e->count * e->elem, elem, id, check, ctx, !c->vouched, &sum,
                              &bad) != 0) {
            snprintf(err, errlen, "section %u: out of memory", id);
            return -1;
        }
        if ((!c->vouched && sum != e->sum) || bad) {
            snprintf(err, errlen, "section %u: %s", id,
                     !c->vouched && sum != e->sum ? "its checksum does not hold"
                                                  : "a value out of bounds");
            return -1;
        }
        *ppData = p;
        *pCount = e->count;
        return 0;
    }
    snprintf(err, errlen, "no section %u", id);
    return -1;
}

int store_cache_vouched(const store_cache *c)
{
    return c && c->vouched;
}

int store_cache_owns(const store_cache *c, const void *p)
{
    return c && (const char *)p >= (const char *)c->map &&
           (const char *)p < (const char *)c->map + c->len;
}

void store_cache_close(store_cache *c)
{
    if (!c)
        return;
    if (c->map)
        munmap(c->map, c->len);
    free(c);
}
