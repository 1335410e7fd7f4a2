/* advise_result.c: the result of `tlview advise` as one JSON object (adv_result_json): what was
 * asked, the order the runs were made in, every run and copy, and per configuration its figure's
 * median with its interval, its ratio to the default with its interval and p, the GPU figures of
 * its traces, the prediction's coverage and the recommendation with its evidence. The text and
 * CSV outputs print this object (cli/advise_print.c), so a figure has one name and one meaning
 * everywhere (cli/README.md lists them). DIR/advise.json holds it; adv_load() reads back what the
 * statistics start from, so `tlview advise --show DIR` recomputes the same report. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advise.h"
#include "cli.h"
#include "view.h"

#define FORMAT 1 /* advise.json's layout; adv_load() refuses another */

/* ------------------------------------------------------------ the model */

void adv_exp_free(adv_exp *e)
{
    for (int c = 0; c < e->ncmds; c++) {
        for (char **a = e->cmds[c]; a && *a; a++)
            free(*a);
        free(e->cmds[c]);
    }
    free(e->cmds);
    free(e->metric);
    for (int i = 0; i < e->nruns; i++)
        free(e->runs[i].copies);
    free(e->runs);
    memset(e, 0, sizeof *e);
}

void adv_config_name(adv_config *c, int kind, int procs, int percentage)
{
    c->kind = kind;
    c->procs = procs;
    c->percentage = kind == ADV_MPS_LIMIT ? percentage : 0;
    switch (kind) {
    case ADV_SOLO:
        snprintf(c->name, sizeof c->name, "solo");
        snprintf(c->id, sizeof c->id, "solo");
        break;
    case ADV_SLICED:
        snprintf(c->name, sizeof c->name, "sliced");
        snprintf(c->id, sizeof c->id, "n%d-sliced", procs);
        break;
    case ADV_MPS:
        snprintf(c->name, sizeof c->name, "mps");
        snprintf(c->id, sizeof c->id, "n%d-mps", procs);
        break;
    default:
        snprintf(c->name, sizeof c->name, "mps:%d", percentage);
        snprintf(c->id, sizeof c->id, "n%d-mps%d", procs, percentage);
        break;
    }
}

adv_run *adv_exp_add_run(adv_exp *e)
{
    if (e->nruns == e->cap_runs) {
        int cap = e->cap_runs ? 2 * e->cap_runs : 64;
        adv_run *v = realloc(e->runs, sizeof *v * (size_t)cap);
        if (!v)
            return NULL;
        e->runs = v;
        e->cap_runs = cap;
    }
    adv_run *r = &e->runs[e->nruns++];
    memset(r, 0, sizeof *r);
    r->figure = NAN;
    r->gpu.stretch = r->gpu.idle_share = NAN;
    r->gpu.predicted_gain_low = r->gpu.predicted_gain = NAN;
    return r;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case ADV_SOLO: return "solo";
    case ADV_SLICED: return "sliced";
    case ADV_MPS: return "mps";
    default: return "mps-limit";
    }
}

static int kind_of(const char *s)
{
    static const char *const names[] = {"solo", "sliced", "mps", "mps-limit"};
    for (int k = 0; s && k < 4; k++)
        if (!strcmp(s, names[k]))
            return k;
    return -1;
}

/* ------------------------------------------------------------ figures of a configuration */

/* The mean wall time of a run's copies, NaN when it has none. */
static double mean_wall(const adv_run *r)
{
    double sum = 0;
    for (int i = 0; i < r->ncopies; i++)
        sum += (double)r->copies[i].wall_ns;
    return r->ncopies ? sum / r->ncopies : NAN;
}

double adv_run_figure(const adv_exp *e, const adv_run *r)
{
    double sum = 0, least = INFINITY;
    for (int i = 0; i < r->ncopies; i++) {
        sum += r->copies[i].metric;
        least = r->copies[i].metric < least ? r->copies[i].metric : least;
    }
    if (!r->ncopies)
        return NAN;
    if (e->configs[r->config].kind == ADV_SOLO)
        return sum / r->ncopies;
    return e->slowest ? r->ncopies * least : sum;
}

int adv_combine(adv_exp *e, int slowest, char *err, size_t errlen)
{
    if (slowest && (!e->metric || e->ncmds != 1)) {
        snprintf(err, errlen,
                 "--combine slowest takes the rates of the copies of one command (--metric, no "
                 "':::'); %s",
                 !e->metric ? "this experiment's figure is copies per second of makespan"
                            : "this experiment ran several commands");
        return -1;
    }
    e->slowest = slowest;
    for (int i = 0; e->metric && i < e->nruns; i++)
        if (e->runs[i].ok)
            e->runs[i].figure = adv_run_figure(e, &e->runs[i]);
    return 0;
}

/* How evenly the copies of run r shared the GPU, where their rates compare: a successful run of
 * one command in two copies or more with --metric. *uneven: the fastest copy's rate over the
 * slowest's; *slowest: N times the slowest rate, what the copies did together if each did the same
 * work from a common start; *first: 1 when the fastest copy also had the shortest wall (it exited
 * first: the signature of the same work done at different rates). Returns 0 and NaNs otherwise. */
static int copies_spread(const adv_exp *e, const adv_run *r, double *uneven, double *slowest,
                         int *first)
{
    *uneven = *slowest = NAN;
    *first = 0;
    if (!r->ok || !e->metric || e->ncmds != 1 || r->ncopies < 2)
        return 0;
    int fast = 0, slow = 0, quick = 0;
    for (int i = 0; i < r->ncopies; i++) {
        const adv_copy *c = &r->copies[i];
        if (!(c->metric > 0) || !isfinite(c->metric))
            return 0;
        fast = c->metric > r->copies[fast].metric ? i : fast;
        slow = c->metric < r->copies[slow].metric ? i : slow;
        quick = c->wall_ns < r->copies[quick].wall_ns ? i : quick;
    }
    *uneven = r->copies[fast].metric / r->copies[slow].metric;
    *slowest = r->ncopies * r->copies[slow].metric;
    *first = fast == quick && fast != slow;
    return 1;
}

/* The values of one configuration's successful runs: its figures, makespans, mean copy walls, the
 * spread of its copies' rates (copies_spread), and the GPU figures of those with traces. */
typedef struct cfg_values {
    double *figure, *makespan, *wall; /* nok each */
    double *uneven, *slowest;         /* nok each; NaN where copies_spread() has none */
    int nok, nruns, nspread, first;   /* runs with a spread; those whose fastest exited first */
    double *stretch, *busy, *overlap, *share, *waiting, *idle, *low, *high, *span; /* ntraced */
    int ntraced, host_paced;
    const char *verdict; /* the most frequent verdict (first met on a tie); NULL when none */
} cfg_values;

static void values_free(cfg_values *v)
{
    free(v->figure);
    free(v->makespan);
    free(v->wall);
    free(v->uneven);
    free(v->slowest);
    free(v->stretch);
    free(v->busy);
    free(v->overlap);
    free(v->share);
    free(v->waiting);
    free(v->idle);
    free(v->low);
    free(v->high);
    free(v->span);
}

/* Fills *v for configuration c; returns 0, or -1 when out of memory. */
static int values_of(const adv_exp *e, int c, cfg_values *v)
{
    memset(v, 0, sizeof *v);
    size_t n = (size_t)(e->nruns ? e->nruns : 1);
    double **all[] = {&v->figure,  &v->makespan, &v->wall,    &v->uneven, &v->slowest,
                      &v->stretch, &v->busy,     &v->overlap, &v->share,  &v->waiting,
                      &v->idle,    &v->low,      &v->high,    &v->span};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!(*all[i] = malloc(sizeof(double) * n)))
            return -1;
    int best = 0;
    for (int i = 0; i < e->nruns; i++) {
        const adv_run *r = &e->runs[i];
        if (r->config != c)
            continue;
        v->nruns++;
        if (!r->ok)
            continue;
        int first;
        v->nspread += copies_spread(e, r, &v->uneven[v->nok], &v->slowest[v->nok], &first);
        v->first += first;
        v->figure[v->nok] = r->figure;
        v->makespan[v->nok] = (double)r->makespan_ns;
        v->wall[v->nok++] = mean_wall(r);
        if (!r->gpu.files)
            continue;
        int t = v->ntraced++;
        v->stretch[t] = r->gpu.stretch;
        v->busy[t] = (double)r->gpu.busy_ns;
        v->overlap[t] = (double)r->gpu.overlap_ns;
        v->share[t] = r->gpu.busy_ns > 0 ? (double)r->gpu.overlap_ns / r->gpu.busy_ns : NAN;
        v->waiting[t] = (double)r->gpu.waiting_ns;
        v->idle[t] = r->gpu.idle_share;
        v->low[t] = r->gpu.predicted_gain_low;
        v->high[t] = r->gpu.predicted_gain;
        v->span[t] = r->gpu.span_ns > 0 ? (double)r->gpu.span_ns : NAN;
        v->host_paced += r->gpu.host_paced != 0;
        int count = 0; /* how often this run's verdict occurs among the traced runs so far */
        for (int j = 0; j <= i; j++)
            count += e->runs[j].config == c && e->runs[j].ok && e->runs[j].gpu.files &&
                     !strcmp(e->runs[j].gpu.verdict, r->gpu.verdict);
        if (count > best) {
            best = count;
            v->verdict = r->gpu.verdict;
        }
    }
    return 0;
}

/* The median of the finite values of x[0..n) (NaN ones left out: a stretch without basis). */
static double median_finite(const double *x, int n)
{
    double *f = malloc(sizeof *f * (size_t)(n ? n : 1));
    int k = 0;
    for (int i = 0; f && i < n; i++)
        if (isfinite(x[i]))
            f[k++] = x[i];
    double m = f ? adv_median(f, k) : NAN;
    free(f);
    return m;
}

static json_t *ns_or_null(double v)
{
    return isfinite(v) ? json_integer((json_int_t)llround(v)) : json_null();
}

/* ------------------------------------------------------------ texts */

const char *adv_figure_text(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, n, "-");
    else if (a >= 1e-3 && a < 1e9) {
        int decimals = 3 - (int)floor(log10(a));
        snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, v);
    } else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

/* "mps:25 at N=4", "solo" */
static const char *config_words(const adv_config *c, char *buf, size_t n)
{
    if (c->kind == ADV_SOLO)
        snprintf(buf, n, "solo (one copy alone)");
    else
        snprintf(buf, n, "%s at N=%d", c->name, c->procs);
    return buf;
}

/* "0.0043", "0.31", "1" */
static const char *p_text(double p, char *buf, size_t n)
{
    if (isnan(p))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2g", p);
    return buf;
}

/* "1.48-1.56x (95% interval)" with the level it has. */
static const char *ratio_ci_text(adv_interval ci, char *buf, size_t n)
{
    if (isnan(ci.lo))
        snprintf(buf, n, "no interval");
    else
        snprintf(buf, n, "%.0f%% interval %.2f-%.2fx", floor(ci.level * 1000) / 10, ci.lo, ci.hi);
    return buf;
}

/* Appends to buf (n bytes, holding a text) what the interval of s, the best compared where none
 * was significantly better, says: as good within the margin, or too wide to tell and about the
 * rounds it would take (adv_decision.within_margin, rounds_to_tell). */
static void margin_text(const adv_decision *d, const adv_stat *s, char *buf, size_t n)
{
    size_t len = strlen(buf);
    if (len >= n || isnan(s->ratio_ci.lo))
        return;
    double pct = ADV_MARGIN * 100;
    if (d->within_margin)
        snprintf(buf + len, n - len,
                 "; its interval lies within %.0f%% of the default either way: as good as each "
                 "other here",
                 pct);
    else if (d->rounds_to_tell > 0)
        snprintf(
            buf + len, n - len,
            "; the runs vary too much to tell (its interval %.2f-%.2fx): in experiments "
            "resampled from these runs, %.2fx against the default is significant %.0f times in 10 "
            "with %d rounds (--repeat %d)",
            s->ratio_ci.lo, s->ratio_ci.hi, s->ratio, ADV_POWER * 10, d->rounds_to_tell,
            d->rounds_to_tell);
    else if (d->rounds_to_tell < 0)
        snprintf(
            buf + len, n - len,
            "; the runs vary too much to tell (its interval %.2f-%.2fx): in experiments "
            "resampled from these runs, %.2fx against the default is significant fewer than %.0f "
            "times in 10 even with %d rounds",
            s->ratio_ci.lo, s->ratio_ci.hi, s->ratio, ADV_POWER * 10, ADV_POWER_MAX_ROUNDS);
    else
        snprintf(buf + len, n - len,
                 "; its measured ratio is within %.0f%% of the default, but its interval "
                 "(%.2f-%.2fx) is too wide to rule out more",
                 pct, s->ratio_ci.lo, s->ratio_ci.hi);
}

/* The recommendation's one line, with its evidence. */
static void recommendation_text(const adv_exp *e, const adv_stat *st, const adv_decision *d,
                                const adv_arm *arms, int def, char *buf, size_t n)
{
    char rec[64], best[64], dflt[64], ci[64], p[16], p2[16];
    snprintf(dflt, sizeof dflt, "time-sliced, N=%d", e->configs[def].procs);
    int b = d->best;
    if (b >= 0)
        config_words(&e->configs[b], best, sizeof best);
    switch (d->reason) {
    case ADV_R_NO_DEFAULT:
        snprintf(buf, n,
                 "no recommendation: the default (%s) has no successful run to compare with", dflt);
        return;
    case ADV_R_BETTER:
    case ADV_R_SIMPLER: {
        int r = d->recommended;
        config_words(&e->configs[r], rec, sizeof rec);
        int len = snprintf(buf, n,
                           "run %s: %.2fx the default (%s), %s, p = %s (Holm, %d comparison%s), "
                           "%d and %d runs",
                           rec, st[r].ratio, dflt, ratio_ci_text(st[r].ratio_ci, ci, sizeof ci),
                           p_text(st[r].p_holm, p, sizeof p), d->ncompared,
                           d->ncompared == 1 ? "" : "s", arms[r].n, arms[def].n);
        if (d->reason == ADV_R_SIMPLER && len > 0 && (size_t)len < n)
            snprintf(buf + len, n - (size_t)len,
                     "; the best measured, %s (%.2fx), is not significantly better than it "
                     "(p = %s, Holm over %d): the simpler setup is as good",
                     best, st[b].ratio, p_text(d->p_simpler, p2, sizeof p2), d->nsimpler);
        else if (d->simpler >= 0 && len > 0 && (size_t)len < n)
            snprintf(buf + len, n - (size_t)len,
                     "; it beat the simpler %s too: %.2fx its median, p = %s (Holm over %d)",
                     config_words(&e->configs[d->simpler], best, sizeof best),
                     st[r].median / st[d->simpler].median, p_text(d->p_simpler, p2, sizeof p2),
                     d->nsimpler);
        return;
    }
    case ADV_R_DEFAULT_BEST:
        snprintf(buf, n,
                 "keep the default (%s): it had the highest median; the best of the others, %s, "
                 "was %.2fx (%s), p = %s (Holm, %d comparison%s)",
                 dflt, best, st[b].ratio, ratio_ci_text(st[b].ratio_ci, ci, sizeof ci),
                 p_text(st[b].p_holm, p, sizeof p), d->ncompared, d->ncompared == 1 ? "" : "s");
        margin_text(d, &st[b], buf, n);
        return;
    case ADV_R_THIN:
        snprintf(buf, n,
                 "keep the default (%s): too few runs to tell: with %d and %d runs no difference "
                 "can be significant at %.0f%% over %d comparison%s (at least %d runs each are "
                 "needed: --repeat %d); the best measured, %s, was %.2fx (%s)",
                 dflt, arms[b].n, arms[def].n, ADV_ALPHA * 100, d->ncompared,
                 d->ncompared == 1 ? "" : "s", d->repeats_needed, d->repeats_needed, best,
                 st[b].ratio, ratio_ci_text(st[b].ratio_ci, ci, sizeof ci));
        return;
    case ADV_R_NOT_SIGNIFICANT:
        if (b < 0)
            snprintf(buf, n,
                     "keep the default (%s): no other configuration had a successful run to "
                     "compare with",
                     dflt);
        else
            snprintf(buf, n,
                     "keep the default (%s): no configuration was significantly better; the best "
                     "measured, %s, was %.2fx (%s), p = %s (Holm, %d comparison%s)",
                     dflt, best, st[b].ratio, ratio_ci_text(st[b].ratio_ci, ci, sizeof ci),
                     p_text(st[b].p_holm, p, sizeof p), d->ncompared, d->ncompared == 1 ? "" : "s");
        if (b >= 0)
            margin_text(d, &st[b], buf, n);
        return;
    }
}

/* ------------------------------------------------------------ the result object */

/* KEY_lo, KEY_hi and KEY_level of an interval into o. */
static void interval_put(json_t *o, const char *key, adv_interval ci, int *bad)
{
    char k[48];
    snprintf(k, sizeof k, "%s_lo", key);
    view_put(o, k, view_number(ci.lo), bad);
    snprintf(k, sizeof k, "%s_hi", key);
    view_put(o, k, view_number(ci.hi), bad);
    snprintf(k, sizeof k, "%s_level", key);
    view_put(o, k, view_number(ci.level), bad);
}

static json_t *copy_json(const adv_exp *e, const adv_run *r, int i, int *bad)
{
    const adv_copy *c = &r->copies[i];
    json_t *o = json_object();
    char path[256];
    view_put(o, "copy", json_integer(i), bad);
    view_put(o, "command", json_integer(c->command), bad);
    view_put(o, "pid", json_integer(c->pid), bad);
    view_put(o, "exit_code", c->exit_code >= 0 ? json_integer(c->exit_code) : json_null(), bad);
    view_put(o, "signal", c->signal ? json_integer(c->signal) : json_null(), bad);
    view_put(o, "wall_ns", json_integer(c->wall_ns), bad);
    view_put(o, "metric", view_number(c->metric), bad);
    snprintf(path, sizeof path, "%s/r%d/copy%d.out", e->configs[r->config].id, r->round, i);
    view_put(o, "stdout", json_string(path), bad);
    snprintf(path, sizeof path, "%s/r%d/copy%d.err", e->configs[r->config].id, r->round, i);
    view_put(o, "stderr", json_string(path), bad);
    return o;
}

static json_t *run_json(const adv_exp *e, const adv_run *r, int *bad)
{
    json_t *o = json_object();
    char dir[64];
    const adv_gpu *g = &r->gpu;
    view_put(o, "round", json_integer(r->round), bad);
    view_put(o, "position", json_integer(r->position), bad);
    view_put(o, "config", json_string(e->configs[r->config].id), bad);
    view_put(o, "ok", json_boolean(r->ok), bad);
    view_put(o, "error", r->error[0] ? view_string(r->error) : json_null(), bad);
    view_put(o, "figure", view_number(r->figure), bad);
    view_put(o, "makespan_ns", json_integer(r->makespan_ns), bad);
    view_put(o, "copy_wall_ns", ns_or_null(mean_wall(r)), bad);
    double uneven, slowest;
    int first;
    copies_spread(e, r, &uneven, &slowest, &first);
    view_put(o, "uneven", view_number(uneven), bad);
    view_put(o, "slowest_figure", view_number(slowest), bad);
    view_put(o, "start_ns", json_integer(r->start_ns), bad);
    snprintf(dir, sizeof dir, "%s/r%d", e->configs[r->config].id, r->round);
    view_put(o, "dir", json_string(dir), bad);
    view_put(o, "trace_files", json_integer(g->files), bad);
    view_put(o, "verdict", g->files ? json_string(g->verdict) : json_null(), bad);
    view_put(o, "stretch", g->files ? view_number(g->stretch) : json_null(), bad);
    view_put(o, "busy_ns", g->files ? json_integer(g->busy_ns) : json_null(), bad);
    view_put(o, "overlap_ns", g->files ? json_integer(g->overlap_ns) : json_null(), bad);
    view_put(o, "waiting_ns", g->files ? json_integer(g->waiting_ns) : json_null(), bad);
    view_put(o, "idle_share", g->files ? view_number(g->idle_share) : json_null(), bad);
    view_put(o, "host_paced", g->files ? json_boolean(g->host_paced) : json_null(), bad);
    view_put(o, "predicted_gain_low", g->files ? view_number(g->predicted_gain_low) : json_null(),
             bad);
    view_put(o, "predicted_gain", g->files ? view_number(g->predicted_gain) : json_null(), bad);
    view_put(o, "measured_span_ns",
             g->files && g->span_ns > 0 ? json_integer(g->span_ns) : json_null(), bad);
    json_t *copies = json_array();
    for (int i = 0; i < r->ncopies; i++)
        view_append(copies, copy_json(e, r, i, bad), bad);
    view_put(o, "copies", copies, bad);
    return o;
}

/* The median of the slowest figures of v (copies_spread), NaN without any. */
static double slowest_median(const cfg_values *v)
{
    return median_finite(v->slowest, v->nok);
}

/* N times the slowest rate of configuration v over the default's (dv): the ratio on the reading
 * where the copies did the same work (copies_spread); NaN where either has no spread. */
static double slowest_ratio(const cfg_values *v, const cfg_values *dv)
{
    double a = slowest_median(v), b = slowest_median(dv);
    return b > 0 ? a / b : NAN;
}

static json_t *config_json(const adv_exp *e, int c, const cfg_values *v, const cfg_values *dv,
                           const adv_stat *s, int *bad)
{
    const adv_config *k = &e->configs[c];
    json_t *o = json_object();
    view_put(o, "config", json_string(k->id), bad);
    view_put(o, "name", json_string(k->name), bad);
    view_put(o, "kind", json_string(kind_name(k->kind)), bad);
    view_put(o, "procs", json_integer(k->procs), bad);
    view_put(o, "percentage", k->percentage ? json_integer(k->percentage) : json_null(), bad);
    view_put(o, "default", json_boolean(k->is_default), bad);
    view_put(o, "candidate", json_boolean(k->candidate), bad);
    view_put(o, "runs", json_integer(v->nruns), bad);
    view_put(o, "ok", json_integer(v->nok), bad);
    view_put(o, "failed", json_integer(v->nruns - v->nok), bad);
    view_put(o, "median", view_number(s->median), bad);
    interval_put(o, "median", s->median_ci, bad);
    view_put(o, "ratio", view_number(s->ratio), bad);
    interval_put(o, "ratio", s->ratio_ci, bad);
    view_put(o, "p", view_number(s->p), bad);
    view_put(o, "p_holm", view_number(s->p_holm), bad);
    view_put(o, "outcome", json_string(adv_outcome_name(s->outcome)), bad);
    view_put(o, "makespan_ns", ns_or_null(adv_median(v->makespan, v->nok)), bad);
    view_put(o, "copy_wall_ns", ns_or_null(median_finite(v->wall, v->nok)), bad);
    view_put(o, "uneven", view_number(median_finite(v->uneven, v->nok)), bad);
    view_put(o, "slowest_median", view_number(slowest_median(v)), bad);
    view_put(o, "slowest_ratio", view_number(slowest_ratio(v, dv)), bad);
    view_put(o, "fastest_first_runs", json_integer(v->first), bad);
    view_put(o, "traced", json_integer(v->ntraced), bad);
    view_put(o, "verdict", v->verdict ? json_string(v->verdict) : json_null(), bad);
    view_put(o, "stretch", view_number(median_finite(v->stretch, v->ntraced)), bad);
    view_put(o, "busy_ns", ns_or_null(adv_median(v->busy, v->ntraced)), bad);
    view_put(o, "overlap_ns", ns_or_null(adv_median(v->overlap, v->ntraced)), bad);
    view_put(o, "overlap_of_busy", view_number(median_finite(v->share, v->ntraced)), bad);
    view_put(o, "waiting_ns", ns_or_null(adv_median(v->waiting, v->ntraced)), bad);
    view_put(o, "idle_share", view_number(median_finite(v->idle, v->ntraced)), bad);
    view_put(o, "host_paced_runs", json_integer(v->host_paced), bad);
    view_put(o, "predicted_gain_low", view_number(median_finite(v->low, v->ntraced)), bad);
    view_put(o, "predicted_gain", view_number(median_finite(v->high, v->ntraced)), bad);
    return o;
}

/* The configuration of `kind` at `procs` copies, or -1. */
static int find_config(const adv_exp *e, int kind, int procs)
{
    for (int c = 0; c < e->nconfigs; c++)
        if (e->configs[c].kind == kind && e->configs[c].procs == procs)
            return c;
    return -1;
}

/* The gain g over the span S of a makespan M, as a gain over the makespan when the rest of it,
 * M - S, stays as it was: M / (M - S + S / g). */
static double over_makespan(double g, double span, double makespan)
{
    return makespan / (makespan - span + span / g);
}

/* Per N with both: what `report` predicted from the time-sliced runs' traces against what MPS
 * measured (median mps / median sliced, with its interval): the prediction's coverage. The
 * prediction is over the traces' measured span; where the figure is copies per second of
 * makespan and the span leaves ADV_MARGIN or more of the makespan out (start-up, teardown: time
 * no trace covers), it is also given over the makespan, the rest taken as it was, with its own
 * coverage. Adds the host-paced note to notes where half of the time-sliced runs or more were
 * host-paced. */
static json_t *prediction_json(const adv_exp *e, const cfg_values *v, json_t *notes, int *bad)
{
    json_t *arr = json_array();
    for (int c = 0; c < e->nconfigs; c++) {
        if (e->configs[c].kind != ADV_SLICED)
            continue;
        int m = find_config(e, ADV_MPS, e->configs[c].procs);
        if (m < 0)
            continue;
        const cfg_values *s = &v[c], *t = &v[m];
        double lo = median_finite(s->low, s->ntraced), hi = median_finite(s->high, s->ntraced);
        double ms = adv_median(s->figure, s->nok), mm = adv_median(t->figure, t->nok);
        double gain = ms > 0 ? mm / ms : NAN;
        adv_interval ci = adv_ratio_interval(s->figure, s->nok, t->figure, t->nok);
        const char *cover = NULL, *mcover = NULL;
        if (isfinite(gain) && isfinite(lo) && isfinite(hi))
            cover = gain < lo ? "below" : gain > hi ? "above" : "inside";
        double span = median_finite(s->span, s->ntraced), span_m = adv_median(s->makespan, s->nok);
        double mlo = NAN, mhi = NAN;
        if (!e->metric && lo > 0 && hi > 0 && span > 0 && span_m > 0 &&
            span <= (1 - ADV_MARGIN) * span_m) {
            mlo = over_makespan(lo, span, span_m);
            mhi = over_makespan(hi, span, span_m);
            if (isfinite(gain))
                mcover = gain < mlo ? "below" : gain > mhi ? "above" : "inside";
        }
        json_t *o = json_object();
        view_put(o, "procs", json_integer(e->configs[c].procs), bad);
        view_put(o, "sliced", json_string(e->configs[c].id), bad);
        view_put(o, "mps", json_string(e->configs[m].id), bad);
        view_put(o, "traced", json_integer(s->ntraced), bad);
        view_put(o, "predicted_gain_low", view_number(lo), bad);
        view_put(o, "predicted_gain", view_number(hi), bad);
        view_put(o, "measured_gain", view_number(gain), bad);
        interval_put(o, "measured", ci, bad);
        view_put(o, "coverage", cover ? json_string(cover) : json_null(), bad);
        view_put(o, "measured_span_ns", ns_or_null(span), bad);
        view_put(o, "makespan_ns", ns_or_null(span_m), bad);
        view_put(o, "predicted_makespan_gain_low", view_number(mlo), bad);
        view_put(o, "predicted_makespan_gain", view_number(mhi), bad);
        view_put(o, "makespan_coverage", mcover ? json_string(mcover) : json_null(), bad);
        view_put(o, "host_paced_runs", json_integer(s->host_paced), bad);
        view_append(arr, o, bad);
        if (s->host_paced && 2 * s->host_paced >= s->ntraced) { /* half of them or more */
            char note[512];
            snprintf(note, sizeof note,
                     "N=%d: the GPU was idle %.0f%% of the time-sliced runs (host-paced in %d of "
                     "%d traced runs): the copies' CPUs set the pace, which a GPU trace cannot "
                     "time, so the prediction assumes the hosts keep the pace they had; the "
                     "measured gain is the answer here",
                     e->configs[c].procs, 100 * median_finite(s->idle, s->ntraced), s->host_paced,
                     s->ntraced);
            view_append(notes, json_string(note), bad);
        }
    }
    return arr;
}

/* Adds a note where the copies of the recommended configuration (the best measured where that is
 * the default) shared the GPU unevenly: their rates ADV_MARGIN or more apart (the median of the
 * runs' copies_spread). The figure sums each copy's rate over its own time, which counts more than
 * the copies did together when each did the same work and the fast ones finished first; the note
 * gives the ratio on N times the slowest rate beside the summed one, and says which reading the
 * copies' exits support. */
static void uneven_note(const adv_exp *e, const cfg_values *v, const adv_stat *st,
                        const adv_decision *d, int def, json_t *notes, int *bad)
{
    int c = d->recommended != def ? d->recommended : d->best;
    if (c < 0 || c == def || !v[c].nspread || e->slowest)
        return;
    double uneven = median_finite(v[c].uneven, v[c].nok), ratio = slowest_ratio(&v[c], &v[def]);
    if (!(uneven >= 1 + ADV_MARGIN) || !isfinite(ratio))
        return;
    char words[64], note[1024], a[32], b[32];
    int len = snprintf(
        note, sizeof note,
        "%s: the copies' rates were uneven, the fastest %.2fx the slowest (median of %d runs), and "
        "the fastest copy exited first in %d of them%s. The figure sums each copy's rate over its "
        "own time: where each copy does the same work, that counts more than they did together, "
        "and N times the slowest rate is the measure (%s against the default's %s: %.2fx the "
        "default, against %.2fx summed%s; `tlview advise --show DIR --combine slowest` decides on "
        "it); where each copy measures over the same time, the sum is right",
        config_words(&e->configs[c], words, sizeof words), uneven, v[c].nspread, v[c].first,
        2 * v[c].first > v[c].nspread ? ", as copies that did the same work at different rates do"
                                      : "",
        adv_figure_text(slowest_median(&v[c]), a, sizeof a),
        adv_figure_text(slowest_median(&v[def]), b, sizeof b), ratio, st[c].ratio,
        ratio < 1 + ADV_MARGIN ? ", less than the margin of a gain" : "");
    if (len > 0)
        view_append(notes, json_string(note), bad);
}

/* Notes on what was measured: failed runs (each named), a stop before the end, runs without
 * traces. */
static void run_notes(const adv_exp *e, json_t *notes, int *bad)
{
    char note[1024];
    for (int i = 0; i < e->nruns; i++) {
        const adv_run *r = &e->runs[i];
        if (r->ok)
            continue;
        snprintf(note, sizeof note, "run %s/r%d failed (not counted): %s", e->configs[r->config].id,
                 r->round, r->error);
        view_append(notes, view_string(note), bad);
    }
    if (!strcmp(e->stopped_by, "budget")) {
        snprintf(note, sizeof note,
                 "the budget stopped the experiment after %d round%s: the next would not have "
                 "fitted",
                 e->rounds_run, e->rounds_run == 1 ? "" : "s");
        view_append(notes, json_string(note), bad);
    } else if (!strcmp(e->stopped_by, "SIGINT") || !strcmp(e->stopped_by, "SIGTERM")) {
        snprintf(note, sizeof note,
                 "interrupted by %s in round %d: the report holds the runs made until then",
                 e->stopped_by, e->rounds_run);
        view_append(notes, json_string(note), bad);
    } else if (!strcmp(e->stopped_by, "error")) {
        snprintf(note, sizeof note, "stopped: %s", e->stop_error);
        view_append(notes, view_string(note), bad);
    }
    int traced = 0, ok = 0;
    for (int i = 0; i < e->nruns; i++) {
        traced += e->runs[i].gpu.files > 0;
        ok += e->runs[i].ok;
    }
    if (e->trace && ok && !traced)
        view_append(notes,
                    json_string("no run left a trace file: the copies made no CUDA call, or CUDA "
                                "did not load the collector (their stderr says why): no GPU "
                                "figures"),
                    bad);
}

json_t *adv_result_json(const adv_exp *e, const char *version)
{
    int bad = 0, def = -1;
    json_t *root = json_object();
    cfg_values v[ADV_MAX_CONFIGS];
    adv_arm arms[ADV_MAX_CONFIGS];
    adv_stat st[ADV_MAX_CONFIGS];
    adv_decision d;
    int nv = 0;
    for (; nv < e->nconfigs; nv++) {
        if (values_of(e, nv, &v[nv]) != 0) {
            values_free(&v[nv]);
            bad = 1;
            break;
        }
        const adv_config *c = &e->configs[nv];
        arms[nv] =
            (adv_arm){v[nv].figure, v[nv].nok, c->procs, c->kind, c->percentage, c->candidate};
        if (c->is_default)
            def = nv;
    }
    if (bad || def < 0 || adv_decide(arms, e->nconfigs, def, st, &d) != 0)
        bad = 1;

    view_put(root, "tool", json_string("tlview advise"), &bad);
    view_put(root, "tlview", json_string(version), &bad);
    view_put(root, "format", json_integer(FORMAT), &bad);
    view_put(root, "dir", view_string(e->dir), &bad);
    json_t *cmds = json_array();
    for (int c = 0; c < e->ncmds; c++) {
        json_t *a = json_array();
        for (char **s = e->cmds[c]; *s; s++)
            view_append(a, view_string(*s), &bad);
        view_append(cmds, a, &bad);
    }
    view_put(root, "commands", cmds, &bad);
    view_put(root, "figure_of_merit", json_string(e->metric ? "metric" : "copies_per_s"), &bad);
    view_put(root, "metric", e->metric ? view_string(e->metric) : json_null(), &bad);
    view_put(root, "combine", e->metric ? json_string(e->slowest ? "slowest" : "sum") : json_null(),
             &bad);
    view_put(root, "trace", json_boolean(e->trace), &bad);
    view_put(root, "repeat", e->repeat ? json_integer(e->repeat) : json_null(), &bad);
    view_put(root, "budget_ns", e->budget_ns ? json_integer(e->budget_ns) : json_null(), &bad);
    view_put(root, "alpha", json_real(ADV_ALPHA), &bad);
    view_put(root, "start_ns", json_integer(e->start_ns), &bad);
    view_put(root, "end_ns", json_integer(e->end_ns), &bad);
    view_put(root, "rounds_run", json_integer(e->rounds_run), &bad);
    view_put(root, "stopped_by", e->stopped_by[0] ? json_string(e->stopped_by) : json_null(), &bad);
    view_put(root, "stop_error", e->stop_error[0] ? view_string(e->stop_error) : json_null(), &bad);
    json_t *order = json_array(), *round = NULL;
    for (int i = 0; i < e->nruns; i++) {
        if (!i || e->runs[i].round != e->runs[i - 1].round) {
            round = json_array();
            view_append(order, round, &bad);
        }
        view_append(round, json_string(e->configs[e->runs[i].config].id), &bad);
    }
    view_put(root, "order", order, &bad);
    json_t *configs = json_array(), *notes = json_array();
    for (int c = 0; !bad && c < e->nconfigs; c++)
        view_append(configs, config_json(e, c, &v[c], &v[def], &st[c], &bad), &bad);
    view_put(root, "configs", configs, &bad);
    json_t *runs = json_array();
    for (int i = 0; i < e->nruns; i++)
        view_append(runs, run_json(e, &e->runs[i], &bad), &bad);
    view_put(root, "runs", runs, &bad);
    if (!bad)
        view_put(root, "prediction", prediction_json(e, v, notes, &bad), &bad);
    if (!bad) {
        char text[2048];
        recommendation_text(e, st, &d, arms, def, text, sizeof text);
        json_t *rec = json_object();
        int r = d.recommended;
        view_put(rec, "config", r >= 0 ? json_string(e->configs[r].id) : json_null(), &bad);
        view_put(rec, "name", r >= 0 ? json_string(e->configs[r].name) : json_null(), &bad);
        view_put(rec, "procs", r >= 0 ? json_integer(e->configs[r].procs) : json_null(), &bad);
        view_put(rec, "reason", json_string(adv_reason_name(d.reason)), &bad);
        view_put(rec, "best", d.best >= 0 ? json_string(e->configs[d.best].id) : json_null(), &bad);
        view_put(rec, "ratio", r >= 0 ? view_number(st[r].ratio) : json_null(), &bad);
        if (r >= 0)
            interval_put(rec, "ratio", st[r].ratio_ci, &bad);
        view_put(rec, "p_holm", r >= 0 ? view_number(st[r].p_holm) : json_null(), &bad);
        view_put(rec, "comparisons", json_integer(d.ncompared), &bad);
        view_put(rec, "simpler",
                 d.simpler >= 0 ? json_string(e->configs[d.simpler].id) : json_null(), &bad);
        view_put(rec, "p_simpler", view_number(d.p_simpler), &bad);
        view_put(rec, "simpler_tried", json_integer(d.nsimpler), &bad);
        view_put(rec, "repeats_needed", json_integer(d.repeats_needed), &bad);
        view_put(rec, "within_margin", json_boolean(d.within_margin), &bad);
        view_put(rec, "rounds_to_tell", json_integer(d.rounds_to_tell), &bad);
        view_put(rec, "text", json_string(text), &bad);
        view_put(root, "recommendation", rec, &bad);
    }
    if (!bad)
        uneven_note(e, v, st, &d, def, notes, &bad);
    run_notes(e, notes, &bad);
    view_put(root, "notes", notes, &bad);
    for (int c = 0; c < nv; c++)
        values_free(&v[c]);
    return view_done(root, bad);
}

/* ------------------------------------------------------------ advise.json */

int adv_save(const adv_exp *e, const char *version, char *err, size_t errlen)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/advise.json", e->dir);
    json_t *j = adv_result_json(e, version);
    if (!j) {
        snprintf(err, errlen, "%s: out of memory building the result", path);
        return -1;
    }
    /* a new file of a name nobody could plant (mkstemp: O_EXCL), renamed over the old one */
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        json_decref(j);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    /* the default precision (17 digits): every figure reads back exactly */
    int rc = fchmod(fd, 0666 & ~mask) != 0 ||
             json_dumpfd(j, fd, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
             write(fd, "\n", 1) != 1;
    int why = errno;
    rc |= close(fd) != 0;
    json_decref(j);
    if (rc || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(rc ? why : errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* The reader's state: the file's name for messages, the first error. */
typedef struct reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} reader;

__attribute__((format(printf, 2, 3))) static void bad_file(reader *rd, const char *fmt, ...)
{
    if (rd->failed++)
        return;
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(rd->err, rd->errlen, "%s: %s", rd->path, why);
}

static json_int_t get_int(reader *rd, const json_t *o, const char *key, const char *where)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) {
        bad_file(rd, "%s: \"%s\" is not a whole number", where, key);
        return 0;
    }
    return json_integer_value(v);
}

/* A number or null (NaN). */
static double get_num(reader *rd, const json_t *o, const char *key, const char *where)
{
    json_t *v = json_object_get(o, key);
    if (json_is_null(v))
        return NAN;
    if (!json_is_number(v)) {
        bad_file(rd, "%s: \"%s\" is not a number", where, key);
        return NAN;
    }
    return json_number_value(v);
}

/* The index of the configuration named `id`, or -1 after bad_file(). */
static int config_index(reader *rd, const adv_exp *e, const char *id, const char *where)
{
    for (int c = 0; id && c < e->nconfigs; c++)
        if (!strcmp(e->configs[c].id, id))
            return c;
    bad_file(rd, "%s: configuration '%s' is not among \"configs\"", where, id ? id : "(none)");
    return -1;
}

static void load_configs(reader *rd, const json_t *root, adv_exp *e)
{
    json_t *arr = json_object_get(root, "configs");
    if (!json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > ADV_MAX_CONFIGS) {
        bad_file(rd, "\"configs\" is not a list of 1 to %d configurations", ADV_MAX_CONFIGS);
        return;
    }
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        char where[64];
        snprintf(where, sizeof where, "configs[%zu]", i);
        adv_config *c = &e->configs[e->nconfigs++];
        int kind = kind_of(json_string_value(json_object_get(o, "kind")));
        json_t *pct = json_object_get(o, "percentage");
        int procs = (int)get_int(rd, o, "procs", where);
        int percentage = json_is_integer(pct) ? (int)json_integer_value(pct) : 0;
        if (kind < 0 || procs < 1 || percentage < 0 || percentage > 100) {
            bad_file(rd, "%s: not a configuration (kind, procs, percentage)", where);
            return;
        }
        adv_config_name(c, kind, procs, percentage);
        const char *id = json_string_value(json_object_get(o, "config"));
        if (!id || strcmp(id, c->id)) {
            bad_file(rd, "%s: \"config\" should be '%s'", where, c->id);
            return;
        }
        c->is_default = json_is_true(json_object_get(o, "default"));
        c->candidate = json_is_true(json_object_get(o, "candidate"));
    }
}

static void load_run(reader *rd, const json_t *o, size_t i, adv_exp *e)
{
    char where[64];
    snprintf(where, sizeof where, "runs[%zu]", i);
    adv_run *r = adv_exp_add_run(e);
    if (!r) {
        bad_file(rd, "out of memory");
        return;
    }
    r->round = (int)get_int(rd, o, "round", where);
    r->position = (int)get_int(rd, o, "position", where);
    r->config = config_index(rd, e, json_string_value(json_object_get(o, "config")), where);
    r->ok = json_is_true(json_object_get(o, "ok"));
    const char *error = json_string_value(json_object_get(o, "error"));
    snprintf(r->error, sizeof r->error, "%s", error ? error : "");
    r->figure = get_num(rd, o, "figure", where);
    r->makespan_ns = get_int(rd, o, "makespan_ns", where);
    r->start_ns = get_int(rd, o, "start_ns", where);
    if (r->ok && !isfinite(r->figure))
        bad_file(rd, "%s: a successful run without a figure", where);
    adv_gpu *g = &r->gpu;
    g->files = (int)get_int(rd, o, "trace_files", where);
    if (g->files > 0) {
        const char *verdict = json_string_value(json_object_get(o, "verdict"));
        snprintf(g->verdict, sizeof g->verdict, "%s", verdict ? verdict : "?");
        g->stretch = get_num(rd, o, "stretch", where);
        g->busy_ns = get_int(rd, o, "busy_ns", where);
        g->overlap_ns = get_int(rd, o, "overlap_ns", where);
        g->waiting_ns = get_int(rd, o, "waiting_ns", where);
        g->idle_share = get_num(rd, o, "idle_share", where);
        g->host_paced = json_is_true(json_object_get(o, "host_paced"));
        g->predicted_gain_low = get_num(rd, o, "predicted_gain_low", where);
        g->predicted_gain = get_num(rd, o, "predicted_gain", where);
        json_t *span = json_object_get(o, "measured_span_ns"); /* absent before 2026-12-07 */
        g->span_ns = span && !json_is_null(span) ? get_int(rd, o, "measured_span_ns", where) : 0;
    }
    json_t *copies = json_object_get(o, "copies");
    size_t n = json_array_size(copies);
    if (!json_is_array(copies) || n > 1024) {
        bad_file(rd, "%s: \"copies\" is not a list of at most 1024 copies", where);
        return;
    }
    r->copies = calloc(n ? n : 1, sizeof *r->copies);
    if (!r->copies) {
        bad_file(rd, "out of memory");
        return;
    }
    r->ncopies = (int)n;
    for (size_t k = 0; k < n; k++) {
        json_t *c = json_array_get(copies, k);
        adv_copy *cp = &r->copies[k];
        json_t *code = json_object_get(c, "exit_code"), *sig = json_object_get(c, "signal");
        cp->command = (int)get_int(rd, c, "command", where);
        cp->pid = (int)get_int(rd, c, "pid", where);
        cp->exit_code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
        cp->signal = json_is_integer(sig) ? (int)json_integer_value(sig) : 0;
        cp->wall_ns = get_int(rd, c, "wall_ns", where);
        cp->metric = get_num(rd, c, "metric", where);
        if (cp->command < 0 || cp->command >= e->ncmds)
            bad_file(rd, "%s: copy %zu ran command %d, which is not among \"commands\"", where, k,
                     cp->command);
    }
}

static void load_commands(reader *rd, const json_t *root, adv_exp *e)
{
    json_t *arr = json_object_get(root, "commands");
    size_t n = json_array_size(arr);
    if (!json_is_array(arr) || n == 0 || n > ADV_MAX_CMDS) {
        bad_file(rd, "\"commands\" is not a list of 1 to %d commands", ADV_MAX_CMDS);
        return;
    }
    if (!(e->cmds = calloc(n, sizeof *e->cmds))) {
        bad_file(rd, "out of memory");
        return;
    }
    e->ncmds = (int)n;
    for (size_t c = 0; c < n; c++) {
        json_t *a = json_array_get(arr, c);
        size_t k = json_array_size(a);
        if (!json_is_array(a) || k == 0 || !(e->cmds[c] = calloc(k + 1, sizeof(char *)))) {
            bad_file(rd, "commands[%zu] is not a command (a list of its arguments)", c);
            return;
        }
        for (size_t i = 0; i < k; i++) {
            const char *s = json_string_value(json_array_get(a, i));
            if (!s || !(e->cmds[c][i] = strdup(s))) {
                bad_file(rd, "commands[%zu][%zu] is not a string", c, i);
                return;
            }
        }
    }
}

int adv_load(const char *dir, adv_exp *e, char *err, size_t errlen)
{
    char path[4200], why[512];
    memset(e, 0, sizeof *e);
    if (!realpath(dir, e->dir)) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/advise.json", dir);
    reader rd = {path, err, errlen, 0};
    FILE *f = store_fs_fopen_read(path, why, sizeof why);
    if (!f) {
        snprintf(err, errlen, "%s%s", why,
                 access(path, F_OK) != 0 ? " (not a folder `tlview advise -o` wrote)" : "");
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root) {
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
        return -1;
    }
    const char *tool = json_string_value(json_object_get(root, "tool"));
    if (!tool || strcmp(tool, "tlview advise"))
        bad_file(&rd, "not the result of tlview advise (\"tool\" is not \"tlview advise\")");
    else if (get_int(&rd, root, "format", "the file") != FORMAT)
        bad_file(&rd, "written in another layout (\"format\" %lld; this tlview reads %d)",
                 (long long)json_integer_value(json_object_get(root, "format")), FORMAT);
    if (!rd.failed)
        load_commands(&rd, root, e);
    if (!rd.failed)
        load_configs(&rd, root, e);
    int ndef = 0;
    for (int c = 0; !rd.failed && c < e->nconfigs; c++)
        ndef += e->configs[c].is_default;
    if (!rd.failed && ndef != 1)
        bad_file(&rd, "%d configurations are the default (one should be)", ndef);
    json_t *runs = json_object_get(root, "runs");
    if (!rd.failed && !json_is_array(runs))
        bad_file(&rd, "\"runs\" is not a list");
    size_t i;
    json_t *o;
    json_array_foreach(runs, i, o)
    {
        if (!rd.failed)
            load_run(&rd, o, i, e);
    }
    if (!rd.failed) {
        json_t *metric = json_object_get(root, "metric");
        if (json_is_string(metric) && !(e->metric = strdup(json_string_value(metric))))
            bad_file(&rd, "out of memory");
        json_t *combine = json_object_get(root, "combine"); /* absent before 2026-12-07: sum */
        e->slowest = json_is_string(combine) && !strcmp(json_string_value(combine), "slowest");
        if (combine && !json_is_null(combine) && !e->slowest &&
            !(json_is_string(combine) && !strcmp(json_string_value(combine), "sum")))
            bad_file(&rd, "\"combine\" is neither \"sum\" nor \"slowest\"");
        e->trace = json_is_true(json_object_get(root, "trace"));
        json_t *rep = json_object_get(root, "repeat"), *budget = json_object_get(root, "budget_ns");
        e->repeat = json_is_integer(rep) ? (int)json_integer_value(rep) : 0;
        e->budget_ns = json_is_integer(budget) ? json_integer_value(budget) : 0;
        e->rounds_run = (int)get_int(&rd, root, "rounds_run", "the file");
        e->start_ns = get_int(&rd, root, "start_ns", "the file");
        e->end_ns = get_int(&rd, root, "end_ns", "the file");
        const char *stop = json_string_value(json_object_get(root, "stopped_by"));
        const char *stop_error = json_string_value(json_object_get(root, "stop_error"));
        snprintf(e->stopped_by, sizeof e->stopped_by, "%s", stop ? stop : "");
        snprintf(e->stop_error, sizeof e->stop_error, "%s", stop_error ? stop_error : "");
    }
    json_decref(root);
    if (rd.failed) {
        adv_exp_free(e);
        return -1;
    }
    return 0;
}
