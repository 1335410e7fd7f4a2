/* analysis.c: the analysis handle: options, the pass that maps kernels to device slots, the order
 * of the passes (sweep.c, verdict.c), the run-consistency warnings, the names of verdicts and
 * reference sources, and the accessors. analysis_compare() is in verdict.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

void analysis_options_default(analysis_options *o)
{
    memset(o, 0, sizeof *o);
    o->baseline = NULL;
    o->concurrent_max_stretch = 1.25;
    o->sliced_max_parallelism = 1.3;
    o->sliced_stretch_tolerance = 0.30;
    o->min_reference_coverage = 0.5;
    o->join_gap_ns = 1000000;
}

const char *analysis_strerror(int code)
{
    switch (code) {
    case ANALYSIS_OK: return "no error";
    case ANALYSIS_EINVAL: return "invalid argument (is the run finished?)";
    case ANALYSIS_ENOMEM: return "out of memory";
    default: return "unknown error";
    }
}

const char *analysis_verdict_name(analysis_verdict v)
{
    static const char *const names[ANALYSIS_NVERDICTS] = {"idle",        "solo",      "concurrent",
                                                          "time-sliced", "contended", "unknown"};
    return (unsigned)v < ANALYSIS_NVERDICTS ? names[v] : "?";
}

const char *analysis_ref_source_name(analysis_ref_source s)
{
    static const char *const names[] = {"none", "solo", "baseline"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

int analysis_push_window(analysis *a, const analysis_window *w)
{
    if (a->nwindows == a->capwindows) {
        uint64_t cap = a->capwindows ? 2 * a->capwindows : 256;
        analysis_window *p = realloc(a->windows, cap * sizeof *p);
        if (!p)
            return ANALYSIS_ENOMEM;
        a->windows = p;
        a->capwindows = cap;
    }
    a->windows[a->nwindows++] = *w;
    return ANALYSIS_OK;
}

/* Gives every device that ran kernels a slot (run->devices order, the unknown device last; so
 * every slot has >= 1 kernel), fills the slots' kernel counts and time spans and the run's span
 * (a->sum.t_begin, t_end), and checks the kernels are sorted. */
static int assign_slots(analysis *a)
{
    const store_run *run = a->run;
    uint32_t nd = run->ndevices + 1; /* + the unknown device */
    uint32_t *dslot = calloc(nd, sizeof *dslot);
    /* per context, from the one pass over the kernels: count, first start, last end, longest */
    uint64_t *used = calloc(run->ncontexts + 1, sizeof *used);
    int64_t *span = malloc((run->ncontexts + 1) * 3 * sizeof *span);
    int rc = ANALYSIS_ENOMEM;
    if (!dslot || !used || !span ||
        !(a->ctx_slot = malloc((run->ncontexts + 1) * sizeof(uint32_t))))
        goto out;
    rc = ANALYSIS_EINVAL;
    int64_t prev = INT64_MIN;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (k->stream >= run->nstreams || k->start < prev)
            goto out; /* not finished, or not a consistent run */
        prev = k->start;
        store_idx c = run->streams[k->stream].context;
        if (c >= run->ncontexts)
            goto out;
        int64_t dur = analysis_kernel_dur(k), *sp = &span[3 * (uint64_t)c];
        if (!used[c]++) {
            sp[0] = k->start;
            sp[1] = k->start + dur;
            sp[2] = dur;
        } else {
            if (k->start + dur > sp[1])
                sp[1] = k->start + dur;
            if (dur > sp[2])
                sp[2] = dur;
        }
        a->sum.nzero += dur == 0;
        if (i == 0) /* the run's first start: the kernels are sorted */
            a->sum.t_begin = a->sum.t_end = k->start;
        if (k->start + dur > a->sum.t_end)
            a->sum.t_end = k->start + dur;
    }
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        store_idx dv = run->contexts[c].device;
        if (used[c])
            dslot[dv < run->ndevices ? dv : run->ndevices] = 1;
        if (run->contexts[c].process >= run->nprocesses)
            goto out;
    }
    a->ndevs = 0;
    for (uint32_t d = 0; d < nd; d++)
        dslot[d] = dslot[d] ? a->ndevs++ : UINT32_MAX;
    rc = ANALYSIS_ENOMEM;
    a->devs = calloc(a->ndevs ? a->ndevs : 1, sizeof *a->devs);
    a->dev_maxdur = calloc(a->ndevs ? a->ndevs : 1, sizeof *a->dev_maxdur);
    if (!a->devs || !a->dev_maxdur)
        goto out;
    for (uint32_t d = 0; d < nd; d++)
        if (dslot[d] != UINT32_MAX)
            a->devs[dslot[d]].device = d < run->ndevices ? d : STORE_NONE;
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        store_idx dv = run->contexts[c].device;
        uint32_t s = a->ctx_slot[c] = dslot[dv < run->ndevices ? dv : run->ndevices];
        if (!used[c])
            continue;
        analysis_device *ad = &a->devs[s];
        const int64_t *sp = &span[3 * (uint64_t)c];
        if (!ad->nkernels || sp[0] < ad->t_begin)
            ad->t_begin = sp[0];
        if (!ad->nkernels || sp[1] > ad->t_end)
            ad->t_end = sp[1];
        if (sp[2] > a->dev_maxdur[s])
            a->dev_maxdur[s] = sp[2];
        ad->nkernels += used[c];
    }
    /* distinct processes and contexts per slot, and MPS */
    uint8_t *seen = calloc((uint64_t)a->ndevs * run->nprocesses + 1, 1);
    if (!seen)
        goto out;
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        if (!used[c])
            continue;
        uint32_t s = a->ctx_slot[c];
        a->devs[s].ncontexts++;
        if (run->contexts[c].compute_api_kind == 2)
            a->devs[s].mps = 1;
        uint8_t *p = &seen[(uint64_t)s * run->nprocesses + run->contexts[c].process];
        if (!*p) {
            *p = 1;
            a->devs[s].nprocesses++;
        }
    }
    free(seen);
    rc = ANALYSIS_OK;
out:
    free(dslot);
    free(used);
    free(span);
    return rc;
}

static int cmp_window(const void *x, const void *y)
{
    const analysis_window *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* Adds a warning (printf-style); out of memory drops it silently (warnings are advisory). */
__attribute__((format(printf, 2, 3))) static void warn(analysis *a, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = realloc(a->warnings, (a->nwarnings + 1) * sizeof *w);
    if (!w)
        return;
    a->warnings = w;
    if ((w[a->nwarnings] = strdup(buf)) != NULL)
        a->nwarnings++;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* How many distinct non-NULL values the string field at `off` of the processes takes (-1 when
 * out of memory); the first two in sorted order go to *p1, *p2. */
static int64_t distinct(const store_run *run, size_t off, const char **p1, const char **p2)
{
    const char **v = malloc((run->nprocesses + 1) * sizeof *v);
    uint32_t n = 0, nd = 0;
    *p1 = *p2 = NULL;
    if (!v)
        return -1;
    for (uint32_t i = 0; i < run->nprocesses; i++) {
        const char *s = *(const char *const *)((const char *)&run->processes[i] + off);
        if (s)
            v[n++] = s;
    }
    qsort(v, n, sizeof *v, cmp_str);
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || strcmp(v[i], v[i - 1])) {
            if (nd == 0)
                *p1 = v[i];
            else if (nd == 1)
                *p2 = v[i];
            nd++;
        }
    free(v);
    return nd;
}

static int cmp_i64pair(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Processes whose kernels lie DISJOINT_GAP_NS or more away from every other process's kernels:
 * likely another run's files. (Processes that run one after another in one script follow each
 * other within seconds; a second recording of the same experiment is further away.) */
#define DISJOINT_GAP_NS 10000000000LL
static int warn_disjoint(analysis *a)
{
    const store_run *run = a->run;
    uint32_t n = 0;
    int64_t *r = malloc((run->nprocesses + 1) * 3 * sizeof *r);
    if (!r)
        return ANALYSIS_ENOMEM;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        if (a->procs[p].nkernels) {
            r[3 * n] = a->proc_first[p];
            r[3 * n + 1] = a->proc_last[p];
            r[3 * n + 2] = p;
            n++;
        }
    if (n >= 2) {
        qsort(r, n, 3 * sizeof *r, cmp_i64pair);
        int64_t maxend = INT64_MIN;
        uint32_t nbad = 0;
        for (uint32_t i = 0; i < n; i++) {
            /* the nearest other process's kernels, before and after (negative: overlapping) */
            int64_t before = i > 0 ? r[3 * i] - maxend : INT64_MAX;
            int64_t after = i + 1 < n ? r[3 * (i + 1)] - r[3 * i + 1] : INT64_MAX;
            if (before >= DISJOINT_GAP_NS && after >= DISJOINT_GAP_NS) {
                const store_process *sp = &run->processes[r[3 * i + 2]];
                if (nbad++ < 5)
                    warn(a,
                         "process %lld (%s) ran its kernels 10 s or more away from every other "
                         "process's: its file is likely from another run",
                         (long long)sp->pid, sp->file ? sp->file : "?");
            }
            if (r[3 * i + 1] > maxend)
                maxend = r[3 * i + 1];
        }
        if (nbad > 5)
            warn(a, "%u more processes ran 10 s or more away from every other", nbad - 5);
    }
    free(r);
    return ANALYSIS_OK;
}

/* The run-consistency checks; see analysis_warning(). */
static int check_run(analysis *a)
{
    const store_run *run = a->run;
    const char *v1, *v2;
    int64_t n = distinct(run, offsetof(store_process, host), &v1, &v2);
    if (n < 0)
        return ANALYSIS_ENOMEM;
    if (n > 1)
        warn(a,
             "the files come from %lld hosts (%s, %s%s): processes of different machines are "
             "mixed",
             (long long)n, v1, v2, n > 2 ? ", ..." : "");
    if ((n = distinct(run, offsetof(store_process, run_id), &v1, &v2)) < 0)
        return ANALYSIS_ENOMEM;
    if (n > 1)
        warn(a, "the files carry %lld run ids (%s, %s%s): processes of different runs are mixed",
             (long long)n, v1, v2, n > 2 ? ", ..." : "");
    int rc = warn_disjoint(a);
    if (rc)
        return rc;
    uint32_t nincomplete = 0, nempty = 0;
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        const store_process *sp = &run->processes[p];
        const char *file = sp->file ? sp->file : "?";
        if (!sp->complete && nincomplete++ < 5)
            warn(a, "process %lld (%s) is incomplete%s%s", (long long)sp->pid, file,
                 sp->error ? ": " : " (the collector did not finish cleanly)",
                 sp->error ? sp->error : "");
        if (sp->records_dropped)
            warn(a, "process %lld (%s): CUPTI dropped %llu records", (long long)sp->pid, file,
                 (unsigned long long)sp->records_dropped);
        if (!a->procs[p].nkernels && nempty++ < 5)
            warn(a, "process %lld (%s) ran no kernels", (long long)sp->pid, file);
    }
    if (nincomplete > 5)
        warn(a, "%u more processes are incomplete", nincomplete - 5);
    if (nempty > 5)
        warn(a, "%u more processes ran no kernels", nempty - 5);
    if (a->sum.nzero)
        warn(a,
             "%llu kernels have zero length (or end before start): counted, but without "
             "stretch",
             (unsigned long long)a->sum.nzero);
    return ANALYSIS_OK;
}

int analysis_run(const store_run *run, const analysis_options *opt, analysis **ppOut)
{
    *ppOut = NULL;
    if (!run || (run->nkernels && !run->kernels))
        return ANALYSIS_EINVAL;
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        return ANALYSIS_ENOMEM;
    a->run = run;
    if (opt)
        a->opt = *opt;
    else
        analysis_options_default(&a->opt);
    int rc = ANALYSIS_EINVAL;
    if (a->opt.join_gap_ns < 0 || !(a->opt.concurrent_max_stretch >= 1.0) ||
        !(a->opt.sliced_max_parallelism > 0) || !(a->opt.sliced_stretch_tolerance >= 0) ||
        !(a->opt.min_reference_coverage >= 0 && a->opt.min_reference_coverage <= 1))
        goto fail;
    rc = ANALYSIS_ENOMEM;
    a->stretch = malloc((run->nkernels ? run->nkernels : 1) * sizeof(float));
    a->procs = calloc(run->nprocesses + 1, sizeof *a->procs);
    a->proc_first = calloc(run->nprocesses + 1, sizeof(int64_t));
    a->proc_last = calloc(run->nprocesses + 1, sizeof(int64_t));
    if (!a->stretch || !a->procs || !a->proc_first || !a->proc_last)
        goto fail;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        a->procs[p].process = p;
    if ((rc = assign_slots(a)) != 0 || (rc = analysis_sweep(a)) != 0)
        goto fail;
    if (a->nwindows)
        qsort(a->windows, a->nwindows, sizeof *a->windows, cmp_window);
    for (uint64_t w = a->nwindows; w-- > 0;) {
        /* windows are grouped by device in slot order (the unknown device sorts last) */
        uint32_t s = 0;
        while (s < a->ndevs && a->devs[s].device != a->windows[w].device)
            s++;
        a->devs[s].first_window = w;
        a->devs[s].nwindows++;
    }
    if ((rc = analysis_references(a)) != 0 || (rc = analysis_judge(a)) != 0 ||
        (rc = check_run(a)) != 0)
        goto fail;
    *ppOut = a;
    return ANALYSIS_OK;
fail:
    analysis_free(a);
    return rc;
}

void analysis_free(analysis *a)
{
    if (!a)
        return;
    free(a->stretch);
    free(a->ctx_slot);
    free(a->devs);
    free(a->dev_maxdur);
    free(a->windows);
    free(a->sigs);
    free(a->launch_sig);
    free(a->procs);
    free(a->proc_first);
    free(a->proc_last);
    for (uint32_t i = 0; i < a->nwarnings; i++)
        free(a->warnings[i]);
    free(a->warnings);
    free(a);
}

const store_run *analysis_get_run(const analysis *a)
{
    return a->run;
}
const analysis_options *analysis_get_options(const analysis *a)
{
    return &a->opt;
}
const float *analysis_stretch(const analysis *a)
{
    return a->stretch;
}
uint32_t analysis_nsignatures(const analysis *a)
{
    return a->nsigs;
}
uint64_t analysis_nwindows(const analysis *a)
{
    return a->nwindows;
}
const analysis_window *analysis_windows(const analysis *a)
{
    return a->windows;
}
uint32_t analysis_ndevices(const analysis *a)
{
    return a->ndevs;
}
uint32_t analysis_nprocesses(const analysis *a)
{
    return a->run->nprocesses;
}
const analysis_summary *analysis_get_summary(const analysis *a)
{
    return &a->sum;
}
uint32_t analysis_nwarnings(const analysis *a)
{
    return a->nwarnings;
}

const analysis_signature *analysis_get_signature(const analysis *a, uint32_t i)
{
    return i < a->nsigs ? &a->sigs[i] : NULL;
}

uint32_t analysis_launch_signature(const analysis *a, store_idx launch)
{
    return launch < a->run->nlaunches ? a->launch_sig[launch] : UINT32_MAX;
}

const analysis_device *analysis_get_device(const analysis *a, uint32_t i)
{
    return i < a->ndevs ? &a->devs[i] : NULL;
}

const analysis_process *analysis_get_process(const analysis *a, uint32_t i)
{
    return i < a->run->nprocesses ? &a->procs[i] : NULL;
}

const char *analysis_warning(const analysis *a, uint32_t i)
{
    return i < a->nwarnings ? a->warnings[i] : NULL;
}
