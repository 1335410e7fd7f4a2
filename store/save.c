/* save.c: store_run_save() writes a whole run (many processes, already on the common axis) as
 * one new tlview file with clock 'realtime' and t0 = the run's first start, through the same
 * writer libcollect uses. Used by `tlview merge` and `tlview import`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

#define BATCH 65536 /* rows per transaction: keeps the WAL small */

typedef struct saver {
    const store_run *run;
    store_writer *w;
    int64_t *proc_row; /* run process -> file process id */
    int64_t *ctx_row;  /* run context -> file context row */
    uint32_t *ordinal; /* run context -> device ordinal written */
    int64_t *str_id;   /* run string -> file id (0 = not yet written) */
    uint64_t rows;
} saver;

/* The file id of run string s, written on first use with its demangled form when that is not
 * the text (a foreign one, from a file that carried it, must survive the round trip). */
static int string_id(saver *S, store_idx s, int64_t *pId)
{
    if (s == STORE_NONE || s >= S->run->nstrings) {
        *pId = 0;
        return STORE_OK;
    }
    if (!S->str_id[s]) {
        const store_string *str = &S->run->strings[s];
        const char *dem =
            str->demangled && strcmp(str->demangled, str->text) != 0 ? str->demangled : NULL;
        int rc = store_writer_string_id(S->w, str->text, dem, &S->str_id[s]);
        if (rc)
            return rc;
    }
    *pId = S->str_id[s];
    return STORE_OK;
}

/* Commits every BATCH rows. */
static int tick(saver *S)
{
    if (++S->rows % BATCH)
        return STORE_OK;
    int rc = store_writer_commit(S->w);
    return rc ? rc : store_writer_begin(S->w);
}

static int save_processes(saver *S)
{
    const store_run *run = S->run;
    store_writer *w = S->w;
    int rc = STORE_OK;
    for (uint32_t i = 0; i < run->nprocesses && !rc; i++) {
        const store_process *p = &run->processes[i];
        store_process_info pi = {p->pid,  p->ppid,   p->host,   p->exe,
                                 p->argv, p->run_id, p->source, p->start_wall};
        rc = store_writer_process(w, &pi, &S->proc_row[i]);
        if (!rc)
            rc = store_writer_process_end(w, S->proc_row[i], p->end_wall, p->complete, p->error);
        for (uint32_t m = 0; m < p->nmeta && !rc; m++)
            rc = store_writer_process_meta(w, S->proc_row[i], p->meta_keys[m], p->meta_values[m]);
        if (!rc && p->clock_drift)
            rc = store_writer_process_meta_int(w, S->proc_row[i], "clock_drift", p->clock_drift);
        if (!rc && p->rows_refused) { /* as text: a count may pass INT64_MAX */
            char v[24];
            store_fmt(v, sizeof v, "%llu", (unsigned long long)p->rows_refused);
            rc = store_writer_process_meta(w, S->proc_row[i], "rows_refused", v);
        }
        /* The choice to keep this process's uuid-less GPUs apart travels with the file. */
        if (!rc && STORE_PRIV(run)->gpus_apart[i])
            rc = store_writer_process_meta(w, S->proc_row[i], "gpu_identity", "separate");
    }
    /* Devices under the ordinal each process saw them by. */
    for (uint64_t i = 0; i < STORE_PRIV(run)->nprocdevs && !rc; i++) {
        const store_procdev *pd = &STORE_PRIV(run)->procdevs[i];
        const store_device *d = &run->devices[pd->device];
        store_device_info di = {pd->ordinal, d->uuid,     d->name,         d->sm_count,
                                d->cc_major, d->cc_minor, d->global_memory};
        rc = store_writer_device(w, S->proc_row[pd->process], &di);
    }
    for (uint32_t i = 0; i < run->ncontexts && !rc; i++) {
        const store_context *c = &run->contexts[i];
        uint32_t ord = 0;
        if (c->device != STORE_NONE) {
            ord = store_run_device_ordinal(run, c->process, c->device);
            if (ord == STORE_NONE) {
                /* A device this process never declared: give it an ordinal of its own. */
                const store_device *d = &run->devices[c->device];
                ord = 1000 + c->device;
                store_device_info di = {ord,         d->uuid,     d->name,         d->sm_count,
                                        d->cc_major, d->cc_minor, d->global_memory};
                rc = store_writer_device(w, S->proc_row[c->process], &di);
            }
        }
        S->ordinal[i] = ord;
        store_context_info ci = {.context_id = c->context_id,
                                 .device_id = ord,
                                 .compute_api_kind = c->compute_api_kind,
                                 .green = c->green,
                                 .parent_context_id = c->parent_id,
                                 .sm_count = c->sm_count};
        if (!rc)
            rc = store_writer_context(w, S->proc_row[c->process], &ci);
        if (!rc)
            rc = store_writer_context_row(w, S->proc_row[c->process], c->context_id, ord,
                                          &S->ctx_row[i]);
    }
    return rc;
}

static int save_records(saver *S)
{
    const store_run *run = S->run;
    store_writer *w = S->w;
    int rc = store_writer_begin(w);
    for (uint64_t i = 0; i < run->nkernels && !rc; i++) {
        const store_kernel *k = &run->kernels[i];
        const store_stream *s = &run->streams[k->stream];
        const store_launch *l = &run->launches[k->launch];
        int64_t name, lid;
        rc = string_id(S, l->name, &name);
        if (!rc)
            rc = store_writer_launch_id(w, S->ctx_row[s->context], s->stream_id, name, l->grid,
                                        l->block, l->registers, l->static_smem, l->dynamic_smem, 0,
                                        &lid);
        if (!rc)
            rc = store_writer_kernel_row(w, k->start, k->end - k->start, lid, k->correlation_id);
        if (!rc)
            rc = tick(S);
    }
    for (uint64_t i = 0; i < run->ncopies && !rc; i++) {
        const store_copy *c = &run->copies[i];
        const store_stream *s = &run->streams[c->stream];
        const store_context *cx = &run->contexts[s->context];
        int64_t proc = S->proc_row[cx->process];
        if (c->type == STORE_COPY_MEMSET) {
            store_memset_info m = {.start = c->start,
                                   .end = c->end,
                                   .device_id = S->ordinal[s->context],
                                   .context_id = cx->context_id,
                                   .stream_id = s->stream_id,
                                   .correlation_id = c->correlation_id,
                                   .bytes = c->bytes,
                                   .mem_kind = c->kind};
            rc = store_writer_memset(w, proc, &m);
        } else {
            store_memcpy_info m = {.start = c->start,
                                   .end = c->end,
                                   .device_id = S->ordinal[s->context],
                                   .context_id = cx->context_id,
                                   .stream_id = s->stream_id,
                                   .correlation_id = c->correlation_id,
                                   .copy_kind = c->kind,
                                   .bytes = c->bytes};
            rc = store_writer_memcpy(w, proc, &m);
        }
        if (!rc)
            rc = tick(S);
    }
    for (uint64_t i = 0; i < run->napis && !rc; i++) {
        const store_api *a = &run->apis[i];
        int64_t id;
        /* the name's row first, with its demangled form: the writer then finds it by its text */
        rc = string_id(S, a->name, &id);
        store_api_info ai = {.start = a->start,
                             .end = a->end,
                             .thread_id = a->thread_id,
                             .correlation_id = a->correlation_id,
                             .domain = (store_api_domain)a->domain,
                             .name = a->name != STORE_NONE ? run->strings[a->name].text : NULL,
                             .status = a->status};
        if (!rc)
            rc = store_writer_api(w, S->proc_row[a->process], &ai);
        if (!rc)
            rc = tick(S);
    }
    for (uint64_t i = 0; i < run->nranges && !rc; i++) {
        const store_range *r = &run->ranges[i];
        int64_t id;
        rc = string_id(S, r->name, &id);
        if (!rc)
            rc = string_id(S, r->domain, &id);
        store_range_info ri = {.start = r->start,
                               .end = r->end,
                               .thread_id = r->thread_id,
                               .domain =
                                   r->domain != STORE_NONE ? run->strings[r->domain].text : NULL,
                               .name = r->name != STORE_NONE ? run->strings[r->name].text : NULL};
        if (!rc)
            rc = store_writer_range(w, S->proc_row[r->process], &ri);
        if (!rc)
            rc = tick(S);
    }
    for (uint32_t i = 0; i < run->ncaptures && !rc; i++) {
        const store_capture *c = &run->captures[i];
        int64_t id;
        rc = store_writer_capture(w, S->proc_row[c->process], c->start, c->name, c->start_reason,
                                  &id);
        if (!rc)
            rc = store_writer_capture_end(w, id, c->end, c->end_reason);
    }
    if (!rc)
        rc = store_writer_commit(w);
    return rc;
}

int store_run_save(const store_run *run, const char *path, const char *writer_name)
{
    if (!run || !path)
        return STORE_EINVAL;
    char *errmsg = STORE_PRIV(run)->errmsg; /* the message is the one mutable part of a run */
    int64_t t0 = run->t_begin;
    if (!t0 && run->nkernels)
        t0 = run->kernels[0].start;
    saver S = {.run = run};
    int rc = store_writer_open(path, STORE_CLOCK_REALTIME, t0, &S.w);
    if (rc) {
        store_fmt(errmsg, sizeof STORE_PRIV(run)->errmsg, "%s", store_writer_errmsg(S.w));
        store_writer_close(S.w);
        return rc;
    }
    S.proc_row = calloc(run->nprocesses + 1, sizeof *S.proc_row);
    S.ctx_row = calloc(run->ncontexts + 1, sizeof *S.ctx_row);
    S.ordinal = calloc(run->ncontexts + 1, sizeof *S.ordinal);
    S.str_id = calloc(run->nstrings + 1, sizeof *S.str_id);
    if (!S.proc_row || !S.ctx_row || !S.ordinal || !S.str_id)
        rc = STORE_ENOMEM;
    if (!rc && writer_name)
        rc = store_writer_meta(S.w, "writer", writer_name);
    /* processes, devices and contexts in one transaction (one per row costs a sync each: a
     * file of 50k devices took seconds) */
    if (!rc)
        rc = store_writer_begin(S.w);
    if (!rc)
        rc = save_processes(&S);
    if (!rc)
        rc = store_writer_commit(S.w);
    if (!rc)
        rc = save_records(&S);
    if (rc)
        store_fmt(errmsg, sizeof STORE_PRIV(run)->errmsg, "%s",
                  rc == STORE_ENOMEM ? "out of memory while saving" : store_writer_errmsg(S.w));
    int crc = store_writer_close(S.w);
    if (!rc && crc) {
        rc = crc;
        store_fmt(errmsg, sizeof STORE_PRIV(run)->errmsg, "%s: cannot finish the file", path);
    }
    if (rc)
        unlink(path); /* ours (created exclusively) and incomplete */
    else
        errmsg[0] = 0;
    free(S.proc_row);
    free(S.ctx_row);
    free(S.ordinal);
    free(S.str_id);
    return rc;
}
