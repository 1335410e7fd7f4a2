/* report_json.c: `tlview report --format json|csv`: the same figures as the terminal report for
 * scripts. JSON through jansson (one object, NaN written as null); CSV one table at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

/* A number, or null when it is not finite. */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *json_devices(const analysis *a)
{
    const store_run *run = analysis_get_run(a);
    json_t *arr = json_array();
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        const store_device *sd = d->device != STORE_NONE ? &run->devices[d->device] : NULL;
        json_t *byv = json_object();
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
            json_object_set_new(byv, analysis_verdict_name(v), json_real(d->ns_by_verdict[v]));
        json_array_append_new(
            arr, json_pack(
                     "{s:i, s:o, s:o, s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:o, s:i, s:i, s:b, "
                     "s:s, s:f,"
                     " s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
                     "gpu", (int)i, "uuid", jstr(sd ? sd->uuid : NULL), "name",
                     jstr(sd ? sd->name : NULL), "kernels", (json_int_t)d->nkernels, "processes",
                     (int)d->nprocesses, "contexts", (int)d->ncontexts, "t_begin",
                     (json_int_t)d->t_begin, "t_end", (json_int_t)d->t_end, "busy_ns",
                     (json_int_t)d->busy_ns, "overlap_ns", (json_int_t)d->overlap_ns, "idle_ns",
                     (json_int_t)d->idle_ns, "overlap_share",
                     jnum(d->busy_ns ? (double)d->overlap_ns / d->busy_ns : NAN), "max_processes",
                     (int)d->max_processes, "max_contexts", (int)d->max_contexts, "mps", d->mps,
                     "verdict", analysis_verdict_name(d->verdict), "verdict_ns", d->verdict_ns,
                     "mean_stretch", jnum(d->mean_stretch), "contexts_in_flight", jnum(d->contexts),
                     "parallelism", jnum(d->parallelism), "predicted_gain", jnum(d->predicted_gain),
                     "ns_by_verdict", byv, "first_window", (json_int_t)d->first_window, "windows",
                     (json_int_t)d->nwindows, "max_kernels", (json_int_t)d->max_kernels));
    }
    return arr;
}

static json_t *json_windows(const analysis *a)
{
    json_t *arr = json_array();
    const analysis_window *w = analysis_windows(a);
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        for (uint64_t k = d->first_window; k < d->first_window + d->nwindows; k++)
            json_array_append_new(
                arr,
                json_pack("{s:i, s:I, s:I, s:I, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:b, s:b}",
                          "gpu", (int)i, "t0", (json_int_t)w[k].t0, "t1", (json_int_t)w[k].t1,
                          "busy_ns", (json_int_t)w[k].busy_ns, "verdict",
                          analysis_verdict_name(w[k].verdict), "kernels", (int)w[k].nkernels,
                          "max_processes", (int)w[k].max_processes, "max_contexts",
                          (int)w[k].max_contexts, "contexts", jnum(w[k].contexts), "mean_stretch",
                          jnum(w[k].mean_stretch), "parallelism", jnum(w[k].parallelism),
                          "coverage", jnum(w[k].coverage), "mps", w[k].mps,
                          "stretch_matches_contexts", w[k].stretch_matches_contexts));
    }
    return arr;
}

static json_t *json_processes(const analysis *a)
{
    const store_run *run = analysis_get_run(a);
    json_t *arr = json_array();
    for (uint32_t p = 0; p < analysis_nprocesses(a); p++) {
        const analysis_process *ap = analysis_get_process(a, p);
        const store_process *sp = &run->processes[p];
        json_array_append_new(
            arr, json_pack("{s:I, s:o, s:o, s:o, s:b, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:b}",
                           "pid", (json_int_t)sp->pid, "host", jstr(sp->host), "file",
                           jstr(sp->file), "run_id", jstr(sp->run_id), "complete", sp->complete,
                           "error", jstr(sp->error), "kernels", (json_int_t)ap->nkernels,
                           "referenced", (json_int_t)ap->nreferenced, "kernel_ns",
                           (json_int_t)ap->kernel_ns, "busy_ns", (json_int_t)ap->busy_ns,
                           "overlap_ns", (json_int_t)ap->overlap_ns, "mean_stretch",
                           jnum(ap->mean_stretch), "slowdown", jnum(ap->slowdown), "mps", ap->mps));
    }
    return arr;
}

static json_t *json_signatures(const analysis *a)
{
    const store_run *run = analysis_get_run(a);
    json_t *arr = json_array();
    for (uint32_t i = 0; i < analysis_nsignatures(a); i++) {
        const analysis_signature *s = analysis_get_signature(a, i);
        const store_launch *l = &run->launches[s->launch];
        const store_string *str = s->name < run->nstrings ? &run->strings[s->name] : NULL;
        json_array_append_new(
            arr,
            json_pack("{s:o, s:o, s:[i,i,i], s:[i,i,i], s:i, s:s, s:o, s:I, s:I, s:I, s:o}", "name",
                      jstr(str ? str->text : NULL), "demangled", jstr(str ? str->demangled : NULL),
                      "grid", (int)l->grid[0], (int)l->grid[1], (int)l->grid[2], "block",
                      (int)l->block[0], (int)l->block[1], (int)l->block[2], "smem",
                      (int)(l->static_smem + l->dynamic_smem), "source",
                      analysis_ref_source_name(s->source), "reference_ns",
                      s->source ? json_real(s->reference_ns) : json_null(), "solo_instances",
                      (json_int_t)s->nsolo, "kernels", (json_int_t)s->nkernels, "total_ns",
                      (json_int_t)s->total_ns, "mean_stretch", jnum(s->mean_stretch)));
    }
    return arr;
}

/* Stretch histogram over every device: log2 bins from 1/4 to 64. */
static json_t *json_histogram(const analysis *a)
{
    enum { NB = 32 };
    uint64_t counts[NB], noref = 0;
    json_t *c = json_array();
    if (analysis_stretch_histogram(a, UINT32_MAX, 0.25, 64, counts, NB, &noref) == 0)
        for (int i = 0; i < NB; i++)
            json_array_append_new(c, json_integer((json_int_t)counts[i]));
    return json_pack("{s:f, s:f, s:s, s:o, s:I}", "lo", 0.25, "hi", 64.0, "scale", "log2", "counts",
                     c, "no_reference", (json_int_t)noref);
}

json_t *report_json(const analysis *a, const analysis *cmp)
{
    const analysis_summary *s = analysis_get_summary(a);
    const store_run *run = analysis_get_run(a);
    json_t *root = json_object(), *head = json_array(), *warn = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem) {
        cli_headline(mem, a, 0);
        fclose(mem);
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            json_array_append_new(head, json_string(line));
        free(buf);
    }
    for (uint32_t i = 0; i < analysis_nwarnings(a); i++)
        json_array_append_new(warn, json_string(analysis_warning(a, i)));
    json_object_set_new(root, "tlview", json_string(CLI_VERSION));
    json_object_set_new(root, "headline", head);
    json_object_set_new(
        root, "summary",
        json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "processes",
                  (int)run->nprocesses, "kernels", (json_int_t)s->nkernels, "zero_length",
                  (json_int_t)s->nzero, "referenced", (json_int_t)s->nreferenced, "t_begin",
                  (json_int_t)s->t_begin, "t_end", (json_int_t)s->t_end, "span_ns",
                  (json_int_t)(s->t_end - s->t_begin), "busy_ns", (json_int_t)s->busy_ns,
                  "overlap_ns", (json_int_t)s->overlap_ns, "mean_stretch", jnum(s->mean_stretch),
                  "slowdown", jnum(s->slowdown), "predicted_gain", jnum(s->predicted_gain)));
    json_object_set_new(root, "warnings", warn);
    json_object_set_new(root, "devices", json_devices(a));
    json_object_set_new(root, "windows", json_windows(a));
    json_object_set_new(root, "processes", json_processes(a));
    json_object_set_new(root, "signatures", json_signatures(a));
    json_object_set_new(root, "stretch_histogram", json_histogram(a));
    analysis_comparison c;
    if (cmp && analysis_compare(a, cmp, &c) == 0)
        json_object_set_new(
            root, "comparison",
            json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:o}", "span_ns",
                      (json_int_t)c.span_a, "compare_span_ns", (json_int_t)c.span_b,
                      "measured_gain", jnum(c.measured_gain), "predicted_gain",
                      jnum(c.predicted_gain), "compare_slowdown", jnum(c.slowdown_b),
                      "predicted_gain_at_compare_slowdown", jnum(c.predicted_gain_at_slowdown_b),
                      "mean_stretch", jnum(c.mean_stretch_a), "compare_mean_stretch",
                      jnum(c.mean_stretch_b), "common_signatures", (int)c.common_signatures,
                      "duration_ratio", jnum(c.duration_ratio)));
    return root;
}

/* Writes a CSV field, quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* A number or an empty field for NaN. */
static void csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.6g", v);
}

int report_csv(FILE *out, const analysis *a, const char *table)
{
    const store_run *run = analysis_get_run(a);
    if (!strcmp(table, "processes")) {
        fprintf(out, "pid,host,file,kernels,referenced,kernel_ns,busy_ns,overlap_ns,mean_stretch,"
                     "slowdown,mps\n");
        for (uint32_t p = 0; p < analysis_nprocesses(a); p++) {
            const analysis_process *ap = analysis_get_process(a, p);
            fprintf(out, "%lld,", (long long)run->processes[p].pid);
            csv_str(out, run->processes[p].host);
            fputc(',', out);
            csv_str(out, run->processes[p].file);
            fprintf(out, ",%llu,%llu,%lld,%lld,%lld,", (unsigned long long)ap->nkernels,
                    (unsigned long long)ap->nreferenced, (long long)ap->kernel_ns,
                    (long long)ap->busy_ns, (long long)ap->overlap_ns);
            csv_num(out, ap->mean_stretch);
            fputc(',', out);
            csv_num(out, ap->slowdown);
            fprintf(out, ",%d\n", ap->mps);
        }
    } else if (!strcmp(table, "devices")) {
        fprintf(out, "gpu,name,kernels,processes,busy_ns,overlap_ns,idle_ns,verdict,mean_stretch,"
                     "contexts,parallelism,predicted_gain,mps\n");
        for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
            const analysis_device *d = analysis_get_device(a, i);
            fprintf(out, "%u,", i);
            csv_str(out, d->device != STORE_NONE ? run->devices[d->device].name : NULL);
            fprintf(out, ",%llu,%u,%lld,%lld,%lld,%s,", (unsigned long long)d->nkernels,
                    d->nprocesses, (long long)d->busy_ns, (long long)d->overlap_ns,
                    (long long)d->idle_ns, analysis_verdict_name(d->verdict));
            csv_num(out, d->mean_stretch);
            fputc(',', out);
            csv_num(out, d->contexts);
            fputc(',', out);
            csv_num(out, d->parallelism);
            fputc(',', out);
            csv_num(out, d->predicted_gain);
            fprintf(out, ",%d\n", d->mps);
        }
    } else if (!strcmp(table, "windows")) {
        fprintf(out, "gpu,t0,t1,busy_ns,verdict,kernels,max_processes,max_contexts,contexts,"
                     "mean_stretch,parallelism,coverage,mps\n");
        const analysis_window *w = analysis_windows(a);
        for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
            const analysis_device *d = analysis_get_device(a, i);
            for (uint64_t k = d->first_window; k < d->first_window + d->nwindows; k++) {
                fprintf(out, "%u,%lld,%lld,%lld,%s,%u,%u,%u,", i, (long long)w[k].t0,
                        (long long)w[k].t1, (long long)w[k].busy_ns,
                        analysis_verdict_name(w[k].verdict), w[k].nkernels, w[k].max_processes,
                        w[k].max_contexts);
                csv_num(out, w[k].contexts);
                fputc(',', out);
                csv_num(out, w[k].mean_stretch);
                fputc(',', out);
                csv_num(out, w[k].parallelism);
                fputc(',', out);
                csv_num(out, w[k].coverage);
                fprintf(out, ",%d\n", w[k].mps);
            }
        }
    } else if (!strcmp(table, "signatures")) {
        fprintf(out, "name,grid,block,smem,kernels,total_ns,reference_ns,source,solo_instances,"
                     "mean_stretch\n");
        for (uint32_t i = 0; i < analysis_nsignatures(a); i++) {
            const analysis_signature *s = analysis_get_signature(a, i);
            const store_launch *l = &run->launches[s->launch];
            csv_str(out, s->name < run->nstrings ? run->strings[s->name].demangled : NULL);
            fprintf(out, ",%ux%ux%u,%ux%ux%u,%u,%llu,%lld,", l->grid[0], l->grid[1], l->grid[2],
                    l->block[0], l->block[1], l->block[2], l->static_smem + l->dynamic_smem,
                    (unsigned long long)s->nkernels, (long long)s->total_ns);
            if (s->source)
                csv_num(out, s->reference_ns);
            fprintf(out, ",%s,%llu,", analysis_ref_source_name(s->source),
                    (unsigned long long)s->nsolo);
            csv_num(out, s->mean_stretch);
            fputc('\n', out);
        }
    } else {
        return -1;
    }
    return 0;
}
