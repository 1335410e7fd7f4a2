/* record_spawn.c: process handling for `tlview record` and `tlview advise`: N copies of a command
 * (or of several, copy i running command i mod K) started behind a start barrier (a pipe that
 * every child reads until the parent closes it after the last fork), a wait loop that takes
 * SIGCHLD/SIGINT/SIGTERM synchronously with sigtimedwait() so that no signal handler races with
 * the bookkeeping, and a small run-to-completion helper for the MPS control program. */
#include <errno.h>
#include <limits.h>
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

/* pipe() with both ends closed on exec (pipe2 needs _GNU_SOURCE). */
static int cloexec_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

static sigset_t saved_mask; /* the mask before rec_signals_block(), restored in children */
static int blocked;         /* rec_signals_block() was called */

const char *rec_signame(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGPIPE: return "SIGPIPE";
    default: return "another signal";
    }
}

int64_t rec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t rec_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int is_exec_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int rec_find_program(const char *cmd, char *out, size_t n, char *err)
{
    if (!cmd || !*cmd) {
        snprintf(err, REC_ERR_MAX, "no command given after --");
        return -1;
    }
    if (strchr(cmd, '/')) {
        if (!is_exec_file(cmd)) {
            snprintf(err, REC_ERR_MAX, "%s: %s", cmd,
                     access(cmd, F_OK) == 0 ? "not an executable file" : "no such file");
            return -1;
        }
        snprintf(out, n, "%s", cmd);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", cmd);
        if (is_exec_file(out))
            return 0;
        p += len + (colon ? 1 : 0);
    }
    snprintf(err, REC_ERR_MAX, "%s: command not found on PATH", cmd);
    return -1;
}

void rec_signals_block(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &saved_mask);
    blocked = 1;
}

int rec_signal_pending(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&set, NULL, &zero);
    return sig > 0 ? sig : 0;
}

/* In a freshly forked child: the parent's blocked signals must not leak into the program. */
static void child_restore_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    if (blocked)
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/* In a freshly forked child of rec_spawn_ex(): stdout and stderr to new files of out_dir, named
 * after copy `copy`. Exits 126 with a line on the inherited stderr when they cannot be made. */
static void child_outputs(const rec_spawn_opts *o, int copy, const char *who)
{
    char path[PATH_MAX], why[512];
    for (int fd = 1; fd <= 2; fd++) {
        snprintf(path, sizeof path, "%s/copy%d.%s", o->out_dir, copy, fd == 1 ? "out" : "err");
        int out = store_fs_create(path, 0644, why, sizeof why);
        if (out < 0) {
            fprintf(stderr, "%s: copy %d: %s\n", who, copy, why);
            _exit(126);
        }
        dup2(out, fd); /* the copy is close-on-exec, the standard stream is not */
        close(out);
    }
}

int rec_spawn_ex(const rec_spawn_opts *o, rec_child *kids, int n, int64_t *pRelease, int64_t *pMono,
                 char *err)
{
    const char *who = o->who ? o->who : "tlview record";
    int gate[2];
    if (cloexec_pipe(gate) != 0) {
        snprintf(err, REC_ERR_MAX, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        kids[i].rank = i;
        kids[i].command = i % o->ncmds;
        kids[i].done = 0;
        kids[i].status = 0;
        kids[i].end_ns = 0;
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, REC_ERR_MAX, "fork (copy %d of %d): %s", i + 1, n, strerror(errno));
            for (int j = 0; j < i; j++) { /* killed before the gate opens: none exec */
                kill(kids[j].pid, SIGKILL);
                waitpid(kids[j].pid, &kids[j].status, 0);
                kids[j].done = 1;
            }
            close(gate[1]);
            close(gate[0]);
            return -1;
        }
        if (pid == 0) {
            close(gate[1]);
            if (o->out_dir)
                child_outputs(o, o->copy_base + i, who);
            char buf[16];
            ssize_t r;
            while ((r = read(gate[0], buf, sizeof buf)) < 0 && errno == EINTR)
                ;
            if (r != 0)
                _exit(126); /* the barrier was not opened cleanly */
            snprintf(buf, sizeof buf, "%d", i);
            setenv("TLVIEW_RANK", buf, 1);
            snprintf(buf, sizeof buf, "%d", n);
            setenv("TLVIEW_NPROCS", buf, 1);
            child_restore_signals();
            const char *path = o->paths[kids[i].command];
            execv(path, o->argvs[kids[i].command]);
            fprintf(stderr, "%s: cannot run %s: %s\n", who, path, strerror(errno));
            _exit(127);
        }
        kids[i].pid = pid;
    }
    close(gate[0]);
    *pMono = rec_mono_ns();
    *pRelease = rec_now_ns();
    close(gate[1]); /* every child's read() returns 0 now: they exec together */
    return 0;
}

int rec_spawn(const char *path, char *const argv[], rec_child *kids, int n, int64_t *pRelease,
              char *err)
{
    char *const *argvs[1] = {argv};
    rec_spawn_opts o = {.paths = &path, .argvs = argvs, .ncmds = 1};
    int64_t mono;
    return rec_spawn_ex(&o, kids, n, pRelease, &mono, err);
}

/* Reaps every child that has exited; returns how many are still running. */
static int reap(rec_child *kids, int n)
{
    int alive = 0;
    for (int i = 0; i < n; i++) {
        if (kids[i].done)
            continue;
        pid_t r = waitpid(kids[i].pid, &kids[i].status, WNOHANG);
        if (r == kids[i].pid || (r < 0 && errno == ECHILD)) {
            kids[i].done = 1;
            kids[i].end_ns = rec_mono_ns();
        } else {
            alive++;
        }
    }
    return alive;
}

int rec_wait(rec_child *kids, int n)
{
    return rec_wait_ex(kids, n, 0);
}

int rec_wait_ex(rec_child *kids, int n, int kill_after_ms)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    int first = 0, killed = 0;
    int64_t first_at = 0; /* CLOCK_MONOTONIC ns of the first signal */
    while (reap(kids, n) > 0) {
        if (first && kill_after_ms > 0 && !killed &&
            rec_mono_ns() - first_at >= (int64_t)kill_after_ms * 1000000) {
            for (int i = 0; i < n; i++)
                if (!kids[i].done)
                    kill(kids[i].pid, SIGKILL);
            killed = 1;
        }
        siginfo_t si;
        struct timespec tick = {0, 200 * 1000 * 1000}; /* re-reap even if a SIGCHLD merged */
        int sig = sigtimedwait(&set, &si, &tick);
        if (sig != SIGINT && sig != SIGTERM)
            continue;
        if (!first) {
            first = sig;
            first_at = rec_mono_ns();
        }
        if (si.si_code == SI_KERNEL)
            continue; /* from the terminal: the children, in our process group, got it too */
        for (int i = 0; i < n; i++)
            if (!kids[i].done)
                kill(kids[i].pid, sig);
    }
    return first;
}

pid_t rec_serve(const char *dir, unsigned port, char *err)
{
    char exe[PATH_MAX], portbuf[16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(err, REC_ERR_MAX, "cannot tell where tlview is (/proc/self/exe): %s",
                 strerror(errno));
        return -1;
    }
    exe[n] = 0;
    snprintf(portbuf, sizeof portbuf, "%u", port);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, REC_ERR_MAX, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        child_restore_signals();
        unsetenv("CUDA_INJECTION64_PATH"); /* the server makes no CUDA call; keep it so */
        execl(exe, "tlview", "serve", "--follow", "--port", portbuf, dir, (char *)NULL);
        fprintf(stderr, "tlview record: cannot run %s serve: %s\n", exe, strerror(errno));
        _exit(127);
    }
    return pid;
}

int rec_serve_wait(pid_t server)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    int status = 0;
    while (waitpid(server, &status, WNOHANG) == 0) {
        struct timespec tick = {0, 200 * 1000 * 1000};
        siginfo_t si;
        int sig = sigtimedwait(&set, &si, &tick);
        if (sig == SIGINT || sig == SIGTERM) {
            if (si.si_code != SI_KERNEL) /* from the terminal, the server got it as well */
                kill(server, SIGTERM);
            waitpid(server, &status, 0);
            return sig;
        }
    }
    return 0;
}

int rec_run(char *const argv[], const char *input, const char *outfile, int timeout_ms, char *err)
{
    int in[2] = {-1, -1};
    if (input && cloexec_pipe(in) != 0) {
        snprintf(err, REC_ERR_MAX, "pipe: %s", strerror(errno));
        return -1;
    }
    /* the output file: in the record folder, never through a link, never another user's */
    int out = outfile ? store_fs_open_append(outfile, 0644, err, REC_ERR_MAX) : -1;
    if (outfile && out < 0) {
        if (input) {
            close(in[0]);
            close(in[1]);
        }
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, REC_ERR_MAX, "fork: %s", strerror(errno));
        if (input) {
            close(in[0]);
            close(in[1]);
        }
        if (out >= 0)
            close(out);
        return -1;
    }
    if (pid == 0) {
        int fd = input ? in[0] : open("/dev/null", O_RDONLY);
        if (fd >= 0)
            dup2(fd, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        child_restore_signals();
        execv(argv[0], argv);
        fprintf(stderr, "tlview record: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (out >= 0)
        close(out);
    if (input) {
        close(in[0]);
        size_t len = strlen(input);
        /* A short text into an empty pipe never blocks; a program that exits early gives EPIPE,
         * which is harmless here (SIGPIPE is not ours to take: ignore it for this write). */
        void (*old)(int) = signal(SIGPIPE, SIG_IGN);
        if (write(in[1], input, len) != (ssize_t)len) {
            /* the status below tells what happened to the program */
        }
        signal(SIGPIPE, old);
        close(in[1]);
    }
    int status = 0;
    for (int waited = 0;; waited += 10) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR) {
            snprintf(err, REC_ERR_MAX, "waitpid %s: %s", argv[0], strerror(errno));
            return -1;
        }
        if (waited >= timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(err, REC_ERR_MAX, "%s did not finish within %d s (killed)", argv[0],
                     timeout_ms / 1000);
            return -1;
        }
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
    }
}
