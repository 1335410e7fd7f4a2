/* report.h: the presenters of `tlview report` (cli/cmd_report.c): terminal tables
 * (report_text.c) and CSV (report_csv.c); JSON is view_report_json() (view/). Private to cli/.
 * They only read the analysis. */
#ifndef REPORT_H
#define REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "analysis.h"
#include "cli.h"

/* Writes the terminal report: headline first, then run (with the range `r` it covers when
 * r->set), devices, windows by verdict, processes, the captured ranges (times from r->origin),
 * the `top` signatures by total time, warnings and the comparison with `cmp` (may be NULL).
 * `color` adds ANSI colours. */
void report_text(FILE *out, const analysis *a, const analysis *cmp, const cli_range *r, int color,
                 int top);

enum { REPORT_ETABLE = -1, REPORT_ENOMEM = -2 };

/* Writes one table of the JSON view as CSV with a header row: "processes", "devices",
 * "windows", "signatures" or "captures" (columns: the view's field names), building one row's
 * object at a time. Returns 0, REPORT_ETABLE for an unknown table name or REPORT_ENOMEM (the rows
 * written so far stay written). */
int report_csv(FILE *out, const analysis *a, const char *table);

/* Writes one JSON value of the view as a CSV field, as report_csv() writes every field: numbers
 * as JSON writes them, strings quoted where needed, booleans 1/0, null empty, arrays of numbers
 * joined by 'x' (grid 8448x1x1). (Also `tlview job --format csv`'s.) */
void report_csv_field(FILE *out, const json_t *v);

/* 0 when `table` names a table of report_csv(), else REPORT_ETABLE: checked with the other
 * options, before the files are loaded. */
int report_csv_table(const char *table);

/* The label of a process: "pid 1234 (file.db)" into buf; returns buf. */
const char *report_process_label(const store_run *run, uint32_t p, char *buf, size_t n);

/* The rank of a process as the text report's rank column writes it (store_process_rank): "3 of
 * 8, local 1" (the world size and the local rank where known: "3", "3 of 8", "3, local 1"), "-"
 * when not known. Into buf (size n); returns buf. */
const char *report_rank_text(const store_process *p, char *buf, size_t n);

#endif
