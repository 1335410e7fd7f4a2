/* record_env.c: what `tlview record` and `tlview advise` check before they start anything: where
 * libcollect.so is (the variable, the build tree, the install tree) and whether this machine
 * shows an NVIDIA GPU at all; the collector's output pattern for a run's folder, and the trace
 * files a run left there. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"

int rec_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

#ifndef TLVIEW_COLLECTOR_RELDIR /* set by cli/cmd_record.cmake */
#define TLVIEW_COLLECTOR_RELDIR "../lib/tlview"
#endif
#ifndef TLVIEW_COLLECTOR_BUILT /* set by cli/cmd_record.cmake: 0 when built without CUDA */
#error "TLVIEW_COLLECTOR_BUILT: say whether this build made libcollect.so (cli/cmd_record.cmake)"
#endif

/* The build tree is <build>/cli/tlview -> <build>/collector/libcollect.so, the install tree
 * <prefix>/bin/tlview -> <prefix>/lib/tlview/libcollect.so. Both are found from the binary's own
 * location, so an install tree works under any prefix, and after it is moved. */
int rec_find_collector(char *out, char *err)
{
    const char *env = getenv("TLVIEW_COLLECTOR");
    if (env && *env) {
        if (!rec_regular_file(env) || !realpath(env, out)) {
            snprintf(err, REC_ERR_MAX, "TLVIEW_COLLECTOR=%s: no such file", env);
            return -1;
        }
        return 0;
    }
    char tried[2][PATH_MAX];
    static const char *const rel[2] = {"../collector/libcollect.so",
                                       TLVIEW_COLLECTOR_RELDIR "/libcollect.so"};
    for (int i = 0; i < 2; i++) {
        if (cli_exe_relative(rel[i], tried[i], sizeof tried[i]) != 0) {
            snprintf(err, REC_ERR_MAX,
                     "libcollect.so not found: cannot tell where tlview is (/proc/self/exe); set "
                     "TLVIEW_COLLECTOR to its path");
            return -1;
        }
        if (rec_regular_file(tried[i]) && realpath(tried[i], out))
            return 0;
    }
    if (!TLVIEW_COLLECTOR_BUILT)
        snprintf(err, REC_ERR_MAX,
                 "libcollect.so not found: this tlview was built without CUDA/CUPTI, so it has "
                 "no collector of its own (looked at %s and %s); set TLVIEW_COLLECTOR to the "
                 "libcollect.so of a tlview built with CUDA",
                 tried[0], tried[1]);
    else
        snprintf(err, REC_ERR_MAX,
                 "libcollect.so not found (looked at %s and %s); set TLVIEW_COLLECTOR to its path",
                 tried[0], tried[1]);
    return -1;
}

int rec_have_gpu(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

int rec_list_traces(const char *dir, char ***pOut)
{
    *pOut = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".db") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nv = realloc(v, sizeof *v * (size_t)cap);
            if (!nv)
                break;
            v = nv;
        }
        size_t sz = strlen(dir) + len + 2;
        v[n] = malloc(sz);
        if (!v[n])
            break;
        snprintf(v[n], sz, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: a run has few files */
        for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *pOut = v;
    return n;
}

void rec_free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void rec_output_pattern(const char *dir, const char *label, char *out, size_t n)
{
    char *o = out, *end = out + n - 16;
    for (const char *s = dir; *s && o < end; s++) {
        if (*s == '%')
            *o++ = '%';
        *o++ = *s;
    }
    snprintf(o, (size_t)(out + n - o), "/%s.%%p.db", label);
}
