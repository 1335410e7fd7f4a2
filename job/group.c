/* group.c: one group of a job's files loaded, analysed and summarised on its own
 * (job_group_summary): the summary is the view's device objects of the group's GPUs with who
 * shared each (host, GPU index, ranks, pids), as one compact JSON text, the one thing that
 * travels from the rank that made it to the one that prints the report. */
#include <stdlib.h>
#include <string.h>

#include "job_int.h"
#include "view.h"

/* A (device, process) pair of a context that ran kernels. */
typedef struct dev_proc {
    uint32_t device, process;
} dev_proc;

static int cmp_dev_proc(const void *x, const void *y)
{
    const dev_proc *a = x, *b = y;
    return a->device != b->device ? (a->device > b->device) - (a->device < b->device)
                                  : (a->process > b->process) - (a->process < b->process);
}

/* The device object of analysis slot `slot`: host, index, ranks and pids of the processes in
 * procs[0..n) (those with kernels on it), then the view's device fields without the ones that
 * only mean something inside one run's report (gpu: the slot; first_window, windows: its slice
 * of the windows, which a job report does not carry). */
static json_t *gpu_json(const analysis *a, uint32_t slot, const uint32_t *procs, uint32_t n)
{
    const store_run *run = analysis_get_run(a);
    const analysis_device *d = analysis_get_device(a, slot);
    json_t *o = json_object(), *dev = view_device_json(a, slot);
    int64_t *ranks = malloc(((size_t)n + 1) * sizeof *ranks);
    int64_t *pids = malloc(((size_t)n + 1) * sizeof *pids);
    int bad = !o || !dev || !ranks || !pids;
    uint32_t nr = 0;
    store_rank rk;
    for (uint32_t i = 0; !bad && i < n; i++) {
        pids[i] = run->processes[procs[i]].pid;
        if (store_process_rank(&run->processes[procs[i]], &rk))
            ranks[nr++] = rk.rank;
    }
    int64_t at = d->device == STORE_NONE ? -1 : job_gpu_index(run, d->device, procs, n);
    view_put(o, "host", view_string(n ? run->processes[procs[0]].host : NULL), &bad);
    view_put(o, "index", at >= 0 ? json_integer(at) : json_null(), &bad);
    view_put(o, "ranks", bad ? NULL : job_int_array(ranks, job_unique_i64(ranks, nr)), &bad);
    view_put(o, "pids", bad ? NULL : job_int_array(pids, job_unique_i64(pids, n)), &bad);
    const char *key;
    json_t *v;
    json_object_foreach(dev, key, v)
    {
        if (strcmp(key, "gpu") && strcmp(key, "first_window") && strcmp(key, "windows") &&
            json_object_set(o, key, v))
            bad = 1;
    }
    json_decref(dev);
    free(ranks);
    free(pids);
    return view_done(o, bad);
}

/* The summary object of an analysed group; r: the range it was cut to (kind, t0, t1, origin),
 * NULL when none. */
static json_t *summary_json(const analysis *a, uint32_t group, const json_t *r)
{
    const store_run *run = analysis_get_run(a);
    /* which processes ran kernels on which device: one pass over the kernels marks the contexts
     * that ran any, then their (device, process) pairs, sorted */
    uint8_t *ran = calloc((size_t)run->ncontexts + 1, 1);
    dev_proc *pairs = malloc(((size_t)run->ncontexts + 1) * sizeof *pairs);
    uint32_t *procs = malloc(((size_t)run->ncontexts + 1) * sizeof *procs);
    json_t *o = json_object(), *gpus = json_array();
    int bad = !ran || !pairs || !procs || !o || !gpus;
    uint32_t npairs = 0;
    for (uint64_t k = 0; !bad && k < run->nkernels; k++)
        ran[run->streams[run->kernels[k].stream].context] = 1;
    for (uint32_t c = 0; !bad && c < run->ncontexts; c++)
        if (ran[c])
            pairs[npairs++] = (dev_proc){run->contexts[c].device, run->contexts[c].process};
    if (!bad)
        qsort(pairs, npairs, sizeof *pairs, cmp_dev_proc);
    for (uint32_t slot = 0; !bad && slot < analysis_ndevices(a); slot++) {
        uint32_t dev = analysis_get_device(a, slot)->device, n = 0;
        for (uint32_t i = 0; i < npairs; i++)
            if (pairs[i].device == dev && (!n || procs[n - 1] != pairs[i].process))
                procs[n++] = pairs[i].process;
        view_append(gpus, gpu_json(a, slot, procs, n), &bad);
    }
    char line[128];
    view_put(o, "group", json_integer(group), &bad);
    view_put(o, "kernels", json_integer((json_int_t)run->nkernels), &bad);
    view_put(o, "processes", json_integer(run->nprocesses), &bad);
    view_put(o, "gpus", gpus, &bad);
    if (r)
        view_put(o, "range", json_deep_copy(r), &bad);
    view_put(o, "warnings", view_warnings_json(a), &bad);
    view_put(o, "no_kernels",
             analysis_ndevices(a) ? json_null()
                                  : view_string(view_no_kernels_text(a, line, sizeof line)),
             &bad);
    free(ran);
    free(pairs);
    free(procs);
    return view_done(o, bad);
}

/* The summary of a group whose files hold no range named `name`: no GPU, and the warning that
 * says so. NULL out of memory. */
static char *no_range_summary(uint32_t group, const store_run *run, const char *name)
{
    size_t n = strlen(name) + 64;
    char *line = malloc(n);
    json_t *o = json_object();
    int bad = !o || !line;
    if (line)
        snprintf(line, n, "no captured or NVTX range named '%s' in its files", name);
    json_t *w = json_array();
    view_append(w, bad ? NULL : view_string(line), &bad);
    view_put(o, "group", json_integer(group), &bad);
    view_put(o, "kernels", json_integer(0), &bad);
    view_put(o, "processes", json_integer(run->nprocesses), &bad);
    view_put(o, "gpus", json_array(), &bad);
    view_put(o, "warnings", w, &bad);
    view_put(o, "no_kernels", json_null(), &bad);
    free(line);
    o = view_done(o, bad);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* {"group": G, "error": msg} as text; NULL out of memory. */
static char *error_summary(uint32_t group, const char *msg)
{
    json_t *o = json_object();
    int bad = !o;
    view_put(o, "group", json_integer(group), &bad);
    view_put(o, "error", view_string(msg), &bad);
    o = view_done(o, bad);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

int job_group_summary(const char *const *paths, uint32_t npaths, uint32_t group,
                      const job_options *o, char **pJson)
{
    *pJson = NULL;
    store_run *run = store_run_new(), *whole = NULL;
    analysis *a = NULL;
    json_t *range = NULL;
    int rc = JOB_ENOMEM;
    if (!run)
        return JOB_ENOMEM;
    store_run_set_gpu_identity(run, o->separate_gpus); /* no device yet: cannot fail */
    int src = store_run_load_files(run, paths, npaths);
    if (src == STORE_OK)
        src = store_run_finish(run);
    if (src != STORE_OK) {
        rc = src == STORE_ENOMEM ? JOB_ENOMEM : JOB_EFILE;
        if (rc == JOB_EFILE && !(*pJson = error_summary(group, store_run_errmsg(run))))
            rc = JOB_ENOMEM;
        goto out;
    }
    analysis_options opt = o->analysis;
    if (o->range.name || o->range.has_from || o->range.has_to) {
        /* as cli_restrict() cuts a run for tlview report: the same bytes for `--group N` */
        static const char *const kinds[] = {"time", "capture", "nvtx"};
        int64_t t0 = 0, t1 = 0;
        int kind = STORE_RANGE_TIME;
        int rrc = store_run_range(run, &o->range, &t0, &t1, &kind);
        if (rrc == STORE_RANGE_NONAME) {
            *pJson = no_range_summary(group, run, o->range.name);
            rc = *pJson ? JOB_OK : JOB_ENOMEM;
            goto out;
        }
        if (rrc) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s: %s", npaths ? paths[0] : "?",
                     rrc == STORE_RANGE_ORDER ? "--to is not after --from on this group's origin"
                                              : "the range lies beyond the times tlview holds");
            *pJson = error_summary(group, msg);
            rc = *pJson ? JOB_EFILE : JOB_ENOMEM;
            goto out;
        }
        store_run *cut = NULL;
        if (store_run_restrict(run, t0, t1, &cut) != STORE_OK)
            goto out; /* JOB_ENOMEM */
        whole = run;
        run = cut;
        if (!o->measure_set) { /* the gains over the range itself */
            if (kind != STORE_RANGE_TIME) {
                opt.measure =
                    kind == STORE_RANGE_CAPTURE ? ANALYSIS_MEASURE_CAPTURE : ANALYSIS_MEASURE_RANGE;
                opt.measure_range = o->range.name;
            } else {
                opt.measure = ANALYSIS_MEASURE_SPAN;
                opt.measure_t0 = t0;
                opt.measure_t1 = t1;
            }
        }
        if (!opt.baseline) /* the solo references from the whole recording */
            opt.baseline = whole;
        /* as the report's "range": an end not given is null */
        int open0 = kind == STORE_RANGE_TIME && !o->range.has_from;
        int open1 = kind == STORE_RANGE_TIME && !o->range.has_to;
        int rbad = !(range = json_object());
        view_put(range, "kind", json_string(kinds[kind]), &rbad);
        view_put(range, "t0", open0 ? json_null() : json_integer(t0), &rbad);
        view_put(range, "t1", open1 ? json_null() : json_integer(t1), &rbad);
        view_put(range, "origin_ns", json_integer(store_run_origin(whole)), &rbad);
        if (!(range = view_done(range, rbad)))
            goto out;
    }
    int arc = analysis_run(run, &opt, &a);
    if (arc != ANALYSIS_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: analysis failed: %s", npaths ? paths[0] : "?",
                 analysis_strerror(arc));
        rc = arc == ANALYSIS_ENOMEM ? JOB_ENOMEM : JOB_EFILE;
        if (rc == JOB_EFILE && !(*pJson = error_summary(group, msg)))
            rc = JOB_ENOMEM;
        goto out;
    }
    json_t *j = summary_json(a, group, range);
    /* compact, reals with 17 digits: every double reads back as the same double */
    *pJson = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    rc = *pJson ? JOB_OK : JOB_ENOMEM;
out:
    analysis_free(a);
    json_decref(range);
    store_run_free(run);
    store_run_free(whole);
    return rc;
}

int job_summaries_local(const job_index *idx, const job_options *o, char **summaries)
{
    uint32_t n = job_index_ngroups(idx);
    for (uint32_t g = 0; g < n; g++)
        summaries[g] = NULL;
    for (uint32_t g = 0; g < n; g++) {
        const job_group *gr = job_index_group(idx, g);
        if (job_group_summary(gr->paths, gr->nfiles, g, o, &summaries[g]) == JOB_ENOMEM) {
            for (uint32_t i = 0; i <= g; i++) {
                free(summaries[i]);
                summaries[i] = NULL;
            }
            return JOB_ENOMEM;
        }
    }
    return JOB_OK;
}
