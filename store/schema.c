/* schema.c: the SQL of the tlview file format (store/SCHEMA.md is its description; keep the
 * two in step), the meta rows of a new file, and the checks a reader makes before trusting a
 * file: is it SQLite at all, is it whole, is it a tlview file, can this version read it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);\n"
    "CREATE TABLE process(id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, host TEXT,"
    " exe TEXT, argv TEXT, run_id TEXT, start_wall INTEGER, end_wall INTEGER,"
    " complete INTEGER NOT NULL DEFAULT 0, source TEXT, error TEXT);\n"
    "CREATE TABLE process_meta(process_id INTEGER NOT NULL, key TEXT NOT NULL, value,"
    " PRIMARY KEY(process_id, key));\n"
    "CREATE TABLE calibration(process_id INTEGER NOT NULL, label TEXT NOT NULL,"
    " cupti INTEGER NOT NULL, realtime INTEGER NOT NULL, monotonic INTEGER,"
    " PRIMARY KEY(process_id, label));\n"
    "CREATE TABLE device(process_id INTEGER NOT NULL, device_id INTEGER NOT NULL, uuid TEXT,"
    " name TEXT, sm_count INTEGER, cc_major INTEGER, cc_minor INTEGER, global_memory INTEGER,"
    " PRIMARY KEY(process_id, device_id));\n"
    "CREATE TABLE context(id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL,"
    " device_id INTEGER, context_id INTEGER NOT NULL,"
    " compute_api_kind INTEGER NOT NULL DEFAULT 0, null_stream_id INTEGER,"
    " is_green INTEGER, parent_context_id INTEGER, sm_count INTEGER,"
    " UNIQUE(process_id, context_id));\n"
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL, demangled TEXT);\n"
    "CREATE TABLE launch(id INTEGER PRIMARY KEY, context_row INTEGER NOT NULL,"
    " stream_id INTEGER NOT NULL, name_id INTEGER NOT NULL, grid_x INTEGER, grid_y INTEGER,"
    " grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, registers INTEGER,"
    " static_smem INTEGER, dynamic_smem INTEGER, local_mem INTEGER);\n"
    "CREATE TABLE kernel(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " launch_id INTEGER NOT NULL, correlation_id INTEGER NOT NULL);\n"
    "CREATE TABLE memcpy(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " context_row INTEGER NOT NULL, stream_id INTEGER NOT NULL, correlation_id INTEGER,"
    " copy_kind INTEGER, src_kind INTEGER, dst_kind INTEGER, bytes INTEGER, flags INTEGER);\n"
    "CREATE TABLE memset(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " context_row INTEGER NOT NULL, stream_id INTEGER NOT NULL, correlation_id INTEGER,"
    " value INTEGER, bytes INTEGER, mem_kind INTEGER);\n"
    "CREATE TABLE api(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " process_id INTEGER NOT NULL, thread_id INTEGER, correlation_id INTEGER, domain INTEGER,"
    " cbid INTEGER, name_id INTEGER, status INTEGER);\n"
    "CREATE TABLE \"range\"(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " process_id INTEGER NOT NULL, thread_id INTEGER, domain_id INTEGER, name_id INTEGER);\n"
    "CREATE TABLE capture(id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL,"
    " start INTEGER NOT NULL, dur INTEGER NOT NULL, name TEXT, start_reason TEXT,"
    " end_reason TEXT);\n"
    "CREATE VIEW kernel_v AS SELECT"
    " (SELECT value FROM meta WHERE key = 't0') + k.start AS start,"
    " (SELECT value FROM meta WHERE key = 't0') + k.start + k.dur AS \"end\","
    " k.dur AS dur, p.pid AS pid, c.device_id AS device_id, c.context_id AS context_id,"
    " l.stream_id AS stream_id, k.correlation_id AS correlation_id,"
    " l.grid_x AS grid_x, l.grid_y AS grid_y, l.grid_z AS grid_z,"
    " l.block_x AS block_x, l.block_y AS block_y, l.block_z AS block_z,"
    " l.registers AS registers, l.static_smem AS static_smem,"
    " l.dynamic_smem AS dynamic_smem, l.local_mem AS local_mem,"
    " s.text AS mangled, coalesce(s.demangled, s.text) AS name"
    " FROM kernel k JOIN launch l ON l.id = k.launch_id JOIN context c ON c.id = l.context_row"
    " JOIN process p ON p.id = c.process_id JOIN strings s ON s.id = l.name_id;\n";

int store_schema_create(sqlite3 *db, store_clock clock, int64_t t0, char *err, size_t errlen)
{
    char sql[512];
    char *msg = NULL;
    int rc = sqlite3_exec(db, "BEGIN", 0, 0, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, schema_sql, 0, 0, &msg);
    if (rc == SQLITE_OK) {
        store_fmt(sql, sizeof sql,
                  "INSERT INTO meta(key, value) VALUES ('format', 'tlview'),"
                  " ('schema_version', %d), ('min_reader_version', %d), ('t0', %lld),"
                  " ('clock', '%s'), ('writer', 'tlview store %d')",
                  STORE_SCHEMA_VERSION, STORE_MIN_READER_VERSION, (long long)t0,
                  clock == STORE_CLOCK_REALTIME ? "realtime" : "cupti", STORE_SCHEMA_VERSION);
        rc = sqlite3_exec(db, sql, 0, 0, &msg);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", 0, 0, &msg);
    if (rc != SQLITE_OK) {
        store_fmt(err, errlen, "cannot create the tables: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        sqlite3_exec(db, "ROLLBACK", 0, 0, NULL);
        return STORE_EIO;
    }
    return STORE_OK;
}

/* SQLite's result code for "this is not a (whole) database". */
static int is_format_error(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT || rc == SQLITE_FORMAT;
}

int store_schema_check(sqlite3 *db, const char *path, int64_t *pT0, store_clock *pClock,
                       int64_t *pSchema, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        int code = sqlite3_extended_errcode(db);
        if (is_format_error(code))
            store_fmt(err, errlen, "%s: truncated or corrupt (%s)", path, sqlite3_errmsg(db));
        else if (strstr(sqlite3_errmsg(db), "no such table"))
            store_fmt(err, errlen, "%s: an SQLite database but not a tlview file (no meta table)",
                      path);
        else
            store_fmt(err, errlen, "%s: cannot read: %s", path, sqlite3_errmsg(db));
        return code == SQLITE_IOERR || code == SQLITE_CANTOPEN ? STORE_EIO : STORE_EFORMAT;
    }
    char format[64] = "";
    int64_t schema = -1, min_reader = -1, t0 = 0;
    int have_t0 = 0;
    char clock[32] = "";
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (!k)
            continue;
        if (!strcmp(k, "format") && v)
            store_fmt(format, sizeof format, "%s", v);
        else if (!strcmp(k, "schema_version"))
            schema = sqlite3_column_int64(st, 1);
        else if (!strcmp(k, "min_reader_version"))
            min_reader = sqlite3_column_int64(st, 1);
        else if (!strcmp(k, "t0")) {
            t0 = sqlite3_column_int64(st, 1);
            have_t0 = 1;
        } else if (!strcmp(k, "clock") && v)
            store_fmt(clock, sizeof clock, "%s", v);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        store_fmt(err, errlen, "%s: truncated or corrupt (%s)", path, sqlite3_errmsg(db));
        return STORE_EFORMAT;
    }
    if (strcmp(format, "tlview") != 0) {
        store_fmt(err, errlen, "%s: an SQLite database but not a tlview file (meta.format is '%s')",
                  path, format);
        return STORE_EFORMAT;
    }
    if (min_reader > STORE_READER_VERSION) {
        store_fmt(err, errlen,
                  "%s: written by a newer tlview (schema %lld, needs reader %lld); this tlview "
                  "reads up to %d",
                  path, (long long)schema, (long long)min_reader, STORE_READER_VERSION);
        return STORE_ENEWER;
    }
    if (schema < 1 || min_reader < 1 || !have_t0) {
        store_fmt(err, errlen,
                  "%s: a tlview file with a broken meta table (schema_version, "
                  "min_reader_version or t0 missing)",
                  path);
        return STORE_EFORMAT;
    }
    if (!strcmp(clock, "cupti"))
        *pClock = STORE_CLOCK_CUPTI;
    else if (!strcmp(clock, "realtime"))
        *pClock = STORE_CLOCK_REALTIME;
    else {
        store_fmt(err, errlen, "%s: unknown meta.clock '%s'", path, clock);
        return STORE_EFORMAT;
    }
    *pT0 = t0;
    *pSchema = schema;
    return STORE_OK;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

int store_file_check(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    int fd = store_fs_open_read(path, err, errlen); /* a regular file, never blocking */
    if (fd < 0) /* a folder or a FIFO is no tlview file; a file that cannot be opened, an error */
        return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) ? STORE_EFORMAT : STORE_EIO;
    unsigned char hdr[100];
    ssize_t got = 0;
    int rc = STORE_OK;
    if (fstat(fd, &sb) != 0) {
        store_fmt(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        rc = STORE_EIO;
    } else if (sb.st_size == 0) {
        store_fmt(err, errlen, "%s: empty file, not a tlview file", path);
        rc = STORE_EFORMAT;
    } else if ((got = pread(fd, hdr, sizeof hdr, 0)) < 0) {
        store_fmt(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rc = STORE_EIO;
    } else if (got < 16 || memcmp(hdr, "SQLite format 3", 16) != 0) {
        store_fmt(err, errlen, "%s: not an SQLite file", path);
        rc = STORE_EFORMAT;
    } else if (got < (ssize_t)sizeof hdr) {
        store_fmt(err, errlen,
                  "%s: truncated or corrupt (%lld bytes, shorter than an SQLite "
                  "header)",
                  path, (long long)sb.st_size);
        rc = STORE_EFORMAT;
    } else {
        /* The header's page count is valid when the change counter matches
         * version-valid-for (SQLite file format, section 1.3.7). A file shorter than it says
         * was cut. Not so a file in WAL mode (read version 2) with its WAL beside it: its pages
         * are in the WAL too, and while a live writer checkpoints, the new header reaches the
         * file before the pages after it do (2026-12-01: "94208 bytes, the header says 438272"
         * for a file being written); SQLite finds a real cut when it reads. */
        uint32_t page_size = (uint32_t)hdr[16] << 8 | hdr[17];
        if (page_size == 1)
            page_size = 65536;
        uint64_t pages = be32(hdr + 28);
        char wal[4096];
        struct stat wsb;
        int with_wal = hdr[18] == 2 &&
                       (size_t)snprintf(wal, sizeof wal, "%s-wal", path) < sizeof wal &&
                       stat(wal, &wsb) == 0;
        if (!with_wal && be32(hdr + 24) == be32(hdr + 92) && page_size >= 512 &&
            (uint64_t)sb.st_size < pages * page_size) {
            store_fmt(err, errlen, "%s: truncated or corrupt (%lld bytes, the header says %llu)",
                      path, (long long)sb.st_size, (unsigned long long)(pages * page_size));
            rc = STORE_EFORMAT;
        }
    }
    close(fd);
    return rc;
}

static int read_only; /* store_set_read_only() */

void store_set_read_only(int on)
{
    read_only = on != 0;
}

int store_open_read(const char *path, sqlite3 **pDb, char *err, size_t errlen)
{
    /* Read-write (never create) first: a writer killed inside a batch leaves a hot journal or a
     * WAL that only a writable connection can recover. Read-only when that is refused, or when
     * asked (files still being written: a read-only connection never checkpoints or removes the
     * writer's WAL). */
    sqlite3 *db = NULL;
    int rc = read_only
                 ? SQLITE_CANTOPEN
                 : sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_close(db);
        db = NULL;
        rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    }
    if (rc != SQLITE_OK) {
        store_fmt(err, errlen, "%s: cannot open: %s", path,
                  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return STORE_EIO;
    }
    sqlite3_busy_timeout(db, 2000);
    /* No mmap: mapped file pages would count as the reader's memory (a 10M-kernel file is
     * 240 MB); the kernel scan reads each page once, so a small cache is enough. */
    sqlite3_exec(db, "PRAGMA cache_size=-8192", 0, 0, NULL);
    *pDb = db;
    return STORE_OK;
}
