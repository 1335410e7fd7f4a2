/* prop.c: the analysis's property test (prop.h): a run model made from any bytes, analysed, and
 * its results checked against the physics and a brute-force recount. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis.h"
#include "prop.h"
#include "store.h"
#include "view.h"

#define MAX_PROCS 5
#define MAX_KERNELS 160

/* The bytes, read front to back; zeros once they run out. */
typedef struct bytes {
    const uint8_t *p;
    size_t n, i;
} bytes;

static unsigned u8(bytes *b)
{
    return b->i < b->n ? b->p[b->i++] : 0;
}

static uint32_t u32(bytes *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | u8(b);
    return v;
}

static uint64_t u64(bytes *b)
{
    return (uint64_t)u32(b) << 32 | u32(b);
}

/* A number in [0, n). */
static unsigned pick(bytes *b, unsigned n)
{
    return n ? u8(b) % n : 0;
}

/* The lowest time of the run's window in mode 3 (chosen once per run by build()). */
static int64_t window_lo;

/* A time within the store's bounds, drawn in one of the run's modes: around an epoch (0: a real
 * recording, CLOCK_REALTIME ns), around 0 (1: a relative clock, Kineto's), anywhere in
 * [-STORE_TIME_MAX, STORE_TIME_MAX] with its edges favoured (2: most such runs span more than
 * STORE_SPAN_MAX and are refused), or within one span STORE_SPAN_MAX wide at an edge of the axis
 * or across 0, its ends favoured (3). */
static int64_t draw_time(bytes *b, int mode)
{
    static const int64_t edge[] = {-STORE_TIME_MAX,    -STORE_TIME_MAX + 1, -1, 0, 1,
                                   STORE_TIME_MAX - 1, STORE_TIME_MAX};
    switch (mode) {
    case 0: return INT64_C(1780000000000000000) + (int64_t)(u32(b) % 5000000) * 100;
    case 1: return (int64_t)(u32(b) % 2000000) - 1000;
    case 2: {
        if (u8(b) & 1)
            return edge[pick(b, sizeof edge / sizeof *edge)];
        uint64_t x = u64(b) % ((uint64_t)STORE_TIME_MAX * 2 + 1), t = (uint64_t)STORE_TIME_MAX;
        return x >= t ? (int64_t)(x - t) : -(int64_t)(t - x);
    }
    default:
        switch (pick(b, 4)) {
        case 0: return window_lo;
        case 1: return window_lo + STORE_SPAN_MAX;
        case 2: return window_lo + STORE_SPAN_MAX - (int64_t)pick(b, 200) * 1000;
        default: return window_lo + (int64_t)(u64(b) % ((uint64_t)STORE_SPAN_MAX + 1));
        }
    }
}

/* An end for a record that starts at s: mostly after it, sometimes at it or before it (files
 * carry anything), always within the store's bounds. */
static int64_t draw_end(bytes *b, int64_t s, int mode)
{
    unsigned k = pick(b, 16);
    int64_t d;
    if (k == 0)
        return s;
    if (k == 1)
        d = -(int64_t)(u8(b) + 1);
    else if (mode >= 2 && k == 2)
        return draw_time(b, mode);
    else
        d = (int64_t)(u32(b) % (k < 8 ? 2000 : 3000000)) + 1;
    int64_t e;
    if (!store_time_add(s, d, &e))
        return s;
    return mode == 3 && e > window_lo + STORE_SPAN_MAX ? window_lo + STORE_SPAN_MAX : e;
}

static const char *const names[] = {"gemm", "relu", "_Z6reducePfi", "spin"};

/* Adds a random run to `run` (empty) in time mode `mode` (draw_time). Returns the finish's
 * status. */
static int build(bytes *b, store_run *run, int mode)
{
    static const char *const uuids[] = {"00000000000000000000000000000001",
                                        "00000000000000000000000000000002", NULL};
    static const int64_t lows[] = {-STORE_TIME_MAX, STORE_TIME_MAX - STORE_SPAN_MAX,
                                   -STORE_SPAN_MAX / 2};
    window_lo = lows[pick(b, 3)];
    uint32_t np = 1 + pick(b, MAX_PROCS);
    store_idx streams[MAX_PROCS * 8];
    uint32_t nstreams = 0;
    for (uint32_t p = 0; p < np; p++) {
        store_process_info pi = {0};
        pi.pid = 100 + p;
        pi.host = pick(b, 4) ? "h" : "other";
        pi.source = pick(b, 3) ? "libcollect" : "chrome";
        store_idx pr = store_run_add_process(run, &pi, "prop.db");
        if (pr == STORE_NONE)
            return STORE_ENOMEM;
        run->processes[pr].complete = (int)pick(b, 2);
        store_idx dev[2];
        uint32_t nd = 1 + pick(b, 2);
        for (uint32_t d = 0; d < nd; d++) {
            store_device_info di = {0};
            di.device_id = d;
            di.uuid = uuids[pick(b, 3)];
            di.name = "NVIDIA H200";
            di.sm_count = pick(b, 4) ? 132 : 0;
            di.global_memory = 1 << 30;
            dev[d] = store_run_add_device(run, pr, &di);
        }
        uint32_t nc = 1 + pick(b, 3);
        for (uint32_t c = 0; c < nc; c++) {
            unsigned w = pick(b, 8);
            store_idx ctx =
                store_run_context(run, pr, 1 + c, w == 0 ? STORE_NONE : dev[w % nd], pick(b, 3));
            if (ctx == STORE_NONE)
                return STORE_ENOMEM;
            if (c && !pick(b, 3)) /* a green context of the process's first one, or of another */
                store_run_context_green(run, ctx, 1, pick(b, 4) ? 1 : 1 + pick(b, 4),
                                        pick(b, 2) ? 66 : 0);
            uint32_t ns = 1 + pick(b, 2);
            for (uint32_t s = 0; s < ns && nstreams < sizeof streams / sizeof *streams; s++)
                streams[nstreams++] = store_run_stream(run, ctx, 7 + s);
        }
    }
    store_launch l[4];
    for (int i = 0; i < 4; i++) {
        memset(&l[i], 0, sizeof l[i]);
        l[i].name = store_run_intern(run, names[i]);
        l[i].grid[0] = 1 + (i == 3 ? 0 : pick(b, 300));
        l[i].grid[1] = l[i].grid[2] = l[i].block[1] = l[i].block[2] = 1;
        l[i].block[0] = 128;
    }
    uint32_t nk = pick(b, MAX_KERNELS);
    int64_t t = draw_time(b, mode);
    for (uint32_t i = 0; i < nk; i++) {
        /* trains of kernels on a stream, with jumps */
        int64_t s;
        if (pick(b, 8) == 0 || !store_time_add(t, (int64_t)(u32(b) % 400000) - 1000, &s))
            s = draw_time(b, mode);
        t = s;
        store_idx st = streams[pick(b, nstreams)];
        store_kernel k = {s, draw_end(b, s, mode), st, store_run_launch(run, &l[pick(b, 4)]), 1 + i,
                          0};
        if (k.launch == STORE_NONE || store_run_add_kernel(run, &k))
            return STORE_ENOMEM;
        store_idx pr = run->contexts[run->streams[st].context].process;
        if (pick(b, 3) == 0) { /* its launch call, returned before, at or after its start */
            store_api a = {0};
            a.process = pr;
            a.correlation_id = pick(b, 8) ? 1 + i : 1 + pick(b, 4);
            a.name = store_run_intern(run, pick(b, 2) ? "cudaLaunchKernel" : "cuLaunchKernel");
            a.domain = pick(b, 2) ? STORE_API_RUNTIME : STORE_API_DRIVER;
            if (!store_time_add(s, -(int64_t)pick(b, 200) * 1000 + 500, &a.end))
                a.end = s;
            if (!store_time_add(a.end, -2000, &a.start))
                a.start = a.end;
            a.thread_id = 1 + pick(b, 2);
            if (store_run_add_api(run, &a))
                return STORE_ENOMEM;
        }
        if (pick(b, 10) == 0) { /* a copy beside it */
            store_copy c = {s, draw_end(b, s, mode), st, 0, STORE_COPY_MEMCPY, 1, 4096};
            if (store_run_add_copy(run, &c))
                return STORE_ENOMEM;
        }
    }
    for (uint32_t i = pick(b, 4); i > 0; i--) { /* NVTX ranges named "step" */
        store_range r = {0};
        r.start = draw_time(b, mode);
        r.end = draw_end(b, r.start, mode);
        r.process = pick(b, np);
        r.domain = STORE_NONE;
        r.name = store_run_intern(run, "step");
        if (store_run_add_range(run, &r))
            return STORE_ENOMEM;
    }
    for (uint32_t i = pick(b, 3); i > 0; i--) { /* capture ranges named "calm" */
        store_capture c = {0};
        c.start = draw_time(b, mode);
        c.end = draw_end(b, c.start, mode);
        if (c.end < c.start)
            c.end = c.start;
        c.process = pick(b, np);
        c.name = "calm";
        c.start_reason = "control";
        if (store_run_add_capture(run, &c) == STORE_ENOMEM)
            return STORE_ENOMEM;
    }
    return store_run_finish(run);
}

/* ------------------------------------------------------------ the recount */

/* A kernel's device key: its run device, or ndevices for the unknown device. */
static uint32_t dev_key(const store_run *run, const store_kernel *k)
{
    store_idx d = store_kernel_device(run, k);
    return d < run->ndevices ? d : run->ndevices;
}

static int in_flight(const store_kernel *k)
{
    return k->start >= -STORE_TIME_MAX && k->end <= STORE_TIME_MAX && k->end > k->start;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Busy and overlap time on device key `dkey`, counted over every elementary interval between
 * the ends of its kernels: of the device (proc -1: >= 1 kernel in flight; >= 2 contexts), or of
 * process `proc` there (one of its kernels in flight; and >= 2 contexts on the device). */
typedef struct recount {
    int64_t busy, overlap;
} recount;

static recount count_over(const store_run *run, uint32_t dkey, int64_t proc)
{
    recount r = {0, 0};
    int64_t *pt = malloc(sizeof *pt * (2 * run->nkernels + 2));
    uint64_t n = 0;
    if (!pt)
        abort();
    for (uint64_t i = 0; i < run->nkernels; i++)
        if (in_flight(&run->kernels[i]) && dev_key(run, &run->kernels[i]) == dkey) {
            pt[n++] = run->kernels[i].start;
            pt[n++] = run->kernels[i].end;
        }
    qsort(pt, n, sizeof *pt, cmp_i64);
    for (uint64_t j = 0; j + 1 < n; j++) {
        int64_t a = pt[j], z = pt[j + 1];
        if (a == z)
            continue;
        uint32_t nk = 0, nctx = 0, own = proc < 0;
        store_idx ctx = STORE_NONE;
        for (uint64_t i = 0; i < run->nkernels; i++) {
            const store_kernel *k = &run->kernels[i];
            if (!in_flight(k) || dev_key(run, k) != dkey || k->start > a || k->end < z)
                continue;
            store_idx c = run->streams[k->stream].context;
            own |= proc >= 0 && store_kernel_process(run, k) == (store_idx)proc;
            if (!nk++)
                ctx = c;
            else if (c != ctx)
                nctx = 2;
        }
        r.busy += nk && own ? z - a : 0;
        r.overlap += nctx && own ? z - a : 0;
    }
    free(pt);
    return r;
}

/* ------------------------------------------------------------ the checks */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, len, __VA_ARGS__);                                                           \
        return 1;                                                                                  \
    } while (0)

/* The MPS state every context on device key `dkey` with kernels shares, when its files say it:
 * 1 plain CUDA (not green), 2 MPS clients; 0 mixed, unknown or green. */
static int device_state(const store_run *run, uint32_t dkey, int assume)
{
    int state = -1;
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (!in_flight(k) || dev_key(run, k) != dkey)
            continue;
        const store_context *c = &run->contexts[run->streams[k->stream].context];
        int s = c->compute_api_kind == 1 || c->compute_api_kind == 2 ? (int)c->compute_api_kind
                : assume == 1                                        ? 1
                : assume == 2                                        ? 2
                                                                     : 0;
        if (c->green || c->parent_id)
            s = 0;
        for (uint32_t j = 0; s == 1 && j < run->ncontexts; j++) /* a parent of green ones */
            if (run->contexts[j].green && run->contexts[j].process == c->process &&
                run->contexts[j].parent_id == c->context_id)
                s = 0;
        if (state == -1)
            state = s;
        else if (state != s)
            state = 0;
    }
    return state < 0 ? 0 : state;
}

static int check_window(const analysis_window *w, const analysis_device *d, int state, char *why,
                        size_t len)
{
    if (!(w->overlap_ns >= 0 && w->overlap_ns <= w->busy_ns && w->busy_ns <= w->t1 - w->t0))
        FAIL("window [%" PRId64 ", %" PRId64 "): overlap %" PRId64 " busy %" PRId64, w->t0, w->t1,
             w->overlap_ns, w->busy_ns);
    if (!(isnan(w->parallelism) || w->parallelism >= 0) || !(isnan(w->stretch) || w->stretch > 0))
        FAIL("window at %" PRId64 ": parallelism %g stretch %g", w->t0, w->parallelism, w->stretch);
    /* turns: a turn is quick or marked by a switch, never both */
    if (w->quick_turns > w->turns || w->switch_turns > w->turns ||
        (uint64_t)w->quick_turns + w->switch_turns > w->turns)
        FAIL("window at %" PRId64 ": %u turns, %u quick, %u marked", w->t0, w->turns,
             w->quick_turns, w->switch_turns);
    /* the timing's signature decides only where the files do not say, and only as it reads */
    analysis_signature_kind sig = analysis_window_signature(w, NULL);
    if ((w->rule == ANALYSIS_RULE_SWITCH_TURNS) !=
        (w->rule == ANALYSIS_RULE_SWITCH_TURNS && sig == ANALYSIS_SIG_SWITCHED &&
         w->verdict == ANALYSIS_TIME_SLICED && w->physics == ANALYSIS_PHYS_UNKNOWN))
        FAIL("window at %" PRId64 ": switch-turns with signature %s, verdict %s, physics %s", w->t0,
             analysis_signature_name(sig), analysis_verdict_name(w->verdict),
             analysis_physics_name(w->physics));
    if (w->rule == ANALYSIS_RULE_QUICK_TURNS &&
        (sig != ANALYSIS_SIG_QUICK || w->physics != ANALYSIS_PHYS_UNKNOWN ||
         w->verdict == ANALYSIS_TIME_SLICED || w->verdict == ANALYSIS_UNKNOWN))
        FAIL("window at %" PRId64 ": quick-turns with signature %s, verdict %s", w->t0,
             analysis_signature_name(sig), analysis_verdict_name(w->verdict));
    /* the device's quick handovers decide only where the window's own turns say nothing, and
     * only when they outnumber the turns a switch marked (analysis_device quick_handovers) */
    if (w->rule == ANALYSIS_RULE_QUICK_HANDOVERS &&
        (sig != ANALYSIS_SIG_NONE || w->physics != ANALYSIS_PHYS_UNKNOWN ||
         w->verdict == ANALYSIS_TIME_SLICED || w->verdict == ANALYSIS_UNKNOWN ||
         d->quick_handovers < ANALYSIS_SIGNATURE_MIN_TURNS ||
         d->quick_handovers <= d->switch_turns ||
         (double)d->quick_handovers < 0.1 * (double)d->turns)) /* the default quick_min_share */
        FAIL("window at %" PRId64 ": quick-handovers with signature %s, verdict %s, %" PRIu64
             " quick handovers, %" PRIu64 " turns (%" PRIu64 " marked)",
             w->t0, analysis_signature_name(sig), analysis_verdict_name(w->verdict),
             d->quick_handovers, d->turns, d->switch_turns);
    /* where the files do not say, time-sliced only by the signature, undecided where neither
     * the rates nor the signature decide */
    if (w->physics == ANALYSIS_PHYS_UNKNOWN && w->verdict == ANALYSIS_TIME_SLICED &&
        w->rule != ANALYSIS_RULE_SWITCH_TURNS)
        FAIL("window at %" PRId64 " of unknown MPS state time-sliced by rule %s", w->t0,
             analysis_rule_name(w->rule));
    if (w->verdict == ANALYSIS_UNKNOWN && w->rule != ANALYSIS_RULE_ONE_AT_A_TIME &&
        w->rule != ANALYSIS_RULE_NO_REFERENCE)
        FAIL("window at %" PRId64 " unknown by rule %s", w->t0, analysis_rule_name(w->rule));
    int quiet_turns = w->rule == ANALYSIS_RULE_TOOK_TURNS ||
                      (w->rule == ANALYSIS_RULE_SWITCH_TURNS && w->overlap_ns == 0);
    int overlap = w->verdict >= ANALYSIS_CONCURRENT && !quiet_turns;
    if (w->verdict == ANALYSIS_IDLE && w->busy_ns)
        FAIL("idle window at %" PRId64 " busy %" PRId64, w->t0, w->busy_ns);
    if (!overlap && w->overlap_ns)
        FAIL("quiet window at %" PRId64 " (%s) overlapped %" PRId64, w->t0,
             analysis_verdict_name(w->verdict), w->overlap_ns);
    if (w->rule == ANALYSIS_RULE_TOOK_TURNS && w->verdict != ANALYSIS_TIME_SLICED)
        FAIL("took-turns window at %" PRId64 " is %s", w->t0, analysis_verdict_name(w->verdict));
    if (!overlap)
        return 0;
    /* the verdicts each physics allows (analysis/README.md, Verdict rules) */
    static const unsigned allowed[ANALYSIS_NPHYSICS] = {
        0, 1u << ANALYSIS_TIME_SLICED,
        1u << ANALYSIS_CONCURRENT | 1u << ANALYSIS_QUEUED | 1u << ANALYSIS_CONTENDED,
        1u << ANALYSIS_UNKNOWN | 1u << ANALYSIS_CONCURRENT | 1u << ANALYSIS_TIME_SLICED |
            1u << ANALYSIS_CONTENDED | 1u << ANALYSIS_QUEUED};
    if (w->physics >= ANALYSIS_NPHYSICS || !(allowed[w->physics] >> w->verdict & 1))
        FAIL("window at %" PRId64 ": verdict %s under physics %s", w->t0,
             analysis_verdict_name(w->verdict), analysis_physics_name(w->physics));
    /* the files say: never against them */
    if (state == 1 && w->verdict != ANALYSIS_TIME_SLICED)
        FAIL("window at %" PRId64 " of plain contexts only judged %s", w->t0,
             analysis_verdict_name(w->verdict));
    if (state == 2 && w->verdict == ANALYSIS_TIME_SLICED)
        FAIL("window at %" PRId64 " of MPS clients only judged time-sliced", w->t0);
    return 0;
}

/* A device's figures against the recount, its windows' against their physics, and its profile
 * against its figures. The predicted gains' ends may cross by the rounding of window times to
 * the ns (1e-6 relative), no more. */
static int check_device(const analysis *a, uint32_t s, char *why, size_t len)
{
    const store_run *run = analysis_get_run(a);
    const analysis_device *d = analysis_get_device(a, s);
    uint32_t dkey = d->device < run->ndevices ? d->device : run->ndevices;
    recount r = count_over(run, dkey, -1);
    if (d->busy_ns != r.busy || d->overlap_ns != r.overlap)
        FAIL("device %u: busy %" PRId64 " overlap %" PRId64 ", recounted %" PRId64 " %" PRId64, s,
             d->busy_ns, d->overlap_ns, r.busy, r.overlap);
    if (!(d->t_begin <= d->t_end && d->busy_ns <= d->t_end - d->t_begin &&
          d->idle_ns == d->t_end - d->t_begin - d->busy_ns))
        FAIL("device %u: span [%" PRId64 ", %" PRId64 ") busy %" PRId64 " idle %" PRId64, s,
             d->t_begin, d->t_end, d->busy_ns, d->idle_ns);
    if (!(d->predicted_gain_low <= d->predicted_gain * (1 + 1e-6) || isnan(d->predicted_gain)))
        FAIL("device %u: gain [%.17g, %.17g]", s, d->predicted_gain_low, d->predicted_gain);
    if (d->waiting_ns < 0 || d->idle_in_ns < 0 || d->switch_gap_ns < 0)
        FAIL("device %u: waiting %" PRId64 " idle_in %" PRId64 " switch gaps %" PRId64, s,
             d->waiting_ns, d->idle_in_ns, d->switch_gap_ns);
    const analysis_window *w = analysis_windows(a) + d->first_window;
    int64_t busy = 0, overlap = 0, at = d->t_begin, gaps = 0;
    uint64_t turns = 0, quick = 0, marked = 0, switches = 0;
    int state = device_state(run, dkey, analysis_get_options(a)->assume_mps);
    for (uint64_t i = 0; i < d->nwindows; i++) {
        if (w[i].t0 != at || w[i].t1 <= w[i].t0)
            FAIL("device %u: window %" PRIu64 " [%" PRId64 ", %" PRId64 ") after %" PRId64, s, i,
                 w[i].t0, w[i].t1, at);
        at = w[i].t1;
        busy += w[i].busy_ns;
        overlap += w[i].overlap_ns;
        turns += w[i].turns;
        quick += w[i].quick_turns;
        marked += w[i].switch_turns;
        switches += w[i].switches;
        gaps += w[i].switch_gap_ns;
        if (check_window(&w[i], d, state, why, len))
            return 1;
    }
    /* the device's turns are its windows'; its switches too (every switch lies in one) */
    if (turns != d->turns || quick != d->quick_turns || marked != d->switch_turns ||
        switches != d->switches || gaps != d->switch_gap_ns)
        FAIL("device %u: turns %" PRIu64 "/%" PRIu64 "/%" PRIu64 " switches %" PRIu64 " (%" PRId64
             " ns) against its windows' %" PRIu64 "/%" PRIu64 "/%" PRIu64 " %" PRIu64 " (%" PRId64
             " ns)",
             s, d->turns, d->quick_turns, d->switch_turns, d->switches, d->switch_gap_ns, turns,
             quick, marked, switches, gaps);
    if (d->nwindows && (at != d->t_end || busy != d->busy_ns || overlap != d->overlap_ns))
        FAIL("device %u: windows end at %" PRId64 " (span end %" PRId64 "), busy %" PRId64
             " overlap %" PRId64,
             s, at, d->t_end, busy, overlap);
    /* the profile, exact and binned */
    size_t nseg = 0;
    if (analysis_profile(a, s, d->t_begin, d->t_end, NULL, 0, &nseg))
        FAIL("device %u: analysis_profile failed", s);
    analysis_segment *seg = malloc(sizeof *seg * (nseg + 1));
    if (!seg || analysis_profile(a, s, d->t_begin, d->t_end, seg, nseg, &nseg))
        abort();
    busy = overlap = 0;
    at = d->t_begin;
    for (size_t i = 0; i < nseg; i++) {
        int ok = seg[i].t0 == at && seg[i].t1 > seg[i].t0;
        at = seg[i].t1;
        busy += seg[i].contexts ? seg[i].t1 - seg[i].t0 : 0;
        overlap += seg[i].contexts >= 2 ? seg[i].t1 - seg[i].t0 : 0;
        if (!ok) {
            snprintf(why, len, "device %u: profile segment %zu [%" PRId64 ", %" PRId64 ")", s, i,
                     seg[i].t0, seg[i].t1);
            free(seg);
            return 1;
        }
    }
    free(seg);
    if (nseg && (at != d->t_end || busy != d->busy_ns || overlap != d->overlap_ns))
        FAIL("device %u: profile to %" PRId64 " busy %" PRId64 " overlap %" PRId64, s, at, busy,
             overlap);
    return 0;
}

static int check_bins(const analysis *a, bytes *b, char *why, size_t len)
{
    for (uint32_t s = 0; s < analysis_ndevices(a); s++) {
        const analysis_device *d = analysis_get_device(a, s);
        uint32_t nbins = 1 + pick(b, 200);
        int64_t t0 = d->t_begin, t1;
        if (!store_time_add(t0, (int64_t)pick(b, 3) * (d->t_end - d->t_begin) / 3, &t0))
            t0 = d->t_begin;
        if (!store_time_add(t0, 1 + (int64_t)(u32(b) % (pick(b, 2) ? nbins : 100000000u)), &t1))
            continue;
        analysis_bin bins[200];
        if (analysis_profile_bins(a, s, t0, t1, bins, nbins))
            FAIL("device %u: analysis_profile_bins [%" PRId64 ", %" PRId64 ") x %u failed", s, t0,
                 t1, nbins);
        for (uint32_t i = 0; i < nbins; i++)
            if (!(bins[i].busy >= 0 && bins[i].busy <= 1 + 1e-6) ||
                bins[i].max_contexts > d->max_contexts)
                FAIL("device %u: bin %u of %u over [%" PRId64 ", %" PRId64 "): busy %g contexts %u",
                     s, i, nbins, t0, t1, bins[i].busy, bins[i].max_contexts);
        uint64_t counts[8], noref = 0, sum = 0;
        if (analysis_stretch_histogram(a, s, 0.25, 64, counts, 8, &noref))
            FAIL("device %u: histogram failed", s);
        for (int i = 0; i < 8; i++)
            sum += counts[i];
        if (sum + noref != d->nkernels)
            FAIL("device %u: histogram holds %" PRIu64 " + %" PRIu64 " of %" PRIu64 " kernels", s,
                 sum, noref, d->nkernels);
    }
    return 0;
}

static int check_processes(const analysis *a, char *why, size_t len)
{
    const store_run *run = analysis_get_run(a);
    for (uint32_t p = 0; p < analysis_nprocesses(a); p++) {
        const analysis_process *ap = analysis_get_process(a, p);
        recount r = {0, 0}; /* its busy and overlap time on each device, summed */
        for (uint32_t d = 0; d <= run->ndevices; d++) {
            recount x = count_over(run, d, p);
            r.busy += x.busy;
            r.overlap += x.overlap;
        }
        if (ap->busy_ns != r.busy || ap->overlap_ns != r.overlap || ap->busy_ns > ap->kernel_ns)
            FAIL("process %u: busy %" PRId64 " overlap %" PRId64 " (recounted %" PRId64 " %" PRId64
                 "), kernel time %" PRId64,
                 p, ap->busy_ns, ap->overlap_ns, r.busy, r.overlap, ap->kernel_ns);
        if (!(isnan(ap->stretch) || ap->stretch > 0))
            FAIL("process %u: stretch %g", p, ap->stretch);
    }
    return 0;
}

/* Everything a presenter reads: the JSON view of the analysis (with a comparison). */
static int check_view(const analysis *a, const analysis *cmp, char *why, size_t len)
{
    json_t *j = view_report_json(a, cmp, "prop");
    if (!j)
        FAIL("view_report_json failed");
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text)
        FAIL("json_dumps failed");
    free(text);
    return 0;
}

static int check_analysis(const analysis *a, const analysis *base, bytes *b, char *why, size_t len)
{
    const analysis_summary *sum = analysis_get_summary(a);
    int64_t busy = 0, overlap = 0;
    for (uint32_t s = 0; s < analysis_ndevices(a); s++) {
        if (check_device(a, s, why, len))
            return 1;
        busy += analysis_get_device(a, s)->busy_ns;
        overlap += analysis_get_device(a, s)->overlap_ns;
    }
    if (sum->busy_ns != busy || sum->overlap_ns != overlap || sum->t_begin > sum->t_end)
        FAIL("summary: busy %" PRId64 " overlap %" PRId64 " over [%" PRId64 ", %" PRId64
             "), devices %" PRId64 " %" PRId64,
             sum->busy_ns, sum->overlap_ns, sum->t_begin, sum->t_end, busy, overlap);
    if (!(sum->predicted_gain_low <= sum->predicted_gain * (1 + 1e-6) ||
          isnan(sum->predicted_gain)) ||
        !(sum->idle_share >= 0 && sum->idle_share <= 1 + 1e-9) || sum->measure_t0 > sum->measure_t1)
        FAIL("summary: gain [%g, %g] idle share %g measured [%" PRId64 ", %" PRId64 ")",
             sum->predicted_gain_low, sum->predicted_gain, sum->idle_share, sum->measure_t0,
             sum->measure_t1);
    if (check_processes(a, why, len) || check_bins(a, b, why, len))
        return 1;
    if (base) {
        analysis_comparison c;
        if (analysis_compare(a, base, &c) || analysis_compare(base, a, &c))
            FAIL("analysis_compare failed");
    }
    return check_view(a, base, why, len);
}

int prop_check(const uint8_t *data, size_t n, char *why, size_t len)
{
    bytes b = {data, n, 0};
    int mode = (int)pick(&b, 4), rc = 1;
    unsigned flags = u8(&b);
    store_run *run = store_run_new(), *base = NULL, *part = NULL;
    analysis *a = NULL, *ab = NULL;
    if (!run)
        abort();
    snprintf(why, len, "-");
    int brc = build(&b, run, mode);
    if (brc == STORE_ENOMEM)
        abort();
    if (brc) { /* refused: only a run whose records span more than one time axis may be */
        if (!strstr(store_run_errmsg(run), "more than the 73 years one time axis holds"))
            snprintf(why, len, "finish refused the run: %s", store_run_errmsg(run));
        else
            rc = 0;
        goto out;
    }
    analysis_options o;
    analysis_options_default(&o);
    o.assume_mps = (int)pick(&b, 3);
    o.measure = (analysis_measure)pick(&b, 5);
    o.measure_range = o.measure == ANALYSIS_MEASURE_CAPTURE ? "calm" : "step";
    o.measure_t0 = draw_time(&b, mode);
    o.measure_t1 = draw_end(&b, o.measure_t0, mode);
    if (o.measure_t1 <= o.measure_t0)
        o.measure = ANALYSIS_MEASURE_ALL;
    if (flags & 1)
        o.join_gap_ns = (int64_t)pick(&b, 4) * 1000000;
    if (flags & 2) { /* a range of the run, as --from/--to make */
        int64_t t0 = pick(&b, 2) ? draw_time(&b, mode) : run->t_begin, t1 = draw_end(&b, t0, mode);
        if (t1 > t0 && store_run_restrict(run, t0, t1, &part) == STORE_OK) {
            store_run_free(run);
            run = part;
        }
    }
    if (flags & 4) { /* a baseline of its own */
        if (!(base = store_run_new()))
            abort();
        int rb = build(&b, base, mode);
        if (rb == STORE_ENOMEM)
            abort();
        o.baseline = rb ? NULL : base;
    }
    int arc = analysis_run(run, &o, &a);
    if (arc) {
        snprintf(why, len, "analysis_run: %s", analysis_strerror(arc));
        goto out;
    }
    if (o.baseline) {
        analysis_options ob;
        analysis_options_default(&ob);
        if (analysis_run(base, &ob, &ab)) {
            snprintf(why, len, "analysis_run of the baseline failed");
            goto out;
        }
    }
    rc = check_analysis(a, ab, &b, why, len);
out:
    analysis_free(a);
    analysis_free(ab);
    store_run_free(run);
    store_run_free(base);
    return rc;
}
