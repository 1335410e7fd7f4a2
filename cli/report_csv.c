/* report_csv.c: `tlview report --format csv`: one table of the JSON view (view/) as CSV, its
 * columns named and valued exactly as the view's fields, so CSV, JSON and the page agree. */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "view.h"

/* The columns of each table: keys of the view's objects, in order. */
static const char *const processes_cols[] = {
    "pid",      "host",       "file",       "source",     "kernels", "referenced",
    "contexts", "kernel_ns",  "busy_ns",    "overlap_ns", "stretch", "mps",
    "rank",     "local_rank", "world_size", "launcher",   NULL};
static const char *const devices_cols[] = {"gpu",
                                           "name",
                                           "uuid",
                                           "kernels",
                                           "processes",
                                           "contexts",
                                           "green_contexts",
                                           "mps",
                                           "busy_ns",
                                           "overlap_ns",
                                           "idle_ns",
                                           "idle_in_ns",
                                           "waiting_ns",
                                           "verdict",
                                           "rule",
                                           "stretch",
                                           "basis",
                                           "contexts_in_flight",
                                           "parallelism",
                                           "predicted_gain",
                                           "gain_basis",
                                           NULL};
static const char *const windows_cols[] = {"id",
                                           "gpu",
                                           "t0",
                                           "t1",
                                           "busy_ns",
                                           "overlap_ns",
                                           "waiting_ns",
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
                                           "turns",
                                           "quick_turns",
                                           "switch_turns",
                                           "signature",
                                           NULL};
static const char *const contexts_cols[] = {
    "pid",      "process",  "context",           "gpu", "mps", "green", "parent",
    "sm_count", "sm_share", "thread_percentage", NULL};
static const char *const captures_cols[] = {"pid",    "file",         "name",       "start", "end",
                                            "dur_ns", "start_reason", "end_reason", NULL};
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

void report_csv_field(FILE *out, const json_t *v)
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
            report_csv_field(out, json_array_get(v, i));
        }
        break;
    default: break; /* null, or an object (none in these tables) */
    }
}

/* Row counts and row objects of the tables, with one signature. */
static uint64_t n_processes(const analysis *a)
{
    return analysis_nprocesses(a);
}
static uint64_t n_devices(const analysis *a)
{
    return analysis_ndevices(a);
}
static uint64_t n_signatures(const analysis *a)
{
    return analysis_nsignatures(a);
}
static uint64_t n_captures(const analysis *a)
{
    return analysis_get_run(a)->ncaptures;
}
static json_t *capture_at(const analysis *a, uint64_t i)
{
    return view_capture_json(a, (uint32_t)i);
}
static json_t *process_at(const analysis *a, uint64_t i)
{
    return view_process_json(a, (uint32_t)i);
}
static json_t *device_at(const analysis *a, uint64_t i)
{
    return view_device_json(a, (uint32_t)i);
}
static json_t *signature_at(const analysis *a, uint64_t i)
{
    return view_signature_json(a, (uint32_t)i);
}
static uint64_t n_contexts(const analysis *a)
{
    return analysis_get_run(a)->ncontexts;
}
static json_t *context_at(const analysis *a, uint64_t i)
{
    return view_context_json(a, (uint32_t)i);
}

/* The tables: a name, its columns, its rows (the view's objects of one array). */
static const struct csv_table {
    const char *name;
    const char *const *cols;
    uint64_t (*count)(const analysis *a);
    json_t *(*row)(const analysis *a, uint64_t i); /* new reference, NULL out of memory */
} tables[] = {
    {"processes", processes_cols, n_processes, process_at},
    {"devices", devices_cols, n_devices, device_at},
    {"windows", windows_cols, analysis_nwindows, view_window_json},
    {"signatures", signatures_cols, n_signatures, signature_at},
    {"captures", captures_cols, n_captures, capture_at},
    {"contexts", contexts_cols, n_contexts, context_at},
};

static const struct csv_table *find_table(const char *name)
{
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
        if (!strcmp(name, tables[t].name))
            return &tables[t];
    return NULL;
}

int report_csv_table(const char *table)
{
    return find_table(table) ? 0 : REPORT_ETABLE;
}

int report_csv(FILE *out, const analysis *a, const char *table)
{
    const struct csv_table *t = find_table(table);
    if (!t)
        return REPORT_ETABLE;
    for (int c = 0; t->cols[c]; c++)
        fprintf(out, "%s%s", c ? "," : "", t->cols[c]);
    fputc('\n', out);
    /* one row object at a time: a table of millions of windows needs no tree of them all */
    for (uint64_t r = 0, n = t->count(a); r < n; r++) {
        json_t *o = t->row(a, r);
        if (!o)
            return REPORT_ENOMEM;
        for (int c = 0; t->cols[c]; c++) {
            if (c)
                fputc(',', out);
            const json_t *v = json_object_get(o, t->cols[c]);
            if (v)
                report_csv_field(out, v);
        }
        fputc('\n', out);
        json_decref(o);
    }
    return 0;
}
