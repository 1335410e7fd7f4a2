/* Unit tests of analysis/: every rule (solo reference, stretch, windows, each verdict, gains,
 * compare, profile queries, warnings) and every edge case named in issue 3 (zero-length kernels,
 * identical timestamps, a kernel still running at the end, a process with no kernels, a file from
 * another run), on small synthetic runs whose expected figures are worked out by hand. */
#include <math.h>
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
    const float *st = analysis_stretch(a);
    TEST_NEAR(st[0], 0.4, 1e-6);
    TEST_NEAR(st[1], 1.2, 1e-6);
    TEST_NEAR(st[3], 1.6, 1e-6);
    TEST_NEAR(st[4], 1.0, 1e-6);
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
    TEST_NEAR(w->mean_stretch, 2.0, 1e-6);
    TEST_NEAR(w->contexts, 2.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_NEAR(w->coverage, 1.0, 1e-6);
    TEST_EQ_INT(w->mps, 0);
    TEST_EQ_INT(w->stretch_matches_contexts, 1);
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
    TEST_NEAR(d->mean_stretch, 2.0, 1e-6);
    /* 20 us shrink to 10 us: span / (span - 10 us) */
    TEST_NEAR(d->predicted_gain, (20.0 * MS + 5000) / (20.0 * MS + 5000 - 10000), 1e-9);
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, d->predicted_gain, 1e-9);

    const analysis_process *p = analysis_get_process(a, 0);
    TEST_EQ_INT(p->nkernels, 15);
    TEST_EQ_INT(p->kernel_ns, 25000);
    TEST_EQ_INT(p->busy_ns, 25000);
    TEST_EQ_INT(p->overlap_ns, 20000);
    TEST_NEAR(p->mean_stretch, 25.0 / 15.0, 1e-6);
    TEST_NEAR(p->slowdown, 25000.0 / 15000.0, 1e-9);
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
    TEST_NEAR(w->mean_stretch, 1.0, 1e-6);
    TEST_NEAR(w->parallelism, 2.0, 1e-6);
    TEST_EQ_INT(w->mps, 1);
    TEST_EQ_INT(analysis_get_device(a, 0)->mps, 1);
    TEST_EQ_INT(analysis_get_process(a, 1)->mps, 1);
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
    TEST_NEAR(w->mean_stretch, 2.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    /* contended windows are not counted as MPS gain */
    TEST_NEAR(analysis_get_device(a, 0)->predicted_gain, 1.0, 1e-12);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Stretched without MPS, yet more than one context's work per instant: not time-slicing. */
int test_analysis_contended_without_mps(void)
{
    store_run *run = two_phase(0, 1500);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    const analysis_window *w = overlap_window(a, 0);
    TEST_NEAR(w->mean_stretch, 1.5, 1e-6);
    TEST_NEAR(w->parallelism, 2.0 / 1.5, 1e-6);
    TEST_EQ_INT(w->verdict, ANALYSIS_CONTENDED);
    /* 1.5 is within 30% of 2 contexts: the stretch alone would not tell, parallelism does */
    TEST_EQ_INT(w->stretch_matches_contexts, 1);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Two processes that always overlap: no solo instance, no reference: UNKNOWN, stretch NaN. */
static store_run *always_overlapping(int nproc, int64_t dur)
{
    store_run *run = store_run_new();
    for (int p = 0; p < nproc; p++) {
        store_idx s = synth_process(run, 200 + p, "h", "r", 0, NULL);
        synth_train(run, s, "spin", 0, 10, dur, 0);
    }
    return run;
}

int test_analysis_unknown_without_reference(void)
{
    store_run *run = always_overlapping(2, 2000);
    analysis *a = analyse(run, NULL);
    TEST_ASSERT(a);
    TEST_EQ_INT(analysis_get_signature(a, 0)->source, ANALYSIS_REF_NONE);
    TEST_ASSERT(isnan(analysis_stretch(a)[0]));
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_UNKNOWN);
    TEST_NEAR(w->coverage, 0.0, 0);
    TEST_ASSERT(isnan(w->mean_stretch));
    TEST_EQ_INT(analysis_get_summary(a)->nreferenced, 0);
    TEST_ASSERT(isnan(analysis_get_process(a, 0)->mean_stretch));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_baseline_reference(void)
{
    store_run *base = store_run_new();
    store_idx s = synth_process(base, 1, "h", "base", 0, NULL);
    synth_kernel(base, s, "spin", 0, 900);
    synth_kernel(base, s, "spin", 1000, 2000);
    synth_kernel(base, s, "spin", 3000, 4100);
    TEST_EQ_INT(store_run_finish(base), 0);
    store_run *run = always_overlapping(4, 4000);
    analysis *a = analyse(run, base);
    TEST_ASSERT(a);
    const analysis_signature *sig = analysis_get_signature(a, 0);
    TEST_EQ_INT(sig->source, ANALYSIS_REF_BASELINE);
    TEST_EQ_INT(sig->nsolo, 3);
    TEST_NEAR(sig->reference_ns, 1000.0, 1e-9);
    const analysis_window *w = overlap_window(a, 0);
    TEST_EQ_INT(w->verdict, ANALYSIS_TIME_SLICED);
    TEST_NEAR(w->mean_stretch, 4.0, 1e-6);
    TEST_NEAR(w->contexts, 4.0, 1e-6);
    TEST_NEAR(w->parallelism, 1.0, 1e-6);
    TEST_EQ_INT(w->max_processes, 4);
    /* 40 us of 4-way time-slicing would take 10 us concurrently */
    TEST_NEAR(analysis_get_summary(a)->predicted_gain, 4.0, 1e-9);
    TEST_NEAR(analysis_get_process(a, 2)->slowdown, 4.0, 1e-9);
    analysis_free(a);
    store_run_free(run);
    store_run_free(base);
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
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", 0, NULL);
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
    TEST_EQ_INT(w[1].verdict, ANALYSIS_UNKNOWN); /* neither kernel ever ran alone */
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
    TEST_ASSERT(isnan(p->mean_stretch));
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
    analysis *a = analyse(run, NULL);
    TEST_EQ_INT(analysis_nwarnings(a), 2);
    TEST_ASSERT(has_warning(a, "process 102 (synthetic.db) is incomplete: killed by signal 9"));
    TEST_ASSERT(has_warning(a, "CUPTI dropped 7 records"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}

int test_analysis_windows_join_gap(void)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 1, "h", "r", 0, NULL);
    store_idx s2 = synth_process(run, 2, "h", "r", 0, NULL);
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
    TEST_NEAR(d->ns_by_verdict[ANALYSIS_CONCURRENT], 1000 + 101000, 1e-9);
    TEST_NEAR(d->ns_by_verdict[ANALYSIS_IDLE], 1499000, 1e-9);
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
    store_run *off = always_overlapping(2, 2000), *on = always_overlapping(2, 1000);
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
    const char *want[] = {"idle", "solo", "concurrent", "time-sliced", "contended", "unknown"};
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        TEST_EQ_STR(analysis_verdict_name((analysis_verdict)v), want[v]);
    TEST_EQ_STR(analysis_verdict_name((analysis_verdict)42), "?");
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

/* Random small runs (3 processes on 2 devices, 2 signatures, durations 0..60 on a 0..400 axis, so
 * ties and zero lengths are common) against a brute-force walk over every nanosecond: busy,
 * overlap, per-process busy and overlap, solo references, stretch, the profile, and windows
 * (join gap 0: overlap windows are exactly the instants with >= 2 processes). */
int test_analysis_random_runs_match_brute_force(void)
{
    enum { T = 460, NP = 3, NK = 40 };
    for (int iter = 0; iter < 300; iter++) {
        store_run *run = store_run_new();
        store_idx st[NP];
        int devof[NP];
        for (int p = 0; p < NP; p++) {
            devof[p] = p == 2 && iter % 3 == 0; /* sometimes a second GPU */
            st[p] = synth_process(run, 10 + p, "h", "r", rnd(2),
                                  devof[p] ? "ffffffffffffffffffffffffffffffff" : NULL);
        }
        for (int i = 0; i < NP * NK; i++) {
            int64_t s = rnd(400), d = rnd(8) == 0 ? 0 : rnd(60);
            synth_kernel(run, st[rnd(NP)], rnd(2) ? "a" : "b", s, s + d);
        }
        TEST_EQ_INT(store_run_finish(run), 0);
        analysis_options o;
        analysis_options_default(&o);
        o.join_gap_ns = 0;
        analysis *a = NULL;
        TEST_EQ_INT(analysis_run(run, &o, &a), 0);

        /* brute force: processes in flight per device and instant */
        static int inflight[2][T][NP];
        memset(inflight, 0, sizeof inflight);
        for (uint64_t k = 0; k < run->nkernels; k++) {
            const store_kernel *kk = &run->kernels[k];
            store_idx p = store_kernel_process(run, kk);
            for (int64_t t = kk->start; t < kk->end; t++)
                inflight[devof[p]][t][p]++;
        }
        int64_t busy[2] = {0}, ovl[2] = {0}, pbusy[NP] = {0}, povl[NP] = {0};
        for (int d = 0; d < 2; d++)
            for (int t = 0; t < T; t++) {
                int np = 0;
                for (int p = 0; p < NP; p++)
                    np += inflight[d][t][p] > 0;
                busy[d] += np > 0;
                ovl[d] += np > 1;
                for (int p = 0; p < NP; p++) {
                    pbusy[p] += inflight[d][t][p] > 0;
                    povl[p] += inflight[d][t][p] > 0 && np > 1;
                }
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
                for (int64_t t = w[i].t0; t < w[i].t1; t++) {
                    int np = 0;
                    for (int p = 0; p < NP; p++)
                        np += inflight[d][t][p] > 0;
                    TEST_EQ_INT(np > 1, w[i].verdict >= ANALYSIS_CONCURRENT);
                }
            }
            TEST_EQ_INT(at, ad->t_end);
            /* the evidence of each window, instant by instant */
            for (uint64_t i = 0; i < ad->nwindows; i++) {
                double clip = 0, clip_ref = 0, st = 0, work = 0, ctxsum = 0;
                int64_t wbusy = 0;
                for (int64_t t = w[i].t0; t < w[i].t1; t++) {
                    int nk = 0;
                    uint8_t ctxseen[64] = {0};
                    int nctx = 0;
                    for (uint64_t k = 0; k < run->nkernels; k++) {
                        const store_kernel *kk = &run->kernels[k];
                        store_idx p = store_kernel_process(run, kk);
                        if (devof[p] != d || kk->start > t || kk->end <= t)
                            continue;
                        nk++;
                        store_idx c = run->streams[kk->stream].context;
                        if (c < 64 && !ctxseen[c]++)
                            nctx++;
                        float sk = analysis_stretch(a)[k];
                        clip += 1;
                        if (!isnan(sk)) {
                            clip_ref += 1;
                            st += sk;
                            work += 1.0 / sk;
                        }
                    }
                    wbusy += nk > 0;
                    ctxsum += nctx;
                }
                TEST_EQ_INT(w[i].busy_ns, wbusy);
                TEST_NEAR(w[i].coverage, clip > 0 ? clip_ref / clip : 0, 1e-5);
                if (clip_ref > 0) {
                    TEST_NEAR(w[i].mean_stretch, st / clip_ref, 1e-4 * st / clip_ref);
                    double par = work / (double)wbusy / (clip_ref / clip);
                    TEST_NEAR(w[i].parallelism, par, 1e-4 * par);
                }
                if (w[i].verdict >= ANALYSIS_CONCURRENT && wbusy > 0)
                    TEST_NEAR(w[i].contexts, ctxsum / (double)wbusy, 1e-4 * ctxsum / wbusy);
            }
            /* the exact profile */
            analysis_segment seg[2 * T];
            size_t n = 0;
            TEST_EQ_INT(analysis_profile(a, s, 0, T, seg, 2 * T, &n), 0);
            TEST_ASSERT(n <= 2 * T);
            for (size_t i = 0; i < n; i++)
                for (int64_t t = seg[i].t0; t < seg[i].t1; t++) {
                    int np = 0;
                    for (int p = 0; p < NP; p++)
                        np += inflight[d][t][p] > 0;
                    TEST_EQ_INT(seg[i].processes, np);
                }
        }
        for (int p = 0; p < NP; p++) {
            TEST_EQ_INT(analysis_get_process(a, p)->busy_ns, pbusy[p]);
            TEST_EQ_INT(analysis_get_process(a, p)->overlap_ns, povl[p]);
        }
        /* solo instances and their medians, per signature, then every stretch */
        for (uint32_t sig = 0; sig < analysis_nsignatures(a); sig++) {
            float solo[NP * NK];
            int ns = 0;
            for (uint64_t k = 0; k < run->nkernels; k++) {
                const store_kernel *kk = &run->kernels[k];
                if (analysis_launch_signature(a, kk->launch) != sig || kk->end <= kk->start)
                    continue;
                store_idx p = store_kernel_process(run, kk);
                int alone = 1;
                for (int64_t t = kk->start; t < kk->end && alone; t++)
                    for (int q = 0; q < NP; q++)
                        if (q != (int)p && inflight[devof[p]][t][q])
                            alone = 0;
                if (alone)
                    solo[ns++] = (float)(kk->end - kk->start);
            }
            const analysis_signature *as = analysis_get_signature(a, sig);
            TEST_EQ_INT(as->nsolo, ns);
            if (ns) {
                qsort(solo, (size_t)ns, sizeof *solo, cmp_f);
                double med = ns % 2 ? solo[ns / 2] : (solo[ns / 2 - 1] + solo[ns / 2]) / 2.0;
                TEST_NEAR(as->reference_ns, med, 1e-9);
            }
        }
        for (uint64_t k = 0; k < run->nkernels; k++) {
            const store_kernel *kk = &run->kernels[k];
            double ref =
                analysis_get_signature(a, analysis_launch_signature(a, kk->launch))->reference_ns;
            float s = analysis_stretch(a)[k];
            if (kk->end <= kk->start || ref <= 0)
                TEST_ASSERT(isnan(s));
            else
                TEST_NEAR(s, (kk->end - kk->start) / ref, 1e-5 * s);
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

/* Predicted gain of 4-way time-slicing of kernels of `blocks` blocks on a 132-SM device, each
 * taking 1000 ns alone (baseline) and 4000 ns sliced. */
static double gain_for_blocks(uint32_t blocks)
{
    store_run *base = store_run_new(), *run = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), blocks, 0, 1000);
    store_run_finish(base);
    for (int p = 0; p < 4; p++)
        wide_kernel(run, synth_process(run, 10 + p, "h", "r", 0, NULL), blocks, 0, 4000);
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
 * could win back (measured on the H200, samples/saturating: 1.12x). */
int test_analysis_predicted_gain_gpu_bound(void)
{
    TEST_NEAR(gain_for_blocks(1), 4.0, 1e-6);           /* one block: 4 fit side by side */
    TEST_NEAR(gain_for_blocks(132 * 8 / 2), 2.0, 1e-6); /* half the GPU each: 2 at a time */
    TEST_NEAR(gain_for_blocks(132 * 8), 1.0, 1e-6);     /* one full wave each: in turn */
    TEST_NEAR(gain_for_blocks(132 * 8 * 8), 1.0, 1e-6); /* eight waves: in turn */
    return 0;
}

/* MPS clients that slow each other down (measured on the H200, samples/triton_single_sm at
 * N = 8: 1.49x): the prediction from the time-sliced run assumes solo speed side by side, and
 * the comparison redoes it at the compared run's slowdown, which is what that run gained. */
int test_analysis_compare_at_slowdown(void)
{
    store_run *base = store_run_new(), *off = store_run_new(), *on = store_run_new(),
              *unref = store_run_new();
    wide_kernel(base, synth_process(base, 1, "h", "base", 0, NULL), 1, 0, 1000);
    store_run_finish(base);
    for (int p = 0; p < 4; p++) {
        wide_kernel(off, synth_process(off, 10 + p, "h", "off", 0, NULL), 1, 0, 4000);
        wide_kernel(on, synth_process(on, 20 + p, "h", "on", 0, NULL), 1, 0, 1500);
        wide_kernel(unref, synth_process(unref, 30 + p, "h", "u", 0, NULL), 2, 0, 1500);
    }
    analysis *a = analyse(off, base), *b = analyse(on, base), *u = analyse(unref, base);
    TEST_ASSERT(a && b && u);
    TEST_NEAR(analysis_get_summary(a)->slowdown, 4.0, 1e-6);
    TEST_NEAR(analysis_get_summary(b)->slowdown, 1.5, 1e-6);
    TEST_ASSERT(isnan(analysis_get_summary(u)->slowdown)); /* another signature: no reference */
    analysis_comparison c;
    TEST_EQ_INT(analysis_compare(a, b, &c), 0);
    TEST_NEAR(c.predicted_gain, 4.0, 1e-6);
    TEST_NEAR(c.measured_gain, 4000.0 / 1500.0, 1e-9);
    TEST_NEAR(c.slowdown_b, 1.5, 1e-6);
    TEST_NEAR(c.predicted_gain_at_slowdown_b, 4000.0 / 1500.0, 1e-6);
    TEST_EQ_INT(analysis_compare(b, a, &c), 0); /* a slower run compared: never below solo speed */
    TEST_NEAR(c.predicted_gain_at_slowdown_b, c.predicted_gain, 1e-12);
    TEST_EQ_INT(analysis_compare(a, u, &c), 0);
    TEST_ASSERT(isnan(c.slowdown_b) && isnan(c.predicted_gain_at_slowdown_b));
    analysis_free(a);
    analysis_free(b);
    analysis_free(u);
    store_run_free(base);
    store_run_free(off);
    store_run_free(on);
    store_run_free(unref);
    return 0;
}
