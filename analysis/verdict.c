/* verdict.c: launch signatures and their solo references (medians), the stretch of every kernel,
 * the evidence and verdict of every overlap window, process and device figures, the predicted
 * gain, and analysis_compare(). The rules are explained in analysis/README.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* ------------------------------------------------------------ signatures */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static const char *launch_name(const store_run *run, const store_launch *l)
{
    return l->name < run->nstrings && run->strings[l->name].text ? run->strings[l->name].text : "";
}

/* Hash of a launch signature (name text, grid, block, total shared memory), usable across runs. */
static uint64_t sig_hash(const store_run *run, const store_launch *l)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = launch_name(run, l); *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    for (int i = 0; i < 3; i++)
        h = mix(mix(h, l->grid[i]), l->block[i]);
    h = mix(h, (uint64_t)l->static_smem + l->dynamic_smem);
    return h ^ (h >> 31);
}

static int sig_equal(const store_run *ra, const store_launch *la, const store_run *rb,
                     const store_launch *lb)
{
    return !memcmp(la->grid, lb->grid, sizeof la->grid) &&
           !memcmp(la->block, lb->block, sizeof la->block) &&
           (uint64_t)la->static_smem + la->dynamic_smem ==
               (uint64_t)lb->static_smem + lb->dynamic_smem &&
           !strcmp(launch_name(ra, la), launch_name(rb, lb));
}

/* An open-addressing table from signature hash to signature index, over one analysis. */
typedef struct sigtab {
    uint32_t *slot; /* signature index + 1, 0 = empty */
    uint64_t mask;
} sigtab;

static int sigtab_init(sigtab *t, uint32_t n)
{
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)n)
        cap *= 2;
    t->mask = cap - 1;
    t->slot = calloc(cap, sizeof *t->slot);
    return t->slot ? ANALYSIS_OK : ANALYSIS_ENOMEM;
}

/* The signature of `a` equal to launch l of run r. When there is none, `add` (a signature index
 * whose launch the caller sets at once) is entered and returned; UINT32_MAX adds nothing. */
static uint32_t sigtab_find(sigtab *t, const analysis *a, const store_run *r, const store_launch *l,
                            uint32_t add)
{
    uint64_t i = sig_hash(r, l) & t->mask;
    for (; t->slot[i]; i = (i + 1) & t->mask) {
        uint32_t s = t->slot[i] - 1;
        if (sig_equal(a->run, &a->run->launches[a->sigs[s].launch], r, l))
            return s;
    }
    if (add != UINT32_MAX)
        t->slot[i] = add + 1;
    return add;
}

/* A table over the signatures of `a`, each entered once; the caller frees t->slot. */
static int sigtab_of(sigtab *t, const analysis *a)
{
    if (sigtab_init(t, a->nsigs))
        return ANALYSIS_ENOMEM;
    for (uint32_t s = 0; s < a->nsigs; s++)
        sigtab_find(t, a, a->run, &a->run->launches[a->sigs[s].launch], s);
    return ANALYSIS_OK;
}

/* Builds a->sigs and a->launch_sig. */
static int build_signatures(analysis *a)
{
    const store_run *run = a->run;
    sigtab t;
    a->launch_sig = malloc((run->nlaunches + 1) * sizeof *a->launch_sig);
    a->sigs = calloc(run->nlaunches + 1, sizeof *a->sigs);
    if (!a->launch_sig || !a->sigs || sigtab_init(&t, run->nlaunches))
        return ANALYSIS_ENOMEM;
    for (uint32_t l = 0; l < run->nlaunches; l++) {
        uint32_t s = sigtab_find(&t, a, run, &run->launches[l], a->nsigs);
        if (s == a->nsigs) {
            a->sigs[s].launch = l;
            a->sigs[s].name = run->launches[l].name;
            a->sigs[s].mean_stretch = NAN;
            a->nsigs++;
        }
        a->launch_sig[l] = s;
    }
    free(t.slot);
    return ANALYSIS_OK;
}

/* ------------------------------------------------------------ references */

static void swapf(float *x, float *y)
{
    float t = *x;
    *x = *y;
    *y = t;
}

/* Moves the k-th smallest of v[0..n) to v[k], smaller ones before it (quickselect). */
static void select_nth(float *v, uint64_t n, uint64_t k)
{
    uint64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swapf(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swapf(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swapf(&v[hi], &v[mid]);
        float pivot = v[mid];
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swapf(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Median of v[0..n) (n > 0); reorders v. */
static double median(float *v, uint64_t n)
{
    uint64_t k = n / 2;
    select_nth(v, n, k);
    if (n % 2)
        return v[k];
    float lower = v[0];
    for (uint64_t i = 1; i < k; i++)
        if (v[i] > lower)
            lower = v[i];
    return ((double)lower + v[k]) / 2;
}

/* References from the run's own solo instances: medians grouped by signature (a counting sort
 * of the solo durations, one float each). */
static int solo_references(analysis *a)
{
    const store_run *run = a->run;
    uint64_t *off = calloc(a->nsigs + 1, sizeof *off);
    float *dur = NULL;
    if (!off)
        return ANALYSIS_ENOMEM;
    for (uint64_t i = 0; i < run->nkernels; i++)
        if (a->stretch[i] == ANALYSIS_MARK_SOLO)
            off[a->launch_sig[run->kernels[i].launch] + 1]++;
    for (uint32_t s = 0; s < a->nsigs; s++) {
        a->sigs[s].nsolo = off[s + 1];
        off[s + 1] += off[s];
    }
    if (off[a->nsigs] && !(dur = malloc(off[a->nsigs] * sizeof *dur))) {
        free(off);
        return ANALYSIS_ENOMEM;
    }
    for (uint64_t i = 0; i < run->nkernels; i++)
        if (a->stretch[i] == ANALYSIS_MARK_SOLO) {
            const store_kernel *k = &run->kernels[i];
            dur[off[a->launch_sig[k->launch]]++] = (float)(k->end - k->start);
        }
    for (uint32_t s = 0, begin = 0; s < a->nsigs; s++) {
        uint64_t n = a->sigs[s].nsolo;
        if (n) {
            a->sigs[s].source = ANALYSIS_REF_SOLO;
            a->sigs[s].reference_ns = median(dur + begin, n);
        }
        begin += n;
    }
    free(dur);
    free(off);
    return ANALYSIS_OK;
}

/* Takes references from the baseline run's own solo references, where it has the signature. */
static int baseline_references(analysis *a)
{
    analysis_options o = a->opt;
    analysis *b = NULL;
    sigtab t = {0};
    o.baseline = NULL;
    int rc = analysis_run(a->opt.baseline, &o, &b);
    if (rc)
        return rc;
    if ((rc = sigtab_of(&t, b)) != 0)
        goto out;
    for (uint32_t s = 0; s < a->nsigs; s++) {
        const store_launch *l = &a->run->launches[a->sigs[s].launch];
        uint32_t bs = sigtab_find(&t, b, a->run, l, UINT32_MAX);
        if (bs != UINT32_MAX && b->sigs[bs].source != ANALYSIS_REF_NONE) {
            a->sigs[s].source = ANALYSIS_REF_BASELINE;
            a->sigs[s].reference_ns = b->sigs[bs].reference_ns;
            a->sigs[s].nsolo = b->sigs[bs].nsolo;
        }
    }
out:
    free(t.slot);
    analysis_free(b);
    return rc;
}

int analysis_references(analysis *a)
{
    int rc = build_signatures(a);
    if (rc == 0)
        rc = solo_references(a);
    if (rc == 0 && a->opt.baseline)
        rc = baseline_references(a);
    return rc;
}

/* ------------------------------------------------------------ stretch and evidence */

/* Sums gathered for one window from the kernels with time inside it. */
typedef struct winsum {
    double clip;     /* kernel time inside */
    double clip_ref; /* of which kernels with a reference */
    double stretch;  /* sum of clip * stretch */
    double work;     /* reference work done inside: sum of clip / stretch */
    double sm_work;  /* the same, each kernel weighted by its share of the SMs */
} winsum;

/* Sums per process and per signature. */
typedef struct sums {
    double stretch, dur_ref, ref;
} sums;

/* Fills coverage, mean stretch and effective parallelism of a window from its sums. The work of
 * the kernels without reference is assumed done at the same rate as the others'. */
static void window_evidence(analysis_window *w, const winsum *ws)
{
    double busy = (double)w->busy_ns;
    w->coverage = ws->clip > 0 ? (float)(ws->clip_ref / ws->clip) : 0.0f;
    w->mean_stretch = ws->clip_ref > 0 ? (float)(ws->stretch / ws->clip_ref) : NAN;
    w->parallelism = ws->clip_ref > 0 && busy > 0 ? (float)(ws->work / busy / w->coverage) : NAN;
    w->concurrent_ns = ws->clip_ref > 0 && w->mean_stretch > 0
                           ? (int64_t)fmax(busy / w->mean_stretch, ws->sm_work / w->coverage)
                           : 0;
}

/* The share of the device's SMs a kernel holds while it runs (0..1]: its blocks over the blocks
 * all SMs hold at once, by the occupancy limits per SM (threads, 32 blocks, 64K registers,
 * shared memory) of compute capability 7.0 and later. 0 when the device's SM count is unknown. */
static double gpu_share(const store_launch *l, const store_device *d)
{
    double threads = (double)l->block[0] * l->block[1] * l->block[2];
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2];
    if (!d || !d->sm_count || threads <= 0 || blocks <= 0)
        return 0;
    double max_threads = d->cc_major == 8 && d->cc_minor > 0    ? 1536
                         : d->cc_major == 7 && d->cc_minor == 5 ? 1024
                                                                : 2048;
    double smem_per_sm = d->cc_major >= 9 ? 233472 : d->cc_major == 8 ? 167936 : 98304;
    double warps = ceil(threads / 32);
    double per_sm = fmin(32, floor(max_threads / (warps * 32)));
    if (l->registers)
        per_sm = fmin(per_sm, floor(65536 / (ceil(l->registers * 32 / 256.0) * 256 * warps)));
    double smem = (double)l->static_smem + l->dynamic_smem;
    if (smem > 0)
        per_sm = fmin(per_sm, floor(smem_per_sm / smem));
    return fmin(1, blocks / (fmax(per_sm, 1) * d->sm_count));
}

/* The verdict of an overlap window from its evidence (rules in analysis/README.md). */
static analysis_verdict judge_window(const analysis_options *o, analysis_window *w,
                                     const winsum *ws)
{
    window_evidence(w, ws);
    w->stretch_matches_contexts = ws->clip_ref > 0 && fabs(w->mean_stretch - w->contexts) <=
                                                          o->sliced_stretch_tolerance * w->contexts;
    if (!(ws->clip_ref > 0) || w->coverage < o->min_reference_coverage)
        return ANALYSIS_UNKNOWN;
    if (w->mean_stretch <= o->concurrent_max_stretch)
        return ANALYSIS_CONCURRENT;
    if (w->mps)
        return ANALYSIS_CONTENDED;
    if (w->parallelism <= o->sliced_max_parallelism)
        return ANALYSIS_TIME_SLICED;
    return ANALYSIS_CONTENDED;
}

/* Adds kernel k's time inside the windows of slot s to their sums; *pCur is the slot's first
 * window that may still hold a kernel (starts only grow, so it only moves forward). */
static void add_to_windows(const analysis *a, uint32_t s, uint64_t *pCur, winsum *ws,
                           const store_kernel *k, float stretch, float share)
{
    const analysis_device *ad = &a->devs[s];
    uint64_t end = ad->first_window + ad->nwindows;
    while (*pCur < end && a->windows[*pCur].t1 <= k->start)
        (*pCur)++;
    for (uint64_t w = *pCur; w < end && a->windows[w].t0 < k->end; w++) {
        analysis_window *win = &a->windows[w];
        int64_t t0 = k->start > win->t0 ? k->start : win->t0;
        int64_t t1 = k->end < win->t1 ? k->end : win->t1;
        if (t1 <= t0)
            continue;
        double clip = (double)(t1 - t0);
        win->nkernels++;
        ws[w].clip += clip;
        if (!isnan(stretch)) {
            ws[w].clip_ref += clip;
            ws[w].stretch += clip * stretch;
            ws[w].work += clip / stretch;
            ws[w].sm_work += clip / stretch * share;
        }
    }
}

/* The time a device's time-sliced windows would save if their kernels ran side by side, each
 * `slowdown` (>= 1) times its solo duration: busy_ns less the larger of busy_ns / mean stretch *
 * slowdown and the SM-share bound (in concurrent_ns; the slowdown of kernels that wait for SMs
 * is that bound already), never below 0. */
static double device_saved(const analysis *a, const analysis_device *ad, double slowdown)
{
    double saved = 0;
    for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
        const analysis_window *win = &a->windows[w];
        if (win->verdict != ANALYSIS_TIME_SLICED) /* judged with a reference: mean_stretch > 0 */
            continue;
        double busy = (double)win->busy_ns;
        double side_by_side = fmax((double)win->concurrent_ns, busy / win->mean_stretch * slowdown);
        if (side_by_side < busy)
            saved += busy - side_by_side;
    }
    return saved;
}

/* Where device ad would end, in ns after the run's first kernel start, with `saved` ns
 * (device_saved()) taken off its last kernel end. Measured from the run's start rather than on
 * the common axis, whose ns since 1970 a double cannot hold to the ns. */
static double predicted_end(const analysis *a, const analysis_device *ad, double saved)
{
    return (double)(ad->t_end - a->sum.t_begin) - saved;
}

/* The run's predicted gain from the predicted end (predicted_end()) of the device that would
 * finish last: span over predicted span; 1.0 when that end is not after the run's start (no
 * device: -INFINITY). */
static double gain_to(const analysis_summary *sm, double last_end)
{
    return last_end > 0 ? (double)(sm->t_end - sm->t_begin) / last_end : 1.0;
}

/* The run's predicted gain with every time-sliced window's kernels side by side at `slowdown`
 * times their solo duration, as analysis_judge() computes it at slowdown 1. */
static double run_gain(const analysis *a, double slowdown)
{
    double last_end = -INFINITY;
    for (uint32_t s = 0; s < a->ndevs; s++)
        last_end =
            fmax(last_end, predicted_end(a, &a->devs[s], device_saved(a, &a->devs[s], slowdown)));
    return gain_to(&a->sum, last_end);
}

/* Device figures from its judged windows: the dominant verdict and the predicted gain. Returns
 * the time its time-sliced windows would save side by side at solo speed (device_saved() at
 * slowdown 1), which the run's predicted gain needs too. */
static double judge_device(analysis *a, analysis_device *ad)
{
    double best = 0;
    double wsum[ANALYSIS_NVERDICTS][4] = {{0}}; /* length-weighted stretch, ctx, par; length */
    for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
        const analysis_window *win = &a->windows[w];
        double len = (double)(win->t1 - win->t0);
        ad->ns_by_verdict[win->verdict] += len;
        if (win->verdict < ANALYSIS_CONCURRENT || isnan(win->mean_stretch))
            continue;
        wsum[win->verdict][0] += len * win->mean_stretch;
        wsum[win->verdict][1] += len * win->contexts;
        wsum[win->verdict][2] += len * win->parallelism;
        wsum[win->verdict][3] += len;
    }
    ad->verdict = ANALYSIS_SOLO; /* never IDLE: every slot has kernels (assign_slots()) */
    for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++)
        if (ad->ns_by_verdict[v] > best) {
            best = ad->ns_by_verdict[v];
            ad->verdict = (analysis_verdict)v;
        }
    ad->verdict_ns = ad->ns_by_verdict[ad->verdict];
    double wl = wsum[ad->verdict][3]; /* 0 for SOLO: only overlap verdicts are summed */
    ad->mean_stretch = wl > 0 ? wsum[ad->verdict][0] / wl : NAN;
    ad->contexts = wl > 0 ? wsum[ad->verdict][1] / wl : NAN;
    ad->parallelism = wl > 0 ? wsum[ad->verdict][2] / wl : NAN;
    double span = (double)(ad->t_end - ad->t_begin);
    double saved = device_saved(a, ad, 1.0);
    ad->predicted_gain = span > saved && saved > 0 ? span / (span - saved) : 1.0;
    return saved;
}

int analysis_judge(analysis *a)
{
    const store_run *run = a->run;
    winsum *ws = calloc(a->nwindows + 1, sizeof *ws);
    uint64_t *cur = calloc(a->ndevs + 1, sizeof *cur);
    sums *ps = calloc(run->nprocesses + 1, sizeof *ps);
    double *sigstretch = calloc(a->nsigs + 1, sizeof *sigstretch);
    uint64_t *signref = calloc(a->nsigs + 1, sizeof *signref);
    /* share of the SMs each launch signature holds on each device slot */
    float *share = malloc(((size_t)run->nlaunches * a->ndevs + 1) * sizeof *share);
    double stretch_sum = 0;
    int rc = ANALYSIS_ENOMEM;
    if (!ws || !cur || !ps || !sigstretch || !signref || !share)
        goto out;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        cur[s] = a->devs[s].first_window;
        store_idx d = a->devs[s].device;
        for (uint32_t l = 0; l < run->nlaunches; l++)
            share[(size_t)l * a->ndevs + s] =
                (float)gpu_share(&run->launches[l], d == STORE_NONE ? NULL : &run->devices[d]);
    }
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        uint32_t sig = a->launch_sig[k->launch], s = analysis_kernel_slot(a, k);
        store_idx p = store_kernel_process(run, k);
        int64_t dur = analysis_kernel_dur(k);
        double ref = a->sigs[sig].reference_ns;
        float st = dur > 0 && ref > 0 ? (float)(dur / ref) : NAN;
        a->stretch[i] = st;
        analysis_process *ap = &a->procs[p];
        if (!ap->nkernels++) /* kernels come sorted by start */
            a->proc_first[p] = a->proc_last[p] = k->start;
        if (k->start + dur > a->proc_last[p])
            a->proc_last[p] = k->start + dur;
        ap->kernel_ns += dur;
        a->sigs[sig].nkernels++;
        a->sigs[sig].total_ns += dur;
        if (!isnan(st)) {
            ap->nreferenced++;
            ps[p].stretch += st;
            ps[p].dur_ref += dur;
            ps[p].ref += ref;
            sigstretch[sig] += st;
            signref[sig]++;
            a->sum.nreferenced++;
            stretch_sum += st;
        }
        if (dur > 0)
            add_to_windows(a, s, &cur[s], ws, k, st, share[(size_t)k->launch * a->ndevs + s]);
    }
    double dur_ref = 0, ref = 0, kernel_ns = 0; /* over all processes, for the summary */
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        analysis_process *ap = &a->procs[p];
        ap->mean_stretch = ap->nreferenced ? ps[p].stretch / ap->nreferenced : NAN;
        ap->slowdown = ap->nreferenced ? ps[p].dur_ref / ps[p].ref : NAN;
        dur_ref += ps[p].dur_ref;
        ref += ps[p].ref;
        kernel_ns += (double)ap->kernel_ns;
    }
    for (uint32_t c = 0; c < run->ncontexts; c++)
        if (run->contexts[c].compute_api_kind == 2)
            a->procs[run->contexts[c].process].mps = 1;
    for (uint32_t s = 0; s < a->nsigs; s++)
        a->sigs[s].mean_stretch = signref[s] ? sigstretch[s] / signref[s] : NAN;
    for (uint64_t w = 0; w < a->nwindows; w++) {
        analysis_window *win = &a->windows[w];
        if (win->verdict == ANALYSIS_UNKNOWN) /* an overlap window, from the sweep */
            win->verdict = judge_window(&a->opt, win, &ws[w]);
        else
            window_evidence(win, &ws[w]);
    }
    /* run level (t_begin and t_end are set by assign_slots()): the device that would finish
     * last decides the predicted span */
    analysis_summary *sm = &a->sum;
    double last_end = -INFINITY;
    sm->nkernels = run->nkernels;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        analysis_device *ad = &a->devs[s];
        last_end = fmax(last_end, predicted_end(a, ad, judge_device(a, ad)));
        sm->busy_ns += ad->busy_ns;
        sm->overlap_ns += ad->overlap_ns;
    }
    sm->mean_stretch = sm->nreferenced ? stretch_sum / sm->nreferenced : NAN;
    sm->slowdown =
        ref > 0 && dur_ref >= a->opt.min_reference_coverage * kernel_ns ? dur_ref / ref : NAN;
    sm->predicted_gain = gain_to(sm, last_end);
    rc = ANALYSIS_OK;
out:
    free(ws);
    free(cur);
    free(share);
    free(ps);
    free(sigstretch);
    free(signref);
    return rc;
}

/* ------------------------------------------------------------ comparison */

int analysis_compare(const analysis *a, const analysis *b, analysis_comparison *pOut)
{
    if (!a || !b || !pOut)
        return ANALYSIS_EINVAL;
    memset(pOut, 0, sizeof *pOut);
    pOut->span_a = a->sum.t_end - a->sum.t_begin;
    pOut->span_b = b->sum.t_end - b->sum.t_begin;
    pOut->measured_gain = pOut->span_b > 0 ? (double)pOut->span_a / (double)pOut->span_b : NAN;
    pOut->predicted_gain = a->sum.predicted_gain;
    pOut->mean_stretch_a = a->sum.mean_stretch;
    pOut->mean_stretch_b = b->sum.mean_stretch;
    pOut->slowdown_b = b->sum.slowdown;
    /* at a slowdown of 1 or less the prediction is a's own (run_gain(a, 1) == predicted_gain) */
    double slow = b->sum.slowdown;
    pOut->predicted_gain_at_slowdown_b = isnan(slow) ? NAN
                                         : slow > 1  ? run_gain(a, slow)
                                                     : a->sum.predicted_gain;
    pOut->duration_ratio = NAN;
    sigtab t;
    float *ratio = malloc((a->nsigs + 1) * sizeof *ratio);
    if (!ratio || sigtab_of(&t, b)) {
        free(ratio);
        return ANALYSIS_ENOMEM;
    }
    uint32_t n = 0;
    for (uint32_t s = 0; s < a->nsigs; s++) {
        const analysis_signature *sa = &a->sigs[s];
        uint32_t bs = sigtab_find(&t, b, a->run, &a->run->launches[sa->launch], UINT32_MAX);
        if (bs == UINT32_MAX || !sa->nkernels || !b->sigs[bs].nkernels || !b->sigs[bs].total_ns)
            continue;
        const analysis_signature *sb = &b->sigs[bs];
        ratio[n++] =
            (float)(((double)sa->total_ns / sa->nkernels) / ((double)sb->total_ns / sb->nkernels));
    }
    pOut->common_signatures = n;
    if (n)
        pOut->duration_ratio = median(ratio, n);
    free(t.slot);
    free(ratio);
    return ANALYSIS_OK;
}
