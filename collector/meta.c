/* collector process facts: pid, parent, host, executable and command line for the process
 * row, the launcher's rank variables (which rank of which job this process is), and the CUDA
 * driver and runtime versions, found with dlsym in what the application has already loaded
 * (libcollect links neither libcuda nor libcudart: it must not pull a second runtime into the
 * application). */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector_int.h"

#define LOG_PREFIX "meta"

char *collector_shell_quote(const char *arg)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_@%+=:,./-";
    size_t n = strlen(arg);
    if (n > 0 && strspn(arg, safe) == n)
        return strdup(arg);
    size_t quotes = 0;
    for (const char *p = arg; *p; p++)
        quotes += *p == '\'';
    char *out = malloc(n + 3 * quotes + 3);
    if (!out)
        return NULL;
    char *o = out;
    *o++ = '\'';
    for (const char *p = arg; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4); /* close, escaped quote, reopen */
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* Reads a whole small file (/proc/self/cmdline); *len gets its length. NULL on failure. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    close(fd);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* The NUL-separated command line as one shell-quoted, space-separated string. */
static char *command_line(void)
{
    size_t len = 0;
    char *raw = slurp("/proc/self/cmdline", &len);
    if (!raw)
        return NULL;
    /* Quoting at most quadruples a quote and adds two quotes and a space per argument. */
    size_t args = 0;
    for (size_t i = 0; i < len; i += strlen(raw + i) + 1)
        args++;
    char *out = malloc(4 * len + 3 * args + 1);
    size_t n = 0;
    for (size_t i = 0; out && i < len; i += strlen(raw + i) + 1) {
        char *q = collector_shell_quote(raw + i);
        if (!q) {
            free(out);
            out = NULL;
            break;
        }
        if (n)
            out[n++] = ' ';
        size_t ql = strlen(q);
        memcpy(out + n, q, ql);
        n += ql;
        free(q);
    }
    if (out)
        out[n] = '\0';
    free(raw);
    return out;
}

int collector_facts_read(collector_facts *f)
{
    memset(f, 0, sizeof *f);
    f->pid = getpid();
    f->ppid = getppid();
    int oom = 0;
    char host[HOST_NAME_MAX + 1];
    if (gethostname(host, sizeof host) == 0) {
        host[HOST_NAME_MAX] = '\0';
        oom |= !(f->host = strdup(host));
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        oom |= !(f->exe = strdup(exe));
    }
    f->argv = command_line();
    if (oom) {
        collector_facts_free(f);
        return STORE_ENOMEM;
    }
    return 0;
}

void collector_facts_free(collector_facts *f)
{
    free(f->host);
    free(f->exe);
    free(f->argv);
    memset(f, 0, sizeof *f);
}

/* What MPI launchers (Open MPI's mpirun, PMIx and PMI ones, Slurm's srun, MVAPICH2, Intel MPI)
 * and torchrun tell each process about its place in the job: kept as env.NAME, so that `tlview
 * job` can say which ranks shared a GPU (store/SCHEMA.md, process_meta). */
static const char *const launcher_vars[] = {
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "PMI_RANK",
    "PMI_SIZE",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURM_NTASKS",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "MV2_COMM_WORLD_RANK",
    "MV2_COMM_WORLD_LOCAL_RANK",
    "MPI_LOCALRANKID",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
};

int collector_launcher_meta(store_writer *w, int64_t process)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof launcher_vars / sizeof *launcher_vars; i++) {
        const char *value = getenv(launcher_vars[i]);
        char key[64];
        snprintf(key, sizeof key, "env.%s", launcher_vars[i]);
        if (value)
            rc = store_writer_process_meta(w, process, key, value);
    }
    return rc;
}

/* Calls `int fn(int *)` found by name in the already loaded objects: in the global scope, or in
 * one of `sonames` if the application loaded it privately (RTLD_NOLOAD never loads anything).
 * Returns the version, or -1 when absent or failing. */
static int64_t version_of(const char *symbol, const char *const *sonames)
{
    int (*fn)(int *) = NULL;
    *(void **)&fn = dlsym(RTLD_DEFAULT, symbol); /* POSIX's way to get a function pointer */
    for (; !fn && *sonames; sonames++) {
        void *h = dlopen(*sonames, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            *(void **)&fn = dlsym(h, symbol);
            dlclose(h); /* only drops the reference NOLOAD added */
        }
    }
    int v = 0;
    if (!fn || fn(&v) != 0) {
        log_dbg("%s not available", symbol);
        return -1;
    }
    return v;
}

int64_t collector_driver_version(void)
{
    static const char *const sonames[] = {"libcuda.so.1", NULL};
    return version_of("cuDriverGetVersion", sonames);
}

int64_t collector_runtime_version(void)
{
    static const char *const sonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so",
                                          NULL};
    return version_of("cudaRuntimeGetVersion", sonames);
}
