/* cmd_export.c: `tlview export --chrome out.json FILES`: the run as a Chrome/Perfetto trace (JSON
 * trace event format, in the conventions of PyTorch's Kineto), written as a stream so that
 * millions of kernels need no JSON tree. It holds the whole run, so that `tlview import` (and every
 * command, importers/chrome.c) rebuilds the same run from it:
 *   - baseTimeNanoseconds: the origin; every ts/dur is microseconds after it with 3 decimals (ns
 *     exact, written from integers).
 *   - deviceProperties: one entry per GPU of the run, as Kineto writes them (id, name,
 *     totalGlobalMem, numSms, computeMajor/Minor) plus "uuid"; the id is the run's device index,
 *     which the records' "device" arg names.
 *   - a Chrome process per traced process, its real pid unless two processes share one. The
 *     args of its process_name event hold, under "tlview", what the importer rebuilds it from:
 *     pid, ppid, host, exe, argv, run_id, start_wall, process_meta as [key, value] pairs, and its
 *     contexts (id, device, compute_api_kind, green, parent_context, sm_count, stream ids in the
 *     run's order), its capture ranges ([start, end, name, start_reason, end_reason], ns after
 *     baseTimeNanoseconds); source, file, end_wall, complete and error are there for people.
 *     The capture ranges are also drawn, on a track "capture ranges" (cat tlview_capture).
 *   - a track per CUDA stream: kernels (cat kernel), copies (gpu_memcpy) and memsets
 *     (gpu_memset), with args device, context, stream, correlation, the context's
 *     compute_api_kind (1 plain, 2 MPS client, 0 unknown) and, when set, green, parent_context and
 *     sm_count; kernels add grid, block, "registers per thread", "shared memory" (the total),
 *     "dynamic shared memory" when not 0, "mangled" (the recorded name, which solo references are
 *     keyed on) when it differs from the readable one, and the analysis' gpu, stretch and
 *     verdict; copies add bytes and kind (CUPTI's memcpy kind / memory kind). Records that
 *     overlap on one stream get extra lanes, so none is hidden.
 *   - per thread, a track of CUDA API calls (cuda_runtime, cuda_driver; args thread,
 *     correlation, status) and one of NVTX ranges (user_annotation; args thread, domain), with
 *     lanes where slices cross instead of nesting; flow arrows (ph s/f, cat tlview_flow) from
 *     each API call to the kernel or copy of its correlation id.
 *   - a process per GPU with the verdict windows (cat tlview_window, args view_window_json()) and
 *     the counter of processes and contexts in flight (cat tlview_counter). The tlview_*
 *     categories are the analysis, not records: the importer skips them.
 * tlview-summary: write the run as a Chrome/Perfetto trace (JSON) with verdicts */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "view.h"

#define LANES 8  /* lanes per stream (or per thread) for records that overlap without nesting */
#define DEPTH 32 /* nesting depth kept per thread lane */
_Static_assert(LANES == 8, "the help text names 8 lanes per stream");

static const char usage_text[] =
    "usage: tlview export --chrome OUT.json [--baseline FILE]... [-f] [--separate-gpus]\n"
    "                     [--assume-mps on|off] [--from T] [--to T] [--range NAME] FILES...\n"
    "\n"
    "Writes the run as a Chrome trace event file that chrome://tracing and ui.perfetto.dev open,\n"
    "and that every tlview command reads back as the same run: a process per traced process\n"
    "(pid, host, command) with a track per CUDA stream for its kernels, copies and memsets\n"
    "(records that overlap on one stream get up to 8 lanes, so none hides another), a track per\n"
    "thread for its CUDA API calls and one for its NVTX ranges, arrows from each API call to the\n"
    "work it launched, and a process per GPU with the overlap windows named by their verdict and\n"
    "a counter of processes and contexts in flight. Kernel events carry device, context, stream,\n"
    "correlation, grid, block, registers, shared memory, the context's MPS state\n"
    "(compute_api_kind: 1 plain, 2 MPS client), stretch and the verdict of their window in their\n"
    "args. Times are microseconds (ns exact) after the file's baseTimeNanoseconds. With a range\n"
    "(--from, --to, --range) only the records in flight in it are written, each whole.\n"
    "\n"
    "  -c, --chrome OUT.json  the file to write (required); an existing file is refused\n"
    "  -b, --baseline FILE    solo references from this run (as for tlview report);\n"
    "                         repeatable, or a folder\n"
    "  -f, --force            overwrite OUT.json if it exists\n" CLI_ASSUME_MPS_HELP
        CLI_SEPARATE_GPUS_HELP CLI_NO_CACHE_HELP CLI_RANGE_HELP
    "  -h, --help             this text\n"
    "\n" CLI_IMPORT_LIMITS_HELP
    "Exit status: 0 written; 1 a file could not be read or OUT.json written; 2 usage error.\n";

/* Writes n bytes of p to the FILE ctx (view_json_quote()'s sink). */
static void put_file(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, (FILE *)ctx);
}

/* Writes s as a JSON string (null for NULL): always valid JSON, whatever bytes the file held. */
static void json_str(FILE *f, const char *s)
{
    if (!s)
        fputs("null", f);
    else
        view_json_quote(s, put_file, f);
}

/* A JSON number or null. */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.4g", v);
    else
        fputs("null", f);
}

/* ns as microseconds with 3 decimals, exactly (no floating point). */
static void put_us(FILE *f, int64_t ns)
{
    uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%llu.%03u", ns < 0 ? "-" : "", (unsigned long long)(u / 1000),
            (unsigned)(u % 1000));
}

/* The nesting state of one lane of a thread's track: the ends of the slices still open. */
typedef struct nest {
    int64_t end[DEPTH];
    uint32_t n;
} nest;

/* A (process, OS thread) pair with API calls or ranges; its index orders the thread tracks. */
typedef struct thread_key {
    store_idx process;
    uint64_t thread_id;
} thread_key;

/* State of one export. */
typedef struct exporter {
    FILE *f;
    const analysis *a;
    const store_run *run;
    int64_t t0;           /* time origin: baseTimeNanoseconds */
    int first;            /* no event written yet */
    int64_t *chrome_pid;  /* per process: its pid in the file */
    uint32_t *dev_slot;   /* per run device (+1: unknown device): analysis slot */
    int64_t *lane_end;    /* nstreams * LANES: end of the last record of each stream lane */
    uint64_t *cursor;     /* per device slot: first window that may hold the next kernel */
    thread_key *threads;  /* sorted, distinct */
    uint32_t nthreads;    /* of threads */
    nest *nests;          /* nthreads * 2 (API, NVTX) * LANES */
    uint8_t *thread_used; /* nthreads * 2 * LANES: the lane holds a slice */
    uint64_t *api_tid;    /* per API call: its track (for the flow arrows) */
    uint64_t *corr;       /* open addressing (process, correlation) -> API index + 1 */
    uint64_t corr_mask;   /* size of corr - 1; corr is NULL without API calls */
    uint64_t nflows;      /* flow arrows written (their ids) */
} exporter;

static void sep(exporter *x)
{
    fputs(x->first ? "\n" : ",\n", x->f);
    x->first = 0;
}

/* ts and dur of a complete event. */
static void put_span(exporter *x, int64_t start, int64_t end)
{
    fputs(",\"ts\":", x->f);
    put_us(x->f, start - x->t0);
    fputs(",\"dur\":", x->f);
    put_us(x->f, end > start ? end - start : 0);
}

static void meta(exporter *x, const char *what, int64_t pid, uint64_t tid, const char *key,
                 const char *name)
{
    sep(x);
    fprintf(x->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%llu,\"args\":{\"%s\":", what,
            (long long)pid, (unsigned long long)tid, key);
    json_str(x->f, name);
    fputs("}}", x->f);
}

static uint64_t stream_tid(uint32_t stream, int lane)
{
    return 1 + (uint64_t)stream * LANES + (uint64_t)lane;
}

/* kind 0: CUDA API calls, 1: NVTX ranges. */
static uint64_t thread_tid(const exporter *x, uint32_t t, int kind, int lane)
{
    return stream_tid(x->run->nstreams, 0) + ((uint64_t)t * 2 + (uint64_t)kind) * LANES +
           (uint64_t)lane;
}

static int cmp_thread(const void *p, const void *q)
{
    const thread_key *a = p, *b = q;
    if (a->process != b->process)
        return a->process < b->process ? -1 : 1;
    return a->thread_id < b->thread_id ? -1 : a->thread_id > b->thread_id;
}

static uint32_t thread_of(const exporter *x, store_idx process, uint64_t thread_id)
{
    thread_key k = {process, thread_id};
    const thread_key *t = bsearch(&k, x->threads, x->nthreads, sizeof k, cmp_thread);
    return (uint32_t)(t - x->threads);
}

/* The lane of a stream for a record [start, end): the first whose last record has ended. */
static int stream_lane(exporter *x, store_idx stream, int64_t start, int64_t end)
{
    int64_t *lanes = &x->lane_end[(uint64_t)stream * LANES];
    int lane = 0;
    while (lane < LANES - 1 && lanes[lane] != INT64_MIN && lanes[lane] > start)
        lane++;
    if (end > lanes[lane])
        lanes[lane] = end;
    return lane;
}

/* The lane of a thread's track for a slice [start, end) (slices come by start): the first where
 * it starts after every open slice or nests inside the innermost, as Chrome's X events must. */
static int nest_lane(exporter *x, uint32_t t, int kind, int64_t start, int64_t end)
{
    nest *lanes = &x->nests[((uint64_t)t * 2 + (uint64_t)kind) * LANES];
    int lane;
    for (lane = 0; lane < LANES; lane++) {
        nest *l = &lanes[lane];
        while (l->n && l->end[l->n - 1] <= start)
            l->n--;
        if (l->n == 0 || (l->end[l->n - 1] >= end && l->n < DEPTH))
            break;
    }
    if (lane == LANES) { /* nowhere: the last lane, shown overlapping */
        lane = LANES - 1;
        lanes[lane].n = 0;
    }
    lanes[lane].end[lanes[lane].n++] = end;
    x->thread_used[((uint64_t)t * 2 + (uint64_t)kind) * LANES + (uint64_t)lane] = 1;
    return lane;
}

static uint64_t corr_hash(store_idx process, uint32_t correlation)
{
    uint64_t h = ((uint64_t)process << 32 | correlation) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

/* The API call of (process, correlation), or UINT64_MAX. */
static uint64_t corr_find(const exporter *x, store_idx process, uint32_t correlation)
{
    if (!x->corr || !correlation)
        return UINT64_MAX;
    for (uint64_t h = corr_hash(process, correlation) & x->corr_mask; x->corr[h];
         h = (h + 1) & x->corr_mask) {
        const store_api *api = &x->run->apis[x->corr[h] - 1];
        if (api->process == process && api->correlation_id == correlation)
            return x->corr[h] - 1;
    }
    return UINT64_MAX;
}

/* The metadata of each traced process: its name, labels, order, and under "tlview" everything
 * the importer needs to rebuild it (the Chrome pid is the real one unless two share it). */
static void write_processes(exporter *x)
{
    const store_run *run = x->run;
    FILE *f = x->f;
    char text[512];
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        const store_process *sp = &run->processes[p];
        const char *name = sp->exe ? sp->exe : sp->file;
        const char *slash = name ? strrchr(name, '/') : NULL;
        int64_t pid = x->chrome_pid[p];
        sep(x);
        fprintf(f,
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{"
                "\"name\":",
                (long long)pid);
        json_str(f, slash ? slash + 1 : name ? name : "process");
        fprintf(f, ",\"tlview\":{\"pid\":%lld,\"ppid\":%lld,\"host\":", (long long)sp->pid,
                (long long)sp->ppid);
        json_str(f, sp->host);
        fputs(",\"exe\":", f);
        json_str(f, sp->exe);
        fputs(",\"argv\":", f);
        json_str(f, sp->argv);
        fputs(",\"run_id\":", f);
        json_str(f, sp->run_id);
        fputs(",\"source\":", f);
        json_str(f, sp->source);
        fputs(",\"file\":", f);
        json_str(f, sp->file);
        fprintf(f, ",\"start_wall\":%lld,\"end_wall\":%lld,\"complete\":%d,\"error\":",
                (long long)sp->start_wall, (long long)sp->end_wall, sp->complete);
        json_str(f, sp->error);
        fputs(",\"meta\":[", f);
        for (uint32_t i = 0; i < sp->nmeta; i++) {
            fputs(i ? ",[" : "[", f);
            json_str(f, sp->meta_keys[i]);
            fputc(',', f);
            json_str(f, sp->meta_values[i]);
            fputc(']', f);
        }
        if (sp->rows_refused) /* a field, not a meta pair: the import adds it back */
            fprintf(f, "%s[\"rows_refused\",\"%llu\"]", sp->nmeta ? "," : "",
                    (unsigned long long)sp->rows_refused);
        fputs("],\"contexts\":[", f);
        int firstc = 1;
        for (uint32_t c = 0; c < run->ncontexts; c++) {
            const store_context *sc = &run->contexts[c];
            if (sc->process != p)
                continue;
            fprintf(f, "%s{\"id\":%u,", firstc ? "" : ",", sc->context_id);
            firstc = 0;
            if (sc->device != STORE_NONE)
                fprintf(f, "\"device\":%u,", sc->device);
            fprintf(f,
                    "\"compute_api_kind\":%u,\"green\":%u,\"parent_context\":%u,\"sm_count\":%u,"
                    "\"streams\":[",
                    sc->compute_api_kind, sc->green, sc->parent_id, sc->sm_count);
            int firsts = 1;
            for (uint32_t s = 0; s < run->nstreams; s++)
                if (run->streams[s].context == c) {
                    fprintf(f, "%s%u", firsts ? "" : ",", run->streams[s].stream_id);
                    firsts = 0;
                }
            fputs("]}", f);
        }
        fputs("],\"captures\":[", f);
        int firstr = 1;
        for (uint32_t i = 0; i < run->ncaptures; i++) {
            const store_capture *c = &run->captures[i];
            if (c->process != p)
                continue;
            fprintf(f, "%s[%lld,%lld,", firstr ? "" : ",", (long long)(c->start - x->t0),
                    (long long)(c->end - x->t0));
            firstr = 0;
            json_str(f, c->name);
            fputc(',', f);
            json_str(f, c->start_reason);
            fputc(',', f);
            json_str(f, c->end_reason);
            fputc(']', f);
        }
        fputs("]}}}", f);
        snprintf(text, sizeof text, "pid %lld%s%s", (long long)sp->pid, sp->host ? " on " : "",
                 sp->host ? sp->host : "");
        meta(x, "process_labels", pid, 0, "labels", text);
        sep(x);
        fprintf(f,
                "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%lld,\"tid\":0,"
                "\"args\":{\"sort_index\":%u}}",
                (long long)pid, p);
    }
}

/* The device, context, stream and the context's sharing state: the args every GPU record has. */
static void gpu_args(exporter *x, store_idx stream, uint32_t correlation)
{
    const store_run *run = x->run;
    const store_context *c = &run->contexts[run->streams[stream].context];
    FILE *f = x->f;
    fputs(",\"args\":{", f);
    if (c->device != STORE_NONE)
        fprintf(f, "\"device\":%u,", c->device);
    fprintf(f, "\"context\":%u,\"stream\":%u,\"correlation\":%u,\"compute_api_kind\":%u",
            c->context_id, run->streams[stream].stream_id, correlation, c->compute_api_kind);
    if (c->green)
        fputs(",\"green\":1", f);
    if (c->parent_id)
        fprintf(f, ",\"parent_context\":%u", c->parent_id);
    if (c->sm_count)
        fprintf(f, ",\"sm_count\":%u", c->sm_count);
}

/* The arrow from the API call that launched a record to the record (Kineto's ac2g flow): flow
 * events v1, "s" at the call's start on the call's track and "f" with "bp":"e" at the record's
 * start on the record's track. Perfetto's JSON importer binds each to the innermost slice open on
 * its track when it reads it (FlowTracker::Begin/End; v1 ids are keyed by id, cat and name), and
 * its sorter keeps events of equal time in file order, X slices first: so both slices are written
 * before their flow events (the calls before every GPU record, each record just before its
 * arrow). chrome://tracing binds "s" to the enclosing slice and "f" with bp "e" likewise. */
static void write_flow(exporter *x, store_idx process, uint32_t correlation, int64_t pid,
                       uint64_t tid, int64_t start)
{
    uint64_t i = corr_find(x, process, correlation);
    if (i == UINT64_MAX)
        return;
    const store_api *api = &x->run->apis[i];
    uint64_t id = ++x->nflows;
    sep(x);
    fprintf(x->f,
            "{\"ph\":\"s\",\"cat\":\"tlview_flow\",\"name\":\"launch\",\"id\":%llu,\"pid\":%lld,"
            "\"tid\":%llu,\"ts\":",
            (unsigned long long)id, (long long)pid, (unsigned long long)x->api_tid[i]);
    put_us(x->f, api->start - x->t0);
    fputc('}', x->f);
    sep(x);
    fprintf(x->f,
            "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"tlview_flow\",\"name\":\"launch\",\"id\":%llu,"
            "\"pid\":%lld,\"tid\":%llu,\"ts\":",
            (unsigned long long)id, (long long)pid, (unsigned long long)tid);
    put_us(x->f, start - x->t0);
    fputc('}', x->f);
}

/* The verdict of the window where kernel k spends most of its time on its device. */
static analysis_verdict kernel_verdict(exporter *x, const store_kernel *k, uint32_t slot)
{
    const analysis_device *d = analysis_get_device(x->a, slot);
    const analysis_window *w = analysis_windows(x->a);
    uint64_t end = d->first_window + d->nwindows, *cur = &x->cursor[slot];
    analysis_verdict v = ANALYSIS_SOLO;
    int64_t best = -1;
    while (*cur < end && w[*cur].t1 <= k->start)
        (*cur)++;
    for (uint64_t i = *cur; i < end && w[i].t0 < k->end; i++) {
        int64_t t0 = k->start > w[i].t0 ? k->start : w[i].t0;
        int64_t t1 = k->end < w[i].t1 ? k->end : w[i].t1;
        if (t1 - t0 > best) {
            best = t1 - t0;
            v = w[i].verdict;
        }
    }
    return v;
}

static void write_kernel(exporter *x, uint64_t i, const float *stretch)
{
    const store_run *run = x->run;
    const store_kernel *k = &run->kernels[i];
    const store_context *c = &run->contexts[run->streams[k->stream].context];
    const store_launch *l = &run->launches[k->launch];
    const store_string *s = l->name < run->nstrings ? &run->strings[l->name] : NULL;
    uint64_t tid = stream_tid(k->stream, stream_lane(x, k->stream, k->start, k->end));
    uint32_t slot = x->dev_slot[c->device == STORE_NONE ? run->ndevices : c->device];
    FILE *f = x->f;
    sep(x);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":");
    json_str(f, s ? s->demangled : "?");
    fprintf(f, ",\"pid\":%lld,\"tid\":%llu", (long long)x->chrome_pid[c->process],
            (unsigned long long)tid);
    put_span(x, k->start, k->end);
    gpu_args(x, k->stream, k->correlation_id);
    fprintf(f,
            ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"registers per thread\":%u,"
            "\"shared memory\":%llu",
            l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->registers,
            (unsigned long long)l->static_smem + l->dynamic_smem);
    if (l->dynamic_smem)
        fprintf(f, ",\"dynamic shared memory\":%u", l->dynamic_smem);
    if (s && s->text && s->text != s->demangled) { /* the signature's key is the recorded name */
        fputs(",\"mangled\":", f);
        json_str(f, s->text);
    }
    fprintf(f, ",\"gpu\":%u,\"stretch\":", slot);
    json_num(f, stretch[i]);
    fprintf(f, ",\"verdict\":\"%s\"}}", analysis_verdict_name(kernel_verdict(x, k, slot)));
    write_flow(x, c->process, k->correlation_id, x->chrome_pid[c->process], tid, k->start);
}

static void write_copy(exporter *x, const store_copy *cp)
{
    const store_run *run = x->run;
    const store_context *c = &run->contexts[run->streams[cp->stream].context];
    uint64_t tid = stream_tid(cp->stream, stream_lane(x, cp->stream, cp->start, cp->end));
    char name[64];
    view_copy_name(cp, name, sizeof name); /* Kineto's names, which the importer reads */
    sep(x);
    fprintf(x->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%llu",
            cp->type == STORE_COPY_MEMSET ? "gpu_memset" : "gpu_memcpy", name,
            (long long)x->chrome_pid[c->process], (unsigned long long)tid);
    put_span(x, cp->start, cp->end);
    gpu_args(x, cp->stream, cp->correlation_id);
    fprintf(x->f, ",\"bytes\":%llu,\"kind\":%u}}", (unsigned long long)cp->bytes, cp->kind);
    write_flow(x, c->process, cp->correlation_id, x->chrome_pid[c->process], tid, cp->start);
}

/* Kernels, copies and memsets in the order of their start, so each stream's lanes fill in turn. */
static void write_gpu_records(exporter *x)
{
    const store_run *run = x->run;
    const float *stretch = analysis_stretch(x->a);
    uint64_t i = 0, j = 0;
    while (i < run->nkernels || j < run->ncopies) {
        if (j == run->ncopies ||
            (i < run->nkernels && run->kernels[i].start <= run->copies[j].start))
            write_kernel(x, i++, stretch);
        else
            write_copy(x, &run->copies[j++]);
    }
}

static void write_apis(exporter *x)
{
    const store_run *run = x->run;
    FILE *f = x->f;
    for (uint64_t i = 0; i < run->napis; i++) {
        const store_api *api = &run->apis[i];
        uint32_t t = thread_of(x, api->process, api->thread_id);
        uint64_t tid = thread_tid(x, t, 0, nest_lane(x, t, 0, api->start, api->end));
        x->api_tid[i] = tid;
        sep(x);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
                api->domain == STORE_API_DRIVER ? "cuda_driver" : "cuda_runtime");
        json_str(f, api->name < run->nstrings ? run->strings[api->name].text : NULL);
        fprintf(f, ",\"pid\":%lld,\"tid\":%llu", (long long)x->chrome_pid[api->process],
                (unsigned long long)tid);
        put_span(x, api->start, api->end);
        fprintf(f, ",\"args\":{\"thread\":%llu,\"correlation\":%u,\"status\":%d}}",
                (unsigned long long)api->thread_id, api->correlation_id, api->status);
    }
}

static void write_ranges(exporter *x)
{
    const store_run *run = x->run;
    FILE *f = x->f;
    for (uint64_t i = 0; i < run->nranges; i++) {
        const store_range *g = &run->ranges[i];
        uint32_t t = thread_of(x, g->process, g->thread_id);
        uint64_t tid = thread_tid(x, t, 1, nest_lane(x, t, 1, g->start, g->end));
        sep(x);
        fputs("{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":", f);
        json_str(f, g->name < run->nstrings ? run->strings[g->name].text : NULL);
        fprintf(f, ",\"pid\":%lld,\"tid\":%llu", (long long)x->chrome_pid[g->process],
                (unsigned long long)tid);
        put_span(x, g->start, g->end);
        fprintf(f, ",\"args\":{\"thread\":%llu", (unsigned long long)g->thread_id);
        if (g->domain != STORE_NONE && g->domain < run->nstrings) {
            fputs(",\"domain\":", f);
            json_str(f, run->strings[g->domain].text);
        }
        fputs("}}", f);
    }
}

/* The capture ranges, on a track of their own after each process's thread tracks: what the
 * collector recorded (the records outside them were not). */
static void write_captures(exporter *x)
{
    const store_run *run = x->run;
    FILE *f = x->f;
    uint64_t tid = thread_tid(x, x->nthreads, 0, 0);
    for (uint32_t i = 0; i < run->ncaptures; i++) {
        const store_capture *c = &run->captures[i];
        int64_t pid = x->chrome_pid[c->process];
        if (i == 0 || run->captures[i - 1].process != c->process)
            meta(x, "thread_name", pid, tid, "name", "capture ranges");
        sep(x);
        fputs("{\"ph\":\"X\",\"cat\":\"tlview_capture\",\"name\":", f);
        json_str(f, c->name ? c->name : "capture");
        fprintf(f, ",\"pid\":%lld,\"tid\":%llu", (long long)pid, (unsigned long long)tid);
        put_span(x, c->start, c->end);
        fputs(",\"args\":{\"start_reason\":", f);
        json_str(f, c->start_reason);
        fputs(",\"end_reason\":", f);
        json_str(f, c->end_reason);
        fputs("}}", f);
    }
}

/* Names the stream and thread tracks that hold something (and every stream's first lane). */
static void write_tracks(exporter *x)
{
    const store_run *run = x->run;
    char name[512];
    for (uint32_t s = 0; s < run->nstreams; s++) {
        const store_context *c = &run->contexts[run->streams[s].context];
        for (int lane = 0; lane < LANES; lane++) {
            snprintf(name, sizeof name, "stream %u (context %u%s)%s", run->streams[s].stream_id,
                     c->context_id, c->compute_api_kind == 2 ? ", MPS" : "",
                     lane ? " overlapping" : "");
            if (lane == 0 || x->lane_end[(uint64_t)s * LANES + lane] != INT64_MIN)
                meta(x, "thread_name", x->chrome_pid[c->process], stream_tid(s, lane), "name",
                     name);
        }
    }
    for (uint32_t t = 0; t < x->nthreads; t++)
        for (int kind = 0; kind < 2; kind++)
            for (int lane = 0; lane < LANES; lane++) {
                if (!x->thread_used[((uint64_t)t * 2 + (uint64_t)kind) * LANES + (uint64_t)lane])
                    continue;
                snprintf(name, sizeof name, "%s (thread %llu)%s", kind ? "NVTX" : "CUDA API",
                         (unsigned long long)x->threads[t].thread_id, lane ? " overlapping" : "");
                meta(x, "thread_name", x->chrome_pid[x->threads[t].process],
                     thread_tid(x, t, kind, lane), "name", name);
            }
}

/* A process per GPU: its windows (tid 1) and the concurrency counter; Chrome pids from `pid`. */
static int write_devices(exporter *x, int64_t pid)
{
    const analysis_window *w = analysis_windows(x->a);
    char name[256];
    for (uint32_t i = 0; i < analysis_ndevices(x->a); i++, pid++) {
        const analysis_device *d = analysis_get_device(x->a, i);
        snprintf(name, sizeof name, "GPU %u (%s)", i, view_device_name(x->a, i));
        meta(x, "process_name", pid, 0, "name", name);
        meta(x, "process_labels", pid, 0, "labels", "tlview verdicts");
        meta(x, "thread_name", pid, 1, "name", "overlap verdicts");
        for (uint64_t k = d->first_window; k < d->first_window + d->nwindows; k++) {
            json_t *args = view_window_json(x->a, k);
            char *text = args ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
            json_decref(args);
            if (!text)
                return 1;
            sep(x);
            fprintf(x->f,
                    "{\"ph\":\"X\",\"cat\":\"tlview_window\",\"name\":\"%s\",\"pid\":%lld,"
                    "\"tid\":1",
                    analysis_verdict_name(w[k].verdict), (long long)pid);
            put_span(x, w[k].t0, w[k].t1);
            fprintf(x->f, ",\"args\":%s}", text);
            free(text);
        }
        size_t n = 0;
        if (analysis_profile(x->a, i, d->t_begin, d->t_end, NULL, 0, &n) != 0)
            return 1;
        analysis_segment *seg = malloc((n + 1) * sizeof *seg);
        if (!seg || analysis_profile(x->a, i, d->t_begin, d->t_end, seg, n, &n) != 0) {
            free(seg);
            return 1;
        }
        for (size_t s = 0; s <= n; s++) {
            sep(x);
            fprintf(x->f,
                    "{\"ph\":\"C\",\"cat\":\"tlview_counter\",\"name\":\"in flight\","
                    "\"pid\":%lld,\"ts\":",
                    (long long)pid);
            put_us(x->f, (s < n ? seg[s].t0 : d->t_end) - x->t0);
            fprintf(x->f, ",\"args\":{\"processes\":%u,\"contexts\":%u}}",
                    s < n ? seg[s].processes : 0, s < n ? seg[s].contexts : 0);
        }
        free(seg);
    }
    return 0;
}

static int cmp_pid(const void *p, const void *q)
{
    const int64_t *a = p, *b = q; /* (pid, process index) pairs */
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Chooses each process's Chrome pid: its own when no other process has it, else one above every
 * pid. Returns the first pid above them all, for the GPU processes; -1 when out of memory. */
static int64_t choose_pids(exporter *x)
{
    const store_run *run = x->run;
    uint32_t n = run->nprocesses;
    int64_t next = 0, *v = malloc(((size_t)n + 1) * 2 * sizeof *v);
    if (!v)
        return -1;
    for (uint32_t p = 0; p < n; p++) {
        v[2 * p] = run->processes[p].pid;
        v[2 * p + 1] = p;
        if (v[2 * p] >= next && v[2 * p] < INT64_MAX / 2)
            next = v[2 * p] + 1;
    }
    qsort(v, n, 2 * sizeof *v, cmp_pid);
    for (uint32_t i = 0; i < n; i++) {
        int64_t pid = v[2 * i];
        int alone = (i == 0 || v[2 * i - 2] != pid) && (i + 1 == n || v[2 * i + 2] != pid);
        x->chrome_pid[v[2 * i + 1]] = alone && pid >= 0 && pid < INT64_MAX / 2 ? pid : next++;
    }
    free(v);
    return next;
}

/* The distinct (process, thread) pairs of the API calls and ranges, and the flow table. */
static int index_threads(exporter *x)
{
    const store_run *run = x->run;
    uint64_t n = run->napis + run->nranges, m = 0;
    x->threads = malloc((n + 1) * sizeof *x->threads);
    if (!x->threads)
        return 1;
    for (uint64_t i = 0; i < run->napis; i++)
        x->threads[m++] = (thread_key){run->apis[i].process, run->apis[i].thread_id};
    for (uint64_t i = 0; i < run->nranges; i++)
        x->threads[m++] = (thread_key){run->ranges[i].process, run->ranges[i].thread_id};
    qsort(x->threads, m, sizeof *x->threads, cmp_thread);
    uint64_t u = 0;
    for (uint64_t i = 0; i < m; i++)
        if (u == 0 || cmp_thread(&x->threads[u - 1], &x->threads[i]) != 0)
            x->threads[u++] = x->threads[i];
    x->nthreads = (uint32_t)u;
    x->nests = calloc((u + 1) * 2 * LANES, sizeof *x->nests);
    x->thread_used = calloc((u + 1) * 2 * LANES, 1);
    x->api_tid = malloc((run->napis + 1) * sizeof *x->api_tid);
    if (!x->nests || !x->thread_used || !x->api_tid)
        return 1;
    if (!run->napis)
        return 0;
    uint64_t cap = 16;
    while (cap < 2 * run->napis)
        cap *= 2;
    x->corr_mask = cap - 1;
    if (!(x->corr = calloc(cap, sizeof *x->corr)))
        return 1;
    for (uint64_t i = 0; i < run->napis; i++) {
        const store_api *api = &run->apis[i];
        if (!api->correlation_id || corr_find(x, api->process, api->correlation_id) != UINT64_MAX)
            continue; /* the first call of a correlation id gets the arrows */
        uint64_t h = corr_hash(api->process, api->correlation_id) & x->corr_mask;
        while (x->corr[h])
            h = (h + 1) & x->corr_mask;
        x->corr[h] = i + 1;
    }
    return 0;
}

/* deviceProperties, as Kineto writes them, with the UUID; the id is the run's device index,
 * which the records' "device" arg names. */
static void write_device_properties(exporter *x)
{
    const store_run *run = x->run;
    FILE *f = x->f;
    fputs("\"deviceProperties\":[", f);
    for (uint32_t d = 0; d < run->ndevices; d++) {
        const store_device *dv = &run->devices[d];
        fprintf(f, "%s\n{\"id\":%u,\"name\":", d ? "," : "", d);
        json_str(f, dv->name);
        fprintf(f,
                ",\"totalGlobalMem\":%llu,\"numSms\":%u,\"computeMajor\":%u,\"computeMinor\":%u,"
                "\"uuid\":",
                (unsigned long long)dv->global_memory, dv->sm_count, dv->cc_major, dv->cc_minor);
        json_str(f, dv->uuid);
        fputc('}', f);
    }
    fputs("],\n", f);
}

static void exporter_free(exporter *x)
{
    free(x->chrome_pid);
    free(x->dev_slot);
    free(x->lane_end);
    free(x->cursor);
    free(x->threads);
    free(x->nests);
    free(x->thread_used);
    free(x->api_tid);
    free(x->corr);
}

/* Writes the whole trace; 0 or 1 (out of memory). */
static int write_trace(FILE *f, const analysis *a)
{
    const store_run *run = analysis_get_run(a);
    exporter x = {.f = f, .a = a, .run = run, .t0 = run->t_begin, .first = 1};
    x.chrome_pid = malloc((run->nprocesses + 1) * sizeof *x.chrome_pid);
    x.dev_slot = calloc(run->ndevices + 1, sizeof *x.dev_slot);
    x.lane_end = malloc(((uint64_t)run->nstreams * LANES + 1) * sizeof *x.lane_end);
    x.cursor = calloc(analysis_ndevices(a) + 1, sizeof *x.cursor);
    if (!x.chrome_pid || !x.dev_slot || !x.lane_end || !x.cursor || index_threads(&x)) {
        exporter_free(&x);
        return 1;
    }
    for (uint64_t i = 0; i < (uint64_t)run->nstreams * LANES; i++)
        x.lane_end[i] = INT64_MIN;
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        x.cursor[i] = d->first_window;
        x.dev_slot[d->device == STORE_NONE ? run->ndevices : d->device] = i;
    }
    int64_t gpu_pid = choose_pids(&x);
    if (gpu_pid < 0) {
        exporter_free(&x);
        return 1;
    }
    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":%lld,\"otherData\":{\"tool\":"
            "\"tlview %s\"},\n",
            (long long)x.t0, CLI_VERSION);
    write_device_properties(&x);
    fputs("\"traceEvents\":[", f);
    write_processes(&x);
    write_apis(&x); /* before the GPU records: their arrows start at the API calls' tracks */
    write_ranges(&x);
    write_captures(&x);
    write_gpu_records(&x); /* before the track names: it decides which overlap lanes exist */
    write_tracks(&x);
    int rc = write_devices(&x, gpu_pid);
    fputs("\n]}\n", f);
    exporter_free(&x);
    return rc;
}

int cli_export_chrome(FILE *f, const analysis *a)
{
    return write_trace(f, a) ? -1 : 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chrome", required_argument, 0, 'c'},
        {"baseline", required_argument, 0, 'b'},
        {"force", no_argument, 0, 'f'},
        {"assume-mps", required_argument, 0, 'M'},
        {"separate-gpus", no_argument, 0, 'G'},
        {"no-cache", no_argument, 0, CLI_OPT_NO_CACHE},
        {"from", required_argument, 0, 'F'},
        {"to", required_argument, 0, 'T'},
        {"range", required_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = NULL;
    int force = 0, c, rc = 1;
    cli_analysis_opts an;
    store_run *run = NULL, *baseline = NULL, *whole = NULL;
    cli_range range;
    analysis *a = NULL;
    cli_output *o = NULL;
    FILE *f = NULL;
    if (cli_analysis_opts_init(&an, "export", argc))
        return 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:b:fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': out = optarg; break; /* --chrome: export takes no --compare */
        case 'b':
        case CLI_OPT_NO_CACHE:
        case 'G':
        case 'M':
        case 'F':
        case 'T':
        case 'R':
            if (cli_analysis_option("export", c, optarg, &an)) {
                rc = 2;
                goto out;
            }
            break;
        case 'f': force = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            rc = 0;
            goto out;
        default: rc = cli_usage_error("export", "unknown option"); goto out;
        }
    }
    if (!out || optind >= argc) {
        rc = cli_usage_error("export", !out ? "the output file is required (--chrome OUT.json)"
                                            : "no trace files given");
        goto out;
    }
    if (cli_refuse_existing("export", out, force))
        goto out;
    if (cli_load(argc - optind, argv + optind, an.separate_gpus, &run) != 0 ||
        (an.nbaseline && cli_load(an.nbaseline, an.baseline, an.separate_gpus, &baseline) != 0) ||
        cli_restrict("export", &an, &run, &whole, &an.options, &range) != 0 ||
        cli_analyse(run, baseline ? baseline : whole, &an.options, &a) != 0 ||
        !(o = cli_output_begin("export", out, force, &f)))
        goto out;
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    if (cli_output_finish(o, write_trace(f, a) ? "out of memory" : NULL) == 0) {
        cli_msg(stderr,
                "tlview export: wrote %llu kernels, %llu copies, %llu API calls and %llu ranges "
                "of %u processes to %s\n",
                (unsigned long long)run->nkernels, (unsigned long long)run->ncopies,
                (unsigned long long)run->napis, (unsigned long long)run->nranges, run->nprocesses,
                out);
        rc = 0;
    }
out:
    analysis_free(a);
    store_run_free(run);
    store_run_free(baseline);
    store_run_free(whole);
    cli_analysis_opts_free(&an);
    return rc;
}
