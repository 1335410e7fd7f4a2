/* records.c: one file's metadata as a record (wire.c's format) and the record added to the
 * index's run. Reading a file's metadata (store_run_load_meta: opening it, checking it, parsing
 * its schema: a millisecond per file) is the index's whole cost; records let threads and MPI
 * ranks read files side by side while one run receives them in file order, through store/'s
 * builder calls, so the devices are matched by store/'s identity rules exactly as when the files
 * are read into it directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_int.h"

/* A process's record: its row, its process_meta, its devices (the GPUs it saw, by ordinal), its
 * contexts (with the ordinal of their device and whether they ran kernels). */
static void record_process(job_wire *w, const store_run *run, store_idx p, const uint8_t *ran)
{
    const store_process *pr = &run->processes[p];
    job_wire_int(w, pr->pid);
    job_wire_int(w, pr->ppid);
    job_wire_str(w, pr->host);
    job_wire_str(w, pr->exe);
    job_wire_str(w, pr->argv);
    job_wire_str(w, pr->run_id);
    job_wire_str(w, pr->source);
    job_wire_int(w, pr->start_wall);
    job_wire_int(w, pr->nmeta);
    for (uint32_t i = 0; i < pr->nmeta; i++) {
        job_wire_str(w, pr->meta_keys[i]);
        job_wire_str(w, pr->meta_values[i]);
    }
    int64_t ndev = 0, nctx = 0;
    for (uint32_t d = 0; d < run->ndevices; d++)
        ndev += store_run_device_ordinal(run, p, d) != STORE_NONE;
    job_wire_int(w, ndev);
    for (uint32_t d = 0; d < run->ndevices; d++) {
        uint32_t ord = store_run_device_ordinal(run, p, d);
        if (ord == STORE_NONE)
            continue;
        const store_device *dv = &run->devices[d];
        job_wire_int(w, ord);
        job_wire_str(w, dv->uuid);
        job_wire_str(w, dv->name);
        job_wire_int(w, dv->sm_count);
        job_wire_int(w, dv->cc_major);
        job_wire_int(w, dv->cc_minor);
        job_wire_int(w, (int64_t)dv->global_memory);
    }
    for (uint32_t c = 0; c < run->ncontexts; c++)
        nctx += run->contexts[c].process == p;
    job_wire_int(w, nctx);
    for (uint32_t c = 0; c < run->ncontexts; c++) {
        const store_context *cx = &run->contexts[c];
        if (cx->process != p)
            continue;
        uint32_t ord =
            cx->device == STORE_NONE ? STORE_NONE : store_run_device_ordinal(run, p, cx->device);
        job_wire_int(w, cx->context_id);
        job_wire_int(w, ord == STORE_NONE ? -1 : (int64_t)ord);
        job_wire_int(w, cx->compute_api_kind);
        job_wire_int(w, cx->green);
        job_wire_int(w, cx->parent_id);
        job_wire_int(w, cx->sm_count);
        job_wire_int(w, ran[c]);
    }
}

/* 1 when the file at path starts with SQLite's 16-byte header: what keeps a job folder's other
 * files (manifest.json, logs, -wal and -journal files) out without an error. */
static int sqlite_header(const char *path)
{
    char head[16];
    int fd = store_fs_open_read(path, NULL, 0); /* a regular file: a FIFO never blocks */
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && !memcmp(head, "SQLite format 3", 16);
}

void job_record_file(job_wire *w, const char *path, int from_folder)
{
    if (from_folder && !sqlite_header(path)) {
        job_wire_int(w, 2); /* not a tlview file: left out */
        return;
    }
    store_run *run = store_run_new();
    uint64_t kernels = 0;
    uint8_t *ran = NULL;
    /* each process's GPUs kept apart here: its own device rows travel, the index run matches
     * them */
    int rc = run ? store_run_set_gpu_identity(run, 1) : STORE_ENOMEM;
    if (rc == STORE_OK)
        rc = store_run_load_meta(run, &path, 1, &kernels);
    if (rc == STORE_OK && !(ran = calloc((size_t)run->ncontexts + 1, 1)))
        rc = STORE_ENOMEM;
    if (rc != STORE_OK) {
        job_wire_int(w, 0);
        job_wire_int(w, rc == STORE_ENOMEM);
        job_wire_str(w, rc == STORE_ENOMEM ? "out of memory" : store_run_errmsg(run));
    } else {
        for (uint32_t s = 0; s < run->nstreams; s++)
            ran[run->streams[s].context] = 1;
        job_wire_int(w, 1);
        job_wire_int(w, (int64_t)kernels);
        job_wire_int(w, run->nprocesses);
        for (uint32_t p = 0; p < run->nprocesses; p++)
            record_process(w, run, p, ran);
    }
    free(ran);
    store_run_free(run);
}

/* The run device of (process, ordinal) from the devices replayed for it, else a device of its
 * own (the loader's rule for a context whose device has no row). */
static store_idx device_for(store_run *run, store_idx p, int64_t ord, const int64_t *ords,
                            const store_idx *devs, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (ords[i] == ord)
            return devs[i];
    store_device_info blank = {.device_id = (uint32_t)ord};
    return store_run_add_device(run, p, &blank);
}

/* Adds one process's record; JOB_OK, JOB_ENOMEM, or JOB_EFILE for a damaged record. */
static int replay_process(store_run *run, job_reader *r, const char *path)
{
    store_process_info pi = {0};
    pi.pid = job_read_int(r);
    pi.ppid = job_read_int(r);
    pi.host = job_read_str(r);
    pi.exe = job_read_str(r);
    pi.argv = job_read_str(r);
    pi.run_id = job_read_str(r);
    pi.source = job_read_str(r);
    pi.start_wall = job_read_int(r);
    if (r->bad)
        return JOB_EFILE;
    store_idx p = store_run_add_process(run, &pi, path);
    if (p == STORE_NONE)
        return JOB_ENOMEM;
    int64_t nmeta = job_read_int(r);
    for (int64_t i = 0; i < nmeta && !r->bad; i++) {
        const char *k = job_read_str(r), *v = job_read_str(r);
        if (k && !r->bad && store_run_process_meta(run, p, k, v) == STORE_ENOMEM)
            return JOB_ENOMEM;
    }
    int64_t ndev = job_read_int(r);
    if (r->bad || ndev < 0 || ndev > 1 << 20)
        return JOB_EFILE;
    int64_t *ords = malloc(((size_t)ndev + 1) * sizeof *ords);
    store_idx *devs = malloc(((size_t)ndev + 1) * sizeof *devs);
    int rc = ords && devs ? JOB_OK : JOB_ENOMEM;
    for (int64_t i = 0; rc == JOB_OK && i < ndev; i++) {
        store_device_info di = {0};
        ords[i] = job_read_int(r);
        di.device_id = (uint32_t)ords[i];
        di.uuid = job_read_str(r);
        di.name = job_read_str(r);
        di.sm_count = (uint32_t)job_read_int(r);
        di.cc_major = (uint32_t)job_read_int(r);
        di.cc_minor = (uint32_t)job_read_int(r);
        di.global_memory = (uint64_t)job_read_int(r);
        if (r->bad)
            rc = JOB_EFILE;
        else if ((devs[i] = store_run_add_device(run, p, &di)) == STORE_NONE)
            rc = JOB_ENOMEM;
    }
    int64_t nctx = rc == JOB_OK ? job_read_int(r) : 0;
    for (int64_t i = 0; rc == JOB_OK && i < nctx && !r->bad; i++) {
        uint32_t id = (uint32_t)job_read_int(r);
        int64_t ord = job_read_int(r);
        uint32_t kind = (uint32_t)job_read_int(r);
        int green = (int)job_read_int(r);
        uint32_t parent = (uint32_t)job_read_int(r), sm = (uint32_t)job_read_int(r);
        int ran = (int)job_read_int(r);
        if (r->bad)
            break;
        store_idx dev = ord < 0 ? STORE_NONE : device_for(run, p, ord, ords, devs, ndev);
        store_idx c =
            ord >= 0 && dev == STORE_NONE ? STORE_NONE : store_run_context(run, p, id, dev, kind);
        if (c == STORE_NONE || (ran && store_run_stream(run, c, 0) == STORE_NONE))
            rc = JOB_ENOMEM;
        else
            store_run_context_green(run, c, green, parent, sm);
    }
    free(ords);
    free(devs);
    return rc == JOB_OK && r->bad ? JOB_EFILE : rc;
}

int job_replay_file(store_run *run, job_reader *r, const char *path, uint64_t *pKernels, int *pSkip,
                    char *err, size_t errlen)
{
    int64_t ok = job_read_int(r);
    *pSkip = !r->bad && ok == 2;
    *pKernels = 0;
    if (*pSkip)
        return JOB_OK;
    if (!r->bad && !ok) {
        int64_t oom = job_read_int(r);
        const char *msg = job_read_str(r);
        snprintf(err, errlen, "%s", msg ? msg : "?");
        return r->bad ? JOB_EFILE : oom ? JOB_ENOMEM : JOB_EFILE;
    }
    *pKernels = (uint64_t)job_read_int(r);
    int64_t nproc = job_read_int(r);
    int rc = JOB_OK;
    for (int64_t i = 0; rc == JOB_OK && !r->bad && i < nproc; i++)
        rc = replay_process(run, r, path);
    if (rc == JOB_OK && r->bad)
        rc = JOB_EFILE;
    if (rc == JOB_EFILE)
        snprintf(err, errlen, "%s: the index's record of the file is damaged", path);
    else if (rc == JOB_ENOMEM)
        snprintf(err, errlen, "out of memory");
    return rc;
}
