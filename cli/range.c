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

int64_t cli_origin(const store_run *run)
{
    return run->nkernels ? run->kernels[0].start : run->t_begin;
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

/* The first start and last end, over every process, of the captured ranges named `name`
 * (kind "capture"), else of the NVTX ranges so named ("nvtx"). 0, or -1 when neither exists. */
static int find_named(const store_run *run, const char *name, cli_range *r)
{
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (uint32_t i = 0; i < run->ncaptures; i++) {
        const store_capture *c = &run->captures[i];
        if (c->name && !strcmp(c->name, name)) {
            t0 = c->start < t0 ? c->start : t0;
            t1 = c->end > t1 ? c->end : t1;
        }
    }
    r->kind = "capture";
    if (t1 < t0) {
        for (uint64_t i = 0; i < run->nranges; i++) {
            const store_range *g = &run->ranges[i];
            if (g->name < run->nstrings && !strcmp(run->strings[g->name].text, name)) {
                t0 = g->start < t0 ? g->start : t0;
                t1 = g->end > t1 ? g->end : t1;
            }
        }
        r->kind = "nvtx";
    }
    if (t1 < t0)
        return -1;
    r->t0 = t0;
    r->t1 = t1 > t0 ? t1 : t0 + 1; /* a range of no length still names its instant */
    return 0;
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
    memset(r, 0, sizeof *r);
    r->origin = cli_origin(run);
    r->baseline = o->nbaseline > 0;
    if (!o->from && !o->to && !o->range)
        return 0;
    r->set = 1;
    r->name = o->range;
    if (o->range) {
        if (find_named(run, o->range, r) == 0)
            return 0;
        char names[512];
        list_names(run, names, sizeof names);
        cli_msg(stderr,
                "tlview %s: no captured or NVTX range named '%s' in the recording (captured "
                "ranges: %s)\n",
                cmd, o->range, names);
        return 1;
    }
    r->kind = "time";
    const char *text[2] = {o->from, o->to};
    int64_t t[2] = {-STORE_TIME_MAX, STORE_TIME_MAX};
    for (int i = 0; i < 2; i++) {
        int rel;
        if (!text[i])
            continue;
        cli_parse_time(text[i], &t[i], &rel); /* checked by cli_analysis_option() */
        if (rel && !store_time_add(r->origin, t[i], &t[i])) {
            cli_msg(stderr, "tlview %s: %s %s lies beyond the times tlview holds\n", cmd,
                    i ? "--to" : "--from", text[i]);
            return 1;
        }
    }
    r->has_from = o->from != NULL;
    r->has_to = o->to != NULL;
    r->t0 = t[0];
    r->t1 = t[1];
    if (r->t1 <= r->t0) {
        cli_msg(stderr, "tlview %s: --to %s is not after --from %s\n", cmd, o->to, o->from);
        return 1;
    }
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
