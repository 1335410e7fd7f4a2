/* cmd_report.c: `tlview report FILES`: loads the trace files of one run, analyses them and
 * prints the headline and tables (report_text.c) or JSON/CSV for scripts (report_json.c).
 * tlview-summary: judge the overlap of the processes' kernels: concurrent, time-sliced, contended
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

static const char usage_text[] =
    "usage: tlview report [--baseline FILE]... [--compare FILE]... [--format text|json|csv]\n"
    "                     [--table NAME] [--color auto|always|never] [--top N]\n"
    "                     [--separate-gpus] FILES...\n"
    "\n"
    "Merges the trace files of one run (one per process, or folders of them) on one time axis\n"
    "and judges, per GPU, every window where kernels of several processes were in flight:\n"
    "concurrent (not stretched: really side by side, e.g. MPS), time-sliced (stretched about by\n"
    "the number of contexts, one context's work at a time), contended (stretched, under MPS or\n"
    "with real parallelism) or unknown (no solo reference). Stretch = a kernel's duration over\n"
    "its solo reference: the median of the instances of the same kernel (name, grid, block,\n"
    "shared memory) that ran while no other process had a kernel on the GPU.\n"
    "\n"
    "  -b, --baseline FILE  take the solo references from this run instead (e.g. one process\n"
    "                       alone); repeat for several files, or give a folder\n"
    "  -c, --compare FILE   a second run of the same work (e.g. with MPS): report the measured\n"
    "                       gain beside the predicted one, and the prediction redone at the\n"
    "                       slowdown of that run's kernels; repeatable, or a folder\n"
    "  -f, --format FMT     text (default), json (the whole report) or csv (one table)\n"
    "  -t, --table NAME     the table for csv: processes (default), devices, windows, signatures\n"
    "      --color WHEN     colour the text: auto (default: only on a terminal), always, never\n"
    "  -n, --top N          kernels listed in the text report (default 10)\n"
    "      --separate-gpus  files without GPU UUIDs: keep each process's GPUs apart instead of\n"
    "                       matching them by host, ordinal, name and memory\n"
    "  -h, --help           this text\n"
    "\n"
    "The headline reads, per GPU: how much of the busy time several processes overlapped, the\n"
    "verdict holding most of that time with its evidence (mean stretch, contexts in flight) and,\n"
    "when time-sliced, the most MPS could gain: with every kernel side by side at its solo\n"
    "speed, which MPS clients that slow each other down do not reach. Files from different\n"
    "hosts or runs are warned about. Thresholds and their reasons: analysis/README.md.\n"
    "\n"
    "Exit status: 0 reported; 1 a file could not be read; 2 usage error.\n";

/* Options of one report. */
typedef struct report_opts {
    char **baseline, **compare; /* files, counts below */
    int nbaseline, ncompare;
    const char *format, *table, *color;
    int top;
    int separate_gpus; /* --separate-gpus */
} report_opts;

static int parse(int argc, char **argv, report_opts *o)
{
    static const struct option longopts[] = {
        {"baseline", required_argument, 0, 'b'}, {"compare", required_argument, 0, 'c'},
        {"format", required_argument, 0, 'f'},   {"table", required_argument, 0, 't'},
        {"color", required_argument, 0, 'C'},    {"colour", required_argument, 0, 'C'},
        {"top", required_argument, 0, 'n'},      {"separate-gpus", no_argument, 0, 'G'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "b:c:f:t:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o->baseline[o->nbaseline++] = optarg; break;
        case 'c': o->compare[o->ncompare++] = optarg; break;
        case 'f': o->format = optarg; break;
        case 't': o->table = optarg; break;
        case 'C': o->color = optarg; break;
        case 'G': o->separate_gpus = 1; break;
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
    if (cli_color(o->color, stdout) < 0)
        return cli_usage_error("report", "--color wants auto, always or never, not '%s'", o->color);
    if (optind >= argc)
        return cli_usage_error("report", "no trace files given");
    return 0;
}

/* Writes the report of `a` (and `cmp`) in the chosen format. */
static int emit(const report_opts *o, const analysis *a, const analysis *cmp)
{
    if (!strcmp(o->format, "json")) {
        json_t *j = report_json(a, cmp);
        int rc = !j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8)) != 0;
        json_decref(j);
        fputc('\n', stdout);
        if (rc)
            fprintf(stderr, "tlview report: out of memory writing JSON\n");
        return rc;
    }
    if (!strcmp(o->format, "csv")) {
        if (report_csv(stdout, a, o->table) != 0)
            return cli_usage_error("report", "unknown table '%s'", o->table);
        return 0;
    }
    report_text(stdout, a, cmp, cli_color(o->color, stdout), o->top);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    report_opts o = {0};
    o.format = "text";
    o.table = "processes";
    o.color = "auto";
    o.top = 10;
    o.baseline = calloc((size_t)argc + 1, sizeof *o.baseline);
    o.compare = calloc((size_t)argc + 1, sizeof *o.compare);
    store_run *run = NULL, *base = NULL, *other = NULL;
    analysis *a = NULL, *b = NULL;
    int rc = 1;
    if (!o.baseline || !o.compare) {
        fprintf(stderr, "tlview report: out of memory\n");
        goto out;
    }
    if ((rc = parse(argc, argv, &o)) != 0) {
        rc = rc < 0 ? 0 : rc; /* --help */
        goto out;
    }
    rc = 1;
    if (cli_load(argc - optind, argv + optind, o.separate_gpus, &run) != 0 ||
        (o.nbaseline && cli_load(o.nbaseline, o.baseline, o.separate_gpus, &base) != 0) ||
        (o.ncompare && cli_load(o.ncompare, o.compare, o.separate_gpus, &other) != 0))
        goto out;
    if (cli_analyse(run, base, &a) != 0 || (other && cli_analyse(other, base, &b) != 0))
        goto out;
    rc = emit(&o, a, b);
out:
    analysis_free(a);
    analysis_free(b);
    store_run_free(run);
    store_run_free(base);
    store_run_free(other);
    free(o.baseline);
    free(o.compare);
    return rc;
}
