/* advise_serve.c: what `tlview serve DIR` shows of an experiment of `tlview advise`: per
 * configuration one representative run (the successful traced run whose figure is nearest the
 * configuration's median, ties to the earlier round), the folder it is read from, its label, and
 * the experiment as one JSON object for the page (GET /api/experiment): advise's own result
 * (adv_result_json() of DIR/advise.json, the object `advise --show DIR --format json` prints)
 * with the runs drawn. cli/cmd_serve.c loads and analyses the runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "advise.h"
#include "cli.h"
#include "record.h"
#include "view.h"

const char adv_representative_text[] =
    "each configuration is drawn by its median run: the successful traced run whose figure is "
    "nearest the configuration's median (ties: the earlier round), so the page shows a run like "
    "the figure of the table, neither the best nor the worst of the repeats";

/* "time-sliced n=2", "MPS n=2", "MPS 50% n=2", "solo" */
static void config_label(const adv_config *c, char *buf, size_t n)
{
    switch (c->kind) {
    case ADV_SOLO: snprintf(buf, n, "solo"); break;
    case ADV_SLICED: snprintf(buf, n, "time-sliced n=%d", c->procs); break;
    case ADV_MPS: snprintf(buf, n, "MPS n=%d", c->procs); break;
    default: snprintf(buf, n, "MPS %d%% n=%d", c->percentage, c->procs); break;
    }
}

/* The index in e->runs of configuration c's representative run, or -1 when none succeeded with
 * traces. median: the configuration's median figure (NaN: none). *pOk: its successful runs. */
static int representative(const adv_exp *e, int c, double median, int *pOk)
{
    int best = -1, ok = 0;
    double gap = INFINITY;
    for (int i = 0; i < e->nruns; i++) {
        const adv_run *r = &e->runs[i];
        if (r->config != c || !r->ok)
            continue;
        ok++;
        if (r->gpu.files <= 0 || !isfinite(median))
            continue;
        double d = fabs(r->figure - median);
        if (d < gap || (d == gap && r->round < e->runs[best].round)) {
            gap = d;
            best = i;
        }
    }
    *pOk = ok;
    return best;
}

/* 0 when path is a folder itself (not a symbolic link to one), else -1 with why in note. */
static int real_folder(const char *path, const char *shown, char *note, size_t n)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        snprintf(note, n, "%s: %s", shown, errno == ENOENT ? "missing" : strerror(errno));
    else if (S_ISLNK(st.st_mode))
        snprintf(note, n,
                 "%s is a symbolic link, not followed (an experiment's runs are its own "
                 "folders)",
                 shown);
    else if (!S_ISDIR(st.st_mode))
        snprintf(note, n, "%s is %s, not a folder", shown, store_fs_kind(st.st_mode));
    else
        return 0;
    return -1;
}

/* The size of the trace files in folder `dir` (with their write-ahead logs). */
static int64_t traces_bytes(const char *dir)
{
    char **files;
    int n = rec_list_traces(dir, &files);
    int64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        char wal[4300];
        struct stat st;
        snprintf(wal, sizeof wal, "%s-wal", files[i]);
        bytes += stat(files[i], &st) == 0 ? st.st_size : 0;
        bytes += stat(wal, &st) == 0 ? st.st_size : 0;
    }
    rec_free_list(files, n);
    return bytes;
}

/* The folder of the solo run whose references advise used for run r (cli/advise_run.c
 * analyse_round(): the latest successful solo run made by the end of r's round) into buf; "" when
 * none, or for a solo run (its own). */
static void base_of(const adv_exp *e, const adv_run *r, char *buf, size_t n)
{
    buf[0] = 0;
    if (e->configs[r->config].kind == ADV_SOLO)
        return;
    for (int i = e->nruns - 1; i >= 0; i--) {
        const adv_run *b = &e->runs[i];
        if (b->round <= r->round && b->ok && e->configs[b->config].kind == ADV_SOLO) {
            snprintf(buf, n, "%s/%s/r%d", e->dir, e->configs[b->config].id, b->round);
            return;
        }
    }
}

/* Configuration c's entry of "shown". */
static json_t *shown_json(const adv_exp *e, int c, const adv_shown *s, int *bad)
{
    const adv_run *r = s->page >= 0 ? &e->runs[s->run] : NULL;
    json_t *x = json_object();
    char dir[64];
    view_put(x, "config", json_string(e->configs[c].id), bad);
    view_put(x, "label", view_string(s->label), bad);
    view_put(x, "run", r ? json_integer(s->page) : json_null(), bad);
    view_put(x, "round", r ? json_integer(r->round) : json_null(), bad);
    if (r)
        snprintf(dir, sizeof dir, "%s/r%d", e->configs[c].id, r->round);
    view_put(x, "dir", r ? json_string(dir) : json_null(), bad);
    view_put(x, "figure", r ? view_number(r->figure) : json_null(), bad);
    view_put(x, "note", s->note[0] ? view_string(s->note) : json_null(), bad);
    return x;
}

json_t *adv_serve_plan(const adv_exp *e, int64_t max_bytes, adv_shown *shown, int *pDrawn)
{
    int bad = 0, drawn = 0;
    int64_t total = 0;
    json_t *result = adv_result_json(e, CLI_VERSION);
    json_t *configs = json_object_get(result, "configs");
    json_t *o = json_object(), *arr = json_array();
    for (int c = 0; result && c < e->nconfigs; c++) {
        adv_shown *s = &shown[c];
        const adv_config *k = &e->configs[c];
        int ok;
        memset(s, 0, sizeof *s);
        s->page = -1;
        config_label(k, s->label, sizeof s->label);
        json_t *median = json_object_get(json_array_get(configs, c), "median");
        s->run =
            representative(e, c, json_is_number(median) ? json_number_value(median) : NAN, &ok);
        if (s->run < 0) {
            snprintf(s->note, sizeof s->note, "%s: not drawn: %s", k->id,
                     ok ? "no successful run left a trace file" : "no successful run");
            continue;
        }
        const adv_run *r = &e->runs[s->run];
        char cfg[4200], shown_dir[64], why[512];
        snprintf(cfg, sizeof cfg, "%s/%s", e->dir, k->id);
        snprintf(s->dir, sizeof s->dir, "%s/%s/r%d", e->dir, k->id, r->round);
        snprintf(shown_dir, sizeof shown_dir, "%s/r%d", k->id, r->round);
        if (real_folder(cfg, k->id, why, sizeof why) != 0 ||
            real_folder(s->dir, shown_dir, why, sizeof why) != 0) {
            snprintf(s->note, sizeof s->note, "%s: not drawn: %s", k->id, why);
            continue;
        }
        s->bytes = traces_bytes(s->dir);
        if (drawn && total + s->bytes > max_bytes) {
            snprintf(s->note, sizeof s->note,
                     "%s: not drawn: the runs drawn before it hold %.0f MB of trace files, and "
                     "its %.0f MB would pass the %.0f MB that one page loads",
                     k->id, total / 1e6, s->bytes / 1e6, max_bytes / 1e6);
            continue;
        }
        total += s->bytes;
        s->page = drawn++;
        base_of(e, r, s->base_dir, sizeof s->base_dir);
        size_t len = strlen(s->label);
        snprintf(s->label + len, sizeof s->label - len, " (r%d)", r->round);
    }
    view_put(o, "tool", json_string("tlview advise"), &bad);
    view_put(o, "dir", view_string(e->dir), &bad);
    view_put(o, "representative", json_string(adv_representative_text), &bad);
    for (int c = 0; result && c < e->nconfigs; c++)
        view_append(arr, shown_json(e, c, &shown[c], &bad), &bad);
    view_put(o, "shown", arr, &bad);
    view_put(o, "result", result ? result : json_null(), &bad);
    *pDrawn = drawn;
    return view_done(o, bad || !result);
}
