/* index.c: the job index: the files of a job (folders listed), their metadata read without their
 * kernels (store_run_load_meta, on one thread per CPU, as records.c's records added to one run in
 * file order), and the files grouped by the GPUs they ran kernels on (a union-find over files and
 * the run's devices, which store/ matched by its own identity rules); the dealing of the groups
 * to MPI ranks; and the helpers the group summaries share (ranks, GPU indexes). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job_int.h"
#include "view.h"

/* The work of a group for job_deal: its kernels plus this many per file (opening and checking a
 * file when its group is loaded, ~1 ms, costs about what loading and judging 2,500 kernels does,
 * ~0.4 us each: bench/bench_job.md). */
#define FILE_COST 2500

struct job_index {
    store_run *run; /* metadata of every file */
    char **paths;   /* owned */
    job_file *files;
    uint32_t nfiles, cap;
    int32_t *dir_of; /* per file: the folder (index into dirs) it was found in, -1: given */
    uint8_t *skip;   /* per file: found in a folder, not a tlview file (records.c) */
    char **dirs;     /* the folders given, owned */
    uint32_t ndirs;
    job_group *groups;
    uint32_t ngroups;
    uint32_t *group_files;    /* the files of every group, group after group */
    const char **group_paths; /* their paths, same layout */
    uint32_t nhosts;
    char err[1024];
    char *errfile; /* owned copy */
};

/* ---------------------------------------------------------------- small helpers */

int job_launched(int *pRank, int *pSize)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    int64_t v;
    *pRank = 0;
    *pSize = 1;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE"))
        return 0;
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++)
        if (store_parse_count(getenv(rank_vars[i]), &v) && v < INT32_MAX) {
            *pRank = (int)v;
            break;
        }
    for (size_t i = 0; i < sizeof size_vars / sizeof *size_vars; i++)
        if (store_parse_count(getenv(size_vars[i]), &v) && v > 0 && v < INT32_MAX) {
            *pSize = (int)v;
            break;
        }
    return 1;
}

int64_t job_gpu_index_of(const store_run *run, store_idx process, store_idx device)
{
    uint32_t ord = store_run_device_ordinal(run, process, device);
    if (ord == STORE_NONE)
        return -1;
    const char *cvd = store_process_meta_get(&run->processes[process], "env.CUDA_VISIBLE_DEVICES");
    if (!cvd)
        return ord;
    /* the ord-th entry of the comma-separated list */
    const char *s = cvd;
    for (uint32_t i = 0; i < ord && s; i++) {
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    if (!s)
        return -1;
    char entry[32];
    size_t n = strcspn(s, ",");
    if (n == 0 || n >= sizeof entry)
        return -1;
    memcpy(entry, s, n);
    entry[n] = '\0';
    int64_t v;
    return store_parse_count(entry, &v) ? v : -1;
}

int64_t job_gpu_index(const store_run *run, store_idx device, const uint32_t *procs, uint32_t n)
{
    int64_t idx = -1;
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = job_gpu_index_of(run, procs[i], device);
        if (v < 0 || (i && v != idx))
            return -1;
        idx = v;
    }
    return idx;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

uint32_t job_unique_i64(int64_t *v, uint32_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    uint32_t m = 1;
    for (uint32_t i = 1; i < n; i++)
        if (v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

json_t *job_int_array(const int64_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* ---------------------------------------------------------------- the files */

static int fail(job_index *idx, int code, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(job_index *idx, int code, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(idx->err, sizeof idx->err, fmt, ap);
    va_end(ap);
    free(idx->errfile);
    idx->errfile = file ? strdup(file) : NULL;
    return code;
}

/* Adds a file; dir: the folder it was found in (index into dirs), -1 when given itself. */
static int add_path(job_index *idx, const char *path, int32_t dir)
{
    if (idx->nfiles == idx->cap) {
        uint32_t cap = idx->cap ? 2 * idx->cap : 64;
        char **p = realloc(idx->paths, cap * sizeof *p);
        if (!p)
            return JOB_ENOMEM;
        idx->paths = p;
        job_file *f = realloc(idx->files, cap * sizeof *f);
        if (!f)
            return JOB_ENOMEM;
        idx->files = f;
        int32_t *d = realloc(idx->dir_of, cap * sizeof *d);
        if (!d)
            return JOB_ENOMEM;
        idx->dir_of = d;
        uint8_t *k = realloc(idx->skip, cap);
        if (!k)
            return JOB_ENOMEM;
        idx->skip = k;
        idx->cap = cap;
    }
    if (!(idx->paths[idx->nfiles] = strdup(path)))
        return JOB_ENOMEM;
    memset(&idx->files[idx->nfiles], 0, sizeof *idx->files);
    idx->files[idx->nfiles].path = idx->paths[idx->nfiles];
    idx->files[idx->nfiles].group = JOB_NO_GROUP;
    idx->dir_of[idx->nfiles] = dir;
    idx->skip[idx->nfiles] = 0;
    idx->nfiles++;
    return JOB_OK;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Adds the regular files of folder `dir` (not the hidden ones), in name order: which of them are
 * tlview files their records say (records.c reads their first bytes), so that listing a folder
 * of thousands of files costs one directory read here, not an open per file. */
static int add_dir(job_index *idx, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return fail(idx, JOB_EFILE, dir, "%s: cannot read the folder: %s", dir, strerror(errno));
    char **dirs = realloc(idx->dirs, ((size_t)idx->ndirs + 1) * sizeof *dirs);
    if (!dirs || !(dirs[idx->ndirs] = strdup(dir))) {
        idx->dirs = dirs ? dirs : idx->dirs;
        closedir(d);
        return fail(idx, JOB_ENOMEM, NULL, "out of memory");
    }
    idx->dirs = dirs;
    int32_t at = (int32_t)idx->ndirs++;
    uint32_t first = idx->nfiles;
    int rc = JOB_OK;
    struct dirent *e;
    char path[8192];
    while (rc == JOB_OK && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        /* the entry's type, where the file system gives it, saves a stat per file */
        if (e->d_type == DT_REG || ((e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) &&
                                    stat(path, &st) == 0 && S_ISREG(st.st_mode)))
            rc = add_path(idx, path, at);
    }
    closedir(d);
    if (rc)
        return fail(idx, rc, NULL, "out of memory");
    qsort(idx->paths + first, idx->nfiles - first, sizeof *idx->paths, cmp_str);
    for (uint32_t i = first; i < idx->nfiles; i++)
        idx->files[i].path = idx->paths[i];
    return JOB_OK;
}

/* Drops the files of folders that are not tlview files, keeping the order; a folder left
 * without any file is the error. */
static int drop_skipped(job_index *idx)
{
    uint32_t n = 0;
    uint32_t *kept = calloc((size_t)idx->ndirs + 1, sizeof *kept);
    if (!kept)
        return fail(idx, JOB_ENOMEM, NULL, "out of memory");
    for (uint32_t f = 0; f < idx->nfiles; f++) {
        if (idx->skip[f]) {
            free(idx->paths[f]);
            continue;
        }
        if (idx->dir_of[f] >= 0)
            kept[idx->dir_of[f]]++;
        idx->paths[n] = idx->paths[f];
        idx->files[n] = idx->files[f];
        idx->dir_of[n] = idx->dir_of[f];
        idx->skip[n] = 0;
        n++;
    }
    idx->nfiles = n;
    int rc = JOB_OK;
    for (uint32_t d = 0; rc == JOB_OK && d < idx->ndirs; d++)
        if (!kept[d])
            rc = fail(idx, JOB_EFILE, idx->dirs[d], "%s: the folder holds no tlview file",
                      idx->dirs[d]);
    free(kept);
    return rc;
}

/* ---------------------------------------------------------------- grouping */

static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[a < b ? b : a] = a < b ? a : b; /* the smaller node is the root */
}

/* Groups the files: a file and the devices it ran kernels on are one group; a file that ran no
 * kernel joins the group of the device of its first context; a file without a context is in
 * none. */
static int group_files(job_index *idx)
{
    const store_run *run = idx->run;
    uint32_t nodes = idx->nfiles + run->ndevices;
    uint32_t *parent = malloc(((size_t)nodes + 1) * sizeof *parent);
    uint32_t *file_of = malloc(((size_t)run->nprocesses + 1) * sizeof *file_of);
    uint8_t *ran = calloc((size_t)run->ncontexts + 1, 1); /* context ran kernels */
    uint32_t *first_ctx = malloc(((size_t)idx->nfiles + 1) * sizeof *first_ctx);
    uint8_t *busy = calloc((size_t)idx->nfiles + 1, 1); /* file ran kernels */
    uint32_t *root_group = malloc(((size_t)nodes + 1) * sizeof *root_group);
    int rc = JOB_ENOMEM;
    if (!parent || !file_of || !ran || !first_ctx || !busy || !root_group)
        goto out;
    for (uint32_t i = 0; i < nodes; i++) {
        parent[i] = i;
        root_group[i] = JOB_NO_GROUP;
    }
    for (uint32_t f = 0; f < idx->nfiles; f++) {
        first_ctx[f] = STORE_NONE;
        for (uint32_t k = 0; k < idx->files[f].nprocesses; k++)
            file_of[idx->files[f].first_process + k] = f;
    }
    for (uint32_t s = 0; s < run->nstreams; s++)
        ran[run->streams[s].context] = 1;
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        const store_context *cx = &run->contexts[c];
        uint32_t f = file_of[cx->process];
        if (first_ctx[f] == STORE_NONE)
            first_ctx[f] = c;
        if (!ran[c])
            continue;
        busy[f] = 1;
        if (cx->device != STORE_NONE)
            unite(parent, f, idx->nfiles + cx->device);
    }
    for (uint32_t f = 0; f < idx->nfiles; f++)
        if (!busy[f] && first_ctx[f] != STORE_NONE &&
            run->contexts[first_ctx[f]].device != STORE_NONE)
            unite(parent, f, idx->nfiles + run->contexts[first_ctx[f]].device);
    /* number the groups by their first file */
    uint32_t *count = NULL;
    for (uint32_t f = 0; f < idx->nfiles; f++) {
        if (first_ctx[f] == STORE_NONE)
            continue;
        uint32_t r = find(parent, f);
        if (root_group[r] == JOB_NO_GROUP)
            root_group[r] = idx->ngroups++;
        idx->files[f].group = root_group[r];
    }
    idx->groups = calloc((size_t)idx->ngroups + 1, sizeof *idx->groups);
    count = calloc((size_t)idx->ngroups + 1, sizeof *count);
    idx->group_files = malloc(((size_t)idx->nfiles + 1) * sizeof *idx->group_files);
    idx->group_paths = malloc(((size_t)idx->nfiles + 1) * sizeof *idx->group_paths);
    if (!idx->groups || !count || !idx->group_files || !idx->group_paths) {
        free(count);
        goto out;
    }
    for (uint32_t f = 0; f < idx->nfiles; f++)
        if (idx->files[f].group != JOB_NO_GROUP)
            count[idx->files[f].group]++;
    uint32_t at = 0;
    for (uint32_t g = 0; g < idx->ngroups; g++) {
        idx->groups[g].files = idx->group_files + at;
        idx->groups[g].paths = idx->group_paths + at;
        at += count[g];
    }
    for (uint32_t f = 0; f < idx->nfiles; f++) {
        job_file *jf = &idx->files[f];
        if (jf->group == JOB_NO_GROUP)
            continue;
        job_group *g = &idx->groups[jf->group];
        if (!g->nfiles && jf->nprocesses)
            g->host = run->processes[jf->first_process].host;
        ((uint32_t *)g->files)[g->nfiles] = f;
        ((const char **)g->paths)[g->nfiles] = jf->path;
        g->nfiles++;
        g->kernels += jf->kernels;
    }
    free(count);
    rc = JOB_OK;
out:
    free(parent);
    free(file_of);
    free(ran);
    free(first_ctx);
    free(busy);
    free(root_group);
    return rc;
}

static int cmp_host(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    return !a ? -(b != NULL) : !b ? 1 : strcmp(a, b);
}

static uint32_t count_hosts(const store_run *run)
{
    if (!run->nprocesses)
        return 0;
    const char **h = malloc(run->nprocesses * sizeof *h);
    if (!h)
        return 0;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        h[p] = run->processes[p].host;
    qsort(h, run->nprocesses, sizeof *h, cmp_host);
    uint32_t n = 1;
    for (uint32_t p = 1; p < run->nprocesses; p++)
        n += cmp_host(&h[p - 1], &h[p]) != 0;
    free(h);
    return n;
}

int job_index_start(const char *const *args, uint32_t nargs, int separate_gpus, job_index **ppIdx)
{
    job_index *idx = calloc(1, sizeof *idx);
    *ppIdx = idx;
    if (!idx)
        return JOB_ENOMEM;
    if (!args || !nargs)
        return fail(idx, JOB_EINVAL, NULL, "no trace files given");
    if (!(idx->run = store_run_new()))
        return fail(idx, JOB_ENOMEM, NULL, "out of memory");
    store_run_set_gpu_identity(idx->run, separate_gpus); /* no device yet: cannot fail */
    for (uint32_t i = 0; i < nargs; i++) {
        struct stat st;
        int rc;
        if (stat(args[i], &st) != 0)
            return fail(idx, JOB_EFILE, args[i], "%s: %s", args[i], strerror(errno));
        if (S_ISDIR(st.st_mode))
            rc = add_dir(idx, args[i]);
        else if ((rc = add_path(idx, args[i], -1)) != JOB_OK)
            rc = fail(idx, rc, NULL, "out of memory");
        if (rc)
            return rc;
    }
    return JOB_OK;
}

int job_index_add_record(job_index *idx, uint32_t file, job_reader *r)
{
    job_file *jf = &idx->files[file];
    char err[1024];
    int skip = 0;
    jf->first_process = idx->run->nprocesses;
    int rc = job_replay_file(idx->run, r, jf->path, &jf->kernels, &skip, err, sizeof err);
    jf->nprocesses = idx->run->nprocesses - jf->first_process;
    idx->skip[file] = (uint8_t)skip;
    return rc ? fail(idx, rc, rc == JOB_ENOMEM ? NULL : jf->path, "%s", err) : JOB_OK;
}

int job_index_finish(job_index *idx)
{
    int rc = drop_skipped(idx);
    if (rc)
        return rc;
    if (group_files(idx))
        return fail(idx, JOB_ENOMEM, NULL, "out of memory");
    idx->nhosts = count_hosts(idx->run);
    return JOB_OK;
}

uint8_t job_index_from_folder(const job_index *idx, uint32_t file)
{
    return idx->dir_of[file] >= 0;
}

/* A thread's share of the files: their records, made side by side with the other shares'. */
typedef struct share {
    const job_index *idx;
    uint32_t lo, hi; /* files [lo, hi) */
    job_wire out;
} share;

static void *record_share(void *arg)
{
    share *sh = arg;
    for (uint32_t f = sh->lo; f < sh->hi; f++)
        job_record_file(&sh->out, sh->idx->files[f].path, sh->idx->dir_of[f] >= 0);
    return NULL;
}

/* Threads that read files side by side: one per CPU (at most 8: the files' metadata is small,
 * opening them is the cost, and a shared file system serves few opens at once per client),
 * and at least 16 files each. */
static uint32_t index_threads(uint32_t nfiles)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t n = cpus < 1 ? 1 : cpus > 8 ? 8 : (uint32_t)cpus;
    while (n > 1 && nfiles < 16 * n)
        n--;
    return n;
}

int job_index_build(const char *const *args, uint32_t nargs, int separate_gpus, job_index **ppIdx)
{
    int rc = job_index_start(args, nargs, separate_gpus, ppIdx);
    job_index *idx = *ppIdx;
    if (rc)
        return rc;
    uint32_t nt = index_threads(idx->nfiles);
    share sh[8];
    pthread_t th[8];
    int started[8] = {0};
    for (uint32_t t = 0; t < nt; t++) {
        sh[t] = (share){idx,
                        (uint32_t)((uint64_t)idx->nfiles * t / nt),
                        (uint32_t)((uint64_t)idx->nfiles * (t + 1) / nt),
                        {0}};
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, record_share, &sh[t]) == 0;
    }
    record_share(&sh[0]);
    for (uint32_t t = 1; t < nt; t++)
        if (started[t])
            pthread_join(th[t], NULL);
        else
            record_share(&sh[t]); /* no thread: this one reads the share */
    /* the records in file order, into the one run */
    for (uint32_t t = 0; t < nt; t++) {
        job_reader r = {sh[t].out.p, sh[t].out.p ? sh[t].out.p + sh[t].out.n : NULL, 0};
        if (rc == JOB_OK && sh[t].out.bad)
            rc = fail(idx, JOB_ENOMEM, NULL, "out of memory");
        for (uint32_t f = sh[t].lo; rc == JOB_OK && f < sh[t].hi; f++)
            rc = job_index_add_record(idx, f, &r);
        job_wire_free(&sh[t].out);
    }
    return rc ? rc : job_index_finish(idx);
}

void job_index_free(job_index *idx)
{
    if (!idx)
        return;
    store_run_free(idx->run);
    for (uint32_t i = 0; i < idx->nfiles; i++)
        free(idx->paths[i]);
    free(idx->paths);
    free(idx->files);
    free(idx->dir_of);
    free(idx->skip);
    for (uint32_t d = 0; d < idx->ndirs; d++)
        free(idx->dirs[d]);
    free(idx->dirs);
    free(idx->groups);
    free(idx->group_files);
    free(idx->group_paths);
    free(idx->errfile);
    free(idx);
}

const char *job_index_errmsg(const job_index *idx)
{
    return idx ? idx->err : "out of memory";
}

const char *job_index_errfile(const job_index *idx)
{
    return idx ? idx->errfile : NULL;
}

uint32_t job_index_nfiles(const job_index *idx)
{
    return idx->nfiles;
}

const job_file *job_index_file(const job_index *idx, uint32_t i)
{
    return i < idx->nfiles ? &idx->files[i] : NULL;
}

uint32_t job_index_ngroups(const job_index *idx)
{
    return idx->ngroups;
}

const job_group *job_index_group(const job_index *idx, uint32_t g)
{
    return g < idx->ngroups ? &idx->groups[g] : NULL;
}

uint32_t job_index_nhosts(const job_index *idx)
{
    return idx->nhosts;
}

const store_run *job_index_run(const job_index *idx)
{
    return idx->run;
}

/* ---------------------------------------------------------------- dealing */

static const job_index *deal_idx;

static uint64_t work(const job_group *g)
{
    return g->kernels + (uint64_t)FILE_COST * g->nfiles;
}

static int cmp_work(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t wa = work(&deal_idx->groups[a]), wb = work(&deal_idx->groups[b]);
    return wa != wb ? (wa < wb ? 1 : -1) : (a > b) - (a < b);
}

void job_deal(const job_index *idx, uint32_t nranks, uint32_t *owner)
{
    uint32_t n = idx->ngroups;
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    uint64_t *load = calloc(nranks ? nranks : 1, sizeof *load);
    if (!order || !load || nranks <= 1) {
        /* one rank, or no memory for the balance: deal in turn */
        for (uint32_t g = 0; g < n; g++)
            owner[g] = nranks ? g % nranks : 0;
        free(order);
        free(load);
        return;
    }
    for (uint32_t g = 0; g < n; g++)
        order[g] = g;
    deal_idx = idx;
    qsort(order, n, sizeof *order, cmp_work);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t best = 0;
        for (uint32_t r = 1; r < nranks; r++)
            if (load[r] < load[best])
                best = r;
        owner[order[i]] = best;
        load[best] += work(&idx->groups[order[i]]);
    }
    free(order);
    free(load);
}

/* ---------------------------------------------------------------- the index as JSON */

/* The group's GPUs (devs[0..ndevs): the devices its files ran kernels on), ranks, pids and
 * files. */
static json_t *group_json(const job_index *idx, uint32_t g, const uint32_t *devs, uint32_t ndevs)
{
    const store_run *run = idx->run;
    const job_group *gr = &idx->groups[g];
    json_t *o = json_object(), *gpus = json_array(), *files = json_array();
    uint32_t np = 0;
    for (uint32_t i = 0; i < gr->nfiles; i++)
        np += idx->files[gr->files[i]].nprocesses;
    int64_t *ranks = malloc(((size_t)np + 1) * sizeof *ranks);
    int64_t *pids = malloc(((size_t)np + 1) * sizeof *pids);
    uint32_t *procs = malloc(((size_t)np + 1) * sizeof *procs);
    int bad = !o || !gpus || !files || !ranks || !pids || !procs;
    uint32_t nr = 0, n = 0;
    store_rank rk;
    for (uint32_t i = 0; !bad && i < gr->nfiles; i++) {
        const job_file *jf = &idx->files[gr->files[i]];
        view_append(files, view_string(jf->path), &bad);
        for (uint32_t k = 0; k < jf->nprocesses; k++) {
            uint32_t p = jf->first_process + k;
            procs[n] = p;
            pids[n++] = run->processes[p].pid;
            if (store_process_rank(&run->processes[p], &rk))
                ranks[nr++] = rk.rank;
        }
    }
    for (uint32_t i = 0; !bad && i < ndevs; i++) {
        const store_device *d = &run->devices[devs[i]];
        int64_t at = job_gpu_index(run, devs[i], procs, n);
        json_t *gj = json_object();
        view_put(gj, "uuid", view_string(d->uuid), &bad);
        view_put(gj, "name", view_string(d->name), &bad);
        view_put(gj, "index", at >= 0 ? json_integer(at) : json_null(), &bad);
        view_append(gpus, gj, &bad);
    }
    view_put(o, "group", json_integer(g), &bad);
    view_put(o, "host", view_string(gr->host), &bad);
    view_put(o, "kernels", json_integer((json_int_t)gr->kernels), &bad);
    view_put(o, "gpus", gpus, &bad);
    view_put(o, "ranks", job_int_array(ranks, job_unique_i64(ranks, nr)), &bad);
    view_put(o, "pids", job_int_array(pids, job_unique_i64(pids, n)), &bad);
    view_put(o, "files", files, &bad);
    free(ranks);
    free(pids);
    free(procs);
    return view_done(o, bad);
}

/* (group, device) pairs of the streams, for sorting: every device a group ran kernels on. */
typedef struct group_dev {
    uint32_t group, device;
} group_dev;

static int cmp_group_dev(const void *x, const void *y)
{
    const group_dev *a = x, *b = y;
    return a->group != b->group ? (a->group > b->group) - (a->group < b->group)
                                : (a->device > b->device) - (a->device < b->device);
}

json_t *job_index_json(const job_index *idx)
{
    const store_run *run = idx->run;
    json_t *o = json_object(), *groups = json_array(), *none = json_array();
    group_dev *pairs = malloc(((size_t)run->nstreams + 1) * sizeof *pairs);
    uint32_t *file_of = malloc(((size_t)run->nprocesses + 1) * sizeof *file_of);
    uint32_t *devs = malloc(((size_t)run->nstreams + 1) * sizeof *devs);
    int bad = !o || !groups || !none || !pairs || !file_of || !devs;
    uint64_t kernels = 0;
    for (uint32_t f = 0; !bad && f < idx->nfiles; f++) {
        kernels += idx->files[f].kernels;
        for (uint32_t k = 0; k < idx->files[f].nprocesses; k++)
            file_of[idx->files[f].first_process + k] = f;
        if (idx->files[f].group == JOB_NO_GROUP)
            view_append(none, view_string(idx->files[f].path), &bad);
    }
    uint32_t npairs = 0;
    for (uint32_t s = 0; !bad && s < run->nstreams; s++) {
        const store_context *c = &run->contexts[run->streams[s].context];
        uint32_t g = idx->files[file_of[c->process]].group;
        if (c->device != STORE_NONE && g != JOB_NO_GROUP)
            pairs[npairs++] = (group_dev){g, c->device};
    }
    if (!bad)
        qsort(pairs, npairs, sizeof *pairs, cmp_group_dev);
    for (uint32_t g = 0, i = 0; !bad && g < idx->ngroups; g++) {
        uint32_t n = 0;
        for (; i < npairs && pairs[i].group == g; i++)
            if (!n || devs[n - 1] != pairs[i].device)
                devs[n++] = pairs[i].device;
        view_append(groups, group_json(idx, g, devs, n), &bad);
    }
    view_put(o, "files", json_integer(idx->nfiles), &bad);
    view_put(o, "processes", json_integer(run->nprocesses), &bad);
    view_put(o, "hosts", json_integer(idx->nhosts), &bad);
    view_put(o, "kernels", json_integer((json_int_t)kernels), &bad);
    view_put(o, "groups", groups, &bad);
    view_put(o, "no_gpu", none, &bad);
    free(pairs);
    free(file_of);
    free(devs);
    return view_done(o, bad);
}
