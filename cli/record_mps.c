/* record_mps.c: the private MPS control daemon of `tlview record --mps`, following
 * ../shared/GPU.md: pipe and log folders of our own (inside the record folder), `control -d` to
 * start, `echo quit | control` with the same environment to stop, and a check in /proc that no
 * nvidia-cuda-mps process of that pipe folder is left. A daemon that was already running (the
 * user's CUDA_MPS_PIPE_DIRECTORY with its control pipe present) is reused and never stopped. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "store.h"

#define QUIT_WAIT_MS 10000 /* the daemon stops its server first: allow it time */
#define START_WAIT_MS 5000 /* for the control pipe to appear after `control -d` */
#define MAX_PIPE_DIR 80    /* sun_path holds 108 bytes, and MPS adds its socket names */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int control_pipe_exists(const char *pipe_dir)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/control", pipe_dir);
    return stat(path, &st) == 0;
}

int rec_mps_find(rec_mps *m, char *err)
{
    const char *env = getenv("TLVIEW_MPS_CONTROL");
    char why[REC_ERR_MAX];
    if (env && *env) {
        if (rec_find_program(env, m->control, sizeof m->control, why) != 0) {
            snprintf(err, REC_ERR_MAX, "--mps: TLVIEW_MPS_CONTROL=%s is not an executable program",
                     env);
            return -1;
        }
        return 0;
    }
    if (rec_find_program("nvidia-cuda-mps-control", m->control, sizeof m->control, why) != 0) {
        snprintf(err, REC_ERR_MAX,
                 "--mps needs nvidia-cuda-mps-control (part of the NVIDIA driver), which is not "
                 "on PATH; install the driver's utilities or set TLVIEW_MPS_CONTROL");
        return -1;
    }
    return 0;
}

/* Reads /proc/<pid>/environ and tells whether it holds exactly `want` ("NAME=value"). */
static int environ_has(const char *pid, const char *want)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int found = 0;
    while (!found && (len = getdelim(&buf, &cap, '\0', f)) > 0)
        found = strcmp(buf, want) == 0;
    free(buf);
    fclose(f);
    return found;
}

int rec_mps_leftovers(const char *pipe_dir, pid_t *pids, int max)
{
    char want[4200];
    snprintf(want, sizeof want, "CUDA_MPS_PIPE_DIRECTORY=%s", pipe_dir);
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == (int)getpid())
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
        /* comm is cut at 15 bytes: "nvidia-cuda-mps" covers -control and -server */
        if (strncmp(comm, "nvidia-cuda-mps", 15) != 0 || !environ_has(e->d_name, want))
            continue;
        /* a zombie has no environ to read, so it is never counted here */
        if (count < max)
            pids[count] = (pid_t)atoi(e->d_name);
        count++;
    }
    closedir(d);
    return count;
}

/* mkdir -p for one or two levels (the record folder already exists). */
static int make_dir(const char *path, char *err)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        snprintf(err, REC_ERR_MAX, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* one that was there already is used only when it is this user's alone: the daemon writes
     * its logs and sockets there, and follows any link another user left in it */
    return store_fs_check_dir(path, STORE_FS_PRIVATE, err, REC_ERR_MAX);
}

/* Appends the last lines of `path` (the daemon's own words) to err, if any. */
static void append_file_tail(char *err, const char *path)
{
    FILE *f = store_fs_fopen_read(path, NULL, 0);
    if (!f)
        return;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    if (n) {
        size_t used = strlen(err);
        snprintf(err + used, REC_ERR_MAX - used, " (%s says: %s)", path, buf);
    }
}

int rec_mps_start(rec_mps *m, const char *dir, char *err)
{
    const char *user = getenv("CUDA_MPS_PIPE_DIRECTORY");
    if (user && *user && control_pipe_exists(user)) {
        snprintf(m->pipe_dir, sizeof m->pipe_dir, "%s", user);
        const char *log = getenv("CUDA_MPS_LOG_DIRECTORY");
        snprintf(m->log_dir, sizeof m->log_dir, "%s", log ? log : "");
        m->reused = 1;
        if (!m->quiet)
            fprintf(stderr,
                    "tlview record: reusing the MPS daemon already running at %s "
                    "(it is left running)\n",
                    m->pipe_dir);
        return 0;
    }
    snprintf(m->pipe_dir, sizeof m->pipe_dir, "%s/mps-pipe", dir);
    snprintf(m->log_dir, sizeof m->log_dir, "%s/mps-log", dir);
    if (strlen(m->pipe_dir) > MAX_PIPE_DIR) {
        snprintf(m->pipe_dir, sizeof m->pipe_dir, "/tmp/tlview-mps.XXXXXX");
        if (!mkdtemp(m->pipe_dir)) {
            snprintf(err, REC_ERR_MAX, "%s: %s", m->pipe_dir, strerror(errno));
            return -1;
        }
        m->tmp_pipe = 1;
        if (!m->quiet)
            fprintf(stderr,
                    "tlview record: %s/mps-pipe is too long a path for the MPS sockets; "
                    "using %s\n",
                    dir, m->pipe_dir);
    }
    if (make_dir(m->pipe_dir, err) != 0 || make_dir(m->log_dir, err) != 0)
        return -1;
    pid_t old[8];
    int nold = rec_mps_leftovers(m->pipe_dir, old, 8);
    if (nold > 0) {
        snprintf(err, REC_ERR_MAX,
                 "an MPS daemon (pid %d) already serves %s; stop it first: "
                 "CUDA_MPS_PIPE_DIRECTORY=%s sh -c 'echo quit | %s'",
                 (int)old[0], m->pipe_dir, m->pipe_dir, m->control);
        return -1;
    }
    /* A control pipe left by a daemon that died uncleanly would look like a live one. */
    char stale[4200];
    snprintf(stale, sizeof stale, "%s/control", m->pipe_dir);
    unlink(stale);
    setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", m->log_dir, 1);

    char out[4200];
    snprintf(out, sizeof out, "%s/control-d.out", m->log_dir);
    char *argv[] = {m->control, "-d", NULL};
    /* The daemon, and the nvidia-cuda-mps-server it starts, are CUDA processes: they must not
     * inherit the injection meant for the copies, or they would be traced as one of them. */
    char *inject = getenv("CUDA_INJECTION64_PATH") ? strdup(getenv("CUDA_INJECTION64_PATH")) : NULL;
    unsetenv("CUDA_INJECTION64_PATH");
    int status = rec_run(argv, NULL, out, START_WAIT_MS, err);
    if (inject) {
        setenv("CUDA_INJECTION64_PATH", inject, 1);
        free(inject);
    }
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (status >= 0)
            snprintf(err, REC_ERR_MAX, "%s -d failed (%s %d)", m->control,
                     WIFEXITED(status) ? "exit" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        append_file_tail(err, out);
        m->started = 1; /* it may have half-started: rec_mps_stop() cleans up what is there */
        char ignored[REC_ERR_MAX];
        rec_mps_stop(m, ignored);
        return -1;
    }
    m->started = 1;
    for (int waited = 0; !control_pipe_exists(m->pipe_dir); waited += 20) {
        if (waited >= START_WAIT_MS) {
            snprintf(err, REC_ERR_MAX, "%s -d returned but no control pipe appeared in %s",
                     m->control, m->pipe_dir);
            char ignored[REC_ERR_MAX];
            rec_mps_stop(m, ignored);
            return -1;
        }
        sleep_ms(20);
    }
    if (!m->quiet)
        fprintf(stderr,
                "tlview record: started a private MPS daemon (CUDA_MPS_PIPE_DIRECTORY=%s)\n",
                m->pipe_dir);
    return 0;
}

/* Removes a pipe folder of ours and what the daemon left in it (sockets, FIFOs, lock files). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char child[4400];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            if (unlink(child) != 0 && errno == EISDIR)
                remove_tree(child);
        }
    if (d)
        closedir(d);
    rmdir(path);
}

int rec_mps_stop(rec_mps *m, char *err)
{
    if (!m->started || m->stopped)
        return 0;
    int rc = 0;
    char *argv[] = {m->control, NULL};
    char out[4200];
    snprintf(out, sizeof out, "%s/control-quit.out", m->log_dir);
    /* The environment still holds our CUDA_MPS_PIPE_DIRECTORY: the client finds our daemon. */
    /* Its exit status is not checked: with no daemon listening (one that failed to start) the
     * client fails, and that is fine; what matters is the check below that none is left. */
    if (rec_run(argv, "quit\n", out, QUIT_WAIT_MS, err) < 0)
        rc = -1;
    pid_t left[16];
    int nleft = 0;
    for (int waited = 0; waited <= QUIT_WAIT_MS; waited += 50) {
        nleft = rec_mps_leftovers(m->pipe_dir, left, 16);
        if (nleft == 0)
            break;
        sleep_ms(50);
    }
    if (nleft > 0) {
        int n = nleft < 16 ? nleft : 16;
        for (int i = 0; i < n; i++)
            kill(left[i], SIGTERM);
        sleep_ms(1000);
        for (int i = 0; i < n; i++)
            kill(left[i], SIGKILL);
        snprintf(err, REC_ERR_MAX,
                 "the MPS daemon (pid %d%s) was still running %d s after quit; "
                 "it was killed",
                 (int)left[0], nleft > 1 ? " and others" : "", QUIT_WAIT_MS / 1000);
        rc = -1;
    }
    m->stopped = rec_mps_leftovers(m->pipe_dir, left, 16) == 0;
    if (m->stopped && (m->tmp_pipe || m->remove_pipe))
        remove_tree(m->pipe_dir);
    if (!m->stopped && rc == 0) {
        snprintf(err, REC_ERR_MAX, "the MPS daemon of %s could not be stopped", m->pipe_dir);
        rc = -1;
    }
    return rc;
}
