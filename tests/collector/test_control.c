/* Unit tests of the collector's control channel (collector/control.c) and of `tlview capture`,
 * without CUDA: requests parsed and refused exactly, both ends of the FIFOs in one process, the
 * collector's folder checks, the client telling "no collector listening" apart from the rest,
 * and the tlview binary talking to a fake collector (a thread here that serves the FIFOs of made-
 * up PIDs with control.c's collector side and answers as told). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "test_help.h"

/* DIR/ctl: a control folder for the case (made by the collector side, mode 0700). */
static const char *ctl_dir(void)
{
    static char dir[4200];
    snprintf(dir, sizeof dir, "%s/ctl", test_tmpdir());
    return dir;
}

static int parse_err(const char *line, const char *want)
{
    collector_request r;
    char err[256] = "";
    TEST_EQ_INT(collector_control_parse(line, &r, err, sizeof err), -1);
    TEST_EQ_STR(err, want);
    return 0;
}

int test_control_parse(void)
{
    collector_request r;
    char err[256] = "";
    TEST_EQ_INT(collector_control_parse("start t-1_A slow down here", &r, err, sizeof err), 0);
    TEST_EQ_INT(r.cmd, COLLECTOR_CONTROL_START);
    TEST_EQ_STR(r.token, "t-1_A");
    TEST_EQ_STR(r.arg, "slow down here");
    TEST_EQ_INT(collector_control_parse("start tok", &r, err, sizeof err), 0);
    TEST_EQ_STR(r.arg, "");
    TEST_EQ_INT(collector_control_parse("stop 12", &r, err, sizeof err), 0);
    TEST_EQ_INT(r.cmd, COLLECTOR_CONTROL_STOP);
    TEST_EQ_INT(collector_control_parse("dump 12 dump-20261201-031502.a", &r, err, sizeof err), 0);
    TEST_EQ_INT(r.cmd, COLLECTOR_CONTROL_DUMP);
    TEST_EQ_STR(r.arg, "dump-20261201-031502.a");
    TEST_EQ_INT(collector_control_parse("status x", &r, err, sizeof err), 0);
    TEST_EQ_INT(r.cmd, COLLECTOR_CONTROL_STATUS);
    TEST_EQ_INT(collector_control_parse("start x caf\xc3\xa9", &r, err, sizeof err), 0);
    if (parse_err("begin tok", "unknown command 'begin'") || parse_err("", "unknown command ''") ||
        parse_err("stop", "stop: a token of 1 to 64 letters, digits, '_' or '-' is needed") ||
        parse_err("stop a/b", "stop: a token of 1 to 64 letters, digits, '_' or '-' is needed") ||
        parse_err("stop "
                  "12345678901234567890123456789012345678901234567890123456789012345",
                  "stop: a token of 1 to 64 letters, digits, '_' or '-' is needed") ||
        parse_err("stop tok now", "stop takes no name") ||
        parse_err("status tok x", "status takes no name") ||
        parse_err("dump tok a/b", "dump: the name may not hold '/' (a folder name: letters, "
                                  "digits, '.', '_', '-', no leading '.')") ||
        parse_err("dump tok ..", "dump: the name may not hold '.' (a folder name: letters, "
                                 "digits, '.', '_', '-', no leading '.')") ||
        parse_err("start tok a\tb", "start: the name may not hold '\\x09'"))
        return 1;
    char longname[300];
    memset(longname, 'a', sizeof longname);
    snprintf(longname, sizeof longname, "start t %0250d", 7);
    return parse_err(longname, "start: the name is longer than 200 bytes");
}

int test_control_dir(void)
{
    char buf[4096], want[64];
    unsetenv("TLVIEW_CONTROL_DIR");
    TEST_EQ_INT(collector_control_dir(buf, sizeof buf), 0);
    snprintf(want, sizeof want, "/tmp/tlview-%u", (unsigned)geteuid());
    TEST_EQ_STR(buf, want);
    setenv("TLVIEW_CONTROL_DIR", "", 1);
    TEST_EQ_INT(collector_control_dir(buf, sizeof buf), 0);
    TEST_EQ_STR(buf, want);
    setenv("TLVIEW_CONTROL_DIR", "/run/x", 1);
    TEST_EQ_INT(collector_control_dir(buf, sizeof buf), 0);
    TEST_EQ_STR(buf, "/run/x");
    TEST_EQ_INT(collector_control_dir(buf, 4), -1);
    setenv("TLVIEW_CONTROL_DIR", "off", 1);
    TEST_EQ_INT(collector_control_dir(buf, sizeof buf), 1);
    TEST_EQ_STR(buf, "");
    return 0;
}

/* Both ends in one process: a request with a name, an ok and an error reply, a reply nobody
 * waits for, a wait that times out, and the FIFO gone at close. */
int test_control_roundtrip(void)
{
    collector_control *srv = NULL;
    char err[512] = "", reply[512];
    long pid = 4242;
    TEST_EQ_INT(collector_control_open(ctl_dir(), pid, &srv, err, sizeof err), 0);
    char fifo[4300];
    snprintf(fifo, sizeof fifo, "%s/4242.ctl", ctl_dir());
    TEST_EQ_STR(collector_control_path(srv), fifo);
    struct stat st;
    TEST_EQ_INT(stat(ctl_dir(), &st), 0);
    TEST_EQ_INT(st.st_mode & 0777, 0700);
    collector_request req;
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 0); /* nothing yet */

    collector_control_call *call = NULL;
    TEST_EQ_INT(collector_control_send(ctl_dir(), pid, COLLECTOR_CONTROL_START, "slow one", &call,
                                       err, sizeof err),
                0);
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 1);
    TEST_EQ_INT(req.cmd, COLLECTOR_CONTROL_START);
    TEST_EQ_STR(req.arg, "slow one");
    TEST_EQ_INT(collector_control_reply(srv, &req, "ok capturing: range 1 opened"), 0);
    TEST_EQ_INT(collector_control_wait(call, 2000, reply, sizeof reply), 1);
    TEST_EQ_STR(reply, "capturing: range 1 opened");
    collector_control_call_free(call);

    TEST_EQ_INT(collector_control_send(ctl_dir(), pid, COLLECTOR_CONTROL_STOP, NULL, &call, err,
                                       sizeof err),
                0);
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 1);
    TEST_EQ_INT(req.cmd, COLLECTOR_CONTROL_STOP);
    TEST_EQ_INT(collector_control_reply(srv, &req, "error not today"), 0);
    TEST_EQ_INT(collector_control_wait(call, 2000, reply, sizeof reply), 0);
    TEST_EQ_STR(reply, "not today");
    collector_control_call_free(call);

    /* No reply: the wait ends at its time limit and says so. */
    TEST_EQ_INT(collector_control_send(ctl_dir(), pid, COLLECTOR_CONTROL_STATUS, NULL, &call, err,
                                       sizeof err),
                0);
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    TEST_EQ_INT(collector_control_wait(call, 200, reply, sizeof reply), -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    TEST_ASSERT(ms >= 190 && ms < 1000);
    TEST_ASSERT(strstr(reply, "no reply in time"));
    collector_control_call_free(call); /* the requester is gone: its reply FIFO too */
    TEST_EQ_INT(collector_control_reply(srv, &req, "ok late"), -1);

    collector_control_close(srv);
    TEST_EQ_INT(access(fifo, F_OK), -1);
    TEST_EQ_INT(collector_control_send(ctl_dir(), pid, COLLECTOR_CONTROL_STOP, NULL, &call, err,
                                       sizeof err),
                -1);
    TEST_ASSERT(strstr(err, "no collector listening"));
    return 0;
}

/* A pid that has ended (reaped). */
static pid_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

/* "No collector listening", told apart: no FIFO, a stale FIFO of an ended process (removed), a
 * live process whose FIFO nobody reads. */
int test_control_nobody_listens(void)
{
    collector_control *srv = NULL;
    char err[1024] = "", want[5000], fifo[4300];
    /* makes the folder */
    TEST_EQ_INT(collector_control_open(ctl_dir(), 1, &srv, err, sizeof err), 0);
    collector_control_close(srv);
    collector_control_call *call = NULL;
    pid_t dead = dead_pid();
    TEST_EQ_INT(collector_control_send(ctl_dir(), dead, COLLECTOR_CONTROL_START, NULL, &call, err,
                                       sizeof err),
                -1);
    snprintf(want, sizeof want,
             "no collector listening (%s/%ld.ctl does not exist: no such process)", ctl_dir(),
             (long)dead);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(collector_control_send(ctl_dir(), getpid(), COLLECTOR_CONTROL_START, NULL, &call,
                                       err, sizeof err),
                -1);
    snprintf(want, sizeof want,
             "no collector listening (%s/%ld.ctl does not exist: the process is not traced by "
             "libcollect, or it was started with another TLVIEW_CONTROL_DIR or "
             "TLVIEW_CONTROL_DIR=off)",
             ctl_dir(), (long)getpid());
    TEST_EQ_STR(err, want);
    /* A killed collector's FIFO stays behind. */
    snprintf(fifo, sizeof fifo, "%s/%ld.ctl", ctl_dir(), (long)dead);
    TEST_EQ_INT(mkfifo(fifo, 0600), 0);
    TEST_EQ_INT(collector_control_send(ctl_dir(), dead, COLLECTOR_CONTROL_STOP, NULL, &call, err,
                                       sizeof err),
                -1);
    snprintf(want, sizeof want,
             "no collector listening (no such process; its stale %s was removed)", fifo);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(access(fifo, F_OK), -1);
    snprintf(fifo, sizeof fifo, "%s/%ld.ctl", ctl_dir(), (long)getpid());
    TEST_EQ_INT(mkfifo(fifo, 0600), 0);
    TEST_EQ_INT(collector_control_send(ctl_dir(), getpid(), COLLECTOR_CONTROL_STOP, NULL, &call,
                                       err, sizeof err),
                -1);
    snprintf(want, sizeof want, "no collector listening (nothing reads %s)", fifo);
    TEST_EQ_STR(err, want);
    TEST_EQ_INT(access(fifo, F_OK), 0); /* its process lives: left alone */
    /* A regular file of that name is not written into. */
    unlink(fifo);
    FILE *f = fopen(fifo, "w");
    TEST_ASSERT(f);
    fclose(f);
    TEST_EQ_INT(collector_control_send(ctl_dir(), getpid(), COLLECTOR_CONTROL_STOP, NULL, &call,
                                       err, sizeof err),
                -1);
    snprintf(want, sizeof want, "%s is not a FIFO of this user: not a collector's", fifo);
    TEST_EQ_STR(err, want);
    struct stat st;
    TEST_EQ_INT(stat(fifo, &st), 0);
    TEST_EQ_INT(st.st_size, 0);
    return 0;
}

/* The collector's side never trusts a folder others may write, takes over a stale FIFO of its
 * own pid, and skips malformed, over-long and unfinished lines, going on with the next. */
int test_control_server_guards(void)
{
    char err[1024] = "", dir[4300], link[4300];
    collector_control *srv = NULL;
    snprintf(dir, sizeof dir, "%s/open", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0700), 0);
    TEST_EQ_INT(chmod(dir, 0777), 0);
    TEST_EQ_INT(collector_control_open(dir, 7, &srv, err, sizeof err), -1);
    char want[5000];
    snprintf(want, sizeof want,
             "control folder refused: %s: every user may write into the folder (mode 0777)", dir);
    TEST_EQ_STR(err, want);
    TEST_ASSERT(srv == NULL);
    snprintf(link, sizeof link, "%s/link", test_tmpdir());
    TEST_EQ_INT(symlink(ctl_dir(), link), 0);
    TEST_EQ_INT(collector_control_open(ctl_dir(), 7, &srv, err, sizeof err), 0); /* makes it */
    collector_control_close(srv);
    TEST_EQ_INT(collector_control_open(link, 7, &srv, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "(a symbolic link)"));
    snprintf(dir, sizeof dir, "%s/nope/deeper", test_tmpdir());
    TEST_EQ_INT(collector_control_open(dir, 7, &srv, err, sizeof err), -1);
    TEST_ASSERT(strstr(err, "cannot create the control folder") && strstr(err, "No such file"));

    /* A stale FIFO of this pid (an ended process that had it) is replaced. */
    char fifo[4300];
    snprintf(fifo, sizeof fifo, "%s/7.ctl", ctl_dir());
    TEST_EQ_INT(mkfifo(fifo, 0600), 0);
    TEST_EQ_INT(collector_control_open(ctl_dir(), 7, &srv, err, sizeof err), 0);
    /* Raw lines from a writer that keeps the FIFO open. */
    int w = open(fifo, O_WRONLY | O_NONBLOCK);
    TEST_ASSERT(w >= 0);
    char big[6000];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\n';
    TEST_EQ_INT(write(w, "jump tok\n", 9), 9);
    TEST_EQ_INT(write(w, big, sizeof big), (long)sizeof big);
    TEST_EQ_INT(write(w, "status ok1\nsta", 14), 14);
    collector_request req;
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), -1);
    TEST_EQ_STR(err, "unknown command 'jump'");
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), -1);
    TEST_EQ_STR(err, "a request longer than 512 bytes (skipped)");
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 1);
    TEST_EQ_STR(req.token, "ok1");
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 0); /* "sta" waits */
    TEST_EQ_INT(write(w, "tus ok2\n", 8), 8);
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 1);
    TEST_EQ_STR(req.token, "ok2");
    TEST_EQ_INT(write(w, "stop half", 9), 9);
    close(w); /* ... and the writer goes: the half line never ends */
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), -1);
    TEST_EQ_STR(err, "a request without its end of line (skipped)");
    TEST_EQ_INT(collector_control_poll(srv, &req, err, sizeof err), 0);
    collector_control_close(srv);
    return 0;
}

static int run_tlview(char *out, size_t on, char *err, size_t en, const char *const *args);

/* 2026-12-07 (issue 28): the client trusted the control folder: in a folder other users may
 * write, or through a link, or to a FIFO of another user, `tlview capture` wrote its request
 * (and `list` listed their FIFOs). Each is refused now, the folder before anything else. */
int test_control_client_guards(void)
{
    char err[1024] = "", dir[4300], fifo[4400], want[5000];
    collector_control_call *call = NULL;
    snprintf(dir, sizeof dir, "%s/open", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0700), 0);
    snprintf(fifo, sizeof fifo, "%s/%ld.ctl", dir, (long)getpid());
    TEST_EQ_INT(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* someone listens: only the folder refuses */
    TEST_ASSERT(rd >= 0);
    TEST_EQ_INT(chmod(dir, 0777), 0);
    TEST_EQ_INT(collector_control_send(dir, getpid(), COLLECTOR_CONTROL_STATUS, NULL, &call, err,
                                       sizeof err),
                -1);
    snprintf(want, sizeof want,
             "control folder refused: %s: every user may write into the folder (mode 0777)", dir);
    TEST_EQ_STR(err, want);
    char buf[64];
    TEST_ASSERT(read(rd, buf, sizeof buf) <= 0); /* nothing was written */
    char out[4096], e2[4096], pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    const char *a1[] = {"list", "--dir", dir, NULL}, *a2[] = {"status", "--dir", dir, pid, NULL};
    for (int i = 0; i < 2; i++) {
        TEST_EQ_INT(run_tlview(out, sizeof out, e2, sizeof e2, i ? a2 : a1), 1);
        TEST_EQ_STR(out, "");
        snprintf(want, sizeof want,
                 "tlview capture: control folder refused: %s: every user may write into the "
                 "folder (mode 0777) (name a folder of yours with --dir)\n",
                 dir);
        TEST_EQ_STR(e2, want);
    }
    close(rd);

    /* in the private folder: a link to a FIFO elsewhere is not followed */
    TEST_EQ_INT(chmod(dir, 0700), 0);
    TEST_EQ_INT(mkdir(ctl_dir(), 0700), 0);
    char link[4400];
    snprintf(link, sizeof link, "%s/%ld.ctl", ctl_dir(), (long)getpid() + 1);
    TEST_EQ_INT(symlink(fifo, link), 0);
    rd = open(fifo, O_RDONLY | O_NONBLOCK);
    TEST_EQ_INT(collector_control_send(ctl_dir(), getpid() + 1, COLLECTOR_CONTROL_STATUS, NULL,
                                       &call, err, sizeof err),
                -1);
    TEST_ASSERT(strstr(err, "Too many levels of symbolic links"));
    TEST_ASSERT(read(rd, buf, sizeof buf) <= 0);
    const char *a3[] = {"list", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, e2, sizeof e2, a3), 0);
    TEST_EQ_STR(out, ""); /* the link is no collector */
    close(rd);
    unlink(link);

    /* a FIFO of another user (root can make one) */
    if (geteuid() == 0) {
        snprintf(link, sizeof link, "%s/%ld.ctl", ctl_dir(), (long)getpid() + 2);
        TEST_EQ_INT(mkfifo(link, 0666), 0);
        TEST_EQ_INT(chown(link, 65534, 65534), 0);
        rd = open(link, O_RDONLY | O_NONBLOCK);
        TEST_EQ_INT(collector_control_send(ctl_dir(), getpid() + 2, COLLECTOR_CONTROL_STATUS, NULL,
                                           &call, err, sizeof err),
                    -1);
        snprintf(want, sizeof want, "%s is not a FIFO of this user: not a collector's", link);
        TEST_EQ_STR(err, want);
        TEST_ASSERT(read(rd, buf, sizeof buf) <= 0);
        close(rd);
    }
    return 0;
}

/* ---------------------------------------------------------------- tlview capture */

/* The fake collector: serves the FIFOs of pids[] until `stop`, answering each request as `mode`
 * says, and keeps the requests it saw ("<pid> <cmd> <arg>"). */
typedef struct fake {
    long pids[4];
    int npids;
    const char *mode; /* "ok": ok replies; "refuse": error replies; "mute": no replies */
    atomic_int stop;
    char seen[16][300];
    atomic_int nseen;
    collector_control *srv[4];
} fake;

static void *fake_main(void *arg)
{
    fake *f = arg;
    while (!atomic_load(&f->stop)) {
        for (int i = 0; i < f->npids; i++) {
            collector_request req;
            char err[256];
            int r;
            while ((r = collector_control_poll(f->srv[i], &req, err, sizeof err)) != 0) {
                if (r < 0)
                    continue;
                int n = atomic_load(&f->nseen);
                if (n < 16) {
                    snprintf(f->seen[n], sizeof f->seen[n], "%ld %s %s", f->pids[i],
                             collector_control_cmd_name(req.cmd), req.arg);
                    atomic_store(&f->nseen, n + 1);
                }
                char reply[400];
                if (!strcmp(f->mode, "mute"))
                    continue;
                if (!strcmp(f->mode, "refuse"))
                    snprintf(reply, sizeof reply, "error refused %s", req.arg);
                else
                    snprintf(reply, sizeof reply, "ok did %s %s",
                             collector_control_cmd_name(req.cmd), req.arg);
                collector_control_reply(f->srv[i], &req, reply);
            }
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int fake_start(fake *f, pthread_t *th)
{
    char err[512];
    for (int i = 0; i < f->npids; i++)
        if (collector_control_open(ctl_dir(), f->pids[i], &f->srv[i], err, sizeof err) != 0) {
            fprintf(stderr, "fake collector: %s\n", err);
            return -1;
        }
    return pthread_create(th, NULL, fake_main, f);
}

static void fake_end(fake *f, pthread_t th)
{
    atomic_store(&f->stop, 1);
    pthread_join(th, NULL);
    for (int i = 0; i < f->npids; i++)
        collector_control_close(f->srv[i]);
}

/* Runs tlview with args (NULL-terminated) and TLVIEW_CONTROL_DIR=ctl_dir(); stdout and stderr
 * into out/err. Returns the exit status. */
static int run_tlview(char *out, size_t on, char *err, size_t en, const char *const *args)
{
    char po[4300], pe[4300];
    snprintf(po, sizeof po, "%s/out.txt", test_tmpdir());
    snprintf(pe, sizeof pe, "%s/err.txt", test_tmpdir());
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        setenv("TLVIEW_CONTROL_DIR", ctl_dir(), 1);
        const char *argv[32] = {"tlview", "capture"};
        int n = 2;
        for (int i = 0; args[i] && n < 31; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(TLVIEW, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    const char *paths[2] = {po, pe};
    char *bufs[2] = {out, err};
    size_t sizes[2] = {on, en};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "r");
        size_t got = f ? fread(bufs[i], 1, sizes[i] - 1, f) : 0;
        bufs[i][got] = '\0';
        if (f)
            fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Every PID of the command gets its request before any reply is awaited; each reply is a line
 * "PID: ..."; a PID without a collector is said on stderr and makes the status 1. */
int test_control_cli_start_stop(void)
{
    fake f = {.pids = {31001, 31002}, .npids = 2, .mode = "ok"};
    pthread_t th;
    TEST_EQ_INT(fake_start(&f, &th), 0);
    char out[4096], err[4096];
    const char *a1[] = {"start", "--name", "slow at 3 am", "31001", "31002", NULL};
    int rc = run_tlview(out, sizeof out, err, sizeof err, a1);
    TEST_EQ_INT(rc, 0);
    TEST_EQ_STR(out, "31001: did start slow at 3 am\n31002: did start slow at 3 am\n");
    TEST_EQ_STR(err, "");
    pid_t dead = dead_pid();
    char deadarg[32], want[5000];
    snprintf(deadarg, sizeof deadarg, "%ld", (long)dead);
    const char *a2[] = {"stop", "31002", deadarg, NULL};
    rc = run_tlview(out, sizeof out, err, sizeof err, a2);
    TEST_EQ_INT(rc, 1);
    TEST_EQ_STR(out, "31002: did stop \n");
    snprintf(want, sizeof want,
             "tlview capture: %ld: no collector listening (%s/%ld.ctl does not exist: no such "
             "process)\n",
             (long)dead, ctl_dir(), (long)dead);
    TEST_EQ_STR(err, want);
    /* dump: a folder name made of the time, the same for every PID */
    const char *a3[] = {"dump", "31001", "31002", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, a3), 0);
    const char *a4[] = {"status", "-t", "3", "31001", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, a4), 0);
    TEST_EQ_STR(out, "31001: did status \n");
    fake_end(&f, th);
    TEST_EQ_INT(atomic_load(&f.nseen), 6);
    TEST_EQ_STR(f.seen[0], "31001 start slow at 3 am");
    TEST_EQ_STR(f.seen[2], "31002 stop ");
    TEST_ASSERT(!strncmp(f.seen[3], "31001 dump dump-20", 18) && strlen(f.seen[3]) == 31);
    TEST_EQ_STR(f.seen[3] + 6, f.seen[4] + 6); /* one name for both */
    TEST_EQ_STR(f.seen[5], "31001 status ");
    return 0;
}

/* A collector that refuses (status 1, on stderr), one that never answers (the time limit), and
 * `list`. */
int test_control_cli_refused_mute_list(void)
{
    fake f = {.pids = {32001}, .npids = 1, .mode = "refuse"};
    pthread_t th;
    TEST_EQ_INT(fake_start(&f, &th), 0);
    char out[4096], err[4096];
    const char *a1[] = {"start", "-n", "x", "32001", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, a1), 1);
    TEST_EQ_STR(out, "");
    TEST_EQ_STR(err, "tlview capture: 32001: refused x\n");
    fake_end(&f, th);

    fake m = {.pids = {32002, 32003}, .npids = 2, .mode = "mute"};
    TEST_EQ_INT(fake_start(&m, &th), 0);
    /* a stale FIFO of an ended process, and one nobody reads of a live one (ours) */
    char stale[4300], ours[4300];
    pid_t dead = dead_pid();
    snprintf(stale, sizeof stale, "%s/%ld.ctl", ctl_dir(), (long)dead);
    snprintf(ours, sizeof ours, "%s/%ld.ctl", ctl_dir(), (long)getpid());
    TEST_EQ_INT(mkfifo(stale, 0600), 0);
    TEST_EQ_INT(mkfifo(ours, 0600), 0);
    const char *a2[] = {"list", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, a2), 0);
    TEST_EQ_STR(out, "32002\n32003\n");
    TEST_EQ_INT(access(stale, F_OK), -1);
    TEST_EQ_INT(access(ours, F_OK), 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const char *a3[] = {"status", "--timeout", "1", "32002", "32003", NULL};
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, a3), 1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    TEST_ASSERT(s >= 0.9 && s < 2.5); /* one time limit for all the PIDs, not one each */
    TEST_EQ_STR(out, "");
    TEST_EQ_STR(err, "tlview capture: 32002: no reply in time (is the process stopped, or its "
                     "collector stuck?)\ntlview capture: 32003: no reply in time (is the process "
                     "stopped, or its collector stuck?)\n");
    fake_end(&m, th);
    /* the replies' FIFOs are gone with the calls */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c reply", ctl_dir());
    FILE *p = popen(cmd, "r");
    char n[16] = "";
    TEST_ASSERT(p && fgets(n, sizeof n, p));
    pclose(p);
    TEST_EQ_STR(n, "0\n");
    return 0;
}

static int usage(const char *const *args, const char *want)
{
    char out[4096], err[4096];
    TEST_EQ_INT(run_tlview(out, sizeof out, err, sizeof err, args), 2);
    TEST_ASSERT(strstr(err, want));
    TEST_EQ_STR(out, "");
    return 0;
}

int test_control_cli_usage(void)
{
    const char *a1[] = {"begin", "1", NULL};
    const char *a2[] = {"start", NULL};
    const char *a3[] = {"dump", "-n", "a/b", "1", NULL};
    const char *a4[] = {"stop", "-n", "x", "1", NULL};
    const char *a5[] = {"status", "12x", NULL};
    const char *a6[] = {"list", "5", NULL};
    const char *a7[] = {"start", "-t", "0", "1", NULL};
    const char *a8[] = {NULL};
    if (usage(a1, "tlview capture: 'begin' is not start, stop, dump, status or list") ||
        usage(a2, "tlview capture: no PID given") ||
        usage(a3, "tlview capture: bad --name: dump: the name may not hold '/'") ||
        usage(a4, "tlview capture: --name goes with start or dump") ||
        usage(a5, "tlview capture: '12x' is not a PID") ||
        usage(a6, "tlview capture: list takes no PID") ||
        usage(a7, "tlview capture: --timeout wants seconds from 1 to 86400") ||
        usage(a8, "tlview capture: say start, stop, dump, status or list"))
        return 1;
    /* TLVIEW_CONTROL_DIR=off: the collectors have no channel; --dir names one anyway */
    char out[4096], err[4096];
    setenv("TLVIEW_CONTROL_DIR", "off", 1);
    FILE *p = popen(TLVIEW " capture status 1 2>&1; echo rc=$?", "r");
    size_t got = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[got] = '\0';
    if (p)
        pclose(p);
    TEST_ASSERT(strstr(out, "tlview capture: TLVIEW_CONTROL_DIR=off: no control folder (name one "
                            "with --dir)"));
    TEST_ASSERT(strstr(out, "rc=2"));
    (void)err;
    return 0;
}
