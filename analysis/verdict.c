/* verdict.c: launch signatures and their solo references (medians), the stretch of every kernel
 * and where it happened, the evidence and verdict of every overlap window, process and device
 * figures, the predicted gain, and analysis_compare(). The rules are explained in
 * analysis/README.md. */
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
            a->sigs[s].stretch = NAN;
            a->nsigs++;
        }
        a->launch_sig[l] = s;
    }
    free(t.slot);
    return ANALYSIS_OK;
}

/* ------------------------------------------------------------ references */

static double blocks_per_sm(const store_launch *l, const store_device *d);

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

/* ------------------------------------------------------------ call sites */

static uint64_t site_hash(uint32_t sig, uint32_t pred)
{
    uint64_t h = mix(mix(1469598103934665603ULL, sig), pred);
    return h ^ (h >> 29);
}

/* The call site (sig, pred) of `a`; when it is new, entered when `add` (else UINT32_MAX). The
 * table grows to keep its load under a half. */
static uint32_t site_find(analysis *a, uint32_t sig, uint32_t pred, int add)
{
    if (add && 2 * ((uint64_t)a->nsites + 1) > a->site_mask + 1) {
        uint64_t cap = a->site_mask ? 2 * (a->site_mask + 1) : 64;
        uint32_t *slot = calloc(cap, sizeof *slot);
        analysis_site *sites = realloc(a->sites, cap / 2 * sizeof *sites);
        if (!slot || !sites) {
            free(slot);
            if (sites)
                a->sites = sites;
            return UINT32_MAX - 1;
        }
        a->sites = sites;
        for (uint32_t x = 0; x < a->nsites; x++) {
            uint64_t i = site_hash(sites[x].sig, sites[x].pred) & (cap - 1);
            while (slot[i])
                i = (i + 1) & (cap - 1);
            slot[i] = x + 1;
        }
        free(a->site_slot);
        a->site_slot = slot;
        a->site_mask = cap - 1;
    }
    if (!a->site_slot)
        return UINT32_MAX;
    uint64_t i = site_hash(sig, pred) & a->site_mask;
    for (; a->site_slot[i]; i = (i + 1) & a->site_mask) {
        const analysis_site *x = &a->sites[a->site_slot[i] - 1];
        if (x->sig == sig && x->pred == pred)
            return a->site_slot[i] - 1;
    }
    if (!add)
        return UINT32_MAX;
    a->sites[a->nsites] = (analysis_site){sig, pred, 0, 0};
    a->site_slot[i] = a->nsites + 1;
    return a->nsites++;
}

/* Walks the kernels in start order, knowing the signature last launched on each stream. */
typedef struct sitewalk {
    uint32_t *last; /* run->nstreams: signature of the stream's latest kernel, UINT32_MAX none */
    uint64_t *seen; /* nsigs: the signature's latest site and its predecessor (pred << 32 | site;
                       UINT64_MAX none): a program repeats its sequence, so this mostly hits */
} sitewalk;

static int sitewalk_init(sitewalk *w, const analysis *a)
{
    w->last = malloc(((size_t)a->run->nstreams + 1) * sizeof *w->last);
    w->seen = malloc(((size_t)a->nsigs + 1) * sizeof *w->seen);
    if (!w->last || !w->seen)
        return ANALYSIS_ENOMEM;
    memset(w->last, 0xff, ((size_t)a->run->nstreams + 1) * sizeof *w->last);
    memset(w->seen, 0xff, ((size_t)a->nsigs + 1) * sizeof *w->seen);
    return ANALYSIS_OK;
}

static void sitewalk_free(sitewalk *w)
{
    free(w->last);
    free(w->seen);
}

/* The call site of kernel k (the next in start order), entered when `add`; UINT32_MAX when
 * unknown, UINT32_MAX - 1 when out of memory. */
static uint32_t sitewalk_next(sitewalk *w, analysis *a, const store_kernel *k, int add)
{
    uint32_t sig = a->launch_sig[k->launch];
    uint32_t *last = k->stream < a->run->nstreams ? &w->last[k->stream] : NULL;
    uint32_t pred = last ? *last : UINT32_MAX;
    if (last)
        *last = sig;
    if (w->seen[sig] != UINT64_MAX && (uint32_t)(w->seen[sig] >> 32) == pred)
        return (uint32_t)w->seen[sig];
    uint32_t x = site_find(a, sig, pred, add);
    if (x < a->nsites)
        w->seen[sig] = (uint64_t)pred << 32 | x;
    return x;
}

/* References from the run's own solo instances (overlapped time 0): medians per call site and
 * per signature (a counting sort of the solo durations, one float each, the sites of one
 * signature side by side); and each signature's shortest instance. */
static int solo_references(analysis *a)
{
    const store_run *run = a->run;
    uint64_t *off = NULL, *soff = NULL;
    float *dur = NULL;
    sitewalk w = {0};
    int rc = ANALYSIS_ENOMEM;
    if (sitewalk_init(&w, a))
        goto out;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        int64_t d = analysis_kernel_dur(k);
        analysis_signature *sg = &a->sigs[a->launch_sig[k->launch]];
        uint32_t x = sitewalk_next(&w, a, k, 1);
        if (x == UINT32_MAX - 1)
            goto out;
        if (d > 0 && (!sg->shortest_ns || d < sg->shortest_ns))
            sg->shortest_ns = d;
        if (a->stretch[i] == 0.0f) { /* positive length, never overlapped */
            sg->nsolo++;
            a->sites[x].nsolo++;
        }
    }
    off = calloc(a->nsigs + 1, sizeof *off);
    soff = malloc(((size_t)a->nsites + 1) * sizeof *soff);
    if (!off || !soff)
        goto out;
    for (uint32_t s = 0; s < a->nsigs; s++)
        off[s + 1] = off[s] + a->sigs[s].nsolo;
    for (uint32_t x = 0; x < a->nsites; x++) { /* each site's place inside its signature's */
        uint32_t s = a->sites[x].sig;
        soff[x] = off[s];
        off[s] += a->sites[x].nsolo;
    }
    for (uint32_t s = a->nsigs; s > 0; s--) /* back to the signatures' starts */
        off[s] = off[s - 1];
    off[0] = 0;
    if (off[a->nsigs] && !(dur = malloc(off[a->nsigs] * sizeof *dur)))
        goto out;
    memset(w.last, 0xff, ((size_t)run->nstreams + 1) * sizeof *w.last);
    memset(w.seen, 0xff, ((size_t)a->nsigs + 1) * sizeof *w.seen);
    for (uint64_t i = 0; i < run->nkernels; i++) {
        uint32_t x = sitewalk_next(&w, a, &run->kernels[i], 0);
        if (a->stretch[i] == 0.0f && x < a->nsites)
            dur[soff[x]++] = (float)analysis_kernel_dur(&run->kernels[i]);
    }
    for (uint32_t x = 0; x < a->nsites; x++) /* before the signatures' medians reorder them */
        if (a->sites[x].nsolo)
            a->sites[x].reference_ns = median(dur + soff[x] - a->sites[x].nsolo, a->sites[x].nsolo);
    for (uint32_t s = 0; s < a->nsigs; s++)
        if (a->sigs[s].nsolo) {
            a->sigs[s].source = ANALYSIS_REF_SOLO;
            a->sigs[s].reference_ns = median(dur + off[s], a->sigs[s].nsolo);
        }
    rc = ANALYSIS_OK;
out:
    sitewalk_free(&w);
    free(dur);
    free(soff);
    free(off);
    return rc;
}

/* Where each signature of x ran: the SMs it could use (its contexts' partition, 0 for the whole
 * GPU, UINT32_MAX where its kernels ran in different ones), its GPU's SMs and device (of its
 * first kernel), each an array of x->nsigs (+ 1) the caller frees. 0 or ANALYSIS_ENOMEM. */
typedef struct sigwhere {
    uint32_t *part, *whole;
    store_idx *dev;
} sigwhere;

static int sig_where(const analysis *x, sigwhere *w)
{
    const store_run *run = x->run;
    w->part = malloc(((size_t)x->nsigs + 1) * sizeof *w->part);
    w->whole = calloc((size_t)x->nsigs + 1, sizeof *w->whole);
    w->dev = malloc(((size_t)x->nsigs + 1) * sizeof *w->dev);
    if (!w->part || !w->whole || !w->dev)
        return ANALYSIS_ENOMEM;
    memset(w->part, 0xfe, ((size_t)x->nsigs + 1) * sizeof *w->part); /* none seen yet */
    for (uint32_t sg = 0; sg <= x->nsigs; sg++)
        w->dev[sg] = STORE_NONE;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (analysis_kernel_dur(k) <= 0)
            continue;
        uint32_t sg = x->launch_sig[k->launch], c = run->streams[k->stream].context;
        uint32_t s = x->ctx_slot[c];
        if (w->part[sg] == 0xfefefefeu) {
            w->part[sg] = x->ctx_sms[c];
            w->whole[sg] = x->slot_sms[s];
            w->dev[sg] = x->devs[s].device;
        } else if (w->part[sg] != x->ctx_sms[c]) {
            w->part[sg] = UINT32_MAX;
        }
    }
    for (uint32_t sg = 0; sg < x->nsigs; sg++)
        if (w->part[sg] == 0xfefefefeu) /* no kernel in flight: as on the whole GPU */
            w->part[sg] = 0;
    return ANALYSIS_OK;
}

static void sigwhere_free(sigwhere *w)
{
    free(w->part);
    free(w->whole);
    free(w->dev);
}

/* The waves of launch l of x on `n` SMs of its device, one at least: the time its blocks take,
 * in units of one wave's (blocks_per_sm()); 0 when unknown. */
static double waves_on(const analysis *x, const store_launch *l, store_idx dev, double n)
{
    const store_device *d = dev < x->run->ndevices ? &x->run->devices[dev] : NULL;
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2], per_sm = blocks_per_sm(l, d);
    return per_sm > 0 && blocks > 0 && n > 0 ? fmax(1, blocks / (per_sm * n)) : 0;
}

/* The factor that takes b's reference of signature bs to a's signature s in a's partition: its
 * waves there over bs's waves where b ran it (1 where both ran on the same SMs, or when unknown,
 * or where either ran in several partitions). A kernel on 66 of 132 SMs against the same grid on
 * the whole GPU: 2 when it fills the GPU twice; against the grid its program sized for 132 SMs
 * (twice the blocks): 1. */
static double partition_factor(const analysis *a, const sigwhere *wa, uint32_t s, const analysis *b,
                               const sigwhere *wb, uint32_t bs)
{
    uint32_t pa = wa->part[s], pb = wb->part[bs];
    if (pa == UINT32_MAX || pb == UINT32_MAX)
        return 1;
    double na = pa ? pa : wa->whole[s], nb = pb ? pb : wb->whole[bs];
    if (na == nb && !memcmp(a->run->launches[a->sigs[s].launch].grid,
                            b->run->launches[b->sigs[bs].launch].grid, sizeof(uint32_t[3])))
        return 1;
    double xa = waves_on(a, &a->run->launches[a->sigs[s].launch], wa->dev[s], na);
    double xb = waves_on(b, &b->run->launches[b->sigs[bs].launch], wb->dev[bs], nb);
    return xa > 0 && xb > 0 ? xa / xb : 1;
}

/* For signature s of a, which ran in a partition of `part` of its GPU's `whole` SMs and has no
 * match in b: b's signature of the same name, block and shared memory whose grid is the one its
 * program would size for the whole GPU (s's blocks x whole / part, within 2%: a client shown
 * fewer SMs launches fewer blocks), the closest; UINT32_MAX none. */
static uint32_t scaled_match(const analysis *a, uint32_t s, uint32_t part, uint32_t whole,
                             const analysis *b)
{
    const store_launch *la = &a->run->launches[a->sigs[s].launch];
    double want = (double)la->grid[0] * la->grid[1] * la->grid[2] * whole / part, best = 0.02;
    uint32_t found = UINT32_MAX;
    for (uint32_t bs = 0; bs < b->nsigs; bs++) {
        const store_launch *lb = &b->run->launches[b->sigs[bs].launch];
        if (b->sigs[bs].source == ANALYSIS_REF_NONE ||
            memcmp(la->block, lb->block, sizeof la->block) ||
            (uint64_t)la->static_smem + la->dynamic_smem !=
                (uint64_t)lb->static_smem + lb->dynamic_smem ||
            strcmp(launch_name(a->run, la), launch_name(b->run, lb)))
            continue;
        double off = fabs((double)lb->grid[0] * lb->grid[1] * lb->grid[2] - want) / want;
        if (off <= best) {
            best = off;
            found = bs;
        }
    }
    return found;
}

/* Takes references from the baseline run's own solo references, where it has the signature:
 * its call site's where the baseline has that site with solo instances, else the signature's
 * (the run's own site reference gives way to it). A kernel that ran in an SM partition takes
 * the baseline's reference rescaled to the partition (partition_factor()), and, where its grid
 * was sized for the partition, the reference of the baseline's kernel sized for the whole GPU
 * (scaled_match()); a->part_unmatched counts the partitioned signatures left without one. */
static int baseline_references(analysis *a)
{
    analysis_options o = a->opt;
    analysis *b = NULL;
    sigtab t = {0};
    sigwhere wa = {0}, wb = {0};
    uint32_t *map = NULL;  /* a's signature -> b's, UINT32_MAX none */
    double *factor = NULL; /* a's signature: its reference from b's times this */
    o.baseline = NULL;
    int rc = analysis_run(a->opt.baseline, &o, &b);
    if (rc)
        return rc;
    rc = ANALYSIS_ENOMEM;
    if (sigtab_of(&t, b) || !(map = malloc(((size_t)a->nsigs + 1) * sizeof *map)) ||
        !(factor = malloc(((size_t)a->nsigs + 1) * sizeof *factor)) || sig_where(a, &wa) ||
        sig_where(b, &wb))
        goto out;
    for (uint32_t s = 0; s < a->nsigs; s++) {
        const store_launch *l = &a->run->launches[a->sigs[s].launch];
        uint32_t bs = map[s] = sigtab_find(&t, b, a->run, l, UINT32_MAX);
        uint32_t part = wa.part[s];
        if ((bs == UINT32_MAX || b->sigs[bs].source == ANALYSIS_REF_NONE) && part &&
            part != UINT32_MAX) {
            uint32_t m = scaled_match(a, s, part, wa.whole[s], b);
            if (m != UINT32_MAX)
                bs = map[s] = m;
            else
                a->part_unmatched++;
        }
        factor[s] = bs != UINT32_MAX ? partition_factor(a, &wa, s, b, &wb, bs) : 1;
        if (bs != UINT32_MAX && b->sigs[bs].source != ANALYSIS_REF_NONE) {
            a->sigs[s].source = ANALYSIS_REF_BASELINE;
            a->sigs[s].reference_ns = b->sigs[bs].reference_ns * factor[s];
            a->sigs[s].nsolo = b->sigs[bs].nsolo;
        }
    }
    for (uint32_t x = 0; x < a->nsites; x++) {
        analysis_site *st = &a->sites[x];
        uint32_t bs = map[st->sig], bp = st->pred == UINT32_MAX ? UINT32_MAX : map[st->pred];
        uint32_t bx = bs == UINT32_MAX || (st->pred != UINT32_MAX && bp == UINT32_MAX)
                          ? UINT32_MAX
                          : site_find(b, bs, bp, 0);
        if (bx != UINT32_MAX && b->sites[bx].nsolo) {
            st->reference_ns = b->sites[bx].reference_ns * factor[st->sig];
            st->nsolo = b->sites[bx].nsolo;
        } else if (a->sigs[st->sig].source == ANALYSIS_REF_BASELINE) {
            st->reference_ns = 0;
            st->nsolo = 0;
        }
    }
    rc = ANALYSIS_OK;
out:
    free(map);
    free(factor);
    free(t.slot);
    sigwhere_free(&wa);
    sigwhere_free(&wb);
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

/* Sums gathered for one window from the kernels with time inside it. Solo work is counted the
 * way the stretch happened: a kernel progresses at its solo speed while no other context is in
 * flight, and at the rate left over while others are (overlap_rate()). */
typedef struct winsum {
    double ovl;        /* kernel time inside that overlapped (another context in flight) */
    double ovl_ref;    /* of that, kernels with a solo reference */
    double work_ref;   /* the solo work those did while overlapped */
    double own_ref;    /* of that, by kernels whose overlapped time lies mostly in the window */
    double smw_ref;    /* the same, each kernel weighted by its share of the SMs */
    double work_short; /* the solo work every kernel did while overlapped, its signature's
                          shortest instance standing in for a missing reference */
    double own_short;  /* of that, by kernels whose overlapped time lies mostly in the window */
    double smw_short;  /* the same, weighted by SM share */
    double sm_ovl;     /* overlapped kernel time weighted by SM share */
    double smh_ref, smh_short, smh_ovl; /* smw_ref, smw_short and sm_ovl weighted by SM hold
                                           (gpu_hold()) instead */
    double tail_ref;   /* the tails (analysis_calibration) of the kernels with a solo reference,
                          each for the share of its life overlapped */
    double tail_short; /* the same with the shortest instance standing in for a reference */
    double dur;        /* the whole durations of the kernels with time inside */
    double part_ovl;   /* overlapped kernel time of kernels that ran in an SM partition */
    double part_slow;  /* the same, each times its partition_slowdown() */
    double k, w;       /* the window's kernel time and solo work on its basis (judge_window) */
    double floor;      /* its side-by-side time by the SMs alone (window_evidence) */
    /* for the stretch's folded ends (analysis_fold): over share groups, the time from the
     * window's start to each one's first kernel start in it and from each one's last kernel end
     * to the window's end, each at most its longest wait (stagger_cap()), and the longest chain
     * of one group (stagger); floats, to keep a window's sums small (ns to 1e-7) */
    float stag0, stag1, chain;
    float last_solo, last_share; /* the last kernel added (a solo window's one kernel): its solo
                                    duration (0: unknown) and SM share */
    const store_kernel *last;
} winsum;

/* Sums per process and over the run: durations and references of referenced kernels. */
typedef struct sums {
    double dur_ref, ref;
} sums;

/* The rate (solo work per ns) at which a kernel of duration d, solo reference r and overlapped
 * time o (0 < o <= d) progressed while overlapped: stretch where it happened. Its time alone ran
 * at solo speed (slower only when even that time exceeds r), the rest of its work was done in the
 * overlapped time. A kernel at or under its reference is given one rate over its whole life. */
static double overlap_rate(double d, double r, double o)
{
    double alone = d - o; /* >= 0; at solo speed it did min(alone, r) of its work */
    if (d <= r)
        return r / d;
    return (r > alone ? r - alone : 0) / o;
}

/* The rate (solo work per ns) at which a kernel of duration d, solo duration r and overlapped
 * time o ran while no other context was in flight: its solo speed, slower only when even that
 * time exceeds r (overlap_rate()'s other half). */
static double alone_rate(double d, double r, double o)
{
    if (d <= r)
        return r / d;
    return d - o > r ? r / (d - o) : 1;
}

/* The share of the device's SMs a kernel holds while it runs, on average (0..1]: its blocks over
 * the blocks all SMs hold at once, by the occupancy limits per SM (threads, 32 blocks, 64K
 * registers, shared memory) of compute capability 7.0 and later, its last wave counted as far as
 * it fills the GPU. 0 when the device's SM count is unknown. */
/* The blocks of launch l one SM of device d holds at once, by the occupancy limits per SM
 * (threads, 32 blocks, 64K registers, shared memory) of compute capability 7.0 and later; at
 * least 1. 0 when the block is empty. */
static double blocks_per_sm(const store_launch *l, const store_device *d)
{
    double threads = (double)l->block[0] * l->block[1] * l->block[2];
    if (!d || threads <= 0)
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
    return fmax(per_sm, 1);
}

/* How much slower launch l runs on `part` SMs than on `whole` (part < whole): its waves there
 * over its waves on the whole GPU, a kernel of less than one wave counted as one (the time of its
 * blocks does not shrink on more SMs). A grid that filled the whole GPU `w` times runs whole /
 * part times slower (its w waves become w x whole / part). 1 when unknown. */
static double partition_slowdown(const store_launch *l, const store_device *d, uint32_t part,
                                 uint32_t whole)
{
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2], per_sm = blocks_per_sm(l, d);
    if (!part || part >= whole || blocks <= 0 || per_sm <= 0)
        return 1;
    return fmax(1, blocks / (per_sm * part)) / fmax(1, blocks / (per_sm * whole));
}

static double gpu_share(const store_launch *l, const store_device *d)
{
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2], per_sm = blocks_per_sm(l, d);
    if (!d || !d->sm_count || per_sm <= 0 || blocks <= 0)
        return 0;
    /* a kernel of 1.3 waves holds every SM for its first wave and 30% of them for its last:
     * on average waves / ceil(waves) of the GPU, and another client's blocks can fill the rest */
    double waves = blocks / (per_sm * d->sm_count);
    return waves < 1 ? waves : waves / ceil(waves);
}

/* The share of the device's SMs a kernel may hold while it runs, at worst (0..1]: each of its
 * blocks on an SM of its own, all at once. Blocks that share an SM slow each other (GEMM blocks
 * filling 3 of an SM's 4 block slots left another client ~10% of it, not 25%: bench/RESULTS.md),
 * so kernels fit the GPU together for sure only on SMs of their own. 0 when the device's SM count
 * is unknown. */
static double gpu_hold(const store_launch *l, const store_device *d)
{
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2];
    if (!d || !d->sm_count || blocks <= 0)
        return 0;
    return fmin(1, blocks / d->sm_count);
}

/* A launch's gpu_share() and gpu_hold() on one device. */
typedef struct sharehold {
    float share, hold;
} sharehold;

analysis_signature_kind analysis_window_signature(const analysis_window *w,
                                                  const analysis_options *o)
{
    analysis_options def;
    if (!o) {
        analysis_options_default(&def);
        o = &def;
    }
    double t = (double)w->turns;
    if (w->quick_turns >= ANALYSIS_SIGNATURE_MIN_TURNS &&
        w->quick_turns >= o->quick_min_share * t && w->quick_turns > w->switch_turns)
        return ANALYSIS_SIG_QUICK;
    if (w->switch_turns >= ANALYSIS_SIGNATURE_MIN_TURNS &&
        w->switch_turns >= o->switch_min_share * t && w->quick_turns <= o->switch_max_quick * t)
        return ANALYSIS_SIG_SWITCHED;
    return ANALYSIS_SIG_NONE;
}

/* The physics a window is judged by: its own, or where it is unknown and the timing's signature
 * decides (analysis_window_signature()), sliced (switched) or shared (quick). */
static analysis_physics judged_physics(const analysis_window *w, analysis_signature_kind sig)
{
    if (w->physics != ANALYSIS_PHYS_UNKNOWN || sig == ANALYSIS_SIG_NONE)
        return w->physics;
    return sig == ANALYSIS_SIG_SWITCHED ? ANALYSIS_PHYS_SLICED : ANALYSIS_PHYS_SHARED;
}

/* Fills a window's evidence from its sums, on its overlapped time: coverage, overlap share, and
 * stretch, parallelism and the side-by-side bound on the best basis the window has (measured from
 * references; for time-slicing without them, the share groups taking turns; side by side without
 * them, each kernel's shortest instance). Sets ws->k and ws->w, the overlapped kernel time and the
 * solo work behind the stretch, which device figures sum. */
static void window_evidence(const analysis_options *o, const analysis_calibration *cal,
                            analysis_window *w, winsum *ws, const analysis_waitsum *aw,
                            analysis_signature_kind sig)
{
    analysis_physics phys = judged_physics(w, sig);
    double ovl = (double)w->overlap_ns, smw = 0, smh = 0, extra = 1, tail = 0;
    w->coverage = w->overlap_share = w->stretch = w->parallelism = w->own_share = NAN;
    w->partition_share = ws->ovl > 0 ? (float)(ws->part_ovl / ws->ovl) : NAN;
    w->partition_slowdown = ws->part_ovl > 0 ? (float)(ws->part_slow / ws->part_ovl) : NAN;
    w->basis = ANALYSIS_BASIS_NONE;
    w->mps_best_ns = w->mps_worst_ns = 0;
    ws->k = ws->w = 0;
    /* the time one context ran while others' kernels waited: side by side at best, as many at
     * once as were in flight or waiting, not beyond the SMs, less the tails the others fill */
    double waited = aw->ns > 0 ? fmax(aw->packed, aw->sm - aw->tail) : 0;
    if (aw->ns > 0) { /* until the overlap (if measured) says more: at worst it all stays */
        w->mps_best_ns = analysis_ns((double)w->busy_ns - aw->ns + waited);
        w->mps_worst_ns = w->busy_ns;
    }
    if (w->verdict < ANALYSIS_CONCURRENT || !(ovl > 0) || !(ws->ovl > 0))
        return; /* idle and solo windows have no overlap to measure */
    w->coverage = (float)(ws->ovl_ref / ws->ovl);
    w->overlap_share = (float)(ws->ovl / ws->dur); /* dur >= ovl > 0 */
    if (ws->ovl_ref > 0 && ws->work_ref > 0 && w->coverage >= o->min_reference_coverage) {
        w->basis = ANALYSIS_BASIS_REFERENCE;
        ws->k = ws->ovl_ref;
        ws->w = ws->work_ref;
        smw = ws->smw_ref;
        smh = ws->smh_ref;
        tail = ws->tail_ref;
        extra = 1 / w->coverage; /* unreferenced kernels assumed to progress like the others */
        w->own_share = (float)(ws->own_ref / ws->work_ref);
    } else if (phys == ANALYSIS_PHYS_SLICED && w->groups > 0) {
        w->basis = ANALYSIS_BASIS_TURNS;
        ws->k = ws->ovl;
        ws->w = ws->ovl / w->groups;
        smw = ws->sm_ovl / w->groups;
        smh = ws->smh_ovl / w->groups;
    } else if (phys == ANALYSIS_PHYS_SHARED && ws->work_short > 0) {
        w->basis = ANALYSIS_BASIS_SHORTEST;
        ws->k = ws->ovl;
        ws->w = ws->work_short;
        smw = ws->smw_short;
        smh = ws->smh_short;
        tail = ws->tail_short;
        w->own_share = (float)(ws->own_short / ws->work_short);
    } else {
        return;
    }
    w->stretch = (float)(ws->k / ws->w);
    w->parallelism = (float)(ws->w * extra / ovl);
    /* side by side, the overlapped work: at best every kernel at its solo speed, as many at once
     * as were in flight, but not beyond the SMs, save the tails another client's kernels fill
     * (analysis_calibration); at worst, kernels that fit the GPU together on SMs of their own
     * (gpu_hold()) slowed by the most MPS was seen to slow its clients, the others one after
     * another, every launch paying the MPS server's cost */
    double alone = (double)(w->busy_ns - w->overlap_ns), packed = ovl / w->stretch;
    double sm = smw * extra, work = ws->w * extra;
    double best = fmax(packed + aw->packed, sm - tail * extra + aw->sm - aw->tail);
    ws->floor = alone - aw->ns + sm - tail * extra + aw->sm - aw->tail;
    double worst = packed >= smh * extra
                       ? packed * analysis_calibration_slowdown(cal, w->groups)
                       : work / fmin(1, analysis_calibration_packing(cal, w->groups));
    /* at worst the waited time stays: the waiting kernels ran after it at solo speed */
    worst = fmax(worst + (double)w->nkernels * cal->launch_ns + aw->ns, best);
    w->mps_best_ns = analysis_ns(alone - aw->ns + best);
    w->mps_worst_ns = analysis_ns(alone - aw->ns + worst);
}

/* The verdict of an overlap window side by side possible (one share group, or the signature's
 * quick turns), by its stretch and overlap share, under rule `flat_rule` where not stretched
 * and `rule` otherwise (rule NONE: the shared rules handover and shared-slow). */
static void judge_shared(const analysis_options *o, analysis_window *w, analysis_rule rule)
{
    int has = w->basis != ANALYSIS_BASIS_NONE;
    if (!has || w->stretch <= o->concurrent_max_stretch) {
        w->verdict = ANALYSIS_CONCURRENT;
        w->rule = rule ? rule : ANALYSIS_RULE_NOT_STRETCHED;
    } else if (w->overlap_share <= o->queued_max_overlap) {
        w->verdict = ANALYSIS_QUEUED;
        w->rule = rule ? rule : ANALYSIS_RULE_HANDOVER;
    } else {
        w->verdict = ANALYSIS_CONTENDED;
        w->rule = rule ? rule : ANALYSIS_RULE_SHARED_SLOW;
    }
}

/* The verdict of an overlap window and the rule that decided it (analysis/README.md): physics
 * first, the timing evidence where the physics leaves a choice: where the files do not say, a
 * measured stretch of about 1 (side by side), then a parallelism above one kernel's work at a
 * time (which time-slicing cannot do), then the signature `sig` of the turns, then where it is
 * none the device's quick handovers (`handovers`: device_handovers()); otherwise undecided
 * (UNKNOWN, by the rule that says why). */
static void judge_window(const analysis_options *o, analysis_window *w, analysis_signature_kind sig,
                         int handovers)
{
    int measured = w->basis == ANALYSIS_BASIS_REFERENCE;
    /* the rates are this window's own: its kernels overlapped mostly inside it */
    int own = measured && w->own_share >= ANALYSIS_OWN_MIN_SHARE;
    switch (w->physics) {
    case ANALYSIS_PHYS_SLICED:
        w->verdict = ANALYSIS_TIME_SLICED;
        w->rule = ANALYSIS_RULE_NO_MPS;
        return;
    case ANALYSIS_PHYS_SHARED: judge_shared(o, w, ANALYSIS_RULE_NONE); return;
    default:
        if (own && w->stretch <= o->concurrent_max_stretch) {
            w->verdict = ANALYSIS_CONCURRENT;
            w->rule = ANALYSIS_RULE_NOT_STRETCHED;
        } else if (own && w->parallelism > o->sliced_max_parallelism * w->group_kernels) {
            w->verdict = ANALYSIS_CONTENDED;
            w->rule = ANALYSIS_RULE_PARALLEL_SLOW;
        } else if (sig == ANALYSIS_SIG_SWITCHED) {
            w->verdict = ANALYSIS_TIME_SLICED;
            w->rule = ANALYSIS_RULE_SWITCH_TURNS;
        } else if (sig == ANALYSIS_SIG_QUICK) {
            judge_shared(o, w, ANALYSIS_RULE_QUICK_TURNS);
        } else if (handovers) {
            judge_shared(o, w, ANALYSIS_RULE_QUICK_HANDOVERS);
        } else {
            w->verdict = ANALYSIS_UNKNOWN;
            w->rule = measured ? ANALYSIS_RULE_ONE_AT_A_TIME : ANALYSIS_RULE_NO_REFERENCE;
        }
    }
}

/* Whether device ad's quick handovers say it was not time-sliced, for its windows whose own
 * turns have no signature (ANALYSIS_RULE_QUICK_HANDOVERS): at least ANALYSIS_SIGNATURE_MIN_TURNS
 * of them, at least quick_min_share of its windows' turns and more than the turns a switch
 * marked. A quick handover is impossible under time-slicing anywhere on the device, so the
 * device's speak for all its windows; a switch's mark (an idle gap a host's pace can leave under
 * MPS too) speaks only for its own window. */
static int device_handovers(const analysis *a, const analysis_device *ad)
{
    uint64_t turns = 0, marked = 0;
    for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
        turns += a->windows[w].turns;
        marked += a->windows[w].switch_turns;
    }
    return ad->quick_handovers >= ANALYSIS_SIGNATURE_MIN_TURNS && ad->quick_handovers > marked &&
           (double)ad->quick_handovers >= a->opt.quick_min_share * (double)turns;
}

/* What the judge knows of one kernel while it adds it to its windows. */
typedef struct kin {
    const store_kernel *k;
    double dur;        /* its duration */
    double ovl0, ovl1; /* the device's overlap clock at its start and at its end */
    int ref, prov;     /* it has a solo reference; a reference or a shortest instance */
    double rO;         /* its rate while overlapped (overlap_rate()) on its reference */
    double pO;         /* the same on its reference or its shortest instance */
    double share;      /* its share of the SMs */
    double hold;       /* the SMs it may hold (gpu_hold()) */
    double tail;       /* its tail (analysis_calibration) per ns of its life, on its reference or
                          its shortest instance (as pO) */
    double solo;       /* its solo reference; 0 when it has none */
    double pslow;      /* in an SM partition: how much slower than on the whole GPU
                          (partition_slowdown()); 0 when on the whole GPU */
} kin;

/* Each share group's kernels in the last window they had time in, for the stretch's folded ends
 * (winsum stag0, stag1, chain): the window (+ 1; 0: none yet), the latest end there, and its chain
 * there: the solo work of its kernels with time in it, one after another, from no earlier than its
 * first kernel's longest wait before that kernel's start. */
typedef struct stagger {
    uint64_t *win;
    int64_t *end;
    double *work;
    double slice, rounds; /* the calibration's slice_ns and first_rounds */
} stagger;

/* The most a group's first kernel start (`first` 1) or last kernel end counts as stagger in
 * window w: `rounds` slices per other context in flight (analysis_calibration first_rounds for a
 * start, one round for an end). */
static double stagger_cap(const stagger *st, const analysis_window *w, int first)
{
    return w->max_contexts > 1 ? (w->max_contexts - 1) * st->slice * (first ? st->rounds : 1) : 0;
}

/* Closes group g's time in its last window: the stagger from its last end to the window's end
 * and its solo work there. */
static void stagger_flush(stagger *st, const analysis *a, winsum *ws, uint32_t g)
{
    if (!st->win[g])
        return;
    uint64_t w = st->win[g] - 1;
    const analysis_window *win = &a->windows[w];
    if (st->end[g] < win->t1)
        ws[w].stag1 += (float)fmin((double)(win->t1 - st->end[g]), stagger_cap(st, win, 0));
    ws[w].chain = (float)fmax(ws[w].chain, st->work[g]);
    st->win[g] = 0;
}

/* Kernel q has time in overlap window w: counts its group's stagger from the window's start if it
 * is the group's first kernel there, its latest end and its solo work. */
static void stagger_kernel(stagger *st, const analysis *a, winsum *ws, uint64_t w, const kin *q)
{
    const analysis_window *win = &a->windows[w];
    const store_kernel *k = q->k;
    uint32_t g = a->ctx_group[a->run->streams[k->stream].context];
    if (st->win[g] > w + 1)
        return; /* a later window of the group's was seen first (a kernel ran on into it) */
    if (st->win[g] != w + 1) {
        stagger_flush(st, a, ws, g);
        st->win[g] = w + 1;
        st->end[g] = k->end;
        st->work[g] = 0;
        if (k->start > win->t0) {
            double late = (double)(k->start - win->t0), cap = stagger_cap(st, win, 1);
            ws[w].stag0 += (float)fmin(late, cap);
            st->work[g] = late > cap ? late - cap : 0; /* it could not start earlier */
        }
    } else if (k->end > st->end[g]) {
        st->end[g] = k->end;
    }
    st->work[g] += q->solo;
}

/* Adds kernel q's time inside the windows of slot s to their sums; *pCur is the slot's first
 * window that may still hold a kernel (starts only grow, so it only moves forward). */
static void add_to_windows(analysis *a, uint32_t s, uint64_t *pCur, winsum *ws, stagger *st,
                           const kin *q)
{
    const analysis_device *ad = &a->devs[s];
    const store_kernel *k = q->k;
    uint64_t end = ad->first_window + ad->nwindows;
    while (*pCur < end && a->windows[*pCur].t1 <= k->start)
        (*pCur)++;
    for (uint64_t w = *pCur; w < end && a->windows[w].t0 < k->end; w++) {
        analysis_window *win = &a->windows[w];
        const analysis_winx *x = &a->winx[w];
        int64_t t0 = k->start > win->t0 ? k->start : win->t0;
        int64_t t1 = k->end < win->t1 ? k->end : win->t1;
        if (t1 <= t0)
            continue;
        double clip = (double)(t1 - t0);
        double o0 = k->start >= win->t0 ? q->ovl0 : (double)x->ovl0;
        double o1 = k->end <= win->t1 ? q->ovl1 : (double)x->ovl1;
        double ovl = o1 - o0 < 0 ? 0 : o1 - o0 < clip ? o1 - o0 : clip;
        int own = 2 * ovl >= q->ovl1 - q->ovl0; /* most of its overlapped time is here */
        winsum *m = &ws[w];
        win->nkernels++;
        m->last = k;
        m->last_solo = (float)q->solo;
        m->last_share = (float)q->share;
        if (win->verdict >= ANALYSIS_CONCURRENT)
            stagger_kernel(st, a, ws, w, q);
        m->ovl += ovl;
        if (q->pslow > 0) {
            m->part_ovl += ovl;
            m->part_slow += ovl * q->pslow;
        }
        m->sm_ovl += ovl * q->share;
        m->smh_ovl += ovl * q->hold;
        m->dur += q->dur;
        if (q->ref) {
            m->ovl_ref += ovl;
            m->work_ref += ovl * q->rO;
            m->own_ref += own ? ovl * q->rO : 0;
            m->smw_ref += ovl * q->rO * q->share;
            m->smh_ref += ovl * q->rO * q->hold;
            m->tail_ref += ovl * q->tail; /* on its reference: q->ref */
        }
        if (q->prov) {
            m->work_short += ovl * q->pO;
            m->own_short += own ? ovl * q->pO : 0;
            m->smw_short += ovl * q->pO * q->share;
            m->smh_short += ovl * q->pO * q->hold;
            m->tail_short += ovl * q->tail;
        }
    }
}

/* The share of window w's length inside the measured interval (0..1). */
static double inside(const analysis *a, const analysis_window *w)
{
    int64_t t0 = w->t0 > a->sum.measure_t0 ? w->t0 : a->sum.measure_t0;
    int64_t t1 = w->t1 < a->sum.measure_t1 ? w->t1 : a->sum.measure_t1;
    return t1 > t0 && w->t1 > w->t0 ? (double)(t1 - t0) / (double)(w->t1 - w->t0) : 0;
}

/* Window w's time at best side by side (at most its busy time): a time-sliced window's kernels
 * at `slowdown` times their solo speed, as many at once as were in flight (the packed term times
 * `pk`, a fold's, 1 for the window alone) or, with `floor` not NaN, as many as the SMs hold (a
 * fold's; else the window's own bound, mps_best_ns); in any window, the time a context ran while
 * others' kernels waited (wait.c) side by side. */
static double best_time(const analysis *a, uint64_t w, double slowdown, double pk, double floor)
{
    const analysis_window *win = &a->windows[w];
    double busy = (double)win->busy_ns, waited = (double)win->waiting_ns;
    double wpacked = a->waits ? a->waits[w].packed * slowdown : 0;
    double side_by_side;
    if (win->verdict != ANALYSIS_TIME_SLICED || win->basis == ANALYSIS_BASIS_NONE) {
        if (!(waited > 0))
            return busy;
        side_by_side = fmax((double)win->mps_best_ns, busy - waited + wpacked);
    } else {
        double alone = (double)(win->busy_ns - win->overlap_ns);
        side_by_side =
            fmax(isnan(floor) ? (double)win->mps_best_ns : floor,
                 alone - waited + (double)win->overlap_ns / win->stretch * pk * slowdown + wpacked);
    }
    return side_by_side < busy ? side_by_side : busy;
}

/* The time a device's time-sliced windows would save inside the measured interval if their
 * overlapped kernels ran side by side, and its context turns without their switches: at best
 * (`worst` 0: mps_best_ns, with each kernel `slowdown` (>= 1) times its solo duration where they
 * fit the GPU; never below 0) or at worst (mps_worst_ns; negative when MPS would cost more than it
 * saves), each window counted for the share of it inside the interval. *pEstimated (may be NULL) is
 * set when a window whose stretch is an estimate saved time. */
static double device_saved(const analysis *a, const analysis_device *ad, double slowdown, int worst,
                           int *pEstimated)
{
    const analysis_calibration *cal = analysis_calibration_for(
        ad->device != STORE_NONE ? a->run->devices[ad->device].name : NULL, NULL);
    /* at best MPS would not switch: the idle gaps of the context switches inside go */
    double saved = worst ? 0 : (double)a->switch_in[ad - a->devs];
    for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
        const analysis_window *win = &a->windows[w];
        double frac = inside(a, win);
        if (!frac)
            continue;
        /* context switches: at worst their gaps were the processes' own idle time, and the
         * kernels pay the MPS launch cost (a time-sliced window's mps_worst_ns has it already) */
        if (worst && win->switches &&
            (win->verdict != ANALYSIS_TIME_SLICED || win->basis == ANALYSIS_BASIS_NONE))
            saved -= (double)win->nkernels * cal->launch_ns * frac;
        double busy = (double)win->busy_ns;
        /* at best the kernels that waited fill the gaps between another context's kernels in
         * its slice (wait.c); at worst those gaps stay */
        if (!worst && a->waits)
            saved += a->waits[w].gap * frac;
        if (!worst) {
            double side_by_side = best_time(a, w, slowdown, 1, NAN);
            saved += (busy - side_by_side) * frac;
            if (pEstimated && side_by_side < busy && win->verdict == ANALYSIS_TIME_SLICED &&
                win->basis != ANALYSIS_BASIS_REFERENCE && win->basis != ANALYSIS_BASIS_NONE)
                *pEstimated = 1;
        } else if (win->verdict == ANALYSIS_TIME_SLICED && win->basis != ANALYSIS_BASIS_NONE) {
            saved += (busy - (double)win->mps_worst_ns) * frac; /* MPS may cost more */
        }
    }
    /* at best the stretches' ends fold together (analysis_fold) */
    for (uint64_t f = 0; !worst && f < a->nfolds; f++) {
        const analysis_fold *fd = &a->folds[f];
        if (fd->w < ad->first_window || fd->w >= ad->first_window + ad->nwindows ||
            inside(a, &a->windows[fd->w]) < 1 ||
            (fd->h != UINT64_MAX && inside(a, &a->windows[fd->h]) < 1) ||
            (fd->t != UINT64_MAX && inside(a, &a->windows[fd->t]) < 1))
            continue;
        double before = best_time(a, fd->w, slowdown, 1, NAN), sides = 0;
        if (fd->h != UINT64_MAX)
            sides += best_time(a, fd->h, slowdown, 1, NAN);
        if (fd->t != UINT64_MAX)
            sides += best_time(a, fd->t, slowdown, 1, NAN);
        double folded = fmax(best_time(a, fd->w, slowdown, fd->pk, fd->floor) + fd->cap * slowdown,
                             fd->chain * slowdown);
        if (folded < before + sides)
            saved += before + sides - folded;
    }
    return saved;
}

/* Where device ad would end, in ns after the measured interval's start, with `saved` ns
 * (device_saved()) taken off its last kernel end inside the interval. Measured from the
 * interval's start rather than on the common axis, whose ns since 1970 a double cannot hold to
 * the ns. */
static double predicted_end(const analysis *a, const analysis_device *ad, double saved)
{
    int64_t end = ad->t_end < a->sum.measure_t1 ? ad->t_end : a->sum.measure_t1;
    return (double)(end - a->sum.measure_t0) - saved;
}

/* The run's predicted gain from the predicted end (predicted_end()) of the device that would
 * finish last: the measured interval over its predicted length; 1.0 when that end is not after
 * the interval's start (no device: -INFINITY). The interval's tail after the last kernel end
 * (an NVTX or capture range that closes after the GPU work: CPU time) stays as it is. */
static double gain_to(const analysis *a, double last_end)
{
    const analysis_summary *sm = &a->sum;
    int64_t gpu_end = sm->measure_t0;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        int64_t end = a->devs[s].t_end < sm->measure_t1 ? a->devs[s].t_end : sm->measure_t1;
        gpu_end = end > gpu_end ? end : gpu_end;
    }
    double tail = (double)(sm->measure_t1 - gpu_end);
    return last_end > 0 ? (double)(sm->measure_t1 - sm->measure_t0) / (last_end + tail) : 1.0;
}

/* The run's predicted gain with every time-sliced window's kernels side by side at `slowdown`
 * times their solo duration (best case), as analysis_judge() computes it at 1. */
static double run_gain(const analysis *a, double slowdown)
{
    double last_end = -INFINITY;
    for (uint32_t s = 0; s < a->ndevs; s++)
        last_end = fmax(last_end, predicted_end(a, &a->devs[s],
                                                device_saved(a, &a->devs[s], slowdown, 0, NULL)));
    return gain_to(a, last_end);
}

/* Running sums of one verdict's windows on a device, for analysis_verdict_time. */
typedef struct vsum {
    double k, w;                      /* kernel time and solo work behind their stretch */
    double ovl, ctx, par, parovl;     /* overlap time; contexts and parallelism times it */
    double kovl, part_ovl, part_slow; /* overlapped kernel time; of it in partitions (winsum) */
    double basis_ns[4];               /* window time by basis */
    double rule_ns[ANALYSIS_NRULES];  /* window time by rule */
} vsum;

/* Device figures from its judged windows: the time by verdict, the dominant verdict and the
 * predicted gain. Sets *pSaved and *pSavedLow to the time its time-sliced windows would save side
 * by side at best and at worst (device_saved() at slowdown 1), which the run's predicted gain
 * needs too. */
static void judge_device(analysis *a, analysis_device *ad, const winsum *ws,
                         double *pSaved /* OUT */, double *pSavedLow /* OUT */)
{
    vsum vs[ANALYSIS_NVERDICTS];
    memset(vs, 0, sizeof vs);
    double span = (double)(ad->t_end - ad->t_begin);
    int64_t best = 0;
    for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
        const analysis_window *win = &a->windows[w];
        double len = (double)(win->t1 - win->t0), ovl = (double)win->overlap_ns;
        analysis_verdict_time *bv = &ad->by_verdict[win->verdict];
        vsum *v = &vs[win->verdict];
        bv->nwindows++;
        bv->ns += win->t1 - win->t0; /* the windows tile the device's span: the sum fits */
        bv->mps |= win->mps;
        v->rule_ns[win->rule] += len;
        v->basis_ns[win->basis] += len;
        if (win->verdict < ANALYSIS_CONCURRENT)
            continue;
        if (ovl <= 0)
            continue; /* contexts that took turns: no overlap to take means over */
        v->ovl += ovl;
        v->ctx += ovl * win->contexts;
        v->kovl += ws[w].ovl;
        v->part_ovl += ws[w].part_ovl;
        v->part_slow += ws[w].part_slow;
        if (win->basis != ANALYSIS_BASIS_NONE) {
            v->k += ws[w].k;
            v->w += ws[w].w;
            v->par += ovl * win->parallelism;
            v->parovl += ovl;
        }
    }
    ad->verdict = ANALYSIS_SOLO; /* never IDLE: every slot has kernels (assign_slots()) */
    for (int i = 0; i < ANALYSIS_NVERDICTS; i++) {
        analysis_verdict_time *bv = &ad->by_verdict[i];
        const vsum *v = &vs[i];
        bv->share = span > 0 ? (double)bv->ns / span : 0;
        bv->stretch = v->w > 0 ? v->k / v->w : NAN;
        bv->contexts = v->ovl > 0 ? v->ctx / v->ovl : NAN;
        bv->parallelism = v->parovl > 0 ? v->par / v->parovl : NAN;
        bv->partition_share = v->kovl > 0 ? v->part_ovl / v->kovl : NAN;
        bv->partition_slowdown = v->part_ovl > 0 ? v->part_slow / v->part_ovl : NAN;
        for (int b = 1; b < 4 && v->w > 0; b++)
            if (v->basis_ns[b] > (bv->basis ? v->basis_ns[bv->basis] : 0))
                bv->basis = (analysis_basis)b;
        for (int r = 1; r < ANALYSIS_NRULES; r++)
            if (v->rule_ns[r] > v->rule_ns[bv->rule])
                bv->rule = (analysis_rule)r;
        if (i >= ANALYSIS_CONCURRENT && bv->ns > best) {
            best = bv->ns;
            ad->verdict = (analysis_verdict)i;
        }
    }
    int estimated = 0;
    double saved = device_saved(a, ad, 1.0, 0, &estimated);
    double saved_low = device_saved(a, ad, 1.0, 1, NULL);
    int64_t t0 = ad->t_begin > a->sum.measure_t0 ? ad->t_begin : a->sum.measure_t0;
    int64_t t1 = ad->t_end < a->sum.measure_t1 ? ad->t_end : a->sum.measure_t1;
    double in = t1 > t0 ? (double)(t1 - t0) : 0;
    ad->predicted_gain = in > saved && saved > 0 ? in / (in - saved) : 1.0;
    ad->predicted_gain_low = in > saved_low && saved_low != 0 ? in / (in - saved_low) : 1.0;
    ad->gain_basis = saved > 0 ? estimated ? ANALYSIS_BASIS_TURNS : ANALYSIS_BASIS_REFERENCE
                               : ANALYSIS_BASIS_NONE;
    *pSaved = saved;
    *pSavedLow = saved_low;
}

/* Whether window w of slot ad is a stretch's edge: the slot's first window (`dir` -1) or last
 * (+1), one beside idle time, or one beside a solo window that is. */
static int stretch_edge(const analysis *a, const analysis_device *ad, uint64_t w, int dir)
{
    uint64_t end = ad->first_window + ad->nwindows;
    for (int step = 0; step < 2; step++) {
        if (dir < 0 ? w == ad->first_window : w + 1 == end)
            return 1;
        w = dir < 0 ? w - 1 : w + 1;
        if (a->windows[w].verdict == ANALYSIS_IDLE)
            return 1;
        if (a->windows[w].verdict != ANALYSIS_SOLO)
            return 0;
    }
    return 0;
}

/* Whether solo window x beside time-sliced window w folds into it at best (analysis_fold): one
 * kernel with a solo reference, its whole life beside w (from x's start for a head, to x's end
 * for a tail); a head no longer than the next context's first kernel may wait behind it (`wait`:
 * first_rounds slices) where no launch record says more, or one while whose time others' ready
 * kernels waited (wait.c). */
static int folds_in(const analysis *a, const winsum *ws, uint64_t x, uint64_t w, double wait)
{
    const analysis_window *xw = &a->windows[x], *win = &a->windows[w];
    const store_kernel *k = ws[x].last;
    if (xw->verdict != ANALYSIS_SOLO || xw->nkernels != 1 || !k || !(ws[x].last_solo > 0))
        return 0;
    if (x < w) /* a head */
        return k->start >= xw->t0 && k->end > win->t0 &&
               (a->waits ? xw->waiting_ns > 0 : (double)(xw->t1 - xw->t0) <= wait);
    return k->start < win->t1 && k->end <= xw->t1;
}

/* Finds the time-sliced stretch ends that fold together at best (analysis_fold) into a->folds:
 * on each device slot, its first time-sliced window with solo references where it starts a
 * stretch, and its last where it ends one: where processes started together and where they
 * finished, not every idle gap of a host-paced run (whose kernels' late starts are the hosts').
 * 0, or ANALYSIS_ENOMEM. */
static int find_folds(analysis *a, const winsum *ws, const stagger *st)
{
    if (!(a->folds = malloc(2 * (a->ndevs + 1) * sizeof *a->folds)))
        return ANALYSIS_ENOMEM;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        const analysis_device *ad = &a->devs[s];
        uint64_t first = UINT64_MAX, last = UINT64_MAX;
        for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++)
            if (a->windows[w].verdict == ANALYSIS_TIME_SLICED &&
                a->windows[w].basis == ANALYSIS_BASIS_REFERENCE) {
                first = first == UINT64_MAX ? w : first;
                last = w;
            }
        for (uint64_t w = first; w != UINT64_MAX; w = w == last ? UINT64_MAX : last) {
            int start = w == first && stretch_edge(a, ad, w, -1);
            int end = w == last && stretch_edge(a, ad, w, 1);
            analysis_fold f = {w, UINT64_MAX, UINT64_MAX, 1, ws[w].floor, 0, ws[w].chain};
            double stag = (start ? ws[w].stag0 : 0) + (end ? ws[w].stag1 : 0);
            f.pk = ws[w].ovl > 0 ? ws[w].ovl / (ws[w].ovl + stag) : 1;
            double wait = st->slice * st->rounds; /* behind one context */
            /* the head's and the tail's kernels ran in w too: their groups' chains hold them */
            if (start && w > ad->first_window && folds_in(a, ws, w - 1, w, wait)) {
                const analysis_window *h = &a->windows[w - 1];
                f.h = w - 1;
                f.cap += (double)(h->t1 - h->t0) * ws[w - 1].last_share;
            }
            if (end && w + 1 < ad->first_window + ad->nwindows && folds_in(a, ws, w + 1, w, wait)) {
                const analysis_window *t = &a->windows[w + 1];
                f.t = w + 1;
                f.cap += (double)(t->t1 - t->t0) * ws[w + 1].last_share;
            }
            if (f.pk < 1 || f.h != UINT64_MAX || f.t != UINT64_MAX)
                a->folds[a->nfolds++] = f;
        }
    }
    return 0;
}

/* a + b for durations (>= 0), saturated at INT64_MAX. */
static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* The stretch of a set of kernels from their summed durations and references: NaN when the
 * referenced ones hold less than `coverage` of `kernel_ns`. */
static double set_stretch(double dur_ref, double ref, double kernel_ns, double coverage)
{
    return ref > 0 && dur_ref >= coverage * kernel_ns ? dur_ref / ref : NAN;
}

/* Adds kernel k's time inside the measured interval and not yet covered on its slot (covered[],
 * the slot's covered end: kernels come sorted by start) to the slot's busy time inside it, kept
 * as idle_in_ns going down from the interval's length. */
static void cover_kernel(analysis *a, int64_t *covered, const store_kernel *k)
{
    if (analysis_kernel_dur(k) <= 0)
        return; /* never in flight (zero-length, or beyond the times computed with) */
    uint32_t s = analysis_kernel_slot(a, k);
    int64_t t0 = k->start > covered[s] ? k->start : covered[s];
    int64_t t1 = k->end < a->sum.measure_t1 ? k->end : a->sum.measure_t1;
    if (t1 > t0) {
        a->devs[s].idle_in_ns -= t1 - t0;
        covered[s] = t1;
    }
}

int analysis_judge(analysis *a)
{
    const store_run *run = a->run;
    winsum *ws = calloc(a->nwindows + 1, sizeof *ws);
    uint64_t *cur = calloc(a->ndevs + 1, sizeof *cur);
    int64_t *covered = malloc((a->ndevs + 1) * sizeof *covered); /* per slot: cover_kernel() */
    sums *ps = calloc(run->nprocesses + 1, sizeof *ps);
    double *sigref = calloc(a->nsigs + 1, sizeof *sigref); /* per signature: sum of references */
    sitewalk sw = {0};
    /* share of the SMs each launch signature holds on each device slot, and the SMs it may hold */
    sharehold *share = malloc(((size_t)run->nlaunches * a->ndevs + 1) * sizeof *share);
    const analysis_calibration **cals = malloc((a->ndevs + 1) * sizeof *cals); /* per slot */
    analysis_waitwalk *walk = NULL;
    const analysis_calibration *cal0 = analysis_calibration_for(NULL, NULL); /* the H200's */
    stagger stg = {calloc(a->ngroups + 1, sizeof(uint64_t)),
                   malloc((a->ngroups + 1) * sizeof(int64_t)),
                   malloc((a->ngroups + 1) * sizeof(double)), cal0->slice_ns, cal0->first_rounds};
    int rc = ANALYSIS_ENOMEM;
    if (!ws || !cur || !ps || !sigref || !share || !cals || !covered || !stg.win || !stg.end ||
        !stg.work || sitewalk_init(&sw, a) || analysis_waitwalk_init(a, &walk))
        goto out;
    /* the measured interval, known before the kernels are walked unless it is where every
     * process ran kernels (their first and last kernels come from the walk) */
    int early = a->opt.measure != ANALYSIS_MEASURE_TOGETHER;
    if (early)
        analysis_measure_interval(a);
    for (uint32_t s = 0; s < a->ndevs; s++) {
        cur[s] = a->devs[s].first_window;
        covered[s] = a->sum.measure_t0;
        a->devs[s].idle_in_ns = a->sum.measure_t1 - a->sum.measure_t0;
        store_idx d = a->devs[s].device;
        cals[s] = analysis_calibration_for(d != STORE_NONE ? run->devices[d].name : NULL, NULL);
        for (uint32_t l = 0; l < run->nlaunches; l++) {
            const store_device *dev = d == STORE_NONE ? NULL : &run->devices[d];
            share[(size_t)l * a->ndevs + s] = (sharehold){(float)gpu_share(&run->launches[l], dev),
                                                          (float)gpu_hold(&run->launches[l], dev)};
        }
    }
    double dur_ref = 0, ref = 0, kernel_ns = 0; /* over all processes, for the summary */
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        uint32_t sig = a->launch_sig[k->launch], s = analysis_kernel_slot(a, k);
        const analysis_signature *sg = &a->sigs[sig];
        store_idx p = store_kernel_process(run, k);
        int64_t dur = analysis_kernel_dur(k);
        uint32_t x = sitewalk_next(&sw, a, k, 0);
        double r = x < a->nsites && a->sites[x].reference_ns > 0 && sg->reference_ns > 0
                       ? a->sites[x].reference_ns
                       : sg->reference_ns;
        double o = a->stretch[i] > 0 ? a->stretch[i] : 0;
        float st = dur > 0 && r > 0 ? (float)(dur / r) : NAN;
        a->stretch[i] = st;
        analysis_process *ap = &a->procs[p];
        if (!ap->nkernels++) /* kernels come sorted by start */
            a->proc_first[p] = a->proc_last[p] = k->start;
        if (dur > 0 && k->end > a->proc_last[p])
            a->proc_last[p] = k->end;
        ap->kernel_ns = sat_add(ap->kernel_ns, dur);
        kernel_ns += (double)dur;
        a->sigs[sig].nkernels++;
        a->sigs[sig].total_ns = sat_add(a->sigs[sig].total_ns, dur);
        if (!isnan(st)) {
            ap->nreferenced++;
            ps[p].dur_ref += (double)dur;
            ps[p].ref += r;
            sigref[sig] += r;
            a->sum.nreferenced++;
            dur_ref += (double)dur;
            ref += r;
        }
        if (early && k->start < a->sum.measure_t1)
            cover_kernel(a, covered, k);
        if (dur <= 0)
            continue;
        kin q = {k,
                 (double)dur,
                 (double)a->ovl_start[i],
                 (double)a->ovl_start[i] + o,
                 r > 0,
                 r > 0 || sg->shortest_ns > 0,
                 0,
                 0,
                 share[(size_t)k->launch * a->ndevs + s].share,
                 share[(size_t)k->launch * a->ndevs + s].hold,
                 0,
                 r > 0 ? r : 0,
                 0};
        uint32_t part = a->ctx_sms[run->streams[k->stream].context];
        if (part)
            q.pslow = partition_slowdown(
                &run->launches[k->launch],
                a->devs[s].device != STORE_NONE ? &run->devices[a->devs[s].device] : NULL, part,
                a->slot_sms[s]);
        o = o < q.dur ? o : q.dur;
        double d = q.ref ? r : (double)sg->shortest_ns; /* its solo duration, where known */
        if (q.prov) /* its tail (analysis_calibration): the drain of its last wave */
            q.tail =
                fmin(cals[s]->tail_ns + cals[s]->tail_share * d, cals[s]->tail_max * d) / q.dur;
        if (o > 0 && q.ref)
            q.pO = q.rO = overlap_rate(q.dur, r, o);
        else if (o > 0 && q.prov)
            q.pO = overlap_rate(q.dur, (double)sg->shortest_ns, o);
        add_to_windows(a, s, &cur[s], ws, &stg, &q);
        if (walk && analysis_waitwalk_kernel(walk, k, q.prov ? alone_rate(q.dur, d, o) : 1, q.share,
                                             q.tail))
            goto out;
    }
    if (walk && analysis_waitwalk_finish(walk))
        goto out;
    for (uint32_t g = 0; g < a->ngroups; g++)
        stagger_flush(&stg, a, ws, g);
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        analysis_process *ap = &a->procs[p];
        ap->stretch = set_stretch(ps[p].dur_ref, ps[p].ref, (double)ap->kernel_ns,
                                  a->opt.min_reference_coverage);
    }
    for (uint32_t s = 0; s < a->nsigs; s++)
        a->sigs[s].stretch = sigref[s] > 0 ? (double)a->sigs[s].total_ns / sigref[s] : NAN;
    static const analysis_waitsum no_wait;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        analysis_device *ad = &a->devs[s];
        int handovers = device_handovers(a, ad);
        for (uint64_t w = ad->first_window; w < ad->first_window + ad->nwindows; w++) {
            analysis_window *win = &a->windows[w];
            const analysis_winx *x = &a->winx[w];
            /* the signature is read where the files do not say: an overlap of unknown physics,
             * or a quiet stretch of turns between groups of unknown MPS state */
            analysis_signature_kind sig =
                win->physics == ANALYSIS_PHYS_UNKNOWN || (x->turns && x->nsig)
                    ? analysis_window_signature(win, &a->opt)
                    : ANALYSIS_SIG_NONE;
            /* where its own turns say nothing, the device's quick handovers: side by side */
            int quick =
                handovers && sig == ANALYSIS_SIG_NONE && win->physics == ANALYSIS_PHYS_UNKNOWN;
            window_evidence(&a->opt, cals[s], win, &ws[w], a->waits ? &a->waits[w] : &no_wait,
                            quick ? ANALYSIS_SIG_QUICK : sig);
            if (win->verdict >= ANALYSIS_CONCURRENT) { /* an overlap window, from the sweep */
                judge_window(&a->opt, win, sig, quick);
            } else if (win->verdict == ANALYSIS_SOLO && x->turns && win->switches >= 2) {
                /* contexts without MPS took turns without overlapping: time-slicing with each
                 * kernel inside its slice (no stretch to measure, the switches to count) */
                win->verdict = ANALYSIS_TIME_SLICED;
                win->physics = ANALYSIS_PHYS_SLICED;
                win->rule = ANALYSIS_RULE_TOOK_TURNS;
            } else if (win->verdict == ANALYSIS_SOLO && x->turns && sig == ANALYSIS_SIG_SWITCHED) {
                /* the same where the files do not say, read from the turns' signature */
                win->verdict = ANALYSIS_TIME_SLICED;
                win->physics = ANALYSIS_PHYS_UNKNOWN;
                win->rule = ANALYSIS_RULE_SWITCH_TURNS;
            }
            /* the gaps the size of a switch between contexts of unknown MPS state are switches
             * where the signature says time-sliced */
            if (win->rule == ANALYSIS_RULE_SWITCH_TURNS && x->nsig) {
                win->switches += x->nsig;
                win->switch_gap_ns += x->siggap;
                ad->switches += x->nsig;
                ad->switch_gap_ns += x->siggap;
            }
            ad->turns += win->turns;
            ad->quick_turns += win->quick_turns;
            ad->switch_turns += win->switch_turns;
        }
        for (uint64_t i = 0; i < a->sw[s].n; i++) {
            analysis_switch *e = &a->sw[s].at[i];
            e->counted = !e->sig || a->windows[e->win].rule == ANALYSIS_RULE_SWITCH_TURNS;
        }
    }
    if (find_folds(a, ws, &stg))
        goto out;
    /* run level (t_begin and t_end are set by assign_slots()): over the measured interval, the
     * device that would finish last decides the predicted span */
    analysis_summary *sm = &a->sum;
    double last_end = -INFINITY, last_end_low = -INFINITY;
    int estimated = 0;
    if (!early)
        analysis_measure_interval(a);
    analysis_process_spans(a);
    if (!(a->switch_in = calloc(a->ndevs ? a->ndevs : 1, sizeof *a->switch_in)))
        goto out; /* rc is ANALYSIS_ENOMEM until the end */
    for (uint32_t s = 0; s < a->ndevs; s++)
        for (uint64_t i = 0; i < a->sw[s].n; i++) {
            const analysis_switch *x = &a->sw[s].at[i];
            if (x->counted && x->t >= a->sum.measure_t0 && x->t < a->sum.measure_t1)
                a->switch_in[s] +=
                    x->t - x->gap >= a->sum.measure_t0 ? x->gap : x->t - a->sum.measure_t0;
        }
    /* each device's idle time inside the measured interval: its length less the union of the
     * device's kernels there (walked above, or now when the interval came from the walk) and
     * less its context switches' gaps */
    for (uint32_t s = 0; s < a->ndevs && !early; s++) {
        covered[s] = sm->measure_t0;
        a->devs[s].idle_in_ns = sm->measure_t1 - sm->measure_t0;
    }
    for (uint64_t i = 0; !early && i < run->nkernels && run->kernels[i].start < sm->measure_t1; i++)
        cover_kernel(a, covered, &run->kernels[i]);
    for (uint32_t s = 0; s < a->ndevs; s++)
        a->devs[s].idle_in_ns -= a->switch_in[s];
    sm->nkernels = run->nkernels;
    for (uint32_t s = 0; s < a->ndevs; s++) {
        analysis_device *ad = &a->devs[s];
        double saved, saved_low;
        if (ad->idle_in_ns < 0) /* switch gaps and kernels share no instant: rounding only */
            ad->idle_in_ns = 0;
        judge_device(a, ad, ws, &saved, &saved_low);
        if (predicted_end(a, ad, saved) > last_end)
            sm->idle_in_ns = ad->idle_in_ns;
        last_end = fmax(last_end, predicted_end(a, ad, saved));
        last_end_low = fmax(last_end_low, predicted_end(a, ad, saved_low));
        estimated |= ad->gain_basis == ANALYSIS_BASIS_TURNS;
        sm->busy_ns += ad->busy_ns;
        sm->overlap_ns += ad->overlap_ns;
    }
    sm->stretch = set_stretch(dur_ref, ref, kernel_ns, a->opt.min_reference_coverage);
    sm->predicted_gain = gain_to(a, last_end);
    sm->predicted_gain_low = gain_to(a, last_end_low);
    sm->idle_share = sm->measure_t1 > sm->measure_t0
                         ? (double)sm->idle_in_ns / (double)(sm->measure_t1 - sm->measure_t0)
                         : 0;
    sm->host_paced = sm->idle_share >= ANALYSIS_HOST_PACED_IDLE;
    sm->gain_basis = sm->predicted_gain > 1.0
                         ? estimated ? ANALYSIS_BASIS_TURNS : ANALYSIS_BASIS_REFERENCE
                         : ANALYSIS_BASIS_NONE;
    rc = ANALYSIS_OK;
out:
    free(stg.win);
    free(stg.end);
    free(stg.work);
    analysis_waitwalk_free(walk);
    free(ws);
    free(cur);
    free(covered);
    free(cals);
    free(share);
    free(ps);
    free(sigref);
    sitewalk_free(&sw);
    return rc;
}

/* ------------------------------------------------------------ comparison */

int analysis_compare(const analysis *a, const analysis *b, analysis_comparison *pOut)
{
    if (!a || !b || !pOut)
        return ANALYSIS_EINVAL;
    memset(pOut, 0, sizeof *pOut);
    pOut->span_a = a->sum.measure_t1 - a->sum.measure_t0;
    pOut->span_b = b->sum.measure_t1 - b->sum.measure_t0;
    pOut->measured_gain = pOut->span_b > 0 ? (double)pOut->span_a / (double)pOut->span_b : NAN;
    pOut->predicted_gain = a->sum.predicted_gain;
    pOut->predicted_gain_low = a->sum.predicted_gain_low;
    pOut->stretch_a = a->sum.stretch;
    pOut->stretch_b = b->sum.stretch;
    /* at a stretch of 1 or less the prediction is a's own (run_gain(a, 1) == predicted_gain) */
    double slow = b->sum.stretch;
    pOut->predicted_gain_at_stretch_b = isnan(slow) ? NAN
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
