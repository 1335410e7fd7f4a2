/* writer.c: store_writer, which creates one tlview file and appends rows to it. Statements are
 * prepared once; names, contexts and launch signatures are interned in memory so a kernel row
 * is only (start, dur, launch_id, correlation_id). The file runs in WAL mode while open (every
 * committed batch survives a SIGKILL of the writing process; the next reader recovers the WAL)
 * and is switched back to a single rollback-journal file at close. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

enum {
    ST_PROCESS,
    ST_PMETA,
    ST_PEND,
    ST_PERROR,
    ST_CALIB,
    ST_DEVICE,
    ST_CTX_INS,
    ST_CTX_UPD,
    ST_STRING,
    ST_LAUNCH,
    ST_KERNEL,
    ST_MEMCPY,
    ST_MEMSET,
    ST_API,
    ST_RANGE,
    ST_META,
    ST_CAP_INS,
    ST_CAP_END,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_PROCESS] = "INSERT INTO process(pid, ppid, host, exe, argv, run_id, source, start_wall,"
                   " complete) VALUES (?,?,?,?,?,?,?,?,0)",
    [ST_PMETA] = "INSERT OR REPLACE INTO process_meta(process_id, key, value) VALUES (?,?,?)",
    [ST_PEND] = "UPDATE process SET end_wall = ?, complete = ?, error = coalesce(?, error)"
                " WHERE id = ?",
    [ST_PERROR] = "UPDATE process SET error = ?, complete = 0 WHERE id = ?",
    [ST_CALIB] = "INSERT OR REPLACE INTO calibration(process_id, label, cupti, realtime,"
                 " monotonic) VALUES (?,?,?,?,?)",
    [ST_DEVICE] = "INSERT OR REPLACE INTO device(process_id, device_id, uuid, name, sm_count,"
                  " cc_major, cc_minor, global_memory) VALUES (?,?,?,?,?,?,?,?)",
    [ST_CTX_INS] =
        "INSERT OR REPLACE INTO context(id, process_id, device_id, context_id, compute_api_kind,"
        " null_stream_id, is_green, parent_context_id, sm_count) VALUES (?,?,?,?,?,?,?,?,?)",
    [ST_CTX_UPD] = "UPDATE context SET device_id = ?, compute_api_kind = ?, null_stream_id = ?,"
                   " is_green = ?, parent_context_id = ?, sm_count = ? WHERE id = ?",
    /* demangled is NULL unless the caller has one (store_run_save): the collector passes none and
     * the readers demangle (store_run_intern), so libcollect.so needs no C++ runtime */
    [ST_STRING] = "INSERT OR REPLACE INTO strings(id, text, demangled) VALUES (?,?,?)",
    [ST_LAUNCH] =
        "INSERT OR REPLACE INTO launch(id, context_row, stream_id, name_id, grid_x, grid_y,"
        " grid_z, block_x, block_y, block_z, registers, static_smem, dynamic_smem,"
        " local_mem) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_KERNEL] = "INSERT INTO kernel(start, dur, launch_id, correlation_id) VALUES (?,?,?,?)",
    [ST_MEMCPY] = "INSERT INTO memcpy(start, dur, context_row, stream_id, correlation_id,"
                  " copy_kind, src_kind, dst_kind, bytes, flags) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [ST_MEMSET] = "INSERT INTO memset(start, dur, context_row, stream_id, correlation_id, value,"
                  " bytes, mem_kind) VALUES (?,?,?,?,?,?,?,?)",
    [ST_API] = "INSERT INTO api(start, dur, process_id, thread_id, correlation_id, domain, cbid,"
               " name_id, status) VALUES (?,?,?,?,?,?,?,?,?)",
    [ST_RANGE] = "INSERT INTO \"range\"(start, dur, process_id, thread_id, domain_id, name_id)"
                 " VALUES (?,?,?,?,?,?)",
    [ST_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?,?)",
    [ST_CAP_INS] = "INSERT INTO capture(process_id, start, dur, name, start_reason)"
                   " VALUES (?,?,0,?,?)",
    [ST_CAP_END] = "UPDATE capture SET dur = max(0, ? - start), end_reason = ? WHERE id = ?",
};

/* Interned keys, kept in arrays; the hash tables index them. */
typedef struct wctx {
    int64_t process;
    uint32_t context_id;
} wctx;

typedef struct wlaunch {
    int64_t context_row, name_id;
    uint32_t stream_id, grid[3], block[3], registers, static_smem, dynamic_smem, local_mem;
} wlaunch;

struct store_writer {
    sqlite3 *db;
    char *path;
    char errmsg[1024];
    int first_rc;   /* the first error: what a failed open returns */
    int in_batch;   /* inside begin/commit */
    int batch_lost; /* SQLite rolled the open batch back on its own: its commit must fail */
    int64_t t0;
    sqlite3_stmt *st[ST_COUNT];
    store_arena arena;
    const char **strings; /* strings[i] has file id i + 1 */
    uint64_t nstrings, cap_strings;
    store_htab h_strings;
    struct {
        const char *ptr; /* a caller's pointer last seen with this string */
        uint32_t idx;
    } recent[256]; /* CUPTI hands the same name pointer again and again */
    wctx *ctxs;    /* ctxs[i] has context row id i + 1 */
    uint64_t nctxs, cap_ctxs;
    store_htab h_ctxs;
    wlaunch *launches; /* launches[i] has launch row id i + 1 */
    uint64_t nlaunches, cap_launches;
    store_htab h_launches;
    uint64_t mark_strings, mark_ctxs, mark_launches; /* interned before the open batch */
};

static void forget_batch(store_writer *w);

/* Records an error (the first code is kept for close) and returns code. When SQLite rolled the
 * open batch back on its own (disk full), what the batch interned is forgotten too. */
static int werr(store_writer *w, int code, const char *what)
{
    store_fmt(w->errmsg, sizeof w->errmsg, "%s: %s: %s", w->path, what,
              w->db ? sqlite3_errmsg(w->db) : "no database");
    if (!w->first_rc)
        w->first_rc = code;
    if (w->db && w->in_batch && sqlite3_get_autocommit(w->db)) {
        forget_batch(w);
        w->in_batch = 0;
        w->batch_lost = 1;
    }
    return code;
}

/* Runs a prepared statement whose parameters are bound; resets it. */
static int wstep(store_writer *w, int which, const char *what)
{
    sqlite3_stmt *s = w->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE)
        return werr(w, STORE_EIO, what);
    return STORE_OK;
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
    if (t)
        sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

int store_writer_open(const char *path, store_clock clock, int64_t t0, store_writer **ppW)
{
    *ppW = NULL;
    if (!path)
        return STORE_EINVAL;
    store_writer *w = calloc(1, sizeof *w);
    if (!w)
        return STORE_ENOMEM;
    w->path = strdup(path);
    if (!w->path) {
        free(w);
        return STORE_ENOMEM;
    }
    *ppW = w;
    w->t0 = t0;
    /* O_EXCL is the one race-free way to never overwrite a file. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        if (e == EEXIST)
            store_fmt(w->errmsg, sizeof w->errmsg, "%s: already exists; not overwriting it", path);
        else
            store_fmt(w->errmsg, sizeof w->errmsg, "%s: cannot create: %s", path, strerror(e));
        w->first_rc = e == EEXIST ? STORE_EEXIST : STORE_EIO;
        return w->first_rc;
    }
    close(fd);
    int rc = sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        werr(w, STORE_EIO, "cannot open");
        goto fail;
    }
    /* WAL + synchronous=NORMAL: a commit is one sequential append and no fsync; the data is in
     * the OS once committed, so it survives the process being killed. */
    char *msg = NULL;
    rc = sqlite3_exec(w->db,
                      "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;"
                      " PRAGMA synchronous=NORMAL; PRAGMA cache_size=-4096;"
                      " PRAGMA foreign_keys=OFF",
                      0, 0, &msg);
    if (rc != SQLITE_OK) {
        store_fmt(w->errmsg, sizeof w->errmsg, "%s: cannot set up: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        w->first_rc = STORE_EIO;
        goto fail;
    }
    char err[512];
    if ((rc = store_schema_create(w->db, clock, t0, err, sizeof err)) != STORE_OK) {
        store_fmt(w->errmsg, sizeof w->errmsg, "%s: %s", path, err);
        w->first_rc = rc;
        goto fail;
    }
    for (int i = 0; i < ST_COUNT; i++)
        if (sqlite3_prepare_v3(w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
                               NULL) != SQLITE_OK) {
            werr(w, STORE_EIO, "cannot prepare a statement");
            goto fail;
        }
    return STORE_OK;
fail:
    /* The file is ours (O_EXCL): remove the half-made file so the name stays free. */
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(w->st[i]), w->st[i] = NULL;
    sqlite3_close(w->db);
    w->db = NULL;
    unlink(path);
    char side[4200];
    store_fmt(side, sizeof side, "%s-wal", path);
    unlink(side);
    store_fmt(side, sizeof side, "%s-shm", path);
    unlink(side);
    return w->first_rc;
}

const char *store_writer_errmsg(const store_writer *w)
{
    return w ? w->errmsg : "out of memory";
}

const char *store_writer_path(const store_writer *w)
{
    return w->path;
}

/* Every call that writes checks that open succeeded. */
#define CHECK_OPEN(w)                                                                              \
    do {                                                                                           \
        if (!(w) || !(w)->db)                                                                      \
            return STORE_EINVAL;                                                                   \
    } while (0)

int store_writer_meta(store_writer *w, const char *key, const char *value)
{
    CHECK_OPEN(w);
    if (!key)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_META];
    bind_text(s, 1, key);
    bind_text(s, 2, value);
    return wstep(w, ST_META, "cannot write meta");
}

int store_writer_process(store_writer *w, const store_process_info *p, int64_t *pId)
{
    CHECK_OPEN(w);
    if (!p)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_PROCESS];
    sqlite3_bind_int64(s, 1, p->pid);
    sqlite3_bind_int64(s, 2, p->ppid);
    bind_text(s, 3, p->host);
    bind_text(s, 4, p->exe);
    bind_text(s, 5, p->argv);
    bind_text(s, 6, p->run_id);
    bind_text(s, 7, p->source);
    if (p->start_wall)
        sqlite3_bind_int64(s, 8, p->start_wall);
    int rc = wstep(w, ST_PROCESS, "cannot add a process");
    if (rc == STORE_OK && pId)
        *pId = sqlite3_last_insert_rowid(w->db);
    return rc;
}

int store_writer_process_meta(store_writer *w, int64_t process, const char *key, const char *value)
{
    CHECK_OPEN(w);
    if (!key)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_PMETA];
    sqlite3_bind_int64(s, 1, process);
    bind_text(s, 2, key);
    bind_text(s, 3, value);
    return wstep(w, ST_PMETA, "cannot write process_meta");
}

int store_writer_process_meta_int(store_writer *w, int64_t process, const char *key, int64_t value)
{
    CHECK_OPEN(w);
    if (!key)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_PMETA];
    sqlite3_bind_int64(s, 1, process);
    bind_text(s, 2, key);
    sqlite3_bind_int64(s, 3, value);
    return wstep(w, ST_PMETA, "cannot write process_meta");
}

int store_writer_process_end(store_writer *w, int64_t process, int64_t end_wall, int complete,
                             const char *error)
{
    CHECK_OPEN(w);
    sqlite3_stmt *s = w->st[ST_PEND];
    if (end_wall)
        sqlite3_bind_int64(s, 1, end_wall);
    sqlite3_bind_int(s, 2, complete ? 1 : 0);
    bind_text(s, 3, error);
    sqlite3_bind_int64(s, 4, process);
    return wstep(w, ST_PEND, "cannot end the process");
}

int store_writer_process_error(store_writer *w, int64_t process, const char *error)
{
    CHECK_OPEN(w);
    sqlite3_stmt *s = w->st[ST_PERROR];
    bind_text(s, 1, error);
    sqlite3_bind_int64(s, 2, process);
    return wstep(w, ST_PERROR, "cannot record the process error");
}

int store_writer_calibration(store_writer *w, int64_t process, const char *label, int64_t cupti,
                             int64_t realtime, int64_t monotonic)
{
    CHECK_OPEN(w);
    if (!label)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_CALIB];
    sqlite3_bind_int64(s, 1, process);
    bind_text(s, 2, label);
    sqlite3_bind_int64(s, 3, cupti);
    sqlite3_bind_int64(s, 4, realtime);
    sqlite3_bind_int64(s, 5, monotonic);
    return wstep(w, ST_CALIB, "cannot write a calibration pair");
}

int store_writer_device(store_writer *w, int64_t process, const store_device_info *d)
{
    CHECK_OPEN(w);
    if (!d)
        return STORE_EINVAL;
    sqlite3_stmt *s = w->st[ST_DEVICE];
    sqlite3_bind_int64(s, 1, process);
    sqlite3_bind_int64(s, 2, d->device_id);
    bind_text(s, 3, d->uuid);
    bind_text(s, 4, d->name);
    sqlite3_bind_int64(s, 5, d->sm_count);
    sqlite3_bind_int64(s, 6, d->cc_major);
    sqlite3_bind_int64(s, 7, d->cc_minor);
    sqlite3_bind_int64(s, 8, (int64_t)d->global_memory);
    return wstep(w, ST_DEVICE, "cannot write a device");
}

static int ctx_eq(const void *ctx, uint32_t idx, const void *key)
{
    const wctx *a = &((const store_writer *)ctx)->ctxs[idx], *b = key;
    return a->process == b->process && a->context_id == b->context_id;
}

static uint64_t ctx_hash(int64_t process, uint32_t context_id)
{
    return store_hash_bytes(&process, sizeof process, context_id);
}

/* Finds the row of (process, c->context_id); *pNew tells whether it was just created, with
 * everything in *c when `full`, else with c's device only (kind 0, the rest NULL). The row is
 * written before it is remembered, so a failed insert is never referred to. */
static int context_row(store_writer *w, int64_t process, const store_context_info *c, int full,
                       int64_t *pRow, int *pNew)
{
    wctx key = {process, c->context_id};
    uint64_t h = ctx_hash(process, c->context_id);
    uint32_t idx = store_htab_get(&w->h_ctxs, h, ctx_eq, w, &key);
    *pNew = 0;
    if (idx != STORE_NONE) {
        *pRow = (int64_t)idx + 1;
        return STORE_OK;
    }
    if (store_grow((void **)&w->ctxs, &w->cap_ctxs, w->nctxs + 1, sizeof *w->ctxs))
        return STORE_ENOMEM;
    int64_t row = (int64_t)w->nctxs + 1;
    sqlite3_stmt *s = w->st[ST_CTX_INS];
    sqlite3_bind_int64(s, 1, row);
    sqlite3_bind_int64(s, 2, process);
    sqlite3_bind_int64(s, 3, c->device_id);
    sqlite3_bind_int64(s, 4, c->context_id);
    sqlite3_bind_int64(s, 5, full ? c->compute_api_kind : 0);
    if (full) {
        sqlite3_bind_int64(s, 6, c->null_stream_id);
        sqlite3_bind_int64(s, 7, c->green != 0);
        sqlite3_bind_int64(s, 8, c->parent_context_id);
        sqlite3_bind_int64(s, 9, c->sm_count);
    }
    int rc = wstep(w, ST_CTX_INS, "cannot add a context");
    if (rc)
        return rc;
    if (store_htab_put(&w->h_ctxs, h, (uint32_t)w->nctxs))
        return STORE_ENOMEM;
    w->ctxs[w->nctxs++] = key;
    *pRow = row;
    *pNew = 1;
    return STORE_OK;
}

int store_writer_context_row(store_writer *w, int64_t process, uint32_t context_id,
                             uint32_t device_id, int64_t *pRow)
{
    CHECK_OPEN(w);
    int created;
    store_context_info c = {.context_id = context_id, .device_id = device_id};
    return context_row(w, process, &c, 0, pRow, &created);
}

int store_writer_context(store_writer *w, int64_t process, const store_context_info *c)
{
    CHECK_OPEN(w);
    if (!c)
        return STORE_EINVAL;
    int64_t row;
    int created;
    int rc = context_row(w, process, c, 1, &row, &created);
    if (rc || created)
        return rc;
    sqlite3_stmt *s = w->st[ST_CTX_UPD];
    sqlite3_bind_int64(s, 1, c->device_id);
    sqlite3_bind_int64(s, 2, c->compute_api_kind);
    sqlite3_bind_int64(s, 3, c->null_stream_id);
    sqlite3_bind_int64(s, 4, c->green != 0);
    sqlite3_bind_int64(s, 5, c->parent_context_id);
    sqlite3_bind_int64(s, 6, c->sm_count);
    sqlite3_bind_int64(s, 7, row);
    return wstep(w, ST_CTX_UPD, "cannot update a context");
}

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
    return strcmp(((const store_writer *)ctx)->strings[idx], key) == 0;
}

int store_writer_string_id(store_writer *w, const char *text, const char *demangled, int64_t *pId)
{
    CHECK_OPEN(w);
    if (!text)
        return STORE_EINVAL;
    /* A pointer seen before is checked with strcmp (vectorised), cheaper than hashing a long
     * C++ name; the content check keeps a reused pointer from being misread. */
    uintptr_t slot = ((uintptr_t)text >> 3 ^ (uintptr_t)text >> 11) & 255;
    if (w->recent[slot].ptr == text && strcmp(w->strings[w->recent[slot].idx], text) == 0) {
        *pId = (int64_t)w->recent[slot].idx + 1;
        return STORE_OK;
    }
    uint64_t h = store_hash_str(text);
    uint32_t idx = store_htab_get(&w->h_strings, h, str_eq, w, text);
    if (idx != STORE_NONE) {
        w->recent[slot].ptr = text;
        w->recent[slot].idx = idx;
        *pId = (int64_t)idx + 1;
        return STORE_OK;
    }
    const char *copy = store_arena_strdup(&w->arena, text);
    if (!copy ||
        store_grow((void **)&w->strings, &w->cap_strings, w->nstrings + 1, sizeof *w->strings))
        return STORE_ENOMEM;
    int64_t id = (int64_t)w->nstrings + 1;
    sqlite3_stmt *s = w->st[ST_STRING];
    sqlite3_bind_int64(s, 1, id);
    bind_text(s, 2, text);
    bind_text(s, 3, demangled);
    int rc = wstep(w, ST_STRING, "cannot add a string");
    if (rc)
        return rc;
    if (store_htab_put(&w->h_strings, h, (uint32_t)w->nstrings))
        return STORE_ENOMEM;
    w->recent[slot].ptr = text;
    w->recent[slot].idx = (uint32_t)w->nstrings;
    w->strings[w->nstrings++] = copy;
    *pId = id;
    return STORE_OK;
}

static int launch_eq(const void *ctx, uint32_t idx, const void *key)
{
    return memcmp(&((const store_writer *)ctx)->launches[idx], key, sizeof(wlaunch)) == 0;
}

int store_writer_launch_id(store_writer *w, int64_t context_row, uint32_t stream_id,
                           int64_t name_id, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t registers, uint32_t static_smem, uint32_t dynamic_smem,
                           uint32_t local_mem, int64_t *pId)
{
    wlaunch key;
    memset(&key, 0, sizeof key); /* padding takes part in hash and memcmp */
    key.context_row = context_row;
    key.name_id = name_id;
    key.stream_id = stream_id;
    memcpy(key.grid, grid, sizeof key.grid);
    memcpy(key.block, block, sizeof key.block);
    key.registers = registers;
    key.static_smem = static_smem;
    key.dynamic_smem = dynamic_smem;
    key.local_mem = local_mem;
    uint64_t h = store_hash_bytes(&key, sizeof key, 0);
    uint32_t idx = store_htab_get(&w->h_launches, h, launch_eq, w, &key);
    if (idx != STORE_NONE) {
        *pId = (int64_t)idx + 1;
        return STORE_OK;
    }
    if (store_grow((void **)&w->launches, &w->cap_launches, w->nlaunches + 1, sizeof *w->launches))
        return STORE_ENOMEM;
    int64_t id = (int64_t)w->nlaunches + 1;
    sqlite3_stmt *s = w->st[ST_LAUNCH];
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, context_row);
    sqlite3_bind_int64(s, 3, stream_id);
    sqlite3_bind_int64(s, 4, name_id);
    for (int i = 0; i < 3; i++) {
        sqlite3_bind_int64(s, 5 + i, grid[i]);
        sqlite3_bind_int64(s, 8 + i, block[i]);
    }
    sqlite3_bind_int64(s, 11, registers);
    sqlite3_bind_int64(s, 12, static_smem);
    sqlite3_bind_int64(s, 13, dynamic_smem);
    sqlite3_bind_int64(s, 14, local_mem);
    int rc = wstep(w, ST_LAUNCH, "cannot add a launch");
    if (rc)
        return rc;
    if (store_htab_put(&w->h_launches, h, (uint32_t)w->nlaunches))
        return STORE_ENOMEM;
    memcpy(&w->launches[w->nlaunches++], &key, sizeof key); /* padding included: memcmp'd */
    *pId = id;
    return STORE_OK;
}

int store_writer_kernel_row(store_writer *w, int64_t start, int64_t dur, int64_t launch_id,
                            uint32_t correlation_id)
{
    sqlite3_stmt *s = w->st[ST_KERNEL];
    sqlite3_bind_int64(s, 1, start - w->t0);
    sqlite3_bind_int64(s, 2, dur);
    sqlite3_bind_int64(s, 3, launch_id);
    sqlite3_bind_int64(s, 4, correlation_id);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? STORE_OK : werr(w, STORE_EIO, "cannot add a kernel");
}

/* A record's times must be ordered: one without an end is not written (SCHEMA.md). */
static int check_times(store_writer *w, int64_t start, int64_t end, const char *what)
{
    if (end >= start)
        return STORE_OK;
    store_fmt(w->errmsg, sizeof w->errmsg,
              "%s: %s ends before it starts (%lld < %lld); not written", w->path, what,
              (long long)end, (long long)start);
    return STORE_EINVAL;
}

int store_writer_kernel(store_writer *w, int64_t process, const store_kernel_info *k)
{
    CHECK_OPEN(w);
    if (!k || !k->name)
        return STORE_EINVAL;
    int rc = check_times(w, k->start, k->end, "kernel");
    int64_t ctx, name, launch;
    if (rc == STORE_OK)
        rc = store_writer_context_row(w, process, k->context_id, k->device_id, &ctx);
    if (rc == STORE_OK)
        rc = store_writer_string_id(w, k->name, NULL, &name);
    if (rc == STORE_OK)
        rc = store_writer_launch_id(w, ctx, k->stream_id, name, k->grid, k->block, k->registers,
                                    k->static_smem, k->dynamic_smem, k->local_mem, &launch);
    if (rc == STORE_OK)
        rc = store_writer_kernel_row(w, k->start, k->end - k->start, launch, k->correlation_id);
    return rc;
}

/* Checks the times of a memcpy or memset row and binds the columns both tables start with
 * (start, dur, context_row, stream_id, correlation_id) to statement `st`, making the context row
 * when it is new. The caller binds the rest and steps. */
static int bind_copy_head(store_writer *w, int st, /* ST_MEMCPY or ST_MEMSET */
                          int64_t process, int64_t start, int64_t end, uint32_t device_id,
                          uint32_t context_id, /* CUDA's ids */
                          uint32_t stream_id, uint32_t correlation_id,
                          const char *what) /* "memcpy", "memset": for messages */
{
    int64_t ctx;
    int rc = check_times(w, start, end, what);
    if (rc == STORE_OK)
        rc = store_writer_context_row(w, process, context_id, device_id, &ctx);
    if (rc)
        return rc;
    sqlite3_stmt *s = w->st[st];
    sqlite3_bind_int64(s, 1, start - w->t0);
    sqlite3_bind_int64(s, 2, end - start);
    sqlite3_bind_int64(s, 3, ctx);
    sqlite3_bind_int64(s, 4, stream_id);
    sqlite3_bind_int64(s, 5, correlation_id);
    return STORE_OK;
}

int store_writer_memcpy(store_writer *w, int64_t process, const store_memcpy_info *m)
{
    CHECK_OPEN(w);
    if (!m)
        return STORE_EINVAL;
    int rc = bind_copy_head(w, ST_MEMCPY, process, m->start, m->end, m->device_id, m->context_id,
                            m->stream_id, m->correlation_id, "memcpy");
    if (rc)
        return rc;
    sqlite3_stmt *s = w->st[ST_MEMCPY];
    sqlite3_bind_int64(s, 6, m->copy_kind);
    sqlite3_bind_int64(s, 7, m->src_kind);
    sqlite3_bind_int64(s, 8, m->dst_kind);
    sqlite3_bind_int64(s, 9, (int64_t)m->bytes);
    sqlite3_bind_int64(s, 10, m->flags);
    return wstep(w, ST_MEMCPY, "cannot add a memcpy");
}

int store_writer_memset(store_writer *w, int64_t process, const store_memset_info *m)
{
    CHECK_OPEN(w);
    if (!m)
        return STORE_EINVAL;
    int rc = bind_copy_head(w, ST_MEMSET, process, m->start, m->end, m->device_id, m->context_id,
                            m->stream_id, m->correlation_id, "memset");
    if (rc)
        return rc;
    sqlite3_stmt *s = w->st[ST_MEMSET];
    sqlite3_bind_int64(s, 6, m->value);
    sqlite3_bind_int64(s, 7, (int64_t)m->bytes);
    sqlite3_bind_int64(s, 8, m->mem_kind);
    return wstep(w, ST_MEMSET, "cannot add a memset");
}

int store_writer_api(store_writer *w, int64_t process, const store_api_info *a)
{
    CHECK_OPEN(w);
    if (!a)
        return STORE_EINVAL;
    int64_t name = 0;
    int rc = check_times(w, a->start, a->end, "API call");
    if (rc == STORE_OK && a->name)
        rc = store_writer_string_id(w, a->name, NULL, &name);
    if (rc)
        return rc;
    sqlite3_stmt *s = w->st[ST_API];
    sqlite3_bind_int64(s, 1, a->start - w->t0);
    sqlite3_bind_int64(s, 2, a->end - a->start);
    sqlite3_bind_int64(s, 3, process);
    sqlite3_bind_int64(s, 4, (int64_t)a->thread_id);
    sqlite3_bind_int64(s, 5, a->correlation_id);
    sqlite3_bind_int64(s, 6, a->domain);
    sqlite3_bind_int64(s, 7, a->cbid);
    if (a->name)
        sqlite3_bind_int64(s, 8, name);
    sqlite3_bind_int64(s, 9, a->status);
    return wstep(w, ST_API, "cannot add an API call");
}

int store_writer_range(store_writer *w, int64_t process, const store_range_info *r)
{
    CHECK_OPEN(w);
    if (!r)
        return STORE_EINVAL;
    int64_t name = 0, domain = 0;
    int rc = check_times(w, r->start, r->end, "range");
    if (rc == STORE_OK && r->name)
        rc = store_writer_string_id(w, r->name, NULL, &name);
    if (rc == STORE_OK && r->domain)
        rc = store_writer_string_id(w, r->domain, NULL, &domain);
    if (rc)
        return rc;
    sqlite3_stmt *s = w->st[ST_RANGE];
    sqlite3_bind_int64(s, 1, r->start - w->t0);
    sqlite3_bind_int64(s, 2, r->end - r->start);
    sqlite3_bind_int64(s, 3, process);
    sqlite3_bind_int64(s, 4, (int64_t)r->thread_id);
    if (r->domain)
        sqlite3_bind_int64(s, 5, domain);
    if (r->name)
        sqlite3_bind_int64(s, 6, name);
    return wstep(w, ST_RANGE, "cannot add a range");
}

int store_writer_capture(store_writer *w, int64_t process, int64_t start, const char *name,
                         const char *start_reason, int64_t *pId)
{
    CHECK_OPEN(w);
    sqlite3_stmt *s = w->st[ST_CAP_INS];
    sqlite3_bind_int64(s, 1, process);
    sqlite3_bind_int64(s, 2, start - w->t0);
    bind_text(s, 3, name);
    bind_text(s, 4, start_reason);
    int rc = wstep(w, ST_CAP_INS, "cannot add a capture range");
    if (rc == STORE_OK && pId)
        *pId = sqlite3_last_insert_rowid(w->db);
    return rc;
}

int store_writer_capture_end(store_writer *w, int64_t id, int64_t end, const char *end_reason)
{
    CHECK_OPEN(w);
    sqlite3_stmt *s = w->st[ST_CAP_END];
    sqlite3_bind_int64(s, 1, end - w->t0);
    bind_text(s, 2, end_reason);
    sqlite3_bind_int64(s, 3, id);
    return wstep(w, ST_CAP_END, "cannot end a capture range");
}

/* The record tables in store_rowmark order. */
static const char *const record_tables[5] = {"kernel", "memcpy", "memset", "api", "\"range\""};

/* Runs `sql` with one integer result into *out. */
static int query_int(store_writer *w, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? STORE_OK : werr(w, STORE_EIO, "cannot read the tables");
}

int store_writer_rowmark(store_writer *w, store_rowmark *out)
{
    CHECK_OPEN(w);
    for (int i = 0; i < 5; i++) {
        char sql[96];
        store_fmt(sql, sizeof sql, "SELECT coalesce(max(rowid), 0) FROM %s", record_tables[i]);
        int rc = query_int(w, sql, &out->row[i]);
        if (rc)
            return rc;
    }
    return STORE_OK;
}

int store_writer_prune(store_writer *w, const store_rowmark *upto, int64_t from)
{
    CHECK_OPEN(w);
    if (!upto)
        return STORE_EINVAL;
    store_rowmark now;
    int rc = store_writer_rowmark(w, &now);
    int own = !w->in_batch;
    if (rc == STORE_OK && own)
        rc = store_writer_begin(w);
    char sql[512];
    for (int i = 0; i < 5 && rc == STORE_OK; i++) {
        /* The last row stays: were a table emptied, SQLite would hand out rowid 1 again and
         * the marks taken before would cover new rows. */
        int64_t limit = upto->row[i] < now.row[i] ? upto->row[i] : now.row[i] - 1;
        if (limit <= 0)
            continue;
        store_fmt(sql, sizeof sql, "DELETE FROM %s WHERE rowid <= %lld", record_tables[i],
                  (long long)limit);
        if (sqlite3_exec(w->db, sql, 0, 0, NULL) != SQLITE_OK)
            rc = werr(w, STORE_EIO, "cannot delete old records");
    }
    if (rc == STORE_OK) {
        long long f = (long long)(from - w->t0);
        store_fmt(sql, sizeof sql,
                  "DELETE FROM capture WHERE start + dur < %lld AND end_reason IS NOT NULL;"
                  " UPDATE capture SET dur = max(0, start + dur - %lld), start = %lld"
                  " WHERE start < %lld",
                  f, f, f, f);
        if (sqlite3_exec(w->db, sql, 0, 0, NULL) != SQLITE_OK)
            rc = werr(w, STORE_EIO, "cannot trim the capture ranges");
    }
    if (own && w->in_batch) {
        int crc = store_writer_commit(w);
        rc = rc ? rc : crc;
    }
    return rc;
}

int store_writer_used_bytes(store_writer *w, int64_t *pBytes)
{
    CHECK_OPEN(w);
    return query_int(w,
                     "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(),"
                     " pragma_freelist_count(), pragma_page_size()",
                     pBytes);
}

/* The finishing touches of a snapshot at `path`: one plain file, open ranges closed at `at`
 * (relative to t0), marked as a snapshot; *pKernels its kernel rows. */
static int finish_snapshot(const char *path, int64_t at, int64_t *pKernels, char *err,
                           size_t errlen)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char sql[256];
    store_fmt(sql, sizeof sql,
              "PRAGMA journal_mode=DELETE; BEGIN;"
              " UPDATE capture SET dur = max(0, %lld - start), end_reason = 'dump'"
              " WHERE end_reason IS NULL;"
              " INSERT OR REPLACE INTO process_meta(process_id, key, value)"
              " SELECT id, 'snapshot', 1 FROM process; COMMIT",
              (long long)at);
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, 0, 0, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM kernel", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (pKernels)
            *pKernels = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK)
        store_fmt(err, errlen, "%s: cannot finish the snapshot: %s", path,
                  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_finalize(st);
    if (sqlite3_close(db) != SQLITE_OK && rc == SQLITE_OK) {
        store_fmt(err, errlen, "%s: cannot close the snapshot", path);
        rc = SQLITE_ERROR;
    }
    return rc == SQLITE_OK ? STORE_OK : STORE_EIO;
}

int store_writer_snapshot(store_writer *w, const char *path, int64_t at, int64_t *pKernels,
                          char *err, size_t errlen)
{
    if (!w || !w->db || !path || w->in_batch) {
        store_fmt(err, errlen, "%s: no snapshot: the writer is %s", path ? path : "?",
                  w && w->db ? "inside a batch" : "not open");
        return STORE_EINVAL;
    }
    /* Claim the name first (O_EXCL: never overwrite), then copy into a private name beside it
     * and rename over the claim once finished, so no reader ever sees half a snapshot. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        store_fmt(err, errlen, "%s: %s", path,
                  e == EEXIST ? "already exists; not overwriting it" : strerror(e));
        return e == EEXIST ? STORE_EEXIST : STORE_EIO;
    }
    close(fd);
    char tmp[4200];
    store_fmt(tmp, sizeof tmp, "%s.part", path);
    unlink(tmp);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(w->db, "VACUUM INTO ?", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, tmp, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
        store_fmt(err, errlen, "%s: cannot copy the file: %s", path, sqlite3_errmsg(w->db));
    sqlite3_finalize(st);
    int res = rc == SQLITE_OK ? finish_snapshot(tmp, at - w->t0, pKernels, err, errlen) : STORE_EIO;
    if (res == STORE_OK && rename(tmp, path) != 0) {
        store_fmt(err, errlen, "%s: cannot rename the snapshot: %s", path, strerror(errno));
        res = STORE_EIO;
    }
    if (res != STORE_OK) {
        unlink(tmp);
        unlink(path);
    }
    char side[4300];
    store_fmt(side, sizeof side, "%s-journal", tmp);
    unlink(side);
    return res;
}

/* Drops the strings, contexts and launches interned since the batch began: their rows were
 * rolled back, and later rows must not refer to them. */
static void forget_batch(store_writer *w)
{
    w->nstrings = w->mark_strings;
    w->nctxs = w->mark_ctxs;
    w->nlaunches = w->mark_launches;
    memset(w->recent, 0, sizeof w->recent);
    store_htab_free(&w->h_strings);
    store_htab_free(&w->h_ctxs);
    store_htab_free(&w->h_launches);
    /* Rebuilding needs no more memory than the tables had; if it fails, an entry is missing
     * and the name is simply written again under a new id. */
    for (uint64_t i = 0; i < w->nstrings; i++)
        store_htab_put(&w->h_strings, store_hash_str(w->strings[i]), (uint32_t)i);
    for (uint64_t i = 0; i < w->nctxs; i++)
        store_htab_put(&w->h_ctxs, ctx_hash(w->ctxs[i].process, w->ctxs[i].context_id),
                       (uint32_t)i);
    for (uint64_t i = 0; i < w->nlaunches; i++)
        store_htab_put(&w->h_launches, store_hash_bytes(&w->launches[i], sizeof(wlaunch), 0),
                       (uint32_t)i);
}

int store_writer_begin(store_writer *w)
{
    CHECK_OPEN(w);
    if (w->in_batch)
        return STORE_OK;
    w->batch_lost = 0;
    if (sqlite3_exec(w->db, "BEGIN", 0, 0, NULL) != SQLITE_OK)
        return werr(w, STORE_EIO, "cannot begin a batch");
    w->in_batch = 1;
    w->mark_strings = w->nstrings;
    w->mark_ctxs = w->nctxs;
    w->mark_launches = w->nlaunches;
    return STORE_OK;
}

int store_writer_commit(store_writer *w)
{
    CHECK_OPEN(w);
    if (!w->in_batch) {
        int lost = w->batch_lost; /* rolled back by SQLite: none of the batch reached the file */
        w->batch_lost = 0;
        return lost ? STORE_EIO : STORE_OK;
    }
    if (sqlite3_exec(w->db, "COMMIT", 0, 0, NULL) != SQLITE_OK) {
        /* A failed COMMIT (disk full) may leave the transaction open: end it so later batches
         * can still be tried. */
        int rc = werr(w, STORE_EIO, "cannot commit a batch");
        if (w->in_batch) {
            if (!sqlite3_get_autocommit(w->db))
                sqlite3_exec(w->db, "ROLLBACK", 0, 0, NULL);
            forget_batch(w);
            w->in_batch = 0;
        }
        w->batch_lost = 0; /* said by this return */
        return rc;
    }
    w->in_batch = 0;
    return STORE_OK;
}

int store_writer_close(store_writer *w)
{
    if (!w)
        return STORE_OK;
    int rc = STORE_OK;
    if (w->db) {
        if (w->in_batch && store_writer_commit(w))
            rc = STORE_EIO;
        for (int i = 0; i < ST_COUNT; i++)
            sqlite3_finalize(w->st[i]);
        /* Back to one self-contained file: fold the WAL in and leave WAL mode. */
        if (sqlite3_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", 0, 0,
                         NULL) != SQLITE_OK &&
            !rc)
            rc = werr(w, STORE_EIO, "cannot finish the file");
        if (sqlite3_close(w->db) != SQLITE_OK && !rc)
            rc = STORE_EIO;
    }
    store_arena_free(&w->arena);
    store_htab_free(&w->h_strings);
    store_htab_free(&w->h_ctxs);
    store_htab_free(&w->h_launches);
    free(w->strings);
    free(w->ctxs);
    free(w->launches);
    free(w->path);
    free(w);
    return rc;
}
