/* advise_run.c: the rounds of `tlview advise`. Each run is `tlview record`'s (record.h): the copies
 * start behind one barrier under the collector (or not: --no-trace), each with its own stdout and
 * stderr files; an MPS configuration starts a private daemon in the run's folder and always stops
 * it, checking that no process of its pipe folder is left. After each round the runs' traces are
 * analysed (the round's solo run as the baseline) for the GPU figures that go beside the
 * measurement. The experiment's environment is this process's own: nothing of the user's shell
 * changes, and every variable a configuration needs is set (or unset) before each run. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "advise.h"
#include "cli.h"
#include "record.h"

#define START_SERVER_MS 10000 /* for `start_server -uid` to be answered */

/* ------------------------------------------------------------ folders and files */

/* Makes `path` (one level; 0755) and checks it is ours and safe to write into. */
static int make_dir(const char *path, char *err)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        snprintf(err, REC_ERR_MAX, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    return store_fs_check_dir(path, STORE_FS_SHARED, err, REC_ERR_MAX);
}

/* ------------------------------------------------------------ the figure of merit */

/* The number in the first group of the last match of `re` in the file `path` (a copy's stdout)
 * into *pOut. Returns 0, or -1 with why (n bytes): no match, not a number, unreadable. */
static int read_metric(const char *path, const regex_t *re, double *pOut, char *why, size_t n)
{
    FILE *f = store_fs_fopen_read(path, why, n);
    if (!f)
        return -1;
    char *line = NULL, last[128] = "";
    size_t cap = 0;
    int found = 0;
    while (getline(&line, &cap, f) > 0) {
        const char *at = line;
        regmatch_t m[2];
        int flags = 0;
        while (*at && regexec(re, at, 2, m, flags) == 0) {
            if (m[1].rm_so >= 0) {
                int len = (int)(m[1].rm_eo - m[1].rm_so);
                snprintf(last, sizeof last, "%.*s", len, at + m[1].rm_so);
                last[strcspn(last, "\n")] = 0;
                found = 1;
            }
            at += m[0].rm_eo > 0 ? m[0].rm_eo : 1; /* an empty match moves on by one */
            flags = REG_NOTBOL;
        }
    }
    free(line);
    fclose(f);
    if (!found) {
        snprintf(why, n, "no line of its stdout matches --metric");
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(last, &end);
    if (end == last || *end || errno == ERANGE || !isfinite(v)) {
        snprintf(why, n, "--metric captured '%s', which is not a number", last);
        return -1;
    }
    *pOut = v;
    return 0;
}

/* ------------------------------------------------------------ one run */

/* The environment of one run: the collector's variables (TLVIEW_OUTPUT in the run's folder, a run
 * id), the thread percentage of mps:P, and for the configurations without MPS a pipe folder in
 * which no daemon listens, so that neither a daemon of the user's nor a system-wide one (at the
 * default /tmp/nvidia-mps) can take the copies in. */
static void set_run_env(const adv_exp *e, const adv_setup *s, const adv_config *c,
                        const char *rundir, const char *run_id)
{
    char pattern[PATH_MAX + 300], pct[16];
    rec_output_pattern(rundir, s->label, pattern, sizeof pattern);
    setenv("TLVIEW_OUTPUT", pattern, 1);
    setenv("TLVIEW_RUN_ID", run_id, 1);
    setenv("TLVIEW_RECORD_DIR", rundir, 1);
    if (s->collector)
        setenv("CUDA_INJECTION64_PATH", s->collector, 1);
    else
        unsetenv("CUDA_INJECTION64_PATH");
    if (c->kind == ADV_MPS_LIMIT) {
        snprintf(pct, sizeof pct, "%d", c->percentage);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct, 1);
    } else {
        unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    }
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    if (c->kind == ADV_SOLO || c->kind == ADV_SLICED) {
        char none[4200];
        snprintf(none, sizeof none, "%s/.no-mps", e->dir);
        setenv("CUDA_MPS_PIPE_DIRECTORY", none, 1);
    } else {
        unsetenv("CUDA_MPS_PIPE_DIRECTORY"); /* rec_mps_start(): never reuse, start our own */
    }
}

/* Asks the daemon to start its server now (best effort: the first client would), so that the
 * server's start-up is not timed as part of the run. Its answer goes to the log folder. */
static void start_server(const rec_mps *m)
{
    char input[64], out[4200], err[REC_ERR_MAX];
    char *argv[] = {(char *)m->control, NULL};
    snprintf(input, sizeof input, "start_server -uid %u\n", (unsigned)getuid());
    snprintf(out, sizeof out, "%s/control-start-server.out", m->log_dir);
    /* the server is a CUDA process: not for the collector */
    char *inject = getenv("CUDA_INJECTION64_PATH") ? strdup(getenv("CUDA_INJECTION64_PATH")) : NULL;
    unsetenv("CUDA_INJECTION64_PATH");
    rec_run(argv, input, out, START_SERVER_MS, err);
    if (inject) {
        setenv("CUDA_INJECTION64_PATH", inject, 1);
        free(inject);
    }
}

/* What a copy's end says, for the run's error (empty when it succeeded). */
static void copy_problem(const adv_copy *c, int i, const char *rel, char *buf, size_t n)
{
    buf[0] = 0;
    if (c->signal)
        snprintf(buf, n, "copy %d (pid %d) was killed by %s (its stderr: %s/copy%d.err)", i, c->pid,
                 rec_signame(c->signal), rel, i);
    else if (c->exit_code != 0)
        snprintf(buf, n, "copy %d (pid %d) exited with status %d (its stderr: %s/copy%d.err)", i,
                 c->pid, c->exit_code, rel, i);
}

/* Spawns `n` copies (numbered from `base`) of command `cmd` (cmd < 0: of every command, copy i
 * running the (i mod K)-th) behind one barrier and waits for them; fills kids and
 * copies[base..base+n), sets *pRelease (CLOCK_REALTIME) when it is 0, and adds the time from the
 * barrier to the last exit to *pSpan. Returns the signal that interrupted them (0 when none), or
 * -1 with err when they could not be started. */
static int spawn_wait(const adv_exp *e, const adv_setup *s, const char *rundir, int base, int n,
                      int cmd, rec_child *kids, adv_copy *copies, int64_t *pRelease, int64_t *pSpan,
                      char *err)
{
    const char *paths[ADV_MAX_CMDS];
    char *const *argvs[ADV_MAX_CMDS];
    int ncmds = cmd < 0 ? e->ncmds : 1;
    for (int k = 0; k < ncmds; k++) {
        paths[k] = s->paths[cmd < 0 ? k : cmd];
        argvs[k] = e->cmds[cmd < 0 ? k : cmd];
    }
    rec_spawn_opts o = {.paths = paths,
                        .argvs = argvs,
                        .ncmds = ncmds,
                        .out_dir = rundir,
                        .copy_base = base,
                        .who = "tlview advise"};
    int64_t release, mono;
    if (rec_spawn_ex(&o, kids + base, n, &release, &mono, err) != 0)
        return -1;
    if (!*pRelease)
        *pRelease = release;
    int sig = rec_wait_ex(kids + base, n, s->kill_after_ms);
    int64_t last = mono;
    for (int i = base; i < base + n; i++) {
        rec_child *k = &kids[i];
        adv_copy *c = &copies[i];
        k->command = cmd < 0 ? k->command : cmd;
        c->command = k->command;
        c->pid = (int)k->pid;
        c->metric = NAN;
        c->exit_code = WIFEXITED(k->status) ? WEXITSTATUS(k->status) : -1;
        c->signal = WIFSIGNALED(k->status) ? WTERMSIG(k->status) : 0;
        c->wall_ns = k->end_ns - mono;
        last = k->end_ns > last ? k->end_ns : last;
    }
    *pSpan += last - mono;
    return sig;
}

/* Sets why the experiment stopped: what, then how and why (NULL: nothing), cut to the field's
 * size (a message from below may be longer; its head names what failed). */
static void set_stop_error(adv_exp *e, const char *what, const char *how, const char *why)
{
    if (snprintf(e->stop_error, sizeof e->stop_error, "%s%s%s", what, how ? how : "",
                 why ? why : "") < 0)
        e->stop_error[0] = '\0';
}

/* Runs configuration r->config once as run `r` (its round and position set). Returns 0 when the run
 * was made (successful or not: r->ok), the signal that interrupted it, or -1 when the experiment
 * must stop (e->stop_error: an MPS daemon that would not start or stop, a folder). */
static int run_one(adv_exp *e, const adv_setup *s, adv_run *r, const char *exp_id)
{
    const adv_config *c = &e->configs[r->config];
    char rundir[4200], rel[64], run_id[160], err[REC_ERR_MAX] = "", mps_err[REC_ERR_MAX] = "";
    snprintf(rel, sizeof rel, "%s/r%d", c->id, r->round);
    snprintf(rundir, sizeof rundir, "%s/%s", e->dir, c->id);
    int made = make_dir(rundir, err) == 0;
    snprintf(rundir, sizeof rundir, "%s/%s", e->dir, rel);
    if (!made || make_dir(rundir, err) != 0) {
        set_stop_error(e, err, NULL, NULL);
        if (snprintf(r->error, sizeof r->error, "not run: %s", err) < 0) /* cut to its size */
            r->error[0] = '\0';
        return -1;
    }
    snprintf(run_id, sizeof run_id, "%s-%s-r%d", exp_id, c->id, r->round);
    int n = c->kind == ADV_SOLO ? e->ncmds : c->procs;
    rec_child *kids = calloc((size_t)n, sizeof *kids);
    r->copies = calloc((size_t)n, sizeof *r->copies);
    if (!kids || !r->copies) {
        free(kids);
        snprintf(e->stop_error, sizeof e->stop_error, "out of memory");
        return -1;
    }
    r->ncopies = n;
    r->start_ns = rec_now_ns();
    set_run_env(e, s, c, rundir, run_id);
    rec_mps m;
    memset(&m, 0, sizeof m);
    int use_mps = c->kind == ADV_MPS || c->kind == ADV_MPS_LIMIT, sig = 0, fatal = 0;
    int64_t release = 0;
    if (use_mps) {
        snprintf(m.control, sizeof m.control, "%s", s->mps_control);
        m.quiet = m.remove_pipe = 1;
        if (rec_mps_start(&m, rundir, err) != 0) {
            set_stop_error(e, rel, ": the MPS daemon: ", err);
            fatal = 1;
        } else {
            start_server(&m);
        }
    }
    if (!fatal && !(sig = rec_signal_pending())) {
        int rc = 0;
        if (c->kind == ADV_SOLO) /* each command alone, one after another */
            for (int i = 0; i < n && !sig && rc >= 0; i++) {
                rc = spawn_wait(e, s, rundir, i, 1, i, kids, r->copies, &release, &r->makespan_ns,
                                err);
                sig = rc > 0 ? rc : 0;
            }
        else {
            rc =
                spawn_wait(e, s, rundir, 0, n, -1, kids, r->copies, &release, &r->makespan_ns, err);
            sig = rc > 0 ? rc : 0;
        }
        if (rc < 0) {
            set_stop_error(e, rel, ": ", err);
            fatal = 1;
        }
    }
    int64_t end = rec_now_ns();
    if (use_mps && m.started && rec_mps_stop(&m, mps_err) != 0) {
        if (m.stopped) {
            cli_msg(stderr, "tlview advise: %s: %s\n", rel, mps_err);
        } else {
            set_stop_error(e, rel, ": ", mps_err);
            fatal = 1;
        }
    }
    /* the run's figures */
    r->ok = !fatal && !sig;
    if (sig)
        snprintf(r->error, sizeof r->error, "interrupted by %s", rec_signame(sig));
    else if (fatal)
        snprintf(r->error, sizeof r->error, "not measured: %.480s", e->stop_error);
    for (int i = 0; r->ok && i < n; i++) {
        adv_copy *cp = &r->copies[i];
        char why[512], file[4300];
        copy_problem(cp, i, rel, r->error, sizeof r->error);
        if (r->error[0]) {
            r->ok = 0;
            break;
        }
        snprintf(file, sizeof file, "%s/copy%d.out", rundir, i);
        if (s->metric && read_metric(file, s->metric, &cp->metric, why, sizeof why) != 0) {
            snprintf(r->error, sizeof r->error, "copy %d (pid %d): %.300s (%s/copy%d.out)", i,
                     cp->pid, why, rel, i);
            r->ok = 0;
        }
    }
    if (r->ok && s->metric)
        r->figure = adv_run_figure(e, r);
    else if (r->ok)
        r->figure = r->makespan_ns > 0 ? n / (r->makespan_ns / 1e9) : NAN;
    if (r->ok && !isfinite(r->figure)) {
        r->ok = 0;
        snprintf(r->error, sizeof r->error, "no figure of merit (a makespan of 0)");
    }
    /* the run's manifest, as `tlview record` leaves one */
    char **files = NULL, manifest[4300];
    int nfiles = rec_list_traces(rundir, &files);
    rec_manifest mf = {.tool = "tlview advise",
                       .dir = rundir,
                       .label = s->label,
                       .run_id = run_id,
                       .collector = s->collector,
                       .output_pattern = getenv("TLVIEW_OUTPUT"),
                       .argv = e->cmds[0],
                       .commands = (char *const *const *)e->cmds,
                       .ncommands = e->ncmds,
                       .nprocs = n,
                       .mps = use_mps ? &m : NULL,
                       .percentage = c->percentage,
                       .start_ns = r->start_ns,
                       .release_ns = release,
                       .end_ns = end,
                       .signal = sig,
                       .kids = kids,
                       .files = files,
                       .nfiles = nfiles,
                       .error = r->error[0] ? r->error : NULL};
    snprintf(manifest, sizeof manifest, "%s/manifest.json", rundir);
    if (rec_manifest_write(manifest, &mf, err) != 0)
        cli_msg(stderr, "tlview advise: %s\n", err);
    rec_free_list(files, nfiles);
    free(kids);
    return fatal ? -1 : sig;
}

/* ------------------------------------------------------------ GPU figures */

/* Loads the trace files of a run's folder into *ppRun; 0 files: nothing loaded. Returns the
 * number of files, or -1 when they could not be read (said on stderr by cli_load). */
static int load_traces(const char *dir, store_run **ppRun)
{
    char **files;
    *ppRun = NULL;
    int n = rec_list_traces(dir, &files);
    int rc = n > 0 && cli_load(n, files, 0, ppRun) != 0 ? -1 : n;
    rec_free_list(files, n);
    return rc;
}

/* The GPU figures of run r from its traces, the solo references from `base` (NULL: its own). */
static void gpu_figures(const adv_exp *e, adv_run *r, const store_run *base)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s/r%d", e->dir, e->configs[r->config].id, r->round);
    store_run *run;
    analysis *a = NULL;
    int n = load_traces(dir, &run);
    if (n > 0 && cli_analyse(run, base, NULL, &a) == 0 && analysis_ndevices(a) > 0) {
        const analysis_device *d = NULL;
        for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
            const analysis_device *x = analysis_get_device(a, i);
            if (!d || x->busy_ns > d->busy_ns)
                d = x;
        }
        const analysis_summary *sum = analysis_get_summary(a);
        adv_gpu *g = &r->gpu;
        g->files = n;
        snprintf(g->verdict, sizeof g->verdict, "%s", analysis_verdict_name(d->verdict));
        g->stretch = d->by_verdict[d->verdict].stretch;
        g->busy_ns = d->busy_ns;
        g->overlap_ns = d->overlap_ns;
        g->waiting_ns = d->waiting_ns;
        g->idle_share = sum->idle_share;
        g->host_paced = sum->host_paced;
        g->predicted_gain_low = sum->predicted_gain_low;
        g->predicted_gain = sum->predicted_gain;
        g->span_ns = sum->measure_t1 - sum->measure_t0;
    }
    analysis_free(a);
    store_run_free(run);
}

/* The GPU figures of the runs from runs[first] on (one round): the round's solo run, when it
 * succeeded and left traces, is the baseline of the others (else the latest earlier one). */
static void analyse_round(adv_exp *e, int first)
{
    int solo = -1;
    for (int i = e->nruns - 1; i >= 0 && solo < 0; i--) {
        const adv_run *r = &e->runs[i];
        if (r->ok && e->configs[r->config].kind == ADV_SOLO)
            solo = i;
    }
    store_run *base = NULL;
    if (solo >= 0) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s/r%d", e->dir, e->configs[e->runs[solo].config].id,
                 e->runs[solo].round);
        if (load_traces(dir, &base) < 0)
            base = NULL;
    }
    for (int i = first; i < e->nruns; i++)
        if (e->runs[i].ok)
            gpu_figures(e, &e->runs[i],
                        e->configs[e->runs[i].config].kind == ADV_SOLO ? NULL : base);
    store_run_free(base);
}

/* ------------------------------------------------------------ progress */

/* "2m05s", "41s" */
static const char *short_time(int64_t ns, char *buf, size_t n)
{
    long s = (long)(ns / 1000000000);
    if (s >= 60)
        snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, n, "%lds", s);
    return buf;
}

/* The progress line on stderr, redrawn in place, only when stderr is a terminal: runs done of
 * those planned, the run starting, the failures, time spent and the estimate of what is left
 * (the mean run so far times the runs left; the budget left when that is shorter or the only
 * bound). done < 0 clears the line. */
static void progress(const adv_exp *e, int done, const char *next, int64_t spent)
{
    if (!isatty(STDERR_FILENO))
        return;
    if (done < 0) {
        fputs("\r\033[K", stderr);
        return;
    }
    int failed = 0, planned = e->repeat * e->nconfigs;
    for (int i = 0; i < e->nruns; i++)
        failed += !e->runs[i].ok;
    int64_t left = -1;
    if (planned && done)
        left = spent / done * (planned - done);
    if (e->budget_ns && (left < 0 || e->budget_ns - spent < left))
        left = e->budget_ns - spent > 0 ? e->budget_ns - spent : 0;
    char a[32], b[32], total[32];
    snprintf(total, sizeof total, planned ? "/%d" : "", planned);
    fprintf(stderr, "\r\033[Ktlview advise: run %d%s (%s, round %d), %d failed, %s spent", done + 1,
            total, next, e->rounds_run, failed, short_time(spent, a, sizeof a));
    if (left >= 0)
        fprintf(stderr, ", ~%s left", short_time(left, b, sizeof b));
    fflush(stderr);
}

/* ------------------------------------------------------------ the experiment */

/* Rewrites DIR/advise.json; says so on stderr when it cannot. */
static void save(const adv_exp *e)
{
    char err[1024];
    if (adv_save(e, CLI_VERSION, err, sizeof err) != 0)
        cli_msg(stderr, "tlview advise: %s\n", err);
}

int adv_run_experiment(adv_exp *e, const adv_setup *s)
{
    int order[ADV_MAX_CONFIGS], rc = 0;
    char none[4200], err[REC_ERR_MAX] = "", exp_id[64];
    snprintf(none, sizeof none, "%s/.no-mps", e->dir); /* no daemon ever listens there */
    if (mkdir(none, 0700) != 0)
        snprintf(err, sizeof err, "%.400s: cannot create: %s", none, strerror(errno));
    if (err[0] || store_fs_check_dir(none, STORE_FS_PRIVATE, err, sizeof err) != 0) {
        snprintf(e->stop_error, sizeof e->stop_error, "%.500s", err);
        snprintf(e->stopped_by, sizeof e->stopped_by, "error");
        return -1;
    }
    e->start_ns = rec_now_ns();
    time_t now = (time_t)(e->start_ns / 1000000000);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(exp_id, sizeof exp_id, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(exp_id + strlen(exp_id), sizeof exp_id - strlen(exp_id), "-%d", (int)getpid());
    int64_t t0 = rec_mono_ns(), longest = 0;
    for (int round = 0; !rc && round < ADV_MAX_ROUNDS && (!e->repeat || round < e->repeat);
         round++) {
        int64_t begin = rec_mono_ns();
        if (round > 0 && e->budget_ns && begin - t0 + longest > e->budget_ns) {
            snprintf(e->stopped_by, sizeof e->stopped_by, "budget");
            break;
        }
        e->rounds_run = round + 1;
        adv_round_order(e->nconfigs, round, order);
        int first = e->nruns;
        for (int pos = 0; !rc && pos < e->nconfigs; pos++) {
            int sig = rec_signal_pending();
            if (sig) {
                rc = sig;
                break;
            }
            progress(e, e->nruns, e->configs[order[pos]].id, rec_mono_ns() - t0);
            adv_run *r = adv_exp_add_run(e);
            if (!r) {
                snprintf(e->stop_error, sizeof e->stop_error, "out of memory");
                rc = -1;
                break;
            }
            r->round = round;
            r->position = pos;
            r->config = order[pos];
            rc = run_one(e, s, r, exp_id);
            save(e);
        }
        if (!rc) {
            analyse_round(e, first);
            save(e);
        }
        int64_t took = rec_mono_ns() - begin;
        longest = took > longest ? took : longest;
    }
    progress(e, -1, NULL, 0);
    if (rc > 0)
        snprintf(e->stopped_by, sizeof e->stopped_by, "%s", rec_signame(rc));
    else if (rc < 0)
        snprintf(e->stopped_by, sizeof e->stopped_by, "error");
    e->end_ns = rec_now_ns();
    save(e);
    return rc;
}
