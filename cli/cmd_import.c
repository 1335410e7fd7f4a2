/* cmd_import.c: `tlview import -o RUN.db FILE...`. Reads foreign profiler files (nvprof, NVVP
 * sessions, Nsight Systems SQLite exports, Chrome/PyTorch JSON traces, plain or gzip; tlview files
 * too) through importers/, merges them on one time axis and writes one tlview file. Prints what
 * each file gave and what could not be mapped, so nothing is dropped silently.
 * tlview-summary: convert nvprof, Nsight Systems SQLite and PyTorch/Chrome JSON traces to one
 * tlview file */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "importers.h"

/* The help of every command that reads files names these defaults. */
_Static_assert(IMP_MAX_EVENTS == 10000000 && IMP_MAX_MEMORY == 2048ull << 20,
               "CLI_IMPORT_LIMITS_HELP names the defaults of importers.h");

static const char usage_text[] =
    "usage: tlview import -o OUT.db [-f] [-q] [--separate-gpus] FILE...\n"
    "\n"
    "Reads profiler files written by other tools and writes them as one tlview file, every "
    "process\n"
    "on one time axis, ready for `tlview report`, `serve` and `export`. The format of each FILE "
    "is\n"
    "found from its content, not its name:\n"
    "  nvprof       SQLite databases from nvprof -o (.nvvp, .nvprof, output.%p, any name): "
    "kernels\n"
    "               (CONCURRENT_KERNEL and KERNEL), memcpy, memset, runtime/driver API, NVTX "
    "markers\n"
    "  nvvp         sessions saved by NVIDIA Visual Profiler (.nvvp that is XML): each nvprof\n"
    "               database it holds (gzip, base64) is decoded in memory and read as nvprof's,\n"
    "               one process each; the guided analysis' databases are skipped and counted\n"
    "  nsys         Nsight Systems SQLite exports (nsys export --type sqlite): kernels, memcpy,\n"
    "               memset, CUDA API, NVTX; one process per profiled pid\n"
    "  chrome       Chrome trace JSON from the PyTorch profiler (Kineto), plain or .gz: kernel,\n"
    "               memcpy, memset, CUDA runtime and user_annotation events\n"
    "  tlview       tlview's own files (copied as they are)\n"
    "Give the files of one multi-process run together (nvprof -o out.%p.nvvp, one PyTorch trace "
    "per\n"
    "rank) and they are merged like tlview's own per-process files.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  the tlview file to write (required; never overwritten without -f)\n"
    "  -f, --force        replace FILE if it exists (it may be one of the inputs); FILE is\n"
    "                     replaced only once the new file is complete, and never when it is a\n"
    "                     symbolic link or not a regular file\n"
    "  -q, --quiet        print nothing but errors (no per-file summary, no progress bar)\n"
    "      --separate-gpus\n"
    "                     files without GPU UUIDs (PyTorch traces): keep each process's GPUs\n"
    "                     apart instead of matching them by host, ordinal, name and memory\n"
    "                     (OUT.db remembers it)\n"
    "  -h, --help         this text\n"
    "\n"
    "For each FILE a summary line tells the format, the processes and the records imported, then\n"
    "what was not imported and why (records without times, tables and event kinds tlview does not\n"
    "show); the same counts are kept in the file as process_meta keys import.unmapped.<kind>.\n"
    "A progress bar is drawn on stderr when it is a terminal.\n"
    "\n" CLI_IMPORT_LIMITS_HELP
    "TLVIEW_MAX_MEMORY also bounds each database of an NVVP session, held inflated while it is\n"
    "read.\n\n"
    "Exit status: 0 when every file was imported and OUT.db written; 1 when a file could not be\n"
    "read (unknown format, corrupt, truncated: the message names the file and the problem) or\n"
    "OUT.db could not be written; 2 for a usage error.\n";

/* What one file gave, on stdout. The path, the unmapped kinds and the note come from files. */
static void summary(const char *path, const imp_stats *st, const store_run *run, uint32_t first)
{
    cli_msg(stdout, "%s: %s, %u process%s", path, st->format, st->processes,
            st->processes == 1 ? "" : "es");
    for (uint32_t p = first; p < run->nprocesses && p < first + 4; p++)
        printf("%s%lld", p == first ? " (pid " : ", ", (long long)run->processes[p].pid);
    if (st->processes)
        printf("%s)", st->processes > 4 ? ", ..." : "");
    printf(", %llu kernels, %llu copies, %llu API calls, %llu ranges\n",
           (unsigned long long)st->kernels, (unsigned long long)st->copies,
           (unsigned long long)st->apis, (unsigned long long)st->ranges);
    if (st->nunmapped) {
        printf("  not imported (%llu):", (unsigned long long)st->unmapped_total);
        for (uint32_t i = 0; i < st->nunmapped; i++)
            cli_msg(stdout, "%s %llu %s", i ? "," : "", (unsigned long long)st->unmapped[i].count,
                    st->unmapped[i].kind);
        printf("\n");
    }
    if (st->warning[0])
        cli_msg(stdout, "  note: %s\n", st->warning);
}

int cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},        {"separate-gpus", no_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int force = 0, quiet = 0, separate = 0, c;
    optind = 0; /* full re-initialisation: the dispatcher may have used getopt already */
    while ((c = getopt_long(argc, argv, "o:fqh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 'q': quiet = 1; break;
        case 'G': separate = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return cli_usage_error("import", "unknown option");
        }
    }
    if (!out || optind >= argc)
        return cli_usage_error("import", "%s", !out ? "-o OUT.db is required" : "no input files");
    if (cli_refuse_existing("import", out, force))
        return 1;

    store_run *run = store_run_new();
    if (!run) {
        fprintf(stderr, "tlview import: out of memory\n");
        return 1;
    }
    store_run_set_gpu_identity(run, separate); /* cannot fail: the run has no device yet */
    imp_total total = {0};                     /* the limits hold for all the files together */
    imp_options opt = {.progress = quiet ? NULL : cli_progress_tty, .total = &total};
    char formats[64] = "";
    int rc = 0;
    for (int i = optind; i < argc && rc == 0; i++) {
        imp_stats st;
        imp_error err;
        uint32_t first = run->nprocesses;
        rc = imp_load_ex(run, argv[i], &opt, &st, &err);
        if (rc) {
            cli_msg(stderr, "tlview import: %s\n", err.message);
            break;
        }
        if (!strstr(formats, st.format) && strlen(formats) + strlen(st.format) + 2 < sizeof formats)
            snprintf(formats + strlen(formats), sizeof formats - strlen(formats), "%s%s",
                     formats[0] ? "," : "", st.format);
        if (!quiet)
            summary(argv[i], &st, run, first);
    }
    if (rc == 0 && (rc = store_run_finish(run)) != 0)
        cli_msg(stderr, "tlview import: %s\n", store_run_errmsg(run));
    if (rc == 0) {
        char writer[128];
        snprintf(writer, sizeof writer, "tlview import (%s) %s", formats, CLI_VERSION);
        /* every input is in memory now: OUT.db may be one of them */
        cli_output *o = cli_output_begin("import", out, force, NULL);
        rc = 1;
        if (o) {
            int src = store_run_save(run, cli_output_path(o), writer);
            rc = cli_output_finish(o, src ? store_run_errmsg(run) : NULL);
        }
        if (rc == 0 && !quiet)
            cli_msg(stdout,
                    "wrote %s: %u process%s, %llu kernels, %llu copies, %llu API calls, %llu "
                    "ranges\n",
                    out, run->nprocesses, run->nprocesses == 1 ? "" : "es",
                    (unsigned long long)run->nkernels, (unsigned long long)run->ncopies,
                    (unsigned long long)run->napis, (unsigned long long)run->nranges);
    }
    store_run_free(run);
    return rc ? 1 : 0;
}
