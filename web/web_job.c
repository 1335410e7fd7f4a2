/* web_job.c: a job served without loading it (tlview serve --job): the overview's endpoints (GET
 * /api/job: the index, the summaries made so far and the report; GET /api/job/open: ask for a
 * group's timeline), the routes /g/N/... that show group N's timeline with the page and the run
 * API unchanged, and the groups held (at most WEB_JOB_OPEN_MAX, least recently asked out).
 * web/ knows nothing of job/: the caller hands in JSON texts and analysed runs (web.h). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_int.h"

static const char *const state_names[] = {"closed", "queued", "loading", "open", "failed"};

int web_job_new(web *w, const char *index_json, uint32_t ngroups)
{
    web_job *j = calloc(1, sizeof *j);
    if (!j)
        return WEB_ENOMEM;
    size_t n = ngroups ? ngroups : 1;
    j->ngroups = ngroups;
    j->index = strdup(index_json);
    j->summary = calloc(n, sizeof *j->summary);
    j->error = calloc(n, sizeof *j->error);
    j->state = calloc(n, 1);
    j->asked = calloc(n, 1);
    j->queue = calloc(n, sizeof *j->queue);
    pthread_cond_init(&j->wake, NULL);
    w->job = j;
    if (!j->index || !j->summary || !j->error || !j->state || !j->asked || !j->queue)
        return WEB_ENOMEM; /* web_stop() frees what was made */
    return WEB_OK;
}

void web_job_free(web *w)
{
    web_job *j = w->job;
    if (!j)
        return;
    for (unsigned s = 0; s < WEB_JOB_OPEN_MAX; s++)
        web_gen_free(j->slot[s]);
    for (uint32_t g = 0; g < j->ngroups; g++) {
        if (j->summary)
            free(j->summary[g]);
        if (j->error)
            free(j->error[g]);
    }
    free(j->index), free(j->summary), free(j->error), free(j->state), free(j->asked);
    free(j->queue), free(j->report);
    pthread_cond_destroy(&j->wake);
    free(j);
    w->job = NULL;
}

/* ---------------------------------------------------------------- the caller's side */

int web_job_summary(web *w, uint32_t g, const char *json)
{
    if (!w->job || g >= w->job->ngroups || !json)
        return WEB_EINVAL;
    char *copy = strdup(json);
    if (!copy)
        return WEB_ENOMEM;
    pthread_mutex_lock(&w->live->lock);
    if (!w->job->summary[g])
        w->job->nsummaries++;
    free(w->job->summary[g]);
    w->job->summary[g] = copy;
    pthread_mutex_unlock(&w->live->lock);
    return WEB_OK;
}

int web_job_report(web *w, const char *json)
{
    if (!w->job || !json)
        return WEB_EINVAL;
    char *copy = strdup(json);
    if (!copy)
        return WEB_ENOMEM;
    pthread_mutex_lock(&w->live->lock);
    free(w->job->report);
    w->job->report = copy;
    pthread_mutex_unlock(&w->live->lock);
    return WEB_OK;
}

int web_job_asked(const web *w, uint32_t g)
{
    if (!w->job || g >= w->job->ngroups)
        return 0;
    pthread_mutex_lock(&w->live->lock);
    int asked = w->job->asked[g];
    pthread_mutex_unlock(&w->live->lock);
    return asked;
}

int64_t web_job_wait_open(web *w)
{
    web_job *j = w->job;
    if (!j)
        return -1;
    pthread_mutex_lock(&w->live->lock);
    while (!j->closed && j->qlen == 0)
        pthread_cond_wait(&j->wake, &w->live->lock);
    int64_t g = -1;
    if (!j->closed) {
        g = j->queue[j->qhead];
        j->qhead = (j->qhead + 1) % j->ngroups;
        j->qlen--;
        j->state[g] = WEB_JOB_LOADING;
    }
    pthread_mutex_unlock(&w->live->lock);
    return g;
}

void web_job_failed(web *w, uint32_t g, const char *why)
{
    if (!w->job || g >= w->job->ngroups)
        return;
    char *copy = strdup(why ? why : "failed");
    pthread_mutex_lock(&w->live->lock);
    free(w->job->error[g]);
    w->job->error[g] = copy; /* NULL out of memory: the page says "failed" alone */
    w->job->state[g] = WEB_JOB_FAILED;
    pthread_mutex_unlock(&w->live->lock);
}

int web_job_show(web *w, uint32_t g, const web_run *runs, unsigned nruns, uint32_t *pEvicted,
                 char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0)
        err = dummy, errlen = sizeof dummy;
    err[0] = 0;
    *pEvicted = UINT32_MAX;
    web_job *j = w->job;
    if (!j || g >= j->ngroups || !runs || nruns == 0 || nruns > WEB_MAX_RUNS) {
        snprintf(err, errlen, "web_job_show: bad arguments (group %u, %u runs)", g, nruns);
        if (j && g < j->ngroups)
            web_job_failed(w, g, err);
        return WEB_EINVAL;
    }
    pthread_mutex_lock(&w->live->lock);
    uint64_t id = ++j->next_id;
    pthread_mutex_unlock(&w->live->lock);
    /* indexing takes a while: outside the lock, requests go on meanwhile */
    web_gen *gen = web_gen_new(id, runs, nruns, w->live->shows & ~(unsigned)WEB_SHOW_FOLLOW, NULL,
                               NULL, err, errlen);
    if (!gen) {
        web_job_failed(w, g, err);
        return WEB_ENOMEM;
    }
    pthread_mutex_lock(&w->live->lock);
    unsigned s = 0;
    for (unsigned k = 1; k < WEB_JOB_OPEN_MAX && j->slot[s]; k++) /* a free one, else the LRU */
        if (!j->slot[k] || j->slot_used[k] < j->slot_used[s])
            s = k;
    web_gen *old = j->slot[s];
    if (old) {
        *pEvicted = j->slot_group[s];
        j->state[*pEvicted] = WEB_JOB_CLOSED;
    }
    j->slot[s] = gen;
    j->slot_group[s] = g;
    j->slot_used[s] = ++j->clock;
    j->state[g] = WEB_JOB_OPEN;
    free(j->error[g]);
    j->error[g] = NULL;
    if (old) { /* freed once the requests holding it are answered */
        old->refs--;
        while (old->refs > 0)
            pthread_cond_wait(&w->live->released, &w->live->lock);
    }
    pthread_mutex_unlock(&w->live->lock);
    web_gen_free(old);
    return WEB_OK;
}

void web_job_close(web *w)
{
    if (!w->job)
        return;
    pthread_mutex_lock(&w->live->lock);
    w->job->closed = 1;
    pthread_cond_broadcast(&w->job->wake);
    pthread_mutex_unlock(&w->live->lock);
}

/* ---------------------------------------------------------------- answers */

/* reply_buf: a 200 JSON answer of b's text (taken). */
static void reply_buf(web_reply *out, web_buf *b)
{
    if (b->failed) {
        free(b->s);
        web_reply_error(out, 500, "out of memory");
        return;
    }
    *out = (web_reply){.status = 200, .body = b->s, .len = b->len};
}

/* group_param: the required parameter `group` (a decimal integer), 0 with *g, or -1 after a
 * reply: 400 when malformed, 404 when the job has no such group. */
static int group_param(const web_job *j, const web_params *p, web_reply *out, uint32_t *g)
{
    int64_t v;
    if (web_api_get_int(p, out, "group", 0, INT32_MAX, 1, 0, &v))
        return -1;
    if ((uint64_t)v >= j->ngroups) {
        web_reply_error(out, 404, "no group %lld (the job has %u: 0 to %u)", (long long)v,
                        j->ngroups, j->ngroups ? j->ngroups - 1 : 0);
        return -1;
    }
    *g = (uint32_t)v;
    return 0;
}

/* group_state: `"group": G, "state": "..."` and, when it failed, `"failure": "why"` into b (the
 * lock held). */
static void group_state(const web_job *j, uint32_t g, web_buf *b)
{
    char head[64];
    snprintf(head, sizeof head, "\"group\":%u,\"state\":\"%s\"", g, state_names[j->state[g]]);
    web_buf_str(b, head);
    if (j->state[g] == WEB_JOB_FAILED) {
        web_buf_str(b, ",\"failure\":");
        web_buf_json_str(b, j->error[g] ? j->error[g] : "failed");
    }
}

/* api_job: GET /api/job[?index=0|1]. */
static void api_job(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"index", NULL};
    int64_t with_index;
    if (web_api_check_known(p, out, known) ||
        web_api_get_int(p, out, "index", 0, 1, 0, 1, &with_index))
        return;
    const web_job *j = w->job;
    web_buf b = {0};
    pthread_mutex_lock(&w->live->lock);
    char head[96];
    snprintf(head, sizeof head, "{\"groups\":%u,\"analysed\":%u,\"index\":", j->ngroups,
             j->nsummaries);
    web_buf_str(&b, head);
    web_buf_str(&b, with_index ? j->index : "null");
    web_buf_str(&b, ",\"summaries\":[");
    for (uint32_t g = 0; g < j->ngroups; g++) {
        web_buf_str(&b, g ? "," : "");
        web_buf_str(&b, j->summary[g] ? j->summary[g] : "null");
    }
    web_buf_str(&b, "],\"open\":[");
    int first = 1;
    for (uint32_t g = 0; g < j->ngroups; g++) {
        if (j->state[g] == WEB_JOB_CLOSED)
            continue;
        web_buf_str(&b, first ? "{" : ",{");
        group_state(j, g, &b);
        web_buf_str(&b, "}");
        first = 0;
    }
    snprintf(head, sizeof head, "],\"open_max\":%d,\"report\":", WEB_JOB_OPEN_MAX);
    web_buf_str(&b, head);
    web_buf_str(&b, j->report ? j->report : "null");
    web_buf_str(&b, "}");
    pthread_mutex_unlock(&w->live->lock);
    reply_buf(out, &b);
}

/* api_open: GET /api/job/open?group=N: queues group N's timeline when it is neither held nor on
 * its way (a failed one is tried again), and says where it stands. */
static void api_open(const web *w, const web_params *p, web_reply *out)
{
    static const char *const known[] = {"group", NULL};
    uint32_t g;
    web_job *j = w->job;
    if (web_api_check_known(p, out, known) || group_param(j, p, out, &g))
        return;
    web_buf b = {0};
    pthread_mutex_lock(&w->live->lock);
    if (j->state[g] == WEB_JOB_CLOSED || j->state[g] == WEB_JOB_FAILED) {
        j->queue[(j->qhead + j->qlen) % j->ngroups] = g; /* each group once at most: it fits */
        j->qlen++;
        j->state[g] = WEB_JOB_QUEUED;
        j->asked[g] = 1;
        pthread_cond_signal(&j->wake);
    }
    web_buf_str(&b, "{");
    group_state(j, g, &b);
    web_buf_str(&b, "}");
    pthread_mutex_unlock(&w->live->lock);
    reply_buf(out, &b);
}

/* hold_group: group g's generation, held (its use recorded), or NULL when it is not open. */
static web_gen *hold_group(const web *w, uint32_t g)
{
    web_job *j = w->job;
    web_gen *gen = NULL;
    pthread_mutex_lock(&w->live->lock);
    for (unsigned s = 0; s < WEB_JOB_OPEN_MAX && !gen; s++)
        if (j->slot[s] && j->slot_group[s] == g) {
            gen = j->slot[s];
            gen->refs++;
            j->slot_used[s] = ++j->clock;
        }
    pthread_mutex_unlock(&w->live->lock);
    return gen;
}

/* The answer to a path under /g/ that names no group's page (/g/x/, /g/007/): HTML, so that a
 * person who typed it reads where to go, not raw JSON. */
static const char no_group_page[] =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>tlview: no such "
    "page</title></head><body><h1>No such page</h1><p>A GPU group's timeline is at "
    "<code>/g/N/</code>, N its number (plain decimal) as the job's overview lists it.</p><p><a "
    "href=\"/\">&#9664; The job's overview</a></p></body></html>";

/* asset: *out = the embedded asset at `path`; 0, or -1 when there is none. */
static int asset(const char *path, web_reply *out)
{
    for (const web_asset *a = web_assets; a->path; a++)
        if (strcmp(a->path, path) == 0) {
            *out = (web_reply){.status = 200,
                               .body = (char *)a->data,
                               .len = a->len,
                               .persistent = 1,
                               .mime = a->mime};
            return 0;
        }
    return -1;
}

/* is: the path t (n bytes) is exactly s. */
static int is(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(t, s, n) == 0;
}

int web_job_route(const web *w, const char **pT, size_t *pLen, const web_params *p, web_gen **pHeld,
                  web_reply *out)
{
    const char *t = *pT;
    size_t n = *pLen;
    *pHeld = NULL;
    if (is(t, n, "/") || is(t, n, "/job.html")) {
        if (asset("/job.html", out))
            web_reply_error(out, 404, "not found");
        return 1;
    }
    if (is(t, n, "/api/job")) {
        api_job(w, p, out);
        return 1;
    }
    if (is(t, n, "/api/job/open")) {
        api_open(w, p, out);
        return 1;
    }
    if (n >= 5 && memcmp(t, "/api/", 5) == 0) {
        web_reply_error(out, 404,
                        "this server shows a job: the run API answers under /g/N/api/ for an "
                        "open group N (GET /api/job, /api/job/open?group=N)");
        return 1;
    }
    if (n < 3 || memcmp(t, "/g/", 3) != 0)
        return 0; /* the page's other files */
    /* /g/N/REST: N a plain decimal number (no sign, no leading zero), REST from its '/' */
    size_t i = 3;
    uint64_t g = 0;
    while (i < n && t[i] >= '0' && t[i] <= '9' && i < 3 + 10)
        g = g * 10 + (uint64_t)(t[i++] - '0');
    if (i == 3 || i >= n || t[i] != '/' || (t[3] == '0' && i > 4)) {
        if (memmem(t, n, "/api/", 5)) { /* a program asked: JSON */
            web_reply_error(out, 404, "not found (a group's timeline is /g/N/)");
            return 1;
        }
        /* a person's typo: a page (that needs none of the page's files) with the way back */
        *out = (web_reply){.status = 404,
                           .body = (char *)no_group_page,
                           .len = sizeof no_group_page - 1,
                           .persistent = 1,
                           .mime = "text/html; charset=utf-8"};
        return 1;
    }
    if (g >= w->job->ngroups && *pLen - i > 5 && memcmp(t + i, "/api/", 5) == 0) {
        web_reply_error(out, 404, "no group %llu (the job has %u: 0 to %u)", (unsigned long long)g,
                        w->job->ngroups, w->job->ngroups ? w->job->ngroups - 1 : 0);
        return 1;
    }
    /* a group out of range still gets the page and its files: the page asks for its group
     * (/api/job/open, 404) and says that the job has none of that number, with the way back */
    *pT = t + i;
    *pLen = n - i;
    if (*pLen > 5 && memcmp(*pT, "/api/", 5) == 0 && !(*pHeld = hold_group(w, (uint32_t)g))) {
        web_buf b = {0};
        pthread_mutex_lock(&w->live->lock);
        char head[160];
        snprintf(head, sizeof head,
                 "{\"error\":\"group %llu is not open: GET /api/job/open?group=%llu opens "
                 "it\",",
                 (unsigned long long)g, (unsigned long long)g);
        web_buf_str(&b, head);
        group_state(w->job, (uint32_t)g, &b);
        web_buf_str(&b, "}");
        pthread_mutex_unlock(&w->live->lock);
        reply_buf(out, &b);
        out->status = 404;
        return 1;
    }
    return 0;
}
