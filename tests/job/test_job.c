/* Unit tests of job/: the index (grouping by GPU with store/'s identity rules, UUID-less
 * inference, ranks joining GPUs, files without GPU work, bad and foreign files named in one
 * error), the ranks and GPU indexes read from the launcher's variables, the dealing to ranks, the
 * job report's ranking, and the group-by-group analysis against the whole-run analysis on the
 * committed recordings of the golden tests. Files are written with the store writer into the
 * case's temporary folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job.h"
#include "test_help.h"
#include "view.h"

/* ---------------------------------------------------------------- writing files */

/* A device a test file's process ran on. */
typedef struct dev_desc {
    const char *uuid; /* NULL: none */
    uint32_t ordinal;
    int kernels; /* kernels on it; 0: a context without kernels; -1: no such device */
    int mps;     /* its context an MPS client */
} dev_desc;

/* A test file: one process. */
typedef struct file_desc {
    const char *name; /* in the case's folder */
    const char *host;
    int64_t pid;
    int64_t rank;    /* env.OMPI_COMM_WORLD_RANK, -1: unset */
    const char *cvd; /* env.CUDA_VISIBLE_DEVICES, NULL: unset */
    dev_desc dev[2];
} file_desc;

static char *path_of(const char *name)
{
    static char path[8][4096];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 4096, "%s/%s", test_tmpdir(), name);
    return p;
}

/* Writes the file; 0 or 1 (after printing why). */
static int write_file(const file_desc *f)
{
    store_writer *w = NULL;
    int64_t id;
    store_process_info pi = {.pid = f->pid, .ppid = 1, .host = f->host, .source = "libcollect"};
    const char *path = path_of(f->name);
    int rc = store_writer_open(path, STORE_CLOCK_REALTIME, 1000000000, &w) ||
             store_writer_process(w, &pi, &id);
    char v[32];
    if (!rc && f->rank >= 0) {
        snprintf(v, sizeof v, "%lld", (long long)f->rank);
        rc = store_writer_process_meta(w, id, "env.OMPI_COMM_WORLD_RANK", v);
    }
    if (!rc && f->cvd)
        rc = store_writer_process_meta(w, id, "env.CUDA_VISIBLE_DEVICES", f->cvd);
    rc = rc || store_writer_begin(w);
    for (int d = 0; !rc && d < 2; d++) {
        const dev_desc *dd = &f->dev[d];
        if (dd->kernels < 0)
            continue;
        store_device_info di = {dd->ordinal, dd->uuid, "NVIDIA H200", 132, 9, 0, 150ULL << 30};
        store_context_info ci = {.context_id = (uint32_t)d + 1,
                                 .device_id = dd->ordinal,
                                 .compute_api_kind = dd->mps ? 2 : 1};
        rc = store_writer_device(w, id, &di) || store_writer_context(w, id, &ci);
        for (int k = 0; !rc && k < dd->kernels; k++) {
            store_kernel_info ki = {.start = 1000 * k,
                                    .end = 1000 * k + 800,
                                    .device_id = dd->ordinal,
                                    .context_id = (uint32_t)d + 1,
                                    .stream_id = 7,
                                    .correlation_id = (uint32_t)k + 1,
                                    .grid = {1, 1, 1},
                                    .block = {32, 1, 1},
                                    .name = "_Z4spinv"};
            rc = store_writer_kernel(w, id, &ki);
        }
    }
    rc = rc || store_writer_commit(w) || store_writer_process_end(w, id, 2000000, 1, NULL);
    if (rc)
        fprintf(stderr, "write_file %s: %s\n", path, w ? store_writer_errmsg(w) : "out of memory");
    return store_writer_close(w) || rc;
}

#define U0 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa00"
#define U1 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa01"
#define U2 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb00"
#define U3 "cccccccccccccccccccccccccccccc00"
#define U4 "dddddddddddddddddddddddddddddd00"
#define NODEV                                                                                      \
    {                                                                                              \
        NULL, 0, -1, 0                                                                             \
    }

/* Builds the index of the case's folder. */
static job_index *index_folder(int separate)
{
    const char *dir = test_tmpdir();
    job_index *idx = NULL;
    int rc = job_index_build(&dir, 1, separate, &idx);
    if (rc != JOB_OK) {
        fprintf(stderr, "job_index_build: %d: %s\n", rc, job_index_errmsg(idx));
        job_index_free(idx);
        return NULL;
    }
    return idx;
}

/* "a.db b.db" of group g's files (names only). */
static const char *group_names(const job_index *idx, uint32_t g)
{
    static char buf[1024];
    const job_group *gr = job_index_group(idx, g);
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; gr && i < gr->nfiles; i++) {
        const char *base = strrchr(gr->paths[i], '/');
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", base ? base + 1 : "");
    }
    return buf;
}

/* ---------------------------------------------------------------- the index */

/* Two hosts with two GPUs each, two ranks per GPU: four groups, numbered by their first file
 * (files in name order), with their kernels and hosts; the index reads no kernel. */
int test_job_groups_by_gpu(void)
{
    const file_desc files[] = {
        {"a0.db", "node0", 100, 0, "0", {{U0, 0, 3, 0}, NODEV}},
        {"a1.db", "node0", 101, 1, "1", {{U1, 0, 4, 0}, NODEV}},
        {"a2.db", "node0", 102, 2, "0", {{U0, 0, 5, 0}, NODEV}},
        {"a3.db", "node0", 103, 3, "1", {{U1, 0, 6, 0}, NODEV}},
        {"b0.db", "node1", 100, 4, "0", {{U2, 0, 7, 0}, NODEV}},
        {"b1.db", "node1", 101, 5, "1", {{U3, 0, 8, 0}, NODEV}},
        {"b2.db", "node1", 102, 6, "0", {{U2, 0, 9, 0}, NODEV}},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (write_file(&files[i]))
            return 1;
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_nfiles(idx), 7);
    TEST_EQ_INT(job_index_ngroups(idx), 4);
    TEST_EQ_INT(job_index_nhosts(idx), 2);
    TEST_EQ_STR(group_names(idx, 0), "a0.db a2.db");
    TEST_EQ_STR(group_names(idx, 1), "a1.db a3.db");
    TEST_EQ_STR(group_names(idx, 2), "b0.db b2.db");
    TEST_EQ_STR(group_names(idx, 3), "b1.db");
    TEST_EQ_INT(job_index_group(idx, 0)->kernels, 3 + 5);
    TEST_EQ_INT(job_index_group(idx, 1)->kernels, 4 + 6);
    TEST_EQ_INT(job_index_group(idx, 2)->kernels, 7 + 9);
    TEST_EQ_STR(job_index_group(idx, 2)->host, "node1");
    TEST_EQ_INT(job_index_file(idx, 4)->group, 2);
    TEST_EQ_INT(job_index_file(idx, 4)->kernels, 7);
    const store_run *run = job_index_run(idx);
    TEST_EQ_INT(run->nprocesses, 7);
    TEST_EQ_INT(run->ndevices, 4);
    TEST_EQ_INT(run->nkernels, 0); /* metadata only */
    /* the index as JSON: ranks, pids, the GPU's index from CUDA_VISIBLE_DEVICES */
    json_t *j = job_index_json(idx);
    TEST_ASSERT(j);
    char *text = json_dumps(json_object_get(j, "groups"), JSON_COMPACT);
    const char *want =
        "[{\"group\":0,\"host\":\"node0\",\"kernels\":8,\"gpus\":[{\"uuid\":\"" U0
        "\",\"name\":\"NVIDIA H200\",\"index\":0}],\"ranks\":[0,2],\"pids\":[100,102]";
    if (strncmp(text, want, strlen(want))) {
        fprintf(stderr, "got  %s\nwant %s...\n", text, want);
        return 1;
    }
    TEST_EQ_INT(json_integer_value(json_object_get(j, "kernels")), 42);
    free(text);
    json_decref(j);
    job_index_free(idx);
    return 0;
}

/* Without UUIDs, files on one host with the same ordinal, name and memory are one GPU (as the
 * whole run's analysis matches them); another host, or another ordinal, is another GPU; with
 * --separate-gpus every process keeps its own. */
int test_job_uuidless_inference(void)
{
    const file_desc files[] = {
        {"r0.db", "node0", 10, 0, NULL, {{NULL, 0, 2, 0}, NODEV}},
        {"r1.db", "node0", 11, 1, NULL, {{NULL, 0, 2, 0}, NODEV}},
        {"r2.db", "node0", 12, 2, NULL, {{NULL, 1, 2, 0}, NODEV}},
        {"r3.db", "node1", 10, 3, NULL, {{NULL, 0, 2, 0}, NODEV}},
        {"r4.db", "node1", 11, 4, NULL, {{NULL, 0, 2, 0}, NODEV}},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (write_file(&files[i]))
            return 1;
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_ngroups(idx), 3);
    TEST_EQ_STR(group_names(idx, 0), "r0.db r1.db");
    TEST_EQ_STR(group_names(idx, 1), "r2.db");
    TEST_EQ_STR(group_names(idx, 2), "r3.db r4.db");
    /* the same devices as the whole run's load, which the analysis uses */
    store_run *whole = store_run_new();
    const char *paths[5];
    for (int i = 0; i < 5; i++)
        paths[i] = job_index_file(idx, (uint32_t)i)->path;
    TEST_EQ_INT(store_run_load_files(whole, paths, 5), 0);
    TEST_EQ_INT(whole->ndevices, 3);
    TEST_EQ_INT(job_index_run(idx)->ndevices, whole->ndevices);
    for (uint32_t c = 0; c < whole->ncontexts; c++) {
        const store_context *cx = &whole->contexts[c];
        uint32_t g = job_index_file(idx, cx->process)->group; /* one process per file */
        for (uint32_t d = 0; d < whole->ncontexts; d++)
            if ((whole->contexts[d].device == cx->device) !=
                (job_index_file(idx, whole->contexts[d].process)->group == g)) {
                fprintf(stderr, "contexts %u and %u: same device %d, same group %d\n", c, d,
                        whole->contexts[d].device == cx->device,
                        job_index_file(idx, whole->contexts[d].process)->group == g);
                return 1;
            }
    }
    store_run_free(whole);
    job_index_free(idx);
    idx = index_folder(1);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_ngroups(idx), 5);
    job_index_free(idx);
    return 0;
}

/* A rank whose kernels ran on two GPUs joins their groups; a context without kernels (a stray
 * context on GPU 0, as PyTorch ranks often make) does not; a file that ran no kernel joins the
 * group of its context's GPU; a file without any context is in no group. */
int test_job_joined_and_idle(void)
{
    const file_desc files[] = {
        {"p0.db", "n", 1, 0, NULL, {{U0, 0, 2, 0}, NODEV}},
        {"p1.db", "n", 2, 1, NULL, {{U1, 1, 2, 0}, {U0, 0, 0, 0}}}, /* stray context on U0 */
        {"p2.db", "n", 3, 2, NULL, {{U2, 2, 2, 0}, NODEV}},
        {"p3.db", "n", 4, 3, NULL, {{U2, 2, 2, 0}, {U4, 3, 2, 0}}}, /* two GPUs */
        {"p4.db", "n", 5, 4, NULL, {{U4, 3, 2, 0}, NODEV}},
        {"p5.db", "n", 6, 5, NULL, {{U1, 1, 0, 0}, NODEV}}, /* no kernels */
        {"p6.db", "n", 7, 6, NULL, {NODEV, NODEV}},         /* no context */
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (write_file(&files[i]))
            return 1;
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_ngroups(idx), 3);
    TEST_EQ_STR(group_names(idx, 0), "p0.db");
    TEST_EQ_STR(group_names(idx, 1), "p1.db p5.db");
    TEST_EQ_STR(group_names(idx, 2), "p2.db p3.db p4.db");
    TEST_EQ_INT(job_index_file(idx, 6)->group, JOB_NO_GROUP);
    json_t *j = job_index_json(idx);
    char *none = json_dumps(json_object_get(j, "no_gpu"), JSON_COMPACT | JSON_ENCODE_ANY);
    char want[4200];
    snprintf(want, sizeof want, "[\"%s\"]", path_of("p6.db"));
    TEST_EQ_STR(none, want);
    TEST_EQ_INT(
        json_array_size(json_object_get(json_array_get(json_object_get(j, "groups"), 2), "gpus")),
        2);
    free(none);
    json_decref(j);
    /* the report says so */
    job_options o = {0};
    analysis_options_default(&o.analysis);
    char *sum[3] = {0};
    TEST_EQ_INT(job_summaries_local(idx, &o, sum), JOB_OK);
    char err[256];
    json_t *rep = job_report_json(idx, sum, "t", err, sizeof err);
    TEST_ASSERT(rep);
    json_t *w = json_object_get(rep, "warnings");
    char want_w[4300];
    snprintf(want_w, sizeof want_w, "1 file ran nothing on a GPU (no CUDA context): %s",
             path_of("p6.db"));
    TEST_EQ_STR(json_string_value(json_array_get(w, json_array_size(w) - 1)), want_w);
    TEST_EQ_INT(json_integer_value(json_object_get(json_object_get(rep, "job"), "gpus")), 4);
    json_decref(rep);
    for (int g = 0; g < 3; g++)
        free(sum[g]);
    job_index_free(idx);
    return 0;
}

/* Files that are not tlview files, and folders without any: one error, naming the file. */
int test_job_bad_files(void)
{
    const file_desc good = {"good.db", "n", 1, 0, NULL, {{U0, 0, 2, 0}, NODEV}};
    if (write_file(&good))
        return 1;
    struct {
        const char *name, *content, *why;
    } cases[] = {
        {"notes.txt", "hello, world\n", "not an SQLite file"},
        {"trace.json", "{\"traceEvents\": []}\n", "not an SQLite file"},
        {"empty.db", "", "empty file, not a tlview file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path_of(cases[i].name), "w");
        TEST_ASSERT(f);
        fputs(cases[i].content, f);
        fclose(f);
        const char *args[2] = {path_of("good.db"), path_of(cases[i].name)};
        job_index *idx = NULL;
        TEST_EQ_INT(job_index_build(args, 2, 0, &idx), JOB_EFILE);
        char want[4200];
        snprintf(want, sizeof want, "%s: %s", args[1], cases[i].why);
        TEST_EQ_STR(job_index_errmsg(idx), want);
        TEST_EQ_STR(job_index_errfile(idx), args[1]);
        job_index_free(idx);
    }
    /* another program's SQLite database (an Nsight Systems export, say) */
    const char *sql = path_of("other.sqlite");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'CREATE TABLE StringIds(id, value)'", sql);
    if (system(cmd) != 0)
        return test_cannot_run("the sqlite3 command is not installed");
    job_index *idx = NULL;
    const char *dir = test_tmpdir();
    TEST_EQ_INT(job_index_build(&dir, 1, 0, &idx), JOB_EFILE); /* the folder takes it in */
    char want[4200];
    snprintf(want, sizeof want, "%s: an SQLite database but not a tlview file (no meta table)",
             sql);
    TEST_EQ_STR(job_index_errmsg(idx), want);
    job_index_free(idx);
    /* a missing path, and a folder with no tlview file */
    const char *missing = path_of("no-such.db");
    TEST_EQ_INT(job_index_build(&missing, 1, 0, &idx), JOB_EFILE);
    snprintf(want, sizeof want, "%s: No such file or directory", missing);
    TEST_EQ_STR(job_index_errmsg(idx), want);
    job_index_free(idx);
    const char *sub = path_of("sub");
    mkdir(sub, 0755);
    FILE *f = fopen(path_of("sub/manifest.json"), "w");
    TEST_ASSERT(f);
    fputs("{}\n", f);
    fclose(f);
    TEST_EQ_INT(job_index_build(&sub, 1, 0, &idx), JOB_EFILE);
    snprintf(want, sizeof want, "%s: the folder holds no tlview file", sub);
    TEST_EQ_STR(job_index_errmsg(idx), want);
    job_index_free(idx);
    return 0;
}

/* A folder's other files (a manifest, logs, a WAL beside its file) are left out. */
int test_job_folder_skips_others(void)
{
    const file_desc good = {"good.db", "n", 1, 0, NULL, {{U0, 0, 2, 0}, NODEV}};
    if (write_file(&good))
        return 1;
    const char *others[] = {"manifest.json", "mps.log", "good.db-wal", ".hidden.db"};
    for (size_t i = 0; i < 4; i++) {
        FILE *f = fopen(path_of(others[i]), "w");
        TEST_ASSERT(f);
        fputs(i == 3 ? "SQLite format 3" : "not a trace\n", f);
        fclose(f);
    }
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_nfiles(idx), 1);
    job_index_free(idx);
    return 0;
}

/* ---------------------------------------------------------------- ranks, indexes, dealing */

static store_process process_with(const char **kv, uint32_t n)
{
    store_process p = {0};
    p.meta_keys = (const char **)malloc(n * sizeof *p.meta_keys);
    p.meta_values = (const char **)malloc(n * sizeof *p.meta_values);
    for (uint32_t i = 0; i < n; i++) {
        p.meta_keys[i] = kv[2 * i];
        p.meta_values[i] = kv[2 * i + 1];
    }
    p.nmeta = n;
    return p;
}

/* The rank (store_process_rank, what job, report and serve show) is the first launcher variable
 * set, in the documented order; not a number is none; the local rank and the world size are the
 * winner's, or those of a later launcher that agrees on the rank. */
static int rank_of(const char **kv, uint32_t n, store_rank *r)
{
    store_process p = process_with(kv, n);
    int known = store_process_rank(&p, r);
    free(p.meta_keys);
    free(p.meta_values);
    return known;
}

int test_job_rank_precedence(void)
{
    store_rank r;
    const char *a[] = {"env.SLURM_PROCID",
                       "9",
                       "env.OMPI_COMM_WORLD_RANK",
                       "3",
                       "env.RANK",
                       "1",
                       "env.OMPI_COMM_WORLD_SIZE",
                       "8",
                       "env.OMPI_COMM_WORLD_LOCAL_RANK",
                       "1",
                       "env.SLURM_LOCALID",
                       "5"};
    TEST_EQ_INT(rank_of(a, 6, &r), 1);
    TEST_EQ_INT(r.rank, 3);
    TEST_EQ_INT(r.local_rank, 1);
    TEST_EQ_INT(r.world_size, 8);
    TEST_EQ_STR(r.launcher, "openmpi");
    const char *b[] = {"env.RANK",       "12", "env.SLURM_PROCID", "40",
                       "env.LOCAL_RANK", "2",  "env.WORLD_SIZE",   "16"};
    TEST_EQ_INT(rank_of(b, 4, &r), 1);
    TEST_EQ_INT(r.rank, 40);
    TEST_EQ_INT(r.local_rank, -1); /* torchrun's local rank is not Slurm's: their ranks differ */
    TEST_EQ_INT(r.world_size, -1);
    TEST_EQ_STR(r.launcher, "slurm");
    const char *c[] = {"env.PMIX_RANK", "x7", "env.LOCAL_RANK", "2"};
    TEST_EQ_INT(rank_of(c, 2, &r), 0);
    TEST_EQ_INT(r.rank, -1);
    TEST_EQ_INT(r.local_rank, -1);
    TEST_EQ_INT(r.world_size, -1);
    TEST_ASSERT(r.launcher == NULL);
    /* srun --mpi=pmix: PMIx has no local rank or size, Slurm's agree on the rank */
    const char *d[] = {"env.PMIX_RANK",     "5", "env.SLURM_PROCID", "5",
                       "env.SLURM_LOCALID", "1", "env.SLURM_NTASKS", "64"};
    TEST_EQ_INT(rank_of(d, 4, &r), 1);
    TEST_EQ_INT(r.rank, 5);
    TEST_EQ_INT(r.local_rank, 1);
    TEST_EQ_INT(r.world_size, 64);
    TEST_EQ_STR(r.launcher, "pmix");
    /* a size of 0 is no size */
    const char *e[] = {"env.PMI_RANK", "0", "env.PMI_SIZE", "0", "env.MPI_LOCALRANKID", "0"};
    TEST_EQ_INT(rank_of(e, 3, &r), 1);
    TEST_EQ_INT(r.rank, 0);
    TEST_EQ_INT(r.local_rank, 0);
    TEST_EQ_INT(r.world_size, -1);
    TEST_EQ_STR(r.launcher, "pmi");
    /* a PyTorch profiler trace's distributedInfo (importers/chrome.c): taken where no launcher
     * variable says (before 2026-12-08 a Kineto trace had no rank in report, job or page) */
    const char *f[] = {"chrome.rank", "3", "chrome.world_size", "8"};
    TEST_EQ_INT(rank_of(f, 2, &r), 1);
    TEST_EQ_INT(r.rank, 3);
    TEST_EQ_INT(r.local_rank, -1);
    TEST_EQ_INT(r.world_size, 8);
    TEST_EQ_STR(r.launcher, "pytorch");
    const char *g[] = {"chrome.rank", "3", "env.RANK", "5"}; /* the launcher's first */
    TEST_EQ_INT(rank_of(g, 2, &r), 1);
    TEST_EQ_INT(r.rank, 5);
    TEST_EQ_STR(r.launcher, "torchrun");
    const char *h[] = {"chrome.rank", "0"}; /* HTA's critical-path sample: no world size */
    TEST_EQ_INT(rank_of(h, 1, &r), 1);
    TEST_EQ_INT(r.rank, 0);
    TEST_EQ_INT(r.world_size, -1);
    return 0;
}

/* The GPU's index on its host: CUDA_VISIBLE_DEVICES's entry for the ordinal the ranks used;
 * null in the summary when the ranks disagree or name it by UUID. */
int test_job_gpu_index(void)
{
    const file_desc files[] = {
        {"g0.db", "n", 1, 0, "2,3", {{U0, 1, 2, 0}, NODEV}}, /* ordinal 1 of "2,3": GPU 3 */
        {"g1.db", "n", 2, 1, "3", {{U0, 0, 2, 0}, NODEV}},   /* ordinal 0 of "3": GPU 3 */
        {"h0.db", "n", 3, 2, NULL, {{U1, 5, 2, 0}, NODEV}},  /* no list: the ordinal, 5 */
        {"i0.db", "n", 4, 3, "GPU-aaaa", {{U2, 0, 2, 0}, NODEV}},
        {"j0.db", "n", 5, 4, "0", {{U3, 0, 2, 0}, NODEV}},
        {"j1.db", "n", 6, 5, "1", {{U3, 0, 2, 0}, NODEV}}, /* disagree */
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (write_file(&files[i]))
            return 1;
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_ngroups(idx), 4);
    job_options o = {0};
    analysis_options_default(&o.analysis);
    static const char *const want[] = {"3", "5", "null", "null"};
    for (uint32_t g = 0; g < 4; g++) {
        char *s = NULL;
        const job_group *gr = job_index_group(idx, g);
        TEST_EQ_INT(job_group_summary(gr->paths, gr->nfiles, g, &o, &s), JOB_OK);
        json_t *j = json_loads(s, 0, NULL);
        char *at =
            json_dumps(json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "index"),
                       JSON_ENCODE_ANY);
        TEST_EQ_STR(at, want[g]);
        free(at);
        json_decref(j);
        free(s);
    }
    job_index_free(idx);
    return 0;
}

/* Groups are dealt largest first to the least loaded rank (kernels + 2,500 per file). */
int test_job_deal_balanced(void)
{
    /* groups of 1 file each with 40, 10, 30, 20, 5 thousand kernels */
    const int k[] = {40, 10, 30, 20, 5};
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "d%d.db", i);
        char uuid[33];
        snprintf(uuid, sizeof uuid, "%032d", i);
        file_desc f = {name, "n", 10 + i, i, NULL, {{uuid, 0, k[i] * 1000, 0}, NODEV}};
        if (write_file(&f))
            return 1;
    }
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    uint32_t owner[5];
    job_deal(idx, 2, owner);
    /* work 42.5k, 12.5k, 32.5k, 22.5k, 7.5k: 42.5 -> rank 0; 32.5 -> 1; 22.5 -> 1 (55); 12.5 ->
     * 0 (55); 7.5 -> the lower of the two tied ranks, 0 */
    TEST_EQ_INT(owner[0], 0);
    TEST_EQ_INT(owner[2], 1);
    TEST_EQ_INT(owner[3], 1);
    TEST_EQ_INT(owner[1], 0);
    TEST_EQ_INT(owner[4], 0);
    job_deal(idx, 1, owner);
    for (int g = 0; g < 5; g++)
        TEST_EQ_INT(owner[g], 0);
    job_deal(idx, 8, owner); /* more ranks than groups: one each */
    for (int g = 0; g < 5; g++)
        for (int h = 0; h < g; h++)
            TEST_ASSERT(owner[g] != owner[h]);
    job_index_free(idx);
    return 0;
}

/* ---------------------------------------------------------------- the report */

/* GPUs are ranked by time-sliced share; an MPS GPU (concurrent) comes after; the report is the
 * same bytes whatever order the summaries were made in; a summary's error is the report's. */
int test_job_report_ranking(void)
{
    /* 2 ranks overlapping on U0 without MPS (time-sliced), 2 on U1 as MPS clients */
    const file_desc files[] = {
        {"m0.db", "n", 1, 0, NULL, {{U1, 0, 20, 1}, NODEV}},
        {"m1.db", "n", 2, 1, NULL, {{U1, 0, 20, 1}, NODEV}},
        {"s0.db", "n", 3, 2, NULL, {{U0, 1, 20, 0}, NODEV}},
        {"s1.db", "n", 4, 3, NULL, {{U0, 1, 20, 0}, NODEV}},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (write_file(&files[i]))
            return 1;
    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    TEST_EQ_INT(job_index_ngroups(idx), 2);
    job_options o = {0};
    analysis_options_default(&o.analysis);
    char *sum[2] = {0};
    TEST_EQ_INT(job_summaries_local(idx, &o, sum), JOB_OK);
    char err[256];
    json_t *rep = job_report_json(idx, sum, "t", err, sizeof err);
    TEST_ASSERT(rep);
    json_t *gpus = json_object_get(rep, "gpus");
    TEST_EQ_INT(json_array_size(gpus), 2);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(gpus, 0), "verdict")),
                "time-sliced");
    TEST_EQ_INT(json_integer_value(json_object_get(json_array_get(gpus, 0), "group")), 1);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(gpus, 1), "uuid")), U1);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(gpus, 1), "mps")), "on");
    char *ranks = json_dumps(json_object_get(json_array_get(gpus, 0), "ranks"), JSON_COMPACT);
    TEST_EQ_STR(ranks, "[2,3]");
    free(ranks);
    TEST_EQ_STR(json_string_value(json_object_get(json_object_get(rep, "job"), "note")), JOB_NOTE);
    char *a = json_dumps(rep, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    /* summaries made again, the second group first: the same report */
    char *again[2] = {0};
    for (int g = 1; g >= 0; g--) {
        const job_group *gr = job_index_group(idx, (uint32_t)g);
        TEST_EQ_INT(job_group_summary(gr->paths, gr->nfiles, (uint32_t)g, &o, &again[g]), JOB_OK);
    }
    json_t *rep2 = job_report_json(idx, again, "t", err, sizeof err);
    char *b = json_dumps(rep2, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    TEST_EQ_STR(a, b);
    free(a);
    free(b);
    json_decref(rep2);
    /* a group whose file went bad between the index and its analysis */
    free(again[1]);
    const char *bad[] = {path_of("s0.db"), path_of("nowhere.db")};
    TEST_EQ_INT(job_group_summary(bad, 2, 1, &o, &again[1]), JOB_EFILE);
    TEST_ASSERT(!job_report_json(idx, again, "t", err, sizeof err));
    char want[4300];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", bad[1]);
    TEST_EQ_STR(err, want);
    for (int g = 0; g < 2; g++) {
        free(sum[g]);
        free(again[g]);
    }
    json_decref(rep);
    job_index_free(idx);
    return 0;
}

/* ---------------------------------------------------------------- group = whole run */

/* The committed recordings of the golden tests (each one GPU, one group) with their baselines
 * and options: the job's analysis of the group is the whole run's, field for field. */
int test_job_group_equals_whole_run(void)
{
    static const struct {
        const char *run, *baseline, *measure;
    } cases[] = {
        {"samples/spin/traces/mps-off/n4", "samples/spin/traces/mps-off/n1", NULL},
        {"samples/spin/traces/mps-off/n4", NULL, NULL},
        {"samples/spin/traces/mps-on/n4", NULL, NULL},
        {"samples/saturating/traces/mps-on/n8", "samples/saturating/traces/mps-on/n1", NULL},
        {"samples/triton_single_sm/traces/mps-off/n8", "samples/triton_single_sm/traces/mps-off/n1",
         NULL},
        {"samples/streams_vs_processes/traces/mps-off/n4", NULL, NULL},
        {"samples/streams_vs_processes/traces/streams4", NULL, NULL},
        {"tests/verdicts/ctx-plain-4", "tests/verdicts/solo-spin", NULL},
        {"tests/verdicts/ctx-green-2", "tests/verdicts/solo-spin", NULL},
        {"tests/verdicts/mps-sat-2", "tests/verdicts/solo-sat", NULL},
        {"tests/verdicts/offset-50-mps-off", "tests/verdicts/solo-spin", NULL},
        {"tests/verdicts/uneven-mps-off", "tests/verdicts/solo-uneven", NULL},
        {"tests/gains/resnet18-off-n4", "tests/gains/resnet18-off-n1", "timed"},
        {"tests/gains/gpt2-off-n4", "tests/gains/gpt2-off-n1", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char dir[4096], bdir[4096];
        snprintf(dir, sizeof dir, "%s/%s", TLVIEW_SOURCE_DIR, cases[c].run);
        const char *d = dir;
        job_index *idx = NULL;
        TEST_EQ_INT(job_index_build(&d, 1, 0, &idx), JOB_OK);
        TEST_EQ_INT(job_index_ngroups(idx), 1);
        store_run *base = NULL;
        if (cases[c].baseline) {
            snprintf(bdir, sizeof bdir, "%s/%s", TLVIEW_SOURCE_DIR, cases[c].baseline);
            const char *b = bdir;
            job_index *bidx = NULL;
            TEST_EQ_INT(job_index_build(&b, 1, 0, &bidx), JOB_OK);
            base = store_run_new();
            TEST_EQ_INT(store_run_load_files(base, job_index_group(bidx, 0)->paths,
                                             job_index_group(bidx, 0)->nfiles),
                        0);
            TEST_EQ_INT(store_run_finish(base), 0);
            job_index_free(bidx);
        }
        job_options o = {0};
        analysis_options_default(&o.analysis);
        o.analysis.baseline = base;
        if (cases[c].measure) {
            o.analysis.measure = ANALYSIS_MEASURE_RANGE;
            o.analysis.measure_range = cases[c].measure;
        }
        /* the whole run, as tlview report loads it: every file of the folder */
        const job_group *g = job_index_group(idx, 0);
        store_run *run = store_run_new();
        analysis *a = NULL;
        TEST_EQ_INT(store_run_load_files(run, g->paths, g->nfiles), 0);
        TEST_EQ_INT(store_run_finish(run), 0);
        TEST_EQ_INT(analysis_run(run, &o.analysis, &a), 0);
        char *sum = NULL;
        TEST_EQ_INT(job_summaries_local(idx, &o, &sum), JOB_OK);
        char err[256];
        json_t *rep = job_report_json(idx, &sum, "t", err, sizeof err);
        TEST_ASSERT(rep);
        TEST_EQ_INT(json_array_size(json_object_get(rep, "gpus")), analysis_ndevices(a));
        for (uint32_t s = 0; s < analysis_ndevices(a); s++) {
            json_t *want = view_device_json(a, s);
            json_t *got = json_deep_copy(json_array_get(json_object_get(rep, "gpus"), s));
            json_object_del(want, "gpu");
            json_object_del(want, "first_window");
            json_object_del(want, "windows");
            for (const char *const *k =
                     (const char *const[]){"group", "host", "index", "ranks", "pids", NULL};
                 *k; k++)
                json_object_del(got, *k);
            if (!json_equal(want, got)) {
                char *w = json_dumps(want, JSON_SORT_KEYS), *h = json_dumps(got, JSON_SORT_KEYS);
                fprintf(stderr, "%s: GPU %u differs\nwhole run: %s\njob:       %s\n", cases[c].run,
                        s, w, h);
                return 1;
            }
            json_decref(want);
            json_decref(got);
        }
        json_decref(rep);
        free(sum);
        analysis_free(a);
        store_run_free(run);
        store_run_free(base);
        job_index_free(idx);
    }
    return 0;
}

/* The index's run, made of records read on several threads, holds what reading the files straight
 * into one run gives (store_run_load_meta): processes with their metadata, the devices shared the
 * same way, contexts with their MPS and green fields, and which contexts ran kernels; also for a
 * file of two processes, uuid-less GPUs, one kept apart (gpu_identity), a context whose device
 * has no row. */
int test_job_records_faithful(void)
{
    char name[32];
    for (int i = 0; i < 40; i++) { /* enough files for several threads */
        snprintf(name, sizeof name, "f%02d.db", i);
        file_desc f = {name,
                       i % 3 ? "nodeA" : "nodeB",
                       100 + i,
                       i,
                       i % 2 ? "0,1" : NULL,
                       {{i % 4 ? NULL : U0, (uint32_t)(i % 2), i % 5, i % 3 == 0},
                        {i % 7 ? NULL : U1, 2, i % 6 ? 1 : 0, 0}}};
        if (write_file(&f))
            return 1;
    }
    /* two processes in one file; the second keeps its GPUs apart; a green context; a context
     * whose device has no row */
    store_writer *w = NULL;
    int64_t p1, p2;
    store_process_info a = {.pid = 7, .host = "nodeA", .source = "libcollect"};
    store_process_info b = {.pid = 8, .host = "nodeA", .source = "libcollect"};
    store_device_info d = {0, NULL, "NVIDIA H200", 132, 9, 0, 150ULL << 30};
    store_context_info green = {.context_id = 5,
                                .device_id = 0,
                                .compute_api_kind = 1,
                                .green = 1,
                                .parent_context_id = 4,
                                .sm_count = 66};
    store_kernel_info k = {.start = 10,
                           .end = 20,
                           .device_id = 9,
                           .context_id = 9,
                           .stream_id = 3,
                           .grid = {1, 1, 1},
                           .block = {1, 1, 1},
                           .name = "_Z1kv"};
    TEST_EQ_INT(store_writer_open(path_of("two.db"), STORE_CLOCK_REALTIME, 0, &w), 0);
    TEST_EQ_INT(store_writer_process(w, &a, &p1), 0);
    TEST_EQ_INT(store_writer_process(w, &b, &p2), 0);
    TEST_EQ_INT(store_writer_process_meta(w, p2, "gpu_identity", "separate"), 0);
    TEST_EQ_INT(store_writer_device(w, p1, &d), 0);
    TEST_EQ_INT(store_writer_device(w, p2, &d), 0);
    TEST_EQ_INT(store_writer_context(w, p1, &green), 0);
    TEST_EQ_INT(store_writer_kernel(w, p2, &k), 0); /* context 9 on ordinal 9: no device row */
    TEST_EQ_INT(store_writer_close(w), 0);

    job_index *idx = index_folder(0);
    TEST_ASSERT(idx);
    uint32_t n = job_index_nfiles(idx);
    TEST_EQ_INT(n, 41);
    const char **paths = malloc(n * sizeof *paths);
    for (uint32_t i = 0; i < n; i++)
        paths[i] = job_index_file(idx, i)->path;
    store_run *direct = store_run_new();
    uint64_t *kernels = malloc(n * sizeof *kernels);
    TEST_EQ_INT(store_run_load_meta(direct, paths, n, kernels), 0);
    const store_run *got = job_index_run(idx);
    TEST_EQ_INT(got->nprocesses, direct->nprocesses);
    TEST_EQ_INT(got->ndevices, direct->ndevices);
    TEST_EQ_INT(got->ncontexts, direct->ncontexts);
    for (uint32_t i = 0; i < n; i++)
        TEST_EQ_INT(job_index_file(idx, i)->kernels, kernels[i]);
    for (uint32_t p = 0; p < got->nprocesses; p++) {
        const store_process *x = &got->processes[p], *y = &direct->processes[p];
        TEST_EQ_INT(x->pid, y->pid);
        TEST_EQ_STR(x->host, y->host);
        TEST_EQ_STR(x->file, y->file);
        TEST_EQ_INT(x->nmeta, y->nmeta);
        for (uint32_t m = 0; m < x->nmeta; m++) {
            TEST_EQ_STR(x->meta_keys[m], y->meta_keys[m]);
            TEST_EQ_STR(x->meta_values[m], y->meta_values[m]);
        }
    }
    uint8_t *ran_got = calloc(got->ncontexts, 1), *ran_direct = calloc(direct->ncontexts, 1);
    for (uint32_t s = 0; s < got->nstreams; s++)
        ran_got[got->streams[s].context] = 1;
    for (uint32_t s = 0; s < direct->nstreams; s++)
        ran_direct[direct->streams[s].context] = 1;
    for (uint32_t c = 0; c < got->ncontexts; c++) {
        const store_context *x = &got->contexts[c], *y = &direct->contexts[c];
        TEST_EQ_INT(x->process, y->process);
        TEST_EQ_INT(x->context_id, y->context_id);
        TEST_EQ_INT(x->compute_api_kind, y->compute_api_kind);
        TEST_EQ_INT(x->green, y->green);
        TEST_EQ_INT(x->parent_id, y->parent_id);
        TEST_EQ_INT(x->sm_count, y->sm_count);
        TEST_EQ_INT(ran_got[c], ran_direct[c]);
        TEST_EQ_INT(x->device == STORE_NONE, y->device == STORE_NONE);
        if (x->device == STORE_NONE)
            continue;
        const store_device *dx = &got->devices[x->device], *dy = &direct->devices[y->device];
        TEST_ASSERT((dx->uuid == NULL) == (dy->uuid == NULL));
        if (dx->uuid)
            TEST_EQ_STR(dx->uuid, dy->uuid);
        TEST_ASSERT((dx->name == NULL) == (dy->name == NULL));
        TEST_EQ_INT(dx->inferred, dy->inferred);
        TEST_EQ_INT(dx->global_memory, dy->global_memory);
        TEST_EQ_INT(store_run_device_ordinal(got, x->process, x->device),
                    store_run_device_ordinal(direct, y->process, y->device));
        /* shared with the same contexts */
        for (uint32_t e = 0; e < c; e++)
            TEST_EQ_INT(got->contexts[e].device == x->device,
                        direct->contexts[e].device == y->device);
    }
    TEST_ASSERT(got->contexts[got->ncontexts - 1].green == 0); /* context 9 of pid 8 */
    free(ran_got);
    free(ran_direct);
    free(kernels);
    free(paths);
    store_run_free(direct);
    job_index_free(idx);
    return 0;
}
