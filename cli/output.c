/* output.c: how merge, import and export write their output file so that no failure loses data.
 * The new content goes to a file in a private folder made beside the target (".NAME.tlview-XXXXXX":
 * the same file system, so the final rename is atomic), is flushed and fsync'ed, and only then
 * renamed over the target, and the target's folder fsync'ed. On any failure (a full disk, a
 * write error, Ctrl-C) the private folder and all in it (the file, SQLite's -wal/-shm/-journal)
 * are removed and the target is left as it was. The inputs are all read before anything is
 * renamed, so `merge -f -o a.db a.db b.db` replaces a.db only with a complete merge.
 * Only regular files are ever replaced: a symbolic link, device, fifo, socket or folder at the
 * target is refused even with --force, never written through and never unlinked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define SIDE_FILES 3 /* what SQLite may leave beside a database */
static const char *const side_suffix[SIDE_FILES] = {"-wal", "-shm", "-journal"};

/* The signals that end the process while an output is being written, and what they did before. */
static const int end_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NEND (sizeof end_signals / sizeof end_signals[0])

struct cli_output {
    char cmd[32];                         /* the subcommand, for messages */
    const char *target;                   /* the path the user named (not owned) */
    char parent[PATH_MAX];                /* the folder of target */
    char dir[PATH_MAX];                   /* the private folder beside it */
    char path[PATH_MAX];                  /* the file written in it */
    char side[SIDE_FILES][PATH_MAX + 16]; /* path-wal, path-shm, path-journal */
    FILE *f;                              /* the stream of cli_output_begin(.., &f), or NULL */
    int force;                            /* --force: an existing regular file is replaced */
    int existed;                          /* the target was there when begin looked */
    mode_t mode;                          /* its permissions, which the new file takes */
    struct sigaction old[NEND], old_xfsz; /* dispositions to restore */
    int caught[NEND];                     /* whether old[i] was replaced */
};

/* The output being written: a signal that ends the process removes its files first. */
static cli_output *volatile active;

/* Removes the private folder and what may be in it. Async-signal-safe (unlink, rmdir only).
 * Returns rmdir's result. */
static int remove_files(const cli_output *o)
{
    unlink(o->path);
    for (int i = 0; i < SIDE_FILES; i++)
        unlink(o->side[i]);
    return rmdir(o->dir);
}

static void on_end_signal(int sig)
{
    cli_output *o = active;
    if (o)
        remove_files(o);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered when this handler returns: the process ends by the signal */
}

/* While an output is written: Ctrl-C and friends remove it, and a file size limit (ulimit -f)
 * is a write error (EFBIG) instead of SIGXFSZ ending the process with its files left behind.
 * Signals the process already handles or ignores are left alone. */
static void catch_signals(cli_output *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_end_signal;
    active = o;
    for (size_t i = 0; i < NEND; i++)
        if (sigaction(end_signals[i], NULL, &o->old[i]) == 0 && o->old[i].sa_handler == SIG_DFL)
            o->caught[i] = sigaction(end_signals[i], &sa, NULL) == 0;
    sa.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &sa, &o->old_xfsz);
}

static void release_signals(cli_output *o)
{
    for (size_t i = 0; i < NEND; i++)
        if (o->caught[i])
            sigaction(end_signals[i], &o->old[i], NULL);
    sigaction(SIGXFSZ, &o->old_xfsz, NULL);
    active = NULL;
}

/* The folder of path (parent, size PATH_MAX) and its last component (*pBase, inside path).
 * Returns -1 when path is too long or names no file ("", "out/"). */
static int split_path(const char *path, char *parent, const char **pBase)
{
    const char *slash = strrchr(path, '/');
    *pBase = slash ? slash + 1 : path;
    if (!**pBase || strlen(path) >= PATH_MAX)
        return -1;
    if (!slash)
        snprintf(parent, PATH_MAX, ".");
    else if (slash == path)
        snprintf(parent, PATH_MAX, "/");
    else
        snprintf(parent, PATH_MAX, "%.*s", (int)(slash - path), path);
    return 0;
}

/* 0 when the target may be written: absent, or a regular file and force. Otherwise prints why
 * and returns 1. */
static int check_target(const char *cmd, const char *path, int force)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0; /* absent; any other problem shows when the file is put in place */
    if (S_ISLNK(st.st_mode))
        cli_msg(stderr,
                "tlview %s: %s is a symbolic link: tlview does not write through links (name the "
                "file it points to)\n",
                cmd, path);
    else if (!S_ISREG(st.st_mode))
        cli_msg(stderr,
                "tlview %s: %s is %s, not a regular file: tlview only writes regular files\n", cmd,
                path, store_fs_kind(st.st_mode));
    else if (!force)
        cli_msg(stderr, "tlview %s: %s already exists (use --force to overwrite)\n", cmd, path);
    else
        return 0;
    return 1;
}

int cli_refuse_existing(const char *cmd, const char *path, int force)
{
    char parent[PATH_MAX];
    const char *base;
    if (check_target(cmd, path, force))
        return 1;
    if (split_path(path, parent, &base) != 0) {
        cli_msg(stderr, "tlview %s: %s: not a file name\n", cmd, path);
        return 1;
    }
    if (access(parent, W_OK | X_OK) != 0) {
        cli_msg(stderr, "tlview %s: cannot write %s: %s: %s\n", cmd, path, parent, strerror(errno));
        return 1;
    }
    return 0;
}

cli_output *cli_output_begin(const char *cmd, const char *target, int force, FILE **ppFile)
{
    const char *base;
    if (ppFile)
        *ppFile = NULL;
    if (cli_refuse_existing(cmd, target, force))
        return NULL;
    cli_output *o = calloc(1, sizeof *o);
    if (!o) {
        cli_msg(stderr, "tlview %s: out of memory\n", cmd);
        return NULL;
    }
    snprintf(o->cmd, sizeof o->cmd, "%s", cmd);
    o->target = target;
    o->force = force;
    struct stat st;
    o->existed = lstat(target, &st) == 0; /* a regular file: cli_refuse_existing() checked */
    o->mode = o->existed ? st.st_mode & 07777 : 0;
    split_path(target, o->parent, &base); /* checked by cli_refuse_existing */
    /* the private folder takes at most 200 bytes of the name: a name of NAME_MAX bytes must
     * still leave room for its dot and suffix */
    if (snprintf(o->dir, sizeof o->dir, "%s/.%.200s.tlview-XXXXXX", o->parent, base) >=
            (int)sizeof o->dir ||
        snprintf(o->path, sizeof o->path, "%s/%s", o->dir, base) >= (int)sizeof o->path) {
        cli_msg(stderr, "tlview %s: cannot write %s: %s\n", cmd, target, strerror(ENAMETOOLONG));
        free(o);
        return NULL;
    }
    for (int i = 0; i < SIDE_FILES; i++)
        snprintf(o->side[i], sizeof o->side[i], "%s%s", o->path, side_suffix[i]);
    /* caught before the folder exists, so that no signal can leave it behind */
    catch_signals(o);
    if (!mkdtemp(o->dir)) {
        int e = errno;
        release_signals(o);
        cli_msg(stderr, "tlview %s: cannot write %s: cannot make a temporary folder in %s: %s\n",
                cmd, target, o->parent, strerror(e));
        free(o);
        return NULL;
    }
    /* mkdtemp() filled in the XXXXXX: the same in the names of the files inside */
    size_t n = strlen(o->dir);
    memcpy(o->path, o->dir, n);
    for (int i = 0; i < SIDE_FILES; i++)
        memcpy(o->side[i], o->dir, n);
    if (ppFile && !(o->f = fopen(o->path, "wx"))) {
        cli_output_finish(o, strerror(errno));
        return NULL;
    }
    if (ppFile)
        *ppFile = o->f;
    return o;
}

const char *cli_output_path(const cli_output *o)
{
    return o->path;
}

/* Makes the written file durable: flushes and closes the stream, fsyncs the file. Returns "" or
 * why it failed (in why, size n). */
static const char *sync_file(cli_output *o, char *why, size_t n)
{
    why[0] = 0;
    if (o->f) {
        errno = 0;
        if (fflush(o->f) != 0 || ferror(o->f))
            snprintf(why, n, "%s", errno ? strerror(errno) : "write error");
        else if (fsync(fileno(o->f)) != 0)
            snprintf(why, n, "cannot sync: %s", strerror(errno));
        if (fclose(o->f) != 0 && !why[0])
            snprintf(why, n, "%s", strerror(errno));
        o->f = NULL;
        return why;
    }
    int fd = open(o->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0)
        snprintf(why, n, "cannot sync: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return why;
}

/* Renames the file over the target: atomically refusing a target that appeared meanwhile unless
 * force. Returns 0 or an errno value (EEXIST: the target appeared). */
static int put_in_place(const cli_output *o)
{
    if (o->force)
        return rename(o->path, o->target) == 0 ? 0 : errno;
    if (renameat2(AT_FDCWD, o->path, AT_FDCWD, o->target, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return errno;
    /* a file system without RENAME_NOREPLACE: link() refuses an existing name too */
    if (link(o->path, o->target) != 0)
        return errno;
    unlink(o->path);
    return 0;
}

int cli_output_finish(cli_output *o, const char *error)
{
    char why[1024];
    int rc = 1, placed = 0;
    if (!o)
        return 1;
    if (o->f && error) {
        fclose(o->f);
        o->f = NULL;
    }
    if (!error && *sync_file(o, why, sizeof why))
        error = why;
    if (error) {
        size_t n = strlen(o->path); /* the store names the file it wrote: that is ours */
        if (!strncmp(error, o->path, n) && !strncmp(error + n, ": ", 2))
            error += n + 2;
        cli_msg(stderr, "tlview %s: cannot write %s: %s%s\n", o->cmd, o->target, error,
                o->existed ? " (the existing file is left as it was)" : "");
    } else if (check_target(o->cmd, o->target, o->force) == 0) {
        /* a file the user made private stays private */
        int e = o->existed && chmod(o->path, o->mode) != 0 ? errno : put_in_place(o);
        if (e == EEXIST && !o->force)
            check_target(o->cmd, o->target, 0); /* appeared meanwhile: the same refusal */
        else if (e)
            cli_msg(stderr, "tlview %s: cannot write %s: %s\n", o->cmd, o->target, strerror(e));
        placed = !e;
    }
    if (placed) {
        int fd = open(o->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0)
            cli_msg(stderr, "tlview %s: wrote %s but cannot sync its folder %s: %s\n", o->cmd,
                    o->target, o->parent, strerror(errno));
        else
            rc = 0;
        if (fd >= 0)
            close(fd);
    }
    if (remove_files(o) != 0)
        cli_msg(stderr, "tlview %s: cannot remove the temporary folder %s: %s\n", o->cmd, o->dir,
                strerror(errno));
    release_signals(o);
    free(o);
    return rc;
}
