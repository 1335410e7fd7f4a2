/* Unit tests of cli/range.c, the verdicts on a range: the one parser of --from/--to times (units
 * relative to the origin, bare ns absolute, rounding, refusals), the printed form of a time, and
 * --range NAME resolved among the captured and NVTX ranges (a captured name first). */
#include <stdlib.h>

#include "cli.h"
#include "test_help.h"

/* cli_parse_time(text) into *ns and *rel; returns its status. */
static int parse(const char *text, int64_t *ns, int *rel)
{
    *ns = 12345;
    *rel = -1;
    return cli_parse_time(text, ns, rel);
}

int test_cli_range_parse_units(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } ok[] = {
        {"2.5s", 2500000000},
        {"150ms", 150000000},
        {"10us", 10000},
        {"500ns", 500},
        {"2min", 120000000000},
        {"2m", 120000000000},
        {"1h", 3600000000000},
        {"-1.5us", -1500},
        {"+3s", 3000000000},
        {".5s", 500000000},
        {"5.s", 5000000000},
        {"0s", 0},
        {"1.0000000005s", 1000000001}, /* to the nearest ns, half up */
        {"1.0000000004s", 1000000000},
        {"0.25ns", 0},
        {"0000000000000000000001ms", 1000000},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int64_t ns;
        int rel;
        if (parse(ok[i].text, &ns, &rel) != 0) {
            fprintf(stderr, "refused '%s'\n", ok[i].text);
            return 1;
        }
        TEST_EQ_INT(ns, ok[i].ns);
        TEST_EQ_INT(rel, 1);
    }
    return 0;
}

int test_cli_range_parse_absolute(void)
{
    int64_t ns;
    int rel;
    TEST_EQ_INT(parse("1764000000200000000", &ns, &rel), 0);
    TEST_EQ_INT(ns, 1764000000200000000);
    TEST_EQ_INT(rel, 0);
    TEST_EQ_INT(parse("0", &ns, &rel), 0);
    TEST_EQ_INT(ns, 0);
    TEST_EQ_INT(rel, 0);
    TEST_EQ_INT(parse("-5", &ns, &rel), 0);
    TEST_EQ_INT(ns, -5);
    TEST_EQ_INT(parse("4611686018427387904", &ns, &rel), 0); /* 2^62, the largest time held */
    TEST_EQ_INT(ns, 4611686018427387904);
    return 0;
}

int test_cli_range_parse_refused(void)
{
    static const char *const bad[] = {
        "",
        "s",
        "-",
        "2.5", /* a fraction needs a unit */
        "2x",
        "2S",
        "1.2.3s",
        "--1s",
        "2 s",
        " 2s",
        "2s ",
        "1e3ns",
        "4611686018427387905",
        "1281dh",
        "1281100h" /* > 2^62 ns */,
        "1.5sec",
        "ms",
        "0x10",
        "1234567890123456789012345678901s", /* 31 digits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t ns;
        int rel;
        if (parse(bad[i], &ns, &rel) != -1) {
            fprintf(stderr, "took '%s' as %lld\n", bad[i], (long long)ns);
            return 1;
        }
        TEST_EQ_INT(ns, 12345); /* nothing set */
        TEST_EQ_INT(rel, -1);
    }
    return 0;
}

int test_cli_range_fmt_time(void)
{
    char b[32];
    TEST_EQ_STR(cli_fmt_time(0, b, sizeof b), "0s");
    TEST_EQ_STR(cli_fmt_time(1500000000, b, sizeof b), "1.5s");
    TEST_EQ_STR(cli_fmt_time(-123000, b, sizeof b), "-0.000123s");
    TEST_EQ_STR(cli_fmt_time(999999600, b, sizeof b), "1s"); /* to the us, carried */
    TEST_EQ_STR(cli_fmt_time(1210000000, b, sizeof b), "1.21s");
    TEST_EQ_STR(cli_fmt_time(499, b, sizeof b), "0s");
    TEST_EQ_STR(cli_fmt_time(3600000000000, b, sizeof b), "3600s");
    /* what it prints, the parser reads back (to the us) */
    int64_t ns;
    int rel;
    TEST_EQ_INT(cli_parse_time(cli_fmt_time(-1234567000, b, sizeof b), &ns, &rel), 0);
    TEST_EQ_INT(ns, -1234567000);
    TEST_EQ_INT(rel, 1);
    return 0;
}

/* A run of one process whose first kernel starts at 1000 s: kernels every 100 ms for 2 s, a
 * captured range "peak" (1.2-1.4 s, and 1.6-1.7 s), an NVTX range "peak" (0.1-0.2 s) and one
 * "step" (0.5-0.9 s). */
static store_run *sample_run(void)
{
    const int64_t B = 1000000000000, MS = 1000000;
    store_run *run = store_run_new();
    store_process_info pi = {.pid = 7};
    store_idx p = store_run_add_process(run, &pi, "a.db");
    store_idx st = store_run_stream(run, store_run_context(run, p, 1, STORE_NONE, 1), 7);
    store_launch l = {store_run_intern(run, "k"), {1, 1, 1}, {1, 1, 1}, 0, 0, 0};
    store_idx li = store_run_launch(run, &l);
    for (int i = 0; i < 20; i++) {
        store_kernel k = {B + i * 100 * MS, B + i * 100 * MS + 50 * MS, st, li, (uint32_t)i, 0};
        store_run_add_kernel(run, &k);
    }
    store_capture c1 = {B + 1200 * MS, B + 1400 * MS, p, "peak", "control", "control"};
    store_capture c2 = {B + 1600 * MS, B + 1700 * MS, p, "peak", "control", "control"};
    store_capture c3 = {B, B + 2000 * MS, p, NULL, "start", "exit"};
    store_run_add_capture(run, &c1);
    store_run_add_capture(run, &c2);
    store_run_add_capture(run, &c3);
    store_range r1 = {B + 100 * MS, B + 200 * MS, p, 1, STORE_NONE, store_run_intern(run, "peak")};
    store_range r2 = {B + 500 * MS, B + 900 * MS, p, 1, STORE_NONE, store_run_intern(run, "step")};
    store_run_add_range(run, &r1);
    store_run_add_range(run, &r2);
    return store_run_finish(run) == 0 ? run : NULL;
}

int test_cli_range_resolve_names(void)
{
    const int64_t B = 1000000000000, MS = 1000000;
    store_run *run = sample_run();
    TEST_ASSERT(run);
    cli_analysis_opts o = {0};
    cli_range r;
    char text[256];
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0); /* no range asked */
    TEST_EQ_INT(r.set, 0);
    TEST_EQ_INT(r.origin, B);
    o.range = "peak"; /* both a captured and an NVTX name: the captured ranges, first to last */
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0);
    TEST_EQ_INT(r.set, 1);
    TEST_EQ_STR(r.kind, "capture");
    TEST_EQ_INT(r.t0, B + 1200 * MS);
    TEST_EQ_INT(r.t1, B + 1700 * MS);
    TEST_EQ_STR(cli_range_text(&r, text, sizeof text), "the captured range 'peak' (1.2s to 1.7s)");
    o.range = "step";
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0);
    TEST_EQ_STR(r.kind, "nvtx");
    TEST_EQ_INT(r.t0, B + 500 * MS);
    TEST_EQ_INT(r.t1, B + 900 * MS);
    TEST_EQ_STR(cli_range_text(&r, text, sizeof text), "the NVTX range 'step' (0.5s to 0.9s)");
    o.range = "nowhere";
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 1);
    /* restricting: the kernels in flight in 1.2-1.7 s (1.2, ..., 1.6), the gains measured over
     * the captured range */
    o.range = "peak";
    analysis_options opt;
    analysis_options_default(&opt);
    store_run *whole = NULL;
    TEST_EQ_INT(cli_restrict("report", &o, &run, &whole, &opt, &r), 0);
    TEST_ASSERT(whole != NULL && whole != run);
    TEST_EQ_INT(whole->nkernels, 20);
    TEST_EQ_INT(run->nkernels, 5);
    TEST_EQ_INT(run->kernels[0].start, B + 1200 * MS);
    TEST_EQ_INT(opt.measure, ANALYSIS_MEASURE_CAPTURE);
    TEST_EQ_STR(opt.measure_range, "peak");
    store_run_free(run);
    run = whole;
    /* with --measure given, the range leaves it alone */
    o.measure_set = 1;
    analysis_options_default(&opt);
    TEST_EQ_INT(cli_restrict("report", &o, &run, &whole, &opt, &r), 0);
    TEST_EQ_INT(opt.measure, ANALYSIS_MEASURE_ALL);
    store_run_free(run);
    store_run_free(whole);
    return 0;
}

int test_cli_range_resolve_times(void)
{
    const int64_t B = 1000000000000, MS = 1000000;
    store_run *run = sample_run();
    TEST_ASSERT(run);
    cli_analysis_opts o = {0};
    cli_range r;
    char text[256];
    o.from = "0.25s";
    o.to = "1000450000000"; /* absolute: 0.45 s after the origin */
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0);
    TEST_EQ_STR(r.kind, "time");
    TEST_EQ_INT(r.t0, B + 250 * MS);
    TEST_EQ_INT(r.t1, B + 450 * MS);
    TEST_EQ_STR(cli_range_text(&r, text, sizeof text), "the range 0.25s to 0.45s");
    analysis_options opt;
    analysis_options_default(&opt);
    store_run *whole = NULL;
    TEST_EQ_INT(cli_restrict("report", &o, &run, &whole, &opt, &r), 0);
    TEST_EQ_INT(run->nkernels, 2); /* 0.3 s and 0.4 s; 0.2-0.25 s ended at its start */
    TEST_EQ_INT(opt.measure, ANALYSIS_MEASURE_SPAN);
    TEST_EQ_INT(opt.measure_t0, B + 250 * MS);
    TEST_EQ_INT(opt.measure_t1, B + 450 * MS);
    store_run_free(run);
    run = whole;
    o.to = NULL; /* open-ended */
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0);
    TEST_EQ_INT(r.has_to, 0);
    TEST_EQ_STR(cli_range_text(&r, text, sizeof text), "the range from 0.25s");
    o.from = NULL;
    o.to = "-1ms";
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 0);
    TEST_EQ_STR(cli_range_text(&r, text, sizeof text), "the range up to -0.001s");
    o.from = "2s";
    o.to = "1s";
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 1); /* --to not after --from */
    o.to = "2s";
    TEST_EQ_INT(cli_range_resolve("report", &o, run, &r), 1);
    store_run_free(run);
    return 0;
}

/* The options: a bad time is a usage error naming it; --range with --from or --to is one too. */
int test_cli_range_options(void)
{
    cli_analysis_opts o;
    TEST_EQ_INT(cli_analysis_opts_init(&o, "report", 4), 0);
    TEST_EQ_INT(cli_analysis_option("report", 'F', "1.5s", &o), 0);
    TEST_EQ_STR(o.from, "1.5s");
    TEST_EQ_INT(cli_analysis_option("report", 'T', "2.5", &o), 2);
    TEST_EQ_INT(cli_analysis_option("report", 'T', "2500ms", &o), 0);
    TEST_EQ_INT(cli_analysis_option("report", 'R', "peak", &o), 2);
    cli_analysis_opts_free(&o);
    TEST_EQ_INT(cli_analysis_opts_init(&o, "report", 4), 0);
    TEST_EQ_INT(cli_analysis_option("report", 'R', "peak", &o), 0);
    TEST_EQ_INT(cli_analysis_option("report", 'F', "1s", &o), 2);
    TEST_EQ_INT(cli_analysis_option("report", 'm', "capture:peak", &o), 0);
    TEST_EQ_INT(o.options.measure, ANALYSIS_MEASURE_CAPTURE);
    TEST_EQ_STR(o.options.measure_range, "peak");
    TEST_EQ_INT(o.measure_set, 1);
    cli_analysis_opts_free(&o);
    return 0;
}
