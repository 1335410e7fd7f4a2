/* range.c: the verdicts on a part of a run: the one parser of --from/--to times, the lookup of
 * --range NAME among the captured and NVTX ranges, and cli_restrict(), which replaces the run by
 * its copy cut to that range (store_run_restrict) so that the analysis, unchanged, judges only
 * what was in flight there. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_time(const char *text, int64_t *pNs, int *pRelative)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {{"ns", 1},           {"us", 1000},         {"ms", 1000000},
                 {"s", 1000000000},   {"min", 60000000000}, {"m", 60000000000},
                 {"h", 3600000000000}};
    const char *p = text;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    __int128 digits = 0, scale = 1; /* the number is digits / scale */
    int ndigits = 0, dot = 0;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
        if (*p == '.') {
            dot = 1;
            continue;
        }
        if (++ndigits > 30) /* beyond any time tlview holds, and __int128 stays exact */
            return -1;
        digits = digits * 10 + (*p - '0');
        if (dot)
            scale *= 10;
    }
    if (!ndigits)
        return -1;
    __int128 ns;
    int relative = *p != 0;
    if (!relative) { /* a bare number: absolute ns on the common axis, whole only */
        if (dot)
            return -1;
        ns = digits;
    } else {
        size_t u = 0;
        while (u < sizeof units / sizeof *units && strcmp(p, units[u].name))
            u++;
        if (u == sizeof units / sizeof *units)
            return -1;
        /* to the nearest ns: 1.0000000005s is 1000000001 ns */
        ns = (digits * units[u].ns * 2 + scale) / (scale * 2);
    }
    if (ns > STORE_TIME_MAX)
        return -1;
    *pNs = (int64_t)(neg ? -ns : ns);
    *pRelative = relative;
    return 0;
}

/* Adds each distinct name of the captured ranges (then the NVTX ranges) to buf, up to n bytes,
 * for the message that says which names there are. */
static void list_names(const store_run *run, char *buf, size_t n)
{
    size_t len = 0;
    int count = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < run->ncaptures && len + 1 < n; i++) {
        const char *name = run->captures[i].name;
        int seen = !name;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = run->captures[j].name && !strcmp(run->captures[j].name, name);
        if (!seen) {
            snprintf(buf + len, n - len, "%s'%s'", count++ ? ", " : "", name);
            len += strlen(buf + len);
        }
    }
    if (!count)
        snprintf(buf, n, "none");
}

const char *cli_fmt_time(int64_t ns, char *buf, size_t n)
{
    uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
    int len =
        snprintf(buf, n, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000),
                 (unsigned long long)(a % 1000000000 + 500) / 1000);
    if (len <= 0 || (size_t)len >= n)
        return buf;
    /* 1000000 us after rounding: carry into the seconds */
    if (a % 1000000000 >= 999999500)
        len = snprintf(buf, n, "%s%llu.000000", ns < 0 ? "-" : "",
                       (unsigned long long)(a / 1000000000 + 1));
    while (len > 0 && buf[len - 1] == '0')
        buf[--len] = 0;
    if (len > 0 && buf[len - 1] == '.')
        buf[--len] = 0;
    if ((size_t)len + 2 <= n)
        memcpy(buf + len, "s", 2);
    return buf;
}

const char *cli_range_text(const cli_range *r, char *buf, size_t n)
{
    char b0[32], b1[32];
    cli_fmt_time(r->t0 - r->origin, b0, sizeof b0);
    cli_fmt_time(r->t1 - r->origin, b1, sizeof b1);
    if (r->name)
        snprintf(buf, n, "the %s range '%s' (%s to %s)", r->kind[0] == 'c' ? "captured" : "NVTX",
                 r->name, b0, b1);
    else if (!r->has_to)
        snprintf(buf, n, "the range from %s", b0);
    else if (!r->has_from)
        snprintf(buf, n, "the range up to %s", b1);
    else
        snprintf(buf, n, "the range %s to %s", b0, b1);
    return buf;
}

int cli_range_resolve(const char *cmd, const cli_analysis_opts *o, const store_run *run,
                      cli_range *r)
{
    static const char *const kinds[] = {"time", "capture", "nvtx"};
    memset(r, 0, sizeof *r);
    r->origin = store_run_origin(run);
    r->baseline = o->nbaseline > 0;
    if (!o->from && !o->to && !o->range)
        return 0;
    store_range_ask ask = {.name = o->range, .has_from = o->from != NULL, .has_to = o->to != NULL};
    int rel;
    if (o->from) /* checked by cli_analysis_option() */
        cli_parse_time(o->from, &ask.from, &rel), ask.from_rel = (uint8_t)rel;
    if (o->to)
        cli_parse_time(o->to, &ask.to, &rel), ask.to_rel = (uint8_t)rel;
    int kind = STORE_RANGE_TIME;
    int rc = store_run_range(run, &ask, &r->t0, &r->t1, &kind);
    if (rc == STORE_RANGE_NONAME) {
        char names[512];
        list_names(run, names, sizeof names);
        cli_msg(stderr,
                "tlview %s: no captured or NVTX range named '%s' in the recording (captured "
                "ranges: %s)\n",
                cmd, o->range, names);
        return 1;
    }
    if (rc == STORE_RANGE_BEYOND) {
        cli_msg(stderr, "tlview %s: %s %s lies beyond the times tlview holds\n", cmd,
                r->t0 ? "--to" : "--from", r->t0 ? o->to : o->from);
        return 1;
    }
    if (rc == STORE_RANGE_ORDER) {
        cli_msg(stderr, "tlview %s: --to %s is not after --from %s\n", cmd, o->to, o->from);
        return 1;
    }
    r->set = 1;
    r->name = o->range;
    r->kind = kinds[kind];
    r->has_from = !o->range && o->from;
    r->has_to = !o->range && o->to;
    return 0;
}

int cli_restrict(const char *cmd, const cli_analysis_opts *o, store_run **pRun, store_run **pWhole,
                 analysis_options *opt, cli_range *r)
{
    *pWhole = NULL;
    if (cli_range_resolve(cmd, o, *pRun, r) != 0)
        return 1;
    if (!r->set)
        return 0;
    store_run *cut = NULL;
    if (store_run_restrict(*pRun, r->t0, r->t1, &cut) != STORE_OK) {
        fprintf(stderr, "tlview %s: out of memory\n", cmd);
        return 1;
    }
    if (!cut->nkernels && (*pRun)->nkernels) {
        const store_run *w = *pRun;
        int64_t last = w->kernels[0].end;
        for (uint64_t i = 0; i < w->nkernels; i++)
            last = w->kernels[i].end > last ? w->kernels[i].end : last;
        char what[256], b[32];
        cli_msg(stderr, "tlview %s: no kernel ran in %s (the kernels span 0s to %s)\n", cmd,
                cli_range_text(r, what, sizeof what), cli_fmt_time(last - r->origin, b, sizeof b));
    }
    if (!o->measure_set) { /* the gains over the range itself */
        if (r->name) {
            opt->measure = r->kind[0] == 'c' ? ANALYSIS_MEASURE_CAPTURE : ANALYSIS_MEASURE_RANGE;
            opt->measure_range = r->name;
        } else {
            opt->measure = ANALYSIS_MEASURE_SPAN;
            opt->measure_t0 = r->t0;
            opt->measure_t1 = r->t1;
        }
    }
    *pWhole = *pRun;
    *pRun = cut;
    return 0;
}
