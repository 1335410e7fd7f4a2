/* wait.c: kernels that waited behind another context's time slice. A kernel is ready once its
 * launch call has returned (its API record, matched by correlation id within its process) and
 * the kernel before it on its stream has ended; one that starts later than that, by more than a
 * launch's own latency (analysis_calibration wait_latency_ns), waited for the GPU. The walk,
 * driven by the judge in kernel start order, finds the time when one context ran alone while
 * another context, of a share group that cannot share the GPU with it (no MPS between them), had
 * a ready kernel waiting: time MPS would have run them side by side, which the trace shows as
 * time alone; and the idle gaps between one context's kernels inside its slice while others'
 * kernels waited, which MPS would have filled (analysis/README.md, Gains). Runs without launch
 * API records have neither. */
#include <stdlib.h>

#include "analysis_int.h"

/* An event of the walk: a kernel's end (RUN_END) or the end of its wait (WAIT_END: its start). */
enum { RUN_END = 0, WAIT_END = 1 };
typedef struct wevent {
    int64_t t;
    uint32_t slot;
    store_idx ctx;
    int kind;
    double rate, rs, tail; /* RUN_END: what the kernel added to its slot's sums */
} wevent;

/* A kernel's wait: when it began (its readiness plus the launch latency) and the kernel. */
typedef struct wpend {
    int64_t t;
    uint32_t k; /* index into run->kernels */
} wpend;

/* One device slot during the walk. */
typedef struct wslot {
    int64_t now;           /* integrated up to here */
    uint32_t nk;           /* kernels in flight */
    uint32_t nctx;         /* contexts in flight */
    uint64_t ctxsum;       /* the sum of their indexes: the one context when nctx is 1 */
    uint32_t nwait;        /* contexts waiting (a ready kernel, none in flight) */
    uint32_t nwait_plain;  /* of which in share groups known not to be MPS */
    double rate, rs, tail; /* sums over the kernels in flight: solo work per ns, the same times
                              SM share, tail per ns */
    uint64_t w;            /* the slot's first window not yet passed */
    store_idx last;        /* the context of the last kernel to end, while none is in flight
                              (STORE_NONE: none yet) */
    int64_t gap_t;         /* when the slot last went idle */
    int64_t gap_ns;        /* idle time since then with other contexts' kernels waiting */
} wslot;

struct analysis_waitwalk {
    analysis *a;
    analysis_waitsum *sums; /* per window; a->waits once the walk ends */
    int64_t *wait_t;        /* run->nkernels while the walk is prepared: each kernel's launch
                               return, then when its wait began (INT64_MIN: none) */
    wpend *pend;            /* the kernels that waited, by the start of their wait */
    uint64_t npend, next;
    wevent *heap; /* min-heap on t */
    uint64_t n, cap;
    wslot *slots;    /* ndevs */
    uint32_t *crun;  /* ncontexts: kernels in flight */
    uint32_t *cwait; /* ncontexts: kernels waiting */
    uint32_t *gwait; /* ngroups: contexts waiting */
};

static int cmp_pend(const void *x, const void *y)
{
    const wpend *p = x, *q = y;
    return p->t < q->t ? -1 : p->t > q->t ? 1 : (p->k > q->k) - (p->k < q->k);
}

/* heap_push(), heap_pop(): the walk's events, by time */
ANALYSIS_MINHEAP(heap, analysis_waitwalk, wevent, t, 64)

/* The slot of a (process, correlation id) key in a table of mask + 1 entries, and its tag: the
 * hash's top tagbits bits, kept in an entry beside the kernel index so that a probe passes other
 * keys' entries without reading their kernels (scattered records: each a cache miss). */
static uint64_t corr_hash(uint32_t process, uint32_t correlation_id)
{
    return ((uint64_t)process * 0x9e3779b97f4a7c15ULL) ^ (correlation_id * 0xc2b2ae3d27d4eb4fULL);
}

static uint32_t corr_tag(uint64_t h, unsigned tagbits)
{
    return tagbits ? (uint32_t)(h >> (64 - tagbits)) : 0u;
}

/* The launch call's return of every kernel with a matched API record (INT64_MIN: none), by
 * (process, correlation id) over an open-addressing table of the kernels, into ret[]. An entry is
 * the kernel's index + 1 in its low ibits bits (0: empty) and its key's tag above them. Returns
 * whether any kernel matched, or -1 when out of memory. */
static int launch_returns(const store_run *run, int64_t *ret)
{
    enum { AHEAD = 16 }; /* table slots asked for this many keys ahead: their misses overlap */
    uint64_t n = run->nkernels, size = 16;
    while (size < n + n / 3) /* load <= 3/4 */
        size *= 2;
    uint32_t *tab = calloc(size, sizeof *tab);
    if (!tab)
        return -1;
    unsigned ibits = 1;
    while (ibits < 32 && (1ULL << ibits) <= n) /* index + 1 <= n fits in ibits bits */
        ibits++;
    unsigned tagbits = 32 - ibits; /* 0 (no tag) only past 2^31 kernels */
    uint32_t imask = ibits == 32 ? UINT32_MAX : (1u << ibits) - 1;
    uint64_t mask = size - 1;
    for (uint64_t i = 0; i < n; i++) {
        if (i + AHEAD < n && run->kernels[i + AHEAD].correlation_id) {
            const store_kernel *f = &run->kernels[i + AHEAD];
            __builtin_prefetch(
                &tab[corr_hash(store_kernel_process(run, f), f->correlation_id) & mask], 1);
        }
        const store_kernel *k = &run->kernels[i];
        ret[i] = INT64_MIN;
        if (!k->correlation_id)
            continue;
        uint64_t h = corr_hash(store_kernel_process(run, k), k->correlation_id), j;
        for (j = h & mask; tab[j]; j = (j + 1) & mask)
            ;
        tab[j] = (corr_tag(h, tagbits) << (ibits & 31)) | (uint32_t)(i + 1);
    }
    int any = 0;
    for (uint64_t a = 0; a < run->napis; a++) {
        if (a + AHEAD < run->napis) {
            const store_api *f = &run->apis[a + AHEAD];
            __builtin_prefetch(&tab[corr_hash(f->process, f->correlation_id) & mask]);
        }
        const store_api *api = &run->apis[a];
        if (!api->correlation_id || api->end < -STORE_TIME_MAX || api->end > STORE_TIME_MAX)
            continue;
        uint64_t h = corr_hash(api->process, api->correlation_id);
        uint32_t tag = corr_tag(h, tagbits);
        /* a graph launch's kernels share its correlation id: every one of them matches */
        for (uint64_t j = h & mask; tab[j]; j = (j + 1) & mask) {
            if (tagbits && tab[j] >> ibits != tag)
                continue; /* another key's kernel */
            uint64_t i = (tab[j] & imask) - 1;
            const store_kernel *k = &run->kernels[i];
            if (k->correlation_id == api->correlation_id &&
                store_kernel_process(run, k) == api->process && api->end > ret[i]) {
                ret[i] = api->end; /* the latest return of the calls that share the id */
                any = 1;
            }
        }
    }
    free(tab);
    return any;
}

int analysis_waitwalk_init(analysis *a, analysis_waitwalk **pOut)
{
    const store_run *run = a->run;
    *pOut = NULL;
    if (!run->napis || !run->nkernels || run->nkernels >= UINT32_MAX)
        return ANALYSIS_OK; /* no launch records (or more kernels than a table index holds) */
    analysis_waitwalk *w = calloc(1, sizeof *w);
    int64_t *last = malloc((run->nstreams + 1) * sizeof *last); /* per stream: latest end */
    int64_t *lat = malloc((a->ndevs + 1) * sizeof *lat);        /* per slot: launch latency */
    if (!w || !last || !lat || !(w->wait_t = malloc(run->nkernels * sizeof *w->wait_t))) {
        free(last);
        free(lat);
        analysis_waitwalk_free(w);
        return ANALYSIS_ENOMEM;
    }
    int any = launch_returns(run, w->wait_t);
    if (any > 0) {
        w->sums = calloc(a->nwindows + 1, sizeof *w->sums);
        w->slots = calloc(a->ndevs + 1, sizeof *w->slots);
        w->crun = calloc(run->ncontexts + 1, sizeof *w->crun);
        w->cwait = calloc(run->ncontexts + 1, sizeof *w->cwait);
        w->gwait = calloc(a->ngroups + 1, sizeof *w->gwait);
    }
    if (any <= 0 || !w->sums || !w->slots || !w->crun || !w->cwait || !w->gwait) {
        free(last);
        free(lat);
        analysis_waitwalk_free(w);
        return any == 0 ? ANALYSIS_OK : ANALYSIS_ENOMEM;
    }
    w->a = a;
    for (uint32_t s = 0; s < run->nstreams; s++)
        last[s] = INT64_MIN;
    for (uint32_t s = 0; s < a->ndevs; s++) { /* each slot's launch latency */
        store_idx d = a->devs[s].device;
        lat[s] =
            (int64_t)analysis_calibration_for(d != STORE_NONE ? run->devices[d].name : NULL, NULL)
                ->wait_latency_ns;
    }
    for (uint64_t i = 0; i < run->nkernels; i++) { /* sorted by start */
        const store_kernel *k = &run->kernels[i];
        int64_t ret = w->wait_t[i];
        w->wait_t[i] = INT64_MIN;
        if (analysis_kernel_dur(k) <= 0)
            continue; /* never in flight */
        int64_t ready = ret > last[k->stream] ? ret : last[k->stream];
        if (k->end > last[k->stream])
            last[k->stream] = k->end;
        int64_t l = lat[analysis_kernel_slot(a, k)];
        if (ret != INT64_MIN && ready < k->start - l) {
            w->wait_t[i] = ready + l;
            w->npend++;
        }
    }
    free(last);
    free(lat);
    if (!(w->pend = malloc((w->npend + 1) * sizeof *w->pend))) {
        analysis_waitwalk_free(w);
        return ANALYSIS_ENOMEM;
    }
    for (uint64_t i = 0, j = 0; i < run->nkernels; i++)
        if (w->wait_t[i] != INT64_MIN)
            w->pend[j++] = (wpend){w->wait_t[i], (uint32_t)i};
    free(w->wait_t);
    w->wait_t = NULL;
    qsort(w->pend, w->npend, sizeof *w->pend, cmp_pend);
    for (uint32_t s = 0; s < a->ndevs; s++) {
        w->slots[s].now = INT64_MIN;
        w->slots[s].w = a->devs[s].first_window;
        w->slots[s].last = STORE_NONE;
    }
    *pOut = w;
    return ANALYSIS_OK;
}

/* The waiting contexts that could have run beside context c (the one in flight on slot d, or
 * the last): those of other share groups, where c's group or theirs is known not to be MPS. */
static uint32_t waiting_beside(const analysis_waitwalk *w, const wslot *d, store_idx c)
{
    if (!d->nwait)
        return 0;
    uint32_t g = w->a->ctx_group[c];
    if (w->a->group_plain[g])
        return d->nwait - w->gwait[g];
    return d->nwait_plain; /* the running group is not plain, so none of these is in it */
}

/* Moves slot s's clock to t, adding the time with contexts waiting beside its one context in
 * flight to the windows it falls in. */
static void integrate(analysis_waitwalk *w, uint32_t s, int64_t t)
{
    wslot *d = &w->slots[s];
    if (!d->nk && d->last != STORE_NONE && t > d->now && waiting_beside(w, d, d->last))
        d->gap_ns += t - d->now; /* idle while others waited: kept until the next start says */
    uint32_t beside = d->nk && d->nctx == 1 ? waiting_beside(w, d, (store_idx)d->ctxsum) : 0;
    if (beside && t > d->now) {
        analysis *a = w->a;
        analysis_device *ad = &a->devs[s];
        uint64_t end = ad->first_window + ad->nwindows;
        for (; d->w < end; d->w++) {
            analysis_window *win = &a->windows[d->w];
            int64_t lo = d->now > win->t0 ? d->now : win->t0;
            int64_t hi = t < win->t1 ? t : win->t1;
            if (hi > lo) {
                double dt = (double)(hi - lo);
                analysis_waitsum *m = &w->sums[d->w];
                m->ns += dt;
                m->packed += d->rate / (d->nk + beside) * dt;
                m->sm += d->rs * dt;
                m->tail += d->tail * dt;
                win->waiting_ns += hi - lo;
                ad->waiting_ns += hi - lo;
            }
            if (win->t1 > t)
                break;
        }
    }
    if (t > d->now)
        d->now = t;
}

/* Context c of slot d starts or stops waiting or running: keeps d's waiting counts. */
static void set_counts(analysis_waitwalk *w, wslot *d, store_idx c, int drun, int dwait)
{
    int before = w->cwait[c] > 0 && !w->crun[c];
    if (drun > 0 && !w->crun[c]++) {
        d->nctx++;
        d->ctxsum += c;
    } else if (drun < 0 && !--w->crun[c]) {
        d->nctx--;
        d->ctxsum -= c;
    }
    w->cwait[c] += dwait;
    int after = w->cwait[c] > 0 && !w->crun[c];
    if (before != after) {
        uint32_t g = w->a->ctx_group[c];
        int step = after ? 1 : -1;
        d->nwait += step;
        w->gwait[g] += step;
        if (w->a->group_plain[g])
            d->nwait_plain += step;
    }
}

/* Applies every event at or before t. */
static int advance(analysis_waitwalk *w, int64_t t)
{
    const store_run *run = w->a->run;
    for (;;) {
        int more = w->next < w->npend;
        int64_t pt = more ? w->pend[w->next].t : 0;
        if (more && pt <= t && (!w->n || pt < w->heap[0].t)) {
            const store_kernel *k = &run->kernels[w->pend[w->next++].k];
            store_idx c = run->streams[k->stream].context;
            uint32_t s = w->a->ctx_slot[c];
            integrate(w, s, pt);
            set_counts(w, &w->slots[s], c, 0, 1);
            if (heap_push(w, (wevent){k->start, s, c, WAIT_END, 0, 0, 0}))
                return ANALYSIS_ENOMEM;
        } else if (w->n && w->heap[0].t <= t) {
            wevent e = heap_pop(w);
            wslot *d = &w->slots[e.slot];
            integrate(w, e.slot, e.t);
            if (e.kind == WAIT_END) {
                set_counts(w, d, e.ctx, 0, -1);
            } else {
                set_counts(w, d, e.ctx, -1, 0);
                if (--d->nk) {
                    d->rate -= e.rate;
                    d->rs -= e.rs;
                    d->tail -= e.tail;
                } else {
                    d->rate = d->rs = d->tail = 0; /* no drift left behind */
                    d->last = e.ctx;
                    d->gap_t = e.t;
                    d->gap_ns = 0;
                }
            }
        } else {
            return ANALYSIS_OK;
        }
    }
}

int analysis_waitwalk_kernel(analysis_waitwalk *w, const store_kernel *k, double rate, double share,
                             double tail)
{
    if (advance(w, k->start))
        return ANALYSIS_ENOMEM;
    store_idx c = w->a->run->streams[k->stream].context;
    uint32_t s = w->a->ctx_slot[c];
    wslot *d = &w->slots[s];
    integrate(w, s, k->start);
    if (!d->nk && d->gap_ns > 0) {
        /* an idle gap with others waiting, that ends where the same share group goes on: a gap
         * inside its time slice (between its kernels) that the waiting kernels could have
         * filled; one that ends with another group's kernel is a context switch's (counted as
         * such), and one longer than a switch gap may be waiting the trace does not show */
        const analysis *a = w->a;
        if (a->ctx_group[c] == a->ctx_group[d->last] &&
            k->start - d->gap_t <= ANALYSIS_SWITCH_GAP_NS) {
            uint64_t end = a->devs[s].first_window + a->devs[s].nwindows;
            while (d->w + 1 < end && a->windows[d->w].t1 <= d->gap_t)
                d->w++;
            w->sums[d->w].gap += (double)d->gap_ns; /* to the window where the gap began */
        }
        d->gap_ns = 0;
    }
    set_counts(w, d, c, 1, 0);
    d->nk++;
    d->rate += rate;
    d->rs += rate * share;
    d->tail += tail;
    return heap_push(w, (wevent){k->end, s, c, RUN_END, rate, rate * share, tail});
}

int analysis_waitwalk_finish(analysis_waitwalk *w)
{
    if (advance(w, INT64_MAX))
        return ANALYSIS_ENOMEM;
    w->a->waits = w->sums;
    w->sums = NULL;
    return ANALYSIS_OK;
}

void analysis_waitwalk_free(analysis_waitwalk *w)
{
    if (!w)
        return;
    free(w->sums);
    free(w->wait_t);
    free(w->pend);
    free(w->heap);
    free(w->slots);
    free(w->crun);
    free(w->cwait);
    free(w->gwait);
    free(w);
}
