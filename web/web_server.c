/* web_server.c: the HTTP side of `tlview serve`: binds the listening socket itself (so a failure
 * is reported with its reason, as Valkey's anet.c does), runs libmicrohttpd on a thread pool, and
 * routes each GET to an embedded asset or to the JSON API. Read-only by construction: nothing is
 * ever read from the disk; paths with "..", "//", "\", any percent-encoding (checked on the raw
 * target) or control characters, and absolute-form targets are refused with 400 before any
 * lookup; anything else unknown is a 404. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "web_int.h"

#define LISTEN_BACKLOG 256
#define CONNECTION_TIMEOUT_S 30
#define CSP                                                                                        \
    "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; "            \
    "base-uri 'none'; frame-ancestors 'none'"

void web_options_default(web_options *o)
{
    o->bind = "127.0.0.1";
    o->port = 8080;
    o->threads = 4;
}

unsigned web_port(const web *w)
{
    return w->port;
}

/* path_refused: 1 when the (already percent-decoded) path tries to leave the served namespace or
 * hides something from the checks: traversal, empty segments, a second level of encoding. */
static int path_refused(const char *url)
{
    if (url[0] != '/')
        return 1; /* absolute-form ("http://host/x") or garbage */
    if (strstr(url, "..") || strstr(url, "//") || strchr(url, '\\') || strchr(url, '%'))
        return 1;
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

/* raw_uri: sees each request's target before MHD decodes it; its answer becomes the request's
 * context. A '%' anywhere in the path part is refused: no asset or endpoint needs one, and
 * decoding would hide "%2e%2e" or "%00" from path_refused(). */
static char refused_marker;
static void *raw_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls, (void)c;
    size_t n = strcspn(uri, "?");
    return memchr(uri, '%', n) ? &refused_marker : NULL;
}

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    web_params *p = cls;
    if (p->n == sizeof p->key / sizeof p->key[0]) {
        p->overflow = 1;
        return MHD_NO;
    }
    p->key[p->n] = key;
    p->val[p->n] = value;
    p->n++;
    return MHD_YES;
}

/* respond: queues the answer; retry_after > 0 adds a Retry-After header (seconds). */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *mime,
                               const void *body, size_t len, enum MHD_ResponseMemoryMode mode,
                               unsigned retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (retry_after) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    char body[256];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\"}", msg);
    char *copy = strdup(body);
    if (!copy)
        return MHD_NO;
    return respond(c, status, "application/json", copy, (size_t)n, MHD_RESPMEM_MUST_FREE, 0);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version, (void)upload_data;
    const web *w = cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        *upload_data_size = 0;
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served");
    }
    if (*req_cls == &refused_marker || path_refused(url))
        return send_error(c, MHD_HTTP_BAD_REQUEST, "refused path");
    if (strncmp(url, "/api/", 5) == 0) {
        web_params p = {0};
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_param, &p);
        web_reply rep;
        web_api(w, url + 5, &p, &rep);
        if (!rep.body)
            return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        return respond(c, rep.status, "application/json", rep.body, rep.len,
                       rep.persistent ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE,
                       rep.retry_after);
    }
    const char *path = strcmp(url, "/") == 0 ? "/index.html" : url;
    for (const web_asset *a = web_assets; a->path; a++)
        if (strcmp(a->path, path) == 0)
            return respond(c, MHD_HTTP_OK, a->mime, a->data, a->len, MHD_RESPMEM_PERSISTENT, 0);
    return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
}

/* listen_on: a bound, listening TCP socket on addr:port; -2 for a bad address, -1 when the
 * system refused, with the reason in err. */
static int listen_on(const char *addr, unsigned port, int *is_v6, unsigned *bound, char *err,
                     size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        sl = sizeof *s4;
        *is_v6 = 0;
    } else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        sl = sizeof *s6;
        *is_v6 = 1;
    } else {
        snprintf(err, errlen, "--bind %s: not a numeric IPv4 or IPv6 address", addr);
        return -2;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        snprintf(err, errlen, "bind %s%s%s:%u: %s", *is_v6 ? "[" : "", addr, *is_v6 ? "]" : "",
                 port, strerror(errno));
        close(fd);
        return -1;
    }
    sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *bound = ntohs(*is_v6 ? s6->sin6_port : s4->sin_port);
    return fd;
}

int web_start(const web_options *o, const web_run *runs, unsigned nruns, web **ppW, char *err,
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
    if (!runs || nruns == 0 || nruns > WEB_MAX_RUNS || o->port > 65535 || !o->bind) {
        snprintf(err, errlen, "web_start: bad arguments (%u runs, port %u)", nruns, o->port);
        return WEB_EINVAL;
    }
    for (unsigned i = 0; i < nruns; i++)
        if (!runs[i].run || !runs[i].an) {
            snprintf(err, errlen, "web_start: run %u has no run or no analysis", i);
            return WEB_EINVAL;
        }
    web *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return WEB_ENOMEM;
    }
    w->fd = -1;
    w->stats = calloc(1, sizeof *w->stats);
    if (!w->stats) {
        free(w);
        snprintf(err, errlen, "out of memory");
        return WEB_ENOMEM;
    }
    pthread_mutex_init(&w->stats->lock, NULL);
    int rc = WEB_OK, v6 = 0;
    for (unsigned i = 0; i < nruns; i++) {
        if ((rc = web_runix_build(&w->runs[i], &runs[i], err, errlen)))
            goto fail;
        w->nruns = i + 1;
    }
    if ((rc = web_api_runs_body(w))) {
        snprintf(err, errlen, "out of memory while building the API answers");
        goto fail;
    }
    if (pthread_create(&w->stats->thread, NULL, web_api_stats_bodies, w) == 0)
        w->stats->started = 1;
    else
        web_api_stats_bodies(w); /* no thread: build them here */
    w->fd = listen_on(o->bind, o->port, &v6, &w->port, err, errlen);
    if (w->fd < 0) {
        rc = w->fd == -2 ? WEB_EINVAL : WEB_ESOCKET;
        w->fd = -1;
        goto fail;
    }
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
    w->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, w, MHD_OPTION_URI_LOG_CALLBACK, raw_uri, NULL,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)w->fd, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(o->threads ? o->threads : 1), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
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
    if (w->stats) {
        if (w->stats->started)
            pthread_join(w->stats->thread, NULL);
        pthread_mutex_destroy(&w->stats->lock);
        free(w->stats);
    }
    for (unsigned i = 0; i < w->nruns; i++)
        web_runix_free(&w->runs[i]);
    free(w->runs_body);
    free(w);
}
