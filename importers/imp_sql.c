/* importers/imp_sql.c: SQLite helpers shared by the nvprof and nsys importers. Both tools change
 * their column sets between versions, so queries are built from PRAGMA table_info, and every
 * SQLite failure becomes one message with the reader's row number. The files come from anyone:
 * the connection is guarded (no views or triggers, bounded values and time) and every table read
 * must be a plain table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "imp_int.h"

double imp_sql_base_s = 10.0;   /* enough for any schema and metadata on a loaded machine */
double imp_sql_s_per_mib = 1.0; /* 1 MiB/s: far below a real import's pace */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* SQLite's progress handler: interrupts the query once the file's time is up. */
static int sql_tick(void *arg)
{
    imp_reader *r = arg;
    if (now_ns() < r->sql_deadline)
        return 0;
    r->sql_expired = 1;
    return 1;
}

int imp_sql_open(imp_reader *r, sqlite3 **pdb)
{
    static const int off[] = {SQLITE_DBCONFIG_ENABLE_VIEW, SQLITE_DBCONFIG_ENABLE_TRIGGER,
                              SQLITE_DBCONFIG_TRUSTED_SCHEMA};
    struct stat sb;
    *pdb = NULL;
    r->sql_limit_s =
        imp_sql_base_s +
        imp_sql_s_per_mib * (stat(r->path, &sb) == 0 ? (double)sb.st_size / (1024 * 1024) : 0);
    r->sql_deadline = now_ns() + (int64_t)(r->sql_limit_s * 1e9);
    r->sql_expired = 0;
    /* one connection, one thread: no per-call mutex (about 8% of an import) */
    if (sqlite3_open_v2(r->path, pdb, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return imp_fail(r, STORE_EFORMAT, "cannot open as SQLite: %s",
                        *pdb ? sqlite3_errmsg(*pdb) : "out of memory");
    int rc = sqlite3_db_config(*pdb, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    for (size_t i = 0; i < sizeof off / sizeof off[0] && rc == SQLITE_OK; i++)
        rc = sqlite3_db_config(*pdb, off[i], 0, (int *)NULL);
    if (rc != SQLITE_OK)
        return imp_fail(r, STORE_EIO, "cannot turn on SQLite's defences for untrusted files: %s",
                        sqlite3_errstr(rc));
    sqlite3_limit(*pdb, SQLITE_LIMIT_LENGTH, IMP_SQL_MAX_VALUE);
    sqlite3_limit(*pdb, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_limit(*pdb, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_progress_handler(*pdb, 10000, sql_tick, r); /* the clock every ~10k VM steps */
    return 0;
}

/* Records a failed prepare or step: the time limit or the value limit when they caused it,
 * else "<what>: <SQLite's message>". */
static int sql_fail(imp_reader *r, sqlite3 *db, const char *what)
{
    char secs[32];
    if (r->sql_limit_s < 1) /* only a test sets a limit this low */
        snprintf(secs, sizeof secs, "%.3g", r->sql_limit_s);
    else
        snprintf(secs, sizeof secs, "%.0f", r->sql_limit_s);
    if (r->sql_expired)
        return imp_fail(r, STORE_EFORMAT, "reading took over %s s (a hostile or damaged file?)",
                        secs);
    if (sqlite3_errcode(db) == SQLITE_TOOBIG)
        return imp_fail(r, STORE_EFORMAT, "a value over %d MiB%s%s (a hostile or damaged file?)",
                        IMP_SQL_MAX_VALUE >> 20, r->table ? " in table " : "",
                        r->table ? r->table : "");
    if (sqlite3_errcode(db) == SQLITE_NOMEM)
        return imp_fail(r, STORE_ENOMEM, "out of memory reading the database");
    if (r->table)
        return imp_fail(r, STORE_EFORMAT, "%s (reading %s): %s", what, r->table,
                        sqlite3_errmsg(db));
    return imp_fail(r, STORE_EFORMAT, "%s: %s", what, sqlite3_errmsg(db));
}

/* What is wrong with reading `table` (written to why), or "" when it is a plain table or
 * absent. -1 when the schema cannot be read. table_list and table_xinfo read SQLite's parsed
 * schema: the sql text in sqlite_schema can be written to look like anything. */
static int table_problem(sqlite3 *db, const char *table, char *why, size_t cap)
{
    sqlite3_stmt *st = NULL;
    why[0] = 0;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT type FROM pragma_table_list WHERE schema = 'main' AND"
                                " name = ?1 COLLATE NOCASE",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *type = (const char *)sqlite3_column_text(st, 0);
            if (type && strcmp(type, "table") != 0)
                snprintf(why, cap, "'%s' is a %s%s, not a table", table, type,
                         strcmp(type, "view") == 0 ? "" : " table");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return -1;
    if (why[0] || rc == SQLITE_DONE)
        return 0;
    rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1) WHERE hidden IN (2, 3)",
                            -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        if ((rc = sqlite3_step(st)) == SQLITE_ROW)
            snprintf(why, cap,
                     "table '%s' has a generated column '%s' (a hostile or damaged file?)", table,
                     (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int imp_sql_table(imp_reader *r, sqlite3 *db, const char *table)
{
    char why[400];
    if (table_problem(db, table, why, sizeof why) < 0) {
        const char *saved = r->table;
        r->table = NULL;
        int rc = sql_fail(r, db, "cannot read the schema");
        r->table = saved;
        return rc;
    }
    return why[0] ? imp_fail(r, STORE_EFORMAT, "%s", why) : 0;
}

void imp_refuse(imp_reader *r, store_idx process)
{
    r->run->processes[process].rows_refused++;
    imp_unmapped(r, "time_overflow", 1);
}

int imp_keep_refused(imp_reader *r, store_idx process)
{
    char v[24];
    uint64_t n = r->run->processes[process].rows_refused;
    if (!n)
        return 0;
    snprintf(v, sizeof v, "%llu", (unsigned long long)n);
    if (store_run_process_meta(r->run, process, "rows_refused", v))
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    return 0;
}

int imp_sql_has_table(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(
            db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", -1, &st,
            NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

int imp_sql_has_cupti_tables(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int yes = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name LIKE "
                           "'CUPTI\\_ACTIVITY\\_KIND\\_%' ESCAPE '\\' LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK)
        yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

int imp_sql_prepare(imp_reader *r, sqlite3 *db, const char *sql, sqlite3_stmt **ppStmt)
{
    *ppStmt = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, ppStmt, NULL) != SQLITE_OK) {
        sqlite3_finalize(*ppStmt);
        *ppStmt = NULL;
        const char *saved = r->table; /* "SQLite error: <message>", as always */
        r->table = NULL;
        int rc = sql_fail(r, db, "SQLite error");
        r->table = saved;
        return rc;
    }
    return 0;
}

int imp_sql_step(imp_reader *r, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return rc;
    return sql_fail(r, sqlite3_db_handle(st), "corrupt or truncated database");
}

int imp_sql_next(imp_reader *r, sqlite3_stmt *st)
{
    int rc = imp_sql_step(r, st);
    if (rc == SQLITE_ROW) {
        r->row++;
        imp_progress(r, ++r->rows_done, r->rows_total);
    }
    return rc;
}

int imp_sql_end(imp_reader *r, sqlite3_stmt *st, int rc)
{
    sqlite3_finalize(st);
    r->row = 0;
    return rc == SQLITE_DONE ? 0 : rc;
}

void imp_sql_cols_free(imp_cols *cols)
{
    for (int i = 0; i < cols->n; i++)
        free(cols->names[i]);
    free(cols->names);
    cols->names = NULL;
    cols->n = 0;
}

int imp_sql_cols(imp_reader *r, sqlite3 *db, const char *table, imp_cols *cols)
{
    char sql[256];
    sqlite3_stmt *st;
    memset(cols, 0, sizeof *cols);
    int rc = imp_sql_table(r, db, table);
    if (rc)
        return rc;
    snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
    rc = imp_sql_prepare(r, db, sql, &st);
    if (rc)
        return rc;
    size_t cap = 0;
    while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (!name)
            continue;
        if ((rc = imp_grow(r, (void **)&cols->names, (size_t)cols->n, &cap, sizeof *cols->names)))
            break;
        if (!(cols->names[cols->n] = strdup(name))) {
            rc = imp_fail(r, STORE_ENOMEM, "out of memory");
            break;
        }
        cols->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        imp_sql_cols_free(cols);
        return rc;
    }
    return 0;
}

int imp_sql_col_has(const imp_cols *cols, const char *name)
{
    for (int i = 0; i < cols->n; i++)
        if (strcmp(cols->names[i], name) == 0)
            return 1;
    return 0;
}

static int listed(const char *const *list, const char *name);

int imp_sql_select(imp_reader *r, sqlite3 *db, const char *table, const char *const *cols,
                   const char *const *required, const char *tail, sqlite3_stmt **ppStmt)
{
    imp_cols have;
    *ppStmt = NULL;
    r->row = 0;
    int rc = imp_sql_cols(r, db, table, &have);
    if (rc)
        return rc;
    for (; required && *required; required++)
        if (!imp_sql_col_has(&have, *required)) {
            imp_sql_cols_free(&have);
            return imp_fail(r, STORE_EFORMAT, "table %s has no column %s", table, *required);
        }
    char sql[2048] = "SELECT ";
    size_t len = strlen(sql);
    for (int i = 0; cols[i]; i++) {
        int n = imp_sql_col_has(&have, cols[i])
                    ? snprintf(sql + len, sizeof sql - len, "%s\"%s\"", i ? ", " : "", cols[i])
                    : snprintf(sql + len, sizeof sql - len, "%sNULL", i ? ", " : "");
        if (n < 0 || (size_t)n >= sizeof sql - len) {
            imp_sql_cols_free(&have);
            return imp_fail(r, STORE_EINVAL, "query on %s too long", table);
        }
        len += (size_t)n;
    }
    imp_sql_cols_free(&have);
    r->table = table; /* static strings of the importers */
    int n = snprintf(sql + len, sizeof sql - len, " FROM \"%s\" %s", table, tail ? tail : "");
    if (n < 0 || (size_t)n >= sizeof sql - len)
        return imp_fail(r, STORE_EINVAL, "query on %s too long", table);
    return imp_sql_prepare(r, db, sql, ppStmt);
}

static int listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

int imp_sql_count_unmapped(imp_reader *r, sqlite3 *db, const char *const *mapped)
{
    sqlite3_stmt *tables;
    r->table = NULL;
    int rc =
        imp_sql_prepare(r, db,
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                        "'sqlite_%' ORDER BY name",
                        &tables);
    if (rc)
        return rc;
    while ((rc = imp_sql_step(r, tables)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        char why[400];
        if (!name || listed(mapped, name) || strlen(name) > 200)
            continue;
        if ((rc = table_problem(db, name, why, sizeof why)) < 0) {
            rc = sql_fail(r, db, "cannot read the schema");
            break;
        }
        if (why[0])
            continue; /* a virtual table or one computing columns: not records, not run */
        imp_cols cols;
        if ((rc = imp_sql_cols(r, db, name, &cols)))
            break;
        int timed = imp_sql_col_has(&cols, "start") || imp_sql_col_has(&cols, "timestamp");
        imp_sql_cols_free(&cols);
        if (!timed)
            continue; /* enums, strings, metadata, statistics: not records */
        char sql[300];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", name);
        if ((rc = imp_sql_prepare(r, db, sql, &st)))
            break;
        rc = imp_sql_step(r, st);
        sqlite3_int64 n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
            break;
        const char *shortname = strncmp(name, "CUPTI_ACTIVITY_KIND_", 20) == 0 ? name + 20 : name;
        char kind[64];
        snprintf(kind, sizeof kind, "table.%s", shortname);
        if (n > 0)
            imp_unmapped(r, kind, (uint64_t)n);
    }
    sqlite3_finalize(tables);
    return rc == SQLITE_DONE ? 0 : rc;
}

static int cmp_str(const void *a, const void *b)
{
    int64_t x = ((const imp_str *)a)->id, y = ((const imp_str *)b)->id;
    return x < y ? -1 : x > y;
}

int imp_strs_load(imp_reader *r, sqlite3_stmt *st, imp_strs *t, int count_rows)
{
    int rc, sorted = 1;
    while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
        if (count_rows)
            r->row++;
        const char *text = (const char *)sqlite3_column_text(st, 1);
        if (!text || sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue;
        if ((rc = imp_grow(r, (void **)&t->v, t->n, &t->cap, sizeof *t->v)))
            break;
        imp_str *s = &t->v[t->n];
        s->id = sqlite3_column_int64(st, 0);
        s->idx = STORE_NONE;
        if (!(s->text = strdup(text))) {
            rc = imp_fail(r, STORE_ENOMEM, "out of memory");
            break;
        }
        sorted &= t->n == 0 || s[-1].id <= s->id;
        t->n++;
    }
    sqlite3_finalize(st);
    if (count_rows)
        r->row = 0;
    if (rc != SQLITE_DONE)
        return rc;
    if (!sorted)
        qsort(t->v, t->n, sizeof *t->v, cmp_str);
    return 0;
}

imp_str *imp_strs_find(const imp_strs *t, int64_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

store_idx imp_str_intern(imp_reader *r, imp_str *s)
{
    if (s->idx == STORE_NONE)
        s->idx = imp_intern(r, s->text);
    return s->idx;
}

void imp_strs_free(imp_strs *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

uint64_t imp_sql_total_rows(sqlite3 *db, const char *const *tables)
{
    uint64_t total = 0;
    char why[400];
    for (; *tables; tables++) {
        if (!imp_sql_has_table(db, *tables) || table_problem(db, *tables, why, sizeof why) ||
            why[0])
            continue;
        char sql[200];
        sqlite3_stmt *st = NULL;
        snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", *tables);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            total += (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return total;
}
