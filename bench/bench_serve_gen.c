/* bench_serve_gen.c: see bench_serve_gen.h. Kernel names are real mangled C++ names so that the
 * page shows demangled ones; durations come from a small table of launch configurations. */
#include <stdio.h>

#include "bench_serve_gen.h"

#define BASE_NS 1764000000000000000LL /* an absolute realtime origin */
#define SOLO_PER_PROC 24
#define BARRIER_GAP_NS 1500000 /* idle between iterations: longer than the join gap */

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

store_run *bench_gen_run(const bench_gen_opts *o)
{
    store_run *run = store_run_new();
    if (!run)
        return NULL;
    unsigned np = o->nprocs ? o->nprocs : 1, ns = o->streams ? o->streams : 1;
    unsigned per = o->per_iter ? o->per_iter : 200;
    uint64_t rng = o->seed ? o->seed : 88172645463325252ULL;
    store_idx streams[64][4], launches[64][NKINDS];
    if (np > 64 || ns > 4)
        goto fail;
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
    /* solo phase: one process after the other */
    for (unsigned p = 0; p < np; p++) {
        for (unsigned i = 0; i < SOLO_PER_PROC; i++) {
            unsigned k = i % NKINDS;
            int64_t d = KERNELS[k].dur + (int64_t)(next(&rng) % 2000);
            store_kernel kk = {t, t + d, streams[p][i % ns], launches[p][k], corr++, 0};
            if (store_run_add_kernel(run, &kk))
                goto fail;
            t += d + 3000;
        }
    }
    t += BARRIER_GAP_NS;
    uint64_t total = (uint64_t)np * SOLO_PER_PROC;
    double stretch = o->mps ? 1.1 : (double)np;
    while (total < o->nkernels) {
        /* one iteration: every process runs the same step at the same time (as ranks of one job
         * do), so each overlapped kernel overlaps the others for its whole length */
        for (unsigned i = 0; i < per; i++) {
            unsigned k = (unsigned)(next(&rng) % NKINDS);
            int64_t step_end = t;
            for (unsigned p = 0; p < np; p++) {
                int64_t s = t + (int64_t)(next(&rng) % 1000);
                int64_t d = (int64_t)(KERNELS[k].dur * stretch) + (int64_t)(next(&rng) % 2000);
                store_kernel kk = {s, s + d, streams[p][i % ns], launches[p][k], corr++, 0};
                if (store_run_add_kernel(run, &kk))
                    goto fail;
                if (s + d > step_end)
                    step_end = s + d;
            }
            t = step_end + 2000;
        }
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
