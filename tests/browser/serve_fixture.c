/* serve_fixture: serves generated runs (bench/bench_serve_gen.c: kernels, a cudaLaunchKernel per
 * kernel, a copy or memset per 50 kernels, NVTX ranges) on 127.0.0.1 port 0 for the browser
 * tests, so they check the page against known data without trace files or the CLI.
 * Usage: serve_fixture [--compare] [--kernels N] [--procs N]; prints the URL on one line, with
 * the token the server requires as `tlview serve` prints it, and serves until SIGTERM or SIGINT.
 * serve_fixture --save FILE [--kernels N] [--procs N] writes the first run to FILE instead (a
 * tlview file, for the tests of `tlview serve` on a big run) and exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_serve_gen.h"
#include "web.h"

int main(int argc, char **argv)
{
    int compare = 0;
    uint64_t nk = 20000;
    unsigned procs = 4;
    const char *save = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--compare") == 0)
            compare = 1;
        else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc)
            save = argv[++i];
        else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc)
            nk = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
            procs = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--compare] [--kernels N] [--procs N] [--save FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    unsigned nruns = compare ? 2 : 1;
    store_run *runs[2] = {0};
    analysis *an[2] = {0};
    web_run wr[2];
    char labels[2][64];
    for (unsigned i = 0; i < nruns; i++) {
        bench_gen_opts o = {.nkernels = nk,
                            .nprocs = procs,
                            .streams = i ? 1 : 2,
                            .per_iter = 60,
                            .mps = (int)i,
                            .seed = 0,
                            .api = 1,
                            .copy_every = 50,
                            .nvtx = 1};
        runs[i] = bench_gen_run(&o);
        if (save) {
            int rc = !runs[i] || store_run_save(runs[i], save, "serve_fixture") != 0;
            if (rc)
                fprintf(stderr, "serve_fixture: cannot write %s\n", save);
            store_run_free(runs[i]);
            return rc;
        }
        if (!runs[i] || analysis_run(runs[i], NULL, &an[i]) != ANALYSIS_OK) {
            fprintf(stderr, "serve_fixture: cannot generate or analyse run %u\n", i);
            return 1;
        }
        snprintf(labels[i], sizeof labels[i], "generated, MPS %s (%u processes)", i ? "on" : "off",
                 procs);
        wr[i] = (web_run){labels[i], runs[i], an[i]};
    }
    web_options opt;
    web_options_default(&opt);
    opt.port = 0;
    web *w;
    char err[256];
    if (web_start(&opt, wr, nruns, &w, err, sizeof err) != WEB_OK) {
        fprintf(stderr, "serve_fixture: %s\n", err);
        return 1;
    }
    printf("http://127.0.0.1:%u/?token=%s\n", web_port(w), web_token(w));
    fflush(stdout);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    web_stop(w);
    for (unsigned i = 0; i < nruns; i++) {
        analysis_free(an[i]);
        store_run_free(runs[i]);
    }
    return 0;
}
