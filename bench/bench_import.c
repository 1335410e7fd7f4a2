/* bench_import: import throughput of the nvprof importer on a large generated nvprof-shaped file
 * (the real v12 kernel/runtime/memcpy column sets), beside plain sqlite3 reading the same rows
 * and columns in the same run: the floor any importer of that file sits on.
 * Usage: bench_import [KERNELS (default 1000000)] [DIR (default /tmp)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include "importers.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "bench_import: %s\n", msg);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Writes an nvprof v12-shaped file: n kernels on 4 streams, one cudaLaunchKernel per kernel,
 * a memcpy per 10 kernels. Returns the number of rows the importer will read. */
static long long generate(const char *path, long long n)
{
    sqlite3 *db;
    remove(path);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    int rc = exec(
        db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
            "CREATE TABLE StringTable( _id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL "
            "UNIQUE );"
            "CREATE TABLE Version( version INTEGER); INSERT INTO Version VALUES(12);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_NAME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
            "objectKind INT NOT NULL, objectId BLOB NOT NULL, name INT NOT NULL);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, id "
            "INT NOT NULL, name INT NOT NULL, uuid BLOB NOT NULL, numMultiprocessors INT NOT NULL, "
            "computeCapabilityMajor INT NOT NULL, computeCapabilityMinor INT NOT NULL, "
            "globalMemorySize INT NOT NULL);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_CONTEXT(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
            "contextId INT NOT NULL, deviceId INT NOT NULL, computeApiKind INT NOT NULL, "
            "nullStreamId INT NOT NULL);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY "
            "AUTOINCREMENT, cacheConfig BLOB NOT NULL, sharedMemoryConfig INT NOT NULL, "
            "registersPerThread INT NOT NULL, partitionedGlobalCacheRequested INT NOT NULL, "
            "partitionedGlobalCacheExecuted INT NOT NULL, start INT NOT NULL, end INT NOT NULL, "
            "completed INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT "
            "NOT NULL, gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT "
            "NULL, blockY INT NOT NULL, blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, "
            "dynamicSharedMemory INT NOT NULL, localMemoryPerThread INT NOT NULL, localMemoryTotal "
            "INT NOT NULL, correlationId INT NOT NULL, gridId INT NOT NULL, name INT NOT NULL, "
            "queued INT NOT NULL, submitted INT NOT NULL, launchType INT NOT NULL, "
            "isSharedMemoryCarveoutRequested INT NOT NULL, sharedMemoryCarveoutRequested INT NOT "
            "NULL, sharedMemoryExecuted INT NOT NULL);"
            "CREATE INDEX INDEX_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ON "
            "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(correlationId);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid "
            "INT NOT NULL, start INT NOT NULL, end INT NOT NULL, processId INT NOT NULL, threadId "
            "INT NOT NULL, correlationId INT NOT NULL, returnValue INT NOT NULL);"
            "CREATE INDEX INDEX_CUPTI_ACTIVITY_KIND_RUNTIME ON "
            "CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
            "copyKind INT NOT NULL, srcKind INT NOT NULL, dstKind INT NOT NULL, flags INT NOT "
            "NULL, bytes INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT "
            "NULL, contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT NOT NULL, "
            "runtimeCorrelationId INT NOT NULL);"
            "INSERT INTO StringTable VALUES(0, '-- null --'), (1, 'python train.py'), (2, 'NVIDIA "
            "H200');"
            "INSERT INTO CUPTI_ACTIVITY_KIND_NAME VALUES(1, 1, X'39300000000000000000000000', 1);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE VALUES(1, 0, 2, "
            "X'00112233445566778899aabbccddeeff', 132, 9, 0, 150000000000);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_CONTEXT VALUES(1, 1, 0, 1, 7);");
    for (int i = 0; rc == 0 && i < 200; i++) {
        char sql[200];
        snprintf(sql, sizeof sql, "INSERT INTO StringTable(value) VALUES('_Z%dkernel_%dPfS_i')",
                 8 + (i >= 10), i);
        rc = exec(db, sql);
    }
    sqlite3_stmt *k = NULL, *a = NULL, *m = NULL;
    if (rc == 0 &&
        (sqlite3_prepare_v2(db,
                            "INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES(NULL, X'00', "
                            "0, ?1, 0, 0, ?2, ?3, ?3, 0, 1, ?4, ?5, 1, 1, 256, 1, 1, 0, ?6, 0, 0, "
                            "?7, ?7, ?8, 0, 0, 1, 0, 0, 0)",
                            -1, &k, NULL) ||
         sqlite3_prepare_v2(db,
                            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(NULL, 211, ?1, ?2, "
                            "12345, 1829437888, ?3, 0)",
                            -1, &a, NULL) ||
         sqlite3_prepare_v2(db,
                            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(NULL, 1, 2, 3, 1, ?1, "
                            "?2, ?3, 0, 1, ?4, ?5, 0)",
                            -1, &m, NULL)))
        rc = -1;
    long long t = 1700000000000000000LL, rows = 0;
    for (long long i = 0; rc == 0 && i < n; i++) {
        t += 3000 + (i * 7919) % 2000;
        sqlite3_bind_int64(a, 1, t);
        sqlite3_bind_int64(a, 2, t + 2500);
        sqlite3_bind_int64(a, 3, i + 1);
        sqlite3_bind_int64(k, 1, 16 + i % 64);
        sqlite3_bind_int64(k, 2, t + 6000);
        sqlite3_bind_int64(k, 3, t + 6000 + 1000 + (i * 104729) % 20000);
        sqlite3_bind_int64(k, 4, 7 + i % 4);
        sqlite3_bind_int64(k, 5, 1 + i % 1024);
        sqlite3_bind_int64(k, 6, (i % 3) * 1024);
        sqlite3_bind_int64(k, 7, i + 1);
        sqlite3_bind_int64(k, 8, 3 + i % 200);
        if (sqlite3_step(a) != SQLITE_DONE || sqlite3_step(k) != SQLITE_DONE)
            rc = -1;
        sqlite3_reset(a);
        sqlite3_reset(k);
        rows += 2;
        if (i % 10 == 0) {
            sqlite3_bind_int64(m, 1, 4096 * (1 + i % 100));
            sqlite3_bind_int64(m, 2, t + 100);
            sqlite3_bind_int64(m, 3, t + 900);
            sqlite3_bind_int64(m, 4, 7 + i % 4);
            sqlite3_bind_int64(m, 5, i + 1);
            if (sqlite3_step(m) != SQLITE_DONE)
                rc = -1;
            sqlite3_reset(m);
            rows++;
        }
    }
    sqlite3_finalize(k);
    sqlite3_finalize(a);
    sqlite3_finalize(m);
    if (rc == 0)
        rc = exec(db, "COMMIT");
    sqlite3_close(db);
    return rc ? -1 : rows;
}

/* The floor: sqlite3 stepping through the same rows and reading the same columns. */
static long long sqlite_read(const char *path)
{
    static const char *const queries[] = {
        "SELECT start, end, deviceId, contextId, streamId, correlationId, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, name "
        "FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
        "SELECT cbid, start, end, threadId, correlationId, returnValue FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "SELECT copyKind, bytes, start, end, deviceId, contextId, streamId, correlationId FROM "
        "CUPTI_ACTIVITY_KIND_MEMCPY",
    };
    sqlite3 *db;
    long long rows = 0, sum = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return -1;
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK)
            return -1;
        int ncol = sqlite3_column_count(st);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < ncol; c++)
                sum += sqlite3_column_int64(st, c);
            rows++;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return sum == 42 ? -2 : rows; /* keeps the reads from being optimised away */
}

int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : 1000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_import.%ld.nvvp", dir, (long)getpid());

    double t0 = now();
    long long rows = generate(path, n);
    double t_gen = now() - t0;
    if (rows < 0) {
        fprintf(stderr, "bench_import: cannot generate %s\n", path);
        return 1;
    }
    /* warm the page cache so both readers start alike */
    if (sqlite_read(path) != rows) {
        fprintf(stderr, "bench_import: sqlite3 read a different number of rows\n");
        return 1;
    }
    t0 = now();
    long long read = sqlite_read(path);
    double t_sql = now() - t0;

    store_run *run = store_run_new();
    imp_stats st;
    imp_error err;
    t0 = now();
    int rc = imp_load_ex(run, path, NULL, &st, &err);
    double t_imp = now() - t0;
    t0 = now();
    if (rc == 0)
        rc = store_run_finish(run);
    double t_fin = now() - t0;
    if (rc) {
        fprintf(stderr, "bench_import: %s\n", rc ? err.message : "");
        return 1;
    }
    long long got = (long long)(run->nkernels + run->napis + run->ncopies);
    printf("nvprof-shaped file: %lld kernels, %lld records, generated in %.2f s\n", n, rows, t_gen);
    printf("%-34s %12s %10s %14s\n", "reader", "records", "seconds", "records/s");
    printf("%-34s %12lld %10.3f %14.0f\n", "sqlite3 (same rows and columns)", read, t_sql,
           read / t_sql);
    printf("%-34s %12lld %10.3f %14.0f\n", "imp_load (nvprof -> run model)", got, t_imp,
           got / t_imp);
    printf("%-34s %12lld %10.3f %14.0f\n", "imp_load + store_run_finish", got, t_imp + t_fin,
           got / (t_imp + t_fin));
    printf("importer / sqlite3 time: %.2fx\n", t_imp / t_sql);
    store_run_free(run);
    remove(path);
    return got == rows ? 0 : 1;
}
