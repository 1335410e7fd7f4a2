/* End-to-end tests of `tlview advise` on the tlview binary, without a GPU: a stand-in program with
 * a known throughput in each configuration (fake_app.c: FAKE_GAIN_MPS and its noise, failures,
 * traces) and the stand-in nvidia-cuda-mps-control of tests/record (logs start, commands and quit
 * per pipe folder). TLVIEW_GPU_CHECK=0 and TLVIEW_COLLECTOR point advise past the GPU-only parts.
 * The statistics are checked against the model (the ratio the stand-in was given) and against
 * values recomputed here from the runs advise recorded; the order against the interleaving's
 * rule and against a position effect; the MPS daemons against the stand-in's log and /proc. */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_help.h"

#define RECORD_DIR TLVIEW_SOURCE_DIR "/tests/record" /* the stand-in MPS control */
#define METRIC "items_per_s=([0-9.]+)"

static char out_text[1 << 20], err_text[1 << 16]; /* the last run's stdout and stderr */

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

/* A path in the case's folder (a ring of 64 buffers: a case keeps the ones it names). */
static const char *tmp(const char *name)
{
    static char bufs[64][4200];
    static int i;
    char *b = bufs[i++ % 64];
    snprintf(b, 4200, "%s/%s", test_tmpdir(), name);
    return b;
}

/* The environment every case starts from: a stand-in collector, no GPU check, the stand-in MPS
 * control first on PATH, no MPS variables, the stand-in program's defaults. */
static void setup(void)
{
    FILE *f = fopen(tmp("libcollect.so"), "w");
    if (f)
        fclose(f);
    setenv("TLVIEW_COLLECTOR", tmp("libcollect.so"), 1);
    setenv("TLVIEW_GPU_CHECK", "0", 1);
    unsetenv("TLVIEW_MPS_CONTROL");
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    unsetenv("CUDA_INJECTION64_PATH");
    setenv("STANDIN_MPS_LOG", tmp("mps.log"), 1);
    const char *old = getenv("PATH");
    char path[8192];
    snprintf(path, sizeof path, "%s:%s", RECORD_DIR, old ? old : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    setenv("FAKE_WORK_MS", "30", 1);
    setenv("FAKE_SEED", "1", 1);
}

/* Starts `tlview advise ARGS...` with stdout and stderr to files; returns its pid. */
static pid_t start_advise(const char *const *args)
{
    const char *argv[64] = {TLVIEW_BIN, "advise"};
    int n = 2;
    for (; args[n - 2] && n < 63; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    char outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/advise.out", test_tmpdir());
    snprintf(errp, sizeof errp, "%s/advise.err", test_tmpdir());
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execv(TLVIEW_BIN, (char **)argv);
        _exit(99);
    }
    return pid;
}

/* Waits for it; its exit code (128+n for a signal), stdout and stderr in out_text, err_text. */
static int finish_advise(pid_t pid)
{
    int status = 0;
    char path[4200];
    waitpid(pid, &status, 0);
    snprintf(path, sizeof path, "%s/advise.out", test_tmpdir());
    slurp(path, out_text, sizeof out_text);
    snprintf(path, sizeof path, "%s/advise.err", test_tmpdir());
    slurp(path, err_text, sizeof err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_advise(const char *const *args)
{
    return finish_advise(start_advise(args));
}

#define TEST_CONTAINS(hay, needle)                                                                 \
    do {                                                                                           \
        if (!strstr((hay), (needle))) {                                                            \
            fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, needle, hay); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static json_t *load_result(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/advise.json", dir);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "%s: %s (line %d)\n", path, e.text, e.line);
    return j;
}

/* Runs `tlview advise ARGS` into `dir` and returns the advise.json it wrote; NULL, saying why on
 * stderr, when advise did not exit 0 or the file does not read. */
static json_t *experiment(const char *const *args, const char *dir)
{
    int rc = run_advise(args);
    if (rc != 0) {
        fprintf(stderr, "tlview advise exited %d:\n%s%s\n", rc, out_text, err_text);
        return NULL;
    }
    return load_result(dir);
}

/* The object of configuration `id` in the result. */
static json_t *config(json_t *r, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "configs"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "config")), id))
            return c;
    }
    fprintf(stderr, "no configuration %s in the result\n", id);
    return NULL;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the figures of configuration id's successful runs, recomputed from "runs"; their
 * number in *pN. */
static double runs_median(json_t *r, const char *id, int *pN)
{
    double v[1024];
    int n = 0;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(r, "runs"), i, run)
    {
        if (!strcmp(str(run, "config"), id) && json_is_true(json_object_get(run, "ok")) && n < 1024)
            v[n++] = num(run, "figure");
    }
    *pN = n;
    if (!n)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Holm's correction recomputed here from the configurations' p: the k compared (p not null),
 * sorted ascending, the i-th (from 0) max over j <= i of min(1, (k - j) p(j)). Returns 0 when
 * every p_holm agrees, else 1 after saying which. */
static int check_holm(json_t *r)
{
    json_t *cfg[64], *c;
    int k = 0;
    size_t i;
    json_array_foreach(json_object_get(r, "configs"), i, c)
    {
        if (json_is_number(json_object_get(c, "p")) && k < 64)
            cfg[k++] = c;
    }
    for (int a = 1; a < k; a++)
        for (int b = a; b > 0 && num(cfg[b - 1], "p") > num(cfg[b], "p"); b--) {
            json_t *t = cfg[b];
            cfg[b] = cfg[b - 1];
            cfg[b - 1] = t;
        }
    double run = 0;
    for (int j = 0; j < k; j++) {
        double v = (k - j) * num(cfg[j], "p");
        run = fmax(run, fmin(1, v));
        if (fabs(num(cfg[j], "p_holm") - run) > 1e-12) {
            fprintf(stderr, "%s: p %g, p_holm %g, Holm over %d gives %g\n", str(cfg[j], "config"),
                    num(cfg[j], "p"), num(cfg[j], "p_holm"), k, run);
            return 1;
        }
    }
    return 0;
}

/* Live processes named nvidia-cuda-mps* whose CUDA_MPS_PIPE_DIRECTORY lies under `dir` (or is
 * /tmp/tlview-mps.*: the pipe folders of long paths). */
static int mps_alive_under(const char *dir)
{
    char cmd[8192], buf[64] = "";
    snprintf(cmd, sizeof cmd,
             "for p in /proc/[0-9]*; do "
             "  [ \"$(cat $p/comm 2>/dev/null)\" = nvidia-cuda-mps ] || continue; "
             "  tr '\\0' '\\n' 2>/dev/null < $p/environ | "
             "  grep -q -e '^CUDA_MPS_PIPE_DIRECTORY=%.4096s/' -e "
             "'^CUDA_MPS_PIPE_DIRECTORY=/tmp/tlview-mps' "
             "  && echo x; done | wc -l",
             dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    if (!fgets(buf, sizeof buf, p))
        buf[0] = 0;
    pclose(p);
    return atoi(buf);
}

/* Lines of the stand-in MPS log starting with `event` ("start", "quit", "client", ...). */
static int mps_events(const char *event)
{
    char log[1 << 16], *line, *save = NULL;
    int n = 0;
    size_t len = strlen(event);
    slurp(getenv("STANDIN_MPS_LOG"), log, sizeof log);
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        n += !strncmp(line, event, len) && line[len] == ' ';
    return n;
}

/* ------------------------------------------------------------------ the decision */

/* MPS gives the stand-in 1.5x with 5% noise: advise measures about 1.5x, finds it significant in 6
 * rounds (every MPS run beats every time-sliced one: p = 2/C(12,6)) and recommends MPS. The
 * medians it reports are the medians of its own runs (a mean, or one run's value, fails here),
 * and near the model's throughput: 1000 items in 30 ms per GPU time-sliced, 1.5 times that with
 * MPS. */
int test_advise_recommends_faster(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.5", 1);
    setenv("FAKE_NOISE", "0.05", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",        "--configs",     "sliced,mps", "-r",
                          "6",          "--metric", METRIC,          "-o",         dir,
                          "--no-trace", "--",       ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *rec = json_object_get(r, "recommendation"), *mps = config(r, "n2-mps");
    json_t *sl = config(r, "n2-sliced");
    TEST_ASSERT(mps && sl);
    TEST_EQ_STR(str(rec, "config"), "n2-mps");
    TEST_EQ_STR(str(rec, "reason"), "better");
    TEST_EQ_STR(str(mps, "outcome"), "better");
    TEST_EQ_INT(json_integer_value(json_object_get(rec, "comparisons")), 1);
    TEST_NEAR(num(mps, "p"), 2.0 / 924, 1e-12);
    TEST_NEAR(num(mps, "p_holm"), 2.0 / 924, 1e-12);
    int n;
    TEST_NEAR(num(mps, "median"), runs_median(r, "n2-mps", &n), 1e-9);
    TEST_EQ_INT(n, 6);
    TEST_NEAR(num(sl, "median"), runs_median(r, "n2-sliced", &n), 1e-9);
    TEST_EQ_INT(n, 6);
    TEST_NEAR(num(mps, "ratio"), num(mps, "median") / num(sl, "median"), 1e-12);
    TEST_NEAR(num(sl, "median") / (1000 / 0.030), 1, 0.06);
    TEST_NEAR(num(mps, "median") / (1500 / 0.030), 1, 0.06);
    TEST_NEAR(num(mps, "ratio"), 1.5, 0.1);
    TEST_ASSERT(num(mps, "ratio_lo") > 1.2 && num(mps, "ratio_hi") < 1.8);
    TEST_ASSERT(num(mps, "ratio_lo") <= num(mps, "ratio") &&
                num(mps, "ratio") <= num(mps, "ratio_hi"));
    TEST_NEAR(num(mps, "median_level"), 0.96875, 1e-12); /* 6 runs: [min, max] */
    TEST_CONTAINS(out_text, "recommendation: run mps at N=2: ");
    TEST_CONTAINS(out_text, "p = 0.0022 (Holm, 1 comparison), 6 and 6 runs");
    json_decref(r);
    return 0;
}

/* MPS 1.5x, MPS with half the threads each (mps:1/N at N=2) 1.52x: both significantly better than
 * time-slicing, and the limit not significantly better than plain MPS: plain MPS, the simpler
 * setup, is recommended. */
int test_advise_simpler_recommended(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.5", 1);
    setenv("FAKE_GAIN_MPS_50", "1.52", 1);
    setenv("FAKE_NOISE", "0.05", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2", "-r",         "6",  "--metric",      METRIC,
                          "-o", dir, "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    /* the default list at N=2: sliced, mps, mps:1/N = 50; mps:2/N = 100 is plain mps */
    TEST_EQ_INT(json_array_size(json_object_get(r, "configs")), 4);
    TEST_ASSERT(config(r, "n2-mps50") && config(r, "n2-mps"));
    TEST_EQ_STR(str(config(r, "n2-mps50"), "outcome"), "better");
    TEST_EQ_STR(str(config(r, "n2-mps"), "outcome"), "better");
    json_t *rec = json_object_get(r, "recommendation");
    TEST_EQ_STR(str(rec, "config"), "n2-mps");
    if (!strcmp(str(rec, "best"), "n2-mps50")) {
        TEST_EQ_STR(str(rec, "reason"), "simpler");
        TEST_ASSERT(num(rec, "p_simpler") >= 0.05);
        TEST_CONTAINS(out_text, "is not significantly better than it");
    } else {
        TEST_EQ_STR(str(rec, "reason"), "better");
    }
    TEST_EQ_INT(json_integer_value(json_object_get(rec, "comparisons")), 2);
    TEST_EQ_INT(check_holm(r), 0);
    TEST_NEAR(num(config(r, "n2-mps"), "p_holm"), 2 * 2.0 / 924, 1e-12); /* both beat every run */
    TEST_ASSERT(!strstr(out_text, "rates were uneven")); /* copies that shared alike */
    json_decref(r);
    return 0;
}

/* Under MPS the two copies share the GPU unevenly (FAKE_UNEVEN 1.5: each does the same work, the
 * first at 1.5 times the second's rate, and the GPU does no more than time-sliced): the summed
 * figure reads 1.25x and decides, as the figure of merit is defined; the copies' spread says
 * that N times the slowest rate gains nothing, in the JSON, the CSV and the note. */
int test_advise_uneven(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1", 1);
    setenv("FAKE_UNEVEN", "1.5", 1);
    setenv("FAKE_NOISE", "0.01", 1);
    setenv("FAKE_WORK_MS", "100", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",        "--configs",     "sliced,mps", "-r",
                          "6",          "--metric", METRIC,          "-o",         dir,
                          "--no-trace", "--",       ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *mps = config(r, "n2-mps"), *sliced = config(r, "n2-sliced");
    TEST_ASSERT(mps && sliced);
    TEST_NEAR(num(mps, "ratio"), 1.25, 0.04);
    TEST_EQ_STR(str(mps, "outcome"), "better");
    TEST_NEAR(num(mps, "uneven"), 1.5, 1e-6);
    TEST_NEAR(num(sliced, "uneven"), 1, 1e-9);
    TEST_NEAR(num(mps, "slowest_ratio"), 1, 0.04);
    TEST_NEAR(num(sliced, "slowest_ratio"), 1, 1e-12);
    TEST_NEAR(num(mps, "slowest_median") / num(sliced, "slowest_median"), num(mps, "slowest_ratio"),
              1e-12);
    /* each run's figures, and the runs whose fastest copy (copy 0) exited first, counted again */
    json_t *run;
    size_t i;
    int first = 0;
    json_array_foreach(json_object_get(r, "runs"), i, run)
    {
        if (strcmp(str(run, "config"), "n2-mps"))
            continue;
        json_t *c = json_object_get(run, "copies");
        double m0 = num(json_array_get(c, 0), "metric"), m1 = num(json_array_get(c, 1), "metric");
        TEST_NEAR(num(run, "uneven"), m0 / m1, 1e-9);
        TEST_NEAR(num(run, "slowest_figure"), 2 * m1, 1e-9);
        first += num(json_array_get(c, 0), "wall_ns") < num(json_array_get(c, 1), "wall_ns");
    }
    TEST_EQ_INT(json_integer_value(json_object_get(mps, "fastest_first_runs")), first);
    TEST_ASSERT(first >= 1);
    TEST_CONTAINS(out_text, "note: mps at N=2: the copies' rates were uneven, the fastest 1.50x "
                            "the slowest (median of 6 runs)");
    TEST_CONTAINS(out_text, "N times the slowest rate is the measure");
    TEST_CONTAINS(out_text, ", less than the margin of a gain; ");
    TEST_CONTAINS(out_text, "--combine slowest` decides on it");
    TEST_EQ_STR(str(r, "combine"), "sum");
    const char *csv[] = {"--show", dir, "--format", "csv", NULL};
    TEST_EQ_INT(run_advise(csv), 0);
    TEST_CONTAINS(out_text, ",uneven,slowest_median,slowest_ratio,fastest_first_runs,");
    /* figured again on N times the slowest: no gain, as the model has none; no note then */
    const char *slow[] = {"--show", dir, "--combine", "slowest", "--format", "json", NULL};
    TEST_EQ_INT(run_advise(slow), 0);
    json_t *s = json_loads(out_text, 0, NULL);
    TEST_ASSERT(s);
    TEST_EQ_STR(str(s, "combine"), "slowest");
    TEST_NEAR(num(config(s, "n2-mps"), "ratio"), num(mps, "slowest_ratio"), 1e-9);
    TEST_NEAR(num(config(s, "n2-mps"), "median"), num(mps, "slowest_median"), 1e-9);
    TEST_EQ_INT(json_array_size(json_object_get(s, "notes")), 0);
    json_decref(s);
    const char *slow_text[] = {"--show", dir, "--combine", "slowest", NULL};
    TEST_EQ_INT(run_advise(slow_text), 0);
    TEST_CONTAINS(out_text, ", N times the slowest copy's (what copies doing the same work did");
    TEST_ASSERT(!strstr(out_text, "rates were uneven"));
    /* advise.json keeps the sum: --show figures again, it changes nothing on disk */
    json_t *again = load_result(dir);
    TEST_ASSERT(again);
    TEST_EQ_STR(str(again, "combine"), "sum");
    json_decref(again);
    json_decref(r);
    return 0;
}

/* MPS 1.02x with 5% noise, in both MPS configurations: not significant, and advise says so and
 * keeps time-slicing. */
int test_advise_not_significant(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.02", 1);
    setenv("FAKE_GAIN_MPS_50", "1.02", 1);
    setenv("FAKE_NOISE", "0.05", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2", "-r",         "6",  "--metric",      METRIC,
                          "-o", dir, "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *rec = json_object_get(r, "recommendation");
    TEST_EQ_STR(str(rec, "config"), "n2-sliced");
    TEST_ASSERT(!strcmp(str(rec, "reason"), "not-significant") ||
                !strcmp(str(rec, "reason"), "default-best"));
    TEST_EQ_STR(str(config(r, "n2-mps"), "outcome"), "same");
    TEST_EQ_STR(str(config(r, "n2-mps50"), "outcome"), "same");
    TEST_ASSERT(num(config(r, "n2-mps"), "p_holm") >= 0.05);
    TEST_NEAR(num(config(r, "n2-mps"), "ratio"), 1.02, 0.06);
    TEST_EQ_INT(check_holm(r), 0);
    TEST_CONTAINS(out_text, "recommendation: keep the default (time-sliced, N=2): ");
    /* what the interval says of it, in the line and in the JSON alike */
    const char *line = str(rec, "text");
    json_t *wm = json_object_get(rec, "within_margin");
    int tell = (int)json_integer_value(json_object_get(rec, "rounds_to_tell"));
    TEST_ASSERT(json_is_boolean(wm));
    TEST_EQ_INT(strstr(line, "as good as each other here") != NULL, json_is_true(wm));
    TEST_EQ_INT(strstr(line, "vary too much to tell") != NULL, tell != 0);
    TEST_EQ_INT(strstr(line, "too wide to rule out more") != NULL, !json_is_true(wm) && !tell);
    TEST_ASSERT(tell == 0 || tell == -1 || tell > 6);
    json_decref(r);
    return 0;
}

/* Two repeats: nothing can be significant, and advise says that the evidence is too thin and how
 * many runs it needs, even for a real 1.5x. */
int test_advise_thin(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.5", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",        "--configs",     "sliced,mps", "-r",
                          "2",          "--metric", METRIC,          "-o",         dir,
                          "--no-trace", "--",       ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *rec = json_object_get(r, "recommendation");
    TEST_EQ_STR(str(rec, "reason"), "thin");
    TEST_EQ_STR(str(rec, "config"), "n2-sliced");
    TEST_EQ_INT(json_integer_value(json_object_get(rec, "repeats_needed")), 4);
    TEST_CONTAINS(out_text, "too few runs to tell: with 2 and 2 runs no difference can be "
                            "significant at 5% over 1 comparison (at least 4 runs each are "
                            "needed: --repeat 4)");
    TEST_NEAR(num(config(r, "n2-mps"), "median_level"), 0.5, 1e-12);
    json_decref(r);
    return 0;
}

/* ------------------------------------------------------------------ the order */

/* The rounds as run: forward, backward, each pair turned by one more (adv_round_order), recorded
 * in "order" and in each run's round and position, and run in that order (start times). A
 * position effect (the first run of each round 30% slower: a GPU that starts each round cold)
 * falls on every configuration alike: each opens 2 of the 6 rounds, so every median is the
 * model's exact throughput and no difference is found. (With one fixed order solo would open
 * every round and come out 30% worse; the same configuration in every round would fail the
 * order's check.) */
int test_advise_interleaved(void)
{
    setup();
    setenv("FAKE_FIRST_SLOW", "0.3", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "1,2", "--configs",     "sliced,mps", "-r",
                          "6",          "-m",  METRIC,          "-o",         dir,
                          "--no-trace", "--",  ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    static const char *const ids[3] = {"solo", "n2-sliced", "n2-mps"};
    static const int want[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0},
                                   {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
    json_t *order = json_object_get(r, "order"), *runs = json_object_get(r, "runs");
    TEST_EQ_INT(json_array_size(order), 6);
    TEST_EQ_INT(json_array_size(runs), 18);
    long long last = 0;
    for (int round = 0; round < 6; round++)
        for (int pos = 0; pos < 3; pos++) {
            json_t *run = json_array_get(runs, (size_t)(round * 3 + pos));
            TEST_EQ_STR(json_string_value(
                            json_array_get(json_array_get(order, (size_t)round), (size_t)pos)),
                        ids[want[round][pos]]);
            TEST_EQ_STR(str(run, "config"), ids[want[round][pos]]);
            TEST_EQ_INT(json_integer_value(json_object_get(run, "round")), round);
            TEST_EQ_INT(json_integer_value(json_object_get(run, "position")), pos);
            long long start = json_integer_value(json_object_get(run, "start_ns"));
            TEST_ASSERT(start > last);
            last = start;
            /* the first of each round ran 30% slower, and only it */
            double model = 1000 / 0.030 * (pos == 0 ? 0.7 : 1);
            TEST_NEAR(num(run, "figure") / model, 1, 1e-6);
        }
    for (int c = 0; c < 3; c++) {
        json_t *cfg = config(r, ids[c]);
        TEST_NEAR(num(cfg, "median") / (1000 / 0.030), 1, 1e-6);
        if (c != 1)
            TEST_EQ_STR(str(cfg, "outcome"), "same");
    }
    TEST_EQ_STR(str(json_object_get(r, "recommendation"), "config"), "n2-sliced");
    TEST_EQ_INT(check_holm(r), 0);
    json_decref(r);
    return 0;
}

/* ------------------------------------------------------------------ the budget */

/* --budget 3s with 50 rounds asked: each round takes about 1 s here (30 + 2 x 150 + 2 x 150 ms of
 * work and the daemon), so advise stops at a round's end once the next would not fit, says how
 * many rounds ran, and took about the budget. Without --repeat the budget alone bounds it. */
int test_advise_budget(void)
{
    setup();
    setenv("FAKE_WORK_MS", "150", 1);
    const char *dir = tmp("exp");
    const char *args[] = {
        "-n", "2", "--configs", "sliced,mps", "-r",         "50", "--budget",      "3s",
        "-o", dir, "-m",        METRIC,       "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    int rounds = (int)json_integer_value(json_object_get(r, "rounds_run"));
    double took = (double)(json_integer_value(json_object_get(r, "end_ns")) -
                           json_integer_value(json_object_get(r, "start_ns"))) /
                  1e9;
    fprintf(stderr, "%d rounds in %.2f s\n", rounds, took);
    TEST_EQ_STR(str(r, "stopped_by"), "budget");
    TEST_ASSERT(rounds >= 1 && rounds < 50);
    TEST_EQ_INT(json_array_size(json_object_get(r, "runs")), 3 * rounds);
    TEST_ASSERT(took < 3 * 1.5); /* the next round was not begun once it would not fit */
    TEST_EQ_INT(json_integer_value(json_object_get(r, "budget_ns")), 3000000000LL);
    char note[128];
    snprintf(note, sizeof note, "note: the budget stopped the experiment after %d round%s", rounds,
             rounds == 1 ? "" : "s");
    TEST_CONTAINS(out_text, note);
    const char *dir2 = tmp("exp2");
    const char *only[] = {
        "-n", "2",    "--configs",  "sliced,mps", "--budget",      "2", "-o", dir2,
        "-m", METRIC, "--no-trace", "--",         ADVISE_FAKE_APP, NULL};
    json_t *r2 = experiment(only, dir2);
    TEST_ASSERT(r2);
    TEST_EQ_STR(str(r2, "stopped_by"), "budget");
    TEST_ASSERT(json_is_null(json_object_get(r2, "repeat")));
    TEST_ASSERT(json_integer_value(json_object_get(r2, "rounds_run")) >= 1);
    json_decref(r);
    json_decref(r2);
    return 0;
}

/* ------------------------------------------------------------------ failures and the daemon */

/* Copies that crash, exit non-zero, print no metric or a metric that is not a number fail their
 * runs: each named with its reason, none counted (the medians are those of the other runs), the
 * exit status 1. Every MPS daemon was stopped after its run, also after the crash: as many quits
 * as starts in the stand-in's log, no process of a pipe folder of the experiment left, the pipe
 * folders removed. */
int test_advise_failed_copies(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.5", 1);
    setenv("FAKE_FAIL",
           "n2-mps/r0:0:segv,n2-sliced/r1:1:exit3,n2-mps/r2:1:nometric,n2-sliced/r2:0:nan", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",  "--configs",     "sliced,mps", "-r",
                          "4",          "-m", METRIC,          "-o",         dir,
                          "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    TEST_EQ_INT(run_advise(args), 1);
    json_t *r = load_result(dir);
    TEST_ASSERT(r);
    static const char *const want[][2] = {
        {"n2-mps/r0", "copy 0 (pid "},
        {"n2-mps/r0", ") was killed by SIGSEGV (its stderr: n2-mps/r0/copy0.err)"},
        {"n2-sliced/r1", ") exited with status 3 (its stderr: n2-sliced/r1/copy1.err)"},
        {"n2-mps/r2", "): no line of its stdout matches --metric (n2-mps/r2/copy1.out)"},
        {"n2-sliced/r2",
         "): --metric captured '1.2.3', which is not a number (n2-sliced/r2/copy0.out)"}};
    size_t i;
    json_t *run;
    int failed = 0;
    json_array_foreach(json_object_get(r, "runs"), i, run)
    {
        int bad = 0;
        for (size_t w = 0; w < sizeof want / sizeof *want; w++)
            if (!strcmp(str(run, "dir"), want[w][0])) {
                bad = 1;
                TEST_CONTAINS(str(run, "error"), want[w][1]);
            }
        TEST_EQ_INT(json_is_true(json_object_get(run, "ok")), !bad);
        TEST_EQ_INT(json_is_null(json_object_get(run, "figure")), bad);
        failed += bad;
    }
    TEST_EQ_INT(failed, 4);
    int n;
    TEST_EQ_INT(json_integer_value(json_object_get(config(r, "n2-mps"), "ok")), 2);
    TEST_EQ_INT(json_integer_value(json_object_get(config(r, "n2-mps"), "failed")), 2);
    TEST_NEAR(num(config(r, "n2-mps"), "median"), runs_median(r, "n2-mps", &n), 1e-9);
    TEST_EQ_INT(n, 2);
    TEST_CONTAINS(out_text, "note: run n2-mps/r0 failed (not counted): copy 0 (pid ");
    TEST_CONTAINS(out_text, "(12 runs, 4 failed)");
    TEST_EQ_INT(mps_events("start"), 4);
    TEST_EQ_INT(mps_events("quit"), 4);
    TEST_EQ_INT(mps_events("cmd:start_server"), 4);
    TEST_EQ_INT(mps_alive_under(dir), 0);
    struct stat st;
    char pipe[4200];
    for (int k = 0; k < 4; k++) {
        snprintf(pipe, sizeof pipe, "%s/n2-mps/r%d/mps-pipe", dir, k);
        TEST_ASSERT(stat(pipe, &st) != 0);
    }
    json_decref(r);
    return 0;
}

/* The copy's stdout and stderr are kept: what a failed copy said can be read. */
int test_advise_copy_outputs(void)
{
    setup();
    const char *dir = tmp("exp");
    const char *args[] = {"-n",
                          "2",
                          "--configs",
                          "sliced,mps",
                          "-r",
                          "1",
                          "-o",
                          dir,
                          "--no-trace",
                          "--",
                          "/bin/sh",
                          "-c",
                          "echo out $TLVIEW_RANK/$TLVIEW_NPROCS; echo err >&2",
                          NULL};
    TEST_EQ_INT(run_advise(args), 0);
    char buf[256];
    slurp(tmp("exp/n2-mps/r0/copy1.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "out 1/2\n");
    slurp(tmp("exp/n2-mps/r0/copy1.err"), buf, sizeof buf);
    TEST_EQ_STR(buf, "err\n");
    slurp(tmp("exp/solo/r0/copy0.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "out 0/1\n");
    json_t *m;
    json_error_t je;
    TEST_ASSERT((m = json_load_file(tmp("exp/n2-mps/r0/manifest.json"), 0, &je)));
    TEST_EQ_STR(str(m, "tool"), "tlview advise");
    TEST_ASSERT(json_is_true(json_object_get(json_object_get(m, "mps"), "stopped")));
    json_decref(m);
    return 0;
}

/* SIGINT to advise while an MPS run's copy is running: the copies get it, the daemon is stopped
 * (its quit logged, none of its processes left), what was measured is written (the interrupted
 * run not counted) and printed, and advise exits 130. */
int test_advise_sigint(void)
{
    setup();
    setenv("FAKE_FAIL", "n2-mps/r0:0:hang", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",  "--configs",     "sliced,mps", "-r",
                          "3",          "-m", METRIC,          "-o",         dir,
                          "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    pid_t pid = start_advise(args);
    char buf[4096] = "";
    for (int i = 0; i < 400 && !strstr(buf, "fake_app:"); i++) {
        sleep_ms(50);
        slurp(tmp("exp/n2-mps/r0/copy0.out"), buf, sizeof buf);
    }
    TEST_CONTAINS(buf, "fake_app: mps=1");
    sleep_ms(200);
    TEST_EQ_INT(mps_alive_under(dir), 1); /* the stand-in daemon of this run */
    kill(pid, SIGINT);
    TEST_EQ_INT(finish_advise(pid), 130);
    json_t *r = load_result(dir);
    TEST_ASSERT(r);
    TEST_EQ_STR(str(r, "stopped_by"), "SIGINT");
    json_t *runs = json_object_get(r, "runs");
    TEST_EQ_INT(json_array_size(runs), 3); /* solo, sliced, then mps interrupted */
    json_t *last = json_array_get(runs, 2);
    TEST_EQ_STR(str(last, "config"), "n2-mps");
    TEST_EQ_STR(str(last, "error"), "interrupted by SIGINT");
    TEST_ASSERT(json_is_false(json_object_get(last, "ok")));
    TEST_EQ_INT(mps_events("start"), 1);
    TEST_EQ_INT(mps_events("quit"), 1);
    TEST_EQ_INT(mps_alive_under(dir), 0);
    TEST_CONTAINS(out_text, "recommendation: ");
    TEST_CONTAINS(out_text, "note: interrupted by SIGINT in round 1");
    json_decref(r);
    return 0;
}

/* A copy that ignores SIGTERM: advise forwards it, waits 10 s, kills the copy, and still stops
 * and writes everything (exit 143). */
int test_advise_sigterm_deaf_copy(void)
{
    setup();
    setenv("FAKE_FAIL", "n2-mps/r0:1:deaf", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n",         "2",  "--configs",     "sliced,mps", "-r",
                          "2",          "-m", METRIC,          "-o",         dir,
                          "--no-trace", "--", ADVISE_FAKE_APP, NULL};
    pid_t pid = start_advise(args);
    char buf[4096] = "";
    for (int i = 0; i < 400 && !strstr(buf, "fake_app:"); i++) {
        sleep_ms(50);
        slurp(tmp("exp/n2-mps/r0/copy1.out"), buf, sizeof buf);
    }
    TEST_CONTAINS(buf, "fake_app:");
    sleep_ms(200);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kill(pid, SIGTERM);
    TEST_EQ_INT(finish_advise(pid), 143);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, "advise ended %.1f s after SIGTERM\n", waited);
    TEST_ASSERT(waited >= 9.5 && waited < 40);
    json_t *r = load_result(dir);
    TEST_ASSERT(r);
    TEST_EQ_STR(str(r, "stopped_by"), "SIGTERM");
    json_t *copies = json_object_get(json_array_get(json_object_get(r, "runs"), 2), "copies");
    TEST_EQ_INT(json_integer_value(json_object_get(json_array_get(copies, 1), "signal")), SIGKILL);
    TEST_EQ_INT(mps_events("quit"), 1);
    TEST_EQ_INT(mps_alive_under(dir), 0);
    json_decref(r);
    return 0;
}

/* An experiment folder too deep for the MPS sockets: each MPS run's pipe folder goes to /tmp and
 * is removed with its daemon. */
int test_advise_long_dir(void)
{
    setup();
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", test_tmpdir(),
             "an-experiment-folder-whose-path-is-longer-than-unix-sockets-allow-for-mps-pipes");
    const char *args[] = {"-n", "2",          "--configs", "sliced,mps",    "-r", "1", "-o",
                          dir,  "--no-trace", "--",        ADVISE_FAKE_APP, NULL};
    TEST_EQ_INT(run_advise(args), 0);
    char path[4400];
    snprintf(path, sizeof path, "%s/n2-mps/r0/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    TEST_ASSERT(m);
    const char *pipe = str(json_object_get(m, "mps"), "pipe_dir");
    TEST_ASSERT(!strncmp(pipe, "/tmp/tlview-mps.", 16));
    struct stat st;
    TEST_ASSERT(stat(pipe, &st) != 0);
    TEST_EQ_INT(mps_alive_under(dir), 0);
    json_decref(m);
    return 0;
}

/* ------------------------------------------------------------------ the figure of merit */

/* --metric: the first group of the last match in each copy's stdout (the last matching line, its
 * last match), summed over the copies (copy i prints 10 (i + 1)): 30 at N=2, 100 at N=4, 10 for
 * solo. Without --metric: copies per second of makespan. */
int test_advise_metric(void)
{
    setup();
    const char *prog = "echo 'rate=999'; echo \"rate=7 and rate=$(( (TLVIEW_RANK + 1) * 10 ))\"; "
                       "echo 'no rate here'";
    const char *dir = tmp("exp");
    const char *args[] = {
        "-n", "2,4", "--configs",  "sliced,mps", "-r",      "1",  "-m", "rate=([0-9.e+-]+)",
        "-o", dir,   "--no-trace", "--",         "/bin/sh", "-c", prog, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    TEST_EQ_STR(str(r, "figure_of_merit"), "metric");
    TEST_NEAR(num(config(r, "solo"), "median"), 10, 0);
    TEST_NEAR(num(config(r, "n2-sliced"), "median"), 30, 0);
    TEST_NEAR(num(config(r, "n2-mps"), "median"), 30, 0);
    TEST_NEAR(num(config(r, "n4-sliced"), "median"), 100, 0);
    TEST_NEAR(num(config(r, "n4-mps"), "median"), 100, 0);
    TEST_ASSERT(json_is_true(json_object_get(config(r, "n4-sliced"), "default")));
    json_t *copies = json_object_get(json_array_get(json_object_get(r, "runs"), 0), "copies");
    TEST_NEAR(num(json_array_get(copies, 0), "metric"), 10, 0);
    /* copies per second: N over the makespan */
    const char *dir2 = tmp("exp2");
    const char *wall[] = {"-n", "2",          "--configs", "sliced,mps", "-r", "1",         "-o",
                          dir2, "--no-trace", "--",        "/bin/sh",    "-c", "sleep 0.2", NULL};
    json_t *r2 = experiment(wall, dir2);
    TEST_ASSERT(r2);
    TEST_EQ_STR(str(r2, "figure_of_merit"), "copies_per_s");
    json_t *run;
    size_t i;
    json_array_foreach(json_object_get(r2, "runs"), i, run)
    {
        double makespan = num(run, "makespan_ns") / 1e9;
        int ncopies = (int)json_array_size(json_object_get(run, "copies"));
        TEST_NEAR(num(run, "figure"), ncopies / makespan, 1e-9);
        TEST_ASSERT(makespan >= 0.2 && makespan < 2);
        json_t *c;
        size_t k;
        json_array_foreach(json_object_get(run, "copies"), k, c)
        {
            TEST_ASSERT(num(c, "wall_ns") >= 0.2e9 && num(c, "wall_ns") <= num(run, "makespan_ns"));
        }
    }
    json_decref(r);
    json_decref(r2);
    return 0;
}

/* Copies of different commands (CMD ::: CMD2): copy i runs command i mod 2; solo runs each alone,
 * one after the other. */
int test_advise_commands(void)
{
    setup();
    const char *dir = tmp("exp");
    const char *args[] = {"-n",
                          "2",
                          "--configs",
                          "sliced,mps",
                          "-r",
                          "1",
                          "-o",
                          dir,
                          "--no-trace",
                          "--",
                          "/bin/sh",
                          "-c",
                          "echo A $TLVIEW_RANK $TLVIEW_NPROCS",
                          ":::",
                          "/bin/sh",
                          "-c",
                          "echo B $TLVIEW_RANK $TLVIEW_NPROCS",
                          NULL};
    TEST_EQ_INT(run_advise(args), 0);
    char buf[256];
    slurp(tmp("exp/n2-sliced/r0/copy0.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "A 0 2\n");
    slurp(tmp("exp/n2-sliced/r0/copy1.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "B 1 2\n");
    slurp(tmp("exp/solo/r0/copy0.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "A 0 1\n");
    slurp(tmp("exp/solo/r0/copy1.out"), buf, sizeof buf);
    TEST_EQ_STR(buf, "B 0 1\n");
    json_t *r = load_result(dir);
    TEST_ASSERT(r);
    TEST_EQ_INT(json_array_size(json_object_get(r, "commands")), 2);
    json_t *solo = json_array_get(json_object_get(r, "runs"), 0);
    TEST_EQ_STR(str(solo, "config"), "solo");
    json_t *copies = json_object_get(solo, "copies");
    TEST_EQ_INT(json_integer_value(json_object_get(json_array_get(copies, 1), "command")), 1);
    /* the solo copies ran one after the other: the makespan is the sum of their walls */
    TEST_NEAR(num(solo, "makespan_ns"),
              num(json_array_get(copies, 0), "wall_ns") + num(json_array_get(copies, 1), "wall_ns"),
              0);
    const char *odd[] = {"-n", "3", "--", "/bin/true", ":::", "/bin/true", NULL};
    TEST_EQ_INT(run_advise(odd), 2);
    TEST_CONTAINS(err_text, "tlview advise: -n 3: with 2 commands each N above 1 must be a "
                            "multiple of 2, so that every command runs as often");
    json_decref(r);
    return 0;
}

/* ------------------------------------------------------------------ the environment */

/* What each configuration's copies see: without MPS a pipe folder where no daemon listens (not
 * the user's CUDA_MPS_PIPE_DIRECTORY, whose daemon runs), no thread percentage (not the user's
 * 77); under mps:25 a private daemon and 25. The user's daemon is left alone. */
int test_advise_environment(void)
{
    setup();
    char user_pipe[4200], cmd[4400];
    snprintf(user_pipe, sizeof user_pipe, "%s", tmp("userpipe"));
    mkdir(user_pipe, 0700);
    setenv("CUDA_MPS_PIPE_DIRECTORY", user_pipe, 1);
    snprintf(cmd, sizeof cmd, "%s/nvidia-cuda-mps-control -d", RECORD_DIR);
    TEST_EQ_INT(system(cmd), 0);
    setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "77", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2",          "--configs", "sliced,mps,mps:25", "-r", "1", "-o",
                          dir,  "--no-trace", "--",        ADVISE_FAKE_APP,     NULL};
    int rc = run_advise(args);
    int user_alive = mps_alive_under(test_tmpdir());
    snprintf(cmd, sizeof cmd, "echo quit | %s/nvidia-cuda-mps-control", RECORD_DIR);
    TEST_EQ_INT(system(cmd), 0);
    TEST_EQ_INT(rc, 0);
    TEST_CONTAINS(err_text, "is not used: each configuration sets its own (a private daemon, or "
                            "none)");
    TEST_CONTAINS(err_text, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is not used");
    char buf[1024], want[4400];
    snprintf(want, sizeof want,
             "mps=0 percentage=- nprocs=2 rank=0 run=n2-sliced/r0 pipe=%s/.no-mps", dir);
    slurp(tmp("exp/n2-sliced/r0/copy0.out"), buf, sizeof buf);
    TEST_CONTAINS(buf, want);
    slurp(tmp("exp/n2-mps/r0/copy0.out"), buf, sizeof buf);
    TEST_CONTAINS(buf, "mps=1 percentage=- nprocs=2");
    snprintf(want, sizeof want, "pipe=%s/n2-mps/r0/mps-pipe", dir);
    TEST_CONTAINS(buf, want);
    slurp(tmp("exp/n2-mps25/r0/copy1.out"), buf, sizeof buf);
    TEST_CONTAINS(buf, "mps=1 percentage=25 nprocs=2 rank=1");
    slurp(tmp("exp/solo/r0/copy0.out"), buf, sizeof buf);
    TEST_CONTAINS(buf, "mps=0 percentage=- nprocs=1");
    struct stat st;
    TEST_ASSERT(stat(tmp("exp/.no-mps"), &st) == 0 && S_ISDIR(st.st_mode));
    TEST_EQ_INT(user_alive, 1); /* the user's daemon ran on through advise */
    for (int i = 0; i < 100 && mps_alive_under(test_tmpdir()) > 0; i++)
        sleep_ms(50);
    TEST_EQ_INT(mps_alive_under(test_tmpdir()), 0);
    return 0;
}

/* ------------------------------------------------------------------ the outputs */

/* Configuration `id`'s row of `csv` (its text after "id,"), into row. */
static int csv_row(const char *csv, const char *id, char *row, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s,", id);
    const char *at = strstr(csv, key);
    if (!at)
        return -1;
    at += strlen(key) - strlen(id) - 1;
    snprintf(row, n, "%.*s", (int)strcspn(at, "\n"), at);
    return 0;
}

/* Text, JSON and CSV agree: --show prints byte for byte what the experiment printed; the CSV's
 * columns are the JSON's keys with its values (at 6 digits); the text's recommendation is the
 * JSON's; the table prints the JSON's medians and ratios. */
int test_advise_formats_agree(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "1.5", 1);
    setenv("FAKE_NOISE", "0.05", 1);
    setenv("FAKE_TRACE", "1", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2", "--configs", "sliced,mps",    "-r", "3", "-m", METRIC,
                          "-o", dir, "--",        ADVISE_FAKE_APP, NULL};
    TEST_EQ_INT(run_advise(args), 0);
    static char live[1 << 20], again[1 << 20];
    snprintf(live, sizeof live, "%s", out_text);
    const char *show[] = {"--show", dir, NULL};
    TEST_EQ_INT(run_advise(show), 0);
    TEST_EQ_STR(out_text, live);
    const char *json[] = {"--show", dir, "--format", "json", NULL};
    TEST_EQ_INT(run_advise(json), 0);
    json_error_t je;
    json_t *r = json_loads(out_text, 0, &je);
    TEST_ASSERT(r);
    json_t *rec = json_object_get(r, "recommendation");
    char line[4096];
    snprintf(line, sizeof line, "\nrecommendation: %s\n", str(rec, "text"));
    TEST_CONTAINS(live, line);
    const char *csv[] = {"--show", dir, "--format", "csv", NULL};
    TEST_EQ_INT(run_advise(csv), 0);
    snprintf(again, sizeof again, "%s", out_text);
    TEST_ASSERT(
        !strncmp(again, "config,name,kind,procs,percentage,default,candidate,runs,ok,", 60));
    /* every key of the first configuration is a column, in order */
    char header[4096] = "";
    json_t *first = json_array_get(json_object_get(r, "configs"), 0);
    const char *key;
    json_t *v;
    json_object_foreach(first, key, v)
    {
        strcat(header, header[0] ? "," : "");
        strcat(header, key);
    }
    strcat(header, "\n");
    TEST_ASSERT(!strncmp(again, header, strlen(header)));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "configs"), i, c)
    {
        char row[4096], want[4096] = "", field[64];
        TEST_EQ_INT(csv_row(again, str(c, "config"), row, sizeof row), 0);
        json_object_foreach(c, key, v)
        {
            if (json_is_real(v))
                snprintf(field, sizeof field, "%.6g", json_real_value(v));
            else if (json_is_integer(v))
                snprintf(field, sizeof field, "%lld", (long long)json_integer_value(v));
            else if (json_is_string(v))
                snprintf(field, sizeof field, "%s", json_string_value(v));
            else if (json_is_boolean(v))
                snprintf(field, sizeof field, "%d", json_is_true(v));
            else
                field[0] = 0;
            strcat(want, want[0] ? "," : "");
            strcat(want, field);
        }
        TEST_EQ_STR(row, want);
        /* the text table: name, N, runs, median at 4 digits, ratio */
        char cell[128];
        snprintf(cell, sizeof cell, "%-10s %4lld %5s", str(c, "name"),
                 (long long)json_integer_value(json_object_get(c, "procs")), "3/3");
        TEST_CONTAINS(live, cell);
        snprintf(cell, sizeof cell, " %.2fx ", num(c, "ratio"));
        TEST_CONTAINS(live, cell);
    }
    const char *runs_csv[] = {"--show", dir, "--format", "csv", "--table", "runs", NULL};
    TEST_EQ_INT(run_advise(runs_csv), 0);
    TEST_ASSERT(!strncmp(out_text, "round,position,config,ok,error,figure,makespan_ns,", 50));
    int lines = 0;
    for (const char *p = out_text; *p; p++)
        lines += *p == '\n';
    TEST_EQ_INT(lines, 1 + 9);
    const char *copies_csv[] = {"--show", dir, "--format", "csv", "--table", "copies", NULL};
    TEST_EQ_INT(run_advise(copies_csv), 0);
    TEST_CONTAINS(out_text, "\n0,solo,0,0,");
    const char *pred_csv[] = {"--show", dir, "--format", "csv", "--table", "prediction", NULL};
    TEST_EQ_INT(run_advise(pred_csv), 0);
    TEST_CONTAINS(out_text, "\n2,n2-sliced,n2-mps,3,");
    json_decref(r);
    return 0;
}

/* From the traces: the verdicts (time-sliced without MPS; concurrent under MPS at a gain of N),
 * the stretch, and `report`'s prediction from the time-sliced runs beside the measured MPS gain
 * (2x in the model): the coverage says where the measurement fell. A program whose CPU leaves
 * the GPU idle 30% of the time is host-paced, and advise says that a GPU trace cannot time the
 * host. */
int test_advise_gpu_figures(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "2", 1);
    setenv("FAKE_TRACE", "1", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2", "--configs", "sliced,mps",    "-r", "2", "-m", METRIC,
                          "-o", dir, "--",        ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *sl = config(r, "n2-sliced"), *mps = config(r, "n2-mps");
    TEST_EQ_INT(json_integer_value(json_object_get(sl, "traced")), 2);
    TEST_EQ_STR(str(sl, "verdict"), "time-sliced");
    TEST_NEAR(num(sl, "stretch"), 2, 0.3);
    TEST_EQ_STR(str(mps, "verdict"), "concurrent");
    TEST_EQ_STR(str(config(r, "solo"), "verdict"), "solo");
    json_t *p = json_array_get(json_object_get(r, "prediction"), 0);
    TEST_ASSERT(p);
    double lo = num(p, "predicted_gain_low"), hi = num(p, "predicted_gain");
    double gain = num(p, "measured_gain");
    fprintf(stderr, "predicted %.3f-%.3f, measured %.3f\n", lo, hi, gain);
    TEST_ASSERT(lo > 1 && lo <= hi && hi <= 2.2);
    TEST_NEAR(gain, 2, 1e-6);
    TEST_EQ_STR(str(p, "coverage"), gain < lo ? "below" : gain > hi ? "above" : "inside");
    TEST_CONTAINS(out_text, "MPS gain at N=2: measured 2.00x, interval ");
    TEST_CONTAINS(out_text, "; `tlview report` predicted ");
    TEST_EQ_INT(json_integer_value(json_object_get(sl, "host_paced_runs")), 0);
    TEST_ASSERT(!strstr(out_text, "cannot time"));
    /* the figure is the program's rate, not the makespan: no prediction over the makespan */
    TEST_ASSERT(json_is_null(json_object_get(p, "predicted_makespan_gain")));
    TEST_ASSERT(!strstr(out_text, "over the makespan"));
    json_decref(r);

    setenv("FAKE_TRACE_BUSY", "0.7", 1);
    const char *dir2 = tmp("exp2");
    const char *paced[] = {"-n", "2",  "--configs", "sliced,mps",    "-r", "1", "-m", METRIC,
                           "-o", dir2, "--",        ADVISE_FAKE_APP, NULL};
    r = experiment(paced, dir2);
    TEST_ASSERT(r);
    TEST_EQ_INT(json_integer_value(json_object_get(config(r, "n2-sliced"), "host_paced_runs")), 1);
    TEST_CONTAINS(out_text, "which a GPU trace cannot time");
    json_decref(r);
    return 0;
}

/* Copies that start up for 150 ms before 60 ms of GPU work (time-sliced; 30 ms under MPS, a gain
 * of 2 in the model), the figure copies per second of makespan: the traces' span holds the work
 * only, so `report`'s prediction is over it, and advise gives it over the makespan too, the
 * start-up as it was: M / (M - S + S / g), nearer the measured gain than the prediction over the
 * span. */
int test_advise_startup(void)
{
    setup();
    setenv("FAKE_GAIN_MPS", "2", 1);
    setenv("FAKE_TRACE", "1", 1);
    setenv("FAKE_STARTUP_MS", "150", 1);
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2", "--configs", "sliced,mps",    "-r", "2",
                          "-o", dir, "--",        ADVISE_FAKE_APP, NULL};
    json_t *r = experiment(args, dir);
    TEST_ASSERT(r);
    json_t *p = json_array_get(json_object_get(r, "prediction"), 0);
    TEST_ASSERT(p);
    double S = num(p, "measured_span_ns"), M = num(p, "makespan_ns");
    double lo = num(p, "predicted_gain_low"), hi = num(p, "predicted_gain");
    double mlo = num(p, "predicted_makespan_gain_low"), mhi = num(p, "predicted_makespan_gain");
    double gain = num(p, "measured_gain");
    fprintf(stderr,
            "span %.0f of makespan %.0f ns; predicted %.3f-%.3f, over the makespan %.3f-%.3f; "
            "measured %.3f\n",
            S, M, lo, hi, mlo, mhi, gain);
    TEST_ASSERT(S > 40e6 && S < 0.5 * M);
    TEST_NEAR(mlo, M / (M - S + S / lo), 1e-9 * mlo);
    TEST_NEAR(mhi, M / (M - S + S / hi), 1e-9 * mhi);
    TEST_EQ_STR(str(p, "makespan_coverage"), gain < mlo   ? "below"
                                             : gain > mhi ? "above"
                                                          : "inside");
    TEST_ASSERT(fabs(mhi - gain) < fabs(hi - gain));
    /* each traced run's span, and the median of the time-sliced ones */
    json_t *run;
    size_t i;
    double spans[2];
    int n = 0;
    json_array_foreach(json_object_get(r, "runs"), i, run)
    {
        TEST_ASSERT(num(run, "measured_span_ns") > 0);
        if (!strcmp(str(run, "config"), "n2-sliced") && n < 2)
            spans[n++] = num(run, "measured_span_ns");
    }
    TEST_EQ_INT(n, 2);
    TEST_NEAR(S, (spans[0] + spans[1]) / 2, 1);
    TEST_CONTAINS(out_text, "; that is over the traces' span, ");
    TEST_CONTAINS(out_text, " makespan: with the rest as it was, ");
    json_decref(r);
    return 0;
}

/* The progress line: on a terminal (script(1) gives advise one) it shows the runs and the time
 * left; into a file there is none. */
int test_advise_progress(void)
{
    setup();
    if (system("script --version >/dev/null 2>&1") != 0)
        return test_cannot_run("script(1) (util-linux) is not installed: no terminal to test on");
    const char *dir = tmp("exp");
    const char *args[] = {"-n", "2",          "--configs", "sliced,mps",    "-r", "2", "-o",
                          dir,  "--no-trace", "--",        ADVISE_FAKE_APP, NULL};
    TEST_EQ_INT(run_advise(args), 0);
    TEST_ASSERT(!strstr(err_text, "tlview advise: run 1/6"));
    char cmd[8192], buf[1 << 16];
    snprintf(cmd, sizeof cmd,
             "script -qec \"%s advise -n 2 --configs sliced,mps -r 2 -o %s --no-trace -- %s\" "
             "/dev/null > %s 2>&1",
             TLVIEW_BIN, tmp("exp2"), ADVISE_FAKE_APP, tmp("tty.out"));
    TEST_EQ_INT(system(cmd), 0);
    slurp(tmp("tty.out"), buf, sizeof buf);
    TEST_CONTAINS(buf, "tlview advise: run 1/6 (solo, round 1), 0 failed, 0s spent");
    TEST_CONTAINS(buf, "tlview advise: run 6/6 (");
    TEST_CONTAINS(buf, "s left");
    return 0;
}

/* ------------------------------------------------------------------ bad input */

/* Each mistake: one line naming it, exit 2 (usage) or 1 (the folder) or 127 (no such command),
 * nothing run. */
int test_advise_usage_errors(void)
{
    setup();
    static const struct {
        const char *args[16];
        int rc;
        const char *message;
    } cases[] = {
        {{"--", "/bin/true"}, 2, "tlview advise: -n is needed: the copies per GPU to try"},
        {{"-n", "2"}, 2, "tlview advise: no command given"},
        {{"-n", "0", "--", "/bin/true"}, 2, "-n 0: expected copies per GPU, 1 to 1024"},
        {{"-n", "2,2", "--", "/bin/true"}, 2, "-n 2,2: expected copies per GPU"},
        {{"-n", "1", "--", "/bin/true"}, 2, "-n: at least one N of 2 or more"},
        {{"-n", "2", "--configs", "sliced,fast", "--", "/bin/true"},
         2,
         "--configs: 'fast' is not a configuration (sliced, mps, mps:P with P 1 to 100, mps:K/N)"},
        {{"-n", "2", "--configs", "mps:0", "--", "/bin/true"}, 2, "'mps:0' is not a configuration"},
        {{"-n", "2", "--configs", "mps", "--", "/bin/true"}, 2, "--configs must hold sliced"},
        {{"-n", "2", "--configs", "sliced", "--", "/bin/true"},
         2,
         "nothing to compare with the default (time-sliced at N=2)"},
        {{"-n", "2", "-r", "0", "--", "/bin/true"}, 2, "--repeat 0: expected a number from 1"},
        {{"-n", "2", "--budget", "soon", "--", "/bin/true"}, 2, "--budget soon: expected a time"},
        {{"-n", "2", "--budget", "0s", "--", "/bin/true"}, 2, "--budget 0s: expected a time"},
        {{"-n", "2", "-m", "rate=[0-9", "--", "/bin/true"}, 2, "--metric 'rate=[0-9': "},
        {{"-n", "2", "-m", "rate=[0-9]+", "--", "/bin/true"},
         2,
         "--metric 'rate=[0-9]+' has no group: put ( ) around the number"},
        {{"-n", "2", "-f", "xml", "--", "/bin/true"}, 2, "unknown format 'xml'"},
        {{"-n", "2", "--combine", "most", "--", "/bin/true"},
         2,
         "--combine wants sum or slowest, not 'most'"},
        {{"-n", "2", "--combine", "slowest", "--", "/bin/true"},
         2,
         "--combine slowest takes the rates of the copies of one command: it needs --metric"},
        {{"-n", "2", "--combine", "slowest", "-m", "r=([0-9]+)", "--", "/bin/true",
          ":::", "/bin/true"},
         2,
         "--combine slowest takes the rates of the copies of one command: it needs --metric"},
        {{"-n", "2", "-t", "runs", "--", "/bin/true"}, 2, "--table is the table of --format csv"},
        {{"-n", "2", "-f", "csv", "-t", "kernels", "--", "/bin/true"},
         2,
         "unknown table 'kernels'"},
        {{"--show", "x", "-n", "2"}, 2, "--show DIR prints a result again"},
        {{"-n", "2", "--bogus", "--", "/bin/true"}, 2, "unknown option '--bogus'"},
        {{"-n", "2", "--", "/bin/true", ":::"}, 2, "command 2 is empty (nothing after ':::')"},
        {{"-n", "2", "--", "tlview-no-such-program"},
         127,
         "tlview-no-such-program: command not found on PATH"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = run_advise(cases[i].args);
        if (rc != cases[i].rc)
            fprintf(stderr, "case %zu: %s\n", i, err_text);
        TEST_EQ_INT(rc, cases[i].rc);
        TEST_CONTAINS(err_text, cases[i].message);
        TEST_EQ_STR(out_text, "");
    }
    const char *help[] = {"--help", NULL};
    TEST_EQ_INT(run_advise(help), 0);
    TEST_CONTAINS(out_text, "usage: tlview advise -n N[,N...]");
    /* a folder that holds something already */
    mkdir(tmp("full"), 0755);
    FILE *f = fopen(tmp("full/keep.txt"), "w");
    TEST_ASSERT(f);
    fclose(f);
    const char *full[] = {"-n", "2", "-o", tmp("full"), "--", "/bin/true", NULL};
    TEST_EQ_INT(run_advise(full), 1);
    TEST_CONTAINS(err_text, "is not empty: an experiment goes into a new or empty folder (-o DIR)");
    /* a folder every user may write: what others left there would be written through
     * (store_fs_check_dir) */
    mkdir(tmp("shared"), 0700);
    TEST_EQ_INT(chmod(tmp("shared"), 01777), 0);
    const char *shared[] = {"-n", "2", "-o", tmp("shared"), "--", "/bin/true", NULL};
    TEST_EQ_INT(run_advise(shared), 1);
    TEST_CONTAINS(err_text, "shared: every user may write into the folder (mode 1777)");
    /* --show on what advise did not write */
    const char *none[] = {"--show", tmp("full"), NULL};
    TEST_EQ_INT(run_advise(none), 1);
    TEST_CONTAINS(err_text, "advise.json: cannot open: No such file or directory (not a folder "
                            "`tlview advise -o` wrote)");
    f = fopen(tmp("full/advise.json"), "w");
    fputs("{\"tool\": \"tlview record\"}", f);
    fclose(f);
    TEST_EQ_INT(run_advise(none), 1);
    TEST_CONTAINS(err_text, "advise.json: not the result of tlview advise");
    f = fopen(tmp("full/advise.json"), "w");
    fputs("{\"tool\": ", f);
    fclose(f);
    TEST_EQ_INT(run_advise(none), 1);
    TEST_CONTAINS(err_text, "advise.json:1: ");
    return 0;
}
