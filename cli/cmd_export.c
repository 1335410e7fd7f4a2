/* cmd_export.c: `tlview export --chrome out.json FILES`: the run as a Chrome/Perfetto trace (JSON
 * trace event format), written as a stream so that millions of kernels need no JSON tree: one
 * track per process and stream (overlapping kernels of one stream get extra lanes, so none is
 * hidden), one track per GPU with the verdict windows and the concurrency counter.
 * tlview-summary: write the run as a Chrome/Perfetto trace (JSON) with verdicts */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "view.h"

#define LANES 8 /* lanes per stream for kernels that overlap on one stream */

static const char usage_text[] =
    "usage: tlview export --chrome OUT.json [--baseline FILE]... [-f] [--separate-gpus]\n"
    "                     [--assume-mps on|off] FILES...\n"
    "\n"
    "Writes the run as a Chrome trace event file that chrome://tracing and ui.perfetto.dev open:\n"
    "a process per traced process with a track per CUDA stream (kernels that overlap on one\n"
    "stream get a second lane, so no kernel hides another), and a process per GPU with the\n"
    "overlap windows named by their verdict and a counter of processes and contexts in flight.\n"
    "Kernel events carry grid, block, stretch, the verdict of their window and the MPS flag in\n"
    "their args. Times are microseconds from the run's first record.\n"
    "\n"
    "  -c, --chrome OUT.json  the file to write (required); an existing file is refused\n"
    "  -b, --baseline FILE    solo references from this run (as for tlview report);\n"
    "                         repeatable, or a folder\n"
    "  -f, --force            overwrite OUT.json if it exists\n" CLI_ASSUME_MPS_HELP
    "      --separate-gpus    files without GPU UUIDs: keep each process's GPUs apart instead\n"
    "                         of matching them by host, ordinal, name and memory\n"
    "  -h, --help             this text\n"
    "\n"
    "Exit status: 0 written; 1 a file could not be read or OUT.json written; 2 usage error.\n";

/* Writes s as a JSON string. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* A JSON number or null. */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.4g", v);
    else
        fputs("null", f);
}

/* State of one export. */
typedef struct exporter {
    FILE *f;
    const analysis *a;
    const store_run *run;
    int64_t t0;        /* time origin */
    int first;         /* no event written yet */
    int64_t *lane_end; /* nstreams * LANES */
    uint64_t *cursor;  /* per device slot: first window that may hold the next kernel */
} exporter;

static void sep(exporter *x)
{
    fputs(x->first ? "\n" : ",\n", x->f);
    x->first = 0;
}

static double us(const exporter *x, int64_t t)
{
    return (double)(t - x->t0) / 1000.0;
}

static void meta(exporter *x, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    sep(x);
    fprintf(x->f,
            "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":", what,
            (unsigned long long)pid, (unsigned long long)tid);
    json_str(x->f, name);
    fputs("}}", x->f);
}

static uint32_t slot_of(const exporter *x, store_idx device)
{
    for (uint32_t i = 0; i < analysis_ndevices(x->a); i++)
        if (analysis_get_device(x->a, i)->device == device)
            return i;
    return 0;
}

/* Names the process and stream tracks. */
static void write_tracks(exporter *x)
{
    const store_run *run = x->run;
    char name[512];
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        const store_process *sp = &run->processes[p];
        snprintf(name, sizeof name, "pid %lld (%s)%s%s", (long long)sp->pid,
                 sp->file ? sp->file : "?", sp->host ? " on " : "", sp->host ? sp->host : "");
        meta(x, "process_name", p + 1, 0, name);
    }
    for (uint32_t s = 0; s < run->nstreams; s++) {
        const store_context *c = &run->contexts[run->streams[s].context];
        for (int lane = 0; lane < LANES; lane++) {
            snprintf(name, sizeof name, "stream %u (context %u%s)%s", run->streams[s].stream_id,
                     c->context_id, c->compute_api_kind == 2 ? ", MPS" : "",
                     lane ? " overlapping" : "");
            if (lane == 0 || x->lane_end[(uint64_t)s * LANES + lane] != INT64_MIN)
                meta(x, "thread_name", c->process + 1, (uint64_t)s * LANES + lane + 1, name);
        }
    }
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

static void write_kernels(exporter *x)
{
    const store_run *run = x->run;
    const float *stretch = analysis_stretch(x->a);
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        const store_context *c = &run->contexts[run->streams[k->stream].context];
        const store_launch *l = &run->launches[k->launch];
        int64_t *lanes = &x->lane_end[(uint64_t)k->stream * LANES];
        int lane = 0;
        while (lane < LANES - 1 && lanes[lane] != INT64_MIN && lanes[lane] > k->start)
            lane++;
        if (k->end > lanes[lane])
            lanes[lane] = k->end;
        uint32_t slot = slot_of(x, c->device);
        const char *name = l->name < run->nstrings ? run->strings[l->name].demangled : "?";
        sep(x);
        fprintf(x->f,
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":%u,\"tid\":%llu,\"ts\":%.3f,"
                "\"dur\":%.3f,\"name\":",
                c->process + 1, (unsigned long long)k->stream * LANES + lane + 1, us(x, k->start),
                k->end > k->start ? (double)(k->end - k->start) / 1000.0 : 0.0);
        json_str(x->f, name);
        fprintf(x->f,
                ",\"args\":{\"gpu\":%u,\"grid\":\"%u,%u,%u\",\"block\":\"%u,%u,%u\","
                "\"correlation\":%u,\"stretch\":",
                slot, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                k->correlation_id);
        json_num(x->f, stretch[i]);
        fprintf(x->f, ",\"verdict\":\"%s\",\"mps\":%s}}",
                analysis_verdict_name(kernel_verdict(x, k, slot)),
                c->compute_api_kind == 2 ? "true" : "false");
    }
}

/* A process per GPU: its windows (tid 1) and the concurrency counter. */
static int write_devices(exporter *x)
{
    const store_run *run = x->run;
    const analysis_window *w = analysis_windows(x->a);
    char name[256];
    for (uint32_t i = 0; i < analysis_ndevices(x->a); i++) {
        const analysis_device *d = analysis_get_device(x->a, i);
        uint64_t pid = run->nprocesses + 1 + i;
        snprintf(name, sizeof name, "GPU %u (%s)", i, cli_device_name(run, d, "unknown device"));
        meta(x, "process_name", pid, 0, name);
        meta(x, "thread_name", pid, 1, "overlap verdicts");
        for (uint64_t k = d->first_window; k < d->first_window + d->nwindows; k++) {
            json_t *args = view_window_json(x->a, k);
            char *text = args ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
            json_decref(args);
            if (!text)
                return 1;
            sep(x);
            fprintf(x->f,
                    "{\"ph\":\"X\",\"cat\":\"window\",\"pid\":%llu,\"tid\":1,\"ts\":%.3f,"
                    "\"dur\":%.3f,\"name\":\"%s\",\"args\":%s}",
                    (unsigned long long)pid, us(x, w[k].t0), (double)(w[k].t1 - w[k].t0) / 1000.0,
                    analysis_verdict_name(w[k].verdict), text);
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
                    "{\"ph\":\"C\",\"name\":\"in flight\",\"pid\":%llu,\"ts\":%.3f,"
                    "\"args\":{\"processes\":%u,\"contexts\":%u}}",
                    (unsigned long long)pid, us(x, s < n ? seg[s].t0 : d->t_end),
                    s < n ? seg[s].processes : 0, s < n ? seg[s].contexts : 0);
        }
        free(seg);
    }
    return 0;
}

/* Writes the whole trace; 0 or 1 (out of memory). */
static int write_trace(FILE *f, const analysis *a)
{
    const store_run *run = analysis_get_run(a);
    exporter x = {f, a, run, run->t_begin, 1, NULL, NULL};
    x.lane_end = malloc(((uint64_t)run->nstreams * LANES + 1) * sizeof *x.lane_end);
    x.cursor = calloc(analysis_ndevices(a) + 1, sizeof *x.cursor);
    if (!x.lane_end || !x.cursor) {
        free(x.lane_end);
        free(x.cursor);
        return 1;
    }
    for (uint64_t i = 0; i < (uint64_t)run->nstreams * LANES; i++)
        x.lane_end[i] = INT64_MIN;
    for (uint32_t i = 0; i < analysis_ndevices(a); i++)
        x.cursor[i] = analysis_get_device(a, i)->first_window;
    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tlview %s\",\"t0_ns\":%lld},"
            "\"traceEvents\":[",
            CLI_VERSION, (long long)x.t0);
    write_kernels(&x); /* first: it decides which overlap lanes exist */
    write_tracks(&x);
    int rc = write_devices(&x);
    fputs("\n]}\n", f);
    free(x.lane_end);
    free(x.cursor);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chrome", required_argument, 0, 'c'},
        {"baseline", required_argument, 0, 'b'},
        {"force", no_argument, 0, 'f'},
        {"assume-mps", required_argument, 0, 'M'},
        {"separate-gpus", no_argument, 0, 'G'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = NULL;
    char **base = calloc((size_t)argc + 1, sizeof *base);
    int force = 0, separate = 0, nbase = 0, c, rc = 1, assume_mps = 0;
    store_run *run = NULL, *baseline = NULL;
    analysis *a = NULL;
    cli_output *o = NULL;
    FILE *f = NULL;
    if (!base) {
        fprintf(stderr, "tlview export: out of memory\n");
        return 1;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:b:fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': out = optarg; break;
        case 'b': base[nbase++] = optarg; break;
        case 'f': force = 1; break;
        case 'M':
            if ((assume_mps = cli_parse_assume_mps(optarg)) < 0) {
                rc = cli_usage_error("export", "--assume-mps wants on or off, not '%s'", optarg);
                goto out;
            }
            break;
        case 'G': separate = 1; break;
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
    if (cli_load(argc - optind, argv + optind, separate, &run) != 0 ||
        (nbase && cli_load(nbase, base, separate, &baseline) != 0) ||
        cli_analyse(run, baseline, assume_mps, &a) != 0 ||
        !(o = cli_output_begin("export", out, force, &f)))
        goto out;
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    if (cli_output_finish(o, write_trace(f, a) ? "out of memory" : NULL) == 0) {
        cli_msg(stderr, "tlview export: wrote %llu kernels of %u processes to %s\n",
                (unsigned long long)run->nkernels, run->nprocesses, out);
        rc = 0;
    }
out:
    analysis_free(a);
    store_run_free(run);
    store_run_free(baseline);
    free(base);
    return rc;
}
