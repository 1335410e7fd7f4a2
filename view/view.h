/* view: the one presentation of an analysis that every output shares. `tlview report` (text,
 * JSON, CSV), `tlview export` and the web API all take their figures, their names and their
 * headline sentences from here, so the same number has the same name and meaning everywhere.
 *
 * JSON: each view_*_json() returns a new jansson reference (NULL only when out of memory); a
 * figure that is not defined (no reference, no basis) is null, never NaN; every string is valid
 * UTF-8 (view_string() repairs what files from others may hold). The field names are documented
 * once, in view/README.md. Floor: above analysis/ and store/, below cli/ and web/. */
#ifndef VIEW_H
#define VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "analysis.h"

/* A JSON string of `s` (NULL -> null): invalid UTF-8 sequences become U+FFFD, so no string of a
 * file is ever dropped. New reference, NULL only when out of memory. */
json_t *view_string(const char *s);

/* Writes s (NULL: "") as a JSON string literal through put(ctx, bytes, n), for writers that
 * stream JSON without jansson: quote, backslash and control characters escaped, every byte that
 * is not UTF-8 written as U+FFFD, so the result is always valid JSON. */
void view_json_quote(const char *s, void (*put)(void *ctx, const char *p, size_t n), void *ctx);

/* A JSON real, or null when v is not finite. */
json_t *view_number(double v);

/* Building jansson objects without checking every call: view_put sets key in o (NULL o allowed)
 * to value, consuming value; view_append appends value to arr the same way; a NULL value (out of
 * memory) or a failed set marks *bad. view_done returns o, or NULL (freeing o) when *bad was
 * marked or o is NULL. */
void view_put(json_t *o, const char *key, json_t *value, int *bad);
void view_append(json_t *arr, json_t *value, int *bad);
json_t *view_done(json_t *o, int bad);

/* A predicted gain interval [lo, hi] at 3 significant digits into buf (size n): "1.16-1.49x", or
 * one figure when both ends print the same: "4.26x", or with `about` set "~4.26x" (the headline's
 * way); "-" when either end is NaN. Returns buf. */
const char *view_gain_text(double lo, double hi, int about, char *buf, size_t n);

/* A stretch with its basis, as every table writes it: "4.28x" measured, "~4.00x" estimated (basis
 * turns or shortest), "-" when there is none (NaN, basis none). Into buf (size n); returns buf. */
const char *view_stretch_text(double v, analysis_basis basis, char *buf, size_t n);

/* "No kernels in 3 processes.": what the report says instead of headlines when no process ran a
 * kernel. Into buf (size n); returns buf. */
const char *view_no_kernels_text(const analysis *a, char *buf, size_t n);

/* The headline of device slot `slot` in three parts, so a terminal can colour the verdict:
 * `head` ("GPU 0 (NVIDIA H200): 4 processes (4 contexts, no MPS) overlapped 100% of busy time; "),
 * `verdict` ("TIME-SLICED", "" when the device had no overlap) and `tail` (" (no MPS): stretch
 * 4.28x; MPS would gain 3.61-4.26x"; an estimated stretch reads "stretch ~4.00x (estimated: 4
 * share groups took turns)" and its gain "... (estimated)"). Strings owned by *out. */
typedef struct view_headline {
    char head[768];
    char verdict[32];
    char tail[768];
} view_headline;
void view_headline_of(const analysis *a, uint32_t slot, view_headline *out /* OUT */);

/* The evidence sentence of device slot `slot`'s verdict: the rule that decided it and its
 * explanation ("rule no-mps: contexts that cannot share the GPU (no MPS) ..."), into buf (size
 * n); "" when the device had no overlap. Returns buf. */
const char *view_evidence(const analysis *a, uint32_t slot, char *buf, size_t n);

/* A device's name for people: its name, "unknown device" when not known. Static or owned by the
 * run. */
const char *view_device_name(const analysis *a, uint32_t slot);

/* What bounds the run's predicted gain (analysis_gain_bound_text, for the first device with a
 * predicted gain): its best case (`worst` 0) or its worst case (1), into buf (size n). Returns
 * buf, or NULL when no device has a predicted gain. The summary's `gain_bounds` and the report's
 * "What bounds the predicted gain". */
const char *view_gain_bound(const analysis *a, int worst, char *buf, size_t n);

/* The name of a copy as Kineto and `tlview export` write it, from its type and CUPTI kind:
 * "Memcpy HtoD", "Memcpy DtoD", "Memset (Device)"; "Memcpy" / "Memset" for a kind not known.
 * Written into buf (size n); returns buf. */
const char *view_copy_name(const store_copy *c, char *buf, size_t n);

/* The objects of the JSON view (field names in view/README.md). */
json_t *view_summary_json(const analysis *a);
json_t *view_device_json(const analysis *a, uint32_t slot);
json_t *view_window_json(const analysis *a, uint64_t w);
json_t *view_process_json(const analysis *a, uint32_t p);
json_t *view_signature_json(const analysis *a, uint32_t s);
/* Capture range i of the run (run->captures[i], i < ncaptures): pid, file, name, start, end
 * (absolute ns), dur_ns, start_reason, end_reason (null: never closed, the process was killed
 * inside it). */
json_t *view_capture_json(const analysis *a, uint32_t i);
/* The device slot (analysis_get_device) context c ran on, UINT32_MAX when none (a context
 * without kernels, or c out of range). */
uint32_t view_context_slot(const analysis *a, store_idx c);
/* run->contexts[c]: its process, GPU slot, MPS state and SM partition (contexts[] in the report;
 * view/README.md). */
json_t *view_context_json(const analysis *a, uint32_t c);
/* The SM partitions of device slot `slot`'s contexts, in English ("2 MPS clients at 50% on 66 of
 * 132 SMs each"), into buf (n bytes); "" when none ran in one. Returns buf. */
const char *view_partitions_text(const analysis *a, uint32_t slot, char *buf, size_t n);
/* The comparison of a (e.g. MPS off) with b (MPS on); NULL when out of memory. */
json_t *view_comparison_json(const analysis *a, const analysis *b);
json_t *view_headline_json(const analysis *a); /* array of the devices' headline strings */
json_t *view_warnings_json(const analysis *a); /* array of strings */
/* The stretch histogram of device slot `slot` (UINT32_MAX: every device): {lo, hi, bins, scale,
 * counts[], no_reference}, log2 bins, 4 per octave over [1/8, 64). */
json_t *view_histogram_json(const analysis *a, uint32_t slot);

/* The whole report: tlview version, headline, summary, warnings, devices, windows, processes,
 * captures, signatures, the stretch histogram and, when cmp is not NULL, the comparison. */
json_t *view_report_json(const analysis *a, const analysis *cmp, const char *version);

#endif
