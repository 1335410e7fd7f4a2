/* bench_job_gen: writes a synthetic MPI job for `tlview job` (its bench and tests): H hosts x G
 * GPUs x R ranks per GPU, one file per rank as libcollect writes it under mpirun (process row with
 * the host, process_meta env.OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE and
 * env.CUDA_VISIBLE_DEVICES naming the rank's one GPU, which it sees as ordinal 0; the GPU's UUID).
 * Each rank first runs 16 kernels alone (solo references), then the R ranks of a GPU run
 * together: time-sliced (each kernel stretched R times) or, on every M-th GPU, as MPS clients
 * (stretched 1.05x: concurrent). Each host's clock is hours away from the others' (they are never
 * compared). Deterministic.
 *   bench_job_gen DIR [-H hosts] [-g gpus] [-r ranks] [-k kernels per file] [-b kernels]
 *                     [-m every] [-u] [-B]
 * -b: the ranks of host 0's GPU 0 get this many kernels each (one big group); -B: write only
 * those files (to replace them in a copy of a job written before); -m: every M-th GPU
 * runs under MPS (0: none); -u: devices without UUID (matched by host, ordinal, name, memory:
 * then every rank sees its GPU under its own ordinal, CUDA_VISIBLE_DEVICES unset). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench_jitter.h"
#include "store.h"

#define NSIG 4
#define SOLO 16          /* kernels each rank runs alone */
#define PER_ITER 4       /* kernels per rank between two barriers */
#define BARRIER 100000LL /* ns idle between iterations */

typedef struct gen {
    int hosts, gpus, ranks, mps_every, no_uuid, only_big;
    uint64_t kernels, big;
} gen;

static int64_t base_dur(int sig)
{
    return 20000 + 10000 * sig; /* 20 us .. 50 us */
}

/* Writes the file of rank `rank`: host h, GPU g, j-th rank of that GPU. */
static int write_rank(const char *dir, const gen *o, int h, int g, int j)
{
    static const char *const names[NSIG] = {"_Z4gemmPfS_S_i", "_Z4reluPfi", "_Z7softmaxPfi",
                                            "_Z6reducePfi"};
    int rank = (h * o->gpus + g) * o->ranks + j;
    int local = g * o->ranks + j;
    int mps = o->mps_every > 0 && (h * o->gpus + g) % o->mps_every == o->mps_every - 1;
    uint64_t per = h == 0 && g == 0 && o->big ? o->big : o->kernels;
    char path[4096], host[32], uuid[33], v[32];
    snprintf(host, sizeof host, "node%03d", h);
    snprintf(path, sizeof path, "%s/%s.%05d.db", dir, host, rank);
    snprintf(uuid, sizeof uuid, "%08x%08x%016x", 0x6a860000u + (unsigned)h, (unsigned)g, 0x42u);
    /* each host's clock: hours apart from the others' */
    int64_t t0 = 1700000000000000000LL + (int64_t)h * 3600000000000LL;
    store_writer *w = NULL;
    int64_t id;
    store_process_info pi = {.pid = 20000 + local,
                             .ppid = 19999,
                             .host = host,
                             .exe = "/opt/app/solver",
                             .argv = "solver --steps 100",
                             .source = "libcollect",
                             .start_wall = t0};
    store_device_info di = {o->no_uuid ? (uint32_t)g : 0,
                            o->no_uuid ? NULL : uuid,
                            "NVIDIA H200",
                            132,
                            9,
                            0,
                            150754820096ULL};
    store_context_info ci = {.context_id = 1,
                             .device_id = di.device_id,
                             .compute_api_kind = mps ? 2 : 1,
                             .null_stream_id = 7};
    if (store_writer_open(path, STORE_CLOCK_REALTIME, t0, &w) ||
        store_writer_meta(w, "writer", "bench_job_gen") || store_writer_process(w, &pi, &id) ||
        store_writer_begin(w))
        goto fail;
    const char *keys[] = {"env.OMPI_COMM_WORLD_RANK", "env.OMPI_COMM_WORLD_LOCAL_RANK",
                          "env.OMPI_COMM_WORLD_SIZE", "env.CUDA_VISIBLE_DEVICES"};
    int64_t vals[] = {rank, local, (int64_t)o->hosts * o->gpus * o->ranks, g};
    for (int i = 0; i < (o->no_uuid ? 3 : 4); i++) {
        snprintf(v, sizeof v, "%lld", (long long)vals[i]);
        if (store_writer_process_meta(w, id, keys[i], v))
            goto fail;
    }
    if (store_writer_device(w, id, &di) || store_writer_context(w, id, &ci))
        goto fail;
    store_kernel_info k = {.device_id = di.device_id,
                           .context_id = 1,
                           .stream_id = 7,
                           .grid = {264, 1, 1},
                           .block = {256, 1, 1},
                           .registers = 32};
    int64_t solo_len = 0;
    for (int i = 0; i < SOLO; i++)
        solo_len += base_dur(i % NSIG) * 11 / 10;
    /* solo phase: rank j alone in slot j */
    int64_t t = t0 + (int64_t)j * (solo_len + BARRIER);
    uint64_t n = 0;
    for (int i = 0; i < SOLO && n < per; i++, n++) {
        k.name = names[i % NSIG];
        k.start = t;
        k.end = t + bench_jitter(base_dur(i % NSIG));
        k.correlation_id = (uint32_t)n + 1;
        t = k.end + 1000;
        if (store_writer_kernel(w, id, &k))
            goto fail;
    }
    /* together: the GPU's ranks at once, time-sliced (x ranks) or MPS clients (x 1.05) */
    double stretch = mps ? 1.05 : o->ranks;
    int64_t iter_len = BARRIER;
    for (int i = 0; i < PER_ITER; i++)
        iter_len += (int64_t)(base_dur(i % NSIG) * stretch * 1.1) + 1000;
    int64_t start = t0 + (int64_t)o->ranks * (solo_len + BARRIER);
    for (uint64_t it = 0; n < per; it++) {
        t = start + (int64_t)it * iter_len + j * 300;
        for (int i = 0; i < PER_ITER && n < per; i++, n++) {
            k.name = names[i % NSIG];
            k.start = t;
            k.end = t + bench_jitter((int64_t)(base_dur(i % NSIG) * stretch));
            k.correlation_id = (uint32_t)n + 1;
            t = k.end + 1000;
            if (store_writer_kernel(w, id, &k))
                goto fail;
        }
    }
    if (store_writer_commit(w) || store_writer_process_end(w, id, t, 1, NULL))
        goto fail;
    return store_writer_close(w) ? 1 : 0;
fail:
    fprintf(stderr, "bench_job_gen: %s: %s\n", path, w ? store_writer_errmsg(w) : "out of memory");
    store_writer_close(w);
    return 1;
}

int main(int argc, char **argv)
{
    gen o = {.hosts = 64, .gpus = 8, .ranks = 4, .kernels = 300, .mps_every = 4};
    int c;
    while ((c = getopt(argc, argv, "H:g:r:k:b:m:uB")) != -1) {
        switch (c) {
        case 'H': o.hosts = atoi(optarg); break;
        case 'g': o.gpus = atoi(optarg); break;
        case 'r': o.ranks = atoi(optarg); break;
        case 'k': o.kernels = strtoull(optarg, NULL, 10); break;
        case 'b': o.big = strtoull(optarg, NULL, 10); break;
        case 'm': o.mps_every = atoi(optarg); break;
        case 'u': o.no_uuid = 1; break;
        case 'B': o.only_big = 1; break;
        default: return 2;
        }
    }
    if (optind != argc - 1 || o.hosts < 1 || o.gpus < 1 || o.ranks < 1 || o.hosts > 100000 ||
        o.gpus > 64 || o.ranks > 64 || o.mps_every < 0) {
        fprintf(stderr, "usage: bench_job_gen DIR [-H hosts] [-g gpus] [-r ranks] [-k kernels] "
                        "[-b kernels] [-m every] [-u] [-B]\n");
        return 2;
    }
    const char *dir = argv[optind];
    mkdir(dir, 0755);
    for (int h = 0; h < o.hosts; h++)
        for (int g = 0; g < o.gpus; g++)
            for (int j = 0; j < o.ranks; j++)
                if ((!o.only_big || (h == 0 && g == 0)) && write_rank(dir, &o, h, g, j))
                    return 1;
    printf("bench_job_gen: %d hosts x %d GPUs x %d ranks: %d files written in %s\n", o.hosts,
           o.gpus, o.ranks, o.only_big ? o.ranks : o.hosts * o.gpus * o.ranks, dir);
    return 0;
}
