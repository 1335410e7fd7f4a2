/* cmd_advise.c: `tlview advise -n N[,N...] [OPTIONS] -- CMD [ARGS] [::: CMD2 ARGS ...]`: measures
 * how N copies of a program best share one GPU. Time-sliced (no MPS), under MPS, and under MPS
 * with a thread limit per client, at each N asked, plus one copy alone; in interleaved rounds;
 * then the median of each with its interval, the ratio to the default (time-sliced at the
 * largest N: what the user runs now) with its interval and a corrected p, the GPU figures of the
 * traces and `report`'s prediction beside the measurement, and one recommendation. The rounds are
 * cli/advise_run.c, the statistics cli/advise_stats.c, the result cli/advise_result.c and its
 * printing cli/advise_print.c. `--show DIR` prints an experiment's result again.
 * tlview-summary: measure how N copies of a program best share one GPU (time-sliced, MPS, MPS
 * with a thread limit, how many per GPU) in interleaved repeats, and recommend one with its
 * evidence
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "advise.h"
#include "cli.h"
#include "record.h"

#define MAX_PROCS 1024
/* DEFAULT_REPEAT: the least with which the 7 comparisons of the default configurations at two
 * values of N can be significant: 7 x 2/C(12,6) < 0.05 (cli/advise_stats.c, adv_min_p) */
#define DEFAULT_REPEAT 6
#define KILL_AFTER_MS 10000 /* copies alive this long after SIGINT/SIGTERM are killed */
#define DEFAULT_CONFIGS "sliced,mps,mps:1/N,mps:2/N"

static const char usage_text[] =
    "usage: tlview advise -n N[,N...] [-o DIR] [--configs LIST] [--repeat R] [--budget TIME]\n"
    "                     [--metric REGEX] [--combine HOW] [--no-trace] [--format text|json|csv]\n"
    "                     [--table T]\n"
    "                     [--color WHEN] -- CMD [ARGS...] [::: CMD2 [ARGS...] ...]\n"
    "       tlview advise --show DIR [--combine HOW] [--format text|json|csv] [--table T]\n"
    "                     [--color WHEN]\n"
    "\n"
    "Should these copies share the GPU under MPS, how many per GPU, with what share of the SMs\n"
    "each? advise measures it: N copies of CMD started together behind a barrier (as `tlview\n"
    "record` starts them) in each configuration, time-sliced (no MPS), under a private MPS\n"
    "daemon, and under MPS with each client limited by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, at each\n"
    "N of -n, plus one copy alone (solo) for the references. Every round runs each configuration\n"
    "once, in an order that turns from round to round (forward, backward, then shifted), so that\n"
    "a drift of the machine falls on all alike. Per configuration: the median of the figure of\n"
    "merit and its distribution-free interval; against the default (time-sliced at the largest\n"
    "N: what runs now) the ratio of medians with its interval and the p of an exact rank-sum\n"
    "test, corrected for the comparisons made (Holm); beside them the GPU figures of the traces\n"
    "and what `tlview report` predicted from the time-sliced runs. Then one recommendation: the\n"
    "best configuration when it is significantly better than the default, and a simpler one\n"
    "when the best is not significantly better than it (time-sliced < MPS < MPS with a limit;\n"
    "fewer copies per GPU is another throughput, not a simpler setup). How and why:\n"
    "cli/README.md, \"tlview advise\".\n"
    "\n"
    "  -n, --procs N,...    copies per GPU to try, 1 to 1024 each (1: one copy alone is a\n"
    "                       candidate too); with K commands each N above 1 a multiple of K\n"
    "      --configs LIST   what to try at each N (default " DEFAULT_CONFIGS "):\n"
    "                       sliced (no MPS: the GPU time-slices the copies; always needed: it is\n"
    "                       the default), mps (a private MPS daemon), mps:P (each client with\n"
    "                       CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=P, 1 to 100), mps:K/N (P = 100 K/N\n"
    "                       rounded, at most 100: mps:1/N is an even share of the SMs)\n"
    "  -r, --repeat R       rounds, 1 to 1000 (default 6; with --budget and no --repeat: as many\n"
    "                       as the budget allows)\n"
    "      --budget TIME    bound the whole experiment (10m, 90s, 1h; a bare number is seconds):\n"
    "                       it stops at the end of a round when the next (timed by the longest\n"
    "                       so far) would not fit; the first round always runs\n"
    "  -m, --metric REGEX   the figure of merit is the program's own throughput: the number in\n"
    "                       the first group of the last match of REGEX (POSIX extended) in each\n"
    "                       copy's stdout, summed over the copies (solo: their mean); higher\n"
    "                       must be better. Default: copies completed per second\n"
    "                       of makespan (the barrier to the last exit). A copy that exits\n"
    "                       non-zero, is killed or prints no match fails its run, which is\n"
    "                       reported and never counted\n"
    "      --combine HOW    with --metric and one command: sum (default) the copies' rates, or\n"
    "                       take N times the slowest (slowest: what copies that each do the\n"
    "                       same work did together; a sum counts each over its own time); with\n"
    "                       --show, figures the runs again that way\n"
    "      --no-trace       measure without the collector (no GPU figures, no prediction)\n"
    "  -o, --output DIR     the experiment's folder, new or empty (default:\n"
    "                       tlview-advise-YYYYMMDD-HHMMSS): DIR/advise.json, and per run\n"
    "                       DIR/CONFIG/rROUND/ with its traces, manifest.json and each copy's\n"
    "                       stdout and stderr (copyI.out, copyI.err)\n"
    "      --show DIR       print the result of an experiment in DIR again (nothing is run)\n"
    "  -f, --format FMT     text (default), json (the whole result) or csv (one table)\n"
    "  -t, --table T        the table for csv: configs (default), runs, copies, "
    "prediction\n" CLI_COLOR_HELP "  -h, --help           this text\n"
    "\n"
    "CMD ::: CMD2 gives the copies different commands: copy i runs the (i mod K)-th; solo runs\n"
    "each alone, one after another. Each copy sees TLVIEW_RANK, TLVIEW_NPROCS, TLVIEW_RUN_ID,\n"
    "TLVIEW_RECORD_DIR (its run's folder), TLVIEW_OUTPUT and, under mps:P,\n"
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. Without MPS, CUDA_MPS_PIPE_DIRECTORY names an empty\n"
    "folder, so that no MPS daemon (the user's, or one of the system) takes the copies in. The\n"
    "card's settings are never changed; each MPS daemon is stopped after its run, also on\n"
    "SIGINT, SIGTERM or a crash of a copy, and no process of its pipe folder is left.\n"
    "\n"
    "Environment: TLVIEW_COLLECTOR (libcollect.so to use), TLVIEW_MPS_CONTROL (control program,\n"
    "default nvidia-cuda-mps-control on PATH), TLVIEW_GPU_CHECK=0 (skip the check for a GPU);\n"
    "TLVIEW_* collector settings pass through.\n"
    "Exit status: 0 when every run succeeded; 1 when a run failed (the report says which and\n"
    "why), advise could not run or stopped (MPS daemon trouble), or --show could not read DIR;\n"
    "128+signal when interrupted (what was measured is written and printed); 127 a command not\n"
    "found; 2 usage error.\n";

/* What the options ask for. */
typedef struct advise_opts {
    const char *dir, *show, *format, *table, *color, *configs, *metric;
    const char *combine; /* --combine: "sum", "slowest"; NULL: not given */
    int procs[ADV_MAX_NS], nprocs;
    int repeat;        /* 0: not given */
    int64_t budget_ns; /* 0: none */
    int no_trace;
    int configs_given; /* --configs was given (o->configs holds the default otherwise) */
    char **cmd;        /* after --: the commands and their ::: separators */
    int ncmd;
} advise_opts;

/* -n 2,4: distinct values, each 1..MAX_PROCS. Returns 0 or -1. */
static int parse_procs(const char *text, advise_opts *o)
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", text);
    o->nprocs = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (cli_parse_long(tok, 1, MAX_PROCS, &v) != 0 || o->nprocs == ADV_MAX_NS)
            return -1;
        for (int i = 0; i < o->nprocs; i++)
            if (o->procs[i] == v)
                return -1;
        o->procs[o->nprocs++] = (int)v;
    }
    return o->nprocs ? 0 : -1;
}

/* --budget: a time with a unit (cli_parse_time) or a bare number of seconds; > 0. */
static int parse_budget(const char *text, int64_t *pNs)
{
    int64_t ns;
    int relative;
    if (cli_parse_time(text, &ns, &relative) != 0)
        return -1;
    if (!relative) { /* a bare number: seconds */
        if (ns > INT64_MAX / 1000000000)
            return -1;
        ns *= 1000000000;
    }
    if (ns <= 0)
        return -1;
    *pNs = ns;
    return 0;
}

static int parse_args(int argc, char **argv, advise_opts *o)
{
    static const struct option longopts[] = {{"procs", required_argument, 0, 'n'},
                                             {"output", required_argument, 0, 'o'},
                                             {"configs", required_argument, 0, 'c'},
                                             {"repeat", required_argument, 0, 'r'},
                                             {"budget", required_argument, 0, 'B'},
                                             {"metric", required_argument, 0, 'm'},
                                             {"no-trace", no_argument, 0, 'N'},
                                             {"show", required_argument, 0, 'S'},
                                             {"format", required_argument, 0, 'f'},
                                             {"table", required_argument, 0, 't'},
                                             {"color", required_argument, 0, 'C'},
                                             {"colour", required_argument, 0, 'C'},
                                             {"combine", required_argument, 0, 'K'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int c, table_given = 0;
    long v;
    optind = 0; /* full re-initialisation: the dispatcher may have used getopt already */
    opterr = 0; /* the messages below name the subcommand */
    while ((c = getopt_long(argc, argv, "+:n:o:r:m:f:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_procs(optarg, o) != 0)
                return cli_usage_error("advise",
                                       "-n %s: expected copies per GPU, 1 to %d, separated by "
                                       "commas, each once (e.g. -n 2,4)",
                                       optarg, MAX_PROCS);
            break;
        case 'o': o->dir = optarg; break;
        case 'c':
            o->configs = optarg;
            o->configs_given = 1;
            break;
        case 'r':
            if (cli_parse_long(optarg, 1, ADV_MAX_ROUNDS, &v) != 0)
                return cli_usage_error("advise", "--repeat %s: expected a number from 1 to %d",
                                       optarg, ADV_MAX_ROUNDS);
            o->repeat = (int)v;
            break;
        case 'B':
            if (parse_budget(optarg, &o->budget_ns) != 0)
                return cli_usage_error("advise",
                                       "--budget %s: expected a time such as 10m, 90s, 1h or a "
                                       "number of seconds",
                                       optarg);
            break;
        case 'm': o->metric = optarg; break;
        case 'K':
            if (strcmp(optarg, "sum") && strcmp(optarg, "slowest"))
                return cli_usage_error("advise", "--combine wants sum or slowest, not '%s'",
                                       optarg);
            o->combine = optarg;
            break;
        case 'N': o->no_trace = 1; break;
        case 'S': o->show = optarg; break;
        case 'f': o->format = optarg; break;
        case 't':
            o->table = optarg;
            table_given = 1;
            break;
        case 'C': o->color = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("advise", "%s needs an argument", argv[optind - 1]);
        default: return cli_usage_error("advise", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (strcmp(o->format, "text") && strcmp(o->format, "json") && strcmp(o->format, "csv"))
        return cli_usage_error("advise", "unknown format '%s' (text, json or csv)", o->format);
    if (!adv_csv_table(o->table))
        return cli_usage_error("advise", "unknown table '%s' (configs, runs, copies or prediction)",
                               o->table);
    if (table_given && strcmp(o->format, "csv"))
        return cli_usage_error("advise", "--table is the table of --format csv");
    if (cli_color(o->color, stdout) < 0)
        return cli_usage_error("advise", "--color wants auto, always or never, not '%s'", o->color);
    o->cmd = argv + optind;
    o->ncmd = argc - optind;
    if (o->show) {
        if (o->ncmd || o->nprocs || o->dir || o->configs_given || o->repeat || o->budget_ns ||
            o->metric || o->no_trace)
            return cli_usage_error("advise", "--show DIR prints a result again: it takes only "
                                             "--combine, --format, --table and --color");
        return -1;
    }
    if (!o->ncmd)
        return cli_usage_error("advise", "no command given (tlview advise -n N [OPTIONS] -- CMD "
                                         "ARGS)");
    if (!o->nprocs)
        return cli_usage_error("advise", "-n is needed: the copies per GPU to try (e.g. -n 4 or "
                                         "-n 2,4)");
    return -1;
}

/* Splits the command line at each ":::" into e->cmds (copied). Returns 0 or the exit status. */
static int split_commands(const advise_opts *o, adv_exp *e)
{
    int k = 1;
    for (int i = 0; i < o->ncmd; i++)
        k += !strcmp(o->cmd[i], ":::");
    if (k > ADV_MAX_CMDS)
        return cli_usage_error("advise", "more than %d commands", ADV_MAX_CMDS);
    if (!(e->cmds = calloc((size_t)k, sizeof *e->cmds)))
        goto oom;
    e->ncmds = k;
    for (int c = 0, i = 0; c < k; c++) {
        int j = i;
        while (j < o->ncmd && strcmp(o->cmd[j], ":::"))
            j++;
        if (j == i)
            return cli_usage_error("advise", "command %d is empty (nothing %s ':::')", c + 1,
                                   c ? "after" : "before");
        if (!(e->cmds[c] = calloc((size_t)(j - i + 1), sizeof(char *))))
            goto oom;
        for (int a = i; a < j; a++)
            if (!(e->cmds[c][a - i] = strdup(o->cmd[a])))
                goto oom;
        i = j + 1;
    }
    return 0;
oom:
    fprintf(stderr, "tlview advise: out of memory\n");
    return 1;
}

/* One configuration of --configs at `procs` copies into e (skipping one already there). */
static void add_config(adv_exp *e, int kind, int procs, int percentage)
{
    adv_config c;
    memset(&c, 0, sizeof c);
    adv_config_name(&c, kind, procs, percentage);
    for (int i = 0; i < e->nconfigs; i++)
        if (!strcmp(e->configs[i].id, c.id))
            return;
    if (e->nconfigs < ADV_MAX_CONFIGS)
        e->configs[e->nconfigs++] = c;
}

/* Reads one token of --configs at N = n copies into *pKind and *pPct (mps:P; mps:K/N gives
 * 100 K / N rounded, between 1 and 100). Returns 0, or -1 for a token that is not one. */
static int config_token(const char *t, int n, int *pKind, int *pPct)
{
    long v;
    char num[32];
    *pPct = 0;
    if (!strcmp(t, "solo"))
        *pKind = ADV_SOLO;
    else if (!strcmp(t, "sliced"))
        *pKind = ADV_SLICED;
    else if (!strcmp(t, "mps"))
        *pKind = ADV_MPS;
    else if (strncmp(t, "mps:", 4) != 0 || strlen(t + 4) >= sizeof num)
        return -1;
    else {
        size_t len = strlen(t + 4);
        int share = len > 2 && !strcmp(t + 4 + len - 2, "/N");
        snprintf(num, sizeof num, "%.*s", (int)(share ? len - 2 : len), t + 4);
        if (cli_parse_long(num, 1, share ? MAX_PROCS : 100, &v) != 0)
            return -1;
        if (share) {
            v = (200 * v + n) / (2 * n); /* 100 K / N, rounded */
            v = v > 100 ? 100 : v < 1 ? 1 : v;
        }
        *pKind = ADV_MPS_LIMIT;
        *pPct = (int)v;
    }
    return 0;
}

/* The configurations: solo first, then for each N of -n (N > 1) those of --configs in their
 * order; mps:P at 100 is plain mps (dropped when mps is asked). Returns 0 or the exit status. */
static int make_configs(const advise_opts *o, adv_exp *e)
{
    char buf[512];
    int maxn = 0, one = 0, kind, pct, sliced = 0, plain = 0;
    for (int i = 0; i < o->nprocs; i++) {
        maxn = o->procs[i] > maxn ? o->procs[i] : maxn;
        one |= o->procs[i] == 1;
        if (o->procs[i] > 1 && o->procs[i] % e->ncmds)
            return cli_usage_error("advise",
                                   "-n %d: with %d commands each N above 1 must be a multiple "
                                   "of %d, so that every command runs as often",
                                   o->procs[i], e->ncmds, e->ncmds);
    }
    if (maxn < 2)
        return cli_usage_error("advise", "-n: at least one N of 2 or more (copies that share "
                                         "the GPU)");
    if (strlen(o->configs) >= sizeof buf)
        return cli_usage_error("advise", "--configs: too long");
    snprintf(buf, sizeof buf, "%s", o->configs);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (config_token(t, 1, &kind, &pct) != 0)
            return cli_usage_error("advise",
                                   "--configs: '%s' is not a configuration (sliced, mps, "
                                   "mps:P with P 1 to 100, mps:K/N)",
                                   t);
        sliced |= kind == ADV_SLICED;
        plain |= kind == ADV_MPS;
    }
    if (!sliced)
        return cli_usage_error("advise", "--configs must hold sliced: time-sliced at the largest "
                                         "N is the default every configuration is compared with");
    add_config(e, ADV_SOLO, 1, 0);
    e->configs[0].candidate = one;
    for (int i = 0; i < o->nprocs; i++) {
        int n = o->procs[i];
        snprintf(buf, sizeof buf, "%s", o->configs);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); n > 1 && t;
             t = strtok_r(NULL, ",", &save)) {
            config_token(t, n, &kind, &pct);
            if (kind == ADV_SOLO || (kind == ADV_MPS_LIMIT && pct == 100 && plain))
                continue; /* solo is there; all the threads is plain MPS, already asked */
            int before = e->nconfigs;
            add_config(e, kind, n, pct);
            if (e->nconfigs > before) {
                e->configs[before].candidate = 1;
                e->configs[before].is_default = kind == ADV_SLICED && n == maxn;
            }
        }
    }
    if (e->nconfigs < 3 && !one)
        return cli_usage_error("advise",
                               "nothing to compare with the default (time-sliced at "
                               "N=%d): add configurations (--configs) or values of -n",
                               maxn);
    return 0;
}

/* Creates the experiment's folder (new, or empty), made absolute into e->dir. */
static int prepare_dir(const char *dir, adv_exp *e)
{
    char defdir[128], err[1024];
    if (!dir) {
        time_t now = time(NULL);
        struct tm tm;
        char stamp[32];
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(defdir, sizeof defdir, "tlview-advise-%s", stamp);
        dir = defdir;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        cli_msg(stderr, "tlview advise: %s: cannot create: %s\n", dir, strerror(errno));
        return 1;
    }
    if (!realpath(dir, e->dir)) {
        cli_msg(stderr, "tlview advise: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (store_fs_check_dir(e->dir, STORE_FS_SHARED, err, sizeof err) != 0) {
        cli_msg(stderr, "tlview advise: %s\n", err);
        return 1;
    }
    DIR *d = opendir(e->dir);
    struct dirent *ent;
    int empty = 1;
    while (d && empty && (ent = readdir(d)))
        empty = !strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..");
    if (d)
        closedir(d);
    if (!d || !empty) {
        cli_msg(stderr,
                "tlview advise: %s is not empty: an experiment goes into a new or empty folder "
                "(-o DIR)\n",
                dir);
        return 1;
    }
    if (access(e->dir, W_OK) != 0) {
        cli_msg(stderr, "tlview advise: %s: not writable\n", dir);
        return 1;
    }
    return 0;
}

/* The trace files' prefix: the first command's name when it is letters, digits, '.', '_', '-'. */
static void make_label(const char *cmd, char *label, size_t n)
{
    const char *base = strrchr(cmd, '/');
    base = base ? base + 1 : cmd;
    int ok = *base && strlen(base) < 100;
    for (const char *s = base; ok && *s; s++)
        ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
             *s == '.' || *s == '_' || *s == '-';
    snprintf(label, n, "%s", ok ? base : "trace");
}

/* Prints the result of the experiment in e->dir (read back from advise.json, as --show does, so
 * that both print the same). Returns 0, or 1 after saying why. */
static int print_result(const advise_opts *o, const char *dir)
{
    adv_exp e;
    char err[2048];
    if (adv_load(dir, &e, err, sizeof err) != 0 ||
        (o->combine && adv_combine(&e, !strcmp(o->combine, "slowest"), err, sizeof err) != 0)) {
        cli_msg(stderr, "tlview advise: %s\n", err);
        adv_exp_free(&e);
        return 1;
    }
    json_t *r = adv_result_json(&e, CLI_VERSION);
    adv_exp_free(&e);
    if (!r) {
        fprintf(stderr, "tlview advise: out of memory\n");
        return 1;
    }
    int rc = 0;
    if (!strcmp(o->format, "json")) {
        rc = json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
    } else if (!strcmp(o->format, "csv")) {
        rc = adv_print_csv(stdout, r, o->table);
    } else {
        adv_print_text(stdout, r, cli_color(o->color, stdout) == 1);
    }
    json_decref(r);
    return rc != 0;
}

/* Everything refused before anything starts: the commands, the collector, a GPU, the MPS control
 * program. Fills s; returns 0 or the exit status. */
static int check_inputs(const advise_opts *o, adv_exp *e, adv_setup *s, char (*paths)[PATH_MAX],
                        char *collector, rec_mps *mps)
{
    char err[REC_ERR_MAX];
    for (int c = 0; c < e->ncmds; c++)
        if (rec_find_program(e->cmds[c][0], paths[c], PATH_MAX, err) != 0) {
            cli_msg(stderr, "tlview advise: %s\n", err);
            return 127;
        }
    if (!o->no_trace && rec_find_collector(collector, err) != 0) {
        cli_msg(stderr, "tlview advise: %s (or measure without traces: --no-trace)\n", err);
        return 1;
    }
    const char *gpu_check = getenv("TLVIEW_GPU_CHECK");
    if (!(gpu_check && !strcmp(gpu_check, "0")) && !rec_have_gpu()) {
        fprintf(stderr, "tlview advise: no NVIDIA GPU here (/dev/nvidiactl is missing): there is "
                        "nothing to measure (TLVIEW_GPU_CHECK=0 skips this check)\n");
        return 1;
    }
    int need_mps = 0;
    for (int c = 0; c < e->nconfigs; c++)
        need_mps |= e->configs[c].kind == ADV_MPS || e->configs[c].kind == ADV_MPS_LIMIT;
    if (need_mps && rec_mps_find(mps, err) != 0) {
        cli_msg(stderr, "tlview advise: %s\n", err);
        return 1;
    }
    s->collector = o->no_trace ? NULL : collector;
    s->mps_control = need_mps ? mps->control : NULL;
    return 0;
}

int cmd_advise(int argc, char **argv)
{
    advise_opts o;
    memset(&o, 0, sizeof o);
    o.format = "text";
    o.table = "configs";
    o.color = "auto";
    o.configs = DEFAULT_CONFIGS;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.show)
        return print_result(&o, o.show);

    regex_t re;
    if (o.metric) {
        int bad = regcomp(&re, o.metric, REG_EXTENDED);
        if (bad) {
            char why[256];
            regerror(bad, &re, why, sizeof why);
            return cli_usage_error("advise", "--metric '%s': %s", o.metric, why);
        }
        if (re.re_nsub < 1) {
            regfree(&re);
            return cli_usage_error("advise",
                                   "--metric '%s' has no group: put ( ) around the number, e.g. "
                                   "'items_per_s=([0-9.]+)'",
                                   o.metric);
        }
    }
    adv_exp *e = calloc(1, sizeof *e);
    char(*paths)[PATH_MAX] = calloc(ADV_MAX_CMDS, PATH_MAX);
    char collector[PATH_MAX], label[128];
    const char *path_of[ADV_MAX_CMDS];
    rec_mps mps;
    memset(&mps, 0, sizeof mps);
    adv_setup s = {.paths = path_of,
                   .metric = o.metric ? &re : NULL,
                   .label = label,
                   .kill_after_ms = KILL_AFTER_MS};
    if (!e || !paths) {
        fprintf(stderr, "tlview advise: out of memory\n");
        rc = 1;
        goto out;
    }
    rec_signals_block(); /* taken in order by the runner, forwarded to the copies */
    if ((rc = split_commands(&o, e)) != 0 || (rc = make_configs(&o, e)) != 0 ||
        (rc = check_inputs(&o, e, &s, paths, collector, &mps)) != 0)
        goto out;
    for (int c = 0; c < e->ncmds; c++)
        path_of[c] = paths[c];
    make_label(e->cmds[0][0], label, sizeof label);
    e->trace = !o.no_trace;
    e->repeat = o.repeat ? o.repeat : o.budget_ns ? 0 : DEFAULT_REPEAT;
    e->budget_ns = o.budget_ns;
    e->slowest = o.combine && !strcmp(o.combine, "slowest");
    if (e->slowest && (!o.metric || e->ncmds != 1)) {
        rc = cli_usage_error("advise", "--combine slowest takes the rates of the copies of one "
                                       "command: it needs --metric and no ':::'");
        goto out;
    }
    if (o.metric && !(e->metric = strdup(o.metric))) {
        fprintf(stderr, "tlview advise: out of memory\n");
        rc = 1;
        goto out;
    }
    if ((rc = prepare_dir(o.dir, e)) != 0)
        goto out;
    const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    if (pipe && *pipe)
        cli_msg(stderr,
                "tlview advise: CUDA_MPS_PIPE_DIRECTORY=%s is not used: each configuration sets "
                "its own (a private daemon, or none)\n",
                pipe);
    if (getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"))
        fprintf(stderr, "tlview advise: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is not used: mps:P sets "
                        "it, the other configurations clear it\n");
    char bound[64] = "";
    if (e->repeat)
        snprintf(bound, sizeof bound, "%d rounds (%d runs)", e->repeat, e->repeat * e->nconfigs);
    else
        snprintf(bound, sizeof bound, "rounds until the budget");
    cli_msg(stderr, "tlview advise: %d configurations, %s, in %s\n", e->nconfigs, bound, e->dir);
    int run_rc = adv_run_experiment(e, &s);
    if (run_rc < 0)
        cli_msg(stderr, "tlview advise: stopped: %s\n", e->stop_error);
    fflush(stderr);
    rc = print_result(&o, e->dir);
    int failed = 0;
    for (int i = 0; i < e->nruns; i++)
        failed += !e->runs[i].ok;
    if (run_rc > 0)
        rc = 128 + run_rc;
    else if (run_rc < 0 || failed)
        rc = 1;
out:
    if (o.metric)
        regfree(&re);
    if (e)
        adv_exp_free(e);
    free(e);
    free(paths);
    return rc;
}
