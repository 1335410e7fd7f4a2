/* Unit tests of store/: writer -> loader round trips of every record kind, save -> load of a
 * multi-process run, clock alignment, refusal of bad files (newer schema, not SQLite, foreign
 * database, empty, truncated), never overwriting, unwritable folders, size on disk per kernel,
 * a writer killed mid-run, demangling, and hostile files (views, virtual tables, generated
 * columns, huge values, a time limit, times that overflow). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "store_int.h" /* the time limit's knobs (store_read_base_s), marks, device ordinals */
#include "test_help.h"

/* A path in the case's folder; the buffer is reused after 64 calls. */
static char *path_in(const char *name)
{
    static char buf[64][4096];
    static int next;
    char *p = buf[next++ % 64];
    snprintf(p, sizeof buf[0], "%s/%s", test_tmpdir(), name);
    return p;
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static int exec_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    int rc = sqlite3_exec(db, sql, 0, 0, NULL);
    sqlite3_close(db);
    return rc;
}

#define T0 1000000000LL /* cupti clock at the collector's start */

static const char *const mangled = "_Z18testMaxFlopsKernelPfi";

/* Writes one process with every record kind; the cupti clock is realtime - offset. */
static int write_sample(const char *path, int64_t pid, int64_t offset, int nkernels)
{
    store_writer *w;
    int rc = store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w);
    if (rc) {
        fprintf(stderr, "open: %s\n", store_writer_errmsg(w));
        store_writer_close(w);
        return rc;
    }
    store_process_info pi = {pid,       1,      "hostA",      "/bin/app",
                             "app --x", "run7", "libcollect", T0 + offset};
    int64_t proc;
    rc = store_writer_process(w, &pi, &proc);
    rc = rc ? rc : store_writer_meta(w, "writer", "libcollect 0.1.0");
    rc = rc ? rc : store_writer_calibration(w, proc, "start", T0, T0 + offset, 5);
    rc = rc ? rc : store_writer_process_meta(w, proc, "driver_version", "13000");
    rc = rc ? rc : store_writer_process_meta_int(w, proc, "records_dropped", 3);
    store_device_info dev = {
        0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 150000000000ULL};
    rc = rc ? rc : store_writer_device(w, proc, &dev);
    rc = rc ? rc : store_writer_begin(w);
    for (int i = 0; i < nkernels && !rc; i++) {
        store_kernel_info k = {.start = T0 + 1000 + 100 * i,
                               .end = T0 + 1050 + 100 * i,
                               .device_id = 0,
                               .context_id = 1,
                               .stream_id = 7 + i % 2,
                               .correlation_id = 10 + i,
                               .grid = {2, 3, 4},
                               .block = {32, 1, 1},
                               .registers = 16,
                               .static_smem = 48,
                               .dynamic_smem = 1024,
                               .local_mem = 8,
                               .name = mangled};
        rc = store_writer_kernel(w, proc, &k);
    }
    store_memcpy_info mc = {T0 + 500, T0 + 700, 0, 1, 7, 99, 1, 1, 2, 4096, 0};
    store_memset_info ms = {T0 + 800, T0 + 850, 0, 1, 8, 98, 0xff, 256, 2};
    store_api_info ai = {T0 + 400, T0 + 450,           1234, 10, STORE_API_RUNTIME,
                         211,      "cudaLaunchKernel", 0};
    store_range_info ri = {T0 + 300, T0 + 5000, 1234, "dom", "epoch 1"};
    rc = rc ? rc : store_writer_memcpy(w, proc, &mc);
    rc = rc ? rc : store_writer_memset(w, proc, &ms);
    rc = rc ? rc : store_writer_api(w, proc, &ai);
    rc = rc ? rc : store_writer_range(w, proc, &ri);
    rc = rc ? rc : store_writer_commit(w);
    /* The context's kind arrives after its kernels (CUPTI delivers CONTEXT records late). */
    store_context_info ci = {.context_id = 1, .device_id = 0, .compute_api_kind = 2};
    rc = rc ? rc : store_writer_context(w, proc, &ci);
    rc = rc ? rc : store_writer_calibration(w, proc, "end", T0 + 100000, T0 + offset + 100020, 6);
    rc = rc ? rc : store_writer_process_end(w, proc, T0 + offset + 100000, 1, NULL);
    if (rc)
        fprintf(stderr, "write: %s\n", store_writer_errmsg(w));
    int crc = store_writer_close(w);
    return rc ? rc : crc;
}

int test_store_roundtrip(void)
{
    const char *path = path_in("a.db");
    const int64_t off = 5000000;
    TEST_EQ_INT(write_sample(path, 4242, off, 3), STORE_OK);
    store_run *run = store_run_new();
    TEST_ASSERT(run != NULL);
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nprocesses, 1);
    const store_process *p = &run->processes[0];
    TEST_EQ_INT(p->pid, 4242);
    TEST_EQ_INT(p->ppid, 1);
    TEST_EQ_STR(p->host, "hostA");
    TEST_EQ_STR(p->exe, "/bin/app");
    TEST_EQ_STR(p->argv, "app --x");
    TEST_EQ_STR(p->run_id, "run7");
    TEST_EQ_STR(p->source, "libcollect");
    TEST_EQ_STR(p->file, path);
    TEST_EQ_INT(p->start_wall, T0 + off);
    TEST_EQ_INT(p->end_wall, T0 + off + 100000);
    TEST_EQ_INT(p->complete, 1);
    TEST_ASSERT(p->error == NULL);
    TEST_EQ_INT(p->clock_offset, off);
    TEST_EQ_INT(p->clock_drift, 20);
    TEST_EQ_INT(p->records_dropped, 3);
    TEST_EQ_INT(p->nmeta, 2);
    TEST_EQ_STR(p->meta_keys[0], "driver_version");
    TEST_EQ_STR(p->meta_values[0], "13000");
    TEST_EQ_STR(p->meta_keys[1], "records_dropped");
    TEST_EQ_STR(p->meta_values[1], "3");

    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_STR(run->devices[0].uuid, "0123456789abcdef0123456789abcdef");
    TEST_EQ_STR(run->devices[0].name, "NVIDIA H200");
    TEST_EQ_INT(run->devices[0].sm_count, 132);
    TEST_EQ_INT(run->devices[0].cc_major, 9);
    TEST_EQ_INT(run->devices[0].cc_minor, 0);
    TEST_EQ_INT(run->devices[0].global_memory, 150000000000LL);
    TEST_EQ_INT(run->ncontexts, 1);
    TEST_EQ_INT(run->contexts[0].process, 0);
    TEST_EQ_INT(run->contexts[0].device, 0);
    TEST_EQ_INT(run->contexts[0].context_id, 1);
    TEST_EQ_INT(run->contexts[0].compute_api_kind, 2);
    TEST_EQ_INT(run->nstreams, 2);

    TEST_EQ_INT(run->nkernels, 3);
    TEST_EQ_INT(run->nlaunches, 1);
    for (int i = 0; i < 3; i++) {
        const store_kernel *k = &run->kernels[i];
        TEST_EQ_INT(k->start, T0 + off + 1000 + 100 * i);
        TEST_EQ_INT(k->end, T0 + off + 1050 + 100 * i);
        TEST_EQ_INT(k->correlation_id, 10 + i);
        TEST_EQ_INT(run->streams[k->stream].stream_id, 7 + i % 2);
        TEST_EQ_INT(store_kernel_process(run, k), 0);
        TEST_EQ_INT(store_kernel_device(run, k), 0);
        TEST_EQ_INT(k->flags, 0);
    }
    const store_launch *l = &run->launches[run->kernels[0].launch];
    TEST_EQ_STR(run->strings[l->name].text, mangled);
    TEST_EQ_STR(run->strings[l->name].demangled, "testMaxFlopsKernel(float*, int)");
    TEST_EQ_INT(l->grid[0], 2);
    TEST_EQ_INT(l->grid[1], 3);
    TEST_EQ_INT(l->grid[2], 4);
    TEST_EQ_INT(l->block[0], 32);
    TEST_EQ_INT(l->block[1], 1);
    TEST_EQ_INT(l->block[2], 1);
    TEST_EQ_INT(l->registers, 16);
    TEST_EQ_INT(l->static_smem, 48);
    TEST_EQ_INT(l->dynamic_smem, 1024);

    TEST_EQ_INT(run->ncopies, 2);
    const store_copy *c = &run->copies[0];
    TEST_EQ_INT(c->start, T0 + off + 500);
    TEST_EQ_INT(c->end, T0 + off + 700);
    TEST_EQ_INT(c->type, STORE_COPY_MEMCPY);
    TEST_EQ_INT(c->kind, 1);
    TEST_EQ_INT(c->bytes, 4096);
    TEST_EQ_INT(c->correlation_id, 99);
    TEST_EQ_INT(run->streams[c->stream].stream_id, 7);
    c = &run->copies[1];
    TEST_EQ_INT(c->start, T0 + off + 800);
    TEST_EQ_INT(c->end, T0 + off + 850);
    TEST_EQ_INT(c->type, STORE_COPY_MEMSET);
    TEST_EQ_INT(c->kind, 2);
    TEST_EQ_INT(c->bytes, 256);
    TEST_EQ_INT(c->correlation_id, 98);
    TEST_EQ_INT(run->streams[c->stream].stream_id, 8);

    TEST_EQ_INT(run->napis, 1);
    const store_api *a = &run->apis[0];
    TEST_EQ_INT(a->start, T0 + off + 400);
    TEST_EQ_INT(a->end, T0 + off + 450);
    TEST_EQ_INT(a->process, 0);
    TEST_EQ_INT(a->thread_id, 1234);
    TEST_EQ_INT(a->correlation_id, 10);
    TEST_EQ_INT(a->domain, STORE_API_RUNTIME);
    TEST_EQ_INT(a->status, 0);
    TEST_EQ_STR(run->strings[a->name].text, "cudaLaunchKernel");
    TEST_EQ_STR(run->strings[a->name].demangled, "cudaLaunchKernel");

    TEST_EQ_INT(run->nranges, 1);
    const store_range *r = &run->ranges[0];
    TEST_EQ_INT(r->start, T0 + off + 300);
    TEST_EQ_INT(r->end, T0 + off + 5000);
    TEST_EQ_INT(r->thread_id, 1234);
    TEST_EQ_STR(run->strings[r->name].text, "epoch 1");
    TEST_EQ_STR(run->strings[r->domain].text, "dom");

    TEST_EQ_INT(run->t_begin, T0 + off + 300);
    TEST_EQ_INT(run->t_end, T0 + off + 5000);
    store_run_free(run);

    /* The file is one plain SQLite file, readable through its view. */
    char side[4200];
    snprintf(side, sizeof side, "%s-wal", path);
    TEST_EQ_INT(access(side, F_OK), -1);
    sqlite3 *db;
    TEST_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    TEST_EQ_INT(sqlite3_prepare_v2(db,
                                   "SELECT name, end - start, pid, stream_id FROM kernel_v"
                                   " ORDER BY start LIMIT 1",
                                   -1, &st, NULL),
                SQLITE_OK);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    /* name: as recorded, since the writer leaves demangling to the readers */
    TEST_EQ_STR((const char *)sqlite3_column_text(st, 0), mangled);
    TEST_EQ_INT(sqlite3_column_int64(st, 1), 50);
    TEST_EQ_INT(sqlite3_column_int64(st, 2), 4242);
    TEST_EQ_INT(sqlite3_column_int64(st, 3), 7);
    sqlite3_finalize(st);
    TEST_EQ_INT(
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'writer'", -1, &st, NULL),
        SQLITE_OK);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    TEST_EQ_STR((const char *)sqlite3_column_text(st, 0), "libcollect 0.1.0");
    sqlite3_finalize(st);
    sqlite3_close(db);
    TEST_EQ_INT(store_probe(path), 1);
    return 0;
}

int test_store_eexist(void)
{
    const char *path = path_in("exists.db");
    TEST_EQ_INT(write_sample(path, 1, 0, 2), STORE_OK);
    size_t n1, n2;
    char *before = test_slurp(path, &n1);
    TEST_ASSERT(before != NULL);
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_CUPTI, 0, &w), STORE_EEXIST);
    TEST_ASSERT(strstr(store_writer_errmsg(w), path) != NULL);
    TEST_ASSERT(strstr(store_writer_errmsg(w), "already exists") != NULL);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    char *after = test_slurp(path, &n2);
    TEST_ASSERT(after != NULL);
    TEST_EQ_INT(n1, n2);
    TEST_EQ_INT(memcmp(before, after, n1), 0);
    free(before);
    free(after);
    /* store_run_save refuses the same way. */
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_save(run, path, "test"), STORE_EEXIST);
    TEST_ASSERT(strstr(store_run_errmsg(run), path) != NULL);
    store_run_free(run);
    after = test_slurp(path, &n2);
    TEST_EQ_INT(n1, n2);
    free(after);
    return 0;
}

int test_store_unwritable(void)
{
    /* root writes into a mode 0555 folder, so root gets a folder that is a plain file. */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/ro", test_tmpdir());
    if (geteuid() == 0) {
        FILE *f = fopen(dir, "w");
        TEST_ASSERT(f != NULL);
        fclose(f);
    } else {
        TEST_EQ_INT(mkdir(dir, 0555), 0);
    }
    char path[4300];
    snprintf(path, sizeof path, "%s/x.db", dir);
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_CUPTI, 0, &w), STORE_EIO);
    TEST_ASSERT(strncmp(store_writer_errmsg(w), path, strlen(path)) == 0);
    TEST_ASSERT(strstr(store_writer_errmsg(w), "cannot create") != NULL);
    fprintf(stderr, "message: %s\n", store_writer_errmsg(w));
    /* Every later call fails cleanly instead of crashing. */
    int64_t id;
    store_process_info pi = {0};
    TEST_EQ_INT(store_writer_process(w, &pi, &id), STORE_EINVAL);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    TEST_EQ_INT(access(path, F_OK), -1);
    if (geteuid() != 0)
        chmod(dir, 0755);
    /* store_run_save reports through the run. */
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_save(run, path, "t"), STORE_EIO);
    TEST_ASSERT(strncmp(store_run_errmsg(run), path, strlen(path)) == 0);
    store_run_free(run);
    return 0;
}

int test_store_newer_schema(void)
{
    const char *path = path_in("newer.db");
    TEST_EQ_INT(write_sample(path, 1, 0, 2), STORE_OK);
    TEST_EQ_INT(exec_sql(path, "UPDATE meta SET value = 5 WHERE key = 'schema_version';"
                               "UPDATE meta SET value = 4 WHERE key = 'min_reader_version'"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_ENEWER);
    char want[4400];
    snprintf(want, sizeof want,
             "%s: written by a newer tlview (schema 5, needs reader 4); "
             "this tlview reads up to 3",
             path);
    TEST_EQ_STR(store_run_errmsg(run), want);
    TEST_EQ_INT(run->nprocesses, 0);
    TEST_EQ_INT(run->nkernels, 0);
    /* Additive changes (schema_version only) are still read. */
    TEST_EQ_INT(exec_sql(path, "UPDATE meta SET value = 1 WHERE key = 'min_reader_version'"),
                SQLITE_OK);
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(run->nkernels, 2);
    store_run_free(run);
    return 0;
}

/* Loads `path` into a run that already holds a good file; expects `code`, a message naming
 * the file and containing `what`, the run unchanged, and store_probe() to say `probe`. */
static int expect_bad(const char *good, const char *path, int code, const char *what, int probe)
{
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, good), STORE_OK);
    uint64_t nk = run->nkernels;
    uint32_t np = run->nprocesses, ns = run->nstrings, nc = run->ncontexts, nd = run->ndevices;
    TEST_EQ_INT(store_run_load(run, path), code);
    const char *msg = store_run_errmsg(run);
    fprintf(stderr, "message: %s\n", msg);
    TEST_ASSERT(strncmp(msg, path, strlen(path)) == 0);
    TEST_ASSERT(strstr(msg, what) != NULL);
    TEST_EQ_INT(run->nkernels, nk);
    TEST_EQ_INT(run->nprocesses, np);
    TEST_EQ_INT(run->nstrings, ns);
    TEST_EQ_INT(run->ncontexts, nc);
    TEST_EQ_INT(run->ndevices, nd);
    TEST_EQ_INT(store_probe(path), probe);
    /* The run still works after the failure: the good file loads again, merged. */
    TEST_EQ_INT(store_run_load(run, good), STORE_OK);
    TEST_EQ_INT(run->nkernels, 2 * nk);
    TEST_EQ_INT(run->nstrings, ns);
    TEST_EQ_INT(run->ndevices, nd);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    store_run_free(run);
    return 0;
}

int test_store_bad_files(void)
{
    const char *good = path_in("good.db");
    TEST_EQ_INT(write_sample(good, 1, 0, 50), STORE_OK);

    const char *text = path_in("text.db");
    FILE *f = fopen(text, "w");
    TEST_ASSERT(f != NULL);
    fputs("this is not a database at all, just some text that is long enough\n", f);
    fclose(f);
    if (expect_bad(good, text, STORE_EFORMAT, "not an SQLite file", 0))
        return 1;

    const char *empty = path_in("empty.db");
    f = fopen(empty, "w");
    fclose(f);
    if (expect_bad(good, empty, STORE_EFORMAT, "empty file", 0))
        return 1;

    const char *foreign = path_in("foreign.db");
    TEST_EQ_INT(exec_sql(foreign, "CREATE TABLE t(a); INSERT INTO t VALUES (1)"), SQLITE_OK);
    if (expect_bad(good, foreign, STORE_EFORMAT, "not a tlview file (no meta table)", 0))
        return 1;

    const char *other = path_in("othermeta.db");
    TEST_EQ_INT(exec_sql(other, "CREATE TABLE meta(key, value);"
                                "INSERT INTO meta VALUES ('format', 'nsys')"),
                SQLITE_OK);
    if (expect_bad(good, other, STORE_EFORMAT, "not a tlview file", 0))
        return 1;

    /* A real file cut in half. */
    const char *cut = path_in("cut.db");
    size_t n;
    char *bytes = test_slurp(good, &n);
    TEST_ASSERT(bytes != NULL && n > 8192);
    f = fopen(cut, "wb");
    TEST_EQ_INT(fwrite(bytes, 1, n / 2, f), n / 2);
    fclose(f);
    free(bytes);
    if (expect_bad(good, cut, STORE_EFORMAT, "truncated or corrupt", 0))
        return 1;

    /* Whole SQLite, but rows that point nowhere or make no sense. */
    const char *dangling = path_in("dangling.db");
    TEST_EQ_INT(write_sample(dangling, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(dangling, "UPDATE kernel SET launch_id = 99 WHERE rowid = 3"), SQLITE_OK);
    if (expect_bad(good, dangling, STORE_EFORMAT, "refers to launch 99", 1))
        return 1;
    const char *negative = path_in("negative.db");
    TEST_EQ_INT(write_sample(negative, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(negative, "UPDATE kernel SET dur = -5 WHERE rowid = 2"), SQLITE_OK);
    if (expect_bad(good, negative, STORE_EFORMAT, "negative duration", 1))
        return 1;
    /* The same for every table with a duration, and a range naming a domain that is not there. */
    const struct {
        const char *file, *sql, *what;
    } rows[] = {
        {"neg_memcpy.db", "UPDATE memcpy SET dur = -1", "a memcpy with a negative duration"},
        {"neg_memset.db", "UPDATE memset SET dur = -1", "a memset with a negative duration"},
        {"neg_api.db", "UPDATE api SET dur = -1", "an API call with a negative duration"},
        {"neg_range.db", "UPDATE \"range\" SET dur = -1", "a range with a negative duration"},
        {"bad_domain.db", "UPDATE \"range\" SET domain_id = 4242", "refers to string 4242"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *bad = path_in(rows[i].file);
        TEST_EQ_INT(write_sample(bad, 1, 0, 5), STORE_OK);
        TEST_EQ_INT(exec_sql(bad, rows[i].sql), SQLITE_OK);
        if (expect_bad(good, bad, STORE_EFORMAT, rows[i].what, 1))
            return 1;
    }
    const char *nometa = path_in("nometa.db");
    TEST_EQ_INT(write_sample(nometa, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(nometa, "DELETE FROM meta WHERE key = 't0'"), SQLITE_OK);
    if (expect_bad(good, nometa, STORE_EFORMAT, "broken meta table", 0))
        return 1;

    /* A file that does not exist: an I/O error naming it. */
    if (expect_bad(good, path_in("missing.db"), STORE_EIO, "cannot open", 0))
        return 1;
    /* A loader must not have created it. */
    TEST_EQ_INT(access(path_in("missing.db"), F_OK), -1);
    return 0;
}

/* Two processes whose CUPTI clocks differ: the same real instant lands on one axis. */
int test_store_clock_alignment(void)
{
    const char *a = path_in("p1.db"), *b = path_in("p2.db");
    /* Process 1's cupti clock is realtime - 5 ms, process 2's realtime - 9 ms; both ran their
     * first kernel at realtime T0 + 5 ms + 1000. */
    TEST_EQ_INT(write_sample(a, 100, 5000000, 2), STORE_OK);
    store_writer *w;
    TEST_EQ_INT(store_writer_open(b, STORE_CLOCK_CUPTI, T0 - 4000000, &w), STORE_OK);
    store_process_info pi = {200, 1, "hostA", "/bin/app", "app", NULL, "libcollect", 0};
    int64_t proc;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    TEST_EQ_INT(store_writer_calibration(w, proc, "start", T0 - 4000000, T0 + 5000000, 0),
                STORE_OK);
    store_kernel_info k = {.start = T0 - 4000000 + 1000,
                           .end = T0 - 4000000 + 1050,
                           .context_id = 1,
                           .stream_id = 1,
                           .correlation_id = 1,
                           .name = "k2"};
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), STORE_OK);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);

    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, b), STORE_OK);
    TEST_EQ_INT(store_run_load(run, a), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nprocesses, 2);
    TEST_EQ_INT(run->processes[0].clock_offset, 9000000);
    TEST_EQ_INT(run->processes[1].clock_offset, 5000000);
    TEST_EQ_INT(run->nkernels, 3);
    TEST_EQ_INT(run->kernels[0].start, T0 + 5000000 + 1000);
    TEST_EQ_INT(run->kernels[1].start, T0 + 5000000 + 1000);
    TEST_EQ_INT(run->kernels[0].end, T0 + 5000000 + 1050);
    TEST_EQ_INT(run->kernels[1].end, T0 + 5000000 + 1050);
    TEST_ASSERT(store_kernel_process(run, &run->kernels[0]) !=
                store_kernel_process(run, &run->kernels[1]));
    TEST_EQ_INT(run->kernels[2].start, T0 + 5000000 + 1100);
    TEST_EQ_INT(run->t_begin, T0 + 5000000 + 300);
    store_run_free(run);
    return 0;
}

/* A merged run of three processes written with store_run_save and read back. */
int test_store_save_roundtrip(void)
{
    const char *a = path_in("s1.db"), *b = path_in("s2.db"), *c = path_in("s3.db");
    TEST_EQ_INT(write_sample(a, 11, 1000000, 40), STORE_OK);
    TEST_EQ_INT(write_sample(b, 22, 2000000, 30), STORE_OK);
    TEST_EQ_INT(write_sample(c, 33, 1500000, 20), STORE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, a), STORE_OK);
    TEST_EQ_INT(store_run_load(run, b), STORE_OK);
    TEST_EQ_INT(store_run_load(run, c), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->ndevices, 1); /* one GPU seen by three processes, merged by uuid */
    const char *m = path_in("merged.db");
    TEST_EQ_INT(store_run_save(run, m, "tlview merge 0.1.0"), STORE_OK);
    store_run *back = store_run_new();
    TEST_EQ_INT(store_run_load(back, m), STORE_OK);
    TEST_EQ_INT(store_run_finish(back), STORE_OK);
    TEST_EQ_INT(back->nprocesses, 3);
    TEST_EQ_INT(back->ndevices, 1);
    TEST_EQ_INT(back->ncontexts, 3);
    TEST_EQ_INT(back->nstreams, 6);
    TEST_EQ_INT(back->nkernels, 90);
    TEST_EQ_INT(back->ncopies, 6);
    TEST_EQ_INT(back->napis, 3);
    TEST_EQ_INT(back->nranges, 3);
    TEST_EQ_INT(back->t_begin, run->t_begin);
    TEST_EQ_INT(back->t_end, run->t_end);
    for (uint32_t i = 0; i < 3; i++) {
        const store_process *p = &run->processes[i], *q = &back->processes[i];
        TEST_EQ_INT(q->pid, p->pid);
        TEST_EQ_STR(q->host, p->host);
        TEST_EQ_STR(q->argv, p->argv);
        TEST_EQ_INT(q->start_wall, p->start_wall);
        TEST_EQ_INT(q->end_wall, p->end_wall);
        TEST_EQ_INT(q->complete, 1);
        TEST_EQ_INT(q->clock_offset, 0); /* realtime file */
        TEST_EQ_INT(q->records_dropped, 3);
        TEST_EQ_STR(q->file, m);
        TEST_EQ_INT(back->contexts[i].compute_api_kind, 2);
    }
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i], *q = &back->kernels[i];
        TEST_EQ_INT(q->start, k->start);
        TEST_EQ_INT(q->end, k->end);
        TEST_EQ_INT(q->correlation_id, k->correlation_id);
        TEST_EQ_INT(back->processes[store_kernel_process(back, q)].pid,
                    run->processes[store_kernel_process(run, k)].pid);
        TEST_EQ_INT(back->streams[q->stream].stream_id, run->streams[k->stream].stream_id);
        TEST_EQ_STR(back->strings[back->launches[q->launch].name].demangled,
                    run->strings[run->launches[k->launch].name].demangled);
        TEST_EQ_INT(back->launches[q->launch].dynamic_smem, 1024);
    }
    for (uint64_t i = 0; i < run->ncopies; i++) {
        TEST_EQ_INT(back->copies[i].start, run->copies[i].start);
        TEST_EQ_INT(back->copies[i].type, run->copies[i].type);
        TEST_EQ_INT(back->copies[i].bytes, run->copies[i].bytes);
    }
    store_run_free(back);
    store_run_free(run);
    return 0;
}

/* Realistic kernels: a few signatures, durations of a few µs, gaps, rising correlation ids. */
static int write_many(const char *path, int n, int batch, int die_after_batches)
{
    store_writer *w;
    int rc = store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w);
    if (rc)
        return rc;
    store_process_info pi = {77, 1, "h", "/bin/b", "b", NULL, "libcollect", T0};
    int64_t proc;
    rc = store_writer_process(w, &pi, &proc);
    rc = rc ? rc : store_writer_calibration(w, proc, "start", T0, T0, 0);
    static const char *const names[4] = {"_Z6kernelPfi", "_Z4gemmPKfS0_Pfiii", "_Z7softmaxPfi",
                                         "_Z9layernormPfS_i"};
    uint64_t seed = 12345;
    int64_t t = T0 + 1000;
    int batches = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (i % batch == 0)
            rc = store_writer_begin(w);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int sig = (int)(seed >> 60) & 3;
        int64_t dur = 2000 + (int64_t)((seed >> 20) % 30000);
        store_kernel_info k = {.start = t,
                               .end = t + dur,
                               .context_id = 1,
                               .stream_id = 7 + (sig & 1),
                               .correlation_id = 100 + 3 * i,
                               .grid = {(uint32_t)(64 << sig), 1, 1},
                               .block = {256, 1, 1},
                               .registers = 32,
                               .name = names[sig]};
        t += dur + (int64_t)((seed >> 40) % 3000);
        rc = rc ? rc : store_writer_kernel(w, proc, &k);
        if (!rc && (i % batch == batch - 1 || i == n - 1)) {
            rc = store_writer_commit(w);
            if (++batches == die_after_batches)
                kill(getpid(), SIGKILL);
        }
    }
    rc = rc ? rc : store_writer_process_end(w, proc, t, 1, NULL);
    int crc = store_writer_close(w);
    return rc ? rc : crc;
}

int test_store_bytes_per_kernel(void)
{
    const char *path = path_in("size.db");
    const int n = 100000;
    TEST_EQ_INT(write_many(path, n, 10000, 0), STORE_OK);
    int64_t sz = file_size(path);
    double per = (double)sz / n;
    fprintf(stderr, "%d kernels: %lld bytes, %.2f bytes per kernel\n", n, (long long)sz, per);
    TEST_ASSERT(per <= 32.0);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, n);
    TEST_EQ_INT(run->nlaunches, 4);
    TEST_EQ_INT(run->kernels[n - 1].correlation_id, 100 + 3 * (n - 1));
    for (int i = 1; i < n; i++)
        TEST_ASSERT(run->kernels[i - 1].start <= run->kernels[i].start);
    store_run_free(run);
    return 0;
}

/* A writer SIGKILLed after 3 committed batches: the file loads with those kernels, incomplete. */
int test_store_killed_writer(void)
{
    const char *path = path_in("killed.db");
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
        write_many(path, 10000, 1000, 3);
        _exit(0); /* not reached: the writer kills itself */
    }
    int status;
    TEST_EQ_INT(waitpid(pid, &status, 0), pid);
    TEST_ASSERT(WIFSIGNALED(status));
    TEST_EQ_INT(WTERMSIG(status), SIGKILL);
    store_run *run = store_run_new();
    int lrc = store_run_load(run, path);
    if (lrc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(lrc, STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nprocesses, 1);
    TEST_EQ_INT(run->processes[0].complete, 0);
    TEST_EQ_INT(run->nkernels, 3000);
    TEST_EQ_INT(run->kernels[2999].correlation_id, 100 + 3 * 2999);
    store_run_free(run);
    return 0;
}

/* Killed inside a batch big enough to spill to the WAL before its commit: only the committed
 * batches are read back. */
int test_store_killed_mid_batch(void)
{
    const char *path = path_in("killed2.db");
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
        store_writer *w;
        if (store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w))
            _exit(10);
        store_process_info pi = {5, 1, "h", "/bin/x", "x", NULL, "libcollect", T0};
        int64_t proc;
        if (store_writer_process(w, &pi, &proc))
            _exit(11);
        for (int b = 0; b < 4; b++) {
            store_writer_begin(w);
            int rows = b < 3 ? 1000 : 400000; /* ~9 MB: more than the writer's page cache */
            for (int i = 0; i < rows; i++) {
                int64_t t = T0 + (int64_t)(b * 1000000 + i) * 100;
                store_kernel_info k = {.start = t,
                                       .end = t + 50,
                                       .context_id = 1,
                                       .correlation_id = (uint32_t)(b * 1000000 + i),
                                       .name = "k"};
                if (store_writer_kernel(w, proc, &k))
                    _exit(12);
            }
            if (b < 3 && store_writer_commit(w))
                _exit(13);
        }
        kill(getpid(), SIGKILL);
        _exit(14);
    }
    int status;
    TEST_EQ_INT(waitpid(pid, &status, 0), pid);
    TEST_ASSERT(WIFSIGNALED(status));
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    TEST_ASSERT(file_size(wal) > 4 * 1024 * 1024); /* the open batch did reach the WAL */
    store_run *run = store_run_new();
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, STORE_OK);
    TEST_EQ_INT(run->nkernels, 3000);
    TEST_EQ_INT(run->processes[0].complete, 0);
    store_run_free(run);
    return 0;
}

/* The importer-facing builder: interning, device merge by uuid, rollback-free adds, sorting
 * of several unsorted sources. */
int test_store_builder_sort(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {1, 0, "h", NULL, NULL, NULL, "chrome", 0};
    store_idx p0 = store_run_add_process(run, &pi, "a.json");
    pi.pid = 2;
    store_idx p1 = store_run_add_process(run, &pi, "b.json");
    store_device_info d = {0, "aa", "GPU", 1, 9, 0, 1};
    store_idx d0 = store_run_add_device(run, p0, &d);
    d.device_id = 3; /* the same GPU under another ordinal in process 2 */
    TEST_EQ_INT(store_run_add_device(run, p1, &d), d0);
    d.uuid = NULL;
    TEST_ASSERT(store_run_add_device(run, p1, &d) != d0);
    TEST_EQ_INT(store_run_intern(run, "x"), store_run_intern(run, "x"));
    TEST_ASSERT(store_run_intern(run, "x") != store_run_intern(run, "y"));
    store_idx c0 = store_run_context(run, p0, 1, d0, 1);
    store_idx c1 = store_run_context(run, p1, 1, d0, 2);
    TEST_ASSERT(c0 != c1);
    TEST_EQ_INT(store_run_context(run, p0, 1, STORE_NONE, 0), c0);
    store_idx s0 = store_run_stream(run, c0, 1), s1 = store_run_stream(run, c1, 1);
    TEST_ASSERT(s0 != s1);
    store_launch l = {.name = store_run_intern(run, "x"), .grid = {1, 1, 1}, .block = {1, 1, 1}};
    store_idx l0 = store_run_launch(run, &l);
    TEST_EQ_INT(store_run_launch(run, &l), l0);
    /* Source 1: disordered; source 2: reverse order. */
    const int n = 5000;
    for (int i = 0; i < n; i++) {
        int64_t t = (int64_t)((i * 7919) % n) * 10;
        store_kernel k = {t, t + 5, s0, l0, (uint32_t)i, 0};
        TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
    }
    pi.pid = 3;
    store_idx p2 = store_run_add_process(run, &pi, "c.json");
    store_idx s2 = store_run_stream(run, store_run_context(run, p2, 1, STORE_NONE, 0), 4);
    for (int i = 0; i < n; i++) {
        int64_t t = (int64_t)(n - i) * 10 + 3;
        store_kernel k = {t, t + 5, s2, l0, (uint32_t)i, 0};
        TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 2 * n);
    for (uint64_t i = 1; i < run->nkernels; i++)
        TEST_ASSERT(run->kernels[i - 1].start <= run->kernels[i].start);
    TEST_EQ_INT(run->t_begin, 0);
    TEST_EQ_INT(run->t_end, (int64_t)n * 10 + 8);
    TEST_EQ_INT(store_kernel_device(run, &run->kernels[run->nkernels - 1]), STORE_NONE);
    store_run_free(run);
    return 0;
}

int test_store_demangle(void)
{
    char *d = store_demangle("_Z18testMaxFlopsKernelPfi");
    TEST_EQ_STR(d, "testMaxFlopsKernel(float*, int)");
    free(d);
    TEST_ASSERT(store_demangle("cudaLaunchKernel") == NULL);
    TEST_ASSERT(store_demangle("_Zbroken!") == NULL);
    TEST_ASSERT(store_demangle(NULL) == NULL);
    return 0;
}

/* The writer (linked into libcollect.so) stores names as recorded and leaves strings.demangled
 * NULL, so the collector needs no C++ runtime; the loader demangles them. A demangled form a
 * file does carry (files of earlier writers) is taken as it is. */
int test_store_demangle_on_load(void)
{
    const char *path = path_in("names.db");
    TEST_EQ_INT(write_sample(path, 42, 0, 2), STORE_OK);
    sqlite3 *db;
    sqlite3_stmt *st;
    TEST_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    TEST_EQ_INT(sqlite3_prepare_v2(db,
                                   "SELECT count(*), count(demangled) FROM strings WHERE text = ?",
                                   -1, &st, NULL),
                SQLITE_OK);
    sqlite3_bind_text(st, 1, mangled, -1, SQLITE_STATIC);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    TEST_EQ_INT(sqlite3_column_int(st, 0), 1); /* the name is there, mangled */
    TEST_EQ_INT(sqlite3_column_int(st, 1), 0); /* and not demangled */
    sqlite3_finalize(st);
    sqlite3_close(db);

    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    const store_string *s = &run->strings[run->launches[run->kernels[0].launch].name];
    TEST_EQ_STR(s->text, mangled);
    TEST_EQ_STR(s->demangled, "testMaxFlopsKernel(float*, int)");
    store_run_free(run);

    TEST_EQ_INT(exec_sql(path, "UPDATE strings SET demangled = 'as the file says'"
                               " WHERE text = '_Z18testMaxFlopsKernelPfi'"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    s = &run->strings[run->launches[run->kernels[0].launch].name];
    TEST_EQ_STR(s->demangled, "as the file says");
    store_run_free(run);
    return 0;
}

/* The strings.demangled column of text in the file at path: the value, "(NULL)", or "(no row)". */
static const char *demangled_in(const char *path, const char *text)
{
    static char buf[4][256];
    static int next;
    char *out = buf[next++ % 4];
    snprintf(out, sizeof buf[0], "(no row)");
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT demangled FROM strings WHERE text = ?", -1, &st, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *d = (const char *)sqlite3_column_text(st, 0);
            snprintf(out, sizeof buf[0], "%s", d ? d : "(NULL)");
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* store_run_save (merge, import) keeps a demangled form the loaded file carried, though it is not
 * what the loader's demangler makes of the text; the collector's writer calls still leave every
 * demangled NULL. */
int test_store_demangled_saved(void)
{
    const char *path = path_in("foreign.db"), *saved = path_in("foreign-saved.db");
    TEST_EQ_INT(write_sample(path, 42, 0, 2), STORE_OK);
    /* the collector's path: kernel, API and range names, none demangled */
    TEST_EQ_STR(demangled_in(path, mangled), "(NULL)");
    TEST_EQ_STR(demangled_in(path, "cudaLaunchKernel"), "(NULL)");
    TEST_EQ_STR(demangled_in(path, "epoch 1"), "(NULL)");
    TEST_EQ_STR(demangled_in(path, "dom"), "(NULL)");
    /* as another writer (an nsys or Chrome import of an earlier version) would have it */
    TEST_EQ_INT(exec_sql(path, "UPDATE strings SET demangled = 'kernel as the file says'"
                               " WHERE text = '_Z18testMaxFlopsKernelPfi';"
                               "UPDATE strings SET demangled = 'epoch one' WHERE text = 'epoch 1'"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_STR(run->strings[run->launches[run->kernels[0].launch].name].demangled,
                "kernel as the file says");
    TEST_EQ_INT(store_run_save(run, saved, "tlview merge test"), STORE_OK);
    store_run_free(run);

    TEST_EQ_STR(demangled_in(saved, mangled), "kernel as the file says");
    TEST_EQ_STR(demangled_in(saved, "epoch 1"), "epoch one");
    /* a name whose readable form is its text keeps NULL */
    TEST_EQ_STR(demangled_in(saved, "cudaLaunchKernel"), "(NULL)");
    TEST_EQ_STR(demangled_in(saved, "dom"), "(NULL)");
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, saved), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 2);
    TEST_EQ_INT(run->nranges, 1);
    TEST_EQ_INT(run->napis, 1);
    const store_string *k = &run->strings[run->launches[run->kernels[0].launch].name];
    TEST_EQ_STR(k->text, mangled);
    TEST_EQ_STR(k->demangled, "kernel as the file says");
    const store_string *r = &run->strings[run->ranges[0].name];
    TEST_EQ_STR(r->text, "epoch 1");
    TEST_EQ_STR(r->demangled, "epoch one");
    TEST_EQ_STR(run->strings[run->ranges[0].domain].demangled, "dom");
    TEST_EQ_STR(run->strings[run->apis[0].name].demangled, "cudaLaunchKernel");
    store_run_free(run);
    return 0;
}

/* store_run_load_files: the same run as loading one by one; all or nothing on a bad file. */
int test_store_load_files(void)
{
    const char *a = path_in("m1.db"), *b = path_in("m2.db"), *c = path_in("m3.db");
    TEST_EQ_INT(write_sample(a, 11, 1000000, 400), STORE_OK);
    TEST_EQ_INT(write_sample(b, 22, 2000000, 300), STORE_OK);
    TEST_EQ_INT(write_sample(c, 33, 1500000, 200), STORE_OK);
    const char *paths[3] = {a, b, c};
    store_run *one = store_run_new(), *all = store_run_new();
    for (int i = 0; i < 3; i++)
        TEST_EQ_INT(store_run_load(one, paths[i]), STORE_OK);
    TEST_EQ_INT(store_run_load_files(all, paths, 3), STORE_OK);
    TEST_EQ_INT(store_run_finish(one), STORE_OK);
    TEST_EQ_INT(store_run_finish(all), STORE_OK);
    TEST_EQ_INT(all->nprocesses, 3);
    TEST_EQ_INT(all->processes[1].pid, 22);
    TEST_EQ_INT(all->nkernels, 900);
    TEST_EQ_INT(all->ncopies, 6);
    TEST_EQ_INT(all->napis, 3);
    TEST_EQ_INT(all->ndevices, 1);
    for (uint64_t i = 0; i < all->nkernels; i++) {
        TEST_EQ_INT(all->kernels[i].start, one->kernels[i].start);
        TEST_EQ_INT(all->kernels[i].end, one->kernels[i].end);
        TEST_EQ_INT(all->kernels[i].correlation_id, one->kernels[i].correlation_id);
        TEST_EQ_INT(all->processes[store_kernel_process(all, &all->kernels[i])].pid,
                    one->processes[store_kernel_process(one, &one->kernels[i])].pid);
    }
    store_run_free(one);

    /* A bad file among good ones: nothing of any of them is added. */
    const char *bad = path_in("bad.db");
    FILE *f = fopen(bad, "w");
    fputs("garbage garbage garbage garbage", f);
    fclose(f);
    const char *mixed[3] = {a, bad, c};
    TEST_EQ_INT(store_run_load_files(all, mixed, 3), STORE_EFORMAT);
    TEST_ASSERT(strncmp(store_run_errmsg(all), bad, strlen(bad)) == 0);
    TEST_EQ_INT(all->nprocesses, 3);
    TEST_EQ_INT(all->nkernels, 900);
    TEST_EQ_INT(all->ncopies, 6);
    for (uint64_t i = 1; i < all->nkernels; i++)
        TEST_ASSERT(all->kernels[i - 1].start <= all->kernels[i].start);
    store_run_free(all);
    return 0;
}

/* Above a million records the sort takes every path: a nearly sorted source (insertion), a
 * shuffled one (radix pieces), a reversed one, then a merge split across threads. */
int test_store_sort_large(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {1, 0, "h", NULL, NULL, NULL, "chrome", 0};
    uint64_t sum = 0, mix = 0;
    uint64_t seed = 99;
    const int n[3] = {600000, 500000, 400000};
    for (int src = 0; src < 3; src++) {
        pi.pid = src + 1;
        store_idx p = store_run_add_process(run, &pi, "x");
        store_idx s = store_run_stream(run, store_run_context(run, p, 1, STORE_NONE, 0), 1);
        for (int i = 0; i < n[src]; i++) {
            int64_t t;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            if (src == 0)
                t = (int64_t)i * 100 + (int64_t)(seed >> 58) * 37; /* local disorder */
            else if (src == 1)
                t = (int64_t)(seed >> 20) % 70000000;
            else
                t = (int64_t)(n[src] - i) * 150;
            store_kernel k = {t, t + 10, s, 0, (uint32_t)(src * 1000000 + i), 0};
            TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
            sum += (uint64_t)t * 31 + k.correlation_id;
            mix ^= ((uint64_t)t << 20) ^ k.correlation_id;
        }
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 1500000);
    uint64_t sum2 = 0, mix2 = 0;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (i)
            TEST_ASSERT(run->kernels[i - 1].start <= k->start);
        TEST_EQ_INT(k->end, k->start + 10);
        sum2 += (uint64_t)k->start * 31 + k->correlation_id;
        mix2 ^= ((uint64_t)k->start << 20) ^ k->correlation_id;
    }
    TEST_EQ_INT(sum2, sum);
    TEST_EQ_INT(mix2, mix);
    store_run_free(run);
    return 0;
}

/* A full disk, simulated by a file size limit: the writer reports an I/O error naming the file,
 * and what was committed before stays readable. */
int test_store_disk_full(void)
{
    const char *path = path_in("full.db");
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {256 * 1024, 256 * 1024};
        setrlimit(RLIMIT_FSIZE, &rl);
        store_writer *w;
        if (store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w))
            _exit(10);
        store_process_info pi = {5, 1, "h", "/bin/x", "x", NULL, "libcollect", T0};
        int64_t proc;
        if (store_writer_process(w, &pi, &proc))
            _exit(11);
        int rc = STORE_OK;
        for (int b = 0; b < 1000 && rc == STORE_OK; b++) {
            rc = store_writer_begin(w);
            for (int i = 0; i < 1000 && rc == STORE_OK; i++) {
                store_kernel_info k = {.start = T0 + (b * 1000 + i) * 100,
                                       .end = T0 + (b * 1000 + i) * 100 + 50,
                                       .context_id = 1,
                                       .correlation_id = (uint32_t)(b * 1000 + i),
                                       .name = "k"};
                rc = store_writer_kernel(w, proc, &k);
            }
            if (rc == STORE_OK)
                rc = store_writer_commit(w);
        }
        const char *msg = store_writer_errmsg(w);
        int named = strncmp(msg, path, strlen(path)) == 0 && strstr(msg, ": cannot ") != NULL;
        fprintf(stderr, "message: %s\n", msg);
        store_writer_process_error(w, proc, msg);
        store_writer_close(w);
        _exit(rc == STORE_EIO && named ? 0 : 12);
    }
    int status;
    TEST_EQ_INT(waitpid(pid, &status, 0), pid);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 0);
    store_run *run = store_run_new();
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, STORE_OK);
    TEST_EQ_INT(run->processes[0].complete, 0);
    TEST_ASSERT(run->nkernels >= 1000);
    TEST_EQ_INT(run->nkernels % 1000, 0); /* whole batches only */
    fprintf(stderr, "%llu kernels survived\n", (unsigned long long)run->nkernels);
    store_run_free(run);
    return 0;
}

/* Keys at the ends of the int64 range, equal across sources: nothing lost, nothing repeated. */
int test_store_sort_extreme_keys(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {1, 0, NULL, NULL, NULL, NULL, "chrome", 0};
    const int64_t keys[3][3] = {
        {0, INT64_MAX, INT64_MAX}, {INT64_MIN, 5, INT64_MAX}, {INT64_MAX, INT64_MAX, INT64_MAX}};
    uint32_t id = 0;
    for (int src = 0; src < 3; src++) {
        pi.pid = src + 1;
        store_idx p = store_run_add_process(run, &pi, "x");
        store_idx s = store_run_stream(run, store_run_context(run, p, 1, STORE_NONE, 0), 1);
        for (int i = 0; i < 3; i++) {
            store_kernel k = {keys[src][i], keys[src][i], s, 0, id++, 0};
            TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
        }
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 9);
    uint32_t seen = 0;
    for (uint64_t i = 0; i < 9; i++) {
        if (i)
            TEST_ASSERT(run->kernels[i - 1].start <= run->kernels[i].start);
        seen |= 1u << run->kernels[i].correlation_id;
    }
    TEST_EQ_INT(seen, 0x1ff);
    TEST_EQ_INT(run->kernels[0].start, INT64_MIN);
    TEST_EQ_INT(run->kernels[8].start, INT64_MAX);
    TEST_EQ_INT(run->t_begin, INT64_MIN);
    TEST_EQ_INT(run->t_end, INT64_MAX);
    store_run_free(run);
    return 0;
}

/* A batch lost to a full disk, then room again: the names, contexts and launches that batch
 * introduced are written again by the next one, and the file reads back whole. */
int test_store_batch_lost_then_recovered(void)
{
    const char *path = path_in("recover.db");
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        store_writer *w;
        if (store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w))
            _exit(10);
        store_process_info pi = {5, 1, "h", "/bin/x", "x", NULL, "libcollect", T0};
        int64_t proc;
        if (store_writer_process(w, &pi, &proc))
            _exit(11);
        char name[64];
        int64_t t = T0;
        uint32_t corr = 0;
        /* One good batch. */
        store_writer_begin(w);
        store_kernel_info k = {.start = t, .end = t + 10, .context_id = 1, .name = "good"};
        if (store_writer_kernel(w, proc, &k) || store_writer_commit(w))
            _exit(12);
        /* A batch with a new context and new names that cannot fit. */
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        struct rlimit tight = {(rlim_t)file_size(path) + 4096, rl.rlim_max};
        setrlimit(RLIMIT_FSIZE, &tight);
        int rc = store_writer_begin(w);
        for (int i = 0; i < 20000 && rc == STORE_OK; i++) {
            snprintf(name, sizeof name, "_Z5lost%ci", 'a' + i % 26);
            store_kernel_info l = {.start = t += 100,
                                   .end = t + 10,
                                   .context_id = 2,
                                   .stream_id = 3,
                                   .correlation_id = ++corr,
                                   .name = name};
            rc = store_writer_kernel(w, proc, &l);
        }
        /* Whether a row or the COMMIT failed (SQLite may have rolled the batch back on its
         * own), the commit says the batch did not reach the file. */
        if (store_writer_commit(w) != STORE_EIO)
            _exit(13);
        /* Room again: the same names and context in a new batch. */
        setrlimit(RLIMIT_FSIZE, &rl);
        rc = store_writer_begin(w);
        for (int i = 0; i < 100 && rc == STORE_OK; i++) {
            snprintf(name, sizeof name, "_Z5lost%ci", 'a' + i % 26);
            store_kernel_info l = {.start = t += 100,
                                   .end = t + 10,
                                   .context_id = 2,
                                   .stream_id = 3,
                                   .correlation_id = ++corr,
                                   .name = name};
            rc = store_writer_kernel(w, proc, &l);
        }
        if (rc == STORE_OK)
            rc = store_writer_commit(w);
        if (rc != STORE_OK) {
            fprintf(stderr, "after recovery: %s\n", store_writer_errmsg(w));
            _exit(14);
        }
        store_writer_process_end(w, proc, t, 1, NULL);
        _exit(store_writer_close(w) == STORE_OK ? 0 : 15);
    }
    int status;
    TEST_EQ_INT(waitpid(pid, &status, 0), pid);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 0);
    store_run *run = store_run_new();
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 101);
    TEST_EQ_INT(run->ncontexts, 2);
    const store_kernel *last = &run->kernels[100];
    TEST_EQ_STR(run->strings[run->launches[last->launch].name].demangled,
                "lostv(int)"); /* i = 99 */
    TEST_EQ_INT(run->contexts[run->streams[last->stream].context].context_id, 2);
    store_run_free(run);
    return 0;
}

/* Many files at once, more than the descriptor limit allows open together. */
int test_store_load_many_files(void)
{
    enum { N = 150 };
    static char names[N][64];
    const char *paths[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "many%03d.db", i);
        paths[i] = strdup(path_in(names[i]));
        TEST_EQ_INT(write_sample(paths[i], 1000 + i, i * 1000, 3), STORE_OK);
    }
    struct rlimit rl = {100, 100};
    TEST_EQ_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
    store_run *run = store_run_new();
    int rc = store_run_load_files(run, paths, N);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, STORE_OK);
    TEST_EQ_INT(run->nprocesses, N);
    TEST_EQ_INT(run->processes[N - 1].pid, 1000 + N - 1);
    TEST_EQ_INT(run->nkernels, 3 * N);
    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    /* A bad file in the third group: the first two groups are rolled back too. */
    const char *bad = path_in("many_bad.db");
    FILE *f = fopen(bad, "w");
    fputs("not a database, not at all, no", f);
    fclose(f);
    const char *good140 = paths[140];
    paths[140] = bad;
    TEST_EQ_INT(store_run_load_files(run, paths, N), STORE_EFORMAT);
    TEST_ASSERT(strncmp(store_run_errmsg(run), bad, strlen(bad)) == 0);
    TEST_EQ_INT(run->nprocesses, N);
    TEST_EQ_INT(run->nkernels, 3 * N);
    store_run_free(run);
    paths[140] = good140;
    for (int i = 0; i < N; i++)
        free((char *)paths[i]);
    return 0;
}

/* More sources than one merge takes at once (1024): merged in rounds. */
int test_store_sort_many_segments(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {0, 0, NULL, NULL, NULL, NULL, "chrome", 0};
    const int nsrc = 2500, per = 4;
    uint64_t sum = 0;
    for (int src = 0; src < nsrc; src++) {
        pi.pid = src;
        store_idx p = store_run_add_process(run, &pi, "x");
        store_idx s = store_run_stream(run, store_run_context(run, p, 1, STORE_NONE, 0), 1);
        TEST_ASSERT(s != STORE_NONE);
        for (int i = 0; i < per; i++) {
            int64_t t = (int64_t)((src * 7919) % nsrc) + (int64_t)i * nsrc;
            store_kernel k = {t, t + 1, s, 0, (uint32_t)(src * per + i), 0};
            TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
            sum += (uint64_t)t * 3 + k.correlation_id;
        }
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, nsrc * per);
    uint64_t sum2 = 0;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        if (i)
            TEST_ASSERT(run->kernels[i - 1].start <= run->kernels[i].start);
        sum2 += (uint64_t)run->kernels[i].start * 3 + run->kernels[i].correlation_id;
    }
    TEST_EQ_INT(sum2, sum);
    TEST_EQ_INT(run->kernels[0].start, 0);
    TEST_EQ_INT(run->kernels[nsrc * per - 1].start, nsrc * per - 1);
    store_run_free(run);
    return 0;
}

/* One big file is read by every CPU in rowid ranges: the same kernels as a one-range read, and
 * an error in a later range still names the file and leaves the run unchanged. */
int test_store_one_file_in_shares(void)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return test_skip("one CPU here, and a single CPU reads a file in one range: the shared "
                         "read is not tested");
    const char *path = path_in("big.db");
    const int n = 700000;
    TEST_EQ_INT(write_many(path, n, 50000, 0), STORE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load_files(run, &path, 1), STORE_OK);
    TEST_EQ_INT(run->nkernels, n);
    /* Before finish the kernels are in file order (write_many writes them by start). */
    for (int i = 0; i < n; i++)
        TEST_EQ_INT(run->kernels[i].correlation_id, 100 + 3 * i);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    store_run_free(run);

    TEST_EQ_INT(exec_sql(path, "UPDATE kernel SET launch_id = 77 WHERE rowid = 690000"), SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load_files(run, &path, 1), STORE_EFORMAT);
    TEST_ASSERT(strncmp(store_run_errmsg(run), path, strlen(path)) == 0);
    TEST_ASSERT(strstr(store_run_errmsg(run), "refers to launch 77") != NULL);
    TEST_EQ_INT(run->nkernels, 0);
    TEST_EQ_INT(run->nprocesses, 0);
    store_run_free(run);
    return 0;
}

/* Fills the api and range tables of write_sample()'s file with n rows each (rowids 1..n, their
 * one row's values, start 10 ns apart); row i has correlation id and thread id i. */
static int fill_records(const char *path, int n)
{
    char sql[2048];
    snprintf(
        sql, sizeof sql,
        "CREATE TEMP TABLE a AS SELECT * FROM api; CREATE TEMP TABLE r AS SELECT * FROM \"range\";"
        " DELETE FROM api; DELETE FROM \"range\";"
        " WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)"
        " INSERT INTO api SELECT start + 10 * i, dur, process_id, i, i, domain, cbid,"
        " name_id, status FROM a, c;"
        " WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)"
        " INSERT INTO \"range\" SELECT start + 10 * i, dur, process_id, i, domain_id, name_id"
        " FROM r, c;",
        n, n);
    return exec_sql(path, sql);
}

/* Big API and range tables are read in shares beside the kernels: every row once, in file order
 * across the shares' boundaries, those whose times overflow refused and counted; the first bad row
 * in file order is the one told, whichever share reads it; and with another file, the records
 * stay in file order whichever of the two has the big tables. */
int test_store_records_in_shares(void)
{
    const char *big = path_in("big.db"), *small = path_in("small.db");
    const int n = 3 * (int)STORE_MIN_SHARE; /* 2 shares or more with 2 CPUs or more */
    TEST_EQ_INT(write_sample(big, 1234, 0, 3), STORE_OK);
    TEST_EQ_INT(write_sample(small, 4321, 0, 3), STORE_OK);
    TEST_EQ_INT(fill_records(big, n), SQLITE_OK);
    /* one refused in the first third, one at the second share's first row, one at the last */
    TEST_EQ_INT(exec_sql(big,
                         "UPDATE api SET start = 9223372036854775000 WHERE rowid IN"
                         " (5, 393217, 786432);"
                         " UPDATE \"range\" SET dur = 9223372036854775000 WHERE rowid = 262145"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, big), STORE_OK);
    TEST_EQ_INT(run->napis, n - 3);
    TEST_EQ_INT(run->nranges, n - 1);
    TEST_EQ_INT(run->processes[0].rows_refused, 4);
    /* Before finish the records are in file order. */
    for (uint64_t i = 0, want = 1; i < run->napis; i++, want++) {
        want += want == 5 || want == 393217;
        TEST_EQ_INT(run->apis[i].correlation_id, want);
        TEST_EQ_INT(run->apis[i].thread_id, want);
        TEST_EQ_INT(run->apis[i].process, 0);
        TEST_EQ_STR(run->strings[run->apis[i].name].text, "cudaLaunchKernel");
    }
    for (uint64_t i = 0, want = 1; i < run->nranges; i++, want++) {
        want += want == 262145;
        TEST_EQ_INT(run->ranges[i].thread_id, want);
        TEST_EQ_STR(run->strings[run->ranges[i].name].text, "epoch 1");
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->apis[run->napis - 1].correlation_id, n - 1);
    store_run_free(run);

    /* Two files: the small one's records before or after the big one's, as the files are given. */
    for (int big_first = 0; big_first < 2; big_first++) {
        const char *paths[2] = {big_first ? big : small, big_first ? small : big};
        run = store_run_new();
        TEST_EQ_INT(store_run_load_files(run, paths, 2), STORE_OK);
        TEST_EQ_INT(run->napis, n - 2);
        TEST_EQ_INT(run->nranges, n);
        uint64_t at_small = big_first ? run->napis - 1 : 0, at_big = big_first ? 0 : 1;
        TEST_EQ_INT(run->apis[at_small].correlation_id, 10);
        TEST_EQ_INT(run->apis[at_small].process, big_first);
        TEST_EQ_INT(run->apis[at_big].correlation_id, 1);
        TEST_EQ_INT(run->apis[at_big + n - 4].correlation_id, n - 1);
        TEST_EQ_INT(run->ranges[big_first ? run->nranges - 1 : 0].thread_id, 1234);
        TEST_EQ_INT(run->ranges[big_first ? 0 : 1].thread_id, 1);
        store_run_free(run);
    }

    /* A bad row in each share: the first in file order is told, and nothing is kept. */
    TEST_EQ_INT(exec_sql(big, "UPDATE api SET name_id = 999 WHERE rowid = 100;"
                              " UPDATE api SET process_id = 99 WHERE rowid = 700000"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, big), STORE_EFORMAT);
    char want[4200];
    snprintf(want, sizeof want, "%s: table api refers to string 999, which does not exist", big);
    TEST_EQ_STR(store_run_errmsg(run), want);
    TEST_EQ_INT(run->napis, 0);
    TEST_EQ_INT(run->nprocesses, 0);
    store_run_free(run);
    TEST_EQ_INT(exec_sql(big, "UPDATE api SET name_id = (SELECT name_id FROM api WHERE rowid = 1)"
                              " WHERE rowid = 100;"
                              " UPDATE \"range\" SET dur = -5 WHERE rowid = 786000"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, big), STORE_EFORMAT);
    snprintf(want, sizeof want, "%s: table api refers to process 99, which does not exist", big);
    TEST_EQ_STR(store_run_errmsg(run), want);
    store_run_free(run);
    TEST_EQ_INT(exec_sql(big,
                         "UPDATE api SET process_id = (SELECT process_id FROM api WHERE rowid = 1)"
                         " WHERE rowid = 700000"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, big), STORE_EFORMAT);
    snprintf(want, sizeof want,
             "%s: truncated or corrupt (a range with a negative duration, -5 ns)", big);
    TEST_EQ_STR(store_run_errmsg(run), want);
    TEST_EQ_INT(run->nranges, 0);
    store_run_free(run);
    return 0;
}

/* Devices merge by uuid. Without one, the same (process, ordinal) is the same device; across
 * processes a uuid-less device is matched by (host, ordinal, name, memory) and marked inferred:
 * another ordinal, name, memory or host, or no name at all, keeps it apart. */
int test_store_devices_without_uuid(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_process_info pi = {0};
    pi.host = "node1";
    pi.pid = 1;
    store_idx p1 = store_run_add_process(run, &pi, "a.json");
    pi.pid = 2;
    store_idx p2 = store_run_add_process(run, &pi, "b.json");
    pi.pid = 3;
    pi.host = "node2";
    store_idx p3 = store_run_add_process(run, &pi, "c.json");
    pi.pid = 4;
    pi.host = NULL;
    store_idx p4 = store_run_add_process(run, &pi, "d.json");
    pi.pid = 5;
    store_idx p5 = store_run_add_process(run, &pi, "e.json");
    pi.pid = 6;
    pi.host = "node1";
    store_idx p6 = store_run_add_process(run, &pi, "f.json");
    store_device_info d0 = {0, NULL, "NVIDIA H200", 132, 9, 0, 150ULL << 30};
    store_device_info d1 = d0;
    d1.device_id = 1;
    store_idx a = store_run_add_device(run, p1, &d0);
    TEST_EQ_INT(store_run_add_device(run, p1, &d0), a);
    TEST_EQ_INT(run->devices[a].inferred, 0); /* one process alone */
    store_idx b = store_run_add_device(run, p1, &d1);
    TEST_ASSERT(b != a);
    /* p2 on the same host, same ordinal, name and memory: the same GPU */
    TEST_EQ_INT(store_run_add_device(run, p2, &d0), a);
    TEST_EQ_INT(run->devices[a].inferred, 1);
    TEST_EQ_INT(run->devices[b].inferred, 0);
    /* another memory size on the same host: another GPU */
    store_device_info other_mem = d0;
    other_mem.global_memory = 80ULL << 30;
    store_idx m = store_run_add_device(run, p6, &other_mem);
    TEST_ASSERT(m != a && m != b);
    TEST_EQ_INT(run->devices[m].inferred, 0);
    /* within one process an ordinal is one device, whatever a later description says */
    TEST_EQ_INT(store_run_add_device(run, p2, &other_mem), a);
    /* another host: another GPU */
    store_idx h = store_run_add_device(run, p3, &d0);
    TEST_ASSERT(h != a);
    TEST_EQ_INT(run->devices[h].inferred, 0);
    /* host NULL matches host NULL only */
    store_idx n4 = store_run_add_device(run, p4, &d0);
    TEST_ASSERT(n4 != a && n4 != h);
    TEST_EQ_INT(store_run_add_device(run, p5, &d0), n4);
    TEST_EQ_INT(run->devices[n4].inferred, 1);
    /* no name: never matched by inference */
    store_device_info anon = {7, NULL, NULL, 0, 0, 0, 0};
    store_idx x4 = store_run_add_device(run, p4, &anon), x5 = store_run_add_device(run, p5, &anon);
    TEST_ASSERT(x4 != x5);
    TEST_EQ_INT(run->devices[x4].inferred, 0);
    /* a uuid merges by uuid, never inferred */
    store_device_info u = {0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 0};
    store_idx u1 = store_run_add_device(run, p1, &u), u3 = store_run_add_device(run, p3, &u);
    TEST_EQ_INT(u1, u3);
    TEST_ASSERT(u1 != a);
    TEST_EQ_INT(run->devices[u1].inferred, 0);
    TEST_EQ_INT(run->ndevices, 8);
    store_run_free(run);
    return 0;
}

/* Many uuid-less GPUs (a Chrome file may name thousands of device ids): every process on the host
 * finds the GPU of each ordinal the first one added, each process keeps its own ordinals, and a
 * rollback of the last process leaves the lookups right for the next. */
int test_store_many_devices(void)
{
    enum { NDEV = 3000 };
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_process_info pi = {.pid = 1, .host = "node1"};
    store_idx p[3];
    static store_idx first[NDEV];
    store_device_info d = {0, NULL, "NVIDIA H200", 132, 9, 0, 150ULL << 30};
    for (int i = 0; i < 3; i++) {
        pi.pid = 1 + i;
        p[i] = store_run_add_process(run, &pi, "x.json");
        for (uint32_t o = 0; o < NDEV; o++) {
            d.device_id = i == 1 ? NDEV - 1 - o : o; /* another order */
            store_idx dev = store_run_add_device(run, p[i], &d);
            TEST_ASSERT(dev != STORE_NONE);
            if (i == 0)
                first[o] = dev;
            else
                TEST_EQ_INT(dev, first[d.device_id]);
        }
    }
    TEST_EQ_INT(run->ndevices, NDEV);
    for (uint32_t o = 0; o < NDEV; o += 97) {
        TEST_EQ_INT(store_run_device_ordinal(run, p[2], first[o]), o);
        TEST_EQ_INT(run->devices[first[o]].inferred, 1);
    }
    store_run_mark m;
    store_run_get_mark(run, &m);
    pi.pid = 9;
    store_idx q = store_run_add_process(run, &pi, "y.json");
    d.device_id = 5;
    TEST_EQ_INT(store_run_add_device(run, q, &d), first[5]);
    d.device_id = NDEV + 1;
    store_idx extra = store_run_add_device(run, q, &d);
    TEST_EQ_INT(extra, NDEV);
    store_run_rollback(run, &m);
    TEST_EQ_INT(run->ndevices, NDEV);
    TEST_EQ_INT(store_run_device_ordinal(run, p[1], first[7]), 7);
    pi.pid = 10;
    q = store_run_add_process(run, &pi, "z.json");
    TEST_EQ_INT(store_run_add_device(run, q, &d), NDEV); /* a fresh device again */
    d.device_id = 7;
    TEST_EQ_INT(store_run_add_device(run, q, &d), first[7]);
    store_run_free(run);
    return 0;
}

/* store_run_set_gpu_identity(run, 1): each process keeps its uuid-less GPUs (uuids still
 * merge); the switch is refused once a device exists. */
int test_store_gpu_identity_separate(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    TEST_EQ_INT(store_run_set_gpu_identity(run, 1), STORE_OK);
    store_process_info pi = {.pid = 1, .host = "node1"};
    store_idx p1 = store_run_add_process(run, &pi, "a.json");
    pi.pid = 2;
    store_idx p2 = store_run_add_process(run, &pi, "b.json");
    store_device_info d0 = {0, NULL, "NVIDIA H200", 132, 9, 0, 150ULL << 30};
    store_idx a = store_run_add_device(run, p1, &d0), b = store_run_add_device(run, p2, &d0);
    TEST_ASSERT(a != b);
    TEST_EQ_INT(run->devices[a].inferred, 0);
    TEST_EQ_INT(run->devices[b].inferred, 0);
    store_device_info u = {0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 0};
    TEST_EQ_INT(store_run_add_device(run, p1, &u), store_run_add_device(run, p2, &u));
    TEST_EQ_INT(store_run_set_gpu_identity(run, 0), STORE_EINVAL);
    TEST_EQ_STR(store_run_errmsg(run),
                "the GPU identity must be chosen before the first device is added");
    store_device_info d1 = d0;
    d1.device_id = 1;
    TEST_ASSERT(store_run_add_device(run, p1, &d1) != store_run_add_device(run, p2, &d1));
    TEST_EQ_INT(run->ndevices, 5);
    store_run_free(run);
    return 0;
}

/* The value of process meta key in p, or "(absent)". */
static const char *pmeta(const store_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (!strcmp(p->meta_keys[i], key))
            return p->meta_values[i] ? p->meta_values[i] : "(NULL)";
    return "(absent)";
}

/* Native files without uuids: two files of one host share the GPU (inferred); a third file
 * that fails to load after its device matched leaves the run as before, inferred marks too. */
int test_store_gpu_inferred_files(void)
{
    const char *a = path_in("na.db"), *b = path_in("nb.db"), *bad = path_in("nbad.db");
    TEST_EQ_INT(write_sample(a, 11, 0, 5), STORE_OK);
    TEST_EQ_INT(write_sample(b, 22, 0, 5), STORE_OK);
    TEST_EQ_INT(write_sample(bad, 33, 0, 5), STORE_OK);
    const char *drop = "UPDATE device SET uuid = NULL";
    TEST_EQ_INT(exec_sql(a, drop), SQLITE_OK);
    TEST_EQ_INT(exec_sql(b, drop), SQLITE_OK);
    TEST_EQ_INT(exec_sql(bad, "UPDATE device SET uuid = NULL; UPDATE launch SET name_id = 999"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, a), STORE_OK);
    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_INT(run->devices[0].inferred, 0);
    TEST_EQ_INT(store_run_load(run, bad), STORE_EFORMAT);
    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_INT(run->devices[0].inferred, 0);
    TEST_EQ_INT(store_run_load(run, b), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nprocesses, 2);
    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_INT(run->devices[0].inferred, 1);
    TEST_EQ_INT(run->contexts[0].device, 0);
    TEST_EQ_INT(run->contexts[1].device, 0);
    /* merged, the file holds a device row per process; read back, they match again */
    const char *merged = path_in("nmerged.db"), *apart = path_in("napart.db");
    TEST_EQ_INT(store_run_save(run, merged, "tlview merge"), STORE_OK);
    store_run_free(run);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, merged), STORE_OK);
    /* matched, not kept apart: neither process says so */
    TEST_EQ_STR(pmeta(&run->processes[0], "gpu_identity"), "(absent)");
    TEST_EQ_STR(pmeta(&run->processes[1], "gpu_identity"), "(absent)");
    TEST_EQ_INT(run->ndevices, 1);
    TEST_EQ_INT(run->devices[0].inferred, 1);
    store_run_free(run);
    /* the same files, kept apart; merged, the file remembers it */
    run = store_run_new();
    TEST_EQ_INT(store_run_set_gpu_identity(run, 1), STORE_OK);
    const char *both[2] = {a, b};
    TEST_EQ_INT(store_run_load_files(run, both, 2), STORE_OK);
    TEST_EQ_INT(run->ndevices, 2);
    TEST_EQ_INT(run->devices[0].inferred, 0);
    TEST_EQ_INT(run->devices[1].inferred, 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(store_run_save(run, apart, "tlview merge"), STORE_OK);
    store_run_free(run);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, merged), STORE_OK); /* matched ... */
    TEST_EQ_INT(store_run_load(run, apart), STORE_OK);  /* ... and kept apart */
    TEST_EQ_INT(run->nprocesses, 4);
    TEST_EQ_INT(run->ndevices, 3);
    TEST_EQ_INT(run->devices[0].inferred, 1);
    TEST_EQ_INT(run->devices[1].inferred, 0);
    TEST_EQ_INT(run->devices[2].inferred, 0);
    TEST_EQ_STR(pmeta(&run->processes[2], "gpu_identity"), "separate");
    TEST_EQ_STR(pmeta(&run->processes[3], "gpu_identity"), "separate");
    store_run_free(run);
    return 0;
}

/* Green contexts end to end: the writer (a context first met through a kernel, then completed;
 * one written whole), the loader, store_run_save (tlview merge) and the loader again. */
int test_store_green_contexts(void)
{
    const char *path = path_in("green.db"), *saved = path_in("green2.db");
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_REALTIME, T0, &w), STORE_OK);
    store_process_info pi = {.pid = 9, .host = "h", .source = "libcollect"};
    int64_t proc;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    store_kernel_info k = {
        .start = T0 + 10, .end = T0 + 20, .context_id = 2, .stream_id = 5, .name = mangled};
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), STORE_OK);
    k.context_id = 4; /* a context no CONTEXT record describes */
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), STORE_OK);
    store_context_info parent = {.context_id = 1, .compute_api_kind = 1, .null_stream_id = 7};
    store_context_info g2 = {.context_id = 2,
                             .compute_api_kind = 1,
                             .null_stream_id = 9,
                             .green = 1,
                             .parent_context_id = 1,
                             .sm_count = 66};
    store_context_info g3 = g2;
    g3.context_id = 3;
    g3.sm_count = 64;
    TEST_EQ_INT(store_writer_context(w, proc, &parent), STORE_OK);
    TEST_EQ_INT(store_writer_context(w, proc, &g2), STORE_OK); /* updates the kernel's row */
    TEST_EQ_INT(store_writer_context(w, proc, &g3), STORE_OK);
    TEST_EQ_INT(store_writer_context(w, proc, NULL), STORE_EINVAL);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);

    sqlite3 *db;
    sqlite3_stmt *st;
    TEST_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    TEST_EQ_INT(
        sqlite3_prepare_v2(db,
                           "SELECT group_concat(context_id || ':' || coalesce(is_green, 'N')"
                           " || ':' || coalesce(parent_context_id, 'N') || ':' ||"
                           " coalesce(sm_count, 'N') || ':' || null_stream_id, ' ')"
                           " FROM (SELECT * FROM context ORDER BY context_id)",
                           -1, &st, NULL),
        SQLITE_OK);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    /* context 4 was never described: its null stream and green columns stay NULL */
    TEST_EQ_STR((const char *)sqlite3_column_text(st, 0), "1:0:0:0:7 2:1:1:66:9 3:1:1:64:9");
    sqlite3_finalize(st);
    TEST_EQ_INT(sqlite3_prepare_v2(db,
                                   "SELECT (SELECT value FROM meta WHERE key = 'schema_version')"
                                   " * 10 + (SELECT value FROM meta WHERE key ="
                                   " 'min_reader_version'), (SELECT count(*) FROM context"
                                   " WHERE context_id = 4 AND is_green IS NULL)",
                                   -1, &st, NULL),
                SQLITE_OK);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    TEST_EQ_INT(sqlite3_column_int64(st, 0), 31); /* schema 3, readable by reader 1 */
    TEST_EQ_INT(sqlite3_column_int64(st, 1), 1);
    sqlite3_finalize(st);
    sqlite3_close(db);

    for (int pass = 0; pass < 2; pass++) {
        store_run *run = store_run_new();
        TEST_EQ_INT(store_run_load(run, pass ? saved : path), STORE_OK);
        TEST_EQ_INT(store_run_finish(run), STORE_OK);
        TEST_EQ_INT(run->ncontexts, 4);
        static const uint32_t want[4][4] = {
            /* context_id, green, parent_id, sm_count */
            {1, 0, 0, 0},
            {2, 1, 1, 66},
            {3, 1, 1, 64},
            {4, 0, 0, 0},
        };
        for (int want_i = 0; want_i < 4; want_i++) {
            const store_context *c = NULL;
            for (uint32_t i = 0; i < run->ncontexts; i++)
                if (run->contexts[i].context_id == want[want_i][0])
                    c = &run->contexts[i];
            TEST_ASSERT(c != NULL);
            TEST_EQ_INT(c->green, want[want_i][1]);
            TEST_EQ_INT(c->parent_id, want[want_i][2]);
            TEST_EQ_INT(c->sm_count, want[want_i][3]);
            TEST_EQ_INT(c->compute_api_kind, want_i == 3 ? 0 : 1);
        }
        if (!pass)
            TEST_EQ_INT(store_run_save(run, saved, "tlview merge 0.1.0"), STORE_OK);
        store_run_free(run);
    }
    return 0;
}

/* Writes a libcollect-like file at `path`: process `pid` with process_meta env `pct` (NULL:
 * none), its device 0 shown `sms` SMs, and one context of compute API kind `kind` (2: an MPS
 * client) whose row says `ctx_sms` (0: nothing, as libcollect writes for a client today). */
static int write_client(const char *path, int64_t pid, const char *pct, uint32_t sms, uint32_t kind,
                        uint32_t ctx_sms)
{
    store_writer *w;
    int64_t proc;
    store_process_info pi = {.pid = pid, .host = "h", .source = "libcollect"};
    store_device_info d = {
        0, "169599e228a1abb0f48630f3ec94d721", "NVIDIA H200", sms, 9, 0, 150109880320ULL};
    store_context_info c = {.context_id = 1, .compute_api_kind = kind, .sm_count = ctx_sms};
    store_kernel_info k = {
        .start = T0 + 10, .end = T0 + 20, .context_id = 1, .stream_id = 5, .name = mangled};
    if (store_writer_open(path, STORE_CLOCK_REALTIME, T0, &w) ||
        store_writer_process(w, &pi, &proc) || store_writer_device(w, proc, &d) ||
        store_writer_context(w, proc, &c) || store_writer_kernel(w, proc, &k) ||
        (pct && store_writer_process_meta(w, proc, "env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct)))
        return 1;
    return store_writer_close(w) != STORE_OK;
}

/* MPS clients limited by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE run in a partition of the SMs: the
 * reader gives such a context its percentage (libcollect records the variable in process_meta)
 * and the SMs its device reported to the client (the H200 shows 66 of its 132 at 50%:
 * tests/verdicts/mps-pct50), unless the context row says; the device is the whole GPU, the most
 * SMs any process was shown. A plain context keeps no percentage (without MPS the variable does
 * nothing). Before 2026-12-08 the run had neither, and the GPU merged from a 50% client first
 * counted 66 SMs. */
int test_store_mps_partitions(void)
{
    const char *a = path_in("pa.db"), *b = path_in("pb.db"), *c = path_in("pc.db");
    const char *d = path_in("pd.db"), *saved = path_in("psaved.db");
    TEST_EQ_INT(write_client(a, 11, "50", 66, 2, 0), 0);  /* a client at 50%: shown 66 */
    TEST_EQ_INT(write_client(b, 12, NULL, 132, 2, 0), 0); /* a client without a limit */
    TEST_EQ_INT(write_client(c, 13, "25", 132, 1, 0), 0); /* plain: the variable does nothing */
    TEST_EQ_INT(write_client(d, 14, "30", 40, 2, 38), 0); /* the context row says 38 */
    for (int pass = 0; pass < 2; pass++) {
        store_run *run = store_run_new();
        if (pass)
            TEST_EQ_INT(store_run_load(run, saved), STORE_OK);
        else
            for (const char *const *p = (const char *const[]){a, b, c, d, NULL}; *p; p++)
                TEST_EQ_INT(store_run_load(run, *p), STORE_OK);
        TEST_EQ_INT(store_run_finish(run), STORE_OK);
        TEST_EQ_INT(run->ndevices, 1);
        TEST_EQ_INT(run->devices[0].sm_count, 132); /* not the first file's 66 */
        static const struct {
            int64_t pid;
            float pct;
            uint32_t sms;
        } want[] = {{11, 50, 66}, {12, 0, 0}, {13, 0, 0}, {14, 30, 38}};
        TEST_EQ_INT(run->ncontexts, 4);
        for (uint32_t i = 0; i < run->ncontexts; i++) {
            const store_context *x = &run->contexts[i];
            for (int j = 0; j < 4; j++)
                if (run->processes[x->process].pid == want[j].pid) {
                    TEST_NEAR(x->thread_pct, want[j].pct, 0);
                    TEST_EQ_INT(x->sm_count, want[j].sms);
                }
        }
        if (!pass) /* a merged file keeps them */
            TEST_EQ_INT(store_run_save(run, saved, "tlview merge 0.1.0"), STORE_OK);
        store_run_free(run);
    }
    /* the percentage as the variable holds it: a number in (0, 100] */
    static const struct {
        const char *v;
        double want;
    } pcts[] = {{"50", 50}, {"12.5", 12.5}, {"100", 100}, {"0", 0}, {"101", 0}, {"x", 0}, {"", 0}};
    for (size_t i = 0; i < sizeof pcts / sizeof *pcts; i++) {
        const char *keys[] = {"env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"}, *vals[] = {pcts[i].v};
        store_process p = {0};
        p.meta_keys = keys;
        p.meta_values = vals;
        p.nmeta = 1;
        TEST_NEAR(store_thread_pct(&p), pcts[i].want, 0);
    }
    return 0;
}

/* The builder call: unknown (0) leaves what is known; a bad index is refused. */
int test_store_context_green_builder(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {.pid = 1};
    store_idx p = store_run_add_process(run, &pi, "a.json");
    store_idx c = store_run_context(run, p, 3, STORE_NONE, 1);
    TEST_EQ_INT(run->contexts[c].green, 0);
    TEST_EQ_INT(store_run_context_green(run, c, 1, 1, 32), STORE_OK);
    TEST_EQ_INT(store_run_context_green(run, c, 0, 0, 0), STORE_OK);
    TEST_EQ_INT(run->contexts[c].green, 1);
    TEST_EQ_INT(run->contexts[c].parent_id, 1);
    TEST_EQ_INT(run->contexts[c].sm_count, 32);
    TEST_EQ_INT(store_run_context_green(run, c + 1, 1, 1, 32), STORE_EINVAL);
    store_run_free(run);
    return 0;
}

/* The schema version 1 tables (as tlview wrote them before green contexts): still read, the
 * context fields v2 added read as 0. */
static const char v1_ddl[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);\n"
    "CREATE TABLE process(id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, host TEXT,"
    " exe TEXT, argv TEXT, run_id TEXT, start_wall INTEGER, end_wall INTEGER,"
    " complete INTEGER NOT NULL DEFAULT 0, source TEXT, error TEXT);\n"
    "CREATE TABLE process_meta(process_id INTEGER NOT NULL, key TEXT NOT NULL, value,"
    " PRIMARY KEY(process_id, key));\n"
    "CREATE TABLE calibration(process_id INTEGER NOT NULL, label TEXT NOT NULL,"
    " cupti INTEGER NOT NULL, realtime INTEGER NOT NULL, monotonic INTEGER,"
    " PRIMARY KEY(process_id, label));\n"
    "CREATE TABLE device(process_id INTEGER NOT NULL, device_id INTEGER NOT NULL, uuid TEXT,"
    " name TEXT, sm_count INTEGER, cc_major INTEGER, cc_minor INTEGER, global_memory INTEGER,"
    " PRIMARY KEY(process_id, device_id));\n"
    "CREATE TABLE context(id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL,"
    " device_id INTEGER, context_id INTEGER NOT NULL,"
    " compute_api_kind INTEGER NOT NULL DEFAULT 0, null_stream_id INTEGER,"
    " UNIQUE(process_id, context_id));\n"
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL, demangled TEXT);\n"
    "CREATE TABLE launch(id INTEGER PRIMARY KEY, context_row INTEGER NOT NULL,"
    " stream_id INTEGER NOT NULL, name_id INTEGER NOT NULL, grid_x INTEGER, grid_y INTEGER,"
    " grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, registers INTEGER,"
    " static_smem INTEGER, dynamic_smem INTEGER, local_mem INTEGER);\n"
    "CREATE TABLE kernel(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " launch_id INTEGER NOT NULL, correlation_id INTEGER NOT NULL);\n"
    "CREATE TABLE memcpy(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " context_row INTEGER NOT NULL, stream_id INTEGER NOT NULL, correlation_id INTEGER,"
    " copy_kind INTEGER, src_kind INTEGER, dst_kind INTEGER, bytes INTEGER, flags INTEGER);\n"
    "CREATE TABLE memset(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " context_row INTEGER NOT NULL, stream_id INTEGER NOT NULL, correlation_id INTEGER,"
    " value INTEGER, bytes INTEGER, mem_kind INTEGER);\n"
    "CREATE TABLE api(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " process_id INTEGER NOT NULL, thread_id INTEGER, correlation_id INTEGER, domain INTEGER,"
    " cbid INTEGER, name_id INTEGER, status INTEGER);\n"
    "CREATE TABLE \"range\"(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " process_id INTEGER NOT NULL, thread_id INTEGER, domain_id INTEGER, name_id INTEGER);\n";

int test_store_read_schema_v1(void)
{
    const char *path = path_in("v1.db");
    TEST_EQ_INT(exec_sql(path, v1_ddl), SQLITE_OK);
    TEST_EQ_INT(exec_sql(path,
                         "INSERT INTO meta VALUES ('format', 'tlview'), ('schema_version', 1),"
                         " ('min_reader_version', 1), ('t0', 1000), ('clock', 'realtime'),"
                         " ('writer', 'libcollect 0.1.0');"
                         "INSERT INTO process(id, pid, host, complete, source) VALUES"
                         " (1, 77, 'h', 1, 'libcollect');"
                         "INSERT INTO device VALUES (1, 0, NULL, 'NVIDIA H200', 132, 9, 0, 1000);"
                         "INSERT INTO context VALUES (1, 1, 0, 5, 2, 7);"
                         "INSERT INTO strings VALUES (1, 'k', NULL);"
                         "INSERT INTO launch VALUES (1, 1, 7, 1, 1, 1, 1, 32, 1, 1, 8, 0, 0, 0);"
                         "INSERT INTO kernel VALUES (10, 5, 1, 42);"),
                SQLITE_OK);
    store_run *run = store_run_new();
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->ncontexts, 1);
    const store_context *c = &run->contexts[0];
    TEST_EQ_INT(c->context_id, 5);
    TEST_EQ_INT(c->compute_api_kind, 2);
    TEST_EQ_INT(c->green, 0);
    TEST_EQ_INT(c->parent_id, 0);
    TEST_EQ_INT(c->sm_count, 0);
    TEST_EQ_INT(run->nkernels, 1);
    TEST_EQ_INT(run->kernels[0].start, 1010);
    TEST_EQ_INT(run->kernels[0].end, 1015);
    TEST_EQ_STR(run->devices[c->device].name, "NVIDIA H200");
    store_run_free(run);
    /* A file that says schema 2 without the columns is not whole. */
    TEST_EQ_INT(exec_sql(path, "UPDATE meta SET value = 2 WHERE key = 'schema_version'"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_EFORMAT);
    TEST_ASSERT(strstr(store_run_errmsg(run), "not a complete tlview file") != NULL);
    store_run_free(run);
    return 0;
}

/* A batch SQLite rolls back on its own after a failed row (as it may on a full disk; here a
 * trigger's RAISE(ROLLBACK) does it): the commit says the batch is lost, none of its rows are
 * in the file, and the next batch is written. */
int test_store_batch_rolled_back_by_sqlite(void)
{
    const char *path = path_in("rolledback.db");
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w), 0);
    store_process_info pi = {5, 1, "h", "/bin/x", "x", NULL, "libcollect", T0};
    int64_t proc;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), 0);
    TEST_EQ_INT(exec_sql(path, "CREATE TRIGGER boom BEFORE INSERT ON kernel"
                               " WHEN NEW.correlation_id = 666"
                               " BEGIN SELECT RAISE(ROLLBACK, 'boom'); END"),
                SQLITE_OK);
    store_kernel_info k = {.start = T0, .end = T0 + 10, .context_id = 1, .name = "k"};
    TEST_EQ_INT(store_writer_begin(w), 0);
    k.correlation_id = 1;
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), 0);
    k.correlation_id = 666;
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), STORE_EIO);
    TEST_EQ_INT(store_writer_commit(w), STORE_EIO);
    TEST_EQ_INT(store_writer_commit(w), STORE_OK); /* said once */
    TEST_EQ_INT(store_writer_begin(w), 0);
    k.correlation_id = 2;
    TEST_EQ_INT(store_writer_kernel(w, proc, &k), 0);
    TEST_EQ_INT(store_writer_commit(w), 0);
    TEST_EQ_INT(store_writer_close(w), 0); /* closing itself went well */
    sqlite3 *db;
    sqlite3_stmt *st;
    TEST_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    TEST_EQ_INT(
        sqlite3_prepare_v2(db, "SELECT group_concat(correlation_id) FROM kernel", -1, &st, NULL),
        SQLITE_OK);
    TEST_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    TEST_EQ_STR((const char *)sqlite3_column_text(st, 0), "2");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}

/* Loads `path` into a fresh run, which must fail with STORE_EFORMAT and exactly the message
 * "<path>: <text>", and leave the run empty; store_probe must say `probe`. (No time bound: a
 * loaded machine under ASan makes one flaky; the caller's alarm catches a load that hangs.) */
static int expect_refused(const char *path, const char *text, int probe)
{
    char want[4200];
    snprintf(want, sizeof want, "%s: %s", path, text);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_EFORMAT);
    TEST_EQ_STR(store_run_errmsg(run), want);
    TEST_EQ_INT(run->nprocesses, 0);
    TEST_EQ_INT(run->nkernels, 0);
    store_run_free(run);
    TEST_EQ_INT(store_probe(path), probe);
    return 0;
}

/* 2026-12-01, issue "Hardening": a file's schema is SQL that SQLite runs. A `kernel` view over an
 * endless recursive CTE hung the loader (report, serve); a view of randomblob(1e9) took 2 GB.
 * Views, virtual tables and generated columns are refused by name, at once. */
int test_store_hostile_schema(void)
{
    alarm(60); /* the old loader never returned from the first file */
    const struct {
        const char *file, *sql, *text;
        int probe;
    } cases[] = {
        {"cte.db",
         "ALTER TABLE kernel RENAME TO k0; CREATE VIEW kernel AS WITH RECURSIVE c(x) AS"
         " (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS start, 1 AS dur, 1 AS launch_id,"
         " x AS correlation_id FROM c",
         "'kernel' is a view, not a table", 1},
        {"blob.db",
         "ALTER TABLE strings RENAME TO s0; CREATE VIEW strings AS SELECT id,"
         " randomblob(1000000000) AS text, demangled FROM s0",
         "'strings' is a view, not a table", 1},
        {"meta_view.db",
         "ALTER TABLE meta RENAME TO m0; CREATE VIEW meta AS WITH RECURSIVE c(x) AS"
         " (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT key, value FROM m0, c",
         "'meta' is a view, not a table", 1},
        {"vtab.db",
         "DROP TABLE memset; CREATE VIRTUAL TABLE memset USING fts5(start, dur, context_row,"
         " stream_id, correlation_id, value, bytes, mem_kind)",
         "'memset' is a virtual table, not a table", 1},
        {"generated.db",
         "DROP TABLE api; CREATE TABLE api(start INTEGER NOT NULL, dur INTEGER NOT NULL,"
         " process_id INTEGER NOT NULL, thread_id INTEGER, correlation_id INTEGER,"
         " domain INTEGER, cbid INTEGER, name_id INTEGER,"
         " status AS (length(zeroblob(15000000))))",
         "table 'api' has a generated column 'status' (a hostile or damaged file?)", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = path_in(cases[i].file);
        TEST_EQ_INT(write_sample(path, 1, 0, 5), STORE_OK);
        TEST_EQ_INT(exec_sql(path, cases[i].sql), SQLITE_OK);
        if (expect_refused(path, cases[i].text, cases[i].probe))
            return 1;
    }
    /* A real value over the limit: refused before SQLite hands it over (20 MB here). */
    const char *big = path_in("bigvalue.db");
    TEST_EQ_INT(write_sample(big, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(big, "UPDATE process SET argv = printf('%.*c', 20000000, 'x')"),
                SQLITE_OK);
    if (expect_refused(big, "a value over 16 MiB (a hostile or damaged file?)", 1))
        return 1;
    /* A trigger is inert for a reader (triggers are off, and nothing is written): it loads. */
    const char *trig = path_in("trigger.db");
    TEST_EQ_INT(write_sample(trig, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(trig, "CREATE TRIGGER t AFTER UPDATE ON kernel BEGIN"
                               " INSERT INTO kernel SELECT * FROM kernel; END"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, trig), STORE_OK);
    TEST_EQ_INT(run->nkernels, 5);
    store_run_free(run);
    return 0;
}

/* Whatever SQLite is made to compute, a file's reading stops at its time limit, with a message
 * that says so (the limit is lowered here; it is 10 s + 1 s per MiB). */
int test_store_time_limit(void)
{
    const char *path = path_in("slow.db");
    TEST_EQ_INT(write_sample(path, 1, 0, 200000), STORE_OK);
    store_read_base_s = 0.001;
    store_read_s_per_mib = 0;
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_EFORMAT);
    char want[4200];
    snprintf(want, sizeof want, "%s: reading took over 0.001 s (a hostile or damaged file?)", path);
    TEST_EQ_STR(store_run_errmsg(run), want);
    TEST_EQ_INT(run->nprocesses, 0);
    /* The default limit reads it. */
    store_read_base_s = 10;
    store_read_s_per_mib = 1;
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(run->nkernels, 200000);
    store_run_free(run);
    return 0;
}

/* 1 when the run keeps rows_refused as a process_meta pair (it should not: the field is its one
 * place, saved from there). */
static int refused_in_meta(const store_run *run)
{
    for (uint32_t p = 0; p < run->nprocesses; p++)
        for (uint32_t i = 0; i < run->processes[p].nmeta; i++)
            if (!strcmp(run->processes[p].meta_keys[i], "rows_refused"))
                return 1;
    return 0;
}

/* The rows_refused keys of a saved file, "process_id:value" joined by spaces ("" for none). */
static const char *saved_refused(const char *path)
{
    static char out[256];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    snprintf(out, sizeof out, "(cannot read %s)", path);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db,
                           "SELECT coalesce(group_concat(process_id || ':' || value || ':' ||"
                           " typeof(value), ' '), '') FROM process_meta WHERE key = 'rows_refused'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, sizeof out, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* 2026-12-01, issue "Hardening": times that overflow int64 (start + dur, t0 + offset + start)
 * were signed overflows (UBSan) and, in a release build, a kernel with dur = INT64_MAX ended
 * before it began. Such a record is refused and counted in its process's rows_refused, which a
 * saved run keeps (process_meta 'rows_refused'). */
int test_store_time_overflow(void)
{
    const char *path = path_in("overflow.db");
    TEST_EQ_INT(write_sample(path, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(path, "UPDATE kernel SET dur = 9223372036854775807 WHERE rowid = 2;"
                               "UPDATE kernel SET start = 4611686018427387904 WHERE rowid = 4;"
                               "UPDATE memcpy SET start = 9223372036854775807;"
                               "UPDATE api SET dur = 9223372036854775807;"
                               "UPDATE \"range\" SET start = -9223372036854775807"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(run->nkernels, 3);
    TEST_EQ_INT(run->ncopies, 1); /* the memset */
    TEST_EQ_INT(run->napis, 0);
    TEST_EQ_INT(run->nranges, 0);
    TEST_EQ_INT(run->processes[0].rows_refused, 5);
    TEST_EQ_INT(refused_in_meta(run), 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    for (uint64_t i = 0; i < run->nkernels; i++)
        TEST_ASSERT(run->kernels[i].end >= run->kernels[i].start);
    /* Saved and read back: the count stays (written once, from the field), and is not counted
     * twice. */
    const char *saved = path_in("overflow_saved.db");
    TEST_EQ_INT(store_run_save(run, saved, "test"), STORE_OK);
    TEST_EQ_STR(saved_refused(saved), "1:5:text");
    store_run_free(run);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, saved), STORE_OK);
    TEST_EQ_INT(run->nkernels, 3);
    TEST_EQ_INT(run->processes[0].rows_refused, 5);
    TEST_EQ_INT(refused_in_meta(run), 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    const char *resaved = path_in("overflow_resaved.db");
    TEST_EQ_INT(store_run_save(run, resaved, "test"), STORE_OK);
    TEST_EQ_STR(saved_refused(resaved), "1:5:text");
    store_run_free(run);
    /* A run without refused records saves no key. */
    const char *clean = path_in("clean.db"), *clean_saved = path_in("clean_saved.db");
    TEST_EQ_INT(write_sample(clean, 1, 0, 5), STORE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, clean), STORE_OK);
    TEST_EQ_INT(run->processes[0].rows_refused, 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(store_run_save(run, clean_saved, "test"), STORE_OK);
    TEST_EQ_STR(saved_refused(clean_saved), "");
    store_run_free(run);

    /* t0 at the top of int64: no record of the file has a place on the axis. */
    const char *top = path_in("t0.db");
    TEST_EQ_INT(write_sample(top, 1, 0, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(top, "UPDATE meta SET value = 9223372036854775807 WHERE key = 't0'"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, top), STORE_OK);
    TEST_EQ_INT(run->nkernels + run->ncopies + run->napis + run->nranges, 0);
    TEST_EQ_INT(run->processes[0].rows_refused, 9); /* 5 kernels, 2 copies, 1 API call, 1 range */
    store_run_free(run);

    /* A calibration pair whose offset overflows is read as absent (offset 0), and counted, on
     * top of what the file says was refused when it was made. */
    const char *cal = path_in("calibration.db");
    TEST_EQ_INT(write_sample(cal, 1, 5000, 5), STORE_OK);
    TEST_EQ_INT(exec_sql(cal, "UPDATE calibration SET realtime = 9223372036854775807,"
                              " cupti = -10 WHERE label = 'start';"
                              "INSERT INTO process_meta VALUES (1, 'rows_refused', 2)"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, cal), STORE_OK);
    TEST_EQ_INT(run->processes[0].clock_offset, 0);
    TEST_EQ_INT(run->processes[0].rows_refused, 3);
    TEST_EQ_INT(refused_in_meta(run), 0);
    TEST_EQ_INT(run->nkernels, 5);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    const char *cal_saved = path_in("calibration_saved.db");
    TEST_EQ_INT(store_run_save(run, cal_saved, "test"), STORE_OK);
    TEST_EQ_STR(saved_refused(cal_saved), "1:3:text");
    store_run_free(run);
    return 0;
}

/* ---------------------------------------------------------------- capture ranges */

/* A capture range as the collector writes it: opened, its end moved while it is open, closed. */
static int write_capture(const char *path, int64_t pid, int64_t offset, int killed)
{
    store_writer *w;
    int rc = store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w);
    store_process_info pi = {pid, 1, "hostA", "/bin/app", "app", NULL, "libcollect", T0 + offset};
    int64_t proc, a, b;
    rc = rc ? rc : store_writer_process(w, &pi, &proc);
    rc = rc ? rc : store_writer_calibration(w, proc, "start", T0, T0 + offset, 5);
    rc = rc ? rc : store_writer_begin(w);
    for (int i = 0; i < 6 && !rc; i++) {
        store_kernel_info k = {.start = T0 + 1000 * i,
                               .end = T0 + 1000 * i + 10,
                               .context_id = 1,
                               .correlation_id = (uint32_t)i,
                               .name = mangled};
        rc = store_writer_kernel(w, proc, &k);
    }
    rc = rc ? rc : store_writer_commit(w);
    rc = rc ? rc : store_writer_capture(w, proc, T0 - 5, NULL, "start", &a);
    rc = rc ? rc : store_writer_capture_end(w, a, T0 + 1500, "duration");
    rc = rc ? rc : store_writer_capture(w, proc, T0 + 3000, "slow", "control", &b);
    rc = rc ? rc : store_writer_capture_end(w, b, T0 + 4000, NULL); /* still open, reaches 4000 */
    if (!killed)
        rc = rc ? rc : store_writer_capture_end(w, b, T0 + 5500, "control");
    if (rc)
        fprintf(stderr, "write: %s\n", store_writer_errmsg(w));
    int crc = store_writer_close(w);
    return rc ? rc : crc;
}

/* Checks run->captures[i] (process pid) field by field. */
static int check_capture(const store_run *run, uint32_t i, int64_t pid, int64_t start, int64_t end,
                         const char *name, const char *why_start, const char *why_end)
{
    TEST_ASSERT(i < run->ncaptures);
    const store_capture *c = &run->captures[i];
    TEST_EQ_INT(run->processes[c->process].pid, pid);
    TEST_EQ_INT(c->start, start);
    TEST_EQ_INT(c->end, end);
    TEST_EQ_STR(c->name ? c->name : "(none)", name ? name : "(none)");
    TEST_EQ_STR(c->start_reason ? c->start_reason : "(none)", why_start ? why_start : "(none)");
    TEST_EQ_STR(c->end_reason ? c->end_reason : "(none)", why_end ? why_end : "(none)");
    return 0;
}

/* Capture ranges: written, read on the common axis (the clock offset applied), an open one with
 * no end_reason, kept by store_run_save (merge) with their processes; a failed load leaves them
 * as they were. */
int test_store_capture_roundtrip(void)
{
    const char *a = path_in("cap-a.db"), *b = path_in("cap-b.db"), *m = path_in("cap-m.db");
    const int64_t off = 700, offb = 90;
    TEST_EQ_INT(write_capture(a, 11, off, 0), STORE_OK);
    TEST_EQ_INT(write_capture(b, 22, offb, 1), STORE_OK);
    store_run *run = store_run_new();
    const char *both[] = {a, b};
    TEST_EQ_INT(store_run_load_files(run, both, 2), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->ncaptures, 4);
    if (check_capture(run, 0, 11, T0 - 5 + off, T0 + 1500 + off, NULL, "start", "duration") ||
        check_capture(run, 1, 11, T0 + 3000 + off, T0 + 5500 + off, "slow", "control", "control") ||
        check_capture(run, 2, 22, T0 - 5 + offb, T0 + 1500 + offb, NULL, "start", "duration") ||
        check_capture(run, 3, 22, T0 + 3000 + offb, T0 + 4000 + offb, "slow", "control", NULL))
        return 1;
    /* A bad file after them: rolled back, the captures stay as they were. */
    const char *bad = path_in("bad.db");
    TEST_EQ_INT(exec_sql(bad, "CREATE TABLE x(y)"), SQLITE_OK);
    TEST_EQ_INT(store_run_load(run, bad), STORE_EFORMAT);
    TEST_EQ_INT(run->ncaptures, 4);
    TEST_EQ_INT(store_run_save(run, m, "tlview merge 0.1.0"), STORE_OK);
    store_run_free(run);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, m), STORE_OK);
    TEST_EQ_INT(run->ncaptures, 4);
    if (check_capture(run, 0, 11, T0 - 5 + off, T0 + 1500 + off, NULL, "start", "duration") ||
        check_capture(run, 1, 11, T0 + 3000 + off, T0 + 5500 + off, "slow", "control", "control") ||
        check_capture(run, 2, 22, T0 - 5 + offb, T0 + 1500 + offb, NULL, "start", "duration") ||
        check_capture(run, 3, 22, T0 + 3000 + offb, T0 + 4000 + offb, "slow", "control", NULL))
        return 1;
    store_run_free(run);
    /* The builder refuses a range that ends before it starts, or of no process. */
    run = store_run_new();
    store_process_info pi = {.pid = 1};
    store_idx p = store_run_add_process(run, &pi, "x.json");
    store_capture c = {.start = 10, .end = 5, .process = p};
    TEST_EQ_INT(store_run_add_capture(run, &c), STORE_EINVAL);
    c.end = 20;
    c.process = p + 1;
    TEST_EQ_INT(store_run_add_capture(run, &c), STORE_EINVAL);
    c.process = p;
    TEST_EQ_INT(store_run_add_capture(run, &c), STORE_OK);
    TEST_EQ_INT(run->ncaptures, 1);
    store_run_free(run);
    return 0;
}

/* A schema-2 file (before capture ranges) reads with none; a schema-3 file without the table
 * is not whole. */
int test_store_capture_old_files(void)
{
    const char *path = path_in("v2.db");
    TEST_EQ_INT(write_sample(path, 5, 0, 3), STORE_OK);
    TEST_EQ_INT(exec_sql(path, "DROP TABLE capture;"
                               "UPDATE meta SET value = 2 WHERE key = 'schema_version'"),
                SQLITE_OK);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(run->nkernels, 3);
    TEST_EQ_INT(run->ncaptures, 0);
    store_run_free(run);
    TEST_EQ_INT(exec_sql(path, "UPDATE meta SET value = 3 WHERE key = 'schema_version'"),
                SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_EFORMAT);
    TEST_ASSERT(strstr(store_run_errmsg(run), "not a complete tlview file") != NULL);
    store_run_free(run);
    /* A negative duration is refused like any record's. */
    TEST_EQ_INT(write_capture(path_in("neg.db"), 5, 0, 0), STORE_OK);
    TEST_EQ_INT(exec_sql(path_in("neg.db"), "UPDATE capture SET dur = -1 WHERE id = 2"), SQLITE_OK);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path_in("neg.db")), STORE_EFORMAT);
    TEST_ASSERT(strstr(store_run_errmsg(run), "a capture range with a negative duration"));
    store_run_free(run);
    return 0;
}

static int64_t sql_value(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    int64_t v = -999;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Writes `n` kernels (and one memcpy, memset, API call and NVTX range) starting at `t`, 10 ns
 * apart, in one batch. */
static int write_batch(store_writer *w, int64_t proc, int64_t t, int n)
{
    int rc = store_writer_begin(w);
    for (int i = 0; i < n && !rc; i++) {
        store_kernel_info k = {.start = t + 10 * i,
                               .end = t + 10 * i + 5,
                               .context_id = 1,
                               .stream_id = (uint32_t)i % 4,
                               .correlation_id = (uint32_t)i,
                               .name = mangled};
        rc = store_writer_kernel(w, proc, &k);
    }
    store_memcpy_info mc = {.start = t, .end = t + 1, .context_id = 1, .bytes = 8};
    store_memset_info ms = {.start = t, .end = t + 1, .context_id = 1, .bytes = 8};
    store_api_info ai = {.start = t, .end = t + 1, .domain = STORE_API_RUNTIME, .name = "x"};
    store_range_info ri = {.start = t, .end = t + 1, .name = "r"};
    rc = rc ? rc : store_writer_memcpy(w, proc, &mc);
    rc = rc ? rc : store_writer_memset(w, proc, &ms);
    rc = rc ? rc : store_writer_api(w, proc, &ai);
    rc = rc ? rc : store_writer_range(w, proc, &ri);
    int crc = store_writer_commit(w);
    return rc ? rc : crc;
}

/* The flight recorder's rotation: rows up to a mark go, in every record table, the last row
 * always stays (rowids keep growing), capture ranges are trimmed; a file pruned while it grows
 * stays bounded (SQLite reuses the pages), and reads back with exactly the rows kept. */
int test_store_prune(void)
{
    const char *path = path_in("flight.db");
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_REALTIME, T0, &w), STORE_OK);
    store_process_info pi = {.pid = 9, .source = "libcollect"};
    int64_t proc, cap;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    TEST_EQ_INT(store_writer_capture(w, proc, T0, NULL, "start", &cap), STORE_OK);
    const int per = 2000, keep = 4;
    store_rowmark marks[400];
    int64_t sizes[400], wal_max = 0;
    char wal[4200];
    for (int b = 0; b < 400; b++) {
        int64_t t = T0 + (int64_t)b * 100000;
        TEST_EQ_INT(write_batch(w, proc, t, per), STORE_OK);
        TEST_EQ_INT(store_writer_capture_end(w, cap, t + 99999, NULL), STORE_OK);
        TEST_EQ_INT(store_writer_rowmark(w, &marks[b]), STORE_OK);
        if (b >= keep && store_writer_prune(w, &marks[b - keep], t - (keep - 1) * 100000)) {
            fprintf(stderr, "prune: %s\n", store_writer_errmsg(w));
            return 1;
        }
        sizes[b] = file_size(path);
        snprintf(wal, sizeof wal, "%s-wal", path);
        wal_max = file_size(wal) > wal_max ? file_size(wal) : wal_max;
    }
    TEST_EQ_INT(marks[0].row[0], per);
    TEST_EQ_INT(marks[399].row[0], 400 * per);
    TEST_EQ_INT(marks[399].row[3], 400);
    int64_t used = 0;
    TEST_EQ_INT(store_writer_used_bytes(w, &used), STORE_OK);
    /* 400 batches of 2000 kernels are ~17 MB of rows, 4 of them ~170 KB: the file stays under
     * 1 MB all along (freed pages are reused), its WAL within SQLite's checkpoint size (1000
     * pages) */
    int64_t db_max = 0;
    for (int b = 0; b < 400; b++)
        db_max = sizes[b] > db_max ? sizes[b] : db_max;
    fprintf(stderr,
            "prune: file at most %lld bytes, %lld at the end, %lld in use; WAL at most %lld\n",
            (long long)db_max, (long long)sizes[399], (long long)used, (long long)wal_max);
    TEST_ASSERT(db_max < (1 << 20));
    TEST_ASSERT(used < (1 << 20));
    TEST_ASSERT(wal_max < (5 << 20));
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    /* The last 4 batches and the capture range from the prune's `from` on. */
    TEST_EQ_INT(sql_value(path, "SELECT count(*) FROM kernel"), keep * per);
    TEST_EQ_INT(sql_value(path, "SELECT min(rowid) FROM kernel"), (400 - keep) * per + 1);
    TEST_EQ_INT(sql_value(path, "SELECT count(*) FROM memcpy"), keep);
    TEST_EQ_INT(sql_value(path, "SELECT count(*) FROM \"range\""), keep);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, keep * per);
    TEST_EQ_INT(run->kernels[0].start, T0 + (int64_t)(400 - keep) * 100000);
    TEST_EQ_INT(run->ncopies, 2 * keep);
    TEST_EQ_INT(run->napis, keep);
    TEST_EQ_INT(run->ncaptures, 1);
    TEST_EQ_INT(run->captures[0].start, T0 + (int64_t)(399 - (keep - 1)) * 100000);
    TEST_EQ_INT(run->captures[0].end, T0 + 399 * 100000 + 99999);
    TEST_ASSERT(run->captures[0].end_reason == NULL);
    store_run_free(run);

    /* Pruning everything keeps each table's last row; the next rows get larger rowids. */
    TEST_EQ_INT(store_writer_open(path_in("all.db"), STORE_CLOCK_REALTIME, T0, &w), STORE_OK);
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    TEST_EQ_INT(write_batch(w, proc, T0, 10), STORE_OK);
    store_rowmark all;
    TEST_EQ_INT(store_writer_rowmark(w, &all), STORE_OK);
    TEST_EQ_INT(store_writer_prune(w, &all, T0), STORE_OK);
    TEST_EQ_INT(write_batch(w, proc, T0 + 1000, 10), STORE_OK);
    store_rowmark after;
    TEST_EQ_INT(store_writer_rowmark(w, &after), STORE_OK);
    TEST_EQ_INT(after.row[0], 20);
    TEST_EQ_INT(after.row[1], 2);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    TEST_EQ_INT(sql_value(path_in("all.db"), "SELECT count(*) FROM kernel"), 11);
    TEST_EQ_INT(sql_value(path_in("all.db"), "SELECT count(*) FROM memcpy"), 2);
    /* A closed range that ended before `from` goes; one reaching past it is cut. */
    TEST_EQ_INT(store_writer_open(path_in("trim.db"), STORE_CLOCK_REALTIME, T0, &w), STORE_OK);
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    int64_t c1, c2;
    TEST_EQ_INT(store_writer_capture(w, proc, T0 + 10, "a", "control", &c1), STORE_OK);
    TEST_EQ_INT(store_writer_capture_end(w, c1, T0 + 20, "control"), STORE_OK);
    TEST_EQ_INT(store_writer_capture(w, proc, T0 + 30, "b", "control", &c2), STORE_OK);
    TEST_EQ_INT(store_writer_capture_end(w, c2, T0 + 50, "control"), STORE_OK);
    store_rowmark none = {{0, 0, 0, 0, 0}};
    TEST_EQ_INT(store_writer_prune(w, &none, T0 + 40), STORE_OK);
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    TEST_EQ_INT(sql_value(path_in("trim.db"), "SELECT count(*) FROM capture"), 1);
    TEST_EQ_INT(sql_value(path_in("trim.db"), "SELECT start * 1000 + dur FROM capture"), 40010);
    return 0;
}

/* A snapshot of a file being written: consistent, one plain file, its open range closed at the
 * given time with end_reason 'dump', marked as a snapshot; the writer goes on; an existing name
 * is refused and left alone; not inside a batch. */
int test_store_snapshot(void)
{
    const char *path = path_in("live.db"), *snap = path_in("snap.db");
    store_writer *w;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w), STORE_OK);
    store_process_info pi = {.pid = 9, .source = "libcollect"};
    int64_t proc, cap;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), STORE_OK);
    TEST_EQ_INT(store_writer_calibration(w, proc, "start", T0, T0 + 3, 1), STORE_OK);
    TEST_EQ_INT(store_writer_capture(w, proc, T0, "busy", "control", &cap), STORE_OK);
    TEST_EQ_INT(write_batch(w, proc, T0 + 100, 500), STORE_OK);
    int64_t nk = -1;
    char err[512] = "";
    TEST_EQ_INT(store_writer_snapshot(w, snap, T0 + 9000, &nk, err, sizeof err), STORE_OK);
    TEST_EQ_INT(nk, 500);
    /* The live file goes on. */
    TEST_EQ_INT(write_batch(w, proc, T0 + 10000, 50), STORE_OK);
    TEST_EQ_INT(store_writer_begin(w), STORE_OK);
    TEST_EQ_INT(store_writer_snapshot(w, path_in("inbatch.db"), T0, NULL, err, sizeof err),
                STORE_EINVAL);
    TEST_EQ_INT(access(path_in("inbatch.db"), F_OK), -1);
    TEST_EQ_INT(store_writer_commit(w), STORE_OK);
    TEST_EQ_INT(store_writer_snapshot(w, snap, T0, NULL, err, sizeof err), STORE_EEXIST);
    TEST_ASSERT(strstr(err, "already exists"));
    TEST_EQ_INT(store_writer_close(w), STORE_OK);
    TEST_EQ_INT(sql_value(path, "SELECT count(*) FROM kernel"), 550);
    /* A plain rollback-journal file: no -wal beside it, header bytes 18-19 say 1 (not WAL). */
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", snap);
    TEST_EQ_INT(access(wal, F_OK), -1);
    FILE *f = fopen(snap, "rb");
    unsigned char hdr[20];
    TEST_ASSERT(f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr);
    fclose(f);
    TEST_EQ_INT(hdr[18], 1);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, snap), STORE_OK);
    TEST_EQ_INT(run->nkernels, 500);
    TEST_EQ_INT(run->ncaptures, 1);
    if (check_capture(run, 0, 9, T0 + 3, T0 + 9003, "busy", "control", "dump"))
        return 1;
    TEST_EQ_INT(run->processes[0].complete, 0);
    const store_process *p = &run->processes[0];
    const char *v = NULL;
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (!strcmp(p->meta_keys[i], "snapshot"))
            v = p->meta_values[i];
    TEST_EQ_STR(v, "1");
    store_run_free(run);
    return 0;
}

/* store_run_restrict: the records in flight in [t0, t1) kept whole (one straddling t0), those
 * outside dropped, the capture ranges that overlap kept; everything else index for index, owned
 * by the copy (the source is freed first), its lookup tables rebuilt, and saved like any run. */
int test_store_restrict(void)
{
    const char *a = path_in("r-a.db"), *b = path_in("r-b.db"), *s = path_in("r-saved.db");
    TEST_EQ_INT(write_sample(a, 11, 0, 10), STORE_OK); /* kernels [1000 + 100i, +50) */
    TEST_EQ_INT(write_capture(b, 22, 0, 0), STORE_OK); /* kernels [1000i, +10) */
    store_run *run = store_run_new(), *cut = NULL;
    const char *both[] = {a, b};
    TEST_EQ_INT(store_run_load_files(run, both, 2), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(store_run_restrict(run, T0 + 1230, T0 + 1230, &cut), STORE_EINVAL);
    TEST_ASSERT(cut == NULL);
    TEST_EQ_INT(store_run_restrict(run, T0 + 1230, T0 + 1400, &cut), STORE_OK);
    uint32_t nstrings = run->nstrings, nlaunches = run->nlaunches, nstreams = run->nstreams;
    uint32_t ndevices = run->ndevices; /* pid 22's context has no device row: one of its own */
    store_idx stream2 = STORE_NONE;
    for (uint64_t i = 0; i < run->nkernels; i++)
        if (run->kernels[i].start == T0 + 1200)
            stream2 = run->kernels[i].stream;
    store_run_free(run); /* the copy owns what it holds */
    TEST_EQ_INT(cut->nprocesses, 2);
    TEST_EQ_INT(cut->processes[0].pid, 11);
    TEST_EQ_STR(cut->processes[0].file, a);
    TEST_EQ_STR(cut->processes[0].argv, "app --x");
    TEST_EQ_INT(cut->processes[0].records_dropped, 3);
    TEST_EQ_INT(cut->processes[0].complete, 1);
    TEST_EQ_STR(pmeta(&cut->processes[0], "driver_version"), "13000");
    TEST_EQ_INT(cut->nstrings, nstrings);
    TEST_EQ_INT(cut->nlaunches, nlaunches);
    TEST_EQ_INT(cut->nstreams, nstreams);
    TEST_EQ_INT(cut->ndevices, ndevices);
    TEST_EQ_STR(cut->devices[0].uuid, "0123456789abcdef0123456789abcdef");
    /* [1200, 1250) straddles t0 and is kept whole; [1300, 1350) inside; [1400, ...) is not */
    TEST_EQ_INT(cut->nkernels, 2);
    TEST_EQ_INT(cut->kernels[0].start, T0 + 1200);
    TEST_EQ_INT(cut->kernels[0].end, T0 + 1250);
    TEST_EQ_INT(cut->kernels[0].stream, stream2);
    TEST_EQ_STR(cut->strings[cut->launches[cut->kernels[0].launch].name].text, mangled);
    TEST_EQ_INT(cut->kernels[1].start, T0 + 1300);
    TEST_EQ_INT(cut->ncopies, 0); /* [500, 700) and [800, 850) */
    TEST_EQ_INT(cut->napis, 0);   /* [400, 450) */
    TEST_EQ_INT(cut->nranges, 1); /* "epoch 1" [300, 5000) spans it */
    TEST_EQ_INT(cut->t_begin, T0 + 300);
    TEST_EQ_INT(cut->t_end, T0 + 5000);
    TEST_EQ_INT(cut->ncaptures, 1); /* [-5, 1500) of pid 22; [3000, 5500) is after */
    if (check_capture(cut, 0, 22, T0 - 5, T0 + 1500, NULL, "start", "duration"))
        return 1;
    /* the lookup tables were rebuilt: a context already there is found, not added */
    store_idx ctx = cut->streams[cut->kernels[0].stream].context;
    TEST_EQ_INT(store_run_context(cut, cut->contexts[ctx].process, cut->contexts[ctx].context_id,
                                  cut->contexts[ctx].device, 0),
                ctx);
    TEST_EQ_INT(store_run_intern(cut, mangled), cut->launches[cut->kernels[0].launch].name);
    TEST_EQ_INT(store_run_save(cut, s, "test"), STORE_OK);
    store_run_free(cut);
    run = store_run_new();
    TEST_EQ_INT(store_run_load(run, s), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 2);
    TEST_EQ_INT(run->ncaptures, 1);
    store_run_free(run);
    /* a record of no length counts where it starts: at t0 yes, at t1 no */
    run = store_run_new();
    store_process_info pi = {.pid = 1};
    store_idx p = store_run_add_process(run, &pi, "x.json");
    store_idx st = store_run_stream(run, store_run_context(run, p, 1, STORE_NONE, 1), 7);
    store_launch l = {store_run_intern(run, "k"), {1, 1, 1}, {1, 1, 1}, 0, 0, 0};
    store_idx li = store_run_launch(run, &l);
    int64_t at[3] = {100, 200, 150};
    for (int i = 0; i < 3; i++) {
        store_kernel k = {at[i], at[i], st, li, (uint32_t)i, 0};
        TEST_EQ_INT(store_run_add_kernel(run, &k), STORE_OK);
    }
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(store_run_restrict(run, 100, 200, &cut), STORE_OK);
    TEST_EQ_INT(cut->nkernels, 2);
    TEST_EQ_INT(cut->kernels[0].start, 100);
    TEST_EQ_INT(cut->kernels[1].start, 150);
    store_run_free(cut);
    store_run_free(run);
    return 0;
}

/* Read-only readers (store_set_read_only, tlview serve --follow): a killed writer's WAL is read
 * (its committed batches are in the run) but left exactly as it was, where a read-write reader
 * folds it back into the file. */
int test_store_read_only_leaves_wal(void)
{
    const char *path = path_in("ro.db");
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
        write_many(path, 10000, 1000, 3);
        _exit(0); /* not reached: the writer kills itself */
    }
    int status;
    TEST_EQ_INT(waitpid(pid, &status, 0), pid);
    TEST_ASSERT(WIFSIGNALED(status));
    struct stat before, after;
    TEST_EQ_INT(stat(wal, &before), 0);
    TEST_ASSERT(before.st_size > 0);
    int64_t db_size = file_size(path);
    store_set_read_only(1);
    for (int i = 0; i < 2; i++) { /* twice: nothing the first read did changes the second */
        store_run *run = store_run_new();
        int lrc = store_run_load(run, path);
        if (lrc)
            fprintf(stderr, "%s\n", store_run_errmsg(run));
        TEST_EQ_INT(lrc, STORE_OK);
        TEST_EQ_INT(store_run_finish(run), STORE_OK);
        TEST_EQ_INT(run->nkernels, 3000);
        store_run_free(run);
        TEST_EQ_INT(store_probe(path), 1);
        TEST_EQ_INT(stat(wal, &after), 0);
        TEST_EQ_INT(after.st_size, before.st_size);
        TEST_EQ_INT(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
        TEST_EQ_INT(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
        TEST_EQ_INT(file_size(path), db_size);
    }
    store_set_read_only(0);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 3000);
    store_run_free(run);
    /* read-write, the last connection checkpointed the WAL into the file and removed it */
    TEST_ASSERT(stat(wal, &after) != 0 || after.st_size == 0);
    TEST_ASSERT(file_size(path) > db_size);
    return 0;
}

/* A reader following a file while its writer appends (tlview serve --follow reads this way):
 * every read is a consistent snapshot of whole committed batches, the counts only grow, and the
 * writer's commits are never held up by the reads. */
int test_store_read_while_writing(void)
{
    const char *path = path_in("live.db");
    int ready[2], done[2];
    TEST_EQ_INT(pipe(ready), 0);
    TEST_EQ_INT(pipe(done), 0);
    fflush(NULL);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) { /* the writer: 40 batches of 500 kernels, 20 ms apart */
        close(ready[0]);
        close(done[0]);
        store_writer *w;
        int64_t proc, worst = 0;
        store_process_info pi = {88, 1, "h", "/bin/w", "w", NULL, "libcollect", T0};
        if (store_writer_open(path, STORE_CLOCK_CUPTI, T0, &w) ||
            store_writer_process(w, &pi, &proc) ||
            store_writer_calibration(w, proc, "start", T0, T0, 0))
            _exit(2);
        if (write(ready[1], "r", 1) != 1)
            _exit(3);
        int64_t t = T0;
        for (int b = 0; b < 40; b++) {
            struct timespec a, z;
            clock_gettime(CLOCK_MONOTONIC, &a);
            if (store_writer_begin(w))
                _exit(4);
            for (int i = 0; i < 500; i++, t += 1000) {
                store_kernel_info k = {.start = t,
                                       .end = t + 500,
                                       .context_id = 1,
                                       .correlation_id = (uint32_t)(b * 500 + i),
                                       .name = mangled};
                if (store_writer_kernel(w, proc, &k))
                    _exit(5);
            }
            if (store_writer_commit(w))
                _exit(6);
            clock_gettime(CLOCK_MONOTONIC, &z);
            int64_t ns = (z.tv_sec - a.tv_sec) * 1000000000LL + (z.tv_nsec - a.tv_nsec);
            worst = ns > worst ? ns : worst;
            usleep(20000);
        }
        store_writer_process_end(w, proc, t, 1, NULL);
        store_writer_close(w);
        if (write(done[1], &worst, sizeof worst) != sizeof worst)
            _exit(7);
        _exit(0);
    }
    close(ready[1]);
    close(done[1]);
    char c;
    TEST_EQ_INT(read(ready[0], &c, 1), 1);
    store_set_read_only(1);
    uint64_t last = 0;
    int reads = 0, status;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        store_run *run = store_run_new();
        int lrc = store_run_load(run, path);
        if (lrc)
            fprintf(stderr, "%s\n", store_run_errmsg(run));
        TEST_EQ_INT(lrc, STORE_OK);
        TEST_EQ_INT(store_run_finish(run), STORE_OK);
        TEST_EQ_INT(run->nkernels % 500, 0); /* whole batches only */
        TEST_ASSERT(run->nkernels >= last);
        last = run->nkernels;
        reads++;
        store_run_free(run);
    }
    store_set_read_only(0);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 0);
    int64_t worst = 0;
    TEST_EQ_INT(read(done[0], &worst, sizeof worst), (long long)sizeof worst);
    fprintf(stderr, "%d reads while writing, the last saw %llu kernels; slowest commit %.2f ms\n",
            reads, (unsigned long long)last, worst / 1e6);
    TEST_ASSERT(reads >= 5);
    TEST_ASSERT(worst < 500000000); /* a reader never holds a commit up (they take ~1 ms) */
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), STORE_OK);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    TEST_EQ_INT(run->nkernels, 20000);
    store_run_free(run);
    return 0;
}

/* store_hint_huge() is only advice: a block it was given keeps its bytes when written, grown by
 * realloc (moved by remapping, the advice with it) and freed; small blocks and NULL are left as
 * they are. store_sort_hi32() sorts by the upper half, ties in their order. */
int test_store_huge_and_keys(void)
{
    size_t n = ((size_t)40 << 20) / sizeof(uint64_t), m = 2 * n, bad = 0;
    uint64_t *a = malloc(n * sizeof *a);
    TEST_ASSERT(a);
    store_hint_huge(a);
    store_hint_huge(NULL);
    for (size_t i = 0; i < n; i++)
        a[i] = i * 2654435761u;
    uint64_t *b = realloc(a, m * sizeof *b);
    TEST_ASSERT(b);
    store_hint_huge(b);
    for (size_t i = n; i < m; i++)
        b[i] = i * 2654435761u;
    for (size_t i = 0; i < m; i++)
        bad += b[i] != i * 2654435761u;
    TEST_EQ_INT(bad, 0);
    free(b);
    char *s = malloc(100);
    TEST_ASSERT(s);
    strcpy(s, "small");
    store_hint_huge(s);
    TEST_EQ_STR(s, "small");
    free(s);

    uint64_t k[] = {5ull << 32 | 0, 1ull << 32 | 1,          5ull << 32 | 2, 0x1234ull << 32 | 3,
                    1ull << 32 | 4, 0xffffffffull << 32 | 5, 0ull << 32 | 6};
    uint64_t want[] = {0ull << 32 | 6, 1ull << 32 | 1,      1ull << 32 | 4,         5ull << 32 | 0,
                       5ull << 32 | 2, 0x1234ull << 32 | 3, 0xffffffffull << 32 | 5};
    uint64_t tmp[7];
    store_sort_hi32(k, tmp, 7);
    for (int i = 0; i < 7; i++)
        TEST_EQ_INT((long long)k[i], (long long)want[i]);
    store_sort_hi32(k, tmp, 0); /* nothing to read */
    return 0;
}

/* 2026-12-07 (issue 28): files in folders others may write. Reading takes regular files only and
 * never blocks on a FIFO (not even one SQLite opens: the check is made on its own descriptor, so
 * a FIFO swapped in after a check is refused too); writing never follows a link nor reuses a name;
 * folders are checked for owner and mode. */
int test_store_fs_guards(void)
{
    char dir[4200], fifo[4300], reg[4300], link[4300], err[8192];
    snprintf(dir, sizeof dir, "%s/fs", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0700), 0);
    snprintf(fifo, sizeof fifo, "%s/x.db", dir);
    snprintf(reg, sizeof reg, "%s/r.db", dir);
    snprintf(link, sizeof link, "%s/l.db", dir);
    TEST_EQ_INT(mkfifo(fifo, 0600), 0);
    TEST_EQ_INT(write_sample(reg, 1, 0, 2), STORE_OK);
    alarm(20); /* a hang fails the case */

    char want[8192];
    TEST_EQ_INT(store_fs_open_read(fifo, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", fifo);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(store_fs_open_read(dir, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file (a folder)", dir);
    TEST_EQ_STR(err, want);
    int fd = store_fs_open_read(reg, err, sizeof err);
    TEST_ASSERT(fd >= 0);
    TEST_EQ_INT(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* blocking again */
    close(fd);

    /* SQLite's own open of a FIFO (read-only, as serve --follow reads): refused, not hung */
    TEST_EQ_INT(store_fs_harden_sqlite(), 0);
    TEST_EQ_INT(store_fs_harden_sqlite(), 0); /* twice is once */
    sqlite3 *db = NULL;
    TEST_ASSERT(sqlite3_open_v2(fifo, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
                sqlite3_exec(db, "SELECT * FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK);
    sqlite3_close(db);
    store_set_read_only(1);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, fifo), STORE_EFORMAT);
    TEST_EQ_INT(store_run_load(run, reg), STORE_OK);
    store_run_free(run);
    store_set_read_only(0);
    /* a journal SQLite creates is never written through a link planted in its name */
    char journal[4400], victim[4300];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *v = fopen(victim, "w");
    TEST_ASSERT(v && fputs("precious", v) >= 0);
    fclose(v);
    snprintf(journal, sizeof journal, "%s-journal", reg);
    TEST_EQ_INT(symlink(victim, journal), 0);
    TEST_EQ_INT(sqlite3_open_v2(reg, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    TEST_ASSERT(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL) !=
                SQLITE_OK);
    sqlite3_close(db);
    struct stat st;
    TEST_EQ_INT(stat(victim, &st), 0);
    TEST_EQ_INT(st.st_size, 8);

    /* writing: a new name only, never through a link (dangling or not) */
    TEST_EQ_INT(symlink(victim, link), 0);
    TEST_EQ_INT(store_fs_create(link, 0644, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: a symbolic link is in the way (nothing written through it)",
             link);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(store_fs_create(reg, 0644, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "cannot create: File exists"));
    TEST_EQ_INT(store_fs_open_append(link, 0644, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "(a symbolic link: nothing written through it)"));
    TEST_EQ_INT(store_fs_open_append(fifo, 0644, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", fifo);
    TEST_EQ_STR(err, want);
    char made[4300];
    snprintf(made, sizeof made, "%s/new.log", dir);
    fd = store_fs_open_append(made, 0644, err, sizeof err);
    TEST_ASSERT(fd >= 0);
    close(fd);
    TEST_EQ_INT(stat(victim, &st), 0);
    TEST_EQ_INT(st.st_size, 8);

    /* folders: a link, or one others may write, is refused */
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_PRIVATE, err, sizeof err), 0);
    snprintf(link, sizeof link, "%s/fs-link", test_tmpdir());
    TEST_EQ_INT(symlink(dir, link), 0);
    TEST_EQ_INT(store_fs_check_dir(link, STORE_FS_SHARED, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a folder (a symbolic link)", link);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(chmod(dir, 0750), 0);
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_WRITABLE, err, sizeof err), 0);
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_PRIVATE, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: other users may look into the folder (mode 0750)", dir);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(chmod(dir, 0770), 0);
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_SHARED, err, sizeof err), 0);
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_WRITABLE, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: other users may write into the folder (mode 0770)", dir);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(chmod(dir, 01777), 0);
    TEST_EQ_INT(store_fs_check_dir(dir, STORE_FS_SHARED, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: every user may write into the folder (mode 1777)", dir);
    TEST_EQ_STR(err, want);

    /* what a folder may hold for a reader: files of this user or of the folder's owner */
    TEST_EQ_INT(store_fs_trusted(reg, -1), 1);
    TEST_EQ_INT(store_fs_trusted(fifo, -1), 0);
    TEST_EQ_INT(store_fs_trusted(made, -1), 1);
    if (geteuid() == 0) {
        TEST_EQ_INT(lchown(made, 65534, 65534), 0);
        TEST_EQ_INT(store_fs_trusted(made, -1), 0);
        TEST_EQ_INT(store_fs_trusted(made, 65534), 1); /* the folder's owner made it */
        snprintf(link, sizeof link, "%s/theirs.db", dir);
        TEST_EQ_INT(symlink(reg, link), 0);
        TEST_EQ_INT(lchown(link, 65534, 65534), 0);
        TEST_EQ_INT(store_fs_trusted(link, 0), 0); /* their link to our file */
    }
    alarm(0);
    return 0;
}

/* ---------------------------------------------------------------- the cache (cache_run.c) */

/* A run of two sample files, finished, for the cache cases; NULL on failure. */
static store_run *cache_sample(void)
{
    char *a = path_in("cache_a.db"), *b = path_in("cache_b.db");
    store_run *run = NULL;
    if (write_sample(a, 100, 0, 9) == 0 && write_sample(b, 200, 50, 5) == 0 &&
        (run = store_run_new()) &&
        (store_run_load(run, a) || store_run_load(run, b) || store_run_finish(run))) {
        store_run_free(run);
        run = NULL;
    }
    return run;
}

/* The cache's folder for these cases (made, this user's, mode 0700). */
static const char *cache_dir(void)
{
    static char dir[4200];
    snprintf(dir, sizeof dir, "%s/cachedir", test_tmpdir());
    mkdir(dir, 0700);
    return dir;
}

/* test_store_cache_roundtrip: a run saved to the cache reads back the same, array by array and
 * string by string, with its lookups working (a builder call finds what is there), and a builder
 * call on it copies its records out of the mapping before changing them. */
int test_store_cache_roundtrip(void)
{
    store_run *run = cache_sample(), *back = NULL;
    TEST_ASSERT(run);
    char err[1024] = "", path[4300];
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/r.run", cache_dir());
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), 0);
    TEST_EQ_INT(back->nprocesses, run->nprocesses);
    TEST_EQ_INT(back->nkernels, run->nkernels);
    TEST_EQ_INT(back->ncopies, run->ncopies);
    TEST_EQ_INT(back->napis, run->napis);
    TEST_EQ_INT(back->nranges, run->nranges);
    TEST_EQ_INT(back->nstrings, run->nstrings);
    TEST_EQ_INT(back->ncontexts, run->ncontexts);
    TEST_EQ_INT(back->t_begin, run->t_begin);
    TEST_EQ_INT(back->t_end, run->t_end);
    TEST_ASSERT(!memcmp(back->kernels, run->kernels, run->nkernels * sizeof *run->kernels));
    TEST_ASSERT(!memcmp(back->apis, run->apis, run->napis * sizeof *run->apis));
    TEST_ASSERT(!memcmp(back->contexts, run->contexts, run->ncontexts * sizeof *run->contexts));
    for (uint32_t i = 0; i < run->nstrings; i++) {
        TEST_EQ_STR(back->strings[i].text, run->strings[i].text);
        TEST_EQ_STR(back->strings[i].demangled, run->strings[i].demangled);
    }
    for (uint32_t i = 0; i < run->nprocesses; i++) {
        TEST_EQ_STR(back->processes[i].file, run->processes[i].file);
        TEST_EQ_STR(back->processes[i].host, run->processes[i].host);
        TEST_EQ_INT(back->processes[i].nmeta, run->processes[i].nmeta);
        TEST_EQ_STR(store_process_meta_get(&back->processes[i], "driver_version"), "13000");
        TEST_EQ_INT(back->processes[i].clock_offset, run->processes[i].clock_offset);
    }
    TEST_EQ_STR(back->devices[0].uuid, run->devices[0].uuid);
    TEST_EQ_INT(store_run_device_ordinal(back, 1, 0), store_run_device_ordinal(run, 1, 0));
    TEST_EQ_INT(store_run_intern(back, mangled), store_run_intern(run, mangled)); /* found */
    TEST_EQ_INT(back->nstrings, run->nstrings);
    /* a builder call: the records leave the mapping, and the run goes on */
    store_kernel k = back->kernels[0];
    k.start = k.end = back->t_end + 10;
    TEST_EQ_INT(store_run_add_kernel(back, &k), 0);
    TEST_EQ_INT(store_run_finish(back), 0);
    TEST_EQ_INT(back->nkernels, run->nkernels + 1);
    TEST_EQ_INT(back->kernels[back->nkernels - 1].start, k.start);
    TEST_EQ_INT(back->apis[0].start, run->apis[0].start);
    store_run_free(back);
    store_run_free(run);
    return 0;
}

/* test_store_cache_stamp: a cache is written with its stamp, which vouches for that very file:
 * its checksums are skipped while it is unchanged, and checked again once a byte of it was
 * written (its change time moved), without the stamp, with a stamp that is a link, or with another
 * file's stamp (a copy of the cache with its times kept). */
int test_store_cache_stamp(void)
{
    store_run *run = cache_sample(), *back = NULL;
    TEST_ASSERT(run);
    char err[1024] = "", path[4300], stamp[4300], other[4300], ostamp[4300], cmd[24000];
    snprintf(path, sizeof path, "%s/s.run", cache_dir());
    snprintf(stamp, sizeof stamp, "%s/.s.run.ok", cache_dir());
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "s.run", "key 1", err, sizeof err), 0);
    struct stat st;
    TEST_EQ_INT(lstat(stamp, &st), 0);
    TEST_ASSERT(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid());
    store_cache *c = NULL;
    TEST_EQ_INT(store_cache_open(path, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 1);
    store_cache_close(c);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), 0);
    store_run_free(back);
    back = NULL;
    /* another file with the same bytes and times, and a copy of the stamp: not vouched */
    snprintf(other, sizeof other, "%s/o.run", cache_dir());
    snprintf(ostamp, sizeof ostamp, "%s/.o.run.ok", cache_dir());
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s' && cp -p '%s' '%s'", path, other, stamp, ostamp);
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(store_cache_open(other, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 0);
    store_cache_close(c);
    /* a kernel's time written in place (the last byte of the file: the last section's) */
    TEST_EQ_INT(stat(path, &st), 0);
    int fd = open(path, O_RDWR);
    TEST_ASSERT(fd >= 0);
    unsigned char b;
    TEST_EQ_INT(pread(fd, &b, 1, st.st_size - 1), 1);
    b ^= 0x10;
    TEST_EQ_INT(pwrite(fd, &b, 1, st.st_size - 1), 1);
    close(fd);
    TEST_EQ_INT(store_cache_open(path, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 0);
    store_cache_close(c);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "its checksum does not hold") != NULL);
    TEST_ASSERT(!back);
    /* written again: vouched; its stamp removed, or a link to a good stamp: checked in full */
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "s.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_cache_open(path, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 1);
    store_cache_close(c);
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s.keep' && rm '%s' && ln -s '%s.keep' '%s'", stamp,
             stamp, stamp, stamp, stamp);
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(store_cache_open(path, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 0);
    store_cache_close(c);
    TEST_EQ_INT(unlink(stamp), 0);
    TEST_EQ_INT(store_cache_open(path, "key 1", &c, err, sizeof err), 0);
    TEST_EQ_INT(store_cache_vouched(c), 0);
    store_cache_close(c);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), 0);
    TEST_EQ_INT(back->nkernels, run->nkernels);
    store_run_free(back);
    store_run_free(run);
    return 0;
}

/* Writes a one-section cache "<dir>/<name>" under the key of input `input` (NULL: under `key`),
 * with its stamp's times set to `used` seconds (0: left as written). 0 or -1. */
static int prune_put(const char *dir, const char *name, const char *input, const char *key,
                     time_t used)
{
    char *k = NULL, err[1024], stamp[4400];
    static const char body[3000];
    if (input && store_cache_key(&input, 1, "test", &k) != 0)
        return -1;
    store_cache_part part = {1, 1, body, sizeof body};
    int rc = store_cache_write(dir, name, k ? k : key, &part, 1, err, sizeof err);
    free(k);
    snprintf(stamp, sizeof stamp, "%s/.%s.ok", dir, name);
    struct timespec ts[2] = {{used, 0}, {used, 0}};
    if (rc == 0 && used && utimensat(AT_FDCWD, stamp, ts, AT_SYMLINK_NOFOLLOW) != 0)
        rc = -1;
    return rc;
}

/* 1 when "<dir>/<name>" exists (as a link too). */
static int prune_has(const char *dir, const char *name)
{
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

/* test_store_cache_prune: a cache folder is bounded. The caches no reader can match again go
 * first: one whose input was removed, one whose input was written since, one with a broken header;
 * then the least recently used beyond the size given (a use, store_cache_open(), makes it recent
 * again), never those whose names begin as the one to keep. A cache naming a relative path,
 * anything that is not a tlview cache (a text file, a link to a cache) and the kept cache's stamp
 * stay; a stamp whose cache is gone goes. */
int test_store_cache_prune(void)
{
    char dir[4200], in1[4200], in2[4200], in3[4200], err[1024], p[4400];
    snprintf(dir, sizeof dir, "%s/prunedir", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0700), 0);
    snprintf(in1, sizeof in1, "%s/in1.db", test_tmpdir());
    snprintf(in2, sizeof in2, "%s/in2.db", test_tmpdir());
    snprintf(in3, sizeof in3, "%s/in3.db", test_tmpdir());
    const char *ins[] = {in1, in2, in3};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(ins[i], "w");
        TEST_ASSERT(f);
        fputs("input", f);
        fclose(f);
    }
    TEST_EQ_INT(prune_put(dir, "live.run", in1, NULL, 5000), 0);
    TEST_EQ_INT(prune_put(dir, "gone.run", in2, NULL, 6000), 0);
    TEST_EQ_INT(prune_put(dir, "changed.run", in3, NULL, 6000), 0);
    TEST_EQ_INT(
        prune_put(dir, "rel.run", NULL, "file 1:2 3 4.000000005 6.000000007 rel/in.db\n", 4000), 0);
    TEST_EQ_INT(prune_put(dir, "broken.run", in1, NULL, 6000), 0);
    TEST_EQ_INT(prune_put(dir, "a.run", in1, NULL, 1000), 0);
    TEST_EQ_INT(prune_put(dir, "b.run", in1, NULL, 3000), 0);
    TEST_EQ_INT(prune_put(dir, "c.run", in1, NULL, 2000), 0);
    snprintf(p, sizeof p, "%s/broken.run", dir); /* a byte of its key changed */
    int fd = open(p, O_RDWR);
    TEST_ASSERT(fd >= 0);
    TEST_EQ_INT(pwrite(fd, "X", 1, 48 + 32 + 2), 1);
    close(fd);
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    FILE *f = fopen(p, "w");
    TEST_ASSERT(f);
    fputs("TLVCACH not quite: someone's notes\n", f);
    fclose(f);
    char link[4400];
    snprintf(link, sizeof link, "%s/link.run", dir);
    TEST_EQ_INT(symlink("live.run", link), 0);
    snprintf(p, sizeof p, "%s/.ghost.run.ok", dir);
    f = fopen(p, "w");
    TEST_ASSERT(f);
    fclose(f);
    TEST_EQ_INT(unlink(in2), 0);
    f = fopen(in3, "a");
    TEST_ASSERT(f);
    fputs("more", f);
    fclose(f);

    /* no bound: only what can never be read again goes */
    store_cache_pruned r;
    TEST_EQ_INT(store_cache_prune(dir, UINT64_MAX, NULL, &r), 0);
    TEST_EQ_INT(r.dead, 3);
    TEST_EQ_INT(r.evicted, 0);
    TEST_ASSERT(!prune_has(dir, "gone.run") && !prune_has(dir, ".gone.run.ok"));
    TEST_ASSERT(!prune_has(dir, "changed.run") && !prune_has(dir, "broken.run"));
    TEST_ASSERT(!prune_has(dir, ".ghost.run.ok"));
    const char *left[] = {"live.run", ".live.run.ok", "rel.run",   "a.run",
                          "b.run",    "c.run",        "notes.txt", "link.run"};
    for (size_t i = 0; i < sizeof left / sizeof *left; i++)
        TEST_ASSERT(prune_has(dir, left[i]));
    uint64_t one = r.kept_bytes / 5; /* five caches of the same size */
    TEST_EQ_INT(r.kept_bytes, 5 * one);

    /* a (1000) is used: c (2000) is now the least recently used; one cache too many goes */
    store_cache *c = NULL;
    char *key = NULL;
    snprintf(p, sizeof p, "%s/a.run", dir);
    TEST_EQ_INT(store_cache_key((const char *const *)&(const char *){in1}, 1, "test", &key), 0);
    TEST_EQ_INT(store_cache_open(p, key, &c, err, sizeof err), 0);
    store_cache_close(c);
    free(key);
    TEST_EQ_INT(store_cache_prune(dir, 4 * one, NULL, &r), 0);
    TEST_EQ_INT(r.dead, 0);
    TEST_EQ_INT(r.evicted, 1);
    TEST_EQ_INT(r.freed_bytes, one);
    TEST_EQ_INT(r.kept_bytes, 4 * one);
    TEST_ASSERT(!prune_has(dir, "c.run") && prune_has(dir, "a.run") && prune_has(dir, "b.run"));

    /* nothing may stay but those kept (names beginning "rel"), though the oldest */
    TEST_EQ_INT(store_cache_prune(dir, 0, "rel", &r), 0);
    TEST_EQ_INT(r.evicted, 3);
    TEST_EQ_INT(r.kept_bytes, one);
    TEST_ASSERT(prune_has(dir, "rel.run") && prune_has(dir, ".rel.run.ok"));
    TEST_ASSERT(!prune_has(dir, "live.run") && !prune_has(dir, "a.run"));
    TEST_ASSERT(prune_has(dir, "notes.txt") && prune_has(dir, "link.run"));

    /* a folder others may write is not pruned at all */
    TEST_EQ_INT(chmod(dir, 0777), 0);
    TEST_EQ_INT(store_cache_prune(dir, 0, NULL, &r), -1);
    TEST_ASSERT(prune_has(dir, "rel.run"));
    return 0;
}

/* test_store_cache_free: a cache is only a cache: a write that would leave its disk less free than
 * TLVIEW_CACHE_FREE (or, unset, the smaller of 1 GiB and 5% of the disk) is refused with the
 * reason, and leaves nothing behind; sizes read as TLVIEW_CACHE_MAX's. */
int test_store_cache_free(void)
{
    uint64_t v = 0;
    TEST_EQ_INT(store_parse_size("20G", &v), 0);
    TEST_EQ_INT(v, (uint64_t)20 << 30);
    TEST_EQ_INT(store_parse_size("500m", &v), 0);
    TEST_EQ_INT(v, (uint64_t)500 << 20);
    TEST_EQ_INT(store_parse_size("4096K", &v), 0);
    TEST_EQ_INT(v, 4096u << 10);
    TEST_EQ_INT(store_parse_size("12", &v), 0);
    TEST_EQ_INT(v, 12);
    TEST_EQ_INT(store_parse_size("0", &v), 0);
    TEST_EQ_INT(v, 0);
    TEST_EQ_INT(store_parse_size("16777216T", &v), 0); /* 2^64: saturated */
    TEST_ASSERT(v == UINT64_MAX);
    const char *bad[] = {NULL, "", "-1", "+1", "1.5G", "G", "10GB", "7 M", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        TEST_EQ_INT(store_parse_size(bad[i], &v), -1);

    store_run *run = cache_sample(), *back = NULL;
    TEST_ASSERT(run);
    char err[1024] = "", path[4300];
    snprintf(path, sizeof path, "%s/r.run", cache_dir());
    setenv("TLVIEW_CACHE_FREE", "1000000T", 1);
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "r.run: its ") && strstr(err, "TLVIEW_CACHE_FREE"));
    struct stat st;
    TEST_ASSERT(stat(path, &st) != 0);
    DIR *d = opendir(cache_dir());
    TEST_ASSERT(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += e->d_name[0] != '.' || strstr(e->d_name, ".tmp") != NULL;
    closedir(d);
    TEST_EQ_INT(files, 0); /* no cache, no temporary file */
    setenv("TLVIEW_CACHE_FREE", "0", 1);
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), 0);
    store_run_free(back);
    /* unset: the default, against what the disk has free now */
    unsetenv("TLVIEW_CACHE_FREE");
    struct statvfs fs;
    TEST_EQ_INT(statvfs(cache_dir(), &fs), 0);
    double avail = (double)fs.f_bavail * fs.f_frsize, size = (double)fs.f_blocks * fs.f_frsize;
    double keep = size * 0.05 < (double)(1 << 30) ? size * 0.05 : (double)(1 << 30);
    int rc = store_run_cache_save(run, cache_dir(), "r.run", "key 2", err, sizeof err);
    if (avail > keep + (64 << 20))
        TEST_EQ_INT(rc, 0);
    else if (avail < keep)
        TEST_EQ_INT(rc, -1);
    store_run_free(run);
    return 0;
}

/* test_store_cache_refused: a cache is not read under another key, cut anywhere, or when an index
 * it holds points beyond its arrays although its checksums hold (a file written so); and never
 * through a link. Each refusal says why. */
int test_store_cache_refused(void)
{
    store_run *run = cache_sample(), *back = NULL;
    TEST_ASSERT(run);
    char err[1024] = "", path[4300], cut[4300];
    snprintf(path, sizeof path, "%s/r.run", cache_dir());
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 2", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "made from other inputs") != NULL);
    TEST_ASSERT(!back);
    struct stat st;
    TEST_EQ_INT(stat(path, &st), 0);
    snprintf(cut, sizeof cut, "%s/cut.run", cache_dir());
    for (off_t n = 0; n < st.st_size; n += n < 256 ? 7 : 509) {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "head -c %lld '%s' >'%s'", (long long)n, path, cut);
        TEST_EQ_INT(system(cmd), 0);
        chmod(cut, 0600);
        TEST_EQ_INT(store_run_cache_load(cut, "key 1", &back, err, sizeof err), -1);
        TEST_ASSERT(!back);
    }
    /* indexes out of bounds, with good checksums: each array that holds one */
    store_kernel k0 = run->kernels[0];
    run->kernels[0].stream = run->nstreams; /* one past the last */
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "section 10: a value out of bounds") != NULL);
    run->kernels[0] = k0;
    run->kernels[1].start = run->kernels[0].start - 1; /* out of order */
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "section 10: a value out of bounds") != NULL);
    run->kernels[1].start = run->kernels[0].start;
    store_idx name = run->apis[0].name;
    run->apis[0].name = run->nstrings;
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "section 12: a value out of bounds") != NULL);
    run->apis[0].name = name;
    uint32_t ctxp = run->contexts[0].process;
    run->contexts[0].process = run->nprocesses;
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "section 6: a value out of bounds") != NULL);
    run->contexts[0].process = ctxp;
    TEST_EQ_INT(store_run_cache_save(run, cache_dir(), "r.run", "key 1", err, sizeof err), 0);
    TEST_EQ_INT(store_run_cache_load(path, "key 1", &back, err, sizeof err), 0);
    store_run_free(back);
    back = NULL;
    /* a link to that good cache */
    snprintf(cut, sizeof cut, "%s/link.run", cache_dir());
    TEST_EQ_INT(symlink(path, cut), 0);
    TEST_EQ_INT(store_run_cache_load(cut, "key 1", &back, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "a symbolic link: not followed") != NULL);
    /* a folder others may write is no cache folder */
    char dir[4300];
    TEST_EQ_INT(store_cache_dir(test_tmpdir(), 1, dir, sizeof dir), 0);
    TEST_EQ_INT(chmod(dir, 0777), 0);
    TEST_EQ_INT(store_cache_dir(test_tmpdir(), 1, dir, sizeof dir), -1);
    store_run_free(run);
    return 0;
}
