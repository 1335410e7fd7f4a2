/* collector output names: TLVIEW_OUTPUT patterns in nvprof's manner (%p pid, %h host,
 * %q{VAR} an environment variable, %% a percent sign), and the creation of the file without
 * ever overwriting one: an existing output.1234.db makes output.1234.1.db. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector_int.h"

#define LOG_PREFIX "pattern"

/* Appends text[0..n) to out at *pos; returns -1 when it does not fit. */
static int put(char *out, size_t size, size_t *pos, const char *text, size_t n)
{
    if (*pos + n >= size) {
        size_t room = size - 1 - *pos;
        memcpy(out + *pos, text, room);
        *pos += room;
        out[*pos] = '\0';
        return -1;
    }
    memcpy(out + *pos, text, n);
    *pos += n;
    out[*pos] = '\0';
    return 0;
}

int collector_pattern_expand(const char *pattern, char *out, size_t size)
{
    size_t pos = 0;
    if (size == 0)
        return -1;
    out[0] = '\0';
    for (const char *p = pattern; *p;) {
        if (p[0] != '%' || p[1] == '\0') {
            const char *next = strchr(p + 1, '%');
            size_t n = next ? (size_t)(next - p) : strlen(p);
            if (put(out, size, &pos, p, n))
                return -1;
            p += n;
            continue;
        }
        char buf[HOST_NAME_MAX + 32];
        const char *text = NULL;
        size_t n = 0, used = 2;
        switch (p[1]) {
        case 'p':
            n = (size_t)snprintf(buf, sizeof buf, "%ld", (long)getpid());
            text = buf;
            break;
        case 'h':
            if (gethostname(buf, sizeof buf) != 0)
                snprintf(buf, sizeof buf, "unknown-host");
            buf[sizeof buf - 1] = '\0';
            text = buf;
            n = strlen(buf);
            break;
        case '%':
            text = "%";
            n = 1;
            break;
        case 'q': {
            const char *close = p[2] == '{' ? strchr(p + 3, '}') : NULL;
            if (close && (size_t)(close - p - 3) < sizeof buf) {
                memcpy(buf, p + 3, (size_t)(close - p - 3));
                buf[close - p - 3] = '\0';
                text = getenv(buf);
                if (!text)
                    text = "";
                n = strlen(text);
                used = (size_t)(close - p) + 1;
            } else {
                text = p; /* "%q" without {VAR} is copied as is */
                n = 2;
            }
            break;
        }
        default:
            text = p;
            n = 2;
            break;
        }
        if (put(out, size, &pos, text, n))
            return -1;
        p += used;
    }
    return 0;
}

int collector_numbered_path(const char *path, unsigned n, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = path + strlen(path);
    int len = snprintf(out, size, "%.*s.%u%s", (int)(dot - path), path, n, dot);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

/* Checks the folder that will hold `path` up front, so the message names a reason a user
 * understands rather than SQLite's "unable to open database file". */
static int check_folder(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    const char *reason = NULL;
    if (stat(dir, &st) != 0)
        reason = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        reason = strerror(ENOTDIR);
    else if (access(dir, W_OK | X_OK) != 0)
        reason = strerror(errno);
    if (reason) {
        log_err("cannot write %s: folder %s: %s; tracing disabled (the application runs on)", path,
                dir, reason);
        return -1;
    }
    return 0;
}

int collector_output_open(const char *pattern, store_clock clock, int64_t t0, store_writer **ppW)
{
    char first[PATH_MAX], path[PATH_MAX];
    *ppW = NULL;
    if (collector_pattern_expand(pattern, first, sizeof first) != 0 || !first[0]) {
        log_err("TLVIEW_OUTPUT=%s gives an empty or too long file name; tracing disabled", pattern);
        return -1;
    }
    if (check_folder(first) != 0)
        return -1;
    snprintf(path, sizeof path, "%s", first);
    for (unsigned n = 1; n <= 10000; n++) {
        store_writer *w = NULL;
        int rc = store_writer_open(path, clock, t0, &w);
        if (rc == STORE_OK) {
            if (n > 1)
                log_warn("%s exists; writing %s instead", first, path);
            *ppW = w;
            return 0;
        }
        if (rc != STORE_EEXIST) {
            log_err("cannot write %s: %s; tracing disabled (the application runs on)", path,
                    w ? store_writer_errmsg(w) : "out of memory");
            store_writer_close(w);
            return -1;
        }
        store_writer_close(w);
        if (collector_numbered_path(first, n, path, sizeof path) != 0)
            break;
    }
    log_err("%s and its numbered variants all exist; tracing disabled", first);
    return -1;
}
