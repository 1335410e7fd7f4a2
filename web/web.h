/* web: `tlview serve` as a library: an embedded HTTP server (libmicrohttpd) that serves the
 * single-page timeline (web/assets/, compiled into the binary) and a read-only JSON API over one
 * or more analysed runs drawn one above the other (two = comparison mode; more: the runs of an
 * experiment, such as the configurations of `tlview advise`). The API is described in
 * web/API.md.
 *
 * Usage: fill a web_options with web_options_default(), describe each run with a web_run, call
 * web_start(); the server answers on its own threads until web_stop(). The runs and analyses are
 * borrowed: they must stay alive and unchanged until web_stop() has returned, or until a
 * web_update() that replaces them has returned. */
#ifndef WEB_H
#define WEB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "store.h"

enum {
    WEB_OK = 0,
    WEB_EINVAL = -1, /* bad argument: NULL run, no runs, more than WEB_MAX_RUNS, bad address,
                        an experiment that is not one JSON object */
    WEB_ENOMEM = -2,
    WEB_ESOCKET = -3,    /* socket(), bind() or listen() failed (address in use, no permission) */
    WEB_EHTTP = -4,      /* libmicrohttpd refused to start */
    WEB_EADDRINUSE = -5, /* bind(): the port is taken on that address (EADDRINUSE) */
};

#define WEB_MAX_RUNS                                                                               \
    64 /* runs shown one above the other, at most (the configurations of an                        \
          experiment: as many as `tlview advise` makes) */

typedef struct web web;

/* One run to show. Borrowed, not copied (except `label`, which is copied). */
typedef struct web_run {
    const char *label;    /* shown above the run, e.g. "mps-off/n4 (4 files)"; NULL: "run" */
    const store_run *run; /* finished run (store_run_finish) */
    const analysis *an;   /* analysis_run() of that run */
} web_run;

/* Who may ask. Every request's Host header must name the server: 127.0.0.1, localhost, [::1], the
 * bound address, the machine's host name, when bound to a wildcard (0.0.0.0, ::) any address of
 * its interfaces, or one of allow_hosts (any port: SSH tunnels change it); else 421. An Origin
 * header, when sent, must be that same origin; else 403 (DNS rebinding and cross-site requests
 * fail both ways). Then every request (the page, its assets, the API) must carry the server's
 * token (web_token()), on loopback too, as Jupyter's does (on a shared machine every local user
 * can reach loopback): in a `token` query parameter (which sets a cookie, so the page's own
 * requests carry it), an `Authorization: Bearer TOKEN` header or that cookie; else 403. */
typedef struct web_options {
    const char *bind;  /* numeric IPv4 or IPv6 address to listen on ("127.0.0.1") */
    unsigned port;     /* TCP port; 0 picks a free one (read it with web_port) (8080) */
    unsigned threads;  /* requests answered at once (0: one per CPU online) */
    const char *token; /* the token to require (16 to 64 characters of [A-Za-z0-9_-]);
                          NULL: a random one, new at each start (NULL) */
    int no_token;      /* 1: require no token, anyone who can connect may ask (tlview serve
                          --no-token); web_start() refuses it beyond loopback and beside a
                          token (WEB_EINVAL) (0) */
    const char *const *allow_hosts; /* more Host names to accept, NULL-terminated (NULL) */
    unsigned max_connections;       /* connections open at once, at most (4096, and never more
                                       than the open-file limit allows: raise it to have them) */
    unsigned max_per_ip;            /* of those, from one client address (128) */
    int follow; /* 1: the runs may be replaced while serving (web_update(), tlview serve
                   --follow): GET /api/runs says so and the page polls GET /api/generation (0) */
    /* Writers of a run's exports that live above web/ (GET /api/export: the Chrome trace of
     * `tlview export`, the text of `tlview report`): each writes the whole export of analysis a
     * (and its run) to f and returns 0, or -1 on failure (out of memory). Called on a thread of
     * the server's own while the run is shown; f is a pipe to the client (a write fails once it
     * has gone: the writer goes on to its end all the same). NULL: that export is not offered
     * (404). The report's JSON, the view's, needs no writer. (NULL) */
    int (*export_chrome)(FILE *f, const analysis *a);
    int (*export_text)(FILE *f, const analysis *a);
    const char *version;    /* the tool's version, the JSON report's "tlview" field (copied) ("") */
    const char *experiment; /* the experiment the runs come from, as one JSON object's text
                               (copied at start; web/ sends it as it is, knowing nothing of its
                               fields): GET /api/experiment answers it, loading or not, and GET
                               /api/runs says "experiment": true; NULL: none, 404 (NULL) */
} web_options;

/* Sets every field of *o to its documented default. */
void web_options_default(web_options *o);

/* 1 when addr, a numeric IPv4 or IPv6 address as web_options.bind takes it, is a loopback one
 * (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104); 0 when it is another; -1 when it is no address. */
int web_loopback(const char *addr);

/* Indexes the runs for viewport queries, binds the socket and starts serving. On success returns
 * WEB_OK and *ppW owns the server (stop it with web_stop()). On error returns a WEB_E* code, sets
 * *ppW to NULL and writes one line naming the problem ("bind 127.0.0.1:8080: Address already in
 * use") into err (errlen bytes, always NUL-terminated when errlen > 0; err may be NULL). */
int web_start(const web_options *o, const web_run *runs, unsigned nruns, web **ppW /* OUT */,
              char *err, size_t errlen);

/* Starts serving at once, before the runs are ready (a big run takes seconds to read and analyse):
 * binds and checks as web_start() does, with no run yet. The page answers, and GET /api/status
 * says what is being done (web_progress()); the run's endpoints answer 503 {"error": "loading:
 * ..."} with Retry-After: 1 until web_show() hands the runs in, or 500 after web_failed(). The
 * page polls the status and draws the timeline once the runs are shown. Whatever produces the
 * runs (reading and analysing files, a cache of an earlier reading) reports through the same
 * calls. WEB_OK with *ppW set, or a WEB_E* code with the message in err, as web_start(). */
int web_start_loading(const web_options *o, web **ppW /* OUT */, char *err, size_t errlen);

/* What the server is doing before its runs are shown (GET /api/status): `stage` in words
 * ("reading 2 files (430 MB)", "analysing", copied, at most 255 bytes) and, when it can be
 * counted, `done` of `total` (total 0: not counted). Any thread. */
void web_progress(web *w, const char *stage, uint64_t done, uint64_t total);

/* Shows the runs of a server started with web_start_loading(): indexes them (the answers come
 * from them as soon as this returns) and makes them generation 1. As web_update() otherwise (the
 * runs borrowed; WEB_OK, or WEB_EINVAL / WEB_ENOMEM with the message in err: the server then
 * goes on loading, and the caller may call web_failed()). */
int web_show(web *w, const web_run *runs, unsigned nruns, char *err, size_t errlen);

/* Says that the runs will not come (GET /api/status "failed", with `why`, copied; the run's
 * endpoints 500). */
void web_failed(web *w, const char *why);

/* The TCP port the server listens on (the one picked when 0 was asked). */
unsigned web_port(const web *w);

/* The token the server requires (web_options.token, or the one made at start), or NULL when it
 * requires none (web_options.no_token). Owned by the server: valid until web_stop(). */
const char *web_token(const web *w);

/* The host to name in a URL that reaches the server (what `tlview serve` prints): bound to a
 * wildcard address (0.0.0.0, ::, or another spelling of them such as ::0), the machine's host
 * name (127.0.0.1 when it has none); else the bound address as inet_ntop() writes it, IPv6 in
 * brackets ("[::1]" for --bind ::0001). Always a name the Host check accepts. Owned by the
 * server: valid until web_stop(). */
const char *web_url_host(const web *w);

/* 1 when the server is bound to a wildcard address (it listens on every interface), else 0. */
int web_wildcard(const web *w);

/* Replaces the runs the server shows by `runs` (e.g. the same files read again as they grow:
 * tlview serve --follow), as web_start() describes them: indexes them beside the ones shown,
 * makes them current (the generation number goes up by one: GET /api/generation), and returns
 * once no request uses the previous runs any more, so the caller may free those then. Requests
 * in progress finish on the runs they started with. Called by one thread at a time. WEB_OK, or
 * WEB_EINVAL / WEB_ENOMEM with a message in err (errlen bytes; may be NULL): the server then goes
 * on showing the previous runs. */
int web_update(web *w, const web_run *runs, unsigned nruns, char *err, size_t errlen);

/* The current generation: 1 after web_start(), one more after each web_update(). */
uint64_t web_generation(const web *w);

/* ---------------------------------------------------------------- a job (tlview serve --job)
 *
 * A job of many GPUs (job/: thousands of files, one per rank) is served without loading it: an
 * overview from its index, each GPU's summary as it is made, and the timeline of one GPU group at
 * a time, loaded when asked. web/ knows nothing of job/: the caller (cli/) hands in the index and
 * the summaries as JSON texts, waits for the groups asked (web_job_wait_open()) and hands in their
 * analysed runs (web_job_show()). The page: GET / is the overview, /g/N/ the timeline of group N,
 * whose API answers under /g/N/api/ (web/API.md, "A job"). */

#define WEB_JOB_OPEN_MAX 2 /* groups whose timelines are held at once (least recently used out) */

/* Starts serving a job of `ngroups` groups (>= 0): binds and checks as web_start() does (the
 * same Host, Origin and token rules), with no run shown. index_json: the job's index as one JSON
 * object (copied; GET /api/job sends it as its "index"). Returns WEB_OK with *ppW set, or a WEB_E*
 * code with the message in err, as web_start(). */
int web_start_job(const web_options *o, const char *index_json, uint32_t ngroups,
                  web **ppW /* OUT */, char *err, size_t errlen);

/* Sets the summary of group g: a JSON object's text (copied), sent by GET /api/job. A summary
 * given twice replaces the first. WEB_OK, WEB_EINVAL (not a job, g out of range) or WEB_ENOMEM. */
int web_job_summary(web *w, uint32_t g, const char *json);

/* Sets the report of the whole job (a JSON object's text, copied; GET /api/job's "report"), once
 * every summary is in. WEB_OK, WEB_EINVAL (not a job) or WEB_ENOMEM. */
int web_job_report(web *w, const char *json);

/* 1 when the timeline of group g was asked for (GET /api/job/open) since the start, else 0: the
 * caller makes those groups' summaries first. */
int web_job_asked(const web *w, uint32_t g);

/* Waits until a group's timeline is asked for (GET /api/job/open) and returns its number, the
 * group then being "loading"; returns -1 once web_job_close() was called. The caller answers
 * each group returned with web_job_show() or web_job_failed(). One thread calls it. */
int64_t web_job_wait_open(web *w);

/* Shows group g's analysed run(s) (as web_start() takes them, borrowed): indexes them and makes
 * them the group's (GET /g/G/api/...). When WEB_JOB_OPEN_MAX groups are held already, the least
 * recently asked one is let go: the call returns once no request uses it any more, with its
 * number in *pEvicted (UINT32_MAX when none was), so the caller frees its runs then. WEB_OK, or
 * WEB_EINVAL / WEB_ENOMEM with the message in err: the group is then marked failed with it. */
int web_job_show(web *w, uint32_t g, const web_run *runs, unsigned nruns,
                 uint32_t *pEvicted /* OUT */, char *err, size_t errlen);

/* Marks group g as failed to open, with `why` (copied) for the page; it may be asked again. */
void web_job_failed(web *w, uint32_t g, const char *why);

/* Wakes web_job_wait_open() for good, before the caller joins the thread that waits in it. */
void web_job_close(web *w);

/* The viewport index of the shown run i (< the runs shown) as one block of bytes (malloc'd into
 * *ppBlob, *pLen bytes; the caller frees it), for a cache beside the run: web_lend_index() of a
 * later showing of the same run and analysis. It holds the concurrency grids and the statistics
 * too, so it waits for the thread that builds them (seconds at 10M kernels: call it off the
 * answering path). Tied to this build (raw structs): keep it only under a key that names the
 * build. WEB_OK, WEB_EINVAL (no such run shown) or WEB_ENOMEM. */
int web_index_freeze(web *w, unsigned i, void **ppBlob /* OUT */, size_t *pLen /* OUT */);

/* Lends the server the frozen index of run i of the next web_show() (blob, len bytes, as
 * web_index_freeze() gave it for the same run and analysis: a cache of an earlier showing): that
 * call then uses it instead of building one when it fits the run (checked), else builds. The
 * index's arrays are used in place: keep the block unchanged while that run is shown (until
 * web_stop(), or a web_update() that replaces it). blob NULL withdraws it. WEB_OK or WEB_EINVAL (i
 * out of range). */
int web_lend_index(web *w, unsigned i, const void *blob, size_t len);

/* 1 when the shown run i's index was thawed from a lent one (web_lend_index()), 0 when built. */
int web_index_thawed(web *w, unsigned i);

/* Stops serving (waits for requests in progress), frees the index and the server. The runs
 * are not touched. NULL is a no-op. */
void web_stop(web *w);

#endif
