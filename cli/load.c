/* load.c: the loader every subcommand shares (cli_load, cli_analyse): turns the FILES arguments
 * (files or folders) into one finished run, reporting a bad file by name, and analyses it.
 * Foreign formats (nvprof, Nsight Systems, Chrome JSON) enter at the one hook in load_one(). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Appends one file to the run. Returns 0 or a STORE_E* code with the message on the run. */
static int load_one(store_run *run, const char *path)
{
    /* ==== IMPORTERS HOOK (issue 5) ==========================================================
     * The one place where foreign formats enter. Files that are not native tlview files go to
     * the importers here, e.g.:
     *     if (!store_probe(path))
     *         return imp_load(run, path);
     * imp_load() must append through the store_run_add_* builder calls and report through
     * store_run_error() (a message naming the file), like store_run_load() does.
     * ======================================================================================= */
    return store_run_load(run, path);
}

/* Whether a file inside a folder argument is a trace to load (hook: importers' probes too). */
static int is_trace(const char *path)
{
    return store_probe(path);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Loads the trace files of folder `dir`, in name order. */
static int load_dir(store_run *run, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "tlview: %s: cannot read the folder: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path || (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) *
                                                            sizeof *names)))) {
            free(path);
            fprintf(stderr, "tlview: %s: out of memory\n", dir);
            rc = 1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && is_trace(path))
            names[n++] = path;
        else
            free(path);
    }
    closedir(d);
    if (!rc && n == 0) {
        fprintf(stderr, "tlview: %s: the folder holds no trace file\n", dir);
        rc = 1;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!rc && load_one(run, names[i]) != 0) {
            fprintf(stderr, "tlview: %s\n", store_run_errmsg(run));
            rc = 1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int cli_load(int nfiles, char **files, store_run **ppRun)
{
    *ppRun = NULL;
    if (nfiles <= 0) {
        fprintf(stderr, "tlview: no trace files given\n");
        return 1;
    }
    store_run *run = store_run_new();
    if (!run) {
        fprintf(stderr, "tlview: out of memory\n");
        return 1;
    }
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        if (stat(files[i], &st) != 0) {
            fprintf(stderr, "tlview: %s: %s\n", files[i], strerror(errno));
            goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
            if (load_dir(run, files[i]) != 0)
                goto fail;
        } else if (load_one(run, files[i]) != 0) {
            fprintf(stderr, "tlview: %s\n", store_run_errmsg(run));
            goto fail;
        }
    }
    if (store_run_finish(run) != 0) {
        fprintf(stderr, "tlview: %s\n", store_run_errmsg(run));
        goto fail;
    }
    *ppRun = run;
    return 0;
fail:
    store_run_free(run);
    return 1;
}

int cli_analyse(const store_run *run, const store_run *baseline, analysis **ppOut)
{
    analysis_options o;
    analysis_options_default(&o);
    o.baseline = baseline;
    int rc = analysis_run(run, &o, ppOut);
    if (rc) {
        fprintf(stderr, "tlview: analysis failed: %s\n", analysis_strerror(rc));
        return 1;
    }
    return 0;
}
