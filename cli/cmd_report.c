/* cmd_report.c: `tlview report FILES`: loads the trace files of one run, analyses them and
 * prints the headline and tables (report_text.c) or JSON/CSV for scripts (view/, report_csv.c).
 * tlview-summary: judge the overlap of the kernels: concurrent, time-sliced, contended, queued
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "view.h"

static const char usage_text[] =
    "usage: tlview report [--baseline FILE]... [--compare FILE]... [--format text|json|csv]\n"
    "                     [--table NAME] [--color auto|always|never] [--top N]\n"
    "                     [--assume-mps on|off] [--measure WHAT] [--separate-gpus]\n"
    "                     [--from T] [--to T] [--range NAME] FILES...\n"
    "\n"
    "Merges the trace files of one run (one per process, or folders of them) on one time axis\n"
    "and judges, per GPU, every window where kernels of several CUDA contexts were in flight.\n"
    "The GPU time-slices contexts, not processes: without MPS two contexts never run side by\n"
    "side, so their overlap is time-sliced whatever the timing; MPS clients, and the green\n"
    "contexts of one process, can. The verdicts: concurrent (side by side, not stretched),\n"
    "time-sliced (the contexts took turns), contended (side by side but slowing each other),\n"
    "queued (could share, but ran one after another, overlapping only at handovers), unknown\n"
    "(the files do not say whether MPS was on, and no solo reference decides). Stretch = the\n"
    "kernels' time over the time the same work took alone (the solo reference: the median of\n"
    "the instances of the same kernel, name, grid, block, shared memory, that ran while no other\n"
    "context had a kernel on the GPU), counted where it happened: while they overlapped.\n"
    "\n"
    "  -b, --baseline FILE  take the solo references from this run instead (e.g. one process\n"
    "                       alone); repeat for several files, or give a folder\n"
    "  -c, --compare FILE   a second run of the same work (e.g. with MPS): report the measured\n"
    "                       gain beside the predicted one, and the prediction redone at the\n"
    "                       stretch of that run's kernels; repeatable, or a "
    "folder\n" CLI_ASSUME_MPS_HELP CLI_MEASURE_HELP CLI_RANGE_HELP
    "  -f, --format FMT     text (default), json (the whole report) or csv (one table)\n"
    "  -t, --table NAME     the table for csv: processes (default), devices, windows, signatures,\n"
    "                       captures, contexts (each one's MPS state and SM "
    "partition)\n" CLI_COLOR_HELP
    "  -n, --top N          kernels listed in the text report (default 10)\n" CLI_SEPARATE_GPUS_HELP
        CLI_NO_CACHE_HELP "  -h, --help           this text\n"
    "\n"
    "The headline reads, per GPU: who overlapped how much of the busy time, the verdict holding\n"
    "most of it with why (no MPS, MPS, green contexts, MPS state unknown) and its evidence, and,\n"
    "when time-sliced, what MPS would gain, at worst and at best (analysis/README.md, Gains).\n"
    "A stretch marked ~ is estimated (no solo reference): from the number of contexts taking\n"
    "turns, or against each kernel's shortest run. Files from different hosts or runs are\n"
    "warned about. Rules, thresholds and their reasons: analysis/README.md; the JSON and CSV\n"
    "fields: view/README.md.\n"
    "\n" CLI_IMPORT_LIMITS_HELP
    "Exit status: 0 reported; 1 a file could not be read; 2 usage error.\n";

/* Options of one report. */
typedef struct report_opts {
    const char *format, *table, *color;
    int top;
    cli_analysis_opts an; /* --baseline, --compare, --separate-gpus, --assume-mps, --measure,
                             --from, --to, --range */
} report_opts;

static int parse(int argc, char **argv, report_opts *o)
{
    static const struct option longopts[] = {
        {"baseline", required_argument, 0, 'b'},
        {"compare", required_argument, 0, 'c'},
        {"format", required_argument, 0, 'f'},
        {"table", required_argument, 0, 't'},
        {"color", required_argument, 0, 'C'},
        {"colour", required_argument, 0, 'C'},
        {"top", required_argument, 0, 'n'},
        {"separate-gpus", no_argument, 0, 'G'},
        {"no-cache", no_argument, 0, CLI_OPT_NO_CACHE},
        {"assume-mps", required_argument, 0, 'M'},
        {"measure", required_argument, 0, 'm'},
        {"from", required_argument, 0, 'F'},
        {"to", required_argument, 0, 'T'},
        {"range", required_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "b:c:f:t:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
        case 'c':
        case CLI_OPT_NO_CACHE:
        case 'G':
        case 'M':
        case 'm':
        case 'F':
        case 'T':
        case 'R':
            if (cli_analysis_option("report", c, optarg, &o->an))
                return 2;
            break;
        case 'f': o->format = optarg; break;
        case 't': o->table = optarg; break;
        case 'C': o->color = optarg; break;
        case 'n':
            if (cli_parse_long(optarg, 0, INT_MAX, &v))
                return cli_usage_error("report", "--top wants a count, not '%s'", optarg);
            o->top = (int)v;
            break;
        case 'h': fputs(usage_text, stdout); return -1;
        default: return cli_usage_error("report", "unknown option");
        }
    }
    if (strcmp(o->format, "text") && strcmp(o->format, "json") && strcmp(o->format, "csv"))
        return cli_usage_error("report", "unknown format '%s' (text, json or csv)", o->format);
    if (report_csv_table(o->table) != 0)
        return cli_usage_error("report", "unknown table '%s'", o->table);
    if (cli_color(o->color, stdout) < 0)
        return cli_usage_error("report", "--color wants auto, always or never, not '%s'", o->color);
    if (optind >= argc)
        return cli_usage_error("report", "no trace files given");
    return 0;
}

/* The range of a report, for its JSON (view/README.md, "range"): kind, name, t0 and t1
 * (absolute ns, null for an end not given), the origin relative times count from, and where
 * the solo references came from ("recording": the whole recording; "baseline"). */
static json_t *report_range_json(const cli_range *r)
{
    json_t *o = json_object();
    int bad = !o;
    view_put(o, "kind", json_string(r->kind), &bad);
    view_put(o, "name", view_string(r->name), &bad);
    view_put(o, "t0", r->name || r->has_from ? json_integer(r->t0) : json_null(), &bad);
    view_put(o, "t1", r->name || r->has_to ? json_integer(r->t1) : json_null(), &bad);
    view_put(o, "origin_ns", json_integer(r->origin), &bad);
    view_put(o, "references", json_string(r->baseline ? "baseline" : "recording"), &bad);
    return view_done(o, bad);
}

/* Writes the report of `a` (and `cmp`) in the chosen format; `r` is the range of a's run
 * (r->set 0: the whole run). */
static int emit(const report_opts *o, const analysis *a, const analysis *cmp, const cli_range *r)
{
    if (!strcmp(o->format, "json")) {
        json_t *j = view_report_json(a, cmp, CLI_VERSION);
        int rc = !j || (r->set && json_object_set_new(j, "range", report_range_json(r)) != 0) ||
                 json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8)) != 0;
        json_decref(j);
        fputc('\n', stdout);
        if (rc)
            fprintf(stderr, "tlview report: out of memory writing JSON\n");
        return rc;
    }
    if (!strcmp(o->format, "csv")) {
        int rc = report_csv(stdout, a, o->table); /* the table was checked by parse() */
        if (rc)
            fprintf(stderr, "tlview report: out of memory writing CSV\n");
        return rc != 0;
    }
    report_text(stdout, a, cmp, r, cli_color(o->color, stdout), o->top);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    report_opts o = {0};
    o.format = "text";
    o.table = "processes";
    o.color = "auto";
    o.top = 10;
    store_run *run = NULL, *base = NULL, *other = NULL, *whole = NULL, *other_whole = NULL;
    analysis *a = NULL, *b = NULL;
    cli_range range, other_range;
    if (cli_analysis_opts_init(&o.an, "report", argc))
        return 1;
    int rc = parse(argc, argv, &o);
    if (rc != 0) {
        rc = rc < 0 ? 0 : rc; /* --help */
        goto out;
    }
    rc = 1;
    /* each run is cut to the range on its own (relative times from its own origin), and judged
     * with its own options: a range may set the measured interval */
    analysis_options opt = o.an.options, other_opt = o.an.options;
    if (cli_load(argc - optind, argv + optind, o.an.separate_gpus, &run) != 0 ||
        (o.an.nbaseline &&
         cli_load(o.an.nbaseline, o.an.baseline, o.an.separate_gpus, &base) != 0) ||
        (o.an.ncompare && cli_load(o.an.ncompare, o.an.compare, o.an.separate_gpus, &other) != 0))
        goto out;
    if (cli_restrict("report", &o.an, &run, &whole, &opt, &range) != 0 ||
        (other &&
         cli_restrict("report", &o.an, &other, &other_whole, &other_opt, &other_range) != 0))
        goto out;
    if (cli_analyse(run, base ? base : whole, &opt, &a) != 0 ||
        (other && cli_analyse(other, base ? base : other_whole, &other_opt, &b) != 0))
        goto out;
    rc = emit(&o, a, b, &range);
out:
    analysis_free(a);
    analysis_free(b);
    store_run_free(run);
    store_run_free(base);
    store_run_free(other);
    store_run_free(whole);
    store_run_free(other_whole);
    cli_analysis_opts_free(&o.an);
    return rc;
}
