/* cmd_merge.c: `tlview merge -o run.db FILES`: the processes of many trace files written as one
 * tlview file on the common time axis, which every command accepts like the originals.
 * tlview-summary: write the processes of many trace files into one tlview file */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static const char usage_text[] =
    "usage: tlview merge -o OUT.db [-f] [--separate-gpus] FILES...\n"
    "\n"
    "Reads the trace files (or folders of them), puts every process on the common time axis and\n"
    "writes them as one tlview file OUT.db, which every tlview command reads like the originals.\n"
    "\n"
    "  -o, --output OUT.db  the file to write (required); an existing file is refused\n"
    "  -f, --force          replace OUT.db if it exists (it may be one of FILES); OUT.db is\n"
    "                       replaced only once the new file is complete, and never when it is\n"
    "                       a symbolic link or not a regular file\n" CLI_SEPARATE_GPUS_HELP
        CLI_NO_CACHE_HELP "                       (OUT.db remembers it)\n"
    "  -h, --help           this text\n"
    "\n" CLI_IMPORT_LIMITS_HELP
    "Exit status: 0 written; 1 a file could not be read or OUT.db written; 2 usage error.\n";

int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},  {"force", no_argument, 0, 'f'},
        {"separate-gpus", no_argument, 0, 'G'}, {"no-cache", no_argument, 0, CLI_OPT_NO_CACHE},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    const char *out = NULL;
    int force = 0, separate = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 'G': separate = 1; break;
        case CLI_OPT_NO_CACHE: cli_cache_disable(); break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return cli_usage_error("merge", "unknown option");
        }
    }
    if (!out)
        return cli_usage_error("merge", "the output file is required (-o OUT.db)");
    if (optind >= argc)
        return cli_usage_error("merge", "no trace files given");
    if (cli_refuse_existing("merge", out, force))
        return 1;
    store_run *run = NULL;
    if (cli_load(argc - optind, argv + optind, separate, &run) != 0)
        return 1;
    /* every input is in memory now: OUT.db may be one of them */
    int rc = 1;
    cli_output *o = cli_output_begin("merge", out, force, NULL);
    if (o) {
        int src = store_run_save(run, cli_output_path(o), "tlview merge " CLI_VERSION);
        rc = cli_output_finish(o, src ? store_run_errmsg(run) : NULL);
    }
    if (rc == 0)
        cli_msg(stderr, "tlview merge: wrote %u processes, %llu kernels to %s\n", run->nprocesses,
                (unsigned long long)run->nkernels, out);
    store_run_free(run);
    return rc;
}
