/* tracegen.c: writes one synthetic tlview file (one process) for the CLI tests, through the store
 * writer. Kernels come as trains: --train START,N,DUR,GAP adds N kernels of DUR ns every DUR+GAP
 * ns from START (ns, realtime clock). Usage:
 *   tracegen OUT.db [--pid N] [--host H] [--run-id R] [--mps] [--uuid U | --no-uuid] [--name K]
 *            [--device-name D] [--incomplete] --train START,N,DUR,GAP [--train ...]
 *            [--uuid2 U --train2 START,N,DUR,GAP ...]
 * --uuid2 gives the process a second GPU (CUDA ordinal 1, context 2, stream 8) that the --train2
 * trains run on, as a process that uses two GPUs. --no-uuid writes the GPU without a uuid, as
 * PyTorch traces describe theirs. The other records, on context 1 and stream 7 (times in ns):
 *   --launch GX,GY,GZ,BX,BY,BZ,REGS,STATIC_SMEM,DYNAMIC_SMEM   launch config of every kernel
 *   --green SM_COUNT,PARENT      context 1 is a green context of SM_COUNT SMs under PARENT
 *   --memcpy START,DUR,KIND,BYTES,CORR       --memset START,DUR,MEMORY_KIND,BYTES,CORR
 *   --api START,DUR,THREAD,CORR,DOMAIN,STATUS,NAME      (DOMAIN 1 runtime, 2 driver)
 *   --range START,DUR,THREAD,NAME[,DOMAIN]              (an NVTX range)
 *   --capture START,END,NAME[,OPENED_BY[,CLOSED_BY]]    (a capture range; NAME - for none,
 *                                 OPENED_BY start by default, CLOSED_BY exit, - for never) */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

static int fail(store_writer *w, const char *what)
{
    fprintf(stderr, "tracegen: %s: %s\n", what, w ? store_writer_errmsg(w) : "out of memory");
    store_writer_close(w);
    return 1;
}

/* Writes one --memcpy/--memset/--api/--range record (`kind` is the option letter, `spec` its
 * argument). 0, or -1 (bad argument or write error, the message on w or stderr). */
static int more_record(store_writer *w, int64_t id, char kind, const char *spec)
{
    int64_t start, dur;
    unsigned a, b, e;
    unsigned long long bytes, thread;
    int status, n = 0;
    char text[200] = "", domain[200] = "";
    switch (kind) {
    case 'C':
        if (sscanf(spec, "%" SCNd64 ",%" SCNd64 ",%u,%llu,%u", &start, &dur, &a, &bytes, &b) != 5)
            break;
        store_memcpy_info m = {start, start + dur, 0, 1, 7, b, a, 0, 0, bytes, 0};
        return store_writer_memcpy(w, id, &m);
    case 'S':
        if (sscanf(spec, "%" SCNd64 ",%" SCNd64 ",%u,%llu,%u", &start, &dur, &a, &bytes, &b) != 5)
            break;
        store_memset_info s = {start, start + dur, 0, 1, 7, b, 0, bytes, a};
        return store_writer_memset(w, id, &s);
    case 'A':
        if (sscanf(spec, "%" SCNd64 ",%" SCNd64 ",%llu,%u,%u,%d,%199[^,]", &start, &dur, &thread,
                   &a, &e, &status, text) != 7)
            break;
        store_api_info api = {start, start + dur, thread, a, (store_api_domain)e, 0, text, status};
        return store_writer_api(w, id, &api);
    case 'R':
        n = sscanf(spec, "%" SCNd64 ",%" SCNd64 ",%llu,%199[^,],%199[^,]", &start, &dur, &thread,
                   text, domain);
        if (n < 4)
            break;
        store_range_info g = {start, start + dur, thread, n == 5 ? domain : NULL, text};
        return store_writer_range(w, id, &g);
    case 'K': {
        char opened[200] = "start", closed[200] = "exit";
        n = sscanf(spec, "%" SCNd64 ",%" SCNd64 ",%199[^,],%199[^,],%199[^,]", &start, &dur, text,
                   opened, closed);
        if (n < 3)
            break;
        int64_t cid; /* dur is the end here */
        int rc = store_writer_capture(w, id, start, strcmp(text, "-") ? text : NULL, opened, &cid);
        return rc ? rc : store_writer_capture_end(w, cid, dur, strcmp(closed, "-") ? closed : NULL);
    }
    }
    fprintf(stderr, "tracegen: bad record '%s'\n", spec);
    return -1;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, 0, 'p'},         {"host", required_argument, 0, 'H'},
        {"run-id", required_argument, 0, 'r'},      {"mps", no_argument, 0, 'm'},
        {"uuid", required_argument, 0, 'u'},        {"no-uuid", no_argument, 0, 'N'},
        {"name", required_argument, 0, 'k'},        {"train", required_argument, 0, 't'},
        {"incomplete", no_argument, 0, 'i'},        {"uuid2", required_argument, 0, 'U'},
        {"train2", required_argument, 0, 'T'},      {"launch", required_argument, 0, 'L'},
        {"green", required_argument, 0, 'g'},       {"memcpy", required_argument, 0, 'C'},
        {"memset", required_argument, 0, 'S'},      {"api", required_argument, 0, 'A'},
        {"range", required_argument, 0, 'R'},       {"capture", required_argument, 0, 'K'},
        {"device-name", required_argument, 0, 'd'}, {0, 0, 0, 0},
    };
    uint32_t launch[9] = {1, 1, 1, 1, 1, 1, 0, 0, 0}, green[2] = {0, 0};
    const char *more[256]; /* --memcpy, --memset, --api and --range arguments, in order */
    char more_kind[256];   /* their option letters */
    int nmore = 0;
    store_process_info pi = {0};
    pi.pid = 1000;
    pi.host = "node1";
    pi.run_id = "run-1";
    pi.source = "libcollect";
    const char *uuid = "0123456789abcdef0123456789abcdef", *name = "_Z4spinPfi", *uuid2 = NULL;
    const char *device = "NVIDIA H200";
    int mps = 0, incomplete = 0, c;
    int64_t trains[64][5]; /* start, n, dur, gap, gpu (0 or 1) */
    int ntrains = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': pi.pid = strtoll(optarg, NULL, 10); break;
        case 'H': pi.host = optarg; break;
        case 'r': pi.run_id = optarg; break;
        case 'm': mps = 1; break;
        case 'u': uuid = optarg; break;
        case 'N': uuid = NULL; break;
        case 'k': name = optarg; break;
        case 'd': device = optarg; break;
        case 'i': incomplete = 1; break;
        case 'U': uuid2 = optarg; break;
        case 't':
        case 'T':
            if (ntrains == 64 ||
                sscanf(optarg, "%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64, &trains[ntrains][0],
                       &trains[ntrains][1], &trains[ntrains][2], &trains[ntrains][3]) != 4) {
                fprintf(stderr, "tracegen: bad --train '%s'\n", optarg);
                return 2;
            }
            trains[ntrains++][4] = c == 'T';
            break;
        case 'L':
            if (sscanf(optarg, "%u,%u,%u,%u,%u,%u,%u,%u,%u", &launch[0], &launch[1], &launch[2],
                       &launch[3], &launch[4], &launch[5], &launch[6], &launch[7],
                       &launch[8]) != 9) {
                fprintf(stderr, "tracegen: bad --launch '%s'\n", optarg);
                return 2;
            }
            break;
        case 'g':
            if (sscanf(optarg, "%u,%u", &green[0], &green[1]) != 2) {
                fprintf(stderr, "tracegen: bad --green '%s'\n", optarg);
                return 2;
            }
            break;
        case 'C':
        case 'S':
        case 'A':
        case 'R':
        case 'K':
            if (nmore == 256)
                return 2;
            more_kind[nmore] = (char)c;
            more[nmore++] = optarg;
            break;
        default: return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: tracegen OUT.db [options] --train START,N,DUR,GAP...\n");
        return 2;
    }
    store_writer *w = NULL;
    int64_t id;
    if (store_writer_open(argv[optind], STORE_CLOCK_REALTIME, 0, &w) != 0)
        return fail(w, "open");
    if (store_writer_process(w, &pi, &id) != 0)
        return fail(w, "process");
    store_device_info di = {0, uuid, device, 132, 9, 0, 150ULL << 30};
    store_context_info c1 = {.context_id = 1,
                             .device_id = 0,
                             .compute_api_kind = mps ? 2 : 1,
                             .null_stream_id = 7,
                             .green = green[0] != 0,
                             .parent_context_id = green[1],
                             .sm_count = green[0]};
    if (store_writer_device(w, id, &di) != 0 || store_writer_context(w, id, &c1))
        return fail(w, "device");
    store_device_info di2 = {1, uuid2, device, 132, 9, 0, 150ULL << 30};
    store_context_info c2 = {
        .context_id = 2, .device_id = 1, .compute_api_kind = mps ? 2 : 1, .null_stream_id = 8};
    if (uuid2 && (store_writer_device(w, id, &di2) != 0 || store_writer_context(w, id, &c2) != 0))
        return fail(w, "second device");
    if (store_writer_begin(w) != 0)
        return fail(w, "begin");
    uint32_t corr = 1;
    for (int t = 0; t < ntrains; t++)
        for (int64_t i = 0, s = trains[t][0]; i < trains[t][1];
             i++, s += trains[t][2] + trains[t][3]) {
            store_kernel_info k = {0};
            k.start = s;
            k.end = s + trains[t][2];
            k.device_id = (uint32_t)trains[t][4];
            k.context_id = 1 + (uint32_t)trains[t][4];
            k.stream_id = 7 + (uint32_t)trains[t][4];
            k.correlation_id = corr++;
            for (int d = 0; d < 3; d++) {
                k.grid[d] = launch[d];
                k.block[d] = launch[3 + d];
            }
            k.registers = launch[6];
            k.static_smem = launch[7];
            k.dynamic_smem = launch[8];
            k.name = name;
            if (store_writer_kernel(w, id, &k) != 0)
                return fail(w, "kernel");
        }
    for (int i = 0; i < nmore; i++)
        if (more_record(w, id, more_kind[i], more[i]) != 0)
            return fail(w, more[i]);
    if (store_writer_commit(w) != 0)
        return fail(w, "commit");
    if (!incomplete && store_writer_process_end(w, id, 1, 1, NULL) != 0)
        return fail(w, "end");
    return store_writer_close(w) != 0;
}
