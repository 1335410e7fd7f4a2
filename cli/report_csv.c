/* report_csv.c: `tlview report --format csv`: one table of the JSON view (view/) as CSV, its
 * columns named and valued exactly as the view's fields, so CSV, JSON and the page agree. */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "view.h"

/* The columns of each table: keys of the view's objects, in order. */
static const char *const processes_cols[] = {
    "pid",       "host",    "file",       "source",  "kernels", "referenced", "contexts",
    "kernel_ns", "busy_ns", "overlap_ns", "stretch", "mps",     NULL};
static const char *const devices_cols[] = {
    "gpu",         "name",           "uuid",           "kernels",
    "processes",   "contexts",       "green_contexts", "mps",
    "busy_ns",     "overlap_ns",     "idle_ns",        "verdict",
    "rule",        "stretch",        "basis",          "contexts_in_flight",
    "parallelism", "predicted_gain", "gain_basis",     NULL};
static const char *const windows_cols[] = {"id",
                                           "gpu",
                                           "t0",
                                           "t1",
                                           "busy_ns",
                                           "overlap_ns",
                                           "verdict",
                                           "physics",
                                           "rule",
                                           "kernels",
                                           "max_processes",
                                           "max_contexts",
                                           "contexts_in_flight",
                                           "groups_in_flight",
                                           "stretch",
                                           "basis",
                                           "parallelism",
                                           "coverage",
                                           "overlap_share",
                                           "mps",
                                           NULL};
static const char *const signatures_cols[] = {
    "demangled",   "grid",         "block",  "smem",           "kernels", "total_ns",
    "shortest_ns", "reference_ns", "source", "solo_instances", "stretch", NULL};

/* Writes a CSV field, quoted when it holds a comma, quote, CR or LF. */
static void csv_str(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* Writes one JSON value as a CSV field: numbers as JSON writes them, strings quoted where
 * needed, booleans 1/0, null empty, arrays of numbers joined by 'x' (grid 8448x1x1). */
static void csv_value(FILE *out, const json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: csv_str(out, json_string_value(v)); break;
    case JSON_INTEGER: fprintf(out, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL:
        snprintf(buf, sizeof buf, "%.6g", json_real_value(v));
        fputs(buf, out);
        break;
    case JSON_TRUE: fputc('1', out); break;
    case JSON_FALSE: fputc('0', out); break;
    case JSON_ARRAY:
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                fputc('x', out);
            csv_value(out, json_array_get(v, i));
        }
        break;
    default: break; /* null, or an object (none in these tables) */
    }
}

/* Writes the header and one row per object of `rows`. */
static void csv_table(FILE *out, const char *const *cols, const json_t *rows)
{
    for (int c = 0; cols[c]; c++)
        fprintf(out, "%s%s", c ? "," : "", cols[c]);
    fputc('\n', out);
    for (size_t r = 0; r < json_array_size(rows); r++) {
        const json_t *o = json_array_get(rows, r);
        for (int c = 0; cols[c]; c++) {
            if (c)
                fputc(',', out);
            const json_t *v = json_object_get(o, cols[c]);
            if (v)
                csv_value(out, v);
        }
        fputc('\n', out);
    }
}

int report_csv(FILE *out, const analysis *a, const char *table)
{
    static const struct {
        const char *name, *key;
        const char *const *cols;
    } tables[] = {{"processes", "processes", processes_cols},
                  {"devices", "devices", devices_cols},
                  {"windows", "windows", windows_cols},
                  {"signatures", "signatures", signatures_cols}};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        if (strcmp(table, tables[t].name))
            continue;
        json_t *j = view_report_json(a, NULL, "");
        if (!j)
            return REPORT_ENOMEM;
        csv_table(out, tables[t].cols, json_object_get(j, tables[t].key));
        json_decref(j);
        return 0;
    }
    return REPORT_ETABLE;
}
