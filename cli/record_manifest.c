/* record_manifest.c: DIR/manifest.json of `tlview record` (and of each run of `tlview advise`):
 * what was run, how (N copies, MPS), when, and what each copy left behind, so a recorded folder
 * explains itself later. Written with jansson to a temporary file, then renamed over the old
 * one. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "view.h"

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

static json_t *child_json(const rec_child *k, const rec_manifest *m, int *bad)
{
    json_t *o = json_object();
    view_put(o, "rank", json_integer(k->rank), bad);
    if (m->ncommands > 1)
        view_put(o, "command", json_integer(k->command), bad);
    view_put(o, "pid", json_integer(k->pid), bad);
    if (!k->done) {
        view_put(o, "exit_code", json_null(), bad);
        view_put(o, "signal", json_null(), bad);
    } else if (WIFEXITED(k->status)) {
        view_put(o, "exit_code", json_integer(WEXITSTATUS(k->status)), bad);
        view_put(o, "signal", json_null(), bad);
    } else {
        view_put(o, "exit_code", json_null(), bad);
        view_put(o, "signal", json_string(rec_signame(WTERMSIG(k->status))), bad);
    }
    /* The collector names the file after the pid; it picks another name only if that one exists,
     * which cannot happen in a folder whose trace files are all new (see cmd_record.c). */
    char file[4400];
    snprintf(file, sizeof file, "%s/%s.%d.db", m->dir, m->label, (int)k->pid);
    struct stat st;
    view_put(o, "file",
             stat(file, &st) == 0 && S_ISREG(st.st_mode) ? view_string(file) : json_null(), bad);
    return o;
}

/* A command as a JSON array of its arguments. */
static json_t *argv_json(char *const *argv, int *bad)
{
    json_t *cmd = json_array();
    for (char *const *a = argv; cmd && *a; a++)
        view_append(cmd, view_string(*a), bad);
    return cmd;
}

int rec_manifest_write(const char *path, const rec_manifest *m, char *err)
{
    int bad = 0; /* out of memory building the tree; every string from the user goes through
                    view_string(), so bytes that are not UTF-8 become U+FFFD, never a hole */
    json_t *root = json_object();
    view_put(root, "tool", json_string(m->tool ? m->tool : "tlview record"), &bad);
    view_put(root, "run_id", view_string(m->run_id), &bad);
    view_put(root, "label", view_string(m->label), &bad);
    view_put(root, "command", argv_json(m->argv, &bad), &bad);
    if (m->ncommands > 1) {
        json_t *cmds = json_array();
        for (int i = 0; i < m->ncommands; i++)
            view_append(cmds, argv_json(m->commands[i], &bad), &bad);
        view_put(root, "commands", cmds, &bad);
    }
    view_put(root, "procs", json_integer(m->nprocs), &bad);
    view_put(root, "dir", view_string(m->dir), &bad);
    view_put(root, "collector", view_string(m->collector), &bad);
    view_put(root, "output_pattern", view_string(m->output_pattern), &bad);

    json_t *mps = json_object();
    view_put(mps, "enabled", json_boolean(m->mps != NULL), &bad);
    if (m->mps) {
        view_put(mps, "reused", json_boolean(m->mps->reused), &bad);
        view_put(mps, "started", json_boolean(m->mps->started), &bad);
        view_put(mps, "stopped", json_boolean(m->mps->stopped), &bad);
        view_put(mps, "control", view_string(m->mps->control), &bad);
        view_put(mps, "pipe_dir", view_string(m->mps->pipe_dir), &bad);
        view_put(mps, "log_dir", view_string(m->mps->log_dir), &bad);
        if (m->percentage > 0)
            view_put(mps, "active_thread_percentage", json_integer(m->percentage), &bad);
    }
    view_put(root, "mps", mps, &bad);

    view_put(root, "start_time", iso_time(m->start_ns), &bad);
    view_put(root, "end_time", iso_time(m->end_ns), &bad);
    view_put(root, "start_ns", json_integer(m->start_ns), &bad);
    view_put(root, "barrier_release_ns", json_integer(m->release_ns), &bad);
    view_put(root, "end_ns", json_integer(m->end_ns), &bad);
    view_put(root, "interrupted_by", m->signal ? json_string(rec_signame(m->signal)) : json_null(),
             &bad);
    view_put(root, "error", m->error ? view_string(m->error) : json_null(), &bad);

    json_t *kids = json_array();
    for (int i = 0; i < m->nprocs; i++)
        if (m->kids[i].pid > 0)
            view_append(kids, child_json(&m->kids[i], m, &bad), &bad);
    view_put(root, "children", kids, &bad);
    json_t *files = json_array();
    for (int i = 0; i < m->nfiles; i++)
        view_append(files, view_string(m->files[i]), &bad);
    view_put(root, "files", files, &bad);
    if (bad) {
        json_decref(root);
        snprintf(err, REC_ERR_MAX, "%s: out of memory building the manifest", path);
        return -1;
    }

    /* a new file of a name nobody could plant (mkstemp: O_EXCL, never through a link), then
     * renamed over the old manifest */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, REC_ERR_MAX, "%s: cannot create: %s", tmp, strerror(errno));
        json_decref(root);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    int rc = fchmod(fd, 0666 & ~mask) != 0 ||
             json_dumpfd(root, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
    int e = errno;
    rc |= close(fd) != 0;
    json_decref(root);
    if (rc != 0) {
        snprintf(err, REC_ERR_MAX, "%s: cannot write: %s", tmp, strerror(e ? e : errno));
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
