/* fuzz/fuzz_http.c: libFuzzer target for the request layer of `tlview serve`. Each input is one
 * HTTP request as text (request line, header lines, a blank line; the request target may hold
 * any byte), handed to web_request() (method, Host, Origin and token checks, path and query
 * parsing, routing, every API endpoint) of two servers over a small synthetic run: one on
 * loopback that requires no token (web_options.no_token, tlview serve --no-token: every input
 * reaches the handlers past the token check), one requiring the token "fuzz-token-0123456789"
 * (the seeds token_*.txt carry it, as the dictionary does). Besides crashes,
 * leaks and ASan/UBSan reports, a bug is: a status outside the expected set (a 500, say), or an
 * API answer whose body is not JSON (or, format=bin, not the compact form's framing with a JSON
 * header). Seeds: fuzz/http_seeds/; dictionary: fuzz/http.dict. */
#define _GNU_SOURCE /* memmem, memrchr */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "web_int.h"

#define BASE 1700000000000000000LL /* absolute ns of the synthetic run */
#define TOKEN "fuzz-token-0123456789"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static web *servers[2]; /* [0] loopback, no token required; [1] token required */

/* make_run: two processes on one GPU, alone then side by side (as tests/web makes it, smaller). */
static store_run *make_run(void)
{
    store_run *run = store_run_new();
    const char *names[2] = {"_Z2kAi", "_Z2kBPf"};
    store_idx stream[2], launch[2];
    for (int p = 0; p < 2; p++) {
        store_process_info pi = {.pid = 100 + 100 * p,
                                 .ppid = 1,
                                 .host = "h",
                                 .exe = "/bin/spin",
                                 .argv = "spin",
                                 .source = "libcollect"};
        store_idx pr = store_run_add_process(run, &pi, p ? "b.db" : "a.db");
        store_device_info di = {.device_id = 0,
                                .uuid = "00112233445566778899aabbccddeeff",
                                .name = "NVIDIA H200",
                                .sm_count = 132,
                                .cc_major = 9};
        store_idx dev = store_run_add_device(run, pr, &di);
        stream[p] = store_run_stream(run, store_run_context(run, pr, 1, dev, 1), 7);
        store_launch l = {.name = store_run_intern(run, names[p]), .grid = {64, 1, 1}};
        launch[p] = store_run_launch(run, &l);
    }
    uint32_t corr = 1;
    for (int i = 0; i < 40; i++) {
        store_kernel k = {
            BASE + i * 2000LL, BASE + i * 2000LL + 1000, stream[0], launch[0], corr++, 0};
        store_run_add_kernel(run, &k);
    }
    for (int i = 0; i < 20; i++)
        for (int p = 0; p < 2; p++) {
            int64_t t = BASE + 100000 + i * 4100LL;
            store_kernel k = {t, t + 4000, stream[p], launch[p], corr++, 0};
            store_run_add_kernel(run, &k);
        }
    store_run_finish(run);
    return run;
}

/* answer: web_request() of server s, checked; its status. */
static unsigned answer(int s, const web_http_req *rq)
{
    web_reply rep;
    web_request(servers[s], rq, &rep);
    switch (rep.status) {
    case 200:
    case 400:
    case 403:
    case 404:
    case 405:
    case 409: /* gen=N naming a generation that is not the current one (web/API.md) */
    case 421:
    case 503: break;
    default:
        fprintf(stderr, "fuzz_http: status %u: %.*s\n", rep.status, (int)rep.len, rep.body);
        abort();
    }
    if (!rep.body)
        abort();
    if (!rep.mime) { /* JSON */
        json_error_t e;
        json_t *j = json_loadb(rep.body, rep.len, 0, &e);
        if (!j) {
            fprintf(stderr, "fuzz_http: not JSON (%s): %.*s\n", e.text, (int)rep.len, rep.body);
            abort();
        }
        json_decref(j);
    } else if (strcmp(rep.mime, "application/octet-stream") == 0) { /* a compact answer */
        json_error_t e;
        uint32_t h = rep.len >= 8 ? (uint32_t)(unsigned char)rep.body[4] |
                                        (uint32_t)(unsigned char)rep.body[5] << 8 |
                                        (uint32_t)(unsigned char)rep.body[6] << 16 |
                                        (uint32_t)(unsigned char)rep.body[7] << 24
                                  : 0;
        json_t *j =
            rep.len >= 8 && memcmp(rep.body, "TLVB", 4) == 0 && h >= 8 && h <= rep.len && h % 8 == 0
                ? json_loadb(rep.body + h, rep.len - h, 0, &e)
                : NULL;
        if (!j) {
            fprintf(stderr, "fuzz_http: not a compact answer (magic, header offset or JSON)\n");
            abort();
        }
        json_decref(j);
    }
    unsigned status = rep.status;
    web_reply_done(&rep);
    return status;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static store_run *run;
    static analysis *an;
    run = make_run();
    if (analysis_run(run, NULL, &an) != ANALYSIS_OK)
        abort();
    web_run wr = {"fuzz", run, an};
    for (int s = 0; s < 2; s++) {
        web_options o;
        web_options_default(&o);
        o.port = 0;
        o.threads = 1;
        o.token = s ? TOKEN : NULL;
        o.no_token = !s;
        char err[256];
        if (web_start(&o, &wr, 1, &servers[s], err, sizeof err) != WEB_OK) {
            fprintf(stderr, "fuzz_http: web_start: %s\n", err);
            abort();
        }
    }
    /* wait for the statistics, so that a given input always gets the same answer */
    web_http_req rq = {.method = "GET", .version = "HTTP/1.0", .target = "/api/stats"};
    rq.target_len = strlen(rq.target);
    for (int i = 0; i < 2000; i++) {
        web_reply rep;
        web_request(servers[0], &rq, &rep);
        web_reply_done(&rep);
        if (rep.status != 503)
            break;
        usleep(5000);
    }
    return 0;
}

/* next_line: the line at *p (up to "\n", a "\r" before it dropped), NUL-terminated in place,
 * its length in *n; *p moves past it. NULL at the end. */
static char *next_line(char **p, char *end, size_t *n)
{
    if (*p >= end)
        return NULL;
    char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    char *e = nl ? nl : end;
    *p = nl ? nl + 1 : end;
    if (e > s && e[-1] == '\r')
        e--;
    *e = 0;
    *n = (size_t)(e - s);
    return s;
}

/* has: whether s (NULL allowed; n bytes) holds the token. */
static int has_token(const char *s, size_t n)
{
    return s && memmem(s, n, TOKEN, sizeof TOKEN - 1) != NULL;
}

/* loopback_name: whether a Host value names loopback, as a server on loopback must demand. */
static int loopback_name(const char *h)
{
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(h, names[i], n) == 0 && (h[n] == 0 || h[n] == ':'))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *p = buf, *end = buf + size;
    memcpy(buf, data, size);
    buf[size] = 0;
    web_http_req rq = {.method = "", .version = "HTTP/1.0"};
    size_t n;
    char *line = next_line(&p, end, &n);
    if (line) { /* METHOD SP TARGET [SP VERSION]; the target may hold any byte but "\n" */
        char *sp1 = memchr(line, ' ', n);
        char *sp2 = sp1 ? memrchr(sp1 + 1, ' ', (size_t)(line + n - sp1 - 1)) : NULL;
        rq.method = line;
        if (sp1) {
            *sp1 = 0;
            rq.target = sp1 + 1;
            rq.target_len = (size_t)((sp2 ? sp2 : line + n) - rq.target);
            if (sp2) {
                *sp2 = 0;
                rq.version = sp2 + 1;
            }
        }
    }
    while ((line = next_line(&p, end, &n)) && *line) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = 0;
        char *v = colon + 1 + strspn(colon + 1, " \t");
        if (strcasecmp(line, "Host") == 0)
            rq.host = rq.nhost++ ? rq.host : v;
        else if (strcasecmp(line, "Origin") == 0)
            rq.origin = rq.norigin++ ? rq.origin : v;
        else if (strcasecmp(line, "Cookie") == 0)
            rq.cookie = rq.cookie ? rq.cookie : v;
        else if (strcasecmp(line, "Authorization") == 0)
            rq.authorization = rq.authorization ? rq.authorization : v;
    }
    for (int s = 0; s < 2; s++) {
        unsigned status = answer(s, &rq);
        if (status != 200)
            continue;
        /* what must hold of anything answered */
        if ((rq.host && !loopback_name(rq.host)) || rq.nhost > 1 ||
            (!rq.nhost && strcmp(rq.version, "HTTP/1.0") != 0) ||
            (rq.origin && strncasecmp(rq.origin, "http://", 7) != 0))
            abort();
        if (s == 1 && !has_token(rq.target, rq.target_len) &&
            !has_token(rq.cookie, rq.cookie ? strlen(rq.cookie) : 0) &&
            !has_token(rq.authorization, rq.authorization ? strlen(rq.authorization) : 0))
            abort();
    }
    free(buf);
    return 0;
}
