/* load.c: the loader every subcommand shares (cli_load, cli_analyse): turns the FILES arguments
 * (files or folders) into one finished run, reporting a bad file by name, and analyses it; and
 * cli_load_live(), the same for files still being written (tlview serve --follow).
 * Native files are loaded together (store_run_load_files scans them on every CPU); foreign
 * formats (nvprof, Nsight Systems, Chrome JSON) enter at the one hook in load_one(). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "importers.h"

#define LOAD_BATCH 128     /* native files loaded together at most */
#define RUNS_DEPTH 4       /* folder levels searched for runs below a folder without trace files */
#define RUNS_ENTRIES 20000 /* entries that search looks at, at most: what bounds its time */
#define RUNS_NAMED 10      /* runs named in the message */

/* Appends one file to the run; `total` holds what the run's earlier imports took, which the
 * import limits bound together (TLVIEW_MAX_EVENTS, TLVIEW_MAX_MEMORY hold for the run). Returns 0
 * or a STORE_E* code with the message on the run. */
static cli_load_fn progress_fn; /* cli_load_progress() */
static void *progress_ctx;

void cli_load_progress(cli_load_fn fn, void *ctx)
{
    progress_fn = fn;
    progress_ctx = ctx;
}

/* import_progress: an importer's progress (imp_progress_fn) handed on as bytes. */
static void import_progress(void *ctx, const char *path, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (progress_fn)
        progress_fn(progress_ctx, path, done, total, 1);
}

static int load_one(store_run *run, const char *path, imp_total *total)
{
    /* ==== IMPORTERS HOOK (issue 5) ==========================================================
     * The one place where foreign formats enter. Files that are not native tlview files go to
     * the importers (nvprof, Nsight Systems, Chrome JSON; format by content), which append
     * through the store_run_add_* builder calls and report through store_run_error() with a
     * message naming the file, like store_run_load() does.
     * ======================================================================================= */
    if (!store_probe(path)) {
        imp_options opt = {.total = total, .progress = progress_fn ? import_progress : NULL};
        return imp_load_ex(run, path, &opt, NULL, NULL);
    }
    return store_run_load(run, path);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* A growing list of paths (owned copies). */
typedef struct pathlist {
    char **v;
    size_t n, cap;
} pathlist;

static int push(pathlist *l, const char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

static void pathlist_free(pathlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* How many native files to load together: LOAD_BATCH, fewer when the limit of open files is low
 * (each open file holds a descriptor or two; some are kept for stdio and SQLite). */
static size_t load_batch(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return LOAD_BATCH;
    size_t n = rl.rlim_cur > 24 ? (size_t)(rl.rlim_cur - 24) / 2 : 1;
    return n < 1 ? 1 : n > LOAD_BATCH ? LOAD_BATCH : n;
}

/* The search for runs below a folder that holds no trace file itself. */
typedef struct runscan {
    pathlist runs;  /* subfolders holding trace files, as paths below the folder searched */
    size_t entries; /* entries looked at so far */
    int stopped;    /* RUNS_ENTRIES reached: there may be more runs */
    int oom;        /* out of memory: the search is incomplete */
} runscan;

/* Adds to s->runs the folder `path` (`rel` below the folder searched, `depth` levels down) when
 * it holds a file tlview reads, else looks in its subfolders while depth < RUNS_DEPTH. A
 * subfolder reached through a symbolic link is not entered (O_NOFOLLOW), nor a hidden one; the
 * folder named (depth 0) is, as the user named it. */
static void scan_runs(const char *path, const char *rel, int depth, runscan *s)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (depth ? O_NOFOLLOW : 0));
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    pathlist subs = {0};
    int holds = 0;
    struct dirent *e;
    char child[8192];
    while (!holds && !s->oom && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        if (++s->entries > RUNS_ENTRIES) {
            s->stopped = 1;
            break;
        }
        if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child)
            continue; /* a path too long to name: not looked at */
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
            s->oom |= depth < RUNS_DEPTH && push(&subs, e->d_name) != 0;
        else if (stat(child, &st) == 0 && S_ISREG(st.st_mode))
            holds = store_probe(child) || imp_detect(child, NULL) != NULL;
    }
    closedir(d);
    if (holds)
        s->oom |= push(&s->runs, rel) != 0;
    else if (subs.n) /* in name order, so that where a long search stops does not vary */
        qsort(subs.v, subs.n, sizeof *subs.v, cmp_str);
    for (size_t i = 0; !holds && !s->stopped && !s->oom && i < subs.n; i++) {
        char below[8192];
        if (snprintf(child, sizeof child, "%s/%s", path, subs.v[i]) < (int)sizeof child &&
            snprintf(below, sizeof below, "%s%s%s", rel, rel[0] ? "/" : "", subs.v[i]) <
                (int)sizeof below)
            scan_runs(child, below, depth + 1, s);
    }
    pathlist_free(&subs);
}

/* The error for folder `dir`, which holds no trace file: when its subfolders hold runs (a folder
 * of recordings, such as samples/spin/traces), it names them (RUNS_NAMED at most), so that the
 * user can name one. */
static void say_no_trace(const char *dir)
{
    runscan s = {0};
    scan_runs(dir, "", 0, &s);
    if (s.oom || !s.runs.n) {
        cli_msg(stderr, "tlview: %s: the folder holds no trace file\n", dir);
        pathlist_free(&s.runs);
        return;
    }
    qsort(s.runs.v, s.runs.n, sizeof *s.runs.v, cmp_str);
    char list[4096] = "", count[64] = "";
    size_t len = 0;
    for (size_t i = 0; i < s.runs.n && i < RUNS_NAMED && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", s.runs.v[i]);
    if (s.runs.n > RUNS_NAMED && len < sizeof list)
        snprintf(list + len, sizeof list - len, " and %zu more", s.runs.n - RUNS_NAMED);
    if (s.stopped)
        snprintf(count, sizeof count, " (the search stopped after %d entries)", RUNS_ENTRIES);
    if (s.runs.n == 1 && !s.stopped)
        cli_msg(stderr,
                "tlview: %s: the folder holds no trace file; its subfolder %s holds a run: name "
                "it\n",
                dir, list);
    else
        cli_msg(stderr,
                "tlview: %s: the folder holds no trace file; its subfolders hold %s%zu run%s%s: "
                "%s: name one\n",
                dir, s.stopped ? "at least " : "", s.runs.n, s.runs.n == 1 ? "" : "s", count, list);
    pathlist_free(&s.runs);
}

/* Adds the trace files of folder `dir` to l, in name order. When the folder holds native tlview
 * files (a `tlview record` folder: traces beside manifest.json and MPS logs), those are the run;
 * otherwise every file the importers recognise (a folder of nvprof or PyTorch traces). */
static int expand_dir(pathlist *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_msg(stderr, "tlview: %s: cannot read the folder: %s\n", dir, strerror(errno));
        return 1;
    }
    pathlist native = {0}, foreign = {0};
    char path[8192];
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (store_probe(path))
            rc = push(&native, path);
        else if (!native.n && imp_detect(path, NULL) != NULL)
            rc = push(&foreign, path);
    }
    closedir(d);
    pathlist *use = native.n ? &native : &foreign;
    if (rc)
        cli_msg(stderr, "tlview: %s: out of memory\n", dir);
    else if (!use->n) {
        say_no_trace(dir);
        rc = 1;
    }
    if (use->n)
        qsort(use->v, use->n, sizeof *use->v, cmp_str);
    for (size_t i = 0; !rc && i < use->n; i++)
        if (push(l, use->v[i])) {
            cli_msg(stderr, "tlview: %s: out of memory\n", dir);
            rc = 1;
        }
    pathlist_free(&native);
    pathlist_free(&foreign);
    return rc;
}

int cli_load(int nfiles, char **files, int separate_gpus, store_run **ppRun)
{
    *ppRun = NULL;
    if (nfiles <= 0) {
        fprintf(stderr, "tlview: no trace files given\n");
        return 1;
    }
    pathlist all = {0}, native = {0};
    imp_total total = {0};
    store_run *run = NULL;
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        if (stat(files[i], &st) != 0) {
            cli_msg(stderr, "tlview: %s: %s\n", files[i], strerror(errno));
            goto fail;
        }
        if (S_ISDIR(st.st_mode) ? expand_dir(&all, files[i]) != 0 : push(&all, files[i]) != 0) {
            if (!S_ISDIR(st.st_mode))
                fprintf(stderr, "tlview: out of memory\n");
            goto fail;
        }
    }
    /* the run as it was read before, when its cache holds it; otherwise an empty run that
     * carries the cache's key (or a plain one, without a cache) */
    int cached = cli_cache_load_run(all.v, all.n, separate_gpus, &run);
    if (cached == 0) {
        pathlist_free(&all);
        *ppRun = run;
        return 0;
    }
    if (!run && !(run = store_run_new())) {
        fprintf(stderr, "tlview: out of memory\n");
        goto fail;
    }
    store_run_set_gpu_identity(run, separate_gpus); /* cannot fail: the run has no device yet */
    for (size_t i = 0; i < all.n; i++) {
        if (store_probe(all.v[i])) {
            if (push(&native, all.v[i]) != 0) {
                fprintf(stderr, "tlview: out of memory\n");
                goto fail;
            }
        } else {
            if (progress_fn)
                progress_fn(progress_ctx, all.v[i], i, all.n, 0);
            if (load_one(run, all.v[i], &total) != 0) {
                cli_msg(stderr, "tlview: %s\n", store_run_errmsg(run));
                goto fail;
            }
        }
    }
    /* store_run_load_files() holds its files open together: a run of thousands of files goes
     * in batches that stay well below the limit of open files */
    size_t batch = load_batch();
    for (size_t i = 0; i < native.n; i += batch) {
        size_t n = native.n - i < batch ? native.n - i : batch;
        if (progress_fn)
            progress_fn(progress_ctx, native.v[i], all.n - native.n + i, all.n, 0);
        if (store_run_load_files(run, (const char *const *)native.v + i, (uint32_t)n) != 0) {
            cli_msg(stderr, "tlview: %s\n", store_run_errmsg(run));
            goto fail;
        }
    }
    if (store_run_finish(run) != 0) {
        cli_msg(stderr, "tlview: %s\n", store_run_errmsg(run));
        goto fail;
    }
    if (cached == 1)
        cli_cache_save_run(run);
    pathlist_free(&all);
    pathlist_free(&native);
    *ppRun = run;
    return 0;
fail:
    pathlist_free(&all);
    pathlist_free(&native);
    store_run_free(run);
    return 1;
}

/* Adds the *.db files of folder `dir` to l, in name order (those being written included: the
 * folder of a run that goes on): those this user or the folder's owner made, no file or link
 * another user dropped into a shared folder (store_fs_trusted()); the first such is named in
 * `skipped` (n bytes) when it is empty. */
static int live_dir(pathlist *l, const char *dir, char *skipped, size_t n_skipped)
{
    struct stat ds;
    DIR *d = stat(dir, &ds) == 0 ? opendir(dir) : NULL;
    if (!d)
        return 0; /* gone, or not there yet: nothing to show from it */
    pathlist found = {0};
    char path[8192];
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || n < 4 || strcmp(e->d_name + n - 3, ".db") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (store_fs_trusted(path, (long)ds.st_uid))
            rc = push(&found, path);
        else if (!skipped[0] && lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (st.st_uid != geteuid() && st.st_uid != ds.st_uid)
                snprintf(skipped, n_skipped,
                         "%.900s: not followed: %s another user (uid %u) put there", path,
                         S_ISLNK(st.st_mode) ? "a link" : "a file", (unsigned)st.st_uid);
            else
                snprintf(skipped, n_skipped, "%.900s: not followed: not a regular file", path);
        }
    }
    closedir(d);
    if (found.n)
        qsort(found.v, found.n, sizeof *found.v, cmp_str);
    for (size_t i = 0; !rc && i < found.n; i++)
        rc = push(l, found.v[i]);
    pathlist_free(&found);
    return rc;
}

int cli_load_live(int nfiles, char **files, int separate_gpus, char *note, size_t notelen,
                  store_run **ppRun)
{
    *ppRun = NULL;
    pathlist all = {0}, native = {0};
    imp_total total = {0};
    char first[1024] = "";
    store_run *run = store_run_new();
    int rc = !run;
    if (run)
        store_run_set_gpu_identity(run, separate_gpus);
    for (int i = 0; !rc && i < nfiles; i++) {
        struct stat st;
        if (stat(files[i], &st) == 0)
            rc = S_ISDIR(st.st_mode) ? live_dir(&all, files[i], first, sizeof first)
                                     : push(&all, files[i]);
    }
    /* native files together (fast), foreign ones through the importers' hook */
    for (size_t i = 0; !rc && i < all.n; i++) {
        if (store_probe(all.v[i])) {
            rc = push(&native, all.v[i]);
        } else if (imp_detect(all.v[i], NULL) == NULL) { /* a file being created, say */
            if (!first[0])
                snprintf(first, sizeof first, "%s: not a trace file (yet)", all.v[i]);
        } else if (load_one(run, all.v[i], &total) != 0 && !first[0]) {
            snprintf(first, sizeof first, "%s", store_run_errmsg(run));
        }
    }
    if (!rc && native.n &&
        store_run_load_files(run, (const char *const *)native.v, (uint32_t)native.n) != 0) {
        /* one of them cannot be read now (being created, ...): the others, one by one */
        for (size_t i = 0; i < native.n; i++)
            if (store_run_load(run, native.v[i]) != 0 && !first[0])
                snprintf(first, sizeof first, "%s", store_run_errmsg(run));
    }
    if (!rc && store_run_finish(run) != 0) {
        cli_msg(stderr, "tlview: %s\n", store_run_errmsg(run));
        rc = -1;
    }
    pathlist_free(&all);
    pathlist_free(&native);
    if (rc) {
        if (rc > 0)
            fprintf(stderr, "tlview: out of memory\n");
        store_run_free(run);
        return 1;
    }
    if (strcmp(first, note) != 0) { /* say it when it changes, not at every reading */
        if (first[0])
            cli_msg(stderr, "tlview: left out for now: %s\n", first);
        snprintf(note, notelen, "%s", first);
    }
    *ppRun = run;
    return 0;
}

int cli_analysis_opts_init(cli_analysis_opts *o, const char *cmd, int argc)
{
    memset(o, 0, sizeof *o);
    analysis_options_default(&o->options);
    o->baseline = calloc((size_t)argc + 1, sizeof *o->baseline);
    o->compare = calloc((size_t)argc + 1, sizeof *o->compare);
    if (o->baseline && o->compare)
        return 0;
    cli_analysis_opts_free(o);
    fprintf(stderr, "tlview %s: out of memory\n", cmd);
    return 1;
}

void cli_analysis_opts_free(cli_analysis_opts *o)
{
    free(o->baseline);
    free(o->compare);
    o->baseline = o->compare = NULL;
}

int cli_analysis_option(const char *cmd, int c, const char *arg, cli_analysis_opts *o)
{
    switch (c) {
    case 'b': o->baseline[o->nbaseline++] = (char *)arg; return 0;
    case 'c': o->compare[o->ncompare++] = (char *)arg; return 0;
    case 'G': o->separate_gpus = 1; return 0;
    case CLI_OPT_NO_CACHE: cli_cache_disable(); return 0;
    case 'M':
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            o->options.assume_mps = !strcmp(arg, "on") ? 2 : 1;
            return 0;
        }
        return cli_usage_error(cmd, "--assume-mps wants on or off, not '%s'", arg);
    case 'm':
        if (!strcmp(arg, "all"))
            o->options.measure = ANALYSIS_MEASURE_ALL;
        else if (!strcmp(arg, "together"))
            o->options.measure = ANALYSIS_MEASURE_TOGETHER;
        else if (!strncmp(arg, "range:", 6) && arg[6]) {
            o->options.measure = ANALYSIS_MEASURE_RANGE;
            o->options.measure_range = arg + 6;
        } else if (!strncmp(arg, "capture:", 8) && arg[8]) {
            o->options.measure = ANALYSIS_MEASURE_CAPTURE;
            o->options.measure_range = arg + 8;
        } else
            return cli_usage_error(
                cmd, "--measure wants all, together, range:NAME or capture:NAME, not '%s'", arg);
        o->measure_set = 1;
        return 0;
    case 'F':
    case 'T': {
        int64_t t;
        int rel;
        if (cli_parse_time(arg, &t, &rel) != 0)
            return cli_usage_error(cmd,
                                   "%s wants a time after the run's origin with a unit (2.5s, "
                                   "150ms, 10us, 500ns, 2min, 1h) or absolute ns, not '%s'",
                                   c == 'F' ? "--from" : "--to", arg);
        *(c == 'F' ? &o->from : &o->to) = arg;
        break;
    }
    case 'R':
        if (!*arg)
            return cli_usage_error(cmd, "--range wants a name");
        o->range = arg;
        break;
    default: return cli_usage_error(cmd, "unknown option");
    }
    if (o->range && (o->from || o->to))
        return cli_usage_error(cmd, "--range NAME and --from/--to are two ways to give the range: "
                                    "give one");
    return 0;
}

int cli_analyse(const store_run *run, const store_run *baseline, const analysis_options *opt,
                analysis **ppOut)
{
    analysis_options o;
    if (opt)
        o = *opt;
    else
        analysis_options_default(&o);
    o.baseline = baseline;
    int rc = cli_cache_analyse(run, &o, ppOut);
    if (rc) {
        fprintf(stderr, "tlview: analysis failed: %s\n", analysis_strerror(rc));
        return 1;
    }
    return 0;
}
