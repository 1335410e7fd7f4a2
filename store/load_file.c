/* load_file.c: reads one tlview file into a run (load.c runs several at once). The metadata
 * tables are read first and turned into arrays indexed by the file's row ids, so the record scans
 * (the hot path: one prepared statement per share of the kernel, API or range table, tens of
 * millions of rows, run side by side by load.c) resolve each row with array lookups only. Every
 * check that a file is whole and consistent is here; files come from anyone, so each connection
 * is guarded (store_guard_*: no views, a time limit, plain tables only) and every time is
 * computed with checked arithmetic: a record whose time overflows is refused and counted in its
 * process's rows_refused. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The error of a read of `path` through db that failed while doing `what`, into err (a scan
 * share's or the loader's): STORE_EFORMAT when SQLite found the file damaged, else `code`. */
static int lerr_in(sqlite3 *db, const char *path, int code, const char *what, char *err)
{
    int ec = sqlite3_extended_errcode(db) & 0xff;
    if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || ec == SQLITE_FORMAT) {
        store_fmt(err, STORE_ERRLEN, "%s: truncated or corrupt (%s: %s)", path, what,
                  sqlite3_errmsg(db));
        return STORE_EFORMAT;
    }
    if (code == STORE_EFORMAT && strstr(sqlite3_errmsg(db), "no such"))
        store_fmt(err, STORE_ERRLEN, "%s: not a complete tlview file (%s: %s)", path, what,
                  sqlite3_errmsg(db));
    else
        store_fmt(err, STORE_ERRLEN, "%s: %s: %s", path, what, sqlite3_errmsg(db));
    return code;
}

static int lerr(loader *L, int code, const char *what)
{
    return lerr_in(L->db, L->path, code, what, L->err);
}

/* rc of a read that failed (or not) on db, guarded by g: when the guard caused the failure, err
 * says so and the file is refused (STORE_EFORMAT). */
static int guarded_rc(const store_guard *g, sqlite3 *db, const char *path, int rc, char *err,
                      size_t errlen)
{
    if ((rc == STORE_EFORMAT || rc == STORE_EIO) &&
        store_guard_explain(g, db, path, NULL, err, errlen))
        return STORE_EFORMAT;
    return rc;
}

static int prep(loader *L, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(L->db, sql, -1, st, NULL) != SQLITE_OK)
        return lerr(L, STORE_EFORMAT, "cannot read the tables");
    return STORE_OK;
}

/* An id map sized by the table's largest id; refuses absurdly sparse ids (a damaged file). */
static int idmap(loader *L, const char *table, store_idx **pMap, uint64_t *pN)
{
    char sql[128];
    sqlite3_stmt *st;
    store_fmt(sql, sizeof sql, "SELECT max(id), count(*) FROM %s", table);
    int rc = prep(L, sql, &st);
    if (rc)
        return rc;
    int64_t mx = 0, cnt = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        mx = sqlite3_column_int64(st, 0);
        cnt = sqlite3_column_int64(st, 1);
    }
    rc = sqlite3_errcode(L->db);
    sqlite3_finalize(st);
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
        return lerr(L, STORE_EIO, table);
    if (mx < 0 || mx >= (int64_t)UINT32_MAX || (uint64_t)mx > 4 * (uint64_t)cnt + 4096) {
        store_fmt(L->err, sizeof L->err,
                  "%s: table %s has ids up to %lld for %lld rows; not a "
                  "file tlview wrote",
                  L->path, table, (long long)mx, (long long)cnt);
        return STORE_EFORMAT;
    }
    *pN = (uint64_t)mx + 1;
    *pMap = malloc(*pN * sizeof **pMap);
    if (!*pMap)
        return STORE_ENOMEM;
    for (uint64_t i = 0; i < *pN; i++)
        (*pMap)[i] = STORE_NONE;
    return STORE_OK;
}

/* Ends a scan: SQLITE_DONE is success, anything else an error naming `what`. */
static int done(loader *L, sqlite3_stmt *st, int rc, const char *what)
{
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE || rc == STORE_OK)
        return STORE_OK;
    if (rc < 0)
        return rc; /* a STORE_E* code, message already set */
    return lerr(L, STORE_EIO, what);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* STORE_EFORMAT, saying in err (a scan share's or the loader's) that a row of `table` of the
 * file at `path` names a `col` that the file lacks. */
static int bad_ref_in(const char *path, const char *table, const char *col, int64_t v, char *err)
{
    store_fmt(err, STORE_ERRLEN, "%s: table %s refers to %s %lld, which does not exist", path,
              table, col, (long long)v);
    return STORE_EFORMAT;
}

static int bad_ref(loader *L, const char *table, const char *col, int64_t v)
{
    return bad_ref_in(L->path, table, col, v, L->err);
}

/* STORE_EFORMAT, saying in err that a record (`what`: "a memcpy"...) of the file at `path` has
 * a negative duration (SCHEMA.md: dur >= 0). */
static int neg_dur(const char *path, const char *what, int64_t dur, char *err)
{
    store_fmt(err, STORE_ERRLEN, "%s: truncated or corrupt (%s with a negative duration, %lld ns)",
              path, what, (long long)dur);
    return STORE_EFORMAT;
}

/* The duration in column 1 of a copy or capture row, into *pDur; STORE_EFORMAT naming `what`
 * when it is negative. */
static int row_dur(loader *L, sqlite3_stmt *st, const char *what, int64_t *pDur)
{
    *pDur = sqlite3_column_int64(st, 1);
    return *pDur >= 0 ? STORE_OK : neg_dur(L->path, what, *pDur, L->err);
}

/* Whether `id` is a process row of the file that was loaded. */
static int proc_ok(const loader *L, int64_t id)
{
    return id >= 0 && (uint64_t)id < L->nproc && L->proc[id] != STORE_NONE;
}

static int load_processes(loader *L)
{
    int rc = idmap(L, "process", &L->proc, &L->nproc);
    if (rc)
        return rc;
    L->offset = calloc(L->nproc, sizeof *L->offset);
    if (!L->offset)
        return STORE_ENOMEM;
    sqlite3_stmt *st;
    if ((rc = prep(L,
                   "SELECT id, pid, ppid, host, exe, argv, run_id, start_wall, end_wall,"
                   " complete, source, error FROM process ORDER BY id",
                   &st)))
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 0 || (uint64_t)id >= L->nproc) {
            rc = bad_ref(L, "process", "id", id);
            break;
        }
        store_process_info pi = {
            .pid = sqlite3_column_int64(st, 1),
            .ppid = sqlite3_column_int64(st, 2),
            .host = col_text(st, 3),
            .exe = col_text(st, 4),
            .argv = col_text(st, 5),
            .run_id = col_text(st, 6),
            .start_wall = sqlite3_column_int64(st, 7),
            .source = col_text(st, 10),
        };
        store_idx p = store_run_add_process(L->run, &pi, L->path);
        if (p == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        store_process *pr = &L->run->processes[p];
        pr->end_wall = sqlite3_column_int64(st, 8);
        pr->complete = sqlite3_column_int(st, 9) != 0;
        pr->error = store_arena_strdup(&STORE_PRIV(L->run)->arena, col_text(st, 11));
        L->proc[id] = p;
    }
    if ((rc = done(L, st, rc, "reading processes")))
        return rc;
    /* Clock alignment: offset = realtime - cupti of the start pair; drift from the end pair. */
    if (L->clock != STORE_CLOCK_CUPTI)
        return STORE_OK;
    if ((rc = prep(L, "SELECT process_id, label, cupti, realtime FROM calibration", &st)))
        return rc;
    int64_t *end_off = calloc(L->nproc, sizeof *end_off);
    char *have = calloc(L->nproc, 1);
    if (!end_off || !have) {
        free(end_off);
        free(have);
        sqlite3_finalize(st);
        return STORE_ENOMEM;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *label = col_text(st, 1);
        if (!proc_ok(L, id) || !label)
            continue;
        int64_t off;
        if (__builtin_sub_overflow(sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 2),
                                   &off)) {
            L->run->processes[L->proc[id]].rows_refused++; /* read as if absent */
            continue;
        }
        if (!strcmp(label, "start")) {
            L->offset[id] = off;
            have[id] |= 1;
        } else if (!strcmp(label, "end")) {
            end_off[id] = off;
            have[id] |= 2;
        }
    }
    for (uint64_t id = 0; id < L->nproc; id++) {
        if (L->proc[id] == STORE_NONE)
            continue;
        store_process *pr = &L->run->processes[L->proc[id]];
        pr->clock_offset = L->offset[id];
        pr->clock_drift = 0;
        if (have[id] == 3 && __builtin_sub_overflow(end_off[id], L->offset[id], &pr->clock_drift)) {
            pr->clock_drift = 0; /* the end pair is unusable */
            pr->rows_refused++;
        }
    }
    free(end_off);
    free(have);
    return done(L, st, rc, "reading calibration");
}

static int load_process_meta(loader *L)
{
    sqlite3_stmt *st;
    int rc = prep(L, "SELECT process_id, key, value FROM process_meta", &st);
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (!proc_ok(L, id)) {
            rc = bad_ref(L, "process_meta", "process", id);
            break;
        }
        /* rows_refused: refused when the file was made (a merge) + refused here (calibration,
         * read before), added up by store_run_process_meta */
        if (col_text(st, 1) &&
            (rc = store_run_process_meta(L->run, L->proc[id], col_text(st, 1), col_text(st, 2))))
            break;
    }
    return done(L, st, rc, "reading process_meta");
}

/* The run device of (file process, ordinal); a placeholder device when the file has no row. */
static store_idx device_of(loader *L, int64_t process, uint32_t ordinal, const store_device_info *d)
{
    for (uint64_t i = 0; i < L->ndevs; i++)
        if (L->devs[i].process == process && L->devs[i].ordinal == ordinal)
            return L->devs[i].device;
    store_device_info blank = {.device_id = ordinal};
    store_idx dev = store_run_add_device(L->run, L->proc[process], d ? d : &blank);
    if (dev == STORE_NONE ||
        store_grow((void **)&L->devs, &L->cap_devs, L->ndevs + 1, sizeof *L->devs))
        return STORE_NONE;
    L->devs[L->ndevs++] = (struct ldev){process, ordinal, dev, d ? d->sm_count : 0};
    return dev;
}

/* An MPS client context c of process pid on its device `ordinal`: its active thread percentage
 * (store_context.thread_pct) from the process's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, and where it
 * limits the client and the context row gives no SM count, the SMs the device reported to the
 * client (its device row): the partition it ran in. */
static void mps_partition(loader *L, int64_t pid, uint32_t ordinal, store_idx c)
{
    store_context *sc = &L->run->contexts[c];
    double pct = store_thread_pct(&L->run->processes[L->proc[pid]]);
    if (!(pct > 0))
        return;
    sc->thread_pct = (float)pct;
    for (uint64_t i = 0; i < L->ndevs && pct < 100 && !sc->sm_count; i++)
        if (L->devs[i].process == pid && L->devs[i].ordinal == ordinal)
            sc->sm_count = L->devs[i].sm_count;
}

static int load_devices_contexts(loader *L)
{
    sqlite3_stmt *st;
    int rc = prep(L,
                  "SELECT process_id, device_id, uuid, name, sm_count, cc_major, cc_minor,"
                  " global_memory FROM device",
                  &st);
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (!proc_ok(L, id)) {
            rc = bad_ref(L, "device", "process", id);
            break;
        }
        store_device_info d = {
            .device_id = (uint32_t)sqlite3_column_int64(st, 1),
            .uuid = col_text(st, 2),
            .name = col_text(st, 3),
            .sm_count = (uint32_t)sqlite3_column_int64(st, 4),
            .cc_major = (uint32_t)sqlite3_column_int64(st, 5),
            .cc_minor = (uint32_t)sqlite3_column_int64(st, 6),
            .global_memory = (uint64_t)sqlite3_column_int64(st, 7),
        };
        if (device_of(L, id, d.device_id, &d) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
    }
    if ((rc = done(L, st, rc, "reading devices")))
        return rc;
    if ((rc = idmap(L, "context", &L->ctx, &L->nctx)))
        return rc;
    /* Schema 1 files have no green-context columns: they read as 0 (unknown). */
    if ((rc = prep(L,
                   L->schema >= 2 ? "SELECT id, process_id, device_id, context_id,"
                                    " compute_api_kind, is_green, parent_context_id, sm_count"
                                    " FROM context"
                                  : "SELECT id, process_id, device_id, context_id,"
                                    " compute_api_kind, 0, 0, 0 FROM context",
                   &st)))
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
        if (id < 0 || (uint64_t)id >= L->nctx || !proc_ok(L, pid)) {
            rc = bad_ref(L, "context", "process", pid);
            break;
        }
        store_idx dev = STORE_NONE;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
            (dev = device_of(L, pid, (uint32_t)sqlite3_column_int64(st, 2), NULL)) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        store_idx c = store_run_context(L->run, L->proc[pid], (uint32_t)sqlite3_column_int64(st, 3),
                                        dev, (uint32_t)sqlite3_column_int64(st, 4));
        if (c == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        store_run_context_green(L->run, c, sqlite3_column_int64(st, 5) != 0,
                                (uint32_t)sqlite3_column_int64(st, 6),
                                (uint32_t)sqlite3_column_int64(st, 7));
        if (sqlite3_column_int64(st, 4) == 2 && sqlite3_column_type(st, 2) != SQLITE_NULL)
            mps_partition(L, pid, (uint32_t)sqlite3_column_int64(st, 2), c);
        L->ctx[id] = c;
    }
    return done(L, st, rc, "reading contexts");
}

static int load_strings(loader *L)
{
    int rc = idmap(L, "strings", &L->str, &L->nstr);
    sqlite3_stmt *st;
    if (rc || (rc = prep(L, "SELECT id, text, demangled FROM strings", &st)))
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *text = col_text(st, 1);
        if (!text || id < 0 || (uint64_t)id >= L->nstr)
            continue;
        /* demangled is NULL when the writer left it to the reader (libcollect.so does not
         * demangle, see store/SCHEMA.md): demangle here */
        const char *dem = col_text(st, 2);
        store_idx s = dem ? store_run_intern2(L->run, text, dem) : store_run_intern(L->run, text);
        if (s == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        L->str[id] = s;
    }
    return done(L, st, rc, "reading strings");
}

/* The run string of a file string id (column i), STORE_NONE for NULL; -1 if dangling. */
static int string_ref(loader *L, sqlite3_stmt *st, int i, store_idx *out)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        *out = STORE_NONE;
        return 0;
    }
    int64_t id = sqlite3_column_int64(st, i);
    if (id < 0 || (uint64_t)id >= L->nstr || L->str[id] == STORE_NONE)
        return -1;
    *out = L->str[id];
    return 0;
}

static int load_launches(loader *L)
{
    store_idx *tmp = NULL;
    int rc = idmap(L, "launch", &tmp, &L->nlaunch);
    free(tmp);
    if (rc)
        return rc;
    L->launch = calloc(L->nlaunch, sizeof *L->launch);
    if (!L->launch)
        return STORE_ENOMEM;
    sqlite3_stmt *st;
    if ((rc = prep(L,
                   "SELECT l.id, l.context_row, l.stream_id, l.name_id, l.grid_x, l.grid_y,"
                   " l.grid_z, l.block_x, l.block_y, l.block_z, l.registers, l.static_smem,"
                   " l.dynamic_smem, c.process_id FROM launch l"
                   " LEFT JOIN context c ON c.id = l.context_row",
                   &st)))
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), crow = sqlite3_column_int64(st, 1);
        int64_t pid = sqlite3_column_int64(st, 13);
        if (id < 0 || (uint64_t)id >= L->nlaunch || crow < 0 || (uint64_t)crow >= L->nctx ||
            L->ctx[crow] == STORE_NONE || pid < 0 || (uint64_t)pid >= L->nproc) {
            rc = bad_ref(L, "launch", "context row", crow);
            break;
        }
        store_launch l;
        if (string_ref(L, st, 3, &l.name) || l.name == STORE_NONE) {
            rc = bad_ref(L, "launch", "string", sqlite3_column_int64(st, 3));
            break;
        }
        for (int i = 0; i < 3; i++) {
            l.grid[i] = (uint32_t)sqlite3_column_int64(st, 4 + i);
            l.block[i] = (uint32_t)sqlite3_column_int64(st, 7 + i);
        }
        l.registers = (uint32_t)sqlite3_column_int64(st, 10);
        l.static_smem = (uint32_t)sqlite3_column_int64(st, 11);
        l.dynamic_smem = (uint32_t)sqlite3_column_int64(st, 12);
        launch_ref *r = &L->launch[id];
        r->stream = store_run_stream(L->run, L->ctx[crow], (uint32_t)sqlite3_column_int64(st, 2));
        r->launch = store_run_launch(L->run, &l);
        if (r->stream == STORE_NONE || r->launch == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        r->process = L->proc[pid];
        r->valid = __builtin_add_overflow(L->t0, L->offset[pid], &r->base) ? 2 : 1;
    }
    return done(L, st, rc, "reading launches");
}

/* store_run_load_meta(): a stream for each (context, stream) of the launch rows, so that the
 * contexts that ran kernels are known without reading the kernels (launch rows are created only
 * for them); the launch table is small (one row per signature and stream). */
static int load_launch_streams(loader *L)
{
    sqlite3_stmt *st;
    int rc = prep(L, "SELECT DISTINCT context_row, stream_id FROM launch", &st);
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t crow = sqlite3_column_int64(st, 0);
        if (crow < 0 || (uint64_t)crow >= L->nctx || L->ctx[crow] == STORE_NONE) {
            rc = bad_ref(L, "launch", "context row", crow);
            break;
        }
        if (store_run_stream(L->run, L->ctx[crow], (uint32_t)sqlite3_column_int64(st, 1)) ==
            STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
    }
    return done(L, st, rc, "reading launches");
}

/* What the scan of each record table reads and how its messages name it. */
#define KERNEL_SQL "SELECT start, dur, launch_id, correlation_id FROM kernel"
#define API_SQL                                                                                    \
    "SELECT start, dur, process_id, thread_id, correlation_id, domain, name_id, status FROM api"
#define RANGE_SQL "SELECT start, dur, process_id, thread_id, domain_id, name_id FROM \"range\""
#define IN_SHARE " WHERE rowid >= ?1 AND rowid <= ?2"
static const struct scan_table {
    const char *table;      /* as SQL names it */
    const char *all, *part; /* every row; the rows lo <= rowid <= hi */
    const char *items;      /* "kernels" */
    const char *rows;       /* "kernel rows" */
    const char *what;       /* "reading kernels" */
    size_t size;            /* bytes of one record in the run */
} scan_tables[4] = {
    [STORE_REC_KERNEL] = {"kernel", KERNEL_SQL, KERNEL_SQL IN_SHARE, "kernels", "kernel rows",
                          "reading kernels", sizeof(store_kernel)},
    [STORE_REC_API] = {"api", API_SQL, API_SQL IN_SHARE, "API calls", "api rows", "reading api",
                       sizeof(store_api)},
    [STORE_REC_RANGE] = {"\"range\"", RANGE_SQL, RANGE_SQL IN_SHARE, "ranges", "range rows",
                         "reading ranges", sizeof(store_range)},
};

/* Sizes a record table for its scan (L->rows[which]): its smallest and largest rowid, and the
 * room its rows can need, the span of rowids bounded by what the file's size allows. */
static int count_rows(loader *L, store_rec which)
{
    char sql[160];
    sqlite3_stmt *st;
    const char *t = scan_tables[which].table;
    /* Two subqueries: min and max together in one SELECT would scan the whole table. */
    store_fmt(sql, sizeof sql, "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s)", t,
              t);
    int rc = prep(L, sql, &st);
    if (rc)
        return rc;
    int64_t mn = 1, mx = 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        mn = sqlite3_column_int64(st, 0);
        mx = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    /* A row takes at least 6 bytes: never reserve more than the database (WAL included, which
     * page_count sees) could hold. */
    int64_t bytes = 0;
    if (prep(L, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
             &st) == STORE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            bytes = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    /* A flight recorder's file (TLVIEW_FLIGHT) deleted its oldest rows: its rowids begin far
     * above 1, and the rows are at most as many as the span of rowids (counted unsigned: a
     * hostile file's rowids may span all of int64). */
    uint64_t most = (uint64_t)(bytes > 0 ? bytes : 0) / 6 + 1024;
    uint64_t span = mx < mn ? 0 : (uint64_t)mx - (uint64_t)mn;
    store_rowids *r = &L->rows[which];
    r->cap = mx < mn ? 0 : span < most ? span + 1 : most;
    r->min = mn;
    r->max = mx;
    return STORE_OK;
}

/* Places a record of run process p that starts `start` after the process's base (t0 + its
 * clock offset) and lasts `dur`; 0 when that overflows (the record is then counted as refused;
 * shares of a file run side by side, so the count is shared). */
static int place(loader *L, store_idx p, int64_t start /* relative to t0 */, int64_t dur,
                 int64_t *pStart /* OUT */, int64_t *pEnd /* OUT */)
{
    int64_t base;
    if (!__builtin_add_overflow(L->t0, L->run->processes[p].clock_offset, &base) &&
        store_time_add(base, start, pStart) && store_time_add(*pStart, dur, pEnd))
        return 1;
    __atomic_fetch_add(&L->run->processes[p].rows_refused, 1, __ATOMIC_RELAXED);
    return 0;
}

/* STORE_EFORMAT: the share holds more rows than its rowids allow (a damaged file). */
static int too_many(scan_part *s)
{
    store_fmt(s->err, sizeof s->err,
              "%s: truncated or corrupt (more %s than the table's row ids allow)", s->L->path,
              scan_tables[s->kind].rows);
    return STORE_EFORMAT;
}

/* The hot path: kernel rows into s->out, each resolved through its launch row. */
static int scan_kernels(scan_part *s, sqlite3_stmt *st, int *pStep /* OUT: the last step */)
{
    const loader *L = s->L;
    const launch_ref *lr = L->launch;
    const uint64_t nl = L->nlaunch, cap = s->cap;
    store_kernel *out = s->out;
    uint64_t n = 0;
    int rc = STORE_OK;
    while (rc == STORE_OK && (*pStep = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 0);
        int64_t dur = sqlite3_column_int64(st, 1);
        uint64_t lid = (uint64_t)sqlite3_column_int64(st, 2);
        int64_t ks, ke;
        if (lid >= nl || !lr[lid].valid) {
            rc = bad_ref_in(L->path, "kernel", "launch", (int64_t)lid, s->err);
        } else if (dur < 0) {
            rc = neg_dur(L->path, "a kernel", dur, s->err);
        } else if (n == cap) {
            rc = too_many(s);
        } else if (lr[lid].valid != 1 || !store_time_add(lr[lid].base, start, &ks) ||
                   !store_time_add(ks, dur, &ke)) {
            __atomic_fetch_add(&L->run->processes[lr[lid].process].rows_refused, 1,
                               __ATOMIC_RELAXED);
        } else {
            store_kernel *k = &out[n++];
            k->start = ks;
            k->end = ke;
            k->stream = lr[lid].stream;
            k->launch = lr[lid].launch;
            k->correlation_id = (uint32_t)sqlite3_column_int64(st, 3);
            k->flags = 0;
        }
    }
    s->n = n;
    return rc;
}

/* API call rows into s->out. */
static int scan_apis(scan_part *s, sqlite3_stmt *st, int *pStep /* OUT: the last step */)
{
    loader *L = s->L;
    store_api *out = s->out;
    uint64_t n = 0;
    int rc = STORE_OK;
    while (rc == STORE_OK && (*pStep = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 2), dur = sqlite3_column_int64(st, 1);
        store_api a = {0};
        if (!proc_ok(L, pid))
            rc = bad_ref_in(L->path, "api", "process", pid, s->err);
        else if (string_ref(L, st, 6, &a.name))
            rc = bad_ref_in(L->path, "api", "string", sqlite3_column_int64(st, 6), s->err);
        else if (dur < 0)
            rc = neg_dur(L->path, "an API call", dur, s->err);
        else if (n == s->cap)
            rc = too_many(s);
        else if (place(L, L->proc[pid], sqlite3_column_int64(st, 0), dur, &a.start, &a.end)) {
            a.process = L->proc[pid];
            a.thread_id = (uint64_t)sqlite3_column_int64(st, 3);
            a.correlation_id = (uint32_t)sqlite3_column_int64(st, 4);
            a.domain = (uint16_t)sqlite3_column_int64(st, 5);
            a.status = (int32_t)sqlite3_column_int64(st, 7);
            out[n++] = a;
        }
    }
    s->n = n;
    return rc;
}

/* NVTX range rows into s->out. */
static int scan_ranges(scan_part *s, sqlite3_stmt *st, int *pStep /* OUT: the last step */)
{
    loader *L = s->L;
    store_range *out = s->out;
    uint64_t n = 0;
    int rc = STORE_OK;
    while (rc == STORE_OK && (*pStep = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 2), dur = sqlite3_column_int64(st, 1);
        store_range r = {0};
        int bad = string_ref(L, st, 4, &r.domain) ? 4 : string_ref(L, st, 5, &r.name) ? 5 : 0;
        if (!proc_ok(L, pid))
            rc = bad_ref_in(L->path, "range", "process", pid, s->err);
        else if (bad)
            rc = bad_ref_in(L->path, "range", "string", sqlite3_column_int64(st, bad), s->err);
        else if (dur < 0)
            rc = neg_dur(L->path, "a range", dur, s->err);
        else if (n == s->cap)
            rc = too_many(s);
        else if (place(L, L->proc[pid], sqlite3_column_int64(st, 0), dur, &r.start, &r.end)) {
            r.process = L->proc[pid];
            r.thread_id = (uint64_t)sqlite3_column_int64(st, 3);
            out[n++] = r;
        }
    }
    s->n = n;
    return rc;
}

/* Scans a share of the kernel, API or range table into s->out, then puts the rows in order with
 * a bounded insertion sort (files are nearly sorted). Runs on a worker thread in phase 2 (and on
 * the loader's in phase 1, for small API and range tables): it touches only the share, its
 * loader's read-only maps, its own slice of the run's array and (atomically) the refused
 * counts. */
int store_load_scan(scan_part *s)
{
    loader *L = s->L;
    const struct scan_table *t = &scan_tables[s->kind];
    sqlite3 *db = L->db;
    sqlite3_stmt *st = NULL;
    int rc = STORE_OK;
    /* Another connection to the file: the same deadline (L->guard.expired may be written by
     * the thread on the file's own connection, so it is not copied). */
    store_guard own = {L->guard.deadline, L->guard.limit_s, 0};
    store_guard *guard = s->own_db ? &own : &L->guard;
    if (s->own_db) {
        db = NULL;
        rc = store_open_read(L->path, &db, s->err, sizeof s->err);
        if (rc == STORE_OK)
            rc = store_guard_attach(db, &own, L->path, s->err, sizeof s->err);
        if (rc == STORE_OK && sqlite3_exec(db, "BEGIN", 0, 0, NULL) != SQLITE_OK)
            rc = STORE_EIO;
    }
    if (rc == STORE_OK &&
        sqlite3_prepare_v2(db, s->lo == INT64_MIN ? t->all : t->part, -1, &st, NULL) != SQLITE_OK)
        /* API and range tables say it as the reader of phase 1 always did */
        rc = s->kind == STORE_REC_KERNEL
                 ? STORE_EIO
                 : lerr_in(db, L->path, STORE_EFORMAT, "cannot read the tables", s->err);
    if (rc == STORE_OK && s->lo != INT64_MIN) {
        sqlite3_bind_int64(st, 1, s->lo);
        sqlite3_bind_int64(st, 2, s->hi);
    }
    int step = SQLITE_DONE;
    if (rc == STORE_OK)
        rc = s->kind == STORE_REC_KERNEL ? scan_kernels(s, st, &step)
             : s->kind == STORE_REC_API  ? scan_apis(s, st, &step)
                                         : scan_ranges(s, st, &step);
    if (rc == STORE_OK && step != SQLITE_DONE)
        rc = lerr_in(db, L->path, STORE_EIO, t->what, s->err);
    else if (rc == STORE_EIO && !s->err[0])
        store_fmt(s->err, sizeof s->err, "%s: cannot read the %s: %s", L->path, t->items,
                  db ? sqlite3_errmsg(db) : "cannot open");
    rc = guarded_rc(guard, db, L->path, rc, s->err, sizeof s->err);
    sqlite3_finalize(st);
    if (s->own_db && db) {
        sqlite3_exec(db, "COMMIT", 0, 0, NULL);
        sqlite3_close(db);
    }
    if (rc == STORE_OK)
        store_sort_nearly(s->out, s->n, t->size);
    return rc;
}

/* A (context row, stream id) pair as a run stream. */
static int copy_stream(loader *L, int64_t crow, uint32_t sid, store_idx *out)
{
    if (crow < 0 || (uint64_t)crow >= L->nctx || L->ctx[crow] == STORE_NONE)
        return bad_ref(L, "memcpy/memset", "context row", crow);
    *out = store_run_stream(L->run, L->ctx[crow], sid);
    return *out == STORE_NONE ? STORE_ENOMEM : STORE_OK;
}

static int load_copies(loader *L)
{
    static const char *const sql[2] = {
        "SELECT start, dur, context_row, stream_id, correlation_id, copy_kind, bytes FROM memcpy",
        "SELECT start, dur, context_row, stream_id, correlation_id, mem_kind, bytes FROM memset",
    };
    for (int t = 0; t < 2; t++) {
        sqlite3_stmt *st;
        int rc = prep(L, sql[t], &st);
        if (rc)
            return rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t crow = sqlite3_column_int64(st, 2);
            store_copy c = {0};
            if ((rc = copy_stream(L, crow, (uint32_t)sqlite3_column_int64(st, 3), &c.stream)))
                break;
            int64_t dur;
            if ((rc = row_dur(L, st, t == 0 ? "a memcpy" : "a memset", &dur)))
                break;
            if (!place(L, L->run->contexts[L->ctx[crow]].process, sqlite3_column_int64(st, 0), dur,
                       &c.start, &c.end))
                continue;
            c.correlation_id = (uint32_t)sqlite3_column_int64(st, 4);
            c.type = t == 0 ? STORE_COPY_MEMCPY : STORE_COPY_MEMSET;
            c.kind = (uint16_t)sqlite3_column_int64(st, 5);
            c.bytes = (uint64_t)sqlite3_column_int64(st, 6);
            if ((rc = store_run_add_copy(L->run, &c)))
                break;
        }
        if ((rc = done(L, st, rc, t == 0 ? "reading memcpy" : "reading memset")))
            return rc;
    }
    return STORE_OK;
}

/* Phase 1's part of the API or range table: sizes it, and reads it here, through the file's own
 * connection, when it is too small to be worth a connection of its own; a bigger one, or any
 * when the caller set L->rows[which].late, is left to phase 2, which reads it in shares beside
 * the kernels. */
static int load_records(loader *L, store_rec which)
{
    int rc = count_rows(L, which);
    store_rowids *r = &L->rows[which];
    if (rc != STORE_OK || (r->late = r->late || r->cap >= STORE_MIN_SHARE))
        return rc;
    if (store_run_reserve(L->run, which, r->cap, 0))
        return STORE_ENOMEM;
    store_recs a = store_run_recs(L->run, which);
    scan_part s = {.L = L, .kind = which, .lo = INT64_MIN, .cap = r->cap};
    s.out = *a.arr ? (char *)*a.arr + *a.n * a.size : NULL; /* NULL: an empty table, no room */
    if ((rc = store_load_scan(&s)) != STORE_OK) {
        memcpy(L->err, s.err, sizeof L->err);
        return rc;
    }
    *a.n += s.n;
    return STORE_OK;
}

/* Capture ranges (schema 3; a file without them holds its whole run). */
static int load_captures(loader *L)
{
    if (L->schema < 3)
        return STORE_OK;
    sqlite3_stmt *st;
    int rc = prep(L,
                  "SELECT start, dur, process_id, name, start_reason, end_reason FROM capture"
                  " ORDER BY process_id, start, id",
                  &st);
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 2);
        if (!proc_ok(L, pid)) {
            rc = bad_ref(L, "capture", "process", pid);
            break;
        }
        int64_t dur;
        if ((rc = row_dur(L, st, "a capture range", &dur)))
            break;
        store_capture c = {.process = L->proc[pid],
                           .name = col_text(st, 3),
                           .start_reason = col_text(st, 4),
                           .end_reason = col_text(st, 5)};
        if (!place(L, c.process, sqlite3_column_int64(st, 0), dur, &c.start, &c.end))
            continue;
        if ((rc = store_run_add_capture(L->run, &c)))
            break;
    }
    return done(L, st, rc, "reading capture ranges");
}

/* The tables the loader reads: each must be a plain table (meta is checked before the rest, so
 * that a foreign database is named as one). */
static const char *const meta_table[] = {"meta", NULL};
static const char *const tables_read[] = {
    "process", "process_meta", "calibration", "device", "context", "strings", "launch",
    "kernel",  "memcpy",       "memset",      "api",    "range",   "capture", NULL};

/* Phase 1 (serial): checks the file and reads everything but the kernels into the run. */
int store_load_open(loader *L)
{
    int rc = store_file_check(L->path, L->err, sizeof L->err);
    if (rc == STORE_OK) {
        store_guard_start(&L->guard, L->path);
        rc = store_open_read(L->path, &L->db, L->err, sizeof L->err);
    }
    if (rc == STORE_OK)
        rc = store_guard_attach(L->db, &L->guard, L->path, L->err, sizeof L->err);
    if (rc == STORE_OK)
        rc = store_guard_tables(L->db, L->path, meta_table, NULL, L->err, sizeof L->err);
    if (rc == STORE_OK)
        rc = store_schema_check(L->db, L->path, &L->t0, &L->clock, &L->schema, L->err,
                                sizeof L->err);
    /* One read transaction: a file still being written is read as one consistent snapshot. */
    if (rc == STORE_OK && sqlite3_exec(L->db, "BEGIN", 0, 0, NULL) != SQLITE_OK)
        rc = lerr(L, STORE_EIO, "cannot begin reading");
    if (rc == STORE_OK)
        rc = store_guard_tables(L->db, L->path, tables_read, NULL, L->err, sizeof L->err);
    if (rc == STORE_OK)
        rc = load_processes(L);
    if (rc == STORE_OK)
        rc = load_process_meta(L);
    if (rc == STORE_OK)
        rc = load_devices_contexts(L);
    if (L->meta_only) {
        if (rc == STORE_OK)
            rc = load_launch_streams(L);
        if (rc == STORE_OK)
            rc = count_rows(L, STORE_REC_KERNEL);
        return guarded_rc(&L->guard, L->db, L->path, rc, L->err, sizeof L->err);
    }
    if (rc == STORE_OK)
        rc = load_strings(L);
    if (rc == STORE_OK)
        rc = load_launches(L);
    if (rc == STORE_OK)
        rc = load_copies(L);
    if (rc == STORE_OK)
        rc = load_records(L, STORE_REC_API);
    if (rc == STORE_OK)
        rc = load_records(L, STORE_REC_RANGE);
    if (rc == STORE_OK)
        rc = load_captures(L);
    if (rc == STORE_OK)
        rc = count_rows(L, STORE_REC_KERNEL);
    return guarded_rc(&L->guard, L->db, L->path, rc, L->err, sizeof L->err);
}

void store_load_close_db(loader *L)
{
    if (L->db) {
        sqlite3_exec(L->db, "COMMIT", 0, 0, NULL);
        sqlite3_close(L->db);
        L->db = NULL;
    }
}

void store_load_close(loader *L)
{
    store_load_close_db(L);
    free(L->proc);
    free(L->offset);
    free(L->ctx);
    free(L->str);
    free(L->launch);
    free(L->devs);
}
