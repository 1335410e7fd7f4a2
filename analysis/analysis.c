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
    o->queued_max_overlap = 0.25;
    o->min_reference_coverage = 0.5;
    o->quick_min_share = 0.1;
    o->switch_min_share = 0.5;
    o->switch_max_quick = 0.02;
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
    static const char *const names[ANALYSIS_NVERDICTS] = {
        "idle", "solo", "concurrent", "time-sliced", "contended", "queued", "unknown"};
    return (unsigned)v < ANALYSIS_NVERDICTS ? names[v] : "?";
}

const char *analysis_verdict_meaning(analysis_verdict v)
{
    static const char *const text[ANALYSIS_NVERDICTS] = {
        "no kernel was in flight",
        "kernels of one context only (its streams may overlap each other)",
        "kernels of several contexts ran side by side at about their solo speed",
        "the GPU took turns between contexts: each kernel ran only in its context's time slices, "
        "so it stretched by about the number of contexts taking turns",
        "kernels of several contexts ran side by side but slowed each other down (SMs, memory, "
        "caches)",
        "kernels that could have run side by side ran one after another, overlapping only where "
        "one handed the GPU to the next",
        "kernels of several contexts overlapped, but the files do not say whether MPS was on "
        "and the timing does not tell how they ran: too few solo references, or one kernel's "
        "work at a time (time-sliced, or MPS clients each filling the GPU) with no mark of "
        "either"};
    return (unsigned)v < ANALYSIS_NVERDICTS ? text[v] : "?";
}

const char *analysis_physics_name(analysis_physics p)
{
    static const char *const names[ANALYSIS_NPHYSICS] = {"none", "sliced", "shared", "unknown"};
    return (unsigned)p < ANALYSIS_NPHYSICS ? names[p] : "?";
}

const char *analysis_rule_name(analysis_rule r)
{
    static const char *const names[ANALYSIS_NRULES] = {
        "none",        "no-mps",        "not-stretched", "handover",
        "shared-slow", "one-at-a-time", "parallel-slow", "no-reference",
        "took-turns",  "switch-turns",  "quick-turns",   "quick-handovers"};
    return (unsigned)r < ANALYSIS_NRULES ? names[r] : "?";
}

const char *analysis_rule_text(analysis_rule r)
{
    static const char *const text[ANALYSIS_NRULES] = {
        "no overlap",
        "contexts that cannot share the GPU (no MPS) were in flight together: the GPU "
        "time-sliced them",
        "the kernels ran at about their solo speed while they overlapped",
        "the kernels could share the GPU (MPS or green contexts) but overlapped only at their "
        "ends",
        "the kernels could share the GPU (MPS or green contexts) and did, but slowed each other "
        "down",
        "MPS state unknown: the GPU did about one kernel's solo work at a time, which is "
        "time-slicing or MPS clients that each fill the GPU, and the timing shows neither a "
        "context switch's marks nor turns quicker than one (a libcollect recording says which, "
        "or --assume-mps on|off)",
        "MPS state unknown: the kernels ran side by side (more than one kernel's solo work at a "
        "time, which time-slicing cannot do) but slowed each other down",
        "MPS state unknown, too few kernels with a solo reference and no signature in the timing "
        "(give --baseline FILES, or --assume-mps on|off; a libcollect recording says)",
        "contexts that cannot share the GPU (no MPS) took turns without their kernels "
        "overlapping: each kernel fit its context's time slice, and the GPU switched between "
        "them (an idle gap at each switch)",
        "MPS state unknown: the contexts took turns the way time-slicing does: no turn quicker "
        "than a context switch, and most of them ended by one (the GPU idle for a switch's "
        "cost) or after a whole time slice",
        "MPS state unknown: the GPU changed between contexts quicker than a context switch "
        "allows, so they were not time-sliced (MPS clients); the stretch says how they shared "
        "it",
        "MPS state unknown: on this GPU one context's kernel started or ended within "
        "microseconds of another context's kernel, again and again, which a context switch "
        "does not allow, so they were not time-sliced (MPS clients); the stretch says how they "
        "shared it"};
    return (unsigned)r < ANALYSIS_NRULES ? text[r] : "?";
}

const char *analysis_signature_name(analysis_signature_kind k)
{
    static const char *const names[] = {"none", "switched", "quick"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

const char *analysis_basis_name(analysis_basis b)
{
    static const char *const names[] = {"none", "reference", "turns", "shortest"};
    return (unsigned)b < sizeof names / sizeof *names ? names[b] : "?";
}

const char *analysis_mps_name(analysis_mps m)
{
    static const char *const names[] = {"off", "on", "mixed", "unknown"};
    return (unsigned)m < sizeof names / sizeof *names ? names[m] : "?";
}

const char *analysis_ref_source_name(analysis_ref_source s)
{
    static const char *const names[] = {"none", "solo", "baseline"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

/* Context c's MPS state as flags: 1 off, 2 on, 4 unknown. */
static unsigned mps_flag(const analysis *a, store_idx c)
{
    uint32_t k = analysis_ctx_kind(a, c);
    return k == 1 ? 1u : k == 2 ? 2u : 4u;
}

/* The MPS state of a set of contexts from their OR-ed mps_flag()s (0: none). */
static analysis_mps mps_of(unsigned flags)
{
    if (flags & 4u)
        return ANALYSIS_MPS_UNKNOWN;
    if (flags == 3u)
        return ANALYSIS_MPS_MIXED;
    return flags == 2u ? ANALYSIS_MPS_ON : ANALYSIS_MPS_OFF;
}

/* A key that ties a context to a green-context family: (slot, process, root context id). */
typedef struct famkey {
    uint32_t slot, process, root, group;
} famkey;

static int cmp_famkey(const void *x, const void *y)
{
    const famkey *a = x, *b = y;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    if (a->process != b->process)
        return a->process < b->process ? -1 : 1;
    return a->root < b->root ? -1 : a->root > b->root;
}

/* Gives every context its share group (a->ctx_group, a->group_plain): the MPS clients of a slot
 * form one group (those of devices without a slot, whose contexts ran no kernel, one more); the
 * green contexts of a process on a slot form one with their parent (the context whose id is their
 * parent id); every other context is a group of its own. A group is plain (known not to be MPS: it
 * takes turns with every other group) when the file of every context in it says it is not an MPS
 * client (or --assume-mps off stands in), so that green contexts imported without an MPS state
 * (nsys) stay unknown, like the other contexts of their file; of unknown MPS state
 * (a->group_unknown) when the file of a context in it does not say. */
static int assign_groups(analysis *a)
{
    const store_run *run = a->run;
    uint32_t nfam = 0, *mps_group = malloc((a->ndevs + 1) * sizeof *mps_group);
    famkey *fam = malloc((run->ncontexts + 1) * sizeof *fam);
    a->ctx_group = malloc((run->ncontexts + 1) * sizeof *a->ctx_group);
    a->group_plain = malloc(run->ncontexts + 1);
    a->group_unknown = calloc(run->ncontexts + 1, 1);
    if (!mps_group || !fam || !a->ctx_group || !a->group_plain || !a->group_unknown) {
        free(mps_group);
        free(fam);
        return ANALYSIS_ENOMEM;
    }
    for (uint32_t s = 0; s <= a->ndevs; s++)
        mps_group[s] = UINT32_MAX;
    /* the green families: one group per (slot, process, parent id) */
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        const store_context *sc = &run->contexts[c];
        if (sc->green && analysis_ctx_kind(a, c) != 2)
            fam[nfam++] = (famkey){a->ctx_slot[c], sc->process, sc->parent_id, 0};
    }
    qsort(fam, nfam, sizeof *fam, cmp_famkey);
    uint32_t n = 0;
    for (uint32_t i = 0; i < nfam; i++) {
        if (n && !cmp_famkey(&fam[n - 1], &fam[i]))
            continue;
        fam[n] = fam[i];
        fam[n].group = a->ngroups;
        a->group_plain[a->ngroups++] = 1; /* until a member says otherwise, below */
        n++;
    }
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        const store_context *sc = &run->contexts[c];
        uint32_t s = a->ctx_slot[c];
        famkey k = {s, sc->process, sc->green ? sc->parent_id : sc->context_id, 0};
        uint32_t kind = analysis_ctx_kind(a, c);
        const famkey *f = kind == 2 ? NULL : bsearch(&k, fam, n, sizeof *fam, cmp_famkey);
        if (f) { /* a green context, or the parent of green ones */
            a->ctx_group[c] = f->group;
            a->group_plain[f->group] &= kind == 1;
            a->group_unknown[f->group] |= kind == 0;
        } else if (kind == 2) {
            uint32_t *m = &mps_group[s < a->ndevs ? s : a->ndevs]; /* no slot: no kernel */
            if (*m == UINT32_MAX) {
                *m = a->ngroups;
                a->group_plain[a->ngroups++] = 0;
            }
            a->ctx_group[c] = *m;
        } else {
            a->ctx_group[c] = a->ngroups;
            a->group_unknown[a->ngroups] = kind == 0;
            a->group_plain[a->ngroups++] = kind == 1;
        }
    }
    free(mps_group);
    free(fam);
    return ANALYSIS_OK;
}

/* Per slot and per process: distinct processes, contexts, green contexts and share groups with
 * kernels, and their MPS state. `used` counts each context's kernels. */
static int count_contexts(analysis *a, const uint64_t *used)
{
    const store_run *run = a->run;
    uint8_t *seen = calloc((uint64_t)a->ndevs * run->nprocesses + 1, 1);
    uint8_t *gseen = calloc(a->ngroups + 1, 1);
    unsigned *dflags = calloc(a->ndevs + 1, sizeof *dflags);
    unsigned *pflags = calloc(run->nprocesses + 1, sizeof *pflags);
    int rc = ANALYSIS_ENOMEM;
    if (!seen || !gseen || !dflags || !pflags)
        goto out;
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        if (!used[c])
            continue;
        const store_context *sc = &run->contexts[c];
        uint32_t s = a->ctx_slot[c];
        analysis_device *ad = &a->devs[s];
        ad->ncontexts++;
        ad->ngreen += sc->green != 0;
        a->procs[sc->process].ncontexts++;
        dflags[s] |= mps_flag(a, c);
        pflags[sc->process] |= mps_flag(a, c);
        if (!gseen[a->ctx_group[c]]++)
            ad->ngroups++;
        uint8_t *p = &seen[(uint64_t)s * run->nprocesses + sc->process];
        if (!*p) {
            *p = 1;
            ad->nprocesses++;
        }
    }
    for (uint32_t s = 0; s < a->ndevs; s++)
        a->devs[s].mps = mps_of(dflags[s]);
    for (uint32_t p = 0; p < run->nprocesses; p++)
        a->procs[p].mps = mps_of(pflags[p]);
    rc = ANALYSIS_OK;
out:
    free(seen);
    free(gseen);
    free(dflags);
    free(pflags);
    return rc;
}

/* Each slot's whole GPU in SMs (a->slot_sms) and each context's partition (a->ctx_sms): the SMs
 * a green context, or an MPS client limited by an active thread percentage, may use, where
 * fewer than the whole GPU's (0 otherwise). The whole GPU is its device's SM count (the most any
 * process was shown), or, where every process saw only its partition (a run of clients all at
 * 50% shows 66 SMs of the H200's 132), the most a client's partition and percentage imply
 * (66 / 50%: 132). */
static int assign_partitions(analysis *a)
{
    const store_run *run = a->run;
    a->slot_sms = calloc(a->ndevs + 1, sizeof *a->slot_sms);
    a->ctx_sms = calloc(run->ncontexts + 1, sizeof *a->ctx_sms);
    if (!a->slot_sms || !a->ctx_sms)
        return ANALYSIS_ENOMEM;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        store_idx d = a->devs[s].device;
        a->slot_sms[s] = d != STORE_NONE ? run->devices[d].sm_count : 0;
    }
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        const store_context *sc = &run->contexts[c];
        uint32_t s = a->ctx_slot[c];
        if (s < a->ndevs && sc->sm_count && sc->thread_pct > 0 && sc->thread_pct < 100) {
            double whole = floor((double)sc->sm_count * 100.0 / sc->thread_pct + 0.5);
            if (whole > a->slot_sms[s] && whole < 1e6)
                a->slot_sms[s] = (uint32_t)whole;
        }
    }
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        uint32_t s = a->ctx_slot[c], k = run->contexts[c].sm_count;
        if (s < a->ndevs && k && k < a->slot_sms[s])
            a->ctx_sms[c] = k;
    }
    return ANALYSIS_OK;
}

/* Gives every device that ran kernels a slot (run->devices order, the unknown device last; so
 * every slot has >= 1 kernel), fills the slots' kernel counts and time spans and the run's span
 * (a->sum.t_begin, t_end), checks the kernels are sorted, and assigns the share groups. */
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
    uint64_t nout = 0, first = 1; /* kernels out of range; no kernel on the axis yet */
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (k->stream >= run->nstreams || k->start < prev)
            goto out; /* not finished, or not a consistent run */
        prev = k->start;
        store_idx c = run->streams[k->stream].context;
        if (c >= run->ncontexts)
            goto out;
        int64_t dur = analysis_kernel_dur(k), *sp = &span[3 * (uint64_t)c];
        int64_t end = dur ? k->end : k->start;
        if (!analysis_kernel_in_range(k)) { /* counted, never on the time axis */
            a->sum.nzero++;
            nout++;
            continue;
        }
        if (!used[c]++) {
            sp[0] = k->start;
            sp[1] = end;
            sp[2] = dur;
        } else {
            if (end > sp[1])
                sp[1] = end;
            if (dur > sp[2])
                sp[2] = dur;
        }
        a->sum.nzero += dur == 0;
        if (first) { /* the run's first start: the kernels are sorted */
            a->sum.t_begin = a->sum.t_end = k->start;
            first = 0;
        }
        if (end > a->sum.t_end)
            a->sum.t_end = end;
    }
    a->nout = nout;
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
    if ((rc = assign_groups(a)) == ANALYSIS_OK && (rc = count_contexts(a, used)) == ANALYSIS_OK)
        rc = assign_partitions(a);
out:
    free(dslot);
    free(used);
    free(span);
    return rc;
}

/* Range i of the kind --measure names (captured ranges for CAPTURE, NVTX ranges for RANGE):
 * whether it is one the interval is measured over (named measure_range, not empty, on the time
 * axis), and then its start, end and process. */
static int measured_range(const analysis *a, uint64_t i, int64_t *pS, int64_t *pE, store_idx *pP)
{
    const store_run *run = a->run;
    const char *name;
    if (a->opt.measure == ANALYSIS_MEASURE_CAPTURE) {
        *pS = run->captures[i].start;
        *pE = run->captures[i].end;
        *pP = run->captures[i].process;
        name = run->captures[i].name;
    } else {
        const store_range *r = &run->ranges[i];
        *pS = r->start;
        *pE = r->end;
        *pP = r->process;
        name = r->name < run->nstrings ? run->strings[r->name].text : NULL;
    }
    return name && !strcmp(name, a->opt.measure_range) && *pE > *pS && *pS >= -STORE_TIME_MAX &&
           *pE <= STORE_TIME_MAX;
}

/* How many ranges measured_range() looks through. */
static uint64_t measured_ranges(const analysis *a)
{
    return a->opt.measure == ANALYSIS_MEASURE_CAPTURE ? a->run->ncaptures : a->run->nranges;
}

/* A process's first kernel start (+1) or last kernel end (-1), for together_interval(). */
typedef struct span_edge {
    int64_t t;
    int step;
    store_idx p;
} span_edge;

static int cmp_edge(const void *x, const void *y)
{
    const span_edge *e = x, *f = y;
    /* an end before a start at the same instant: spans that only touch did not run together */
    return e->t < f->t ? -1 : e->t > f->t ? 1 : e->step - f->step;
}

/* Process p's first kernel start and last kernel end, cut to the times analysed (kernels beyond
 * them are not analysed); 0 when it ran no kernel there. */
static int kernel_span(const analysis *a, uint32_t p, int64_t *pF, int64_t *pL)
{
    *pF = a->proc_first[p] > a->sum.t_begin ? a->proc_first[p] : a->sum.t_begin;
    *pL = a->proc_last[p] < a->sum.t_end ? a->proc_last[p] : a->sum.t_end;
    return a->procs[p].kernel_ns > 0 && *pL > *pF;
}

/* The time the most processes ran kernels together (between each one's first kernel start and
 * last kernel end): every process's when all ran at once (from the last one's first kernel to the
 * first one's last), else the longest time the most of them (at least two) did; one process: its
 * own span. Returns how many processes that is (0: no two ran at once, or out of memory), the
 * time in *pT0, *pT1, and in *pN the processes with kernels. */
static uint32_t together_span(const analysis *a, int64_t *pT0, int64_t *pT1, uint32_t *pN)
{
    const store_run *run = a->run;
    span_edge *ev = malloc((2 * (uint64_t)run->nprocesses + 1) * sizeof *ev);
    *pN = 0;
    if (!ev)
        return 0;
    uint64_t n = 0;
    int64_t f, l;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        if (kernel_span(a, p, &f, &l)) {
            ev[n++] = (span_edge){f, 1, p};
            ev[n++] = (span_edge){l, -1, p};
        }
    qsort(ev, n, sizeof *ev, cmp_edge);
    *pN = (uint32_t)(n / 2);
    *pT0 = n ? ev[0].t : 0; /* one process: its span */
    *pT1 = n ? ev[n - 1].t : 0;
    uint32_t depth = 0, best = n == 2;
    for (uint64_t i = 0; i + 1 < n; i++) { /* [ev[i].t, ev[i + 1].t) has `depth` processes */
        depth += (uint32_t)ev[i].step;
        /* lengths in unsigned arithmetic: times may lie anywhere in int64 (a hostile file) */
        uint64_t len = (uint64_t)ev[i + 1].t - (uint64_t)ev[i].t;
        if (len > 0 && depth >= 2 &&
            (depth > best || (depth == best && len > (uint64_t)*pT1 - (uint64_t)*pT0))) {
            best = depth;
            *pT0 = ev[i].t;
            *pT1 = ev[i + 1].t;
        }
    }
    free(ev);
    return best;
}

/* --measure together: together_span(), the processes left out of it counted (a process that only
 * set up before the rest began, or one that started after they ended: a->measure_out). Where no
 * two processes ever ran at once, the whole recording stays (a->measure_missing). */
static void together_interval(analysis *a)
{
    const store_run *run = a->run;
    analysis_summary *sm = &a->sum;
    int64_t t0, t1;
    uint32_t np, best = together_span(a, &t0, &t1, &np);
    if (!best) {
        a->measure_missing = np > 1; /* one process alone: nothing to say */
        return;
    }
    sm->measure = ANALYSIS_MEASURE_TOGETHER;
    sm->measure_t0 = t0;
    sm->measure_t1 = t1;
    a->measure_in = best;
    a->measure_out = np - best;
    int64_t f, l;
    for (uint32_t p = 0; a->measure_out && p < run->nprocesses; p++)
        if (kernel_span(a, p, &f, &l) && !(f <= t0 && l >= t1)) {
            a->measure_out_first = p; /* the first not running all along */
            break;
        }
}

void analysis_measure_interval(analysis *a)
{
    analysis_summary *sm = &a->sum;
    sm->measure = ANALYSIS_MEASURE_ALL;
    sm->measure_t0 = sm->t_begin;
    sm->measure_t1 = sm->t_end;
    if (a->opt.measure == ANALYSIS_MEASURE_RANGE || a->opt.measure == ANALYSIS_MEASURE_CAPTURE) {
        int64_t t0 = INT64_MAX, t1 = INT64_MIN;
        for (uint64_t i = 0, n = measured_ranges(a); i < n; i++) {
            int64_t s, e;
            store_idx p;
            if (!measured_range(a, i, &s, &e, &p))
                continue;
            t0 = s < t0 ? s : t0;
            t1 = e > t1 ? e : t1;
        }
        if (t1 > t0) {
            sm->measure = a->opt.measure;
            sm->measure_t0 = t0;
            sm->measure_t1 = t1;
        } else {
            a->measure_missing = 1;
        }
    } else if (a->opt.measure == ANALYSIS_MEASURE_SPAN) {
        int64_t t0 = a->opt.measure_t0 > sm->t_begin ? a->opt.measure_t0 : sm->t_begin;
        int64_t t1 = a->opt.measure_t1 < sm->t_end ? a->opt.measure_t1 : sm->t_end;
        if (t1 > t0) { /* else no kernel time in it: the whole recording */
            sm->measure = ANALYSIS_MEASURE_SPAN;
            sm->measure_t0 = t0;
            sm->measure_t1 = t1;
        }
    } else if (a->opt.measure == ANALYSIS_MEASURE_TOGETHER) {
        together_interval(a);
    }
}

void analysis_process_spans(analysis *a)
{
    const store_run *run = a->run;
    analysis_summary *sm = &a->sum;
    int64_t *t0 = malloc((run->nprocesses + 1) * sizeof *t0);
    int64_t *t1 = malloc((run->nprocesses + 1) * sizeof *t1);
    sm->nproc_spans = 0;
    sm->proc_span_min_ns = sm->proc_span_max_ns = 0;
    int64_t g0, g1;
    uint32_t np;
    uint64_t together = together_span(a, &g0, &g1, &np) ? (uint64_t)g1 - (uint64_t)g0 : 0;
    sm->together_ns = together > INT64_MAX ? INT64_MAX : (int64_t)together;
    if (!t0 || !t1) { /* advisory figures: out of memory leaves them out */
        free(t0);
        free(t1);
        return;
    }
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        t0[p] = INT64_MAX;
        t1[p] = INT64_MIN;
    }
    if (sm->measure == ANALYSIS_MEASURE_RANGE || sm->measure == ANALYSIS_MEASURE_CAPTURE) {
        for (uint64_t i = 0, n = measured_ranges(a); i < n; i++) { /* those the interval took */
            int64_t s, e;
            store_idx p;
            if (!measured_range(a, i, &s, &e, &p) || p >= run->nprocesses)
                continue;
            t0[p] = s < t0[p] ? s : t0[p];
            t1[p] = e > t1[p] ? e : t1[p];
        }
    } else {
        for (uint32_t p = 0; p < run->nprocesses; p++)
            if (a->procs[p].nkernels) {
                t0[p] = a->proc_first[p] > sm->measure_t0 ? a->proc_first[p] : sm->measure_t0;
                t1[p] = a->proc_last[p] < sm->measure_t1 ? a->proc_last[p] : sm->measure_t1;
            }
    }
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        if (t1[p] <= t0[p])
            continue;
        int64_t d = t1[p] - t0[p];
        if (!sm->nproc_spans++ || d < sm->proc_span_min_ns)
            sm->proc_span_min_ns = d;
        if (d > sm->proc_span_max_ns)
            sm->proc_span_max_ns = d;
    }
    free(t0);
    free(t1);
}

const char *analysis_measure_name(analysis_measure m)
{
    static const char *const names[] = {"all", "together", "range", "capture", "span"};
    return (unsigned)m < sizeof names / sizeof *names ? names[m] : "?";
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

/* to - from, saturated to the int64 range. */
static int64_t gap(int64_t from, int64_t to)
{
    int64_t d;
    if (__builtin_sub_overflow(to, from, &d))
        return to > from ? INT64_MAX : INT64_MIN;
    return d;
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
            int64_t before = i > 0 ? gap(maxend, r[3 * i]) : INT64_MAX;
            int64_t after = i + 1 < n ? gap(r[3 * i + 1], r[3 * (i + 1)]) : INT64_MAX;
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

/* The records of process sp that its importer left out for want of a time (process_meta
 * import.unmapped.* keys naming "without_time": no start, no end, or an end before the start),
 * counted, with the first such key's kind in *kind (NULL when none) and the number of kinds in
 * *nkinds. */
static uint64_t untimed(const store_process *sp, const char **kind, uint32_t *nkinds)
{
    static const char prefix[] = "import.unmapped.";
    uint64_t n = 0;
    *kind = NULL;
    *nkinds = 0;
    for (uint32_t i = 0; i < sp->nmeta; i++) {
        int64_t v;
        const char *k = sp->meta_keys[i];
        if (strncmp(k, prefix, sizeof prefix - 1) || !strstr(k, "without_time") ||
            !store_parse_count(sp->meta_values[i], &v))
            continue;
        if (!(*nkinds)++)
            *kind = k + sizeof prefix - 1;
        n += (uint64_t)v;
    }
    return n;
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
    if (a->part_unmatched)
        warn(a,
             "%u kernel signature%s of contexts in SM partitions %s no reference in the "
             "baseline: neither the same launch nor one of the same name, block and shared "
             "memory whose grid is sized for the whole GPU (a client shown fewer SMs launches "
             "fewer blocks); a solo run in the same partition gives them one",
             a->part_unmatched, a->part_unmatched == 1 ? "" : "s",
             a->part_unmatched == 1 ? "has" : "have");
    uint32_t nincomplete = 0, nempty = 0;
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        const store_process *sp = &run->processes[p];
        const char *file = sp->file ? sp->file : "?";
        /* only libcollect says whether its recording finished: an imported file is what the
         * other profiler wrote, and its importer warns about what it could not map */
        int native = !sp->source || !strcmp(sp->source, "libcollect");
        if (native && !sp->complete && nincomplete++ < 5)
            warn(a, "process %lld (%s) is incomplete%s%s", (long long)sp->pid, file,
                 sp->error ? ": " : " (the collector did not finish cleanly)",
                 sp->error ? sp->error : "");
        if (sp->records_dropped)
            warn(a, "process %lld (%s): CUPTI dropped %llu records", (long long)sp->pid, file,
                 (unsigned long long)sp->records_dropped);
        if (sp->rows_refused)
            warn(a,
                 "process %lld (%s): %llu records were refused: their times lie beyond +-146 "
                 "years around 1970 (a damaged or hostile file?)",
                 (long long)sp->pid, file, (unsigned long long)sp->rows_refused);
        const char *kind;
        uint32_t nkinds;
        uint64_t nu = untimed(sp, &kind, &nkinds);
        if (nu)
            warn(a,
                 "process %lld (%s): %llu record%s left out: no time, or an end before the "
                 "start (%s%s)",
                 (long long)sp->pid, file, (unsigned long long)nu, nu > 1 ? "s were" : " was", kind,
                 nkinds > 1 ? ", ..." : "");
        if (!a->procs[p].nkernels && nempty++ < 5)
            warn(a, "process %lld (%s) ran no kernels", (long long)sp->pid, file);
    }
    if (nincomplete > 5)
        warn(a, "%u more processes are incomplete", nincomplete - 5);
    if (nempty > 5)
        warn(a, "%u more processes ran no kernels", nempty - 5);
    if (a->measure_missing && a->opt.measure == ANALYSIS_MEASURE_CAPTURE)
        warn(a,
             "no capture range named '%s' in the recording: the gains are measured over the "
             "whole recording",
             a->opt.measure_range);
    else if (a->measure_missing && a->opt.measure == ANALYSIS_MEASURE_TOGETHER)
        warn(a, "no two processes ran kernels at the same time: the gains are measured over the "
                "whole recording, not while the processes ran together");
    else if (a->measure_missing)
        warn(a,
             "no NVTX range named '%s' in the recording: the gains are measured over the whole "
             "recording (record with TLVIEW_NVTX=1 for the ranges)",
             a->opt.measure_range);
    if (a->measure_out) {
        const store_process *op = &run->processes[a->measure_out_first];
        warn(a,
             "the gains are measured while %u processes ran kernels together; %u other%s (pid "
             "%lld%s) ran %s kernels at other times (before or after) and %s left out",
             a->measure_in, a->measure_out, a->measure_out > 1 ? "s" : "", (long long)op->pid,
             a->measure_out > 1 ? ", ..." : "", a->measure_out > 1 ? "their" : "its",
             a->measure_out > 1 ? "are" : "is");
    }
    for (uint32_t s = 0; s < a->ndevs; s++) {
        store_idx dv = a->devs[s].device;
        const char *name = dv != STORE_NONE ? run->devices[dv].name : NULL;
        int exact;
        const analysis_calibration *c = analysis_calibration_for(name, &exact);
        if (!exact && a->devs[s].by_verdict[ANALYSIS_TIME_SLICED].nwindows)
            warn(a,
                 "GPU %u (%s): MPS was measured on the %s only; its costs stand in for this "
                 "GPU's in the predicted gain's low bound",
                 s, name ? name : "unknown device", c->gpu);
    }
    uint32_t nassumed = 0;
    for (uint32_t c = 0; c < run->ncontexts; c++)
        nassumed += run->contexts[c].compute_api_kind != 1 &&
                    run->contexts[c].compute_api_kind != 2 && a->opt.assume_mps;
    if (nassumed)
        warn(a,
             "%u context%s whose files do not say whether they were MPS clients %s taken as %s, "
             "as asked (--assume-mps %s)",
             nassumed, nassumed == 1 ? "" : "s", nassumed == 1 ? "was" : "were",
             a->opt.assume_mps == 2 ? "MPS clients" : "plain CUDA contexts (no MPS)",
             a->opt.assume_mps == 2 ? "on" : "off");
    for (uint32_t s = 0; s < a->ndevs; s++) {
        store_idx dv = a->devs[s].device;
        if (dv != STORE_NONE && run->devices[dv].inferred)
            warn(a,
                 "GPU %u (%s): the files of its %u processes give no GPU UUID; they were taken as "
                 "one GPU because they agree on host, ordinal, name and memory (tlview "
                 "--separate-gpus keeps each file's GPUs apart)",
                 s, run->devices[dv].name ? run->devices[dv].name : "?", a->devs[s].nprocesses);
    }
    if (a->sum.nzero > a->nout)
        warn(a,
             "%llu kernels have zero length (or end before start): counted, but without "
             "stretch",
             (unsigned long long)(a->sum.nzero - a->nout));
    if (a->nout)
        warn(a,
             "%llu kernels lie beyond the times tlview computes with (+-146 years around 1970: a "
             "damaged file?): counted, but not on the timeline",
             (unsigned long long)a->nout);
    return ANALYSIS_OK;
}

/* Frees the sweep's context switches (a->sw), which only the judge needs. */
static void free_switches(analysis *a)
{
    for (uint32_t s = 0; a->sw && s < a->ndevs; s++)
        free(a->sw[s].at);
    free(a->sw);
    a->sw = NULL;
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
    if (a->opt.join_gap_ns < 0 || a->opt.assume_mps < 0 || a->opt.assume_mps > 2 ||
        (unsigned)a->opt.measure > ANALYSIS_MEASURE_SPAN ||
        ((a->opt.measure == ANALYSIS_MEASURE_RANGE || a->opt.measure == ANALYSIS_MEASURE_CAPTURE) &&
         !a->opt.measure_range) ||
        (a->opt.measure == ANALYSIS_MEASURE_SPAN && a->opt.measure_t1 <= a->opt.measure_t0) ||
        !(a->opt.concurrent_max_stretch >= 1.0) || !(a->opt.sliced_max_parallelism > 0) ||
        !(a->opt.queued_max_overlap >= 0 && a->opt.queued_max_overlap <= 1) ||
        !(a->opt.min_reference_coverage >= 0 && a->opt.min_reference_coverage <= 1) ||
        !(a->opt.quick_min_share >= 0 && a->opt.quick_min_share <= 1) ||
        !(a->opt.switch_min_share >= 0 && a->opt.switch_min_share <= 1) ||
        !(a->opt.switch_max_quick >= 0 && a->opt.switch_max_quick <= 1))
        goto fail;
    rc = ANALYSIS_ENOMEM;
    a->stretch = malloc((run->nkernels ? run->nkernels : 1) * sizeof(float));
    a->ovl_start = malloc((run->nkernels ? run->nkernels : 1) * sizeof(int64_t));
    a->procs = calloc(run->nprocesses + 1, sizeof *a->procs);
    a->proc_first = calloc(run->nprocesses + 1, sizeof(int64_t));
    a->proc_last = calloc(run->nprocesses + 1, sizeof(int64_t));
    if (!a->stretch || !a->ovl_start || !a->procs || !a->proc_first || !a->proc_last)
        goto fail;
    store_hint_huge(a->stretch);
    store_hint_huge(a->ovl_start);
    for (uint32_t p = 0; p < run->nprocesses; p++)
        a->procs[p].process = p;
    if ((rc = assign_slots(a)) != 0 || (rc = analysis_sweep(a)) != 0 ||
        (rc = analysis_references(a)) != 0 || (rc = analysis_judge(a)) != 0 ||
        (rc = check_run(a)) != 0)
        goto fail;
    /* what only the passes needed */
    free(a->ovl_start);
    free(a->winx);
    free_switches(a);
    a->ovl_start = NULL;
    a->winx = NULL;
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
    free_switches(a);
    free(a->switch_in);
    free(a->waits);
    free(a->folds);
    if (!store_cache_owns(a->cache, a->stretch))
        free(a->stretch);
    store_cache_close(a->cache);
    free(a->ovl_start);
    free(a->ctx_slot);
    free(a->ctx_group);
    free(a->group_plain);
    free(a->group_unknown);
    free(a->slot_sms);
    free(a->ctx_sms);
    free(a->devs);
    free(a->dev_maxdur);
    free(a->windows);
    free(a->winx);
    free(a->sigs);
    free(a->launch_sig);
    free(a->sites);
    free(a->site_slot);
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
uint32_t analysis_device_sms(const analysis *a, uint32_t slot)
{
    return slot < a->ndevs ? a->slot_sms[slot] : 0;
}

uint32_t analysis_context_slot(const analysis *a, store_idx c)
{
    return c < a->run->ncontexts && a->ctx_slot[c] < a->ndevs ? a->ctx_slot[c] : UINT32_MAX;
}

uint32_t analysis_context_sms(const analysis *a, store_idx c)
{
    return c < a->run->ncontexts ? a->ctx_sms[c] : 0;
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

analysis_mps analysis_context_mps(const analysis *a, store_idx ctx)
{
    if (ctx >= a->run->ncontexts)
        return ANALYSIS_MPS_UNKNOWN;
    uint32_t k = analysis_ctx_kind(a, ctx);
    return k == 1 ? ANALYSIS_MPS_OFF : k == 2 ? ANALYSIS_MPS_ON : ANALYSIS_MPS_UNKNOWN;
}

uint32_t analysis_context_group(const analysis *a, store_idx ctx, int *pPlain)
{
    if (ctx >= a->run->ncontexts) {
        if (pPlain)
            *pPlain = 0;
        return UINT32_MAX;
    }
    if (pPlain)
        *pPlain = a->group_plain[a->ctx_group[ctx]];
    return a->ctx_group[ctx];
}

const char *analysis_warning(const analysis *a, uint32_t i)
{
    return i < a->nwarnings ? a->warnings[i] : NULL;
}
