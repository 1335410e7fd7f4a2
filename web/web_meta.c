/* web_meta.c: the bodies built once at start with jansson: GET /api/runs (what the page needs to
 * lay out lanes and rows and to name kernels: devices, processes, rows, kernel names, launch
 * configurations) and GET /api/stats (the analysis tables: per process, per device with the time
 * spent at each concurrency level, the stretch histogram, warnings, the comparison). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "web_int.h"

/* set: sets key in o to v (consumed); returns 1 when either is NULL or the set fails. */
static int set(json_t *o, const char *key, json_t *v)
{
    if (!o || !v) {
        json_decref(v);
        return 1;
    }
    return json_object_set_new(o, key, v) != 0;
}

/* run_entry: one element of GET /api/runs' "runs". Devices and processes are the JSON view's
 * objects (view/), with what only the page needs added. */
static json_t *run_entry(const web_runix *r, unsigned id)
{
    const store_run *run = r->run;
    const analysis_summary *sum = analysis_get_summary(r->an);
    json_t *o = json_object(), *lanes = json_array(), *procs = json_array(), *rows = json_array();
    json_t *names = json_array(), *launches = json_array();
    uint32_t *name_of = malloc(sizeof *name_of * (run->nstrings ? run->nstrings : 1));
    int bad = !o || !lanes || !procs || !rows || !names || !launches || !name_of;
    if (bad)
        goto fail;
    bad |= set(o, "id", json_integer(id));
    bad |= set(o, "label", view_string(r->label));
    bad |= set(o, "origin_ns", json_integer(r->origin));
    bad |= set(o, "span_ns", json_integer(sum->nkernels ? sum->t_end - sum->t_begin : 0));
    bad |= set(o, "kernels", json_integer((json_int_t)run->nkernels));
    bad |= set(o, "stretch", view_number(sum->stretch));
    bad |= set(o, "predicted_gain", view_number(sum->predicted_gain));
    bad |= set(o, "gain_basis", json_string(analysis_basis_name(sum->gain_basis)));
    bad |= set(o, "headline", view_headline_json(r->an));
    for (uint32_t i = 0; i < r->nlanes && !bad; i++) {
        json_t *d = view_device_json(r->an, i);
        bad |= set(d, "lane", json_integer(i)) || json_array_append_new(lanes, d);
    }
    for (uint32_t i = 0; i < run->nprocesses && !bad; i++) {
        const store_process *p = &run->processes[i];
        json_t *e = view_process_json(r->an, i);
        bad |= set(e, "id", json_integer(i)) || set(e, "exe", view_string(p->exe)) ||
               set(e, "argv", view_string(p->argv)) || json_array_append_new(procs, e);
    }
    for (uint32_t i = 0; i < r->nrows && !bad; i++) {
        const web_row *w = &r->rows[i];
        bad |= json_array_append_new(
                   rows, json_pack("{s:i,s:i,s:i,s:I,s:I,s:i}", "id", (int)i, "lane", (int)w->slot,
                                   "process", (int)w->process, "context",
                                   (json_int_t)run->contexts[w->context].context_id, "stream",
                                   (json_int_t)run->streams[w->stream].stream_id, "kernels",
                                   (int)w->n)) != 0;
    }
    /* names: only those of launched kernels, numbered in order of first use */
    for (uint32_t i = 0; i < run->nstrings; i++)
        name_of[i] = UINT32_MAX;
    uint32_t nnames = 0;
    for (uint32_t i = 0; i < run->nlaunches && !bad; i++) {
        const store_launch *l = &run->launches[i];
        if (name_of[l->name] == UINT32_MAX) {
            name_of[l->name] = nnames++;
            const store_string *s = &run->strings[l->name];
            bad |= json_array_append_new(names, view_string(s->demangled ? s->demangled : s->text));
        }
        bad |=
            json_array_append_new(
                launches, json_pack("[i,i,i,i,i,i,i,i,i]", (int)name_of[l->name], (int)l->grid[0],
                                    (int)l->grid[1], (int)l->grid[2], (int)l->block[0],
                                    (int)l->block[1], (int)l->block[2], (int)l->registers,
                                    (int)(l->static_smem + l->dynamic_smem))) != 0;
    }
    free(name_of);
    name_of = NULL;
    bad |= set(o, "lanes", lanes);
    bad |= set(o, "processes", procs);
    bad |= set(o, "rows", rows);
    bad |= set(o, "names", names);
    bad |= set(o, "launches", launches);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
fail:
    free(name_of);
    json_decref(o);
    json_decref(lanes);
    json_decref(procs);
    json_decref(rows);
    json_decref(names);
    json_decref(launches);
    return NULL;
}

/* conc_levels: time spent at each number of processes in flight on lane `slot`, up to the
 * highest level reached (one more walk over the profile: this runs on the stats thread). */
static json_t *conc_levels(const web_runix *r, uint32_t slot)
{
    int64_t ns[WEB_CONC_LEVELS];
    if (web_lane_levels(r, slot, ns))
        return NULL;
    unsigned top = 0;
    for (unsigned i = 0; i < WEB_CONC_LEVELS; i++)
        if (ns[i])
            top = i;
    json_t *arr = json_array();
    for (unsigned i = 0; arr && i <= top; i++)
        json_array_append_new(arr, json_integer(ns[i]));
    return arr;
}

static char *stats_body(const web_runix *r, unsigned id)
{
    json_t *o = json_object(), *procs = json_array(), *devs = json_array();
    int bad = !o || !procs || !devs;
    for (uint32_t i = 0; i < analysis_nprocesses(r->an) && !bad; i++) {
        json_t *p = view_process_json(r->an, i);
        bad |= set(p, "process", json_integer(i)) || json_array_append_new(procs, p);
    }
    for (uint32_t i = 0; i < r->nlanes && !bad; i++) {
        json_t *d = view_device_json(r->an, i), *lv = conc_levels(r, i);
        bad |= set(d, "lane", json_integer(i)) ||
               set(d, "ns_at_processes", lv ? lv : json_null()) ||
               set(d, "stretch_histogram", view_histogram_json(r->an, i)) ||
               json_array_append_new(devs, d);
    }
    bad |= set(o, "run", json_integer(id));
    bad |= set(o, "summary", view_summary_json(r->an));
    bad |= set(o, "processes", procs);
    bad |= set(o, "devices", devs);
    bad |= set(o, "stretch_histogram", view_histogram_json(r->an, UINT32_MAX));
    bad |= set(o, "warnings", view_warnings_json(r->an));
    char *s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
    return s;
}

void *web_api_stats_bodies(void *arg)
{
    web *w = arg;
    for (unsigned i = 0; i < w->nruns; i++)
        web_runix_build_grids(&w->runs[i]); /* a failure leaves direct profile queries */
    for (unsigned i = 0; i < w->nruns; i++) {
        web_runix *r = &w->runs[i];
        r->stats_json = stats_body(r, i);
        r->stats_len = r->stats_json ? strlen(r->stats_json) : 0;
    }
    pthread_mutex_lock(&w->stats->lock);
    w->stats->done = 1;
    pthread_mutex_unlock(&w->stats->lock);
    return NULL;
}

int web_api_runs_body(web *w)
{
    json_t *o = json_object(), *runs = json_array(), *verdicts = json_array();
    json_t *meanings = json_array(), *rules = json_object();
    int bad = !o || !runs || !verdicts || !meanings || !rules;
    for (int v = 0; v < ANALYSIS_NVERDICTS && !bad; v++)
        bad |= json_array_append_new(verdicts, json_string(analysis_verdict_name(v))) ||
               json_array_append_new(meanings, json_string(analysis_verdict_meaning(v)));
    for (int i = 0; i < ANALYSIS_NRULES && !bad; i++)
        bad |= set(rules, analysis_rule_name(i), json_string(analysis_rule_text(i)));
    bad |= set(o, "verdicts", verdicts);
    bad |= set(o, "verdict_meanings", meanings);
    bad |= set(o, "rules", rules);
    for (unsigned i = 0; i < w->nruns && !bad; i++) {
        json_t *e = run_entry(&w->runs[i], i);
        bad |= !e || json_array_append_new(runs, e);
    }
    bad |= set(o, "runs", runs);
    if (w->nruns == 2)
        bad |= set(o, "compare", view_comparison_json(w->runs[0].an, w->runs[1].an));
    else
        bad |= set(o, "compare", json_null());
    w->runs_body = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
    if (!w->runs_body)
        return WEB_ENOMEM;
    w->runs_len = strlen(w->runs_body);
    return WEB_OK;
}
