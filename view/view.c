/* view.c: the JSON view of an analysis and its headline sentences (view.h); field names are
 * documented in view/README.md. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

/* The stretch histogram every output shares: log2 bins, 4 per octave, over [1/8, 64). */
#define HIST_LO 0.125
#define HIST_HI 64.0
#define HIST_BINS 36

/* The length of the valid UTF-8 sequence at s (store_utf8_decode()), 0 when there is none. */
static size_t utf8_len(const char *s)
{
    uint32_t cp;
    return store_utf8_decode(s, &cp);
}

json_t *view_string(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    /* not valid UTF-8: each bad byte becomes U+FFFD (3 bytes) */
    size_t n = strlen(s);
    char *buf = malloc(3 * n + 1), *o = buf;
    if (!buf)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = utf8_len((const char *)p);
        if (k) {
            memcpy(o, p, k);
            o += k;
            p += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        }
    }
    j = json_stringn(buf, (size_t)(o - buf));
    free(buf);
    return j;
}

void view_json_quote(const char *s, void (*put)(void *ctx, const char *p, size_t n), void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    put(ctx, "\"", 1);
    for (const char *p = s ? s : ""; *p;) {
        unsigned char c = (unsigned char)*p;
        size_t k = utf8_len(p);
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(ctx, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(ctx, esc, 6);
        } else if (k) {
            put(ctx, p, k);
        } else {
            put(ctx, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
        }
        p += k ? k : 1;
    }
    put(ctx, "\"", 1);
}

json_t *view_number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

void view_put(json_t *o, const char *key, json_t *value, int *bad)
{
    /* jansson consumes value on every path, also when o is not an object */
    if (!value || json_object_set_new(o, key, value))
        *bad = 1;
}

void view_append(json_t *arr, json_t *value, int *bad)
{
    if (!value || json_array_append_new(arr, value))
        *bad = 1;
}

json_t *view_done(json_t *o, int bad)
{
    if (bad || !o) {
        json_decref(o);
        return NULL;
    }
    return o;
}

const char *view_device_name(const analysis *a, uint32_t slot)
{
    const store_run *run = analysis_get_run(a);
    const analysis_device *d = analysis_get_device(a, slot);
    return d && d->device != STORE_NONE && run->devices[d->device].name
               ? run->devices[d->device].name
               : "unknown device";
}

const char *view_gain_bound(const analysis *a, int worst, char *buf, size_t n)
{
    const store_run *run = analysis_get_run(a);
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        if (d->gain_basis != ANALYSIS_BASIS_NONE)
            return analysis_gain_bound_text(
                d->device != STORE_NONE ? run->devices[d->device].name : NULL, worst, buf, n);
    }
    return NULL;
}

/* The share of a device's busy time with >= 2 contexts in flight (0..1); NaN when never busy. The
 * headline's "overlapped N% of busy time" and the JSON's `overlap_of_busy`. */
static double overlap_of_busy(const analysis_device *d)
{
    return d->busy_ns ? (double)d->overlap_ns / (double)d->busy_ns : NAN;
}

/* "4 processes (4 contexts, no MPS)" into buf. */
static void who(const analysis_device *d, char *buf, size_t n)
{
    static const char *const mps[] = {"no MPS", "MPS", "MPS for some", "MPS state unknown"};
    char green[32] = "";
    if (d->ngreen)
        snprintf(green, sizeof green, ", %u green", d->ngreen);
    snprintf(buf, n, "%u process%s (%u context%s%s, %s)", d->nprocesses,
             d->nprocesses == 1 ? "" : "es", d->ncontexts, d->ncontexts == 1 ? "" : "s", green,
             (unsigned)d->mps < 4 ? mps[d->mps] : "?");
}

const char *view_stretch_text(double v, analysis_basis basis, char *buf, size_t n)
{
    if (isnan(v) || basis == ANALYSIS_BASIS_NONE)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%s%.2fx", basis == ANALYSIS_BASIS_REFERENCE ? "" : "~", v);
    return buf;
}

/* The stretch of a verdict's windows with its basis: "stretch 4.28x", "stretch ~4.00x
 * (estimated: 4 share groups took turns)", "stretch ~1.00x (against each kernel's shortest run)".
 * A stretch estimated from turns is the mean number of share groups in flight (analysis_basis). */
static void stretch_text(const analysis_verdict_time *bv, char *buf, size_t n)
{
    char x[32];
    view_stretch_text(bv->stretch, bv->basis, x, sizeof x);
    switch (isnan(bv->stretch) ? ANALYSIS_BASIS_NONE : bv->basis) {
    case ANALYSIS_BASIS_REFERENCE: snprintf(buf, n, "stretch %s", x); break;
    case ANALYSIS_BASIS_TURNS:
        snprintf(buf, n, "stretch %s (estimated: %.3g share groups took turns)", x, bv->stretch);
        break;
    case ANALYSIS_BASIS_SHORTEST:
        snprintf(buf, n, "stretch %s (against each kernel's shortest run)", x);
        break;
    default: snprintf(buf, n, "stretch unknown"); break;
    }
}

/* Why the physics allowed what happened, from the deciding rule: "no MPS", "MPS", "green
 * contexts", "MPS state unknown". */
static const char *why(const analysis_device *d, analysis_rule r)
{
    switch (r) {
    case ANALYSIS_RULE_NO_MPS:
    case ANALYSIS_RULE_TOOK_TURNS:
        return d->mps == ANALYSIS_MPS_OFF ? "no MPS" : "not all under MPS";
    case ANALYSIS_RULE_ONE_AT_A_TIME:
    case ANALYSIS_RULE_PARALLEL_SLOW:
    case ANALYSIS_RULE_NO_REFERENCE:
    case ANALYSIS_RULE_SWITCH_TURNS:
    case ANALYSIS_RULE_QUICK_TURNS:
    case ANALYSIS_RULE_QUICK_HANDOVERS: return "MPS state unknown";
    default:
        return d->mps == ANALYSIS_MPS_ON        ? "MPS"
               : d->ngreen                      ? "green contexts"
               : d->mps == ANALYSIS_MPS_UNKNOWN ? "MPS state unknown"
                                                : "shared";
    }
}

const char *view_gain_text(double lo, double hi, int about, char *buf, size_t n)
{
    char l[16], h[16];
    snprintf(l, sizeof l, "%.3g", lo);
    snprintf(h, sizeof h, "%.3g", hi);
    if (isnan(lo) || isnan(hi))
        snprintf(buf, n, "-");
    else if (!strcmp(l, h))
        snprintf(buf, n, "%s%sx", about ? "~" : "", h);
    else
        snprintf(buf, n, "%s-%sx", l, h);
    return buf;
}

/* Appends printf-style text to the string in buf (cap bytes), cut where it does not fit. */
__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t cap, const char *fmt,
                                                         ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* "; MPS would gain 1.16-1.49x" (or "~4.3x" when both bounds agree to 3 digits), with
 * "(estimated)" when an estimated stretch went into it, and the host-paced note when the GPU
 * idled ANALYSIS_HOST_PACED_IDLE or more of sm's measured interval (which names `tlview advise`:
 * identical host-paced runs moved 0.87-1.42x, tests/gpu/RESULTS.md); over the whole recording,
 * where the processes ran kernels together for less than VIEW_TOGETHER_SHARE of it (start-up
 * apart, a parent that only set up), the note says so and names --measure together. */
#define VIEW_TOGETHER_SHARE 0.9
static void gain_text(const analysis_device *d, const analysis_summary *sm, char *buf, size_t n)
{
    int64_t span = sm->measure_t1 - sm->measure_t0;
    char g[40];
    snprintf(buf, n, "; MPS would gain %s%s",
             view_gain_text(d->predicted_gain_low, d->predicted_gain, 1, g, sizeof g),
             d->gain_basis == ANALYSIS_BASIS_TURNS ? " (estimated)" : "");
    double idle = span > 0 ? (double)d->idle_in_ns / (double)span : 0;
    if (idle >= ANALYSIS_HOST_PACED_IDLE)
        append(buf, n,
               " at the hosts' pace (host-paced: the GPU idled %.0f%% of the measured interval "
               "with no kernel to run, so the processes' CPUs set the pace, which a GPU trace "
               "cannot time: `tlview advise` measures the gain instead)",
               100 * idle);
    if (idle >= ANALYSIS_HOST_PACED_IDLE && sm->measure == ANALYSIS_MEASURE_ALL && span > 0 &&
        sm->together_ns > 0 && (double)sm->together_ns < VIEW_TOGETHER_SHARE * (double)span)
        append(buf, n,
               "; the processes ran kernels together for %.0f%% of it (--measure together "
               "measures that time)",
               100.0 * (double)sm->together_ns / (double)span);
}

const char *view_no_kernels_text(const analysis *a, char *buf, size_t n)
{
    uint32_t np = analysis_get_run(a)->nprocesses;
    snprintf(buf, n, "No kernels in %u process%s.", np, np == 1 ? "" : "es");
    return buf;
}

/* "; kernels ready to run waited 300 ms for another context's time slice (44% of busy
 * time)" when the device's waiting_ns says so (launch API records), else nothing. */
static void waiting_text(const analysis_device *d, char *buf, size_t n)
{
    if (d->waiting_ns > 0 && d->busy_ns > 0)
        append(buf, n,
               "; kernels ready to run waited %.3g ms for another context's time slice (%.2g%% of "
               "busy time)",
               (double)d->waiting_ns / 1e6, 100.0 * (double)d->waiting_ns / (double)d->busy_ns);
}

/* "; the contexts took turns the way time-slicing does: 56 of 58 turns ended by a context
 * switch's idle gap or after a whole time slice, none quicker than a switch" (rule switch-turns)
 * or "; the GPU changed between contexts 571 of 573 times quicker than a context switch allows
 * (under 100 us): not time-sliced" (quick-turns), from the device's windows of that rule; or
 * "; one context's kernel started or ended within microseconds of another context's kernel 78
 * times, quicker than a context switch allows: not time-sliced" (quick-handovers), from the
 * device's quick handovers. */
static void signature_text(const analysis *a, uint32_t slot, analysis_rule r, char *buf, size_t n)
{
    const analysis_device *d = analysis_get_device(a, slot);
    const analysis_window *w = analysis_windows(a) + d->first_window;
    uint64_t turns = 0, quick = 0, marked = 0;
    for (uint64_t i = 0; i < d->nwindows; i++)
        if (w[i].rule == r) {
            turns += w[i].turns;
            quick += w[i].quick_turns;
            marked += w[i].switch_turns;
        }
    if (r == ANALYSIS_RULE_SWITCH_TURNS)
        append(buf, n,
               "; the contexts took turns the way time-slicing does: %llu of %llu turns ended by "
               "a context switch's idle gap or after a whole time slice, %s quicker than a switch",
               (unsigned long long)marked, (unsigned long long)turns,
               quick ? "almost none" : "none");
    else if (r == ANALYSIS_RULE_QUICK_TURNS)
        append(buf, n,
               "; the GPU changed between contexts %llu of %llu times quicker than a context "
               "switch allows: not time-sliced",
               (unsigned long long)quick, (unsigned long long)turns);
    else if (r == ANALYSIS_RULE_QUICK_HANDOVERS)
        append(buf, n,
               "; one context's kernel started or ended within microseconds of another context's "
               "kernel %llu times, quicker than a context switch allows: not time-sliced",
               (unsigned long long)d->quick_handovers);
}

/* "; in their SM partitions (2 MPS clients at 50% on 66 of 132 SMs each), which alone make
 * their kernels 2x slower than on the whole GPU: 2.1x against it" when most of the verdict's
 * overlapped kernel time ran in partitions; the stretch before it is then in the partitions
 * (contention beyond them). */
static void partition_text(const analysis *a, uint32_t slot, const analysis_verdict_time *bv,
                           char *buf, size_t n)
{
    char parts[160];
    if (!(bv->partition_share >= 0.5) || !view_partitions_text(a, slot, parts, sizeof parts)[0])
        return;
    append(buf, n, "; in their SM partitions (%s)", parts);
    if (isfinite(bv->partition_slowdown) && bv->partition_slowdown >= 1.005) {
        append(buf, n, ", which alone make their kernels %.3gx slower than on the whole GPU",
               bv->partition_slowdown);
        if (isfinite(bv->stretch) && bv->basis != ANALYSIS_BASIS_NONE)
            append(buf, n, ": %.3gx against it", bv->stretch * bv->partition_slowdown);
    }
}

void view_headline_of(const analysis *a, uint32_t slot, view_headline *h)
{
    const analysis_device *d = analysis_get_device(a, slot);
    const analysis_verdict_time *bv = &d->by_verdict[d->verdict];
    char w[160], st[160];
    who(d, w, sizeof w);
    h->verdict[0] = h->tail[0] = '\0';
    if (d->verdict < ANALYSIS_CONCURRENT) { /* no overlap, no context switches */
        snprintf(h->head, sizeof h->head, "GPU %u (%s): %s, no overlap between contexts", slot,
                 view_device_name(a, slot), w);
        if (d->max_kernels > 1)
            append(h->head, sizeof h->head,
                   "; up to %u kernels in flight at once (streams of one context)", d->max_kernels);
        waiting_text(d, h->head, sizeof h->head);
        if (d->waiting_ns > 0 && d->predicted_gain >= 1.005) {
            const analysis_summary *sm = analysis_get_summary(a);
            size_t n = strlen(h->head);
            gain_text(d, sm, h->head + n, sizeof h->head - n);
        }
        return;
    }
    /* an overlap window means busy time: the share is defined (and 0 where the contexts only
     * took turns) */
    if (d->overlap_ns > 0)
        snprintf(h->head, sizeof h->head, "GPU %u (%s): %s overlapped %.0f%% of busy time; ", slot,
                 view_device_name(a, slot), w, 100 * overlap_of_busy(d));
    else
        snprintf(h->head, sizeof h->head, "GPU %u (%s): %s, no overlap between contexts; ", slot,
                 view_device_name(a, slot), w);
    snprintf(h->verdict, sizeof h->verdict, "%s", analysis_verdict_name(d->verdict));
    for (char *p = h->verdict; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    stretch_text(bv, st, sizeof st);
    const char *y = why(d, bv->rule);
    switch (d->verdict) {
    case ANALYSIS_TIME_SLICED: {
        if (d->overlap_ns > 0)
            snprintf(h->tail, sizeof h->tail, " (%s): %s%s", y, st,
                     bv->rule == ANALYSIS_RULE_ONE_AT_A_TIME ? ", one kernel's work at a time"
                                                             : "");
        else
            snprintf(h->tail, sizeof h->tail, " (%s):", y);
        if (d->switches >= 2 && (d->overlap_ns == 0 || bv->rule == ANALYSIS_RULE_TOOK_TURNS))
            append(h->tail, sizeof h->tail,
                   "%s the GPU switched between them %llu times without their kernels overlapping "
                   "(idle %.0f us at each switch: they took turns)",
                   d->overlap_ns > 0 ? "; and" : "", (unsigned long long)d->switches,
                   (double)d->switch_gap_ns / (double)d->switches / 1e3);
        signature_text(a, slot, bv->rule, h->tail, sizeof h->tail);
        waiting_text(d, h->tail, sizeof h->tail);
        if (d->predicted_gain >= 1.005) {
            const analysis_summary *sm = analysis_get_summary(a);
            size_t n = strlen(h->tail);
            gain_text(d, sm, h->tail + n, sizeof h->tail - n);
        }
        break;
    }
    case ANALYSIS_CONCURRENT:
        snprintf(h->tail, sizeof h->tail, " (%s): %s", y, st);
        signature_text(a, slot, bv->rule, h->tail, sizeof h->tail);
        break;
    case ANALYSIS_CONTENDED:
        snprintf(h->tail, sizeof h->tail, " (%s): %s, parallelism %.3g", y, st,
                 isfinite(bv->parallelism) ? bv->parallelism : 0.0);
        signature_text(a, slot, bv->rule, h->tail, sizeof h->tail);
        break;
    case ANALYSIS_QUEUED:
        snprintf(h->tail, sizeof h->tail,
                 " (%s): one kernel after another, overlapping only at handovers; %s there", y, st);
        signature_text(a, slot, bv->rule, h->tail, sizeof h->tail);
        break;
    default:
        if (bv->rule == ANALYSIS_RULE_ONE_AT_A_TIME)
            snprintf(h->tail, sizeof h->tail,
                     " (%s): one kernel's work at a time (parallelism %.3g, %s): time-sliced, or "
                     "MPS clients each filling the GPU; the timing shows neither a context "
                     "switch's marks nor turns quicker than one (a libcollect recording or "
                     "--assume-mps on|off decides)",
                     y, isfinite(bv->parallelism) ? bv->parallelism : 0.0, st);
        else
            snprintf(h->tail, sizeof h->tail, " (%s): no solo reference (give --baseline FILES)",
                     y);
        break;
    }
    partition_text(a, slot, bv, h->tail, sizeof h->tail);
}

const char *view_evidence(const analysis *a, uint32_t slot, char *buf, size_t n)
{
    const analysis_device *d = analysis_get_device(a, slot);
    buf[0] = '\0';
    if (d && d->verdict >= ANALYSIS_CONCURRENT) {
        analysis_rule r = d->by_verdict[d->verdict].rule;
        snprintf(buf, n, "rule %s: %s", analysis_rule_name(r), analysis_rule_text(r));
    }
    return buf;
}

json_t *view_headline_json(const analysis *a)
{
    json_t *arr = json_array();
    char line[sizeof(view_headline)];
    if (!arr)
        return NULL;
    if (!analysis_ndevices(a)) {
        if (json_array_append_new(arr, view_string(view_no_kernels_text(a, line, sizeof line))))
            goto fail;
    }
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        view_headline h;
        view_headline_of(a, i, &h);
        snprintf(line, sizeof line, "%s%s%s", h.head, h.verdict, h.tail);
        if (json_array_append_new(arr, view_string(line)))
            goto fail;
    }
    return arr;
fail:
    json_decref(arr);
    return NULL;
}

json_t *view_warnings_json(const analysis *a)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; arr && i < analysis_nwarnings(a); i++)
        if (json_array_append_new(arr, view_string(analysis_warning(a, i)))) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

const char *view_copy_name(const store_copy *c, char *buf, size_t n)
{
    static const char *const copy_kinds[] = {"",     "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                             "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    static const char *const mem_kinds[] = {"",      "Pageable", "Pinned",        "Device",
                                            "Array", "Managed",  "Device Static", "Managed Static"};
    if (c->type == STORE_COPY_MEMSET)
        snprintf(buf, n, c->kind && c->kind < 8 ? "Memset (%s)" : "Memset",
                 mem_kinds[c->kind < 8 ? c->kind : 0]);
    else
        snprintf(buf, n, c->kind && c->kind < 11 ? "Memcpy %s" : "Memcpy",
                 copy_kinds[c->kind < 11 ? c->kind : 0]);
    return buf;
}

json_t *view_summary_json(const analysis *a)
{
    const analysis_summary *s = analysis_get_summary(a);
    const store_run *run = analysis_get_run(a);
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "processes", json_integer(run->nprocesses), &bad);
    view_put(o, "kernels", json_integer((json_int_t)s->nkernels), &bad);
    view_put(o, "zero_length", json_integer((json_int_t)s->nzero), &bad);
    view_put(o, "referenced", json_integer((json_int_t)s->nreferenced), &bad);
    view_put(o, "t_begin", json_integer(s->t_begin), &bad);
    view_put(o, "t_end", json_integer(s->t_end), &bad);
    view_put(o, "span_ns", json_integer(s->nkernels ? s->t_end - s->t_begin : 0), &bad);
    view_put(o, "busy_ns", json_integer(s->busy_ns), &bad);
    view_put(o, "overlap_ns", json_integer(s->overlap_ns), &bad);
    view_put(o, "stretch", view_number(s->stretch), &bad);
    view_put(o, "predicted_gain", view_number(s->predicted_gain), &bad);
    view_put(o, "predicted_gain_low", view_number(s->predicted_gain_low), &bad);
    view_put(o, "gain_basis", json_string(analysis_basis_name(s->gain_basis)), &bad);
    view_put(o, "measure", json_string(analysis_measure_name(s->measure)), &bad);
    view_put(o, "measure_t0", json_integer(s->measure_t0), &bad);
    view_put(o, "measure_t1", json_integer(s->measure_t1), &bad);
    view_put(o, "measured_span_ns", json_integer(s->nkernels ? s->measure_t1 - s->measure_t0 : 0),
             &bad);
    view_put(o, "idle_in_ns", json_integer(s->idle_in_ns), &bad);
    view_put(o, "idle_share", view_number(s->idle_share), &bad);
    view_put(o, "host_paced", json_boolean(s->host_paced), &bad);
    view_put(o, "process_spans", json_integer(s->nproc_spans), &bad);
    view_put(o, "process_span_min_ns", json_integer(s->proc_span_min_ns), &bad);
    view_put(o, "process_span_max_ns", json_integer(s->proc_span_max_ns), &bad);
    view_put(o, "together_ns", json_integer(s->together_ns), &bad);
    char best[768], worst[768];
    view_put(o, "gain_bounds",
             view_gain_bound(a, 0, best, sizeof best)
                 ? json_pack("{s:s,s:s}", "best", best, "worst",
                             view_gain_bound(a, 1, worst, sizeof worst))
                 : json_null(),
             &bad);
    return view_done(o, bad);
}

/* The summed windows of one verdict on a device. */
static json_t *verdict_time_json(const analysis_verdict_time *bv)
{
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "windows", json_integer((json_int_t)bv->nwindows), &bad);
    view_put(o, "ns", json_integer(bv->ns), &bad);
    view_put(o, "share", view_number(bv->share), &bad);
    view_put(o, "stretch", view_number(bv->stretch), &bad);
    view_put(o, "basis", json_string(analysis_basis_name(bv->basis)), &bad);
    view_put(o, "contexts_in_flight", view_number(bv->contexts), &bad);
    view_put(o, "parallelism", view_number(bv->parallelism), &bad);
    view_put(o, "mps", json_boolean(bv->mps), &bad);
    view_put(o, "rule", json_string(analysis_rule_name(bv->rule)), &bad);
    view_put(o, "partition_share", view_number(bv->partition_share), &bad);
    view_put(o, "partition_slowdown", view_number(bv->partition_slowdown), &bad);
    return view_done(o, bad);
}

json_t *view_device_json(const analysis *a, uint32_t slot)
{
    const store_run *run = analysis_get_run(a);
    const analysis_device *d = analysis_get_device(a, slot);
    if (!d)
        return NULL;
    const store_device *sd = d->device != STORE_NONE ? &run->devices[d->device] : NULL;
    const analysis_verdict_time *bv = &d->by_verdict[d->verdict];
    json_t *o = json_object(), *byv = json_object();
    char ev[512];
    int bad = !o || !byv;
    if (bad) {
        json_decref(o);
        json_decref(byv);
        return NULL;
    }
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        if (d->by_verdict[v].nwindows)
            view_put(byv, analysis_verdict_name(v), verdict_time_json(&d->by_verdict[v]), &bad);
    view_put(o, "gpu", json_integer(slot), &bad);
    view_put(o, "uuid", view_string(sd ? sd->uuid : NULL), &bad);
    view_put(o, "name", view_string(sd ? sd->name : NULL), &bad);
    view_put(o, "sm_count", json_integer(analysis_device_sms(a, slot)), &bad);
    view_put(o, "kernels", json_integer((json_int_t)d->nkernels), &bad);
    view_put(o, "processes", json_integer(d->nprocesses), &bad);
    view_put(o, "contexts", json_integer(d->ncontexts), &bad);
    view_put(o, "green_contexts", json_integer(d->ngreen), &bad);
    view_put(o, "share_groups", json_integer(d->ngroups), &bad);
    view_put(o, "mps", json_string(analysis_mps_name(d->mps)), &bad);
    view_put(o, "t_begin", json_integer(d->t_begin), &bad);
    view_put(o, "t_end", json_integer(d->t_end), &bad);
    view_put(o, "span_ns", json_integer(d->t_end - d->t_begin), &bad);
    view_put(o, "busy_ns", json_integer(d->busy_ns), &bad);
    view_put(o, "overlap_ns", json_integer(d->overlap_ns), &bad);
    view_put(o, "idle_ns", json_integer(d->idle_ns), &bad);
    view_put(o, "overlap_of_busy", view_number(overlap_of_busy(d)), &bad);
    view_put(o, "max_processes", json_integer(d->max_processes), &bad);
    view_put(o, "max_contexts", json_integer(d->max_contexts), &bad);
    view_put(o, "max_kernels", json_integer(d->max_kernels), &bad);
    view_put(o, "switches", json_integer((json_int_t)d->switches), &bad);
    view_put(o, "switch_gap_ns", json_integer(d->switch_gap_ns), &bad);
    view_put(o, "turns", json_integer((json_int_t)d->turns), &bad);
    view_put(o, "quick_turns", json_integer((json_int_t)d->quick_turns), &bad);
    view_put(o, "switch_turns", json_integer((json_int_t)d->switch_turns), &bad);
    view_put(o, "idle_in_ns", json_integer(d->idle_in_ns), &bad);
    view_put(o, "waiting_ns", json_integer(d->waiting_ns), &bad);
    view_put(o, "verdict", json_string(analysis_verdict_name(d->verdict)), &bad);
    view_put(o, "rule", json_string(analysis_rule_name(bv->rule)), &bad);
    view_put(o, "evidence", view_string(view_evidence(a, slot, ev, sizeof ev)), &bad);
    view_put(o, "stretch", view_number(bv->stretch), &bad);
    view_put(o, "basis", json_string(analysis_basis_name(bv->basis)), &bad);
    view_put(o, "contexts_in_flight", view_number(bv->contexts), &bad);
    view_put(o, "parallelism", view_number(bv->parallelism), &bad);
    view_put(o, "partition_share", view_number(bv->partition_share), &bad);
    view_put(o, "partition_slowdown", view_number(bv->partition_slowdown), &bad);
    view_put(o, "predicted_gain", view_number(d->predicted_gain), &bad);
    view_put(o, "predicted_gain_low", view_number(d->predicted_gain_low), &bad);
    view_put(o, "gain_basis", json_string(analysis_basis_name(d->gain_basis)), &bad);
    view_put(o, "by_verdict", byv, &bad);
    view_put(o, "first_window", json_integer((json_int_t)d->first_window), &bad);
    view_put(o, "windows", json_integer((json_int_t)d->nwindows), &bad);
    return view_done(o, bad);
}

/* The device slot of window w (< analysis_nwindows): windows are grouped by slot in slot order,
 * so it is the last slot whose slice starts at or before w (a slot without windows, whose kernels
 * all had zero length, starts where the next one does). A binary search: a run may hold 100k
 * slots, and the report asks this of every window. */
static uint32_t window_slot(const analysis *a, uint64_t w)
{
    uint32_t lo = 0, hi = analysis_ndevices(a); /* the answer is in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (analysis_get_device(a, mid)->first_window <= w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

json_t *view_window_json(const analysis *a, uint64_t w)
{
    if (w >= analysis_nwindows(a))
        return NULL;
    const analysis_window *x = &analysis_windows(a)[w];
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "id", json_integer((json_int_t)w), &bad);
    view_put(o, "gpu", json_integer(window_slot(a, w)), &bad);
    view_put(o, "t0", json_integer(x->t0), &bad);
    view_put(o, "t1", json_integer(x->t1), &bad);
    view_put(o, "busy_ns", json_integer(x->busy_ns), &bad);
    view_put(o, "overlap_ns", json_integer(x->overlap_ns), &bad);
    view_put(o, "switches", json_integer(x->switches), &bad);
    view_put(o, "switch_gap_ns", json_integer(x->switch_gap_ns), &bad);
    view_put(o, "turns", json_integer(x->turns), &bad);
    view_put(o, "quick_turns", json_integer(x->quick_turns), &bad);
    view_put(o, "switch_turns", json_integer(x->switch_turns), &bad);
    view_put(
        o, "signature",
        json_string(analysis_signature_name(analysis_window_signature(x, analysis_get_options(a)))),
        &bad);
    view_put(o, "waiting_ns", json_integer(x->waiting_ns), &bad);
    view_put(o, "verdict", json_string(analysis_verdict_name(x->verdict)), &bad);
    view_put(o, "physics", json_string(analysis_physics_name(x->physics)), &bad);
    view_put(o, "rule", json_string(analysis_rule_name(x->rule)), &bad);
    view_put(o, "kernels", json_integer(x->nkernels), &bad);
    view_put(o, "max_processes", json_integer(x->max_processes), &bad);
    view_put(o, "max_contexts", json_integer(x->max_contexts), &bad);
    view_put(o, "contexts_in_flight", view_number(x->contexts), &bad);
    view_put(o, "groups_in_flight", view_number(x->groups), &bad);
    view_put(o, "stretch", view_number(x->stretch), &bad);
    view_put(o, "basis", json_string(analysis_basis_name(x->basis)), &bad);
    view_put(o, "parallelism", view_number(x->parallelism), &bad);
    view_put(o, "coverage", view_number(x->coverage), &bad);
    view_put(o, "overlap_share", view_number(x->overlap_share), &bad);
    view_put(o, "group_kernels", view_number(x->group_kernels), &bad);
    view_put(o, "own_share", view_number(x->own_share), &bad);
    view_put(o, "partition_share", view_number(x->partition_share), &bad);
    view_put(o, "partition_slowdown", view_number(x->partition_slowdown), &bad);
    view_put(o, "mps", json_boolean(x->mps), &bad);
    view_put(o, "mps_best_ns", json_integer(x->mps_best_ns), &bad);
    view_put(o, "mps_worst_ns", json_integer(x->mps_worst_ns), &bad);
    return view_done(o, bad);
}

json_t *view_process_json(const analysis *a, uint32_t p)
{
    const store_run *run = analysis_get_run(a);
    const analysis_process *ap = analysis_get_process(a, p);
    if (!ap)
        return NULL;
    const store_process *sp = &run->processes[p];
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "pid", json_integer(sp->pid), &bad);
    view_put(o, "host", view_string(sp->host), &bad);
    view_put(o, "file", view_string(sp->file), &bad);
    view_put(o, "source", view_string(sp->source), &bad);
    view_put(o, "run_id", view_string(sp->run_id), &bad);
    view_put(o, "complete", json_boolean(sp->complete), &bad);
    view_put(o, "error", view_string(sp->error), &bad);
    view_put(o, "kernels", json_integer((json_int_t)ap->nkernels), &bad);
    view_put(o, "referenced", json_integer((json_int_t)ap->nreferenced), &bad);
    view_put(o, "contexts", json_integer(ap->ncontexts), &bad);
    view_put(o, "kernel_ns", json_integer(ap->kernel_ns), &bad);
    view_put(o, "busy_ns", json_integer(ap->busy_ns), &bad);
    view_put(o, "overlap_ns", json_integer(ap->overlap_ns), &bad);
    view_put(o, "stretch", view_number(ap->stretch), &bad);
    view_put(o, "mps", json_string(analysis_mps_name(ap->mps)), &bad);
    store_rank rk;
    store_process_rank(sp, &rk);
    view_put(o, "rank", rk.rank >= 0 ? json_integer(rk.rank) : json_null(), &bad);
    view_put(o, "local_rank", rk.local_rank >= 0 ? json_integer(rk.local_rank) : json_null(), &bad);
    view_put(o, "world_size", rk.world_size > 0 ? json_integer(rk.world_size) : json_null(), &bad);
    view_put(o, "launcher", rk.launcher ? json_string(rk.launcher) : json_null(), &bad);
    return view_done(o, bad);
}

uint32_t view_context_slot(const analysis *a, store_idx c)
{
    return analysis_context_slot(a, c);
}

json_t *view_context_json(const analysis *a, uint32_t c)
{
    const store_run *run = analysis_get_run(a);
    if (c >= run->ncontexts)
        return NULL;
    const store_context *sc = &run->contexts[c];
    uint32_t slot = view_context_slot(a, c), part = analysis_context_sms(a, c);
    uint32_t whole = slot != UINT32_MAX ? analysis_device_sms(a, slot) : 0;
    uint32_t kind = sc->compute_api_kind;
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "pid", json_integer(run->processes[sc->process].pid), &bad);
    view_put(o, "process", json_integer(sc->process), &bad);
    view_put(o, "context", json_integer(sc->context_id), &bad);
    view_put(o, "gpu", slot != UINT32_MAX ? json_integer(slot) : json_null(), &bad);
    view_put(o, "mps", json_string(kind == 1 ? "off" : kind == 2 ? "on" : "unknown"), &bad);
    view_put(o, "green", json_boolean(sc->green), &bad);
    view_put(o, "parent", sc->green ? json_integer(sc->parent_id) : json_null(), &bad);
    view_put(o, "sm_count", part ? json_integer(part) : json_null(), &bad);
    view_put(o, "sm_share", part && whole ? view_number((double)part / whole) : json_null(), &bad);
    view_put(o, "thread_percentage", sc->thread_pct > 0 ? view_number(sc->thread_pct) : json_null(),
             &bad);
    return view_done(o, bad);
}

const char *view_partitions_text(const analysis *a, uint32_t slot, char *buf, size_t n)
{
    const store_run *run = analysis_get_run(a);
    uint32_t count = 0, k0 = 0, same = 1, whole = analysis_device_sms(a, slot);
    float pct0 = 0;
    int mps = 0, green = 0;
    buf[0] = '\0';
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        uint32_t k = analysis_context_sms(a, c);
        if (!k || view_context_slot(a, c) != slot)
            continue;
        if (!count++) {
            k0 = k;
            pct0 = run->contexts[c].thread_pct;
        } else if (k != k0 || run->contexts[c].thread_pct != pct0) {
            same = 0;
        }
        mps |= run->contexts[c].thread_pct > 0;
        green |= run->contexts[c].green;
    }
    if (!count)
        return buf;
    char at[32] = "";
    if (same && pct0 > 0)
        snprintf(at, sizeof at, " at %.3g%%", pct0);
    const char *what = mps && green ? "contexts" : mps ? "MPS client" : "green context";
    if (same)
        snprintf(buf, n, "%u %s%s%s on %u of %u SMs%s", count, what,
                 count == 1 || (mps && green) ? "" : "s", at, k0, whole, count > 1 ? " each" : "");
    else
        snprintf(buf, n, "%u %s%s on partitions of the %u SMs", count, what,
                 count == 1 || (mps && green) ? "" : "s", whole);
    return buf;
}

json_t *view_capture_json(const analysis *a, uint32_t i)
{
    const store_run *run = analysis_get_run(a);
    if (i >= run->ncaptures)
        return NULL;
    const store_capture *c = &run->captures[i];
    const store_process *sp = &run->processes[c->process];
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "pid", json_integer(sp->pid), &bad);
    view_put(o, "file", view_string(sp->file), &bad);
    view_put(o, "name", view_string(c->name), &bad);
    view_put(o, "start", json_integer(c->start), &bad);
    view_put(o, "end", json_integer(c->end), &bad);
    view_put(o, "dur_ns", json_integer(c->end - c->start), &bad);
    view_put(o, "start_reason", view_string(c->start_reason), &bad);
    view_put(o, "end_reason", view_string(c->end_reason), &bad);
    return view_done(o, bad);
}

json_t *view_signature_json(const analysis *a, uint32_t i)
{
    const store_run *run = analysis_get_run(a);
    const analysis_signature *s = analysis_get_signature(a, i);
    if (!s)
        return NULL;
    const store_launch *l = &run->launches[s->launch];
    const store_string *str = s->name < run->nstrings ? &run->strings[s->name] : NULL;
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "name", view_string(str ? str->text : NULL), &bad);
    view_put(o, "demangled", view_string(str ? str->demangled : NULL), &bad);
    view_put(o, "grid",
             json_pack("[I,I,I]", (json_int_t)l->grid[0], (json_int_t)l->grid[1],
                       (json_int_t)l->grid[2]),
             &bad);
    view_put(o, "block",
             json_pack("[I,I,I]", (json_int_t)l->block[0], (json_int_t)l->block[1],
                       (json_int_t)l->block[2]),
             &bad);
    view_put(o, "registers", json_integer(l->registers), &bad);
    view_put(o, "smem", json_integer((json_int_t)l->static_smem + l->dynamic_smem), &bad);
    view_put(o, "source", json_string(analysis_ref_source_name(s->source)), &bad);
    view_put(o, "reference_ns", s->source ? json_real(s->reference_ns) : json_null(), &bad);
    view_put(o, "solo_instances", json_integer((json_int_t)s->nsolo), &bad);
    view_put(o, "kernels", json_integer((json_int_t)s->nkernels), &bad);
    view_put(o, "total_ns", json_integer(s->total_ns), &bad);
    view_put(o, "shortest_ns", json_integer(s->shortest_ns), &bad);
    view_put(o, "stretch", view_number(s->stretch), &bad);
    return view_done(o, bad);
}

json_t *view_comparison_json(const analysis *a, const analysis *b)
{
    analysis_comparison c;
    if (analysis_compare(a, b, &c) != ANALYSIS_OK)
        return NULL;
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "span_ns", json_integer(c.span_a), &bad);
    view_put(o, "compare_span_ns", json_integer(c.span_b), &bad);
    view_put(o, "measured_gain", view_number(c.measured_gain), &bad);
    view_put(o, "predicted_gain", view_number(c.predicted_gain), &bad);
    view_put(o, "predicted_gain_low", view_number(c.predicted_gain_low), &bad);
    view_put(o, "stretch", view_number(c.stretch_a), &bad);
    view_put(o, "compare_stretch", view_number(c.stretch_b), &bad);
    view_put(o, "predicted_gain_at_compare_stretch", view_number(c.predicted_gain_at_stretch_b),
             &bad);
    view_put(o, "common_signatures", json_integer(c.common_signatures), &bad);
    view_put(o, "duration_ratio", view_number(c.duration_ratio), &bad);
    return view_done(o, bad);
}

json_t *view_histogram_json(const analysis *a, uint32_t slot)
{
    uint64_t counts[HIST_BINS], noref = 0;
    if (analysis_stretch_histogram(a, slot, HIST_LO, HIST_HI, counts, HIST_BINS, &noref))
        return json_null();
    json_t *c = json_array();
    for (unsigned i = 0; c && i < HIST_BINS; i++)
        if (json_array_append_new(c, json_integer((json_int_t)counts[i]))) {
            json_decref(c);
            return NULL;
        }
    if (!c)
        return NULL;
    return json_pack("{s:f, s:f, s:i, s:s, s:o, s:I}", "lo", HIST_LO, "hi", HIST_HI, "bins",
                     HIST_BINS, "scale", "log2", "counts", c, "no_reference", (json_int_t)noref);
}

/* An array of n objects made by fn(a, i); NULL when one fails. */
static json_t *array_of(const analysis *a, uint64_t n, json_t *(*fn)(const analysis *, uint64_t))
{
    json_t *arr = json_array();
    for (uint64_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, fn(a, i))) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

static json_t *device_at(const analysis *a, uint64_t i)
{
    return view_device_json(a, (uint32_t)i);
}
static json_t *process_at(const analysis *a, uint64_t i)
{
    return view_process_json(a, (uint32_t)i);
}
static json_t *signature_at(const analysis *a, uint64_t i)
{
    return view_signature_json(a, (uint32_t)i);
}
static json_t *capture_at(const analysis *a, uint64_t i)
{
    return view_capture_json(a, (uint32_t)i);
}
static json_t *context_at(const analysis *a, uint64_t i)
{
    return view_context_json(a, (uint32_t)i);
}

json_t *view_report_json(const analysis *a, const analysis *cmp, const char *version)
{
    json_t *o = json_object();
    int bad = !o;
    if (bad)
        return NULL;
    view_put(o, "tlview", json_string(version), &bad);
    view_put(o, "headline", view_headline_json(a), &bad);
    view_put(o, "summary", view_summary_json(a), &bad);
    view_put(o, "warnings", view_warnings_json(a), &bad);
    view_put(o, "devices", array_of(a, analysis_ndevices(a), device_at), &bad);
    view_put(o, "windows", array_of(a, analysis_nwindows(a), view_window_json), &bad);
    view_put(o, "processes", array_of(a, analysis_nprocesses(a), process_at), &bad);
    view_put(o, "contexts", array_of(a, analysis_get_run(a)->ncontexts, context_at), &bad);
    view_put(o, "captures", array_of(a, analysis_get_run(a)->ncaptures, capture_at), &bad);
    view_put(o, "signatures", array_of(a, analysis_nsignatures(a), signature_at), &bad);
    view_put(o, "stretch_histogram", view_histogram_json(a, UINT32_MAX), &bad);
    if (cmp)
        view_put(o, "comparison", view_comparison_json(a, cmp), &bad);
    return view_done(o, bad);
}
