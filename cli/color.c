/* color.c: whether the commands colour their text (--color auto|always|never), and the colours.
 * "auto" colours only what reaches a terminal. A rank of an MPI job cannot tell from its own
 * stdout: Open MPI gives each rank a pty, so `mpirun -n 2 tlview job DIR > file` would colour the
 * file. Under a launcher the answer is the launcher's own stdout, found as /proc/<pid>/fd/1 of the
 * nearest ancestor named mpirun, mpiexec, prterun, srun, ...; none found (srun on another host),
 * or not readable: no colour. The rank's own stdout must be a terminal too: a pipe may lead
 * anywhere (`mpirun sh -c 'tlview job DIR | cat > file'`), so a launcher that relays its ranks'
 * output through pipes (MPICH's hydra) gets no colour unless --color always. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define ANCESTORS_MAX 64 /* parents looked at for the launcher */

/* The variables an MPI launcher sets in every rank it starts: Open MPI, PMIx (Open MPI 5,
 * prterun), PMI (MPICH's hydra, Intel MPI), MVAPICH2, Slurm's srun. */
static const char *const launch_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                          "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};

/* The launchers a user runs, whose stdout is the job's: not the daemons between them and the
 * ranks (orted, prted, hydra_pmi_proxy, slurmstepd), whose stdout is a pipe to the launcher. */
static const char *const launchers[] = {"mpirun",  "mpiexec", "mpiexec.hydra", "orterun",
                                        "prterun", "prun",    "srun"};

int cli_color_decide(const char *mode, const cli_color_facts *f)
{
    if (!strcmp(mode, "always"))
        return 1;
    if (!strcmp(mode, "never"))
        return 0;
    if (strcmp(mode, "auto"))
        return -1;
    if (f->no_color || (f->term && !strcmp(f->term, "dumb")))
        return 0;
    return f->out_tty && (!f->launched || f->launcher_tty);
}

/* Reads /proc/<pid>/stat: the process's name (its comm, into name, n bytes) and its parent.
 * 0, or -1 when it cannot be read. */
static int proc_stat(pid_t pid, char *name, size_t n, pid_t *pParent)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = 0;
    /* "pid (comm) S ppid ...": comm may hold spaces and parentheses, so up to the last ')' */
    char *open = strchr(text, '('), *close = strrchr(text, ')');
    int parent;
    char state;
    if (!open || !close || close < open || sscanf(close + 1, " %c %d", &state, &parent) != 2)
        return -1;
    snprintf(name, n, "%.*s", (int)(close - open - 1), open + 1);
    *pParent = parent;
    return 0;
}

int cli_launcher_tty(void)
{
    pid_t pid = getppid(), parent;
    char name[64];
    for (int i = 0; i < ANCESTORS_MAX && pid > 1; i++, pid = parent) {
        if (proc_stat(pid, name, sizeof name, &parent) != 0)
            return 0;
        for (size_t k = 0; k < sizeof launchers / sizeof *launchers; k++) {
            if (strcmp(name, launchers[k]))
                continue;
            /* its stdout, without opening it (no side effect on a device): a terminal is a
             * character device named /dev/pts/N, /dev/ttyN or /dev/console */
            char fd1[64], target[256];
            struct stat st;
            snprintf(fd1, sizeof fd1, "/proc/%d/fd/1", (int)pid);
            ssize_t n = readlink(fd1, target, sizeof target - 1);
            if (n <= 0 || stat(fd1, &st) != 0 || !S_ISCHR(st.st_mode))
                return 0;
            target[n] = 0;
            return !strncmp(target, "/dev/pts/", 9) || !strncmp(target, "/dev/tty", 8) ||
                   !strcmp(target, "/dev/console");
        }
    }
    return 0;
}

int cli_color(const char *mode, FILE *out)
{
    cli_color_facts f = {.no_color = getenv("NO_COLOR"), .term = getenv("TERM")};
    f.out_tty = isatty(fileno(out));
    for (size_t i = 0; i < sizeof launch_vars / sizeof *launch_vars; i++)
        f.launched |= getenv(launch_vars[i]) != NULL;
    /* the ancestors are looked at only when they decide */
    if (f.launched && !strcmp(mode, "auto") && f.out_tty)
        f.launcher_tty = cli_launcher_tty();
    return cli_color_decide(mode, &f);
}

const char *cli_verdict_color(analysis_verdict v, int color)
{
    static const char *const c[ANALYSIS_NVERDICTS] = {
        "\033[2m", "", "\033[1;32m", "\033[1;31m", "\033[1;33m", "\033[1;36m", "\033[1;35m"};
    return color && (unsigned)v < ANALYSIS_NVERDICTS ? c[v] : "";
}

const char *cli_color_reset(int color)
{
    return color ? "\033[0m" : "";
}
