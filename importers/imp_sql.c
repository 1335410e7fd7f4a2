/* importers/imp_sql.c: SQLite helpers shared by the nvprof and nsys importers. Both tools change
 * their column sets between versions, so queries are built from PRAGMA table_info, and every
 * SQLite failure becomes one message with the reader's row number. The files come from anyone:
 * the connection carries store/'s guard (no views or triggers, bounded values and time) and
 * every table read must be a plain table (store_guard_tables). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_int.h"

/* imp_sql_open() of r->image: an in-memory connection that SQLite's memdb serves from the image,
 * read-only; the image is SQLite's from the call on (freed with the connection, or at once when
 * the connection cannot be made). Its time limit is the one a file of its size would get. */
static int open_image(imp_reader *r, sqlite3 **pdb)
{
    unsigned char *image = r->image;
    sqlite3_int64 n = (sqlite3_int64)r->nimage;
    r->image = NULL;
    double limit = store_read_base_s + store_read_s_per_mib * (double)n / (1 << 20);
    r->guard.deadline += (int64_t)((limit - r->guard.limit_s) * 1e9);
    r->guard.limit_s = limit;
    if (sqlite3_open_v2(":memory:", pdb, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        sqlite3_free(image);
        return imp_fail(r, STORE_ENOMEM, "cannot open an in-memory SQLite database: %s",
                        *pdb ? sqlite3_errmsg(*pdb) : "out of memory");
    }
    if (sqlite3_deserialize(*pdb, "main", image, n, n,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) !=
        SQLITE_OK)
        return imp_fail(r, STORE_ENOMEM, "cannot open the database in memory: %s",
                        sqlite3_errmsg(*pdb));
    return 0;
}

int imp_sql_open(imp_reader *r, sqlite3 **pdb)
{
    char why[1024];
    int rc;
    *pdb = NULL;
    store_guard_start(&r->guard, r->path);
    if (r->image) {
        if ((rc = open_image(r, pdb)))
            return rc;
    } else if (sqlite3_open_v2(r->path, pdb, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
               SQLITE_OK) /* one connection, one thread: no per-call mutex (about 8% of an import)
                           */
        return imp_fail(r, STORE_EFORMAT, "cannot open as SQLite: %s",
                        *pdb ? sqlite3_errmsg(*pdb) : "out of memory");
    if (store_guard_attach(*pdb, &r->guard, NULL, why, sizeof why))
        return imp_fail(r, STORE_EIO, "%s", why);
    return 0;
}

/* Records a failed prepare or step: the guard's reason when it caused the failure (the time
 * limit; a value over STORE_MAX_VALUE, in r->table), else "<what>: <SQLite's message>". */
static int sql_fail(imp_reader *r, sqlite3 *db, const char *what)
{
    char why[1024];
    if (store_guard_explain(&r->guard, db, NULL, r->table, why, sizeof why))
        return imp_fail(r, STORE_EFORMAT, "%s", why);
    if (sqlite3_errcode(db) == SQLITE_NOMEM)
        return imp_fail(r, STORE_ENOMEM, "out of memory reading the database");
    if (r->table)
        return imp_fail(r, STORE_EFORMAT, "%s (reading %s): %s", what, r->table,
                        sqlite3_errmsg(db));
    return imp_fail(r, STORE_EFORMAT, "%s: %s", what, sqlite3_errmsg(db));
}

/* store_guard_tables() on one table: 0 when it is a plain table or absent; else STORE_EFORMAT
 * with why ("'X' is a view, not a table", ...) and *pRefused = 1, or, when the schema cannot be
 * read, STORE_EFORMAT or STORE_ENOMEM with *pRefused = 0. */
static int table_check(sqlite3 *db, const char *table, int *pRefused, char *why, size_t cap)
{
    return store_guard_tables(db, NULL, (const char *const[]){table, NULL}, pRefused, why, cap);
}

/* Records a failure of table_check(): rc and why as it gave them, unless the guard's time limit
 * caused it. */
static int table_fail(imp_reader *r, sqlite3 *db, int rc, const char *why)
{
    char guard[1024];
    if (store_guard_explain(&r->guard, db, NULL, NULL, guard, sizeof guard))
        return imp_fail(r, STORE_EFORMAT, "%s", guard);
    if (rc == STORE_ENOMEM)
        return imp_fail(r, STORE_ENOMEM, "out of memory reading the database");
    return imp_fail(r, rc, "%s", why);
}

int imp_sql_table(imp_reader *r, sqlite3 *db, const char *table)
{
    char why[1024];
    int rc = table_check(db, table, NULL, why, sizeof why);
    return rc ? table_fail(r, db, rc, why) : 0;
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
        char why[1024];
        int refused;
        if (!name || listed(mapped, name) || strlen(name) > 200)
            continue;
        if ((rc = table_check(db, name, &refused, why, sizeof why)) && refused)
            continue; /* a virtual table or one computing columns: not records, not run */
        if (rc) {
            rc = table_fail(r, db, rc, why);
            break;
        }
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
    char why[1024];
    for (; *tables; tables++) {
        if (!imp_sql_has_table(db, *tables) || table_check(db, *tables, NULL, why, sizeof why))
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
