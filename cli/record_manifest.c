/* record_manifest.c: DIR/manifest.json of `tlview record`: what was run, how (N copies, MPS),
 * when, and what each copy left behind, so a recorded folder explains itself later. Written with
 * jansson to a temporary file, then renamed over the old one. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "record.h"

/* "2026-11-29T10:31:05.123Z" for CLOCK_REALTIME ns. */
static json_t *iso_time(int64_t ns)
{
    if (ns <= 0)
        return json_null();
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char buf[64], out[80];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", buf, (int)(ns / 1000000 % 1000));
    return json_string(out);
}

static json_t *child_json(const rec_child *k, const char *dir, const char *label)
{
    json_t *o = json_object();
    json_object_set_new(o, "rank", json_integer(k->rank));
    json_object_set_new(o, "pid", json_integer(k->pid));
    if (!k->done) {
        json_object_set_new(o, "exit_code", json_null());
        json_object_set_new(o, "signal", json_null());
    } else if (WIFEXITED(k->status)) {
        json_object_set_new(o, "exit_code", json_integer(WEXITSTATUS(k->status)));
        json_object_set_new(o, "signal", json_null());
    } else {
        json_object_set_new(o, "exit_code", json_null());
        json_object_set_new(o, "signal", json_string(rec_signame(WTERMSIG(k->status))));
    }
    /* The collector names the file after the pid; it picks another name only if that one exists,
     * which cannot happen in a folder whose trace files are all new (see cmd_record.c). */
    char file[4400];
    snprintf(file, sizeof file, "%s/%s.%d.db", dir, label, (int)k->pid);
    FILE *f = fopen(file, "r");
    json_object_set_new(o, "file", f ? json_string(file) : json_null());
    if (f)
        fclose(f);
    return o;
}

int rec_manifest_write(const char *path, const rec_manifest *m, char *err)
{
    json_t *root = json_object();
    json_t *cmd = json_array();
    for (char *const *a = m->argv; *a; a++)
        json_array_append_new(cmd, json_string(*a));
    json_object_set_new(root, "tool", json_string("tlview record"));
    json_object_set_new(root, "run_id", json_string(m->run_id));
    json_object_set_new(root, "label", json_string(m->label));
    json_object_set_new(root, "command", cmd);
    json_object_set_new(root, "procs", json_integer(m->nprocs));
    json_object_set_new(root, "dir", json_string(m->dir));
    json_object_set_new(root, "collector", json_string(m->collector));
    json_object_set_new(root, "output_pattern", json_string(m->output_pattern));

    json_t *mps = json_object();
    json_object_set_new(mps, "enabled", json_boolean(m->mps != NULL));
    if (m->mps) {
        json_object_set_new(mps, "reused", json_boolean(m->mps->reused));
        json_object_set_new(mps, "started", json_boolean(m->mps->started));
        json_object_set_new(mps, "stopped", json_boolean(m->mps->stopped));
        json_object_set_new(mps, "control", json_string(m->mps->control));
        json_object_set_new(mps, "pipe_dir", json_string(m->mps->pipe_dir));
        json_object_set_new(mps, "log_dir", json_string(m->mps->log_dir));
    }
    json_object_set_new(root, "mps", mps);

    json_object_set_new(root, "start_time", iso_time(m->start_ns));
    json_object_set_new(root, "end_time", iso_time(m->end_ns));
    json_object_set_new(root, "start_ns", json_integer(m->start_ns));
    json_object_set_new(root, "barrier_release_ns", json_integer(m->release_ns));
    json_object_set_new(root, "end_ns", json_integer(m->end_ns));
    json_object_set_new(root, "interrupted_by",
                        m->signal ? json_string(rec_signame(m->signal)) : json_null());
    json_object_set_new(root, "error", m->error ? json_string(m->error) : json_null());

    json_t *kids = json_array();
    for (int i = 0; i < m->nprocs; i++)
        if (m->kids[i].pid > 0)
            json_array_append_new(kids, child_json(&m->kids[i], m->dir, m->label));
    json_object_set_new(root, "children", kids);
    json_t *files = json_array();
    for (int i = 0; i < m->nfiles; i++)
        json_array_append_new(files, json_string(m->files[i]));
    json_object_set_new(root, "files", files);

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0) {
        snprintf(err, REC_ERR_MAX, "%s: cannot write: %s", tmp, strerror(errno));
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, REC_ERR_MAX, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}
