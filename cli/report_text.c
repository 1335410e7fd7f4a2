/* report_text.c: `tlview report` for a terminal: the headline first, then aligned tables (run,
 * devices, windows by verdict, processes, signatures), warnings and the comparison. Every string
 * that came from a file (names, files, hosts, warnings quoting them) goes through cli/text.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "view.h"

const char *report_process_label(const store_run *run, uint32_t p, char *buf, size_t n)
{
    const store_process *sp = &run->processes[p];
    const char *file = sp->file ? strrchr(sp->file, '/') : NULL;
    file = file ? file + 1 : sp->file ? sp->file : "?";
    snprintf(buf, n, "%lld (%s)", (long long)sp->pid, file);
    return buf;
}

/* "2.31x" or "-" */
static const char *fmt_x(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2fx", v);
    return buf;
}

/* A number with 3 significant digits, or "-" when there is none (no overlap window). */
static const char *fmt_g(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.3g", v);
    return buf;
}

static void section(FILE *out, const char *title, int color)
{
    fprintf(out, "\n%s%s%s\n", color ? "\033[1m" : "", title, cli_color_reset(color));
}

static void text_devices(FILE *out, const analysis *a, int color)
{
    char b1[32], b2[32], b3[32], b4[32], b5[40], b6[32], b7[32], name[4 * 20 + 1];
    section(out, "Devices", color);
    fprintf(out, "  %-3s %-20s %9s %5s %4s %-7s %10s %10s %10s %-12s %9s %5s %5s %11s\n", "GPU",
            "name", "kernels", "procs", "ctx", "MPS", "busy", "overlap", "idle", "verdict",
            "stretch", "ctx", "par", "gain");
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        const analysis_verdict_time *bv = &d->by_verdict[d->verdict];
        fprintf(out, "  %-3u %s %9llu %5u %4u %-7s %10s %10s %10s %s%-12s%s %9s %5s %5s %11s\n", i,
                cli_text_cell(view_device_name(a, i), 20, name, sizeof name),
                (unsigned long long)d->nkernels, d->nprocesses, d->ncontexts,
                analysis_mps_name(d->mps), cli_fmt_ns((double)d->busy_ns, b1, sizeof b1),
                cli_fmt_ns((double)d->overlap_ns, b2, sizeof b2),
                cli_fmt_ns((double)d->idle_ns, b3, sizeof b3), cli_verdict_color(d->verdict, color),
                analysis_verdict_name(d->verdict), cli_color_reset(color),
                view_stretch_text(bv->stretch, bv->basis, b4, sizeof b4),
                fmt_g(bv->contexts, b6, sizeof b6), fmt_g(bv->parallelism, b7, sizeof b7),
                d->gain_basis
                    ? view_gain_text(d->predicted_gain_low, d->predicted_gain, 0, b5, sizeof b5)
                    : "-");
    }
}

static void text_windows(FILE *out, const analysis *a, int color)
{
    char b1[32], b2[32], b3[32], b4[32];
    int estimated = 0;
    section(out, "Time by verdict", color);
    fprintf(out, "  %-3s %-12s %8s %10s %7s %9s %6s %6s %5s  %s\n", "GPU", "verdict", "windows",
            "time", "share", "stretch", "ctx", "par", "MPS", "rule");
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++) {
            const analysis_verdict_time *bv = &d->by_verdict[v];
            if (!bv->nwindows)
                continue;
            int over = v >= ANALYSIS_CONCURRENT;
            estimated |= bv->basis > ANALYSIS_BASIS_REFERENCE;
            fprintf(out, "  %-3u %s%-12s%s %8llu %10s %6.1f%% %9s %6s %6s %5s  %s\n", i,
                    cli_verdict_color(v, color), analysis_verdict_name(v), cli_color_reset(color),
                    (unsigned long long)bv->nwindows, cli_fmt_ns((double)bv->ns, b1, sizeof b1),
                    100 * bv->share, view_stretch_text(bv->stretch, bv->basis, b2, sizeof b2),
                    fmt_g(bv->contexts, b3, sizeof b3), fmt_g(bv->parallelism, b4, sizeof b4),
                    over ? bv->mps ? "yes" : "no" : "-", over ? analysis_rule_name(bv->rule) : "-");
        }
    }
    if (estimated)
        fprintf(out, "  ~: estimated without solo references (--baseline FILES measures it)\n");
}

const char *report_rank_text(const store_process *p, char *buf, size_t n)
{
    store_rank r;
    if (!store_process_rank(p, &r)) {
        snprintf(buf, n, "-");
        return buf;
    }
    int len = snprintf(buf, n, "%lld", (long long)r.rank);
    if (len > 0 && (size_t)len < n && r.world_size > 0)
        len += snprintf(buf + len, n - (size_t)len, " of %lld", (long long)r.world_size);
    if (len > 0 && (size_t)len < n && r.local_rank >= 0)
        snprintf(buf + len, n - (size_t)len, ", local %lld", (long long)r.local_rank);
    return buf;
}

/* The processes, with a column of their ranks when the launcher's variables give any. */
static void text_processes(FILE *out, const analysis *a, int color)
{
    const store_run *run = analysis_get_run(a);
    char lbl[96], cell[4 * 32 + 1], b1[32], b2[32], b3[32], b4[32], rank[64];
    int ranked = 0;
    for (uint32_t p = 0; p < run->nprocesses && !ranked; p++) {
        store_rank r;
        ranked = store_process_rank(&run->processes[p], &r);
    }
    section(out, "Processes", color);
    fprintf(out, "  %-32s %9s %4s %10s %10s %10s %8s %7s%s\n", "pid (file)", "kernels", "ctx",
            "kernel time", "busy", "overlap", "stretch", "MPS", ranked ? "  rank" : "");
    for (uint32_t p = 0; p < analysis_nprocesses(a); p++) {
        const analysis_process *ap = analysis_get_process(a, p);
        fprintf(out, "  %s %9llu %4u %10s %10s %10s %8s %7s%s%s\n",
                cli_text_cell(report_process_label(run, p, lbl, sizeof lbl), 32, cell, sizeof cell),
                (unsigned long long)ap->nkernels, ap->ncontexts,
                cli_fmt_ns((double)ap->kernel_ns, b1, sizeof b1),
                cli_fmt_ns((double)ap->busy_ns, b2, sizeof b2),
                cli_fmt_ns((double)ap->overlap_ns, b3, sizeof b3),
                fmt_x(ap->stretch, b4, sizeof b4), ap->nkernels ? analysis_mps_name(ap->mps) : "-",
                ranked ? "  " : "",
                ranked ? report_rank_text(&run->processes[p], rank, sizeof rank) : "");
    }
}

/* The contexts that ran in an SM partition (green contexts, MPS clients limited by an active
 * thread percentage): how many of their GPU's SMs each could use. Nothing when none did. */
static void text_partitions(FILE *out, const analysis *a, int color)
{
    const store_run *run = analysis_get_run(a);
    char lbl[96], cell[4 * 32 + 1], kind[32];
    int any = 0;
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        uint32_t part = analysis_context_sms(a, c);
        if (!part)
            continue;
        uint32_t slot = view_context_slot(a, c);
        if (slot == UINT32_MAX)
            continue;
        if (!any++) {
            section(out, "Partitions (SMs each context could use)", color);
            fprintf(out, "  %-32s %-3s %5s %-20s %12s %7s\n", "pid (file)", "GPU", "ctx", "kind",
                    "SMs", "share");
        }
        const store_context *sc = &run->contexts[c];
        if (sc->green)
            snprintf(kind, sizeof kind, "green (of ctx %u)", sc->parent_id);
        else if (sc->thread_pct > 0)
            snprintf(kind, sizeof kind, "MPS client at %.3g%%", sc->thread_pct);
        else
            snprintf(kind, sizeof kind, "MPS client");
        uint32_t whole = analysis_device_sms(a, slot);
        char sms[32];
        snprintf(sms, sizeof sms, "%u of %u", part, whole);
        fprintf(out, "  %s %-3u %5u %-20s %12s %6.1f%%\n",
                cli_text_cell(report_process_label(run, sc->process, lbl, sizeof lbl), 32, cell,
                              sizeof cell),
                slot, sc->context_id, kind, sms, 100.0 * part / whole);
    }
}

/* 1 when capture range c is the one a default recording makes (TLVIEW_CAPTURE=all: unnamed,
 * from the first CUDA call to the exit): it says nothing the rest of the report does not. */
static int whole_run_capture(const store_capture *c)
{
    return !c->name && c->start_reason && !strcmp(c->start_reason, "start") && c->end_reason &&
           !strcmp(c->end_reason, "exit");
}

/* The capture ranges of the run (table capture: what libcollect recorded with TLVIEW_CAPTURE*,
 * TLVIEW_FLIGHT or `tlview capture`), times from `origin` as --from reads them; nothing when
 * every one is a default recording's whole run, and the first 16 when there are more (the CSV
 * and JSON list them all). */
static void text_captures(FILE *out, const analysis *a, int64_t origin, int color)
{
    enum { SHOWN = 16 };
    const store_run *run = analysis_get_run(a);
    char lbl[96], cell[4 * 32 + 1], name[4 * 16 + 1], b1[32], b2[32], b3[32];
    int all_default = 1;
    for (uint32_t i = 0; i < run->ncaptures && all_default; i++)
        all_default = whole_run_capture(&run->captures[i]);
    if (all_default)
        return;
    section(out, "Captured ranges", color);
    fprintf(out, "  %-32s %-16s %12s %12s %10s  %s\n", "pid (file)", "name", "start", "end",
            "duration", "opened / closed by");
    for (uint32_t i = 0; i < run->ncaptures && i < SHOWN; i++) {
        const store_capture *c = &run->captures[i];
        fprintf(out, "  %s %s %12s %12s %10s  ",
                cli_text_cell(report_process_label(run, c->process, lbl, sizeof lbl), 32, cell,
                              sizeof cell),
                cli_text_cell(c->name ? c->name : "-", 16, name, sizeof name),
                cli_fmt_time(c->start - origin, b1, sizeof b1),
                cli_fmt_time(c->end - origin, b2, sizeof b2),
                cli_fmt_ns((double)(c->end - c->start), b3, sizeof b3));
        cli_put_text(out, c->start_reason ? c->start_reason : "?");
        fputs(" / ", out);
        cli_put_text(out, c->end_reason ? c->end_reason : "never closed (killed inside)");
        fputc('\n', out);
    }
    if (run->ncaptures > SHOWN)
        fprintf(out, "  ... and %u more (--format csv --table captures lists them all)\n",
                run->ncaptures - SHOWN);
}

static const analysis *sort_ctx;

static int cmp_sig_total(const void *x, const void *y)
{
    const analysis_signature *a = analysis_get_signature(sort_ctx, *(const uint32_t *)x);
    const analysis_signature *b = analysis_get_signature(sort_ctx, *(const uint32_t *)y);
    return a->total_ns < b->total_ns ? 1 : a->total_ns > b->total_ns ? -1 : 0;
}

static void text_signatures(FILE *out, const analysis *a, int color, int top)
{
    const store_run *run = analysis_get_run(a);
    uint32_t n = analysis_nsignatures(a);
    uint32_t *order = malloc((n + 1) * sizeof *order);
    if (!order)
        return;
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    sort_ctx = a;
    qsort(order, n, sizeof *order, cmp_sig_total);
    char b1[32], b2[32], b3[32], dims[64], cell[4 * 40 + 1];
    section(out, "Kernels (by total time)", color);
    fprintf(out, "  %-40s %-22s %9s %10s %10s %-8s %8s\n", "name", "grid / block", "count", "total",
            "solo ref", "source", "stretch");
    for (uint32_t i = 0; i < n && (int)i < top; i++) {
        const analysis_signature *s = analysis_get_signature(a, order[i]);
        const store_launch *l = &run->launches[s->launch];
        const char *name = s->name < run->nstrings ? run->strings[s->name].demangled : NULL;
        snprintf(dims, sizeof dims, "%u,%u,%u/%u,%u,%u", l->grid[0], l->grid[1], l->grid[2],
                 l->block[0], l->block[1], l->block[2]);
        fprintf(out, "  %s %-22.22s %9llu %10s %10s %-8s %8s\n",
                cli_text_cell(name ? name : "?", 40, cell, sizeof cell), dims,
                (unsigned long long)s->nkernels, cli_fmt_ns((double)s->total_ns, b1, sizeof b1),
                s->source ? cli_fmt_ns(s->reference_ns, b2, sizeof b2) : "-",
                analysis_ref_source_name(s->source), fmt_x(s->stretch, b3, sizeof b3));
    }
    if (n > (uint32_t)top)
        fprintf(out, "  ... and %u more\n", n - (uint32_t)top);
    free(order);
}

/* The stretch histogram of all kernels, one bar per power of two. */
static void text_histogram(FILE *out, const analysis *a, int color)
{
    enum { NB = 7 };
    static const char *const label[NB] = {"<= 1.4x", "~2x", "~4x", "~8x", "~16x", "~32x", ">= 45x"};
    uint64_t counts[NB], noref = 0, max = 0;
    /* bins of one octave centred on 1, 2, 4, ...: log2 edges at -0.5, 0.5, ..., 6.5 */
    if (analysis_stretch_histogram(a, UINT32_MAX, 0.7071067811865476, 90.50966799187808, counts, NB,
                                   &noref) != 0)
        return;
    for (int i = 0; i < NB; i++)
        max = counts[i] > max ? counts[i] : max;
    if (!max)
        return;
    section(out, "Stretch of the kernels", color);
    for (int i = 0; i < NB; i++) {
        if (!counts[i])
            continue;
        int w = (int)((counts[i] * 40 + max - 1) / max);
        fprintf(out, "  %-8s %10llu ", label[i], (unsigned long long)counts[i]);
        for (int k = 0; k < w; k++)
            fputs("#", out);
        fputc('\n', out);
    }
    if (noref)
        fprintf(out, "  %-8s %10llu\n", "no ref", (unsigned long long)noref);
}

/* What the gains are measured over, for the comparison line. */
static const char *measure_text(const analysis_summary *s)
{
    switch (s->measure) {
    case ANALYSIS_MEASURE_RANGE: return "timed range";
    case ANALYSIS_MEASURE_TOGETHER: return "span with the processes running together";
    default: return "span";
    }
}

static void text_compare(FILE *out, const analysis *a, const analysis *cmp, int color)
{
    analysis_comparison c;
    char b1[32], b2[32], b3[32], b4[40];
    if (analysis_compare(a, cmp, &c) != 0)
        return;
    section(out, "Comparison (these files against --compare)", color);
    fprintf(out, "  %s %s -> %s: measured gain %s (predicted %s)\n",
            measure_text(analysis_get_summary(a)), cli_fmt_ns((double)c.span_a, b1, sizeof b1),
            cli_fmt_ns((double)c.span_b, b2, sizeof b2), fmt_x(c.measured_gain, b3, sizeof b3),
            view_gain_text(c.predicted_gain_low, c.predicted_gain, 0, b4, sizeof b4));
    const analysis_summary *sa = analysis_get_summary(a), *sb = analysis_get_summary(cmp);
    if (sa->nproc_spans > 1 && sb->nproc_spans > 1) {
        char b5[32];
        fprintf(out,
                "  processes' own spans %s to %s -> %s to %s: in the compared run the longest is "
                "%s the shortest (the measured gain counts the process that ends last)\n",
                cli_fmt_ns((double)sa->proc_span_min_ns, b1, sizeof b1),
                cli_fmt_ns((double)sa->proc_span_max_ns, b2, sizeof b2),
                cli_fmt_ns((double)sb->proc_span_min_ns, b3, sizeof b3),
                cli_fmt_ns((double)sb->proc_span_max_ns, b4, sizeof b4),
                fmt_x((double)sb->proc_span_max_ns / (double)sb->proc_span_min_ns, b5, sizeof b5));
    }
    fprintf(out, "  stretch %s -> %s; ", fmt_x(c.stretch_a, b1, sizeof b1),
            fmt_x(c.stretch_b, b2, sizeof b2));
    fprintf(out, "%u kernel signatures in common, median duration ratio %s\n", c.common_signatures,
            fmt_x(c.duration_ratio, b3, sizeof b3));
    if (isnan(c.predicted_gain_at_stretch_b))
        return;
    if (c.stretch_b > 1.1)
        fprintf(out,
                "  the compared run's kernels took %.2fx their solo time (they slowed each other "
                "down); at that speed the prediction is %.2fx (%.2fx assumed solo speed)\n",
                c.stretch_b, c.predicted_gain_at_stretch_b, c.predicted_gain);
    else
        fprintf(out,
                "  the compared run's kernels took %.2fx their solo time, as the prediction "
                "assumes\n",
                c.stretch_b);
}

void report_text(FILE *out, const analysis *a, const analysis *cmp, const cli_range *r, int color,
                 int top)
{
    const store_run *run = analysis_get_run(a);
    const analysis_summary *s = analysis_get_summary(a);
    char b1[32], b2[32];
    cli_headline(out, a, color);
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        char ev[512];
        if (*view_evidence(a, i, ev, sizeof ev))
            cli_msg(out, "  GPU %u %s\n", i, ev);
    }
    section(out, "Run", color);
    if (r->set) {
        char what[256];
        cli_msg(out,
                "  %s of the recording: the kernels in flight there, each whole; solo references "
                "from the %s\n",
                cli_range_text(r, what, sizeof what), r->baseline ? "baseline" : "whole recording");
    }
    fprintf(out,
            "  %u process%s, %u device%s, %llu kernels (%llu with a solo reference) over %s; "
            "busy %s\n",
            run->nprocesses, run->nprocesses == 1 ? "" : "es", analysis_ndevices(a),
            analysis_ndevices(a) == 1 ? "" : "s", (unsigned long long)s->nkernels,
            (unsigned long long)s->nreferenced,
            cli_fmt_ns((double)(s->t_end - s->t_begin), b1, sizeof b1),
            cli_fmt_ns((double)s->busy_ns, b2, sizeof b2));
    if (analysis_ndevices(a)) {
        text_devices(out, a, color);
        text_windows(out, a, color);
    }
    char bound[768];
    if (view_gain_bound(a, 0, bound, sizeof bound)) {
        section(out, "What bounds the predicted gain", color);
        fprintf(out, "  %s\n", bound);
        fprintf(out, "  %s\n", view_gain_bound(a, 1, bound, sizeof bound));
    }
    text_processes(out, a, color);
    text_partitions(out, a, color);
    if (run->ncaptures)
        text_captures(out, a, r->origin, color);
    if (analysis_nsignatures(a))
        text_signatures(out, a, color, top);
    text_histogram(out, a, color);
    if (cmp)
        text_compare(out, a, cmp, color);
    if (analysis_nwarnings(a)) {
        section(out, "Warnings", color);
        for (uint32_t i = 0; i < analysis_nwarnings(a); i++) {
            fprintf(out, "  %s!%s ", color ? "\033[1;33m" : "", cli_color_reset(color));
            cli_put_text(out, analysis_warning(a, i)); /* warnings quote files, hosts, run ids */
            fputc('\n', out);
        }
    }
}
