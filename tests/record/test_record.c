/* Tests of `tlview record`'s orchestration, run on the tlview binary with stand-ins: a shell
 * script in place of the CUDA program (standin_cmd.sh: logs its start time and environment) and
 * one in place of nvidia-cuda-mps-control (logs start/quit, serves a FIFO control pipe). No GPU is
 * needed: TLVIEW_GPU_CHECK=0 and TLVIEW_COLLECTOR point record past the GPU-only parts. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "test_help.h"

#define HERE TLVIEW_SOURCE_DIR "/tests/record"
#define STANDIN HERE "/standin_cmd.sh"

static char out_text[65536], err_text[65536]; /* the last run's stdout and stderr */

static void slurp(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t len = fread(buf, 1, n - 1, f);
    buf[len] = 0;
    fclose(f);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The environment every case starts from: stand-in collector and log folders in the case's
 * tmpdir, no GPU check, the stand-in MPS control first on PATH. */
static const char *setup(void)
{
    const char *tmp = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/libcollect.so", tmp);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    setenv("TLVIEW_COLLECTOR", path, 1);
    setenv("TLVIEW_GPU_CHECK", "0", 1);
    unsetenv("TLVIEW_MPS_CONTROL");
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    unsetenv("CUDA_INJECTION64_PATH");
    snprintf(path, sizeof path, "%s/standin", tmp);
    mkdir(path, 0755);
    setenv("STANDIN_DIR", path, 1);
    snprintf(path, sizeof path, "%s/mps.log", tmp);
    setenv("STANDIN_MPS_LOG", path, 1);
    const char *old = getenv("PATH");
    char newpath[8192];
    snprintf(newpath, sizeof newpath, "%s:%s", HERE, old ? old : "/usr/bin:/bin");
    setenv("PATH", newpath, 1);
    return tmp;
}

/* The tlview binary start_record() runs: the build's, or a copy elsewhere. */
static const char *record_bin = TLVIEW_BIN;

/* Starts `tlview record ARGS...` with stdout/stderr to files in tmpdir; returns its pid. */
static pid_t start_record(const char *const *args)
{
    char outp[4096], errp[4096];
    snprintf(outp, sizeof outp, "%s/record.out", test_tmpdir());
    snprintf(errp, sizeof errp, "%s/record.err", test_tmpdir());
    const char *argv[64] = {record_bin, "record"};
    int n = 2;
    for (; args[n - 2] && n < 63; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execv(record_bin, (char **)argv);
        _exit(99);
    }
    return pid;
}

/* Waits for the record started above; returns its exit code (128+n for a signal) and loads its
 * stdout/stderr into out_text/err_text. */
static int finish_record(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/record.out", test_tmpdir());
    slurp(path, out_text, sizeof out_text);
    snprintf(path, sizeof path, "%s/record.err", test_tmpdir());
    slurp(path, err_text, sizeof err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_record(const char *const *args)
{
    return finish_record(start_record(args));
}

#define TEST_CONTAINS(hay, needle)                                                                 \
    do {                                                                                           \
        if (!strstr((hay), (needle))) {                                                            \
            fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, needle, hay); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Value of KEY=... in the stand-in's log of `rank` (static buffer; "" when absent). */
static const char *rank_value(int rank, const char *key)
{
    static char val[4096];
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/rank.%d", getenv("STANDIN_DIR"), rank);
    val[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return val;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
            snprintf(val, sizeof val, "%s", line + klen + 1);
            val[strcspn(val, "\n")] = 0;
        }
    fclose(f);
    return val;
}

static json_t *load_manifest(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "%s: %s (line %d)\n", path, e.text, e.line);
    return j;
}

static long long child_int(json_t *m, int i, const char *key)
{
    json_t *kids = json_object_get(m, "children");
    return json_integer_value(json_object_get(json_array_get(kids, i), key));
}

/* The stand-in MPS log, for checking what happened to the daemon. */
static void mps_log(char *buf, size_t n)
{
    slurp(getenv("STANDIN_MPS_LOG"), buf, n);
}

/* Live processes named nvidia-cuda-mps* whose environment holds CUDA_MPS_PIPE_DIRECTORY=dir. */
static int mps_alive(const char *pipe_dir)
{
    char cmd[4400], buf[64] = "";
    snprintf(cmd, sizeof cmd,
             "for p in /proc/[0-9]*; do "
             "  [ \"$(cat $p/comm 2>/dev/null)\" = nvidia-cuda-mps ] || continue; "
             "  tr '\\0' '\\n' 2>/dev/null < $p/environ | grep -qx 'CUDA_MPS_PIPE_DIRECTORY=%s' "
             "  && echo x; done | wc -l",
             pipe_dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    if (!fgets(buf, sizeof buf, p))
        buf[0] = 0;
    pclose(p);
    return atoi(buf);
}

/* ------------------------------------------------------------------ cases */

/* N copies start together: none before the last fork (each sees all N siblings already there),
 * none before the barrier opens, all within a short window. */
int test_record_barrier(void)
{
    enum { N = 32 }; /* enough forks that a copy started at once would see fewer siblings */
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    setenv("STANDIN_SLEEP", "1", 1); /* stay alive, so later copies count the earlier ones */
    const char *args[] = {"-o", dir, "--procs", "32", "--", STANDIN, NULL};
    int rc = run_record(args);
    TEST_EQ_INT(rc, 1); /* the stand-in writes no trace: record says so and fails */
    TEST_CONTAINS(err_text, "no trace file was written");
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    long long release_us = json_integer_value(json_object_get(m, "barrier_release_ns")) / 1000;
    json_decref(m);
    long long lo = -1, hi = -1;
    int seen[N] = {0};
    for (int r = 0; r < N; r++) {
        long long t = atoll(rank_value(r, "start_us"));
        TEST_ASSERT(t > 0);
        TEST_EQ_INT(atoi(rank_value(r, "siblings")), N);
        TEST_ASSERT(t >= release_us);
        lo = lo < 0 || t < lo ? t : lo;
        hi = t > hi ? t : hi;
        TEST_EQ_INT(atoi(rank_value(r, "TLVIEW_NPROCS")), N);
        int rank = atoi(rank_value(r, "TLVIEW_RANK"));
        TEST_ASSERT(rank >= 0 && rank < N);
        seen[rank]++;
    }
    for (int r = 0; r < N; r++)
        TEST_EQ_INT(seen[r], 1);
    fprintf(stderr, "%d starts within %lld us, the first %lld us after the release\n", N, hi - lo,
            lo - release_us);
    TEST_ASSERT(hi - lo < 1000000); /* together: within 1 s even on a loaded 2-core machine */
    TEST_ASSERT(lo - release_us < 1000000);
    return 0;
}

int test_record_manifest(void)
{
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    setenv("STANDIN_EXIT_RANK", "1", 1);
    setenv("STANDIN_EXIT_CODE", "7", 1);
    /* an argument that is not UTF-8 stays in the manifest, its bad byte as U+FFFD (2026-12-01:
     * jansson refused it and the manifest's command lost it) */
    const char *args[] = {"-o", dir,     "-n",  "3",     "--label", "demo",
                          "--", STANDIN, "a b", "c\xff", NULL};
    int rc = run_record(args);
    TEST_EQ_INT(rc, 7); /* the first failing copy's status */
    TEST_CONTAINS(err_text, "copy 1 (pid");
    TEST_CONTAINS(err_text, "exited with status 7");
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_EQ_STR(json_string_value(json_object_get(m, "tool")), "tlview record");
    TEST_EQ_STR(json_string_value(json_object_get(m, "label")), "demo");
    TEST_EQ_INT(json_integer_value(json_object_get(m, "procs")), 3);
    json_t *cmd = json_object_get(m, "command");
    TEST_EQ_INT(json_array_size(cmd), 3);
    TEST_EQ_STR(json_string_value(json_array_get(cmd, 0)), STANDIN);
    TEST_EQ_STR(json_string_value(json_array_get(cmd, 1)), "a b");
    TEST_EQ_STR(json_string_value(json_array_get(cmd, 2)), "c\xef\xbf\xbd");
    char want[4200];
    snprintf(want, sizeof want, "%s/demo.%%p.db", dir);
    TEST_EQ_STR(json_string_value(json_object_get(m, "output_pattern")), want);
    TEST_EQ_STR(json_string_value(json_object_get(m, "dir")), dir);
    TEST_EQ_STR(json_string_value(json_object_get(m, "collector")), getenv("TLVIEW_COLLECTOR"));
    TEST_ASSERT(json_is_false(json_object_get(json_object_get(m, "mps"), "enabled")));
    TEST_ASSERT(json_is_null(json_object_get(m, "interrupted_by")));
    const char *run_id = json_string_value(json_object_get(m, "run_id"));
    TEST_ASSERT(run_id && strlen(run_id) > 10);
    long long t0 = json_integer_value(json_object_get(m, "start_ns"));
    long long t1 = json_integer_value(json_object_get(m, "barrier_release_ns"));
    long long t2 = json_integer_value(json_object_get(m, "end_ns"));
    TEST_ASSERT(t0 > 0 && t0 <= t1 && t1 <= t2);
    TEST_ASSERT(json_string_value(json_object_get(m, "start_time")));
    TEST_EQ_INT(json_array_size(json_object_get(m, "children")), 3);
    for (int r = 0; r < 3; r++) {
        TEST_EQ_INT(child_int(m, r, "rank"), r);
        TEST_EQ_INT(child_int(m, r, "pid"), atoi(rank_value(r, "pid")));
        TEST_EQ_INT(child_int(m, r, "exit_code"), r == 1 ? 7 : 0);
        TEST_EQ_STR(rank_value(r, "TLVIEW_RUN_ID"), run_id);
        TEST_EQ_STR(rank_value(r, "TLVIEW_OUTPUT"), want);
        TEST_EQ_STR(rank_value(r, "TLVIEW_RECORD_DIR"), dir);
        TEST_EQ_STR(rank_value(r, "CUDA_INJECTION64_PATH"), getenv("TLVIEW_COLLECTOR"));
        TEST_EQ_STR(rank_value(r, "args"), "a b c\xff");
    }
    TEST_EQ_INT(json_array_size(json_object_get(m, "files")), 0);
    json_decref(m);
    return 0;
}

int test_record_usage_errors(void)
{
    setup();
    const char *none[] = {"-n", "2", NULL};
    TEST_EQ_INT(run_record(none), 2);
    TEST_CONTAINS(err_text, "tlview record: no command given");
    const char *zero[] = {"-n", "0", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(zero), 2);
    TEST_CONTAINS(err_text, "--procs 0: expected a number from 1 to 1024");
    const char *word[] = {"--procs", "four", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(word), 2);
    TEST_CONTAINS(err_text, "--procs four: expected a number from 1 to 1024");
    const char *big[] = {"--procs", "1025", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(big), 2);
    const char *label[] = {"--label", "../x", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(label), 2);
    TEST_CONTAINS(err_text, "label '../x'");
    const char *opt[] = {"--bogus", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(opt), 2);
    TEST_CONTAINS(err_text, "tlview record: unknown option '--bogus'\nTry 'tlview record --help'.");
    const char *arg[] = {"--procs", NULL};
    TEST_EQ_INT(run_record(arg), 2);
    TEST_CONTAINS(err_text, "tlview record: --procs needs an argument");
    const char *base[] = {"--baseline", "/nonexistent/base", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(base), 1);
    TEST_CONTAINS(err_text, "--baseline /nonexistent/base: No such file or directory");
    const char *color[] = {"--color", "sometimes", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(color), 2);
    TEST_CONTAINS(err_text, "tlview record: --color wants auto, always or never, not 'sometimes'");
    const char *help[] = {"--help", NULL};
    TEST_EQ_INT(run_record(help), 0);
    TEST_CONTAINS(out_text, "usage: tlview record");
    return 0;
}

int test_record_missing_command(void)
{
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    const char *abs[] = {"-o", dir, "--", "/nonexistent/prog", NULL};
    TEST_EQ_INT(run_record(abs), 127);
    TEST_CONTAINS(err_text, "/nonexistent/prog: no such file");
    const char *onpath[] = {"-o", dir, "--", "tlview-no-such-program", NULL};
    TEST_EQ_INT(run_record(onpath), 127);
    TEST_CONTAINS(err_text, "tlview-no-such-program: command not found on PATH");
    struct stat st;
    TEST_ASSERT(stat(dir, &st) != 0); /* refused before anything was created */
    return 0;
}

int test_record_existing_dir(void)
{
    const char *tmp = setup();
    char dir[4096], manifest[4200];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    mkdir(dir, 0755);
    snprintf(manifest, sizeof manifest, "%s/manifest.json", dir);
    FILE *f = fopen(manifest, "w");
    TEST_ASSERT(f);
    fputs("{\"old\": true}\n", f);
    fclose(f);
    const char *args[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "already holds a recorded run");
    TEST_CONTAINS(err_text, "--force");
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m && json_is_true(json_object_get(m, "old"))); /* untouched */
    json_decref(m);
    TEST_EQ_STR(rank_value(0, "pid"), ""); /* the command never ran */
    const char *forced[] = {"-o", dir, "--force", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(forced), 1); /* runs; fails only for want of a trace */
    m = load_manifest(dir);
    TEST_ASSERT(m && json_object_get(m, "run_id"));
    TEST_EQ_INT(child_int(m, 0, "pid"), atoi(rank_value(0, "pid")));
    json_decref(m);
    return 0;
}

/* The content of `path` ("" when unreadable), for checking that a file was not written. */
static const char *content(const char *path)
{
    static char buf[4096];
    slurp(path, buf, sizeof buf);
    return buf;
}

/* 2026-12-07 (issue 28): `tlview record` wrote through links planted in its folder (the
 * manifest's temporary file, opened with fopen "w"; the MPS daemon's output, O_APPEND without
 * O_NOFOLLOW) and took any existing folder, whoever owned it. A folder other users may write (or
 * another user's) is refused before anything runs; no file is written through a link. */
int test_record_untrusted_places(void)
{
    const char *tmp = setup();
    char dir[4096], victim[4200], link[4200];
    snprintf(victim, sizeof victim, "%s/victim.txt", tmp);
    FILE *f = fopen(victim, "w");
    TEST_ASSERT(f);
    fputs("precious\n", f);
    fclose(f);

    snprintf(dir, sizeof dir, "%s/shared", tmp);
    TEST_EQ_INT(mkdir(dir, 0700), 0);
    TEST_EQ_INT(chmod(dir, 01777), 0); /* a scratch folder everyone writes */
    const char *a1[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(a1), 1);
    TEST_CONTAINS(err_text, "every user may write into the folder (mode 1777)");
    TEST_EQ_STR(rank_value(0, "pid"), ""); /* the command never ran */
    if (geteuid() == 0) {                  /* a folder of another user */
        snprintf(dir, sizeof dir, "%s/theirs", tmp);
        TEST_EQ_INT(mkdir(dir, 0755), 0);
        TEST_EQ_INT(chown(dir, 65534, 65534), 0);
        const char *a2[] = {"-o", dir, "--", STANDIN, NULL};
        TEST_EQ_INT(run_record(a2), 1);
        TEST_CONTAINS(err_text, "the folder belongs to another user (uid 65534)");
    }

    /* links left in a folder of ours: the manifest is written beside them, never through them */
    snprintf(dir, sizeof dir, "%s/run", tmp);
    TEST_EQ_INT(mkdir(dir, 0755), 0);
    snprintf(link, sizeof link, "%s/manifest.json.tmp", dir);
    TEST_EQ_INT(symlink(victim, link), 0);
    const char *a3[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(a3), 1); /* runs; fails only for want of a trace */
    TEST_EQ_STR(content(victim), "precious\n");
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m && json_object_get(m, "run_id"));
    json_decref(m);
    /* ... and the MPS daemon's output file is not opened through one */
    snprintf(link, sizeof link, "%s/mps-log", dir);
    TEST_EQ_INT(mkdir(link, 0700), 0);
    snprintf(link, sizeof link, "%s/mps-log/control-d.out", dir);
    TEST_EQ_INT(symlink(victim, link), 0);
    const char *a4[] = {"-o", dir, "--force", "-n", "2", "--mps", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(a4), 1);
    TEST_CONTAINS(err_text, "control-d.out: cannot open: ");
    TEST_CONTAINS(err_text, "(a symbolic link: nothing written through it)");
    TEST_EQ_STR(content(victim), "precious\n");
    return 0;
}

int test_record_collector_missing(void)
{
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    setenv("TLVIEW_COLLECTOR", "/nonexistent/libcollect.so", 1);
    const char *args[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "TLVIEW_COLLECTOR=/nonexistent/libcollect.so: no such file");
    TEST_EQ_STR(rank_value(0, "pid"), "");
    return 0;
}

int test_record_no_gpu(void)
{
    const char *tmp = setup();
    if (access("/dev/nvidiactl", F_OK) == 0 || access("/dev/dxg", F_OK) == 0)
        return test_skip("this machine has a GPU, so record's message for a machine without one "
                         "cannot show");
    unsetenv("TLVIEW_GPU_CHECK");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    const char *args[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "no NVIDIA GPU here (/dev/nvidiactl is missing)");
    TEST_EQ_STR(rank_value(0, "pid"), "");
    return 0;
}

int test_record_mps_control_missing(void)
{
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    setenv("PATH", "/usr/bin:/bin", 1); /* no stand-in, and no driver utilities here */
    const char *args[] = {"-o", dir, "--mps", "--", STANDIN, NULL};
    if (access("/usr/bin/nvidia-cuda-mps-control", F_OK) == 0)
        return test_skip("/usr/bin/nvidia-cuda-mps-control is installed, so record's message for "
                         "a machine without it cannot show");
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "--mps needs nvidia-cuda-mps-control");
    setenv("TLVIEW_MPS_CONTROL", "/nonexistent/mps-control", 1);
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "TLVIEW_MPS_CONTROL=/nonexistent/mps-control is not an executable");
    TEST_EQ_STR(rank_value(0, "pid"), "");
    return 0;
}

int test_record_mps_start_stop(void)
{
    const char *tmp = setup();
    char dir[4096], pipe_dir[4200], log_dir[4200], log[16384], want[13000];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    const char *args[] = {"-o", dir, "-n", "2", "--mps", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1); /* no trace from the stand-in */
    TEST_CONTAINS(err_text, "started a private MPS daemon");
    snprintf(pipe_dir, sizeof pipe_dir, "%s/mps-pipe", dir);
    snprintf(log_dir, sizeof log_dir, "%s/mps-log", dir);
    for (int r = 0; r < 2; r++) {
        TEST_EQ_STR(rank_value(r, "CUDA_MPS_PIPE_DIRECTORY"), pipe_dir);
        TEST_EQ_STR(rank_value(r, "CUDA_MPS_LOG_DIRECTORY"), log_dir);
    }
    mps_log(log, sizeof log);
    snprintf(want, sizeof want, "start %s\nclient %s\nquit %s\n", pipe_dir, pipe_dir, pipe_dir);
    TEST_EQ_STR(log, want); /* started once, stopped once, in that order */
    TEST_EQ_INT(mps_alive(pipe_dir), 0);
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    json_t *mps = json_object_get(m, "mps");
    TEST_ASSERT(json_is_true(json_object_get(mps, "enabled")));
    TEST_ASSERT(json_is_true(json_object_get(mps, "started")));
    TEST_ASSERT(json_is_true(json_object_get(mps, "stopped")));
    TEST_ASSERT(json_is_false(json_object_get(mps, "reused")));
    TEST_EQ_STR(json_string_value(json_object_get(mps, "pipe_dir")), pipe_dir);
    json_decref(m);
    return 0;
}

int test_record_mps_reuse(void)
{
    const char *tmp = setup();
    char dir[4096], pipe_dir[4200], log[16384], want[13000];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(pipe_dir, sizeof pipe_dir, "%s/userpipe", tmp);
    mkdir(pipe_dir, 0755);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
    TEST_EQ_INT(system(HERE "/nvidia-cuda-mps-control -d"), 0);
    const char *args[] = {"-o", dir, "--mps", "--", STANDIN, NULL};
    int rc = run_record(args);
    int alive = mps_alive(pipe_dir);
    TEST_EQ_INT(system("echo quit | " HERE "/nvidia-cuda-mps-control"), 0);
    TEST_EQ_INT(rc, 1);
    TEST_CONTAINS(err_text, "reusing the MPS daemon already running at");
    TEST_EQ_INT(alive, 1); /* left running by record */
    TEST_EQ_STR(rank_value(0, "CUDA_MPS_PIPE_DIRECTORY"), pipe_dir);
    /* the stand-in daemon logs its quit after the client returns: wait for it to end first */
    for (int i = 0; i < 100 && mps_alive(pipe_dir) > 0; i++)
        sleep_ms(50);
    TEST_EQ_INT(mps_alive(pipe_dir), 0);
    mps_log(log, sizeof log);
    snprintf(want, sizeof want, "start %s\nclient %s\nquit %s\n", pipe_dir, pipe_dir, pipe_dir);
    TEST_EQ_STR(log, want); /* only our own quit, after record ended */
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_ASSERT(json_is_true(json_object_get(json_object_get(m, "mps"), "reused")));
    TEST_ASSERT(json_is_false(json_object_get(json_object_get(m, "mps"), "started")));
    json_decref(m);
    return 0;
}

int test_record_mps_start_fails(void)
{
    const char *tmp = setup();
    char dir[4096], log[8192], pipe_dir[4200], want[8400];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(pipe_dir, sizeof pipe_dir, "%s/mps-pipe", dir);
    setenv("STANDIN_MPS_FAIL_START", "1", 1);
    const char *args[] = {"-o", dir, "-n", "2", "--mps", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "-d failed (exit 1)");
    TEST_CONTAINS(err_text, "cannot start (asked to fail)");
    TEST_EQ_STR(rank_value(0, "pid"), ""); /* the command never ran */
    mps_log(log, sizeof log);
    snprintf(want, sizeof want, "start-failed %s\n", pipe_dir);
    TEST_EQ_STR(log, want);
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_ASSERT(json_string_value(json_object_get(m, "error")));
    TEST_EQ_INT(json_array_size(json_object_get(m, "children")), 0);
    json_decref(m);
    return 0;
}

/* SIGINT sent to record: the copies get it, the daemon is stopped, record exits 130. */
int test_record_sigint(void)
{
    const char *tmp = setup();
    char dir[4096], pipe_dir[4200], log[16384], want[13000];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(pipe_dir, sizeof pipe_dir, "%s/mps-pipe", dir);
    setenv("STANDIN_SLEEP", "30", 1);
    const char *args[] = {"-o", dir, "-n", "3", "--mps", "--", STANDIN, NULL};
    pid_t pid = start_record(args);
    int started = 0;
    for (int i = 0; i < 200 && started < 3; i++) {
        sleep_ms(50);
        started = 0;
        for (int r = 0; r < 3; r++)
            started += rank_value(r, "pid")[0] != 0;
    }
    TEST_EQ_INT(started, 3);
    sleep_ms(200); /* let the stand-ins reach their trap */
    kill(pid, SIGINT);
    int rc = finish_record(pid);
    TEST_EQ_INT(rc, 130);
    for (int r = 0; r < 3; r++)
        TEST_EQ_STR(rank_value(r, "got"), "SIGINT");
    mps_log(log, sizeof log);
    snprintf(want, sizeof want, "start %s\nclient %s\nquit %s\n", pipe_dir, pipe_dir, pipe_dir);
    TEST_EQ_STR(log, want);
    TEST_EQ_INT(mps_alive(pipe_dir), 0);
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_EQ_STR(json_string_value(json_object_get(m, "interrupted_by")), "SIGINT");
    for (int r = 0; r < 3; r++)
        TEST_EQ_INT(child_int(m, r, "exit_code"), 130);
    json_decref(m);
    return 0;
}

int test_record_sigterm(void)
{
    const char *tmp = setup();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    setenv("STANDIN_SLEEP", "30", 1);
    const char *args[] = {"-o", dir, "-n", "2", "--", STANDIN, NULL};
    pid_t pid = start_record(args);
    for (int i = 0; i < 200 && !(rank_value(0, "pid")[0] && rank_value(1, "pid")[0]); i++)
        sleep_ms(50);
    sleep_ms(200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(finish_record(pid), 143);
    TEST_EQ_STR(rank_value(0, "got"), "SIGTERM");
    TEST_EQ_STR(rank_value(1, "got"), "SIGTERM");
    return 0;
}

/* A daemon that ignores quit is found in /proc, killed, and reported: none is left behind. */
int test_record_mps_leftover_killed(void)
{
    const char *tmp = setup();
    char dir[4096], pipe_dir[4200];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(pipe_dir, sizeof pipe_dir, "%s/mps-pipe", dir);
    setenv("STANDIN_MPS_IGNORE_QUIT", "1", 1);
    const char *args[] = {"-o", dir, "--mps", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    TEST_CONTAINS(err_text, "was still running 10 s after quit; it was killed");
    TEST_EQ_INT(mps_alive(pipe_dir), 0);
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_ASSERT(json_is_true(json_object_get(json_object_get(m, "mps"), "stopped")));
    json_decref(m);
    return 0;
}

/* A trace of one process for the stand-in to hand in as its own: a solo kernel of 10 ms at
 * `solo_at` ms (none when negative), and one of 20 ms at 20 ms that the other process's
 * overlaps: two processes taking turns (stretch 2, one context's work at a time). */
static int write_trace(const char *path, int64_t pid, int solo_at)
{
    const int64_t ms = 1000000, t0 = 1700000000LL * 1000000000LL;
    store_writer *w;
    int rc = store_writer_open(path, STORE_CLOCK_REALTIME, t0, &w);
    store_process_info pi = {pid, 1, "hostA", "/bin/app", "app", "run1", "libcollect", t0};
    int64_t proc = 0;
    rc = rc ? rc : store_writer_process(w, &pi, &proc);
    store_device_info dev = {
        0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 150000000000ULL};
    rc = rc ? rc : store_writer_device(w, proc, &dev);
    store_context_info ci = {
        .context_id = 1, .device_id = 0, .compute_api_kind = 1, .null_stream_id = 7};
    rc = rc ? rc : store_writer_context(w, proc, &ci);
    rc = rc ? rc : store_writer_begin(w);
    store_kernel_info k = {.start = t0 + solo_at * ms,
                           .end = t0 + (solo_at + 10) * ms,
                           .context_id = 1,
                           .stream_id = 7,
                           .correlation_id = 1,
                           .grid = {1, 1, 1},
                           .block = {1, 1, 1},
                           .name = "_Z4spinPfi"};
    if (solo_at >= 0)
        rc = rc ? rc : store_writer_kernel(w, proc, &k);
    k.start = t0 + 20 * ms;
    k.end = t0 + 40 * ms;
    k.correlation_id = 2;
    rc = rc ? rc : store_writer_kernel(w, proc, &k);
    rc = rc ? rc : store_writer_commit(w);
    rc = rc ? rc : store_writer_process_end(w, proc, t0 + 50 * ms, 1, NULL);
    if (rc)
        fprintf(stderr, "%s: %s\n", path, store_writer_errmsg(w));
    int rc2 = store_writer_close(w);
    return rc ? rc : rc2;
}

/* With trace files written, record reads them back and prints the report's headline. */
int test_record_headline(void)
{
    const char *tmp = setup();
    char dir[4096], trace[4200];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    for (int r = 0; r < 2; r++) {
        snprintf(trace, sizeof trace, "%s/standin/template.%d.db", tmp, r);
        TEST_EQ_INT(write_trace(trace, 4000 + r, r ? 50 : 0), 0);
    }
    setenv("STANDIN_TRACE_DIR", getenv("STANDIN_DIR"), 1);
    const char *args[] = {"-o", dir, "-n", "2", "--label", "spin", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 0);
    TEST_CONTAINS(out_text, "GPU 0 (NVIDIA H200): 2 processes (2 contexts, no MPS) overlapped");
    TEST_CONTAINS(out_text, "TIME-SLICED (no MPS): stretch 2.00x");
    TEST_CONTAINS(out_text, "    4000        2");
    TEST_CONTAINS(out_text, "    4001        2");
    TEST_CONTAINS(out_text, "1.50x"); /* 30 ms of kernels over 20 ms of solo reference */
    TEST_CONTAINS(out_text, "s from the start barrier to the last copy's exit (2 copies, 2 trace "
                            "files)");
    TEST_ASSERT(!strchr(out_text, '\033')); /* --color auto: stdout is a file */
    json_t *m = load_manifest(dir);
    TEST_ASSERT(m);
    TEST_EQ_INT(json_array_size(json_object_get(m, "files")), 2);
    for (int r = 0; r < 2; r++) {
        snprintf(trace, sizeof trace, "%s/spin.%s.db", dir, rank_value(r, "pid"));
        json_t *c = json_array_get(json_object_get(m, "children"), r);
        TEST_EQ_STR(json_string_value(json_object_get(c, "file")), trace);
    }
    json_decref(m);
    /* The first run's folder as the baseline of a second: its trace files are read, its
     * manifest.json is not mistaken for a trace. */
    char dir2[4200], empty[4200];
    snprintf(dir2, sizeof dir2, "%s/run2", tmp);
    const char *again[] = {"-o", dir2, "-n", "2", "-b", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(again), 0);
    TEST_CONTAINS(out_text, "TIME-SLICED");
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    mkdir(empty, 0755);
    snprintf(dir2, sizeof dir2, "%s/run3", tmp);
    const char *nobase[] = {"-o", dir2, "-n", "2", "-b", empty, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(nobase), 1);
    TEST_CONTAINS(err_text, "no trace files (*.db) there");
    /* --color always colours the headline's verdict */
    snprintf(dir2, sizeof dir2, "%s/coloured", tmp);
    const char *always[] = {"-o", dir2, "-n", "2", "--color=always", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(always), 0);
    TEST_CONTAINS(out_text, "\033[1;31mTIME-SLICED\033[0m (no MPS): stretch 2.00x");
    return 0;
}

/* A record folder too deep for the daemon's UNIX sockets: the pipe folder goes to /tmp and is
 * removed once the daemon is gone; the log folder stays in DIR. */
int test_record_mps_long_dir(void)
{
    const char *tmp = setup();
    char dir[4096], pipe_dir[4200], log_dir[4200];
    snprintf(dir, sizeof dir, "%s/run-%s", tmp,
             "a-record-folder-whose-path-is-longer-than-unix-sockets-allow-for-the-mps-pipes");
    const char *args[] = {"-o", dir, "--mps", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1); /* no trace from the stand-in */
    TEST_CONTAINS(err_text, "is too long a path for the MPS sockets; using /tmp/tlview-mps.");
    snprintf(pipe_dir, sizeof pipe_dir, "%s", rank_value(0, "CUDA_MPS_PIPE_DIRECTORY"));
    snprintf(log_dir, sizeof log_dir, "%s/mps-log", dir);
    TEST_ASSERT(strncmp(pipe_dir, "/tmp/tlview-mps.", 16) == 0);
    TEST_EQ_STR(rank_value(0, "CUDA_MPS_LOG_DIRECTORY"), log_dir);
    struct stat st;
    TEST_ASSERT(stat(pipe_dir, &st) != 0); /* removed */
    TEST_EQ_INT(mps_alive(pipe_dir), 0);
    char log[16384];
    mps_log(log, sizeof log);
    TEST_CONTAINS(log, "quit /tmp/tlview-mps.");
    return 0;
}

/* Every kernel overlapped: no solo reference, the stretch is estimated (no MPS: the contexts
 * took turns), and record says how to measure it. */
int test_record_headline_unknown(void)
{
    const char *tmp = setup();
    char dir[4096], trace[4200];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    for (int r = 0; r < 2; r++) {
        snprintf(trace, sizeof trace, "%s/standin/template.%d.db", tmp, r);
        TEST_EQ_INT(write_trace(trace, 4000 + r, -1), 0);
    }
    setenv("STANDIN_TRACE_DIR", getenv("STANDIN_DIR"), 1);
    const char *args[] = {"-o", dir, "-n", "2", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 0);
    TEST_CONTAINS(out_text, "TIME-SLICED (no MPS): stretch ~2.00x (estimated: 2 share groups took "
                            "turns)");
    TEST_CONTAINS(out_text, "tip: the kernels had no solo run to compare with, so the stretch is "
                            "estimated or unknown: record the command alone (--procs 1) and pass "
                            "that folder with --baseline");
    return 0;
}

/* Without TLVIEW_COLLECTOR, record uses the libcollect.so of the build tree it belongs to. */
int test_record_collector_build_tree(void)
{
    const char *tmp = setup();
    char dir[4096], want[4096];
    if (!realpath(TLVIEW_BINARY_DIR "/collector/libcollect.so", want))
        return test_skip("tlview was built without CUDA (no %s/collector/libcollect.so), so the "
                         "build tree's collector is not tested",
                         TLVIEW_BINARY_DIR);
    unsetenv("TLVIEW_COLLECTOR");
    snprintf(dir, sizeof dir, "%s/run", tmp);
    const char *args[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1); /* no trace from the stand-in */
    TEST_EQ_STR(rank_value(0, "CUDA_INJECTION64_PATH"), want);
    return 0;
}

/* Where no libcollect.so is found (a copy of tlview in a folder of its own, no
 * TLVIEW_COLLECTOR), record says where it looked; a tlview built without CUDA says first that it
 * has no collector of its own. (2026-12, issue 28: such a build said only "libcollect.so not
 * found ... set TLVIEW_COLLECTOR", as if its collector had gone missing.) */
int test_record_collector_not_found(void)
{
    const char *tmp = setup();
    char bin[4200], dir[4200], want[9000];
    unsetenv("TLVIEW_COLLECTOR");
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    mkdir(bin, 0755);
    snprintf(bin, sizeof bin, "%s/bin/tlview", tmp);
    snprintf(want, sizeof want, "cp '%s' '%s'", TLVIEW_BIN, bin);
    TEST_EQ_INT(system(want), 0);
    record_bin = bin;
    snprintf(dir, sizeof dir, "%s/run", tmp);
    const char *args[] = {"-o", dir, "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(args), 1);
    if (TLVIEW_COLLECTOR_BUILT) {
        snprintf(want, sizeof want,
                 "tlview record: libcollect.so not found (looked at %s/bin/../collector/"
                 "libcollect.so and ",
                 tmp);
        TEST_CONTAINS(err_text, want);
        TEST_CONTAINS(err_text, "/libcollect.so); set TLVIEW_COLLECTOR to its path\n");
    } else {
        snprintf(want, sizeof want,
                 "tlview record: libcollect.so not found: this tlview was built without "
                 "CUDA/CUPTI, so it has no collector of its own (looked at %s/bin/../collector/"
                 "libcollect.so and ",
                 tmp);
        TEST_CONTAINS(err_text, want);
        TEST_CONTAINS(err_text, "/libcollect.so); set TLVIEW_COLLECTOR to the libcollect.so of a "
                                "tlview built with CUDA\n");
    }
    TEST_EQ_STR(rank_value(0, "pid"), ""); /* nothing started */
    return 0;
}

/* Polls `file` (20 s at most) until it holds `needle`; copies it into out_text. 0 when found. */
static int wait_text(const char *file, const char *needle)
{
    for (int i = 0; i < 400; i++) {
        slurp(file, out_text, sizeof out_text);
        if (strstr(out_text, needle))
            return 0;
        sleep_ms(50);
    }
    fprintf(stderr, "\"%s\" not found in %s:\n%s\n", needle, file, out_text);
    return -1;
}

/* GET path from 127.0.0.1:port with curl, with `token` (Authorization: Bearer) when not NULL:
 * the body into out, empty on failure; with `status`, the HTTP status after it. */
static void curl_get(unsigned port, const char *token, const char *path, int status, char *out,
                     size_t n)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "curl -s --max-time 5 %s%s%s%s http://127.0.0.1:%u%s",
             status ? "-w ' %{http_code}' " : "", token ? "-H 'Authorization: Bearer " : "",
             token ? token : "", token ? "'" : "", port, path);
    out[0] = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    size_t len = fread(out, 1, n - 1, p);
    out[len] = 0;
    pclose(p);
}

/* record --serve: tlview serve --follow DIR runs beside the recording (its URL on record's
 * stdout, with the token it requires: issue 28), shows the copies' trace files while they run,
 * stays once the recording is done, and stops with record (SIGTERM), which then exits with the
 * recording's status. */
int test_record_serve(void)
{
    if (system("curl --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "SKIP: curl is not installed\n");
        return TEST_SKIP;
    }
    const char *tmp = setup();
    char dir[4096], trace[4200], outp[4200], body[65536];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(outp, sizeof outp, "%s/record.out", tmp);
    for (int r = 0; r < 2; r++) {
        snprintf(trace, sizeof trace, "%s/standin/template.%d.db", tmp, r);
        TEST_EQ_INT(write_trace(trace, 4000 + r, r ? 50 : 0), 0);
    }
    setenv("STANDIN_TRACE_DIR", getenv("STANDIN_DIR"), 1);
    setenv("STANDIN_SLEEP", "8", 1); /* room for serve --follow's 1 s look on a loaded machine */
    const char *usage[] = {"--port", "0", "--", STANDIN, NULL};
    TEST_EQ_INT(run_record(usage), 2);
    TEST_CONTAINS(err_text, "--port is the port of --serve");
    const char *args[] = {"-o", dir, "-n", "2", "--serve", "--port", "0", "--", STANDIN, NULL};
    pid_t pid = start_record(args);
    TEST_EQ_INT(wait_text(outp, "(Ctrl-C stops)"), 0);
    unsigned port = 0;
    char token[65] = "";
    char *at = strstr(out_text, "http://127.0.0.1:");
    if (!at || sscanf(at, "http://127.0.0.1:%u/?token=%64[0-9a-f]", &port, token) != 2)
        fprintf(stderr, "record's stdout: %s\n", out_text);
    TEST_ASSERT(at && port > 0);
    TEST_EQ_INT(strlen(token), 48);
    curl_get(port, NULL, "/api/runs", 1, body, sizeof body); /* without it: refused */
    TEST_CONTAINS(body, "needs its token");
    TEST_CONTAINS(body, " 403");
    int seen = 0; /* both copies' files while they still run (they sleep 8 s) */
    for (int i = 0; i < 140 && !seen; i++, sleep_ms(50)) {
        curl_get(port, token, "/api/runs", 0, body, sizeof body);
        seen = strstr(body, "\"follow\":true") && strstr(body, "\"pid\":4000") &&
               strstr(body, "\"pid\":4001");
    }
    slurp(outp, out_text, sizeof out_text);
    if (!seen)
        fprintf(stderr, "the server's last /api/runs: %.300s\nrecord's stdout: %s\n", body,
                out_text);
    TEST_ASSERT(seen);
    TEST_ASSERT(!strstr(out_text, "stopwatch:")); /* still recording */
    TEST_EQ_INT(wait_text(outp, "stopwatch:"), 0);
    TEST_CONTAINS(out_text, "TIME-SLICED");
    /* the recording is done: still served */
    curl_get(port, token, "/api/generation", 0, body, sizeof body);
    TEST_CONTAINS(body, "\"follow\":true");
    kill(pid, SIGTERM);
    TEST_EQ_INT(finish_record(pid), 0);
    TEST_CONTAINS(err_text, "the page goes on showing");
    curl_get(port, token, "/api/generation", 0, body, sizeof body);
    TEST_EQ_STR(body, ""); /* the server is gone with record */
    unsetenv("STANDIN_SLEEP");
    return 0;
}
