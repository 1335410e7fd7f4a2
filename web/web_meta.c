/* web_meta.c: the bodies built once per generation with jansson: GET /api/runs (what the page
 * needs to lay out lanes and rows, name kernels and fill the tables: summary, devices, processes,
 * rows, captured ranges, kernel names, launch configurations, the comparison) and GET /api/stats
 * (what takes longer and is not sent twice: per device the time spent at each concurrency level and
 * the stretch histogram, the run's histogram, warnings). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "web_int.h"

/* run_entry: one element of GET /api/runs' "runs". The summary, devices (lanes) and processes are
 * the JSON view's objects (view/), with what only the page needs added. */
static json_t *run_entry(const web_runix *r, unsigned id)
{
    const store_run *run = r->run;
    json_t *o = json_object(), *lanes = json_array(), *procs = json_array(), *rows = json_array();
    json_t *names = json_array(), *launches = json_array();
    uint32_t *name_of = malloc(sizeof *name_of * (run->nstrings ? run->nstrings : 1));
    int bad = !name_of;
    view_put(o, "id", json_integer(id), &bad);
    view_put(o, "label", view_string(r->label), &bad);
    view_put(o, "origin_ns", json_integer(r->origin), &bad);
    view_put(o, "summary", view_summary_json(r->an), &bad);
    view_put(o, "headline", view_headline_json(r->an), &bad);
    for (uint32_t i = 0; i < r->nlanes && !bad; i++) {
        json_t *d = view_device_json(r->an, i);
        view_put(d, "lane", json_integer(i), &bad);
        /* to 2 decimals, rounded up: the track's `par` (2 decimals) never passes it */
        view_put(d, "par_max", json_real(ceil(r->lanes[i].par_max * 100 - 1e-9) / 100), &bad);
        view_append(lanes, d, &bad);
    }
    for (uint32_t i = 0; i < run->nprocesses && !bad; i++) {
        const store_process *p = &run->processes[i];
        json_t *e = view_process_json(r->an, i);
        view_put(e, "id", json_integer(i), &bad);
        view_put(e, "exe", view_string(p->exe), &bad);
        view_put(e, "argv", view_string(p->argv), &bad);
        view_append(procs, e, &bad);
    }
    for (uint32_t i = 0; i < r->nrows && !bad; i++) {
        const web_row *w = &r->rows[i];
        static const char *const kind[WEB_NROW_KINDS] = {"kernels", "copies", "api", "nvtx"};
        static const char *const count[WEB_NROW_KINDS] = {"kernels", "copies", "calls", "ranges"};
        json_t *e = json_pack("{s:i,s:s,s:i,s:i}", "id", (int)i, "kind", kind[w->kind], "lane",
                              (int)w->slot, "process", (int)w->process);
        if (web_kind_threaded(w->kind)) {
            view_put(e, "thread", json_integer((json_int_t)w->thread), &bad);
            view_put(e, "depth", json_integer(w->nlev), &bad);
        } else {
            view_put(e, "context", json_integer(run->contexts[w->context].context_id), &bad);
            view_put(e, "stream", json_integer(run->streams[w->stream].stream_id), &bad);
        }
        view_put(e, count[w->kind], json_integer(w->n), &bad);
        view_append(rows, e, &bad);
    }
    /* names: only those of launched kernels, numbered in order of first use */
    for (uint32_t i = 0; i < run->nstrings && name_of; i++)
        name_of[i] = UINT32_MAX;
    uint32_t nnames = 0;
    for (uint32_t i = 0; i < run->nlaunches && !bad; i++) {
        const store_launch *l = &run->launches[i];
        if (name_of[l->name] == UINT32_MAX) {
            name_of[l->name] = nnames++;
            const store_string *s = &run->strings[l->name];
            view_append(names, view_string(s->demangled), &bad);
        }
        view_append(launches,
                    json_pack("[i,i,i,i,i,i,i,i,i]", (int)name_of[l->name], (int)l->grid[0],
                              (int)l->grid[1], (int)l->grid[2], (int)l->block[0], (int)l->block[1],
                              (int)l->block[2], (int)l->registers,
                              (int)(l->static_smem + l->dynamic_smem)),
                    &bad);
    }
    free(name_of);
    json_t *caps = json_array();
    for (uint32_t i = 0; i < run->ncaptures && !bad; i++) {
        json_t *e = view_capture_json(r->an, i);
        view_put(e, "process", json_integer(run->captures[i].process), &bad);
        view_put(e, "start", json_integer(run->captures[i].start - r->origin), &bad);
        view_put(e, "end", json_integer(run->captures[i].end - r->origin), &bad);
        view_append(caps, e, &bad);
    }
    view_put(o, "captures", caps, &bad);
    view_put(o, "lanes", lanes, &bad);
    view_put(o, "processes", procs, &bad);
    view_put(o, "rows", rows, &bad);
    view_put(o, "names", names, &bad);
    view_put(o, "launches", launches, &bad);
    return view_done(o, bad);
}

/* levels_json: ns[0 .. the highest level reached] as a JSON array. */
static json_t *levels_json(const int64_t *ns)
{
    unsigned top = 0;
    for (unsigned i = 0; i < WEB_CONC_LEVELS; i++)
        if (ns[i])
            top = i;
    json_t *arr = json_array();
    for (unsigned i = 0; arr && i <= top; i++)
        json_array_append_new(arr, json_integer(ns[i]));
    return arr;
}

/* conc_levels: time spent at each number of processes (*procs) and of contexts (*ctxs) in flight
 * on lane `slot`, up to the highest level reached (one more walk over the profile: this runs on
 * the stats thread). 0, or -1 when out of memory (both NULL). */
static int conc_levels(const web_runix *r, uint32_t slot, json_t **procs, json_t **ctxs)
{
    int64_t ns[WEB_CONC_LEVELS], nc[WEB_CONC_LEVELS];
    *procs = *ctxs = NULL;
    if (web_lane_levels(r, slot, ns, nc))
        return -1;
    *procs = levels_json(ns);
    *ctxs = levels_json(nc);
    return 0;
}

/* stats_body: GET /api/stats of run r: what /api/runs does not carry (it has the summary, the
 * devices and the processes): per lane the time at each number of processes in flight and the
 * stretch histogram, the run's histogram and its warnings. */
static char *stats_body(const web_runix *r, unsigned id)
{
    json_t *o = json_object(), *devs = json_array();
    int bad = 0;
    for (uint32_t i = 0; i < r->nlanes && !bad; i++) {
        json_t *d = json_object(), *lv, *lc;
        conc_levels(r, i, &lv, &lc);
        view_put(d, "lane", json_integer(i), &bad);
        view_put(d, "ns_at_processes", lv ? lv : json_null(), &bad);
        view_put(d, "ns_at_contexts", lc ? lc : json_null(), &bad);
        view_put(d, "stretch_histogram", view_histogram_json(r->an, i), &bad);
        view_append(devs, d, &bad);
    }
    view_put(o, "run", json_integer(id), &bad);
    view_put(o, "devices", devs, &bad);
    view_put(o, "stretch_histogram", view_histogram_json(r->an, UINT32_MAX), &bad);
    view_put(o, "warnings", view_warnings_json(r->an), &bad);
    o = view_done(o, bad);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(o);
    return s;
}

void *web_api_stats_bodies(void *arg)
{
    web_gen *g = arg;
    for (unsigned i = 0; i < g->nruns; i++)
        web_runix_build_grids(&g->runs[i]); /* a failure leaves direct profile queries */
    for (unsigned i = 0; i < g->nruns; i++) {
        web_runix *r = &g->runs[i];
        if (r->stats_body && r->stats_id == i)
            continue; /* thawed with the index, built for this position */
        web_blob_release(r->stats_body);
        char *s = stats_body(r, i);
        r->stats_body = s ? web_blob_new(s, strlen(s)) : NULL;
        r->stats_id = i;
        free(s);
    }
    pthread_mutex_lock(&g->stats->lock);
    g->stats->done = 1;
    pthread_cond_broadcast(&g->stats->finished);
    pthread_mutex_unlock(&g->stats->lock);
    return NULL;
}

int web_api_runs_body(web_gen *g, unsigned shows)
{
    int follow = (shows & WEB_SHOW_FOLLOW) != 0;
    json_t *exports = json_array();
    json_t *o = json_object(), *runs = json_array(), *verdicts = json_array();
    json_t *meanings = json_array(), *rules = json_object();
    int bad = 0;
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++) {
        view_append(verdicts, json_string(analysis_verdict_name(v)), &bad);
        view_append(meanings, json_string(analysis_verdict_meaning(v)), &bad);
    }
    for (int i = 0; i < ANALYSIS_NRULES; i++)
        view_put(rules, analysis_rule_name(i), json_string(analysis_rule_text(i)), &bad);
    view_put(o, "verdicts", verdicts, &bad);
    view_put(o, "verdict_meanings", meanings, &bad);
    view_put(o, "rules", rules, &bad);
    view_put(o, "generation", json_integer((json_int_t)g->id), &bad);
    view_put(o, "follow", json_boolean(follow), &bad);
    view_put(o, "experiment", json_boolean(shows & WEB_SHOW_EXPERIMENT), &bad);
    view_append(exports, json_string("json"), &bad); /* the view's: always */
    if (shows & WEB_SHOW_CHROME)
        view_append(exports, json_string("chrome"), &bad);
    if (shows & WEB_SHOW_TEXT)
        view_append(exports, json_string("text"), &bad);
    view_put(o, "exports", exports, &bad);
    for (unsigned i = 0; i < g->nruns && !bad; i++)
        view_append(runs, run_entry(&g->runs[i], i), &bad);
    view_put(o, "runs", runs, &bad);
    view_put(o, "compare",
             g->nruns == 2 ? view_comparison_json(g->runs[0].an, g->runs[1].an) : json_null(),
             &bad);
    o = view_done(o, bad);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(o);
    g->runs_body = s ? web_blob_new(s, strlen(s)) : NULL;
    free(s);
    return g->runs_body ? WEB_OK : WEB_ENOMEM;
}
