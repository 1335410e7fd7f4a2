/* web_export.c: GET /api/export, a run's exports downloaded from the page: the report as JSON
 * (the view's, view_report_json(): built at once), and, through the writers the caller gave
 * (web_options: cli/'s), the report's text and the Chrome trace of `tlview export` ("open in
 * Perfetto"). Those two can be far larger than memory should hold (a gigabyte at 4M kernels), so
 * they are streamed: a thread of their own writes them into a pipe that libmicrohttpd reads the
 * answer from, holding the generation until it has written the last byte; web_stop() waits for
 * such threads. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"
#include "web_int.h"

#define EXPORT_BUFFER (1 << 16) /* the writer's stdio buffer */

/* One export being written. */
typedef struct export_task {
    const web *w;
    web_gen *g; /* held until written */
    int (*fn)(FILE *f, const analysis *a);
    const analysis *an;
    int fd; /* the pipe's writing end (owned) */
} export_task;

/* export_thread: writes one export into its pipe, then lets the generation go. SIGPIPE is
 * blocked on this thread: a client that went away makes each write fail (EPIPE), not the
 * process end. */
static void *export_thread(void *arg)
{
    export_task *t = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    FILE *f = fdopen(t->fd, "w");
    if (f) {
        setvbuf(f, NULL, _IOFBF, EXPORT_BUFFER);
        t->fn(f, t->an); /* a failure shows as a cut answer: the headers are gone already */
        fclose(f);
    } else {
        close(t->fd);
    }
    web_gen_let_go(t->w, t->g);
    pthread_mutex_lock(&t->w->live->lock);
    t->w->live->exports--;
    pthread_cond_broadcast(&t->w->live->exported);
    pthread_mutex_unlock(&t->w->live->lock);
    free(t);
    return NULL;
}

/* stream: starts writing export fn of run r into a pipe whose reading end becomes the answer.
 * 0, or -1 after an error reply. */
static int stream(const web *w, web_gen *g, const web_runix *r,
                  int (*fn)(FILE *f, const analysis *a), web_reply *out)
{
    int fds[2];
    export_task *t = malloc(sizeof *t);
    if (!t || pipe2(fds, O_CLOEXEC) != 0) {
        free(t);
        web_reply_error(out, 500, "cannot make a pipe for the export: %s", strerror(errno));
        return -1;
    }
    *t = (export_task){w, g, fn, r->an, fds[1]};
    pthread_mutex_lock(&w->live->lock);
    g->refs++; /* the writer's hold, let go when written */
    w->live->exports++;
    pthread_mutex_unlock(&w->live->lock);
    pthread_attr_t at;
    pthread_t th;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &at, export_thread, t);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        close(fds[0]);
        close(fds[1]);
        free(t);
        web_gen_let_go(w, g);
        pthread_mutex_lock(&w->live->lock);
        w->live->exports--;
        pthread_mutex_unlock(&w->live->lock);
        web_reply_error(out, 500, "cannot start the export's thread");
        return -1;
    }
    out->status = 200;
    out->pipe_fd = fds[0];
    return 0;
}

void web_export(const web *w, web_gen *g, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"run", "format", NULL};
    int64_t run;
    memset(out, 0, sizeof *out);
    if (web_api_check_known(p, out, known) ||
        web_api_get_int(p, out, "run", 0, (int64_t)g->nruns - 1, 0, 0, &run))
        return;
    const char *format = web_param(p, "format");
    const web_runix *r = &g->runs[run];
    char tag[8]; /* the run's letter, as the page names it: A, B, ..., Z, AA, ... */
    if (run < 26)
        snprintf(tag, sizeof tag, "%c", 'A' + (int)run);
    else
        snprintf(tag, sizeof tag, "%c%c", 'A' + (int)(run / 26 - 1), 'A' + (int)(run % 26));
    if (!format || strcmp(format, "json") == 0) {
        json_t *o = view_report_json(r->an, NULL, w->version);
        char *s = o ? json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(8)) : NULL;
        json_decref(o);
        if (!s) {
            web_reply_error(out, 500, "out of memory");
            return;
        }
        *out = (web_reply){.status = 200, .body = s, .len = strlen(s)};
        snprintf(out->filename, sizeof out->filename, "tlview-report-%s.json", tag);
    } else if (strcmp(format, "text") == 0 || strcmp(format, "chrome") == 0) {
        int text = format[0] == 't';
        int (*fn)(FILE *, const analysis *) = text ? w->export_text : w->export_chrome;
        if (!fn) {
            web_reply_error(out, 404, "this server offers no %s export (tlview serve does)",
                            text ? "text report" : "Chrome trace");
            return;
        }
        if (stream(w, g, r, fn, out) == 0) {
            out->mime = text ? "text/plain; charset=utf-8" : "application/json";
            snprintf(out->filename, sizeof out->filename, "tlview-%s-%s.%s",
                     text ? "report" : "trace", tag, text ? "txt" : "json");
        }
    } else {
        web_reply_error(out, 400, "parameter 'format' must be json, text or chrome, got '%.40s'",
                        format);
    }
}
