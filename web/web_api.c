/* web_api.c: the JSON API's dispatcher and parameter checks, and the small endpoints: runs and
 * stats (prebuilt; stats answer 503 until built), kernel (one kernel's details and evidence) and
 * find (kernels by name). Every parameter is checked strictly: an unknown parameter, a malformed
 * or out-of-range value is a 400 with {"error": "..."} naming it. web/API.md documents each
 * endpoint. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
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
#define TIME_ABS_MAX 4e18 /* |t| bound that keeps origin + t inside int64 */

static void reply_error(web_reply *out, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_error(web_reply *out, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:s}", "error", msg);
    out->status = status;
    out->persistent = 0;
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
        reply_error(out, 500, "out of memory");
}

static void reply_buf(web_reply *out, web_buf *b)
{
    if (b->failed) {
        free(b->s);
        reply_error(out, 500, "out of memory");
        return;
    }
    out->status = 200;
    out->persistent = 0;
    out->body = b->s;
    out->len = b->len;
}

static const char *param(const web_params *p, const char *key)
{
    for (unsigned i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->val[i] ? p->val[i] : "";
    return NULL;
}

/* check_known: 0 when every parameter is in the NULL-terminated list, else a 400 reply. */
static int check_known(const web_params *p, web_reply *out, const char *const *known)
{
    if (p->overflow) {
        reply_error(out, 400, "too many parameters");
        return -1;
    }
    for (unsigned i = 0; i < p->n; i++) {
        const char *const *k = known;
        while (*k && strcmp(*k, p->key[i]) != 0)
            k++;
        if (!*k) {
            reply_error(out, 400, "unknown parameter '%s'", p->key[i]);
            return -1;
        }
        for (unsigned j = 0; j < i; j++)
            if (strcmp(p->key[j], p->key[i]) == 0) {
                reply_error(out, 400, "parameter '%s' given twice", p->key[i]);
                return -1;
            }
    }
    return 0;
}

/* get_uint: parameter `key` as a decimal integer in [lo, hi]; `def` when absent (def < 0:
 * required). 0, or -1 after a 400 reply. */
static int get_uint(const web_params *p, web_reply *out, const char *key, uint64_t lo, uint64_t hi,
                    int64_t def, uint64_t *v)
{
    const char *s = param(p, key);
    if (!s) {
        if (def < 0) {
            reply_error(out, 400, "missing parameter '%s'", key);
            return -1;
        }
        *v = (uint64_t)def;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (!isdigit((unsigned char)s[0]) || *end || errno || x < lo || x > hi) {
        reply_error(out, 400, "parameter '%s' must be an integer in [%llu, %llu], got '%.40s'", key,
                    (unsigned long long)lo, (unsigned long long)hi, s);
        return -1;
    }
    *v = x;
    return 0;
}

/* get_time: parameter `key` as ns (a finite decimal number, rounded), required unless `opt`. */
static int get_time(const web_params *p, web_reply *out, const char *key, int opt, int64_t *v,
                    int *present)
{
    const char *s = param(p, key);
    *present = s != NULL;
    if (!s) {
        if (opt)
            return 0;
        reply_error(out, 400, "missing parameter '%s'", key);
        return -1;
    }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || isspace((unsigned char)*s) || *end || errno || !isfinite(x) ||
        fabs(x) > TIME_ABS_MAX) {
        reply_error(out, 400, "parameter '%s' must be a time in ns (|t| <= 4e18), got '%.40s'", key,
                    s);
        return -1;
    }
    *v = (int64_t)llround(x);
    return 0;
}

static const web_runix *get_run(const web *w, const web_params *p, web_reply *out, unsigned *id)
{
    uint64_t v;
    if (get_uint(p, out, "run", 0, w->nruns - 1, 0, &v))
        return NULL;
    *id = (unsigned)v;
    return &w->runs[v];
}

static void api_timeline(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "t0", "t1", "width", "rows", "kmax", NULL};
    unsigned id;
    const web_runix *r;
    int64_t t0, t1;
    int has;
    uint64_t width, kmax;
    if (check_known(p, out, known) || !(r = get_run(w, p, out, &id)) ||
        get_time(p, out, "t0", 0, &t0, &has) || get_time(p, out, "t1", 0, &t1, &has) ||
        get_uint(p, out, "width", 1, WIDTH_MAX, -1, &width))
        return;
    if (t1 <= t0) {
        reply_error(out, 400, "t1 must be greater than t0");
        return;
    }
    if (get_uint(p, out, "kmax", 0, KMAX_MAX, (int64_t)width, &kmax))
        return;
    uint8_t *sel = NULL;
    const char *rows = param(p, "rows");
    if (rows) {
        sel = calloc(r->nrows ? r->nrows : 1, 1);
        if (!sel) {
            reply_error(out, 500, "out of memory");
            return;
        }
        const char *s = rows;
        while (*s) {
            char *end;
            errno = 0;
            unsigned long x = strtoul(s, &end, 10);
            if (!isdigit((unsigned char)*s) || errno || x >= r->nrows || (*end && *end != ',')) {
                reply_error(out, 400, "parameter 'rows' must be row ids below %u separated by ','",
                            r->nrows);
                free(sel);
                return;
            }
            sel[x] = 1;
            s = *end ? end + 1 : end;
        }
    }
    web_buf b = {0};
    int rc = web_timeline(r, id, t0, t1, (uint32_t)width, (uint32_t)kmax, sel, &b);
    free(sel);
    if (rc)
        b.failed = 1;
    reply_buf(out, &b);
}

/* window_json: window w of run r as the JSON view has it (view_window_json()), with its times
 * made relative to the run's origin and its lane. */
static json_t *window_json(const web_runix *r, uint64_t w)
{
    const analysis_window *win = &analysis_windows(r->an)[w];
    json_t *o = view_window_json(r->an, w);
    if (o && (json_object_set_new(o, "t0", json_integer(win->t0 - r->origin)) ||
              json_object_set_new(o, "t1", json_integer(win->t1 - r->origin)) ||
              json_object_set_new(o, "lane", json_integer(web_device_lane(r, win->device))))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* api_window: GET /api/window?run&id: one analysis window with its evidence. */
static void api_window(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "id", NULL};
    unsigned rid;
    const web_runix *r;
    uint64_t id, nw;
    if (check_known(p, out, known) || !(r = get_run(w, p, out, &rid)))
        return;
    nw = analysis_nwindows(r->an);
    if (nw == 0) {
        reply_error(out, 404, "run %u has no windows", rid);
        return;
    }
    if (get_uint(p, out, "id", 0, nw - 1, -1, &id))
        return;
    json_t *o = window_json(r, id);
    if (!o) {
        reply_error(out, 500, "out of memory");
        return;
    }
    reply_json(out, o);
}

static void api_kernel(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "id", NULL};
    unsigned rid;
    const web_runix *r;
    uint64_t id;
    if (check_known(p, out, known) || !(r = get_run(w, p, out, &rid)))
        return;
    if (r->run->nkernels == 0) {
        reply_error(out, 404, "run %u has no kernels", rid);
        return;
    }
    if (get_uint(p, out, "id", 0, r->run->nkernels - 1, -1, &id))
        return;
    const store_run *run = r->run;
    const store_kernel *k = &run->kernels[id];
    const store_launch *l = &run->launches[k->launch];
    const store_string *name = &run->strings[l->name];
    const store_stream *st = &run->streams[k->stream];
    const store_context *cx = &run->contexts[st->context];
    const analysis_signature *sig =
        analysis_get_signature(r->an, analysis_launch_signature(r->an, k->launch));
    float stretch = analysis_stretch(r->an)[id];
    uint32_t lane = web_kernel_lane(r, k);
    const analysis_window *win = web_kernel_window(r, lane, k); /* holds most of the kernel */
    json_t *o = json_pack(
        "{s:I,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:I,s:I,s:[iii],"
        "s:[iii],s:i,s:i,s:i,s:o,s:s}",
        "id", (json_int_t)id, "run", (int)rid, "row", (int)r->stream_row[k->stream], "lane",
        (int)lane, "process", (int)cx->process, "pid", (json_int_t)run->processes[cx->process].pid,
        "context", (json_int_t)cx->context_id, "stream", (json_int_t)st->stream_id, "correlation",
        (json_int_t)k->correlation_id, "name",
        view_string(name->demangled ? name->demangled : name->text), "mangled",
        view_string(name->text), "start", (json_int_t)(k->start - r->origin), "end",
        (json_int_t)(k->end - r->origin), "dur",
        (json_int_t)(k->end > k->start ? k->end - k->start : 0), "grid", (int)l->grid[0],
        (int)l->grid[1], (int)l->grid[2], "block", (int)l->block[0], (int)l->block[1],
        (int)l->block[2], "registers", (int)l->registers, "static_smem", (int)l->static_smem,
        "dynamic_smem", (int)l->dynamic_smem, "stretch", view_number(stretch), "verdict",
        analysis_verdict_name(web_window_verdict(win)));
    int bad = !o;
    if (o && sig &&
        json_object_set_new(
            o, "reference",
            view_signature_json(r->an, analysis_launch_signature(r->an, k->launch))))
        bad = 1;
    if (o && win &&
        json_object_set_new(o, "window", window_json(r, (uint64_t)(win - analysis_windows(r->an)))))
        bad = 1;
    if (bad) {
        json_decref(o);
        reply_error(out, 500, "out of memory");
        return;
    }
    reply_json(out, o);
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

static void api_find(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "q", "limit", "t0", "t1", NULL};
    unsigned rid;
    const web_runix *r;
    uint64_t limit;
    int64_t t0 = INT64_MIN, t1 = INT64_MAX;
    int has0, has1;
    if (check_known(p, out, known) || !(r = get_run(w, p, out, &rid)) ||
        get_uint(p, out, "limit", 1, FIND_LIMIT_MAX, 1000, &limit) ||
        get_time(p, out, "t0", 1, &t0, &has0) || get_time(p, out, "t1", 1, &t1, &has1))
        return;
    const char *q = param(p, "q");
    if (!q || !*q || strlen(q) > QUERY_MAX) {
        reply_error(out, 400, "parameter 'q' must be 1 to %d characters", QUERY_MAX);
        return;
    }
    const store_run *run = r->run;
    int64_t a = has0 ? r->origin + t0 : INT64_MIN, b = has1 ? r->origin + t1 : INT64_MAX;
    uint8_t *hit = malloc(run->nlaunches ? run->nlaunches : 1);
    uint8_t *name_match = calloc(run->nstrings ? run->nstrings : 1, 1); /* 0 unknown, 1 no, 2 yes */
    uint64_t *count = calloc(run->nstrings ? run->nstrings : 1, sizeof *count);
    if (!hit || !name_match || !count) {
        free(hit), free(name_match), free(count);
        reply_error(out, 500, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < run->nlaunches; i++) {
        store_idx n = run->launches[i].name;
        if (!name_match[n]) { /* demangled is the text itself when the name is not mangled */
            const store_string *s = &run->strings[n];
            const char *dm = s->demangled ? s->demangled : s->text;
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
        if (listed < limit) {
            const char *sep = listed ? "," : "";
            web_buf_str(&bid, sep), web_buf_i64(&bid, (int64_t)i);
            web_buf_str(&brow, sep), web_buf_i64(&brow, r->stream_row[k->stream]);
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
        web_buf_json_str(&o, run->strings[i].demangled ? run->strings[i].demangled
                                                       : run->strings[i].text);
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

void web_api(const web *w, const char *what, const web_params *p, web_reply *out)
{
    static const char *const only_run[] = {"run", NULL};
    memset(out, 0, sizeof *out);
    if (strcmp(what, "runs") == 0) {
        if (check_known(p, out, only_run + 1))
            return;
        out->status = 200;
        out->body = w->runs_body;
        out->len = w->runs_len;
        out->persistent = 1;
    } else if (strcmp(what, "stats") == 0) {
        unsigned id;
        const web_runix *r;
        if (check_known(p, out, only_run) || !(r = get_run(w, p, out, &id)))
            return;
        /* never wait here: this is a pool thread, and the requests queued on it (the first
         * paint's timeline among them) would wait too */
        pthread_mutex_lock(&w->stats->lock);
        int done = w->stats->done;
        pthread_mutex_unlock(&w->stats->lock);
        if (!done) {
            reply_error(out, 503, "statistics pending");
            out->retry_after = 1;
            return;
        }
        if (!r->stats_json) {
            reply_error(out, 500, "out of memory building the statistics");
            return;
        }
        out->status = 200;
        out->body = r->stats_json;
        out->len = strlen(r->stats_json);
        out->persistent = 1;
    } else if (strcmp(what, "timeline") == 0) {
        api_timeline(w, p, out);
    } else if (strcmp(what, "kernel") == 0) {
        api_kernel(w, p, out);
    } else if (strcmp(what, "window") == 0) {
        api_window(w, p, out);
    } else if (strcmp(what, "find") == 0) {
        api_find(w, p, out);
    } else {
        reply_error(out, 404, "no endpoint /api/%.60s (see web/API.md)", what);
    }
}
