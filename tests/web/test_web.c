/* Tests of web/: a synthetic two-process run is analysed and served on 127.0.0.1 port 0; a tiny
 * HTTP/1.0 client over sockets (with timeouts) checks every endpoint against numbers computed
 * here by brute force, the 400/404/405 answers, path traversal attempts, huge ranges and many
 * concurrent clients; the interval index is checked against brute force on random data; and
 * `tlview serve` end to end (saved files, --compare, the demo traces, bad files). The servers
 * started here require no token (web_options.no_token) but in the token's own cases; those of
 * `tlview serve` are asked with the token of the URL they print. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_serve_gen.h"
#include "test_help.h"
#include "view.h"
#include "web.h"
#include "web_int.h"

#define BASE 1700000000000000000LL /* absolute ns of the synthetic run (realtime axis) */
#define NA 300                     /* kernels of process A (pid 100) */
#define NB 120                     /* kernels of process B (pid 200) */

/* ---------------------------------------------------------------- fixture */

static int64_t run_base = BASE; /* where make_run_x() puts its run: BASE, but at the time axis's
                                   edge for the edge case */

typedef struct fixture {
    store_run *run[2];
    analysis *an[2];
    web *w;
    unsigned port;
} fixture;

/* make_run: A runs kA alone for 200 kernels (1 us each, every 2 us), then A and B overlap:
 * 100 kernels each of 2 us (stretched x2, time-sliced) side by side, then B runs 20 kernels of
 * 1 us alone. `scale` stretches the overlapped part (1: as said, 0.5: an "MPS" run where they
 * are not stretched). */
static void add_rich(store_run *run, const store_idx *stream);

static store_run *make_run_x(double scale, int mps, int rich);
static store_run *make_run(double scale, int mps)
{
    return make_run_x(scale, mps, 0);
}

/* make_run_x: make_run(), with (rich = 1) the copies, API calls and NVTX ranges of add_rich(). */
static store_run *make_run_x(double scale, int mps, int rich)
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
        if (p) { /* B was rank 1 of 2 under mpirun (its process_meta); A says no rank */
            store_run_process_meta(run, pr, "env.OMPI_COMM_WORLD_RANK", "1");
            store_run_process_meta(run, pr, "env.OMPI_COMM_WORLD_LOCAL_RANK", "1");
            store_run_process_meta(run, pr, "env.OMPI_COMM_WORLD_SIZE", "2");
        }
        store_device_info di = {.device_id = 0,
                                .uuid = "00112233445566778899aabbccddeeff",
                                .name = "NVIDIA H200",
                                .sm_count = 132,
                                .cc_major = 9};
        store_idx dev = store_run_add_device(run, pr, &di);
        store_idx cx = store_run_context(run, pr, 1, dev, mps ? 2 : 1);
        stream[p] = store_run_stream(run, cx, 7);
        store_launch l = {.name = store_run_intern(run, names[p]),
                          .grid = {64, 1, 1},
                          .block = {128, 1, 1},
                          .registers = 32};
        launch[p] = store_run_launch(run, &l);
    }
    uint32_t corr = 1;
    for (int i = 0; i < 200; i++) {
        store_kernel k = {
            run_base + i * 2000LL, run_base + i * 2000LL + 1000, stream[0], launch[0], corr++, 0};
        store_run_add_kernel(run, &k);
    }
    int64_t t = run_base + 400000;
    int64_t d = (int64_t)(2000 * scale);
    for (int i = 0; i < 100; i++) {
        for (int p = 0; p < 2; p++) {
            store_kernel k = {t, t + d, stream[p], launch[p], corr++, 0};
            store_run_add_kernel(run, &k);
        }
        t += d + 100;
    }
    for (int i = 0; i < 20; i++) { /* B alone at the end gives kB a solo reference */
        store_kernel k = {t + i * 2000LL, t + i * 2000LL + 1000, stream[1], launch[1], corr++, 0};
        store_run_add_kernel(run, &k);
    }
    if (rich)
        add_rich(run, stream);
    store_run_finish(run);
    return run;
}

#define THREAD_A 0xA1 /* the thread of A's API calls and NVTX ranges */
#define THREAD_B 0xB1
#define NCOPY_A 10 /* A's memcpys (HtoD, on its kernels' stream 7) */
#define NSET_B 3   /* B's memsets (on its stream 9) */

/* add_rich: what a traced program has besides kernels. Process A (thread THREAD_A): a
 * cudaLaunchKernel [s - 600, s - 300] for each of its first 200 kernels (correlation id that of
 * the kernel, 1..200); inside every 10th a cuLaunchKernel [s - 550, s - 350] (id 100000 + i, no
 * kernel), every 50th instead one that starts with it [s - 600, s - 400] (a tie: the longer call
 * is the outer one); every 20th kernel a 4096-byte HtoD memcpy [s + 1100, s + 1400] on stream 7
 * and its cudaMemcpyAsync [s + 1000, s + 1050] (id 200000 + i). NVTX ranges: "outer" [0, 400000]
 * (relative to BASE), "step j" [40000 j, 40000 (j + 1) - 100] (step 0 starts with outer),
 * "inner j" [40000 j + 1000, 40000 j + 20000] and "cross" [395000, 405000], which crosses the end
 * of outer (level 2: outer and step 9 are open at its start). Process B (thread THREAD_B): 3
 * Device memsets on stream 9 (no correlation id), a cudaDeviceSynchronize with correlation id 5
 * (A's kernel 5 has it too: flows stay within a process) and one NVTX range "b" in domain "dom". */
static void add_rich(store_run *run, const store_idx *stream)
{
    store_idx rt = store_run_intern(run, "cudaLaunchKernel");
    store_idx drv = store_run_intern(run, "cuLaunchKernel");
    store_idx cpy = store_run_intern(run, "cudaMemcpyAsync");
    store_idx sync = store_run_intern(run, "cudaDeviceSynchronize");
    for (int i = 0; i < 200; i++) {
        int64_t s = run_base + i * 2000LL;
        store_api a = {s - 600, s - 300, 0, (uint32_t)i + 1, THREAD_A, rt, STORE_API_RUNTIME, 0};
        store_api d = {s - (i % 50 ? 550 : 600),
                       s - (i % 50 ? 350 : 400),
                       0,
                       100000 + (uint32_t)i,
                       THREAD_A,
                       drv,
                       STORE_API_DRIVER,
                       0};
        if (i % 50 == 0) /* the inner call of a tie first: the index must not keep that order */
            store_run_add_api(run, &d);
        store_run_add_api(run, &a);
        if (i % 10 == 0 && i % 50)
            store_run_add_api(run, &d);
        if (i % 20 == 0) {
            store_copy c = {s + 1100,          s + 1400, stream[0], 200000 + (uint32_t)i,
                            STORE_COPY_MEMCPY, 1,        4096};
            store_run_add_copy(run, &c);
            store_api m = {s + 1000, s + 1050,          0, 200000 + (uint32_t)i, THREAD_A,
                           cpy,      STORE_API_RUNTIME, 0};
            store_run_add_api(run, &m);
        }
    }
    store_idx cx_b = run->streams[stream[1]].context;
    store_idx s9 = store_run_stream(run, cx_b, 9);
    for (int i = 0; i < NSET_B; i++) {
        store_copy c = {run_base + 500000 + i * 3000LL,
                        run_base + 500000 + i * 3000LL + 500,
                        s9,
                        0,
                        STORE_COPY_MEMSET,
                        3,
                        1 << 20};
        store_run_add_copy(run, &c);
    }
    store_api b = {
        run_base + 450000, run_base + 451000, 1, 5, THREAD_B, sync, STORE_API_RUNTIME, 0};
    store_run_add_api(run, &b);
    for (int j = 0; j < 10; j++) { /* step 0 before outer, which starts with it */
        char name[32];
        snprintf(name, sizeof name, "step %d", j);
        store_range st = {
            run_base + j * 40000LL,     run_base + (j + 1) * 40000LL - 100, 0, THREAD_A, STORE_NONE,
            store_run_intern(run, name)};
        store_run_add_range(run, &st);
        snprintf(name, sizeof name, "inner %d", j);
        store_range in = {
            run_base + j * 40000LL + 1000, run_base + j * 40000LL + 20000, 0, THREAD_A, STORE_NONE,
            store_run_intern(run, name)};
        store_run_add_range(run, &in);
    }
    store_range outer = {run_base, run_base + 400000, 0,
                         THREAD_A, STORE_NONE,        store_run_intern(run, "outer")};
    store_run_add_range(run, &outer);
    store_range cross = {run_base + 395000, run_base + 405000, 0,
                         THREAD_A,          STORE_NONE,        store_run_intern(run, "cross")};
    store_run_add_range(run, &cross);
    store_range rb = {
        run_base + 460000,         run_base + 470000, 1, THREAD_B, store_run_intern(run, "dom"),
        store_run_intern(run, "b")};
    store_run_add_range(run, &rb);
}

static int setup_x(fixture *f, int nruns, int rich);
static int setup(fixture *f, int nruns)
{
    return setup_x(f, nruns, 0);
}

/* setup_x: setup(), the runs made with make_run_x(.., rich). */
static int setup_x(fixture *f, int nruns, int rich)
{
    memset(f, 0, sizeof *f);
    web_run runs[2];
    for (int i = 0; i < nruns; i++) {
        f->run[i] = make_run_x(i ? 0.5 : 1.0, i, rich);
        if (analysis_run(f->run[i], NULL, &f->an[i]) != ANALYSIS_OK)
            return -1;
        runs[i] = (web_run){i ? "mps-on" : "mps-off", f->run[i], f->an[i]};
    }
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.no_token = 1; /* these cases are the API's; the token's are test_web_token*'s */
    char err[256];
    if (web_start(&o, runs, (unsigned)nruns, &f->w, err, sizeof err) != WEB_OK) {
        fprintf(stderr, "web_start: %s\n", err);
        return -1;
    }
    f->port = web_port(f->w);
    return f->port ? 0 : -1;
}

static void teardown(fixture *f)
{
    web_stop(f->w);
    for (int i = 0; i < 2; i++) {
        analysis_free(f->an[i]);
        store_run_free(f->run[i]);
    }
}

/* ---------------------------------------------------------------- tiny HTTP client */

typedef struct response {
    int status;
    char *head, *body;
    size_t len;
} response;

/* http_raw_t: sends `request` verbatim to 127.0.0.1:port, reads until close (timeouts of `secs`
 * seconds on each read and write). */
static int http_raw_t(unsigned port, const char *request, response *r, int secs)
{
    memset(r, 0, sizeof *r);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {secs, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    size_t n = strlen(request);
    if (write(fd, request, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    close(fd);
    buf[len] = 0;
    char *sep = strstr(buf, "\r\n\r\n");
    if (!sep || sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1) {
        free(buf);
        return -1;
    }
    *sep = 0;
    r->head = buf;
    r->body = sep + 4;
    r->len = len - (size_t)(r->body - buf);
    return 0;
}

/* http_raw: http_raw_t with 10 s timeouts. */
static int http_raw(unsigned port, const char *request, response *r)
{
    return http_raw_t(port, request, r, 10);
}

/* The token http_get() sends (Authorization: Bearer): the one of the URL `tlview serve` printed
 * (serve_port()); empty: none (the servers the cases start in process require none). */
static char http_token[65];

static int http_get(unsigned port, const char *path, response *r)
{
    char req[4096];
    if (snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s%s%s\r\n", path,
                 http_token[0] ? "Authorization: Bearer " : "", http_token,
                 http_token[0] ? "\r\n" : "") >= (int)sizeof req) {
        fprintf(stderr, "http_get: a path of %zu bytes is too long\n", strlen(path));
        return -1;
    }
    return http_raw(port, req, r);
}

/* get_json: GET path, expect `status`, parse the body. NULL (and a message) on mismatch. */
static json_t *get_json(unsigned port, const char *path, int status)
{
    response r;
    if (http_get(port, path, &r)) {
        fprintf(stderr, "GET %s: no answer\n", path);
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(r.body, r.len, 0, &e);
    if (r.status != status || !j)
        fprintf(stderr, "GET %s: status %d (want %d), body %.300s\n", path, r.status, status,
                r.body);
    if (r.status != status) {
        json_decref(j);
        j = NULL;
    }
    free(r.head);
    return j;
}

static json_int_t jint(json_t *o, const char *path)
{
    return json_integer_value(json_object_get(o, path));
}

/* same_view: 1 when `got` (an object of an API answer) is `want` (a view_*_json() object,
 * consumed) with the keys of `added` (NULL-terminated) on top, compared as the server writes
 * them (6 significant digits); else prints both. */
static int same_view(json_t *got, json_t *want, const char *const *added)
{
    json_t *g = json_deep_copy(got);
    for (const char *const *k = added; *k; k++)
        json_object_del(g, *k);
    size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6);
    char *a = json_dumps(g, flags), *b = json_dumps(want, flags);
    int same = a && b && strcmp(a, b) == 0;
    if (!same)
        fprintf(stderr, "got  %s\nwant %s\n", a ? a : "(null)", b ? b : "(null)");
    free(a), free(b);
    json_decref(g), json_decref(want);
    return same;
}

/* get_stats: GET path (an /api/stats request), asking again while the server answers 503
 * "statistics pending" with Retry-After: 1 (the statistics are built after start), every 20 ms
 * for 20 s at most; then as get_json with 200. Any other 503 answer fails at once. */
static json_t *get_stats(unsigned port, const char *path)
{
    for (int i = 0; i < 1000; i++) {
        response r;
        if (http_get(port, path, &r)) {
            fprintf(stderr, "GET %s: no answer\n", path);
            return NULL;
        }
        int pending = r.status == 503;
        if (pending && (!strstr(r.head, "\r\nRetry-After: 1\r\n") ||
                        !strstr(r.body, "{\"error\":\"statistics pending\"}"))) {
            fprintf(stderr, "GET %s: 503 without Retry-After: 1 or the error: %s\n%s\n", path,
                    r.head, r.body);
            free(r.head);
            return NULL;
        }
        free(r.head);
        if (!pending)
            return get_json(port, path, 200);
        usleep(20000);
    }
    fprintf(stderr, "GET %s: still pending after 20 s\n", path);
    return NULL;
}

/* ---------------------------------------------------------------- cases */

/* What the page is served as (web/embed_assets.cmake): the scripts index.html lists, one tag each,
 * as one app.js (each part after a line naming its file) into *pApp, and index.html loading it
 * instead into *pPage (both malloc'd). 0, or -1 when index.html lists fewer than two. */
static int page_bundle(const char *dir, char **pPage, char **pApp)
{
    char path[1300];
    size_t n;
    snprintf(path, sizeof path, "%s/index.html", dir);
    char *src = test_slurp(path, &n);
    web_buf page = {0}, app = {0};
    int nscripts = 0;
    const char *at = src;
    for (const char *tag; src && (tag = strstr(at, "<script src=\"")) != NULL;) {
        const char *name = tag + strlen("<script src=\""), *end = strstr(name, "\"></script>\n");
        if (!end)
            break;
        web_buf_raw(&page, at, (size_t)(tag - at));
        if (nscripts++ == 0)
            web_buf_str(&page, "<script src=\"app.js\"></script>\n");
        char file[1400];
        snprintf(file, sizeof file, "%s/%.*s", dir, (int)(end - name), name);
        size_t len;
        char *js = test_slurp(file, &len);
        if (!js)
            break;
        char line[400];
        int k = snprintf(line, sizeof line, "// %s %.*s\n",
                         "----------------------------------------------------------------",
                         (int)(end - name), name);
        web_buf_raw(&app, line, (size_t)k);
        web_buf_raw(&app, js, (size_t)len);
        if (len && js[len - 1] != '\n')
            web_buf_ch(&app, '\n');
        free(js);
        at = end + strlen("\"></script>\n");
    }
    if (src)
        web_buf_raw(&page, at, strlen(at));
    web_buf_ch(&page, 0);
    web_buf_ch(&app, 0);
    free(src);
    *pPage = page.s;
    *pApp = app.s;
    return nscripts >= 2 && page.s && app.s && !page.failed && !app.failed ? 0 : -1;
}

/* test_web_assets: every file of web/assets/ is served byte for byte with its type, index.html
 * with its scripts loaded as one app.js of their text in its order (page_bundle), and the page
 * loads each of its scripts (a file added to the folder but not to web/CMakeLists.txt, or not to
 * index.html, fails here). */
int test_web_assets(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/web/assets", TLVIEW_SOURCE_DIR);
    DIR *dp = opendir(dir);
    TEST_ASSERT(dp);
    response page, job_page, app; /* the timeline's page, the job overview's (tlview serve --job),
                                     the timeline page's scripts as one */
    char *served_page, *served_app, path0[1300];
    size_t nsource;
    TEST_EQ_INT(page_bundle(dir, &served_page, &served_app), 0);
    snprintf(path0, sizeof path0, "%s/index.html", dir);
    char *source_page = test_slurp(path0, &nsource);
    TEST_ASSERT(source_page);
    TEST_ASSERT(http_get(f.port, "/", &page) == 0);
    TEST_EQ_INT(page.status, 200);
    TEST_EQ_STR(page.body, served_page);
    TEST_ASSERT(strstr(page.body, "<script src=\"app.js\"></script>") &&
                !strstr(page.body, "<script src=\"main.js\">"));
    TEST_ASSERT(http_get(f.port, "/app.js", &app) == 0);
    TEST_EQ_INT(app.status, 200);
    TEST_ASSERT(strstr(app.head, "text/javascript") != NULL);
    TEST_EQ_INT(app.len, strlen(served_app));
    TEST_ASSERT(memcmp(app.body, served_app, app.len) == 0);
    free(app.head);
    TEST_ASSERT(http_get(f.port, "/job.html", &job_page) == 0);
    TEST_EQ_INT(job_page.status, 200);
    int nfiles = 0, nscripts = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        const char *name = de->d_name, *dot = strrchr(name, '.');
        if (name[0] == '.' || !dot)
            continue;
        const char *mime = strcmp(dot, ".html") == 0  ? "text/html"
                           : strcmp(dot, ".js") == 0  ? "text/javascript"
                           : strcmp(dot, ".css") == 0 ? "text/css"
                                                      : "";
        char path[1300], url[300];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        size_t size;
        char *want = test_slurp(path, &size);
        TEST_ASSERT(want);
        snprintf(url, sizeof url, "/%s", name);
        response r;
        TEST_ASSERT(http_get(f.port, url, &r) == 0);
        if (r.status != 200)
            fprintf(stderr, "%s: status %d\n", url, r.status);
        TEST_EQ_INT(r.status, 200);
        if (strcmp(name, "index.html") == 0) { /* served loading app.js */
            free(want);
            want = strdup(served_page);
            size = strlen(want);
        }
        TEST_EQ_INT(r.len, size);
        TEST_ASSERT(memcmp(r.body, want, size) == 0);
        if (!strstr(r.head, mime))
            fprintf(stderr, "%s: no '%s' in:\n%s\n", url, mime, r.head);
        TEST_ASSERT(mime[0] && strstr(r.head, mime) != NULL);
        TEST_ASSERT(strstr(r.head, "Content-Security-Policy: default-src 'self'") != NULL);
        if (strcmp(dot, ".js") == 0) {
            char tag[300];
            snprintf(tag, sizeof tag, "<script src=\"%s\"></script>", name);
            const char *in = strcmp(name, "job.js") == 0 ? job_page.body : source_page;
            if (!strstr(in, tag))
                fprintf(stderr, "%s does not load %s\n",
                        in == source_page ? "index.html" : "job.html", name);
            TEST_ASSERT(strstr(in, tag) != NULL);
            nscripts++;
        }
        nfiles++;
        free(r.head);
        free(want);
    }
    closedir(dp);
    free(page.head);
    free(job_page.head);
    free(served_page);
    free(served_app);
    free(source_page);
    /* index.html, job.html, style.css and the scripts */
    TEST_ASSERT(nscripts >= 2);
    TEST_EQ_INT(nfiles, nscripts + 3);
    teardown(&f);
    return 0;
}

int test_web_runs(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    json_t *j = get_json(f.port, "/api/runs", 200);
    TEST_ASSERT(j);
    json_t *runs = json_object_get(j, "runs");
    TEST_EQ_INT(json_array_size(runs), 1);
    json_t *r0 = json_array_get(runs, 0);
    TEST_EQ_STR(json_string_value(json_object_get(r0, "label")), "mps-off");
    TEST_EQ_INT(jint(r0, "origin_ns"), BASE);
    /* the summary, devices and processes are the view's objects, each sent once: the summary's
     * figures are not copied beside it (they were until 2026-12-02) */
    json_t *sum = json_object_get(r0, "summary");
    TEST_EQ_INT(jint(sum, "kernels"), NA + NB);
    TEST_EQ_INT(jint(sum, "span_ns"), 649000);
    const char *none[] = {NULL};
    TEST_ASSERT(same_view(sum, view_summary_json(f.an[0]), none));
    const char *copied[] = {"kernels", "span_ns", "stretch", "predicted_gain", "gain_basis"};
    for (size_t i = 0; i < sizeof copied / sizeof *copied; i++)
        if (json_object_get(r0, copied[i])) {
            fprintf(stderr, "runs[0] still carries '%s' beside its summary\n", copied[i]);
            TEST_ASSERT(0);
        }
    const char *lane_added[] = {"lane", "par_max", NULL},
               *proc_added[] = {"id", "exe", "argv", NULL};
    TEST_EQ_INT(json_array_size(json_object_get(r0, "lanes")), 1);
    TEST_EQ_INT(jint(json_array_get(json_object_get(r0, "lanes"), 0), "lane"), 0);
    TEST_ASSERT(same_view(json_array_get(json_object_get(r0, "lanes"), 0),
                          view_device_json(f.an[0], 0), lane_added));
    /* par_max: the most solo work per ns of a window (the concurrency track's scale) */
    double most = 0;
    const analysis_device *d0 = analysis_get_device(f.an[0], 0);
    for (uint64_t i = 0; i < d0->nwindows; i++) {
        const analysis_window *w = &analysis_windows(f.an[0])[d0->first_window + i];
        double alone = (double)(w->busy_ns - w->overlap_ns), work = (double)w->busy_ns;
        if (w->overlap_ns > 0)
            work = isnan(w->parallelism) ? alone : w->parallelism * (double)w->overlap_ns + alone;
        if (w->t1 > w->t0 && work / (double)(w->t1 - w->t0) > most)
            most = work / (double)(w->t1 - w->t0);
    }
    TEST_NEAR(json_number_value(
                  json_object_get(json_array_get(json_object_get(r0, "lanes"), 0), "par_max")),
              ceil(most * 100 - 1e-9) / 100, 1e-9);
    TEST_ASSERT(most > 0.5);
    json_t *procs = json_object_get(r0, "processes");
    TEST_EQ_INT(json_array_size(procs), 2);
    for (uint32_t i = 0; i < 2; i++) {
        TEST_EQ_INT(jint(json_array_get(procs, i), "id"), i);
        TEST_ASSERT(same_view(json_array_get(procs, i), view_process_json(f.an[0], i), proc_added));
    }
    TEST_EQ_INT(jint(json_array_get(procs, 0), "kernels"), NA);
    TEST_EQ_INT(jint(json_array_get(procs, 1), "pid"), 200);
    /* the launcher's rank (store_process_rank): B's, and null for A, which has none */
    TEST_EQ_INT(jint(json_array_get(procs, 1), "rank"), 1);
    TEST_EQ_INT(jint(json_array_get(procs, 1), "local_rank"), 1);
    TEST_EQ_INT(jint(json_array_get(procs, 1), "world_size"), 2);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(procs, 1), "launcher")),
                "openmpi");
    const char *rank_keys[] = {"rank", "local_rank", "world_size", "launcher"};
    for (size_t i = 0; i < sizeof rank_keys / sizeof *rank_keys; i++) {
        json_t *v = json_object_get(json_array_get(procs, 0), rank_keys[i]);
        TEST_ASSERT(v && json_is_null(v));
    }
    json_t *rows = json_object_get(r0, "rows");
    TEST_EQ_INT(json_array_size(rows), 2);
    TEST_EQ_INT(jint(json_array_get(rows, 0), "kernels"), NA);
    TEST_EQ_INT(jint(json_array_get(rows, 1), "kernels"), NB);
    TEST_EQ_INT(jint(json_array_get(rows, 1), "stream"), 7);
    json_t *names = json_object_get(r0, "names");
    TEST_EQ_STR(json_string_value(json_array_get(names, 0)), "kA(int)");
    TEST_EQ_STR(json_string_value(json_array_get(names, 1)), "kB(float*)");
    json_t *lanes = json_object_get(r0, "lanes");
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(lanes, 0), "name")),
                "NVIDIA H200");
    TEST_EQ_INT(json_array_size(json_object_get(j, "verdicts")), ANALYSIS_NVERDICTS);
    TEST_EQ_INT(json_array_size(json_object_get(j, "verdict_meanings")), ANALYSIS_NVERDICTS);
    TEST_EQ_STR(json_string_value(json_object_get(json_object_get(j, "rules"), "no-mps")),
                "contexts that cannot share the GPU (no MPS) were in flight together: the GPU "
                "time-sliced them");
    TEST_EQ_STR(json_string_value(json_array_get(json_object_get(r0, "headline"), 0)),
                "GPU 0 (NVIDIA H200): 2 processes (2 contexts, no MPS) overlapped 48% of busy "
                "time; TIME-SLICED (no MPS): stretch 2.00x; MPS would gain 0.896-1.18x at the "
                "hosts' pace (host-paced: the GPU idled 35% of the measured interval with no "
                "kernel to run, so the processes' CPUs set the pace, which a GPU trace cannot "
                "time: `tlview advise` measures the gain instead); the processes ran kernels "
                "together for 32% of it (--measure together measures that time)");
    /* the page's "GPU idle, measured" figure: the view's summary, as the report has it */
    TEST_ASSERT(json_is_true(json_object_get(json_object_get(r0, "summary"), "host_paced")));
    TEST_ASSERT(json_is_null(json_object_get(j, "compare")));
    json_decref(j);
    teardown(&f);
    return 0;
}

/* pixel_edge: where pixel j of `w` over [t0, t1) starts (web/API.md: t0 + floor((t1 - t0) * j / w)
 * in integer ns) */
static int64_t pixel_edge(int64_t t0, int64_t t1, uint32_t w, uint32_t j)
{
    return t0 + (int64_t)((unsigned __int128)(uint64_t)(t1 - t0) * j / w);
}

/* pixel_end: where pixel j is measured to: its next edge, or for a pixel of no width (more pixels
 * than ns) one ns after its start (web/API.md: it shows the instant it starts at, that is what
 * [start, start + 1) holds) */
static int64_t pixel_end(int64_t t0, int64_t t1, uint32_t w, uint32_t j)
{
    int64_t a = pixel_edge(t0, t1, w, j), b = pixel_edge(t0, t1, w, j + 1);
    return b > a ? b : a + 1;
}

/* brute-force expectations over row `p` (0: A, 1: B) of the synthetic run */
static void expect_pixels(const store_run *run, int p, int64_t t0, int64_t t1, int w,
                          int64_t *count, int64_t *busy_pm)
{
    for (int j = 0; j < w; j++) {
        int64_t a = pixel_edge(t0, t1, w, j), b = pixel_end(t0, t1, w, j);
        int64_t n = 0, busy = 0;
        for (uint64_t i = 0; i < run->nkernels; i++) {
            const store_kernel *k = &run->kernels[i];
            if ((int)store_kernel_process(run, k) != p)
                continue;
            if (k->start < b && k->end > a)
                n++;
            int64_t s = k->start > a ? k->start : a, e = k->end < b ? k->end : b;
            busy += e > s ? e - s : 0;
        }
        count[j] = n;
        int64_t pm = b > a ? (busy * 1000 + (b - a) - 1) / (b - a) : 0;
        busy_pm[j] = pm > 1000 ? 1000 : pm;
    }
}

/* lane_verdicts_brute: checks each of the w pixels' lane verdict and overlap share (lane of an
 * /api/timeline answer over [t0, t1), absolute ns) against the windows of `an` by brute force;
 * returns the pixels holding overlap, -1 on a mismatch. */
static int lane_verdicts_brute(json_t *lane, const analysis *an, int64_t t0, int64_t t1, int w)
{
    const analysis_window *win = analysis_windows(an);
    uint64_t nw = analysis_nwindows(an);
    json_t *lv = json_object_get(lane, "verdict"), *lo = json_object_get(lane, "overlap");
    if ((int)json_array_size(lv) != w || (int)json_array_size(lo) != w)
        return -1;
    int noverlap = 0;
    for (int px = 0; px < w; px++) {
        int64_t a = pixel_edge(t0, t1, (uint32_t)w, (uint32_t)px);
        int64_t b = pixel_end(t0, t1, (uint32_t)w, (uint32_t)px);
        int64_t tv[ANALYSIS_NVERDICTS] = {0}, turns = 0, ov = 0, best_ns = 0;
        for (uint64_t i = 0; i < nw; i++) {
            int64_t s = win[i].t0 > a ? win[i].t0 : a, e = win[i].t1 < b ? win[i].t1 : b;
            if (win[i].rule == ANALYSIS_RULE_TOOK_TURNS) /* no overlap window: apart */
                turns += e > s ? e - s : 0;
            else
                tv[win[i].verdict] += e > s ? e - s : 0;
        }
        int best = -1;
        for (int v = ANALYSIS_CONCURRENT; v < ANALYSIS_NVERDICTS; v++) {
            ov += tv[v];
            if (tv[v] > best_ns)
                best_ns = tv[v], best = v;
        }
        if (best < 0)
            best = turns > 0               ? ANALYSIS_TIME_SLICED
                   : tv[ANALYSIS_SOLO] > 0 ? ANALYSIS_SOLO
                   : tv[ANALYSIS_IDLE] > 0 ? ANALYSIS_IDLE
                                           : -1;
        noverlap += ov > 0;
        int64_t gv = json_integer_value(json_array_get(lv, (size_t)px));
        int64_t go = json_integer_value(json_array_get(lo, (size_t)px));
        if (gv != best || go != (ov * 1000 + (b - a) / 2) / (b - a)) {
            fprintf(stderr, "pixel %d of %d: verdict %lld overlap %lld, want %d %lld\n", px, w,
                    (long long)gv, (long long)go, best,
                    (long long)((ov * 1000 + (b - a) / 2) / (b - a)));
            return -1;
        }
    }
    return noverlap;
}

static json_t *timeline_json(const web_runix *r, int64_t t0, int64_t t1, uint32_t width,
                             uint32_t kmax);

/* test_web_turns: two processes without MPS that take turns on one GPU without overlapping (a
 * 100 us idle gap at each handover, 12 handovers; then 5 ms idle; then 4 more): the analysis'
 * took-turns window is no overlap window: /api/timeline lists it in `turns` with its switches
 * (each where the next process's kernel started, its gap before) and not in `windows`, its
 * pixels time-sliced with an overlap share of 0; /api/window lists the same switches as the
 * analysis counts; the 5 ms gap (no switch: longer than ANALYSIS_SWITCH_GAP_NS) is not one. */
int test_web_turns(void)
{
    store_run *run = store_run_new();
    store_idx stream[2], launch[2];
    for (int p = 0; p < 2; p++) {
        store_process_info pi = {.pid = 300 + p,
                                 .ppid = 1,
                                 .host = "h",
                                 .exe = "/bin/x",
                                 .argv = "x",
                                 .source = "libcollect"};
        store_idx pr = store_run_add_process(run, &pi, p ? "b.db" : "a.db");
        store_device_info di = {.device_id = 0,
                                .uuid = "00112233445566778899aabbccddeeff",
                                .name = "NVIDIA H200",
                                .sm_count = 132,
                                .cc_major = 9};
        store_idx cx = store_run_context(run, pr, 1, store_run_add_device(run, pr, &di), 1);
        stream[p] = store_run_stream(run, cx, 7);
        store_launch l = {.name = store_run_intern(run, p ? "_Z2kBv" : "_Z2kAv"),
                          .grid = {64, 1, 1},
                          .block = {128, 1, 1}};
        launch[p] = store_run_launch(run, &l);
    }
    int64_t t = BASE, want_t[32];
    int nwant = 0;
    for (int i = 0; i < 18; i++) {
        if (i == 13)
            t += 5000000; /* idle, no switch */
        store_kernel k = {t, t + 20000, stream[i % 2], launch[i % 2], (uint32_t)i + 1, 0};
        store_run_add_kernel(run, &k);
        if (i > 0 && i != 13)
            want_t[nwant++] = t - BASE;
        t += 120000; /* 20 us of kernel, then 100 us idle */
    }
    store_run_finish(run);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"turns", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &wr, err, sizeof err), WEB_OK);
    TEST_EQ_INT((int)r.lanes[0].nsw, nwant);
    TEST_EQ_INT((int)analysis_get_device(an, 0)->switches, nwant);
    json_t *o = timeline_json(&r, -1000, t - BASE, 100, 0);
    TEST_ASSERT(o);
    json_t *lane = json_array_get(json_object_get(o, "lanes"), 0);
    TEST_EQ_INT(jint(lane, "nwindows"), 0);
    json_t *turns = json_object_get(lane, "turns"), *sw = json_object_get(lane, "switches");
    TEST_EQ_INT(jint(lane, "nturns"), (json_int_t)json_array_size(turns));
    TEST_ASSERT(json_array_size(turns) >= 1);
    json_int_t in_turns = 0;
    for (size_t i = 0; i < json_array_size(turns); i++) {
        json_t *w = json_array_get(turns, i);
        const analysis_window *aw = &analysis_windows(an)[json_integer_value(json_array_get(w, 0))];
        TEST_EQ_INT(aw->rule, ANALYSIS_RULE_TOOK_TURNS);
        TEST_EQ_INT(json_integer_value(json_array_get(w, 3)), aw->switches);
        in_turns += aw->switches;
    }
    TEST_EQ_INT(jint(lane, "nswitches"), nwant);
    TEST_EQ_INT((int)json_array_size(sw), nwant);
    for (int i = 0; i < nwant; i++) {
        json_t *x = json_array_get(sw, (size_t)i);
        TEST_EQ_INT(json_integer_value(json_array_get(x, 0)), want_t[i]);
        TEST_EQ_INT(json_integer_value(json_array_get(x, 1)), 100000);
    }
    json_t *ov = json_object_get(lane, "overlap"), *vd = json_object_get(lane, "verdict");
    int sliced = 0;
    for (size_t j = 0; j < json_array_size(ov); j++) {
        TEST_EQ_INT(json_integer_value(json_array_get(ov, j)), 0);
        sliced += json_integer_value(json_array_get(vd, j)) == ANALYSIS_TIME_SLICED;
    }
    TEST_ASSERT(sliced > 0);
    json_decref(o);
    web_runix_free(&r);
    /* /api/window of each took-turns window: the switches the analysis counted, where they were */
    fixture f = {0};
    f.run[0] = run;
    f.an[0] = an;
    web_options opt;
    web_options_default(&opt);
    opt.port = 0;
    opt.no_token = 1;
    TEST_EQ_INT(web_start(&opt, &wr, 1, &f.w, err, sizeof err), WEB_OK);
    int listed = 0;
    for (uint64_t i = 0; i < analysis_nwindows(an); i++) {
        const analysis_window *aw = &analysis_windows(an)[i];
        if (aw->rule != ANALYSIS_RULE_TOOK_TURNS)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/api/window?id=%llu", (unsigned long long)i);
        json_t *w = get_json(web_port(f.w), path, 200);
        TEST_ASSERT(w);
        TEST_EQ_INT(jint(w, "switches_found"), aw->switches);
        json_t *ts = json_object_get(w, "switch_times"), *gs = json_object_get(w, "switch_gaps");
        TEST_EQ_INT((json_int_t)json_array_size(ts), aw->switches);
        for (size_t k = 0; k < json_array_size(ts); k++, listed++) {
            TEST_EQ_INT(json_integer_value(json_array_get(ts, k)), want_t[listed]);
            TEST_EQ_INT(json_integer_value(json_array_get(gs, k)), 100000);
        }
        json_decref(w);
    }
    TEST_EQ_INT(listed, in_turns);
    TEST_ASSERT(listed >= 2);
    teardown(&f);
    return 0;
}

int test_web_timeline_bins(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    int64_t t0 = -5000, t1 = 650000;
    int w = 97;
    char url[256];
    snprintf(url, sizeof url, "/api/timeline?run=0&t0=%lld&t1=%lld&width=%d&kmax=10", (long long)t0,
             (long long)t1, w);
    json_t *j = get_json(f.port, url, 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "width"), w);
    json_t *rows = json_object_get(j, "rows");
    TEST_EQ_INT(json_array_size(rows), 2);
    int64_t count[97], busy[97];
    for (int p = 0; p < 2; p++) {
        json_t *row = json_array_get(rows, (size_t)p);
        TEST_EQ_STR(json_string_value(json_object_get(row, "mode")), "bins");
        TEST_EQ_INT(jint(row, "n"), p ? NB : NA);
        expect_pixels(f.run[0], p, BASE + t0, BASE + t1, w, count, busy);
        json_t *c = json_object_get(row, "count"), *b = json_object_get(row, "busy");
        TEST_EQ_INT(json_array_size(c), w);
        for (int i = 0; i < w; i++) {
            TEST_EQ_INT(json_integer_value(json_array_get(c, (size_t)i)), count[i]);
            TEST_EQ_INT(json_integer_value(json_array_get(b, (size_t)i)), busy[i]);
        }
    }
    json_t *lane = json_array_get(json_object_get(j, "lanes"), 0);
    TEST_EQ_INT(json_array_size(json_object_get(lane, "conc_max")), w);
    /* the first pixels hold A alone: at most one process in flight; the overlapped part two */
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "conc_max"), 5)), 1);
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "conc_max"), 80)), 2);
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "verdict"), 5)),
                ANALYSIS_SOLO);
    int v80 = (int)json_integer_value(json_array_get(json_object_get(lane, "verdict"), 80));
    TEST_ASSERT(v80 >= ANALYSIS_CONCURRENT);
    /* every pixel's lane verdict and overlap share against the windows, by brute force */
    int noverlap = lane_verdicts_brute(lane, f.an[0], BASE + t0, BASE + t1, w);
    TEST_ASSERT(noverlap > 10 && noverlap < w - 10);
    json_decref(j);
    teardown(&f);
    return 0;
}

static int load_demo(const char *sub, store_run **ppRun, analysis **ppAn);

/* timeline_json: web_timeline() of r over [t0, t1) (relative ns), every row, parsed; NULL (and a
 * message) on failure. */
static json_t *timeline_json(const web_runix *r, int64_t t0, int64_t t1, uint32_t width,
                             uint32_t kmax)
{
    web_buf b = {0};
    json_error_t e;
    json_t *j = web_timeline(r, 0, t0, t1, width, kmax, NULL, 0, &b, NULL) == WEB_OK
                    ? json_loadb(b.s, b.len, 0, &e)
                    : NULL;
    if (!j)
        fprintf(stderr, "web_timeline [%lld, %lld) over %u pixels failed\n", (long long)t0,
                (long long)t1, width);
    free(b.s);
    return j;
}

/* same_as_next: every per-pixel array of `o` (a lane, a binned row or one of its levels: the
 * arrays of `w` values) holds in each pixel of no width (next edge == its edge) the value of
 * the pixel after it, which covers the instant it shows. The pixels that differ, each printed. */
static int same_as_next(json_t *o, const char *what, int64_t t0, int64_t t1, uint32_t w)
{
    const char *key;
    json_t *v;
    int bad = 0;
    json_object_foreach(o, key, v)
    {
        if (!json_is_array(v) || json_array_size(v) != w || json_is_object(json_array_get(v, 0)))
            continue; /* not per pixel (a row's levels are checked one by one) */
        for (uint32_t j = 0; j + 1 < w; j++) {
            if (pixel_edge(t0, t1, w, j) != pixel_edge(t0, t1, w, j + 1) ||
                json_equal(json_array_get(v, j), json_array_get(v, j + 1)))
                continue;
            char *a = json_dumps(json_array_get(v, j), JSON_ENCODE_ANY);
            char *b = json_dumps(json_array_get(v, j + 1), JSON_ENCODE_ANY);
            fprintf(stderr, "[%lld, %lld) over %u: %s %s: pixel %u (of no width) %s, pixel %u %s\n",
                    (long long)t0, (long long)t1, w, what, key, j, a, j + 1, b);
            free(a), free(b);
            bad++;
        }
    }
    return bad;
}

/* Pixels narrower than 1 ns (more pixels than ns) show the instant they start at (web/API.md),
 * in every per-pixel field: the lane's verdict and overlap, each binned row's count, busy and
 * verdict, as the concurrency profile always did. Found 2026-12-08 by the second adversarial pass
 * (issue 28): on mps-off/n4, 100 ns over 200 pixels (one in two of no width) gave verdict -1 and
 * overlap 0 in every other pixel, 3 and 1000 in the rest, while busy was 1000 in all. */
int test_web_timeline_instants(void)
{
    /* the reproducer: four processes time-sliced from 6.8 ms to 1.92 s, so every pixel of
     * [1 s, 1 s + 100 ns) is inside one time-sliced window with its four kernels in flight */
    store_run *run;
    analysis *an;
    TEST_EQ_INT(load_demo("mps-off/n4", &run, &an), 0);
    web_run src = {"demo", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
    json_t *j = timeline_json(&r, 1000000000, 1000000100, 200, 0);
    TEST_ASSERT(j);
    json_t *lane = json_array_get(json_object_get(j, "lanes"), 0);
    TEST_EQ_INT(json_array_size(json_object_get(lane, "verdict")), 200);
    for (size_t px = 0; px < 200; px++) {
        TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "verdict"), px)),
                    ANALYSIS_TIME_SLICED);
        TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "overlap"), px)), 1000);
        TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(lane, "busy"), px)), 1000);
    }
    /* each process's kernel, and the cudaDeviceSynchronize each waits in: binned (kmax 0), in
     * flight in every pixel; its copies are before */
    json_t *rows = json_object_get(j, "rows");
    int binned = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i), *levels = json_object_get(row, "levels");
        if (!json_object_get(row, "count") && !levels)
            continue;
        json_t *bins = levels ? json_array_get(levels, 0) : row;
        binned++;
        for (size_t px = 0; px < 200; px++) {
            TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(bins, "count"), px)), 1);
            TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(bins, "busy"), px)),
                        1000);
            if (!levels)
                TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(row, "verdict"), px)),
                            ANALYSIS_TIME_SLICED);
        }
    }
    TEST_EQ_INT(binned, 12); /* 4 processes: kernels, API calls, NVTX ranges */
    json_decref(j);
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    /* the synthetic run about 1 ns per pixel, across window edges: A alone until 399 us, idle,
     * A and B side by side [400 us, 402 us), idle [402 us, 402.1 us), side by side again. Lane
     * and kernel rows against brute force; with copies, API calls and NVTX ranges (rich), every
     * per-pixel array of no width equal to its neighbour's */
    static const struct {
        int64_t t0, t1;
        uint32_t w;
    } zooms[] = {
        {401900, 402200, 600},  /* half a ns per pixel */
        {401950, 402150, 8192}, /* 1/41 ns: pixels of no width in runs of 40 */
        {401800, 402199, 400},  /* one pixel of no width */
        {401800, 402200, 400},  /* 1 ns each */
        {401800, 402201, 400},  /* one pixel of 2 ns */
        {401999, 402001, 7},    /* 2 ns over 7 pixels, the window's end between */
        {399999, 400000, 5},    /* 1 ns over 5 pixels: idle */
        {400000, 400001, 3},    /* 1 ns over 3 pixels: the window's first ns */
        {398990, 399010, 31},   /* A's last kernel ends at 399 us */
    };
    for (int rich = 0; rich < 2; rich++) {
        run = make_run_x(1.0, 0, rich);
        TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
        src = (web_run){"x", run, an};
        TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
        for (size_t z = 0; z < sizeof zooms / sizeof *zooms; z++) {
            int64_t t0 = zooms[z].t0, t1 = zooms[z].t1;
            uint32_t w = zooms[z].w;
            TEST_ASSERT((j = timeline_json(&r, t0, t1, w, 0)) != NULL);
            lane = json_array_get(json_object_get(j, "lanes"), 0);
            int bad = same_as_next(lane, "lane", t0, t1, w);
            if (!rich && lane_verdicts_brute(lane, an, BASE + t0, BASE + t1, (int)w) < 0)
                bad++;
            rows = json_object_get(j, "rows");
            for (size_t i = 0; i < json_array_size(rows); i++) {
                json_t *row = json_array_get(rows, i), *levels = json_object_get(row, "levels");
                char what[32];
                snprintf(what, sizeof what, "row %zu", i);
                bad += same_as_next(row, what, t0, t1, w);
                for (size_t l = 0; l < json_array_size(levels); l++)
                    bad += same_as_next(json_array_get(levels, l), what, t0, t1, w);
                if (rich)
                    continue;
                int64_t *count = malloc(sizeof *count * w), *busy = malloc(sizeof *busy * w);
                expect_pixels(run, (int)i, BASE + t0, BASE + t1, (int)w, count, busy);
                for (uint32_t px = 0; px < w; px++) {
                    int64_t c =
                        json_integer_value(json_array_get(json_object_get(row, "count"), px));
                    int64_t b =
                        json_integer_value(json_array_get(json_object_get(row, "busy"), px));
                    if (c != count[px] || b != busy[px]) {
                        fprintf(stderr,
                                "[%lld, %lld) over %u: row %zu pixel %u: count %lld busy %lld, "
                                "want %lld %lld\n",
                                (long long)t0, (long long)t1, w, i, px, (long long)c, (long long)b,
                                (long long)count[px], (long long)busy[px]);
                        bad++;
                    }
                }
                free(count), free(busy);
            }
            json_decref(j);
            TEST_EQ_INT(bad, 0);
        }
        web_runix_free(&r);
        analysis_free(an);
        store_run_free(run);
    }
    return 0;
}

int test_web_timeline_kernels(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    /* [1500, 10500): A's kernels 0..5 overlap it (kernel 0 ends at 1000: out) */
    json_t *j = get_json(f.port, "/api/timeline?run=0&t0=1500&t1=10500&width=800&rows=0", 200);
    TEST_ASSERT(j);
    json_t *rows = json_object_get(j, "rows");
    TEST_EQ_INT(json_array_size(rows), 1);
    json_t *row = json_array_get(rows, 0);
    TEST_EQ_INT(jint(row, "row"), 0);
    TEST_EQ_STR(json_string_value(json_object_get(row, "mode")), "kernels");
    json_t *s = json_object_get(row, "s"), *d = json_object_get(row, "d"),
           *id = json_object_get(row, "id");
    TEST_EQ_INT(json_array_size(s), 5); /* starts 2000, 4000, 6000, 8000, 10000 */
    for (int i = 0; i < 5; i++) {
        TEST_EQ_INT(json_integer_value(json_array_get(s, (size_t)i)), 2000 * (i + 1));
        TEST_EQ_INT(json_integer_value(json_array_get(d, (size_t)i)), 1000);
        json_int_t k = json_integer_value(json_array_get(id, (size_t)i));
        TEST_EQ_INT(f.run[0]->kernels[k].start, BASE + 2000 * (i + 1));
    }
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(row, "v"), 0)), ANALYSIS_SOLO);
    /* the overlapped part: window list with verdicts, kernels with stretch ~2 */
    json_decref(j);
    j = get_json(f.port, "/api/timeline?run=0&t0=400000&t1=420000&width=1000", 200);
    TEST_ASSERT(j);
    row = json_array_get(json_object_get(j, "rows"), 1);
    TEST_EQ_STR(json_string_value(json_object_get(row, "mode")), "kernels");
    TEST_EQ_INT(json_array_size(json_object_get(row, "s")), 10); /* 20000 / 2100 -> 10 */
    json_t *lane = json_array_get(json_object_get(j, "lanes"), 0);
    TEST_EQ_INT(jint(lane, "nwindows"), 1);
    json_t *win = json_array_get(json_object_get(lane, "windows"), 0);
    TEST_EQ_INT(json_integer_value(json_array_get(win, 1)), 400000);
    /* each listed kernel's verdict is its /api/kernel verdict and its window's */
    json_t *ids = json_object_get(row, "id"), *vs = json_object_get(row, "v");
    for (size_t i = 0; i < json_array_size(ids); i++) {
        char url[128];
        snprintf(url, sizeof url, "/api/kernel?run=0&id=%lld",
                 (long long)json_integer_value(json_array_get(ids, i)));
        json_t *k = get_json(f.port, url, 200);
        TEST_ASSERT(k);
        int v = (int)json_integer_value(json_array_get(vs, i));
        TEST_ASSERT(v >= ANALYSIS_CONCURRENT);
        TEST_EQ_STR(json_string_value(json_object_get(k, "verdict")), analysis_verdict_name(v));
        TEST_EQ_STR(json_string_value(json_object_get(json_object_get(k, "window"), "verdict")),
                    analysis_verdict_name(v));
        json_decref(k);
    }
    json_decref(j);
    teardown(&f);
    return 0;
}

int test_web_kernel_window_find_stats(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const store_run *run = f.run[0];
    uint64_t kb = 0;
    while (store_kernel_process(run, &run->kernels[kb]) != 1)
        kb++;
    char url[256];
    snprintf(url, sizeof url, "/api/kernel?run=0&id=%llu", (unsigned long long)kb);
    json_t *j = get_json(f.port, url, 200);
    TEST_ASSERT(j);
    TEST_EQ_STR(json_string_value(json_object_get(j, "name")), "kB(float*)");
    TEST_EQ_STR(json_string_value(json_object_get(j, "mangled")), "_Z2kBPf");
    TEST_EQ_INT(jint(j, "pid"), 200);
    TEST_EQ_INT(jint(j, "dur"), 2000);
    TEST_EQ_INT(jint(j, "start"), 400000);
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(j, "grid"), 0)), 64);
    TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(j, "block"), 0)), 128);
    json_t *win = json_object_get(j, "window");
    TEST_ASSERT(win);
    TEST_EQ_INT(jint(win, "max_processes"), 2);
    const analysis_window *aw = &analysis_windows(f.an[0])[jint(win, "id")];
    TEST_EQ_STR(json_string_value(json_object_get(j, "verdict")),
                analysis_verdict_name(aw->verdict));
    json_decref(j);
    snprintf(url, sizeof url, "/api/window?run=0&id=%lld",
             (long long)(aw - analysis_windows(f.an[0])));
    j = get_json(f.port, url, 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "t0"), aw->t0 - BASE);
    TEST_EQ_INT(jint(j, "t1"), aw->t1 - BASE);
    json_decref(j);
    j = get_json(f.port, "/api/find?run=0&q=KB&limit=7", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), NB);
    TEST_ASSERT(json_is_true(json_object_get(j, "truncated")));
    TEST_EQ_INT(json_array_size(json_object_get(json_object_get(j, "kernels"), "id")), 7);
    TEST_EQ_INT(json_array_size(json_object_get(j, "names")), 1);
    json_decref(j);
    j = get_json(f.port, "/api/find?run=0&q=k&t0=0&t1=3000", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), 2); /* A's kernels at 0 and 2000 */
    /* kB matches too, but has no kernel before 400000: only kA is listed */
    TEST_EQ_INT(json_array_size(json_object_get(j, "names")), 1);
    json_t *n0 = json_array_get(json_object_get(j, "names"), 0);
    TEST_EQ_STR(json_string_value(json_object_get(n0, "name")), "kA(int)");
    TEST_EQ_INT(jint(n0, "count"), 2);
    json_decref(j);
    j = get_json(f.port, "/api/find?run=0&q=2kBP&t0=0&t1=3000", 200); /* the mangled name */
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), 0);
    TEST_EQ_INT(json_array_size(json_object_get(j, "names")), 0);
    json_decref(j);
    j = get_json(f.port, "/api/find?run=0&q=2kBP", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), NB);
    TEST_EQ_INT(jint(json_array_get(json_object_get(j, "names"), 0), "count"), NB);
    json_decref(j);
    j = get_stats(f.port, "/api/stats?run=0");
    TEST_ASSERT(j);
    /* only what /api/runs does not hold: no summary, processes or device figures twice (they
     * were sent in both until 2026-12-02) */
    const char *stats_keys[] = {"devices", "run", "stretch_histogram", "warnings"};
    TEST_EQ_INT(json_object_size(j), 4);
    for (size_t i = 0; i < 4; i++)
        TEST_ASSERT(json_object_get(j, stats_keys[i]));
    TEST_EQ_INT(json_array_size(json_object_get(j, "devices")), 1);
    json_t *dev = json_array_get(json_object_get(j, "devices"), 0);
    TEST_EQ_INT(json_object_size(dev), 4);
    TEST_EQ_INT(jint(dev, "lane"), 0);
    const char *none[] = {NULL};
    TEST_ASSERT(same_view(json_object_get(dev, "stretch_histogram"),
                          view_histogram_json(f.an[0], 0), none));
    json_t *lv = json_object_get(dev, "ns_at_processes");
    TEST_EQ_INT(json_array_size(lv), 3);
    TEST_EQ_INT(json_integer_value(json_array_get(lv, 2)), 100 * 2000); /* both in flight */
    json_t *lc = json_object_get(dev, "ns_at_contexts"); /* one context a process: the same */
    TEST_ASSERT(json_equal(lc, lv));
    json_t *h = json_object_get(j, "stretch_histogram");
    json_int_t total = jint(h, "no_reference");
    for (size_t i = 0; i < json_array_size(json_object_get(h, "counts")); i++)
        total += json_integer_value(json_array_get(json_object_get(h, "counts"), i));
    TEST_EQ_INT(total, NA + NB);
    /* the run's histogram (summed over the lanes) is the analysis' histogram of every kernel */
    uint64_t want[36], want_noref;
    TEST_EQ_INT(analysis_stretch_histogram(f.an[0], UINT32_MAX, 0.125, 64, want, 36, &want_noref),
                ANALYSIS_OK);
    TEST_EQ_INT(json_array_size(json_object_get(h, "counts")), 36);
    for (size_t i = 0; i < 36; i++)
        TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(h, "counts"), i)), want[i]);
    TEST_EQ_INT(jint(h, "no_reference"), want_noref);
    json_decref(j);
    teardown(&f);
    return 0;
}

/* GET /api/stats before the statistics are built answers 503 at once, with Retry-After: 1,
 * instead of holding a worker thread (and the timeline requests queued on it) until then. */
int test_web_stats_pending(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    json_t *j = get_stats(f.port, "/api/stats?run=0"); /* waits until they are built */
    TEST_ASSERT(j);
    json_decref(j);
    pthread_mutex_lock(&f.w->live->gen->stats->lock);
    f.w->live->gen->stats->done = 0; /* as just after start */
    pthread_mutex_unlock(&f.w->live->gen->stats->lock);
    /* more pending requests than worker threads (4), each answered at once */
    for (int i = 0; i < 8; i++) {
        response r;
        TEST_ASSERT(http_get(f.port, "/api/stats?run=0", &r) == 0);
        TEST_EQ_INT(r.status, 503);
        TEST_ASSERT(strstr(r.head, "\r\nRetry-After: 1\r\n") != NULL);
        TEST_ASSERT(strstr(r.head, "application/json") != NULL);
        TEST_EQ_STR(r.body, "{\"error\":\"statistics pending\"}");
        free(r.head);
    }
    j = get_json(f.port, "/api/timeline?run=0&t0=0&t1=600000&width=100", 200);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_json(f.port, "/api/stats?run=1", 400); /* parameters are checked first */
    TEST_ASSERT(j);
    json_decref(j);
    pthread_mutex_lock(&f.w->live->gen->stats->lock);
    f.w->live->gen->stats->done = 1;
    pthread_mutex_unlock(&f.w->live->gen->stats->lock);
    j = get_json(f.port, "/api/stats?run=0", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(json_array_size(json_object_get(j, "devices")), 1);
    json_decref(j);
    response r;
    TEST_ASSERT(http_get(f.port, "/api/stats?run=0", &r) == 0);
    TEST_ASSERT(strstr(r.head, "Retry-After") == NULL);
    free(r.head);
    teardown(&f);
    return 0;
}

int test_web_bad_params(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const char *bad[] = {
        "/api/timeline?run=0&t1=10&width=10",       /* t0 missing */
        "/api/timeline?run=0&t0=10&t1=10&width=10", /* empty range */
        "/api/timeline?run=0&t0=0&t1=10&width=0",
        "/api/timeline?run=0&t0=0&t1=10&width=99999",
        "/api/timeline?run=0&t0=0&t1=10&width=abc",
        "/api/timeline?run=0&t0=0&t1=10&width=-5",
        "/api/timeline?run=3&t0=0&t1=10&width=10",
        "/api/timeline?run=0&t0=nan&t1=10&width=10",
        "/api/timeline?run=0&t0=0&t1=1e30&width=10",
        "/api/timeline?run=0&t0=0&t1=10&width=10&rows=0,9",
        "/api/timeline?run=0&t0=0&t1=10&width=10&rows=x",
        "/api/timeline?run=0&t0=0&t1=10&width=10&zoom=2",
        "/api/timeline?run=0&t0=0&t0=1&t1=10&width=10",
        "/api/kernel?run=0&id=420",
        "/api/kernel?run=0",
        "/api/find?run=0",
        "/api/find?run=0&q=k&limit=0",
        "/api/stats?run=1",
        "/api/runs?x=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = get_json(f.port, bad[i], 400);
        if (!j)
            fprintf(stderr, "case %zu\n", i);
        TEST_ASSERT(j);
        TEST_ASSERT(json_is_string(json_object_get(j, "error")));
        json_decref(j);
    }
    teardown(&f);
    return 0;
}

int test_web_unknown_and_method(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const char *unknown[] = {"/api/nope",  "/api/",      "/nope.html",        "/etc/passwd",
                             "/web/web.h", "/index.htm", "/assets/index.html"};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        json_t *j = get_json(f.port, unknown[i], 404);
        TEST_ASSERT(j);
        TEST_ASSERT(json_is_string(json_object_get(j, "error")));
        json_decref(j);
    }
    response r;
    TEST_ASSERT(http_raw(f.port, "POST /api/runs HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}", &r) ==
                0);
    TEST_EQ_INT(r.status, 405);
    free(r.head);
    TEST_ASSERT(http_raw(f.port, "HEAD / HTTP/1.0\r\n\r\n", &r) == 0);
    TEST_EQ_INT(r.status, 200);
    TEST_EQ_INT(r.len, 0);
    free(r.head);
    teardown(&f);
    return 0;
}

int test_web_traversal(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const char *paths[] = {
        "/../etc/passwd",
        "/..",
        "/%2e%2e/etc/passwd",
        "/%2E%2E%2Fetc%2Fpasswd",
        "/%252e%252e/etc/passwd",
        "/assets/../index.html",
        "/..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/..\\..\\etc\\passwd",
        "/%5c..%5cetc",
        "http://127.0.0.1/etc/passwd",
        "/api/../index.html",
        "/index.html%00.js",
    };
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char req[512];
        snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", paths[i]);
        response r;
        TEST_ASSERT(http_raw(f.port, req, &r) == 0);
        if (r.status != 400 && r.status != 404)
            fprintf(stderr, "%s -> %d\n", paths[i], r.status);
        TEST_ASSERT(r.status == 400 || r.status == 404);
        TEST_ASSERT(strstr(r.body, "root:") == NULL && strstr(r.body, "<html") == NULL);
        free(r.head);
    }
    /* the plain traversal forms are refused explicitly, not merely not found */
    response r;
    TEST_ASSERT(http_raw(f.port, "GET /%2e%2e/etc/passwd HTTP/1.0\r\n\r\n", &r) == 0);
    TEST_EQ_INT(r.status, 400);
    TEST_ASSERT(strstr(r.body, "refused path") != NULL);
    free(r.head);
    teardown(&f);
    return 0;
}

int test_web_huge_ranges(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const char *urls[] = {
        "/api/timeline?run=0&t0=-4000000000000000000&t1=4000000000000000000&width=8192&kmax=0",
        "/api/timeline?run=0&t0=-4000000000000000000&t1=4000000000000000000&width=8192&"
        "kmax=100000",
        "/api/timeline?run=0&t0=123456&t1=123457&width=8192",
        "/api/timeline?run=0&t0=3000000000000000000&t1=4000000000000000000&width=100",
        "/api/find?run=0&q=k&t0=-4000000000000000000&t1=4000000000000000000&limit=10000",
        /* one pixel of 8e18 ns: its length times 2 overflowed (UBSan, fuzz_http 2026-12-01) */
        "/api/timeline?run=0&t0=-4000000000000000000&t1=4000000000000000000&width=1",
    };
    for (size_t i = 0; i < sizeof urls / sizeof *urls; i++) {
        json_t *j = get_json(f.port, urls[i], 200);
        TEST_ASSERT(j);
        json_decref(j);
    }
    json_t *j = get_json(f.port, urls[0], 200);
    json_t *row = json_array_get(json_object_get(j, "rows"), 0);
    json_int_t sum = 0;
    json_t *c = json_object_get(row, "count");
    TEST_EQ_INT(json_array_size(c), 8192);
    for (size_t i = 0; i < json_array_size(c); i++)
        sum += json_integer_value(json_array_get(c, i));
    TEST_EQ_INT(sum, NA); /* every kernel lies in one pixel */
    json_decref(j);
    j = get_json(f.port, urls[1], 200);
    TEST_EQ_INT(
        json_array_size(json_object_get(json_array_get(json_object_get(j, "rows"), 0), "s")), NA);
    json_decref(j);
    teardown(&f);
    return 0;
}

typedef struct client_arg {
    unsigned port;
    const char *want;
    size_t want_len;
    int failures;
} client_arg;

static void *client(void *p)
{
    client_arg *a = p;
    for (int i = 0; i < 40; i++) {
        response r;
        if (http_get(a->port, "/api/timeline?run=0&t0=0&t1=600000&width=500", &r) ||
            r.status != 200 || r.len != a->want_len || memcmp(r.body, a->want, r.len) != 0)
            a->failures++;
        free(r.head);
    }
    return NULL;
}

int test_web_concurrent_clients(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    response ref;
    TEST_ASSERT(http_get(f.port, "/api/timeline?run=0&t0=0&t1=600000&width=500", &ref) == 0);
    TEST_EQ_INT(ref.status, 200);
    enum { NT = 16 };
    pthread_t th[NT];
    client_arg args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (client_arg){f.port, ref.body, ref.len, 0};
        TEST_ASSERT(pthread_create(&th[i], NULL, client, &args[i]) == 0);
    }
    int failures = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        failures += args[i].failures;
    }
    TEST_EQ_INT(failures, 0);
    free(ref.head);
    teardown(&f);
    return 0;
}

/* ---------------------------------------------------------------- one queue, kept-alive
 * connections */

static long ms_since(const struct timeval *t0);
static int setup_threads(fixture *f, unsigned threads);

/* connect_port: a connected socket to 127.0.0.1:port (5 s timeouts), or -1. */
static int connect_port(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* find_ci: the first place of needle in s, case ignored, or NULL. */
static const char *find_ci(const char *s, const char *needle)
{
    for (size_t n = strlen(needle); *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return s;
    return NULL;
}

/* read_answer: one answer from fd, its body Content-Length long; the connection stays open.
 * Fills r (free r->head); 0, or -1 when the connection closed or timed out first. */
static int read_answer(int fd, response *r)
{
    memset(r, 0, sizeof *r);
    size_t cap = 1 << 16, len = 0, want = 0;
    char *buf = malloc(cap), *sep = NULL;
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        if (!sep && (buf[len] = 0, sep = strstr(buf, "\r\n\r\n"))) {
            const char *cl = find_ci(buf, "\r\nContent-Length:");
            if (!cl || sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1)
                break;
            want = (size_t)(sep + 4 - buf) + strtoul(cl + 17, NULL, 10);
        }
        if (sep && len >= want) {
            buf[len] = 0;
            *sep = 0;
            r->head = buf;
            r->body = sep + 4;
            r->len = len - (size_t)(r->body - buf);
            return 0;
        }
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    free(buf);
    return -1;
}

/* Two requests on one HTTP/1.1 connection, both answered, the connection kept. Found 2026-12-01:
 * every answer closed its connection (libmicrohttpd 0.9.75 closes after an answer queued on the
 * first call of the handler), so wrk's 64 clients reconnected for each request. */
int test_web_keep_alive(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    int fd = connect_port(f.port);
    TEST_ASSERT(fd >= 0);
    const char *req[] = {"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                         "GET /api/timeline?run=0&t0=0&t1=600000&width=100 HTTP/1.1\r\n"
                         "Host: 127.0.0.1\r\n\r\n",
                         "HEAD /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"};
    for (int i = 0; i < 2; i++) {
        response r;
        TEST_EQ_INT(write(fd, req[i], strlen(req[i])), (ssize_t)strlen(req[i]));
        int rc = read_answer(fd, &r);
        fprintf(stderr, "request %d on one connection: %s, status %d\n", i,
                rc ? "no answer" : "answered", r.status);
        TEST_EQ_INT(rc, 0);
        TEST_EQ_INT(r.status, 200);
        TEST_ASSERT(find_ci(r.head, "Connection: close") == NULL);
        TEST_ASSERT(r.len > 0 && r.body[0] == '{');
        free(r.head);
    }
    /* HEAD: the headers alone (Content-Length says the GET's), the connection still kept */
    TEST_EQ_INT(write(fd, req[2], strlen(req[2])), (ssize_t)strlen(req[2]));
    char head[4096];
    ssize_t k = read(fd, head, sizeof head - 1);
    TEST_ASSERT(k > 0);
    head[k] = 0;
    TEST_ASSERT(strncmp(head, "HTTP/1.1 200", 12) == 0);
    TEST_ASSERT(find_ci(head, "Connection: close") == NULL);
    TEST_EQ_INT(write(fd, req[0], strlen(req[0])), (ssize_t)strlen(req[0]));
    response r;
    TEST_EQ_INT(read_answer(fd, &r), 0);
    TEST_EQ_INT(r.status, 200);
    free(r.head);
    close(fd);
    teardown(&f);
    return 0;
}

typedef struct gate_arg {
    web_gate *g;
    pthread_mutex_t *lock;
    int *n, *inside, *most, *left;
    int left_before; /* clients that had left when this one was admitted */
} gate_arg;

static void *gate_client(void *p)
{
    gate_arg *a = p;
    web_gate_enter(a->g);
    pthread_mutex_lock(a->lock);
    (*a->n)++;
    a->left_before = *a->left;
    if (++*a->inside > *a->most)
        *a->most = *a->inside;
    pthread_mutex_unlock(a->lock);
    usleep(2000);
    pthread_mutex_lock(a->lock);
    --*a->inside;
    ++*a->left;
    pthread_mutex_unlock(a->lock);
    web_gate_leave(a->g);
    return NULL;
}

typedef struct gate_holder {
    web_gate *g;
    pthread_mutex_t lock;
    pthread_cond_t go;
    int state; /* 1: holds its turn, 2: may leave */
} gate_holder;

/* gate_hold: takes a turn and keeps it until told (state 2). */
static void *gate_hold(void *p)
{
    gate_holder *h = p;
    web_gate_enter(h->g);
    pthread_mutex_lock(&h->lock);
    h->state = 1;
    pthread_cond_broadcast(&h->go);
    while (h->state != 2)
        pthread_cond_wait(&h->go, &h->lock);
    pthread_mutex_unlock(&h->lock);
    web_gate_leave(h->g);
    return NULL;
}

/* The gate admits requests in the order they took their tickets, at most `slots` at once, with
 * more waiting than it has condition variables (so that several share one): client i goes only
 * once all but SLOTS - 1 of the clients before it have left. */
int test_web_gate_order(void)
{
    enum { SLOTS = 2, N = WEB_GATE_CONDS + 40 };
    web_gate *g = web_gate_new(SLOTS);
    TEST_ASSERT(g);
    gate_holder h[SLOTS]; /* both turns held: every client waits */
    pthread_t ht[SLOTS];
    for (int i = 0; i < SLOTS; i++) {
        h[i] = (gate_holder){g, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
        TEST_ASSERT(pthread_create(&ht[i], NULL, gate_hold, &h[i]) == 0);
        pthread_mutex_lock(&h[i].lock);
        while (h[i].state != 1)
            pthread_cond_wait(&h[i].go, &h[i].lock);
        pthread_mutex_unlock(&h[i].lock);
    }
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int n = 0, inside = 0, most = 0, left = 0;
    pthread_t th[N];
    gate_arg args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (gate_arg){g, &lock, &n, &inside, &most, &left, 0};
        TEST_ASSERT(pthread_create(&th[i], NULL, gate_client, &args[i]) == 0);
        while (web_gate_tickets(g) < (uint64_t)(i + 3)) /* client i holds ticket i + 2 */
            usleep(100);
    }
    for (int i = 0; i < SLOTS; i++) {
        pthread_mutex_lock(&h[i].lock);
        h[i].state = 2;
        pthread_cond_broadcast(&h[i].go);
        pthread_mutex_unlock(&h[i].lock);
        pthread_join(ht[i], NULL);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    /* admitted in ticket order: client i only once i - 1 others had left (a LIFO or unordered
     * gate admits some before). The order the clients wrote themselves down in is not checked:
     * a client admitted but not yet run can be overtaken by later ones as others leave. */
    int early = 0;
    for (int i = 0; i < N; i++)
        early += args[i].left_before < i - (SLOTS - 1);
    fprintf(stderr, "gate: %d admitted, %d before their turn, at most %d at once (slots %d)\n", n,
            early, most, SLOTS);
    TEST_EQ_INT(early, 0);
    TEST_EQ_INT(n, N);
    TEST_ASSERT(most >= 1 && most <= SLOTS);
    web_gate_free(g);
    return 0;
}

/* A turn given back (web_gate_give_back(), as a request waiting for another's answer does) lets
 * the next request go, and the giver's web_gate_leave() then takes nothing more. */
int test_web_gate_give_back(void)
{
    web_gate *g = web_gate_new(1);
    TEST_ASSERT(g);
    gate_holder h = {g, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;
    web_gate_enter(g);
    TEST_ASSERT(pthread_create(&t, NULL, gate_hold, &h) == 0);
    while (web_gate_tickets(g) < 2)
        usleep(100);
    usleep(20000);
    pthread_mutex_lock(&h.lock);
    int before = h.state;
    pthread_mutex_unlock(&h.lock);
    web_gate_give_back();
    pthread_mutex_lock(&h.lock);
    while (h.state != 1)
        pthread_cond_wait(&h.go, &h.lock);
    h.state = 2;
    pthread_cond_broadcast(&h.go);
    pthread_mutex_unlock(&h.lock);
    pthread_join(t, NULL);
    web_gate_leave(g); /* given back already: nothing */
    fprintf(stderr, "second request before the turn was given back: %s; done %llu of %llu\n",
            before ? "admitted" : "waiting", (unsigned long long)g->done,
            (unsigned long long)g->next);
    TEST_EQ_INT(before, 0);
    TEST_EQ_INT(g->done, 2);
    web_gate_free(g);
    return 0;
}

typedef struct view_asker {
    unsigned port;
    pthread_barrier_t *start;
    int ok;
} view_asker;

static void *view_asker_get(void *p)
{
    view_asker *a = p;
    response r;
    pthread_barrier_wait(a->start);
    a->ok =
        http_get(a->port, "/api/timeline?run=0&t0=1000&t1=500000&width=3000&format=bin", &r) == 0 &&
        r.status == 200;
    free(r.head);
    return NULL;
}

/* Clients asking the same view at once cost one query: the others wait for its answer (their
 * turns given back meanwhile) and take it from the cache. */
int test_web_same_view_at_once(void)
{
    fixture f;
    TEST_ASSERT(setup_threads(&f, 2) == 0);
    for (int i = 0; i < 200; i++) { /* answers are cached once the grids are settled */
        response r;
        TEST_EQ_INT(http_get(f.port, "/api/stats?run=0", &r), 0);
        int st = r.status;
        free(r.head);
        if (st == 200)
            break;
        usleep(20000);
    }
    web_tl_cache *c = f.w->live->gen->runs[0].cache;
    TEST_ASSERT(c);
    uint64_t before = web_tl_cache_computed(c);
    enum { NT = 12 };
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NT);
    pthread_t th[NT];
    view_asker args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (view_asker){f.port, &start, 0};
        TEST_ASSERT(pthread_create(&th[i], NULL, view_asker_get, &args[i]) == 0);
    }
    int ok = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        ok += args[i].ok;
    }
    pthread_barrier_destroy(&start);
    uint64_t computed = web_tl_cache_computed(c) - before;
    fprintf(stderr, "%d clients at one view: %d answered, %llu computed\n", NT, ok,
            (unsigned long long)computed);
    TEST_EQ_INT(ok, NT);
    TEST_EQ_INT(computed, 1);
    teardown(&f);
    return 0;
}

/* setup_threads: the fixture's server (one run) with `threads` requests answered at once. */
static int setup_threads(fixture *f, unsigned threads)
{
    memset(f, 0, sizeof *f);
    f->run[0] = make_run(1.0, 0);
    if (analysis_run(f->run[0], NULL, &f->an[0]) != ANALYSIS_OK)
        return -1;
    web_run run = {"mps-off", f->run[0], f->an[0]};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.threads = threads;
    o.no_token = 1; /* as setup_x() */
    char err[256];
    if (web_start(&o, &run, 1, &f->w, err, sizeof err) != WEB_OK) {
        fprintf(stderr, "web_start: %s\n", err);
        return -1;
    }
    f->port = web_port(f->w);
    return f->port ? 0 : -1;
}

/* With one request answered at once, a client that never finishes its request, and one that
 * never reads its answers, hold no turn: another client is answered at once. */
int test_web_slow_client_holds_no_turn(void)
{
    fixture f;
    TEST_ASSERT(setup_threads(&f, 1) == 0);
    int half = connect_port(f.port), deaf = connect_port(f.port);
    TEST_ASSERT(half >= 0 && deaf >= 0);
    TEST_ASSERT(write(half, "GET /api/runs HTTP/1.1\r\nHost: 12", 33) == 33);
    const char *req = "GET /api/timeline?run=0&t0=0&t1=600000&width=2000 HTTP/1.1\r\n"
                      "Host: 127.0.0.1\r\n\r\n";
    int sent = 0;
    for (; sent < 200; sent++) /* answers pile up unread in the socket buffers */
        if (write(deaf, req, strlen(req)) != (ssize_t)strlen(req))
            break;
    struct timeval t0;
    gettimeofday(&t0, NULL);
    response r;
    TEST_EQ_INT(http_get(f.port, "/api/runs", &r), 0);
    long ms = ms_since(&t0);
    fprintf(stderr, "answered in %ld ms beside a half-sent request and %d unread answers\n", ms,
            sent);
    TEST_EQ_INT(r.status, 200);
    TEST_ASSERT(ms < 3000);
    free(r.head);
    close(half);
    close(deaf);
    teardown(&f);
    return 0;
}

typedef struct stop_client {
    unsigned port;
    int answered;
} stop_client;

static void *stop_client_run(void *p)
{
    stop_client *a = p;
    for (int i = 0; i < 200; i++) {
        int fd = connect_port(a->port);
        if (fd < 0)
            break;
        const char *req = "GET /api/timeline?run=0&t0=0&t1=600000&width=3000 HTTP/1.1\r\n"
                          "Host: 127.0.0.1\r\n\r\n";
        response r;
        for (int j = 0; j < 5 && write(fd, req, strlen(req)) == (ssize_t)strlen(req); j++) {
            if (read_answer(fd, &r))
                break;
            a->answered += r.status == 200;
            free(r.head);
        }
        close(fd);
    }
    return NULL;
}

/* web_stop() while requests wait for their turn (one at once, 8 clients): it returns, and every
 * request queued before is answered or its connection closed (the clients end). */
int test_web_stop_with_requests_waiting(void)
{
    fixture f;
    TEST_ASSERT(setup_threads(&f, 1) == 0);
    enum { NT = 8 };
    pthread_t th[NT];
    stop_client args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (stop_client){f.port, 0};
        TEST_ASSERT(pthread_create(&th[i], NULL, stop_client_run, &args[i]) == 0);
    }
    usleep(300000);
    struct timeval t0;
    gettimeofday(&t0, NULL);
    web_stop(f.w);
    f.w = NULL;
    long ms = ms_since(&t0);
    int answered = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        answered += args[i].answered;
    }
    fprintf(stderr, "web_stop took %ld ms; %d answers before\n", ms, answered);
    TEST_ASSERT(answered > 0);
    TEST_ASSERT(ms < 10000);
    teardown(&f);
    return 0;
}

int test_web_compare(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 2) == 0);
    json_t *j = get_json(f.port, "/api/runs", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(json_array_size(json_object_get(j, "runs")), 2);
    json_t *c = json_object_get(j, "compare");
    TEST_ASSERT(json_is_object(c));
    TEST_EQ_INT(jint(c, "span_ns"), 649000);
    TEST_EQ_INT(jint(c, "compare_span_ns"), 549000);
    json_decref(j);
    j = get_json(f.port, "/api/timeline?run=1&t0=0&t1=600000&width=300", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "run"), 1);
    json_decref(j);
    teardown(&f);
    return 0;
}

/* test_web_many_runs: the runs of an experiment, one above the other: 4 runs (a fifth of the
 * limit would do as well) each answered by its index, no comparison beside them, the experiment's
 * JSON at GET /api/experiment as it was given (and said by GET /api/runs), the exports named by
 * the page's letters past B; more than WEB_MAX_RUNS runs and an experiment that is not one JSON
 * object refused with a message; without one, GET /api/experiment is a 404. */
int test_web_many_runs(void)
{
    enum { N = 4 };
    store_run *run[N];
    analysis *an[N];
    web_run runs[WEB_MAX_RUNS + 1];
    static const char *const labels[N] = {"solo", "time-sliced n=2", "MPS n=2", "MPS 50% n=2"};
    for (int i = 0; i < N; i++) {
        run[i] = make_run(1.0 - 0.1 * i, i >= 2);
        TEST_ASSERT(run[i] && analysis_run(run[i], NULL, &an[i]) == ANALYSIS_OK);
        runs[i] = (web_run){labels[i], run[i], an[i]};
    }
    for (int i = N; i <= WEB_MAX_RUNS; i++)
        runs[i] = runs[i % N];
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.no_token = 1;
    o.experiment = "{\"tool\": \"tlview advise\", \"shown\": [{\"config\": \"solo\", \"run\": 0}],"
                   " \"result\": {\"configs\": [{\"median\": 33137.5}]}}";
    char err[256];
    web *w = NULL;
    TEST_EQ_INT(web_start(&o, runs, WEB_MAX_RUNS + 1, &w, err, sizeof err), WEB_EINVAL);
    TEST_EQ_STR(err, "web_start: 65 runs: one page shows 64 at most, one above the other");
    o.experiment = "[1, 2]";
    TEST_EQ_INT(web_start(&o, runs, N, &w, err, sizeof err), WEB_EINVAL);
    TEST_EQ_STR(err, "web_start: the experiment is not one JSON object (another value)");
    o.experiment = "{\"tool\": ";
    TEST_EQ_INT(web_start(&o, runs, N, &w, err, sizeof err), WEB_EINVAL);
    TEST_ASSERT(strstr(err, "web_start: the experiment is not one JSON object (") == err);
    o.experiment = "{\"tool\": \"tlview advise\", \"shown\": [{\"config\": \"solo\", \"run\": 0}],"
                   " \"result\": {\"configs\": [{\"median\": 33137.5}]}}";
    TEST_EQ_INT(web_start(&o, runs, WEB_MAX_RUNS, &w, err, sizeof err), WEB_OK);
    web_stop(w);
    TEST_EQ_INT(web_start(&o, runs, N, &w, err, sizeof err), WEB_OK);
    unsigned port = web_port(w);
    json_t *j = get_json(port, "/api/runs", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(json_array_size(json_object_get(j, "runs")), N);
    for (int i = 0; i < N; i++) {
        json_t *r = json_array_get(json_object_get(j, "runs"), (size_t)i);
        TEST_EQ_STR(json_string_value(json_object_get(r, "label")), labels[i]);
        TEST_EQ_INT(jint(json_object_get(r, "summary"), "kernels"), (json_int_t)run[i]->nkernels);
    }
    TEST_ASSERT(json_is_null(json_object_get(j, "compare")));
    TEST_ASSERT(json_is_true(json_object_get(j, "experiment")));
    json_decref(j);
    j = get_json(port, "/api/timeline?run=3&t0=0&t1=600000&width=300", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "run"), 3);
    json_decref(j);
    j = get_json(port, "/api/timeline?run=4&t0=0&t1=600000&width=300", 400);
    json_decref(j);
    j = get_json(port, "/api/experiment", 200);
    json_t *want = json_loads(o.experiment, 0, NULL);
    TEST_ASSERT(j && want && json_equal(j, want));
    json_decref(want);
    json_decref(j);
    response r;
    TEST_EQ_INT(http_get(port, "/api/export?run=3&format=json", &r), 0);
    TEST_EQ_INT(r.status, 200);
    TEST_ASSERT(strstr(r.head, "filename=\"tlview-report-D.json\"") != NULL);
    free(r.head);
    web_stop(w);
    o.experiment = NULL;
    TEST_EQ_INT(web_start(&o, runs, N, &w, err, sizeof err), WEB_OK);
    j = get_json(web_port(w), "/api/experiment", 404);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_json(web_port(w), "/api/runs", 200);
    TEST_ASSERT(json_is_false(json_object_get(j, "experiment")));
    json_decref(j);
    web_stop(w);
    for (int i = 0; i < N; i++) {
        analysis_free(an[i]);
        store_run_free(run[i]);
    }
    return 0;
}

int test_web_bind_errors(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    web_run r = {"x", f.run[0], f.an[0]};
    web_options o;
    web_options_default(&o);
    o.port = f.port; /* taken by the fixture's server */
    web *w2 = NULL;
    char err[256] = "";
    TEST_EQ_INT(web_start(&o, &r, 1, &w2, err, sizeof err), WEB_EADDRINUSE);
    TEST_ASSERT(w2 == NULL);
    TEST_ASSERT(strstr(err, "Address already in use") != NULL);
    o.port = 0;
    o.bind = "localhost:80";
    TEST_EQ_INT(web_start(&o, &r, 1, &w2, err, sizeof err), WEB_EINVAL);
    TEST_ASSERT(strstr(err, "not a numeric") != NULL);
    o.bind = "::1";
    if (web_start(&o, &r, 1, &w2, err, sizeof err) == WEB_OK) { /* IPv6 loopback may be absent */
        TEST_ASSERT(web_port(w2) > 0);
        web_stop(w2);
    }
    TEST_EQ_INT(web_start(&o, &r, 0, &w2, err, sizeof err), WEB_EINVAL);
    teardown(&f);
    return 0;
}

/* the interval grid against brute force, with overlapping and zero-length intervals */
/* ivl_sweep_brute: web_ivl_sweep() and web_ivl_at_many() of v (over the n intervals iv) against
 * brute force for random pixel ranges; 0 or 1 (with a message). */
static int ivl_sweep_brute(const web_ivl *v, int64_t (*iv)[2], int n, int64_t lo, int64_t hi)
{
    enum { WMAX = 64 };
    int64_t T[WMAX + 1], count[WMAX + 1], ns[WMAX], cover[WMAX + 1];
    web_ivl_pt pts[WMAX + 1];
    for (int q = 0; q < 300; q++) {
        uint32_t W = 1 + (uint32_t)(rand() % WMAX);
        int64_t r1 = (int64_t)rand() << 31 | rand(), r2 = (int64_t)rand() << 31 | rand();
        int64_t a = lo + r1 % (hi - lo), len = 1 + r2 % (q % 3 ? (hi - lo) / 8 : hi - lo);
        for (uint32_t j = 0; j <= W; j++)
            T[j] = a + (int64_t)((unsigned __int128)len * j / W);
        uint32_t from = web_ivl_scan_from(v, T[0]), to = web_ivl_at(v, T[W]).pos;
        web_ivl_sweep(v, T, W, from, to, count, ns, cover);
        for (uint32_t j = 0; j < W; j++) {
            int64_t c = 0, busy = 0;
            for (int i = 0; i < n; i++) {
                int64_t s = iv[i][0], e = iv[i][1];
                c += s < T[j + 1] && (e > T[j] || (s >= T[j] && e <= s));
                int64_t x = s > T[j] ? s : T[j], y = e < T[j + 1] ? e : T[j + 1];
                busy += y > x ? y - x : 0;
            }
            if (count[j] != c || ns[j] != busy) {
                fprintf(stderr,
                        "sweep pixel %u of %u [%lld, %lld): count %lld ns %lld, want %lld %lld\n",
                        j, W, (long long)T[j], (long long)T[j + 1], (long long)count[j],
                        (long long)ns[j], (long long)c, (long long)busy);
                return 1;
            }
        }
        for (int snap = 0; snap < 2; snap++) { /* the same as one lookup at a time */
            web_ivl_at_many(v, T, W + 1, snap, pts);
            for (uint32_t j = 0; j <= W; j++) {
                web_ivl_pt p = snap ? web_ivl_at_grid(v, T[j]) : web_ivl_at(v, T[j]);
                if (p.pos != pts[j].pos || p.running != pts[j].running || p.busy != pts[j].busy) {
                    fprintf(stderr, "at_many (snap %d) edge %u differs\n", snap, j);
                    return 1;
                }
            }
        }
    }
    return 0;
}

int test_web_ivl_bruteforce(void)
{
    enum { N = 3000 };
    int64_t(*iv)[2] = malloc(sizeof *iv * N);
    srand(7);
    int64_t t = 1000;
    for (int i = 0; i < N; i++) {
        t += rand() % 50;
        iv[i][0] = t;
        iv[i][1] = t + (rand() % 10 == 0 ? 0 : rand() % (i % 100 == 0 ? 5000 : 80));
        if (i % 700 == 5) /* an end 5 s after its bucket's start: its offset does not fit */
            iv[i][1] = t + 5000000000LL;
        /* an end before its start (2026-12-02: the lookups read a bucket whole) */
        if (i % 500 == 3)
            iv[i][1] = t - 1 - rand() % 40;
    }
    web_ivl v;
    TEST_EQ_INT(web_ivl_build(&v, iv, sizeof *iv, NULL, N), 0);
    TEST_ASSERT(v.off != NULL);
    TEST_EQ_INT(ivl_sweep_brute(&v, iv, N, 900, t + 100), 0);
    TEST_EQ_INT(ivl_sweep_brute(&v, iv, N, 900, t + 6000000000LL), 0);
    for (int q = 0; q < 2000; q++) {
        int64_t T = 900 + rand() % (int)(t - 800);
        web_ivl_pt p = web_ivl_at(&v, T);
        uint32_t pos = 0, running = 0;
        int64_t busy = 0;
        for (int i = 0; i < N; i++) {
            if (iv[i][0] < T) {
                pos++;
                running += iv[i][1] > T;
                int64_t y = iv[i][1] < T ? iv[i][1] : T;
                busy += y > iv[i][0] ? y - iv[i][0] : 0;
            }
        }
        TEST_EQ_INT(p.pos, pos);
        TEST_EQ_INT(p.running, running);
        TEST_EQ_INT(p.busy, busy);
        uint32_t from = web_ivl_scan_from(&v, T);
        for (uint32_t i = 0; i < from; i++)
            TEST_ASSERT(iv[i][1] <= T);
        /* the grid read equals the exact read at the nearest bucket start */
        int64_t b = (T - v.t0 + v.bw / 2) / v.bw;
        int64_t snapped = T <= v.t0 || b == 0 || b >= v.nb ? T : v.t0 + b * v.bw;
        web_ivl_pt g = web_ivl_at_grid(&v, T), e = web_ivl_at(&v, snapped);
        TEST_EQ_INT(g.pos, e.pos);
        TEST_EQ_INT(g.running, e.running);
        TEST_EQ_INT(g.busy, e.busy);
        TEST_ASSERT(llabs(snapped - T) <= v.bw / 2 + 1);
    }
    web_ivl_free(&v);
    /* buckets wider than 32 bits of ns: no offsets, everything read from the records */
    for (int i = 0; i < 40; i++) {
        iv[i][0] = 1000 + i * 200000000000LL + rand() % 1000;
        iv[i][1] = iv[i][0] + (i % 5 ? rand() % 3000000000LL : 900000000000LL);
    }
    TEST_EQ_INT(web_ivl_build(&v, iv, sizeof *iv, NULL, 40), 0);
    TEST_ASSERT(v.off == NULL);
    TEST_EQ_INT(ivl_sweep_brute(&v, iv, 40, 0, 40 * 200000000000LL), 0);
    web_ivl_free(&v);
    free(iv);
    return 0;
}

/* ---------------------------------------------------------------- rows of copies, API, NVTX */

static const char *const KIND_NAME[WEB_NROW_KINDS] = {"kernels", "copies", "api", "nvtx"};
static const char *const KIND_COUNT[WEB_NROW_KINDS] = {"kernels", "copies", "calls", "ranges"};

/* kind_of: the web_row_kind of a row's "kind" ("kernels", ...), -1 when unknown. */
static int kind_of(json_t *row)
{
    const char *k = json_string_value(json_object_get(row, "kind"));
    for (int i = 0; k && i < WEB_NROW_KINDS; i++)
        if (strcmp(k, KIND_NAME[i]) == 0)
            return i;
    return -1;
}

/* A record of any kind, read from the run by brute force. */
typedef struct rec {
    int64_t s, e;
    store_idx process;
    uint32_t context_id, stream_id; /* stream kinds */
    uint64_t thread;                /* thread kinds */
} rec;

static uint64_t nrecords(const store_run *run, int kind)
{
    uint64_t n[] = {run->nkernels, run->ncopies, run->napis, run->nranges};
    return n[kind];
}

static rec record(const store_run *run, int kind, uint64_t i)
{
    rec x = {0};
    store_idx stream = STORE_NONE;
    switch (kind) {
    case 0:
        x.s = run->kernels[i].start, x.e = run->kernels[i].end, stream = run->kernels[i].stream;
        break;
    case 1:
        x.s = run->copies[i].start, x.e = run->copies[i].end, stream = run->copies[i].stream;
        break;
    case 2:
        x.s = run->apis[i].start, x.e = run->apis[i].end, x.process = run->apis[i].process;
        x.thread = run->apis[i].thread_id;
        break;
    default:
        x.s = run->ranges[i].start, x.e = run->ranges[i].end, x.process = run->ranges[i].process;
        x.thread = run->ranges[i].thread_id;
    }
    if (stream != STORE_NONE) {
        const store_context *c = &run->contexts[run->streams[stream].context];
        x.process = c->process;
        x.context_id = c->context_id;
        x.stream_id = run->streams[stream].stream_id;
    }
    return x;
}

/* in_row: whether record x of kind `kind` belongs to /api/runs row object `row`. */
static int in_row(const rec *x, int kind, json_t *row)
{
    if (x->process != (store_idx)jint(row, "process"))
        return 0;
    if (kind >= 2)
        return x->thread == (uint64_t)jint(row, "thread");
    return x->stream_id == (uint32_t)jint(row, "stream") &&
           x->context_id == (uint32_t)jint(row, "context");
}

/* expected_depth: the level add_rich() means each API call and NVTX range to have. */
static int expected_depth(const store_run *run, int kind, uint64_t i)
{
    if (kind == 2)
        return run->apis[i].domain == STORE_API_DRIVER; /* inside its cudaLaunchKernel */
    const char *n = run->strings[run->ranges[i].name].text;
    return strncmp(n, "step", 4) == 0                           ? 1
           : strncmp(n, "inner", 5) == 0 || !strcmp(n, "cross") ? 2
                                                                : 0;
}

int test_web_rows_kinds(void)
{
    fixture f;
    TEST_ASSERT(setup_x(&f, 1, 1) == 0);
    const store_run *run = f.run[0];
    json_t *j = get_json(f.port, "/api/runs", 200);
    TEST_ASSERT(j);
    json_t *rows = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "rows");
    /* kernel rows keep their ids (0, 1); then copies (A stream 7, B stream 9), API calls and
     * NVTX ranges (A, B), each under lane 0 */
    TEST_EQ_INT(json_array_size(rows), 8);
    static const int want_kind[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    static const int want_depth[8] = {0, 0, 0, 0, 2, 1, 3, 1};
    for (size_t r = 0; r < 8; r++) {
        json_t *row = json_array_get(rows, r);
        int kind = kind_of(row);
        TEST_EQ_INT(jint(row, "id"), r);
        TEST_EQ_INT(kind, want_kind[r]);
        TEST_EQ_INT(jint(row, "lane"), 0);
        TEST_EQ_INT(jint(row, "process"), r % 2); /* A before B in each kind */
        uint64_t n = 0;
        int depth = 0;
        for (uint64_t i = 0; i < nrecords(run, kind); i++) {
            rec x = record(run, kind, i);
            if (!in_row(&x, kind, row))
                continue;
            n++;
            if (kind >= 2 && expected_depth(run, kind, i) + 1 > depth)
                depth = expected_depth(run, kind, i) + 1;
        }
        TEST_EQ_INT(jint(row, KIND_COUNT[kind]), n);
        if (kind >= 2) {
            TEST_EQ_INT(jint(row, "depth"), depth);
            TEST_EQ_INT(depth, want_depth[r]);
            TEST_ASSERT(!json_object_get(row, "stream"));
        } else {
            TEST_ASSERT(!json_object_get(row, "thread"));
        }
    }
    TEST_EQ_INT(jint(json_array_get(rows, 2), "copies"), NCOPY_A);
    TEST_EQ_INT(jint(json_array_get(rows, 3), "stream"), 9);
    TEST_EQ_INT(jint(json_array_get(rows, 3), "copies"), NSET_B);
    TEST_EQ_INT(jint(json_array_get(rows, 4), "thread"), THREAD_A);
    TEST_EQ_INT(jint(json_array_get(rows, 4), "calls"), 200 + 20 + 10);
    TEST_EQ_INT(jint(json_array_get(rows, 6), "ranges"), 22);

    /* every row listed item by item over the whole run: the records of the row by brute force,
     * level by level (z) and by start within a level, with their columns */
    json_t *tl =
        get_json(f.port, "/api/timeline?run=0&t0=-5000&t1=700000&width=300&kmax=100000", 200);
    TEST_ASSERT(tl);
    json_t *trows = json_object_get(tl, "rows");
    TEST_EQ_INT(json_array_size(trows), 8);
    for (size_t r = 2; r < 8; r++) {
        json_t *row = json_array_get(rows, r), *t = json_array_get(trows, r);
        int kind = kind_of(row);
        TEST_EQ_INT(jint(t, "row"), r);
        TEST_EQ_STR(json_string_value(json_object_get(t, "mode")), "items");
        json_t *id = json_object_get(t, "id"), *sv = json_object_get(t, "s"),
               *dv = json_object_get(t, "d"), *zv = json_object_get(t, "z");
        TEST_EQ_INT(json_array_size(id), jint(row, KIND_COUNT[kind]));
        TEST_EQ_INT(jint(t, "n"), jint(row, KIND_COUNT[kind]));
        int64_t prev_z = -1, prev_s = INT64_MIN, level_end = INT64_MIN;
        for (size_t k = 0; k < json_array_size(id); k++) {
            uint64_t i = (uint64_t)json_integer_value(json_array_get(id, k));
            TEST_ASSERT(i < nrecords(run, kind));
            rec x = record(run, kind, i);
            TEST_ASSERT(in_row(&x, kind, row));
            int64_t s = json_integer_value(json_array_get(sv, k));
            TEST_EQ_INT(s, x.s - BASE);
            TEST_EQ_INT(json_integer_value(json_array_get(dv, k)), x.e - x.s);
            int64_t z = kind >= 2 ? json_integer_value(json_array_get(zv, k)) : 0;
            if (kind >= 2) {
                TEST_EQ_INT(z, expected_depth(run, kind, i));
                const store_string *nm =
                    &run->strings[kind == 2 ? run->apis[i].name : run->ranges[i].name];
                json_t *names = json_object_get(t, "names"); /* each name once per row */
                size_t ni =
                    (size_t)json_integer_value(json_array_get(json_object_get(t, "name"), k));
                TEST_EQ_STR(json_string_value(json_array_get(names, ni)), nm->text);
                for (size_t o = 0; o < json_array_size(names); o++)
                    TEST_ASSERT(o == ni ||
                                strcmp(json_string_value(json_array_get(names, o)), nm->text));
            } else {
                TEST_ASSERT(!zv);
                TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(t, "t"), k)),
                            run->copies[i].type);
                TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(t, "k"), k)),
                            run->copies[i].kind);
                TEST_EQ_INT(json_integer_value(json_array_get(json_object_get(t, "b"), k)),
                            run->copies[i].bytes);
            }
            /* level by level, by start within one, and no two records of a level overlap */
            TEST_ASSERT(z >= prev_z);
            if (z != prev_z)
                prev_s = INT64_MIN, level_end = INT64_MIN;
            TEST_ASSERT(s >= prev_s);
            TEST_ASSERT(s >= level_end);
            prev_z = z, prev_s = s, level_end = s + (x.e - x.s);
        }
    }
    json_decref(tl);
    json_decref(j);
    teardown(&f);
    return 0;
}

/* expect_level: brute force over the records of kind `kind` in /api/runs row `row` at level z
 * (any level when z < 0): per pixel the count and busy permille, as /api/timeline computes them. */
static void expect_level(const store_run *run, int kind, json_t *row, int z, int64_t t0, int64_t t1,
                         int w, int64_t *count, int64_t *busy_pm)
{
    for (int j = 0; j < w; j++) {
        int64_t a = pixel_edge(t0, t1, (uint32_t)w, (uint32_t)j);
        int64_t b = pixel_edge(t0, t1, (uint32_t)w, (uint32_t)j + 1);
        int64_t n = 0, busy = 0;
        for (uint64_t i = 0; i < nrecords(run, kind); i++) {
            rec x = record(run, kind, i);
            if (!in_row(&x, kind, row) || (z >= 0 && expected_depth(run, kind, i) != z))
                continue;
            n += x.s < b && (x.e > a || (x.s >= a && x.e <= x.s));
            int64_t s = x.s > a ? x.s : a, e = x.e < b ? x.e : b;
            busy += e > s ? e - s : 0;
        }
        count[j] = n;
        int64_t pm = b > a ? (busy * 1000 + (b - a) - 1) / (b - a) : 0;
        busy_pm[j] = pm > 1000 ? 1000 : pm;
    }
}

/* same_pixels: 1 when JSON arrays c and b hold count[] and busy[] (w each). */
static int same_pixels(json_t *c, json_t *b, const int64_t *count, const int64_t *busy, int w)
{
    if ((int)json_array_size(c) != w || (int)json_array_size(b) != w) {
        fprintf(stderr, "arrays of %zu and %zu pixels, want %d\n", json_array_size(c),
                json_array_size(b), w);
        return 0;
    }
    for (int i = 0; i < w; i++)
        if (json_integer_value(json_array_get(c, (size_t)i)) != count[i] ||
            json_integer_value(json_array_get(b, (size_t)i)) != busy[i]) {
            fprintf(stderr, "pixel %d: count %lld busy %lld, want %lld %lld\n", i,
                    (long long)json_integer_value(json_array_get(c, (size_t)i)),
                    (long long)json_integer_value(json_array_get(b, (size_t)i)),
                    (long long)count[i], (long long)busy[i]);
            return 0;
        }
    return 1;
}

int test_web_rows_bins(void)
{
    fixture f;
    TEST_ASSERT(setup_x(&f, 1, 1) == 0);
    const store_run *run = f.run[0];
    json_t *j = get_json(f.port, "/api/runs", 200);
    TEST_ASSERT(j);
    json_t *rows = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "rows");
    int64_t count[97], busy[97];
    static const int64_t ranges[][2] = {{-5000, 700000}, {390000, 410000}, {1000, 2000}};
    /* 97 pixels: one pass over the records; 20: more than 4 per pixel (but fewer than 8 buckets,
     * which would read the grid), a lookup per pixel edge */
    for (size_t q = 0; q < 2 * sizeof ranges / sizeof *ranges; q++) {
        int W = q < sizeof ranges / sizeof *ranges ? 97 : 20;
        int64_t t0 = ranges[q % 3][0], t1 = ranges[q % 3][1];
        char url[256];
        snprintf(url, sizeof url,
                 "/api/timeline?run=0&t0=%lld&t1=%lld&width=%d&kmax=0&rows=2,3,4,5,6,7",
                 (long long)t0, (long long)t1, W);
        json_t *tl = get_json(f.port, url, 200);
        TEST_ASSERT(tl);
        json_t *trows = json_object_get(tl, "rows");
        TEST_EQ_INT(json_array_size(trows), 6);
        for (size_t r = 0; r < 6; r++) {
            json_t *t = json_array_get(trows, r), *row = json_array_get(rows, r + 2);
            int kind = kind_of(row);
            TEST_EQ_INT(jint(t, "row"), r + 2);
            /* n: the row's records overlapping the range, by brute force */
            int64_t n = 0;
            for (uint64_t i = 0; i < nrecords(run, kind); i++) {
                rec x = record(run, kind, i);
                n += in_row(&x, kind, row) && x.s < BASE + t1 &&
                     (x.e > BASE + t0 || (x.s >= BASE + t0 && x.e <= x.s));
            }
            TEST_EQ_INT(jint(t, "n"), n);
            if (n == 0) { /* kmax 0 lists the rows without records */
                TEST_EQ_STR(json_string_value(json_object_get(t, "mode")), "items");
                continue;
            }
            TEST_EQ_STR(json_string_value(json_object_get(t, "mode")), "bins");
            TEST_ASSERT(!json_object_get(t, "verdict")); /* only kernel rows have verdicts */
            if (kind == 1) {
                expect_level(run, kind, row, -1, BASE + t0, BASE + t1, W, count, busy);
                TEST_ASSERT(same_pixels(json_object_get(t, "count"), json_object_get(t, "busy"),
                                        count, busy, W));
                continue;
            }
            json_t *levels = json_object_get(t, "levels");
            TEST_EQ_INT(json_array_size(levels), jint(row, "depth"));
            for (int z = 0; z < (int)json_array_size(levels); z++) {
                json_t *lv = json_array_get(levels, (size_t)z);
                expect_level(run, kind, row, z, BASE + t0, BASE + t1, W, count, busy);
                TEST_ASSERT(same_pixels(json_object_get(lv, "count"), json_object_get(lv, "busy"),
                                        count, busy, W));
            }
        }
        json_decref(tl);
    }
    json_decref(j);
    teardown(&f);
    return 0;
}

/* flow_of: GET /api/flow of (kind, id); checks the answer's head. NULL on a mismatch. */
static json_t *flow_of(unsigned port, const char *kind, uint64_t id, uint32_t corr)
{
    char url[128];
    snprintf(url, sizeof url, "/api/flow?run=0&kind=%s&id=%llu", kind, (unsigned long long)id);
    json_t *j = get_json(port, url, 200);
    if (j && (strcmp(json_string_value(json_object_get(j, "kind")), kind) != 0 ||
              (uint64_t)jint(j, "id") != id || (uint32_t)jint(j, "correlation") != corr ||
              jint(j, "total") != (json_int_t)json_array_size(json_object_get(j, "partners")))) {
        fprintf(stderr, "flow %s %llu: %s\n", kind, (unsigned long long)id,
                json_dumps(j, JSON_COMPACT));
        json_decref(j);
        return NULL;
    }
    return j;
}

/* check_partner: the partner object p is record i of kind `kind` (0 kernel, 1 copy, 2 API) in
 * /api/runs row `row`. */
static int check_partner(const store_run *run, json_t *p, int kind, uint64_t i, int64_t row)
{
    static const char *const names[] = {"kernel", "copy", "api"};
    rec x = record(run, kind, i);
    TEST_EQ_STR(json_string_value(json_object_get(p, "kind")), names[kind]);
    TEST_EQ_INT(jint(p, "id"), i);
    TEST_EQ_INT(jint(p, "row"), row);
    TEST_EQ_INT(jint(p, "depth"), kind == 2 ? expected_depth(run, kind, i) : 0);
    TEST_EQ_INT(jint(p, "start"), x.s - BASE);
    TEST_EQ_INT(jint(p, "end"), x.e - BASE);
    return 0;
}

int test_web_flow(void)
{
    fixture f;
    TEST_ASSERT(setup_x(&f, 1, 1) == 0);
    const store_run *run = f.run[0];
    int pairs = 0, lonely = 0;
    /* each API call against a brute-force search of the kernels and copies of its process with
     * its correlation id, and back from each of those */
    for (uint64_t a = 0; a < run->napis; a++) {
        const store_api *api = &run->apis[a];
        json_t *j = flow_of(f.port, "api", a, api->correlation_id);
        TEST_ASSERT(j);
        json_t *ps = json_object_get(j, "partners");
        size_t k = 0;
        for (int kind = 0; kind < 2; kind++)
            for (uint64_t i = 0; i < nrecords(run, kind); i++) {
                rec x = record(run, kind, i);
                uint32_t c = kind ? run->copies[i].correlation_id : run->kernels[i].correlation_id;
                if (x.process != api->process || c != api->correlation_id || !c)
                    continue;
                TEST_ASSERT(k < json_array_size(ps));
                TEST_EQ_INT(check_partner(run, json_array_get(ps, k++), kind, i, kind ? 2 : 0), 0);
                json_t *back = flow_of(f.port, kind ? "copy" : "kernel", i, c);
                TEST_ASSERT(back);
                TEST_EQ_INT(json_array_size(json_object_get(back, "partners")), 1);
                TEST_EQ_INT(check_partner(run, json_array_get(json_object_get(back, "partners"), 0),
                                          2, a, 4 + api->process),
                            0);
                json_decref(back);
                pairs++;
            }
        TEST_EQ_INT(json_array_size(ps), k);
        lonely += k == 0;
        json_decref(j);
    }
    TEST_EQ_INT(pairs, 200 + NCOPY_A); /* launches and memcpys */
    TEST_EQ_INT(lonely, 20 + 1);       /* the driver calls and B's synchronize */
    /* (B's cudaDeviceSynchronize shares correlation id 5 with A's kernel 5, in another process:
     * among the lonely calls, and kernel 5 flows back to A's call alone) */
    json_t *j = flow_of(f.port, "copy", run->ncopies - 1, 0); /* a memset: no correlation */
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), 0);
    json_decref(j);
    /* kernels launched without an API call in the run (B's): none */
    j = flow_of(f.port, "kernel", run->nkernels - 1,
                run->kernels[run->nkernels - 1].correlation_id);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), 0);
    json_decref(j);
    teardown(&f);
    return 0;
}

int test_web_item(void)
{
    fixture f;
    TEST_ASSERT(setup_x(&f, 1, 1) == 0);
    const store_run *run = f.run[0];
    char url[160];
    /* a memcpy of A, a memset of B */
    for (uint64_t i = 0; i < run->ncopies; i++) {
        const store_copy *c = &run->copies[i];
        snprintf(url, sizeof url, "/api/item?run=0&kind=copy&id=%llu", (unsigned long long)i);
        json_t *j = get_json(f.port, url, 200);
        TEST_ASSERT(j);
        int set = c->type == STORE_COPY_MEMSET;
        TEST_EQ_STR(json_string_value(json_object_get(j, "item")), "copy");
        TEST_EQ_INT(jint(j, "id"), i);
        TEST_EQ_INT(jint(j, "row"), set ? 3 : 2);
        TEST_EQ_INT(jint(j, "lane"), 0);
        TEST_EQ_INT(jint(j, "depth"), 0);
        TEST_EQ_INT(jint(j, "process"), set);
        TEST_EQ_INT(jint(j, "pid"), set ? 200 : 100);
        TEST_EQ_INT(jint(j, "stream"), set ? 9 : 7);
        TEST_EQ_INT(jint(j, "context"), 1);
        TEST_EQ_INT(jint(j, "correlation"), c->correlation_id);
        TEST_EQ_STR(json_string_value(json_object_get(j, "type")), set ? "memset" : "memcpy");
        TEST_EQ_INT(jint(j, "kind"), c->kind);
        TEST_EQ_STR(json_string_value(json_object_get(j, "name")),
                    set ? "Memset (Device)" : "Memcpy HtoD");
        TEST_EQ_INT(jint(j, "bytes"), set ? 1 << 20 : 4096);
        TEST_EQ_INT(jint(j, "start"), c->start - BASE);
        TEST_EQ_INT(jint(j, "end"), c->end - BASE);
        TEST_EQ_INT(jint(j, "dur"), c->end - c->start);
        json_decref(j);
    }
    /* every API call and NVTX range */
    for (int kind = 2; kind < 4; kind++)
        for (uint64_t i = 0; i < nrecords(run, kind); i++) {
            snprintf(url, sizeof url, "/api/item?run=0&kind=%s&id=%llu", kind == 2 ? "api" : "nvtx",
                     (unsigned long long)i);
            json_t *j = get_json(f.port, url, 200);
            TEST_ASSERT(j);
            rec x = record(run, kind, i);
            TEST_EQ_STR(json_string_value(json_object_get(j, "item")), kind == 2 ? "api" : "nvtx");
            TEST_EQ_INT(jint(j, "row"), 2 * kind + x.process);
            TEST_EQ_INT(jint(j, "depth"), expected_depth(run, kind, i));
            TEST_EQ_INT(jint(j, "thread"), x.thread);
            TEST_EQ_INT(jint(j, "process"), x.process);
            TEST_EQ_INT(jint(j, "start"), x.s - BASE);
            TEST_EQ_INT(jint(j, "dur"), x.e - x.s);
            store_idx nm = kind == 2 ? run->apis[i].name : run->ranges[i].name;
            TEST_EQ_STR(json_string_value(json_object_get(j, "name")), run->strings[nm].text);
            if (kind == 2) {
                TEST_EQ_STR(json_string_value(json_object_get(j, "domain")),
                            run->apis[i].domain == STORE_API_DRIVER ? "driver" : "runtime");
                TEST_EQ_INT(jint(j, "correlation"), run->apis[i].correlation_id);
                TEST_EQ_INT(jint(j, "status"), 0);
            } else if (x.process == 1) {
                TEST_EQ_STR(json_string_value(json_object_get(j, "domain")), "dom");
            } else {
                TEST_ASSERT(json_is_null(json_object_get(j, "domain")));
            }
            json_decref(j);
        }
    /* a kernel as /api/kernel has it */
    json_t *a = get_json(f.port, "/api/item?run=0&kind=kernel&id=7", 200);
    json_t *b = get_json(f.port, "/api/kernel?run=0&id=7", 200);
    TEST_ASSERT(a && b && json_equal(a, b));
    json_decref(a), json_decref(b);
    /* bad requests name what is wrong */
    static const struct {
        const char *url;
        int status;
        const char *error;
    } bad[] = {
        {"/api/item?run=0&id=1", 400, "missing parameter 'kind'"},
        {"/api/item?run=0&kind=range&id=1", 400,
         "parameter 'kind' must be one of kernel, copy, api, nvtx, got 'range'"},
        {"/api/item?run=0&kind=copy", 400, "missing parameter 'id'"},
        {"/api/item?run=0&kind=copy&id=13", 400,
         "parameter 'id' must be a decimal integer in [0, 12], got '13'"},
        {"/api/item?run=0&kind=nvtx&id=-1", 400,
         "parameter 'id' must be a decimal integer in [0, 22], got '-1'"},
        {"/api/item?run=0&kind=api&id=0&x=1", 400, "unknown parameter 'x'"},
        {"/api/item?run=1&kind=api&id=0", 400,
         "parameter 'run' must be a decimal integer in [0, 0], got '1'"},
        {"/api/flow?run=0&kind=nvtx&id=0", 400,
         "parameter 'kind' must be one of kernel, copy, api, got 'nvtx'"},
        {"/api/flow?run=0&kind=api&id=0&id=1", 400, "parameter 'id' given twice"},
        {"/api/flow?run=0&kind=kernel&id=0x1", 400,
         "parameter 'id' must be a decimal integer in [0, 419], got '0x1'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = get_json(f.port, bad[i].url, bad[i].status);
        TEST_ASSERT(j);
        TEST_EQ_STR(json_string_value(json_object_get(j, "error")), bad[i].error);
        json_decref(j);
    }
    teardown(&f);
    /* a run without copies, API calls or ranges: 404 */
    TEST_ASSERT(setup(&f, 1) == 0);
    json_t *j = get_json(f.port, "/api/item?run=0&kind=copy&id=0", 404);
    TEST_ASSERT(j);
    TEST_EQ_STR(json_string_value(json_object_get(j, "error")), "run 0 has no copies");
    json_decref(j);
    j = get_json(f.port, "/api/flow?run=0&kind=api&id=0", 404);
    TEST_ASSERT(j);
    TEST_EQ_STR(json_string_value(json_object_get(j, "error")), "run 0 has no API calls");
    json_decref(j);
    j = get_json(f.port, "/api/runs", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(
        json_array_size(json_object_get(json_array_get(json_object_get(j, "runs"), 0), "rows")), 2);
    json_decref(j);
    teardown(&f);
    return 0;
}

/* The index of a random run, without the server: rows, levels and flows against brute force. */
int test_web_rows_random(void)
{
    srand(11);
    store_run *run = store_run_new();
    enum { NP = 3, NT = 3 };
    store_idx stream[NP][2], launch[NP];
    for (int p = 0; p < NP; p++) {
        store_process_info pi = {.pid = 300 + p, .host = "h", .source = "libcollect"};
        store_idx pr = store_run_add_process(run, &pi, "r.db");
        store_device_info di = {
            .device_id = 0, .uuid = "00112233445566778899aabbccddeeff", .name = "G"};
        store_idx cx = store_run_context(run, pr, 1, store_run_add_device(run, pr, &di), 1);
        stream[p][0] = store_run_stream(run, cx, 7);
        stream[p][1] = store_run_stream(run, cx, 8);
        store_launch l = {
            .name = store_run_intern(run, "k"), .grid = {1, 1, 1}, .block = {1, 1, 1}};
        launch[p] = store_run_launch(run, &l);
    }
    store_idx nm = store_run_intern(run, "r");
    /* per (process, thread) nested ranges and calls: random pushes and pops with many equal
     * starts and ends, a few ranges that cross, and in one thread 40 levels (past the cap) */
    for (int kind = 2; kind < 4; kind++)
        for (int p = 0; p < NP; p++)
            for (int t = 0; t < NT; t++) {
                int64_t now = BASE + rand() % 100, open[64];
                int sp = 0;
                int deep = kind == 3 && p == 1 && t == 2;
                for (int step = 0; step < 400; step++) {
                    int push = deep ? step < 45 : sp == 0 || (sp < 60 && rand() % 2);
                    if (push) {
                        open[sp++] = now;
                    } else if (sp) {
                        int64_t s = open[--sp];
                        int64_t e = now + (rand() % 8 == 0 ? rand() % 300 : 0); /* crossing */
                        if (kind == 2) {
                            store_api a = {s,
                                           e,
                                           (store_idx)p,
                                           (uint32_t)(rand() % 50),
                                           (uint64_t)t + 1,
                                           nm,
                                           STORE_API_RUNTIME,
                                           0};
                            store_run_add_api(run, &a);
                        } else {
                            store_range r = {s, e, (store_idx)p, (uint64_t)t + 1, STORE_NONE, nm};
                            store_run_add_range(run, &r);
                        }
                    }
                    now += rand() % 3 == 0 ? 0 : rand() % 40;
                }
            }
    for (int i = 0; i < 3000; i++) {
        int p = rand() % NP;
        int64_t s = BASE + rand() % 20000;
        if (i % 5) {
            store_kernel k = {s,         s + rand() % 100,        stream[p][rand() % 2],
                              launch[p], (uint32_t)(rand() % 50), 0};
            store_run_add_kernel(run, &k);
        } else {
            store_copy c = {s,
                            s + rand() % 100,
                            stream[p][rand() % 2],
                            (uint32_t)(rand() % 50),
                            STORE_COPY_MEMCPY,
                            1,
                            8};
            store_run_add_copy(run, &c);
        }
    }
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"random", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &wr, err, sizeof err), WEB_OK);
    TEST_EQ_INT(r.nrows, NP * 2 * 2 + NP * NT * 2);
    for (int kind = 0; kind < WEB_NROW_KINDS; kind++) {
        const web_items *it = &r.items[kind];
        TEST_EQ_INT(it->n, nrecords(run, kind));
        uint8_t *seen = calloc(it->n, 1);
        uint64_t total = 0;
        for (uint32_t ri = it->first; ri < it->first + it->nrows; ri++) {
            const web_row *row = &r.rows[ri];
            TEST_EQ_INT(row->kind, kind);
            uint32_t nrec = 0;
            for (uint32_t l = 0; l < row->nlev; l++) {
                const web_ivl *v = &row->lev[l];
                TEST_ASSERT(v->n > 0); /* no empty level */
                for (uint32_t i = 0; i < v->n; i++) {
                    uint32_t k = web_ivl_item(v, i);
                    rec x = record(run, kind, k);
                    TEST_ASSERT(!seen[k]);
                    seen[k] = 1;
                    nrec++;
                    TEST_EQ_INT(web_item_row(&r, kind, k), ri);
                    TEST_EQ_INT(web_item_depth(&r, kind, k), l);
                    TEST_EQ_INT(x.process, row->process);
                    if (kind >= 2)
                        TEST_EQ_INT(x.thread, row->thread);
                    else
                        TEST_EQ_INT(run->streams[row->stream].stream_id, x.stream_id);
                    if (i)
                        TEST_ASSERT(web_ivl_start(v, i - 1) <= x.s);
                    if (kind < 2 || l == WEB_DEPTH_MAX - 1)
                        continue;
                    /* a level holds no two records that overlap ... */
                    if (i)
                        TEST_ASSERT(web_ivl_end(v, i - 1) <= x.s);
                    /* ... and each record of level l > 0 starts while one of level l - 1 is open */
                    if (l) {
                        const web_ivl *up = &row->lev[l - 1];
                        int open = 0;
                        for (uint32_t u = 0; u < up->n && !open; u++)
                            open = web_ivl_start(up, u) <= x.s && web_ivl_end(up, u) > x.s;
                        TEST_ASSERT(open);
                    }
                }
            }
            TEST_EQ_INT(nrec, row->n);
            total += nrec;
            if (kind == 3 && row->process == 1 && row->thread == 3)
                TEST_EQ_INT(row->nlev, WEB_DEPTH_MAX); /* 45 levels deep, capped */
        }
        TEST_EQ_INT(total, it->n);
        free(seen);
    }
    /* flows: every (process, correlation) against brute force */
    for (int kind = 0; kind <= 2; kind++)
        for (store_idx p = 0; p < NP; p++)
            for (uint32_t c = 0; c < 52; c++) {
                uint32_t first, n = web_flow_find(&r, kind, p, c, &first), want = 0;
                for (uint64_t i = 0; i < nrecords(run, kind); i++) {
                    rec x = record(run, kind, i);
                    uint32_t ci = kind == 0   ? run->kernels[i].correlation_id
                                  : kind == 1 ? run->copies[i].correlation_id
                                              : run->apis[i].correlation_id;
                    want += x.process == p && ci == c && c != 0;
                }
                TEST_EQ_INT(n, want);
                for (uint32_t j = 0; j < n; j++) {
                    uint32_t i = r.items[kind].by_corr[first + j];
                    TEST_EQ_INT(web_item_process(&r, kind, i), p);
                    TEST_EQ_INT(web_item_correlation(&r, kind, i), c);
                    if (j)
                        TEST_ASSERT(r.items[kind].by_corr[first + j - 1] < i);
                }
            }
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* ---------------------------------------------------------------- tlview serve, end to end */

#define TLVIEW_BIN TLVIEW_BINARY_DIR "/cli/tlview"

/* spawn_serve: runs `tlview serve ARGS` with stdout and stderr to pipes; returns the pid. */
static pid_t spawn_serve(char *const args[], int *out_fd, int *err_fd, const char *demo_dir)
{
    int o[2], e[2];
    if (pipe(o) || pipe(e))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(o[1], 1);
        dup2(e[1], 2);
        close(o[0]), close(e[0]);
        if (demo_dir)
            setenv("TLVIEW_DEMO_DIR", demo_dir, 1);
        execv(TLVIEW_BIN, args);
        _exit(127);
    }
    close(o[1]), close(e[1]);
    *out_fd = o[0];
    *err_fd = e[0];
    return pid;
}

/* read_line: the first line on fd within 20 s (the URL line of tlview serve). */
static int read_line(int fd, char *buf, size_t n)
{
    size_t len = 0;
    struct timeval tv = {20, 0};
    while (len + 1 < n) {
        fd_set rs;
        FD_ZERO(&rs);
        FD_SET(fd, &rs);
        if (select(fd + 1, &rs, NULL, NULL, &tv) <= 0 || read(fd, buf + len, 1) != 1)
            break;
        if (buf[len++] == '\n')
            break;
    }
    buf[len] = 0;
    return (int)len;
}

/* wait_shown: tlview serve FILES answers at once and reads its runs meanwhile (GET /api/status
 * says "loading"): the cases that spawn it ask about the runs, so wait for them (30 s at most),
 * asking 127.0.0.1:port with `token` ("" for none). Returns when they are shown, or the server
 * stopped (a file it could not read: the case looks at that). */
static void wait_shown(unsigned port, const char *token)
{
    char req[256];
    snprintf(req, sizeof req, "GET /api/status%s%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
             token[0] ? "?token=" : "", token);
    for (int i = 0; i < 600; i++) {
        response r;
        if (http_raw(port, req, &r))
            break;
        int loading = r.status == 200 && r.body && strstr(r.body, "\"state\":\"loading\"");
        free(r.head);
        if (!loading)
            break;
        usleep(50000);
    }
}

/* serve_port: the port of the URL on the line `tlview serve` printed on loopback,
 * http://127.0.0.1:PORT/?token=TOKEN, whose token (48 hex digits) http_get() sends from then on,
 * once the server shows its runs (GET /api/status no longer "loading"); 0 (and the line printed)
 * when the line holds no such URL. */
static unsigned serve_port(const char *line)
{
    unsigned port = 0;
    char token[65] = "";
    int end = 0;
    const char *at = strstr(line, "http://127.0.0.1:");
    if (!at || sscanf(at, "http://127.0.0.1:%u/?token=%64[0-9a-f]%n", &port, token, &end) != 2 ||
        strlen(token) != 48 || at[end] != ' ') {
        fprintf(stderr, "no http://127.0.0.1:PORT/?token=(48 hex digits) in: %s", line);
        return 0;
    }
    snprintf(http_token, sizeof http_token, "%s", token);
    wait_shown(port, token);
    return port;
}

static int wait_exit(pid_t pid)
{
    int status = 0;
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static int save_run(const char *dir, const char *name, double scale, int mps, char *path, size_t n)
{
    if (snprintf(path, n, "%s/%s", dir, name) >= (int)n) {
        fprintf(stderr, "save_run: %s/%s: path too long\n", dir, name);
        return -1;
    }
    store_run *run = make_run(scale, mps);
    int rc = store_run_save(run, path, "test_web");
    if (rc)
        fprintf(stderr, "store_run_save %s: %s\n", path, store_run_errmsg(run));
    store_run_free(run);
    return rc;
}

int test_web_serve_cli(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char a[1024], b[1024], line[512];
    TEST_EQ_INT(save_run(test_tmpdir(), "a.db", 1.0, 0, a, sizeof a), 0);
    TEST_EQ_INT(save_run(test_tmpdir(), "b.db", 0.5, 1, b, sizeof b), 0);
    char *args[] = {"tlview", "serve", "--port", "0", "--compare", b, a, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    unsigned port = serve_port(line);
    TEST_ASSERT(port > 0);
    json_t *j = get_json(port, "/api/runs", 200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    TEST_ASSERT(j);
    json_t *runs = json_object_get(j, "runs");
    TEST_EQ_INT(json_array_size(runs), 2);
    TEST_EQ_INT(jint(json_object_get(json_array_get(runs, 0), "summary"), "kernels"), NA + NB);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(runs, 0), "label")), a);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(runs, 1), "label")), b);
    TEST_EQ_INT(jint(json_object_get(j, "compare"), "compare_span_ns"), 549000);
    json_decref(j);
    close(out), close(err);
    return 0;
}

int test_web_serve_demo_and_errors(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char dir[1024], p[1024], line[1024];
    const char *tmp = test_tmpdir();
    /* no demo traces: a clear error, exit 1 */
    char *none[] = {"tlview", "serve", "--port", "0", NULL};
    int out, err;
    pid_t pid = spawn_serve(none, &out, &err, tmp);
    TEST_EQ_INT(wait_exit(pid), 1);
    TEST_ASSERT(read_line(err, line, sizeof line) > 0);
    TEST_ASSERT(strstr(line, "no demo traces found") != NULL);
    close(out), close(err);
    /* a bad file: the server answered at once (its URL printed) while it read it; then the
     * error names it and the server stops, exit 1 */
    snprintf(p, sizeof p, "%s/bad.db", tmp);
    FILE *f = fopen(p, "w");
    fputs("not a trace\n", f);
    fclose(f);
    char *bad[] = {"tlview", "serve", "--port", "0", p, NULL};
    pid = spawn_serve(bad, &out, &err, NULL);
    TEST_EQ_INT(wait_exit(pid), 1);
    TEST_ASSERT(read_line(err, line, sizeof line) > 0);
    TEST_ASSERT(strstr(line, "bad.db") != NULL);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    TEST_ASSERT(strstr(line, "being loaded at http://127.0.0.1:") != NULL);
    TEST_EQ_INT(read_line(out, line, sizeof line), 0); /* and nothing after */
    close(out), close(err);
    /* demo traces with MPS off and on for 2 processes: served as a comparison */
    snprintf(dir, sizeof dir, "%s/mps-off", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/mps-off/n2", tmp);
    mkdir(dir, 0755);
    TEST_EQ_INT(save_run(dir, "output.1.db", 1.0, 0, p, sizeof p), 0);
    snprintf(dir, sizeof dir, "%s/mps-on", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/mps-on/n2", tmp);
    mkdir(dir, 0755);
    TEST_EQ_INT(save_run(dir, "output.2.db", 0.5, 1, p, sizeof p), 0);
    pid = spawn_serve(none, &out, &err, tmp);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    unsigned port = serve_port(line);
    TEST_ASSERT(port > 0);
    json_t *j = get_json(port, "/api/runs", 200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    TEST_ASSERT(j);
    json_t *runs = json_object_get(j, "runs");
    TEST_EQ_INT(json_array_size(runs), 2);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(runs, 0), "label")),
                "mps-off/n2 (demo, H200)");
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(runs, 1), "label")),
                "mps-on/n2 (demo, H200)");
    json_decref(j);
    close(out), close(err);
    return 0;
}

/* ---------------------------------------------------------------- tlview serve DIR (advise) */

/* make_experiment: `tlview advise` of tests/advise's stand-in program into folder `dir`: 4
 * configurations (solo, time-sliced, MPS and MPS at 50% at N=2), 3 rounds, traced, with a known
 * gain under MPS and some noise, beside tests/record's stand-in MPS control. Its exit status. */
static int make_experiment(const char *dir)
{
    char collector[1024], log[1024], path[8192];
    snprintf(collector, sizeof collector, "%s/libcollect.so", test_tmpdir());
    snprintf(log, sizeof log, "%s/mps.log", test_tmpdir());
    FILE *f = fopen(collector, "w");
    if (f)
        fclose(f);
    const char *old = getenv("PATH");
    snprintf(path, sizeof path, "%s/tests/record:%s", TLVIEW_SOURCE_DIR,
             old ? old : "/usr/bin:/bin");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        static const char *const drop[] = {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY",
                                           "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                                           "CUDA_INJECTION64_PATH"};
        for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
            unsetenv(drop[i]);
        setenv("TLVIEW_COLLECTOR", collector, 1);
        setenv("TLVIEW_GPU_CHECK", "0", 1);
        setenv("STANDIN_MPS_LOG", log, 1);
        setenv("PATH", path, 1);
        setenv("FAKE_WORK_MS", "30", 1);
        setenv("FAKE_SEED", "1", 1);
        setenv("FAKE_TRACE", "1", 1);
        setenv("FAKE_GAIN_MPS", "2", 1);
        setenv("FAKE_NOISE", "0.05", 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        char *args[] = {"tlview",    "advise",
                        "-n",        "2",
                        "--configs", "sliced,mps,mps:50",
                        "-r",        "3",
                        "-m",        "items_per_s=([0-9.]+)",
                        "-o",        (char *)dir,
                        "--",        ADVISE_FAKE_APP,
                        NULL};
        execv(TLVIEW_BIN, args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* serve_experiment: `tlview serve --port 0 DIR`, its URL line read and its runs shown; the pid
 * (its stdout and stderr in *out, *err) and the port in *port (0: the line held no URL). */
static pid_t serve_experiment(const char *dir, int *out, int *err, unsigned *port)
{
    char *args[] = {"tlview", "serve", "--port", "0", (char *)dir, NULL}, line[1024];
    pid_t pid = spawn_serve(args, out, err, NULL);
    *port = pid > 0 && read_line(*out, line, sizeof line) > 0 ? serve_port(line) : 0;
    return pid;
}

/* The entry of configuration `id` in the "configs" (or "shown") list of o, or NULL. */
static json_t *config_of(json_t *o, const char *list, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(o, list), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "config")), id))
            return c;
    }
    return NULL;
}

/* test_web_serve_advise: `tlview serve DIR` of an experiment of 4 configurations: a run per
 * configuration one above the other, labelled by it, each the run of its configuration whose
 * figure is nearest the median (recomputed here from advise.json's runs), with the verdict
 * advise.json gives that run; GET /api/experiment holds advise.json's figures, names and
 * recommendation exactly (one definition: advise's). */
int test_web_serve_advise(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0 || access(ADVISE_FAKE_APP, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s or %s not built\n", TLVIEW_BIN, ADVISE_FAKE_APP);
        return TEST_SKIP;
    }
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/exp", test_tmpdir());
    TEST_EQ_INT(make_experiment(dir), 0);
    snprintf(path, sizeof path, "%s/advise.json", dir);
    json_t *file = json_load_file(path, 0, NULL);
    TEST_ASSERT(file);
    int out, err;
    unsigned port;
    pid_t pid = serve_experiment(dir, &out, &err, &port);
    TEST_ASSERT(port > 0);
    json_t *x = get_json(port, "/api/experiment", 200), *runs = get_json(port, "/api/runs", 200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    close(out), close(err);
    TEST_ASSERT(x && runs);
    TEST_ASSERT(json_is_true(json_object_get(runs, "experiment")));
    TEST_ASSERT(json_is_null(json_object_get(runs, "compare")));
    static const char *const ids[] = {"solo", "n2-sliced", "n2-mps", "n2-mps50"};
    static const char *const labels[] = {"solo", "time-sliced n=2", "MPS n=2", "MPS 50% n=2"};
    json_t *pages = json_object_get(runs, "runs");
    TEST_EQ_INT(json_array_size(pages), 4);
    json_t *result = json_object_get(x, "result");
    for (int c = 0; c < 4; c++) {
        json_t *s = config_of(x, "shown", ids[c]);
        TEST_ASSERT(s);
        TEST_EQ_INT(jint(s, "run"), c);
        const char *label = json_string_value(json_object_get(s, "label"));
        char want[96];
        snprintf(want, sizeof want, "%s (r%d)", labels[c], (int)jint(s, "round"));
        TEST_EQ_STR(label, want);
        TEST_EQ_STR(json_string_value(json_object_get(json_array_get(pages, (size_t)c), "label")),
                    want);
        TEST_ASSERT(json_is_null(json_object_get(s, "note")));
        /* the figures of the table: advise.json's, the same names and values */
        json_t *got = config_of(result, "configs", ids[c]),
               *file_c = config_of(file, "configs", ids[c]);
        TEST_ASSERT(got && file_c && json_equal(got, file_c));
        /* the run drawn: nearest the median of the configuration's runs (ties: earlier round) */
        double median = json_number_value(json_object_get(file_c, "median")), best = INFINITY;
        int round = -1;
        size_t i;
        json_t *r = NULL;
        json_array_foreach(json_object_get(file, "runs"), i, r)
        {
            if (strcmp(json_string_value(json_object_get(r, "config")), ids[c]) ||
                !json_is_true(json_object_get(r, "ok")))
                continue;
            double d = fabs(json_number_value(json_object_get(r, "figure")) - median);
            if (d < best) {
                best = d;
                round = (int)jint(r, "round");
            }
        }
        TEST_EQ_INT(jint(s, "round"), round);
        /* analysed as advise analysed it (the same solo references): the same verdict */
        json_array_foreach(json_object_get(file, "runs"), i, r)
        {
            if (!strcmp(json_string_value(json_object_get(r, "config")), ids[c]) &&
                jint(r, "round") == round)
                break;
        }
        json_t *lane =
            json_array_get(json_object_get(json_array_get(pages, (size_t)c), "lanes"), 0);
        TEST_ASSERT(r && lane);
        TEST_EQ_STR(json_string_value(json_object_get(lane, "verdict")),
                    json_string_value(json_object_get(r, "verdict")));
        TEST_NEAR(json_number_value(json_object_get(s, "figure")),
                  json_number_value(json_object_get(r, "figure")), 0);
    }
    TEST_ASSERT(json_equal(json_object_get(result, "recommendation"),
                           json_object_get(file, "recommendation")));
    TEST_ASSERT(
        json_equal(json_object_get(result, "prediction"), json_object_get(file, "prediction")));
    TEST_ASSERT(strstr(json_string_value(json_object_get(x, "representative")),
                       "nearest the configuration's median") != NULL);
    json_decref(x);
    json_decref(runs);
    json_decref(file);
    return 0;
}

/* read_all: what is left on fd (at most n - 1 bytes, within 20 s). */
static void read_all(int fd, char *buf, size_t n)
{
    size_t len = 0;
    while (len + 1 < n && read_line(fd, buf + len, n - len) > 0)
        len += strlen(buf + len);
    buf[len] = 0;
}

/* serve_fails: `tlview serve --port 0 DIR` exits with `code` (within 10 s) and says `want` on
 * stderr in one line. 0, or 1 with what it said. */
static int serve_fails(const char *dir, int code, const char *want)
{
    char *args[] = {"tlview", "serve", "--port", "0", (char *)dir, NULL}, text[8192];
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    int rc = wait_exit(pid);
    read_all(err, text, sizeof text);
    close(out), close(err);
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    if (rc != code || !strstr(text, want) || lines != 1) {
        fprintf(stderr, "serve %s: exit %d (want %d), stderr (want one line with '%s'):\n%s\n", dir,
                rc, code, want, text);
        return 1;
    }
    return 0;
}

/* write_text: writes `text` to path. */
static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* test_web_serve_advise_hostile: an experiment's folder others may have changed: a truncated
 * advise.json, one of wrong types and one of 65 configurations each stop the server with one
 * line naming the file; a run folder missing, or a symbolic link in its place, leaves its
 * configuration in the table, not drawn, with a note (on stderr and the page); with none left to
 * draw, one line says so; DIR with --compare is a usage error. */
int test_web_serve_advise_hostile(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0 || access(ADVISE_FAKE_APP, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s or %s not built\n", TLVIEW_BIN, ADVISE_FAKE_APP);
        return TEST_SKIP;
    }
    char dir[1024], path[1100], saved[1100], text[8192];
    snprintf(dir, sizeof dir, "%s/exp", test_tmpdir());
    TEST_EQ_INT(make_experiment(dir), 0);
    snprintf(path, sizeof path, "%s/advise.json", dir);
    snprintf(saved, sizeof saved, "%s/advise.saved", test_tmpdir());
    json_t *file = json_load_file(path, 0, NULL);
    TEST_ASSERT(file && json_dump_file(file, saved, JSON_INDENT(1)) == 0);
    /* truncated */
    char *whole = json_dumps(file, JSON_INDENT(1));
    TEST_ASSERT(whole);
    whole[strlen(whole) / 2] = 0;
    TEST_EQ_INT(write_text(path, whole), 0);
    free(whole);
    TEST_EQ_INT(serve_fails(dir, 1, "advise.json:"), 0);
    /* wrong types: "configs" a string, then a run's "round" a string */
    json_t *bad = json_deep_copy(file);
    json_object_set_new(bad, "configs", json_string("n2-mps"));
    TEST_EQ_INT(json_dump_file(bad, path, 0), 0);
    TEST_EQ_INT(serve_fails(dir, 1, "advise.json: \"configs\" is not a list of 1 to 64"), 0);
    json_decref(bad);
    bad = json_deep_copy(file);
    json_object_set_new(json_array_get(json_object_get(bad, "runs"), 0), "round", json_string("0"));
    TEST_EQ_INT(json_dump_file(bad, path, 0), 0);
    TEST_EQ_INT(serve_fails(dir, 1, "advise.json: runs[0]: \"round\" is not a whole number"), 0);
    json_decref(bad);
    /* more configurations than a page draws */
    bad = json_deep_copy(file);
    json_t *cfgs = json_object_get(bad, "configs");
    while (json_array_size(cfgs) <= 64)
        json_array_append(cfgs, json_array_get(cfgs, 0));
    TEST_EQ_INT(json_dump_file(bad, path, 0), 0);
    TEST_EQ_INT(serve_fails(dir, 1, "advise.json: \"configs\" is not a list of 1 to 64"), 0);
    json_decref(bad);
    TEST_EQ_INT(json_dump_file(file, path, JSON_INDENT(1)), 0);
    /* with --compare: a usage error */
    char *cmp[] = {"tlview", "serve", "--port", "0", "--compare", path, dir, NULL};
    int out, err;
    pid_t pid = spawn_serve(cmp, &out, &err, NULL);
    TEST_EQ_INT(wait_exit(pid), 2);
    read_all(err, text, sizeof text);
    TEST_ASSERT(strstr(text, "is an experiment of tlview advise (it holds advise.json)") != NULL);
    close(out), close(err);
    /* the drawn run of MPS n=2 removed, that of MPS 50% a symbolic link to another folder */
    unsigned port;
    pid = serve_experiment(dir, &out, &err, &port);
    TEST_ASSERT(port > 0);
    json_t *x = get_json(port, "/api/experiment", 200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    close(out), close(err);
    TEST_ASSERT(x);
    char mps[1100], lim[1100], cmd[8192];
    snprintf(mps, sizeof mps, "%s/%s", dir,
             json_string_value(json_object_get(config_of(x, "shown", "n2-mps"), "dir")));
    snprintf(lim, sizeof lim, "%s/%s", dir,
             json_string_value(json_object_get(config_of(x, "shown", "n2-mps50"), "dir")));
    json_decref(x);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' && ln -s '%s/solo/r0' '%s'", mps, lim, dir, lim);
    TEST_EQ_INT(system(cmd), 0);
    pid = serve_experiment(dir, &out, &err, &port);
    TEST_ASSERT(port > 0);
    x = get_json(port, "/api/experiment", 200);
    json_t *runs = get_json(port, "/api/runs", 200);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    read_all(err, text, sizeof text);
    close(out), close(err);
    TEST_ASSERT(x && runs);
    TEST_EQ_INT(json_array_size(json_object_get(runs, "runs")), 2);
    json_t *m = config_of(x, "shown", "n2-mps"), *l = config_of(x, "shown", "n2-mps50");
    TEST_ASSERT(json_is_null(json_object_get(m, "run")) && json_is_null(json_object_get(l, "run")));
    const char *mnote = json_string_value(json_object_get(m, "note"));
    const char *lnote = json_string_value(json_object_get(l, "note"));
    TEST_ASSERT(mnote && strstr(mnote, "n2-mps: not drawn: n2-mps/r") &&
                strstr(mnote, ": missing"));
    TEST_ASSERT(lnote && strstr(lnote, "n2-mps50: not drawn: n2-mps50/r") &&
                strstr(lnote, " is a symbolic link, not followed"));
    TEST_ASSERT(strstr(text, mnote) && strstr(text, lnote)); /* said on stderr too */
    TEST_EQ_INT(json_array_size(json_object_get(json_object_get(x, "result"), "configs")), 4);
    json_decref(x);
    json_decref(runs);
    /* none left to draw */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/solo' '%s/n2-sliced'", dir, dir);
    TEST_EQ_INT(system(cmd), 0);
    char *none[] = {"tlview", "serve", "--port", "0", dir, NULL};
    pid = spawn_serve(none, &out, &err, NULL);
    TEST_EQ_INT(wait_exit(pid), 1);
    read_all(err, text, sizeof text);
    close(out), close(err);
    TEST_ASSERT(strstr(text, "no configuration of the experiment has a run to draw") != NULL);
    json_decref(file);
    return 0;
}

/* The concurrency grid built after start: before it, a wide range is reported pending; after
 * it, the per-pixel peak and mean match the analysis' exact profile of the same pixels. */
int test_web_concurrency_grid(void)
{
    bench_gen_opts o = {.nkernels = 400000, .nprocs = 4, .streams = 1, .per_iter = 100, .mps = 0};
    store_run *run = bench_gen_run(&o);
    TEST_ASSERT(run);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run src = {"grid", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
    const analysis_device *d = analysis_get_device(an, 0);
    int64_t span = d->t_end - d->t_begin;
    web_buf b = {0};
    TEST_EQ_INT(web_timeline(&r, 0, 0, span, 300, 300, NULL, 0, &b, NULL), 0);
    TEST_ASSERT(strstr(b.s, "\"conc_pending\":true") != NULL);
    free(b.s);
    /* a narrow range is profiled directly even before the grid */
    b = (web_buf){0};
    TEST_EQ_INT(web_timeline(&r, 0, span / 2, span / 2 + span / 1000, 300, 300, NULL, 0, &b, NULL),
                0);
    TEST_ASSERT(strstr(b.s, "conc_pending") == NULL && strstr(b.s, "\"conc_max\":[") != NULL);
    free(b.s);
    /* when building the grid failed, a wide range is not profiled directly either (and is not
     * reported pending: it never will be ready); a narrow one still is */
    r.lanes[0].grid_state = 2;
    b = (web_buf){0};
    TEST_EQ_INT(web_timeline(&r, 0, 0, span, 300, 300, NULL, 0, &b, NULL), 0);
    TEST_ASSERT(strstr(b.s, "conc_pending") == NULL && strstr(b.s, "conc_max") == NULL &&
                strstr(b.s, "conc_mean") == NULL && strstr(b.s, "\"overlap\":[") != NULL);
    free(b.s);
    b = (web_buf){0};
    TEST_EQ_INT(web_timeline(&r, 0, span / 2, span / 2 + span / 1000, 300, 300, NULL, 0, &b, NULL),
                0);
    TEST_ASSERT(strstr(b.s, "conc_pending") == NULL && strstr(b.s, "\"conc_max\":[") != NULL);
    free(b.s);
    r.lanes[0].grid_state = 0;
    TEST_EQ_INT(web_runix_build_grids(&r), 0);
    TEST_EQ_INT(r.lanes[0].grid_state, 1);
    enum { W = 200 };
    b = (web_buf){0};
    TEST_EQ_INT(web_timeline(&r, 0, 0, span, W, 0, NULL, 0, &b, NULL), 0);
    json_error_t e;
    json_t *j = json_loads(b.s, 0, &e);
    free(b.s);
    TEST_ASSERT(j);
    json_t *lane = json_array_get(json_object_get(j, "lanes"), 0);
    json_t *mx = json_object_get(lane, "conc_max"), *mean = json_object_get(lane, "conc_mean");
    TEST_EQ_INT(json_array_size(mx), W);
    analysis_bin exact[W];
    TEST_EQ_INT(analysis_profile_bins(an, 0, r.origin, r.origin + span, exact, W), ANALYSIS_OK);
    int max_diff = 0;
    for (int i = 0; i < W; i++) {
        /* the grid may add the edge bins of the neighbours: the peak can only be higher there */
        int g = (int)json_integer_value(json_array_get(mx, (size_t)i));
        TEST_ASSERT(g >= exact[i].max_processes);
        max_diff += g != exact[i].max_processes;
        TEST_NEAR(json_number_value(json_array_get(mean, (size_t)i)), exact[i].mean_processes,
                  0.05);
    }
    TEST_ASSERT(max_diff <= W / 10);
    json_decref(j);
    /* two grid bins per pixel over a range of more than 20000 kernels: from the grid too (its
     * peaks may spill over one bin), not profiled exactly (that would cost more than the rest) */
    enum { W2 = 8000 };
    int64_t t0 = span / 3, len = 2 * r.lanes[0].gw * W2;
    uint64_t inside = 0;
    for (uint64_t i = 0; i < run->nkernels; i++)
        inside +=
            run->kernels[i].start < r.origin + t0 + len && run->kernels[i].end > r.origin + t0;
    TEST_ASSERT(inside > 20000 && t0 + len < span);
    b = (web_buf){0};
    TEST_EQ_INT(web_timeline(&r, 0, t0, t0 + len, W2, 0, NULL, 0, &b, NULL), 0);
    j = json_loads(b.s, 0, &e);
    free(b.s);
    TEST_ASSERT(j);
    lane = json_array_get(json_object_get(j, "lanes"), 0);
    mx = json_object_get(lane, "conc_max"), mean = json_object_get(lane, "conc_mean");
    TEST_EQ_INT(json_array_size(mx), W2);
    analysis_bin *ex2 = malloc(sizeof *ex2 * W2);
    double mean_diff = 0;
    TEST_EQ_INT(analysis_profile_bins(an, 0, r.origin + t0, r.origin + t0 + len, ex2, W2),
                ANALYSIS_OK);
    max_diff = 0;
    for (int i = 0; i < W2; i++) {
        int g = (int)json_integer_value(json_array_get(mx, (size_t)i));
        TEST_ASSERT(g >= ex2[i].max_processes);
        max_diff += g != ex2[i].max_processes;
        double dm =
            fabs(json_number_value(json_array_get(mean, (size_t)i)) - ex2[i].mean_processes);
        mean_diff = dm > mean_diff ? dm : mean_diff;
    }
    fprintf(stderr, "%d of %d pixels with a higher peak from the grid, mean off by %.2f at most\n",
            max_diff, W2, mean_diff);
    TEST_ASSERT(max_diff > 0 && max_diff <= W2 / 100);
    TEST_ASSERT(mean_diff < 0.6); /* bins cut by a pixel edge are spread evenly over their time */
    free(ex2);
    json_decref(j);
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* A run without kernels (a process that launched nothing) is served without crashing. */
int test_web_empty_run(void)
{
    store_run *run = store_run_new();
    store_process_info pi = {.pid = 7, .host = "h", .source = "libcollect"};
    TEST_ASSERT(store_run_add_process(run, &pi, "empty.db") != STORE_NONE);
    TEST_EQ_INT(store_run_finish(run), 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"empty", run, an};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.no_token = 1; /* as the fixture's */
    web *w;
    char err[128];
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    json_t *j = get_json(web_port(w), "/api/runs", 200);
    TEST_ASSERT(j);
    json_t *r0 = json_array_get(json_object_get(j, "runs"), 0);
    TEST_EQ_INT(jint(json_object_get(r0, "summary"), "kernels"), 0);
    TEST_EQ_INT(json_array_size(json_object_get(r0, "processes")), 1);
    TEST_EQ_INT(json_array_size(json_object_get(r0, "lanes")), 0);
    json_decref(j);
    j = get_json(web_port(w), "/api/timeline?run=0&t0=0&t1=1000&width=10", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(json_array_size(json_object_get(j, "rows")), 0);
    json_decref(j);
    j = get_stats(web_port(w), "/api/stats?run=0");
    TEST_ASSERT(j);
    TEST_EQ_INT(json_array_size(json_object_get(j, "devices")), 0);
    json_decref(j);
    j = get_json(web_port(w), "/api/kernel?run=0&id=0", 404);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_json(web_port(w), "/api/find?run=0&q=x", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "total"), 0);
    json_decref(j);
    web_stop(w);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* ---------------------------------------------------------------- concurrency profile per pixel */

static int load_traces(const char *dir, store_run **ppRun, analysis **ppAn);

/* load_demo: the bundled H200 recording samples/spin/traces/<sub> (every *.db there), finished
 * and analysed. 0, or -1 with a message. */
static int load_demo(const char *sub, store_run **ppRun, analysis **ppAn)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/samples/spin/traces/%s", TLVIEW_SOURCE_DIR, sub);
    return load_traces(dir, ppRun, ppAn);
}

/* load_traces: every *.db of the folder `dir`, finished and analysed (load_demo()). */
static int load_traces(const char *dir, store_run **ppRun, analysis **ppAn)
{
    char path[2048];
    store_run *run = store_run_new();
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".db") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (store_run_load(run, path) != 0) {
            fprintf(stderr, "%s\n", store_run_errmsg(run));
            n = -1;
            break;
        }
        n++;
    }
    if (d)
        closedir(d);
    if (n <= 0 || store_run_finish(run) != 0 || analysis_run(run, NULL, ppAn) != ANALYSIS_OK) {
        fprintf(stderr, "load_demo %s: %d files\n", dir, n);
        store_run_free(run);
        return -1;
    }
    *ppRun = run;
    return 0;
}

/* timeline_lane: web_timeline() of r over [t0, t1) (relative ns) parsed, and its lane 0. */
static json_t *timeline_lane(const web_runix *r, int64_t t0, int64_t t1, uint32_t width,
                             json_t **lane)
{
    web_buf b = {0};
    if (web_timeline(r, 0, t0, t1, width, 0, NULL, 0, &b, NULL) != 0) {
        free(b.s);
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(b.s, b.len, 0, &e);
    free(b.s);
    *lane = json_array_get(json_object_get(j, "lanes"), 0);
    return j;
}

/* Zoomed in on the demo (four 1.92 s kernels of four processes, time-sliced, all in flight from
 * 6.8 ms on): every pixel is busy with 4 processes. Found 2026-12-01 by the adversarial pass:
 * with bin edges in double absolute ns (~1.8e18, 256 ns apart), [100 ms, 100.01 ms) gave busy 0
 * and mean 0 beside max 4, and [100 ms, 101 ms) busy 1024 permille and mean 4.1 > max 4. */
int test_web_profile_demo_zoom(void)
{
    store_run *run;
    analysis *an;
    TEST_EQ_INT(load_demo("mps-off/n4", &run, &an), 0);
    TEST_EQ_INT(run->nkernels, 4);
    web_run src = {"demo", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
    const int64_t t1s[] = {100010000, 101000000, 100000010, 100001000, 1000000000};
    for (size_t c = 0; c < sizeof t1s / sizeof *t1s; c++) {
        json_t *lane, *j = timeline_lane(&r, 100000000, t1s[c], 1000, &lane);
        TEST_ASSERT(j && lane);
        json_t *busy = json_object_get(lane, "busy"), *mean = json_object_get(lane, "conc_mean");
        json_t *mx = json_object_get(lane, "conc_max");
        TEST_EQ_INT(json_array_size(busy), 1000);
        for (size_t i = 0; i < 1000; i++) {
            if (json_integer_value(json_array_get(busy, i)) != 1000 ||
                json_number_value(json_array_get(mean, i)) != 4.0 ||
                json_integer_value(json_array_get(mx, i)) != 4)
                fprintf(stderr, "t1 %lld pixel %zu: busy %lld mean %g max %lld\n",
                        (long long)t1s[c], i,
                        (long long)json_integer_value(json_array_get(busy, i)),
                        json_number_value(json_array_get(mean, i)),
                        (long long)json_integer_value(json_array_get(mx, i)));
            TEST_EQ_INT(json_integer_value(json_array_get(busy, i)), 1000);
            TEST_NEAR(json_number_value(json_array_get(mean, i)), 4.0, 0);
            TEST_EQ_INT(json_integer_value(json_array_get(mx, i)), 4);
        }
        json_decref(j);
    }
    /* and the analysis itself, on the absolute axis */
    analysis_bin bins[1000];
    TEST_EQ_INT(
        analysis_profile_bins(an, 0, r.origin + 100000000, r.origin + 101000000, bins, 1000),
        ANALYSIS_OK);
    for (int i = 0; i < 1000; i++) {
        TEST_NEAR(bins[i].busy, 1.0, 0);
        TEST_NEAR(bins[i].mean_processes, 4.0, 0);
        TEST_EQ_INT(bins[i].max_processes, 4);
    }
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* exact_pixel: brute force over the kernels of lane 0 (one stream per process, so processes in
 * flight = kernels in flight): the busy share, mean and peak of processes in flight over [a, b),
 * or at the instant a when a == b. */
static void exact_pixel(const store_run *run, int64_t a, int64_t b, double *busy, double *mean,
                        int *peak)
{
    int64_t len = b > a ? b - a : 1, sum = 0;
    /* the union: sweep the starts and ends inside the pixel */
    int64_t covered = 0, x = a;
    *peak = 0;
    for (;;) {
        int n = 0;
        int64_t next = b > a ? b : a + 1;
        for (uint64_t i = 0; i < run->nkernels; i++) {
            const store_kernel *k = &run->kernels[i];
            if (k->end <= k->start)
                continue;
            if (k->start <= x && k->end > x)
                n++;
            if (k->start > x && k->start < next)
                next = k->start;
            if (k->end > x && k->end < next)
                next = k->end;
        }
        if (n > *peak)
            *peak = n;
        covered += n ? next - x : 0;
        sum += n * (next - x);
        x = next;
        if (x >= (b > a ? b : a + 1))
            break;
    }
    *busy = (double)covered / (double)len;
    *mean = (double)sum / (double)len;
}

/* check_ranges: `n` random views of r (seeded) against brute force: busy share and mean exact up
 * to the rounding of the answer, the peak exact; and, whatever the path (grid or direct), busy
 * <= 1000 permille and mean <= max. 0 or 1. */
static int check_ranges(const web_runix *r, const store_run *run, int n, unsigned seed, int exact)
{
    srand(seed);
    int64_t span = run->t_end - run->t_begin;
    for (int c = 0; c < n; c++) {
        int64_t t0 = -span / 10 + (int64_t)((double)rand() / RAND_MAX * (double)span * 1.1);
        int64_t len = (int64_t)exp((double)rand() / RAND_MAX * log((double)span * 2));
        len = len < 1 ? 1 : len;
        uint32_t width = 1 + (uint32_t)(rand() % 2000);
        json_t *lane, *j = timeline_lane(r, t0, t0 + len, width, &lane);
        TEST_ASSERT(j && lane);
        json_t *busy = json_object_get(lane, "busy"), *mean = json_object_get(lane, "conc_mean");
        json_t *mx = json_object_get(lane, "conc_max");
        TEST_EQ_INT(json_array_size(busy), width);
        for (uint32_t i = 0; i < width; i++) {
            json_int_t bp = json_integer_value(json_array_get(busy, i));
            json_int_t m = json_integer_value(json_array_get(mx, i));
            double me = json_number_value(json_array_get(mean, i));
            if (bp < 0 || bp > 1000 || me > (double)m || me < 0)
                fprintf(stderr, "view [%lld, %lld) width %u pixel %u: busy %lld mean %g max %lld\n",
                        (long long)t0, (long long)(t0 + len), width, i, (long long)bp, me,
                        (long long)m);
            TEST_ASSERT(bp >= 0 && bp <= 1000);
            TEST_ASSERT(me >= 0 && me <= (double)m);
            if (!exact)
                continue;
            int64_t a = r->origin + pixel_edge(t0, t0 + len, width, i);
            int64_t b = r->origin + pixel_edge(t0, t0 + len, width, i + 1);
            double eb, em;
            int ep;
            exact_pixel(run, a, b, &eb, &em, &ep);
            if (llabs(bp - (json_int_t)llround(eb * 1000)) > 1 || fabs(me - em) > 0.006 || m != ep)
                fprintf(stderr,
                        "view [%lld, %lld) width %u pixel %u [%lld, %lld): busy %lld mean %g max "
                        "%lld, exact %g %g %d\n",
                        (long long)t0, (long long)(t0 + len), width, i, (long long)(a - r->origin),
                        (long long)(b - r->origin), (long long)bp, me, (long long)m, eb * 1000, em,
                        ep);
            TEST_ASSERT(llabs(bp - (json_int_t)llround(eb * 1000)) <= 1);
            TEST_NEAR(me, em, 0.006);
            TEST_EQ_INT(m, ep);
        }
        json_decref(j);
    }
    return 0;
}

/* Random views of the demo and of the synthetic run (realtime axis, 1.7e18 ns) against brute
 * force, from 1 ns (pixels narrower than a nanosecond) to twice the run; then with the cached
 * grid, where only the bounds hold. */
int test_web_profile_random_ranges(void)
{
    store_run *demo;
    analysis *dan;
    TEST_EQ_INT(load_demo("mps-off/n4", &demo, &dan), 0);
    store_run *syn = make_run(1.0, 0);
    analysis *san;
    TEST_EQ_INT(analysis_run(syn, NULL, &san), ANALYSIS_OK);
    web_run src[2] = {{"demo", demo, dan}, {"syn", syn, san}};
    for (int k = 0; k < 2; k++) {
        web_runix r;
        char err[128];
        TEST_EQ_INT(web_runix_build(&r, &src[k], err, sizeof err), 0);
        TEST_EQ_INT(check_ranges(&r, src[k].run, 150, 11 + (unsigned)k, 1), 0);
        TEST_EQ_INT(web_runix_build_grids(&r), 0);
        TEST_EQ_INT(check_ranges(&r, src[k].run, 300, 23 + (unsigned)k, 0), 0);
        web_runix_free(&r);
    }
    analysis_free(dan);
    store_run_free(demo);
    analysis_free(san);
    store_run_free(syn);
    return 0;
}

/* ---------------------------------------------------------------- hardening */

/* Malformed parameters are 400 with a JSON message, never an answer or a 500. Found 2026-12-01
 * by the adversarial pass: find with t1 < t0 answered, t0=0x10 was read as 16, q=a%00b searched
 * "a", /api/kernel?id=%ff answered 500 "out of memory" (the echoed byte broke the JSON). */
int test_web_strict_params(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const char *bad[] = {
        "/api/find?run=0&q=k&t0=10&t1=5",
        "/api/find?run=0&q=k&t0=10&t1=10",
        "/api/timeline?run=0&t0=0x10&t1=100&width=10",
        "/api/timeline?run=0&t0=1e3&t1=10000&width=10",
        "/api/timeline?run=0&t0=1.5&t1=10&width=10",
        "/api/timeline?run=0&t0=%2B5&t1=10&width=10",
        "/api/timeline?run=0&t0=+5&t1=10&width=10",
        "/api/timeline?run=0&t0=-4e18&t1=10&width=10",
        "/api/timeline?run=0&t0=0&t1=99999999999999999999&width=10",
        "/api/timeline?run=0&t0=0&t1=4000000000000000001&width=10",
        "/api/timeline?run=0&t0=-&t1=10&width=10",
        "/api/timeline?run=0&t0=&t1=10&width=10",
        "/api/timeline?run=0&t0=0&t1=10&width=10&rows=0,",
        "/api/timeline?run=0&t0=0&t1=10&width=10&rows=,0",
        "/api/timeline?run=0&t0=0&t1=10&width=10&rows=0x1",
        "/api/timeline?run=0&t0=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%C3%A9&t1=10&width=10",
        "/api/find?run=0&q=a%00b",
        "/api/find?run=0&q=%ff",
        "/api/find?run=0&q=%c3",
        "/api/find?run=0&q=%ed%a0%80",
        "/api/find?run=0&q=%c0%af",
        "/api/find?run=0&q=%f4%90%80%80",
        "/api/find?run=0&q=a%01b",
        "/api/find?run=0&q=a%7fb",
        "/api/find?run=0&q=%zz",
        "/api/find?run=0&q=%4",
        "/api/kernel?run=0&id=%ff",
        "/api/kernel?run=0&id=1%00",
        "/api/kernel?run=0&i%00d=1",
        "/api/kernel?run=0&%ff=1",
        "/api/runs?a1=1&a2=1&a3=1&a4=1&a5=1&a6=1&a7=1&a8=1&a9=1&a10=1&a11=1&a12=1&a13=1&a14=1&"
        "a15=1&a16=1&a17=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = get_json(f.port, bad[i], 400);
        if (!j || !json_is_string(json_object_get(j, "error")))
            fprintf(stderr, "case %zu: %s\n", i, bad[i]);
        TEST_ASSERT(j);
        TEST_ASSERT(json_is_string(json_object_get(j, "error")));
        json_decref(j);
    }
    /* the messages name the problem */
    const char *exact[][2] = {
        {"/api/kernel?run=0&id=%ff",
         "parameter 'id': its value holds NUL, a control character or invalid UTF-8"},
        {"/api/timeline?run=0&t0=0x10&t1=100&width=10",
         "parameter 't0' must be a decimal integer in [-4000000000000000000, "
         "4000000000000000000], got '0x10'"},
        {"/api/find?run=0&q=k&t0=10&t1=5", "t1 must be greater than t0 (got t0 10, t1 5)"},
        /* quotes cut inside a UTF-8 sequence end in U+FFFD, as every string of the view (they
         * ended in '?' before 2026-12-02) */
        {"/api/timeline?run=0&t0=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%C3%A9&t1=10&width=10",
         "parameter 't0' must be a decimal integer in [-4000000000000000000, "
         "4000000000000000000], got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xef\xbf\xbd'"},
        {"/api/runs?aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%C3%A9=1",
         "unknown parameter 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xef\xbf\xbd'"},
        {"/api/find?run=0&q=%zz", "parameter 2: malformed %-escape"},
        {"/api/runs?a1=1&a2=1&a3=1&a4=1&a5=1&a6=1&a7=1&a8=1&a9=1&a10=1&a11=1&a12=1&a13=1&a14=1&"
         "a15=1&a16=1&a17=1",
         "too many parameters (17; at most 16)"},
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        json_t *j = get_json(f.port, exact[i][0], 400);
        TEST_ASSERT(j);
        TEST_EQ_STR(json_string_value(json_object_get(j, "error")), exact[i][1]);
        json_decref(j);
    }
    /* well-formed ones still answer: leading zeros, '+' as a space, UTF-8, empty pairs */
    const char *good[] = {
        "/api/timeline?run=0&t0=-0&t1=0010&width=010&",
        "/api/find?run=0&q=caf%C3%A9",
        "/api/find?run=0&q=k+A&&limit=5",
        "/api/find?run=0&q=k&t0=-4000000000000000000&t1=4000000000000000000",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        json_t *j = get_json(f.port, good[i], 200);
        if (!j)
            fprintf(stderr, "good case %zu: %s\n", i, good[i]);
        TEST_ASSERT(j);
        json_decref(j);
    }
    json_t *j = get_json(f.port, "/api/find?run=0&q=k+A", 200);
    TEST_ASSERT(j);
    TEST_EQ_STR(json_string_value(json_object_get(j, "q")), "k A");
    json_decref(j);
    teardown(&f);
    return 0;
}

/* ms_since: milliseconds from *t0 to now. */
static long ms_since(const struct timeval *t0)
{
    struct timeval t;
    gettimeofday(&t, NULL);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_usec - t0->tv_usec) / 1000;
}

/* A request with hundreds of short parameters is answered at once. Found 2026-12-01: from ~490
 * of them libmicrohttpd 0.9.75 filled its connection pool, lost its own error answer and held the
 * connection until the 30 s timeout. */
int test_web_many_params(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    const int counts[] = {490, 2000, 17};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        char *req = malloc(32 * 1024);
        int n = snprintf(req, 64, "GET /api/runs?");
        for (int i = 0; i < counts[c] && n < 30 * 1024; i++)
            n += snprintf(req + n, 32, "%sa%d=1", i ? "&" : "", i);
        snprintf(req + n, 64, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        struct timeval t0;
        gettimeofday(&t0, NULL);
        response r;
        int rc = http_raw_t(f.port, req, &r, 15); /* the bug held it 30 s */
        long ms = ms_since(&t0);
        fprintf(stderr, "%d parameters: %s %d in %ld ms\n", counts[c], rc ? "no answer" : "status",
                r.status, ms);
        free(req);
        TEST_EQ_INT(rc, 0);
        TEST_EQ_INT(r.status, 400);
        TEST_ASSERT(strstr(r.body, "too many parameters") != NULL);
        TEST_ASSERT(ms < 15000); /* wide: a loaded 2-core machine under ASan */
        free(r.head);
    }
    teardown(&f);
    return 0;
}

/* expect_status: sends `req` (a full request) and compares the status; the body must be JSON with
 * an "error" when the status is not 200. */
static int expect_status(unsigned port, const char *req, int status, response *keep)
{
    response r;
    if (http_raw(port, req, &r) != 0) {
        fprintf(stderr, "no answer to:\n%s", req);
        return 1;
    }
    int bad = r.status != status;
    if (!bad && status != 200) {
        json_error_t e;
        json_t *j = json_loadb(r.body, r.len, 0, &e);
        bad = !json_is_string(json_object_get(j, "error"));
        json_decref(j);
    }
    if (bad)
        fprintf(stderr, "status %d (want %d), body %.200s, to:\n%s", r.status, status, r.body, req);
    if (keep && !bad)
        *keep = r;
    else
        free(r.head);
    return bad;
}

/* DNS rebinding: only requests that name the server are answered. Found 2026-12-01: with
 * "Host: evil.example" /api/runs answered with exe paths, argv and host names. */
int test_web_host_origin(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    char req[512];
    const char *ok_hosts[] = {"127.0.0.1",      "127.0.0.1:%u", "localhost:%u",
                              "LocalHost:9999", "[::1]:%u",     "[::1]"};
    for (size_t i = 0; i < sizeof ok_hosts / sizeof *ok_hosts; i++) {
        char host[64];
        snprintf(host, sizeof host, ok_hosts[i], f.port);
        snprintf(req, sizeof req, "GET /api/runs HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                 host);
        TEST_EQ_INT(expect_status(f.port, req, 200, NULL), 0);
    }
    const char *bad_hosts[] = {"evil.example",  "evil.example:%u", "127.0.0.1.evil.example:%u",
                               "localhost.:%u", "127.0.0.2:%u",    "[::2]:%u"};
    const char *paths[] = {"/api/runs", "/", "/main.js", "/api/stats"};
    for (size_t i = 0; i < sizeof bad_hosts / sizeof *bad_hosts; i++)
        for (size_t k = 0; k < sizeof paths / sizeof *paths; k++) {
            char host[64];
            snprintf(host, sizeof host, bad_hosts[i], f.port);
            snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                     paths[k], host);
            TEST_EQ_INT(expect_status(f.port, req, 421, NULL), 0);
        }
    /* no Host in HTTP/1.1, two of them, malformed ones: 400; HTTP/1.0 may omit it */
    TEST_EQ_INT(
        expect_status(f.port, "GET /api/runs HTTP/1.1\r\nConnection: close\r\n\r\n", 400, NULL), 0);
    TEST_EQ_INT(expect_status(f.port,
                              "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
                              "Connection: close\r\n\r\n",
                              400, NULL),
                0);
    const char *malformed[] = {"127.0.0.1:", "127.0.0.1:123456", "127.0.0.1:8a", "[::1",
                               "user@127.0.0.1"};
    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
        snprintf(req, sizeof req, "GET /api/runs HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                 malformed[i]);
        TEST_EQ_INT(expect_status(f.port, req, 400, NULL), 0);
    }
    TEST_EQ_INT(expect_status(f.port, "GET /api/runs HTTP/1.0\r\n\r\n", 200, NULL), 0);
    /* Origin, when sent, is this very origin */
    snprintf(req, sizeof req,
             "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: http://127.0.0.1:%u\r\n"
             "Connection: close\r\n\r\n",
             f.port, f.port);
    TEST_EQ_INT(expect_status(f.port, req, 200, NULL), 0);
    const char *bad_origins[] = {"http://evil.example", "null", "http://localhost:%u",
                                 "https://evil.example:%u", "http://127.0.0.1:1"};
    for (size_t i = 0; i < sizeof bad_origins / sizeof *bad_origins; i++) {
        char origin[64];
        snprintf(origin, sizeof origin, bad_origins[i], f.port);
        snprintf(req, sizeof req,
                 "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: %s\r\n"
                 "Connection: close\r\n\r\n",
                 f.port, origin);
        TEST_EQ_INT(expect_status(f.port, req, 403, NULL), 0);
    }
    TEST_EQ_INT(expect_status(f.port,
                              "GET /api/runs HTTP/1.0\r\nOrigin: http://evil.example\r\n\r\n", 403,
                              NULL),
                0);
    /* more names by allow_hosts */
    web_run wr = {"x", f.run[0], f.an[0]};
    const char *more[] = {"Tlview.Example", NULL};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.no_token = 1; /* as the fixture's */
    o.allow_hosts = more;
    web *w2;
    char err[128];
    TEST_EQ_INT(web_start(&o, &wr, 1, &w2, err, sizeof err), WEB_OK);
    TEST_EQ_INT(expect_status(web_port(w2),
                              "GET /api/runs HTTP/1.1\r\nHost: tlview.example\r\n"
                              "Connection: close\r\n\r\n",
                              200, NULL),
                0);
    TEST_EQ_INT(expect_status(web_port(w2),
                              "GET /api/runs HTTP/1.1\r\nHost: evil.example\r\n"
                              "Connection: close\r\n\r\n",
                              421, NULL),
                0);
    web_stop(w2);
    teardown(&f);
    return 0;
}

/* token_refused: the requests that must get 403 from a server requiring `token` (on `port`) for
 * `path`: none, a wrong one in the query, a cookie one character short, the right one in the
 * cookie of another port, a wrong Bearer; the checks that failed (each printed). */
static int token_refused(unsigned port, const char *token, const char *path)
{
    char req[512], wrong[80];
    snprintf(wrong, sizeof wrong, "%s", token);
    char *last = wrong + strlen(wrong) - 1;
    *last = *last == '0' ? '1' : '0'; /* another token of the same length */
    int fails = 0;
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    fails += expect_status(port, req, 403, NULL);
    snprintf(req, sizeof req, "GET %s?token=%s HTTP/1.0\r\n\r\n", path, wrong);
    fails += expect_status(port, req, 403, NULL);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nCookie: tlview_token_%u=%.*s\r\n\r\n", path, port,
             (int)strlen(token) - 1, token);
    fails += expect_status(port, req, 403, NULL);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nCookie: tlview_token_%u=%s\r\n\r\n", path,
             port == 1 ? 2 : 1, token);
    fails += expect_status(port, req, 403, NULL);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n", path, wrong);
    fails += expect_status(port, req, 403, NULL);
    return fails;
}

/* token_taken: the requests a server requiring `token` (on `port`) must answer for `path`: the
 * right one in the query (which sets the cookie), in the cookie alone, in a Bearer header; the
 * checks that failed (each printed). */
static int token_taken(unsigned port, const char *token, const char *path)
{
    char req[512], want[160];
    response r;
    int fails = 0;
    snprintf(req, sizeof req, "GET %s?token=%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path, token);
    if (expect_status(port, req, 200, &r) == 0) {
        snprintf(want, sizeof want,
                 "Set-Cookie: tlview_token_%u=%s; Path=/; HttpOnly; SameSite=Strict\r\n", port,
                 token);
        if (!strstr(r.head, want)) {
            fprintf(stderr, "GET %s?token=%s: no '%s' in:\n%s\n", path, token, want, r.head);
            fails++;
        }
        free(r.head);
    } else {
        fails++;
    }
    snprintf(req, sizeof req,
             "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nCookie: a=b; tlview_token_%u=%s; c=d\r\n\r\n",
             path, port, token);
    fails += expect_status(port, req, 200, NULL);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n", path, token);
    fails += expect_status(port, req, 200, NULL);
    return fails;
}

/* The paths token_refused() and token_taken() are asked: the page, the API, an asset. */
static const char *const token_paths[] = {"/", "/api/runs", "/main.js"};

/* A token on loopback too, a new one at each start, as Jupyter's: on a shared machine (a cluster's
 * login node) every user can reach 127.0.0.1, and the API shows every process's argv. Without
 * it, or with a wrong one, the page, the API and the assets answer 403; with it in the query 200
 * and the cookie the page's own requests carry; with the cookie alone 200. Found 2026-12-08 by
 * the second adversarial pass (issue 28): on loopback there was no token at all. */
int test_web_token_loopback(void)
{
    store_run *run = make_run(1.0, 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"x", run, an};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    web *w, *w2;
    char err[128];
    TEST_EQ_STR(o.bind, "127.0.0.1");
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    TEST_EQ_INT(web_start(&o, &wr, 1, &w2, err, sizeof err), WEB_OK);
    int fails = 0;
    for (size_t i = 0; i < sizeof token_paths / sizeof *token_paths; i++) {
        char req[256];
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n",
                 token_paths[i], web_port(w));
        fails += expect_status(web_port(w), req, 403, NULL);
    }
    TEST_EQ_INT(fails, 0);
    const char *t = web_token(w);
    TEST_ASSERT(t != NULL);
    TEST_EQ_INT(strlen(t), 48);
    TEST_EQ_INT(strspn(t, "0123456789abcdef"), 48);
    TEST_ASSERT(strcmp(t, web_token(w2)) != 0); /* a new one at each start */
    for (size_t i = 0; i < sizeof token_paths / sizeof *token_paths; i++) {
        fails += token_refused(web_port(w), t, token_paths[i]);
        fails += token_taken(web_port(w), t, token_paths[i]);
        /* the other server's token is not this one's */
        char req[256];
        snprintf(req, sizeof req, "GET %s?token=%s HTTP/1.0\r\n\r\n", token_paths[i],
                 web_token(w2));
        fails += expect_status(web_port(w), req, 403, NULL);
    }
    web_stop(w2);
    web_stop(w);
    analysis_free(an);
    store_run_free(run);
    TEST_EQ_INT(fails, 0);
    return 0;
}

/* web_options.no_token (tlview serve --no-token): on loopback, every path answered without a
 * token and no cookie set; refused beyond loopback and beside a token. web_loopback() tells the
 * addresses apart. */
int test_web_token_opt_out(void)
{
    store_run *run = make_run(1.0, 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"x", run, an};
    web_options o;
    web_options_default(&o);
    TEST_EQ_INT(o.no_token, 0);
    o.port = 0;
    o.no_token = 1;
    web *w;
    char err[256], req[256];
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    TEST_ASSERT(web_token(w) == NULL);
    int fails = 0;
    for (size_t i = 0; i < sizeof token_paths / sizeof *token_paths; i++) {
        response r;
        snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", token_paths[i]);
        if (expect_status(web_port(w), req, 200, &r) == 0) {
            if (strstr(r.head, "Set-Cookie")) {
                fprintf(stderr, "%s: a cookie without a token:\n%s\n", token_paths[i], r.head);
                fails++;
            }
            free(r.head);
        } else {
            fails++;
        }
    }
    web_stop(w);
    TEST_EQ_INT(fails, 0);
    /* beyond loopback: refused, and why */
    o.bind = "0.0.0.0";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_EINVAL);
    TEST_ASSERT(w == NULL);
    TEST_EQ_STR(err, "--no-token is refused beyond loopback (--bind 0.0.0.0): anyone who can "
                     "reach the port would read the traces' host names, paths and command lines");
    /* beside a token */
    o.bind = "127.0.0.1";
    o.token = "0123456789abcdef-TOKEN";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_EINVAL);
    TEST_EQ_STR(err, "web_start: a token and no token at once");
    const struct {
        const char *addr;
        int loopback;
    } addrs[] = {{"127.0.0.1", 1}, {"127.1.2.3", 1},        {"::1", 1},
                 {"0:0::1", 1},    {"::ffff:127.0.0.1", 1}, {"0.0.0.0", 0},
                 {"::", 0},        {"10.0.0.1", 0},         {"::ffff:10.0.0.1", 0},
                 {"128.0.0.1", 0}, {"localhost", -1},       {"127.0.0.1:80", -1},
                 {"", -1}};
    for (size_t i = 0; i < sizeof addrs / sizeof *addrs; i++) {
        if (web_loopback(addrs[i].addr) != addrs[i].loopback)
            fprintf(stderr, "web_loopback(\"%s\") = %d, want %d\n", addrs[i].addr,
                    web_loopback(addrs[i].addr), addrs[i].loopback);
        TEST_EQ_INT(web_loopback(addrs[i].addr), addrs[i].loopback);
    }
    TEST_EQ_INT(web_loopback(NULL), -1);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* The token given (web_options.token): malformed ones refused; refused without it; a right one in
 * the query sets the cookie the page's requests carry; a Bearer header or the cookie also do; a
 * wrong one never. Beyond loopback, a random one. */
int test_web_token(void)
{
    store_run *run = make_run(1.0, 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"x", run, an};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    web *w;
    char err[128], req[512];
    o.token = "short";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_EINVAL);
    o.token = "0123456789abcdef/";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_EINVAL);
    o.token = "0123456789abcdef-TOKEN";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    TEST_EQ_STR(web_token(w), "0123456789abcdef-TOKEN");
    unsigned port = web_port(w);
    int fails = 0;
    for (size_t i = 0; i < sizeof token_paths / sizeof *token_paths; i++) {
        fails += token_refused(port, "0123456789abcdef-TOKEN", token_paths[i]);
        fails += token_taken(port, "0123456789abcdef-TOKEN", token_paths[i]);
    }
    TEST_EQ_INT(fails, 0);
    response r;
    TEST_EQ_INT(expect_status(port, "GET /?token=0123456789abcdef-TOKEN HTTP/1.0\r\n\r\n", 200, &r),
                0);
    TEST_ASSERT(strstr(r.body, "<script src=\"app.js\">") != NULL);
    free(r.head);
    /* the token parameter is not one of the API's: it is taken before */
    snprintf(req, sizeof req,
             "GET /api/timeline?run=0&t0=0&t1=1000&width=10&token=0123456789abcdef-TOKEN "
             "HTTP/1.0\r\n\r\n");
    TEST_EQ_INT(expect_status(port, req, 200, NULL), 0);
    snprintf(req, sizeof req,
             "GET /api/timeline?run=0&t0=0&t1=1000&width=10 HTTP/1.0\r\nCookie: a=b; "
             "tlview_token_%u=0123456789abcdef-TOKEN; c=d\r\n\r\n",
             port);
    TEST_EQ_INT(expect_status(port, req, 200, NULL), 0);
    web_stop(w);
    /* beyond loopback (every interface): a random token, required */
    o.token = NULL;
    o.bind = "0.0.0.0";
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    const char *t = web_token(w);
    TEST_ASSERT(t != NULL);
    TEST_EQ_INT(strlen(t), 48);
    TEST_EQ_INT(strspn(t, "0123456789abcdef"), 48);
    TEST_EQ_INT(
        expect_status(web_port(w), "GET /api/runs HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", 403, NULL),
        0);
    snprintf(req, sizeof req, "GET /api/runs?token=%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", t);
    TEST_EQ_INT(expect_status(web_port(w), req, 200, NULL), 0);
    /* the host name is one of its names there */
    char host[256] = "";
    TEST_EQ_INT(gethostname(host, sizeof host - 1), 0);
    snprintf(req, sizeof req,
             "GET /api/runs?token=%s HTTP/1.1\r\nHost: %s:%u\r\n"
             "Connection: close\r\n\r\n",
             t, host, web_port(w));
    TEST_EQ_INT(expect_status(web_port(w), req, 200, NULL), 0);
    web_stop(w);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* raise_nofile: the open-file limit raised to `want` when the hard limit allows; 0, or -1. */
static int raise_nofile(rlim_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    if (rl.rlim_cur >= want)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
        return -1;
    rl.rlim_cur = want;
    return setrlimit(RLIMIT_NOFILE, &rl);
}

/* conn_state: what the server has done with a connection that sent the start of a request:
 * 0 closed it (EOF or reset), 1 holds it (its bytes acknowledged: a socket on the server's side
 * has them), 2 not known yet (bytes not acknowledged: the server's kernel has no socket for it,
 * e.g. a SYN cookie's handshake whose last ACK was dropped while the accept queue was full; the
 * client believes it is connected until its retransmitted bytes are taken or refused). */
static int conn_state(int fd)
{
    struct pollfd pf = {fd, POLLIN, 0};
    char c;
    if (poll(&pf, 1, 0) > 0 && (!(pf.revents & POLLIN) || recv(fd, &c, 1, MSG_PEEK) <= 0))
        return 0;
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0 || ti.tcpi_state != TCP_ESTABLISHED)
        return 0;
    return ti.tcpi_unacked ? 2 : 1;
}

/* slow_clients: opens n connections to port from 127.0.0.<first> onwards (naddr source addresses
 * in turn: Linux routes all of 127/8 to loopback), each sending the start of a request and never
 * the end; once the server has decided on every one (listen_fd: its listening socket), times a
 * normal GET from 127.0.0.1 (3 s timeouts). Sets *status (0: no answer), *ms, and *held: how many
 * of the n the server still holds open. 0, or -1 when the sockets cannot be made here. */
static int slow_clients(unsigned port, int listen_fd, int n, uint32_t first, int naddr, int *status,
                        long *ms, int *held)
{
    int *fds = malloc(sizeof *fds * (size_t)n);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    for (int i = 0; i < n; i++) {
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl(0x7f000000u + first + (uint32_t)(i % naddr));
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&src, sizeof src) != 0 ||
            (connect(fds[i], (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS)) {
            fprintf(stderr, "socket %d: %s\n", i, strerror(errno));
            for (int k = 0; k <= i; k++)
                if (fds[k] >= 0)
                    close(fds[k]);
            free(fds);
            return -1;
        }
    }
    /* every connect() done, then the start of a request on each */
    struct timeval t0;
    gettimeofday(&t0, NULL);
    for (int i = 0; i < n && ms_since(&t0) < 8000; i++) {
        struct pollfd pf = {fds[i], POLLOUT, 0};
        if (poll(&pf, 1, 100) == 0)
            i--;
    }
    for (int i = 0; i < n; i++)
        (void)!write(fds[i], "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n", 33);
    /* let the server decide on them all: no connection whose bytes wait to be taken, the listening
     * socket's accept queue empty (TCP_INFO's unacked on a listening socket) and no connection
     * closed, 5 checks in a row. A connect() that succeeded says nothing: when the accept queue
     * overflows (1,500 at once against a backlog of 256, more so when the server accepts slowly,
     * under ASan), Linux answers with SYN cookies (no state kept) and drops the handshake's last
     * ACK while the queue is full, so the client holds a connection the server has never seen;
     * it reaches the server, and is closed for being over the limit, only when its bytes are
     * sent again. Counted as held, those made 137 against the limit of 128 (CI under ASan,
     * 2026-12-01); reproduced 2026-12-02: 159 and 215 counted, of which 31 and 87 had their
     * bytes unacknowledged, while the server's kernel and libmicrohttpd held exactly 128. */
    int waited = 0, unknown = n;
    for (int quiet = 0, closed = -1; quiet < 5 && ms_since(&t0) < 20000;) {
        int c = 0, u = 0;
        for (int i = 0; i < n; i++) {
            int st = conn_state(fds[i]);
            c += st == 0, u += st == 2;
        }
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        int empty = getsockopt(listen_fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0 || !ti.tcpi_unacked;
        if (closed < 0)
            waited = u;
        quiet = empty && !u && c == closed ? quiet + 1 : 0;
        closed = c, unknown = u;
        usleep(20000);
    }
    long settle = ms_since(&t0);
    gettimeofday(&t0, NULL);
    response r;
    int rc = http_raw_t(port, "GET /api/runs HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", &r, 15);
    *ms = ms_since(&t0);
    *status = rc ? 0 : r.status;
    if (!rc)
        free(r.head);
    *held = 0;
    for (int i = 0; i < n; i++) {
        *held += conn_state(fds[i]) != 0; /* one still not known (the wait ran out) counts */
        close(fds[i]);
    }
    free(fds);
    fprintf(stderr,
            "%d slow connections from %d addresses, decided in %ld ms (%d waited for the server "
            "to take their bytes, %d never did), %d held by the server; normal GET: %d in %ld ms\n",
            n, naddr, settle, waited, unknown, *held, *status, *ms);
    return 0;
}

/* Slowloris: 1,500 connections that never finish a request, from one address or from 20, do not
 * keep the server from answering another client. Found 2026-12-01: a normal GET waited for the
 * 30 s timeout (no limit per address, and the 1,020 connections MHD allows by default were all
 * taken). */
int test_web_slowloris(void)
{
    enum { N = 1500 };
    if (raise_nofile(4096) != 0) /* both ends of every connection are in this process */
        return test_cannot_run("cannot open 4096 files (ulimit -n)");
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    int status, held;
    long ms;
    if (slow_clients(f.port, f.w->fd, N, 2, 1, &status, &ms, &held) != 0) {
        teardown(&f);
        return test_cannot_run("cannot open %d connections from 127.0.0.2", N);
    }
    TEST_EQ_INT(status, 200);
    TEST_ASSERT(ms < 15000);  /* the bug held it 30 s; wide for a loaded machine under ASan */
    TEST_ASSERT(held <= 128); /* the limit per address: the others were closed at once */
    TEST_EQ_INT(slow_clients(f.port, f.w->fd, N, 10, 20, &status, &ms, &held), 0);
    TEST_EQ_INT(status, 200);
    TEST_ASSERT(ms < 15000);
    TEST_EQ_INT(held, N);
    teardown(&f);
    return 0;
}

/* A connection that sends nothing is closed after the idle timeout (10 s; it was 30 s). */
int test_web_idle_timeout(void)
{
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f.port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    TEST_EQ_INT(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    (void)!write(fd, "GET / HTTP/1.1\r\n", 16);
    struct timeval t0;
    gettimeofday(&t0, NULL);
    struct pollfd pf = {fd, POLLIN, 0};
    int n = poll(&pf, 1, 25000); /* the bug's 30 s never ends it */
    long ms = ms_since(&t0);
    char c;
    ssize_t k = n > 0 ? recv(fd, &c, 1, 0) : -1;
    fprintf(stderr, "idle connection: %s after %ld ms\n", n > 0 && k <= 0 ? "closed" : "open", ms);
    close(fd);
    TEST_ASSERT(n > 0 && k <= 0);
    TEST_ASSERT(ms >= 9000 && ms < 25000); /* wide: a loaded 2-core machine under ASan */
    teardown(&f);
    return 0;
}

/* `tlview serve --bind 0.0.0.0`: a warning on stderr, the URL with the machine's name and the
 * token, and the token required. Found 2026-12-01: it listened on every interface without a
 * word, printed a 127.0.0.1 URL and answered anyone. */
int test_web_serve_bind_all(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char a[1024], line[1024], warn[1024], host[256] = "", req[512];
    TEST_EQ_INT(save_run(test_tmpdir(), "a.db", 1.0, 0, a, sizeof a), 0);
    TEST_EQ_INT(gethostname(host, sizeof host - 1), 0);
    char *args[] = {"tlview", "serve",        "--bind",        "0.0.0.0", "--port",
                    "0",      "--allow-host", "alias.example", a,         NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    TEST_ASSERT(read_line(err, warn, sizeof warn) > 0);
    char want[300], token[64] = "";
    unsigned port = 0;
    snprintf(want, sizeof want, "http://%s:", host);
    char *at = strstr(line, want);
    if (!at || sscanf(at + strlen(want), "%u/?token=%63[0-9a-f]", &port, token) != 2)
        fprintf(stderr, "URL line: %s", line);
    TEST_ASSERT(at && port > 0);
    TEST_EQ_INT(strlen(token), 48);
    if (!strstr(warn, "warning: listening on 0.0.0.0 (every interface)"))
        fprintf(stderr, "stderr: %s", warn);
    TEST_ASSERT(strstr(warn, "warning: listening on 0.0.0.0 (every interface)") != NULL);
    wait_shown(port, token);
    int fails = 0;
    fails += expect_status(port, "GET /api/runs HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", 403, NULL);
    snprintf(req, sizeof req,
             "GET /api/runs?token=%s HTTP/1.1\r\nHost: %s:%u\r\n"
             "Connection: close\r\n\r\n",
             token, host, port);
    fails += expect_status(port, req, 200, NULL);
    snprintf(req, sizeof req,
             "GET /api/runs?token=%s HTTP/1.1\r\nHost: alias.example:%u\r\n"
             "Connection: close\r\n\r\n",
             token, port);
    fails += expect_status(port, req, 200, NULL);
    snprintf(req, sizeof req,
             "GET /api/runs?token=%s HTTP/1.1\r\nHost: evil.example:%u\r\n"
             "Connection: close\r\n\r\n",
             token, port);
    fails += expect_status(port, req, 421, NULL);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    TEST_EQ_INT(fails, 0);
    close(out), close(err);
    /* on loopback: no warning, a token all the same (test_web_serve_token) */
    char *lo[] = {"tlview", "serve", "--port", "0", a, NULL};
    pid = spawn_serve(lo, &out, &err, NULL);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    TEST_ASSERT(serve_port(line) > 0);
    TEST_EQ_INT(read_line(err, warn, sizeof warn) > 0 && strstr(warn, "warning"), 0);
    close(out), close(err);
    return 0;
}

/* `tlview serve` on loopback prints a URL with a token (a new one each start) and requires it:
 * without it, or with a wrong one, the page, the API and an asset answer 403; with it in the
 * query 200 and the cookie; with the cookie alone 200. --no-token serves without one (the URL
 * without, a warning on stderr), and only on loopback (a usage error beyond, before any file is
 * read). Found 2026-12-08 by the second adversarial pass (issue 28): on loopback there was no
 * token, so on a shared machine every user could read every other's /api/runs, argv included. */
int test_web_serve_token(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char a[1024], line[1024], warn[1024], first[65];
    TEST_EQ_INT(save_run(test_tmpdir(), "a.db", 1.0, 0, a, sizeof a), 0);
    char *args[] = {"tlview", "serve", "--port", "0", a, NULL};
    int out, err, fails = 0;
    first[0] = 0;
    for (int start = 0; start < 2; start++) {
        pid_t pid = spawn_serve(args, &out, &err, NULL);
        TEST_ASSERT(pid > 0);
        TEST_ASSERT(read_line(out, line, sizeof line) > 0);
        unsigned port = serve_port(line);
        for (size_t i = 0; port && i < sizeof token_paths / sizeof *token_paths; i++) {
            char req[256];
            snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n",
                     token_paths[i], port);
            fails += expect_status(port, req, 403, NULL);
            fails += token_refused(port, http_token, token_paths[i]);
            fails += token_taken(port, http_token, token_paths[i]);
        }
        json_t *j = port ? get_json(port, "/api/runs", 200) : NULL; /* http_get: the token */
        kill(pid, SIGTERM);
        TEST_EQ_INT(wait_exit(pid), 0);
        TEST_ASSERT(port > 0);
        TEST_EQ_INT(fails, 0);
        TEST_ASSERT(j);
        TEST_EQ_INT(jint(json_object_get(json_array_get(json_object_get(j, "runs"), 0), "summary"),
                         "kernels"),
                    NA + NB);
        json_decref(j);
        TEST_EQ_INT(read_line(err, warn, sizeof warn) > 0 && strstr(warn, "warning"), 0);
        close(out), close(err);
        if (start)
            TEST_ASSERT(strcmp(first, http_token) != 0); /* a new one at each start */
        snprintf(first, sizeof first, "%s", http_token);
    }
    /* --no-token: none in the URL, a warning, answered without */
    http_token[0] = 0;
    char *none[] = {"tlview", "serve", "--no-token", "--port", "0", a, NULL};
    pid_t pid = spawn_serve(none, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    TEST_ASSERT(read_line(err, warn, sizeof warn) > 0);
    unsigned port = 0;
    char *at = strstr(line, "http://127.0.0.1:");
    if (at)
        sscanf(at, "http://127.0.0.1:%u/", &port);
    if (port)
        wait_shown(port, "");
    for (size_t i = 0; port && i < sizeof token_paths / sizeof *token_paths; i++) {
        char req[256];
        snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n", token_paths[i],
                 port);
        fails += expect_status(port, req, 200, NULL);
    }
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    close(out), close(err);
    TEST_ASSERT(port > 0);
    TEST_EQ_INT(fails, 0);
    if (strstr(line, "token"))
        fprintf(stderr, "URL line: %s", line);
    TEST_ASSERT(strstr(line, "token") == NULL);
    TEST_EQ_STR(warn, "tlview serve: warning: --no-token: any user of this machine can read the "
                      "page and the API, with the traces' host names, paths and command lines\n");
    /* --no-token beyond loopback: a usage error, nothing served */
    char *beyond[] = {"tlview", "serve", "--no-token", "--bind", "0.0.0.0", "--port", "0", a, NULL};
    pid = spawn_serve(beyond, &out, &err, NULL);
    TEST_EQ_INT(wait_exit(pid), 2);
    TEST_ASSERT(read_line(err, warn, sizeof warn) > 0);
    TEST_EQ_STR(warn,
                "tlview serve: --no-token is refused beyond loopback (--bind 0.0.0.0): anyone "
                "who can reach the port would read the traces' host names, paths and "
                "command lines\n");
    TEST_EQ_INT(read_line(out, line, sizeof line), 0);
    close(out), close(err);
    return 0;
}

/* `tlview serve --bind ::0`, another spelling of the IPv6 wildcard: the URL it prints names the
 * machine and is answered. Found 2026-12-02: serve decided "wildcard" by comparing the text
 * with "0.0.0.0" and "::" while web/ parsed the address, so it printed http://[::0]:P/?token=...
 * and a browser that opened it got 421 (the Host check knows no [::0]). */
int test_web_serve_bind_any6(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    int s6 = socket(AF_INET6, SOCK_STREAM, 0);
    if (s6 < 0) {
        fprintf(stderr, "SKIP: no IPv6 here\n");
        return TEST_SKIP;
    }
    close(s6);
    char a[1024], line[1024], warn[1024], host[256] = "", req[512];
    TEST_EQ_INT(save_run(test_tmpdir(), "a.db", 1.0, 0, a, sizeof a), 0);
    TEST_EQ_INT(gethostname(host, sizeof host - 1), 0);
    char *args[] = {"tlview", "serve", "--bind", "::0", "--port", "0", a, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    TEST_ASSERT(read_line(err, warn, sizeof warn) > 0);
    char printed[300] = "", token[64] = "";
    unsigned port = 0;
    const char *at = strstr(line, "http://");
    int got = at ? sscanf(at, "http://%299[^/]/?token=%63[0-9a-f]", printed, token) : 0;
    char *colon = strrchr(printed, ':');
    if (colon) {
        port = (unsigned)atoi(colon + 1);
        *colon = 0;
    }
    fprintf(stderr, "URL line: %s", line);
    TEST_EQ_INT(got, 2);
    TEST_EQ_STR(printed, host);
    TEST_ASSERT(port > 0);
    if (!strstr(warn, "warning: listening on ::0 (every interface)"))
        fprintf(stderr, "stderr: %s", warn);
    TEST_ASSERT(strstr(warn, "warning: listening on ::0 (every interface)") != NULL);
    wait_shown(port, token);
    /* what a browser sends for the printed URL */
    snprintf(req, sizeof req,
             "GET /api/runs?token=%s HTTP/1.1\r\nHost: %s:%u\r\nConnection: close\r\n\r\n", token,
             printed, port);
    int fails = expect_status(port, req, 200, NULL);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    TEST_EQ_INT(fails, 0);
    close(out), close(err);
    return 0;
}

/* web_url_host(): the host a printed URL names is one the Host check accepts, whatever the
 * spelling of the bound address; web_wildcard() says whether it is every interface. */
int test_web_url_host(void)
{
    char host[256] = "";
    TEST_EQ_INT(gethostname(host, sizeof host - 1), 0);
    int s6 = socket(AF_INET6, SOCK_STREAM, 0);
    if (s6 >= 0)
        close(s6);
    const struct {
        const char *bind, *want; /* want NULL: the host name */
        int wildcard, v6;
        int ask; /* the test's client, on 127.0.0.1, reaches it: ask with the URL's host */
    } cases[] = {
        {"127.0.0.1", "127.0.0.1", 0, 0, 1},
        {"0.0.0.0", NULL, 1, 0, 1},
        {"::", NULL, 1, 1, 1},
        {"::0", NULL, 1, 1, 1},
        {"0:0:0::0:0", NULL, 1, 1, 1},
        {"::0001", "[::1]", 0, 1, 0},
        {"0:0::1", "[::1]", 0, 1, 0},
        {"::ffff:127.0.0.1", "[::ffff:127.0.0.1]", 0, 1, 1},
    };
    store_run *run = make_run(1.0, 0);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"x", run, an};
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].v6 && s6 < 0)
            continue;
        web_options o;
        web_options_default(&o);
        o.port = 0;
        o.bind = cases[i].bind;
        o.token = "0123456789abcdef-TOKEN";
        web *w;
        char err[128], req[512];
        TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
        const char *want = cases[i].want ? cases[i].want : host;
        if (strcmp(web_url_host(w), want) != 0 || web_wildcard(w) != cases[i].wildcard) {
            fprintf(stderr, "--bind %s: URL host %s (want %s), wildcard %d (want %d)\n",
                    cases[i].bind, web_url_host(w), want, web_wildcard(w), cases[i].wildcard);
            fails++;
        }
        if (cases[i].ask) {
            snprintf(req, sizeof req,
                     "GET /api/runs HTTP/1.1\r\nHost: %s:%u\r\nAuthorization: Bearer "
                     "0123456789abcdef-TOKEN\r\nConnection: close\r\n\r\n",
                     web_url_host(w), web_port(w));
            fails += expect_status(web_port(w), req, 200, NULL);
        }
        web_stop(w);
    }
    analysis_free(an);
    store_run_free(run);
    TEST_EQ_INT(fails, 0);
    return 0;
}

/* A taken port: the error names it and says what to do. Found 2026-12-01: scripts/serve on a
 * busy port said only "Address already in use". */
int test_web_serve_port_busy(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    char a[1024], port[16], l1[512], l2[512], want[128];
    TEST_EQ_INT(save_run(test_tmpdir(), "a.db", 1.0, 0, a, sizeof a), 0);
    snprintf(port, sizeof port, "%u", f.port);
    char *args[] = {"tlview", "serve", "--port", port, a, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_EQ_INT(wait_exit(pid), 1);
    TEST_ASSERT(read_line(err, l1, sizeof l1) > 0);
    TEST_ASSERT(read_line(err, l2, sizeof l2) > 0);
    snprintf(want, sizeof want, "tlview serve: bind 127.0.0.1:%u: Address already in use\n",
             f.port);
    TEST_EQ_STR(l1, want);
    snprintf(want, sizeof want,
             "tlview serve: port %u is taken (another tlview serve?): --port 0 picks a free one, "
             "or give another with --port N\n",
             f.port);
    TEST_EQ_STR(l2, want);
    close(out), close(err);
    teardown(&f);
    return 0;
}

/* ---------------------------------------------------------------- range statistics */

/* A brute-force tally of what a range holds of one process or one name. */
typedef struct tally {
    uint64_t kernels;
    int64_t ns;
    double ref, with; /* solo work and time inside of the kernels with a stretch */
} tally;

static double tally_stretch(const tally *t)
{
    return t->with > 0 && t->with >= 0.5 * (double)t->ns ? t->with / t->ref : NAN;
}

/* check_num: a JSON number or null against want (NaN: null), within a relative 1e-3 (the server
 * writes 4 significant digits). */
static int check_num(json_t *got, double want, const char *what)
{
    int ok = isnan(want) ? json_is_null(got)
                         : json_is_number(got) &&
                               fabs(json_number_value(got) - want) <= 1e-3 * fabs(want) + 1e-9;
    if (!ok)
        fprintf(stderr, "%s: got %s%g, want %g\n", what, json_is_null(got) ? "null " : "",
                json_number_value(got), want);
    return ok;
}

/* brute_parallelism: solo work per ns over [a, b) from every window of the lane, each spread
 * evenly over its length; NaN when windows without a parallelism figure hold half of it. */
static double brute_parallelism(const analysis *an, uint32_t slot, int64_t a, int64_t b)
{
    if (b <= a)
        b = a + 1;
    const analysis_device *d = analysis_get_device(an, slot);
    const analysis_window *w = analysis_windows(an) + d->first_window;
    double work = 0, undef = 0;
    for (uint64_t i = 0; i < d->nwindows; i++) {
        int64_t s = w[i].t0 > a ? w[i].t0 : a, e = w[i].t1 < b ? w[i].t1 : b;
        if (e <= s)
            continue;
        double f = (double)(e - s) / (double)(w[i].t1 - w[i].t0);
        double alone = (double)(w[i].busy_ns - w[i].overlap_ns);
        if (w[i].overlap_ns == 0)
            work += f * (double)w[i].busy_ns;
        else if (isnan(w[i].parallelism))
            work += f * alone, undef += f * (double)w[i].overlap_ns;
        else
            work += f * (w[i].parallelism * (double)w[i].overlap_ns + alone);
    }
    if (2 * undef >= (double)(b - a))
        return NAN;
    return work / ((double)(b - a) - undef);
}

/* brute_verdict: the verdict shown for kernel k (the window of its lane holding most of it, the
 * first of equals; solo for none or an idle one), by a look at every window. */
static int brute_verdict(const web_runix *r, const store_kernel *k)
{
    uint32_t lane = web_kernel_lane(r, k);
    const analysis_device *d = analysis_get_device(r->an, lane);
    const analysis_window *w = analysis_windows(r->an) + d->first_window, *best = NULL;
    int64_t best_ns = -1;
    for (uint64_t i = 0; i < d->nwindows; i++) {
        int64_t s = w[i].t0 > k->start ? w[i].t0 : k->start,
                e = w[i].t1 < k->end ? w[i].t1 : k->end;
        if (w[i].t0 < k->end && w[i].t1 > k->start && e - s > best_ns)
            best_ns = e - s, best = &w[i];
    }
    return !best || best->verdict == ANALYSIS_IDLE ? ANALYSIS_SOLO : (int)best->verdict;
}

/* check_range: web_range() over [t0, t1) and the rows flagged in rowsel (NULL: all) against a
 * count over every kernel, window and record (the other kinds' records per name, by brute force
 * too). */
static int check_range(const web_runix *r, int64_t t0, int64_t t1, uint64_t scan_max,
                       const uint8_t *rowsel)
{
    const store_run *run = r->run;
    const float *x = analysis_stretch(r->an);
    int64_t a = r->origin + t0, b = r->origin + t1;
    tally *proc = calloc(run->nprocesses, sizeof *proc),
          *name = calloc(run->nstrings, sizeof *name);
    tally all = {0}, verdict[ANALYSIS_NVERDICTS] = {{0}};
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        if (!(k->start < b && (k->end > a || (k->start >= a && k->end <= k->start))))
            continue;
        if (rowsel && !rowsel[r->stream_row[WEB_ROW_KERNELS][k->stream]])
            continue;
        int64_t s = k->start > a ? k->start : a, e = k->end < b ? k->end : b;
        int64_t ns = e > s ? e - s : 0;
        tally *t[4] = {&proc[run->contexts[run->streams[k->stream].context].process],
                       &name[run->launches[k->launch].name], &all,
                       &verdict[all.kernels <= scan_max ? brute_verdict(r, k) : 0]};
        for (int j = 0; j < 4; j++) {
            t[j]->kernels++;
            t[j]->ns += ns;
            if (isfinite(x[i]) && x[i] > 0)
                t[j]->ref += (double)ns / x[i], t[j]->with += (double)ns;
        }
    }
    web_buf buf = {0};
    TEST_EQ_INT(web_range(r, 0, t0, t1, rowsel, scan_max, 100000, &buf), 0);
    json_error_t err;
    json_t *j = json_loads(buf.s, 0, &err);
    if (!j)
        fprintf(stderr, "not JSON: %s\n%.300s\n", err.text, buf.s);
    TEST_ASSERT(j);
    free(buf.s);
    int scanned = all.kernels <= scan_max;
    TEST_EQ_INT(json_is_true(json_object_get(j, "truncated")), !scanned);
    TEST_EQ_INT(jint(j, "kernels"), all.kernels);
    TEST_EQ_INT(jint(j, "ns"), all.ns);
    TEST_ASSERT(check_num(json_object_get(j, "stretch"), scanned ? tally_stretch(&all) : NAN,
                          "stretch of the range"));
    json_t *procs = json_object_get(j, "processes"), *o;
    size_t listed = 0, idx;
    for (uint32_t p = 0; p < run->nprocesses; p++)
        listed += proc[p].kernels > 0;
    TEST_EQ_INT(json_array_size(procs), listed);
    json_array_foreach(procs, idx, o)
    {
        uint32_t p = (uint32_t)jint(o, "process");
        TEST_ASSERT(p < run->nprocesses);
        TEST_EQ_INT(jint(o, "pid"), run->processes[p].pid);
        TEST_EQ_INT(jint(o, "kernels"), proc[p].kernels);
        TEST_EQ_INT(jint(o, "ns"), proc[p].ns);
        TEST_ASSERT(check_num(json_object_get(o, "stretch"),
                              scanned ? tally_stretch(&proc[p]) : NAN, "process stretch"));
    }
    size_t nnames = 0;
    for (uint32_t s = 0; s < run->nstrings; s++)
        nnames += name[s].kernels > 0;
    json_t *names = json_object_get(j, "names");
    TEST_EQ_INT(jint(j, "nnames"), scanned ? nnames : 0);
    TEST_EQ_INT(json_array_size(names), scanned ? nnames : 0);
    int64_t prev = INT64_MAX;
    json_array_foreach(names, idx, o)
    {
        const char *n = json_string_value(json_object_get(o, "name"));
        uint32_t s = 0;
        while (s < run->nstrings && strcmp(run->strings[s].demangled, n) != 0)
            s++;
        TEST_ASSERT(s < run->nstrings);
        TEST_EQ_INT(jint(o, "kernels"), name[s].kernels);
        TEST_EQ_INT(jint(o, "ns"), name[s].ns);
        TEST_ASSERT(jint(o, "ns") <= prev); /* most time first */
        prev = jint(o, "ns");
        TEST_ASSERT(check_num(json_object_get(o, "stretch"), tally_stretch(&name[s]), n));
    }
    json_t *bv = json_object_get(j, "by_verdict");
    size_t nv = 0;
    for (int v = 0; v < ANALYSIS_NVERDICTS && scanned; v++)
        nv += verdict[v].kernels > 0;
    TEST_EQ_INT(json_array_size(bv), nv);
    json_array_foreach(bv, idx, o)
    {
        int v = (int)jint(o, "verdict");
        TEST_ASSERT(v >= 0 && v < ANALYSIS_NVERDICTS);
        TEST_EQ_INT(jint(o, "kernels"), verdict[v].kernels);
        TEST_EQ_INT(jint(o, "ns"), verdict[v].ns);
        TEST_ASSERT(
            check_num(json_object_get(o, "stretch"), tally_stretch(&verdict[v]), "verdict"));
    }
    /* the selected rows' copies, API calls and NVTX ranges, per kind and name */
    json_t *items = json_object_get(j, "items");
    TEST_EQ_INT(json_is_true(json_object_get(j, "items_truncated")), 0);
    size_t nitems = 0;
    for (int kind = WEB_ROW_COPIES; kind < WEB_NROW_KINDS; kind++) {
        const web_items *ik = &r->items[kind];
        static const char *const word[] = {"kernel", "copy", "api", "nvtx"};
        enum { KEYS = 4096 };
        static json_int_t count[KEYS], ns[KEYS];
        static uint32_t key[KEYS];
        uint32_t nk = 0;
        memset(count, 0, sizeof count);
        memset(ns, 0, sizeof ns);
        for (uint64_t i = 0; i < ik->n && rowsel; i++) {
            uint32_t row = web_item_row(r, kind, i);
            int64_t s = web_item_start(ik, i), e = web_item_end(ik, i);
            if (row == UINT32_MAX || !rowsel[row] || !(s < b && (e > a || (s >= a && e <= s))))
                continue;
            uint32_t kk = kind == WEB_ROW_COPIES
                              ? (uint32_t)run->copies[i].type << 16 | run->copies[i].kind
                          : kind == WEB_ROW_API ? run->apis[i].name
                                                : run->ranges[i].name;
            uint32_t m = 0;
            while (m < nk && key[m] != kk)
                m++;
            TEST_ASSERT(m < KEYS);
            if (m == nk)
                key[nk++] = kk;
            count[m]++;
            ns[m] += (e < b ? e : b) - (s > a ? s : a) > 0 ? (e < b ? e : b) - (s > a ? s : a) : 0;
        }
        for (uint32_t m = 0; m < nk; m++) {
            char text[48];
            const char *want = kind == WEB_ROW_COPIES ? NULL : run->strings[key[m]].demangled;
            int found = 0;
            json_array_foreach(items, idx, o)
            {
                const char *n = json_string_value(json_object_get(o, "name"));
                if (strcmp(json_string_value(json_object_get(o, "kind")), word[kind]) != 0)
                    continue;
                if (!want) { /* a copy's name, from a copy of that type and kind */
                    for (uint64_t i = 0; i < ik->n && !want; i++)
                        if (((uint32_t)run->copies[i].type << 16 | run->copies[i].kind) == key[m])
                            want = view_copy_name(&run->copies[i], text, sizeof text);
                }
                if (strcmp(n, want) == 0) {
                    found = 1;
                    TEST_EQ_INT(jint(o, "count"), count[m]);
                    TEST_EQ_INT(jint(o, "ns"), ns[m]);
                }
            }
            TEST_ASSERT(found);
            nitems++;
        }
    }
    TEST_EQ_INT(json_array_size(items), nitems);
    json_t *lanes = json_object_get(j, "lanes");
    TEST_EQ_INT(json_array_size(lanes), r->nlanes);
    for (uint32_t l = 0; l < r->nlanes; l++) {
        json_t *lo = json_array_get(lanes, l), *vns = json_object_get(lo, "verdict_ns");
        const analysis_device *d = analysis_get_device(r->an, l);
        const analysis_window *w = analysis_windows(r->an) + d->first_window;
        int64_t want[ANALYSIS_NVERDICTS] = {0};
        for (uint64_t i = 0; i < d->nwindows; i++) {
            int64_t s = w[i].t0 > a ? w[i].t0 : a, e = w[i].t1 < b ? w[i].t1 : b;
            if (e > s)
                want[w[i].verdict] += e - s;
        }
        TEST_EQ_INT(json_array_size(vns), ANALYSIS_NVERDICTS);
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++)
            TEST_EQ_INT(json_integer_value(json_array_get(vns, (size_t)v)), want[v]);
        TEST_ASSERT(check_num(json_object_get(lo, "parallelism"), brute_parallelism(r->an, l, a, b),
                              "lane parallelism"));
    }
    json_decref(j);
    free(proc);
    free(name);
    return 0;
}

/* gen_indexed: a generated run of 20000 kernels (4 processes of 2 streams, time-sliced, or MPS
 * with `mps`), analysed and indexed as the server indexes it (*pRun, *pAn, *r: the caller frees
 * them). 0, or 1 when a step failed. */
static int gen_indexed(int mps, unsigned seed, const char *label, store_run **pRun, analysis **pAn,
                       web_runix *r)
{
    bench_gen_opts o = {.nkernels = 20000,
                        .nprocs = 4,
                        .streams = 2,
                        .per_iter = 50,
                        .mps = mps,
                        .seed = seed,
                        .api = 1,
                        .copy_every = 40,
                        .nvtx = 1};
    store_run *run = bench_gen_run(&o);
    TEST_ASSERT(run);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run src = {label, run, an};
    char err[128];
    TEST_EQ_INT(web_runix_build(r, &src, err, sizeof err), 0);
    *pRun = run;
    *pAn = an;
    return 0;
}

/* test_web_range: GET /api/range and the per-pixel parallelism of GET /api/timeline against brute
 * force over random ranges of a time-sliced and an MPS run (4 processes, 2 streams each), the
 * cut-off above scan_max kernels, and the endpoint's parameters over HTTP. */
int test_web_range(void)
{
    double max_par[2] = {0, 0}, max_mean[2] = {0, 0};
    for (int mps = 0; mps < 2; mps++) {
        store_run *run;
        analysis *an;
        web_runix r;
        TEST_EQ_INT(gen_indexed(mps, 3, "range", &run, &an, &r), 0);
        TEST_EQ_INT(web_runix_build_grids(&r), 0);
        const analysis_device *d = analysis_get_device(an, 0);
        int64_t span = d->t_end - d->t_begin;
        srand(11 + mps);
        for (int q = 0; q < 60; q++) {
            int64_t t0 = (int64_t)((double)rand() / RAND_MAX * 1.2 * (double)span) - span / 10;
            int64_t len = q % 3 == 0
                              ? 1 + rand() % 5000
                              : (int64_t)((double)rand() / RAND_MAX * (double)span / (1 + q % 7));
            uint8_t sel[256];
            TEST_ASSERT(r.nrows <= sizeof sel);
            for (uint32_t i = 0; i < r.nrows; i++) /* an area: some rows, of every kind */
                sel[i] = rand() % 3 == 0;
            if (check_range(&r, t0, t0 + (len > 0 ? len : 1), 1000000, q % 2 ? sel : NULL))
                return 1;
        }
        TEST_EQ_INT(check_range(&r, -10, span + 10, 1000000, NULL), 0);
        /* above the cut-off: no names, no stretch */
        TEST_EQ_INT(check_range(&r, 0, span, 100, NULL), 0);
        /* the per-pixel parallelism of the timeline */
        enum { W = 300 };
        web_buf b = {0};
        TEST_EQ_INT(web_timeline(&r, 0, 0, span, W, 0, NULL, 0, &b, NULL), 0);
        json_error_t e;
        json_t *j = json_loads(b.s, 0, &e);
        free(b.s);
        TEST_ASSERT(j);
        json_t *lane = json_array_get(json_object_get(j, "lanes"), 0);
        json_t *par = json_object_get(lane, "par"), *mean = json_object_get(lane, "conc_mean");
        TEST_EQ_INT(json_array_size(par), W);
        for (int i = 0; i < W; i++) {
            int64_t pa = r.origin + span * i / W, pb = r.origin + span * (i + 1) / W;
            double want = brute_parallelism(an, 0, pa, pb);
            json_t *g = json_array_get(par, (size_t)i);
            if (isnan(want))
                TEST_ASSERT(json_is_null(g));
            else
                TEST_NEAR(json_number_value(g), want, 0.006);
            if (json_number_value(g) > max_par[mps])
                max_par[mps] = json_number_value(g);
            if (json_number_value(json_array_get(mean, (size_t)i)) > max_mean[mps])
                max_mean[mps] = json_number_value(json_array_get(mean, (size_t)i));
        }
        json_decref(j);
        web_runix_free(&r);
        analysis_free(an);
        store_run_free(run);
    }
    /* time-sliced: ~4 in flight, one at a time; MPS: ~4 in flight and ~4 side by side */
    fprintf(stderr, "time-sliced: peak in flight %.2f, parallelism %.2f; MPS: %.2f, %.2f\n",
            max_mean[0], max_par[0], max_mean[1], max_par[1]);
    TEST_ASSERT(max_mean[0] > 3.5 && max_par[0] < 1.5);
    TEST_ASSERT(max_mean[1] > 3.5 && max_par[1] > 3);
    /* over HTTP: the endpoint and its parameters */
    fixture f;
    TEST_ASSERT(setup(&f, 1) == 0);
    json_t *j = get_json(f.port, "/api/range?run=0&t0=0&t1=1000000", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "kernels"), 420);
    json_decref(j);
    const char *bad[] = {"/api/range?t0=5&t1=5",           "/api/range?t0=0",
                         "/api/range?t0=0&t1=9&x=1",       "/api/range?run=1&t0=0&t1=9",
                         "/api/range?t0=0&t1=9&t1=10",     "/api/range?t0=0&t1=9&rows=",
                         "/api/range?t0=0&t1=9&rows=9999", "/api/range?t0=0&t1=9&names=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        j = get_json(f.port, bad[i], 400);
        TEST_ASSERT(j && json_string_value(json_object_get(j, "error")));
        json_decref(j);
    }
    teardown(&f);
    return 0;
}

/* web_lane_parallelism_many() against web_lane_parallelism() pixel by pixel, bit for bit, on
 * random edges in order (some repeated: pixels of no length; some before and after the run) of a
 * time-sliced and an MPS run (2026-12-02: each edge's work read once). */
int test_web_parallelism_many(void)
{
    enum { W = 400 };
    int64_t T[W + 1];
    double many[W];
    for (int mps = 0; mps < 2; mps++) {
        store_run *run;
        analysis *an;
        web_runix r;
        TEST_EQ_INT(gen_indexed(mps, 5, "par", &run, &an, &r), 0);
        const analysis_device *d = analysis_get_device(an, 0);
        int64_t span = d->t_end - d->t_begin;
        srand(21 + mps);
        for (int q = 0; q < 40; q++) {
            int64_t a = d->t_begin - span / 20 + (int64_t)((double)rand() / RAND_MAX * span);
            int64_t step =
                1 + (int64_t)((double)rand() / RAND_MAX * (double)(span / W / (q % 4 + 1)));
            T[0] = a;
            for (int j = 1; j <= W; j++)
                T[j] = T[j - 1] + (rand() % 5 == 0 ? 0 : step);
            web_lane_parallelism_many(&r, 0, T, W, many);
            for (int j = 0; j < W; j++) {
                double one = web_lane_parallelism(&r, 0, T[j], T[j + 1]);
                TEST_ASSERT(memcmp(&one, &many[j], sizeof one) == 0 ||
                            (isnan(one) && isnan(many[j])));
            }
        }
        web_runix_free(&r);
        analysis_free(an);
        store_run_free(run);
    }
    return 0;
}

/* ---------------------------------------------------------------- following growing files */

/* Clients that hammer the API while the runs are replaced under them (update_under_load). */
typedef struct hammer {
    unsigned port;
    volatile int stop;
    int bad;      /* answers other than 200 and 409, or none */
    int answered; /* answers read */
} hammer;

static void *hammer_loop(void *p)
{
    hammer *h = p;
    static const char *const paths[] = {
        "/api/timeline?run=0&t0=0&t1=700000&width=300",
        "/api/runs",
        "/api/kernel?run=0&id=5&gen=1",
        "/api/range?run=0&t0=0&t1=600000",
        "/api/find?run=0&q=kA",
        "/api/generation",
    };
    for (unsigned i = 0; !h->stop; i++) {
        response r;
        const char *path = paths[i % (sizeof paths / sizeof *paths)];
        if (http_get(h->port, path, &r) != 0) {
            __atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (r.status != 200 && r.status != 409) {
            fprintf(stderr, "GET %s: %d %.200s\n", path, r.status, r.body);
            __atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
        }
        __atomic_add_fetch(&h->answered, 1, __ATOMIC_RELAXED);
        free(r.head);
    }
    return NULL;
}

/* web_update: the generation goes up, GET /api/runs and /api/generation say so, a query naming
 * an older generation is answered 409 with the current one, and the replaced runs are free to go
 * once web_update() returns, while clients keep asking (freed runs would be read by their
 * requests: ASan). */
int test_web_update_generation(void)
{
    store_run *run[6] = {0};
    analysis *an[6] = {0};
    for (int i = 0; i < 6; i++) {
        run[i] = make_run_x(i % 2 ? 0.5 : 1.0, i % 2, i % 3 == 2);
        TEST_EQ_INT(analysis_run(run[i], NULL, &an[i]), ANALYSIS_OK);
    }
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.follow = 1;
    o.no_token = 1; /* as the fixture's */
    web *w = NULL;
    char err[256];
    web_run wr = {"gen", run[0], an[0]};
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    unsigned port = web_port(w);
    json_t *j = get_json(port, "/api/generation", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "generation"), 1);
    TEST_ASSERT(json_is_true(json_object_get(j, "follow")));
    json_decref(j);
    hammer h = {.port = port};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        TEST_EQ_INT(pthread_create(&th[i], NULL, hammer_loop, &h), 0);
    for (int i = 1; i < 6; i++) {
        usleep(60000);
        wr = (web_run){"gen", run[i], an[i]};
        TEST_EQ_INT(web_update(w, &wr, 1, err, sizeof err), WEB_OK);
        TEST_EQ_INT(web_generation(w), i + 1);
        analysis_free(an[i - 1]); /* no request holds them any more */
        store_run_free(run[i - 1]);
        an[i - 1] = NULL;
        run[i - 1] = NULL;
    }
    usleep(60000);
    h.stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    fprintf(stderr, "%d answers while the runs changed 5 times, %d bad\n", h.answered, h.bad);
    TEST_EQ_INT(h.bad, 0);
    TEST_ASSERT(h.answered > 20);
    j = get_json(port, "/api/runs", 200);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "generation"), 6);
    TEST_ASSERT(json_is_true(json_object_get(j, "follow")));
    json_t *r0 = json_array_get(json_object_get(j, "runs"), 0);
    TEST_EQ_INT(jint(json_object_get(r0, "summary"), "kernels"), NA + NB);
    TEST_EQ_STR(json_string_value(json_object_get(r0, "label")), "gen"); /* run[5]: MPS on */
    TEST_EQ_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(r0, "lanes"), 0), "mps")),
        "on");
    json_decref(j);
    j = get_json(port, "/api/timeline?run=0&t0=0&t1=1000&width=4&gen=5", 409);
    TEST_ASSERT(j);
    TEST_EQ_INT(jint(j, "generation"), 6);
    json_decref(j);
    j = get_json(port, "/api/timeline?run=0&t0=0&t1=1000&width=4&gen=6", 200);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_json(port, "/api/kernel?run=0&id=0&gen=6x", 400);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_json(port, "/api/kernel?run=0&id=0&gen=6&gen=6", 400);
    TEST_ASSERT(j);
    json_decref(j);
    j = get_stats(port, "/api/stats?run=0&gen=6");
    TEST_ASSERT(j);
    json_decref(j);
    wr.run = NULL; /* a bad update changes nothing */
    TEST_EQ_INT(web_update(w, &wr, 1, err, sizeof err), WEB_EINVAL);
    TEST_EQ_INT(web_generation(w), 6);
    web_stop(w);
    analysis_free(an[5]);
    store_run_free(run[5]);
    return 0;
}

/* ask: web_request() of GET path on w into *rep (answered in this thread, no HTTP). */
static void ask(web *w, const char *path, web_reply *rep)
{
    web_http_req rq = {.method = "GET", .version = "HTTP/1.0", .target = path};
    rq.target_len = strlen(path);
    web_request(w, &rq, rep);
}

/* shrink_peer: the server's end of client socket fd (this process's, found by its peer address)
 * gets a send buffer of 4 KiB, so that an answer the client does not read stays in libmicrohttpd
 * instead of in the kernel's buffers. 1 when found (within 5 s: it is accepted on a pool thread).
 */
static int shrink_peer(int fd)
{
    struct sockaddr_in me, peer;
    socklen_t len = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &len) != 0)
        return 0;
    for (int tries = 0; tries < 500; tries++) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int found = 0;
        while (d && (e = readdir(d)) && !found) {
            int s = atoi(e->d_name);
            len = sizeof peer;
            if (s != fd && s > 2 && getpeername(s, (struct sockaddr *)&peer, &len) == 0 &&
                peer.sin_family == AF_INET && peer.sin_port == me.sin_port &&
                peer.sin_addr.s_addr == me.sin_addr.s_addr) {
                int small = 4096;
                found = setsockopt(s, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0;
            }
        }
        if (d)
            closedir(d);
        if (found)
            return 1;
        usleep(10000);
    }
    return 0;
}

/* same_body: the bodies of two replies are one and the same memory (a prebuilt body is shared,
 * not copied, per request). */
static int same_body(const char *what, const web_reply *a, const web_reply *b)
{
    if (a->status != 200 || b->status != 200 || !a->blob || a->body != b->body) {
        fprintf(stderr, "%s: statuses %u %u, bodies at %p and %p (blob %p): want one shared body\n",
                what, a->status, b->status, (void *)a->body, (void *)b->body, (void *)a->blob);
        return 0;
    }
    return 1;
}

/* Prebuilt answers (GET /api/runs, /api/stats, a computed or cached /api/timeline) go to the reply
 * without a copy, and outlive the generation they came from until sent: replies held across
 * web_update() (which does not wait for them) and the freeing of the replaced runs still read
 * their whole body (ASan: no use after free; LSan: the last holder frees it), in process and
 * over HTTP to a client that reads its answer only after the update. */
int test_web_reply_lifetime(void)
{
    store_run *run[3];
    analysis *an[3];
    for (int i = 0; i < 3; i++) {
        run[i] = make_run_x(1.0, 0, 1);
        TEST_EQ_INT(analysis_run(run[i], NULL, &an[i]), ANALYSIS_OK);
    }
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.follow = 1;
    o.no_token = 1; /* as the fixture's */
    web *w = NULL;
    char err[256];
    web_run wr = {"life", run[0], an[0]};
    TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
    web_reply st;
    for (int i = 0; i < 2000; i++) { /* the stats (and the grids: answers become cacheable) */
        ask(w, "/api/stats?run=0", &st);
        web_reply_done(&st);
        if (st.status != 503)
            break;
        usleep(5000);
    }
    TEST_EQ_INT(st.status, 200);
    static const char *const paths[] = {
        "/api/runs", "/api/stats?run=0",
        "/api/timeline?run=0&t0=0&t1=700000&width=8000&kmax=0", /* computed, then cached */
        "/api/timeline?run=0&t0=0&t1=700000&width=8000&kmax=0"};
    enum { NP = sizeof paths / sizeof *paths };
    web_reply a[NP], b[NP];
    char *want[NP];
    for (int i = 0; i < NP; i++) {
        ask(w, paths[i], &a[i]);
        ask(w, paths[i], &b[i]);
        TEST_EQ_INT(a[i].status, 200);
        want[i] = malloc(a[i].len);
        memcpy(want[i], a[i].body, a[i].len);
    }
    TEST_ASSERT(same_body(paths[0], &a[0], &b[0]));
    TEST_ASSERT(same_body(paths[1], &a[1], &b[1]));
    /* computed once, into the blob the cache keeps (2026-12-02: no copy of it), then shared */
    TEST_ASSERT(a[2].blob && a[2].blob == b[2].blob && a[2].blob == a[3].blob);
    TEST_ASSERT(same_body(paths[3], &b[2], &a[3]));
    TEST_ASSERT(same_body(paths[3], &a[3], &b[3]));
    /* a client asks for the cached answer over HTTP and reads it only after two updates */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)web_port(w))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    TEST_EQ_INT(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    TEST_ASSERT(shrink_peer(fd));
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", paths[3]);
    /* the cache's answer is held by the cache and 4 replies here, then by the one being sent */
    unsigned *refs = &a[3].blob->refs;
    TEST_EQ_INT(__atomic_load_n(refs, __ATOMIC_ACQUIRE), 5);
    TEST_EQ_INT(write(fd, req, (size_t)n), n);
    for (int i = 0; i < 1000 && __atomic_load_n(refs, __ATOMIC_ACQUIRE) != 6; i++)
        usleep(10000); /* answered: libmicrohttpd holds it until sent */
    TEST_EQ_INT(__atomic_load_n(refs, __ATOMIC_ACQUIRE), 6);
    for (int i = 1; i < 3; i++) {
        wr = (web_run){"life", run[i], an[i]};
        TEST_EQ_INT(web_update(w, &wr, 1, err, sizeof err), WEB_OK); /* never waits on replies */
        analysis_free(an[i - 1]);
        store_run_free(run[i - 1]);
    }
    TEST_EQ_INT(web_generation(w), 3);
    /* generation 1 and its cache are gone; the answer is still being sent (the client has not
     * read it): held by the 4 replies here and by libmicrohttpd */
    TEST_EQ_INT(__atomic_load_n(refs, __ATOMIC_ACQUIRE), 5);
    for (int i = 0; i < NP; i++) { /* the held replies read as they were, then let go */
        TEST_ASSERT(a[i].len == b[i].len && !memcmp(a[i].body, want[i], a[i].len) &&
                    !memcmp(b[i].body, want[i], b[i].len));
        web_reply_done(&a[i]);
        web_reply_done(&b[i]);
    }
    size_t cap = 1 << 20, got = 0;
    char *buf = malloc(cap);
    ssize_t k;
    while ((k = read(fd, buf + got, cap - got)) > 0)
        if ((got += (size_t)k) == cap)
            buf = realloc(buf, cap *= 2);
    close(fd);
    char *sep = NULL; /* the end of the head (the body is binary) */
    for (size_t i = 0; i + 4 <= got && !sep; i++)
        if (!memcmp(buf + i, "\r\n\r\n", 4))
            sep = buf + i;
    TEST_ASSERT(sep && strncmp(buf, "HTTP/1.1 200", 12) == 0);
    size_t body = got - (size_t)(sep + 4 - buf);
    fprintf(stderr, "the slow client read %zu bytes of body after the updates, want %zu\n", body,
            a[3].len);
    TEST_ASSERT(body == a[3].len && !memcmp(sep + 4, want[3], body));
    free(buf);
    for (int i = 0; i < NP; i++)
        free(want[i]);
    web_reply r;
    ask(w, "/api/runs", &r); /* the current generation's own body */
    TEST_ASSERT(r.status == 200 && strstr(r.body, "\"generation\":3"));
    web_reply_done(&r);
    web_stop(w);
    analysis_free(an[2]);
    store_run_free(run[2]);
    return 0;
}

/* grow: n kernels [t, t + 600) every 1 us from *t for process `proc`, one committed batch. */
static int grow(store_writer *w, int64_t proc, int64_t *t, int n)
{
    if (store_writer_begin(w))
        return -1;
    for (int i = 0; i < n; i++, *t += 1000) {
        store_kernel_info k = {.start = *t,
                               .end = *t + 600,
                               .context_id = 1,
                               .stream_id = 7,
                               .correlation_id = (uint32_t)(*t / 1000),
                               .grid = {1, 1, 1},
                               .block = {32, 1, 1},
                               .name = "_Z4growv"};
        if (store_writer_kernel(w, proc, &k))
            return -1;
    }
    return store_writer_commit(w);
}

/* writer_child: the traced process: a file in `dir` written through the store writer (WAL mode,
 * as libcollect writes), a batch of kernels per line read from `cmd` ("N": N kernels; "c":
 * a captured range "peak" over everything so far; "q": close and exit). Replies "ok\n" on
 * `ack` after each. Exits 0. */
static void writer_child(const char *path, int pid, int cmd, int ack)
{
    store_writer *w;
    int64_t proc, t = BASE, cap;
    store_process_info pi = {pid, 1, "h", "/bin/grow", "grow", NULL, "libcollect", BASE};
    store_device_info di = {0, "00112233445566778899aabbccddeeff", "NVIDIA H200", 132, 9, 0, 1};
    if (store_writer_open(path, STORE_CLOCK_REALTIME, 0, &w) ||
        store_writer_process(w, &pi, &proc) || store_writer_device(w, proc, &di))
        _exit(2);
    FILE *in = fdopen(cmd, "r");
    char line[64];
    while (in && fgets(line, sizeof line, in)) {
        if (line[0] == 'q')
            break;
        if (line[0] == 'c') {
            if (store_writer_capture(w, proc, BASE, "peak", "control", &cap) ||
                store_writer_capture_end(w, cap, t, "control"))
                _exit(3);
        } else if (grow(w, proc, &t, atoi(line))) {
            _exit(4);
        }
        if (write(ack, "ok\n", 3) != 3)
            _exit(5);
    }
    store_writer_process_end(w, proc, t, 1, NULL);
    _exit(store_writer_close(w) ? 6 : 0);
}

typedef struct writer_proc {
    pid_t pid;
    int cmd, ack; /* our ends */
} writer_proc;

static int writer_start(writer_proc *wp, const char *path, int pid)
{
    int c[2], a[2];
    if (pipe(c) || pipe(a))
        return -1;
    fflush(NULL);
    wp->pid = fork();
    if (wp->pid == 0) {
        close(c[1]), close(a[0]);
        writer_child(path, pid, c[0], a[1]);
    }
    close(c[0]), close(a[1]);
    wp->cmd = c[1];
    wp->ack = a[0];
    return wp->pid > 0 ? 0 : -1;
}

/* writer_say: one command to the writer, and its acknowledgement. */
static int writer_say(writer_proc *wp, const char *what)
{
    char buf[8];
    return write(wp->cmd, what, strlen(what)) == (ssize_t)strlen(what) &&
                   read_line(wp->ack, buf, sizeof buf) == 3
               ? 0
               : -1;
}

/* follow_until: polls GET /api/runs (every 50 ms, 20 s at most) until run 0 holds `kernels`
 * kernels of `procs` processes; returns its generation, or -1 (printing what it saw). */
static json_int_t follow_until(unsigned port, json_int_t kernels, json_int_t procs)
{
    json_int_t k = -1, p = -1;
    for (int i = 0; i < 400; i++) {
        json_t *j = get_json(port, "/api/runs", 200);
        if (!j)
            return -1;
        json_t *r0 = json_array_get(json_object_get(j, "runs"), 0);
        k = jint(json_object_get(r0, "summary"), "kernels");
        p = (json_int_t)json_array_size(json_object_get(r0, "processes"));
        json_int_t g = jint(j, "generation");
        json_decref(j);
        if (k == kernels && p == procs)
            return g;
        usleep(50000);
    }
    fprintf(stderr, "still %lld kernels of %lld processes, want %lld of %lld\n", (long long)k,
            (long long)p, (long long)kernels, (long long)procs);
    return -1;
}

/* tlview serve --follow on a folder while writer processes append to files in it through the
 * store writer: the server shows each committed batch (a new generation), a file that appears
 * in the folder joins the run, a captured range shows in /api/runs, the writers never wait on the
 * server, and the WAL of a live writer is left to it. */
int test_web_serve_follow(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char dir[1024], a[1100], b[1100], wal[1200], line[512];
    snprintf(dir, sizeof dir, "%s/traces", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0755), 0);
    snprintf(a, sizeof a, "%s/w1.db", dir);
    snprintf(b, sizeof b, "%s/w2.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", a);
    char *args[] = {"tlview", "serve", "--follow", "--port", "0", dir, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    unsigned port = serve_port(line);
    TEST_ASSERT(port > 0);
    TEST_EQ_INT(follow_until(port, 0, 0), 1); /* an empty folder: an empty run */
    writer_proc w1, w2;
    TEST_EQ_INT(writer_start(&w1, a, 101), 0);
    TEST_EQ_INT(writer_say(&w1, "200\n"), 0);
    json_int_t g1 = follow_until(port, 200, 1);
    TEST_ASSERT(g1 > 1);
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    for (int i = 0; i < 10; i++) /* 10 batches while the server reads the file again and again */
        TEST_EQ_INT(writer_say(&w1, "100\n"), 0);
    gettimeofday(&t1, NULL);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_usec - t0.tv_usec) / 1e3;
    fprintf(stderr, "10 batches written in %.1f ms while followed\n", ms);
    TEST_ASSERT(ms < 5000);
    json_int_t g2 = follow_until(port, 1200, 1);
    TEST_ASSERT(g2 > g1);
    struct stat st;
    TEST_EQ_INT(stat(wal, &st), 0);            /* the live writer's WAL is still its own */
    TEST_EQ_INT(writer_start(&w2, b, 102), 0); /* a file appears in the folder */
    TEST_EQ_INT(writer_say(&w2, "50\n"), 0);
    TEST_EQ_INT(writer_say(&w1, "c\n"), 0);
    TEST_ASSERT(follow_until(port, 1250, 2) > g2);
    json_t *j = NULL;
    for (int i = 0; i < 200; i++) { /* the capture row, in the file since the last batch */
        json_decref(j);
        j = get_json(port, "/api/runs", 200);
        TEST_ASSERT(j);
        if (json_array_size(
                json_object_get(json_array_get(json_object_get(j, "runs"), 0), "captures")) == 1)
            break;
        usleep(50000);
    }
    json_t *caps = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "captures");
    TEST_EQ_INT(json_array_size(caps), 1);
    TEST_EQ_STR(json_string_value(json_object_get(json_array_get(caps, 0), "name")), "peak");
    TEST_EQ_INT(jint(json_array_get(caps, 0), "start"), 0); /* from the run's first kernel */
    TEST_EQ_INT(jint(json_array_get(caps, 0), "end"), 1200 * 1000);
    json_decref(j);
    TEST_EQ_INT(write(w1.cmd, "q\n", 2), 2); /* closed: the WAL folded back into the file */
    TEST_EQ_INT(write(w2.cmd, "q\n", 2), 2);
    int status;
    TEST_EQ_INT(waitpid(w1.pid, &status, 0), w1.pid);
    TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    TEST_EQ_INT(waitpid(w2.pid, &status, 0), w2.pid);
    TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    TEST_ASSERT(follow_until(port, 1250, 2) > 0); /* closed files read as well */
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    close(out), close(err);
    close(w1.cmd), close(w1.ack), close(w2.cmd), close(w2.ack);
    return 0;
}

/* 2026-12-07 (issue 28): serve --follow on a folder where a file is swapped between a regular
 * file and a FIFO blocked its main thread in open() within seconds (the page stopped updating,
 * SIGTERM no longer stopped it). Now the swaps go by, the run stays served, and SIGTERM ends it.
 * A link another user drops into the folder is not followed (as root: the link is chowned). */
int test_web_serve_follow_fifo(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char dir[1024], a[1100], x[1100], lnk[1100], line[512];
    snprintf(dir, sizeof dir, "%s/traces", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0755), 0);
    snprintf(a, sizeof a, "%s/w1.db", dir);
    snprintf(x, sizeof x, "%s/x.db", dir);
    snprintf(lnk, sizeof lnk, "%s/theirs.db", dir);
    writer_proc w1;
    TEST_EQ_INT(writer_start(&w1, a, 101), 0);
    TEST_EQ_INT(writer_say(&w1, "200\n"), 0);
    TEST_EQ_INT(write(w1.cmd, "q\n", 2), 2);
    int status;
    TEST_EQ_INT(waitpid(w1.pid, &status, 0), w1.pid);
    close(w1.cmd), close(w1.ack);
    if (geteuid() == 0) { /* another user's link to a trace: not followed */
        char other[1100];
        snprintf(other, sizeof other, "%s/other.db", test_tmpdir());
        TEST_EQ_INT(writer_start(&w1, other, 102), 0);
        TEST_EQ_INT(writer_say(&w1, "50\n"), 0);
        TEST_EQ_INT(write(w1.cmd, "q\n", 2), 2);
        TEST_EQ_INT(waitpid(w1.pid, &status, 0), w1.pid);
        close(w1.cmd), close(w1.ack);
        TEST_EQ_INT(symlink(other, lnk), 0);
        TEST_EQ_INT(lchown(lnk, 65534, 65534), 0);
    }
    char *args[] = {"tlview", "serve", "--follow", "--port", "0", dir, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    unsigned port = serve_port(line);
    TEST_ASSERT(port > 0);
    TEST_ASSERT(follow_until(port, 200, 1) > 0);
    /* 5 s of swaps by rename (x.db is never absent: a trace, then a FIFO, ...), so that the
     * follower meets a file at its look and a FIFO at its open (the old code then blocked in
     * open(): a race, which this case met in 1 or 2 of 3 runs with the old opens put back; the
     * deterministic checks are test_store fs_guards and test_importers fifo) */
    char rtmp[1100], ftmp[1100];
    snprintf(rtmp, sizeof rtmp, "%s/r.tmp", dir);
    snprintf(ftmp, sizeof ftmp, "%s/f.tmp", dir);
    static char bytes[1 << 20];
    int fd = open(a, O_RDONLY);
    ssize_t nb = fd >= 0 ? read(fd, bytes, sizeof bytes) : -1;
    close(fd);
    TEST_ASSERT(nb > 0 && nb < (ssize_t)sizeof bytes);
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    int swaps = 0;
    for (double ms = 0; ms < 5000; swaps++) { /* x0.db ... x15.db: 16 chances at each look */
        snprintf(x, sizeof x, "%s/x%d.db", dir, swaps % 16);
        fd = open(rtmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        TEST_ASSERT(fd >= 0 && write(fd, bytes, (size_t)nb) == nb);
        close(fd);
        TEST_EQ_INT(rename(rtmp, x), 0);
        TEST_EQ_INT(mkfifo(ftmp, 0600), 0);
        TEST_EQ_INT(rename(ftmp, x), 0);
        gettimeofday(&t1, NULL);
        ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_usec - t0.tv_usec) / 1e3;
    }
    fprintf(stderr, "%d swaps in 5 s\n", swaps);
    TEST_ASSERT(swaps > 100); /* thousands on a quiet machine; far fewer under ASan and load */
    for (int i = 0; i < 16; i++) {
        snprintf(x, sizeof x, "%s/x%d.db", dir, i);
        TEST_EQ_INT(unlink(x), 0);
    }
    TEST_ASSERT(follow_until(port, 200, 1) > 0); /* still served and following, w1 alone */
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    if (geteuid() == 0) {
        char text[8192] = "";
        ssize_t n = read(err, text, sizeof text - 1);
        text[n > 0 ? n : 0] = 0;
        TEST_ASSERT(strstr(text, "theirs.db: not followed: a link another user (uid 65534) put "
                                 "there"));
    }
    close(out), close(err);
    return 0;
}

/* 2026-12-07 (issue 28): serve --job on a folder holding an MPS recording whose kernel table is
 * empty (a server traced with TLVIEW_CAPTURE=control before its first capture) died in its
 * background thread (the analysis indexed the MPS group array with UINT32_MAX). Now every group
 * gets its summary and the job its report; the group's timeline opens. */
int test_web_serve_job_mps_without_kernels(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char dir[1024], src[2048], dst[2048], line[512];
    snprintf(dir, sizeof dir, "%s/job", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0755), 0);
    static const char *const files[] = {"output.2934.db", "output.2935.db"};
    for (int i = 0; i < 2; i++) {
        snprintf(src, sizeof src, "%s/samples/spin/traces/mps-on/n2/%s", TLVIEW_SOURCE_DIR,
                 files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
        TEST_EQ_INT(system(cmd), 0);
        sqlite3 *db = NULL;
        TEST_EQ_INT(sqlite3_open(dst, &db), SQLITE_OK);
        TEST_EQ_INT(sqlite3_exec(db, "DELETE FROM kernel", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
    }
    char *args[] = {"tlview", "serve", "--job", "--port", "0", dir, NULL};
    int out, err;
    pid_t pid = spawn_serve(args, &out, &err, NULL);
    TEST_ASSERT(pid > 0);
    TEST_ASSERT(read_line(out, line, sizeof line) > 0);
    unsigned port = serve_port(line);
    TEST_ASSERT(port > 0);
    json_t *j = NULL;
    for (int i = 0; i < 200; i++) { /* until the report is made (10 s at most) */
        json_decref(j);
        j = get_json(port, "/api/job", 200);
        TEST_ASSERT(j);
        if (json_is_object(json_object_get(j, "report")))
            break;
        usleep(50000);
    }
    TEST_ASSERT(json_is_object(json_object_get(j, "report")));
    TEST_EQ_INT(jint(j, "analysed"), jint(j, "groups"));
    json_decref(j);
    TEST_EQ_INT(kill(pid, 0), 0); /* alive */
    j = get_json(port, "/api/job/open?group=0", 200);
    TEST_ASSERT(j);
    json_decref(j);
    kill(pid, SIGTERM);
    TEST_EQ_INT(wait_exit(pid), 0);
    close(out), close(err);
    return 0;
}

/* 2026-12-07 (issue 28): a run at the edge of the time axis. Two kernels at -2^62 and +2^62 made
 * every command abort under UBSan (the span, 2^63 ns, fits no int64: refused now, test_prop
 * span_bound); a run as wide as may be (STORE_SPAN_MAX, from -2^62) is served, and every endpoint
 * answers it, with ranges and pixels at both ends and beyond, without a signed overflow (this case
 * runs under UBSan in scripts/test) and without a 500. */
int test_web_edge_of_time(void)
{
    run_base = -STORE_TIME_MAX + 1000; /* its first API call starts 600 ns before */
    fixture f;
    memset(&f, 0, sizeof f);
    f.run[0] = make_run_x(1.0, 0, 1);
    run_base = BASE;
    int64_t end = f.run[0]->t_begin + STORE_SPAN_MAX; /* one more kernel at the far end */
    store_idx st = f.run[0]->kernels[0].stream, l = f.run[0]->kernels[0].launch;
    store_kernel k = {end - 1000, end, st, l, 999999, 0};
    TEST_EQ_INT(store_run_add_kernel(f.run[0], &k), 0);
    TEST_EQ_INT(store_run_finish(f.run[0]), 0);
    TEST_EQ_INT(f.run[0]->t_end - f.run[0]->t_begin, STORE_SPAN_MAX);
    TEST_EQ_INT(analysis_run(f.run[0], NULL, &f.an[0]), ANALYSIS_OK);
    web_run runs[1] = {{"edge", f.run[0], f.an[0]}};
    web_options o;
    web_options_default(&o);
    o.port = 0;
    o.no_token = 1;
    char err[256];
    TEST_EQ_INT(web_start(&o, runs, 1, &f.w, err, sizeof err), WEB_OK);
    f.port = web_port(f.w);
    const long long S = STORE_SPAN_MAX, M = STORE_TIME_MAX;
    char q[64][200];
    int n = 0;
    snprintf(q[n++], 200, "/api/runs");
    snprintf(q[n++], 200, "/api/stats?run=0");
    static const char *const fmt[] = {"", "&format=bin"};
    for (int b = 0; b < 2; b++) {
        snprintf(q[n++], 200, "/api/timeline?t0=0&t1=%lld&width=800%s", S, fmt[b]);
        snprintf(q[n++], 200, "/api/timeline?t0=0&t1=%lld&width=8192&kmax=1%s", S, fmt[b]);
        snprintf(q[n++], 200, "/api/timeline?t0=%lld&t1=%lld&width=300%s", S - 1000, S, fmt[b]);
        snprintf(q[n++], 200, "/api/timeline?t0=%lld&t1=%lld&width=7%s", -M, M, fmt[b]);
        snprintf(q[n++], 200, "/api/timeline?t0=0&t1=1&width=8192%s", fmt[b]);
        snprintf(q[n++], 200, "/api/timeline?t0=%lld&t1=%lld&width=100%s", S / 2, S / 2 + 50,
                 fmt[b]);
    }
    snprintf(q[n++], 200, "/api/range?run=0&t0=0&t1=%lld", S);
    snprintf(q[n++], 200, "/api/range?run=0&t0=%lld&t1=%lld", -M, M);
    snprintf(q[n++], 200, "/api/range?run=0&t0=%lld&t1=%lld", S - 1, S);
    snprintf(q[n++], 200, "/api/find?run=0&q=k&t0=%lld&t1=%lld", -M, M);
    snprintf(q[n++], 200, "/api/find?run=0&q=cuda&limit=5");
    snprintf(q[n++], 200, "/api/kernel?run=0&id=0");
    snprintf(q[n++], 200, "/api/kernel?run=0&id=420");
    snprintf(q[n++], 200, "/api/window?run=0&id=0");
    snprintf(q[n++], 200, "/api/window?run=0&id=1");
    snprintf(q[n++], 200, "/api/item?run=0&kind=api&id=0");
    snprintf(q[n++], 200, "/api/item?run=0&kind=range&id=0");
    snprintf(q[n++], 200, "/api/item?run=0&kind=copy&id=0");
    snprintf(q[n++], 200, "/api/flow?run=0&kind=kernel&id=0");
    snprintf(q[n++], 200, "/api/flow?run=0&kind=api&id=0");
    for (int i = 0; i < n; i++) {
        response r;
        if (strncmp(q[i], "/api/stats", 10) == 0) { /* built after start: 503 until then */
            json_t *st = get_stats(f.port, q[i]);
            TEST_ASSERT(st);
            json_decref(st);
            continue;
        }
        TEST_EQ_INT(http_get(f.port, q[i], &r), 0);
        /* the statistics are built on a thread of their own after start: 503 until then (under
         * ASan on a loaded machine, not yet at the first request) */
        for (int tries = 0; r.status == 503 && !strncmp(q[i], "/api/stats", 10) && tries < 200;
             tries++) {
            free(r.head);
            usleep(50000);
            TEST_EQ_INT(http_get(f.port, q[i], &r), 0);
        }
        if (r.status != 200 && r.status != 400 && r.status != 404)
            fprintf(stderr, "GET %s: %d %.300s\n", q[i], r.status, r.body);
        TEST_ASSERT(r.status == 200 || r.status == 400 || r.status == 404);
        free(r.head);
    }
    json_t *j = get_json(f.port, "/api/runs", 200); /* the run as it is: 421 kernels */
    TEST_ASSERT(j);
    json_t *r0 = json_array_get(json_object_get(j, "runs"), 0);
    TEST_EQ_INT(jint(json_object_get(r0, "summary"), "kernels"), 421);
    json_decref(j);
    teardown(&f);
    return 0;
}

/* ---------------------------------------------------------------- the compact answer */

/* le: the little-endian unsigned integer of `size` bytes at p. */
static uint64_t le(const unsigned char *p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* round4: the number of 4 significant digits nearest to v, as the page's round4() (api.js). */
static double round4(double v)
{
    static const double P10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    double a = fabs(v);
    if (!isfinite(v) || a == 0)
        return v;
    int k = 3 - (int)floor(log10(a));
    if (k < -12 || k > 15) {
        char t[32];
        snprintf(t, sizeof t, "%.4g", v);
        return strtod(t, NULL);
    }
    double r = k >= 0 ? round(a * P10[k]) / P10[k] : round(a / P10[-k]) * P10[-k];
    return v < 0 ? -r : r;
}

/* bin_array: the array that descriptor d ({"@": type, "o": offset, "n": count, ...}) describes in
 * data (dlen bytes), as the page's binArray() (api.js) reads it, as JSON (strings: the answer's
 * table of strings); NULL and a message when the descriptor is malformed or out of the data. */
static json_t *bin_array(json_t *d, const unsigned char *data, size_t dlen, json_t *strings)
{
    static const char *const types[] = {"u8",  "i8",  "u16", "i16", "u32",
                                        "i32", "f32", "f64", "i64"};
    static const unsigned sizes[] = {1, 1, 2, 2, 4, 4, 4, 8, 8};
    const char *type = json_string_value(json_object_get(d, "@"));
    json_int_t n = json_integer_value(json_object_get(d, "n"));
    if (type && strcmp(type, "tuples") == 0) {
        json_t *cols = json_object_get(d, "cols"), *dec[8], *out = json_array();
        size_t nc = json_array_size(cols);
        if (nc == 0 || nc > 8)
            return NULL;
        for (size_t c = 0; c < nc; c++)
            if (!(dec[c] = bin_array(json_array_get(cols, c), data, dlen, strings)) ||
                (json_int_t)json_array_size(dec[c]) != n)
                return NULL;
        for (json_int_t i = 0; i < n; i++) {
            json_t *t = json_array();
            for (size_t c = 0; c < nc; c++)
                json_array_append(t, json_array_get(dec[c], (size_t)i));
            json_array_append_new(out, t);
        }
        for (size_t c = 0; c < nc; c++)
            json_decref(dec[c]);
        return out;
    }
    int t = -1;
    for (int i = 0; type && i < 9; i++)
        if (strcmp(type, types[i]) == 0)
            t = i;
    json_int_t o = json_integer_value(json_object_get(d, "o"));
    if (t < 0 || !json_is_integer(json_object_get(d, "o")) || o % 8 || n < 0 ||
        (size_t)o + (size_t)n * sizes[t] > dlen) {
        fprintf(stderr, "bad descriptor type %s at %lld, %lld values (%zu bytes of data)\n",
                type ? type : "?", (long long)o, (long long)n, dlen);
        return NULL;
    }
    json_t *base = json_object_get(d, "base"), *scale = json_object_get(d, "scale");
    json_t *nul = json_object_get(d, "null");
    int nulls = json_is_true(json_object_get(d, "nulls")) ||
                json_integer_value(json_object_get(d, "nulls")) == 1;
    int digits = (int)json_integer_value(json_object_get(d, "digits"));
    int delta = json_integer_value(json_object_get(d, "delta")) == 1;
    int strs = json_integer_value(json_object_get(d, "strings")) == 1;
    int64_t sum = base ? json_integer_value(base) : 0;  /* delta: the running sum */
    json_t *xd = json_object_get(d, "esc"), *xs = NULL; /* delta: the escaped steps */
    size_t xk = 0;
    if (xd && (!delta || t % 2 == 0 || t > 5 || !(xs = bin_array(xd, data, dlen, strings)))) {
        fprintf(stderr, "escaped steps without a signed delta array, or malformed\n");
        return NULL;
    }
    json_t *out = json_array();
    for (json_int_t i = 0; i < n; i++) {
        const unsigned char *p = data + o + (size_t)i * sizes[t];
        uint64_t u = le(p, sizes[t]);
        int64_t iv = 0;
        double dv = 0;
        int is_int = 1;
        switch (t) {
        case 0: iv = (uint8_t)u; break;
        case 1: iv = (int8_t)u; break;
        case 2: iv = (uint16_t)u; break;
        case 3: iv = (int16_t)u; break;
        case 4: iv = (uint32_t)u; break;
        case 5: iv = (int32_t)u; break;
        case 6: {
            float f;
            uint32_t w = (uint32_t)u;
            memcpy(&f, &w, 4);
            dv = f, is_int = 0;
            break;
        }
        case 7: memcpy(&dv, &u, 8), is_int = 0; break;
        default: iv = (int64_t)u; break;
        }
        json_t *x;
        if (strs) { /* an index into the table of strings */
            json_t *str = is_int ? json_array_get(strings, (size_t)iv) : NULL;
            if (!str) {
                fprintf(stderr, "string %lld of %zu\n", (long long)iv, json_array_size(strings));
                json_decref(out);
                return NULL;
            }
            x = json_incref(str);
        } else if (delta && is_int) {
            if (xs && iv == -((int64_t)1 << (8 * sizes[t] - 1))) { /* the next escaped step */
                json_t *e = json_array_get(xs, xk++);
                if (!json_is_number(e)) {
                    fprintf(stderr, "escaped step %zu of %zu\n", xk, json_array_size(xs));
                    json_decref(out), json_decref(xs);
                    return NULL;
                }
                iv = (int64_t)json_number_value(e);
            }
            x = json_integer(sum += iv);
        } else if (scale) {
            x = nul && is_int && iv == json_integer_value(nul)
                    ? json_null()
                    : json_real((is_int ? (double)iv : dv) / json_number_value(scale));
        } else if (!is_int) {
            x = isnan(dv) && (nulls || digits) ? json_null()
                                               : json_real(digits == 4 ? round4(dv) : dv);
        } else {
            x = json_integer(iv + (base ? json_integer_value(base) : 0));
        }
        json_array_append_new(out, x);
    }
    if (xs && xk != json_array_size(xs)) {
        fprintf(stderr, "%zu escaped steps used of %zu\n", xk, json_array_size(xs));
        json_decref(out);
        out = NULL;
    }
    json_decref(xs);
    return out;
}

/* bin_walk: the header x with each descriptor replaced by its array (x is consumed); NULL when a
 * descriptor is malformed. */
static json_t *bin_walk(json_t *x, const unsigned char *data, size_t dlen, json_t *strings)
{
    if (json_is_object(x) && json_object_get(x, "@")) {
        json_t *a = bin_array(x, data, dlen, strings);
        json_decref(x);
        return a;
    }
    if (json_is_array(x)) {
        for (size_t i = 0; i < json_array_size(x); i++) {
            json_t *e = bin_walk(json_incref(json_array_get(x, i)), data, dlen, strings);
            if (!e || json_array_set_new(x, i, e)) {
                json_decref(x);
                return NULL;
            }
        }
    } else if (json_is_object(x)) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(x, tmp, k, v)
        {
            json_t *e = bin_walk(json_incref(v), data, dlen, strings);
            if (!e || json_object_set_new(x, k, e)) {
                json_decref(x);
                return NULL;
            }
        }
    }
    return x;
}

/* bin_decode: a compact answer (len bytes) decoded as the page decodes it, as JSON; NULL and a
 * message when its framing is wrong (magic, the header's offset: a multiple of 8 within it). */
static json_t *bin_decode(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    if (len < 8 || memcmp(s, "TLVB", 4) != 0) {
        fprintf(stderr, "no TLVB magic\n");
        return NULL;
    }
    size_t h = (size_t)le(u + 4, 4);
    if (h < 8 || h > len || h % 8) {
        fprintf(stderr, "header at %zu of %zu bytes (a multiple of 8 within the answer)\n", h, len);
        return NULL;
    }
    json_error_t e;
    json_t *head = json_loadb(s + h, len - h, 0, &e);
    if (!head) {
        fprintf(stderr, "header: %s\n", e.text);
        return NULL;
    }
    /* the table of strings that names index, taken out of the answer */
    json_t *strings = json_incref(json_object_get(head, "strings"));
    json_object_del(head, "strings");
    json_t *out = bin_walk(head, u + 8, h - 8, strings);
    json_decref(strings);
    return out;
}

/* same_values: 1 when `got` holds the values of `want` (numbers compared by value, exactly);
 * else prints where they differ. */
static int same_values(json_t *want, json_t *got, const char *at)
{
    char sub[256];
    if (json_is_number(want) && json_is_number(got)) {
        int same = json_is_integer(want) && json_is_integer(got)
                       ? json_integer_value(want) == json_integer_value(got)
                       : json_number_value(want) == json_number_value(got);
        if (!same)
            fprintf(stderr, "%s: JSON %.17g, compact %.17g\n", at, json_number_value(want),
                    json_number_value(got));
        return same;
    }
    if (json_is_array(want) && json_is_array(got)) {
        if (json_array_size(want) != json_array_size(got)) {
            fprintf(stderr, "%s: JSON %zu values, compact %zu\n", at, json_array_size(want),
                    json_array_size(got));
            return 0;
        }
        for (size_t i = 0; i < json_array_size(want); i++) {
            snprintf(sub, sizeof sub, "%.200s[%zu]", at, i);
            if (!same_values(json_array_get(want, i), json_array_get(got, i), sub))
                return 0;
        }
        return 1;
    }
    if (json_is_object(want) && json_is_object(got)) {
        if (json_object_size(want) != json_object_size(got)) {
            fprintf(stderr, "%s: JSON %zu keys, compact %zu\n", at, json_object_size(want),
                    json_object_size(got));
            return 0;
        }
        const char *k;
        json_t *v;
        json_object_foreach(want, k, v)
        {
            snprintf(sub, sizeof sub, "%.200s.%.40s", at, k);
            json_t *g = json_object_get(got, k);
            if (!g) {
                fprintf(stderr, "%s: missing in the compact answer\n", sub);
                return 0;
            }
            if (!same_values(v, g, sub))
                return 0;
        }
        return 1;
    }
    if (json_equal(want, got))
        return 1;
    char *a = json_dumps(want, JSON_ENCODE_ANY), *b = json_dumps(got, JSON_ENCODE_ANY);
    fprintf(stderr, "%s: JSON %s, compact %s\n", at, a ? a : "?", b ? b : "?");
    free(a), free(b);
    return 0;
}

/* timeline_answer: web_timeline() of r into a new string (*len bytes); NULL on failure. */
static char *timeline_answer(const web_runix *r, int64_t t0, int64_t t1, uint32_t w, uint32_t kmax,
                             const uint8_t *sel, int compact, size_t *len)
{
    web_buf b = {0};
    if (web_timeline(r, 0, t0, t1, w, kmax, sel, compact, &b, NULL) != 0) {
        free(b.s);
        return NULL;
    }
    *len = b.len;
    return b.s;
}

/* test_web_timeline_compact: for random queries (zooms from the whole run to a few ns, ranges far
 * outside it, widths 1 to 2000, kmax from 0 to all, random row sets) of a generated run with every
 * row kind, the compact answer decodes, as the page decodes it, to exactly the values of the JSON
 * answer, every row kind both listed and binned; a repeated query (from the cache, once the
 * concurrency grids are built) gives the same bytes. */
int test_web_timeline_compact(void)
{
    bench_gen_opts go = {.nkernels = 20000,
                         .nprocs = 3,
                         .streams = 2,
                         .per_iter = 40,
                         .seed = 5,
                         .api = 1,
                         .copy_every = 7,
                         .nvtx = 1};
    store_run *run = bench_gen_run(&go);
    TEST_ASSERT(run);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run wr = {"gen", run, an};
    web_runix r;
    char err[128];
    TEST_EQ_INT(web_runix_build(&r, &wr, err, sizeof err), WEB_OK);
    int64_t span = analysis_get_summary(an)->t_end - analysis_get_summary(an)->t_begin;
    int seen[WEB_NROW_KINDS][2] = {{0}};     /* per row kind: listed, binned */
    int deltas = 0, tables = 0, escaped = 0; /* descriptors with "delta", "strings", "esc" */
    uint8_t *sel = malloc(r.nrows);
    srand(12);
    for (int q = 0; q < 400; q++) {
        if (q == 200)
            TEST_EQ_INT(web_runix_build_grids(&r), WEB_OK); /* now answers are cached */
        double zoom = pow(10, -(rand() % 9)) * (0.5 + rand() % 100 / 100.0);
        int64_t len = (int64_t)(span * zoom) + 1;
        int64_t t0 = (int64_t)((double)rand() / RAND_MAX * (double)(span + len)) - len;
        if (q % 50 == 7) /* far outside the run: times beyond 32 bits from t0 */
            t0 = -4000000000000000000LL, len = 8000000000000000000LL;
        if (q % 50 == 8)
            t0 = 3000000000000000000LL - span, len = span * 2;
        uint32_t w = q % 5 == 0 ? 1 + rand() % 4 : 1 + rand() % 2000;
        uint32_t kmax = q % 4 == 0   ? 0
                        : q % 4 == 1 ? (uint32_t)(rand() % 60)
                        : q % 4 == 2 ? w
                                     : 100000;
        int some = q % 3 == 0;
        for (uint32_t i = 0; i < r.nrows; i++)
            sel[i] = rand() % 2;
        size_t jl = 0, bl = 0, bl2 = 0;
        char *js = timeline_answer(&r, t0, t0 + len, w, kmax, some ? sel : NULL, 0, &jl);
        char *bs = timeline_answer(&r, t0, t0 + len, w, kmax, some ? sel : NULL, 1, &bl);
        char *bs2 = timeline_answer(&r, t0, t0 + len, w, kmax, some ? sel : NULL, 1, &bl2);
        TEST_ASSERT(js && bs && bs2);
        TEST_ASSERT(bl == bl2 && memcmp(bs, bs2, bl) == 0); /* the same, cached or not */
        /* arrays sent as steps, and names through the answer's table of strings */
        size_t h = bl >= 8 ? (size_t)le((const unsigned char *)bs + 4, 4) : bl;
        for (const char *p = bs + h; h < bl && (p = strstr(p, "\"delta\":1")); p++)
            deltas++;
        for (const char *p = bs + h; h < bl && (p = strstr(p, "\"strings\":1")); p++)
            tables++;
        for (const char *p = bs + h; h < bl && (p = strstr(p, "\"esc\":{")); p++)
            escaped++;
        json_error_t e;
        json_t *want = json_loadb(js, jl, 0, &e), *got = bin_decode(bs, bl);
        TEST_ASSERT(want && got);
        char at[96];
        snprintf(at, sizeof at, "query %d [%lld, +%lld) width %u kmax %u", q, (long long)t0,
                 (long long)len, w, kmax);
        if (!same_values(want, got, at))
            TEST_ASSERT(0);
        /* a few pixels: more than 4 windows per pixel, read by a lookup per pixel edge */
        if (w <= 4 && lane_verdicts_brute(json_array_get(json_object_get(want, "lanes"), 0), an,
                                          r.origin + t0, r.origin + t0 + len, (int)w) < 0)
            TEST_ASSERT(0);
        json_t *rows = json_object_get(want, "rows");
        for (size_t i = 0; i < json_array_size(rows); i++) {
            json_t *row = json_array_get(rows, i);
            int kind = r.rows[jint(row, "row")].kind;
            seen[kind][strcmp(json_string_value(json_object_get(row, "mode")), "bins") == 0]++;
        }
        json_decref(want), json_decref(got);
        free(js), free(bs), free(bs2);
    }
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        fprintf(stderr, "row kind %d: %d listed, %d binned\n", k, seen[k][0], seen[k][1]);
        TEST_ASSERT(seen[k][0] > 20 && seen[k][1] > 20);
    }
    fprintf(stderr, "%d arrays of steps (%d with escaped steps), %d of names\n", deltas, escaped,
            tables);
    TEST_ASSERT(deltas > 100 && tables > 100); /* escapes: test_web_compact_steps */
    free(sel);
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* compact_values: n values written by web_out_times() (base: the query's t0) or web_out_ints()
 * (is_time 0) into a compact answer {"v": [...]}, decoded as the page decodes it, compared with
 * the values; *pDesc receives the descriptor text (for the encoding chosen). 0 when equal. */
static int compact_values(const int64_t *v, uint32_t n, int is_time, int64_t base, char *desc,
                          size_t desclen)
{
    web_buf answer = {0}, header = {0};
    web_out o;
    web_out_begin(&o, &answer, &header, 1);
    web_buf_str(o.b, "{\"v\":");
    if (is_time)
        web_out_times(&o, v, n, base);
    else
        web_out_ints(&o, v, n);
    snprintf(desc, desclen, "%.*s", (int)(header.len > 6 ? header.len - 5 : 0), header.s + 5);
    web_buf_ch(o.b, '}');
    int rc = web_out_finish(&o);
    web_out_free(&o);
    json_t *got = rc ? NULL : bin_decode(answer.s, answer.len);
    json_t *a = json_object_get(got, "v");
    int bad = !a || json_array_size(a) != n;
    for (uint32_t i = 0; !bad && i < n; i++) {
        json_t *x = json_array_get(a, i); /* an f64 array decodes to reals */
        int64_t got = json_is_integer(x) ? json_integer_value(x) : (int64_t)json_number_value(x);
        if (got != v[i]) {
            fprintf(stderr, "value %u: %lld, decoded %lld (%s)\n", i, (long long)v[i],
                    (long long)got, desc);
            bad = 1;
        }
    }
    json_decref(got);
    free(answer.s), free(header.s);
    return bad;
}

/* test_web_compact_steps: the compact encodings of integer arrays (web_bin.c) decode to the
 * values: plain, as steps (delta), as steps in i32 with the large ones escaped (starts of listed
 * records beyond 32 bits of t0 going back at each level), and not as steps where a value leaves
 * +-2^52 (a running sum in doubles would not meet it). */
int test_web_compact_steps(void)
{
    enum { N = 3000 };
    int64_t *v = malloc(sizeof *v * N);
    char desc[512];
    /* starts of three levels over 100 s, each level by start: steps of ~ms, two going back */
    for (int i = 0; i < N; i++)
        v[i] = 5000000000LL + (int64_t)(i % 1000) * 100000000LL + i / 1000 * 7;
    TEST_EQ_INT(compact_values(v, N, 1, 5000000000LL, desc, sizeof desc), 0);
    TEST_ASSERT(strstr(desc, "\"@\":\"i32\"") && strstr(desc, "\"delta\":1") &&
                strstr(desc, "\"esc\":{\"@\":\"f64\""));
    /* the escape mark itself, INT32_MIN, as a step: escaped too */
    v[1] = v[0] + INT32_MIN;
    TEST_EQ_INT(compact_values(v, N, 1, 0, desc, sizeof desc), 0);
    TEST_ASSERT(strstr(desc, "\"esc\":"));
    /* ids rising by 16: steps in u8 */
    for (int i = 0; i < N; i++)
        v[i] = 123456789 + 16 * i;
    TEST_EQ_INT(compact_values(v, N, 0, 0, desc, sizeof desc), 0);
    TEST_ASSERT(strstr(desc, "\"@\":\"u8\"") && strstr(desc, "\"delta\":1"));
    /* counts in u8: as they are */
    for (int i = 0; i < N; i++)
        v[i] = rand() % 200;
    TEST_EQ_INT(compact_values(v, N, 0, 0, desc, sizeof desc), 0);
    TEST_ASSERT(strstr(desc, "\"@\":\"u8\"") && !strstr(desc, "delta"));
    /* values beyond 2^52: never as steps */
    for (int i = 0; i < N; i++)
        v[i] = (INT64_C(1) << 52) - 1000 + i;
    TEST_EQ_INT(compact_values(v, N, 0, 0, desc, sizeof desc), 0);
    TEST_ASSERT(!strstr(desc, "delta"));
    for (int i = 0; i < N; i++)
        v[i] = -(INT64_C(1) << 62) + 3 * i;
    TEST_EQ_INT(compact_values(v, N, 1, 0, desc, sizeof desc), 0);
    TEST_ASSERT(!strstr(desc, "delta"));
    /* one value, and none */
    TEST_EQ_INT(compact_values(v, 1, 1, 0, desc, sizeof desc), 0);
    TEST_EQ_INT(compact_values(v, 0, 0, 0, desc, sizeof desc), 0);
    free(v);
    return 0;
}

/* test_web_timeline_format: GET /api/timeline?format=bin answers the compact form as
 * application/octet-stream, the same values as format=json and as no format; another format is
 * 400. */
int test_web_timeline_format(void)
{
    fixture f;
    TEST_ASSERT(setup_x(&f, 1, 1) == 0);
    response rj, rb, rd, rx;
    const char *q = "/api/timeline?run=0&t0=-5000&t1=700000&width=300&kmax=50";
    char url[256];
    TEST_ASSERT(http_get(f.port, q, &rd) == 0);
    snprintf(url, sizeof url, "%s&format=json", q);
    TEST_ASSERT(http_get(f.port, url, &rj) == 0);
    snprintf(url, sizeof url, "%s&format=bin", q);
    TEST_ASSERT(http_get(f.port, url, &rb) == 0);
    snprintf(url, sizeof url, "%s&format=xml", q);
    TEST_ASSERT(http_get(f.port, url, &rx) == 0);
    TEST_EQ_INT(rd.status, 200);
    TEST_EQ_INT(rj.status, 200);
    TEST_EQ_INT(rb.status, 200);
    TEST_EQ_INT(rx.status, 400);
    TEST_ASSERT(strstr(rd.head, "\r\nContent-Type: application/json"));
    TEST_ASSERT(strstr(rb.head, "\r\nContent-Type: application/octet-stream"));
    TEST_EQ_STR(rx.body, "{\"error\":\"parameter 'format' must be 'json' or 'bin', got 'xml'\"}");
    TEST_ASSERT(rd.len == rj.len && memcmp(rd.body, rj.body, rd.len) == 0);
    json_error_t e;
    json_t *want = json_loadb(rj.body, rj.len, 0, &e), *got = bin_decode(rb.body, rb.len);
    TEST_ASSERT(want && got);
    TEST_ASSERT(same_values(want, got, "format=bin"));
    /* the rich fixture lists API calls with names, windows and stretches */
    json_t *rows = json_object_get(got, "rows");
    int names = 0;
    for (size_t i = 0; i < json_array_size(rows); i++)
        names += json_array_size(json_object_get(json_array_get(rows, i), "names")) > 0;
    TEST_ASSERT(names > 0);
    TEST_ASSERT(json_array_size(json_object_get(json_array_get(json_object_get(got, "lanes"), 0),
                                                "windows")) > 0);
    json_decref(want), json_decref(got);
    free(rd.head), free(rj.head), free(rb.head), free(rx.head);
    teardown(&f);
    return 0;
}

/* /api/kernel names a kernel's partition against the whole GPU (issue 30): the H100 recordings of
 * samples/partitions, two MPS clients at 50% (each shown 66 of the 132 SMs) and two green
 * contexts of 64 SMs; whole-GPU clients (no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) have none. */
int test_web_kernel_partition(void)
{
    static const struct {
        const char *sub;
        double pct; /* 0: null */
        int sms;    /* 0: null */
        int green;
    } cases[] = {{"mps50-n2", 50, 66, 0}, {"green2", 0, 64, 1}, {"mps-n2", 0, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char dir[1024], err[256];
        snprintf(dir, sizeof dir, "%s/samples/partitions/traces/%s", TLVIEW_SOURCE_DIR,
                 cases[c].sub);
        store_run *run;
        analysis *an;
        TEST_EQ_INT(load_traces(dir, &run, &an), 0);
        web_run wr = {cases[c].sub, run, an};
        web_options o;
        web_options_default(&o);
        o.port = 0;
        o.no_token = 1;
        web *w = NULL;
        TEST_EQ_INT(web_start(&o, &wr, 1, &w, err, sizeof err), WEB_OK);
        json_t *k = get_json(web_port(w), "/api/kernel?run=0&id=0", 200);
        TEST_ASSERT(k);
        json_t *pct = json_object_get(k, "context_thread_percentage");
        json_t *sms = json_object_get(k, "context_sms");
        if (cases[c].pct > 0)
            TEST_NEAR(json_number_value(pct), cases[c].pct, 1e-9);
        else
            TEST_ASSERT(json_is_null(pct));
        if (cases[c].sms)
            TEST_EQ_INT(json_integer_value(sms), cases[c].sms);
        else
            TEST_ASSERT(json_is_null(sms));
        TEST_EQ_INT(json_integer_value(json_object_get(k, "device_sms")), 132);
        TEST_EQ_INT(json_is_true(json_object_get(k, "green")), cases[c].green);
        json_decref(k);
        web_stop(w);
        analysis_free(an);
        store_run_free(run);
    }
    return 0;
}

/* The bodies of the API answers of a `tlview serve DIR` started with `opt` (NULL: none) and
 * TLVIEW_CACHE=verbose, XDG_CACHE_HOME in the test folder: each answer's status and body, one
 * after another, into *pOut (malloc'd); its stderr into err (n bytes). 0, or -1. */
static int served_answers(const char *dir, const char *opt, char **pOut, char *err, size_t n)
{
    static const char *const paths[] = {
        "/api/runs",
        "/api/timeline?run=0&t0=0&t1=2000000000&width=800",
        "/api/timeline?run=0&t0=0&t1=2000000000&width=800&format=bin",
        "/api/timeline?run=0&t0=1500&t1=10500&width=800&rows=0",
        "/api/kernel?run=0&id=3",
        "/api/item?run=0&kind=api&id=1",
        "/api/item?run=0&kind=nvtx&id=0",
        "/api/item?run=0&kind=copy&id=0",
        "/api/flow?run=0&kind=kernel&id=2",
        "/api/window?run=0&id=0",
        "/api/window?run=0&id=1",
        "/api/find?run=0&q=k",
        "/api/search?run=0&q=k",
        "/api/export?run=0&format=json",
        "/api/export?run=0&format=text",
        "/api/export?run=0&format=chrome",
    };
    char xdg[4200], line[512];
    snprintf(xdg, sizeof xdg, "%s/xdg", test_tmpdir());
    setenv("XDG_CACHE_HOME", xdg, 1);
    setenv("TLVIEW_CACHE", "verbose", 1);
    char *args[] = {
        "tlview", "serve", "--port", "0", (char *)(opt ? opt : dir), opt ? (char *)dir : NULL,
        NULL};
    int out, efd;
    pid_t pid = spawn_serve(args, &out, &efd, NULL);
    unsetenv("TLVIEW_CACHE");
    unsetenv("XDG_CACHE_HOME");
    if (pid <= 0)
        return -1;
    unsigned port = read_line(out, line, sizeof line) > 0 ? serve_port(line) : 0;
    size_t len = 0, cap = 1 << 16;
    char *b = malloc(cap);
    int rc = port && b ? 0 : -1;
    json_t *st = rc ? NULL : get_stats(port, "/api/stats?run=0"); /* once built */
    char *s = st ? json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    rc |= !s;
    for (size_t i = 0; !rc && i <= sizeof paths / sizeof *paths; i++) {
        response r = {0};
        const char *body = s;
        size_t blen = s ? strlen(s) : 0;
        if (i < sizeof paths / sizeof *paths) {
            if (http_get(port, paths[i], &r)) {
                rc = -1;
                break;
            }
            body = r.body;
            blen = r.len;
        }
        while (len + blen + 64 > cap && (b = realloc(b, cap *= 2)))
            ;
        if (!b) {
            free(r.head);
            rc = -1;
            break;
        }
        len += (size_t)snprintf(b + len, cap - len, "\n%d %zu\n",
                                i < sizeof paths / sizeof *paths ? r.status : 200, blen);
        memcpy(b + len, body, blen);
        len += blen;
        free(r.head);
    }
    free(s);
    json_decref(st);
    /* the cache is written after the first paint: wait for it (its last file, the index's)
     * before the stop, which would not wait */
    char cdir[4300];
    snprintf(cdir, sizeof cdir, "ls '%s/.tlview-cache' 2>/dev/null | grep -q '\\.index$'", dir);
    for (int i = 0; !opt && i < 500 && system(cdir) != 0; i++)
        usleep(20000);
    kill(pid, SIGTERM);
    wait_exit(pid);
    ssize_t k = read(efd, err, n - 1); /* what it said of its cache (it has ended) */
    err[k > 0 ? k : 0] = 0;
    close(out);
    close(efd);
    if (rc) {
        free(b);
        return -1;
    }
    b[len] = 0;
    *pOut = b;
    return 0;
}

/* test_web_serve_cache_same_answers: `tlview serve` answers the API byte for byte the same with a
 * cold cache (it writes it), a warm one (it reads the run and the analysis from it) and
 * --no-cache (issue 32); `serve --follow` never reads nor writes one. */
int test_web_serve_cache_same_answers(void)
{
    if (access(TLVIEW_BIN, X_OK) != 0) {
        fprintf(stderr, "SKIP: %s not built\n", TLVIEW_BIN);
        return TEST_SKIP;
    }
    char dir[4200], path[4300], err[8192];
    snprintf(dir, sizeof dir, "%s/run", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/a.db", dir);
    store_run *run = make_run_x(1.0, 0, 1);
    TEST_EQ_INT(store_run_save(run, path, "test_web"), 0);
    store_run_free(run);
    char *none = NULL, *cold = NULL, *warm = NULL;
    TEST_EQ_INT(served_answers(dir, "--no-cache", &none, err, sizeof err), 0);
    TEST_ASSERT(!strstr(err, "cache:"));
    snprintf(path, sizeof path, "%s/.tlview-cache", dir);
    TEST_ASSERT(access(path, F_OK) != 0);
    TEST_EQ_INT(served_answers(dir, NULL, &cold, err, sizeof err), 0);
    TEST_ASSERT(strstr(err, "cache: wrote run ") && strstr(err, "cache: wrote analysis ") &&
                strstr(err, "cache: wrote index "));
    TEST_EQ_INT(served_answers(dir, NULL, &warm, err, sizeof err), 0);
    TEST_ASSERT(strstr(err, ".run in ") && strstr(err, ".analysis in ") &&
                strstr(err, ".index in "));
    TEST_ASSERT(!strstr(err, "not used") && !strstr(err, "wrote"));
    TEST_ASSERT(strstr(none, "\n200 ") && strstr(none, "cudaLaunchKernel"));
    TEST_EQ_STR(cold, none);
    TEST_EQ_STR(warm, none);
    free(none), free(cold), free(warm);
    /* --follow: the files as they are, never a cache */
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    TEST_EQ_INT(system(cmd), 0);
    char *follow = NULL;
    TEST_EQ_INT(served_answers(dir, "--follow", &follow, err, sizeof err), 0);
    TEST_ASSERT(!strstr(err, "cache:"));
    TEST_ASSERT(access(path, F_OK) != 0);
    free(follow);
    return 0;
}

/* The timeline answers of runix r over its whole span at a few zooms, all rows, JSON, concatenated
 * into *pOut (malloc'd). 0 or -1. */
static int timeline_answers(web_runix *r, int64_t span, char **pOut)
{
    web_buf all = {0};
    for (int z = 1; z <= 1000; z *= 10) {
        web_buf b = {0};
        if (web_timeline(r, 0, span / 3, span / 3 + span / z, 500, 500, NULL, 0, &b, NULL) != 0)
            return -1;
        web_buf_raw(&all, b.s, b.len);
        free(b.s);
    }
    web_buf_ch(&all, 0);
    *pOut = all.s;
    return all.s && !all.failed ? 0 : -1;
}

/* Freezes r and thaws the block for src into a fresh index: 1 when the thaw refused it (the index
 * was built instead), 0 when the frozen block was used, -1 when a step failed. */
static int thaw_refused(const web_runix *r, const web_run *src)
{
    web_runix t;
    void *blob;
    size_t len;
    char err[128];
    if (web_runix_freeze(r, &blob, &len) != WEB_OK)
        return -1;
    int rc = web_runix_build_lent(&t, src, blob, len, err, sizeof err) != 0 ? -1 : !t.thawed;
    if (rc >= 0)
        web_runix_free(&t);
    free(blob);
    return rc;
}

/* test_web_index_freeze_grids: an index frozen after the stats thread's work (each lane's
 * concurrency grid, the GET /api/stats body) thaws with them, read in place, so that a reopened
 * run has nothing left to sweep; without them it thaws as before (the stats thread builds them);
 * a grid bin out of range, a body that is not JSON or names another run, is not used. */
int test_web_index_freeze_grids(void)
{
    store_run *run = make_run_x(1.0, 0, 1);
    analysis *an;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    web_run src = {"a", run, an};
    web_runix r, t;
    char err[128];
    void *blob;
    size_t len;
    TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
    TEST_ASSERT(r.nlanes >= 1);
    /* before the stats thread: no grid, no body; thawed so, the stats thread has them to build */
    TEST_EQ_INT(web_runix_freeze(&r, &blob, &len), WEB_OK);
    TEST_EQ_INT(web_runix_build_lent(&t, &src, blob, len, err, sizeof err), 0);
    TEST_EQ_INT(t.thawed, 1);
    TEST_EQ_INT(t.lanes[0].grid_state, 0);
    TEST_ASSERT(t.stats_body == NULL);
    web_runix_free(&t);
    free(blob);
    /* after it */
    TEST_EQ_INT(web_runix_build_grids(&r), WEB_OK);
    TEST_ASSERT(r.lanes[0].grid && r.lanes[0].ngrid >= 64);
    const char *body = "{\"run\":0,\"devices\":[],\"warnings\":[]}";
    r.stats_body = web_blob_new(body, strlen(body));
    r.stats_id = 0;
    TEST_EQ_INT(web_runix_freeze(&r, &blob, &len), WEB_OK);
    TEST_EQ_INT(web_runix_build_lent(&t, &src, blob, len, err, sizeof err), 0);
    TEST_EQ_INT(t.thawed, 1);
    for (uint32_t i = 0; i < r.nlanes; i++) {
        TEST_EQ_INT(t.lanes[i].grid_state, 1);
        TEST_EQ_INT(t.lanes[i].grid_lent, 1);
        TEST_ASSERT(web_runix_lent(&t, t.lanes[i].grid));
        TEST_EQ_INT(t.lanes[i].ngrid, r.lanes[i].ngrid);
        TEST_EQ_INT(t.lanes[i].g0, r.lanes[i].g0);
        TEST_EQ_INT(t.lanes[i].gw, r.lanes[i].gw);
        TEST_ASSERT(
            !memcmp(t.lanes[i].grid, r.lanes[i].grid, sizeof *r.lanes[i].grid * r.lanes[i].ngrid));
    }
    TEST_ASSERT(t.stats_body && t.stats_id == 0);
    TEST_EQ_STR(t.stats_body->data, body);
    TEST_EQ_INT(web_runix_build_grids(&t), WEB_OK); /* kept, not built again */
    TEST_EQ_INT(t.lanes[0].grid_lent, 1);
    int64_t span = run->t_end - run->t_begin;
    char *a = NULL, *b = NULL;
    TEST_EQ_INT(timeline_answers(&r, span, &a), 0);
    TEST_EQ_INT(timeline_answers(&t, span, &b), 0);
    TEST_EQ_STR(b, a);
    free(a), free(b);
    web_runix_free(&t);
    free(blob);
    /* damaged: each refused, the index built instead */
    analysis_bin keep = r.lanes[0].grid[0];
    const float busy[] = {2.0f, -0.5f, NAN};
    for (size_t k = 0; k < sizeof busy / sizeof *busy; k++) {
        r.lanes[0].grid[0].busy = busy[k];
        TEST_EQ_INT(thaw_refused(&r, &src), 1);
    }
    r.lanes[0].grid[0] = keep;
    r.lanes[0].grid[0].max_processes = (uint16_t)(run->nprocesses + 1);
    TEST_EQ_INT(thaw_refused(&r, &src), 1);
    r.lanes[0].grid[0] = keep;
    TEST_EQ_INT(thaw_refused(&r, &src), 0); /* restored: used again */
    const char *bad[] = {"{\"run\":1}", "not json", "[0]", "{\"run\":\"0\"}"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        web_blob_release(r.stats_body);
        r.stats_body = web_blob_new(bad[k], strlen(bad[k]));
        TEST_EQ_INT(thaw_refused(&r, &src), 1);
    }
    web_runix_free(&r);
    analysis_free(an);
    store_run_free(run);
    return 0;
}

/* test_web_index_freeze_thaw: an index frozen and thawed (web_runix_freeze, web_runix_build_lent)
 * answers the timeline like the one built and freezes to the same bytes; one cut short, thawed for
 * another run, or with a count or position changed is not used (built instead), never read out of
 * bounds (the AddressSanitizer build says so). */
int test_web_index_freeze_thaw(void)
{
    store_run *run = make_run_x(1.0, 0, 1), *other = make_run_x(1.0, 0, 0); /* no API calls */
    analysis *an, *oan;
    TEST_EQ_INT(analysis_run(run, NULL, &an), ANALYSIS_OK);
    TEST_EQ_INT(analysis_run(other, NULL, &oan), ANALYSIS_OK);
    web_run src = {"a", run, an}, osrc = {"b", other, oan};
    web_runix r, t;
    char err[128];
    void *blob, *again;
    size_t len, len2;
    TEST_EQ_INT(web_runix_build(&r, &src, err, sizeof err), 0);
    TEST_EQ_INT(web_runix_freeze(&r, &blob, &len), WEB_OK);
    TEST_EQ_INT(web_runix_build_lent(&t, &src, blob, len, err, sizeof err), 0);
    TEST_EQ_INT(t.thawed, 1);
    TEST_EQ_INT(t.nrows, r.nrows);
    TEST_EQ_INT(web_runix_freeze(&t, &again, &len2), WEB_OK);
    TEST_EQ_INT(len2, len);
    TEST_ASSERT(!memcmp(blob, again, len));
    free(again);
    int64_t span = run->t_end - run->t_begin;
    char *a = NULL, *b = NULL;
    TEST_EQ_INT(timeline_answers(&r, span, &a), 0);
    TEST_EQ_INT(timeline_answers(&t, span, &b), 0);
    TEST_EQ_STR(b, a);
    free(b);
    web_runix_free(&t);
    for (size_t n = 0; n < len; n += 8) { /* cut short */
        TEST_EQ_INT(web_runix_build_lent(&t, &src, blob, n, err, sizeof err), 0);
        TEST_EQ_INT(t.thawed, 0);
        web_runix_free(&t);
    }
    TEST_EQ_INT(web_runix_build_lent(&t, &osrc, blob, len, err, sizeof err), 0);
    TEST_EQ_INT(t.thawed, 0); /* another run */
    web_runix_free(&t);
    unsigned char *c = malloc(len);
    TEST_ASSERT(c);
    for (size_t at = 8; at < len; at += at < 256 ? 4 : 92) { /* a word made larger */
        memcpy(c, blob, len);
        c[at + 3] ^= 0x40;
        TEST_EQ_INT(web_runix_build_lent(&t, &src, c, len, err, sizeof err), 0);
        if (t.thawed) { /* a value no check needs (a time): answers, never out of bounds */
            TEST_EQ_INT(timeline_answers(&t, span, &b), 0);
            free(b);
        }
        web_runix_free(&t);
    }
    free(c);
    free(a);
    free(blob);
    web_runix_free(&r);
    analysis_free(an);
    analysis_free(oan);
    store_run_free(run);
    store_run_free(other);
    return 0;
}
