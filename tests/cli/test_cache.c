/* End-to-end tests of the cache beside the traces (issue 32; cli/cache.c, store/cache.c): the
 * answers of `tlview report` (json, text, csv) and `export` are byte for byte the same with a cold
 * cache, a warm one and --no-cache, for native files, a recorded run and an imported Chrome
 * trace; and a cache that must not be used (inputs changed, truncated, bytes flipped, a link,
 * another user's, in a folder others may write) is passed over and rebuilt, a folder that cannot
 * be written sends the cache to the per-user folder, a full disk leaves no cache and no error.
 * TLVIEW_CACHE=verbose says what the cache did: the cases read it to tell a used cache from a
 * rebuilt one, and compare the answers with those of --no-cache. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_help.h"

static char err_path[4200];

/* Runs a shell command line (printf-style) in the test folder with XDG_CACHE_HOME there and
 * TLVIEW_CACHE=verbose, stdout to the file `out` (a name in the test folder) and stderr to
 * "stderr"; returns the exit status (or -1 when killed). */
__attribute__((format(printf, 2, 3))) static int sh(const char *out, const char *fmt, ...)
{
    char cmd[16384];
    int n = snprintf(cmd, sizeof cmd,
                     "(cd '%s' && export XDG_CACHE_HOME='%s/xdg' TLVIEW_CACHE=verbose && ",
                     test_tmpdir(), test_tmpdir());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    snprintf(err_path, sizeof err_path, "%s/stderr", test_tmpdir());
    snprintf(cmd + n, sizeof cmd - (size_t)n, ") >'%s/%s' 2>'%s'", test_tmpdir(), out, err_path);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole content of a file, malloc'd (the caller frees it); "" when absent. */
static char *slurp(const char *path, size_t *pLen)
{
    char *b = test_slurp(path, pLen);
    return b ? b : calloc(1, 1);
}

/* A path inside the test folder (static ring of buffers). */
static const char *tmp(const char *name)
{
    static char bufs[8][4200];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 4200, "%s/%s", test_tmpdir(), name);
    return b;
}

/* 1 when the files a and b (in the test folder) hold the same bytes; else prints their names. */
static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(tmp(a), &na), *y = slurp(tmp(b), &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0 && na > 0;
    if (!same)
        fprintf(stderr, "%s (%zu bytes) and %s (%zu bytes) differ\n", a, na, b, nb);
    free(x);
    free(y);
    return same;
}

/* 1 when what the last command said on stderr holds `text`; else prints it when `loud`. */
static int stderr_has(const char *text, int loud)
{
    char *e = slurp(err_path, NULL);
    int yes = e && strstr(e, text) != NULL;
    if (!yes && loud)
        fprintf(stderr, "stderr lacks \"%s\":\n%s", text, e ? e : "");
    free(e);
    return yes;
}

/* 1 when what the last command said on stderr holds `text`; else prints it. */
static int said(const char *text)
{
    return stderr_has(text, 1);
}

/* A native run of two processes in folder `dir` (made): kernels that overlap, API calls, copies
 * and NVTX ranges, and `more` more kernels in the second (a rewritten input). */
static int make_run(const char *dir, int more)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/%s' && cd '%s/%s' && rm -f a.db b.db && "
             "'%s' a.db --pid 1 --train 0,20,1000000,100000 --api 0,5000,7,1,1,0,cudaLaunchKernel "
             "--range 0,5000000,7,step --memcpy 100,2000,1,4096,9 && "
             "'%s' b.db --pid 2 --train 500000,%d,1000000,50000 --range 400000,8000000,7,step,app "
             ">/dev/null 2>&1",
             test_tmpdir(), dir, test_tmpdir(), dir, TRACEGEN, TRACEGEN, 20 + more);
    return system(cmd) == 0 ? 0 : -1;
}

/* The answers compared: report json, text, csv (windows) and the Chrome export of `in`, written to
 * files "<tag>.json", "<tag>.txt", "<tag>.csv", "<tag>.chrome.json". `opt` goes after the
 * subcommand ("" or "--no-cache"). 0 when every command succeeded. */
static int answers(const char *tag, const char *opt, const char *in)
{
    char out[256];
    snprintf(out, sizeof out, "%s.json", tag);
    if (sh(out, "'%s' report %s --format json %s", TLVIEW, opt, in) != 0)
        return -1;
    snprintf(out, sizeof out, "%s.txt", tag);
    if (sh(out, "'%s' report %s --color never %s", TLVIEW, opt, in) != 0)
        return -1;
    snprintf(out, sizeof out, "%s.csv", tag);
    if (sh(out, "'%s' report %s --format csv --table windows %s", TLVIEW, opt, in) != 0)
        return -1;
    snprintf(out, sizeof out, "%s.export", tag);
    return sh(out, "'%s' export %s -f --chrome %s.chrome.json %s", TLVIEW, opt, tag, in) == 0 ? 0
                                                                                              : -1;
}

/* The four answers of tags a and b are the same bytes. */
static int same_answers(const char *a, const char *b)
{
    static const char *const ext[] = {"json", "txt", "csv", "chrome.json"};
    for (int i = 0; i < 4; i++) {
        char x[256], y[256];
        snprintf(x, sizeof x, "%s.%s", a, ext[i]);
        snprintf(y, sizeof y, "%s.%s", b, ext[i]);
        if (!same_file(x, y))
            return 0;
    }
    return 1;
}

/* A Chrome (Kineto) trace of one process with `n` kernels, in folder `dir` (made). */
static int make_chrome(const char *dir, int n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", test_tmpdir(), dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/trace.json", test_tmpdir(), dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"traceEvents\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, "
                "\"ts\": %d, \"dur\": 40, \"args\": {\"device\": 0, \"stream\": 7, "
                "\"correlation\": %d}},\n",
                i % 3, 1000 + 50 * i, i + 1);
    fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {\"name\": "
               "\"python\"}}\n]}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* The cache file of a run's folder `dir` (the only *.run file in <dir>/.tlview-cache), into buf;
 * -1 when there is not exactly one. */
static int run_cache(const char *dir, char *buf, size_t n)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls '%s/%s/.tlview-cache/' 2>/dev/null | grep '\\.run$'",
             test_tmpdir(), dir);
    FILE *p = popen(cmd, "r");
    char line[512], name[512] = "";
    int count = 0;
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(name, sizeof name, "%s", line);
        count++;
    }
    if (p)
        pclose(p);
    if (count != 1)
        return -1;
    snprintf(buf, n, "%s/%s/.tlview-cache/%s", test_tmpdir(), dir, name);
    return 0;
}

/* ------------------------------------------------------------------ the same answers */

/* Cold, warm and --no-cache (and TLVIEW_CACHE=off) give the same bytes for a native run, a
 * recorded one (H200, samples/spin) and an imported Chrome trace; the warm one read the cache. */
int test_cache_same_answers(void)
{
    char rec[8192];
    TEST_EQ_INT(make_run("native", 0), 0);
    TEST_EQ_INT(make_chrome("chrome", 40), 0);
    snprintf(rec, sizeof rec,
             "cp -r '%s/samples/spin/traces/mps-off/n4' '%s/rec' && rm -rf '%s/rec/.tlview-cache'",
             TLVIEW_SOURCE_DIR, test_tmpdir(), test_tmpdir()); /* the tests' own cache left out */
    TEST_EQ_INT(system(rec), 0);
    const char *ins[] = {"native", "rec", "chrome/trace.json"};
    for (int i = 0; i < 3; i++) {
        char path[512];
        TEST_EQ_INT(answers("nocache", "--no-cache", ins[i]), 0);
        snprintf(path, sizeof path, "%s/%.*s/.tlview-cache", test_tmpdir(),
                 i == 2 ? 6 : (int)strlen(ins[i]), ins[i]);
        TEST_ASSERT(access(path, F_OK) != 0); /* --no-cache wrote nothing */
        TEST_EQ_INT(answers("cold", "", ins[i]), 0);
        TEST_ASSERT(access(path, F_OK) == 0);
        TEST_EQ_INT(answers("warm", "", ins[i]), 0);
        TEST_ASSERT(said("cache: read "));
        TEST_ASSERT(said(".analysis"));
        TEST_ASSERT(same_answers("nocache", "cold"));
        TEST_ASSERT(same_answers("nocache", "warm"));
        TEST_EQ_INT(sh("off.json", "TLVIEW_CACHE=off '%s' report --format json %s", TLVIEW, ins[i]),
                    0);
        TEST_ASSERT(same_file("nocache.json", "off.json"));
    }
    return 0;
}

/* The analysis is cached per options: another --assume-mps gives its own answer, each the same as
 * without the cache; --separate-gpus keys the run's cache apart. */
int test_cache_options_keyed(void)
{
    TEST_EQ_INT(make_chrome("chrome", 30), 0);
    const char *opts[] = {"", "--assume-mps on", "--assume-mps off", "--separate-gpus"};
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 4; i++) {
            char a[64], b[64];
            snprintf(a, sizeof a, "c%d.json", i);
            snprintf(b, sizeof b, "n%d.json", i);
            TEST_EQ_INT(sh(a, "'%s' report --format json %s chrome", TLVIEW, opts[i]), 0);
            TEST_EQ_INT(sh(b, "'%s' report --format json --no-cache %s chrome", TLVIEW, opts[i]),
                        0);
            TEST_ASSERT(same_file(a, b));
        }
    TEST_ASSERT(!same_file("n1.json", "n2.json")); /* the options do change the answer */
    return 0;
}

/* ------------------------------------------------------------------ caches not to be used */

/* An input rewritten (same path, more kernels): the cache of the old input is not used, the
 * answer is the new input's, and the cache is rebuilt for it. */
int test_cache_stale_input(void)
{
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("old", "", "r"), 0);
    TEST_EQ_INT(make_run("r", 7), 0);
    TEST_EQ_INT(sh("first.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("made from other inputs"));
    TEST_ASSERT(said("cache: wrote run"));
    TEST_EQ_INT(answers("new", "", "r"), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_ASSERT(same_answers("new", "nocache"));
    TEST_ASSERT(!same_file("old.json", "new.json"));
    /* touched only (same bytes, a new mtime): rebuilt too */
    TEST_EQ_INT(sh("touch.json", "touch r/a.db && '%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("made from other inputs"));
    TEST_ASSERT(said("cache: wrote run"));
    TEST_ASSERT(same_file("touch.json", "nocache.json"));
    TEST_EQ_INT(sh("again.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("cache: read "));
    return 0;
}

/* The number of files (caches, not their stamps) in "<dir>/.tlview-cache". */
static int cache_files(const char *dir)
{
    char cmd[4400], line[512];
    snprintf(cmd, sizeof cmd, "ls '%s/%s/.tlview-cache/' 2>/dev/null", test_tmpdir(), dir);
    FILE *p = popen(cmd, "r");
    int count = 0;
    while (p && fgets(line, sizeof line, p))
        count++;
    if (p)
        pclose(p);
    return count;
}

/* The cache folder stays bounded: the same file named otherwise has a cache of its own (the
 * run holds the name); once an input is removed, the next write there removes the caches made from
 * it; with TLVIEW_CACHE_MAX the least recently used go (never the files of the run just written
 * for), and a value that is not a size says so and keeps the default. Every answer stays that of
 * --no-cache. */
int test_cache_pruned(void)
{
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(sh("nocache.json", "'%s' report --no-cache --format json r/a.db", TLVIEW), 0);
    TEST_EQ_INT(sh("whole.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(sh("a.json", "'%s' report --format json r/a.db", TLVIEW), 0);
    TEST_EQ_INT(cache_files("r"), 4); /* two runs, two analyses */
    TEST_EQ_INT(sh("a2.json", "'%s' report --format json r/a.db", TLVIEW), 0);
    TEST_ASSERT(said("cache: read "));
    TEST_ASSERT(!stderr_has("cache: wrote", 0));
    TEST_ASSERT(same_file("a2.json", "nocache.json"));
    /* named otherwise: a cache of its own (the run holds the name), with the same answer but
     * for the name */
    TEST_EQ_INT(sh("a3.json", "cd r && '%s' report --format json ./a.db", TLVIEW), 0);
    TEST_ASSERT(said("cache: wrote run"));
    TEST_EQ_INT(sh("a4.json", "cd r && '%s' report --format json ./a.db", TLVIEW), 0);
    TEST_ASSERT(said("cache: read "));
    TEST_ASSERT(same_file("a3.json", "a4.json"));
    TEST_EQ_INT(cache_files("r"), 6); /* three runs, three analyses */
    /* b.db removed: the caches of the run of both files cannot be read again */
    TEST_EQ_INT(
        sh("mps.json", "rm r/b.db && '%s' report --assume-mps on --format json r/a.db", TLVIEW), 0);
    TEST_ASSERT(said("cache: wrote analysis"));
    TEST_ASSERT(said("2 that could not be read again, 0 least recently used"));
    TEST_EQ_INT(cache_files("r"), 5);
    /* bounded to 1 byte: only the files of the run just written for stay (its run and its
     * three analyses); those of ./a.db go */
    TEST_EQ_INT(sh("off.json",
                   "TLVIEW_CACHE_MAX=1 '%s' report --assume-mps off --format json r/a.db", TLVIEW),
                0);
    TEST_ASSERT(said("0 that could not be read again, 2 least recently used"));
    TEST_EQ_INT(cache_files("r"), 4);
    TEST_EQ_INT(sh("a5.json", "TLVIEW_CACHE_MAX=1 '%s' report --format json r/a.db", TLVIEW), 0);
    TEST_ASSERT(said("cache: read "));
    TEST_ASSERT(same_file("a5.json", "nocache.json"));
    TEST_EQ_INT(cache_files("r"), 4);
    /* a cache written (another option: another run) with a bound that is not a size */
    TEST_EQ_INT(sh("bad.json",
                   "TLVIEW_CACHE_MAX=lots '%s' report --separate-gpus --format json "
                   "r/a.db",
                   TLVIEW),
                0);
    TEST_ASSERT(said("TLVIEW_CACHE_MAX='lots' is not a size"));
    TEST_ASSERT(said("cache: wrote run"));
    TEST_EQ_INT(cache_files("r"), 6);
    return 0;
}

/* A cache cut short: not used, the answer is right, the cache is whole again. */
int test_cache_truncated(void)
{
    char c[4400];
    struct stat st;
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    TEST_EQ_INT(stat(c, &st), 0);
    off_t whole = st.st_size;
    const off_t cuts[] = {0, 10, 100, whole / 2, whole - 1};
    for (int i = 0; i < 5; i++) {
        TEST_EQ_INT(truncate(c, cuts[i]), 0);
        TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
        TEST_ASSERT(said("cache: not used"));
        TEST_ASSERT(same_file("warm.json", "nocache.json"));
        TEST_EQ_INT(stat(c, &st), 0);
        TEST_EQ_INT(st.st_size, whole); /* rebuilt */
    }
    return 0;
}

/* Flips one byte of the file at `off`. */
static int flip(const char *path, off_t off)
{
    int fd = open(path, O_RDWR);
    unsigned char b;
    int ok = fd >= 0 && pread(fd, &b, 1, off) == 1;
    b ^= 0x10;
    ok = ok && pwrite(fd, &b, 1, off) == 1;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* The offset of the section `id` of a cache file (store/SCHEMA.md, "The cache": a 48-byte
 * header whose nsections is at 32, then 32-byte entries: id, elem, offset, count, sum). */
static off_t section_at(const char *path, uint32_t id)
{
    int fd = open(path, O_RDONLY);
    uint32_t n = 0;
    off_t at = -1;
    if (fd >= 0 && pread(fd, &n, 4, 32) == 4)
        for (uint32_t i = 0; i < n && i < 64; i++) {
            uint32_t e[2];
            uint64_t off;
            if (pread(fd, e, 8, 48 + 32 * i) == 8 && e[0] == id &&
                pread(fd, &off, 8, 48 + 32 * i + 8) == 8)
                at = (off_t)off;
        }
    if (fd >= 0)
        close(fd);
    return at;
}

/* Bytes flipped in the header, the key, a kernel's times (section 10) and the analysis: each
 * cache is refused by its checksum and rebuilt, and the answer stays the right one. */
int test_cache_flipped_bytes(void)
{
    char c[4400];
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_EQ_INT(answers("cold", "", "r"), 0);
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    off_t kernels = section_at(c, 10);
    TEST_ASSERT(kernels > 0);
    const off_t at[] = {20, 60, 48 + 32 * 16 + 5, kernels + 8, kernels + 32 * 3 + 1};
    for (int i = 0; i < 5; i++) {
        TEST_EQ_INT(flip(c, at[i]), 0);
        TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
        TEST_ASSERT(said("cache: not used"));
        TEST_ASSERT(said(i == 0  ? "bytes, the header says" /* the size field */
                         : i < 3 ? "the header's checksum does not hold"
                                 : "section 10: its checksum does not hold"));
        TEST_ASSERT(same_file("warm.json", "nocache.json"));
        TEST_EQ_INT(answers("warm", "", "r"), 0);
        TEST_ASSERT(same_answers("warm", "nocache"));
    }
    /* the analysis's block */
    char a[4400];
    snprintf(a, sizeof a, "%.*s", (int)(strlen(c) - 4), c);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ls %s-*.analysis", a);
    FILE *p = popen(cmd, "r");
    TEST_ASSERT(p && fgets(a, sizeof a, p));
    pclose(p);
    a[strcspn(a, "\n")] = 0;
    TEST_EQ_INT(flip(a, section_at(a, 1) + 200), 0);
    TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("section 1: its checksum does not hold"));
    TEST_ASSERT(said("cache: wrote analysis"));
    TEST_ASSERT(same_file("warm.json", "nocache.json"));
    return 0;
}

/* The cache file replaced by a link (to a good cache of the same inputs, and to a FIFO): not
 * followed, and replaced by a cache of its own. */
int test_cache_symlink(void)
{
    char c[4400], cmd[9000];
    struct stat st;
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    snprintf(cmd, sizeof cmd, "mv '%s' '%s/good.run' && ln -s '%s/good.run' '%s'", c, test_tmpdir(),
             test_tmpdir(), c);
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("a symbolic link: not followed"));
    TEST_ASSERT(same_file("warm.json", "nocache.json"));
    TEST_EQ_INT(lstat(c, &st), 0);
    TEST_ASSERT(S_ISREG(st.st_mode)); /* the link was replaced, its target left alone */
    snprintf(cmd, sizeof cmd, "rm '%s' && mkfifo '%s/fifo' && ln -s '%s/fifo' '%s'", c,
             test_tmpdir(), test_tmpdir(), c);
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(sh("fifo.json", "timeout 20 '%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(same_file("fifo.json", "nocache.json"));
    snprintf(cmd, sizeof cmd, "rm '%s' && mkfifo '%s'", c, c); /* a FIFO itself */
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(sh("fifo2.json", "timeout 20 '%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("not a regular file (a FIFO)"));
    TEST_ASSERT(same_file("fifo2.json", "nocache.json"));
    return 0;
}

/* A cache file of another user (root can make one: chown), or one others may write: not used.
 * Without root, the owner case cannot be made here. */
int test_cache_other_user(void)
{
    char c[4400];
    struct stat st;
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    TEST_EQ_INT(chmod(c, 0666), 0);
    TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("other users may write the file (mode 0666)"));
    TEST_ASSERT(same_file("warm.json", "nocache.json"));
    TEST_EQ_INT(stat(c, &st), 0);
    TEST_EQ_INT(st.st_mode & 0777, 0600); /* rebuilt */
    if (geteuid() != 0)
        return test_cannot_run("not root: a cache file of another user cannot be made here");
    TEST_EQ_INT(chown(c, 65534, 65534), 0);
    TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("the file belongs to another user (uid 65534)"));
    TEST_ASSERT(same_file("warm.json", "nocache.json"));
    TEST_EQ_INT(stat(c, &st), 0);
    TEST_EQ_INT(st.st_uid, 0); /* rebuilt as this user's */
    return 0;
}

/* .tlview-cache made by someone else or open to others (mode 0777) holding a good cache: not
 * used, nor written; the per-user folder ($XDG_CACHE_HOME/tlview) is used instead. */
int test_cache_shared_folder(void)
{
    char cmd[9000];
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(chmod(tmp("r/.tlview-cache"), 0777), 0);
    TEST_EQ_INT(sh("warm.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(same_file("warm.json", "nocache.json"));
    char *e = slurp(err_path, NULL);
    TEST_ASSERT(e && !strstr(e, "r/.tlview-cache/")); /* neither read nor written */
    free(e);
    TEST_ASSERT(said("xdg/tlview/"));
    struct stat st;
    TEST_EQ_INT(stat(tmp("xdg/tlview"), &st), 0);
    TEST_EQ_INT(st.st_mode & 0777, 0700);
    TEST_EQ_INT(sh("again.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("cache: read "));
    TEST_ASSERT(said("xdg/tlview/"));
    TEST_ASSERT(same_file("again.json", "nocache.json"));
    /* a link in place of the folder: not followed either */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -rf r/.tlview-cache xdg && mkdir elsewhere && "
             "ln -s ../elsewhere r/.tlview-cache",
             test_tmpdir());
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(sh("link.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(same_file("link.json", "nocache.json"));
    TEST_ASSERT(said("xdg/tlview/"));
    e = slurp(err_path, NULL);
    TEST_ASSERT(e && !strstr(e, "r/.tlview-cache/"));
    free(e);
    return 0;
}

/* Runs `script` (a shell script in the test folder) under unshare -rm; TEST_SKIP with the reason
 * when user namespaces or mounts are refused here. */
static int in_namespace(const char *script, int *rc)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "unshare -rm sh '%s' >'%s/ns.out' 2>&1", tmp(script), test_tmpdir());
    int st = system(cmd);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return *rc == 1 || *rc == 99 || *rc == 127;
}

/* The traces' folder read-only (a read-only bind mount): the cache goes to the per-user folder,
 * and is read from there next time. */
int test_cache_read_only_folder(void)
{
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    FILE *f = fopen(tmp("ro.sh"), "w");
    TEST_ASSERT(f);
    fprintf(f,
            "cd '%s' || exit 98\n"
            "mount --bind r r && mount -o remount,ro,bind r r || exit 99\n"
            "export XDG_CACHE_HOME='%s/xdg' TLVIEW_CACHE=verbose\n"
            "'%s' report --format json r >ro1.json 2>ro1.err || exit 2\n"
            "'%s' report --format json r >ro2.json 2>ro2.err || exit 3\n",
            test_tmpdir(), test_tmpdir(), TLVIEW, TLVIEW);
    fclose(f);
    int rc;
    if (in_namespace("ro.sh", &rc))
        return test_cannot_run("cannot mount read-only here (unshare -rm + mount exit %d), so a "
                               "read-only folder is not tested",
                               rc);
    TEST_EQ_INT(rc, 0);
    TEST_ASSERT(same_file("ro1.json", "nocache.json"));
    TEST_ASSERT(same_file("ro2.json", "nocache.json"));
    char *e = slurp(tmp("ro1.err"), NULL);
    TEST_ASSERT(e && strstr(e, "cache: wrote run ") && strstr(e, "xdg/tlview/"));
    free(e);
    e = slurp(tmp("ro2.err"), NULL);
    TEST_ASSERT(e && strstr(e, "cache: read ") && strstr(e, "xdg/tlview/"));
    free(e);
    TEST_ASSERT(access(tmp("r/.tlview-cache"), F_OK) != 0);
    return 0;
}

/* No room for the cache (a file size limit; and a full tmpfs where one can be mounted): the
 * command succeeds with the right answer, says nothing (without verbose), and leaves no cache
 * and no temporary file behind. */
int test_cache_disk_full(void)
{
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(answers("nocache", "--no-cache", "r"), 0);
    /* ulimit -f counts 1 KiB blocks: the run's cache is bigger than 8 KiB */
    /* (stdout through a pipe: the limit is the cache's alone) */
    sh("limited.json",
       "XDG_CACHE_HOME=/nonexistent TLVIEW_CACHE= sh -c \"ulimit -f 8; exec '%s' report --format "
       "json r\" | cat",
       TLVIEW);
    TEST_ASSERT(same_file("limited.json", "nocache.json"));
    char *e = slurp(err_path, NULL);
    TEST_EQ_STR(e, ""); /* no error for the user */
    free(e);
    TEST_ASSERT(access(tmp("r/.tlview-cache"), F_OK) != 0); /* no cache, no folder left */
    /* with one: it is not replaced by a part */
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    char c[4400];
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    char keep[4600];
    snprintf(keep, sizeof keep, "cp '%s' '%s/old.run'", c, test_tmpdir());
    TEST_EQ_INT(system(keep), 0);
    TEST_EQ_INT(make_run("r", 3), 0);
    TEST_EQ_INT(answers("nocache3", "--no-cache", "r"), 0);
    sh("limited.json",
       "XDG_CACHE_HOME=/nonexistent sh -c \"ulimit -f 8; exec '%s' report --format json r\" | cat",
       TLVIEW);
    TEST_ASSERT(said("cache: not written"));
    TEST_ASSERT(same_file("limited.json", "nocache3.json"));
    snprintf(keep, sizeof keep, "cmp -s '%s' '%s/old.run'", c, test_tmpdir());
    TEST_EQ_INT(system(keep), 0); /* the old cache as it was: replaced only by a whole one */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls -A '%s/r/.tlview-cache' | grep -c tmp", test_tmpdir());
    TEST_ASSERT(system(cmd) != 0); /* no temporary file */
    /* a full tmpfs */
    FILE *f = fopen(tmp("full.sh"), "w");
    TEST_ASSERT(f);
    fprintf(f,
            "cd '%s' || exit 98\n"
            "mkdir -p disk && mount -t tmpfs -o size=2m tlvtest disk || exit 99\n"
            "cp r/a.db r/b.db disk/ || exit 97\n"
            "dd if=/dev/zero of=disk/fill bs=4k 2>/dev/null; ls -A disk >full.ls0\n"
            "XDG_CACHE_HOME=/nonexistent '%s' report --format json disk >full.json 2>full.err "
            "|| exit 2\n"
            "ls -A disk >full.ls\n",
            test_tmpdir(), TLVIEW);
    fclose(f);
    int rc;
    if (in_namespace("full.sh", &rc))
        return test_cannot_run("cannot mount a small tmpfs here (unshare -rm + mount exit %d), so "
                               "a full disk is not tested",
                               rc);
    TEST_EQ_INT(rc, 0);
    char *ls0 = slurp(tmp("full.ls0"), NULL), *ls = slurp(tmp("full.ls"), NULL);
    TEST_EQ_STR(ls, ls0); /* neither a cache nor its folder */
    free(ls0);
    free(ls);
    e = slurp(tmp("full.err"), NULL);
    TEST_EQ_STR(e, "");
    free(e);
    return 0;
}

/* A temporary file that a writer stopped midway left (tlview serve does not wait for its cache
 * when stopped) is removed by the next write of that cache; one of a live writer is not. */
int test_cache_stale_temporary(void)
{
    char c[4400], dead[4600], live[4600];
    TEST_EQ_INT(make_run("r", 0), 0);
    TEST_EQ_INT(sh("cold.json", "'%s' report --format json r", TLVIEW), 0);
    TEST_EQ_INT(run_cache("r", c, sizeof c), 0);
    const char *name = strrchr(c, '/') + 1;
    pid_t gone = fork(); /* a pid that has ended */
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    snprintf(dead, sizeof dead, "%s/r/.tlview-cache/.%s.%d.123.tmp", test_tmpdir(), name,
             (int)gone);
    snprintf(live, sizeof live, "%s/r/.tlview-cache/.%s.%d.456.tmp", test_tmpdir(), name,
             (int)getpid());
    FILE *f = fopen(dead, "w");
    TEST_ASSERT(f);
    fclose(f);
    TEST_ASSERT((f = fopen(live, "w")));
    fclose(f);
    TEST_EQ_INT(sh("again.json", "touch r/b.db && '%s' report --format json r", TLVIEW), 0);
    TEST_ASSERT(said("cache: wrote run"));
    TEST_ASSERT(access(dead, F_OK) != 0);
    TEST_ASSERT(access(live, F_OK) == 0);
    return 0;
}
