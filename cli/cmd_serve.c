/* cmd_serve.c: `tlview serve FILES`: loads and analyses a run (and optionally a second one to
 * compare), then serves the timeline page and its JSON API (web/) until Ctrl-C. With no FILES
 * it opens the bundled H200 demo traces (samples/spin/traces/mps-{off,on}/nK) as a comparison.
 * Given the folder of a `tlview advise` experiment, it draws one run per configuration (the
 * median run: cli/advise_serve.c picks them) one above the other, with advise's table.
 * With --job, a job of many GPUs (job/) is served without loading it: its index at once, each
 * GPU group's summary made in the background, and a group's timeline loaded when the page asks.
 * tlview-summary: show the run in the browser: timeline per GPU, process and stream; stats */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "advise.h"
#include "cli.h"
#include "job.h"
#include "report.h"
#include "web.h"

#ifndef TLVIEW_DEMO_RELDIR /* set by cli/cmd_serve.cmake */
#define TLVIEW_DEMO_RELDIR "../share/tlview/traces"
#endif
#ifndef TLVIEW_DEMO_SOURCE_DIR
#define TLVIEW_DEMO_SOURCE_DIR ""
#endif
/* An experiment's runs drawn on one page hold this many bytes of trace files together, at most
 * (the first is always drawn): about 100 B a kernel on disk, as much again in memory with the
 * page's index, so some 4 GB of memory. */
#define SERVE_EXPERIMENT_MAX_BYTES ((int64_t)4 << 30)
_Static_assert(ADV_MAX_CONFIGS <= WEB_MAX_RUNS, "a page draws every configuration advise makes");

static const char usage_text[] =
    "usage: tlview serve [--port N] [--bind ADDR] [--allow-host NAME]... [--no-token]\n"
    "                    [--compare FILE]... [--baseline FILE]... [--threads N]\n"
    "                    [--separate-gpus] [--assume-mps on|off] [--measure WHAT] [--from T]\n"
    "                    [--to T] [--range NAME] [--follow] [FILES...]\n"
    "       tlview serve --job [options] FILES|FOLDERS...\n"
    "       tlview serve [options] DIR       (DIR: an experiment of tlview advise)\n"
    "\n"
    "Loads the trace files of one run (one per process, or folders of them), analyses them like\n"
    "`tlview report` and serves an interactive timeline on http://ADDR:PORT/: a lane per GPU\n"
    "with the processes' concurrency and every overlap window shaded by its verdict, a row per\n"
    "process and stream with its kernels, hover and click for details, find by name, and the\n"
    "analysis tables. Everything is in the binary: the browser fetches nothing from elsewhere.\n"
    "The server is read-only and only answers for its page and its API (web/API.md). It answers\n"
    "at once: the page shows what is being done while the files are read and analysed (seconds\n"
    "for millions of kernels), and draws the timeline as soon as they are.\n"
    "\n"
    "Each start makes a new random token, and every request must carry it, on loopback too (on\n"
    "a shared machine, such as a cluster's login node, every user can reach 127.0.0.1): the URL\n"
    "printed carries it (http://ADDR:PORT/?token=...), and the page opened with it keeps it in a\n"
    "cookie. Without it the page, its files and the API answer 403. --no-token serves without\n"
    "one, on a loopback address only.\n"
    "\n"
    "With --follow the FILES may still be written (a program being recorded, a server traced\n"
    "for days): they are read again whenever they change, and so are the folders given, where\n"
    "new *.db files join the run as they appear; each reading is analysed again, at most about\n"
    "once a second, and the page extends its timeline and verdicts without a reload, keeping to\n"
    "the end of time when it showed it. The files are only ever read (read-only connections\n"
    "that never checkpoint or lock out the writers); each update reads them whole.\n"
    "\n"
    "With --job the FILES are the trace files of a job bigger than one machine (tlview job:\n"
    "every rank's file, on many hosts, or folders of them). Only their index is read before the\n"
    "server starts (seconds for thousands of files): the page shows the job's hosts and GPUs at\n"
    "once, fills in each GPU's verdict as its group of files is analysed in the background (one\n"
    "group at a time, largest first, those asked for first: memory follows the largest group),\n"
    "and opens a GPU's timeline when it is clicked, loading only that group's files (the two\n"
    "last opened are kept). --compare, --follow, --from, --to and --range do not go with it.\n"
    "\n"
    "Given the folder of an experiment of `tlview advise` (DIR/advise.json, checked like any\n"
    "input), the page draws one run per configuration one above the other, each labelled by its\n"
    "configuration (\"time-sliced n=2\", \"MPS n=2\", \"MPS 50% n=2\"): its median run, the\n"
    "successful traced run whose figure is nearest the configuration's median (ties: the\n"
    "earlier round), analysed with the solo references advise used; and above them advise's\n"
    "table and recommendation, as `tlview advise --show DIR` prints them. The runs are read one\n"
    "after the other, those of the first configurations while their trace files stay within\n"
    "4 GiB together (the page notes any left out). --compare, --follow and --job do not go\n"
    "with it.\n"
    "\n"
    "  -p, --port N         TCP port (default 8080); 0 picks a free one (the URL is printed)\n"
    "  -B, --bind ADDR      numeric address to listen on (default 127.0.0.1; 0.0.0.0 or :: to\n"
    "                       share the view on the network: a warning says so, and the token\n"
    "                       is then all that keeps out whoever can reach the port)\n"
    "  -H, --allow-host NAME\n"
    "                       one more host name the browser may use to reach the server (a DNS\n"
    "                       alias, a proxy); repeatable. Others are refused (421), which stops\n"
    "                       DNS-rebinding pages; 127.0.0.1, localhost, [::1], the bound address\n"
    "                       and, bound beyond loopback, this machine's name are always accepted\n"
    "      --no-token       require no token: any user of this machine may then read the\n"
    "                       page and the API (host names, paths, command lines); refused with\n"
    "                       a --bind beyond loopback (usage error)\n"
    "  -c, --compare FILE   a second run of the same work (e.g. with MPS), drawn below the first\n"
    "                       on a common time axis relative to each run's first kernel;\n"
    "                       repeatable, or a folder\n"
    "  -b, --baseline FILE  take solo references from this run (see tlview report); repeatable\n"
    "  -t, --threads N      requests answered at once, in the order they came (default: one\n"
    "                       per CPU online)\n"
    "  -j, --job            the FILES are a job's (tlview job): its overview, then each GPU on\n"
    "                       demand\n"
    "      --follow         read the FILES again as they grow (and new *.db files in the\n"
    "                       folders given); the page follows\n" CLI_SEPARATE_GPUS_HELP
        CLI_NO_CACHE_HELP CLI_ASSUME_MPS_HELP CLI_MEASURE_HELP CLI_RANGE_HELP
    "  -h, --help           this text\n"
    "\n"
    "Without FILES, the bundled demo traces (four processes spinning on one H200, recorded with\n"
    "MPS off and on) are shown one above the other. They are looked for in $TLVIEW_DEMO_DIR\n"
    "when set (only there), else where tlview is installed (" TLVIEW_DEMO_RELDIR "\n"
    "from the folder of the tlview binary), and for a build folder in the source tree's\n"
    "samples/spin/traces.\n"
    "\n" CLI_IMPORT_LIMITS_HELP
    "Exit status: 0 stopped by Ctrl-C or SIGTERM; 1 a file could not be read or the server\n"
    "could not start; 2 usage error.\n";

typedef struct serve_opts {
    char **hosts; /* --allow-host NAMEs (argv pointers), NULL-terminated */
    int nhosts;
    int follow;             /* --follow */
    int job;                /* --job */
    const char *experiment; /* FILES is the folder of an experiment of tlview advise */
    cli_analysis_opts an;   /* --baseline, --compare, --separate-gpus, --assume-mps, --measure,
                               --from, --to, --range */
    web_options web;
} serve_opts;

static int parse(int argc, char **argv, serve_opts *o)
{
    static const struct option longopts[] = {
        {"port", required_argument, 0, 'p'},
        {"bind", required_argument, 0, 'B'},
        {"allow-host", required_argument, 0, 'H'},
        {"compare", required_argument, 0, 'c'},
        {"baseline", required_argument, 0, 'b'},
        {"threads", required_argument, 0, 't'},
        {"separate-gpus", no_argument, 0, 'G'},
        {"no-cache", no_argument, 0, CLI_OPT_NO_CACHE},
        {"assume-mps", required_argument, 0, 'M'},
        {"measure", required_argument, 0, 'm'},
        {"from", required_argument, 0, 'F'},
        {"to", required_argument, 0, 'T'},
        {"range", required_argument, 0, 'R'},
        {"follow", no_argument, 0, 'W'},
        {"job", no_argument, 0, 'j'},
        {"no-token", no_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:B:H:c:b:t:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_parse_long(optarg, 0, 65535, &v))
                return cli_usage_error("serve", "--port wants 0 to 65535, not '%s'", optarg);
            o->web.port = (unsigned)v;
            break;
        case 'B': o->web.bind = optarg; break;
        case 'H': o->hosts[o->nhosts++] = optarg; break;
        case 'c':
        case 'b':
        case CLI_OPT_NO_CACHE:
        case 'G':
        case 'M':
        case 'm':
        case 'F':
        case 'T':
        case 'R':
            if (cli_analysis_option("serve", c, optarg, &o->an))
                return 2;
            break;
        case 't':
            if (cli_parse_long(optarg, 1, 256, &v))
                return cli_usage_error("serve", "--threads wants 1 to 256, not '%s'", optarg);
            o->web.threads = (unsigned)v;
            break;
        case 'W': o->follow = 1; break;
        case 'j': o->job = 1; break;
        case 'N': o->web.no_token = 1; break;
        case 'h': fputs(usage_text, stdout); return -1;
        default: return cli_usage_error("serve", "unknown option");
        }
    }
    if (o->an.ncompare && optind >= argc)
        return cli_usage_error("serve", "--compare needs the FILES of the first run too");
    if (o->follow && optind >= argc)
        return cli_usage_error("serve", "--follow needs the FILES (or folders) to follow");
    if (o->job && optind >= argc)
        return cli_usage_error("serve", "--job needs the job's FILES (or folders)");
    /* refused before the files are read (minutes for a big job), not by web_start() after */
    if (o->web.no_token && web_loopback(o->web.bind) == 0)
        return cli_usage_error("serve",
                               "--no-token is refused beyond loopback (--bind %s): anyone who "
                               "can reach the port would read the traces' host names, paths "
                               "and command lines",
                               o->web.bind);
    if (o->job && (o->an.ncompare || o->follow || o->an.from || o->an.to || o->an.range))
        return cli_usage_error("serve", "--job does not go with --compare, --follow, --from, --to "
                                        "or --range");
    for (int i = optind; i < argc && !o->job; i++) {
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/advise.json", argv[i]);
        if (lstat(path, &st) != 0)
            continue;
        if (argc - optind > 1 || o->an.ncompare || o->follow)
            return cli_usage_error("serve",
                                   "%s is an experiment of tlview advise (it holds advise.json): "
                                   "it is served alone, without other FILES, --compare or --follow",
                                   argv[i]);
        o->experiment = argv[i];
    }
    return 0;
}

/* has_traces: 1 when folder `dir` holds at least one *.db file. */
static int has_traces(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        found = n > 3 && strcmp(e->d_name + n - 3, ".db") == 0;
    }
    if (d)
        closedir(d);
    return found;
}

/* find_demo: the demo traces folder and the largest process count nK recorded both with MPS
 * off and on (or only one of them). Writes the folders to off/on ("" when absent); returns 0,
 * or -1 after printing where it looked. */
static int find_demo(char *off, char *on, size_t n)
{
    char beside[PATH_MAX];
    cli_exe_relative(TLVIEW_DEMO_RELDIR, beside, sizeof beside); /* "" when not known */
    const char *env = getenv("TLVIEW_DEMO_DIR"); /* when set, the only place looked in */
    const char *where[] = {env ? env : "", env ? "" : beside, env ? "" : TLVIEW_DEMO_SOURCE_DIR};
    static const int counts[] = {4, 2, 1};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        if (!where[i][0])
            continue;
        for (size_t j = 0; j < sizeof counts / sizeof *counts; j++) {
            snprintf(off, n, "%s/mps-off/n%d", where[i], counts[j]);
            snprintf(on, n, "%s/mps-on/n%d", where[i], counts[j]);
            int a = has_traces(off), b = has_traces(on);
            if (!a)
                off[0] = 0;
            if (!b)
                on[0] = 0;
            if (a || b)
                return 0;
        }
    }
    fprintf(
        stderr,
        "tlview serve: no trace files given, and no demo traces found (mps-off/nK or "
        "mps-on/nK with *.db files) in: %s%s %s %s\n"
        "Give the trace files to show, e.g. `tlview serve output.*.db`, or set TLVIEW_DEMO_DIR.\n",
        env ? "$TLVIEW_DEMO_DIR=" : "", env ? env : "", where[1], where[2]);
    return -1;
}

/* print_url: the line that says where to point the browser (on stdout; tests read it), after
 * `what` it shows ("1200 kernels"), with the token (none with --no-token, which a warning on
 * stderr recalls). Beyond loopback, a warning on stderr first. The host is web/'s, which knows
 * what the address it bound means (::0 is every interface too) and which names it answers to. */
static void print_url(const web_options *o, const web *w, const char *what)
{
    const char *token = web_token(w);
    if (!token)
        fprintf(stderr, "tlview serve: warning: --no-token: any user of this machine can read the "
                        "page and the API, with the traces' host names, paths and command "
                        "lines\n");
    else if (web_loopback(o->bind) == 0)
        fprintf(stderr,
                "tlview serve: warning: listening on %s%s, beyond loopback: anyone who can reach "
                "port %u can ask; the page and the API answer only with the token of the URL "
                "below (a new one each start), and show the traces' host names, paths and "
                "command lines to whoever has it\n",
                o->bind, web_wildcard(w) ? " (every interface)" : "", web_port(w));
    printf("tlview serve: %s at http://%s:%u/%s%s  (Ctrl-C stops)\n", what, web_url_host(w),
           web_port(w), token ? "?token=" : "", token ? token : "");
    fflush(stdout);
}

/* label_of: a short name for a run given by `n` file arguments. */
static void label_of(char *buf, size_t size, int n, char **files, const char *suffix)
{
    if (n == 1)
        snprintf(buf, size, "%s%s", files[0], suffix);
    else
        snprintf(buf, size, "%s + %d more%s", files[0], n - 1, suffix);
}

/* The runs shown, with what the server borrows from them. */
typedef struct serve_set {
    int nruns;
    store_run *runs[WEB_MAX_RUNS];
    analysis *an[WEB_MAX_RUNS];
    char labels[WEB_MAX_RUNS][512]; /* the run's label, with its range */
    web_run wr[WEB_MAX_RUNS];
    store_cache *index[WEB_MAX_RUNS]; /* the cache holding run i's lent index (web_lend_index),
                                         or NULL */
} serve_set;

static void set_free(serve_set *s)
{
    for (int i = 0; i < WEB_MAX_RUNS; i++) {
        analysis_free(s->an[i]);
        store_run_free(s->runs[i]);
        store_cache_close(s->index[i]);
        s->an[i] = NULL;
        s->runs[i] = NULL;
        s->index[i] = NULL;
    }
    s->nruns = 0;
}

/* analyse_one: cuts run i of s to the range asked (its whole recording giving the references
 * unless `base` does) and analyses it; fills s->wr[i]. labels[i] holds the run's name on entry.
 * 0, or 1 after printing the error. */
static int analyse_one(const serve_opts *o, const store_run *base, serve_set *s, int i)
{
    store_run *whole = NULL;
    analysis_options opt = o->an.options;
    cli_range range;
    if (cli_restrict("serve", &o->an, &s->runs[i], &whole, &opt, &range) != 0)
        return 1;
    if (range.set) {
        char what[256];
        size_t len = strlen(s->labels[i]);
        if (len + 3 < sizeof s->labels[i])
            snprintf(s->labels[i] + len, sizeof s->labels[i] - len, ", %s",
                     cli_range_text(&range, what, sizeof what));
    }
    int rc = cli_analyse(s->runs[i], base ? base : whole, &opt, &s->an[i]);
    cli_cache_keep(whole, NULL); /* (NULL: nothing) a range's whole run, freed here */
    store_run_free(whole);       /* a baseline is read during the analysis only */
    if (rc != 0)
        return 1;
    s->wr[i] = (web_run){s->labels[i], s->runs[i], s->an[i]};
    return 0;
}

/* analyse_set: analyse_one() of each run of s. 0, or 1 after printing the error. */
static int analyse_set(const serve_opts *o, const store_run *base, serve_set *s)
{
    for (int i = 0; i < s->nruns; i++)
        if (analyse_one(o, base, s, i) != 0)
            return 1;
    return 0;
}

/* The FILES of run i (0: the arguments, 1: --compare) of a followed serve. */
static void files_of(const serve_opts *o, int argc, char **argv, int i, int *n, char ***files)
{
    *n = i ? o->an.ncompare : argc - optind;
    *files = i ? o->an.compare : argv + optind;
}

/* load_live: one reading of the followed files into *s (labels set), analysed. 0, or 1 (the
 * message printed; s freed). */
static int load_live(const serve_opts *o, int argc, char **argv, const store_run *base,
                     char notes[2][1024], serve_set *s)
{
    memset(s, 0, sizeof *s);
    s->nruns = o->an.ncompare ? 2 : 1;
    for (int i = 0; i < s->nruns; i++) {
        int n;
        char **files;
        files_of(o, argc, argv, i, &n, &files);
        label_of(s->labels[i], sizeof s->labels[i], n, files, " (following)");
        if (cli_load_live(n, files, o->an.separate_gpus, notes[i], sizeof notes[i], &s->runs[i]) !=
            0) {
            set_free(s);
            return 1;
        }
    }
    if (analyse_set(o, base, s) != 0) {
        set_free(s);
        return 1;
    }
    return 0;
}

/* stamp_file: mixes what says that `path` changed (size and modification time, of it and of its
 * WAL: a writer's commits land there) into *h. Not the -shm file, which readers write too. */
static void stamp_file(const char *path, uint64_t *h)
{
    char wal[PATH_MAX + 8];
    const char *p[2] = {path, wal};
    snprintf(wal, sizeof wal, "%s-wal", path);
    uint64_t x = 1469598103934665603ULL;
    for (const char *c = path; *c; c++)
        x = (x ^ (unsigned char)*c) * 1099511628211ULL;
    for (int i = 0; i < 2; i++) {
        struct stat st;
        int64_t v[3] = {-1, 0, 0};
        if (stat(p[i], &st) == 0) {
            v[0] = st.st_size;
            v[1] = st.st_mtim.tv_sec;
            v[2] = st.st_mtim.tv_nsec;
        }
        for (int k = 0; k < 3; k++)
            x = (x ^ (uint64_t)v[k]) * 1099511628211ULL;
    }
    *h += x ^ (x >> 29); /* a sum: the order the folder lists its files in does not matter */
}

/* inputs_stamp: a number that changes when the followed files change, or when *.db files appear
 * in or leave the folders followed. */
static uint64_t inputs_stamp(const serve_opts *o, int argc, char **argv)
{
    uint64_t h = 0;
    for (int i = 0; i < (o->an.ncompare ? 2 : 1); i++) {
        int n;
        char **files;
        files_of(o, argc, argv, i, &n, &files);
        for (int f = 0; f < n; f++) {
            struct stat st;
            DIR *d = stat(files[f], &st) == 0 && S_ISDIR(st.st_mode) ? opendir(files[f]) : NULL;
            if (!d) {
                stamp_file(files[f], &h);
                continue;
            }
            struct dirent *e;
            while ((e = readdir(d))) {
                size_t len = strlen(e->d_name);
                if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".db") != 0)
                    continue;
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/%s", files[f], e->d_name);
                stamp_file(path, &h);
            }
            closedir(d);
        }
    }
    return h;
}

/* follow: until SIGINT or SIGTERM (blocked in `set`), looks at the followed files every second
 * and, when they changed since `seen` (inputs_stamp()), reads and analyses them again and hands the
 * new runs to the server; the runs it showed are freed once web_update() lets them go. So the
 * analysis runs again at most about once a second, and only on a change. */
static void follow(web *w, const serve_opts *o, int argc, char **argv, const store_run *base,
                   serve_set *cur, const sigset_t *set, uint64_t seen, /* before cur was read */
                   char notes[2][1024])                                /* what was said of it */
{
    char err[512];
    for (;;) {
        struct timespec tick = {1, 0};
        int sig = sigtimedwait(set, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM)
            return;
        uint64_t now = inputs_stamp(o, argc, argv);
        if (now == seen)
            continue;
        seen = now; /* before reading: what changes while it reads is read next time */
        serve_set next;
        if (load_live(o, argc, argv, base, notes, &next) != 0)
            continue; /* said; the page keeps showing the last reading */
        if (web_update(w, next.wr, (unsigned)next.nruns, err, sizeof err) != WEB_OK) {
            fprintf(stderr, "tlview serve: %s\n", err);
            set_free(&next);
            continue;
        }
        set_free(cur);
        *cur = next;
        for (int i = 0; i < cur->nruns; i++) /* the labels moved with the set */
            cur->wr[i].label = cur->labels[i];
    }
}

/* report_plain: the text report of `tlview report` on analysis a, without colours (the page's
 * "report as text" download: web_options.export_text). */
static int report_plain(FILE *f, const analysis *a)
{
    cli_range whole = {.origin = store_run_origin(analysis_get_run(a))}; /* the run shown */
    report_text(f, a, NULL, &whole, 0, 10);
    return ferror(f) ? -1 : 0;
}

/* server_setup: blocks the stop signals (into *set) before the server's threads start, so they
 * are taken by the main thread only, and raises the open-file limit: every connection is an open
 * file, and the usual soft limit (1024) would hold web/'s connection limit below its 4096. */
static void server_setup(serve_opts *o, sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigprocmask(SIG_BLOCK, set, NULL);
    o->web.allow_hosts = (const char *const *)o->hosts;
    o->web.export_chrome = cli_export_chrome;
    o->web.export_text = report_plain;
    o->web.version = CLI_VERSION;
    o->web.follow = o->follow;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* start_error: says why web_start() or web_start_job() failed (rc, err). */
static void start_error(const serve_opts *o, int rc, const char *err)
{
    fprintf(stderr, "tlview serve: %s\n", err);
    if (rc == WEB_EADDRINUSE)
        fprintf(stderr,
                "tlview serve: port %u is taken (another tlview serve?): --port 0 picks a "
                "free one, or give another with --port N\n",
                o->web.port);
}

/* ---------------------------------------------------------------- a job (--job) */

/* A group whose timeline the server holds (web_job_show()), with what it borrows. */
typedef struct job_open {
    uint32_t group; /* UINT32_MAX: a free entry */
    store_run *run;
    analysis *an;
    char label[512];
} job_open;

/* A job being served: the index, the summaries and the groups opened, shared by the main thread,
 * the summariser and the opener. */
typedef struct job_serve {
    const serve_opts *o;
    const store_run *base; /* --baseline's run, or NULL */
    job_index *idx;
    job_options jo;
    web *w;
    char **summaries;                    /* ngroups: job_group_summary()'s texts */
    job_open open[WEB_JOB_OPEN_MAX + 1]; /* web/ holds WEB_JOB_OPEN_MAX, one more is loaded */
    pthread_mutex_t lock;                /* guards stop */
    int stop;                            /* the summariser stops before its next group */
} job_serve;

static int stopping(job_serve *js)
{
    pthread_mutex_lock(&js->lock);
    int stop = js->stop;
    pthread_mutex_unlock(&js->lock);
    return stop;
}

/* summarise: the summariser's thread. Makes every group's summary, one group at a time (memory
 * follows the largest group, as tlview job's), the groups whose timelines were asked for first,
 * then by kernels, most first (ties: group order); hands each to the page; at the end the job
 * report, as `tlview job --format json` has it. */
static void *summarise(void *arg)
{
    job_serve *js = arg;
    uint32_t n = job_index_ngroups(js->idx), made = 0;
    uint32_t *order = calloc((size_t)n + 1, sizeof *order);
    uint8_t *done = calloc((size_t)n + 1, 1);
    if (!order || !done) {
        fprintf(stderr, "tlview serve: out of memory: no GPU summaries\n");
        goto out;
    }
    for (uint32_t g = 0; g < n; g++) { /* insertion by kernels, stable */
        uint64_t k = job_index_group(js->idx, g)->kernels;
        uint32_t i = g;
        while (i > 0 && job_index_group(js->idx, order[i - 1])->kernels < k) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = g;
    }
    for (uint32_t next = 0; made < n && !stopping(js); made++) {
        uint32_t g = UINT32_MAX;
        for (uint32_t a = 0; a < n && g == UINT32_MAX; a++)
            if (!done[a] && web_job_asked(js->w, a))
                g = a;
        while (g == UINT32_MAX && next < n)
            if (!done[order[next++]])
                g = order[next - 1];
        const job_group *grp = job_index_group(js->idx, g);
        char *json = NULL;
        int rc = job_group_summary(grp->paths, grp->nfiles, g, &js->jo, &json);
        if (rc == JOB_ENOMEM || !json) {
            fprintf(stderr, "tlview serve: out of memory: no more GPU summaries\n");
            goto out;
        }
        js->summaries[g] = json;
        done[g] = 1;
        if (web_job_summary(js->w, g, json) != WEB_OK)
            fprintf(stderr, "tlview serve: out of memory: group %u's summary not shown\n", g);
    }
    if (made == n) {
        char why[1024];
        json_t *rep = job_report_json(js->idx, js->summaries, CLI_VERSION, why, sizeof why);
        char *text = rep ? json_dumps(rep, JSON_COMPACT | JSON_REAL_PRECISION(8)) : NULL;
        if (!rep)
            cli_msg(stderr, "tlview serve: no job report: %s\n", why);
        else if (!text || web_job_report(js->w, text) != WEB_OK)
            fprintf(stderr, "tlview serve: out of memory: no job report\n");
        free(text);
        json_decref(rep);
    }
out:
    free(order);
    free(done);
    return NULL;
}

/* open_load: loads group g's files into *pRun and analyses it into *pAn as `tlview job --group
 * N` (`tlview report` of those files) does. 0, or -1 with the reason in why. */
static int open_load(job_serve *js, uint32_t g, store_run **pRun, analysis **pAn, char *why,
                     size_t n)
{
    const job_group *grp = job_index_group(js->idx, g);
    store_run *run = store_run_new();
    *pRun = NULL, *pAn = NULL;
    if (!run) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    store_run_set_gpu_identity(run, js->o->an.separate_gpus);
    /* as cli_load(): its files held open together in batches well below the open-file limit */
    for (uint32_t i = 0; i < grp->nfiles; i += 128) {
        uint32_t k = grp->nfiles - i < 128 ? grp->nfiles - i : 128;
        if (store_run_load_files(run, grp->paths + i, k) != 0) {
            snprintf(why, n, "%s", store_run_errmsg(run));
            store_run_free(run);
            return -1;
        }
    }
    if (store_run_finish(run) != 0) {
        snprintf(why, n, "%s", store_run_errmsg(run));
        store_run_free(run);
        return -1;
    }
    if (cli_analyse(run, js->base, &js->o->an.options, pAn) != 0) {
        snprintf(why, n, "the analysis failed (out of memory)");
        store_run_free(run);
        return -1;
    }
    *pRun = run;
    return 0;
}

/* opener: the opener's thread. Loads each group the page asks for and hands it to web/; frees
 * the group web/ lets go of. */
static void *opener(void *arg)
{
    job_serve *js = arg;
    int64_t asked;
    while ((asked = web_job_wait_open(js->w)) >= 0) {
        uint32_t g = (uint32_t)asked, evicted = UINT32_MAX;
        job_open *slot = NULL;
        for (int i = 0; i <= WEB_JOB_OPEN_MAX && !slot; i++)
            if (js->open[i].group == UINT32_MAX)
                slot = &js->open[i];
        char why[1024];
        if (open_load(js, g, &slot->run, &slot->an, why, sizeof why) != 0) {
            cli_msg(stderr, "tlview serve: group %u: %s\n", g, why);
            web_job_failed(js->w, g, why);
            continue;
        }
        const job_group *grp = job_index_group(js->idx, g);
        snprintf(slot->label, sizeof slot->label, "group %u: %s (%u file%s)", g,
                 grp->host ? grp->host : "?", grp->nfiles, grp->nfiles == 1 ? "" : "s");
        web_run wr = {slot->label, slot->run, slot->an};
        if (web_job_show(js->w, g, &wr, 1, &evicted, why, sizeof why) != WEB_OK) {
            fprintf(stderr, "tlview serve: group %u: %s\n", g, why);
            analysis_free(slot->an);
            store_run_free(slot->run);
            continue;
        }
        slot->group = g;
        for (int i = 0; i <= WEB_JOB_OPEN_MAX && evicted != UINT32_MAX; i++)
            if (js->open[i].group == evicted) {
                analysis_free(js->open[i].an);
                store_run_free(js->open[i].run);
                js->open[i] = (job_open){.group = UINT32_MAX};
                evicted = UINT32_MAX;
            }
    }
    return NULL;
}

/* serve_job: tlview serve --job: the index of the FILES, the server at once, the summaries and
 * the groups' timelines on threads of their own, until SIGINT or SIGTERM. 0, or 1 after
 * printing the error. */
static int serve_job(serve_opts *o, int argc, char **argv, const store_run *base)
{
    job_serve js = {.o = o, .base = base};
    pthread_t tsum, topen;
    int have_sum = 0, have_open = 0, rc = 1;
    char err[512], *text = NULL;
    json_t *index = NULL;
    pthread_mutex_init(&js.lock, NULL);
    for (int i = 0; i <= WEB_JOB_OPEN_MAX; i++)
        js.open[i].group = UINT32_MAX;
    js.jo = (job_options){.analysis = o->an.options, .separate_gpus = o->an.separate_gpus};
    js.jo.analysis.baseline = base;
    int irc = job_index_build((const char *const *)argv + optind, (uint32_t)(argc - optind),
                              o->an.separate_gpus, &js.idx);
    if (irc != JOB_OK) {
        if (js.idx && job_index_errmsg(js.idx)[0])
            cli_msg(stderr, "tlview serve: %s\n", job_index_errmsg(js.idx));
        else
            fprintf(stderr, "tlview serve: out of memory\n");
        goto out;
    }
    uint32_t ngroups = job_index_ngroups(js.idx);
    js.summaries = calloc((size_t)ngroups + 1, sizeof *js.summaries);
    index = job_index_json(js.idx);
    if (!js.summaries || !index || json_object_set_new(index, "note", json_string(JOB_NOTE)) ||
        !(text = json_dumps(index, JSON_COMPACT))) {
        fprintf(stderr, "tlview serve: out of memory\n");
        goto out;
    }
    sigset_t set;
    server_setup(o, &set);
    int wrc = web_start_job(&o->web, text, ngroups, &js.w, err, sizeof err);
    if (wrc != WEB_OK) {
        start_error(o, wrc, err);
        goto out;
    }
    char what[160];
    uint64_t kernels = 0;
    for (uint32_t i = 0; i < job_index_nfiles(js.idx); i++)
        kernels += job_index_file(js.idx, i)->kernels;
    snprintf(what, sizeof what, "a job of %u files, %u GPU group%s, %llu kernels",
             job_index_nfiles(js.idx), ngroups, ngroups == 1 ? "" : "s",
             (unsigned long long)kernels);
    print_url(&o->web, js.w, what);
    have_sum = pthread_create(&tsum, NULL, summarise, &js) == 0;
    have_open = pthread_create(&topen, NULL, opener, &js) == 0;
    if (!have_sum || !have_open) {
        fprintf(stderr, "tlview serve: cannot start a thread\n");
    } else {
        int sig;
        sigwait(&set, &sig);
        fprintf(stderr, "tlview serve: stopping\n");
        rc = 0;
    }
    pthread_mutex_lock(&js.lock);
    js.stop = 1;
    pthread_mutex_unlock(&js.lock);
    web_job_close(js.w);
    if (have_open)
        pthread_join(topen, NULL);
    if (have_sum)
        pthread_join(tsum, NULL); /* ends after the group it is making */
out:
    web_stop(js.w);
    for (int i = 0; i <= WEB_JOB_OPEN_MAX; i++) {
        analysis_free(js.open[i].an);
        store_run_free(js.open[i].run);
    }
    for (uint32_t g = 0; js.summaries && g < job_index_ngroups(js.idx); g++)
        free(js.summaries[g]);
    free(js.summaries);
    free(text);
    json_decref(index);
    job_index_free(js.idx);
    pthread_mutex_destroy(&js.lock);
    return rc;
}

/* ---------------------------------------------------------------- FILES, or the demo */

/* A run being read and analysed while the server already answers: the page shows what is being
 * done (web_progress(), GET /api/status) and draws the timeline once it is shown. */
typedef struct loader {
    serve_opts *o;
    int argc;
    char **argv;
    char off[PATH_MAX], on[PATH_MAX]; /* the demo's folders (no FILES) */
    web *w;
    store_run *base;        /* --baseline's run (or the demo's solo run) */
    const adv_exp *exp;     /* the experiment of tlview advise served, or NULL */
    const adv_shown *shown; /* its configurations' runs (exp->nconfigs) */
    serve_set cur;
    pthread_t main;  /* told with SIGUSR1 when done */
    int rc;          /* 0 shown, 1 failed (the message printed) */
    uint64_t files;  /* files read so far, for the progress */
    atomic_int kept; /* 1 once the loader has written what the cache lacked (after the first
                        paint: cli_cache_keep) and ended */
} loader;

/* loader_progress: what cli_load() reads, said to the page (cli_load_fn). */
static void loader_progress(void *ctx, const char *path, uint64_t done, uint64_t total, int bytes)
{
    loader *L = ctx;
    char stage[256];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (bytes)
        snprintf(stage, sizeof stage, "importing %.180s (%llu of %llu MB)", base,
                 (unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
    else
        snprintf(stage, sizeof stage, "reading %.180s (file %llu of %llu)", base,
                 (unsigned long long)done + 1, (unsigned long long)total);
    web_progress(L->w, stage, done, total);
}

/* load_experiment: the runs drawn of the experiment L->exp, each read and analysed before the
 * next is read (with the solo references advise used, unless --baseline gives them) into L->cur.
 * 0, or 1 after printing the error. */
static int load_experiment(loader *L)
{
    serve_set *cur = &L->cur;
    const int sep = L->o->an.separate_gpus;
    int drawn = 0;
    for (int c = 0; c < L->exp->nconfigs; c++)
        drawn += L->shown[c].page >= 0;
    for (int c = 0; c < L->exp->nconfigs; c++) {
        const adv_shown *s = &L->shown[c];
        if (s->page < 0)
            continue;
        int i = cur->nruns;
        char stage[160], *dir = (char *)s->dir, *base_dir = (char *)s->base_dir;
        store_run *base = NULL;
        snprintf(stage, sizeof stage, "reading and analysing %.80s (run %d of %d)", s->label, i + 1,
                 drawn);
        web_progress(L->w, stage, (uint64_t)i, (uint64_t)drawn);
        snprintf(cur->labels[i], sizeof cur->labels[i], "%s", s->label);
        if (cli_load(1, &dir, sep, &cur->runs[i]) != 0)
            return 1;
        cur->nruns = i + 1;
        if (!L->base && base_dir[0] && cli_load(1, &base_dir, sep, &base) != 0)
            return 1;
        int rc = analyse_one(L->o, L->base ? L->base : base, cur, i);
        store_run_free(base); /* read during the analysis only */
        if (rc != 0)
            return 1;
    }
    return 0;
}

/* set_kernels: the kernels of the runs of s together. */
static uint64_t set_kernels(const serve_set *s)
{
    uint64_t n = 0;
    for (int i = 0; i < s->nruns; i++)
        n += s->runs[i]->nkernels;
    return n;
}

/* load_runs: the runs of tlview serve FILES (and --compare), or of the demo, read into L->cur
 * (labels set) with the baseline; an experiment's read and analysed (load_experiment()). 0, or 1
 * after printing the error. */
static int load_runs(loader *L)
{
    serve_opts *o = L->o;
    const int sep = o->an.separate_gpus;
    serve_set *cur = &L->cur;
    if (o->an.nbaseline) {
        web_progress(L->w, "reading the baseline (--baseline)", 0, 0);
        if (cli_load(o->an.nbaseline, o->an.baseline, sep, &L->base) != 0)
            return 1;
    }
    if (L->exp)
        return load_experiment(L);
    if (optind < L->argc) {
        for (int i = 0; i < (o->an.ncompare ? 2 : 1); i++) {
            int n;
            char **files;
            files_of(o, L->argc, L->argv, i, &n, &files);
            label_of(cur->labels[i], sizeof cur->labels[i], n, files, "");
            if (cli_load(n, files, sep, &cur->runs[i]) != 0)
                return 1;
            cur->nruns = i + 1;
        }
        return 0;
    }
    /* one process alone (mps-off/n1) gives the solo references that the stretch needs: the
     * demo's processes each run one long kernel, all of them overlapped */
    char solo[PATH_MAX], *first = L->off[0] ? L->off : L->on;
    const char *root_end = strstr(first, L->off[0] ? "/mps-off/n" : "/mps-on/n");
    int k = root_end ? (int)(root_end - first) : 0;
    snprintf(solo, sizeof solo, "%.*s/mps-off/n1", k, first);
    if (!L->base && root_end && strcmp(first + strlen(first) - 3, "/n1") != 0 && has_traces(solo)) {
        char *sv[1] = {solo};
        if (cli_load(1, sv, sep, &L->base) != 0)
            return 1;
        fprintf(stderr, "tlview serve: solo references from %s\n", solo);
    }
    char *dirs[2] = {L->off, L->on};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i][0])
            continue;
        const char *tail = strstr(dirs[i], i ? "mps-on/" : "mps-off/");
        snprintf(cur->labels[cur->nruns], sizeof cur->labels[cur->nruns], "%s (demo, H200)",
                 tail ? tail : dirs[i]);
        if (cli_load(1, &dirs[i], sep, &cur->runs[cur->nruns]) != 0)
            return 1;
        cur->nruns++;
    }
    fprintf(stderr, "tlview serve: no files given: showing the demo traces%s%s%s%s\n",
            L->off[0] ? " " : "", L->off, L->on[0] ? " and " : "", L->on);
    return 0;
}

/* loader_thread: reads, analyses and shows the runs (web_show()), then tells the main thread. */
static void *loader_thread(void *arg)
{
    loader *L = arg;
    char err[512], stage[160];
    cli_load_progress(loader_progress, L);
    L->rc = load_runs(L);
    cli_load_progress(NULL, NULL);
    if (!L->rc && !L->exp) { /* an experiment's runs were analysed as they were read */
        snprintf(stage, sizeof stage, "analysing %llu kernels",
                 (unsigned long long)set_kernels(&L->cur));
        web_progress(L->w, stage, 0, 0);
        L->rc = analyse_set(L->o, L->base, &L->cur);
    }
    for (int i = 0; !L->rc && i < L->cur.nruns; i++) { /* an index kept beside the run */
        const void *blob;
        size_t len;
        if (cli_cache_index_open(L->cur.runs[i], L->cur.an[i], &L->cur.index[i], &blob, &len) == 0)
            web_lend_index(L->w, (unsigned)i, blob, len);
    }
    if (!L->rc) {
        web_progress(L->w, "indexing for the timeline", 0, 0);
        if (web_show(L->w, L->cur.wr, (unsigned)L->cur.nruns, err, sizeof err) != WEB_OK) {
            fprintf(stderr, "tlview serve: %s\n", err);
            L->rc = 1;
        }
    }
    if (L->rc)
        web_failed(L->w, "the files could not be read or analysed (tlview serve said why)");
    pthread_kill(L->main, SIGUSR1);
    /* the page is drawn: now what the cache lacks (a stop meanwhile ends the process: what was
     * being written is a temporary file, which a later write of that cache removes), at a lower
     * priority than the answers (this thread and the checksum threads it starts: Linux's nice is
     * per thread), so that the page's first queries do not wait for it */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    for (int i = 0; !L->rc && i < L->cur.nruns; i++) {
        void *blob = NULL;
        size_t len = 0;
        cli_cache_keep(L->cur.runs[i], L->cur.an[i]);
        if (!web_index_thawed(L->w, (unsigned)i) &&
            web_index_freeze(L->w, (unsigned)i, &blob, &len) == WEB_OK)
            cli_cache_index_keep(L->cur.runs[i], L->cur.an[i], blob, len);
        free(blob);
    }
    if (!L->rc && L->base)
        cli_cache_keep(L->base, NULL);
    atomic_store(&L->kept, 1);
    return NULL;
}

/* An experiment of tlview advise being served: what it is and what is drawn of it. */
typedef struct serve_exp {
    adv_exp e;
    adv_shown shown[ADV_MAX_CONFIGS];
    char *text; /* the page's JSON of it (GET /api/experiment) */
    int drawn;  /* runs drawn */
} serve_exp;

/* experiment_open: reads the experiment in folder `dir` (its advise.json, checked as `tlview
 * advise --show` checks it) into *x, picks the runs drawn and says on stderr which are not.
 * 0, or 1 after printing the error (x freed). */
static int experiment_open(const char *dir, serve_exp *x)
{
    char err[1024];
    if (adv_load(dir, &x->e, err, sizeof err) != 0) {
        cli_msg(stderr, "tlview serve: %s\n", err);
        return 1;
    }
    json_t *plan = adv_serve_plan(&x->e, SERVE_EXPERIMENT_MAX_BYTES, x->shown, &x->drawn);
    x->text = plan ? json_dumps(plan, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(plan);
    if (!x->text) {
        fprintf(stderr, "tlview serve: out of memory\n");
        adv_exp_free(&x->e);
        return 1;
    }
    for (int c = 0; c < x->e.nconfigs; c++)
        if (x->shown[c].note[0])
            cli_msg(stderr, "tlview serve: %s: %s\n", dir, x->shown[c].note);
    if (x->drawn == 0) {
        cli_msg(stderr, "tlview serve: %s: no configuration of the experiment has a run to draw\n",
                dir);
        free(x->text);
        adv_exp_free(&x->e);
        return 1;
    }
    return 0;
}

/* serve_loading: tlview serve FILES (or the demo, or an experiment): the server answers at once,
 * the files are read and analysed on a thread of their own meanwhile (the page shows the
 * progress), then shown, until SIGINT or SIGTERM. A stop signal while loading stops at once. 0,
 * or 1 after printing the error (a file that cannot be read: the server stops). */
static int serve_loading(serve_opts *o, int argc, char **argv)
{
    loader *L = calloc(1, sizeof *L); /* a thread may still use it if a signal ends the wait */
    serve_exp *x = NULL;
    char err[512];
    int rc = 1, sig;
    if (!L || (o->experiment && !(x = calloc(1, sizeof *x)))) {
        fprintf(stderr, "tlview serve: out of memory\n");
        free(L);
        return 1;
    }
    *L = (loader){.o = o, .argc = argc, .argv = argv, .main = pthread_self()};
    atomic_init(&L->kept, 0);
    cli_cache_defer(
        1); /* the first paint does not wait for the cache: the loader writes it after */
    if ((optind >= argc && find_demo(L->off, L->on, sizeof L->off) != 0) ||
        (x && experiment_open(o->experiment, x) != 0)) {
        free(x);
        free(L);
        return 1;
    }
    if (x) {
        L->exp = &x->e;
        L->shown = x->shown;
        o->web.experiment = x->text;
    }
    sigset_t set, done;
    server_setup(o, &set);
    done = set;
    sigaddset(&done, SIGUSR1); /* the loader's "done", blocked in every thread to come */
    sigprocmask(SIG_BLOCK, &done, NULL);
    int wrc = web_start_loading(&o->web, &L->w, err, sizeof err);
    if (wrc != WEB_OK) {
        start_error(o, wrc, err);
        goto out;
    }
    char what[160];
    if (x)
        snprintf(what, sizeof what,
                 "an experiment of %d configurations (%d runs drawn) being loaded", x->e.nconfigs,
                 x->drawn);
    else
        snprintf(what, sizeof what, "%s being loaded",
                 optind < argc ? (o->an.ncompare ? "2 runs" : "the run") : "the demo");
    print_url(&o->web, L->w, what);
    pthread_t th;
    if (pthread_create(&th, NULL, loader_thread, L) != 0) {
        fprintf(stderr, "tlview serve: cannot start a thread\n");
        goto out;
    }
    sigwait(&done, &sig);
    if (sig != SIGUSR1) { /* stopped while loading: the loader is left to the exit */
        fprintf(stderr, "tlview serve: stopping\n");
        fflush(NULL);
        _exit(0);
    }
    if (!L->rc) {
        fprintf(stderr, "tlview serve: %llu kernels", (unsigned long long)set_kernels(&L->cur));
        if (L->cur.nruns > 1)
            fprintf(stderr, " in %d runs", L->cur.nruns);
        fprintf(stderr, " shown\n");
        sigwait(&set, &sig);
        fprintf(stderr, "tlview serve: stopping\n");
        if (!atomic_load(&L->kept)) { /* still writing the cache: not waited for */
            fflush(NULL);
            _exit(0);
        }
        rc = 0;
    }
    pthread_join(th, NULL);
out:
    web_stop(L->w);
    set_free(&L->cur);
    store_run_free(L->base);
    if (x) {
        adv_exp_free(&x->e);
        free(x->text);
        free(x);
    }
    free(L);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    serve_opts o = {0};
    web_options_default(&o.web);
    store_run *base = NULL;
    serve_set cur = {0};
    web *w = NULL;
    int rc = 1;
    char err[512], notes[2][1024] = {"", ""};
    uint64_t stamp = 0; /* --follow: the files as they were before the first reading */
    if (cli_analysis_opts_init(&o.an, "serve", argc))
        return 1;
    if (!(o.hosts = calloc((size_t)argc + 1, sizeof *o.hosts))) {
        fprintf(stderr, "tlview serve: out of memory\n");
        goto out;
    }
    if ((rc = parse(argc, argv, &o)) != 0) {
        rc = rc < 0 ? 0 : rc; /* --help */
        goto out;
    }
    rc = 1;
    const int sep = o.an.separate_gpus;
    if (!o.job && !o.follow) { /* the files (or the demo) loaded while the page answers */
        rc = serve_loading(&o, argc, argv);
        goto out;
    }
    if (o.an.nbaseline && cli_load(o.an.nbaseline, o.an.baseline, sep, &base) != 0)
        goto out;
    if (o.job) {
        rc = serve_job(&o, argc, argv, base);
        goto out;
    }
    /* --follow: the files are being written: read them read-only, as they are now; what they
     * were before this first reading, so that a change while it reads is read again */
    store_set_read_only(1);
    stamp = inputs_stamp(&o, argc, argv);
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0)
            cli_msg(stderr, "tlview serve: %s does not exist (yet): followed all the same\n",
                    argv[i]);
    }
    if (load_live(&o, argc, argv, base, notes, &cur) != 0)
        goto out;
    sigset_t set;
    server_setup(&o, &set);
    int wrc = web_start(&o.web, cur.wr, (unsigned)cur.nruns, &w, err, sizeof err);
    if (wrc != WEB_OK) {
        start_error(&o, wrc, err);
        goto out;
    }
    char what[64];
    snprintf(what, sizeof what, "%llu kernels%s", (unsigned long long)set_kernels(&cur),
             cur.nruns == 2 ? " in 2 runs" : "");
    print_url(&o.web, w, what);
    fprintf(stderr, "tlview serve: following the files: the page updates as they grow\n");
    follow(w, &o, argc, argv, base, &cur, &set, stamp, notes);
    fprintf(stderr, "tlview serve: stopping\n");
    rc = 0;
out:
    web_stop(w);
    set_free(&cur);
    store_run_free(base);
    cli_analysis_opts_free(&o.an);
    free(o.hosts);
    return rc;
}
