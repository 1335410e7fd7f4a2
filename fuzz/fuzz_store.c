/* fuzz/fuzz_store.c: libFuzzer target for the tlview loader (store_run_load + finish), the
 * reader of files from others: the input is written to a file on tmpfs and loaded. A clean error
 * naming the file is the expected outcome; a crash, a leak, an ASan or UBSan report, a load past
 * the loader's time limit (libFuzzer's -timeout is above it), or a run with a record whose times
 * lie outside +-STORE_TIME_MAX or end before they start is a bug. Seeds: fuzz/store_seeds/ (see
 * fuzz/run.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h" /* store_read_base_s */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A record's times are on the axis and in order. */
static int placed(int64_t start, int64_t end)
{
    return start >= -STORE_TIME_MAX && end <= STORE_TIME_MAX && end >= start;
}

static void remove_all(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[300];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[256];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/tlview-fuzz-store-%ld.db", dir, (long)getpid());
        store_read_base_s = 2; /* well under -timeout: a hang past it is the guard's failure */
    }
    remove_all(path);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    store_run *run = store_run_new();
    if (!run)
        abort();
    if (store_run_load(run, path) == STORE_OK) {
        if (store_run_finish(run) != STORE_OK)
            abort();
        for (uint64_t i = 0; i < run->nkernels; i++)
            if (!placed(run->kernels[i].start, run->kernels[i].end))
                abort();
        for (uint64_t i = 0; i < run->ncopies; i++)
            if (!placed(run->copies[i].start, run->copies[i].end))
                abort();
        for (uint64_t i = 0; i < run->napis; i++)
            if (!placed(run->apis[i].start, run->apis[i].end))
                abort();
        for (uint64_t i = 0; i < run->nranges; i++)
            if (!placed(run->ranges[i].start, run->ranges[i].end))
                abort();
    } else if (strncmp(store_run_errmsg(run), path, strlen(path)) != 0) {
        abort(); /* every failure names the file */
    }
    store_run_free(run);
    remove_all(path);
    return 0;
}
