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
#include <string.h>

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

#define KEY_ID(key) ((uint32_t)((key) >> 32)) /* keys: correlation id << 32 | position */

/* joinable: whether an API call can be a kernel's launch: a correlation id, a process of the run
 * (np of them) and a return time in range. */
static int joinable(const store_api *api, uint32_t np)
{
    return api->correlation_id && api->process < np && api->end >= -STORE_TIME_MAX &&
           api->end <= STORE_TIME_MAX;
}

/* by_id: whether keys[0..n) are in id order (a pass). */
static int by_id(const uint64_t *keys, uint64_t n)
{
    for (uint64_t j = 1; j < n; j++)
        if (KEY_ID(keys[j]) < KEY_ID(keys[j - 1]))
            return 0;
    return 1;
}

/* api_keys: the keys of the API calls with a correlation id and a return time in range, grouped
 * by process (process p's at (*pKeys)[off[p] .. off[p + 1]), off of nprocesses + 1), each group
 * sorted by id (a process's calls take their ids in order, so most groups come sorted: those
 * that do not, calls of several threads crossing, are radix-sorted). At most UINT32_MAX calls
 * (positions in 32 bits). Returns 0, or -1 when out of memory. */
static int api_keys(const store_run *run, uint64_t **pKeys, uint64_t *off)
{
    uint32_t np = run->nprocesses;
    uint64_t na = run->napis < UINT32_MAX ? run->napis : UINT32_MAX, most = 0;
    *pKeys = NULL;
    memset(off, 0, sizeof *off * ((size_t)np + 1));
    for (uint64_t i = 0; i < na; i++) {
        const store_api *api = &run->apis[i];
        if (joinable(api, np))
            off[api->process + 1]++;
    }
    for (uint32_t p = 0; p < np; p++)
        off[p + 1] += off[p];
    uint64_t *fill = malloc(sizeof *fill * ((size_t)np + 1));
    uint64_t *keys = malloc(sizeof *keys * (off[np] ? off[np] : 1));
    if (!fill || !keys) {
        free(fill);
        free(keys);
        return -1;
    }
    store_hint_huge(keys);
    memcpy(fill, off, sizeof *fill * np);
    for (uint64_t i = 0; i < na; i++) {
        const store_api *api = &run->apis[i];
        if (joinable(api, np))
            keys[fill[api->process]++] = (uint64_t)api->correlation_id << 32 | (uint32_t)i;
    }
    free(fill);
    for (uint32_t p = 0; p < np; p++)
        if (!by_id(keys + off[p], off[p + 1] - off[p]) && off[p + 1] - off[p] > most)
            most = off[p + 1] - off[p];
    uint64_t *tmp = most ? malloc(sizeof *tmp * most) : NULL;
    if (most && !tmp) {
        free(keys);
        return -1;
    }
    for (uint32_t p = 0; most && p < np; p++)
        if (!by_id(keys + off[p], off[p + 1] - off[p]))
            store_sort_hi32(keys + off[p], tmp, off[p + 1] - off[p]);
    free(tmp);
    *pKeys = keys;
    return 0;
}

/* seek_id: the first j in [lo, hi) whose key has an id >= id (hi when none), in keys sorted by
 * id, searched from j = c outward in steps that double (near c costs a few reads). */
static uint64_t seek_id(const uint64_t *keys, uint64_t lo, uint64_t hi, uint64_t c, uint32_t id)
{
    uint64_t a, b, step = 1; /* the answer is in [a, b] */
    if (c < hi && KEY_ID(keys[c]) < id) {
        a = c + 1;
        while (step < hi - c && KEY_ID(keys[c + step]) < id) {
            a = c + step + 1;
            step *= 2;
        }
        b = step < hi - c ? c + step : hi;
    } else {
        b = c < hi ? c : hi;
        while (step <= b - lo && KEY_ID(keys[b - step]) >= id) {
            b -= step;
            step *= 2;
        }
        a = step <= b - lo ? b - step + 1 : lo;
    }
    while (a < b) {
        uint64_t m = a + (b - a) / 2;
        if (KEY_ID(keys[m]) < id)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* The launch call's return of every kernel with a matched API record (INT64_MIN: none) into
 * ret[], matched by (process, correlation id): the kernels walked in start order, each process's
 * API calls sorted by id, a cursor per process moved to each kernel's id. A process's kernels
 * run in the order it launched them (on each stream), so the cursor mostly steps forward and the
 * calls are read nearly in order; no table of every kernel. Every kernel with an id matches
 * every call with it (a graph launch's kernels share its id, as the runtime and driver records
 * of one launch do) and takes the latest return. Returns whether any kernel matched, or -1 when
 * out of memory. */
static int launch_returns(const store_run *run, int64_t *ret)
{
    uint32_t np = run->nprocesses;
    uint64_t *off = malloc(sizeof *off * ((size_t)np + 1)), *keys = NULL;
    uint64_t *cur = malloc(sizeof *cur * ((size_t)np + 1));
    int any = -1;
    if (!off || !cur || api_keys(run, &keys, off))
        goto out;
    memcpy(cur, off, sizeof *cur * np);
    any = 0;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        ret[i] = INT64_MIN;
        store_idx p = k->correlation_id ? store_kernel_process(run, k) : STORE_NONE;
        if (p >= np || off[p] == off[p + 1])
            continue;
        uint64_t j = seek_id(keys, off[p], off[p + 1], cur[p], k->correlation_id);
        cur[p] = j;
        for (; j < off[p + 1] && KEY_ID(keys[j]) == k->correlation_id; j++) {
            int64_t end = run->apis[(uint32_t)keys[j]].end;
            if (end > ret[i])
                ret[i] = end;
            any = 1;
        }
    }
out:
    free(off);
    free(cur);
    free(keys);
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
    store_hint_huge(w->wait_t);
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
