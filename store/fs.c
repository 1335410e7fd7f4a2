/* fs.c: files in folders others may write, opened one safe way for every command (store.h,
 * "files and folders"): reading opens regular files only, without ever blocking on a FIFO or a
 * device (O_NONBLOCK, then the check on the opened descriptor: no race between the check and
 * the open); writing never follows a link nor reuses a name someone else made; shared folders
 * are checked for owner and mode; and SQLite's own opens go through the same checks. */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

/* The message, "PATH: ..." (printf-style) into err (errlen bytes; err may be NULL). Returns -1. */
__attribute__((format(printf, 3, 4))) static int say(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *store_fs_kind(unsigned mode)
{
    mode_t m = (mode_t)mode;
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a folder"
           : S_ISLNK(m)  ? "a symbolic link"
           : S_ISREG(m)  ? "a regular file"
                         : "a special file";
}

/* Makes fd blocking again (a regular file ignores O_NONBLOCK, but whoever reads it next may
 * hand it to code that expects a plain descriptor). */
static void blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

int store_fs_open_read(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return say(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return say(err, errlen, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return say(err, errlen, "%s: not a regular file (%s)", path, store_fs_kind(st.st_mode));
    }
    blocking(fd);
    return fd;
}

FILE *store_fs_fopen_read(const char *path, char *err, size_t errlen)
{
    int fd = store_fs_open_read(path, err, errlen);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        say(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int store_fs_create(const char *path, int mode, char *err, size_t errlen)
{
    /* O_EXCL refuses every existing name, a link (dangling or not) included; O_NOFOLLOW says
     * so for the link by its own error */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        struct stat st;
        if (errno == EEXIST && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            return say(err, errlen,
                       "%s: a symbolic link is in the way (nothing written through it)", path);
        return say(err, errlen, "%s: cannot create: %s", path, strerror(errno));
    }
    return fd;
}

int store_fs_open_append(const char *path, int mode, char *err, size_t errlen)
{
    int fd = open(
        path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        struct stat ls; /* a FIFO nobody reads fails with ENXIO: say what it is */
        if (e != ELOOP && lstat(path, &ls) == 0 && !S_ISREG(ls.st_mode) && !S_ISLNK(ls.st_mode))
            return say(err, errlen, "%s: not a regular file (%s)", path, store_fs_kind(ls.st_mode));
        return say(err, errlen, "%s: cannot open: %s%s", path, strerror(e),
                   e == ELOOP ? " (a symbolic link: nothing written through it)" : "");
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return say(err, errlen, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        if (!S_ISREG(st.st_mode))
            return say(err, errlen, "%s: not a regular file (%s)", path, store_fs_kind(st.st_mode));
        return say(err, errlen, "%s: the file belongs to another user (uid %u)", path,
                   (unsigned)st.st_uid);
    }
    blocking(fd);
    return fd;
}

int store_fs_open_private(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return say(err, errlen, "%s: cannot open: %s%s", path, strerror(errno),
                   errno == ELOOP ? " (a symbolic link: not followed)" : "");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return say(err, errlen, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return say(err, errlen, "%s: not a regular file (%s)", path, store_fs_kind(st.st_mode));
    }
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        close(fd);
        if (st.st_uid != geteuid())
            return say(err, errlen, "%s: the file belongs to another user (uid %u)", path,
                       (unsigned)st.st_uid);
        return say(err, errlen, "%s: other users may write the file (mode %04o)", path,
                   (unsigned)(st.st_mode & 07777));
    }
    blocking(fd);
    return fd;
}

int store_fs_check_dir(const char *dir, unsigned forbidden, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return say(err, errlen, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return say(err, errlen, "%s: not a folder (%s)", dir, store_fs_kind(st.st_mode));
    if (st.st_uid != geteuid())
        return say(err, errlen, "%s: the folder belongs to another user (uid %u)", dir,
                   (unsigned)st.st_uid);
    if (st.st_mode & forbidden & 07777)
        return say(err, errlen, "%s: %s may %s the folder (mode %04o)", dir,
                   st.st_mode & forbidden & 007 ? "every user" : "other users",
                   st.st_mode & forbidden & 022 ? "write into" : "look into",
                   (unsigned)(st.st_mode & 07777));
    return 0;
}

int store_fs_trusted(const char *path, long dir_uid)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (st.st_uid != geteuid() && (dir_uid < 0 || st.st_uid != (uid_t)dir_uid))
        return 0; /* a file or link another user put there */
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return 0;
    return S_ISREG(st.st_mode);
}

/* ---------------------------------------------------------------- SQLite's own opens */

typedef int (*open_fn)(const char *, int, int);
static open_fn sqlite_open; /* the unix VFS's own open(), before ours */

/* The open() SQLite's unix VFS calls for every file it opens (databases, journals, WAL files and
 * their folders): never blocks (a FIFO swapped in for a trace), only regular files and folders,
 * and a file it may create never through a link. */
static int checked_open(const char *path, int flags, int mode)
{
    int fd = sqlite_open(path, flags | O_NONBLOCK | (flags & O_CREAT ? O_NOFOLLOW : 0), mode);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
        close(fd);
        errno = EACCES;
        return -1;
    }
    if (!(flags & O_NONBLOCK))
        blocking(fd);
    return fd;
}

int store_fs_harden_sqlite(void)
{
    sqlite3_vfs *v = sqlite3_vfs_find("unix");
    if (!v || v->iVersion < 3 || !v->xGetSystemCall || !v->xSetSystemCall)
        return -1;
    sqlite3_syscall_ptr cur = v->xGetSystemCall(v, "open");
    if (cur == (sqlite3_syscall_ptr)checked_open)
        return 0; /* already */
    sqlite_open = (open_fn)cur;
    return v->xSetSystemCall(v, "open", (sqlite3_syscall_ptr)checked_open) == SQLITE_OK ? 0 : -1;
}
