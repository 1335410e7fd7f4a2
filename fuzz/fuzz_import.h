/* fuzz/fuzz_import.h: the body shared by the per-importer libFuzzer targets. The input is
 * written to a file on tmpfs (the importers read files: SQLite needs one) and imported; a target
 * only goes on when detection picks its format, so each spends its time in its own importer.
 * Any crash, leak, ASan or UBSan report is a bug; a clean error is the expected outcome. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers.h"

static int fuzz_import(const uint8_t *data, size_t size, const char *format, const char *suffix)
{
    static char path[256];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/tlview-fuzz-%ld%s", dir, (long)getpid(), suffix);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    imp_error err;
    const char *got = imp_detect(path, &err);
    if (got && strcmp(got, format) == 0) {
        store_run *run = store_run_new();
        imp_stats st;
        if (imp_load_ex(run, path, NULL, &st, &err) == 0) {
            if (store_run_finish(run) != 0)
                abort();
        } else if (!err.message[0] || strncmp(err.message, path, strlen(path)) != 0)
            abort(); /* every failure must name the file */
        store_run_free(run);
    }
    unlink(path);
    return 0;
}
