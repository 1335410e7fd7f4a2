/* web_meta.c: the bodies built once at start with jansson: GET /api/runs (what the page needs to
 * lay out lanes and rows and to name kernels: devices, processes, rows, kernel names, launch
 * configurations) and GET /api/stats (the analysis tables: per process, per device with the time
 * spent at each concurrency level, the stretch histogram, warnings, the comparison). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

#define HIST_LO 0.125 /* stretch histogram: log2 bins over [1/8, 64) */
#define HIST_HI 64.0
#define HIST_BINS 36

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* run_entry: one element of GET /api/runs' "runs". */
static json_t *run_entry(const web_runix *r, unsigned id)
{
    const store_run *run = r->run;
    const analysis_summary *sum = analysis_get_summary(r->an);
    json_t *o = json_object(), *lanes = json_array(), *procs = json_array(), *rows = json_array();
    json_t *names = json_array(), *launches = json_array();
    uint32_t *name_of = malloc(sizeof *name_of * (run->nstrings ? run->nstrings : 1));
    if (!o || !lanes || !procs || !rows || !names || !launches || !name_of)
        goto fail;
    json_object_set_new(o, "id", json_integer(id));
    json_object_set_new(o, "label", json_string(r->label));
    json_object_set_new(o, "origin_ns", json_integer(r->origin));
    json_object_set_new(o, "span_ns", json_integer(sum->nkernels ? sum->t_end - sum->t_begin : 0));
    json_object_set_new(o, "nkernels", json_integer((json_int_t)run->nkernels));
    json_object_set_new(o, "mean_stretch", num_or_null(sum->mean_stretch));
    json_object_set_new(o, "predicted_gain", num_or_null(sum->predicted_gain));
    for (uint32_t i = 0; i < r->nlanes; i++) {
        const analysis_device *d = r->lanes[i].dev;
        const store_device *sd = d->device != STORE_NONE ? &run->devices[d->device] : NULL;
        json_array_append_new(
            lanes,
            json_pack("{s:i,s:o,s:o,s:i,s:I,s:i,s:b,s:s}", "lane", (int)i, "name",
                      str_or_null(sd ? sd->name : "unknown device"), "uuid",
                      str_or_null(sd ? sd->uuid : NULL), "sm_count", sd ? (int)sd->sm_count : 0,
                      "nkernels", (json_int_t)d->nkernels, "nprocesses", (int)d->nprocesses, "mps",
                      d->mps, "verdict", analysis_verdict_name(d->verdict)));
    }
    for (uint32_t i = 0; i < run->nprocesses; i++) {
        const store_process *p = &run->processes[i];
        const analysis_process *ap = analysis_get_process(r->an, i);
        json_array_append_new(procs,
                              json_pack("{s:i,s:I,s:o,s:o,s:o,s:o,s:b,s:I}", "id", (int)i, "pid",
                                        (json_int_t)p->pid, "host", str_or_null(p->host), "exe",
                                        str_or_null(p->exe), "argv", str_or_null(p->argv), "file",
                                        str_or_null(p->file), "mps", ap ? ap->mps : 0, "nkernels",
                                        (json_int_t)(ap ? ap->nkernels : 0)));
    }
    for (uint32_t i = 0; i < r->nrows; i++) {
        const web_row *w = &r->rows[i];
        json_array_append_new(
            rows, json_pack("{s:i,s:i,s:i,s:I,s:I,s:i}", "id", (int)i, "lane", (int)w->slot,
                            "process", (int)w->process, "context",
                            (json_int_t)run->contexts[w->context].context_id, "stream",
                            (json_int_t)run->streams[w->stream].stream_id, "nkernels", (int)w->n));
    }
    /* names: only those of launched kernels, numbered in order of first use */
    for (uint32_t i = 0; i < run->nstrings; i++)
        name_of[i] = UINT32_MAX;
    uint32_t nnames = 0;
    for (uint32_t i = 0; i < run->nlaunches; i++) {
        const store_launch *l = &run->launches[i];
        if (name_of[l->name] == UINT32_MAX) {
            name_of[l->name] = nnames++;
            const store_string *s = &run->strings[l->name];
            json_array_append_new(names, json_string(s->demangled ? s->demangled : s->text));
        }
        json_array_append_new(launches, json_pack("[i,i,i,i,i,i,i,i,i]", (int)name_of[l->name],
                                                  (int)l->grid[0], (int)l->grid[1], (int)l->grid[2],
                                                  (int)l->block[0], (int)l->block[1],
                                                  (int)l->block[2], (int)l->registers,
                                                  (int)(l->static_smem + l->dynamic_smem)));
    }
    free(name_of);
    json_object_set_new(o, "lanes", lanes);
    json_object_set_new(o, "processes", procs);
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "names", names);
    json_object_set_new(o, "launches", launches);
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

static json_t *histogram_json(const uint64_t *counts, uint64_t noref)
{
    json_t *c = json_array();
    for (unsigned i = 0; c && i < HIST_BINS; i++)
        json_array_append_new(c, json_integer((json_int_t)counts[i]));
    return json_pack("{s:f,s:f,s:i,s:o,s:I}", "lo", HIST_LO, "hi", HIST_HI, "bins", HIST_BINS,
                     "counts", c, "noref", (json_int_t)noref);
}

static char *stats_body(const web_runix *r, unsigned id)
{
    const store_run *run = r->run;
    const analysis_summary *sum = analysis_get_summary(r->an);
    json_t *o = json_object(), *procs = json_array(), *devs = json_array(), *warn = json_array();
    /* every kernel is on exactly one lane (its context's device slot): the run's histogram is
     * the sum of the lanes', which saves a pass over the kernels */
    uint64_t run_counts[HIST_BINS] = {0}, run_noref = 0;
    int run_hist_ok = 1;
    for (uint32_t i = 0; i < analysis_nprocesses(r->an); i++) {
        const analysis_process *p = analysis_get_process(r->an, i);
        json_array_append_new(
            procs,
            json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:b}", "process", (int)p->process,
                      "pid", (json_int_t)run->processes[p->process].pid, "nkernels",
                      (json_int_t)p->nkernels, "nreferenced", (json_int_t)p->nreferenced,
                      "kernel_ns", (json_int_t)p->kernel_ns, "busy_ns", (json_int_t)p->busy_ns,
                      "overlap_ns", (json_int_t)p->overlap_ns, "mean_stretch",
                      num_or_null(p->mean_stretch), "slowdown", num_or_null(p->slowdown), "mps",
                      p->mps));
    }
    for (uint32_t i = 0; i < r->nlanes; i++) {
        const analysis_device *d = r->lanes[i].dev;
        json_t *byv = json_object();
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
            json_object_set_new(byv, analysis_verdict_name(v), json_real(d->ns_by_verdict[v]));
        json_t *lv = conc_levels(r, i);
        uint64_t counts[HIST_BINS], noref = 0;
        json_t *hist = json_null();
        if (analysis_stretch_histogram(r->an, i, HIST_LO, HIST_HI, counts, HIST_BINS, &noref) ==
            ANALYSIS_OK) {
            hist = histogram_json(counts, noref);
            for (unsigned b = 0; b < HIST_BINS; b++)
                run_counts[b] += counts[b];
            run_noref += noref;
        } else {
            run_hist_ok = 0;
        }
        json_array_append_new(
            devs,
            json_pack(
                "{s:i,s:I,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:b,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
                "lane", (int)i, "nkernels", (json_int_t)d->nkernels, "nprocesses",
                (int)d->nprocesses, "ncontexts", (int)d->ncontexts, "span_ns",
                (json_int_t)(d->t_end - d->t_begin), "busy_ns", (json_int_t)d->busy_ns,
                "overlap_ns", (json_int_t)d->overlap_ns, "idle_ns", (json_int_t)d->idle_ns,
                "nwindows", (json_int_t)d->nwindows, "max_processes", (int)d->max_processes,
                "max_contexts", (int)d->max_contexts, "mps", d->mps, "verdict",
                analysis_verdict_name(d->verdict), "mean_stretch", num_or_null(d->mean_stretch),
                "contexts", num_or_null(d->contexts), "parallelism", num_or_null(d->parallelism),
                "predicted_gain", num_or_null(d->predicted_gain), "ns_by_verdict", byv,
                "ns_at_processes", lv ? lv : json_null(), "stretch_hist", hist));
    }
    for (uint32_t i = 0; i < analysis_nwarnings(r->an); i++)
        json_array_append_new(warn, json_string(analysis_warning(r->an, i)));
    json_object_set_new(o, "run", json_integer(id));
    json_object_set_new(
        o, "summary",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "nkernels", (json_int_t)sum->nkernels,
                  "nzero", (json_int_t)sum->nzero, "nreferenced", (json_int_t)sum->nreferenced,
                  "span_ns", (json_int_t)(sum->nkernels ? sum->t_end - sum->t_begin : 0), "busy_ns",
                  (json_int_t)sum->busy_ns, "overlap_ns", (json_int_t)sum->overlap_ns,
                  "mean_stretch", num_or_null(sum->mean_stretch), "slowdown",
                  num_or_null(sum->slowdown), "predicted_gain", num_or_null(sum->predicted_gain)));
    json_object_set_new(o, "processes", procs);
    json_object_set_new(o, "devices", devs);
    json_object_set_new(o, "stretch_hist",
                        run_hist_ok ? histogram_json(run_counts, run_noref) : json_null());
    json_object_set_new(o, "warnings", warn);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
    return s;
}

void *web_api_stats_bodies(void *arg)
{
    web *w = arg;
    for (unsigned i = 0; i < w->nruns; i++)
        web_runix_build_grids(&w->runs[i]); /* a failure leaves direct profile queries */
    for (unsigned i = 0; i < w->nruns; i++)
        w->runs[i].stats_json = stats_body(&w->runs[i], i);
    pthread_mutex_lock(&w->stats->lock);
    w->stats->done = 1;
    pthread_mutex_unlock(&w->stats->lock);
    return NULL;
}

int web_api_runs_body(web *w)
{
    json_t *o = json_object(), *runs = json_array(), *verdicts = json_array();
    if (!o || !runs || !verdicts)
        goto nomem;
    for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
        json_array_append_new(verdicts, json_string(analysis_verdict_name(v)));
    json_object_set_new(o, "verdicts", verdicts);
    verdicts = NULL;
    for (unsigned i = 0; i < w->nruns; i++) {
        json_t *e = run_entry(&w->runs[i], i);
        if (!e)
            goto nomem;
        json_array_append_new(runs, e);
    }
    json_object_set_new(o, "runs", runs);
    runs = NULL;
    analysis_comparison c;
    if (w->nruns == 2 && analysis_compare(w->runs[0].an, w->runs[1].an, &c) == ANALYSIS_OK)
        json_object_set_new(
            o, "compare",
            json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:o}", "span_a", (json_int_t)c.span_a,
                      "span_b", (json_int_t)c.span_b, "measured_gain", num_or_null(c.measured_gain),
                      "predicted_gain", num_or_null(c.predicted_gain), "slowdown_b",
                      num_or_null(c.slowdown_b), "predicted_gain_at_slowdown_b",
                      num_or_null(c.predicted_gain_at_slowdown_b), "mean_stretch_a",
                      num_or_null(c.mean_stretch_a), "mean_stretch_b",
                      num_or_null(c.mean_stretch_b), "common_signatures", (int)c.common_signatures,
                      "duration_ratio", num_or_null(c.duration_ratio)));
    else
        json_object_set_new(o, "compare", json_null());
    w->runs_body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
    if (!w->runs_body)
        return WEB_ENOMEM;
    w->runs_len = strlen(w->runs_body);
    return WEB_OK;
nomem:
    json_decref(o);
    json_decref(runs);
    json_decref(verdicts);
    return WEB_ENOMEM;
}
