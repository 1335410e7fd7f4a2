/* bench_job: what indexing a job costs (bench/bench_job.md). On the files of a job folder (e.g.
 * bench_job_gen's), times, in one process:
 *   1. the two ways to size each file's kernel table, over every file: SELECT count(*) (reads
 *      every page of the table) and the rowid span (two b-tree descents);
 *   2. job_index_build() (metadata of every file on one thread per CPU, the groups), and its
 *      two halves apart: every file's record made on one thread (what the threads or MPI ranks
 *      share), then the records added to the index's run (what rank 0 does alone);
 *   3. a plain SQLite scan of every kernel row of every file, one thread (the floor any reader
 *      of the same rows pays; opened as the loader opens);
 * and prints the groups' sizes (the largest group is what the report's memory should follow).
 *   bench_job DIR */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "job_int.h" /* the index's two halves, timed apart: records, then their replay */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs `sql` on every file, summing its first integer column over the rows (all: every column
 * of every row is read, and 1 counted per row); -1 on failure. */
static int64_t over_files(const job_index *idx, const char *sql, int all)
{
    int64_t sum = 0;
    for (uint32_t f = 0; f < job_index_nfiles(idx); f++) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_open_v2(job_index_file(idx, f)->path, &db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "bench_job: %s: %s\n", job_index_file(idx, f)->path,
                    sqlite3_errmsg(db));
            sqlite3_close(db);
            return -1;
        }
        int ncol = sqlite3_column_count(st);
        int64_t sink = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (!all) {
                sum += sqlite3_column_int64(st, 0);
                continue;
            }
            for (int c = 0; c < ncol; c++)
                sink += sqlite3_column_int64(st, c);
            sum++;
        }
        if (sink == 42) /* keeps the reads */
            fputc(' ', stderr);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_job DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    job_index *idx = NULL;
    double w0 = now(), c0 = cpu();
    int rc = job_index_build(&dir, 1, 0, &idx);
    double index_wall = now() - w0, index_cpu = cpu() - c0;
    if (rc) {
        fprintf(stderr, "bench_job: %s\n", job_index_errmsg(idx));
        job_index_free(idx);
        return 1;
    }
    /* warm: the index read every file once; the sizings and the scan below find them cached */
    w0 = now();
    int64_t by_count = over_files(idx, "SELECT count(*) FROM kernel", 0);
    double count_wall = now() - w0;
    w0 = now();
    int64_t by_rowid = over_files(idx,
                                  "SELECT (SELECT max(rowid) FROM kernel) -"
                                  " (SELECT min(rowid) FROM kernel) + 1",
                                  0);
    double rowid_wall = now() - w0;
    w0 = now();
    c0 = cpu();
    int64_t rows = over_files(idx, "SELECT start, dur, launch_id, correlation_id FROM kernel", 1);
    double scan_wall = now() - w0, scan_cpu = cpu() - c0;
    /* once more, now that the files are surely in the page cache */
    w0 = now();
    c0 = cpu();
    job_index *again = NULL;
    job_index_build(&dir, 1, 0, &again);
    double index2_wall = now() - w0, index2_cpu = cpu() - c0;
    job_index_free(again);
    /* the two halves: records on one thread, then the serial replay */
    job_index *half = NULL;
    job_wire w = {0};
    job_index_start(&dir, 1, 0, &half);
    w0 = now();
    c0 = cpu();
    for (uint32_t f = 0; f < job_index_nfiles(half); f++)
        job_record_file(&w, job_index_file(half, f)->path, job_index_from_folder(half, f));
    double rec_wall = now() - w0, rec_cpu = cpu() - c0;
    w0 = now();
    c0 = cpu();
    job_reader rd = {w.p, w.p + w.n, 0};
    for (uint32_t f = 0; f < job_index_nfiles(half); f++)
        job_index_add_record(half, f, &rd);
    job_index_finish(half);
    double replay_wall = now() - w0, replay_cpu = cpu() - c0;
    size_t record_bytes = w.n;
    job_wire_free(&w);
    job_index_free(half);

    uint32_t ng = job_index_ngroups(idx), nf = job_index_nfiles(idx);
    uint64_t kernels = 0, largest = 0, largest_files = 0;
    for (uint32_t f = 0; f < nf; f++)
        kernels += job_index_file(idx, f)->kernels;
    for (uint32_t g = 0; g < ng; g++) {
        const job_group *gr = job_index_group(idx, g);
        if (gr->kernels > largest) {
            largest = gr->kernels;
            largest_files = gr->nfiles;
        }
    }
    printf("bench_job: %s: %u files, %u hosts, %u GPU groups, %llu kernels (largest group %llu "
           "kernels in %llu files)\n",
           dir, nf, job_index_nhosts(idx), ng, (unsigned long long)kernels,
           (unsigned long long)largest, (unsigned long long)largest_files);
    printf("  %-44s %9s %9s %12s\n", "step", "wall s", "CPU s", "per file ms");
    printf("  %-44s %9.3f %9.3f %12.3f\n", "job_index_build (first, as the files came)", index_wall,
           index_cpu, 1e3 * index_wall / nf);
    printf("  %-44s %9.3f %9.3f %12.3f\n", "job_index_build (warm)", index2_wall, index2_cpu,
           1e3 * index2_wall / nf);
    printf("  %-44s %9.3f %9.3f %12.3f   (%.0f bytes per file)\n", "  its records, on one thread",
           rec_wall, rec_cpu, 1e3 * rec_wall / nf, (double)record_bytes / nf);
    printf("  %-44s %9.3f %9.3f %12.3f\n", "  their replay into one run, grouping", replay_wall,
           replay_cpu, 1e3 * replay_wall / nf);
    printf("  %-44s %9.3f %9s %12.3f   (%lld rows)\n", "kernel rows by SELECT count(*)", count_wall,
           "", 1e3 * count_wall / nf, (long long)by_count);
    printf("  %-44s %9.3f %9s %12.3f   (%lld rows)\n", "kernel rows by rowid span", rowid_wall, "",
           1e3 * rowid_wall / nf, (long long)by_rowid);
    printf("  %-44s %9.3f %9.3f %12.3f   (%lld rows)\n", "plain SQLite scan of every kernel row",
           scan_wall, scan_cpu, 1e3 * scan_wall / nf, (long long)rows);
    job_index_free(idx);
    return by_count == by_rowid && (uint64_t)rows == kernels ? 0 : 1;
}
