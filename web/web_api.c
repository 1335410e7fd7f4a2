/* web_api.c: the JSON API's dispatcher, the one parser of query parameters (web_params_parse and
 * the typed getters below), and the small endpoints: runs and stats (prebuilt per generation;
 * stats answer 503 until built), generation (what tlview serve --follow's page polls), kernel (one
 * kernel's details and evidence), window, find (kernels by name) and range (web_range.c). Every
 * parameter is checked strictly: an unknown or repeated parameter, a malformed escape, text that is
 * not UTF-8, an integer that is not plain decimal or out of range is a 400 with
 * {"error": "..."} naming it. web/API.md documents each endpoint. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "web_int.h"

#define WIDTH_MAX 8192
#define KMAX_MAX 100000
#define FIND_LIMIT_MAX 10000
#define QUERY_MAX 256
#define SEARCH_QUERY_MAX 4096 /* /api/search: a whole demangled name (exact=1) may be long */
#define SEARCH_NAMES_MAX 100000
#define RANGE_SCAN_MAX 1000000 /* kernels of a range read one by one (/api/range), at most */
#define TIME_ABS_MAX 4000000000000000000LL /* |t| bound that keeps origin + t inside int64 */
#define SWITCH_LIST 10000 /* context switches of a window listed by /api/window, at most */

/* text_ok: 1 when s (n bytes, NUL-terminated after them) is valid UTF-8 (store_utf8_decode(), the
 * one check) without NUL or other control characters. */
static int text_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x20 || u[i] == 0x7f)
            return 0;
        uint32_t cp;
        size_t k = store_utf8_decode(s + i, &cp);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

void web_reply_error(web_reply *out, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* messages quote what the client sent, cut to a few bytes: view_string() turns a cut
     * sequence into U+FFFD, as every string of the view */
    json_t *o = json_pack("{s:o}", "error", view_string(msg));
    memset(out, 0, sizeof *out);
    out->status = status;
    out->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    out->len = out->body ? strlen(out->body) : 0;
    json_decref(o);
}

static void reply_json(web_reply *out, json_t *o)
{
    out->status = 200;
    out->persistent = 0;
    out->body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    out->len = out->body ? strlen(out->body) : 0;
    json_decref(o);
    if (!out->body)
        web_reply_error(out, 500, "out of memory");
}

static void reply_buf(web_reply *out, web_buf *b)
{
    if (b->failed) {
        free(b->s);
        web_reply_error(out, 500, "out of memory");
        return;
    }
    out->status = 200;
    out->persistent = 0;
    out->body = b->s;
    out->len = b->len;
}

/* reply_blob: a 200 answer of the prebuilt body b, held by the reply. */
static void reply_blob(web_reply *out, web_blob *b)
{
    web_blob_hold(b);
    out->status = 200;
    out->blob = b;
    out->body = b->data;
    out->len = b->len;
}

/* ---------------------------------------------------------------- the parameter parser */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* decode: s (n bytes) with '+' as a space and %HH decoded, into out (NUL-terminated). The decoded
 * length, or -1 for a malformed escape. */
static long decode(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
            int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
            if (lo < 0)
                return -1;
            out[k++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[k++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    out[k] = 0;
    return (long)k;
}

int web_params_parse(web_params *p, const char *q, size_t len, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    unsigned n = 0; /* counted before anything is decoded */
    for (size_t i = 0; i <= len; i++) {
        size_t e = i;
        while (e < len && q[e] != '&')
            e++;
        n += e > i;
        i = e;
    }
    if (n > WEB_PARAMS_MAX) {
        snprintf(err, errlen, "too many parameters (%u; at most %d)", n, WEB_PARAMS_MAX);
        return -1;
    }
    /* each "k=v" of m bytes decodes to at most m + 2 bytes with both NULs */
    p->buf = malloc(len + 2 * (size_t)n + 1);
    if (!p->buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *o = p->buf;
    for (size_t i = 0; i < len; i++) {
        size_t e = i;
        while (e < len && q[e] != '&')
            e++;
        if (e == i)
            continue;
        const char *eq = memchr(q + i, '=', e - i);
        size_t klen = eq ? (size_t)(eq - (q + i)) : e - i;
        long kd = decode(q + i, klen, o);
        long vd = kd < 0
                      ? -1
                      : decode(eq ? eq + 1 : q + e, eq ? (size_t)(q + e - eq - 1) : 0, o + kd + 1);
        if (kd < 0 || vd < 0) {
            snprintf(err, errlen, "parameter %u: malformed %%-escape", p->n + 1);
            return -1;
        }
        if (!text_ok(o, (size_t)kd)) {
            snprintf(err, errlen,
                     "parameter %u: its name holds NUL, a control character or invalid UTF-8",
                     p->n + 1);
            return -1;
        }
        if (!text_ok(o + kd + 1, (size_t)vd)) {
            snprintf(err, errlen,
                     "parameter '%.40s': its value holds NUL, a control character or invalid UTF-8",
                     o);
            return -1;
        }
        p->key[p->n] = o;
        p->val[p->n] = o + kd + 1;
        p->n++;
        o += kd + vd + 2;
        i = e;
    }
    return 0;
}

void web_params_free(web_params *p)
{
    free(p->buf);
    memset(p, 0, sizeof *p);
}

const char *web_param(const web_params *p, const char *key)
{
    for (unsigned i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->val[i];
    return NULL;
}

void web_param_drop(web_params *p, const char *key)
{
    unsigned k = 0;
    for (unsigned i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) != 0) {
            p->key[k] = p->key[i];
            p->val[k++] = p->val[i];
        }
    p->n = k;
}

/* check_known: 0 when every parameter is in the NULL-terminated list and none is given twice,
 * else a 400 reply. */
static int check_known(const web_params *p, web_reply *out, const char *const *known)
{
    for (unsigned i = 0; i < p->n; i++) {
        const char *const *k = known;
        while (*k && strcmp(*k, p->key[i]) != 0)
            k++;
        if (!*k) {
            web_reply_error(out, 400, "unknown parameter '%.40s'", p->key[i]);
            return -1;
        }
        for (unsigned j = 0; j < i; j++)
            if (strcmp(p->key[j], p->key[i]) == 0) {
                web_reply_error(out, 400, "parameter '%s' given twice", p->key[i]);
                return -1;
            }
    }
    return 0;
}

/* parse_int: s (n bytes) as a strict decimal integer: an optional '-' and 1 to 19 digits (no '+',
 * spaces, "0x", fraction or exponent), in [lo, hi]. 0, or -1. */
static int parse_int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *v)
{
    size_t i = s[0] == '-' && n > 0;
    if (i == n || n - i > 19)
        return -1;
    uint64_t x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0'); /* 19 digits fit in 64 bits */
    }
    if (x > (uint64_t)INT64_MAX)
        return -1;
    int64_t y = s[0] == '-' ? -(int64_t)x : (int64_t)x;
    if (y < lo || y > hi)
        return -1;
    *v = y;
    return 0;
}

/* get_int: parameter `key` as parse_int() reads it, in [lo, hi]. When absent: *v = def, or a 400
 * when `required`. *given (may be NULL) tells whether it was there. 0, or -1 after a 400 reply. */
static int get_int(const web_params *p, web_reply *out, const char *key, int64_t lo, int64_t hi,
                   int required, int64_t def, int64_t *v, int *given)
{
    const char *s = web_param(p, key);
    if (given)
        *given = s != NULL;
    if (!s) {
        if (required) {
            web_reply_error(out, 400, "missing parameter '%s'", key);
            return -1;
        }
        *v = def;
        return 0;
    }
    if (parse_int(s, strlen(s), lo, hi, v)) {
        web_reply_error(out, 400,
                        "parameter '%s' must be a decimal integer in [%lld, %lld], got '%.40s'",
                        key, (long long)lo, (long long)hi, s);
        return -1;
    }
    return 0;
}

/* get_range: the required or optional times t0 < t1 (ns relative to the origin, |t| <= 4e18). */
static int get_range(const web_params *p, web_reply *out, int required, int64_t *t0, int *has0,
                     int64_t *t1, int *has1)
{
    if (get_int(p, out, "t0", -TIME_ABS_MAX, TIME_ABS_MAX, required, 0, t0, has0) ||
        get_int(p, out, "t1", -TIME_ABS_MAX, TIME_ABS_MAX, required, 0, t1, has1))
        return -1;
    if (*has0 && *has1 && *t1 <= *t0) {
        web_reply_error(out, 400, "t1 must be greater than t0 (got t0 %lld, t1 %lld)",
                        (long long)*t0, (long long)*t1);
        return -1;
    }
    return 0;
}

static const web_runix *get_run(const web_gen *g, const web_params *p, web_reply *out, unsigned *id)
{
    int64_t v;
    if (get_int(p, out, "run", 0, (int64_t)g->nruns - 1, 0, 0, &v, NULL))
        return NULL;
    *id = (unsigned)v;
    return &g->runs[v];
}

/* get_rows: parameter `rows`, row ids below nrows separated by ',', as flags in *sel (NULL when
 * absent: every row). 0, or -1 after a 4xx/5xx reply. */
static int get_rows(const web_params *p, web_reply *out, uint32_t nrows, uint8_t **sel)
{
    *sel = NULL;
    const char *s = web_param(p, "rows");
    if (!s)
        return 0;
    *sel = calloc(nrows ? nrows : 1, 1);
    if (!*sel) {
        web_reply_error(out, 500, "out of memory");
        return -1;
    }
    for (;;) {
        size_t n = strcspn(s, ",");
        int64_t x;
        if (parse_int(s, n, 0, (int64_t)nrows - 1, &x)) {
            web_reply_error(out, 400, "parameter 'rows' must be row ids below %u separated by ','",
                            nrows);
            free(*sel);
            *sel = NULL;
            return -1;
        }
        (*sel)[x] = 1;
        if (!s[n])
            return 0;
        s += n + 1;
    }
}

static void api_timeline(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "t0", "t1", "width", "rows", "kmax", "format", NULL};
    unsigned id;
    const web_runix *r;
    int64_t t0, t1, width, kmax;
    int has0, has1;
    uint8_t *sel;
    if (check_known(p, out, known))
        return;
    const char *format = web_param(p, "format");
    int compact = format && strcmp(format, "bin") == 0;
    if (format && !compact && strcmp(format, "json") != 0) {
        web_reply_error(out, 400, "parameter 'format' must be 'json' or 'bin', got '%.40s'",
                        format);
        return;
    }
    if (!(r = get_run(g, p, out, &id)) || get_range(p, out, 1, &t0, &has0, &t1, &has1) ||
        get_int(p, out, "width", 1, WIDTH_MAX, 1, 0, &width, NULL) ||
        get_int(p, out, "kmax", 0, KMAX_MAX, 0, width, &kmax, NULL) ||
        get_rows(p, out, r->nrows, &sel))
        return;
    web_buf b = {0}; /* stays empty: the answer comes as a blob */
    web_blob *answer;
    int rc =
        web_timeline(r, id, t0, t1, (uint32_t)width, (uint32_t)kmax, sel, compact, &b, &answer);
    free(sel);
    if (rc)
        b.failed = 1;
    if (answer) {
        reply_blob(out, answer);
        web_blob_release(answer); /* the reply holds it now */
    } else {
        reply_buf(out, &b);
    }
    if (compact && out->status == 200)
        out->mime = "application/octet-stream";
}

/* api_range: GET /api/range?run&t0&t1[&rows][&names]: the statistics of a selected range, or of
 * an area (a range over some rows) (web_range.c). */
static void api_range(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "t0", "t1", "rows", "names", NULL};
    unsigned id;
    const web_runix *r;
    int64_t t0, t1, names;
    int has0, has1;
    uint8_t *sel;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &id)) ||
        get_range(p, out, 1, &t0, &has0, &t1, &has1) ||
        get_int(p, out, "names", 0, SEARCH_NAMES_MAX, 0, SEARCH_NAMES_MAX, &names, NULL) ||
        get_rows(p, out, r->nrows, &sel))
        return;
    web_buf b = {0};
    if (web_range(r, id, t0, t1, sel, RANGE_SCAN_MAX, (uint32_t)names, &b))
        b.failed = 1;
    free(sel);
    reply_buf(out, &b);
}

/* window_json: window w of run r as the JSON view has it (view_window_json()), with its times
 * made relative to the run's origin, its lane, and the context switches whose idle gap lies in it
 * (switch_times: when the next share group's kernel started; switch_gaps: the idle before; at most
 * SWITCH_LIST; switches_found counts them all), found again from the run (web_lane_switches()). */
static json_t *window_json(const web_runix *r, uint64_t w)
{
    const analysis_window *win = &analysis_windows(r->an)[w];
    json_t *o = view_window_json(r->an, w);
    uint32_t lane = web_device_lane(r, win->device);
    int bad = !o;
    view_put(o, "t0", json_integer(win->t0 - r->origin), &bad);
    view_put(o, "t1", json_integer(win->t1 - r->origin), &bad);
    view_put(o, "lane", json_integer(lane), &bad);
    uint64_t first = 0,
             n = lane < r->nlanes ? web_lane_switches(r, lane, win->t0, win->t1, &first) : 0;
    json_t *at = json_array(), *gap = json_array();
    for (uint64_t i = 0; i < n && i < SWITCH_LIST && !bad; i++) {
        view_append(at, json_integer(r->lanes[lane].sw_t[first + i] - r->origin), &bad);
        view_append(gap, json_integer(r->lanes[lane].sw_gap[first + i]), &bad);
    }
    view_put(o, "switches_found", json_integer((json_int_t)n), &bad);
    view_put(o, "switch_times", at, &bad);
    view_put(o, "switch_gaps", gap, &bad);
    return view_done(o, bad);
}

/* api_window: GET /api/window?run&id: one analysis window with its evidence. */
static void api_window(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "id", NULL};
    unsigned rid;
    const web_runix *r;
    int64_t id;
    uint64_t nw;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)))
        return;
    nw = analysis_nwindows(r->an);
    if (nw == 0) {
        web_reply_error(out, 404, "run %u has no windows", rid);
        return;
    }
    if (get_int(p, out, "id", 0, (int64_t)nw - 1, 1, 0, &id, NULL))
        return;
    json_t *o = window_json(r, id);
    if (!o) {
        web_reply_error(out, 500, "out of memory");
        return;
    }
    reply_json(out, o);
}

/* api_kernel_reply: kernel `id` of run r in full (GET /api/kernel, /api/item?kind=kernel). */
static void api_kernel_reply(const web_runix *r, unsigned rid, int64_t id, web_reply *out)
{
    const store_run *run = r->run;
    const store_kernel *k = &run->kernels[id];
    const store_launch *l = &run->launches[k->launch];
    const store_string *name = &run->strings[l->name];
    const store_stream *st = &run->streams[k->stream];
    const store_context *cx = &run->contexts[st->context];
    uint32_t sig = analysis_launch_signature(r->an, k->launch);
    float stretch = analysis_stretch(r->an)[id];
    uint32_t lane = web_kernel_lane(r, k);
    const analysis_window *win = web_kernel_window(r, lane, k); /* holds most of the kernel */
    json_t *o =
        json_pack("{s:I,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:I,s:I,s:[iii],"
                  "s:[iii],s:i,s:i,s:i,s:o,s:s}",
                  "id", (json_int_t)id, "run", (int)rid, "row",
                  (int)r->stream_row[WEB_ROW_KERNELS][k->stream], "lane", (int)lane, "process",
                  (int)cx->process, "pid", (json_int_t)run->processes[cx->process].pid, "context",
                  (json_int_t)cx->context_id, "stream", (json_int_t)st->stream_id, "correlation",
                  (json_int_t)k->correlation_id, "name", view_string(name->demangled), "mangled",
                  view_string(name->text), "start", (json_int_t)(k->start - r->origin), "end",
                  (json_int_t)(k->end - r->origin), "dur",
                  (json_int_t)(k->end > k->start ? k->end - k->start : 0), "grid", (int)l->grid[0],
                  (int)l->grid[1], (int)l->grid[2], "block", (int)l->block[0], (int)l->block[1],
                  (int)l->block[2], "registers", (int)l->registers, "static_smem",
                  (int)l->static_smem, "dynamic_smem", (int)l->dynamic_smem, "stretch",
                  view_number(stretch), "verdict", analysis_verdict_name(web_window_verdict(win)));
    int bad = !o;
    /* its context: MPS as the analysis took it, green (an SM partition) and its parent */
    view_put(o, "context_mps",
             json_string(analysis_mps_name(analysis_context_mps(r->an, st->context))), &bad);
    view_put(o, "green", json_boolean(cx->green), &bad);
    view_put(o, "parent_context",
             cx->green && cx->parent_id ? json_integer(cx->parent_id) : json_null(), &bad);
    view_put(o, "context_sms", cx->sm_count ? json_integer(cx->sm_count) : json_null(), &bad);
    /* its partition, named against the whole GPU: an MPS client's thread limit, the GPU's SMs */
    view_put(o, "context_thread_percentage",
             cx->thread_pct > 0 ? view_number(cx->thread_pct) : json_null(), &bad);
    uint32_t slot = analysis_context_slot(r->an, st->context);
    uint32_t whole = slot != UINT32_MAX ? analysis_device_sms(r->an, slot) : 0;
    view_put(o, "device_sms", whole ? json_integer(whole) : json_null(), &bad);
    if (o && sig < analysis_nsignatures(r->an) &&
        json_object_set_new(o, "reference", view_signature_json(r->an, sig)))
        bad = 1;
    if (o && win &&
        json_object_set_new(o, "window", window_json(r, (uint64_t)(win - analysis_windows(r->an)))))
        bad = 1;
    if (bad) {
        json_decref(o);
        web_reply_error(out, 500, "out of memory");
        return;
    }
    reply_json(out, o);
}

static void api_kernel(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "id", NULL};
    unsigned rid;
    const web_runix *r;
    int64_t id;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)))
        return;
    if (r->run->nkernels == 0) {
        web_reply_error(out, 404, "run %u has no kernels", rid);
        return;
    }
    if (get_int(p, out, "id", 0, (int64_t)r->run->nkernels - 1, 1, 0, &id, NULL))
        return;
    api_kernel_reply(r, rid, id, out);
}

/* ---------------------------------------------------------------- items and flows */

#define FLOW_MAX 64 /* partners listed per flow query at most */

/* The item kinds of /api/item and /api/flow, by web_row_kind. */
static const char *const item_kind[WEB_NROW_KINDS] = {"kernel", "copy", "api", "nvtx"};
static const char *const item_plural[WEB_NROW_KINDS] = {"kernels", "copies", "API calls",
                                                        "NVTX ranges"};

/* get_item: parameters kind (one of item_kind[], those allowed by `mask`, bit per kind) and id
 * (below that kind's count). 0, or -1 after a 4xx reply. */
static int get_item(const web_runix *r, unsigned rid, const web_params *p, web_reply *out,
                    unsigned mask, int *kind, int64_t *id)
{
    const char *k = web_param(p, "kind");
    *kind = -1;
    for (int i = 0; k && i < WEB_NROW_KINDS; i++)
        if (mask & 1u << i && strcmp(k, item_kind[i]) == 0)
            *kind = i;
    if (*kind < 0) {
        char list[64] = "";
        for (int i = 0; i < WEB_NROW_KINDS; i++)
            if (mask & 1u << i) {
                strcat(list, list[0] ? ", " : "");
                strcat(list, item_kind[i]);
            }
        if (!k)
            web_reply_error(out, 400, "missing parameter 'kind'");
        else
            web_reply_error(out, 400, "parameter 'kind' must be one of %s, got '%.40s'", list, k);
        return -1;
    }
    uint64_t n = r->items[*kind].n;
    if (n == 0) {
        web_reply_error(out, 404, "run %u has no %s", rid, item_plural[*kind]);
        return -1;
    }
    return get_int(p, out, "id", 0, (int64_t)n - 1, 1, 0, id, NULL);
}

/* item_head: what every item object starts with: item, id, run, row, lane, depth, process, pid,
 * start, end, dur (times relative to the run's origin). */
static json_t *item_head(const web_runix *r, unsigned rid, int kind, uint64_t id)
{
    const web_items *it = &r->items[kind];
    store_idx p = web_item_process(r, kind, id);
    uint32_t row = web_item_row(r, kind, id);
    int64_t s = web_item_start(it, id), e = web_item_end(it, id);
    json_t *o = json_pack(
        "{s:s,s:I,s:i,s:o,s:o,s:i,s:i,s:I,s:I,s:I,s:I}", "item", item_kind[kind], "id",
        (json_int_t)id, "run", (int)rid, "row", row == UINT32_MAX ? json_null() : json_integer(row),
        "lane", row == UINT32_MAX ? json_null() : json_integer(r->rows[row].slot), "depth",
        (int)web_item_depth(r, kind, id), "process", (int)p, "pid",
        (json_int_t)r->run->processes[p].pid, "start", (json_int_t)(s - r->origin), "end",
        (json_int_t)(e - r->origin), "dur", (json_int_t)(e > s ? e - s : 0));
    return o;
}

/* string_of: string i of the run as the page shows it (demangled), NULL for STORE_NONE. */
static const char *string_of(const store_run *run, store_idx i)
{
    if (i >= run->nstrings)
        return NULL;
    return run->strings[i].demangled;
}

/* api_item: GET /api/item?run&kind&id: one kernel (as /api/kernel), copy, API call or NVTX range.
 */
static void api_item(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "kind", "id", NULL};
    unsigned rid;
    const web_runix *r;
    int kind;
    int64_t id;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)) ||
        get_item(r, rid, p, out, 0xf, &kind, &id))
        return;
    if (kind == WEB_ROW_KERNELS) {
        api_kernel_reply(r, rid, id, out);
        return;
    }
    const store_run *run = r->run;
    json_t *o = item_head(r, rid, kind, (uint64_t)id);
    int bad = !o;
    if (kind == WEB_ROW_COPIES) {
        const store_copy *c = &run->copies[id];
        const store_stream *st = &run->streams[c->stream];
        char name[64];
        view_put(o, "context", json_integer(run->contexts[st->context].context_id), &bad);
        view_put(o, "stream", json_integer(st->stream_id), &bad);
        view_put(o, "correlation", json_integer(c->correlation_id), &bad);
        view_put(o, "type", json_string(c->type == STORE_COPY_MEMSET ? "memset" : "memcpy"), &bad);
        view_put(o, "kind", json_integer(c->kind), &bad);
        view_put(o, "name", json_string(view_copy_name(c, name, sizeof name)), &bad);
        view_put(o, "bytes", json_integer((json_int_t)c->bytes), &bad);
    } else if (kind == WEB_ROW_API) {
        const store_api *a = &run->apis[id];
        view_put(o, "thread", json_integer((json_int_t)a->thread_id), &bad);
        view_put(o, "correlation", json_integer(a->correlation_id), &bad);
        view_put(o, "domain",
                 a->domain == STORE_API_RUNTIME  ? json_string("runtime")
                 : a->domain == STORE_API_DRIVER ? json_string("driver")
                                                 : json_null(),
                 &bad);
        view_put(o, "name", view_string(string_of(run, a->name)), &bad);
        view_put(o, "status", json_integer(a->status), &bad);
    } else {
        const store_range *g = &run->ranges[id];
        view_put(o, "thread", json_integer((json_int_t)g->thread_id), &bad);
        view_put(o, "domain", view_string(string_of(run, g->domain)), &bad);
        view_put(o, "name", view_string(string_of(run, g->name)), &bad);
    }
    if (bad) {
        json_decref(o);
        web_reply_error(out, 500, "out of memory");
        return;
    }
    reply_json(out, o);
}

/* item_name: the name of record i of a kind as the page shows it: a kernel's demangled name, a
 * copy's ("Memcpy HtoD", into text, n bytes), an API call's or NVTX range's; "" when unknown. */
static const char *item_name(const web_runix *r, int kind, uint64_t i, char *text, size_t n)
{
    const store_run *run = r->run;
    store_idx s;
    switch (kind) {
    case WEB_ROW_KERNELS: s = run->launches[run->kernels[i].launch].name; break;
    case WEB_ROW_COPIES: return view_copy_name(&run->copies[i], text, n);
    case WEB_ROW_API: s = run->apis[i].name; break;
    default: s = run->ranges[i].name; break;
    }
    const char *t = string_of(run, s);
    return t ? t : "";
}

/* api_flow: GET /api/flow?run&kind&id: the records linked to a kernel, copy or API call by its
 * correlation id in its process: the API call that launched a kernel or copy, the kernels and
 * copies an API call launched. Two binary searches per kind in the flow index. */
static void api_flow(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "kind", "id", NULL};
    unsigned rid;
    const web_runix *r;
    int kind;
    int64_t id;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)) ||
        get_item(r, rid, p, out, 0x7, &kind, &id))
        return;
    store_idx proc = web_item_process(r, kind, (uint64_t)id);
    uint32_t corr = web_item_correlation(r, kind, (uint64_t)id);
    web_buf b = {0};
    web_buf_str(&b, "{\"run\":");
    web_buf_i64(&b, rid);
    web_buf_str(&b, ",\"kind\":\"");
    web_buf_str(&b, item_kind[kind]);
    web_buf_str(&b, "\",\"id\":");
    web_buf_i64(&b, id);
    web_buf_str(&b, ",\"correlation\":");
    web_buf_i64(&b, corr);
    web_buf_str(&b, ",\"partners\":[");
    static const int partners_of_gpu[] = {WEB_ROW_API},
                     partners_of_api[] = {WEB_ROW_KERNELS, WEB_ROW_COPIES};
    const int *pk = kind == WEB_ROW_API ? partners_of_api : partners_of_gpu;
    int npk = kind == WEB_ROW_API ? 2 : 1;
    uint32_t listed = 0, total = 0;
    char text[64];
    for (int k = 0; k < npk; k++) {
        const web_items *it = &r->items[pk[k]];
        uint32_t first, n = web_flow_find(r, pk[k], proc, corr, &first);
        total += n;
        for (uint32_t j = 0; j < n && listed < FLOW_MAX; j++, listed++) {
            uint32_t i = it->by_corr[first + j];
            uint32_t row = web_item_row(r, pk[k], i);
            web_buf_str(&b, listed ? ",{\"kind\":\"" : "{\"kind\":\"");
            web_buf_str(&b, item_kind[pk[k]]);
            web_buf_str(&b, "\",\"id\":");
            web_buf_i64(&b, i);
            web_buf_str(&b, ",\"row\":");
            if (row == UINT32_MAX)
                web_buf_str(&b, "null");
            else
                web_buf_i64(&b, row);
            web_buf_str(&b, ",\"depth\":");
            web_buf_i64(&b, web_item_depth(r, pk[k], i));
            web_buf_str(&b, ",\"start\":");
            web_buf_i64(&b, web_item_start(it, i) - r->origin);
            web_buf_str(&b, ",\"end\":");
            web_buf_i64(&b, web_item_end(it, i) - r->origin);
            web_buf_str(&b, ",\"name\":");
            web_buf_json_str(&b, item_name(r, pk[k], i, text, sizeof text));
            web_buf_ch(&b, '}');
        }
    }
    web_buf_str(&b, "],\"total\":");
    web_buf_i64(&b, total);
    web_buf_ch(&b, '}');
    reply_buf(out, &b);
}

/* ci_contains: case-insensitive substring test. */
static int ci_contains(const char *hay, const char *needle)
{
    if (!hay)
        return 0;
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

static void api_find(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "q", "limit", "t0", "t1", NULL};
    unsigned rid;
    const web_runix *r;
    int64_t limit, t0, t1;
    int has0, has1;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)) ||
        get_int(p, out, "limit", 1, FIND_LIMIT_MAX, 0, 1000, &limit, NULL) ||
        get_range(p, out, 0, &t0, &has0, &t1, &has1))
        return;
    const char *q = web_param(p, "q"); /* UTF-8 without control characters (web_params_parse) */
    if (!q || !*q || strlen(q) > QUERY_MAX) {
        web_reply_error(out, 400, "parameter 'q' must be 1 to %d bytes of text", QUERY_MAX);
        return;
    }
    const store_run *run = r->run;
    int64_t a = has0 ? r->origin + t0 : INT64_MIN, b = has1 ? r->origin + t1 : INT64_MAX;
    uint8_t *hit = malloc(run->nlaunches ? run->nlaunches : 1);
    uint8_t *name_match = calloc(run->nstrings ? run->nstrings : 1, 1); /* 0 unknown, 1 no, 2 yes */
    uint64_t *count = calloc(run->nstrings ? run->nstrings : 1, sizeof *count);
    if (!hit || !name_match || !count) {
        free(hit), free(name_match), free(count);
        web_reply_error(out, 500, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < run->nlaunches; i++) {
        store_idx n = run->launches[i].name;
        if (!name_match[n]) { /* demangled is the text itself when the name is not mangled */
            const store_string *s = &run->strings[n];
            const char *dm = s->demangled;
            name_match[n] =
                ci_contains(dm, q) || (s->text != dm && ci_contains(s->text, q)) ? 2 : 1;
        }
        hit[i] = name_match[n] == 2;
    }
    web_buf bid = {0}, brow = {0}, bs = {0}, bd = {0};
    uint64_t total = 0, listed = 0;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (k->start >= b)
            break;
        if (!hit[k->launch] || !web_kernel_in(k, a, b))
            continue;
        total++;
        count[run->launches[k->launch].name]++;
        if (listed < (uint64_t)limit) {
            const char *sep = listed ? "," : "";
            web_buf_str(&bid, sep), web_buf_i64(&bid, (int64_t)i);
            web_buf_str(&brow, sep), web_buf_i64(&brow, r->stream_row[WEB_ROW_KERNELS][k->stream]);
            web_buf_str(&bs, sep), web_buf_i64(&bs, k->start - r->origin);
            web_buf_str(&bd, sep), web_buf_i64(&bd, k->end > k->start ? k->end - k->start : 0);
            listed++;
        }
    }
    web_buf o = {0};
    web_buf_str(&o, "{\"run\":");
    web_buf_i64(&o, rid);
    web_buf_str(&o, ",\"q\":");
    web_buf_json_str(&o, q);
    web_buf_str(&o, ",\"total\":");
    web_buf_i64(&o, (int64_t)total);
    web_buf_str(&o, ",\"truncated\":");
    web_buf_str(&o, total > listed ? "true" : "false");
    web_buf_str(&o, ",\"names\":[");
    int first = 1;
    for (uint32_t i = 0; i < run->nstrings; i++) {
        if (!count[i]) /* names with no kernel in the range are not listed */
            continue;
        web_buf_str(&o, first ? "{\"name\":" : ",{\"name\":");
        first = 0;
        web_buf_json_str(&o, run->strings[i].demangled);
        web_buf_str(&o, ",\"count\":");
        web_buf_i64(&o, (int64_t)count[i]);
        web_buf_ch(&o, '}');
    }
    web_buf_str(&o, "],\"kernels\":{\"id\":[");
    web_buf_raw(&o, bid.s ? bid.s : "", bid.len);
    web_buf_str(&o, "],\"row\":[");
    web_buf_raw(&o, brow.s ? brow.s : "", brow.len);
    web_buf_str(&o, "],\"s\":[");
    web_buf_raw(&o, bs.s ? bs.s : "", bs.len);
    web_buf_str(&o, "],\"d\":[");
    web_buf_raw(&o, bd.s ? bd.s : "", bd.len);
    web_buf_str(&o, "]}}");
    if (bid.failed || brow.failed || bs.failed || bd.failed)
        o.failed = 1;
    free(bid.s), free(brow.s), free(bs.s), free(bd.s);
    free(hit), free(name_match), free(count);
    reply_buf(out, &o);
}

/* api_search: GET /api/search?run&q[&kinds][&exact][&t0][&t1][&from|&at][&limit][&names]: the
 * records of every kind by name, counted and listed in one order (web_search.c). */
static void api_search(const web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run",  "q",  "kinds", "exact", "t0", "t1",
                                        "from", "at", "limit", "names", NULL};
    unsigned rid;
    const web_runix *r;
    int64_t limit, t0, t1, from, at, exact, names;
    int has0, has1, has_from, has_at;
    if (check_known(p, out, known) || !(r = get_run(g, p, out, &rid)) ||
        get_int(p, out, "limit", 0, FIND_LIMIT_MAX, 0, 100, &limit, NULL) ||
        get_int(p, out, "names", 0, SEARCH_NAMES_MAX, 0, 500, &names, NULL) ||
        get_int(p, out, "exact", 0, 1, 0, 0, &exact, NULL) ||
        get_int(p, out, "from", 0, INT64_MAX / 2, 0, 0, &from, &has_from) ||
        get_int(p, out, "at", -TIME_ABS_MAX, TIME_ABS_MAX, 0, 0, &at, &has_at) ||
        get_range(p, out, 0, &t0, &has0, &t1, &has1))
        return;
    if (has_from && has_at) {
        web_reply_error(out, 400, "parameters 'from' and 'at' do not go together");
        return;
    }
    const char *q = web_param(p, "q"); /* UTF-8 without control characters (web_params_parse) */
    if (!q || !*q || strlen(q) > SEARCH_QUERY_MAX) {
        web_reply_error(out, 400, "parameter 'q' must be 1 to %d bytes of text", SEARCH_QUERY_MAX);
        return;
    }
    static const char *const kind_word[WEB_NROW_KINDS] = {"kernel", "copy", "api", "nvtx"};
    unsigned kinds = 0;
    const char *ks = web_param(p, "kinds");
    for (const char *k = ks ? ks : "kernel,copy,api,nvtx"; *k;) {
        size_t n = strcspn(k, ",");
        int found = -1;
        for (int i = 0; i < WEB_NROW_KINDS; i++)
            if (strlen(kind_word[i]) == n && strncmp(k, kind_word[i], n) == 0)
                found = i;
        if (found < 0) {
            web_reply_error(out, 400,
                            "parameter 'kinds' must list kernel, copy, api or nvtx separated by "
                            "',', got '%.40s'",
                            ks);
            return;
        }
        kinds |= 1u << found;
        k += n + (k[n] == ',');
    }
    web_buf b = {0};
    if (web_search(r, rid, q, (int)exact, kinds, t0, has0, t1, has1, from, at, has_at,
                   (uint32_t)limit, (uint32_t)names, &b))
        b.failed = 1;
    reply_buf(out, &b);
}

void web_api(const web_gen *g, int follow, const char *what, const web_params *p, web_reply *out)
{
    static const char *const only_run[] = {"run", NULL};
    memset(out, 0, sizeof *out);
    if (strcmp(what, "runs") == 0) {
        if (check_known(p, out, only_run + 1))
            return;
        reply_blob(out, g->runs_body);
    } else if (strcmp(what, "generation") == 0) {
        if (check_known(p, out, only_run + 1))
            return;
        json_t *o = json_pack("{s:I,s:b}", "generation", (json_int_t)g->id, "follow", follow);
        if (o)
            reply_json(out, o);
        else
            web_reply_error(out, 500, "out of memory");
    } else if (strcmp(what, "stats") == 0) {
        unsigned id;
        const web_runix *r;
        if (check_known(p, out, only_run) || !(r = get_run(g, p, out, &id)))
            return;
        /* never wait here: this is a pool thread, and the requests queued on it (the first
         * paint's timeline among them) would wait too */
        pthread_mutex_lock(&g->stats->lock);
        int done = g->stats->done;
        pthread_mutex_unlock(&g->stats->lock);
        if (!done) {
            web_reply_error(out, 503, "statistics pending");
            out->retry_after = 1;
            return;
        }
        if (!r->stats_body) {
            web_reply_error(out, 500, "out of memory building the statistics");
            return;
        }
        reply_blob(out, r->stats_body);
    } else if (strcmp(what, "timeline") == 0) {
        api_timeline(g, p, out);
    } else if (strcmp(what, "kernel") == 0) {
        api_kernel(g, p, out);
    } else if (strcmp(what, "window") == 0) {
        api_window(g, p, out);
    } else if (strcmp(what, "find") == 0) {
        api_find(g, p, out);
    } else if (strcmp(what, "search") == 0) {
        api_search(g, p, out);
    } else if (strcmp(what, "range") == 0) {
        api_range(g, p, out);
    } else if (strcmp(what, "item") == 0) {
        api_item(g, p, out);
    } else if (strcmp(what, "flow") == 0) {
        api_flow(g, p, out);
    } else {
        web_reply_error(out, 404, "no endpoint /api/%.60s (see web/API.md)", what);
    }
}

int web_api_check_known(const web_params *p, web_reply *out, const char *const *known)
{
    return check_known(p, out, known);
}

int web_api_get_int(const web_params *p, web_reply *out, const char *key, int64_t lo, int64_t hi,
                    int required, int64_t def, int64_t *v)
{
    return get_int(p, out, key, lo, hi, required, def, v, NULL);
}
