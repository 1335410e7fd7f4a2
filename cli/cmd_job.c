/* cmd_job.c: `tlview job FILES|FOLDERS`: a job of many hosts' files (one per rank) indexed without
 * its kernels, analysed GPU group by GPU group (job/), in one process or spread over MPI ranks
 * (`mpirun -n R tlview job ...`), and reported per host and GPU (text, JSON or CSV). Also the
 * index itself (--index, for scripts and pages) and the whole `tlview report` of one group
 * (--group N).
 * tlview-summary: judge a job of many hosts GPU by GPU (memory bounded by the largest GPU's
 * files; spread over MPI ranks by mpirun)
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "importers.h"
#include "job.h"
#include "report.h"
#include "view.h"

/* The `tlview report` subcommand (cmd_report.c): --group N hands a group's files to it. */
int cmd_report(int argc, char **argv);

static const char usage_text[] =
    "usage: tlview job [--format text|json|csv] [--index] [--group N] [--baseline FILE]...\n"
    "                  [--assume-mps on|off] [--measure WHAT] [--separate-gpus]\n"
    "                  [--from T] [--to T] [--range NAME] FILES...\n"
    "       mpirun -n R tlview job [options] FILES...\n"
    "\n"
    "A job bigger than one machine: the trace files of every rank of an MPI job (one per\n"
    "process, on many hosts), or folders holding them. An index reads only each file's\n"
    "processes, GPUs and contexts (no kernels) and groups the files by the GPU they ran on\n"
    "(its UUID; without one its host, ordinal, name and memory, as tlview report matches\n"
    "GPUs); then each group is loaded and judged on its own, so memory follows the largest\n"
    "GPU's files, not the job's. Started by mpirun (tlview built with Open MPI), every rank\n"
    "reads a share of the files for the index, the groups are dealt to the ranks by kernel\n"
    "count, and only each GPU's summary travels to rank 0, which prints the same report as\n"
    "one process does.\n"
    "\n"
    "The report lists every GPU by host, with the ranks and pids that shared it, its verdict,\n"
    "the rule that decided it (its evidence) and what MPS would gain, ranked by the share of\n"
    "its time that was time-sliced. Every figure of a GPU comes from its own kernels (its solo\n"
    "references, its measured interval): hosts have their own clocks, so times of different\n"
    "hosts are never compared.\n"
    "\n"
    "So --from and --to are read on each GPU group's own clock: relative times count from the\n"
    "group's own origin (its first kernel), as `tlview report --from --to` on that group's\n"
    "files reads them (what --group N prints); --range NAME is the captured (else NVTX) range\n"
    "of that name in each group's files, and a group without one is named in the warnings.\n"
    "\n"
    "  -f, --format FMT     text (default), json (the whole job report) or csv (one row per\n"
    "                       GPU, columns named as the JSON's keys: job/README.md)\n"
    "  -i, --index          print the index as JSON and stop (no kernel is read)\n"
    "  -g, --group N        print the tlview report of group N's files (the group column);\n"
    "                       --format, --table, --color and --top then mean what they mean\n"
    "                       there\n"
    "  -b, --baseline FILE  solo references for every GPU from this run (e.g. one rank\n"
    "                       alone); repeat for several files, or give a "
    "folder\n" CLI_ASSUME_MPS_HELP CLI_MEASURE_HELP CLI_RANGE_HELP CLI_SEPARATE_GPUS_HELP
        CLI_NO_CACHE_HELP CLI_COLOR_HELP
    "  -t, --table NAME     with --group and --format csv: the report's table\n"
    "  -n, --top N          with --group: kernels listed in the text report (default 10)\n"
    "  -h, --help           this text\n"
    "\n"
    "Folders stand for the files in them that start as SQLite databases (manifest.json, logs\n"
    "and the like are skipped); other formats must be imported first (tlview import).\n"
    "Recording a job: README.md, Jobs bigger than one machine. The index and report fields:\n"
    "job/README.md.\n"
    "\n"
    "Exit status: 0 reported; 1 a file could not be read; 2 usage error.\n";

/* Options of one job command. */
typedef struct job_opts {
    const char *format, *table, *color, *top;
    int index;            /* --index */
    long group;           /* --group N, -1 when not given */
    cli_analysis_opts an; /* --baseline, --separate-gpus, --assume-mps, --measure, --from,
                             --to, --range */
} job_opts;

static int parse(int argc, char **argv, job_opts *o)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'},
        {"index", no_argument, 0, 'i'},
        {"group", required_argument, 0, 'g'},
        {"baseline", required_argument, 0, 'b'},
        {"separate-gpus", no_argument, 0, 'G'},
        {"no-cache", no_argument, 0, CLI_OPT_NO_CACHE},
        {"assume-mps", required_argument, 0, 'M'},
        {"measure", required_argument, 0, 'm'},
        {"from", required_argument, 0, 'F'},
        {"to", required_argument, 0, 'T'},
        {"range", required_argument, 0, 'R'},
        {"color", required_argument, 0, 'C'},
        {"colour", required_argument, 0, 'C'},
        {"table", required_argument, 0, 't'},
        {"top", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:ig:b:t:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
        case CLI_OPT_NO_CACHE:
        case 'G':
        case 'M':
        case 'm':
        case 'F':
        case 'T':
        case 'R':
            if (cli_analysis_option("job", c, optarg, &o->an))
                return 2;
            break;
        case 'f': o->format = optarg; break;
        case 'i': o->index = 1; break;
        case 'g':
            if (cli_parse_long(optarg, 0, INT_MAX, &o->group))
                return cli_usage_error("job", "--group wants a group number, not '%s'", optarg);
            break;
        case 'C': o->color = optarg; break;
        case 't': o->table = optarg; break;
        case 'n': o->top = optarg; break;
        case 'h': fputs(usage_text, stdout); return -1;
        default: return cli_usage_error("job", "unknown option");
        }
    }
    if (strcmp(o->format, "text") && strcmp(o->format, "json") && strcmp(o->format, "csv"))
        return cli_usage_error("job", "unknown format '%s' (text, json or csv)", o->format);
    if (cli_color(o->color, stdout) < 0)
        return cli_usage_error("job", "--color wants auto, always or never, not '%s'", o->color);
    if (o->group < 0 && (o->table || o->top))
        return cli_usage_error("job", "--table and --top go with --group");
    if (o->index && o->group >= 0)
        return cli_usage_error("job", "--index and --group do not go together");
    if (optind >= argc)
        return cli_usage_error("job", "no trace files given");
    return 0;
}

/* ---------------------------------------------------------------- text */

/* A JSON number, NaN for null. */
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* The enum value whose name() is `s` (names: analysis_*_name), 0 when none is. */
static int by_name(const char *(*name)(int), int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name(i), s))
            return i;
    return 0;
}
static const char *basis_name(int i)
{
    return analysis_basis_name((analysis_basis)i);
}
static const char *verdict_name(int i)
{
    return analysis_verdict_name((analysis_verdict)i);
}

/* Sorted integers as ranges ("0-3,8,10-11") into buf, cut to `width` columns with ".." when
 * longer; "-" when there are none. */
static const char *ids_text(const json_t *arr, int width, char *buf, size_t n)
{
    size_t len = 0, count = json_array_size(arr);
    buf[0] = '\0';
    for (size_t i = 0; i < count && len < n; i++) {
        long long a = json_integer_value(json_array_get(arr, i)), b = a;
        while (i + 1 < count && json_integer_value(json_array_get(arr, i + 1)) == b + 1)
            b = json_integer_value(json_array_get(arr, ++i));
        len += (size_t)(a == b ? snprintf(buf + len, n - len, "%s%lld", len ? "," : "", a)
                               : snprintf(buf + len, n - len, "%s%lld-%lld", len ? "," : "", a, b));
    }
    if (!count)
        snprintf(buf, n, "-");
    if (width > 2 && strlen(buf) > (size_t)width && (size_t)width < n)
        snprintf(buf + width - 2, n - (size_t)width + 2, "..");
    return buf;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The distinct ranks of every process of the index, as ranges (ids_text). */
static const char *job_ranks_text(const job_index *idx, char *buf, size_t n)
{
    const store_run *run = job_index_run(idx);
    int64_t *v = malloc(((size_t)run->nprocesses + 1) * sizeof *v);
    json_t *arr = json_array();
    uint32_t nr = 0;
    store_rank rk;
    snprintf(buf, n, "-");
    if (v && arr) {
        for (uint32_t p = 0; p < run->nprocesses; p++)
            if (store_process_rank(&run->processes[p], &rk))
                v[nr++] = rk.rank;
        qsort(v, nr, sizeof *v, cmp_i64);
        int bad = 0;
        for (uint32_t i = 0; i < nr && !bad; i++)
            if (!i || v[i] != v[i - 1])
                bad = json_array_append_new(arr, json_integer(v[i])) != 0;
        if (!bad)
            ids_text(arr, (int)n - 1, buf, n);
    }
    json_decref(arr);
    free(v);
    return buf;
}

/* The text report; an: the options, for the range every GPU was cut to. */
static void text_report(FILE *out, const json_t *rep, const job_index *idx,
                        const cli_analysis_opts *an, int color)
{
    const json_t *job = json_object_get(rep, "job"), *gpus = json_object_get(rep, "gpus");
    char ranks[64], b1[32], b2[40], b3[96], b4[96], cell1[4 * 16 + 1], cell2[4 * 16 + 1];
    long long nranks = json_integer_value(json_object_get(job, "ranks"));
    static const char *const counts[][2] = {{"files", "file"},
                                            {"processes", "process"},
                                            {"hosts", "host"},
                                            {"gpus", "GPU"},
                                            {"kernels", "kernel"}};
    fprintf(out, "Job:");
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        long long v = json_integer_value(json_object_get(job, counts[c][0]));
        fprintf(out, "%s %lld %s%s", c ? "," : "", v, counts[c][1],
                v == 1   ? ""
                : c == 1 ? "es"
                         : "s");
        if (c == 1 && nranks)
            fprintf(out, " (%lld rank%s: %s)", nranks, nranks == 1 ? "" : "s",
                    job_ranks_text(idx, ranks, sizeof ranks));
    }
    fputc('\n', out);
    fprintf(out, "%s\n", str(job, "note"));
    if (an->range) {
        fputs("Each GPU on the captured (else NVTX) range '", out);
        cli_put_text(out, an->range);
        fputs("' of its own files.\n", out);
    } else if (an->from || an->to) {
        fprintf(out,
                "Each GPU on the range%s%s%s%s, read on its own clock (relative times from its "
                "group's first kernel).\n",
                an->from ? " from " : "", an->from ? an->from : "", an->to ? " to " : "",
                an->to ? an->to : "");
    }
    fprintf(out, "\n%sGPUs by time-sliced share%s\n", color ? "\033[1m" : "",
            cli_color_reset(color));
    fprintf(out, "  %-5s %-16s %3s %-16s %-14s %-16s %9s %6s  %-12s %9s %11s  %s\n", "group",
            "host", "GPU", "name", "ranks", "pids", "kernels", "sliced", "verdict", "stretch",
            "gain", "rule");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        const json_t *bv = json_object_get(json_object_get(g, "by_verdict"),
                                           analysis_verdict_name(ANALYSIS_TIME_SLICED));
        double share = json_is_object(bv) ? num(bv, "share") : 0.0;
        analysis_verdict v =
            (analysis_verdict)by_name(verdict_name, ANALYSIS_NVERDICTS, str(g, "verdict"));
        const json_t *at = json_object_get(g, "index");
        char index[24];
        snprintf(index, sizeof index, json_is_integer(at) ? "%lld" : "?", json_integer_value(at));
        int gain_basis = by_name(basis_name, 4, str(g, "gain_basis"));
        fprintf(out, "  %-5lld %s %3s %s %-14s %-16s %9lld %5.1f%%  %s%-12s%s %9s %11s  %s\n",
                json_integer_value(json_object_get(g, "group")),
                cli_text_cell(str(g, "host"), 16, cell1, sizeof cell1), index,
                cli_text_cell(str(g, "name"), 16, cell2, sizeof cell2),
                ids_text(json_object_get(g, "ranks"), 14, b3, sizeof b3),
                ids_text(json_object_get(g, "pids"), 16, b4, sizeof b4),
                json_integer_value(json_object_get(g, "kernels")), 100 * share,
                cli_verdict_color(v, color), str(g, "verdict"), cli_color_reset(color),
                view_stretch_text(num(g, "stretch"),
                                  (analysis_basis)by_name(basis_name, 4, str(g, "basis")), b1,
                                  sizeof b1),
                gain_basis ? view_gain_text(num(g, "predicted_gain_low"), num(g, "predicted_gain"),
                                            0, b2, sizeof b2)
                           : "-",
                v >= ANALYSIS_CONCURRENT ? str(g, "rule") : "-");
    }
    /* the evidence of each rule met, once */
    int header = 0;
    json_array_foreach(gpus, i, g)
    {
        const char *ev = str(g, "evidence");
        size_t k;
        json_t *h;
        int seen = !*ev;
        json_array_foreach(gpus, k, h)
        {
            if (k >= i || seen)
                break;
            seen = !strcmp(str(h, "evidence"), ev);
        }
        if (seen)
            continue;
        if (!header++)
            fprintf(out, "\n%sRules%s\n", color ? "\033[1m" : "", cli_color_reset(color));
        fprintf(out, "  ");
        cli_put_text(out, ev);
        fputc('\n', out);
    }
    const json_t *warnings = json_object_get(rep, "warnings");
    if (json_array_size(warnings)) {
        fprintf(out, "\n%sWarnings%s\n", color ? "\033[1m" : "", cli_color_reset(color));
        json_array_foreach(warnings, i, g)
        {
            fprintf(out, "  ");
            cli_put_text(out, json_string_value(g));
            fputc('\n', out);
        }
    }
}

/* ---------------------------------------------------------------- CSV */

/* The columns of the CSV: keys of the report's gpus[] entries; a dotted key reaches into an
 * object (by_verdict.time-sliced.share: the ranking's figure). */
static const char *const csv_cols[] = {"group",
                                       "host",
                                       "index",
                                       "uuid",
                                       "name",
                                       "ranks",
                                       "pids",
                                       "kernels",
                                       "processes",
                                       "contexts",
                                       "mps",
                                       "verdict",
                                       "rule",
                                       "by_verdict.time-sliced.share",
                                       "stretch",
                                       "basis",
                                       "contexts_in_flight",
                                       "parallelism",
                                       "predicted_gain_low",
                                       "predicted_gain",
                                       "gain_basis",
                                       "span_ns",
                                       "busy_ns",
                                       "overlap_ns",
                                       "idle_ns",
                                       NULL};

/* The value of a dotted key in o, NULL when absent. */
static const json_t *dotted(const json_t *o, const char *key)
{
    char part[64];
    while (o && strchr(key, '.')) {
        size_t n = strcspn(key, ".");
        if (n >= sizeof part)
            return NULL;
        memcpy(part, key, n);
        part[n] = '\0';
        o = json_object_get(o, part);
        key += n + 1;
    }
    return json_object_get(o, key);
}

static void csv_report(FILE *out, const json_t *rep)
{
    for (int c = 0; csv_cols[c]; c++)
        fprintf(out, "%s%s", c ? "," : "", csv_cols[c]);
    fputc('\n', out);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(rep, "gpus"), i, g)
    {
        for (int c = 0; csv_cols[c]; c++) {
            if (c)
                fputc(',', out);
            const json_t *v = dotted(g, csv_cols[c]);
            if (json_is_array(v)) { /* ranks, pids: space-separated */
                for (size_t k = 0; k < json_array_size(v); k++) {
                    if (k)
                        fputc(' ', out);
                    report_csv_field(out, json_array_get(v, k));
                }
            } else if (v) {
                report_csv_field(out, v);
            } else if (!strcmp(csv_cols[c], "by_verdict.time-sliced.share")) {
                fputc('0', out); /* no time-sliced window: none of its time */
            }
        }
        fputc('\n', out);
    }
}

/* ---------------------------------------------------------------- the command */

/* Prints the JSON value as `tlview report --format json` does. */
static int put_json(const json_t *j)
{
    int rc = !j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(8)) != 0;
    fputc('\n', stdout);
    if (rc)
        fprintf(stderr, "tlview job: out of memory writing JSON\n");
    return rc;
}

/* The index's failure, with a hint when the file is another profiler's (import it first). */
static void index_error(const job_index *idx)
{
    const char *file = job_index_errfile(idx);
    cli_msg(stderr, "tlview job: %s\n", job_index_errmsg(idx));
    if (file && imp_detect(file, NULL))
        cli_msg(stderr,
                "tlview job: %s is a %s file: convert it first (tlview import -o FILE.db "
                "%s)\n",
                file, imp_detect(file, NULL), file);
}

/* --group N: `tlview report` of the group's files, with the report's options. */
static int report_group(const job_index *idx, const job_opts *o)
{
    const job_group *g = job_index_group(idx, (uint32_t)o->group);
    if (!g) {
        fprintf(stderr, "tlview job: no group %ld (the job has %u)\n", o->group,
                job_index_ngroups(idx));
        return 1;
    }
    size_t n = 0, cap = 22 + 2 * (size_t)o->an.nbaseline + g->nfiles;
    char **argv = calloc(cap + 1, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "tlview job: out of memory\n");
        return 1;
    }
    static const char *const measure[] = {"all", "together", "range:"};
    char mbuf[4096];
    argv[n++] = "report";
    argv[n++] = "--format";
    argv[n++] = (char *)o->format;
    argv[n++] = "--color";
    argv[n++] = (char *)o->color;
    if (o->table) {
        argv[n++] = "--table";
        argv[n++] = (char *)o->table;
    }
    if (o->top) {
        argv[n++] = "--top";
        argv[n++] = (char *)o->top;
    }
    for (int i = 0; i < o->an.nbaseline; i++) {
        argv[n++] = "--baseline";
        argv[n++] = o->an.baseline[i];
    }
    if (o->an.separate_gpus)
        argv[n++] = "--separate-gpus";
    if (o->an.options.assume_mps) {
        argv[n++] = "--assume-mps";
        argv[n++] = o->an.options.assume_mps == 2 ? "on" : "off";
    }
    snprintf(mbuf, sizeof mbuf, "%s%s", measure[o->an.options.measure],
             o->an.options.measure == ANALYSIS_MEASURE_RANGE ? o->an.options.measure_range : "");
    if (o->an.measure_set) { /* else a range sets the measured interval, as in the report */
        argv[n++] = "--measure";
        argv[n++] = mbuf;
    }
    const char *const range[][2] = {
        {"--from", o->an.from}, {"--to", o->an.to}, {"--range", o->an.range}};
    for (size_t i = 0; i < sizeof range / sizeof *range; i++)
        if (range[i][1]) {
            argv[n++] = (char *)range[i][0];
            argv[n++] = (char *)range[i][1];
        }
    argv[n++] = "--";
    for (uint32_t i = 0; i < g->nfiles; i++)
        argv[n++] = (char *)g->paths[i];
    int rc = cmd_report((int)n, argv);
    free(argv);
    return rc;
}

/* The range of --from/--to/--range as each group is cut to it (job_options.range); the times
 * were checked by cli_analysis_option(). */
static void job_range_ask(const cli_analysis_opts *an, store_range_ask *ask)
{
    int rel = 0;
    memset(ask, 0, sizeof *ask);
    ask->name = an->range;
    if (an->from && cli_parse_time(an->from, &ask->from, &rel) == 0)
        ask->has_from = 1, ask->from_rel = (uint8_t)rel;
    if (an->to && cli_parse_time(an->to, &ask->to, &rel) == 0)
        ask->has_to = 1, ask->to_rel = (uint8_t)rel;
}

/* Runs `fn` with stderr sent to /dev/null when quiet (an MPI rank other than 0: every rank
 * meets the same usage or baseline error, rank 0 says it). */
static int quietly(int quiet, int (*fn)(void *), void *arg)
{
    int saved = -1;
    if (quiet) {
        fflush(stderr);
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        saved = null >= 0 ? dup(2) : -1;
        if (saved >= 0)
            dup2(null, 2);
        if (null >= 0)
            close(null);
    }
    int rc = fn(arg);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    return rc;
}

typedef struct parse_args {
    int argc;
    char **argv;
    job_opts *o;
} parse_args;

static int run_parse(void *arg)
{
    parse_args *p = arg;
    return parse(p->argc, p->argv, p->o);
}

typedef struct baseline_args {
    job_opts *o;
    store_run **ppRun;
} baseline_args;

static int run_baseline(void *arg)
{
    baseline_args *b = arg;
    return cli_load(b->o->an.nbaseline, b->o->an.baseline, b->o->an.separate_gpus, b->ppRun);
}

int cmd_job(int argc, char **argv)
{
    job_opts o = {.format = "text", .color = "auto", .group = -1};
    int mpi_rank = 0, mpi_size = 1, launched = job_launched(&mpi_rank, &mpi_size);
    int quiet = launched && mpi_rank != 0;
    store_run *base = NULL;
    job_index *idx = NULL;
    char **summaries = NULL;
    json_t *rep = NULL;
    if (cli_analysis_opts_init(&o.an, "job", argc))
        return 1;
    int rc = quietly(quiet, run_parse, &(parse_args){argc, argv, &o});
    if (rc != 0) {
        rc = rc < 0 ? 0 : rc; /* --help */
        goto out;
    }
    rc = 1;
    int use_mpi = launched && !o.index && o.group < 0;
#ifdef TLVIEW_HAVE_MPI
    char err[512];
    if (use_mpi && job_mpi_begin(&mpi_rank, &mpi_size, err, sizeof err) != JOB_OK) {
        fprintf(stderr, "tlview job: %s\n", err);
        goto out;
    }
#else
    if (use_mpi && mpi_size > 1) {
        if (!quiet)
            fprintf(stderr,
                    "tlview job: started by an MPI launcher (%d ranks), but this tlview "
                    "was built without MPI (Open MPI's libopenmpi-dev): run one tlview "
                    "job, or rebuild\n",
                    mpi_size);
        goto out;
    }
    use_mpi = 0;
#endif
    if (launched && !use_mpi && quiet) {
        rc = 0; /* --index or --group under mpirun: rank 0 alone answers */
        goto out;
    }
    int ok = 1;
    if (o.an.nbaseline && quietly(quiet, run_baseline, &(baseline_args){&o, &base}) != 0)
        ok = 0;
    o.an.options.baseline = base;
    int irc = JOB_OK;
#ifdef TLVIEW_HAVE_MPI
    if (use_mpi) /* every rank reads a share of the files' metadata */
        irc = job_mpi_index(ok, (const char *const *)argv + optind, (uint32_t)(argc - optind),
                            o.an.separate_gpus, &idx);
#endif
    if (!use_mpi && ok)
        irc = job_index_build((const char *const *)argv + optind, (uint32_t)(argc - optind),
                              o.an.separate_gpus, &idx);
    if (ok && irc != JOB_OK) {
        if (irc == JOB_ENOMEM && (!idx || !job_index_errmsg(idx)[0]))
            fprintf(stderr, "tlview job: out of memory\n");
        else if (mpi_rank == 0 && idx)
            index_error(idx);
        ok = 0;
    }
    if (ok && o.index) {
        json_t *j = job_index_json(idx);
        rc = put_json(j);
        json_decref(j);
        goto out;
    }
    if (ok && o.group >= 0) {
        rc = report_group(idx, &o);
        goto out;
    }
    job_options jo = {.analysis = o.an.options,
                      .separate_gpus = o.an.separate_gpus,
                      .measure_set = o.an.measure_set};
    job_range_ask(&o.an, &jo.range);
    int src = JOB_EINVAL;
#ifdef TLVIEW_HAVE_MPI
    if (use_mpi)
        src = job_mpi_summaries(ok, idx, &jo, &summaries);
#endif
    if (!use_mpi && ok) {
        summaries = calloc((size_t)job_index_ngroups(idx) + 1, sizeof *summaries);
        src = summaries ? job_summaries_local(idx, &jo, summaries) : JOB_ENOMEM;
    }
    if (src == JOB_ENOMEM)
        fprintf(stderr, "tlview job: out of memory\n");
    if (src != JOB_OK || mpi_rank != 0)
        goto out_mpi;
    char why[1024];
    if (!(rep = job_report_json(idx, summaries, CLI_VERSION, why, sizeof why))) {
        cli_msg(stderr, "tlview job: %s\n", why);
        goto out_mpi;
    }
    if (!strcmp(o.format, "json"))
        rc = put_json(rep);
    else if (!strcmp(o.format, "csv"))
        csv_report(stdout, rep), rc = 0;
    else
        text_report(stdout, rep, idx, &o.an, cli_color(o.color, stdout)), rc = 0;
    if (fflush(stdout) != 0)
        rc = 1;
out_mpi:
    if (src == JOB_OK && mpi_rank != 0)
        rc = 0; /* rank 0 decides: job_mpi_end() */
#ifdef TLVIEW_HAVE_MPI
    if (use_mpi)
        rc = job_mpi_end(rc);
#endif
out:
    if (summaries)
        for (uint32_t g = 0; idx && g < job_index_ngroups(idx); g++)
            free(summaries[g]);
    free(summaries);
    json_decref(rep);
    job_index_free(idx);
    store_run_free(base);
    cli_analysis_opts_free(&o.an);
    return rc;
}
