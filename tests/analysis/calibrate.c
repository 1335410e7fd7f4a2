/* calibrate.c: the calibration of the timing signature (analysis/README.md, "When the file does
 * not say"). Reads recordings whose MPS state is known, forgets what their files say (every
 * context's compute_api_kind set to 0, as an imported Kineto or nsys file has it), analyses them
 * as tlview would such a file, and counts the windows whose verdict is right, wrong or undecided
 * against the truth the recording does know. Test-only: it changes the run after loading it.
 *
 *   calibrate [-v] [-s] [-g] LIST
 *
 * -v prints every window judged; -s places the kernels as tlview does (start pairs) instead; -g
 * prints instead each recording's handovers (the data behind analysis_calibration handover_ns:
 * print_handovers()).
 * LIST holds one recording a line (# starts a comment): `on|off|green FOLDER [BASELINE_FOLDER]`,
 * the folders relative to the LIST file's folder's grandparent (the source tree for
 * tests/analysis/signature.list). `on`: every context was an MPS client; `off`: none was;
 * `green`: green contexts of one process (side by side, as MPS clients). A window is right when
 * its verdict is allowed by the truth (off: time-sliced; on, green: concurrent, contended or
 * queued), wrong when it is
 * not (time-sliced under MPS, side by side without it), undecided when it is unknown. Quiet
 * windows (idle, solo) are not counted. A recording's own answer is its first GPU's verdict.
 *
 * Clocks: a libcollect file places its kernels with the calibration pair taken at the process's
 * start, which in the committed recordings was taken before CUPTI's clock had settled (the start
 * pairs of one run disagree by up to 245 us where the end pairs agree within 0.5 us); the
 * signature reads gaps of ~140 us, so each process is placed here by its end pair instead
 * (store_process.clock_drift). Imported files keep their times.
 *
 * Prints a table (Markdown) and `calibrate: N right, N wrong, N undecided`; exits 1 when a window
 * or a recording's answer is wrong, 2 on a usage or load error. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "importers.h"
#include "store.h"

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* Loads every trace file of `dir` (sorted by name) into run, unfinished. 0 or -1 (printed). */
static int load_dir(store_run *run, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "calibrate: %s: cannot open\n", dir);
        return -1;
    }
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < sizeof names / sizeof *names)
        if (ends_with(e->d_name, ".db") || ends_with(e->d_name, ".json") ||
            ends_with(e->d_name, ".json.gz"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = n ? 0 : -1, native = 0;
    if (!n)
        fprintf(stderr, "calibrate: %s: no trace files\n", dir);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        native |= store_probe(path);
    }
    for (size_t i = 0; i < n; i++) { /* as tlview: native files are the run where there are */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (native ? !store_probe(path) : !imp_detect(path, NULL)) { /* record's manifest.json */
            free(names[i]);
            continue;
        }
        int r = store_probe(path) ? store_run_load(run, path)
                                  : imp_load_ex(run, path, NULL, NULL, NULL);
        if (r && !rc) {
            fprintf(stderr, "calibrate: %s: %s\n", path, store_run_errmsg(run));
            rc = -1;
        }
        free(names[i]);
    }
    return rc;
}

/* Places each process's kernels by its end calibration pair (see the file's comment). */
static void align_on_end_pairs(store_run *run)
{
    for (uint64_t i = 0; i < run->nkernels; i++) {
        store_kernel *k = &run->kernels[i];
        int64_t drift = run->processes[store_kernel_process(run, k)].clock_drift;
        k->start += drift;
        k->end += drift;
    }
}

/* A loaded, finished run of `dir` with every context's MPS state forgotten, placed by the end
 * calibration pairs unless `as_files` (by the start pairs, as tlview reads them); NULL on
 * error. */
static store_run *load_forgotten(const char *dir, int as_files)
{
    store_run *run = store_run_new();
    if (!run || load_dir(run, dir)) {
        store_run_free(run);
        return NULL;
    }
    if (!as_files)
        align_on_end_pairs(run);
    for (uint32_t c = 0; c < run->ncontexts; c++)
        run->contexts[c].compute_api_kind = 0;
    if (store_run_finish(run)) {
        fprintf(stderr, "calibrate: %s: %s\n", dir, store_run_errmsg(run));
        store_run_free(run);
        return NULL;
    }
    return run;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The share group a context of run has as read with its MPS state forgotten (the analysis's
 * share groups): a process with green contexts is one group, every other context one of its own. */
static uint64_t group_of(const store_run *run, const unsigned char *green_proc, store_idx c)
{
    store_idx p = run->contexts[c].process;
    return green_proc[p] ? (uint64_t)run->ncontexts + p : c;
}

/* A kernel start or end for print_handovers(): its time, share group, and whether an end. */
typedef struct hevent {
    int64_t t;
    uint64_t g;
    int end;
} hevent;

/* By time, ends before starts at one instant (as the sweep visits them). */
static int cmp_hevent(const void *x, const void *y)
{
    const hevent *a = x, *b = y;
    return a->t != b->t ? (a->t > b->t) - (a->t < b->t) : b->end - a->end;
}

/* Prints the handovers of run's first device (-g), as the sweep counts its quick handovers
 * (analysis_device quick_handovers): for each kernel start, the time since the latest kernel end
 * of another share group; for each end, since the latest start of another group. Their count
 * (events with such an event before them), the smallest and the 1st and 10th percentiles in us,
 * and how many are under 5, 10, 20, 50 and 100 us. */
static void print_handovers(const store_run *run, const char *truth, const char *dir)
{
    unsigned char *green_proc = calloc(run->nprocesses + 1, 1);
    hevent *ev = malloc((2 * run->nkernels + 1) * sizeof *ev);
    int64_t *gap = malloc((2 * run->nkernels + 1) * sizeof *gap);
    uint64_t m = 0, n = 0;
    if (!green_proc || !ev || !gap) {
        free(green_proc);
        free(ev);
        free(gap);
        return;
    }
    for (uint32_t c = 0; c < run->ncontexts; c++)
        green_proc[run->contexts[c].process] |= run->contexts[c].green;
    store_idx dev = run->ncontexts ? run->contexts[0].device : STORE_NONE;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        store_idx c = run->streams[k->stream].context;
        if (k->end <= k->start || run->contexts[c].device != dev)
            continue;
        uint64_t g = group_of(run, green_proc, c);
        ev[m++] = (hevent){k->start, g, 0};
        ev[m++] = (hevent){k->end, g, 1};
    }
    qsort(ev, m, sizeof *ev, cmp_hevent);
    /* per kind (0 starts, 1 ends): the latest one's time and group, the latest of another group */
    int64_t t[2] = {INT64_MIN, INT64_MIN}, t2[2] = {INT64_MIN, INT64_MIN};
    uint64_t g[2] = {UINT64_MAX, UINT64_MAX};
    for (uint64_t i = 0; i < m; i++) {
        int o = !ev[i].end; /* the opposite kind */
        int64_t before = g[o] != ev[i].g ? t[o] : t2[o];
        if (before != INT64_MIN)
            gap[n++] = ev[i].t - before;
        int e = ev[i].end;
        if (g[e] != ev[i].g) {
            t2[e] = t[e];
            g[e] = ev[i].g;
        }
        t[e] = ev[i].t;
    }
    qsort(gap, n, sizeof *gap, cmp_i64);
    uint64_t under[5] = {0};
    static const int64_t bound[5] = {5000, 10000, 20000, 50000, 100000};
    for (uint64_t i = 0; i < n; i++)
        for (int b = 0; b < 5; b++)
            under[b] += gap[i] < bound[b];
#define Q(p) (n ? (double)gap[(uint64_t)((p) * (double)(n - 1) + 0.5)] / 1e3 : 0.0)
    printf("| %s | %s | %llu | %.1f | %.1f | %.1f | %llu | %llu | %llu | %llu | %llu |\n", truth,
           dir, (unsigned long long)n, Q(0), Q(0.01), Q(0.1), (unsigned long long)under[0],
           (unsigned long long)under[1], (unsigned long long)under[2], (unsigned long long)under[3],
           (unsigned long long)under[4]);
#undef Q
    free(green_proc);
    free(ev);
    free(gap);
}

/* Whether verdict v is allowed by the truth (`on` 1: MPS clients; 0: plain contexts):
 * 1 right, -1 wrong, 0 undecided. */
static int judge(analysis_verdict v, int on /* 1: MPS clients or green contexts */)
{
    if (v == ANALYSIS_UNKNOWN)
        return 0;
    if (v == ANALYSIS_TIME_SLICED)
        return on ? -1 : 1;
    return on ? 1 : -1;
}

typedef struct tally {
    unsigned right, wrong, undecided;
} tally;

/* The verdict today's rules gave a window of unknown physics before the signature (until
 * 2026-12-08, from the same figures): no measured stretch UNKNOWN, not stretched CONCURRENT,
 * parallelism <= 1.3 TIME_SLICED, else CONTENDED; quiet windows were never judged. */
static analysis_verdict old_verdict(const analysis_window *w)
{
    if (w->physics != ANALYSIS_PHYS_UNKNOWN)
        return w->verdict;
    if (w->overlap_ns == 0)
        return ANALYSIS_SOLO;
    if (w->basis != ANALYSIS_BASIS_REFERENCE)
        return ANALYSIS_UNKNOWN;
    if (w->stretch <= 1.25f)
        return ANALYSIS_CONCURRENT;
    return w->parallelism <= 1.3f ? ANALYSIS_TIME_SLICED : ANALYSIS_CONTENDED;
}

int main(int argc, char **argv)
{
    int verbose = 0, as_files = 0, gaps = 0, arg = 1;
    for (; arg < argc && argv[arg][0] == '-'; arg++) {
        verbose |= !strcmp(argv[arg], "-v");
        as_files |= !strcmp(argv[arg], "-s");
        gaps |= !strcmp(argv[arg], "-g");
    }
    if (argc != arg + 1) {
        fprintf(stderr, "usage: calibrate [-v] [-s] [-g] LIST\n");
        return 2;
    }
    const char *list = argv[arg];
    FILE *f = fopen(list, "r");
    if (!f) {
        fprintf(stderr, "calibrate: %s: cannot open\n", list);
        return 2;
    }
    char root[PATH_MAX];
    if (!realpath(list, root)) {
        fprintf(stderr, "calibrate: %s: cannot resolve\n", list);
        fclose(f);
        return 2;
    }
    for (int up = 0; up < 3; up++) { /* LIST's folder's grandparent */
        char *slash = strrchr(root, '/');
        if (slash && slash != root)
            *slash = '\0';
    }
    char line[4096];
    tally all = {0}, runs = {0}, old = {0};
    int bad = 0;
    if (gaps)
        printf("| truth | recording | events | min us | p1 | p10 | < 5 us | < 10 us | < 20 us | "
               "< 50 us | < 100 us |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    else
        printf("| truth | recording | windows right | wrong | undecided | GPU verdict | rule | "
               "before: "
               "right / wrong / undecided |\n|---|---|---|---|---|---|---|---|\n");
    char prev[1024] = "";
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char truth[8], dir[1024], base[1024] = "";
        int n = sscanf(line, "%7s %1023s %1023s", truth, dir, base);
        if (n < 2)
            continue;
        int on = !strcmp(truth, "on") || !strcmp(truth, "green");
        if (gaps) { /* each recording once (its lines with and without a baseline are adjacent) */
            char gpath[5200];
            snprintf(gpath, sizeof gpath, "%s/%s", root, dir);
            store_run *run = strcmp(dir, prev) ? load_forgotten(gpath, as_files) : NULL;
            if (run)
                print_handovers(run, truth, dir);
            store_run_free(run);
            snprintf(prev, sizeof prev, "%s", dir);
            continue;
        }
        char path[5200], bpath[5200];
        snprintf(path, sizeof path, "%s/%s", root, dir);
        snprintf(bpath, sizeof bpath, "%s/%s", root, base);
        store_run *run = load_forgotten(path, as_files);
        store_run *brun = n == 3 ? load_forgotten(bpath, as_files) : NULL;
        analysis_options o;
        analysis_options_default(&o);
        o.baseline = brun;
        analysis *a = NULL;
        if (!run || (n == 3 && !brun) || analysis_run(run, &o, &a)) {
            fprintf(stderr, "calibrate: %s: cannot analyse\n", dir);
            store_run_free(run);
            store_run_free(brun);
            fclose(f);
            return 2;
        }
        tally t = {0}, was = {0};
        const analysis_window *w = analysis_windows(a);
        for (uint64_t i = 0; i < analysis_nwindows(a); i++) {
            analysis_verdict ov = old_verdict(&w[i]);
            if (ov >= ANALYSIS_CONCURRENT) {
                int j = judge(ov, on);
                was.right += j > 0;
                was.wrong += j < 0;
                was.undecided += j == 0;
            }
            if (w[i].verdict < ANALYSIS_CONCURRENT)
                continue;
            int j = judge(w[i].verdict, on);
            t.right += j > 0;
            t.wrong += j < 0;
            t.undecided += j == 0;
            if (verbose)
                printf("    %s w%llu %s/%s %.1f ms ovl %.1f ms stretch %.2f par %.2f share %.2f "
                       "turns %u quick %u marked %u\n",
                       dir, (unsigned long long)i, analysis_verdict_name(w[i].verdict),
                       analysis_rule_name(w[i].rule), (double)(w[i].t1 - w[i].t0) / 1e6,
                       (double)w[i].overlap_ns / 1e6, w[i].stretch, w[i].parallelism,
                       w[i].overlap_share, w[i].turns, w[i].quick_turns, w[i].switch_turns);
        }
        const analysis_device *d = analysis_ndevices(a) ? analysis_get_device(a, 0) : NULL;
        analysis_verdict dv = d ? d->verdict : ANALYSIS_SOLO;
        int j = dv >= ANALYSIS_CONCURRENT ? judge(dv, on) : 0;
        runs.right += j > 0;
        runs.wrong += j < 0;
        runs.undecided += j == 0;
        bad |= t.wrong > 0 || j < 0;
        all.right += t.right;
        all.wrong += t.wrong;
        all.undecided += t.undecided;
        old.right += was.right;
        old.wrong += was.wrong;
        old.undecided += was.undecided;
        printf("| %s | %s%s%s | %u | %u | %u | %s | %s | %u / %u / %u |\n", truth, dir,
               n == 3 ? " vs " : "", n == 3 ? base : "", t.right, t.wrong, t.undecided,
               analysis_verdict_name(dv), d ? analysis_rule_name(d->by_verdict[dv].rule) : "-",
               was.right, was.wrong, was.undecided);
        analysis_free(a);
        store_run_free(run);
        store_run_free(brun);
    }
    fclose(f);
    if (gaps)
        return 0;
    printf("calibrate: windows %u right, %u wrong, %u undecided (before the signature: %u, %u, "
           "%u); recordings %u right, %u wrong, %u undecided or without overlap\n",
           all.right, all.wrong, all.undecided, old.right, old.wrong, old.undecided, runs.right,
           runs.wrong, runs.undecided);
    return bad;
}
