/* guard.c: the guard every reader puts on a SQLite file from others (the loader's connections,
 * and the nvprof and nsys importers'): SQLite's defences for untrusted databases, a time limit
 * per file, plain tables only, and the message that says when the guard stopped a read. Reader
 * side only: built into tlview_store, never into the collector's writer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store_int.h"

double store_read_base_s = 10.0;   /* enough for any schema and metadata on a loaded machine */
double store_read_s_per_mib = 1.0; /* 1 MiB/s: 100x slower than a real read, NFS included */

/* printf into err, after "PATH: " when path is not NULL. */
static void say(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    size_t n = 0;
    if (path) {
        store_fmt(err, errlen, "%s: ", path);
        n = strlen(err);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - n, fmt, ap);
    va_end(ap);
}

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
        say(err, errlen, path, "cannot turn on SQLite's defences for untrusted files: %s",
            sqlite3_errstr(rc));
        return STORE_EIO;
    }
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, STORE_MAX_VALUE);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_progress_handler(db, GUARD_TICK_OPS, guard_tick, g);
    return STORE_OK;
}

/* The message of a schema that cannot be read: damage, memory, or an SQLite without
 * table_list. */
static int schema_error(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    int ec = sqlite3_extended_errcode(db) & 0xff;
    if (ec == SQLITE_NOMEM) {
        say(err, errlen, path, "out of memory reading the schema");
        return STORE_ENOMEM;
    }
    if (ec == SQLITE_CORRUPT || ec == SQLITE_NOTADB || ec == SQLITE_FORMAT)
        say(err, errlen, path, "truncated or corrupt (%s)", sqlite3_errmsg(db));
    else
        say(err, errlen, path, "cannot read the schema: %s", sqlite3_errmsg(db));
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
            say(err, errlen, path, "'%s' is a %s%s, not a table", *names, type,
                strcmp(type, "view") == 0 ? "" : " table");
            rc = STORE_EFORMAT;
            refused = 1;
        } else {
            sqlite3_reset(gen);
            sqlite3_bind_text(gen, 1, *names, -1, SQLITE_STATIC);
            if ((step = sqlite3_step(gen)) == SQLITE_ROW) {
                say(err, errlen, path,
                    "table '%s' has a generated column '%s' (a hostile or damaged file?)", *names,
                    (const char *)sqlite3_column_text(gen, 0));
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

int store_guard_explain(const store_guard *g, sqlite3 *db, const char *path, const char *table,
                        char *err, size_t errlen)
{
    char secs[32];
    if (g->limit_s < 1) /* only a test sets a limit this low */
        store_fmt(secs, sizeof secs, "%.3g", g->limit_s);
    else
        store_fmt(secs, sizeof secs, "%.0f", g->limit_s);
    if (g->expired)
        say(err, errlen, path, "reading took over %s s (a hostile or damaged file?)", secs);
    else if (db && sqlite3_errcode(db) == SQLITE_TOOBIG)
        say(err, errlen, path, "a value over %d MiB%s%s (a hostile or damaged file?)",
            STORE_MAX_VALUE >> 20, table ? " in table " : "", table ? table : "");
    else
        return 0;
    return 1;
}
