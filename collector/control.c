/* collector control channel (control.h): the FIFO a traced process reads its capture commands
 * from, and the client calls `tlview capture` makes. Plain POSIX, no CUDA and no logging: the
 * collector (session.c) says what went wrong, the tlview binary links this file too. */
#define _GNU_SOURCE /* O_CLOEXEC, O_NOFOLLOW */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "store.h"

static const char *const cmd_names[] = {"start", "stop", "dump", "status"};

const char *collector_control_cmd_name(collector_control_cmd cmd)
{
    return (unsigned)cmd < sizeof cmd_names / sizeof cmd_names[0] ? cmd_names[cmd] : NULL;
}

int collector_control_dir(char *buf, size_t n)
{
    const char *env = getenv("TLVIEW_CONTROL_DIR");
    int len;
    if (env && !strcmp(env, "off")) {
        if (n)
            buf[0] = '\0';
        return 1;
    }
    if (env && *env)
        len = snprintf(buf, n, "%s", env);
    else
        len = snprintf(buf, n, "/tmp/tlview-%u", (unsigned)geteuid());
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int fifo_path(const char *dir, long pid, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s/%ld.ctl", dir, pid);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int reply_path(const char *dir, long pid, const char *token, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s/%ld.%s.reply", dir, pid, token);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int is_token_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

int collector_control_parse(const char *line, collector_request *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n = strcspn(line, " ");
    int cmd = -1;
    for (int i = 0; i < (int)(sizeof cmd_names / sizeof cmd_names[0]); i++)
        if (strlen(cmd_names[i]) == n && !strncmp(line, cmd_names[i], n))
            cmd = i;
    if (cmd < 0) {
        snprintf(err, errlen, "unknown command '%.*s'", (int)(n > 32 ? 32 : n), line);
        return -1;
    }
    out->cmd = (collector_control_cmd)cmd;
    const char *t = line + n + (line[n] == ' ');
    size_t tn = strcspn(t, " ");
    for (size_t i = 0; i < tn; i++)
        if (!is_token_char((unsigned char)t[i]))
            tn = 0;
    if (tn == 0 || tn > COLLECTOR_CONTROL_TOKEN_MAX) {
        snprintf(err, errlen, "%s: a token of 1 to %d letters, digits, '_' or '-' is needed",
                 cmd_names[cmd], COLLECTOR_CONTROL_TOKEN_MAX);
        return -1;
    }
    memcpy(out->token, t, tn);
    const char *arg = t + tn + (t[tn] == ' ');
    size_t an = strlen(arg);
    if (an > COLLECTOR_CONTROL_ARG_MAX) {
        snprintf(err, errlen, "%s: the name is longer than %d bytes", cmd_names[cmd],
                 COLLECTOR_CONTROL_ARG_MAX);
        return -1;
    }
    for (size_t i = 0; i < an; i++) {
        unsigned char c = (unsigned char)arg[i];
        int ok = out->cmd == COLLECTOR_CONTROL_DUMP ? is_token_char(c) || c == '.'
                                                    : c >= 0x20 && c != 0x7f;
        if (!ok || (out->cmd == COLLECTOR_CONTROL_DUMP && i == 0 && c == '.')) {
            char shown[8];
            if (c < 0x20 || c >= 0x7f)
                snprintf(shown, sizeof shown, "\\x%02x", c);
            else
                snprintf(shown, sizeof shown, "%c", c);
            snprintf(err, errlen, "%s: the name may not hold '%s'%s", cmd_names[cmd], shown,
                     out->cmd == COLLECTOR_CONTROL_DUMP
                         ? " (a folder name: letters, digits, '.', '_', '-', no leading '.')"
                         : "");
            return -1;
        }
    }
    if (an && (out->cmd == COLLECTOR_CONTROL_STOP || out->cmd == COLLECTOR_CONTROL_STATUS)) {
        snprintf(err, errlen, "%s takes no name", cmd_names[cmd]);
        return -1;
    }
    memcpy(out->arg, arg, an);
    return 0;
}

/* ---------------------------------------------------------------- the collector's side */

struct collector_control {
    int fd;          /* the FIFO, read end, non-blocking */
    char dir[4096];  /* the control folder */
    char path[4200]; /* dir/<pid>.ctl */
    long pid;        /* the process that made it */
    char buf[4096];  /* bytes read, not yet a whole line */
    size_t len;      /* bytes in buf */
    int skipping;    /* inside an over-long line: drop bytes up to its '\n' */
};

/* Checks that `dir` is a folder of this user that nobody else may write (store_fs_check_dir());
 * `create`: makes it first when absent (the collector; a client never makes it). */
static int private_dir(const char *dir, int create, char *err, size_t errlen)
{
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the control folder %s: %s", dir, strerror(errno));
        return -1;
    }
    char why[4400];
    if (store_fs_check_dir(dir, STORE_FS_WRITABLE, why, sizeof why) != 0) {
        snprintf(err, errlen, "control folder refused: %s", why);
        return -1;
    }
    return 0;
}

int collector_control_check_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0 && errno == ENOENT)
        return 0;
    return private_dir(dir, 0, err, errlen);
}

int collector_control_open(const char *dir, long pid, collector_control **ppC, char *err,
                           size_t errlen)
{
    *ppC = NULL;
    collector_control *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->fd = -1;
    c->pid = pid;
    if (snprintf(c->dir, sizeof c->dir, "%s", dir) >= (int)sizeof c->dir ||
        fifo_path(dir, pid, c->path, sizeof c->path) != 0) {
        snprintf(err, errlen, "the control folder's name is too long");
        free(c);
        return -1;
    }
    if (private_dir(dir, 1, err, errlen) != 0) {
        free(c);
        return -1;
    }
    if (mkfifo(c->path, 0600) != 0 && errno == EEXIST) {
        /* Left by an ended process that had this pid (killed before it could remove it). */
        struct stat st;
        if (lstat(c->path, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_uid == geteuid())
            unlink(c->path);
        errno = EEXIST;
        if (mkfifo(c->path, 0600) == 0)
            errno = 0;
    } else {
        errno = 0;
    }
    if (errno) {
        snprintf(err, errlen, "cannot create %s: %s", c->path, strerror(errno));
        free(c);
        return -1;
    }
    c->fd = open(c->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (c->fd < 0 || fstat(c->fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, errlen, "cannot open %s: %s", c->path,
                 c->fd < 0 ? strerror(errno) : "not a FIFO of this user");
        if (c->fd >= 0)
            close(c->fd);
        unlink(c->path);
        free(c);
        return -1;
    }
    *ppC = c;
    return 0;
}

const char *collector_control_path(const collector_control *c)
{
    return c->path;
}

/* Takes the first whole line out of c->buf into line (its '\n' dropped); 1 when there was one. */
static int take_line(collector_control *c, char *line, size_t n)
{
    char *nl = memchr(c->buf, '\n', c->len);
    if (!nl)
        return 0;
    size_t len = (size_t)(nl - c->buf);
    size_t keep = len < n ? len : n - 1;
    memcpy(line, c->buf, keep);
    line[keep] = '\0';
    memmove(c->buf, nl + 1, c->len - len - 1);
    c->len -= len + 1;
    return 1;
}

int collector_control_poll(collector_control *c, collector_request *req, char *err, size_t errlen)
{
    for (;;) {
        char line[COLLECTOR_CONTROL_LINE_MAX];
        if (take_line(c, line, sizeof line)) {
            if (c->skipping) {
                c->skipping = 0;
                snprintf(err, errlen, "a request longer than %d bytes (skipped)",
                         COLLECTOR_CONTROL_LINE_MAX);
                return -1;
            }
            if (strlen(line) >= COLLECTOR_CONTROL_LINE_MAX - 1) {
                snprintf(err, errlen, "a request longer than %d bytes (skipped)",
                         COLLECTOR_CONTROL_LINE_MAX);
                return -1;
            }
            return collector_control_parse(line, req, err, errlen) == 0 ? 1 : -1;
        }
        if (c->len == sizeof c->buf) { /* no '\n' in a full buffer: drop to the next one */
            c->len = 0;
            c->skipping = 1;
        }
        ssize_t got = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got > 0) {
            c->len += (size_t)got;
            continue;
        }
        if (got == 0 && c->len) {
            /* every writer is gone, leaving part of a line: it never ends */
            c->len = 0;
            c->skipping = 0;
            snprintf(err, errlen, "a request without its end of line (skipped)");
            return -1;
        }
        if (got < 0 && errno == EINTR)
            continue;
        return 0;
    }
}

int collector_control_reply(collector_control *c, const collector_request *req, const char *text)
{
    char path[4400], line[COLLECTOR_CONTROL_LINE_MAX];
    if (reply_path(c->dir, c->pid, req->token, path, sizeof path) != 0)
        return -1;
    int len = snprintf(line, sizeof line, "%s\n", text);
    if (len < 0)
        return -1;
    if ((size_t)len >= sizeof line) { /* cut, keeping the end of line */
        len = (int)sizeof line - 1;
        line[len - 1] = '\n';
    }
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1; /* ENXIO: nobody reads it any more; ENOENT: gone */
    struct stat st;
    ssize_t w = -1;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        w = write(fd, line, (size_t)len); /* < PIPE_BUF: all or nothing */
    close(fd);
    return w == len ? 0 : -1;
}

void collector_control_close(collector_control *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    unlink(c->path);
    free(c);
}

/* ---------------------------------------------------------------- the client's side */

struct collector_control_call {
    int fd;          /* the reply FIFO, opened read-write: never at end of file while waited on */
    char path[4400]; /* the reply FIFO */
    char buf[COLLECTOR_CONTROL_LINE_MAX];
    size_t len;
};

int collector_control_send(const char *dir, long pid, collector_control_cmd cmd, const char *arg,
                           collector_control_call **ppCall, char *err, size_t errlen)
{
    static unsigned counter;
    *ppCall = NULL;
    char fifo[4200], line[COLLECTOR_CONTROL_LINE_MAX + 64], token[COLLECTOR_CONTROL_TOKEN_MAX];
    if (!collector_control_cmd_name(cmd) || fifo_path(dir, pid, fifo, sizeof fifo) != 0) {
        snprintf(err, errlen, "bad command or control folder");
        return -1;
    }
    if (collector_control_check_dir(dir, err, errlen) != 0)
        return -1; /* a folder another user may write: its FIFOs may be anybody's */
    int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno, alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
        if (e == ENOENT)
            snprintf(err, errlen, "no collector listening (%s does not exist: %s)", fifo,
                     alive ? "the process is not traced by libcollect, or it was started with "
                             "another TLVIEW_CONTROL_DIR or TLVIEW_CONTROL_DIR=off"
                           : "no such process");
        else if (e == ENXIO && !alive) {
            unlink(fifo);
            snprintf(err, errlen,
                     "no collector listening (no such process; its stale %s was removed)", fifo);
        } else if (e == ENXIO)
            snprintf(err, errlen, "no collector listening (nothing reads %s)", fifo);
        else
            snprintf(err, errlen, "cannot open %s: %s", fifo, strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s is not a FIFO of this user: not a collector's", fifo);
        close(fd);
        return -1;
    }
    collector_control_call *call = calloc(1, sizeof *call);
    if (!call) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(token, sizeof token, "%ld-%u-%lx", (long)getpid(), ++counter,
             (unsigned long)(ts.tv_nsec ^ ts.tv_sec));
    call->fd = -1;
    if (reply_path(dir, pid, token, call->path, sizeof call->path) != 0 ||
        mkfifo(call->path, 0600) != 0 ||
        (call->fd = open(call->path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)) < 0) {
        snprintf(err, errlen, "cannot make the reply FIFO %s: %s", call->path, strerror(errno));
        collector_control_call_free(call);
        close(fd);
        return -1;
    }
    int len = snprintf(line, sizeof line, "%s %s%s%s\n", collector_control_cmd_name(cmd), token,
                       arg && *arg ? " " : "", arg && *arg ? arg : "");
    if (len < 0 || len > COLLECTOR_CONTROL_LINE_MAX) {
        snprintf(err, errlen, "the name is too long");
        collector_control_call_free(call);
        close(fd);
        return -1;
    }
    ssize_t w = write(fd, line, (size_t)len); /* < PIPE_BUF: all or nothing */
    int e = errno;
    close(fd);
    if (w != len) {
        snprintf(err, errlen, "cannot send the request to %s: %s", fifo,
                 e == EAGAIN ? "its collector does not read its requests" : strerror(e));
        collector_control_call_free(call);
        return -1;
    }
    *ppCall = call;
    return 0;
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int collector_control_wait(collector_control_call *call, int timeout_ms, char *reply, size_t n)
{
    long long deadline = mono_ms() + timeout_ms;
    for (;;) {
        char *nl = memchr(call->buf, '\n', call->len);
        if (nl) {
            *nl = '\0';
            int ok = !strncmp(call->buf, "ok ", 3) || !strcmp(call->buf, "ok");
            int bad = !strncmp(call->buf, "error ", 6);
            snprintf(reply, n, "%s",
                     ok    ? call->buf + (call->buf[2] ? 3 : 2)
                     : bad ? call->buf + 6
                           : call->buf);
            return ok ? 1 : 0;
        }
        long long left = deadline - mono_ms();
        if (left <= 0 || call->len == sizeof call->buf) {
            snprintf(reply, n, "%s",
                     call->len == sizeof call->buf ? "the reply is too long"
                                                   : "no reply in time (is the process stopped, "
                                                     "or its collector stuck?)");
            return -1;
        }
        struct pollfd p = {call->fd, POLLIN, 0};
        if (poll(&p, 1, (int)left) > 0) {
            ssize_t got = read(call->fd, call->buf + call->len, sizeof call->buf - call->len);
            if (got > 0)
                call->len += (size_t)got;
        }
    }
}

void collector_control_call_free(collector_control_call *call)
{
    if (!call)
        return;
    if (call->fd >= 0)
        close(call->fd);
    unlink(call->path);
    free(call);
}
