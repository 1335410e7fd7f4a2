/* Unit tests of view/ on synthetic runs: one name, one meaning per figure in the JSON view, the
 * headline sentences, and the formatters the terminal report shares with them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "test_help.h"
#include "view.h"

#define MS 1000000LL

/* P1 alone (5 x 1000 ns), then both processes (10 kernels each of 2000 ns, same instants, no
 * MPS: time-sliced), then P2 alone (5 x 1000 ns). Busy 30 us, of which 20 us overlapped; side by
 * side the overlap would take 10 us at best, 27.54 us at worst (20 launches through MPS). */
static analysis *sliced_run(store_run **pRun)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 101, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 102, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s1, "spin", 0, 5, 1000, 0);
    synth_train(run, s1, "spin", 5000, 10, 2000, 0);
    synth_train(run, s2, "spin", 5000, 10, 2000, 0);
    synth_train(run, s2, "spin", 25000, 5, 1000, 0);
    analysis *a = NULL;
    *pRun = run;
    if (store_run_finish(run) != 0 || analysis_run(run, NULL, &a) != 0)
        return NULL;
    return a;
}

/* A device's overlapped share of busy time is `overlap_of_busy`; `overlap_share` is a window's
 * (its kernels' overlapped time / their durations) and nothing else's. (Until 2026-12-01 the
 * device carried the first under the second's name.) The headline prints the same share. */
int test_view_overlap_of_busy(void)
{
    store_run *run;
    analysis *a = sliced_run(&run);
    TEST_ASSERT(a);
    json_t *d = view_device_json(a, 0);
    TEST_ASSERT(d);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "busy_ns")), 30000);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "overlap_ns")), 20000);
    TEST_NEAR(json_real_value(json_object_get(d, "overlap_of_busy")), 2.0 / 3, 1e-12);
    TEST_ASSERT(json_object_get(d, "overlap_share") == NULL);
    json_decref(d);
    json_t *w = view_window_json(a, 1); /* the overlap window */
    TEST_ASSERT(w);
    TEST_EQ_STR(json_string_value(json_object_get(w, "verdict")), "time-sliced");
    TEST_NEAR(json_real_value(json_object_get(w, "overlap_share")), 1.0, 1e-6);
    TEST_ASSERT(json_object_get(w, "overlap_of_busy") == NULL);
    json_decref(w);
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.head, "GPU 0 (NVIDIA H200): 2 processes (2 contexts, no MPS) overlapped 67% of "
                        "busy time; ");
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Each window names its GPU, on runs of several GPUs: a GPU whose only kernel had zero length
 * (no window at all) between GPUs with windows, and a GPU holding many windows. */
int test_view_window_gpu(void)
{
    static const char *const uuid[4] = {
        "00000000000000000000000000000000", "11111111111111111111111111111111",
        "22222222222222222222222222222222", "33333333333333333333333333333333"};
    store_run *run = store_run_new();
    store_idx s[5];
    for (int g = 0; g < 4; g++)
        s[g] = synth_process(run, 10 + g, "h", "r", SYNTH_PLAIN, uuid[g]);
    s[4] = synth_process(run, 20, "h", "r", SYNTH_PLAIN, uuid[2]);
    synth_kernel(run, s[0], "k", 0, 1000);
    synth_kernel(run, s[1], "k", 500, 500);          /* zero length: a GPU without windows */
    synth_train(run, s[2], "k", 0, 5, 1000, 2 * MS); /* overlap, quiet, overlap, ...: 9 */
    synth_train(run, s[4], "k", 0, 5, 1000, 2 * MS);
    synth_kernel(run, s[3], "k", 0, 1000);
    analysis *a = NULL;
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
    TEST_EQ_INT(analysis_ndevices(a), 4);
    TEST_EQ_INT(analysis_get_device(a, 1)->nwindows, 0);
    TEST_EQ_INT(analysis_get_device(a, 2)->nwindows, 9);
    TEST_EQ_INT(analysis_nwindows(a), 11);
    for (uint32_t g = 0; g < 4; g++) {
        const analysis_device *d = analysis_get_device(a, g);
        for (uint64_t w = d->first_window; w < d->first_window + d->nwindows; w++) {
            json_t *o = view_window_json(a, w);
            TEST_ASSERT(o);
            TEST_EQ_INT(json_integer_value(json_object_get(o, "gpu")), g);
            json_decref(o);
        }
    }
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* The headline's tail names what its numbers are: a measured stretch, or one estimated from the
 * share groups taking turns (the mean number of groups in flight: three plain contexts of which
 * two form a green family are 2 groups, not 3 contexts), and the gain interval. */
int test_view_headline_tail(void)
{
    store_run *run;
    analysis *a = sliced_run(&run);
    TEST_ASSERT(a);
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.verdict, "TIME-SLICED");
    TEST_EQ_STR(h.tail, " (no MPS): stretch 2.00x; MPS would gain 0.799-1.5x");
    analysis_free(a);
    store_run_free(run);

    run = store_run_new(); /* no solo run anywhere: the stretch is an estimate */
    store_idx p1 = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    store_idx g1 = synth_context(run, p1, 2, SYNTH_PLAIN, 1, 1);
    store_idx p2 = synth_process(run, 2, "h", "r", SYNTH_PLAIN, NULL);
    synth_kernel(run, p1, "k", 0, 2000);
    synth_kernel(run, g1, "k", 0, 2000);
    synth_kernel(run, p2, "k", 0, 2000);
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.head, "GPU 0 (NVIDIA H200): 2 processes (3 contexts, 1 green, no MPS) overlapped "
                        "100% of busy time; ");
    TEST_EQ_STR(h.tail, " (no MPS): stretch ~2.00x (estimated: 2 share groups took turns); MPS "
                        "would gain 0.551-2x (estimated)");
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Times are integer ns in the JSON, by_verdict's window time too (it was a real until
 * 2026-12-01: 4.4824847e8 for 448248470 ns); a solo reference is the one real, a median that
 * may fall between two ns. */
int test_view_times_are_integers(void)
{
    store_run *run;
    analysis *a = sliced_run(&run);
    TEST_ASSERT(a);
    json_t *d = view_device_json(a, 0);
    TEST_ASSERT(d);
    json_t *bv = json_object_get(d, "by_verdict");
    TEST_ASSERT(json_is_integer(json_object_get(json_object_get(bv, "time-sliced"), "ns")));
    TEST_EQ_INT(json_integer_value(json_object_get(json_object_get(bv, "time-sliced"), "ns")),
                20000);
    TEST_EQ_INT(json_integer_value(json_object_get(json_object_get(bv, "solo"), "ns")), 10000);
    json_decref(d);
    analysis_free(a);
    store_run_free(run);

    run = store_run_new();
    store_idx s = synth_process(run, 1, "h", "r", SYNTH_PLAIN, NULL);
    synth_kernel(run, s, "k", 0, 100);
    synth_kernel(run, s, "k", 200, 301);
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
    json_t *sig = view_signature_json(a, 0);
    TEST_ASSERT(json_is_real(json_object_get(sig, "reference_ns")));
    TEST_NEAR(json_real_value(json_object_get(sig, "reference_ns")), 100.5, 0);
    json_decref(sig);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* The formatters the terminal report shares with the headline: the gain interval, a stretch
 * with its basis (~ marks an estimate), the line for a run without kernels. */
int test_view_formatters(void)
{
    char b[64];
    TEST_EQ_STR(view_gain_text(1.164, 1.494, 0, b, sizeof b), "1.16-1.49x");
    TEST_EQ_STR(view_gain_text(1.164, 1.494, 1, b, sizeof b), "1.16-1.49x");
    TEST_EQ_STR(view_gain_text(4.2601, 4.2649, 0, b, sizeof b), "4.26x");
    TEST_EQ_STR(view_gain_text(4.2601, 4.2649, 1, b, sizeof b), "~4.26x");
    TEST_EQ_STR(view_gain_text(0.799, 1.5, 0, b, sizeof b), "0.799-1.5x");
    TEST_EQ_STR(view_gain_text(NAN, 1.5, 1, b, sizeof b), "-");
    TEST_EQ_STR(view_gain_text(1.5, NAN, 0, b, sizeof b), "-");
    TEST_EQ_STR(view_stretch_text(4.284, ANALYSIS_BASIS_REFERENCE, b, sizeof b), "4.28x");
    TEST_EQ_STR(view_stretch_text(4.0, ANALYSIS_BASIS_TURNS, b, sizeof b), "~4.00x");
    TEST_EQ_STR(view_stretch_text(1.0, ANALYSIS_BASIS_SHORTEST, b, sizeof b), "~1.00x");
    TEST_EQ_STR(view_stretch_text(2.0, ANALYSIS_BASIS_NONE, b, sizeof b), "-");
    TEST_EQ_STR(view_stretch_text(NAN, ANALYSIS_BASIS_REFERENCE, b, sizeof b), "-");
    for (int np = 0; np <= 2; np++) {
        store_run *run = store_run_new();
        for (int p = 0; p < np; p++) {
            store_process_info pi = {0};
            pi.pid = 1 + p;
            store_run_add_process(run, &pi, "empty.db");
        }
        analysis *a = NULL;
        TEST_EQ_INT(store_run_finish(run), 0);
        TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
        static const char *const want[3] = {
            "No kernels in 0 processes.", "No kernels in 1 process.", "No kernels in 2 processes."};
        TEST_EQ_STR(view_no_kernels_text(a, b, sizeof b), want[np]);
        json_t *h = view_headline_json(a);
        TEST_EQ_INT(json_array_size(h), 1);
        TEST_EQ_STR(json_string_value(json_array_get(h, 0)), want[np]);
        json_decref(h);
        analysis_free(a);
        store_run_free(run);
    }
    return 0;
}

/* Two processes without MPS taking turns (10 kernels of 50 us each, alternating, 143 us apart):
 * no window overlaps, yet the GPU time-sliced them (rule took-turns), and the headline says so
 * with the switch's idle gap; the JSON has the same count and gaps as `switches` and
 * `switch_gap_ns`. */
int test_view_context_switches(void)
{
    store_run *run = store_run_new();
    store_idx s[2] = {synth_process(run, 101, "h", "r", SYNTH_PLAIN, NULL),
                      synth_process(run, 102, "h", "r", SYNTH_PLAIN, NULL)};
    for (int i = 0; i < 10; i++)
        TEST_EQ_INT(synth_kernel(run, s[i % 2], "k", i * 193000LL, i * 193000LL + 50000), 0);
    analysis *a = NULL;
    TEST_ASSERT(store_run_finish(run) == 0 && analysis_run(run, NULL, &a) == 0);
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.head, "GPU 0 (NVIDIA H200): 2 processes (2 contexts, no MPS), no overlap between "
                        "contexts; ");
    TEST_EQ_STR(h.verdict, "TIME-SLICED");
    TEST_EQ_STR(h.tail, " (no MPS): the GPU switched between them 9 times without their kernels "
                        "overlapping (idle 143 us at each switch: they took turns); MPS would gain "
                        "0.996-3.57x");
    json_t *d = view_device_json(a, 0);
    TEST_ASSERT(d);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "switches")), 9);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "switch_gap_ns")), 9 * 143000);
    TEST_EQ_STR(json_string_value(json_object_get(d, "verdict")), "time-sliced");
    TEST_EQ_STR(json_string_value(json_object_get(d, "rule")), "took-turns");
    json_decref(d);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Kernels that waited for another context's time slice (waiting_ns, launch API records): one
 * figure under one name in the device and window JSON, and in the headline with the gain it
 * makes, also when the contexts never overlapped. A's kernel [0, 10 ms), B's launched at
 * 0.1 ms and started at 10 ms: 10 ms - 0.1 ms - the 3 us launch latency. */
int test_view_waiting(void)
{
    store_run *run = store_run_new();
    TEST_ASSERT(run);
    store_idx a0 = synth_process(run, 101, "h", "r", SYNTH_PLAIN, NULL);
    store_idx b0 = synth_process(run, 102, "h", "r", SYNTH_PLAIN, NULL);
    TEST_EQ_INT(synth_launched(run, a0, "k", 1, 0, 0, 10 * MS), 0);
    TEST_EQ_INT(synth_launched(run, b0, "k", 1, MS / 10, 10 * MS, 20 * MS), 0);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *a = NULL;
    TEST_EQ_INT(analysis_run(run, NULL, &a), 0);
    json_t *d = view_device_json(a, 0);
    TEST_ASSERT(d);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "waiting_ns")), 9897000);
    json_decref(d);
    json_t *w = view_window_json(a, 0);
    TEST_ASSERT(w);
    TEST_EQ_INT(json_integer_value(json_object_get(w, "waiting_ns")), 9897000);
    json_decref(w);
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.head, "GPU 0 (NVIDIA H200): 2 processes (2 contexts, no MPS), no overlap between "
                        "contexts; kernels ready to run waited 9.9 ms for another context's time "
                        "slice (49% of busy time); MPS would gain 1-1.33x");
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* Where the files do not say whether MPS was on, the headline says which evidence decided, or
 * that none did: undecided, in the verdict's name (UNKNOWN) and its reason (one kernel's work at a
 * time: time-sliced, or MPS clients each filling the GPU) with what would decide it. Until
 * 2026-12-08 such a window read "TIME-SLICED (MPS state unknown): stretch 2.00x, one kernel's work
 * at a time", a claim the file does not support. A and B each alone first (the references, 1 ms),
 * then two kernels of 2 ms, B's 0.2 ms after A's: each did 0.2 ms of its work alone and 0.8 ms in
 * the 1.8 ms overlap (parallelism 0.889, stretch 2.25); one turn, no signature. */
int test_view_undecided(void)
{
    store_run *run = store_run_new();
    store_idx a1 = synth_process(run, 101, "h", "r", SYNTH_UNKNOWN, NULL);
    store_idx b1 = synth_process(run, 102, "h", "r", SYNTH_UNKNOWN, NULL);
    synth_kernel(run, a1, "k", 0, MS);
    synth_kernel(run, b1, "k", 5 * MS, 6 * MS);
    synth_kernel(run, a1, "k", 10 * MS, 12 * MS);
    synth_kernel(run, b1, "k", 10200000, 12200000);
    analysis *a = NULL;
    TEST_ASSERT(store_run_finish(run) == 0 && analysis_run(run, NULL, &a) == 0);
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_EQ_STR(h.verdict, "UNKNOWN");
    TEST_EQ_STR(
        h.tail,
        " (MPS state unknown): one kernel's work at a time (parallelism 0.889, "
        "stretch 2.25x): time-sliced, or MPS clients each filling the GPU; the timing shows "
        "neither a context switch's marks nor turns quicker than one (a libcollect "
        "recording or --assume-mps on|off decides)");
    char ev[512];
    TEST_ASSERT(strstr(view_evidence(a, 0, ev, sizeof ev), "rule one-at-a-time: "));
    json_t *w = view_window_json(a, 1);
    TEST_ASSERT(w);
    TEST_EQ_STR(json_string_value(json_object_get(w, "verdict")), "unknown");
    TEST_EQ_STR(json_string_value(json_object_get(w, "rule")), "one-at-a-time");
    TEST_EQ_STR(json_string_value(json_object_get(w, "signature")), "none");
    TEST_EQ_INT(json_integer_value(json_object_get(w, "turns")), 1);
    json_decref(w);
    analysis_free(a);
    store_run_free(run);
    return 0;
}

/* The contexts of the report: each one's MPS state and SM partition, one name and meaning in the
 * JSON (and CSV); two MPS clients at 50% of the H200 are shown 66 of its 132 SMs each. */
int test_view_contexts(void)
{
    store_run *run = store_run_new();
    for (int p = 0; p < 2; p++) {
        store_idx s = synth_process(run, 1757 + p, "h", "r", SYNTH_MPS, NULL);
        run->contexts[run->streams[s].context].thread_pct = 50;
        run->contexts[run->streams[s].context].sm_count = 66;
        synth_kernel(run, s, "k", p * MS, (p + 2) * MS);
    }
    run->devices[0].sm_count = 66;
    analysis *a = NULL;
    TEST_ASSERT(store_run_finish(run) == 0 && analysis_run(run, NULL, &a) == 0);
    json_t *c = view_context_json(a, 1);
    TEST_ASSERT(c);
    TEST_EQ_INT(json_integer_value(json_object_get(c, "pid")), 1758);
    TEST_EQ_INT(json_integer_value(json_object_get(c, "gpu")), 0);
    TEST_EQ_STR(json_string_value(json_object_get(c, "mps")), "on");
    TEST_EQ_INT(json_integer_value(json_object_get(c, "sm_count")), 66);
    TEST_NEAR(json_real_value(json_object_get(c, "sm_share")), 0.5, 1e-6);
    TEST_NEAR(json_real_value(json_object_get(c, "thread_percentage")), 50, 0);
    json_decref(c);
    json_t *d = view_device_json(a, 0);
    TEST_EQ_INT(json_integer_value(json_object_get(d, "sm_count")), 132); /* the whole GPU */
    json_decref(d);
    char buf[160];
    TEST_EQ_STR(view_partitions_text(a, 0, buf, sizeof buf),
                "2 MPS clients at 50% on 66 of 132 SMs each");
    view_headline h;
    view_headline_of(a, 0, &h);
    TEST_ASSERT(strstr(h.tail, "; in their SM partitions (2 MPS clients at 50% on 66 of 132 SMs "
                               "each)"));
    analysis_free(a);
    store_run_free(run);
    return 0;
}
