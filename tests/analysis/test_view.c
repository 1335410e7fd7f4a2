/* Unit tests of view/ on synthetic runs: one name, one meaning per figure in the JSON view, the
 * headline sentences, and the formatters the terminal report shares with them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "test_help.h"
#include "view.h"

#define MS 1000000LL

/* P1 alone (5 x 1000 ns), both processes at 10 ms (10 kernels each of 2000 ns, same instants,
 * no MPS: time-sliced), then P2 alone (5 x 1000 ns). Busy 30 us, of which 20 us overlapped. */
static analysis *sliced_run(store_run **pRun)
{
    store_run *run = store_run_new();
    store_idx s1 = synth_process(run, 101, "h", "r", SYNTH_PLAIN, NULL);
    store_idx s2 = synth_process(run, 102, "h", "r", SYNTH_PLAIN, NULL);
    synth_train(run, s1, "spin", 0, 5, 1000, 0);
    synth_train(run, s1, "spin", 10 * MS, 10, 2000, 0);
    synth_train(run, s2, "spin", 10 * MS, 10, 2000, 0);
    synth_train(run, s2, "spin", 20 * MS, 5, 1000, 0);
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
