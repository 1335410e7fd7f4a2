/* bench_serve_gen.c: see bench_serve_gen.h. Kernel names are real mangled C++ names so that the
 * page shows demangled ones; durations come from a small table of launch configurations. The
 * host side of each process runs one thread: each kernel's cudaLaunchKernel ends 2.5 us before
 * the kernel starts (kernels of a process start at least 11 us apart, so calls never overlap), a
 * copy's call comes right after it and the copy right after the kernel ends. Without the host
 * options the run is the same as before they existed (same kernels, strings and random draws). */
#include <stdio.h>

#include "bench_serve_gen.h"

#define BASE_NS 1764000000000000000LL /* an absolute realtime origin */
#define SOLO_PER_PROC 24
#define BARRIER_GAP_NS 1500000 /* idle between iterations: longer than the join gap */
#define API_LEAD_NS 5000       /* a launch call starts this long before its kernel ... */
#define API_NS 2500            /* ... and lasts this long */
#define STEP_KERNELS 20        /* kernels of a process per NVTX "step" range */
#define LAYER_KERNELS 5        /* ... and per "layer" range inside it */

static const struct {
    const char *name;
    uint32_t grid, block, regs;
    int64_t dur; /* solo duration, ns */
} KERNELS[] = {
    {"_Z11spin_kernelPyy", 132, 256, 24, 40000},
    {"_Z6matmulPKfS0_Pfi", 1024, 256, 64, 120000},
    {"_ZN4tlvw6reduceIfLi256EEEvPKT_PS1_m", 512, 256, 32, 18000},
    {"_Z7softmaxPfPKfii", 256, 128, 40, 9000},
};
#define NKINDS (sizeof KERNELS / sizeof *KERNELS)

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* What one process's host thread is doing: the open NVTX ranges and its copies' count. */
typedef struct host {
    store_idx process;
    store_idx stream_copy;              /* the stream its copies go to (its first) */
    uint64_t kernels;                   /* kernels launched so far */
    int64_t step_t0, layer_t0, iter_t0; /* starts of the open ranges (-1 none) */
    unsigned step, layer;               /* ranges made so far */
} host;

/* The interned names the host side uses. */
typedef struct names {
    store_idx launch, memcpy, memset;
} names;

/* range: adds an NVTX range on thread 1 of h's process named "<what> <n>". 0 or STORE_ENOMEM. */
static int range(store_run *run, const host *h, const char *what, unsigned n, int64_t s, int64_t e)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%s %u", what, n);
    store_range r = {s, e, h->process, 1, STORE_NONE, store_run_intern(run, buf)};
    return r.name == STORE_NONE ? STORE_ENOMEM : store_run_add_range(run, &r);
}

/* host_kernel: the host side of kernel k (starting at s, ending at e) of h's process, as o asks:
 * its launch call, every o->copy_every kernels a copy (kinds in turn: HtoD, DtoH, DtoD, memset)
 * and its call, and the NVTX step and layer ranges it opens or closes (`last`: the last kernel of
 * its iteration). 0 or STORE_ENOMEM. */
static int host_kernel(store_run *run, const bench_gen_opts *o, const names *nm, host *h,
                       const store_kernel *k, int last, uint32_t *corr)
{
    int64_t a0 = k->start - API_LEAD_NS, a1 = a0 + API_NS;
    if (o->nvtx && h->iter_t0 >= 0) {
        if (h->kernels % STEP_KERNELS == 0)
            h->step_t0 = a0 - 200;
        if (h->kernels % LAYER_KERNELS == 0)
            h->layer_t0 = a0 - 100;
    }
    if (o->api) {
        store_api a = {a0, a1, h->process, k->correlation_id, 1, nm->launch, STORE_API_RUNTIME, 0};
        if (store_run_add_api(run, &a))
            return STORE_ENOMEM;
    }
    int64_t host_end = a1;
    if (o->copy_every && (h->kernels + 1) % o->copy_every == 0) {
        static const uint16_t kinds[] = {1, 2, 8, 3}; /* HtoD, DtoH, DtoD, then a Device memset */
        unsigned turn = (unsigned)((h->kernels + 1) / o->copy_every % 4);
        store_copy c = {k->end + 200,
                        k->end + 1700,
                        h->stream_copy,
                        (*corr)++,
                        turn == 3 ? STORE_COPY_MEMSET : STORE_COPY_MEMCPY,
                        kinds[turn],
                        65536};
        if (store_run_add_copy(run, &c))
            return STORE_ENOMEM;
        if (o->api) {
            store_api a = {a1 + 100,          a1 + 600, h->process,
                           c.correlation_id,  1,        turn == 3 ? nm->memset : nm->memcpy,
                           STORE_API_RUNTIME, 0};
            if (store_run_add_api(run, &a))
                return STORE_ENOMEM;
            host_end = a1 + 600;
        }
    }
    h->kernels++;
    if (o->nvtx && h->iter_t0 >= 0) {
        if ((h->kernels % LAYER_KERNELS == 0 || last) && h->layer_t0 >= 0) {
            if (range(run, h, "layer", h->layer++, h->layer_t0, host_end + 100))
                return STORE_ENOMEM;
            h->layer_t0 = -1;
        }
        if ((h->kernels % STEP_KERNELS == 0 || last) && h->step_t0 >= 0) {
            if (range(run, h, "step", h->step++, h->step_t0, host_end + 200))
                return STORE_ENOMEM;
            h->step_t0 = -1;
        }
    }
    return STORE_OK;
}

store_run *bench_gen_run(const bench_gen_opts *o)
{
    store_run *run = store_run_new();
    if (!run)
        return NULL;
    unsigned np = o->nprocs ? o->nprocs : 1, ns = o->streams ? o->streams : 1;
    unsigned per = o->per_iter ? o->per_iter : 200;
    uint64_t rng = o->seed ? o->seed : 88172645463325252ULL;
    store_idx streams[64][4], launches[64][NKINDS];
    host hosts[64];
    names nm = {0};
    if (np > 64 || ns > 4)
        goto fail;
    if (o->api) /* interned only when used: without the options the run is as it always was */
        nm = (names){store_run_intern(run, "cudaLaunchKernel"),
                     store_run_intern(run, "cudaMemcpyAsync"),
                     store_run_intern(run, "cudaMemsetAsync")};
    for (unsigned p = 0; p < np; p++) {
        char argv[64];
        snprintf(argv, sizeof argv, "./spin --iters %u --rank %u", per, p);
        store_process_info pi = {.pid = 4100 + p,
                                 .ppid = 4000,
                                 .host = "h200-node",
                                 .exe = "/opt/demo/spin",
                                 .argv = argv,
                                 .source = "libcollect"};
        store_idx pr = store_run_add_process(run, &pi, "generated");
        if (pr == STORE_NONE)
            goto fail;
        run->processes[pr].complete = 1; /* as a collector that finished cleanly would say */
        store_device_info di = {.device_id = 0,
                                .uuid = "6a1c0e2f9b3d4c5e8f7a6b5c4d3e2f10",
                                .name = "NVIDIA H200",
                                .sm_count = 132,
                                .cc_major = 9,
                                .global_memory = 150ULL << 30};
        store_idx dev = store_run_add_device(run, pr, &di);
        store_idx cx = store_run_context(run, pr, 1, dev, o->mps ? 2 : 1);
        for (unsigned s = 0; s < ns; s++)
            streams[p][s] = store_run_stream(run, cx, 7 + 6 * s);
        hosts[p] = (host){.process = pr,
                          .stream_copy = streams[p][0],
                          .step_t0 = -1,
                          .layer_t0 = -1,
                          .iter_t0 = -1};
        for (unsigned k = 0; k < NKINDS; k++) {
            store_launch l = {.name = store_run_intern(run, KERNELS[k].name),
                              .grid = {KERNELS[k].grid, 1, 1},
                              .block = {KERNELS[k].block, 1, 1},
                              .registers = KERNELS[k].regs};
            launches[p][k] = store_run_launch(run, &l);
        }
    }
    uint32_t corr = 1;
    int64_t t = BASE_NS;
    /* solo phase: one process after the other, each in its "warmup" range */
    for (unsigned p = 0; p < np; p++) {
        int64_t t_warm = t - API_LEAD_NS - 1000;
        for (unsigned i = 0; i < SOLO_PER_PROC; i++) {
            unsigned k = i % NKINDS;
            int64_t d = KERNELS[k].dur + (int64_t)(next(&rng) % 2000);
            store_kernel kk = {t, t + d, streams[p][i % ns], launches[p][k], corr++, 0};
            if (store_run_add_kernel(run, &kk) ||
                host_kernel(run, o, &nm, &hosts[p], &kk, 0, &corr))
                goto fail;
            t += d + 3000;
        }
        if (o->nvtx && range(run, &hosts[p], "warmup", 0, t_warm, t - 2000))
            goto fail;
    }
    t += BARRIER_GAP_NS;
    uint64_t total = (uint64_t)np * SOLO_PER_PROC;
    double stretch = o->mps ? 1.1 : (double)np;
    unsigned iter = 0;
    while (total < o->nkernels) {
        /* one iteration: every process runs the same step at the same time (as ranks of one job
         * do), so each overlapped kernel overlaps the others for its whole length */
        for (unsigned p = 0; p < np; p++) {
            hosts[p].iter_t0 = t - API_LEAD_NS - 1000;
            hosts[p].kernels = 0; /* steps and layers count from the iteration's start */
        }
        for (unsigned i = 0; i < per; i++) {
            unsigned k = (unsigned)(next(&rng) % NKINDS);
            int64_t step_end = t;
            for (unsigned p = 0; p < np; p++) {
                int64_t s = t + (int64_t)(next(&rng) % 1000);
                int64_t d = (int64_t)(KERNELS[k].dur * stretch) + (int64_t)(next(&rng) % 2000);
                store_kernel kk = {s, s + d, streams[p][i % ns], launches[p][k], corr++, 0};
                if (store_run_add_kernel(run, &kk) ||
                    host_kernel(run, o, &nm, &hosts[p], &kk, i + 1 == per, &corr))
                    goto fail;
                if (s + d > step_end)
                    step_end = s + d;
            }
            t = step_end + 2000;
        }
        for (unsigned p = 0; o->nvtx && p < np; p++) {
            if (range(run, &hosts[p], "iteration", iter, hosts[p].iter_t0, t))
                goto fail;
            hosts[p].iter_t0 = -1;
        }
        iter++;
        total += (uint64_t)np * per;
        t += BARRIER_GAP_NS;
    }
    if (store_run_finish(run))
        goto fail;
    return run;
fail:
    store_run_free(run);
    return NULL;
}
