/* web_server.c: the HTTP side of `tlview serve`: binds the listening socket itself (so a failure
 * is reported with its reason, as Valkey's anet.c does), runs libmicrohttpd with a thread per
 * connection and limits (connections in all and per client address, an idle timeout), answers at
 * most web_options.threads requests at once in the order they came (web_gate.c: one queue, so a
 * request waits behind those that came before it, not behind its connection's thread's other
 * clients; a slow client holds a thread but no turn), and decides every request
 * in web_request(), which knows nothing of libmicrohttpd (the fuzzer drives it directly): method,
 * Host and Origin against the names the server answers to (DNS rebinding), the token (on
 * loopback too), then the path and the query, then an embedded asset or the JSON API.
 * Read-only by construction: nothing is ever read from the disk; paths with "..", "//", "\", any
 * percent-encoding (checked on the raw target) or control characters, and absolute-form targets
 * are refused with 400 before any lookup; anything else unknown is a 404. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "web_int.h"

#if MHD_VERSION < 0x00097302
#error                                                                                             \
    "libmicrohttpd 0.9.73 or newer is needed (MHD_create_response_from_buffer_with_free_callback_cls)"
#endif

#define LISTEN_BACKLOG 256
#define CONNECTION_TIMEOUT_S 10 /* a connection idle this long is closed */
#define FD_RESERVE 64           /* open files kept free for the process beside connections */
#define TOKEN_BYTES 24          /* random bytes of a generated token (48 hex characters) */
#define HOST_MAX 256            /* longest Host name accepted */
#define CSP                                                                                        \
    "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; "            \
    "base-uri 'none'; frame-ancestors 'none'"

static const char oom_body[] = "{\"error\":\"out of memory\"}";

void web_options_default(web_options *o)
{
    o->bind = "127.0.0.1";
    o->port = 8080;
    o->threads = 0; /* one per CPU online: more would only share the cores */
    o->token = NULL;
    o->no_token = 0;
    o->allow_hosts = NULL;
    o->max_connections = 4096;
    o->max_per_ip = 128;
    o->follow = 0;
    o->export_chrome = NULL;
    o->export_text = NULL;
    o->version = "";
    o->experiment = NULL;
}

/* ---------------------------------------------------------------- generations */

/* web_gen_free: stops using generation g (its stats thread joined) and frees it; the runs it
 * indexed are the caller's. NULL is a no-op. */
void web_gen_free(web_gen *g)
{
    if (!g)
        return;
    if (g->stats) {
        if (g->stats->started)
            pthread_join(g->stats->thread, NULL);
        pthread_mutex_destroy(&g->stats->lock);
        pthread_cond_destroy(&g->stats->finished);
        free(g->stats);
    }
    for (unsigned i = 0; i < g->nruns; i++)
        web_runix_free(&g->runs[i]);
    web_blob_release(g->runs_body); /* replies still sending it hold their own reference */
    free(g);
}

/* web_gen_new: indexes the runs as generation `id` and starts building its statistics on a thread
 * of its own. NULL on failure, with the message in err. */
web_gen *web_gen_new(uint64_t id, const web_run *runs, unsigned nruns, unsigned shows,
                     const void *const *lend, const size_t *lend_len, char *err, size_t errlen)
{
    web_gen *g = calloc(1, sizeof *g);
    if (!g || !(g->stats = calloc(1, sizeof *g->stats))) {
        free(g);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&g->stats->lock, NULL);
    pthread_cond_init(&g->stats->finished, NULL);
    g->id = id;
    g->refs = 1; /* current */
    for (unsigned i = 0; i < nruns; i++) {
        if (web_runix_build_lent(&g->runs[i], &runs[i], lend ? lend[i] : NULL,
                                 lend ? lend_len[i] : 0, err, errlen)) {
            web_gen_free(g);
            return NULL;
        }
        g->nruns = i + 1;
    }
    if (web_api_runs_body(g, shows)) {
        snprintf(err, errlen, "out of memory while building the API answers");
        web_gen_free(g);
        return NULL;
    }
    if (pthread_create(&g->stats->thread, NULL, web_api_stats_bodies, g) == 0)
        g->stats->started = 1;
    else
        web_api_stats_bodies(g); /* no thread: build them here */
    return g;
}

/* gen_hold: the current generation, held until web_gen_let_go(); NULL before the runs are shown
 * (web_start_loading()). */
static web_gen *gen_hold(const web *w)
{
    pthread_mutex_lock(&w->live->lock);
    web_gen *g = w->live->gen;
    if (g)
        g->refs++;
    pthread_mutex_unlock(&w->live->lock);
    return g;
}

int web_index_freeze(web *w, unsigned i, void **ppBlob, size_t *pLen)
{
    *ppBlob = NULL;
    *pLen = 0;
    web_gen *g = gen_hold(w);
    if (g) { /* with its grids and statistics: wait for the stats thread */
        pthread_mutex_lock(&g->stats->lock);
        while (!g->stats->done)
            pthread_cond_wait(&g->stats->finished, &g->stats->lock);
        pthread_mutex_unlock(&g->stats->lock);
    }
    int rc = g && i < g->nruns ? web_runix_freeze(&g->runs[i], ppBlob, pLen) : WEB_EINVAL;
    if (g)
        web_gen_let_go(w, g);
    return rc;
}

int web_lend_index(web *w, unsigned i, const void *blob, size_t len)
{
    if (i >= WEB_MAX_RUNS)
        return WEB_EINVAL;
    w->lend[i] = blob;
    w->lend_len[i] = blob ? len : 0;
    return WEB_OK;
}

int web_index_thawed(web *w, unsigned i)
{
    web_gen *g = gen_hold(w);
    int thawed = g && i < g->nruns && g->runs[i].thawed;
    if (g)
        web_gen_let_go(w, g);
    return thawed;
}

void web_gen_let_go(const web *w, web_gen *g)
{
    pthread_mutex_lock(&w->live->lock);
    if (--g->refs == 0)
        pthread_cond_broadcast(&w->live->released);
    pthread_mutex_unlock(&w->live->lock);
}

/* check_runs: args of web_start/web_update. 0, or WEB_EINVAL with the message in err. */
static int check_runs(const char *fn, const web_run *runs, unsigned nruns, char *err, size_t errlen)
{
    if (nruns > WEB_MAX_RUNS) {
        snprintf(err, errlen, "%s: %u runs: one page shows %d at most, one above the other", fn,
                 nruns, WEB_MAX_RUNS);
        return WEB_EINVAL;
    }
    if (!runs || nruns == 0) {
        snprintf(err, errlen, "%s: bad arguments (%u runs)", fn, nruns);
        return WEB_EINVAL;
    }
    for (unsigned i = 0; i < nruns; i++)
        if (!runs[i].run || !runs[i].an) {
            snprintf(err, errlen, "%s: run %u has no run or no analysis", fn, i);
            return WEB_EINVAL;
        }
    return WEB_OK;
}

/* replace: makes `runs` the current generation (the first one when `first`, from
 * web_start_loading()'s server), freeing the previous one once no request holds it. */
static int replace(web *w, const char *fn, int first, const web_run *runs, unsigned nruns,
                   char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0)
        err = dummy, errlen = sizeof dummy;
    err[0] = 0;
    int rc = w->job ? WEB_EINVAL : check_runs(fn, runs, nruns, err, errlen);
    if (rc) {
        if (w->job)
            snprintf(err, errlen, "%s: the server shows a job (web_job_show())", fn);
        return rc;
    }
    pthread_mutex_lock(&w->live->lock);
    int loading = w->live->loading;
    pthread_mutex_unlock(&w->live->lock);
    if (loading != first) {
        snprintf(err, errlen, "%s: %s", fn,
                 first ? "the server shows its runs already (web_update())"
                       : "the server has no runs yet (web_show())");
        return WEB_EINVAL;
    }
    web_gen *g = web_gen_new(first ? 1 : w->live->gen->id + 1, runs, nruns, w->live->shows,
                             first ? w->lend : NULL, w->lend_len, err, errlen);
    if (!g)
        return WEB_ENOMEM;
    pthread_mutex_lock(&w->live->lock);
    web_gen *old = w->live->gen;
    w->live->gen = g;
    w->live->loading = 0;
    if (old) {
        old->refs--; /* no longer current: freed once the requests holding it are answered */
        while (old->refs > 0)
            pthread_cond_wait(&w->live->released, &w->live->lock);
    }
    pthread_mutex_unlock(&w->live->lock);
    web_gen_free(old);
    return WEB_OK;
}

int web_update(web *w, const web_run *runs, unsigned nruns, char *err, size_t errlen)
{
    return replace(w, "web_update", 0, runs, nruns, err, errlen);
}

int web_show(web *w, const web_run *runs, unsigned nruns, char *err, size_t errlen)
{
    return replace(w, "web_show", 1, runs, nruns, err, errlen);
}

void web_progress(web *w, const char *stage, uint64_t done, uint64_t total)
{
    pthread_mutex_lock(&w->live->lock);
    snprintf(w->live->stage, sizeof w->live->stage, "%s", stage ? stage : "");
    w->live->done = done;
    w->live->total = total;
    pthread_mutex_unlock(&w->live->lock);
}

void web_failed(web *w, const char *why)
{
    char *s = strdup(why ? why : "failed");
    pthread_mutex_lock(&w->live->lock);
    free(w->live->failure);
    w->live->failure = s;
    pthread_mutex_unlock(&w->live->lock);
}

/* now_ms: CLOCK_MONOTONIC in ms. */
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* api_status: GET /api/status: what the server is doing (web/API.md): loading its runs (the stage
 * and its progress, the time since the start), ready (the generation), failed (why), or serving a
 * job. Answered whatever the state, without holding a generation. */
static void api_status(const web *w, const web_params *p, web_reply *out)
{
    static const char *const none[] = {NULL};
    if (web_api_check_known(p, out, none))
        return;
    pthread_mutex_lock(&w->live->lock);
    const char *state = w->job             ? "job"
                        : w->live->failure ? "failed"
                        : w->live->loading ? "loading"
                                           : "ready";
    json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:o,s:I}", "state", state, "stage", w->live->stage,
                          "done", (json_int_t)w->live->done, "total", (json_int_t)w->live->total,
                          "elapsed_ms", (json_int_t)(now_ms() - w->live->started_ms), "failure",
                          w->live->failure ? json_string(w->live->failure) : json_null(),
                          "generation", (json_int_t)(w->live->gen ? w->live->gen->id : 0));
    pthread_mutex_unlock(&w->live->lock);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) {
        web_reply_error(out, 500, "out of memory");
        return;
    }
    *out = (web_reply){.status = 200, .body = body, .len = strlen(body)};
}

/* api_experiment: GET /api/experiment: the experiment the runs come from (web_options.experiment),
 * as it was given; 404 when none. Answered whatever the state, as GET /api/status. */
static void api_experiment(const web *w, const web_params *p, web_reply *out)
{
    static const char *const none[] = {NULL};
    if (web_api_check_known(p, out, none))
        return;
    if (!w->experiment) {
        web_reply_error(out, 404, "no experiment: these runs were not given as one (web/API.md)");
        return;
    }
    *out = (web_reply){
        .status = 200, .body = w->experiment, .len = strlen(w->experiment), .persistent = 1};
}

/* not_shown: the answer to a run's endpoint before the runs are shown: 503 while they are being
 * loaded (ask again: Retry-After), 500 when they will not come. */
static void not_shown(const web *w, web_reply *out)
{
    pthread_mutex_lock(&w->live->lock);
    if (w->live->failure) {
        web_reply_error(out, 500, "the runs could not be loaded: %.300s", w->live->failure);
    } else {
        web_reply_error(out, 503, "loading: %.200s", w->live->stage);
        out->retry_after = 1;
    }
    pthread_mutex_unlock(&w->live->lock);
}

uint64_t web_generation(const web *w)
{
    pthread_mutex_lock(&w->live->lock);
    uint64_t id = w->live->gen ? w->live->gen->id : 0;
    pthread_mutex_unlock(&w->live->lock);
    return id;
}

unsigned web_port(const web *w)
{
    return w->port;
}

const char *web_token(const web *w)
{
    return w->token;
}

const char *web_url_host(const web *w)
{
    return w->url_host;
}

int web_wildcard(const web *w)
{
    return w->wildcard;
}

/* path_refused: 1 when the (raw) path tries to leave the served namespace or hides something from
 * the checks: traversal, empty segments, any percent-encoding, control characters. */
static int path_refused(const char *url, size_t n)
{
    if (n == 0 || url[0] != '/')
        return 1; /* absolute-form ("http://host/x") or garbage */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c < 0x20 || c == 0x7f || c == '\\' || c == '%' ||
            (i + 1 < n && (c == '.' || c == '/') && url[i + 1] == c))
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- who may ask */

/* host_name: the name part of a Host header value ("name", "name:port", "[v6]", "[v6]:port"),
 * lower-cased into name (HOST_MAX bytes). 0, or -1 when malformed (port not 1 to 5 digits). */
static int host_name(const char *h, char *name)
{
    size_t n;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return -1;
        n = (size_t)(close - h) + 1;
    } else {
        n = strcspn(h, ":");
    }
    if (n == 0 || n >= HOST_MAX)
        return -1;
    const char *port = h + n;
    if (*port) {
        size_t digits = strspn(port + 1, "0123456789");
        if (*port != ':' || digits < 1 || digits > 5 || port[1 + digits])
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c <= 0x20 || c >= 0x7f || c == '/' || c == '@' || c == '\\')
            return -1;
        name[i] = (char)tolower(c);
    }
    name[n] = 0;
    return 0;
}

static int host_allowed(const web *w, const char *name)
{
    for (unsigned i = 0; i < w->nhosts; i++)
        if (strcmp(w->hosts[i], name) == 0)
            return 1;
    return 0;
}

/* token_eq: the token of w against s (n bytes), in a time that does not depend on where they
 * differ. */
static int token_eq(const web *w, const char *s, size_t n)
{
    size_t len = strlen(w->token);
    unsigned char d = n != len;
    for (size_t i = 0; i < len; i++)
        d |= (unsigned char)(w->token[i] ^ (i < n ? s[i] : 0));
    return d == 0;
}

/* cookie_token: the value of cookie tlview_token_<port> in a Cookie header (*n its length), or
 * NULL. */
static const char *cookie_token(const web *w, const char *cookie, size_t *n)
{
    size_t k = w->cookie_name_len;
    for (const char *c = cookie; c && *c;) {
        c += strspn(c, " \t");
        size_t len = strcspn(c, ";");
        if (len > k && strncmp(c, w->cookie_name, k) == 0) {
            *n = len - k;
            return c + k;
        }
        c += len + (c[len] == ';');
    }
    return NULL;
}

/* check_client: 0 when the request may be answered (Host, Origin, token), else fills *out with
 * the refusal. A right token in the query is dropped from *p and sets *cookie. */
static int check_client(const web *w, const web_http_req *rq, web_params *p, int *cookie,
                        web_reply *out)
{
    char name[HOST_MAX];
    if (rq->nhost > 1) {
        web_reply_error(out, 400, "more than one Host header");
        return -1;
    }
    if (rq->nhost == 0 && strcmp(rq->version ? rq->version : "", "HTTP/1.0") != 0) {
        web_reply_error(out, 400, "HTTP/1.1 request without a Host header");
        return -1;
    }
    if (rq->host && host_name(rq->host, name) != 0) {
        web_reply_error(out, 400, "malformed Host header");
        return -1;
    }
    if (rq->host && !host_allowed(w, name)) {
        web_reply_error(out, 421,
                        "Host '%.80s' is not a name this server answers to (tlview serve "
                        "--allow-host adds one)",
                        name);
        return -1;
    }
    if (rq->norigin) { /* a cross-origin request, or a same-origin one that is not a GET */
        const char *o = rq->origin;
        int same = rq->norigin == 1 && strncasecmp(o, "http://", 7) == 0 &&
                   host_name(o + 7, name) == 0 && host_allowed(w, name) &&
                   (!rq->host || strcasecmp(o + 7, rq->host) == 0);
        if (!same) {
            web_reply_error(out, 403, "cross-origin request refused (Origin '%.80s')", o);
            return -1;
        }
    }
    if (!w->token)
        return 0;
    const char *q = web_param(p, "token"), *a = rq->authorization, *c;
    size_t n;
    if (q) {
        if (!token_eq(w, q, strlen(q)))
            goto refused;
        web_param_drop(p, "token");
        *cookie = 1; /* the page's own requests carry it from now on */
        return 0;
    }
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        if (token_eq(w, a + 7, strlen(a + 7)))
            return 0;
        goto refused;
    }
    if ((c = cookie_token(w, rq->cookie, &n)) && token_eq(w, c, n))
        return 0;
refused:
    web_reply_error(out, 403,
                    "this server needs its token: open the URL that tlview serve printed "
                    "(http://HOST:PORT/?token=...)");
    return -1;
}
/* ---------------------------------------------------------------- answering */

/* check_generation: a request may say which generation its ids come from (`gen`, the
 * `generation` of GET /api/runs it read): when another one is current now, it gets 409 with the
 * current number, and the page reads the runs again. 0 (the parameter dropped), or -1 after a
 * 400 or 409 reply. */
static int check_generation(const web_gen *g, web_params *p, web_reply *out)
{
    const char *s = web_param(p, "gen");
    if (!s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || *s < '0' || *s > '9') {
        web_reply_error(out, 400, "parameter 'gen' must be a generation number, got '%.40s'", s);
        return -1;
    }
    for (unsigned i = 0, n = 0; i < p->n; i++)
        if (strcmp(p->key[i], "gen") == 0 && ++n > 1) {
            web_reply_error(out, 400, "parameter 'gen' given twice");
            return -1;
        }
    if (v != g->id) {
        json_t *o = json_pack("{s:s,s:I}", "error",
                              "the runs changed: read GET /api/runs again (its generation)",
                              "generation", (json_int_t)g->id);
        memset(out, 0, sizeof *out);
        out->status = 409;
        out->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
        out->len = out->body ? strlen(out->body) : 0;
        json_decref(o);
        return -1;
    }
    web_param_drop(p, "gen");
    return 0;
}

void web_request(const web *w, const web_http_req *rq, web_reply *out)
{
    web_params p = {0};
    char err[160];
    int cookie = 0;
    memset(out, 0, sizeof *out);
    const char *t = rq->target ? rq->target : "";
    size_t tlen = rq->target ? rq->target_len : 0;
    const char *qm = memchr(t, '?', tlen);
    size_t plen = qm ? (size_t)(qm - t) : tlen;
    if (!rq->method || (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0)) {
        web_reply_error(out, 405, "only GET and HEAD are served");
    } else if (memchr(t, 0, tlen) || path_refused(t, plen)) {
        web_reply_error(out, 400, "refused path");
    } else if (web_params_parse(&p, qm ? qm + 1 : "", qm ? tlen - plen - 1 : 0, err, sizeof err)) {
        web_reply_error(out, 400, "%s", err);
    } else if (check_client(w, rq, &p, &cookie, out) == 0) {
        char path[128];
        web_gen *held = NULL; /* a job's group (web_job_route), else the current generation */
        if (w->job && web_job_route(w, &t, &plen, &p, &held, out)) {
            /* answered: the job's own page and endpoints, or a group not open */
        } else if (plen > 5 && strncmp(t, "/api/", 5) == 0) {
            snprintf(path, sizeof path, "%.*s", (int)(plen - 5 < 100 ? plen - 5 : 100), t + 5);
            /* answered with or without runs */
            int status = strcmp(path, "status") == 0, exp = strcmp(path, "experiment") == 0;
            web_gen *g = held ? held : status || exp ? NULL : gen_hold(w);
            if (status)
                api_status(w, &p, out);
            else if (exp)
                api_experiment(w, &p, out);
            else if (!g)
                not_shown(w, out);
            else if (check_generation(g, &p, out) == 0) {
                if (strcmp(path, "export") == 0)
                    web_export(w, g, &p, out); /* a stream holds g on a thread of its own */
                else
                    web_api(g, w->live->follow, path, &p, out); /* g's bodies: held blobs */
            }
            if (g)
                web_gen_let_go(w, g);
        } else {
            snprintf(path, sizeof path, "%.*s", (int)(plen < 100 ? plen : 100), t);
            const web_asset *a = web_assets;
            const char *want = strcmp(path, "/") == 0 ? "/index.html" : path;
            while (a->path && (plen >= 100 || strcmp(a->path, want) != 0))
                a++;
            if (a->path)
                *out = (web_reply){.status = 200,
                                   .body = (char *)a->data,
                                   .len = a->len,
                                   .persistent = 1,
                                   .mime = a->mime};
            else
                web_reply_error(out, 404, "not found");
        }
        out->set_cookie = cookie;
    }
    web_params_free(&p);
    if (!out->body && out->pipe_fd <= 0) {
        out->status = 500;
        out->body = (char *)oom_body;
        out->len = sizeof oom_body - 1;
        out->persistent = 1;
    }
}

void web_reply_done(web_reply *r)
{
    if (r->pipe_fd > 0) /* a stream never handed to libmicrohttpd */
        close(r->pipe_fd);
    r->pipe_fd = 0;
    if (r->blob)
        web_blob_release(r->blob);
    else if (!r->persistent)
        free(r->body);
    r->blob = NULL;
    r->body = NULL;
}

/* A request's context, from its first line to its end. */
typedef struct web_task {
    int asked;     /* handle() has seen the request's headers */
    char target[]; /* the raw target, which web_request() parses itself */
} web_task;

/* raw_uri: sees each request's target before libmicrohttpd decodes or splits it; its answer (a
 * task holding a copy of the target) becomes the request's context, freed by completed(). The
 * query is then cut from libmicrohttpd's own buffer, so that it never parses it: 0.9.75 keeps
 * every argument in the connection's 32 KiB pool and, when ~490 short ones fill it, loses its own
 * 431 answer and leaves the client waiting for the timeout. */
static char nomem_marker;
static void *raw_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls, (void)c;
    size_t n = strlen(uri);
    web_task *t = calloc(1, sizeof *t + n + 1);
    if (t)
        memcpy(t->target, uri, n + 1);
    char *q = strchr(uri, '?');
    if (q)
        q[1] = 0; /* libmicrohttpd's read buffer, which it writes into itself next */
    return t ? (void *)t : &nomem_marker;
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    if (*req_cls != &nomem_marker)
        free(*req_cls);
    *req_cls = NULL;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    web_http_req *rq = cls;
    if (strcasecmp(key, "Host") == 0)
        rq->host = rq->nhost++ ? rq->host : value;
    else if (strcasecmp(key, "Origin") == 0)
        rq->origin = rq->norigin++ ? rq->origin : value;
    else if (strcasecmp(key, "Cookie") == 0)
        rq->cookie = rq->cookie ? rq->cookie : value;
    else if (strcasecmp(key, "Authorization") == 0)
        rq->authorization = rq->authorization ? rq->authorization : value;
    return MHD_YES;
}

/* respond: queues the answer with the headers every answer carries. The body goes to
 * libmicrohttpd as it is: a held blob is released by libmicrohttpd when it destroys the response
 * (after sending it, or when the connection goes), a malloc'd body freed. */
static enum MHD_Result respond(const web *w, struct MHD_Connection *c, web_reply *rep)
{
    struct MHD_Response *r =
        rep->pipe_fd > 0 ? MHD_create_response_from_pipe(rep->pipe_fd) /* closes it */
        : rep->blob      ? MHD_create_response_from_buffer_with_free_callback_cls(
                               rep->len, rep->body, web_blob_release, rep->blob)
                    : MHD_create_response_from_buffer(rep->len, rep->body,
                                                      rep->persistent ? MHD_RESPMEM_PERSISTENT
                                                                      : MHD_RESPMEM_MUST_FREE);
    if (!r) {
        web_reply_done(rep);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            rep->mime ? rep->mime : "application/json");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (rep->retry_after) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", rep->retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    if (rep->set_cookie && w->token)
        MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, w->set_cookie);
    if (rep->filename[0]) {
        char cd[160];
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", rep->filename);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
    }
    enum MHD_Result ret = MHD_queue_response(c, rep->status, r);
    MHD_destroy_response(r);
    return ret;
}

/* handle: libmicrohttpd's call for a request, on its connection's thread: first when the headers
 * are read, then with each piece of a body (dropped), then at the request's end, when a GET or a
 * HEAD is answered (answering on the first call would close the connection: libmicrohttpd 0.9.75
 * does not keep a connection alive after an answer queued before the request's end). Any other
 * method is refused on the first call, its body unread, and the connection closed. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)url, (void)upload_data;
    const web *w = cls;
    web_task *t = *req_cls;
    web_reply rep;
    if (!t || *req_cls == &nomem_marker) {
        *upload_data_size = 0;
        rep = (web_reply){
            .status = 500, .body = (char *)oom_body, .len = sizeof oom_body - 1, .persistent = 1};
        return respond(w, c, &rep);
    }
    if (!t->asked && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        t->asked = 1; /* answered at the request's end */
        return MHD_YES;
    }
    if (*upload_data_size) { /* a GET's body: read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    web_http_req rq = {.method = method, .version = version, .target = t->target};
    rq.target_len = strlen(rq.target);
    MHD_get_connection_values(c, MHD_HEADER_KIND, collect_header, &rq);
    web_gate_enter(w->gate);
    web_request(w, &rq, &rep);
    web_gate_leave(w->gate);
    return respond(w, c, &rep);
}

/* listen_on: a bound, listening TCP socket on addr:port, its address in *ss; -2 for a bad
 * address, -3 when the port is taken, -1 when the system refused otherwise, with the reason in
 * err. */
static int listen_on(const char *addr, unsigned port, struct sockaddr_storage *ss, unsigned *bound,
                     char *err, size_t errlen)
{
    socklen_t sl;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        sl = sizeof *s4;
    } else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        sl = sizeof *s6;
    } else {
        snprintf(err, errlen, "--bind %s: not a numeric IPv4 or IPv6 address", addr);
        return -2;
    }
    int v6 = ss->ss_family == AF_INET6;
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)ss, sl) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        int e = errno;
        snprintf(err, errlen, "bind %s%s%s:%u: %s", v6 ? "[" : "", addr, v6 ? "]" : "", port,
                 strerror(e));
        close(fd);
        return e == EADDRINUSE ? -3 : -1;
    }
    sl = sizeof *ss;
    getsockname(fd, (struct sockaddr *)ss, &sl);
    *bound = ntohs(v6 ? s6->sin6_port : s4->sin_port);
    return fd;
}

/* is_loopback: 1 for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int web_loopback(const char *addr)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (addr && inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
        ss.ss_family = AF_INET;
    else if (addr && inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1)
        ss.ss_family = AF_INET6;
    else
        return -1;
    return is_loopback(&ss);
}

static int is_wildcard(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* add_host: one more name the server answers to (lower-cased, IPv6 in brackets); dropped when
 * already there. 0 or WEB_ENOMEM. */
static int add_host(web *w, const char *name, int bracket)
{
    char buf[HOST_MAX];
    int n = snprintf(buf, sizeof buf, bracket ? "[%s]" : "%s", name);
    if (n <= 0 || n >= (int)sizeof buf)
        return WEB_OK; /* longer than any Host accepted: could never match */
    for (char *c = buf; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (host_allowed(w, buf))
        return WEB_OK;
    char **h = realloc(w->hosts, sizeof *h * (w->nhosts + 1));
    if (!h)
        return WEB_ENOMEM;
    w->hosts = h;
    if (!(h[w->nhosts] = strdup(buf)))
        return WEB_ENOMEM;
    w->nhosts++;
    return WEB_OK;
}

/* address_text: the numeric form of an address (IPv6 without scope) into text; "" when it has
 * none. */
static void address_text(const struct sockaddr *sa, char text[INET6_ADDRSTRLEN])
{
    const void *a = sa->sa_family == AF_INET
                        ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                        : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (!inet_ntop(sa->sa_family, a, text, INET6_ADDRSTRLEN))
        text[0] = 0;
}

/* add_address: the numeric form of an address (IPv6 without scope, in brackets). */
static int add_address(web *w, const struct sockaddr *sa)
{
    char text[INET6_ADDRSTRLEN];
    address_text(sa, text);
    return text[0] ? add_host(w, text, sa->sa_family == AF_INET6) : WEB_OK;
}

/* build_hosts: the names a Host header may give (web.h): loopback's, the bound address, beyond
 * loopback the host name and, on a wildcard, every interface's address; then allow_hosts. Sets
 * w->wildcard and w->url_host, the one of them a printed URL names (web_url_host()). */
static int build_hosts(web *w, const web_options *o, const struct sockaddr_storage *ss)
{
    char name[HOST_MAX] = "";
    w->wildcard = is_wildcard(ss);
    if (!is_loopback(ss) && gethostname(name, sizeof name - 1) != 0)
        name[0] = 0;
    if (w->wildcard) { /* reachable by this machine's name (or any of its addresses) */
        snprintf(w->url_host, sizeof w->url_host, "%s", name[0] ? name : "127.0.0.1");
    } else { /* the address as the Host check has it: "::0001" is [::1] there */
        char text[INET6_ADDRSTRLEN];
        address_text((const struct sockaddr *)ss, text);
        snprintf(w->url_host, sizeof w->url_host, ss->ss_family == AF_INET6 ? "[%s]" : "%s", text);
    }
    int rc = add_host(w, "127.0.0.1", 0);
    rc = rc ? rc : add_host(w, "localhost", 0);
    rc = rc ? rc : add_host(w, "::1", 1);
    if (!rc && !w->wildcard)
        rc = add_address(w, (const struct sockaddr *)ss);
    if (!rc && name[0])
        rc = add_host(w, name, 0);
    struct ifaddrs *ifs = NULL;
    if (!rc && w->wildcard && getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i && !rc; i = i->ifa_next)
            if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
                                (i->ifa_addr->sa_family == AF_INET6 && ss->ss_family == AF_INET6)))
                rc = add_address(w, i->ifa_addr);
        freeifaddrs(ifs);
    }
    for (const char *const *h = o->allow_hosts; h && *h && !rc; h++)
        rc = add_host(w, *h, 0);
    return rc;
}

/* make_token: the token to require: none when asked for none (on loopback only), else the given
 * one when valid, else a random one. 0, WEB_EINVAL (malformed token, no token asked beyond
 * loopback or beside one; the message in err), WEB_ESOCKET (no random bytes) or WEB_ENOMEM. */
static int make_token(web *w, const web_options *o, const struct sockaddr_storage *ss, char *err,
                      size_t errlen)
{
    if (o->no_token) {
        if (o->token) {
            snprintf(err, errlen, "web_start: a token and no token at once");
            return WEB_EINVAL;
        }
        if (!is_loopback(ss)) {
            snprintf(err, errlen,
                     "--no-token is refused beyond loopback (--bind %s): anyone who can reach "
                     "the port would read the traces' host names, paths and command lines",
                     o->bind);
            return WEB_EINVAL;
        }
        return WEB_OK;
    }
    if (o->token) {
        size_t n = strlen(o->token);
        if (n < 16 || n > 64 ||
            strspn(o->token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                n) {
            snprintf(err, errlen, "web_start: the token must be 16 to 64 of [A-Za-z0-9_-]");
            return WEB_EINVAL;
        }
        return (w->token = strdup(o->token)) ? WEB_OK : WEB_ENOMEM;
    }
    unsigned char r[TOKEN_BYTES];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return WEB_ESOCKET;
    }
    if (!(w->token = malloc(2 * TOKEN_BYTES + 1)))
        return WEB_ENOMEM;
    for (int i = 0; i < TOKEN_BYTES; i++)
        snprintf(w->token + 2 * i, 3, "%02x", r[i]);
    return WEB_OK;
}

/* copy_experiment: w->experiment from `text` (web_options.experiment), checked to be one JSON
 * object and made compact. WEB_OK, or WEB_EINVAL / WEB_ENOMEM with the message in err. */
static int copy_experiment(web *w, const char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(o)) {
        snprintf(err, errlen, "web_start: the experiment is not one JSON object (%s)",
                 o ? "another value" : je.text);
        json_decref(o);
        return WEB_EINVAL;
    }
    w->experiment = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!w->experiment) {
        snprintf(err, errlen, "out of memory");
        return WEB_ENOMEM;
    }
    return WEB_OK;
}

/* start_server: web_start(), or web_start_job() when index_json is not NULL (no run then). */
static int start_server(const web_options *o, const web_run *runs, unsigned nruns,
                        const char *index_json, uint32_t ngroups, int loading, web **ppW, char *err,
                        size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0)
        err = dummy, errlen = sizeof dummy;
    err[0] = 0;
    *ppW = NULL;
    web_options def;
    if (!o) {
        web_options_default(&def);
        o = &def;
    }
    if (o->port > 65535 || !o->bind || !o->max_connections || !o->max_per_ip) {
        snprintf(err, errlen, "web_start: bad arguments (port %u, limits %u, %u)", o->port,
                 o->max_connections, o->max_per_ip);
        return WEB_EINVAL;
    }
    int rc = index_json || loading ? WEB_OK : check_runs("web_start", runs, nruns, err, errlen);
    if (rc)
        return rc;
    web *w = calloc(1, sizeof *w);
    if (!w || !(w->live = calloc(1, sizeof *w->live))) {
        free(w);
        snprintf(err, errlen, "out of memory");
        return WEB_ENOMEM;
    }
    w->fd = -1;
    pthread_mutex_init(&w->live->lock, NULL);
    pthread_cond_init(&w->live->released, NULL);
    w->live->follow = o->follow != 0;
    w->live->loading = loading;
    w->live->started_ms = now_ms();
    snprintf(w->live->stage, sizeof w->live->stage, "%s", loading ? "starting" : "");
    pthread_cond_init(&w->live->exported, NULL);
    w->export_chrome = o->export_chrome;
    w->export_text = o->export_text;
    snprintf(w->version, sizeof w->version, "%s", o->version ? o->version : "");
    w->live->shows = (o->follow ? WEB_SHOW_FOLLOW : 0) | (o->export_chrome ? WEB_SHOW_CHROME : 0) |
                     (o->export_text ? WEB_SHOW_TEXT : 0) |
                     (o->experiment ? WEB_SHOW_EXPERIMENT : 0);
    if (o->experiment && (rc = copy_experiment(w, o->experiment, err, errlen)))
        goto fail;
    struct sockaddr_storage ss;
    w->fd = listen_on(o->bind, o->port, &ss, &w->port, err, errlen);
    if (w->fd < 0) {
        rc = w->fd == -2 ? WEB_EINVAL : w->fd == -3 ? WEB_EADDRINUSE : WEB_ESOCKET;
        w->fd = -1;
        goto fail;
    }
    if ((rc = make_token(w, o, &ss, err, errlen)) || (rc = build_hosts(w, o, &ss))) {
        if (rc == WEB_ENOMEM)
            snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* the cookie's name and header, once: the port and the token are known now (a token holds
     * at most 64 characters, so both fit) */
    w->cookie_name_len =
        (size_t)snprintf(w->cookie_name, sizeof w->cookie_name, "tlview_token_%u=", w->port);
    if (w->token)
        snprintf(w->set_cookie, sizeof w->set_cookie, "%s%s; Path=/; HttpOnly; SameSite=Strict",
                 w->cookie_name, w->token);
    if (index_json ? web_job_new(w, index_json, ngroups) != WEB_OK
        : !loading
            ? !(w->live->gen = web_gen_new(1, runs, nruns, w->live->shows, NULL, NULL, err, errlen))
            : 0) {
        if (index_json)
            snprintf(err, errlen, "out of memory");
        rc = WEB_ENOMEM;
        goto fail;
    }
    /* connections beyond what the open-file limit allows would fail in accept() one by one */
    unsigned limit = o->max_connections;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)limit + 2 * FD_RESERVE)
        limit = rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)(rl.rlim_cur - FD_RESERVE) : FD_RESERVE;
    if (!(w->gate = web_gate_new(o->threads))) {
        snprintf(err, errlen, "out of memory");
        rc = WEB_ENOMEM;
        goto fail;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC |
                     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    w->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, w, MHD_OPTION_URI_LOG_CALLBACK, raw_uri, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)w->fd,
        MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
    if (!w->daemon) {
        snprintf(err, errlen, "libmicrohttpd could not start on port %u", w->port);
        rc = WEB_EHTTP;
        goto fail;
    }
    *ppW = w;
    return WEB_OK;
fail:
    web_stop(w);
    return rc;
}

int web_start(const web_options *o, const web_run *runs, unsigned nruns, web **ppW, char *err,
              size_t errlen)
{
    return start_server(o, runs, nruns, NULL, 0, 0, ppW, err, errlen);
}

int web_start_loading(const web_options *o, web **ppW, char *err, size_t errlen)
{
    return start_server(o, NULL, 0, NULL, 0, 1, ppW, err, errlen);
}

int web_start_job(const web_options *o, const char *index_json, uint32_t ngroups, web **ppW,
                  char *err, size_t errlen)
{
    if (!index_json) {
        if (err && errlen)
            snprintf(err, errlen, "web_start_job: no index");
        if (ppW)
            *ppW = NULL;
        return WEB_EINVAL;
    }
    return start_server(o, NULL, 0, index_json, ngroups, 0, ppW, err, errlen);
}

void web_stop(web *w)
{
    if (!w)
        return;
    if (w->daemon) {
        /* quiesce hands the listening socket back so it is closed exactly once, here */
        MHD_quiesce_daemon(w->daemon);
        MHD_stop_daemon(w->daemon);
    }
    if (w->fd >= 0)
        close(w->fd);
    web_gate_free(w->gate); /* every connection's thread has ended */
    if (w->live) {          /* no request runs any more */
        /* exports still being written: their pipes' readers are gone with the connections, so
         * each writes on to its end quickly (every write fails) and lets its generation go */
        pthread_mutex_lock(&w->live->lock);
        while (w->live->exports)
            pthread_cond_wait(&w->live->exported, &w->live->lock);
        pthread_mutex_unlock(&w->live->lock);
        pthread_cond_destroy(&w->live->exported);
        free(w->live->failure);
        web_gen_free(w->live->gen);
        web_job_free(w);
        pthread_cond_destroy(&w->live->released);
        pthread_mutex_destroy(&w->live->lock);
        free(w->live);
    }
    for (unsigned i = 0; i < w->nhosts; i++)
        free(w->hosts[i]);
    free(w->hosts);
    free(w->token);
    free(w->experiment);
    free(w);
}
