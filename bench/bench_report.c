/* bench_report: what `tlview report` costs on big runs. In one process, on the files that
 * bench_report_gen wrote: a plain SQLite scan of every kernel row (the floor: SQLite's own read
 * cost, one thread, and on as many threads as the loader uses), then store_run_load_files() +
 * store_run_finish() and analysis_run(); prints times, the ratio to the scan and the peak
 * resident memory per kernel (getrusage maxrss).
 *   bench_report DIR        (DIR/bench.*.db, see bench_report_gen) */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "store.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) of the whole process so far. */
static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Current resident set, KB (/proc/self/statm). */
static long rss_kb(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Scans one file's kernel rows the way any SQLite reader would; returns rows, adds a checksum. */
static uint64_t scan_file(const char *path, uint64_t *sum)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    uint64_t n = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT start, dur, launch_id, correlation_id FROM kernel", -1, &st,
                           NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            *sum += (uint64_t)sqlite3_column_int64(st, 0) + (uint64_t)sqlite3_column_int64(st, 1) +
                    (uint64_t)sqlite3_column_int64(st, 2) + (uint64_t)sqlite3_column_int64(st, 3);
            n++;
        }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

typedef struct scanjob {
    char **paths;
    int n, next;
    uint64_t rows, sum;
    pthread_mutex_t mu;
} scanjob;

static void *scan_worker(void *arg)
{
    scanjob *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        uint64_t sum = 0, rows = scan_file(j->paths[i], &sum);
        pthread_mutex_lock(&j->mu);
        j->rows += rows;
        j->sum += sum;
        pthread_mutex_unlock(&j->mu);
    }
}

/* Scans every file on `threads` threads; returns seconds, rows in *pRows. */
static double scan_all(char **paths, int n, int threads, uint64_t *pRows, double *pCpu)
{
    scanjob j = {paths, n, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[64];
    double t = now(), c = cpu();
    for (int i = 1; i < threads; i++)
        pthread_create(&th[i], NULL, scan_worker, &j);
    scan_worker(&j);
    for (int i = 1; i < threads; i++)
        pthread_join(th[i], NULL);
    *pRows = j.rows;
    *pCpu = cpu() - c;
    return now() - t;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_report DIR   (files from bench_report_gen DIR)\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    char **paths = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, "bench.", 6) && strstr(e->d_name, ".db") &&
            !strstr(e->d_name, "-journal")) {
            paths = realloc(paths, (size_t)(n + 1) * sizeof *paths);
            if (asprintf(&paths[n], "%s/%s", argv[1], e->d_name) < 0)
                return 1;
            n++;
        }
    closedir(d);
    if (!n) {
        fprintf(stderr, "bench_report: no bench.*.db in %s (run bench_report_gen first)\n",
                argv[1]);
        return 1;
    }
    qsort(paths, (size_t)n, sizeof *paths, cmp_str);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;

    uint64_t rows = 0, rows2 = 0;
    double c_scan1, c_scanN, c;
    scan_all(paths, n, 1, &rows, &c); /* warm the page cache: every timing below reads warm files */
    double t_scan1 = scan_all(paths, n, 1, &rows, &c_scan1);
    double t_scanN = scan_all(paths, n, threads, &rows2, &c_scanN);
    long rss0 = rss_kb();

    store_run *run = store_run_new();
    double t0 = now();
    c = cpu();
    if (store_run_load_files(run, (const char *const *)paths, (uint32_t)n) ||
        store_run_finish(run)) {
        fprintf(stderr, "bench_report: %s\n", store_run_errmsg(run));
        return 1;
    }
    double t_load = now() - t0, c_load = cpu() - c;
    long rss_load = maxrss_kb();
    analysis *a = NULL;
    t0 = now();
    c = cpu();
    int rc = analysis_run(run, NULL, &a);
    double t_an = now() - t0, c_an = cpu() - c;
    if (rc) {
        fprintf(stderr, "bench_report: analysis: %s\n", analysis_strerror(rc));
        return 1;
    }
    long peak = maxrss_kb();
    uint64_t nk = run->nkernels;
    const analysis_device *dev = analysis_get_device(a, 0);
    double load1 = getloadavg(&t0, 1) == 1 ? t0 : -1;

    printf("bench_report: %d files, %llu kernels (%llu rows scanned), %d CPUs, load average "
           "%.2f\n",
           n, (unsigned long long)nk, (unsigned long long)rows, threads, load1);
    printf("  %-38s %8s %8s %8s\n", "step", "wall s", "x scan", "CPU s");
    printf("  %-38s %8.3f %8s %8.3f\n", "sqlite3 scan, 1 thread (the floor)", t_scan1, "1.00",
           c_scan1);
    printf("  %-38s %8.3f %8.2f %8.3f\n", "sqlite3 scan, threads as the loader", t_scanN,
           t_scanN / t_scan1, c_scanN);
    printf("  %-38s %8.3f %8.2f %8.3f\n", "store_run_load_files + finish", t_load, t_load / t_scan1,
           c_load);
    printf("  %-38s %8.3f %8.2f %8.3f\n", "analysis_run", t_an, t_an / t_scan1, c_an);
    printf("  %-38s %8.3f %8.2f %8.3f   (target <= 2 s, <= 2x scan)\n", "load + analysis",
           t_load + t_an, (t_load + t_an) / t_scan1, c_load + c_an);
    printf("  peak RSS %.1f MB = %.1f B/kernel (before loading %.1f MB; after load %.1f B/kernel; "
           "target <= 64)\n",
           peak / 1024.0, peak * 1024.0 / (double)nk, rss0 / 1024.0,
           rss_load * 1024.0 / (double)nk);
    printf("  check: %llu windows, device verdict %s, stretch %.2fx (expected ~%d)\n",
           (unsigned long long)analysis_nwindows(a), analysis_verdict_name(dev->verdict),
           dev->by_verdict[dev->verdict].stretch, n);
    analysis_free(a);
    store_run_free(run);
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return 0;
}
