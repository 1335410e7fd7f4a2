/* advise_print.c: `tlview advise`'s result (the JSON object of cli/advise_result.c) as text for a
 * terminal and as CSV tables. Both only read that object, so a figure is printed under the name
 * and with the value the JSON gives it (the columns of each CSV table are its JSON keys). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise.h"
#include "cli.h"
#include "report.h"
#include "view.h"

static double num(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static long long integer(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* "9.94-10.2 (96.9%)" for KEY_lo, KEY_hi, KEY_level of o, `unit` after the numbers; "-". */
static const char *interval_text(const json_t *o, const char *key, const char *unit, char *buf,
                                 size_t n)
{
    char k[48];
    snprintf(k, sizeof k, "%s_lo", key);
    double lo = num(o, k);
    snprintf(k, sizeof k, "%s_hi", key);
    double hi = num(o, k);
    snprintf(k, sizeof k, "%s_level", key);
    double level = num(o, k);
    if (isnan(lo) || isnan(hi) || isnan(level))
        snprintf(buf, n, "-");
    else if (!strcmp(unit, "x"))
        snprintf(buf, n, "%.2f-%.2fx (%.1f%%)", lo, hi, floor(level * 1000) / 10);
    else {
        char a[32], b[32];
        snprintf(buf, n, "%.31s-%.31s (%.1f%%)", adv_figure_text(lo, a, sizeof a),
                 adv_figure_text(hi, b, sizeof b), floor(level * 1000) / 10);
    }
    return buf;
}

static const char *number_text(double v, const char *fmt, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

static const char *ns_text(const json_t *o, const char *key, char *buf, size_t n)
{
    json_t *v = json_object_get(o, key);
    return cli_fmt_ns(json_is_number(v) ? json_number_value(v) : NAN, buf, n);
}

/* "2m05s", "41.3s" */
static const char *duration_text(double ns, char *buf, size_t n)
{
    double s = ns / 1e9;
    if (s >= 60)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, n, "%.1fs", s);
    return buf;
}

static const char *outcome_color(const char *outcome, int color)
{
    if (!color)
        return "";
    if (!strcmp(outcome, "better"))
        return "\033[1;32m";
    if (!strcmp(outcome, "worse"))
        return "\033[1;31m";
    return "";
}

/* The first lines: what was measured, how long, the figure of merit, where the files are. */
static void print_head(FILE *out, const json_t *r)
{
    json_t *configs = json_object_get(r, "configs"), *runs = json_object_get(r, "runs");
    size_t nruns = json_array_size(runs), failed = 0, i;
    json_t *o;
    json_array_foreach(runs, i, o) failed += !json_is_true(json_object_get(o, "ok"));
    char took[32];
    fprintf(
        out, "tlview advise: %zu configurations, %lld round%s (%zu runs, %zu failed) in %s\n",
        json_array_size(configs), integer(r, "rounds_run"),
        integer(r, "rounds_run") == 1 ? "" : "s", nruns, failed,
        duration_text((double)(integer(r, "end_ns") - integer(r, "start_ns")), took, sizeof took));
    json_t *cmds = json_object_get(r, "commands");
    json_array_foreach(cmds, i, o)
    {
        fprintf(out, json_array_size(cmds) > 1 ? "command %zu:" : "command:", i);
        size_t k;
        json_t *a;
        json_array_foreach(o, k, a)
        {
            fputc(' ', out);
            cli_put_text(out, json_string_value(a));
        }
        fputc('\n', out);
    }
    if (!strcmp(str(r, "figure_of_merit"), "metric")) {
        fputs("figure of merit: the metric ", out);
        cli_put_text(out, str(r, "metric"));
        fputs(strcmp(str(r, "combine"), "slowest")
                  ? " summed over the copies (solo: their mean); higher is better\n"
                  : ", N times the slowest copy's (what copies doing the same work did together; "
                    "solo: their mean); higher is better\n",
              out);
    } else {
        fputs("figure of merit: copies completed per second of makespan (barrier to the last "
              "exit), per GPU; higher is better\n",
              out);
    }
    cli_msg(out, "folder: %s (each run's traces and copies' output in CONFIG/rROUND/)\n",
            str(r, "dir"));
}

/* The table of configurations: the statistics and the traces' verdict and prediction. */
static void print_configs(FILE *out, const json_t *r, int color)
{
    json_t *configs = json_object_get(r, "configs"), *c;
    size_t i;
    fprintf(out, "\n%-10s %4s %5s %10s %-24s %7s %-22s %8s %-9s %-12s %s\n", "config", "N", "runs",
            "median", "interval", "ratio", "interval", "p(Holm)", "outcome", "verdict",
            "predicted");
    json_array_foreach(configs, i, c)
    {
        char runs[24], median[32], mci[128], ratio[16], rci[128], p[16], pred[40];
        snprintf(runs, sizeof runs, "%lld/%lld", integer(c, "ok"), integer(c, "runs"));
        const char *outcome = str(c, "outcome");
        double lo = num(c, "predicted_gain_low"), hi = num(c, "predicted_gain");
        fprintf(out, "%-10s %4lld %5s %10s %-24s %7s %-22s %8s %s%-9s%s %-12s %s\n", str(c, "name"),
                integer(c, "procs"), runs, adv_figure_text(num(c, "median"), median, sizeof median),
                interval_text(c, "median", "", mci, sizeof mci),
                number_text(num(c, "ratio"), "%.2fx", ratio, sizeof ratio),
                interval_text(c, "ratio", "x", rci, sizeof rci),
                number_text(num(c, "p_holm"), "%.2g", p, sizeof p), outcome_color(outcome, color),
                outcome, color && *outcome_color(outcome, color) ? "\033[0m" : "",
                *str(c, "verdict") ? str(c, "verdict") : "-",
                isnan(lo) || strcmp(str(c, "kind"), "sliced")
                    ? "-"
                    : view_gain_text(lo, hi, 0, pred, sizeof pred));
    }
}

/* The GPU figures of each configuration's traces, and its times. */
static void print_gpu(FILE *out, const json_t *r)
{
    json_t *configs = json_object_get(r, "configs"), *c;
    size_t i;
    fprintf(out,
            "\nfrom the traces (medians of the traced runs) and the clock (of the successful "
            "runs):\n%-10s %4s %6s %8s %10s %8s %10s %6s %6s %10s %10s %7s %10s\n",
            "config", "N", "traced", "stretch", "busy", "overlap", "waiting", "idle", "paced",
            "makespan", "copy wall", "uneven", "N slowest");
    json_array_foreach(configs, i, c)
    {
        char stretch[16], busy[32], share[16], wait[32], idle[16], paced[16], span[32], wall[32],
            uneven[16], slowest[32];
        int traced = (int)integer(c, "traced");
        snprintf(paced, sizeof paced, "%lld/%d", integer(c, "host_paced_runs"), traced);
        fprintf(out, "%-10s %4lld %6d %8s %10s %8s %10s %6s %6s %10s %10s %7s %10s\n",
                str(c, "name"), integer(c, "procs"), traced,
                number_text(num(c, "stretch"), "%.2fx", stretch, sizeof stretch),
                traced ? ns_text(c, "busy_ns", busy, sizeof busy) : "-",
                number_text(100 * num(c, "overlap_of_busy"), "%.0f%%", share, sizeof share),
                traced ? ns_text(c, "waiting_ns", wait, sizeof wait) : "-",
                number_text(100 * num(c, "idle_share"), "%.0f%%", idle, sizeof idle),
                traced ? paced : "-", ns_text(c, "makespan_ns", span, sizeof span),
                ns_text(c, "copy_wall_ns", wall, sizeof wall),
                number_text(num(c, "uneven"), "%.2fx", uneven, sizeof uneven),
                adv_figure_text(num(c, "slowest_median"), slowest, sizeof slowest));
    }
}

void adv_print_text(FILE *out, const json_t *r, int color)
{
    print_head(out, r);
    print_configs(out, r, color);
    if (json_is_true(json_object_get(r, "trace")))
        print_gpu(out, r);
    json_t *rec = json_object_get(r, "recommendation");
    fprintf(out, "\n%srecommendation:%s ", color ? "\033[1m" : "", color ? "\033[0m" : "");
    cli_put_text(out, str(rec, "text"));
    fputc('\n', out);
    json_t *pred = json_object_get(r, "prediction"), *o;
    size_t i;
    json_array_foreach(pred, i, o)
    {
        char pt[40], gain[16], ci[128];
        double lo = num(o, "predicted_gain_low"), hi = num(o, "predicted_gain");
        const char *cover = str(o, "coverage");
        fprintf(out, "MPS gain at N=%lld: measured %s, interval %s; ", integer(o, "procs"),
                number_text(num(o, "measured_gain"), "%.2fx", gain, sizeof gain),
                interval_text(o, "measured", "x", ci, sizeof ci));
        if (!json_is_true(json_object_get(r, "trace")))
            fputs("no prediction: measured without traces (--no-trace)\n", out);
        else if (isnan(lo))
            fputs("no prediction: no time-sliced run left a trace\n", out);
        else {
            fprintf(out, "`tlview report` predicted %s from the time-sliced runs' traces%s%s%s",
                    view_gain_text(lo, hi, 0, pt, sizeof pt), *cover ? ": " : "", cover,
                    *cover ? " the predicted interval" : "");
            double mlo = num(o, "predicted_makespan_gain_low"),
                   mhi = num(o, "predicted_makespan_gain");
            char span[32], make[32], mt[40];
            if (!isnan(mlo))
                fprintf(out,
                        "; that is over the traces' span, %s of the %s makespan: with the rest "
                        "as it was, %s over the makespan%s%s%s",
                        ns_text(o, "measured_span_ns", span, sizeof span),
                        ns_text(o, "makespan_ns", make, sizeof make),
                        view_gain_text(mlo, mhi, 0, mt, sizeof mt),
                        *str(o, "makespan_coverage") ? ", the measured gain " : "",
                        str(o, "makespan_coverage"), *str(o, "makespan_coverage") ? " it" : "");
            fputc('\n', out);
        }
    }
    json_t *notes = json_object_get(r, "notes");
    json_array_foreach(notes, i, o)
    {
        fputs("note: ", out);
        cli_put_text(out, json_string_value(o));
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------ CSV */

static const char *const configs_cols[] = {"config",
                                           "name",
                                           "kind",
                                           "procs",
                                           "percentage",
                                           "default",
                                           "candidate",
                                           "runs",
                                           "ok",
                                           "failed",
                                           "median",
                                           "median_lo",
                                           "median_hi",
                                           "median_level",
                                           "ratio",
                                           "ratio_lo",
                                           "ratio_hi",
                                           "ratio_level",
                                           "p",
                                           "p_holm",
                                           "outcome",
                                           "makespan_ns",
                                           "copy_wall_ns",
                                           "uneven",
                                           "slowest_median",
                                           "slowest_ratio",
                                           "fastest_first_runs",
                                           "traced",
                                           "verdict",
                                           "stretch",
                                           "busy_ns",
                                           "overlap_ns",
                                           "overlap_of_busy",
                                           "waiting_ns",
                                           "idle_share",
                                           "host_paced_runs",
                                           "predicted_gain_low",
                                           "predicted_gain",
                                           NULL};
static const char *const runs_cols[] = {"round",
                                        "position",
                                        "config",
                                        "ok",
                                        "error",
                                        "figure",
                                        "makespan_ns",
                                        "copy_wall_ns",
                                        "uneven",
                                        "slowest_figure",
                                        "start_ns",
                                        "dir",
                                        "trace_files",
                                        "verdict",
                                        "stretch",
                                        "busy_ns",
                                        "overlap_ns",
                                        "waiting_ns",
                                        "idle_share",
                                        "host_paced",
                                        "predicted_gain_low",
                                        "predicted_gain",
                                        NULL};
static const char *const copies_cols[] = {"round",  "config",    "copy",   "command",
                                          "pid",    "exit_code", "signal", "wall_ns",
                                          "metric", "stdout",    "stderr", NULL};
static const char *const prediction_cols[] = {"procs",
                                              "sliced",
                                              "mps",
                                              "traced",
                                              "predicted_gain_low",
                                              "predicted_gain",
                                              "measured_gain",
                                              "measured_lo",
                                              "measured_hi",
                                              "measured_level",
                                              "coverage",
                                              "measured_span_ns",
                                              "makespan_ns",
                                              "predicted_makespan_gain_low",
                                              "predicted_makespan_gain",
                                              "makespan_coverage",
                                              "host_paced_runs",
                                              NULL};

static const char *const *table_cols(const char *table)
{
    if (!strcmp(table, "configs"))
        return configs_cols;
    if (!strcmp(table, "runs"))
        return runs_cols;
    if (!strcmp(table, "copies"))
        return copies_cols;
    if (!strcmp(table, "prediction"))
        return prediction_cols;
    return NULL;
}

int adv_csv_table(const char *table)
{
    return table_cols(table) != NULL;
}

/* One row: the columns of `cols` from o, those before `from_parent` columns from `parent`. */
static void csv_row(FILE *out, const char *const *cols, const json_t *parent, int nparent,
                    const json_t *o)
{
    for (int k = 0; cols[k]; k++) {
        if (k)
            fputc(',', out);
        report_csv_field(out, json_object_get(k < nparent ? parent : o, cols[k]));
    }
    fputc('\n', out);
}

int adv_print_csv(FILE *out, const json_t *r, const char *table)
{
    const char *const *cols = table_cols(table);
    if (!cols)
        return -1;
    for (int k = 0; cols[k]; k++)
        fprintf(out, "%s%s", k ? "," : "", cols[k]);
    fputc('\n', out);
    int copies = !strcmp(table, "copies");
    json_t *rows = json_object_get(r, copies ? "runs" : table), *o;
    size_t i;
    json_array_foreach(rows, i, o)
    {
        if (!copies) {
            csv_row(out, cols, NULL, 0, o);
            continue;
        }
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(o, "copies"), k, c) csv_row(out, cols, o, 2, c);
    }
    return 0;
}
