/* Unit tests of analysis/: every rule (solo reference, stretch where it happened, windows of
 * contexts, the physics of MPS and green contexts, each verdict, estimates without references,
 * gains, compare, profile queries, warnings) and every edge case (zero-length kernels, identical
 * timestamps, a kernel still running at the end, a process with no kernels, a file from another
 * run), on small synthetic runs whose expected figures are worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "synth.h"
#include "test_help.h"

#define MS 1000000LL

/* Finishes the run and analyses it with default options (and an optional baseline). */
static analysis *analyse(store_run *run, const store_run *baseline)
{
    analysis_options o;
    analysis_options_default(&o);
    o.baseline = baseline;
    analysis *a = NULL;
    if (store_run_finish(run) != 0 || analysis_run(run, &o, &a) != 0)
        return NULL;
    return a;
}

/* The first overlap window (verdict not IDLE/SOLO) of the analysis, or NULL. */
static const analysis_window *overlap_window(const analysis *a, int nth)
{
    const analysis_window *w = analysis_windows(a);
    for (uint64_t i = 0; i < analysis_nwindows(a); i++)
        if (w[i].verdict >= ANALYSIS_CONCURRENT && nth-- == 0)
            return &w[i];
    return NULL;
}

static int has_warning(const analysis *a, const char *needle)
{
    for (uint32_t i = 0; i < analysis_nwarnings(a); i++)
        if (strstr(analysis_warning(a, i), needle))
            return 1;
    return 0;
}

/* Two processes: P1 alone (5 x 1000 ns), both together at 10 ms (10 kernels each of `dur` ns,
 * back to back, same instants), then P2 alone at 20 ms (5 x 1000 ns). */
static store_run *two_phase(int mps, int64_t dur)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 101, "h", "r", mps, NULL);
    store_idx s2 = synth_process(run, 102, "h", "r", mps, NULL);
    synth_train(run, s1, "spin", 0, 5, 1000, 0);
    synth_train(run, s1, "spin", 10 * MS, 10, dur, 0);
    synth_train(run, s2, "spin", 10 * MS, 10, dur, 0);
    synth_train(run, s2, "spin", 20 * MS, 5, 1000, 0);
    return run;
}

int test_analysis_solo_reference_is_median(void)
{
    store_run *run = store_run_new();
    store_idx s = synth_process(run, 1, "h", "r", 0, NULL);
    synth_kernel(run, s, "k", 0, 100);
    synth_kernel(run, s, "k", 200, 500);  /* 300 */
    synth_kernel(run, s, "k", 600, 800);  /* 200 */
    synth_kernel(run, s, "k", 900, 1300); /* 400 */
    synth_kernel(run, s, "other", 2000, 2050);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nsignatures(a), 2);
    const analysis_signature *sig = analysis_get_signature(a, 0);
    TEST_EQ_INT(sig->source, ANALYSIS_REF_SOLO);
    TEST_EQ_INT(sig->nsolo, 4);
    TEST_NEAR(sig->reference_ns, 250.0, 1e-9); /* median of 100, 200, 300, 400 */
    TEST_EQ_INT(sig->nkernels, 4);
    TEST_EQ_INT(sig->total_ns, 1000);
    /* each kernel against its call site's median: the first on its stream has its own site
     * (100), the three launched after a "k" theirs (median 300) */
    const float *st = analysis_stretch(a);
    TEST_NEAR(st[0], 1.0, 1e-6);
    TEST_NEAR(st[1], 1.0, 1e-6);
    TEST_NEAR(st[2], 200.0 / 300, 1e-6);
    TEST_NEAR(st[3], 400.0 / 300, 1e-6);
    TEST_NEAR(st[4], 1.0, 1e-6);
    TEST_NEAR(sig->stretch, 1000.0 / (100 + 3 * 300), 1e-9); /* total / its kernels' references */
    TEST_EQ_INT(analysis_launch_signature(a, run->kernels[4].launch), 1);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_time_sliced(void)
{
    store_run *run = two_phase(0, 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_NEAR(analysis_get_signature(a, 0)->reference_ns, 1000.0, 1e-9);
    TEST_EQ_INT(analysis_get_signature(a, 0)->nsolo, 10);
    const analysis_window *w = overlap_window(a, 0);
    TEST_ASSERT(w);
    TEST_EQ_STR(analysis_verdict_name(w->verdict), "time-sliced");
    TEST_EQ_INT(w->t0, 10 * MS);
    TEST_EQ_INT(w->t1, 10 * MS + 20000);
    TEST_EQ_INT(w->nkernels, 20);
    TEST_EQ_INT(w->max_processes, 2);
    TEST_EQ_INT(w->max_contexts, 2);
    TEST_NEAR(w->stretch, 2.0, 1e-6);
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_REFERENCE);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SLICED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_NO_MPS);
    TEST_NEAR(w->contexts, 2.0, 1e-6);
    TEST_NEAR(w->groups, 2.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_NEAR(w->coverage, 1.0, 1e-6);
    TEST_NEAR(w->overlap_share, 1.0, 1e-6);
    TEST_EQ_INT(w->overlap_ns, 20000);
    TEST_EQ_INT(w->mps, 0);
    TEST_ASSERT(overlap_window(a, 1) == NULL);

    /* quiet windows around it: [0, 10 ms) SOLO and [10 ms + 20 us, end) SOLO */
    TEST_EQ_INT(analysis_nwindows(a), 3);
    TEST_EQ_INT(analysis_windows(a)[0].verdict, ANALYSIS_SOLO);
    TEST_EQ_INT(analysis_windows(a)[0].t0, 0);
    TEST_EQ_INT(analysis_windows(a)[2].t1, 20 * MS + 5000);

    TEST_EQ_INT(analysis_ndevices(a), 1);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->device, 0);
    TEST_EQ_INT(d->nkernels, 30);
    TEST_EQ_INT(d->nprocesses, 2);
    TEST_EQ_INT(d->busy_ns, 30000);
    TEST_EQ_INT(d->overlap_ns, 20000);
    TEST_EQ_INT(d->idle_ns, 20 * MS + 5000 - 30000);
    TEST_EQ_INT(d->verdict, ANALYSIS_TIME_SLICED);
    TEST_EQ_INT(d->mps, ANALYSIS_MPS_OFF);
    TEST_EQ_INT(d->ncontexts, 2);
    TEST_EQ_INT(d->ngroups, 2);
    const analysis_verdict_time *bv = &d->by_verdict[ANALYSIS_TIME_SLICED];
    TEST_EQ_INT(bv->nwindows, 1);
    TEST_NEAR(bv->ns, 20000, 1e-9);
    TEST_NEAR(bv->stretch, 2.0, 1e-6);
    TEST_NEAR(bv->parallelism, 1.0, 1e-6);
    TEST_NEAR(bv->contexts, 2.0, 1e-6);
    TEST_EQ_INT(bv->rule, ANALYSIS_RULE_NO_MPS);
    TEST_EQ_INT(bv->basis, ANALYSIS_BASIS_REFERENCE);
    /* solo windows carry no stretch */
    TEST_EQ_INT(d->by_verdict[ANALYSIS_SOLO].nwindows, 2);
    TEST_ASSERT(isnan(d->by_verdict[ANALYSIS_SOLO].stretch));
    TEST_ASSERT(isnan(d->by_verdict[ANALYSIS_SOLO].parallelism));
    TEST_ASSERT(isnan(analysis_windows(a)[0].stretch));
    /* 20 us shrink to 10 us: span / (span - 10 us) */
    TEST_NEAR(d->predicted_gain, (20.0 * MS + 5000) / (20.0 * MS + 5000 - 10000), 1e-9);
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, d->predicted_gain, 1e-9);

    const analysis_process *p = analysis_get_process(a, 0);
    TEST_EQ_INT(p->nkernels, 15);
    TEST_EQ_INT(p->kernel_ns, 25000);
    TEST_EQ_INT(p->busy_ns, 25000);
    TEST_EQ_INT(p->overlap_ns, 20000);
    TEST_NEAR(p->stretch, 25000.0 / 15000.0, 1e-9);
    TEST_EQ_INT(p->mps, ANALYSIS_MPS_OFF);
    TEST_EQ_INT(p->ncontexts, 1);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_concurrent_mps(void)
{
    store_run *run = two_phase(1, 1000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    TEST_ASSERT(w);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SHARED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_NOT_STRETCHED);
    TEST_NEAR(w->stretch, 1.0, 1e-6);
    TEST_NEAR(w->parallelism, 2.0, 1e-6);
    TEST_NEAR(w->groups, 1.0, 1e-6); /* the MPS clients share one server context */
    TEST_EQ_INT(w->mps, 1);
    TEST_EQ_INT(analysis_get_device(a, 0)->mps, ANALYSIS_MPS_ON);
    TEST_EQ_INT(analysis_get_device(a, 0)->ngroups, 1);
    TEST_EQ_INT(analysis_get_process(a, 1)->mps, ANALYSIS_MPS_ON);
    TEST_NEAR(analysis_get_device(a, 0)->predicted_gain, 1.0, 1e-12);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_contended_mps(void)
{
    store_run *run = two_phase(1, 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONTENDED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_SHARED_SLOW);
    TEST_NEAR(w->stretch, 2.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_NEAR(w->overlap_share, 1.0, 1e-6); /* side by side all their lives: not queued */
    /* contended windows are not counted as MPS gain */
    TEST_NEAR(analysis_get_device(a, 0)->predicted_gain, 1.0, 1e-12);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Stretched 1.5x, more than one kernel's work per instant. Without MPS the contexts still took
 * turns: the physics decides, the stretch only says what it cost. When the files do not say
 * whether MPS was on (imports), the timing evidence decides: not time-slicing. */
int test_analysis_physics_before_timing(void)
{
    store_run *run = two_phase(SYNTH_PLAIN, 1500);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    TEST_NEAR(w->stretch, 1.5, 1e-6);
    TEST_NEAR(w->parallelism, 2.0 / 1.5, 1e-6);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_NO_MPS);
    analysis_free(a);
    store_run_free(run);

    run = two_phase(SYNTH_UNKNOWN, 1500);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    w = overlap_window(a, 0);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_UNKNOWN);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONTENDED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_PARALLEL_SLOW);
    TEST_EQ_INT(analysis_get_device(a, 0)->mps, ANALYSIS_MPS_UNKNOWN);
    analysis_free(a);
    store_run_free(run);

    /* unknown MPS state and 2x: one kernel's work at a time, which the parallelism does not
     * tell from MPS clients each filling the GPU; but the two contexts' kernels start at the
     * same instants, 18 turns of 0 ns, quicker than any context switch: not time-sliced. Until
     * 2026-12-08 rule one-at-a-time called this TIME-SLICED. */
    run = two_phase(SYNTH_UNKNOWN, 2000);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    w = overlap_window(a, 0);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_EQ_INT(w->turns, 19);
    TEST_EQ_INT(w->quick_turns, 18); /* the first turn began with P1's solo kernels at 0 */
    TEST_EQ_INT(w->verdict, ANALYSIS_CONTENDED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_QUICK_TURNS);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Two processes that always overlap: no solo instance, no reference: UNKNOWN, stretch NaN. */
static store_run *always_overlapping(int nproc, int64_t dur, int mps)
{
    store_run *run = store_run_new();
    for (int p = 0; p < nproc; p++) {
        store_idx s = synth_process(run, 200 + p, "h", "r", mps, NULL);
        synth_train(run, s, "spin", 0, 10, dur, 0);
    }
    return run;
}

/* Without any solo instance: the physics still decides where it can, with an estimate where
 * one follows; UNKNOWN only when nothing decides. */
int test_analysis_without_reference(void)
{
    /* MPS state unknown, and no signature in the timing either: one kernel each, a single turn
     * (always_overlapping()'s ten back to back would be 19 turns of 0 ns: quick) */
    store_run *run = always_overlapping(2, 20000, SYNTH_UNKNOWN);
    for (uint64_t k = 0; k < run->nkernels; k++)
        if (run->kernels[k].start > 0)
            run->kernels[k].end = run->kernels[k].start; /* zero-length: never in flight */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_get_signature(a, 0)->source, ANALYSIS_REF_NONE);
    TEST_EQ_INT(analysis_get_signature(a, 0)->shortest_ns, 20000);
    TEST_ASSERT(isnan(analysis_stretch(a)[0]));
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_NO_REFERENCE);
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_NONE);
    TEST_NEAR(w->coverage, 0.0, 0);
    TEST_ASSERT(isnan(w->stretch) && isnan(w->parallelism));
    TEST_EQ_INT(analysis_get_summary(a)->nreferenced, 0);
    TEST_ASSERT(isnan(analysis_get_process(a, 0)->stretch));
    TEST_ASSERT(isnan(analysis_get_summary(a)->stretch));
    analysis_free(a);
    store_run_free(run);

    /* no MPS, 3 contexts in flight all the time: time-sliced, stretch about 3 (an estimate) */
    run = always_overlapping(3, 2000, SYNTH_PLAIN);
    a = analyse(run, NULL);
    w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_TURNS);
    TEST_NEAR(w->stretch, 3.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_TIME_SLICED].basis, ANALYSIS_BASIS_TURNS);
    TEST_NEAR(d->predicted_gain, 3.0, 1e-6);
    TEST_EQ_INT(d->gain_basis, ANALYSIS_BASIS_TURNS);
    TEST_EQ_INT(analysis_get_summary(a)->gain_basis, ANALYSIS_BASIS_TURNS);
    analysis_free(a);
    store_run_free(run);

    /* MPS, starts and ends together: side by side, against the shortest instance */
    run = always_overlapping(3, 2000, SYNTH_MPS);
    a = analyse(run, NULL);
    w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_SHORTEST);
    TEST_NEAR(w->stretch, 1.0, 1e-6);
    TEST_NEAR(w->parallelism, 3.0, 1e-6);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_baseline_reference(void)
{
    store_run *base = store_run_new();
    store_idx s = synth_process(base, 1, "h", "base", 0, NULL);
    synth_kernel(base, s, "spin", 0, 1000); /* the first on its stream: a call site of its own */
    synth_kernel(base, s, "spin", 1000, 1900);
    synth_kernel(base, s, "spin", 2000, 3000);
    synth_kernel(base, s, "spin", 3000, 4100);
    TEST_EQ_INT(store_run_finish(base), 0);
    store_run *run = always_overlapping(4, 4000, SYNTH_PLAIN);
    analysis *a = analyse(run, base);
    TEST_ASSERT(a);
    const analysis_signature *sig = analysis_get_signature(a, 0);
    TEST_EQ_INT(sig->source, ANALYSIS_REF_BASELINE);
    TEST_EQ_INT(sig->nsolo, 4);
    TEST_NEAR(sig->reference_ns, 1000.0, 1e-9);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_NEAR(w->stretch, 4.0, 1e-6);
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_REFERENCE);
    TEST_NEAR(w->contexts, 4.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_EQ_INT(w->max_processes, 4);
    /* 40 us of 4-way time-slicing would take 10 us concurrently */
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, 4.0, 1e-9);
    TEST_NEAR(analysis_get_process(a, 2)->stretch, 4.0, 1e-9);
    analysis_free(a);
    store_run_free(run);
    store_run_free(base);
    return 0;
}

/* One signature doing two amounts of work (a matrix product's inner dimension is not in the
 * launch): 100 ns after "a", 400 ns after "b", three times as often after "a". Each kernel is
 * referenced by its call site (the signature launched before it on its stream), so solo kernels
 * have stretch 1 and a run at twice the time stretch 2; the signature's median (100) alone would
 * give the long ones 4 and 8. */
static store_run *two_sites(int64_t scale)
{
    store_run *run = store_run_new();
    store_idx s = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    int64_t t = 0;
    for (int it = 0; it < 5; it++) {
        for (int j = 0; j < 3; j++) {
            synth_kernel(run, s, "a", t, t + 10 * scale);
            synth_kernel(run, s, "k", t + 20 * scale, t + 120 * scale);
            t += 200 * scale;
        }
        synth_kernel(run, s, "b", t, t + 10 * scale);
        synth_kernel(run, s, "k", t + 20 * scale, t + 420 * scale);
        t += 500 * scale;
    }
    return store_run_finish(run) ? NULL : run;
}

int test_analysis_call_site_references(void)
{
    store_run *run = two_sites(1), *slow = two_sites(2);
    TEST_ASSERT(run && slow);
    for (int pass = 0; pass < 2; pass++) { /* alone; then twice as slow against it as baseline */
        analysis *a = pass ? analyse(slow, run) : analyse(run, NULL);
        TEST_ASSERT(a);
        const store_run *r = pass ? slow : run;
        uint32_t k = analysis_launch_signature(a, r->kernels[1].launch);
        const analysis_signature *sig = analysis_get_signature(a, k);
        TEST_EQ_STR(r->strings[sig->name].text, "k");
        TEST_NEAR(sig->reference_ns, 100.0, 1e-9); /* the signature's median, for its row */
        TEST_EQ_INT(sig->source, pass ? ANALYSIS_REF_BASELINE : ANALYSIS_REF_SOLO);
        TEST_NEAR(sig->stretch, pass ? 2.0 : 1.0, 1e-9);
        for (uint64_t i = 0; i < r->nkernels; i++)
            TEST_NEAR(analysis_stretch(a)[i], pass ? 2.0 : 1.0, 1e-6);
        TEST_NEAR(analysis_get_summary(a)->stretch, pass ? 2.0 : 1.0, 1e-6);
        analysis_free(a);
    }
    store_run_free(run);
    store_run_free(slow);
    return 0;
}

int test_analysis_zero_length_kernels(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", 0, NULL);
    synth_kernel(run, s1, "k", 0, 1000);
    synth_kernel(run, s2, "k", 500, 500); /* zero length inside P1's kernel */
    synth_kernel(run, s2, "k", 800, 700); /* end before start: read as zero length */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_summary *sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->nkernels, 3);
    TEST_EQ_INT(sm->nzero, 2);
    TEST_EQ_INT(sm->nreferenced, 1);
    TEST_EQ_INT(analysis_get_device(a, 0)->overlap_ns, 0); /* never in flight */
    TEST_EQ_INT(analysis_get_device(a, 0)->busy_ns, 1000);
    TEST_EQ_INT(analysis_get_device(a, 0)->t_end, 1000);
    TEST_ASSERT(overlap_window(a, 0) == NULL);
    const float *st = analysis_stretch(a);
    TEST_NEAR(st[0], 1.0, 1e-6); /* P1's kernel still counts as solo */
    TEST_ASSERT(isnan(st[1]) && isnan(st[2]));
    TEST_NEAR(analysis_get_signature(a, 0)->reference_ns, 1000.0, 1e-9);
    TEST_EQ_INT(analysis_get_process(a, 1)->nkernels, 2);
    TEST_EQ_INT(analysis_get_process(a, 1)->kernel_ns, 0);
    TEST_ASSERT(has_warning(a, "2 kernels have zero length"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_identical_timestamps(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_MPS, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_MPS, NULL);
    synth_kernel(run, s1, "k", 0, 1000);
    synth_kernel(run, s1, "k", 1000, 2000);
    synth_kernel(run, s2, "k", 2000, 3000); /* starts as P1's ends: no overlap */
    synth_kernel(run, s1, "k", 5000, 6000); /* same instants in both processes */
    synth_kernel(run, s2, "k", 5000, 6000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->busy_ns, 4000);
    TEST_EQ_INT(d->overlap_ns, 1000);
    TEST_EQ_INT(d->max_processes, 2);
    TEST_EQ_INT(d->max_kernels, 2);
    TEST_EQ_INT(analysis_get_signature(a, 0)->nsolo, 3);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->t0, 5000);
    TEST_EQ_INT(w->t1, 6000);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    TEST_NEAR(w->parallelism, 2.0, 1e-6);
    TEST_EQ_INT(analysis_get_process(a, 0)->overlap_ns, 1000);
    TEST_EQ_INT(analysis_get_process(a, 1)->overlap_ns, 1000);
    TEST_EQ_INT(analysis_get_process(a, 1)->busy_ns, 2000);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* A kernel still running when the other process has finished (the trace ends with it): the
 * window closes where the overlap ends, the rest is SOLO up to its end. A kernel whose end was
 * never recorded is not in the run (store semantics), so the last end seen bounds the device. */
int test_analysis_kernel_running_at_end(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", 0, NULL);
    synth_kernel(run, s1, "a", 0, 1000);
    synth_kernel(run, s2, "b", 500, 100000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nwindows(a), 3);
    const analysis_window *w = analysis_windows(a);
    TEST_EQ_INT(w[0].t0, 0);
    TEST_EQ_INT(w[0].t1, 500);
    TEST_EQ_INT(w[0].verdict, ANALYSIS_SOLO);
    TEST_EQ_INT(w[1].t0, 500);
    TEST_EQ_INT(w[1].t1, 1000);
    /* neither kernel ever ran alone: no MPS, two contexts took turns (an estimate) */
    TEST_EQ_INT(w[1].verdict, ANALYSIS_TIME_SLICED);
    TEST_EQ_INT(w[1].basis, ANALYSIS_BASIS_TURNS);
    TEST_NEAR(w[1].stretch, 2.0, 1e-6);
    TEST_EQ_INT(w[2].t1, 100000);
    TEST_EQ_INT(w[2].verdict, ANALYSIS_SOLO);
    TEST_EQ_INT(analysis_get_device(a, 0)->busy_ns, 100000);
    TEST_EQ_INT(analysis_get_device(a, 0)->idle_ns, 0);
    TEST_EQ_INT(analysis_get_process(a, 1)->overlap_ns, 500);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_process_without_kernels(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    synth_process(run, 2, "h", "r", 0, NULL);
    synth_train(run, s1, "k", 0, 3, 100, 10);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nprocesses(a), 2);
    const analysis_process *p = analysis_get_process(a, 1);
    TEST_EQ_INT(p->process, 1);
    TEST_EQ_INT(p->nkernels, 0);
    TEST_EQ_INT(p->busy_ns, 0);
    TEST_ASSERT(isnan(p->stretch));
    TEST_EQ_INT(analysis_get_device(a, 0)->nprocesses, 1);
    TEST_ASSERT(has_warning(a, "process 2 (synthetic.db) ran no kernels"));
    TEST_ASSERT(analysis_get_process(a, 2) == NULL);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_files_from_another_run(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 11, "hostA", "run1", 0, NULL);
    store_idx s2 = synth_process(run, 22, "hostB", "run2", 0, NULL);
    synth_train(run, s1, "k", 0, 3, 100, 10);
    synth_train(run, s2, "k", 100000 * MS, 3, 100, 10); /* 100 s later */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nwarnings(a), 4);
    TEST_ASSERT(has_warning(a, "2 hosts (hostA, hostB)"));
    TEST_ASSERT(has_warning(a, "2 run ids (run1, run2)"));
    TEST_ASSERT(has_warning(a, "process 11 (synthetic.db) ran its kernels 10 s or more away"));
    TEST_ASSERT(has_warning(a, "process 22 (synthetic.db) ran its kernels 10 s or more away"));
    analysis_free(a);
    store_run_free(run);

    /* one process after another within seconds (a script's steps): no warning */
    run = store_run_new();
    s1 = synth_process(run, 11, "h", "r", 0, NULL);
    s2 = synth_process(run, 22, "h", "r", 0, NULL);
    synth_train(run, s1, "k", 0, 3, 100, 10);
    synth_train(run, s2, "k", 2000 * MS, 3, 100, 10);
    a = analyse(run, NULL);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    analysis_free(a);
    store_run_free(run);

    /* the same run ids and overlapping times: no warning */
    run = two_phase(0, 2000);
    a = analyse(run, NULL);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_incomplete_process_warned(void)
{
    store_run *run = two_phase(0, 2000);
    run->processes[1].complete = 0;
    run->processes[1].error = "killed by signal 9";
    run->processes[0].records_dropped = 7;
    run->processes[0].rows_refused = 3;
    analysis *a = analyse(run, NULL);
    TEST_EQ_INT(analysis_nwarnings(a), 3);
    TEST_ASSERT(has_warning(a, "process 101 (synthetic.db): 3 records were refused: their times "
                               "lie beyond +-146 years around 1970"));
    TEST_ASSERT(has_warning(a, "process 102 (synthetic.db) is incomplete: killed by signal 9"));
    TEST_ASSERT(has_warning(a, "CUPTI dropped 7 records"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_windows_join_gap(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_MPS, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_MPS, NULL);
    for (int i = 0; i < 2; i++) {
        store_idx s = i ? s2 : s1;
        synth_kernel(run, s, "k", 0, 1000);
        synth_kernel(run, s, "k", 1500000, 1501000); /* 1.499 ms later: a new window */
        synth_kernel(run, s, "k", 1600000, 1601000); /* 99 us later: joined */
    }
    synth_train(run, s1, "k", 10 * MS, 3, 1000, 0); /* solo: the reference */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = analysis_windows(a);
    TEST_EQ_INT(analysis_nwindows(a), 4);
    TEST_EQ_INT(w[0].t1, 1000);
    TEST_EQ_INT(w[0].verdict, ANALYSIS_CONCURRENT);
    TEST_EQ_INT(w[1].verdict, ANALYSIS_IDLE);
    TEST_EQ_INT(w[1].t0, 1000);
    TEST_EQ_INT(w[1].t1, 1500000);
    TEST_EQ_INT(w[2].t0, 1500000);
    TEST_EQ_INT(w[2].t1, 1601000);
    TEST_EQ_INT(w[2].nkernels, 4);
    TEST_EQ_INT(w[2].verdict, ANALYSIS_CONCURRENT);
    TEST_NEAR(w[2].contexts, 2.0, 1e-6); /* the joined gap is idle, not busy time */
    TEST_EQ_INT(w[2].busy_ns, 2000);
    TEST_NEAR(w[2].parallelism, 2.0, 1e-6); /* over busy time: the gap does not dilute it */
    TEST_EQ_INT(w[3].verdict, ANALYSIS_SOLO);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->first_window, 0);
    TEST_EQ_INT(d->nwindows, 4);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_CONCURRENT].ns, 1000 + 101000);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_CONCURRENT].nwindows, 2);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_IDLE].ns, 1499000);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_profile_segments_and_bins(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", 0, NULL);
    synth_kernel(run, s1, "k", 0, 100);
    synth_kernel(run, s1, "k", 100, 200);
    synth_kernel(run, s2, "k", 50, 150);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    analysis_segment seg[8];
    size_t n = 0;
    TEST_EQ_INT(analysis_profile(a, 0, 0, 300, seg, 8, &n), 0);
    TEST_EQ_INT(n, 4);
    int64_t want[4][4] = {{0, 50, 1, 1}, {50, 150, 2, 2}, {150, 200, 1, 1}, {200, 300, 0, 0}};
    for (int i = 0; i < 4; i++) {
        TEST_EQ_INT(seg[i].t0, want[i][0]);
        TEST_EQ_INT(seg[i].t1, want[i][1]);
        TEST_EQ_INT(seg[i].processes, want[i][2]);
        TEST_EQ_INT(seg[i].contexts, want[i][3]);
    }
    TEST_EQ_INT(analysis_profile(a, 0, 0, 300, seg, 2, &n), 0);
    TEST_EQ_INT(n, 4); /* more than cap: the count says so */
    TEST_EQ_INT(seg[1].t1, 150);
    /* a range that starts inside kernels begun before it */
    TEST_EQ_INT(analysis_profile(a, 0, 120, 180, seg, 8, &n), 0);
    TEST_EQ_INT(n, 2);
    TEST_EQ_INT(seg[0].t0, 120);
    TEST_EQ_INT(seg[0].processes, 2);
    TEST_EQ_INT(seg[1].t1, 180);
    TEST_EQ_INT(seg[1].processes, 1);
    TEST_EQ_INT(analysis_profile(a, 1, 0, 300, seg, 8, &n), ANALYSIS_EINVAL);
    TEST_EQ_INT(analysis_profile(a, 0, 300, 0, seg, 8, &n), ANALYSIS_EINVAL);

    analysis_bin bins[2];
    TEST_EQ_INT(analysis_profile_bins(a, 0, 0, 200, bins, 2), 0);
    for (int i = 0; i < 2; i++) {
        TEST_EQ_INT(bins[i].max_processes, 2);
        TEST_NEAR(bins[i].busy, 1.0, 1e-6);
        TEST_NEAR(bins[i].mean_processes, 1.5, 1e-6);
    }
    TEST_EQ_INT(analysis_profile_bins(a, 0, 0, 400, bins, 2), 0);
    TEST_NEAR(bins[1].busy, 0.0, 0);
    TEST_EQ_INT(bins[1].max_processes, 0);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* ref_bins: analysis_profile_bins() by its definition, for comparison: bin b is [t0 + e(b),
 * t0 + e(b + 1)) with e(b) = floor(span * b / nbins) in 128 bits, its figures summed from the
 * segments of analysis_profile() (an instant bin: the segment holding e(b)). 0, or -1. */
static int ref_bins(const analysis *a, int64_t t0, int64_t t1, analysis_bin *out, uint32_t nbins)
{
    size_t n = 0;
    if (analysis_profile(a, 0, t0, t1, NULL, 0, &n) != 0)
        return -1;
    analysis_segment *seg = malloc((n ? n : 1) * sizeof *seg);
    if (!seg || analysis_profile(a, 0, t0, t1, seg, n, &n) != 0) {
        free(seg);
        return -1;
    }
    uint64_t span = (uint64_t)t1 - (uint64_t)t0;
    for (uint64_t b = 0; b < nbins; b++) {
        uint64_t e0 = (uint64_t)((unsigned __int128)span * b / nbins);
        uint64_t e1 = (uint64_t)((unsigned __int128)span * (b + 1) / nbins);
        uint64_t busy = 0, w = e1 > e0 ? e1 - e0 : 1;
        unsigned __int128 procs = 0;
        uint16_t mp = 0, mc = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t s0 = (uint64_t)seg[i].t0 - (uint64_t)t0,
                     s1 = (uint64_t)seg[i].t1 - (uint64_t)t0;
            uint64_t lo = e0 > s0 ? e0 : s0, hi = e1 < s1 ? e1 : s1;
            int in = e1 == e0 ? s0 <= e0 && e0 < s1 : lo < hi;
            if (!in || !seg[i].processes)
                continue;
            mp = seg[i].processes > mp ? seg[i].processes : mp;
            mc = seg[i].contexts > mc ? seg[i].contexts : mc;
            busy += e1 == e0 ? 1 : hi - lo;
            procs += (unsigned __int128)seg[i].processes * (e1 == e0 ? 1 : hi - lo);
        }
        out[b] = (analysis_bin){mp, mc, (float)((double)busy / (double)w),
                                (float)((double)procs / (double)w)};
    }
    free(seg);
    return 0;
}

/* xorshift: the next of Marsaglia's xorshift64 numbers from state *x. */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* same_bins: the first bin where a and b differ (bit for bit), or -1. */
static int same_bins(const analysis_bin *a, const analysis_bin *b, uint32_t nbins)
{
    for (uint32_t i = 0; i < nbins; i++)
        if (a[i].max_processes != b[i].max_processes || a[i].max_contexts != b[i].max_contexts ||
            memcmp(&a[i].busy, &b[i].busy, sizeof a[i].busy) != 0 ||
            memcmp(&a[i].mean_processes, &b[i].mean_processes, sizeof a[i].mean_processes) != 0)
            return (int)i;
    return -1;
}

/* The bins of analysis_profile_bins() (edges walked, no division per step) are, bit for bit, those
 * of the definition (a 128-bit division per edge), on the realtime axis (~1.7e18 ns): more bins
 * than ns (instant bins), span = nbins +- 1, bin edges on kernel starts and ends, a span of 2^62
 * and of ~8.6e18 (span * nbins far beyond 64 bits), and 400 random ranges and bin counts. */
int test_analysis_profile_bins_exact(void)
{
    const int64_t base = 1700000000000000000LL;
    store_run *run = store_run_new();
    store_idx s[3];
    for (int p = 0; p < 3; p++)
        s[p] = synth_process(run, 10 + p, "h", "r", 0, NULL);
    uint64_t x = 88172645463325252ull; /* xorshift64's state */
    /* stream p: kernels on multiples of 1000 ns (edges land on them) and at odd times, with gaps */
    for (int p = 0; p < 3; p++) {
        int64_t t = base + 1000 * p;
        for (int k = 0; k < 120; k++) {
            int64_t d =
                k % 3 ? 1000 * (int64_t)(1 + xorshift(&x) % 4) : (int64_t)(1 + xorshift(&x) % 997);
            TEST_EQ_INT(synth_kernel(run, s[p], "k", t, t + d), 0);
            t += d + (k % 4 ? (k % 2 ? 1000 : 0) : (int64_t)(xorshift(&x) % 3001));
        }
    }
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    enum { MAXB = 4096 };
    analysis_bin *got = malloc(MAXB * sizeof *got), *want = malloc(MAXB * sizeof *want);
    TEST_ASSERT(got && want);
    struct {
        int64_t t0, t1;
        uint32_t nbins;
    } c[420] = {
        {base, base + 7, 20},              /* 7 ns over 20 bins: instant bins */
        {base + 499, base + 523, 24},      /* span = nbins */
        {base + 499, base + 522, 24},      /* span = nbins - 1 */
        {base + 499, base + 524, 24},      /* span = nbins + 1 */
        {base, base + 100000, 100},        /* every edge on a multiple of 1000 */
        {base + 1000, base + 251000, 250}, /* the same, shifted */
        {base - (1LL << 62), base + (1LL << 62), 4096},
        {-4000000000000000000LL, 4600000000000000000LL, 3000},
        {base + 2000, base + 2001, 1}, /* 1 ns, 1 bin */
        {base + 1, base + 400001, 4095},
    };
    int n = 10;
    for (; n < 420; n++) {
        int64_t t0 = base - 5000 + (int64_t)(xorshift(&x) % 400000);
        int64_t len = (int64_t)(1 + xorshift(&x) % (n % 3 ? 500000 : 3000));
        c[n].t0 = t0, c[n].t1 = t0 + len, c[n].nbins = (uint32_t)(1 + xorshift(&x) % MAXB);
    }
    for (int i = 0; i < n; i++) {
        TEST_EQ_INT(analysis_profile_bins(a, 0, c[i].t0, c[i].t1, got, c[i].nbins), ANALYSIS_OK);
        TEST_EQ_INT(ref_bins(a, c[i].t0, c[i].t1, want, c[i].nbins), 0);
        int d = same_bins(got, want, c[i].nbins);
        if (d >= 0)
            fprintf(stderr,
                    "case %d [%lld, %lld) %u bins: bin %d: %u %u %.9g %.9g, want %u %u %.9g %.9g\n",
                    i, (long long)c[i].t0, (long long)c[i].t1, c[i].nbins, d, got[d].max_processes,
                    got[d].max_contexts, got[d].busy, got[d].mean_processes, want[d].max_processes,
                    want[d].max_contexts, want[d].busy, want[d].mean_processes);
        TEST_EQ_INT(d, -1);
    }
    free(got);
    free(want);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_stretch_histogram(void)
{
    store_run *run = two_phase(0, 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    uint64_t counts[6], noref = 99;
    /* log2 bins from 1/4 to 16: [-2,-1) [-1,0) [0,1) [1,2) [2,3) [3,4) */
    TEST_EQ_INT(analysis_stretch_histogram(a, UINT32_MAX, 0.25, 16, counts, 6, &noref), 0);
    TEST_EQ_INT(counts[2], 10); /* stretch 1: solo kernels */
    TEST_EQ_INT(counts[3], 20); /* stretch 2: time-sliced */
    TEST_EQ_INT(counts[0] + counts[1] + counts[4] + counts[5], 0);
    TEST_EQ_INT(noref, 0);
    TEST_EQ_INT(analysis_stretch_histogram(a, 0, 4, 8, counts, 1, NULL), 0);
    TEST_EQ_INT(counts[0], 30); /* everything below lo lands in bin 0 */
    TEST_EQ_INT(analysis_stretch_histogram(a, 0, 0, 8, counts, 1, NULL), ANALYSIS_EINVAL);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_compare_measured_gain(void)
{
    store_run *off = always_overlapping(2, 2000, SYNTH_PLAIN);
    store_run *on = always_overlapping(2, 1000, SYNTH_MPS);
    analysis *a = analyse(off, NULL), *b = analyse(on, NULL);
    TEST_ASSERT(a && b);
    analysis_comparison c;
    TEST_EQ_INT(analysis_compare(a, b, &c), 0);
    TEST_EQ_INT(c.span_a, 20000);
    TEST_EQ_INT(c.span_b, 10000);
    TEST_NEAR(c.measured_gain, 2.0, 1e-12);
    TEST_EQ_INT(c.common_signatures, 1);
    TEST_NEAR(c.duration_ratio, 2.0, 1e-6);
    TEST_EQ_INT(analysis_compare(a, NULL, &c), ANALYSIS_EINVAL);
    analysis_free(a);
    analysis_free(b);
    store_run_free(off);
    store_run_free(on);
    return 0;
}

int test_analysis_devices_are_separate(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    store_idx s2 = synth_process(run, 2, "h", "r", 0, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    synth_train(run, s1, "k", 0, 5, 1000, 0);
    synth_train(run, s2, "k", 0, 5, 1000, 0);
    /* a context whose device is unknown gets the extra slot */
    store_idx c3 = store_run_context(run, 1, 9, STORE_NONE, 0);
    synth_kernel(run, store_run_stream(run, c3, 1), "k", 100, 200);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_ndevices(a), 3);
    TEST_EQ_INT(analysis_get_device(a, 2)->device, STORE_NONE);
    TEST_EQ_INT(analysis_get_device(a, 2)->nkernels, 1);
    for (uint32_t d = 0; d < 2; d++) {
        TEST_EQ_INT(analysis_get_device(a, d)->overlap_ns, 0);
        TEST_EQ_INT(analysis_get_device(a, d)->busy_ns, 5000);
        TEST_EQ_INT(analysis_get_device(a, d)->verdict, ANALYSIS_SOLO);
    }
    TEST_ASSERT(overlap_window(a, 0) == NULL);
    TEST_EQ_INT(analysis_get_summary(a)->busy_ns, 10100);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_rejects_bad_input(void)
{
    analysis *a = (analysis *)1;
    TEST_EQ_INT(analysis_run(NULL, NULL, &a), ANALYSIS_EINVAL);
    TEST_ASSERT(a == NULL);
    store_run *run = store_run_new();
    store_idx s = synth_process(run, 1, "h", "r", 0, NULL);
    synth_kernel(run, s, "k", 500, 600);
    synth_kernel(run, s, "k", 100, 200); /* not finished: not sorted */
    TEST_EQ_INT(analysis_run(run, NULL, &a), ANALYSIS_EINVAL);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis_options o;
    analysis_options_default(&o);
    o.join_gap_ns = -1;
    TEST_EQ_INT(analysis_run(run, &o, &a), ANALYSIS_EINVAL);
    TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
    analysis_free(a);
    analysis_free(NULL);
    store_run_free(run);
    TEST_EQ_STR(analysis_strerror(ANALYSIS_ENOMEM), "out of memory");
    return 0;
}

int test_analysis_empty_run(void)
{
    store_run *run = store_run_new();
    synth_process(run, 1, "h", "r", 0, NULL);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_ndevices(a), 0);
    TEST_EQ_INT(analysis_nwindows(a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->nkernels, 0);
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, 1.0, 0);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_verdict_names(void)
{
    const char *want[] = {"idle",      "solo",   "concurrent", "time-sliced",
                          "contended", "queued", "unknown"};
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++) {
        TEST_EQ_STR(analysis_verdict_name((analysis_verdict)v), want[v]);
        TEST_ASSERT(strlen(analysis_verdict_meaning((analysis_verdict)v)) > 20);
    }
    TEST_EQ_STR(analysis_verdict_name((analysis_verdict)42), "?");
    TEST_EQ_STR(analysis_verdict_meaning((analysis_verdict)42), "?");
    const char *rules[] = {"none",        "no-mps",        "not-stretched", "handover",
                           "shared-slow", "one-at-a-time", "parallel-slow", "no-reference",
                           "took-turns",  "switch-turns",  "quick-turns",   "quick-handovers"};
    for (int r = 0; r < ANALYSIS_NRULES; r++) {
        TEST_EQ_STR(analysis_rule_name((analysis_rule)r), rules[r]);
        TEST_ASSERT(strlen(analysis_rule_text((analysis_rule)r)) > 5);
    }
    TEST_EQ_STR(analysis_rule_name((analysis_rule)99), "?");
    TEST_EQ_STR(analysis_signature_name(ANALYSIS_SIG_NONE), "none");
    TEST_EQ_STR(analysis_signature_name(ANALYSIS_SIG_SWITCHED), "switched");
    TEST_EQ_STR(analysis_signature_name(ANALYSIS_SIG_QUICK), "quick");
    TEST_EQ_STR(analysis_signature_name((analysis_signature_kind)9), "?");
    TEST_EQ_STR(analysis_basis_name(ANALYSIS_BASIS_SHORTEST), "shortest");
    TEST_EQ_STR(analysis_mps_name(ANALYSIS_MPS_UNKNOWN), "unknown");
    TEST_EQ_STR(analysis_physics_name(ANALYSIS_PHYS_SHARED), "shared");
    return 0;
}

/* ------------------------------------------------------------ property test */

static uint64_t prng = 88172645463325252ULL;

static uint32_t rnd(uint32_t n)
{
    prng ^= prng << 13;
    prng ^= prng >> 7;
    prng ^= prng << 17;
    return (uint32_t)(prng % n);
}

static int cmp_f(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* The overlapped rate of analysis' overlap_rate(), written again from the definition: solo
 * speed while alone (slower only when even that time exceeds the reference), the rest of the
 * work while overlapped. */
static double rate_overlapped(double d, double r, double o)
{
    if (d <= r)
        return r / d;
    double alone = d - o, ra = alone > 0 ? fmin(1, r / alone) : 1;
    return fmax(0, r - alone * ra) / o;
}

/* Random small runs (3 processes, the first sometimes with a second context, the second
 * sometimes with a green context beside its first, the third sometimes on a second GPU; every
 * context plain, MPS or of unknown MPS state; 2 signatures, durations 0..60 on a 0..400 axis, so
 * ties and zero lengths are common) against a brute-force walk over every nanosecond: busy,
 * overlap of contexts, per-process busy and overlap, solo references, stretch, the profile,
 * windows (join gap 0: overlap windows are exactly the instants with >= 2 contexts), their
 * physics, their evidence with the stretch where it happened, and their verdicts. */
int test_analysis_random_runs_match_brute_force(void)
{
    enum { T = 460, NP = 3, NC = 5, NK = 40 };
    for (int iter = 0; iter < 300; iter++) {
        store_run *run = store_run_new();
        store_idx st[NC];
        int devof[NC], procof[NC], kind[NC], green[NC], nc = 0;
        for (int p = 0; p < NP; p++) {
            int dev = p == 2 && iter % 3 == 0; /* sometimes a second GPU */
            kind[nc] = (int)rnd(3);
            st[nc] = synth_process(run, 10 + p, "h", "r", kind[nc],
                                   dev ? "ffffffffffffffffffffffffffffffff" : NULL);
            devof[nc] = dev;
            procof[nc] = p;
            green[nc++] = 0;
            if ((p == 0 && rnd(2)) || (p == 1 && rnd(2))) { /* a second context */
                int g = p == 1;
                kind[nc] = (int)rnd(3);
                st[nc] = synth_context(run, st[nc - 1], 2, kind[nc], g, g ? 1 : 0);
                devof[nc] = dev;
                procof[nc] = p;
                green[nc++] = g;
            }
        }
        /* share groups as the analysis defines them: MPS clients of a device; a green context
         * with its parent (context 1 of its process, unless an MPS client); else one each. A
         * group is plain (takes turns with every other) when all its contexts are plain. */
        int group[NC], gplain[300] = {0}, gother[300] = {0};
        for (int c = 0; c < nc; c++) {
            if (kind[c] == SYNTH_MPS)
                group[c] = 100 + devof[c];
            else if (green[c] || (c + 1 < nc && green[c + 1] && procof[c + 1] == procof[c]))
                group[c] = 200 + procof[c];
            else
                group[c] = c;
            gplain[group[c]] += kind[c] == SYNTH_PLAIN;
            gother[group[c]] += kind[c] != SYNTH_PLAIN;
        }
        for (int i = 0; i < NC * NK; i++) {
            int64_t s = rnd(400), d = rnd(8) == 0 ? 0 : rnd(60);
            synth_kernel(run, st[rnd((uint32_t)nc)], rnd(2) ? "a" : "b", s, s + d);
        }
        TEST_EQ_INT(store_run_finish(run), 0);
        analysis_options o;
        analysis_options_default(&o);
        o.join_gap_ns = 0;
        analysis *a = NULL;
        TEST_EQ_INT(analysis_run(run, &o, &a), 0);
        int cof[NC * NK]; /* each kernel's synthetic context */
        for (uint64_t k = 0; k < run->nkernels; k++)
            for (int c = 0; c < nc; c++)
                if (run->kernels[k].stream == st[c])
                    cof[k] = c;

        /* brute force: kernels in flight per context and instant */
        static int inflight[T][NC];
        memset(inflight, 0, sizeof inflight);
        for (uint64_t k = 0; k < run->nkernels; k++)
            for (int64_t t = run->kernels[k].start; t < run->kernels[k].end; t++)
                inflight[t][cof[k]]++;
        /* per device and instant: contexts, groups, physics (0 none, 1 sliced, 2 shared, 3
         * unknown) */
        static int nctx[2][T], ngrp[2][T], phys[2][T];
        for (int d = 0; d < 2; d++)
            for (int t = 0; t < T; t++) {
                int n = 0, ng = 0, plain = 0, gseen[300] = {0};
                for (int c = 0; c < nc; c++)
                    if (devof[c] == d && inflight[t][c]) {
                        n++;
                        if (!gseen[group[c]]++) {
                            ng++;
                            plain += gplain[group[c]] && !gother[group[c]];
                        }
                    }
                nctx[d][t] = n;
                ngrp[d][t] = ng;
                phys[d][t] = n < 2 ? 0 : ng < 2 ? 2 : plain ? 1 : 3;
            }
        /* each kernel's overlapped time: instants of its life with another context in flight */
        static double ovl_of[NC * NK];
        for (uint64_t k = 0; k < run->nkernels; k++) {
            const store_kernel *kk = &run->kernels[k];
            int c = cof[k], n = 0;
            for (int64_t t = kk->start; t < kk->end; t++)
                n += nctx[devof[c]][t] - (inflight[t][c] > 0) > 0;
            ovl_of[k] = n;
        }
        int64_t busy[2] = {0}, ovl[2] = {0}, pbusy[NP] = {0}, povl[NP] = {0};
        for (int d = 0; d < 2; d++)
            for (int t = 0; t < T; t++) {
                int pin[NP] = {0}, any = 0;
                for (int c = 0; c < nc; c++)
                    if (devof[c] == d && inflight[t][c]) {
                        pin[procof[c]] = 1;
                        any = 1;
                    }
                busy[d] += any;
                ovl[d] += nctx[d][t] > 1;
                for (int p = 0; p < NP; p++) {
                    pbusy[p] += pin[p];
                    povl[p] += pin[p] && nctx[d][t] > 1;
                }
            }
        /* solo instances and their medians, per signature; then every stretch */
        for (uint32_t sig = 0; sig < analysis_nsignatures(a); sig++) {
            float solo[NC * NK];
            int ns = 0;
            int64_t shortest = 0;
            for (uint64_t k = 0; k < run->nkernels; k++) {
                const store_kernel *kk = &run->kernels[k];
                if (analysis_launch_signature(a, kk->launch) != sig || kk->end <= kk->start)
                    continue;
                if (!shortest || kk->end - kk->start < shortest)
                    shortest = kk->end - kk->start;
                if (ovl_of[k] == 0)
                    solo[ns++] = (float)(kk->end - kk->start);
            }
            const analysis_signature *as = analysis_get_signature(a, sig);
            TEST_EQ_INT(as->nsolo, ns);
            TEST_EQ_INT(as->shortest_ns, shortest);
            if (ns) {
                qsort(solo, (size_t)ns, sizeof *solo, cmp_f);
                double med = ns % 2 ? solo[ns / 2] : (solo[ns / 2 - 1] + solo[ns / 2]) / 2.0;
                TEST_NEAR(as->reference_ns, med, 1e-9);
            }
        }
        /* each kernel's reference: the median of the solo instances of its call site (its
         * signature after the same signature on its stream), else its signature's */
        static double kref[NC * NK];
        static int64_t pred[NC * NK];
        for (uint64_t k = 0; k < run->nkernels; k++) {
            pred[k] = -1;
            for (uint64_t j = k; j-- > 0;)
                if (run->kernels[j].stream == run->kernels[k].stream) {
                    pred[k] = analysis_launch_signature(a, run->kernels[j].launch);
                    break;
                }
        }
        for (uint64_t k = 0; k < run->nkernels; k++) {
            uint32_t sig = analysis_launch_signature(a, run->kernels[k].launch);
            float solo[NC * NK];
            int ns = 0;
            for (uint64_t j = 0; j < run->nkernels; j++) {
                const store_kernel *kj = &run->kernels[j];
                if (analysis_launch_signature(a, kj->launch) == sig && pred[j] == pred[k] &&
                    kj->end > kj->start && ovl_of[j] == 0)
                    solo[ns++] = (float)(kj->end - kj->start);
            }
            qsort(solo, (size_t)ns, sizeof *solo, cmp_f);
            kref[k] = analysis_get_signature(a, sig)->reference_ns;
            if (ns && kref[k] > 0)
                kref[k] = ns % 2 ? solo[ns / 2] : (solo[ns / 2 - 1] + solo[ns / 2]) / 2.0;
        }
        for (uint64_t k = 0; k < run->nkernels; k++) {
            const store_kernel *kk = &run->kernels[k];
            double ref = kref[k];
            float s = analysis_stretch(a)[k];
            if (kk->end <= kk->start || ref <= 0)
                TEST_ASSERT(isnan(s));
            else
                TEST_NEAR(s, (kk->end - kk->start) / ref, 1e-5 * s);
        }
        for (uint32_t s = 0; s < analysis_ndevices(a); s++) {
            const analysis_device *ad = analysis_get_device(a, s);
            int d = run->devices[ad->device].uuid[0] == 'f';
            TEST_EQ_INT(ad->busy_ns, busy[d]);
            TEST_EQ_INT(ad->overlap_ns, ovl[d]);
            TEST_EQ_INT(ad->idle_ns, ad->t_end - ad->t_begin - busy[d]);
            /* windows tile the span; overlap windows hold exactly the >= 2 instants */
            const analysis_window *w = analysis_windows(a) + ad->first_window;
            int64_t at = ad->t_begin;
            for (uint64_t i = 0; i < ad->nwindows; i++) {
                TEST_EQ_INT(w[i].t0, at);
                at = w[i].t1;
                for (int64_t t = w[i].t0; t < w[i].t1; t++)
                    TEST_EQ_INT(nctx[d][t] > 1, w[i].verdict >= ANALYSIS_CONCURRENT);
            }
            TEST_EQ_INT(at, ad->t_end);
            /* quick handovers: between groups that may share the GPU, a start after another
             * group's end (ends first at one instant), an end after another group's start
             * (starts at that instant come after it); all within 20 us here. The device's decide
             * where a window's turns have no signature: from 3, none marked */
            uint64_t qh = 0;
            for (uint64_t k = 0; k < run->nkernels; k++) {
                const store_kernel *kk = &run->kernels[k];
                int g = group[cof[k]];
                if (devof[cof[k]] != d || kk->end <= kk->start || (gplain[g] && !gother[g]))
                    continue;
                int after_end = 0, after_start = 0;
                for (uint64_t j = 0; j < run->nkernels; j++) {
                    const store_kernel *kj = &run->kernels[j];
                    int h = group[cof[j]];
                    if (devof[cof[j]] != d || kj->end <= kj->start || h == g ||
                        (gplain[h] && !gother[h]))
                        continue;
                    after_end |= kj->end <= kk->start;
                    after_start |= kj->start < kk->end;
                }
                qh += (uint64_t)after_end + (uint64_t)after_start;
            }
            TEST_EQ_INT(ad->quick_handovers, qh);
            int handovers = qh >= ANALYSIS_SIGNATURE_MIN_TURNS && qh >= 0.1 * (double)ad->turns;
            /* the physics and evidence of each window, instant by instant */
            for (uint64_t i = 0; i < ad->nwindows; i++) {
                double ovl_ref = 0, work = 0, work_short = 0, ovl_in = 0, dur = 0;
                double own_ref = 0, own_short = 0, ctxsum = 0, grpsum = 0, gksum = 0;
                int64_t wbusy = 0, wovl = 0, physns[4] = {0};
                for (int64_t t = w[i].t0; t < w[i].t1; t++) {
                    wbusy += nctx[d][t] > 0;
                    if (nctx[d][t] > 1) {
                        int nk = 0; /* kernels in flight */
                        for (int c = 0; c < nc; c++)
                            nk += devof[c] == d ? inflight[t][c] : 0;
                        wovl++;
                        ctxsum += nctx[d][t];
                        grpsum += ngrp[d][t];
                        gksum += nk - ngrp[d][t] + 1;
                    }
                    physns[phys[d][t]]++;
                }
                /* turns: changes of share group in the start order (kernels of positive length,
                 * as the run holds them), counted where the start lies; every one here is quick
                 * (the run is 460 ns long) and none marked by a switch */
                int turns = 0, last_group = -1;
                for (uint64_t k = 0; k < run->nkernels; k++) {
                    const store_kernel *kk = &run->kernels[k];
                    if (devof[cof[k]] != d || kk->end <= kk->start)
                        continue;
                    int g = group[cof[k]];
                    turns += last_group >= 0 && g != last_group && kk->start >= w[i].t0 &&
                             kk->start < w[i].t1;
                    last_group = g;
                }
                TEST_EQ_INT(w[i].turns, turns);
                TEST_EQ_INT(w[i].quick_turns, turns);
                TEST_EQ_INT(w[i].switch_turns, 0);
                for (uint64_t k = 0; k < run->nkernels; k++) {
                    const store_kernel *kk = &run->kernels[k];
                    int c = cof[k];
                    if (devof[c] != d || kk->end <= w[i].t0 || kk->start >= w[i].t1 ||
                        kk->end <= kk->start)
                        continue;
                    const analysis_signature *sg =
                        analysis_get_signature(a, analysis_launch_signature(a, kk->launch));
                    double D = (double)(kk->end - kk->start);
                    double r = kref[k], pr = r > 0 ? r : (double)sg->shortest_ns;
                    double ro = ovl_of[k] > 0 ? rate_overlapped(D, r, ovl_of[k]) : 0;
                    double po = ovl_of[k] > 0 ? rate_overlapped(D, pr, ovl_of[k]) : 0;
                    dur += D;
                    double in = 0; /* its overlapped time here */
                    for (int64_t t = kk->start; t < kk->end; t++) {
                        if (t < w[i].t0 || t >= w[i].t1 || nctx[d][t] < 2)
                            continue; /* only its overlapped time counts */
                        in += 1;
                        ovl_in += 1;
                        work_short += po;
                        if (r > 0) {
                            ovl_ref += 1;
                            work += ro;
                        }
                    }
                    if (2 * in >= ovl_of[k]) { /* most of its overlapped time is here */
                        own_short += in * po;
                        own_ref += r > 0 ? in * ro : 0;
                    }
                }
                TEST_EQ_INT(w[i].busy_ns, wbusy);
                if (w[i].verdict < ANALYSIS_CONCURRENT) { /* no overlap: nothing defined */
                    TEST_ASSERT(isnan(w[i].contexts) && isnan(w[i].groups));
                    TEST_ASSERT(isnan(w[i].stretch) && isnan(w[i].parallelism));
                    TEST_ASSERT(isnan(w[i].coverage) && isnan(w[i].overlap_share));
                    continue;
                }
                double cov = ovl_in > 0 ? ovl_ref / ovl_in : 1;
                TEST_NEAR(w[i].coverage, cov, 1e-5);
                int ph = physns[1] >= physns[2] && physns[1] >= physns[3] ? 1
                         : physns[2] >= physns[3]                         ? 2
                                                                          : 3;
                TEST_EQ_INT(w[i].physics, ph);
                TEST_EQ_INT(w[i].overlap_ns, physns[1] + physns[2] + physns[3]);
                TEST_NEAR(w[i].contexts, ctxsum / (double)wovl, 1e-4 * ctxsum / wovl);
                TEST_NEAR(w[i].groups, grpsum / (double)wovl, 1e-4 * grpsum / wovl);
                TEST_NEAR(w[i].overlap_share, dur > 0 ? ovl_in / dur : 0, 1e-5);
                double gk = gksum / (double)wovl;
                TEST_NEAR(w[i].group_kernels, gk, 1e-4 * gk);
                /* where the physics is unknown, the turns' signature: quick from three turns */
                int quick = ph == 3 && turns >= ANALYSIS_SIGNATURE_MIN_TURNS;
                int byhand = ph == 3 && !quick && handovers; /* rule quick-handovers */
                double stretch = NAN, par = NAN, own = NAN;
                int basis = ANALYSIS_BASIS_NONE;
                if (ovl_ref > 0 && work > 0 && cov >= 0.5) {
                    basis = ANALYSIS_BASIS_REFERENCE;
                    stretch = ovl_ref / work;
                    par = work / (double)wovl / cov;
                    own = own_ref / work;
                } else if (ph == 1) {
                    basis = ANALYSIS_BASIS_TURNS;
                    stretch = grpsum / (double)wovl;
                    par = ovl_in / stretch / (double)wovl;
                } else if ((ph == 2 || quick || byhand) && work_short > 0) {
                    basis = ANALYSIS_BASIS_SHORTEST;
                    stretch = ovl_in / work_short;
                    par = work_short / (double)wovl;
                    own = own_short / work_short;
                }
                TEST_EQ_INT(w[i].basis, basis);
                if (basis != ANALYSIS_BASIS_NONE) {
                    TEST_NEAR(w[i].stretch, stretch, 1e-4 * stretch);
                    TEST_NEAR(w[i].parallelism, par, 1e-4 * par);
                }
                if (!isnan(own))
                    TEST_NEAR(w[i].own_share, own, 1e-4);
                /* the verdict rules */
                analysis_verdict v;
                int flat = basis && stretch <= o.concurrent_max_stretch;
                int shared = !basis || flat                               ? ANALYSIS_CONCURRENT
                             : w[i].overlap_share <= o.queued_max_overlap ? ANALYSIS_QUEUED
                                                                          : ANALYSIS_CONTENDED;
                int mine = basis == ANALYSIS_BASIS_REFERENCE && own >= ANALYSIS_OWN_MIN_SHARE;
                if (ph == 1)
                    v = ANALYSIS_TIME_SLICED;
                else if (ph == 2)
                    v = shared;
                else
                    v = mine && flat                                  ? ANALYSIS_CONCURRENT
                        : mine && par > o.sliced_max_parallelism * gk ? ANALYSIS_CONTENDED
                        : quick || byhand                             ? shared
                                                                      : ANALYSIS_UNKNOWN;
                TEST_EQ_INT(w[i].verdict, v);
            }
            /* the exact profile (processes and contexts in flight) */
            analysis_segment seg[2 * T];
            size_t n = 0;
            TEST_EQ_INT(analysis_profile(a, s, 0, T, seg, 2 * T, &n), 0);
            TEST_ASSERT(n <= 2 * T);
            for (size_t i = 0; i < n; i++)
                for (int64_t t = seg[i].t0; t < seg[i].t1; t++) {
                    int pin[NP] = {0}, np = 0;
                    for (int c = 0; c < nc; c++)
                        if (devof[c] == d && inflight[t][c] && !pin[procof[c]]++)
                            np++;
                    TEST_EQ_INT(seg[i].processes, np);
                    TEST_EQ_INT(seg[i].contexts, nctx[d][t]);
                }
        }
        for (int p = 0; p < NP; p++) {
            TEST_EQ_INT(analysis_get_process(a, p)->busy_ns, pbusy[p]);
            TEST_EQ_INT(analysis_get_process(a, p)->overlap_ns, povl[p]);
        }
        analysis_free(a);
        store_run_free(run);
    }
    return 0;
}

/* Kernels of one process on several streams: concurrency inside a context is not overlap between
 * processes, but the device counts the kernels in flight, and they stay solo references. */
int test_analysis_streams_of_one_process(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx c = run->streams[s1].context;
    for (uint32_t i = 0; i < 4; i++)
        synth_train(run, store_run_stream(run, c, 20 + i), "k", 0, 5, 1000, 0);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->max_kernels, 4);
    TEST_EQ_INT(d->max_processes, 1);
    TEST_EQ_INT(d->overlap_ns, 0);
    TEST_EQ_INT(d->verdict, ANALYSIS_SOLO);
    TEST_EQ_INT(analysis_get_signature(a, 0)->nsolo, 20);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* A "fill" kernel of `blocks` blocks of 256 threads (8 such blocks fit on an SM). */
static void wide_kernel(store_run *run, store_idx stream, uint32_t blocks, int64_t start,
                        int64_t end)
{
    store_launch l;
    memset(&l, 0, sizeof l);
    l.name = store_run_intern(run, "fill");
    l.grid[0] = blocks;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    store_kernel k = {start, end, stream, store_run_launch(run, &l), 0, 0};
    store_run_add_kernel(run, &k);
}

/* A kernel of `blocks` blocks taking 1000 ns alone (*pBase, the baseline) and `n` processes
 * time-slicing it, each over n x 1000 ns (*pRun). */
static void sliced_blocks(uint32_t blocks, int n, store_run **pBase, store_run **pRun)
{
    store_run *base = store_run_new(), *run = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), blocks, 0, 1000);
    store_run_finish(base);
    for (int p = 0; p < n; p++)
        wide_kernel(run, synth_process(run, 10 + p, "h", "r", 0, NULL), blocks, 0, n * 1000);
    *pBase = base;
    *pRun = run;
}

/* Predicted gain of 4-way time-slicing of kernels of `blocks` blocks on a 132-SM device, each
 * taking 1000 ns alone (baseline) and 4000 ns sliced. */
static double gain_for_blocks(uint32_t blocks)
{
    store_run *base, *run;
    sliced_blocks(blocks, 4, &base, &run);
    analysis *a = analyse(run, base);
    double gain = a && overlap_window(a, 0)->verdict == ANALYSIS_TIME_SLICED
                      ? analysis_get_summary(a)->predicted_gain
                      : -1;
    analysis_free(a);
    store_run_free(run);
    store_run_free(base);
    return gain;
}

/* Kernels that fill every SM cannot run side by side: time-slicing them costs nothing that MPS
 * could win back (measured on the H200, samples/saturating: 1.12x) but the drain of each one's
 * last wave, which another client's blocks fill (analysis_calibration: for 1 us kernels, 2.9% of
 * each, 29 ns). */
int test_analysis_predicted_gain_gpu_bound(void)
{
    const double t = 4 * 29.0;                /* the 4 kernels' tails, ns */
    TEST_NEAR(gain_for_blocks(1), 4.0, 1e-6); /* one block: 4 fit side by side */
    TEST_NEAR(gain_for_blocks(132 * 8 / 2), 4000 / (2000 - t), 1e-6); /* half the GPU: 2 at once */
    TEST_NEAR(gain_for_blocks(132 * 8), 4000 / (4000 - t), 1e-6);     /* a full wave: in turn */
    TEST_NEAR(gain_for_blocks(132 * 8 * 8), 4000 / (4000 - t), 1e-6); /* eight waves: in turn */
    /* a wave and a half: on average 3/4 of the SMs, so 4 such kernels take the time of 3 */
    TEST_NEAR(gain_for_blocks(132 * 8 * 3 / 2), 4000 / (3000 - t), 1e-6);
    return 0;
}

/* MPS clients that slow each other down (measured on the H200, samples/triton_single_sm at
 * N = 8: 1.49x): the prediction from the time-sliced run assumes solo speed side by side, and
 * the comparison redoes it at the compared run's stretch, which is what that run gained. */
int test_analysis_compare_at_stretch(void)
{
    store_run *base = store_run_new(), *off = store_run_new(), *on = store_run_new(),
              *unref = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), 1, 0, 1000);
    store_run_finish(base);
    for (int p = 0; p < 4; p++) {
        wide_kernel(off, synth_process(off, 10 + p, "h", "off", 0, NULL), 1, 0, 4000);
        wide_kernel(on, synth_process(on, 20 + p, "h", "on", SYNTH_MPS, NULL), 1, 0, 1500);
        wide_kernel(unref, synth_process(unref, 30 + p, "h", "u", 0, NULL), 2, 0, 1500);
    }
    analysis *a = analyse(off, base), *b = analyse(on, base), *u = analyse(unref, base);
    TEST_ASSERT(a && b && u);
    TEST_NEAR(analysis_get_summary(a)->stretch, 4.0, 1e-6);
    TEST_NEAR(analysis_get_summary(b)->stretch, 1.5, 1e-6);
    TEST_ASSERT(isnan(analysis_get_summary(u)->stretch)); /* another signature: no reference */
    analysis_comparison c;
    TEST_EQ_INT(analysis_compare(a, b, &c), 0);
    TEST_NEAR(c.predicted_gain, 4.0, 1e-6);
    TEST_NEAR(c.measured_gain, 4000.0 / 1500.0, 1e-9);
    TEST_NEAR(c.stretch_b, 1.5, 1e-6);
    TEST_NEAR(c.predicted_gain_at_stretch_b, 4000.0 / 1500.0, 1e-6);
    TEST_EQ_INT(analysis_compare(b, a, &c), 0); /* a slower run compared: never below solo speed */
    TEST_NEAR(c.predicted_gain_at_stretch_b, c.predicted_gain, 1e-12);
    TEST_EQ_INT(analysis_compare(a, u, &c), 0);
    TEST_ASSERT(isnan(c.stretch_b) && isnan(c.predicted_gain_at_stretch_b));
    analysis_free(a);
    analysis_free(b);
    analysis_free(u);
    store_run_free(base);
    store_run_free(off);
    store_run_free(on);
    store_run_free(unref);
    return 0;
}

/* One process, two plain contexts (cuCtxCreate twice, a thread each): the GPU time-slices
 * contexts, not processes, so their overlap is TIME-SLICED although one process ran it
 * (measured on the H200: 958 ms each against 448 ms alone). */
int test_analysis_contexts_of_one_process(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_context(run, s1, 2, SYNTH_PLAIN, 0, 0);
    synth_kernel(run, s1, "spin", 0, 1000); /* the solo reference */
    synth_kernel(run, s1, "spin", 10000, 12000);
    synth_kernel(run, s2, "spin", 10000, 12000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->nprocesses, 1);
    TEST_EQ_INT(d->ncontexts, 2);
    TEST_EQ_INT(d->overlap_ns, 2000);
    TEST_EQ_INT(d->max_contexts, 2);
    TEST_EQ_INT(d->max_processes, 1);
    TEST_EQ_INT(d->verdict, ANALYSIS_TIME_SLICED);
    TEST_NEAR(d->by_verdict[ANALYSIS_TIME_SLICED].stretch, 2.0, 1e-6);
    TEST_EQ_INT(analysis_get_process(a, 0)->overlap_ns, 2000);
    TEST_EQ_INT(analysis_get_process(a, 0)->ncontexts, 2);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Green contexts of one process run side by side on their SM partitions (measured on the H200:
 * 448 ms each, as alone), with each other and with their parent; against a context of another
 * process they still take turns. */
int test_analysis_green_contexts(void)
{
    store_run *run = store_run_new();
    store_idx prim = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx g1 = synth_context(run, prim, 2, SYNTH_PLAIN, 1, 1);
    store_idx g2 = synth_context(run, prim, 3, SYNTH_PLAIN, 1, 1);
    synth_kernel(run, g1, "spin", 0, 1000); /* the solo reference */
    synth_kernel(run, g1, "spin", 10 * MS, 10 * MS + 1000);
    synth_kernel(run, g2, "spin", 10 * MS, 10 * MS + 1000);
    synth_kernel(run, prim, "spin", 20 * MS, 20 * MS + 1000); /* the parent beside a green one */
    synth_kernel(run, g2, "spin", 20 * MS, 20 * MS + 1000);
    store_idx other = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_kernel(run, g1, "spin", 30 * MS, 30 * MS + 2000);
    synth_kernel(run, other, "spin", 30 * MS, 30 * MS + 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->ngreen, 2);
    TEST_EQ_INT(d->ncontexts, 4);
    TEST_EQ_INT(d->ngroups, 2); /* the process's family, the other process's context */
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SHARED);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    TEST_NEAR(w->stretch, 1.0, 1e-6);
    TEST_NEAR(w->groups, 1.0, 1e-6);
    TEST_NEAR(w->contexts, 2.0, 1e-6);
    w = overlap_window(a, 1);
    TEST_EQ_INT(w->t0, 20 * MS);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    w = overlap_window(a, 2);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SLICED);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_NEAR(w->stretch, 2.0, 1e-6);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Green contexts as nsys imports them: nothing says whether they were MPS clients
 * (compute_api_kind 0). Their family beside another such process is of unknown MPS state, like
 * the process: the timing judges it (analysis/README.md, physics), never "no MPS". With
 * --assume-mps off every context is plain: the family and the process take turns. A family whose
 * green contexts say plain but whose parent does not is unknown too. (Before 2026-12-01 a family
 * was always taken as plain, and this pair came out time-sliced by rule no-mps.) */
int test_analysis_green_contexts_unknown_mps(void)
{
    for (int assume = 0; assume <= 1; assume++) {
        store_run *run = store_run_new();
        store_idx prim = synth_process(run, 1, "h", "r", SYNTH_UNKNOWN, NULL);
        store_idx g1 = synth_context(run, prim, 2, SYNTH_UNKNOWN, 1, 1);
        store_idx g2 = synth_context(run, prim, 3, SYNTH_UNKNOWN, 1, 1);
        store_idx other = synth_process(run, 2, "h", "r", SYNTH_UNKNOWN, NULL);
        synth_kernel(run, g1, "spin", 0, 1000);                 /* the solo reference */
        synth_kernel(run, g1, "spin", 10 * MS, 10 * MS + 1000); /* the green pair together */
        synth_kernel(run, g2, "spin", 10 * MS, 10 * MS + 1000);
        synth_kernel(run, g1, "spin", 30 * MS, 30 * MS + 2000); /* beside the other process */
        synth_kernel(run, other, "spin", 30 * MS, 30 * MS + 2000);
        analysis_options o;
        analysis_options_default(&o);
        o.assume_mps = assume;
        analysis *a = NULL;
        TEST_EQ_INT(store_run_finish(run), 0);
        TEST_EQ_INT(analysis_run(run, &o, &a), 0);
        const analysis_device *d = analysis_get_device(a, 0);
        TEST_EQ_INT(d->ngroups, 2);
        TEST_EQ_INT(d->mps, assume ? ANALYSIS_MPS_OFF : ANALYSIS_MPS_UNKNOWN);
        const analysis_window *w = overlap_window(a, 0);
        TEST_ASSERT(w);
        TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SHARED); /* the pair shares its family's GPU */
        TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
        w = overlap_window(a, 1);
        TEST_ASSERT(w);
        TEST_EQ_INT(w->t0, 30 * MS);
        TEST_NEAR(w->stretch, 2.0, 1e-6);
        TEST_NEAR(w->parallelism, 1.0, 1e-6);
        if (assume) {
            TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SLICED);
            TEST_EQ_INT(w->rule, ANALYSIS_RULE_NO_MPS);
            TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
        } else { /* one kernel's work at a time, one turn: undecided (before 2026-12-08
                    TIME-SLICED, which the file does not support) */
            TEST_EQ_INT(w->physics, ANALYSIS_PHYS_UNKNOWN);
            TEST_EQ_INT(w->rule, ANALYSIS_RULE_ONE_AT_A_TIME);
            TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
        }
        analysis_free(a);
        store_run_free(run);
    }
    /* green contexts that say plain, under a parent that does not say: the family is unknown */
    store_run *run = store_run_new();
    store_idx prim = synth_process(run, 1, "h", "r", SYNTH_UNKNOWN, NULL);
    store_idx g1 = synth_context(run, prim, 2, SYNTH_PLAIN, 1, 1);
    store_idx other = synth_process(run, 2, "h", "r", SYNTH_UNKNOWN, NULL);
    synth_kernel(run, g1, "spin", 0, 1000);
    synth_kernel(run, g1, "spin", 30 * MS, 30 * MS + 2000);
    synth_kernel(run, other, "spin", 30 * MS, 30 * MS + 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(overlap_window(a, 0)->physics, ANALYSIS_PHYS_UNKNOWN);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Stretch where it happened: P1's kernel runs alone for 500 ns, then shares the GPU with P2's
 * for 1000 ns, each progressing at 1/2 (P1 ends at 1500, P2 runs alone to 2000). Each kernel is
 * only 1.5x its solo time, but inside the overlap they ran at 2x: the window says 2x, not the
 * 1.5x that spreading the extra time over the kernels' lives would give. */
int test_analysis_stretch_where_it_happened(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s1, "spin", 100000, 3, 1000, 100); /* solo references: 1000 */
    synth_kernel(run, s1, "spin", 0, 1500);
    synth_kernel(run, s2, "spin", 500, 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_NEAR(analysis_get_signature(a, 0)->reference_ns, 1000.0, 1e-9);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->t0, 500);
    TEST_EQ_INT(w->t1, 1500);
    TEST_NEAR(w->stretch, 2.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_NEAR(w->overlap_share, 2000.0 / 3000.0, 1e-6);
    TEST_NEAR(analysis_stretch(a)[0], 1.5, 1e-6); /* the kernel's own stretch is its whole life */
    /* side by side, the same partial overlap at solo speed is 1x inside */
    store_run_free(run);
    analysis_free(a);
    run = store_run_new();
    s1 = synth_process(run, 1, "h", "r", SYNTH_MPS, NULL);
    s2 = synth_process(run, 2, "h", "r", SYNTH_MPS, NULL);
    synth_train(run, s1, "spin", 100000, 3, 1000, 100);
    synth_kernel(run, s1, "spin", 0, 1000);
    synth_kernel(run, s2, "spin", 500, 1500);
    a = analyse(run, NULL);
    w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT);
    TEST_NEAR(w->stretch, 1.0, 1e-6);
    TEST_NEAR(w->parallelism, 2.0, 1e-6);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* MPS clients whose kernels each fill the GPU: the next one starts as the previous one's last
 * wave drains, so they overlap only at the handover and the incoming kernel is slowed there
 * (samples/saturating on the H200: 10% overlap, 8 kernels of ~0.54 s against 0.49 s alone). */
int test_analysis_queued(void)
{
    store_run *run = store_run_new();
    store_idx s[3];
    for (int p = 0; p < 3; p++)
        s[p] = synth_process(run, 1 + p, "h", "r", SYNTH_MPS, NULL);
    synth_kernel(run, s[0], "fill", 0, 10 * MS);
    synth_kernel(run, s[1], "fill", 9 * MS, 20 * MS); /* 1 ms slower: all of it in its head */
    synth_kernel(run, s[2], "fill", 19 * MS, 30 * MS);
    synth_train(run, s[0], "fill", 100 * MS, 3, 10 * MS, MS); /* solo references */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->verdict, ANALYSIS_QUEUED);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_QUEUED].nwindows, 2);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_QUEUED].rule, ANALYSIS_RULE_HANDOVER);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->t0, 9 * MS);
    TEST_EQ_INT(w->t1, 10 * MS);
    TEST_NEAR(w->overlap_share, 2.0 / 21, 1e-6);
    /* s[1]'s extra ms spread over its two 1 ms overlaps: it ran at 1/2 there, s[0] at 1 */
    TEST_NEAR(w->stretch, 2.0 / 1.5, 1e-6);
    /* 1.5 kernels' solo work at a time in the handover: the rule looks at the overlap share
     * only, and its sentence claims no more (until 2026-12-01 it said "doing one kernel's solo
     * work at a time", which no rule checked) */
    TEST_NEAR(w->parallelism, 1.5, 1e-6);
    TEST_EQ_STR(analysis_rule_text(ANALYSIS_RULE_HANDOVER),
                "the kernels could share the GPU (MPS or green contexts) but overlapped only at "
                "their ends");
    TEST_NEAR(d->predicted_gain, 1.0, 0); /* MPS was on: nothing to gain */
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* MPS clients beside a process that is not one: the MPS server's context and the plain one
 * take turns, so the GPU time-sliced them whatever the clients did among themselves. */
int test_analysis_mps_beside_plain(void)
{
    store_run *run = store_run_new();
    store_idx m1 = synth_process(run, 1, "h", "r", SYNTH_MPS, NULL);
    store_idx m2 = synth_process(run, 2, "h", "r", SYNTH_MPS, NULL);
    store_idx pl = synth_process(run, 3, "h", "r", SYNTH_PLAIN, NULL);
    synth_kernel(run, m1, "k", 0, 1000);
    synth_kernel(run, m2, "k", 0, 1000);
    synth_kernel(run, pl, "k", 0, 1000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->mps, ANALYSIS_MPS_MIXED);
    TEST_EQ_INT(d->ngroups, 2);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_SLICED);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_NEAR(w->groups, 2.0, 1e-6);
    TEST_NEAR(w->contexts, 3.0, 1e-6);
    TEST_NEAR(w->stretch, 2.0, 1e-6); /* estimated: two parties took turns */
    TEST_EQ_INT(w->basis, ANALYSIS_BASIS_TURNS);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Imported files (nvprof, nsys, Chrome) say nothing of a clean finish: they are not warned as
 * incomplete; a libcollect file that did not finish is. */
int test_analysis_imported_not_incomplete(void)
{
    store_run *run = two_phase(SYNTH_PLAIN, 2000);
    run->processes[0].source = "nsys";
    run->processes[0].complete = 0;
    run->processes[1].complete = 0;
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nwarnings(a), 1);
    TEST_ASSERT(has_warning(a, "process 102 (synthetic.db) is incomplete (the collector did not "
                               "finish cleanly)"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Times at the ends of the int64 range (a damaged file, or an importer that does not check):
 * such kernels are counted and warned about, never put on the time axis, and nothing overflows;
 * the kernels within range are analysed as usual. */
int test_analysis_extreme_times(void)
{
    store_run *run = store_run_new();
    store_idx s = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    synth_kernel(run, s, "k", INT64_MIN + 10, INT64_MAX - 10);
    synth_kernel(run, s, "k", INT64_MAX - 5, INT64_MAX);
    synth_kernel(run, s, "k", 1000, 2000);
    synth_kernel(run, s2, "k", INT64_MIN, INT64_MIN + 100); /* its device has nothing else */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_summary *sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->nkernels, 4);
    TEST_EQ_INT(sm->nzero, 3);
    TEST_EQ_INT(sm->t_begin, 1000);
    TEST_EQ_INT(sm->t_end, 2000);
    TEST_EQ_INT(analysis_ndevices(a), 1);
    TEST_EQ_INT(analysis_get_process(a, 0)->kernel_ns, 1000);
    TEST_EQ_INT(analysis_get_process(a, 1)->nkernels, 1);
    TEST_ASSERT(has_warning(a, "3 kernels lie beyond the times tlview computes with"));
    TEST_ASSERT(!has_warning(a, "zero length"));
    analysis_segment seg[4];
    size_t n;
    TEST_EQ_INT(analysis_profile(a, 0, 0, 3000, seg, 4, &n), 0);
    TEST_EQ_INT(n, 3);
    TEST_EQ_INT(sm->together_ns, 1000); /* P1's span cut to the times analysed */
    analysis_free(a);
    analysis_options o;
    analysis_options_default(&o);
    o.measure = ANALYSIS_MEASURE_TOGETHER;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure_t0, 1000);
    TEST_EQ_INT(sm->measure_t1, 2000);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* GPUs matched across files without a UUID are named in a warning: the identity was inferred. */
int test_analysis_inferred_gpu_warned(void)
{
    store_run *run = two_phase(SYNTH_PLAIN, 2000);
    run->devices[0].inferred = 1;
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_nwarnings(a), 1);
    TEST_ASSERT(has_warning(a, "GPU 0 (NVIDIA H200): the files of its 2 processes give no GPU "
                               "UUID; they were taken as one GPU because they agree on host, "
                               "ordinal, name and memory (tlview --separate-gpus keeps each "
                               "file's GPUs apart)"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Imported contexts whose MPS state the files do not say: --assume-mps stands in for it. */
int test_analysis_assume_mps(void)
{
    store_run *run = two_phase(SYNTH_UNKNOWN, 2000);
    analysis_options o;
    analysis_options_default(&o);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *a = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(overlap_window(a, 0)->rule, ANALYSIS_RULE_QUICK_TURNS); /* the timing says */
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    analysis_free(a);
    o.assume_mps = 2;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(overlap_window(a, 0)->physics, ANALYSIS_PHYS_SHARED);
    TEST_EQ_INT(overlap_window(a, 0)->verdict, ANALYSIS_CONTENDED);
    TEST_EQ_INT(analysis_get_device(a, 0)->mps, ANALYSIS_MPS_ON);
    TEST_ASSERT(has_warning(a, "2 contexts whose files do not say whether they were MPS clients "
                               "were taken as MPS clients, as asked (--assume-mps on)"));
    analysis_free(a);
    o.assume_mps = 1;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(overlap_window(a, 0)->rule, ANALYSIS_RULE_NO_MPS);
    analysis_free(a);
    o.assume_mps = 3;
    TEST_EQ_INT(analysis_run(run, &o, &a), ANALYSIS_EINVAL);
    /* files that say win over the assumption */
    store_run_free(run);
    run = two_phase(SYNTH_PLAIN, 2000);
    TEST_EQ_INT(store_run_finish(run), 0);
    o.assume_mps = 2;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(overlap_window(a, 0)->rule, ANALYSIS_RULE_NO_MPS);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Adds an NVTX range `name` over [start, end) to the process of `stream`. */
static void synth_range(store_run *run, store_idx stream, const char *name, int64_t start,
                        int64_t end)
{
    store_range r = {start, end,        run->contexts[run->streams[stream].context].process,
                     1,     STORE_NONE, store_run_intern(run, name)};
    store_run_add_range(run, &r);
}

/* The gains over the work the application timed (an NVTX range in every process) or over the
 * time every process was running, instead of the whole recording with its set-up. */
int test_analysis_measure_interval(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s1, "k", 0, 10, 1000, 0);        /* P1 sets up alone: the references */
    synth_train(run, s1, "k", 100 * MS, 10, 2000, 0); /* both timed: 2-way time-slicing */
    synth_train(run, s2, "k", 100 * MS, 10, 2000, 0);
    synth_train(run, s2, "k", 300 * MS, 10, 1000, 0); /* P2 tears down alone */
    synth_range(run, s1, "timed", 100 * MS, 100 * MS + 20000);
    synth_range(run, s2, "timed", 100 * MS, 100 * MS + 20000);
    analysis_options o;
    analysis_options_default(&o);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *a = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    const analysis_summary *sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_ALL);
    TEST_EQ_INT(sm->measure_t1 - sm->measure_t0, 300 * MS + 10000);
    double whole = sm->predicted_gain; /* 10 us saved over 300 ms */
    TEST_NEAR(whole, (300.0 * MS + 10000) / (300.0 * MS), 1e-9);
    /* the processes' own spans: P1 from its set-up to its last timed kernel, P2 from its first
     * timed kernel to its tear-down */
    TEST_EQ_INT(sm->nproc_spans, 2);
    TEST_EQ_INT(sm->proc_span_min_ns, 100 * MS + 20000);
    TEST_EQ_INT(sm->proc_span_max_ns, 200 * MS + 10000);
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_RANGE;
    o.measure_range = "timed";
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_RANGE);
    TEST_EQ_INT(sm->measure_t0, 100 * MS);
    TEST_EQ_INT(sm->measure_t1, 100 * MS + 20000);
    TEST_NEAR(sm->predicted_gain, 2.0, 1e-9); /* 20 us of 2-way slicing would take 10 us */
    TEST_NEAR(analysis_get_device(a, 0)->predicted_gain, 2.0, 1e-9);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    TEST_EQ_INT(sm->nproc_spans, 2); /* each its own range */
    TEST_EQ_INT(sm->proc_span_min_ns, 20000);
    TEST_EQ_INT(sm->proc_span_max_ns, 20000);
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_TOGETHER;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_TOGETHER);
    TEST_EQ_INT(sm->measure_t0, 100 * MS);         /* P2's first kernel */
    TEST_EQ_INT(sm->measure_t1, 100 * MS + 20000); /* P1's last */
    TEST_EQ_INT(sm->proc_span_min_ns, 20000);      /* both cut to the interval */
    TEST_EQ_INT(sm->proc_span_max_ns, 20000);
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_RANGE;
    o.measure_range = "nowhere";
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->measure, ANALYSIS_MEASURE_ALL);
    TEST_ASSERT(has_warning(a, "no NVTX range named 'nowhere' in the recording"));
    analysis_free(a);
    o.measure_range = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), ANALYSIS_EINVAL);
    store_run_free(run);
    return 0;
}

/* --measure together where the processes never all ran at once: a parent that only set up (the
 * seed's form: its check runs before its spawn workers exist) is left out, with a warning, and
 * the workers' time together measured; where no two ran at once, the whole recording, said. */
int test_analysis_measure_together_apart(void)
{
    store_run *run = store_run_new();
    store_idx s0 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s1 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 3, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s0, "k", 0, 10, 1000, 0);        /* the parent: 0-10 us, then nothing */
    synth_train(run, s1, "k", 100 * MS, 10, 1000, 0); /* worker 1 alone first: references */
    synth_train(run, s1, "k", 200 * MS, 10, 2000, 0); /* both workers: 200 ms to +20 us */
    synth_train(run, s2, "k", 200 * MS, 10, 2000, 0);
    synth_train(run, s2, "k", 300 * MS, 10, 1000, 0); /* worker 2 ends alone */
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis_options o;
    analysis_options_default(&o);
    o.measure = ANALYSIS_MEASURE_TOGETHER;
    analysis *a = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    const analysis_summary *sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_TOGETHER);
    TEST_EQ_INT(sm->measure_t0, 200 * MS);         /* worker 2's first kernel */
    TEST_EQ_INT(sm->measure_t1, 200 * MS + 20000); /* worker 1's last */
    TEST_NEAR(sm->predicted_gain, 2.0, 1e-9);      /* 20 us of 2-way slicing: 10 us */
    TEST_ASSERT(
        has_warning(a, "while 2 processes ran kernels together; 1 other (pid 1) ran its kernels "
                       "at other times (before or after) and is left out"));
    TEST_EQ_INT(sm->nproc_spans, 2); /* the parent's is outside the interval */
    analysis_free(a);
    store_run_free(run);

    /* one after another: nothing ran together */
    run = store_run_new();
    s0 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    s1 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s0, "k", 0, 10, 1000, 0);
    synth_train(run, s1, "k", 10000, 10, 1000, 0); /* starts as the first ends: touching only */
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_ALL);
    TEST_EQ_INT(sm->measure_t1 - sm->measure_t0, 20000);
    TEST_ASSERT(has_warning(a, "no two processes ran kernels at the same time"));
    analysis_free(a);
    store_run_free(run);

    /* one process: its own span, nothing to warn of */
    run = store_run_new();
    s0 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s0, "k", 0, 10, 1000, 500);
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_TOGETHER);
    TEST_EQ_INT(sm->measure_t1 - sm->measure_t0, 14500);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* The gains over a captured range (`--measure capture:NAME`, the capture table's rows of that
 * name in every process) and over a given time span (a report on --from/--to: the span cut to
 * the kernels' extent). */
int test_analysis_measure_capture_span(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s1, "k", 0, 10, 1000, 0);
    synth_train(run, s1, "k", 100 * MS, 10, 2000, 0); /* both: 2-way time-slicing */
    synth_train(run, s2, "k", 100 * MS, 10, 2000, 0);
    synth_train(run, s2, "k", 300 * MS, 10, 1000, 0);
    for (int p = 0; p < 2; p++) { /* "peak" in both processes, a little apart; an unnamed one */
        store_capture c = {
            100 * MS - p * 1000, 100 * MS + 20000 + p * 1000, p, "peak", "control", "control"};
        TEST_EQ_INT(store_run_add_capture(run, &c), 0);
    }
    store_capture other = {0, 400 * MS, 0, NULL, "start", "exit"};
    TEST_EQ_INT(store_run_add_capture(run, &other), 0);
    store_capture calm = {300 * MS, 400 * MS, 1, "calm", "control", "control"}; /* P2's tail */
    TEST_EQ_INT(store_run_add_capture(run, &calm), 0);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis_options o;
    analysis_options_default(&o);
    o.measure = ANALYSIS_MEASURE_CAPTURE;
    o.measure_range = "peak";
    analysis *a = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    const analysis_summary *sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_CAPTURE);
    TEST_EQ_STR(analysis_measure_name(sm->measure), "capture");
    TEST_EQ_INT(sm->measure_t0, 100 * MS - 1000); /* the first start to the last end */
    TEST_EQ_INT(sm->measure_t1, 100 * MS + 21000);
    /* 22 us of which 20 us 2-way slicing would take 10 us */
    TEST_NEAR(sm->predicted_gain, 22000.0 / 12000.0, 1e-9);
    TEST_EQ_INT(analysis_nwarnings(a), 0);
    /* each process's own "peak" (the unnamed range and "calm" are not taken) */
    TEST_EQ_INT(sm->nproc_spans, 2);
    TEST_EQ_INT(sm->proc_span_min_ns, 20000);
    TEST_EQ_INT(sm->proc_span_max_ns, 22000);
    analysis_free(a);
    /* nothing time-sliced in it: nothing to gain, however long the idle tail after the last
     * kernel, which stays what it was (2026-12-01: it was counted as saved, 10000x for nothing) */
    o.measure_range = "calm";
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure_t1, 400 * MS);
    TEST_NEAR(sm->predicted_gain, 1.0, 1e-12);
    TEST_NEAR(sm->predicted_gain_low, 1.0, 1e-12);
    analysis_free(a);
    o.measure_range = "nowhere";
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->measure, ANALYSIS_MEASURE_ALL);
    TEST_ASSERT(has_warning(a, "no capture range named 'nowhere' in the recording"));
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_SPAN; /* cut to the kernels: from -1 s to the last kernel */
    o.measure_t0 = -1000 * MS;
    o.measure_t1 = 100 * MS + 20000;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    sm = analysis_get_summary(a);
    TEST_EQ_INT(sm->measure, ANALYSIS_MEASURE_SPAN);
    TEST_EQ_STR(analysis_measure_name(sm->measure), "span");
    TEST_EQ_INT(sm->measure_t0, 0);
    TEST_EQ_INT(sm->measure_t1, 100 * MS + 20000);
    analysis_free(a);
    o.measure_t0 = 500 * MS; /* after the last kernel: nothing there, the whole recording */
    o.measure_t1 = 600 * MS;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->measure, ANALYSIS_MEASURE_ALL);
    analysis_free(a);
    o.measure_t1 = o.measure_t0;
    TEST_EQ_INT(analysis_run(run, &o, &a), ANALYSIS_EINVAL);
    o.measure = ANALYSIS_MEASURE_CAPTURE;
    o.measure_range = NULL;
    TEST_EQ_INT(analysis_run(run, &o, &a), ANALYSIS_EINVAL);
    store_run_free(run);
    return 0;
}

/* A one-block kernel of 448 ms alone per process, 8 processes without MPS started together and
 * no launch records, the way the H200 time-slices them (tests/gpu/RESULTS.md, 2026-12-02): the
 * first kernels start one slice (2.248 ms) apart, so the first runs alone for a slice; the
 * kernels end one slice apart, the last alone for its last slice. Side by side all eight would
 * take 448 ms: at best the stretch's ends fold (the staggered starts and ends taken as waiting
 * for a slice; the lone head and tail beside the others), and the best case is the longest
 * kernel's solo time. A head of three slices cannot be waiting for the others (they would have
 * had their turn by then, a module load included: two slices) and stays; a process whose first
 * kernel started 60 ms after its turn was launched late by its host, and the best case starts it
 * no earlier than its longest wait (two rounds of the others' slices) before it; full-GPU
 * kernels cannot run beside one another: one after
 * another, all the time they took (the stagger is the synthetic run's, not work) less the drains
 * of their last waves (analysis_calibration). */
int test_analysis_gain_stretch_ends(void)
{
    const int64_t solo = 448 * MS, slice = 2248000;
    for (int c = 0; c < 4; c++) {
        uint32_t blocks = c == 2 ? 132 * 8 : 1; /* full-GPU kernels: 8 of these blocks an SM */
        int64_t head = c == 1 ? 3 * slice : slice;
        int64_t late = c == 3 ? 60 * MS : 0; /* the last process's host launched 60 ms late */
        store_run *base = store_run_new(), *run = store_run_new();
        wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), blocks, 0, solo);
        store_run_finish(base);
        int64_t last = head + 6 * slice + 8 * solo; /* round robin: the last one's end */
        for (int p = 0; p < 8; p++)
            wide_kernel(run, synth_process(run, 10 + p, "h", "r", 0, NULL), blocks,
                        p ? head + (p - 1) * slice + (p == 7 ? late : 0) : 0,
                        last - (7 - p) * slice);
        analysis *a = analyse(run, base);
        TEST_ASSERT(a);
        const analysis_summary *sm = analysis_get_summary(a);
        TEST_EQ_INT(overlap_window(a, 0)->verdict, ANALYSIS_TIME_SLICED);
        double span = (double)last, gain = sm->predicted_gain;
        if (c == 0) {
            TEST_NEAR(gain, span / solo, 1e-9 * span / solo);
        } else if (c == 1) { /* only the head stays */
            TEST_NEAR(gain, span / (solo + head), 1e-9 * span / solo);
        } else if (c == 3) {
            /* its chain (from two rounds of 7 slices before its start, then 448 ms) ends after
             * every saving the fold could make: nothing folds (the full fold would say
             * span / solo, 8.04x), and the window's own best case stays, 7.92x (a bound looser
             * than that chain, 7.32x, as before: it does not know when kernels started) */
            TEST_ASSERT(gain < 7.95 && gain > 7.9);
        } else { /* one after another at best, less the last waves' drains */
            /* each kernel's drain counted for the share of its life beside others */
            double tail = fmin(210 + 0.0155 * solo, 0.029 * solo);
            double d0 = (double)(last - 7 * slice), d7 = (double)(last - head - 6 * slice);
            double drains = tail * (8 - head / d0 - slice / d7);
            /* to the window's coverage, a float */
            TEST_NEAR(gain, span / (8 * solo - drains), 1e-7 * span / solo);
        }
        TEST_ASSERT(sm->predicted_gain_low <= gain);
        analysis_free(a);
        store_run_free(run);
        store_run_free(base);
    }
    return 0;
}

/* The predicted gain is an interval. One-thread kernels of 8 processes fit the GPU together:
 * at best 8x, at worst as slow as the H200's MPS clients ever ran side by side at 8 (2.58x);
 * at 4 clients no slowdown was ever measured, so the interval closes. Microsecond kernels pay
 * the MPS launch cost (877 ns on the H200) at worst: MPS may lose. */
int test_analysis_gain_interval(void)
{
    store_run *base = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), 1, 0, 1000000);
    store_run_finish(base);
    for (int n = 4; n <= 8; n += 4) {
        store_run *run = store_run_new();
        for (int p = 0; p < n; p++)
            wide_kernel(run, synth_process(run, 10 + p, "h", "r", 0, NULL), 1, 0, n * 1000000);
        analysis *a = analyse(run, base);
        TEST_ASSERT(a);
        const analysis_summary *sm = analysis_get_summary(a);
        TEST_NEAR(sm->predicted_gain, n, 1e-6);
        double worst = n * 1e6 / (1e6 * (n == 8 ? 2.58 : 1.0) + n * 877.0);
        TEST_NEAR(sm->predicted_gain_low, worst, 1e-6);
        const analysis_window *w = overlap_window(a, 0);
        TEST_EQ_INT(w->mps_best_ns, 1000000);
        TEST_EQ_INT(w->mps_worst_ns, (int64_t)(1e6 * (n == 8 ? 2.58 : 1.0) + n * 877.0));
        analysis_free(a);
        store_run_free(run);
    }
    store_run_free(base);
    /* 1 us kernels, 2 processes: side by side 1 us plus 2 launches at 877 ns > 2 us sliced */
    base = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), 1, 0, 1000);
    store_run_finish(base);
    store_run *run = store_run_new();
    for (int p = 0; p < 2; p++)
        wide_kernel(run, synth_process(run, 10 + p, "h", "r", 0, NULL), 1, 0, 2000);
    analysis *a = analyse(run, base);
    TEST_ASSERT(a);
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, 2.0, 1e-6);
    TEST_NEAR(analysis_get_summary(a)->predicted_gain_low, 2000.0 / (1000 + 2 * 877.0), 1e-6);
    analysis_free(a);
    store_run_free(run);
    store_run_free(base);
    return 0;
}

/* At worst, kernels fit the GPU together only on SMs of their own: blocks that share an SM slow
 * each other (the GEMMs of BERT at batch 8, 96 blocks each: by block slots two fit 18% of the GPU,
 * but MPS gained 1.32x of 2). Two processes, kernels of 1 us alone and 2 us sliced: 66 blocks each
 * (half the 132 SMs) run side by side at worst; 96 blocks each, one after the other, though both
 * fill only 9% of the block slots. */
int test_analysis_gain_worst_sms(void)
{
    for (uint32_t blocks = 66; blocks <= 96; blocks += 30) {
        store_run *base, *run;
        sliced_blocks(blocks, 2, &base, &run);
        analysis *a = analyse(run, base);
        TEST_ASSERT(a);
        const analysis_window *w = overlap_window(a, 0);
        TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
        TEST_EQ_INT(w->mps_best_ns, 1000);
        TEST_EQ_INT(w->mps_worst_ns, (blocks == 66 ? 1000 : 2000) + 2 * 877);
        analysis_free(a);
        store_run_free(run);
        store_run_free(base);
    }
    return 0;
}

/* At worst, kernels that do not fit the GPU together run side by side as poorly as MPS clients
 * were ever measured to (analysis_calibration packing: 0.794 at 8 clients, GPT-2 in float16;
 * convnext_tiny at N = 8, held out, gained 1.065x where one after another at solo speed said at
 * least 1.126x; 0.988 at 4, convnext_tiny beside BERT), and 2 clients one after another at solo
 * speed. Kernels of a full wave, 1 us alone, time-sliced by 4 and by 8 processes. */
int test_analysis_gain_worst_packing(void)
{
    for (int n = 4; n <= 8; n += 4) {
        store_run *base, *run;
        sliced_blocks(132 * 8, n, &base, &run);
        analysis *a = analyse(run, base);
        TEST_ASSERT(a);
        const analysis_window *w = overlap_window(a, 0);
        TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
        double work = n * 1000.0 / (n == 8 ? 0.794 : 0.988);
        TEST_EQ_INT(w->mps_worst_ns, (int64_t)(work + n * 877.0));
        analysis_free(a);
        store_run_free(run);
        store_run_free(base);
    }
    return 0;
}

/* Contexts without MPS whose kernels each fit a time slice take turns without overlapping: the
 * GPU goes idle after one context's kernel and starts the other's a context switch later (H200:
 * 143 us). Each change between two plain share groups within 1 ms is a context switch; the same
 * under MPS, within one process, after a longer gap, or while another kernel is in flight is not.
 * Before 2026-12-01 such a run read "no overlap between contexts" with nothing more. */
int test_analysis_context_switches(void)
{
    static const struct {
        int mps;                /* SYNTH_* of both processes */
        int64_t gap;            /* between a kernel's end and the next one's start */
        int one_process;        /* the second "process" is a stream of the first one's context */
        uint64_t want_switches; /* of 20 kernels alternating */
    } cases[] = {
        {SYNTH_PLAIN, 143000, 0, 19},
        {SYNTH_PLAIN, 1000000, 0, 19},
        {SYNTH_PLAIN, 1000001, 0, 0},
        {SYNTH_MPS, 143000, 0, 0},
        {SYNTH_PLAIN, 143000, 1, 0},
        /* files that do not say: gaps the size of a switch, every one of 19 turns: the timing's
         * signature of time-slicing counts them (0 before 2026-12-08); a gap of 1 ms is no
         * switch's size, so it says nothing */
        {SYNTH_UNKNOWN, 143000, 0, 19},
        {SYNTH_UNKNOWN, 1000000, 0, 0},
        {SYNTH_PLAIN, -1000, 0, 0}, /* overlapping by 1 us: a window, not a switch */
        {SYNTH_PLAIN, 999, 0, 0},   /* under 1 us: no switch a GPU can make */
        {SYNTH_PLAIN, 1000, 0, 19},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        store_run *run = store_run_new();
        TEST_ASSERT(run);
        store_idx s[2];
        s[0] = synth_process(run, 100, NULL, NULL, cases[c].mps, NULL);
        s[1] = cases[c].one_process ? store_run_stream(run, run->streams[s[0]].context, 99)
                                    : synth_process(run, 101, NULL, NULL, cases[c].mps, NULL);
        int64_t t = 1000000;
        for (int i = 0; i < 20; i++) {
            TEST_EQ_INT(synth_kernel(run, s[i % 2], "k", t, t + 50000), 0);
            t += 50000 + cases[c].gap;
        }
        analysis *a = analyse(run, NULL);
        TEST_ASSERT(a);
        const analysis_device *d = analysis_get_device(a, 0);
        if (d->switches != cases[c].want_switches)
            fprintf(stderr, "case %zu: %llu switches, want %llu\n", c,
                    (unsigned long long)d->switches, (unsigned long long)cases[c].want_switches);
        TEST_EQ_INT(d->switches, cases[c].want_switches);
        TEST_EQ_INT(d->switch_gap_ns, (int64_t)cases[c].want_switches * cases[c].gap);
        /* two or more switches and no overlap: the contexts took turns, time-sliced */
        if (cases[c].gap > 0)
            TEST_EQ_INT(d->verdict,
                        cases[c].want_switches >= 2 ? ANALYSIS_TIME_SLICED : ANALYSIS_SOLO);
        if (cases[c].want_switches >= 2)
            TEST_EQ_INT(d->by_verdict[ANALYSIS_TIME_SLICED].rule, cases[c].mps == SYNTH_UNKNOWN
                                                                      ? ANALYSIS_RULE_SWITCH_TURNS
                                                                      : ANALYSIS_RULE_TOOK_TURNS);
        /* a switch's gap is not the processes' idle time: the other gaps are */
        int64_t idle = cases[c].want_switches || cases[c].gap < 0 ? 0 : 19 * cases[c].gap;
        TEST_EQ_INT(d->idle_in_ns, idle);
        TEST_EQ_INT(analysis_get_summary(a)->idle_in_ns, idle);
        /* 19 gaps of 999 ns idle 1.9% of the run: under the host-paced share */
        int64_t span = 20 * 50000 + 19 * cases[c].gap;
        TEST_EQ_INT(analysis_get_summary(a)->host_paced,
                    (double)idle / (double)span >= ANALYSIS_HOST_PACED_IDLE);
        analysis_free(a);
        store_run_free(run);
    }
    return 0;
}

/* Two processes whose files do not say whether MPS was on, each kernel alone first at `solo` ns
 * (the references), then from 10 ms n kernels each of `dur` ns back to back on A, B's starting
 * `lag` ns after A's each time. */
static store_run *lagged_pair(int64_t solo, int64_t dur, int64_t lag, int n)
{
    store_run *run = store_run_new();
    store_idx a = synth_process(run, 301, "h", "r", SYNTH_UNKNOWN, NULL);
    store_idx b = synth_process(run, 302, "h", "r", SYNTH_UNKNOWN, NULL);
    synth_kernel(run, a, "k", 0, solo);
    synth_kernel(run, b, "k", 5 * MS, 5 * MS + solo);
    for (int i = 0; i < n; i++) {
        int64_t t = 10 * MS + i * dur;
        synth_kernel(run, a, "k", t, t + dur);
        synth_kernel(run, b, "k", t + lag, t + lag + dur);
    }
    return run;
}

/* Where the files do not say whether MPS was on, one kernel's work at a time (parallelism 1,
 * stretch 2) is time-slicing or MPS clients each filling the GPU; the turns tell them apart
 * (analysis/README.md, "When the file does not say"). Until 2026-12-08 rule one-at-a-time called
 * every such window TIME-SLICED. */
int test_analysis_signature(void)
{
    /* B's kernels start a whole time slice (2.25 ms) after A's, each turn a slice long: the
     * signature of time-slicing (rule switch-turns) */
    store_run *run = lagged_pair(2250000, 4500000, 2250000, 8);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    /* overlapped 12.25-46 ms; A's first and B's last kernel did their work alone */
    TEST_NEAR(w->parallelism, 14 * 2.25 / 33.75, 1e-6);
    TEST_NEAR(w->stretch, 2 * 33.75 / (14 * 2.25), 1e-6);
    TEST_EQ_INT(w->turns, 15);
    TEST_EQ_INT(w->quick_turns, 0);
    TEST_EQ_INT(w->switch_turns, 15);
    TEST_EQ_INT(analysis_window_signature(w, NULL), ANALYSIS_SIG_SWITCHED);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_SWITCH_TURNS);
    TEST_EQ_INT(w->physics, ANALYSIS_PHYS_UNKNOWN);
    analysis_free(a);
    store_run_free(run);

    /* B's kernels start 50 us after A's: a change of context quicker than any switch (the H200's
     * takes 135-143 us), 8 of 15 turns: not time-sliced, contended (rule quick-turns) */
    run = lagged_pair(2250000, 4500000, 50000, 8);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    w = overlap_window(a, 0);
    TEST_NEAR(w->parallelism, 1.0, 0.02);
    TEST_EQ_INT(w->turns, 15);
    TEST_EQ_INT(w->quick_turns, 8);
    TEST_EQ_INT(w->switch_turns, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONTENDED);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_QUICK_TURNS);
    analysis_free(a);
    store_run_free(run);

    /* B's kernels start 0.5 ms after A's: turns of 0.5 and 4 ms, neither quicker than a switch
     * nor ended by one, nor a slice long: undecided (UNKNOWN, rule one-at-a-time) */
    run = lagged_pair(2250000, 4500000, 500000, 8);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    w = overlap_window(a, 0);
    TEST_EQ_INT(w->turns, 15);
    TEST_EQ_INT(w->quick_turns, 0);
    TEST_EQ_INT(w->switch_turns, 0);
    TEST_EQ_INT(analysis_window_signature(w, NULL), ANALYSIS_SIG_NONE);
    TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_ONE_AT_A_TIME);
    TEST_EQ_INT(analysis_get_device(a, 0)->verdict, ANALYSIS_UNKNOWN);
    analysis_free(a);
    store_run_free(run);

    /* turns of both kinds (clock error between files, or chance): no signature */
    analysis_window x = {0};
    x.turns = 20;
    x.quick_turns = 5;
    x.switch_turns = 10;
    TEST_EQ_INT(analysis_window_signature(&x, NULL), ANALYSIS_SIG_NONE);
    x.quick_turns = 0; /* 10 of 20 marked, none quick */
    TEST_EQ_INT(analysis_window_signature(&x, NULL), ANALYSIS_SIG_SWITCHED);
    x.switch_turns = 9;
    TEST_EQ_INT(analysis_window_signature(&x, NULL), ANALYSIS_SIG_NONE);
    x.quick_turns = 2; /* 2 of 20 quick: 10%, but fewer than ANALYSIS_SIGNATURE_MIN_TURNS */
    x.switch_turns = 0;
    TEST_EQ_INT(analysis_window_signature(&x, NULL), ANALYSIS_SIG_NONE);
    x.quick_turns = 3;
    TEST_EQ_INT(analysis_window_signature(&x, NULL), ANALYSIS_SIG_QUICK);

    /* no overlap, handovers within 5 us (MPS clients taking turns): no switch, nothing judged */
    run = store_run_new();
    store_idx s[2] = {synth_process(run, 100, NULL, NULL, SYNTH_UNKNOWN, NULL),
                      synth_process(run, 101, NULL, NULL, SYNTH_UNKNOWN, NULL)};
    for (int i = 0; i < 20; i++)
        synth_kernel(run, s[i % 2], "k", i * 55000, i * 55000 + 50000);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->verdict, ANALYSIS_SOLO);
    TEST_EQ_INT(d->switches, 0);
    TEST_EQ_INT(d->turns, 19);
    TEST_EQ_INT(d->quick_turns, 19);
    TEST_EQ_INT(d->quick_handovers, 19); /* each start 5 us after the other's end */
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Two processes whose files say `mps` (SYNTH_*), 5 ms kernels one at a time, the GPU handed from
 * one to the other `gap` ns before the previous kernel's end (the next kernel's start overlapping
 * its drain) and, every other time, `gap` ns after it: every kernel overlapped, so none is a solo
 * reference. */
static store_run *handed_over(int64_t gap, int n, int mps)
{
    store_run *run = store_run_new();
    store_idx s[2] = {synth_process(run, 401, "h", "r", mps, NULL),
                      synth_process(run, 402, "h", "r", mps, NULL)};
    int64_t t = 0;
    for (int i = 0; i < n; i++) {
        synth_kernel(run, s[i % 2], "k", t, t + 5 * MS);
        t += 5 * MS + (i % 2 ? gap : -gap);
    }
    return run;
}

/* MPS clients that each fill the GPU run one at a time, and the GPU goes from one to the next
 * within microseconds (tests/verdicts/kineto-gemm-n*-mps-on): their turns are long (not quick
 * turns), their gaps no switch's, so no window's own turns decide; but time-slicing puts a
 * context switch (135 us or more) between two contexts' work, so the device's quick handovers
 * say not time-sliced (rule quick-handovers). Until 2026-12-07 such windows read UNKNOWN. */
int test_analysis_quick_handovers(void)
{
    store_run *run =
        handed_over(2000, 8, SYNTH_UNKNOWN); /* 2 us: 7 handovers, 4 overlapping by 2 us */
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->quick_handovers, 7);
    TEST_EQ_INT(d->turns, 7);
    TEST_EQ_INT(d->quick_turns, 0);
    TEST_EQ_INT(d->switch_turns, 0);
    for (int i = 0; i < 4; i++) {
        const analysis_window *w = overlap_window(a, i);
        TEST_ASSERT(w);
        TEST_EQ_INT(w->physics, ANALYSIS_PHYS_UNKNOWN);
        TEST_EQ_INT(analysis_window_signature(w, NULL), ANALYSIS_SIG_NONE);
        TEST_EQ_INT(w->rule, ANALYSIS_RULE_QUICK_HANDOVERS);
        TEST_ASSERT(w->verdict == ANALYSIS_CONCURRENT || w->verdict == ANALYSIS_QUEUED ||
                    w->verdict == ANALYSIS_CONTENDED);
    }
    TEST_ASSERT(!overlap_window(a, 4));
    TEST_ASSERT(d->verdict != ANALYSIS_TIME_SLICED && d->verdict != ANALYSIS_UNKNOWN);
    TEST_EQ_INT(d->by_verdict[d->verdict].rule, ANALYSIS_RULE_QUICK_HANDOVERS);
    analysis_free(a);
    store_run_free(run);

    /* 150 us: a context switch's gap, which time-slicing leaves: no quick handover, never MPS */
    run = handed_over(150000, 8, SYNTH_UNKNOWN);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->quick_handovers, 0);
    TEST_EQ_INT(d->switch_turns, 3); /* the idle handovers */
    for (int i = 0; i < 4; i++) {
        const analysis_window *w = overlap_window(a, i);
        TEST_ASSERT(w);
        TEST_ASSERT(w->verdict == ANALYSIS_UNKNOWN || w->verdict == ANALYSIS_TIME_SLICED);
        TEST_ASSERT(w->rule != ANALYSIS_RULE_QUICK_HANDOVERS);
    }
    TEST_ASSERT(d->verdict == ANALYSIS_UNKNOWN || d->verdict == ANALYSIS_TIME_SLICED);
    analysis_free(a);
    store_run_free(run);

    /* 2 us, but the files say the contexts were plain CUDA: physics decides, time-sliced (the
     * timing is not read where the files say; such handovers come of clocks that disagree) */
    run = handed_over(2000, 8, SYNTH_PLAIN);
    a = analyse(run, NULL);
    TEST_ASSERT(a);
    d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->quick_handovers, 0);
    TEST_EQ_INT(d->verdict, ANALYSIS_TIME_SLICED);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Time-slicing runs one share group at a time, but a group may run several kernels at once (its
 * streams, green contexts beside their parent): its solo work per unit of overlap is bounded by
 * the kernels one group holds (group_kernels), not by 1. Two streams of A beside B's one kernel,
 * each 2 ms for 1 ms of work: parallelism 1.5, which with the bound of 1 read as side by side
 * (CONTENDED, rule parallel-slow) where the files do not say: tests/verdicts/green-proc-mps-off
 * and streams-procs-mps-off, read as if they did not say, were judged so before 2026-12-08. */
int test_analysis_parallelism_bound(void)
{
    store_run *run = store_run_new();
    store_idx a1 = synth_process(run, 100, NULL, NULL, SYNTH_UNKNOWN, NULL);
    store_idx a2 = store_run_stream(run, run->streams[a1].context, 99);
    store_idx b = synth_process(run, 101, NULL, NULL, SYNTH_UNKNOWN, NULL);
    synth_kernel(run, a1, "k", 0, MS); /* the solo references: 1 ms */
    synth_kernel(run, b, "k", 2 * MS, 3 * MS);
    synth_kernel(run, a1, "k", 10 * MS, 12 * MS);
    synth_kernel(run, a2, "k", 10 * MS, 12 * MS);
    synth_kernel(run, b, "k", 10 * MS, 12 * MS);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    TEST_NEAR(w->parallelism, 1.5, 1e-6);
    TEST_NEAR(w->group_kernels, 2.0, 1e-6);
    TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
    TEST_EQ_INT(w->rule, ANALYSIS_RULE_ONE_AT_A_TIME);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* A kernel overlapped in many windows progresses at its average rate in each: beside another
 * context's short burst it reads as side by side though it may have been paused there. The rate
 * rules decide only where the window's own kernels did most of its work (own_share >= 0.8).
 * A's 100 ms kernel (95 ms of work alone) beside ten of B's 1 ms kernels at solo speed, 2 ms
 * apart: 5 ms of A's work over its 10 ms overlapped, so each window reads parallelism 1.5, which
 * tests/verdicts/uneven-mps-off (a 450 ms kernel beside a train of short ones), read as if its
 * files did not say, was judged side by side for (14 windows CONTENDED before 2026-12-08). */
int test_analysis_own_share(void)
{
    store_run *run = store_run_new();
    store_idx a = synth_process(run, 100, NULL, NULL, SYNTH_UNKNOWN, NULL);
    store_idx b = synth_process(run, 101, NULL, NULL, SYNTH_UNKNOWN, NULL);
    synth_kernel(run, a, "long", 0, 95 * MS); /* the references */
    synth_kernel(run, b, "short", 100 * MS, 101 * MS);
    synth_kernel(run, a, "long", 200 * MS, 300 * MS);
    for (int i = 0; i < 10; i++)
        synth_kernel(run, b, "short", 210 * MS + i * 3 * MS, 211 * MS + i * 3 * MS);
    analysis *an = analyse(run, NULL);
    TEST_ASSERT(an);
    for (int i = 0; i < 10; i++) {
        const analysis_window *w = overlap_window(an, i);
        TEST_ASSERT(w);
        TEST_NEAR(w->parallelism, 1.5, 1e-6);
        TEST_NEAR(w->own_share, 1.0 / 1.5, 1e-6); /* B's work; A's is averaged over ten */
        TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
        TEST_EQ_INT(w->rule, ANALYSIS_RULE_ONE_AT_A_TIME);
    }
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* A kernel `name` of `grid` blocks of 256 threads (8 to an SM) on `stream` over [start, end). */
static int grid_kernel(store_run *run, store_idx stream, const char *name, uint32_t grid,
                       int64_t start, int64_t end)
{
    store_launch l;
    memset(&l, 0, sizeof l);
    l.name = store_run_intern(run, name);
    l.grid[0] = grid;
    l.grid[1] = l.grid[2] = l.block[1] = l.block[2] = 1;
    l.block[0] = 256;
    store_kernel k = {start, end, stream, store_run_launch(run, &l), 0, 0};
    return store_run_add_kernel(run, &k);
}

/* Two MPS clients at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 on the H200 (tests/verdicts/mps-pct50):
 * each shown 66 of the 132 SMs, a kernel of 4224 blocks (8 waves there) alone, then both at
 * once at 1.05x. */
static store_run *half_clients(void)
{
    store_run *run = store_run_new();
    store_idx s[2];
    for (int p = 0; p < 2; p++) {
        s[p] = synth_process(run, 1757 + p, "h", "r", SYNTH_MPS, NULL);
        store_context *c = &run->contexts[run->streams[s[p]].context];
        c->thread_pct = 50;
        c->sm_count = 66;
    }
    run->devices[0].sm_count = 66; /* every process was shown its partition */
    grid_kernel(run, s[0], "fill", 4224, 0, 8 * MS);
    grid_kernel(run, s[1], "fill", 4224, 10 * MS, 18 * MS);
    grid_kernel(run, s[0], "fill", 4224, 20 * MS, 20 * MS + 8400000);
    grid_kernel(run, s[1], "fill", 4224, 20 * MS, 20 * MS + 8400000);
    return run;
}

/* MPS clients limited by an active thread percentage, and green contexts, run side by side on
 * a share of the SMs each: true inside the partition, and what the partition costs against the
 * whole GPU is a figure of its own (issue 30): kernels that filled their 66 SMs 8 times fill the
 * whole GPU's 132 only 4 times, 2x. The whole GPU is inferred where every process was shown its
 * partition (66 at 50%: 132). Before 2026-12-08 nothing said a partition was there. */
int test_analysis_partitions(void)
{
    store_run *run = half_clients();
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_device_sms(a, 0), 132);
    TEST_EQ_INT(analysis_context_sms(a, 0), 66);
    TEST_EQ_INT(analysis_context_sms(a, 1), 66);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONCURRENT); /* 1.05x in the partition */
    TEST_NEAR(w->stretch, 1.05, 1e-6);
    TEST_NEAR(w->partition_share, 1.0, 1e-6);
    TEST_NEAR(w->partition_slowdown, 2.0, 1e-6);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_NEAR(d->by_verdict[ANALYSIS_CONCURRENT].partition_slowdown, 2.0, 1e-6);
    analysis_free(a);

    /* a whole-GPU baseline: the client's grid was sized for 66 SMs, the unlimited run's for
     * 132 (8448 blocks, 8 waves, 8 ms): taken as the same kernel, its reference as is; a run
     * whose grid does not depend on the SMs (4224 blocks, 4 waves on 132 SMs, 4 ms): its
     * reference twice as long in the partition; neither: none, and a warning says why */
    static const struct {
        const char *name;
        uint32_t grid;
        int64_t dur;
        double want; /* the reference in the partition, ns; 0: none */
    } bases[] = {{"fill", 8448, 8 * MS, 8e6}, {"fill", 4224, 4 * MS, 8e6}, {"other", 8448, MS, 0}};
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        store_run *base = store_run_new();
        store_idx bs = synth_process(base, 851, "h", "base", SYNTH_PLAIN, NULL);
        grid_kernel(base, bs, bases[b].name, bases[b].grid, 0, bases[b].dur);
        TEST_EQ_INT(store_run_finish(base), 0);
        a = analyse(run, base);
        TEST_ASSERT(a);
        const analysis_signature *sg = analysis_get_signature(a, 0);
        if (bases[b].want > 0) {
            TEST_EQ_INT(sg->source, ANALYSIS_REF_BASELINE);
            TEST_NEAR(sg->reference_ns, bases[b].want, 1e-6);
            TEST_NEAR(overlap_window(a, 0)->stretch, 1.05, 1e-6);
            TEST_EQ_INT(analysis_nwarnings(a), 0);
        } else {
            TEST_ASSERT(has_warning(a, "1 kernel signature of contexts in SM partitions has no "
                                       "reference in the baseline"));
        }
        analysis_free(a);
        store_run_free(base);
    }
    store_run_free(run);
    return 0;
}

/* Bursts of turns apart by the processes' own idle time are took-turns windows apart: a window
 * never bridges an idle stretch longer than a switch can explain (ANALYSIS_SWITCH_GAP_NS), so the
 * time by verdict counts the idle between bursts as quiet time, not as time-sliced. Until
 * 2026-12-08 the window ran from the first switch to the last: tests/verdicts/kineto-mps-off
 * (--assume-mps off) counted 1.76 s, 100% of the run, as time-sliced while the GPU was busy
 * 22.7 ms. Two plain processes, three bursts of 6 kernels of 50 us alternating with 143 us switch
 * gaps, 200 ms apart; a lone switch after a 2 ms pause stays in the quiet time. */
int test_analysis_took_turns_bursts(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_idx s[2] = {synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL),
                      synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL)};
    int64_t burst[3] = {0, 200 * MS, 400 * MS};
    for (int b = 0; b < 3; b++) {
        int64_t t = burst[b];
        for (int i = 0; i < 6; i++, t += 50000 + 143000)
            TEST_EQ_INT(synth_kernel(run, s[i % 2], "k", t, t + 50000), 0);
    }
    /* a pause of 2 ms, then one switch: a cluster of one, no window of its own */
    TEST_EQ_INT(synth_kernel(run, s[0], "k", 403 * MS, 403 * MS + 50000), 0);
    TEST_EQ_INT(synth_kernel(run, s[1], "k", 403 * MS + 193000, 403 * MS + 243000), 0);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_device *d = analysis_get_device(a, 0);
    TEST_EQ_INT(d->switches, 16);
    TEST_EQ_INT(d->verdict, ANALYSIS_TIME_SLICED);
    const analysis_verdict_time *ts = &d->by_verdict[ANALYSIS_TIME_SLICED];
    TEST_EQ_INT(ts->nwindows, 3);
    TEST_EQ_INT(ts->rule, ANALYSIS_RULE_TOOK_TURNS);
    /* each window: from the first switch's gap (50 us into the burst) to the last switch's kernel
     * (5 x 193 us into it): 5 switches, 4 x 193 + 143 us long */
    TEST_EQ_INT(ts->ns, 3 * (4 * 193000 + 143000));
    const analysis_window *w = analysis_windows(a);
    int seen = 0;
    for (uint64_t i = 0; i < analysis_nwindows(a); i++) {
        if (w[i].verdict == ANALYSIS_TIME_SLICED) {
            TEST_EQ_INT(w[i].t0, burst[seen] + 50000);
            TEST_EQ_INT(w[i].switches, 5);
            seen++;
        }
    }
    TEST_EQ_INT(seen, 3);
    TEST_EQ_INT(d->by_verdict[ANALYSIS_SOLO].ns, (d->t_end - d->t_begin) - ts->ns);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* The GPU's idle time inside the measured interval (idle_in_ns): kernels side by side counted
 * once, kernels and gaps outside the interval left out, idle before the interval's first kernel
 * counted; host-paced from an idle share of ANALYSIS_HOST_PACED_IDLE (2%) on. */
int test_analysis_idle_in(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_idx a0 = synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL);
    store_idx b0 = synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL);
    TEST_EQ_INT(synth_kernel(run, a0, "k", 0, 10 * MS), 0);
    TEST_EQ_INT(synth_kernel(run, b0, "k", 5 * MS, 15 * MS), 0); /* side by side: once */
    TEST_EQ_INT(synth_kernel(run, a0, "k", 20 * MS, 30 * MS), 0);
    TEST_EQ_INT(synth_kernel(run, b0, "k", 40 * MS, 50 * MS), 0);
    analysis_options o;
    analysis_options_default(&o);
    analysis *a = NULL;
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, &o, &a), 0); /* 0-50 ms: idle 15-20 and 30-40 */
    TEST_EQ_INT(analysis_get_device(a, 0)->idle_in_ns, 15 * MS);
    TEST_NEAR(analysis_get_summary(a)->idle_share, 15.0 / 50.0, 1e-12);
    TEST_EQ_INT(analysis_get_summary(a)->host_paced, 1);
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_SPAN; /* 2-25 ms: busy 2-15 and 20-25 */
    o.measure_t0 = 2 * MS;
    o.measure_t1 = 25 * MS;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->idle_in_ns, 5 * MS);
    TEST_NEAR(analysis_get_summary(a)->idle_share, 5.0 / 23.0, 1e-12);
    analysis_free(a);
    o.measure_t0 = 16 * MS; /* 16-22 ms: idle from the interval's start to the kernel at 20 */
    o.measure_t1 = 22 * MS;
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->idle_in_ns, 4 * MS);
    analysis_free(a);
    o.measure = ANALYSIS_MEASURE_TOGETHER; /* 5-30 ms (known after the kernel walk): idle 15-20 */
    TEST_EQ_INT(analysis_run(run, &o, &a), 0);
    TEST_EQ_INT(analysis_get_summary(a)->measure_t0, 5 * MS);
    TEST_EQ_INT(analysis_get_summary(a)->measure_t1, 30 * MS);
    TEST_EQ_INT(analysis_get_summary(a)->idle_in_ns, 5 * MS);
    analysis_free(a);
    store_run_free(run);
    /* the threshold: a gap of 2 ms in 100 ms is host-paced, one of 1.999 ms not */
    for (int c = 0; c < 2; c++) {
        int64_t gap = c ? 2 * MS : 2 * MS - 1000;
        run = store_run_new();
        TEST_ASSERT(run);
        a0 = synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL);
        b0 = synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL);
        TEST_EQ_INT(synth_kernel(run, a0, "k", 0, 50 * MS - gap), 0);
        TEST_EQ_INT(synth_kernel(run, b0, "k", 50 * MS, 100 * MS), 0);
        a = analyse(run, NULL);
        TEST_ASSERT(a);
        TEST_EQ_INT(analysis_get_summary(a)->idle_in_ns, gap);
        TEST_EQ_INT(analysis_get_summary(a)->host_paced, c);
        analysis_free(a);
        store_run_free(run);
    }
    return 0;
}

/* A run of two processes (MPS state `mps`, SYNTH_*): A's kernel [0, 10 ms) launched at 0, B's
 * [10, 20 ms) launched (its call returned) at `b_ret`; `api` 0 leaves the launch records out.
 * B's kernel 2, launched at 0.2 ms, waits for B's first on its stream, not for the GPU. */
static store_run *waiting_run(int mps, int64_t b_ret, int api)
{
    store_run *run = store_run_new();
    if (!run)
        return NULL;
    store_idx a0 = synth_process(run, 100, NULL, NULL, mps, NULL);
    store_idx b0 = synth_process(run, 101, NULL, NULL, mps, NULL);
    int rc = api ? synth_launched(run, a0, "k", 1, 0, 0, 10 * MS) +
                       synth_launched(run, b0, "k", 1, b_ret, 10 * MS, 20 * MS) +
                       synth_launched(run, b0, "k", 2, MS / 5, 20 * MS, 30 * MS)
                 : synth_kernel(run, a0, "k", 0, 10 * MS) +
                       synth_kernel(run, b0, "k", 10 * MS, 20 * MS) +
                       synth_kernel(run, b0, "k", 20 * MS, 30 * MS);
    if (rc || store_run_finish(run)) {
        store_run_free(run);
        return NULL;
    }
    return run;
}

/* Kernels waiting behind another context's time slice (waiting_ns, analysis/README.md, Gains):
 * from a launch's return (plus the 3 us launch latency) to the start, while one other context,
 * that cannot share the GPU with it, ran alone; at best that time runs side by side. */
int test_analysis_waiting(void)
{
    struct {
        int mps, api;
        int64_t b_ret, want;
        const char *what;
    } cases[] = {
        {SYNTH_PLAIN, 1, MS / 10, 10 * MS - MS / 10 - 3000, "B waits behind A's slice"},
        {SYNTH_PLAIN, 0, MS / 10, 0, "no launch records: nothing to see"},
        {SYNTH_PLAIN, 1, 10 * MS, 0, "B launched when A ended: no wait"},
        {SYNTH_PLAIN, 1, 10 * MS - 2999, 0, "within the launch latency: no wait"},
        {SYNTH_PLAIN, 1, 10 * MS - 3001, 1, "just past the launch latency"},
        {SYNTH_MPS, 1, MS / 10, 0, "MPS clients share the GPU: their waits are no time slice"},
        {SYNTH_UNKNOWN, 1, MS / 10, 0, "MPS state unknown: no time slice known"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        store_run *run = waiting_run(cases[c].mps, cases[c].b_ret, cases[c].api);
        TEST_ASSERT(run);
        analysis *a = analyse(run, NULL);
        TEST_ASSERT(a);
        const analysis_device *d = analysis_get_device(a, 0);
        TEST_EQ_INT(d->waiting_ns, cases[c].want);
        int64_t in_windows = 0;
        for (uint64_t w = 0; w < d->nwindows; w++)
            in_windows += analysis_windows(a)[d->first_window + w].waiting_ns;
        TEST_EQ_INT(in_windows, cases[c].want);
        if (c == 0) {
            /* A's 9.897 ms with B waiting run at best as one of two side by side (its kernel of
             * one thread holds no measurable share of the SMs): 30 ms become
             * 30 - 9.897 + 9.897 / 2 ms; at worst nothing is saved */
            double waited = (double)cases[c].want;
            TEST_NEAR(analysis_get_summary(a)->predicted_gain, 30.0 * MS / (30.0 * MS - waited / 2),
                      1e-4);
            TEST_NEAR(analysis_get_summary(a)->predicted_gain_low, 1.0, 1e-12);
        } else if (!cases[c].want) {
            TEST_NEAR(analysis_get_summary(a)->predicted_gain, 1.0, 1e-12);
        }
        analysis_free(a);
        analysis_options o;
        analysis_options_default(&o);
        o.assume_mps = 1; /* files that do not say: taken as plain contexts, which wait */
        if (cases[c].mps == SYNTH_UNKNOWN) {
            TEST_EQ_INT(analysis_run(run, &o, &a), 0);
            TEST_EQ_INT(analysis_get_device(a, 0)->waiting_ns, 10 * MS - MS / 10 - 3000);
            analysis_free(a);
        }
        store_run_free(run);
    }
    return 0;
}

/* Idle gaps between one context's kernels in its slice while another's kernel waited: at best the
 * waiting kernel fills them; a gap that ends with the waiting context's kernel is a context
 * switch's, saved once (as a switch), not twice. (Each process its own kernel name, so that each
 * kernel is its own solo reference and runs at rate 1.) */
int test_analysis_waiting_gaps(void)
{
    for (int sw = 0; sw < 2; sw++) {
        store_run *run = store_run_new();
        TEST_ASSERT(run);
        store_idx a0 = synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL);
        store_idx b0 = synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL);
        int64_t end;
        if (!sw) { /* A 0-5 ms, its gap of 0.1 ms, A 5.1-10 ms; B launched at 0.1 ms, 10-20 ms */
            TEST_EQ_INT(synth_launched(run, a0, "ka", 1, 0, 0, 5 * MS), 0);
            TEST_EQ_INT(synth_launched(run, a0, "ka", 2, MS / 100, 5 * MS + MS / 10, 10 * MS), 0);
            TEST_EQ_INT(synth_launched(run, b0, "kb", 1, MS / 10, 10 * MS, 20 * MS), 0);
            end = 20 * MS;
        } else { /* A 0-10 ms; a switch's gap of 0.1 ms; B launched at 0.1 ms, 10.1-20.1 ms */
            TEST_EQ_INT(synth_launched(run, a0, "ka", 1, 0, 0, 10 * MS), 0);
            TEST_EQ_INT(
                synth_launched(run, b0, "kb", 1, MS / 10, 10 * MS + MS / 10, 20 * MS + MS / 10), 0);
            end = 20 * MS + MS / 10;
        }
        TEST_EQ_INT(store_run_finish(run), 0);
        analysis *a = analyse(run, NULL);
        TEST_ASSERT(a);
        const analysis_device *d = analysis_get_device(a, 0);
        /* B waited from 0.1 ms + 3 us while A ran: 9.797 ms (A's gap is no running time) or
         * 9.897 ms */
        int64_t waited = sw ? 10 * MS - MS / 10 - 3000 : 10 * MS - MS / 10 - 3000 - MS / 10;
        TEST_EQ_INT(d->waiting_ns, waited);
        TEST_EQ_INT((int64_t)d->switches, sw);
        /* at best: half the waited time (two side by side), and the 0.1 ms gap once, as A's gap
         * that B fills or as the switch's */
        double best = (double)end - (double)waited / 2 - (double)(MS / 10);
        TEST_NEAR(analysis_get_summary(a)->predicted_gain, (double)end / best, 1e-6);
        analysis_free(a);
        store_run_free(run);
    }
    return 0;
}

/* A graph launch: one call (one correlation id) launches several kernels; each of them is ready
 * when the call returned, so the one on another stream that waits for A's slice is seen. B's
 * graph, launched at 0: a kernel on stream 7 at once (0-1 ms), one on stream 8 after A's
 * 1-11 ms. */
int test_analysis_waiting_graph(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_idx a0 = synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL);
    store_idx b0 = synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL);
    store_idx b1 = store_run_stream(run, run->streams[b0].context, 8);
    TEST_EQ_INT(synth_launched(run, a0, "ka", 1, MS, MS, 11 * MS), 0);
    TEST_EQ_INT(synth_launched(run, b0, "kb", 5, 0, 0, MS), 0);
    TEST_EQ_INT(synth_kernel(run, b1, "kb2", 11 * MS, 12 * MS), 0);
    run->kernels[run->nkernels - 1].correlation_id = 5; /* the same launch call */
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    /* B's second kernel waited from 3 us (its own first kernel then ran: no wait beside it)
     * through A's 1-11 ms */
    TEST_EQ_INT(analysis_get_device(a, 0)->waiting_ns, 10 * MS);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Launch records matched to kernels by (process, correlation id) whatever order either side comes
 * in: B's kernels start in the other order than their ids (two streams), its calls are not in id
 * order either (a driver record of the first launch returned before its runtime record), and A
 * uses one of B's ids. A runs 0-10 ms and 12-22 ms. B's kernel of id 30 (stream 8), launched
 * by 0.1 ms (the later of its two records), runs at 10 ms: it waited 0.103-10 ms; its kernel of
 * id 20 (stream 7), launched by 13 ms, runs at 22 ms: it waited 13.003-22 ms. A's kernel of id 20
 * has a return of 14 ms that is not B's. */
int test_analysis_waiting_join(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_idx a0 = synth_process(run, 100, NULL, NULL, SYNTH_PLAIN, NULL);
    store_idx b0 = synth_process(run, 101, NULL, NULL, SYNTH_PLAIN, NULL);
    store_idx b1 = store_run_stream(run, run->streams[b0].context, 8);
    TEST_EQ_INT(synth_launched(run, a0, "ka", 1, 0, 0, 10 * MS), 0);
    TEST_EQ_INT(synth_launched(run, b1, "kb", 30, MS / 10, 10 * MS, 11 * MS), 0);
    TEST_EQ_INT(synth_launched(run, a0, "ka", 20, 14 * MS, 12 * MS, 22 * MS), 0);
    TEST_EQ_INT(synth_launched(run, b0, "kb", 20, 13 * MS, 22 * MS, 23 * MS), 0);
    store_api drv = {MS / 10 - 12000,
                     MS / 10 - 10000,
                     run->contexts[run->streams[b0].context].process,
                     30,
                     1,
                     store_run_intern(run, "cuLaunchKernel"),
                     STORE_API_DRIVER,
                     0};
    TEST_EQ_INT(store_run_add_api(run, &drv), 0);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_get_device(a, 0)->waiting_ns,
                (10 * MS - MS / 10 - 3000) + (22 * MS - 13 * MS - 3000));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* analysis_freeze + analysis_thaw: the thawed analysis freezes to the same bytes and answers the
 * same; a block cut anywhere, one with a count changed, or one thawed for another run is refused
 * (ANALYSIS_EINVAL), never read out of bounds. */
int test_analysis_freeze_thaw(void)
{
    store_run *run = two_phase(0, 3 * MS), *other = two_phase(0, 2 * MS);
    store_kernel extra = other->kernels[0];
    extra.start = extra.end = other->t_end + 1;
    TEST_EQ_INT(store_run_add_kernel(other, &extra), 0);
    TEST_EQ_INT(store_run_finish(other), 0);
    analysis *a = analyse(run, NULL), *b = NULL;
    TEST_ASSERT(a);
    void *blob = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    TEST_EQ_INT(analysis_freeze(a, &blob, &len), ANALYSIS_OK);
    TEST_EQ_INT(analysis_thaw(run, NULL, blob, len, NULL, &b), ANALYSIS_OK);
    TEST_EQ_INT(analysis_freeze(b, &again, &len2), ANALYSIS_OK);
    TEST_EQ_INT(len2, len);
    TEST_ASSERT(!memcmp(blob, again, len));
    TEST_EQ_INT(analysis_ndevices(b), analysis_ndevices(a));
    TEST_EQ_INT(analysis_nwindows(b), analysis_nwindows(a));
    TEST_EQ_INT(analysis_nwarnings(b), analysis_nwarnings(a));
    TEST_NEAR(analysis_get_summary(b)->predicted_gain, analysis_get_summary(a)->predicted_gain, 0);
    TEST_EQ_INT(analysis_get_device(b, 0)->verdict, analysis_get_device(a, 0)->verdict);
    analysis_comparison ca, cb;
    TEST_EQ_INT(analysis_compare(a, a, &ca), ANALYSIS_OK);
    TEST_EQ_INT(analysis_compare(b, b, &cb), ANALYSIS_OK);
    TEST_NEAR(cb.predicted_gain_at_stretch_b, ca.predicted_gain_at_stretch_b, 0);
    analysis_free(b);
    b = NULL;
    free(again);
    for (size_t n = 0; n < len; n += 3) { /* cut short */
        TEST_EQ_INT(analysis_thaw(run, NULL, blob, n, NULL, &b), ANALYSIS_EINVAL);
        TEST_ASSERT(!b);
    }
    TEST_EQ_INT(analysis_thaw(other, NULL, blob, len, NULL, &b), ANALYSIS_EINVAL); /* another run */
    /* each count of the head made larger: refused (sizes, bounds), or never read beyond len */
    for (size_t at = 8; at < 200 && at < len; at += 4) {
        unsigned char *c = malloc(len);
        TEST_ASSERT(c);
        memcpy(c, blob, len);
        c[at] ^= 0x40;
        int rc = analysis_thaw(run, NULL, c, len, NULL, &b);
        TEST_ASSERT(rc == ANALYSIS_EINVAL || rc == ANALYSIS_OK || rc == ANALYSIS_ENOMEM);
        analysis_free(b);
        b = NULL;
        free(c);
    }
    /* each word set to a large value in turn: refused, or (a value no index) every accessor that
     * indexes with the block's values still reads inside its arrays */
    unsigned char *c = malloc(len);
    TEST_ASSERT(c);
    for (size_t at = 0; at + 4 <= len; at += 4) {
        memcpy(c, blob, len);
        uint32_t big = 0x7ffffff0u;
        memcpy(c + at, &big, 4);
        if (analysis_thaw(run, NULL, c, len, NULL, &b) != ANALYSIS_OK)
            continue;
        uint64_t sum = 0;
        for (store_idx x = 0; x < run->ncontexts; x++) {
            int plain;
            sum += analysis_context_group(b, x, &plain) + (uint32_t)plain;
            sum += analysis_context_slot(b, x);
        }
        for (store_idx l = 0; l < run->nlaunches; l++) {
            uint32_t sg = analysis_launch_signature(b, l);
            if (sg != UINT32_MAX)
                sum += strlen(run->strings[analysis_get_signature(b, sg)->name].text) +
                       analysis_get_signature(b, sg)->launch;
        }
        for (uint32_t d = 0; d < analysis_ndevices(b); d++) {
            const analysis_device *dv = analysis_get_device(b, d);
            for (uint64_t w = dv->first_window; w < dv->first_window + dv->nwindows; w++)
                sum += analysis_windows(b)[w].verdict + analysis_verdict_name(dv->verdict)[0];
        }
        for (uint32_t i = 0; i < analysis_nwarnings(b); i++)
            sum += strlen(analysis_warning(b, i));
        analysis_comparison cc;
        TEST_EQ_INT(analysis_compare(b, b, &cc), ANALYSIS_OK);
        TEST_ASSERT(sum > 0);
        analysis_free(b);
        b = NULL;
    }
    free(c);
    free(blob);
    analysis_free(a);
    store_run_free(run);
    store_run_free(other);
    return 0;
}
