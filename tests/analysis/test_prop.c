/* test_prop.c: the analysis's property test (prop.h) driven by a PRNG: thousands of random runs
 * (shared GPUs, every MPS state, green families, extreme and negative times, ranges, baselines)
 * analysed and checked, under ASan+UBSan in scripts/test; and the runs that broke it once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop.h"
#include "store.h"
#include "analysis.h"
#include "synth.h"
#include "test_help.h"

/* xorshift64*: the same bytes on every machine */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Runs `n` random cases from `seed`, each of 16 to 2063 bytes. */
static int random_cases(uint64_t seed, int n)
{
    uint8_t buf[2064];
    char why[512];
    for (int i = 0; i < n; i++) {
        uint64_t s = seed + (uint64_t)i * 0x9e3779b97f4a7c15u;
        size_t len = 16 + next(&s) % 2048;
        for (size_t j = 0; j < len; j++)
            buf[j] = (uint8_t)(next(&s) >> 56);
        if (prop_check(buf, len, why, sizeof why)) {
            fprintf(stderr, "case %d (seed %llu, %zu bytes): %s\n", i,
                    (unsigned long long)(seed + (uint64_t)i * 0x9e3779b97f4a7c15u), len, why);
            return 1;
        }
    }
    return 0;
}

int test_prop_random(void)
{
    const char *env = getenv("TLVIEW_PROP_CASES");
    return random_cases(1, env ? atoi(env) : 3000);
}

/* Runs at the edges only (times at +-STORE_TIME_MAX, spans of STORE_SPAN_MAX): the first byte
 * picks the time mode (prop.c, draw_time). */
int test_prop_edges(void)
{
    uint8_t buf[1024];
    char why[512];
    uint64_t s = 7;
    for (int i = 0; i < 1500; i++) {
        for (size_t j = 0; j < sizeof buf; j++)
            buf[j] = (uint8_t)(next(&s) >> 56);
        buf[0] = (uint8_t)(2 + i % 2);
        if (prop_check(buf, sizeof buf, why, sizeof why)) {
            fprintf(stderr, "edge case %d: %s\n", i, why);
            return 1;
        }
    }
    return 0;
}

/* 2026-12-07 (issue 28): an MPS context with no kernel (a range before a server's first
 * capture) indexed the MPS group array with its slot, UINT32_MAX: SEGV. */
int test_prop_mps_context_without_kernels(void)
{
    store_run *run = store_run_new();
    store_idx a = synth_process(run, 1, "h", NULL, SYNTH_MPS, NULL);
    synth_process(run, 2, "h", NULL, SYNTH_MPS, "00000000000000000000000000000009");
    TEST_EQ_INT(synth_kernel(run, a, "k", 1000, 2000), 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    analysis *an = NULL;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    TEST_EQ_INT(analysis_ndevices(an), 1);
    analysis_free(an);
    store_run *part = NULL; /* nothing in range: every context without a kernel */
    TEST_EQ_INT(store_run_restrict(run, 5000, 6000, &part), STORE_OK);
    TEST_EQ_INT(analysis_run(part, NULL, &an), ANALYSIS_OK);
    TEST_EQ_INT(analysis_ndevices(an), 0);
    analysis_free(an);
    store_run_free(part);
    store_run_free(run);
    return 0;
}

/* 2026-12-07 (issue 28): kernels at -2^62 and +2^62 lie 2^63 ns apart, which no int64 holds:
 * the run is refused with both ends named; one span less is analysed. */
int test_prop_span_bound(void)
{
    store_run *run = store_run_new();
    store_idx a = synth_process(run, 1, "h", NULL, SYNTH_PLAIN, NULL);
    store_idx b = synth_process(run, 2, "h", NULL, SYNTH_PLAIN, NULL);
    TEST_EQ_INT(synth_kernel(run, a, "k", -STORE_TIME_MAX, -STORE_TIME_MAX + 10), 0);
    TEST_EQ_INT(synth_kernel(run, b, "k", STORE_TIME_MAX - 10, STORE_TIME_MAX), 0);
    TEST_EQ_INT(store_run_finish(run), STORE_EFORMAT);
    TEST_ASSERT(strstr(store_run_errmsg(run), "the records span 292.3 years (pid 1 at") != NULL);
    TEST_ASSERT(strstr(store_run_errmsg(run), "to pid 2 of synthetic.db") != NULL);
    store_run_free(run);

    run = store_run_new(); /* one kernel over the whole span, and one at its end */
    a = synth_process(run, 1, "h", NULL, SYNTH_PLAIN, NULL);
    b = synth_process(run, 2, "h", NULL, SYNTH_PLAIN, NULL);
    int64_t end = -STORE_TIME_MAX + STORE_SPAN_MAX;
    TEST_EQ_INT(synth_kernel(run, a, "k", -STORE_TIME_MAX, end), 0);
    TEST_EQ_INT(synth_kernel(run, b, "k", end - 10, end), 0);
    TEST_EQ_INT(store_run_finish(run), STORE_OK);
    analysis *an = NULL;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    TEST_EQ_INT(analysis_get_device(an, 0)->busy_ns, STORE_SPAN_MAX);
    TEST_EQ_INT(analysis_get_device(an, 0)->overlap_ns, 10);
    analysis_free(an);
    store_run_free(run);
    return 0;
}
