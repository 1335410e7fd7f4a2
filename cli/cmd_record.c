/* cmd_record.c: `tlview record [-o DIR] [--procs N] [--mps] [--label NAME] -- CMD ARGS`.
 * Runs N copies of CMD together under libcollect.so (CUDA_INJECTION64_PATH), optionally as clients
 * of a private MPS daemon, and leaves in DIR one trace file per CUDA process plus manifest.json;
 * then prints the report's headline. The steps live in cli/record_spawn.c (barrier, signals),
 * cli/record_mps.c (daemon) and cli/record_manifest.c (manifest).
 * tlview-summary: run N copies of a CUDA command together under the collector (MPS optional) */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"
#include "store.h"

#define MAX_PROCS 1024

static const char usage_text[] =
    "usage: tlview record [-o DIR] [-n N] [--mps] [-l NAME] [-b DIR] [-f] [--serve [--port N]]\n"
    "                     [--color WHEN] -- CMD [ARGS...]\n"
    "\n"
    "Runs N copies of CMD at once under the tlview collector and keeps one trace file per\n"
    "CUDA process in DIR, with DIR/manifest.json describing the run; then prints the\n"
    "report's headline.\n"
    "The copies are started behind a barrier (all are forked before any runs), so they overlap.\n"
    "Each copy sees TLVIEW_RANK (0..N-1), TLVIEW_NPROCS, TLVIEW_RUN_ID, TLVIEW_RECORD_DIR (DIR,\n"
    "absolute) and TLVIEW_OUTPUT (DIR/LABEL.%p.db); the samples use them for a start barrier of\n"
    "their own once CUDA is initialised.\n"
    "\n"
    "  -o, --output DIR   folder for the traces (default: tlview-LABEL-YYYYMMDD-HHMMSS); an\n"
    "                     existing folder holding a manifest.json is refused unless --force\n"
    "  -n, --procs N      copies to start together, 1 to 1024 (default 1)\n"
    "      --mps          run the copies as MPS clients: start a private MPS control daemon\n"
    "                     with its pipe and log folders in DIR and stop it at the end, or\n"
    "                     reuse the one of CUDA_MPS_PIPE_DIRECTORY when its control pipe\n"
    "                     exists (left running)\n"
    "  -l, --label NAME   trace file prefix, letters, digits, '.', '_', '-' (default: CMD's name)\n"
    "  -b, --baseline DIR solo references for the headline from an earlier recording (e.g. the\n"
    "                     same command with --procs 1): needed when every kernel overlapped\n"
    "  -f, --force        record into a folder that already holds a run (its traces are kept;\n"
    "                     only files written by this run are reported)\n"
    "      --serve        watch it while it runs: tlview serve --follow DIR starts beside the\n"
    "                     recording (its URL is printed, with the token the server requires),\n"
    "                     shows the traces as they are written and stays until Ctrl-C once\n"
    "                     the recording is done\n"
    "      --port N       the port of --serve (default 8080; 0 picks a free one)\n"
    "      --color WHEN   colour the headline: auto (default: when stdout is a terminal; under\n"
    "                     mpirun or srun when the launcher's stdout is; never with NO_COLOR\n"
    "                     set or TERM=dumb), always, never\n"
    "  -h, --help         this text\n"
    "\n"
    "Environment: TLVIEW_COLLECTOR (libcollect.so to use), TLVIEW_MPS_CONTROL (control program,\n"
    "default nvidia-cuda-mps-control on PATH); TLVIEW_* collector settings pass through.\n"
    "Exit status: 0 when every copy exited 0; the first copy's non-zero status (128+signal when\n"
    "killed); 128+signal when record itself was interrupted; 1 when record failed (no trace\n"
    "written, MPS daemon trouble); 2 for a usage error.\n";

/* Everything one record run holds; freed by run_free(). */
typedef struct rec_run_state {
    char dir[PATH_MAX]; /* absolute output folder */
    char label[256];
    char run_id[96];
    char collector[PATH_MAX];
    char pattern[PATH_MAX + 300]; /* TLVIEW_OUTPUT */
    char program[PATH_MAX];       /* CMD resolved on PATH */
    int nprocs, use_mps, force;
    int serve;            /* --serve: tlview serve --follow DIR beside the recording */
    unsigned port;        /* --port of --serve */
    pid_t server;         /* its pid, 0 when none */
    const char *baseline; /* --baseline DIR or NULL */
    const char *color;    /* --color WHEN: auto (the default), always, never */
    rec_mps mps;
    rec_child *kids;
    char **before;
    int nbefore; /* trace files in DIR before the run */
    char **files;
    int nfiles; /* trace files written by the run */
} rec_run_state;

static int valid_label(const char *s)
{
    if (!*s || strlen(s) > 200)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* The files written during the run: those in DIR now that were not there before. */
static void collect_new_files(rec_run_state *st)
{
    char **now;
    int n = rec_list_traces(st->dir, &now);
    st->files = calloc((size_t)n + 1, sizeof *st->files);
    st->nfiles = 0;
    for (int i = 0; i < n; i++) {
        int old = 0;
        for (int j = 0; j < st->nbefore && !old; j++)
            old = strcmp(now[i], st->before[j]) == 0;
        if (!old && st->files)
            st->files[st->nfiles++] = now[i];
        else
            free(now[i]);
    }
    free(now);
}

/* Creates DIR if needed; refuses one holding a manifest unless --force; makes it absolute. */
static int prepare_dir(rec_run_state *st, const char *dir, char *err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, REC_ERR_MAX, "%s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, REC_ERR_MAX, "%s: not a folder", dir);
        return -1;
    }
    /* A folder someone else made or may write is refused: what they left in it (a link named
     * like a log) would be written through. A link to a folder counts only when this user (or
     * root) made the link. */
    if (lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode) && sb.st_uid != geteuid() && sb.st_uid != 0) {
        snprintf(err, REC_ERR_MAX, "%s: a link another user (uid %u) made: refused", dir,
                 (unsigned)sb.st_uid);
        return -1;
    }
    if (!realpath(dir, st->dir)) {
        snprintf(err, REC_ERR_MAX, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (store_fs_check_dir(st->dir, STORE_FS_SHARED, err, REC_ERR_MAX) != 0)
        return -1;
    char manifest[PATH_MAX + 32];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", st->dir);
    if (rec_regular_file(manifest) && !st->force) {
        snprintf(err, REC_ERR_MAX,
                 "%s already holds a recorded run (%s); choose another folder "
                 "with -o or add --force",
                 dir, manifest);
        return -1;
    }
    if (access(st->dir, W_OK) != 0) {
        snprintf(err, REC_ERR_MAX, "%s: not writable", dir);
        return -1;
    }
    st->nbefore = rec_list_traces(st->dir, &st->before);
    return 0;
}

static void make_run_id(rec_run_state *st, int64_t now)
{
    unsigned int rnd = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&rnd, sizeof rnd, 1, f) != 1)
        rnd = (unsigned int)(now ^ getpid());
    if (f)
        fclose(f);
    time_t s = (time_t)(now / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(st->run_id, sizeof st->run_id, "%s-%d-%08x", stamp, (int)getpid(), rnd);
}

/* Loads the baseline: a file, or a record folder's trace files (*.db: the folder itself would
 * offer manifest.json to the importers too). */
static int load_baseline(const char *path, store_run **ppRun)
{
    struct stat sb;
    char *one[1] = {(char *)path}, **files = one;
    int n = 1;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && (n = rec_list_traces(path, &files)) == 0) {
        cli_msg(stderr, "tlview record: --baseline %s: no trace files (*.db) there\n", path);
        free(files);
        return -1;
    }
    int rc = cli_load(n, files, 0, ppRun);
    if (files != one)
        rec_free_list(files, n);
    return rc;
}

/* Reads the run's files back and prints what `tlview report` would headline, with one line per
 * process (at most 16) so the copies can be told apart. */
static int print_headline(rec_run_state *st)
{
    store_run *run = NULL, *base = NULL;
    analysis *a = NULL;
    if (cli_load(st->nfiles, st->files, 0, &run) != 0)
        return -1;
    if (st->baseline && load_baseline(st->baseline, &base) != 0) {
        store_run_free(run);
        return -1;
    }
    if (cli_analyse(run, base, NULL, &a) != 0) { /* its own recordings: MPS state known */
        store_run_free(run);
        store_run_free(base);
        return -1;
    }
    int color = cli_color(st->color, stdout) == 1;
    printf("\n");
    cli_headline(stdout, a, color);
    uint32_t np = analysis_nprocesses(a);
    char busy[32], stretch[32];
    printf("%8s %8s %12s %9s %4s\n", "pid", "kernels", "kernel time", "stretch", "mps");
    for (uint32_t i = 0; i < np && i < 16; i++) {
        const analysis_process *p = analysis_get_process(a, i);
        if (isnan(p->stretch))
            snprintf(stretch, sizeof stretch, "-");
        else
            snprintf(stretch, sizeof stretch, "%.2fx", p->stretch);
        printf("%8lld %8llu %12s %9s %4s\n", (long long)run->processes[p->process].pid,
               (unsigned long long)p->nkernels, cli_fmt_ns((double)p->kernel_ns, busy, sizeof busy),
               stretch, analysis_mps_name(p->mps));
    }
    if (np > 16)
        printf("... and %u more processes\n", np - 16);
    for (uint32_t i = 0; i < analysis_ndevices(a) && !st->baseline; i++) {
        const analysis_device *d = analysis_get_device(a, i);
        if (d->verdict >= ANALYSIS_CONCURRENT &&
            d->by_verdict[d->verdict].basis != ANALYSIS_BASIS_REFERENCE) {
            printf("tip: the kernels had no solo run to compare with, so the stretch is estimated "
                   "or unknown: record the command alone (--procs 1) and pass that folder with "
                   "--baseline\n");
            break;
        }
    }
    cli_msg(stdout, "full report: tlview report %s/*.db\n", st->dir);
    analysis_free(a);
    store_run_free(run);
    store_run_free(base);
    return 0;
}

static void run_free(rec_run_state *st)
{
    free(st->kids);
    rec_free_list(st->before, st->nbefore);
    rec_free_list(st->files, st->nfiles);
}

static int exit_code_of(const rec_child *k)
{
    if (!k->done || k->pid <= 0)
        return 0;
    if (WIFEXITED(k->status))
        return WEXITSTATUS(k->status);
    return 128 + WTERMSIG(k->status);
}

/* Parses the options into st; returns -1 to go on, or the exit status (help, usage error).
 * *pCmd receives the command's argv, *pDir the -o folder or NULL. */
static int parse_args(rec_run_state *st, int argc, char **argv, char ***pCmd, const char **pDir)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"procs", required_argument, 0, 'n'},
                                         {"mps", no_argument, 0, 'M'},
                                         {"label", required_argument, 0, 'l'},
                                         {"force", no_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {"baseline", required_argument, 0, 'b'},
                                         {"serve", no_argument, 0, 'S'},
                                         {"port", required_argument, 0, 'P'},
                                         {"color", required_argument, 0, 'C'},
                                         {0, 0, 0, 0}};
    const char *label = NULL;
    int c, port_given = 0;
    optind = 0; /* full re-initialisation: the dispatcher may have used getopt already */
    opterr = 0; /* the messages below name the subcommand */
    while ((c = getopt_long(argc, argv, "+:o:n:l:b:fh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': *pDir = optarg; break;
        case 'n': {
            long v;
            if (cli_parse_long(optarg, 1, MAX_PROCS, &v))
                return cli_usage_error("record", "--procs %s: expected a number from 1 to %d",
                                       optarg, MAX_PROCS);
            st->nprocs = (int)v;
            break;
        }
        case 'M': st->use_mps = 1; break;
        case 'l': label = optarg; break;
        case 'f': st->force = 1; break;
        case 'b': st->baseline = optarg; break;
        case 'S': st->serve = 1; break;
        case 'P': {
            long v;
            if (cli_parse_long(optarg, 0, 65535, &v))
                return cli_usage_error("record", "--port wants 0 to 65535, not '%s'", optarg);
            st->port = (unsigned)v;
            port_given = 1;
            break;
        }
        case 'C':
            if (cli_color(optarg, stdout) < 0)
                return cli_usage_error("record", "--color wants auto, always or never, not '%s'",
                                       optarg);
            st->color = optarg;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("record", "%s needs an argument", argv[optind - 1]);
        default: return cli_usage_error("record", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("record", "no command given (tlview record [OPTIONS] -- CMD ARGS)");
    if (port_given && !st->serve)
        return cli_usage_error("record", "--port is the port of --serve");
    *pCmd = argv + optind;
    if (!label) {
        const char *base = strrchr(argv[optind], '/');
        label = base ? base + 1 : argv[optind];
    }
    if (!valid_label(label))
        return cli_usage_error("record",
                               "label '%s': use letters, digits, '.', '_' and '-' "
                               "only (set one with --label)",
                               label);
    snprintf(st->label, sizeof st->label, "%s", label);
    return -1;
}

/* Everything that can be refused before anything is started or created: the command, the
 * collector, a GPU, the baseline, the MPS control program. Returns 0 or the exit status. */
static int check_inputs(rec_run_state *st, const char *cmd)
{
    char err[REC_ERR_MAX];
    struct stat sb;
    const char *gpu_check = getenv("TLVIEW_GPU_CHECK");
    if (rec_find_program(cmd, st->program, sizeof st->program, err) != 0) {
        cli_msg(stderr, "tlview record: %s\n", err);
        return 127;
    }
    if (rec_find_collector(st->collector, err) != 0) {
        cli_msg(stderr, "tlview record: %s\n", err);
        return 1;
    }
    if (!(gpu_check && strcmp(gpu_check, "0") == 0) && !rec_have_gpu()) {
        fprintf(stderr, "tlview record: no NVIDIA GPU here (/dev/nvidiactl is missing): nothing "
                        "would be traced (TLVIEW_GPU_CHECK=0 skips this check)\n");
        return 1;
    }
    if (st->baseline && stat(st->baseline, &sb) != 0) {
        cli_msg(stderr, "tlview record: --baseline %s: %s\n", st->baseline, strerror(errno));
        return 1;
    }
    if (st->use_mps && rec_mps_find(&st->mps, err) != 0) {
        cli_msg(stderr, "tlview record: %s\n", err);
        return 1;
    }
    return 0;
}

/* The record folder (made absolute in st->dir), the run id and the children's environment. */
static int prepare_run(rec_run_state *st, const char *dir, int64_t start_ns)
{
    char err[REC_ERR_MAX], defdir[512];
    if (!dir) {
        time_t now = time(NULL);
        struct tm tm;
        char stamp[32];
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(defdir, sizeof defdir, "tlview-%s-%s", st->label, stamp);
        dir = defdir;
    }
    if (prepare_dir(st, dir, err) != 0) {
        cli_msg(stderr, "tlview record: %s\n", err);
        return 1;
    }
    st->kids = calloc((size_t)st->nprocs, sizeof *st->kids);
    if (!st->kids) {
        fprintf(stderr, "tlview record: out of memory\n");
        return 1;
    }
    make_run_id(st, start_ns);
    rec_output_pattern(st->dir, st->label, st->pattern, sizeof st->pattern);
    const char *old = getenv("CUDA_INJECTION64_PATH");
    if (old && *old && strcmp(old, st->collector) != 0)
        cli_msg(stderr, "tlview record: CUDA_INJECTION64_PATH=%s replaced by %s\n", old,
                st->collector);
    setenv("CUDA_INJECTION64_PATH", st->collector, 1);
    setenv("TLVIEW_OUTPUT", st->pattern, 1);
    setenv("TLVIEW_RUN_ID", st->run_id, 1);
    setenv("TLVIEW_RECORD_DIR", st->dir, 1);
    return 0;
}

/* Starts the daemon (--mps), the copies, waits for them, and ALWAYS stops the daemon it started:
 * this is the one path out, whatever happened. Fills the manifest's outcome fields; returns 1 when
 * record itself failed (the message is in m->error or printed), else 0. */
static int run_copies(rec_run_state *st, char **cmd, rec_manifest *m, char *err, char *mps_err)
{
    int failed = 0;
    if (st->use_mps && rec_mps_start(&st->mps, st->dir, err) != 0)
        failed = 1;
    if (!failed && (m->signal = rec_signal_pending()) != 0)
        snprintf(err, REC_ERR_MAX, "interrupted by %s before the command started",
                 rec_signame(m->signal));
    if (!failed && !m->signal) {
        cli_msg(stderr, "tlview record: %d cop%s of %s%s, traces in %s (run %s)\n", st->nprocs,
                st->nprocs == 1 ? "y" : "ies", cmd[0], st->use_mps ? " under MPS" : "", st->dir,
                st->run_id);
        if (rec_spawn(st->program, cmd, st->kids, st->nprocs, &m->release_ns, err) != 0)
            failed = 1;
        else
            m->signal = rec_wait(st->kids, st->nprocs);
    }
    m->end_ns = rec_now_ns();
    if (st->use_mps && rec_mps_stop(&st->mps, mps_err) != 0)
        failed = 1;
    return failed;
}

/* Writes the manifest, reports the copies' failures and the headline; returns the exit status. */
static int finish(rec_run_state *st, rec_manifest *m, int failed)
{
    char manifest[PATH_MAX + 32], merr[REC_ERR_MAX];
    collect_new_files(st);
    m->files = st->files;
    m->nfiles = st->nfiles;
    snprintf(manifest, sizeof manifest, "%s/manifest.json", st->dir);
    if (rec_manifest_write(manifest, m, merr) != 0) {
        cli_msg(stderr, "tlview record: %s\n", merr);
        failed = 1;
    }
    if (m->error && m->error[0])
        cli_msg(stderr, "tlview record: %s\n", m->error);
    int child_rc = 0;
    for (int i = 0; i < st->nprocs; i++) {
        int code = exit_code_of(&st->kids[i]);
        if (code && !child_rc)
            child_rc = code;
        if (code)
            fprintf(stderr, "tlview record: copy %d (pid %d) exited with status %d\n", i,
                    (int)st->kids[i].pid, code);
    }
    if (st->nfiles == 0 && m->release_ns) {
        cli_msg(stderr,
                "tlview record: no trace file was written in %s: the command made no CUDA "
                "call, or CUDA did not load %s (see the messages above)\n",
                st->dir, st->collector);
        failed = 1;
    } else if (st->nfiles > 0 && print_headline(st) != 0) {
        failed = 1;
    }
    if (m->release_ns)
        printf("stopwatch: %.3f s from the start barrier to the last copy's exit (%d cop%s, "
               "%d trace file%s)\n",
               (m->end_ns - m->release_ns) / 1e9, st->nprocs, st->nprocs == 1 ? "y" : "ies",
               st->nfiles, st->nfiles == 1 ? "" : "s");
    if (m->signal)
        return 128 + m->signal;
    if (child_rc)
        return child_rc;
    return failed ? 1 : 0;
}

int cmd_record(int argc, char **argv)
{
    rec_run_state st;
    memset(&st, 0, sizeof st);
    st.nprocs = 1;
    st.port = 8080;
    st.color = "auto";
    char **cmd = NULL;
    const char *dir = NULL;
    int rc = parse_args(&st, argc, argv, &cmd, &dir);
    if (rc >= 0)
        return rc;
    rec_signals_block();
    int64_t start_ns = rec_now_ns();
    if ((rc = check_inputs(&st, cmd[0])) != 0 || (rc = prepare_run(&st, dir, start_ns)) != 0) {
        run_free(&st);
        return rc;
    }
    char err[REC_ERR_MAX] = "", mps_err[REC_ERR_MAX] = "";
    rec_manifest m = {.dir = st.dir,
                      .label = st.label,
                      .run_id = st.run_id,
                      .collector = st.collector,
                      .output_pattern = st.pattern,
                      .argv = cmd,
                      .nprocs = st.nprocs,
                      .mps = st.use_mps ? &st.mps : NULL,
                      .start_ns = start_ns,
                      .kids = st.kids};
    if (st.serve && (st.server = rec_serve(st.dir, st.port, err)) < 0) {
        cli_msg(stderr, "tlview record: %s\n", err);
        run_free(&st);
        return 1;
    }
    int failed = run_copies(&st, cmd, &m, err, mps_err);
    if (err[0] && mps_err[0]) /* both go to the manifest and to stderr */
        snprintf(err + strlen(err), REC_ERR_MAX - strlen(err), "; then: %s", mps_err);
    m.error = err[0] ? err : (mps_err[0] ? mps_err : NULL);
    rc = finish(&st, &m, failed);
    if (st.server > 0 && m.signal) { /* record was asked to stop: the server too */
        kill(st.server, SIGTERM);
        waitpid(st.server, NULL, 0);
    } else if (st.server > 0) {
        fflush(stdout); /* the headline, before waiting for as long as the page is used */
        cli_msg(stderr,
                "tlview record: the recording is done; the page goes on showing %s until "
                "Ctrl-C\n",
                st.dir);
        rec_serve_wait(st.server); /* how --serve ends: the recording's status stands */
    }
    run_free(&st);
    return rc;
}
