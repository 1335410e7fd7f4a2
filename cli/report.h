/* report.h: the presenters of `tlview report` (cli/cmd_report.c): terminal tables
 * (report_text.c), JSON and CSV (report_json.c). Private to cli/. They only read the analysis. */
#ifndef REPORT_H
#define REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "analysis.h"

/* Writes the terminal report: headline first, then run, devices, windows by verdict,
 * processes, the `top` signatures by total time, warnings and the comparison with `cmp` (may
 * be NULL). `color` adds ANSI colours. */
void report_text(FILE *out, const analysis *a, const analysis *cmp, int color, int top);

/* The whole report as a JSON object (new reference; NULL when out of memory). Numbers that are
 * not defined (NaN stretch without reference) are null. */
json_t *report_json(const analysis *a, const analysis *cmp);

/* Writes one table as CSV with a header row: "processes", "devices", "windows" or "signatures".
 * Returns 0, or -1 for an unknown table name. */
int report_csv(FILE *out, const analysis *a, const char *table);

/* The label of a process: "pid 1234 (file.db)" into buf; returns buf. */
const char *report_process_label(const store_run *run, uint32_t p, char *buf, size_t n);

#endif
