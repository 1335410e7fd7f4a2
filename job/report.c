/* report.c: the job report (job_report_json) put together from the summaries of the groups,
 * wherever they were made: the GPUs ranked by time-sliced share, the job's totals, and the
 * warnings of every group named by host and GPU. It reads only the summaries' text and the index,
 * so one process and any number of MPI ranks print the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_int.h"
#include "view.h"

/* A GPU entry with its ranking key. */
typedef struct ranked {
    json_t *gpu;  /* borrowed from the array being built */
    double share; /* by_verdict.time-sliced.share, 0 when it has no such window */
    uint32_t seq; /* group order, for ties */
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->share != b->share)
        return a->share < b->share ? 1 : -1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* by_verdict.time-sliced.share of a GPU entry, 0 when absent. */
static double sliced_share(const json_t *gpu)
{
    const json_t *s = json_object_get(json_object_get(json_object_get(gpu, "by_verdict"),
                                                      analysis_verdict_name(ANALYSIS_TIME_SLICED)),
                                      "share");
    return json_is_number(s) ? json_number_value(s) : 0.0;
}

/* "group 3 (node07 GPU 2)" for the warnings of a group's GPU; gpu may be NULL (the group). */
static void where(char *buf, size_t n, int64_t group, const json_t *gpu, const char *host)
{
    const json_t *at = gpu ? json_object_get(gpu, "index") : NULL;
    if (json_is_integer(at))
        snprintf(buf, n, "group %lld (%s GPU %lld)", (long long)group, host ? host : "?",
                 (long long)json_integer_value(at));
    else
        snprintf(buf, n, "group %lld (%s)", (long long)group, host ? host : "?");
}

/* Appends "<where>: <text>" to warnings. */
static void warn(json_t *warnings, const char *at, const char *text, int *bad)
{
    size_t n = strlen(at) + strlen(text) + 3;
    char *line = malloc(n);
    if (!line) {
        *bad = 1;
        return;
    }
    snprintf(line, n, "%s: %s", at, text);
    view_append(warnings, view_string(line), bad);
    free(line);
}

/* The distinct ranks of the job's processes. */
static uint32_t count_ranks(const store_run *run)
{
    int64_t *r = malloc(((size_t)run->nprocesses + 1) * sizeof *r);
    if (!r)
        return 0;
    uint32_t n = 0;
    store_rank rk;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        if (store_process_rank(&run->processes[p], &rk))
            r[n++] = rk.rank;
    n = job_unique_i64(r, n);
    free(r);
    return n;
}

/* The files that ran nothing on a GPU, as one warning naming the first few. */
static void warn_no_gpu(const job_index *idx, json_t *warnings, int *bad)
{
    uint32_t n = 0, shown = 0;
    char line[2048] = "";
    size_t len = 0;
    for (uint32_t f = 0; f < job_index_nfiles(idx); f++) {
        const job_file *jf = job_index_file(idx, f);
        if (jf->group != JOB_NO_GROUP)
            continue;
        n++;
        if (shown < 3 && len < sizeof line) {
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", shown ? ", " : "",
                                    jf->path);
            shown++;
        }
    }
    if (!n)
        return;
    char head[128];
    snprintf(head, sizeof head, "%u file%s ran nothing on a GPU (no CUDA context)", n,
             n == 1 ? "" : "s");
    char tail[2200];
    snprintf(tail, sizeof tail, "%s%s", line, n > shown ? ", ..." : "");
    warn(warnings, head, tail, bad);
}

json_t *job_report_json(const job_index *idx, char *const *summaries, const char *version,
                        char *err, size_t errlen)
{
    uint32_t ng = job_index_ngroups(idx);
    json_t *out = json_object(), *job = json_object(), *gpus = json_array(),
           *warnings = json_array(), **parsed = calloc((size_t)ng + 1, sizeof *parsed);
    int bad = !out || !job || !gpus || !warnings || !parsed;
    ranked *order = NULL;
    uint32_t nr = 0, cap = 0;
    int64_t kernels = 0;
    err[0] = '\0';
    for (uint32_t g = 0; !bad && g < ng; g++) {
        json_error_t je;
        json_t *s = summaries[g] ? json_loads(summaries[g], 0, &je) : NULL;
        parsed[g] = s;
        const json_t *e = json_object_get(s, "error");
        const json_t *gl = json_object_get(s, "gpus");
        if (json_is_string(e)) {
            snprintf(err, errlen, "%s", json_string_value(e));
            bad = 1;
        } else if (!json_is_array(gl) || json_integer_value(json_object_get(s, "group")) != g) {
            snprintf(err, errlen, "the summary of group %u is missing or damaged", g);
            bad = 1;
        }
    }
    for (uint32_t g = 0; !bad && g < ng; g++) {
        json_t *s = parsed[g];
        const char *host = job_index_group(idx, g)->host;
        char at[512];
        kernels += json_integer_value(json_object_get(s, "kernels"));
        size_t i;
        json_t *gpu;
        json_t *list = json_object_get(s, "gpus");
        json_array_foreach(list, i, gpu)
        {
            json_t *o = json_object();
            view_put(o, "group", json_integer(g), &bad);
            if (!bad && json_object_update(o, gpu))
                bad = 1;
            const json_t *r = json_object_get(s, "range"); /* the group's, on each of its GPUs */
            if (!bad && r && json_object_set(o, "range", (json_t *)r))
                bad = 1;
            if (!bad && nr == cap) {
                ranked *grown = realloc(order, (cap ? 2 * cap : 64) * sizeof *order);
                if (grown) {
                    order = grown;
                    cap = cap ? 2 * cap : 64;
                } else
                    bad = 1;
            }
            if (bad) {
                json_decref(o);
                break;
            }
            order[nr] = (ranked){o, sliced_share(o), nr};
            nr++;
        }
        where(at, sizeof at, g, json_array_size(list) == 1 ? json_array_get(list, 0) : NULL, host);
        const json_t *nk = json_object_get(s, "no_kernels");
        if (json_is_string(nk))
            warn(warnings, at, json_string_value(nk), &bad);
        json_t *w;
        json_array_foreach(json_object_get(s, "warnings"), i, w)
        {
            if (json_is_string(w))
                warn(warnings, at, json_string_value(w), &bad);
        }
    }
    if (!bad)
        warn_no_gpu(idx, warnings, &bad);
    if (order)
        qsort(order, nr, sizeof *order, cmp_ranked);
    for (uint32_t i = 0; i < nr; i++)
        view_append(gpus, order[i].gpu, &bad); /* consumes every entry, also after a failure */
    const store_run *run = job_index_run(idx);
    view_put(job, "note", json_string(JOB_NOTE), &bad);
    view_put(job, "files", json_integer(job_index_nfiles(idx)), &bad);
    view_put(job, "processes", json_integer(run->nprocesses), &bad);
    view_put(job, "ranks", json_integer(count_ranks(run)), &bad);
    view_put(job, "hosts", json_integer(job_index_nhosts(idx)), &bad);
    view_put(job, "groups", json_integer(ng), &bad);
    view_put(job, "gpus", json_integer(nr), &bad);
    view_put(job, "kernels", json_integer(kernels), &bad);
    view_put(out, "tlview", json_string(version), &bad);
    view_put(out, "job", job, &bad);
    view_put(out, "gpus", gpus, &bad);
    view_put(out, "warnings", warnings, &bad);
    for (uint32_t g = 0; parsed && g < ng; g++)
        json_decref(parsed[g]);
    free(parsed);
    free(order);
    if (bad && !err[0])
        snprintf(err, errlen, "out of memory");
    return view_done(out, bad);
}
