/* Tests of cli/advise_serve.c on its own: which run of each configuration `tlview serve DIR`
 * draws, from an experiment built here in memory (figures chosen by hand) over run folders made
 * here (trace files of chosen sizes, never read): the median run (odd and even counts, ties to the
 * earlier round, failed and untraced runs left out), the solo references advise used, the notes
 * for a folder missing or a symbolic link, and the bound on the bytes one page loads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advise.h"
#include "test_help.h"

/* A run of configuration c in round `round`: ok with `figure` (NaN: failed), traced or not. */
static void add_run(adv_exp *e, int c, int round, double figure, int traced)
{
    adv_run *r = adv_exp_add_run(e);
    r->config = c;
    r->round = round;
    r->ok = !isnan(figure);
    r->figure = figure;
    r->makespan_ns = 1000000;
    if (traced) {
        r->gpu.files = 1;
        snprintf(r->gpu.verdict, sizeof r->gpu.verdict, "%s",
                 e->configs[c].kind == ADV_SOLO ? "solo" : "concurrent");
    }
    if (!r->ok)
        snprintf(r->error, sizeof r->error, "copy 0 exited with 3");
}

/* The folder DIR/CONFIG/rROUND of run i with one trace file of `bytes` bytes. */
static int make_folder(const adv_exp *e, int i, long bytes)
{
    char path[8300];
    const adv_run *r = &e->runs[i];
    snprintf(path, sizeof path, "%s/%s", e->dir, e->configs[r->config].id);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/r%d", e->dir, e->configs[r->config].id, r->round);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/r%d/app.%d.db", e->dir, e->configs[r->config].id, r->round,
             100 + i);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (long k = 0; k < bytes; k++)
        fputc(0, f);
    return fclose(f);
}

/* An experiment in the case's folder: solo, sliced (the default), mps and mps:50 at N=2; runs
 * as each case adds them. */
static void make_exp(adv_exp *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", test_tmpdir());
    e->cmds = calloc(1, sizeof *e->cmds);
    e->cmds[0] = calloc(2, sizeof(char *));
    e->cmds[0][0] = strdup("app");
    e->ncmds = 1;
    e->trace = 1;
    e->repeat = 3;
    int kinds[] = {ADV_SOLO, ADV_SLICED, ADV_MPS, ADV_MPS_LIMIT};
    for (int c = 0; c < 4; c++) {
        adv_config_name(&e->configs[c], kinds[c], c ? 2 : 1, 50);
        e->configs[c].is_default = kinds[c] == ADV_SLICED;
        e->configs[c].candidate = kinds[c] != ADV_SOLO;
    }
    e->nconfigs = 4;
}

/* The entry "shown" of configuration c in x. */
static json_t *shown(json_t *x, int c)
{
    return json_array_get(json_object_get(x, "shown"), (size_t)c);
}

/* The median run: 3 runs, the middle one; 4 runs, the nearer of the two middle ones, or the
 * earlier on a tie; failed and untraced runs are not drawn (but the median counts every
 * successful run, as the table's does). The labels, pages and solo references. */
int test_cli_advise_serve_median_run(void)
{
    adv_exp e;
    make_exp(&e);
    /* solo: 10, 30, 20 -> 20 (round 2) */
    add_run(&e, 0, 0, 10, 1), add_run(&e, 0, 1, 30, 1), add_run(&e, 0, 2, 20, 1);
    /* sliced: 10, 14, 20, 100 -> median 17: 14 and 20 are 3 away: the earlier, round 1 */
    add_run(&e, 1, 0, 10, 1), add_run(&e, 1, 1, 14, 1), add_run(&e, 1, 2, 20, 1);
    add_run(&e, 1, 3, 100, 1);
    /* mps: 50 (untraced), 40, failed, 70 -> median of 40, 50, 70 is 50, untraced: 40 is nearer
     * than 70, round 1 */
    add_run(&e, 2, 0, 50, 0), add_run(&e, 2, 1, 40, 1), add_run(&e, 2, 2, NAN, 1);
    add_run(&e, 2, 3, 70, 1);
    /* mps:50: none traced */
    add_run(&e, 3, 0, 60, 0), add_run(&e, 3, 1, 61, 0);
    for (int i = 0; i < e.nruns; i++)
        TEST_EQ_INT(make_folder(&e, i, 100), 0);
    adv_shown s[ADV_MAX_CONFIGS];
    int drawn = -1;
    json_t *x = adv_serve_plan(&e, 1 << 20, s, &drawn);
    TEST_ASSERT(x);
    TEST_EQ_INT(drawn, 3);
    TEST_EQ_INT(e.runs[s[0].run].round, 2);
    TEST_EQ_INT(e.runs[s[1].run].round, 1);
    TEST_EQ_INT(e.runs[s[2].run].round, 1);
    TEST_EQ_INT(s[3].run, -1);
    TEST_EQ_INT(s[0].page, 0);
    TEST_EQ_INT(s[1].page, 1);
    TEST_EQ_INT(s[2].page, 2);
    TEST_EQ_INT(s[3].page, -1);
    TEST_EQ_STR(s[0].label, "solo (r2)");
    TEST_EQ_STR(s[1].label, "time-sliced n=2 (r1)");
    TEST_EQ_STR(s[2].label, "MPS n=2 (r1)");
    TEST_EQ_STR(s[3].label, "MPS 50% n=2");
    TEST_EQ_STR(s[3].note, "n2-mps50: not drawn: no successful run left a trace file");
    /* the solo references: the latest successful solo run by the end of the run's round */
    char want[8300];
    snprintf(want, sizeof want, "%s/solo/r1", e.dir);
    TEST_EQ_STR(s[1].base_dir, want);
    TEST_EQ_STR(s[2].base_dir, want);
    TEST_EQ_STR(s[0].base_dir, "");
    /* the page's JSON: what is drawn, and advise's result with the medians the table gives */
    TEST_EQ_INT(json_integer_value(json_object_get(shown(x, 1), "run")), 1);
    TEST_EQ_INT(json_integer_value(json_object_get(shown(x, 1), "round")), 1);
    TEST_EQ_STR(json_string_value(json_object_get(shown(x, 1), "dir")), "n2-sliced/r1");
    TEST_NEAR(json_number_value(json_object_get(shown(x, 1), "figure")), 14, 0);
    TEST_ASSERT(json_is_null(json_object_get(shown(x, 3), "run")));
    TEST_EQ_STR(json_string_value(json_object_get(shown(x, 3), "note")), s[3].note);
    json_t *cfgs = json_object_get(json_object_get(x, "result"), "configs");
    TEST_NEAR(json_number_value(json_object_get(json_array_get(cfgs, 1), "median")), 17, 1e-12);
    TEST_NEAR(json_number_value(json_object_get(json_array_get(cfgs, 2), "median")), 50, 1e-12);
    TEST_EQ_STR(json_string_value(json_object_get(x, "representative")), adv_representative_text);
    json_decref(x);
    adv_exp_free(&e);
    return 0;
}

/* A run folder missing, a symbolic link in place of one (not followed), and a configuration's
 * folder that is a link: each a note, the others drawn on consecutive pages. */
int test_cli_advise_serve_folders(void)
{
    adv_exp e;
    make_exp(&e);
    for (int c = 0; c < 4; c++)
        add_run(&e, c, 0, 10 + c, 1);
    for (int i = 0; i < e.nruns; i++)
        TEST_EQ_INT(make_folder(&e, i, 100), 0);
    char a[8300], b[34000];
    snprintf(a, sizeof a, "%s/n2-sliced/r0", e.dir);
    snprintf(b, sizeof b, "rm -r '%s'", a);
    TEST_EQ_INT(system(b), 0);
    snprintf(a, sizeof a, "%s/n2-mps/r0", e.dir);
    snprintf(b, sizeof b, "rm -r '%s' && ln -s '%s/solo/r0' '%s'", a, e.dir, a);
    TEST_EQ_INT(system(b), 0);
    snprintf(b, sizeof b, "mv '%s/n2-mps50' '%s/elsewhere' && ln -s '%s/elsewhere' '%s/n2-mps50'",
             e.dir, e.dir, e.dir, e.dir);
    TEST_EQ_INT(system(b), 0);
    adv_shown s[ADV_MAX_CONFIGS];
    int drawn = -1;
    json_t *x = adv_serve_plan(&e, 1 << 20, s, &drawn);
    TEST_ASSERT(x);
    TEST_EQ_INT(drawn, 1);
    TEST_EQ_INT(s[0].page, 0);
    TEST_EQ_STR(s[1].note, "n2-sliced: not drawn: n2-sliced/r0: missing");
    TEST_EQ_STR(s[2].note, "n2-mps: not drawn: n2-mps/r0 is a symbolic link, not followed (an "
                           "experiment's runs are its own folders)");
    TEST_EQ_STR(s[3].note, "n2-mps50: not drawn: n2-mps50 is a symbolic link, not followed (an "
                           "experiment's runs are its own folders)");
    for (int c = 1; c < 4; c++)
        TEST_EQ_INT(s[c].page, -1);
    json_decref(x);
    adv_exp_free(&e);
    return 0;
}

/* The bytes one page loads: configurations are drawn in order while their trace files fit
 * together; the first always is; one that does not fit is noted, and a later smaller one that
 * fits is still drawn. */
int test_cli_advise_serve_bound(void)
{
    adv_exp e;
    make_exp(&e);
    for (int c = 0; c < 4; c++)
        add_run(&e, c, 0, 10 + c, 1);
    long sizes[] = {3000, 500, 900, 400};
    for (int i = 0; i < e.nruns; i++)
        TEST_EQ_INT(make_folder(&e, i, sizes[i]), 0);
    adv_shown s[ADV_MAX_CONFIGS];
    int drawn = -1;
    json_t *x = adv_serve_plan(&e, 1000, s, &drawn); /* the first alone is over */
    TEST_ASSERT(x);
    TEST_EQ_INT(drawn, 1);
    TEST_EQ_INT(s[0].page, 0);
    TEST_EQ_INT(s[0].bytes, 3000);
    TEST_ASSERT(strstr(s[1].note, "n2-sliced: not drawn: the runs drawn before it hold 0 MB of "
                                  "trace files, and its 0 MB would pass the 0 MB that one page "
                                  "loads") == s[1].note);
    json_decref(x);
    x = adv_serve_plan(&e, 4000, s, &drawn); /* 3000 + 500, 900 too many, 400 fits */
    TEST_ASSERT(x);
    TEST_EQ_INT(drawn, 3);
    TEST_EQ_INT(s[1].page, 1);
    TEST_EQ_INT(s[2].page, -1);
    TEST_ASSERT(s[2].note[0]);
    TEST_EQ_INT(s[3].page, 2);
    json_decref(x);
    adv_exp_free(&e);
    return 0;
}
