/* partitions: clients that each hold a share of the SMs, side by side.
 *   tlview record -n 2 --mps -- partitions                    two MPS clients on the whole GPU:
 *                                                              full-GPU kernels, queued
 *   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 tlview record -n 2 --mps -- partitions
 *                                                              two clients of half the SMs each
 *   partitions --green 2                                      one process, two green contexts of
 *                                                              half the SMs each
 * Every launch is the saturating kernel of samples/saturating (fill_sms), sized to `waves` full
 * waves of the SMs its context is shown: the whole GPU, the SMs an MPS client's thread percentage
 * leaves it (the device then reports fewer SMs to the client), or a green context's SMs. So a
 * client of half the SMs launches half the blocks and takes as long as a whole-GPU launch alone,
 * and two such clients finish together in that time: side by side, each inside its partition.
 * With --green N the process splits the SMs N ways (cuDevSmResourceSplitByCount, cuGreenCtxCreate)
 * and launches from one thread per green context; --only K launches in the first K of them (a
 * partition's own solo run). */
#include <cuda.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "tlsample.h"
#include "tlsat.cuh"

#define MAX_GREEN 8

/* One context (the process's own, or a green one) and its launch. */
typedef struct part {
    int index;
    CUgreenCtx green; /* NULL: the process's primary context */
    CUcontext ctx;
    unsigned sms;     /* SMs the context may use */
    long long blocks; /* its grid: waves x sms x resident blocks per SM */
    float ms;         /* the launch's cudaEvent time */
    double wall_ms;   /* from the start line to its end */
    int bad;          /* threads whose result differs from the CPU replay */
} part;

static struct {
    int iters, waves;
    int launch; /* parts that launch (--only) */
    pthread_barrier_t barrier;
} g;

/* launch: part p's kernel, sized to its SMs, timed and checked. p's context is current. */
static void launch(part *p)
{
    int per_sm = 0;
    CHECK_CUDA(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_sms, TLS_SAT_THREADS, 0));
    p->blocks = (long long)g.waves * p->sms * per_sm;
    if (per_sm < 1 || p->blocks > INT_MAX / TLS_SAT_THREADS) {
        fprintf(stderr, "partitions: %d blocks per SM, %lld blocks: cannot launch\n", per_sm,
                p->blocks);
        exit(EXIT_FAILURE);
    }
    size_t n = (size_t)p->blocks * TLS_SAT_THREADS;
    float *d_out, *h_out = (float *)malloc(sizeof(float) * n);
    if (!h_out) {
        fprintf(stderr, "partitions: out of memory\n");
        exit(EXIT_FAILURE);
    }
    cudaStream_t st;
    if (p->green)
        CHECK_CU(cuGreenCtxStreamCreate((CUstream *)&st, p->green, CU_STREAM_NON_BLOCKING, 0));
    else
        CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMalloc(&d_out, sizeof(float) * n));
    CHECK_CUDA(cudaMemset(d_out, 0, sizeof(float) * n));
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    CHECK_CUDA(cudaDeviceSynchronize());
    pthread_barrier_wait(&g.barrier); /* every part launches together */
    int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
    CHECK_CUDA(cudaEventRecord(e0, st));
    fill_sms<<<(unsigned)p->blocks, TLS_SAT_THREADS, 0, st>>>(d_out, g.iters);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(e1, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    p->wall_ms = (tls_now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
    CHECK_CUDA(cudaEventElapsedTime(&p->ms, e0, e1));
    CHECK_CUDA(cudaMemcpy(h_out, d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));
    /* the first and last thread of ~8 blocks spread over the grid, against a CPU replay */
    long long step = p->blocks > 8 ? p->blocks / 8 : 1;
    for (long long blk = 0; blk < p->blocks; blk += step)
        for (int t = 0; t < TLS_SAT_THREADS; t += TLS_SAT_THREADS - 1) {
            size_t i = (size_t)blk * TLS_SAT_THREADS + (size_t)t;
            float want = tls_sat_chains((unsigned)i, g.iters);
            if (memcmp(&h_out[i], &want, sizeof want) != 0 && p->bad++ < 5)
                fprintf(stderr, "partitions: part %d thread %zu computed %.9g, the CPU %.9g\n",
                        p->index, i, h_out[i], want);
        }
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    CHECK_CUDA(cudaStreamDestroy(st));
    CHECK_CUDA(cudaFree(d_out));
    free(h_out);
}

/* The thread of a green context: its context current, then launch(). */
static void *run_part(void *arg)
{
    part *p = (part *)arg;
    CHECK_CU(cuCtxSetCurrent(p->ctx));
    launch(p);
    return NULL;
}

/* split: n green contexts on disjoint groups of the device's SMs, each of the SMs of an n-way
 * split rounded down to the partition granularity (8 SMs on compute capability 9.0: 132 SMs
 * split 2 ways give 64 each, not 66, which the split would round up to 72 and fit once). */
static void split(CUdevice dev, part *parts, int n)
{
    CUdevResource all, groups[MAX_GREEN];
    CHECK_CU(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    unsigned align = all.sm.smCoscheduledAlignment > all.sm.minSmPartitionSize
                         ? all.sm.smCoscheduledAlignment
                         : all.sm.minSmPartitionSize;
    unsigned per = all.sm.smCount / (unsigned)n;
    per -= align ? per % align : 0;
    unsigned got = (unsigned)n;
    if (per < all.sm.minSmPartitionSize ||
        cuDevSmResourceSplitByCount(groups, &got, &all, NULL, 0, per) != CUDA_SUCCESS ||
        (int)got < n) {
        fprintf(stderr, "partitions: %u SMs do not split %d ways (%u each, at least %u)\n",
                all.sm.smCount, n, per, all.sm.minSmPartitionSize);
        exit(EXIT_FAILURE);
    }
    for (int i = 0; i < n; i++) {
        CUdevResourceDesc desc;
        CHECK_CU(cuDevResourceGenerateDesc(&desc, &groups[i], 1));
        CHECK_CU(cuGreenCtxCreate(&parts[i].green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CHECK_CU(cuCtxFromGreenCtx(&parts[i].ctx, parts[i].green));
        parts[i].sms = groups[i].sm.smCount;
    }
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: partitions [--green N [--only K]] [--iters N] [--waves W] [--barrier DIR]\n"
        "  --green N    N green contexts of the SMs split N ways (2 to %d), one launch in each\n"
        "  --only K     launch in the first K green contexts only (their solo run)\n"
        "  --iters N    FMA steps per chain (default 900000: about 0.25 s on an H200)\n"
        "  --waves W    full waves of blocks per launch (default 8)\n"
        "  --barrier D  wait in folder D for all TLVIEW_NPROCS copies before launching\n"
        "               (default under tlview record: TLVIEW_RECORD_DIR/barrier-TLVIEW_RUN_ID)\n",
        MAX_GREEN);
    exit(2);
}

int main(int argc, char **argv)
{
    int green = 0, only = 0;
    const char *barrier = NULL;
    g.iters = 900000;
    g.waves = 8;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--green"))
            green = (int)tls_parse_count("partitions", argv[i], argv[i + 1], MAX_GREEN);
        else if (!strcmp(argv[i], "--only"))
            only = (int)tls_parse_count("partitions", argv[i], argv[i + 1], MAX_GREEN);
        else if (!strcmp(argv[i], "--iters"))
            g.iters = (int)tls_parse_count("partitions", argv[i], argv[i + 1], INT_MAX);
        else if (!strcmp(argv[i], "--waves"))
            g.waves = (int)tls_parse_count("partitions", argv[i], argv[i + 1], 1024);
        else if (!strcmp(argv[i], "--barrier"))
            barrier = argv[i + 1];
        else
            usage();
        i++;
    }
    if (green == 1 || (only && (!green || only > green)))
        usage();
    const char *np = getenv("TLVIEW_NPROCS"), *rk = getenv("TLVIEW_RANK");
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    int nprocs = np ? atoi(np) : 1, rank = rk ? atoi(rk) : 0;
    char defbarrier[4096];
    if (!barrier)
        barrier = tls_record_barrier(defbarrier, sizeof defbarrier, nprocs);

    CHECK_CU(cuInit(0));
    CUdevice dev;
    CHECK_CU(cuDeviceGet(&dev, 0));
    char name[256];
    CHECK_CU(cuDeviceGetName(name, sizeof name, dev));
    int sm_seen = 0; /* what the device reports to this process: fewer under an MPS limit */
    CHECK_CU(cuDeviceGetAttribute(&sm_seen, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    part parts[MAX_GREEN];
    memset(parts, 0, sizeof parts);
    int nparts = green ? green : 1;
    g.launch = green ? (only ? only : green) : 1;
    if (green) {
        split(dev, parts, green);
    } else {
        CHECK_CU(cuDevicePrimaryCtxRetain(&parts[0].ctx, dev));
        parts[0].sms = (unsigned)sm_seen;
    }
    for (int i = 0; i < nparts; i++)
        parts[i].index = i;
    pthread_barrier_init(&g.barrier, NULL, (unsigned)g.launch);
    printf("partitions: pid %d (copy %d of %d), %s, the device shows %d SMs%s%s%s; %d context(s) "
           "launching:",
           (int)getpid(), rank, nprocs, name, sm_seen, pct ? " (MPS active threads " : "",
           pct ? pct : "", pct ? "%)" : "", g.launch);
    for (int i = 0; i < g.launch; i++)
        printf(" %s %u SMs", parts[i].green ? "green" : "primary", parts[i].sms);
    printf("\n");
    fflush(stdout);
    if (barrier && tls_rank_barrier(barrier, rank, nprocs, 120) != 0)
        return 1;

    pthread_t th[MAX_GREEN];
    for (int i = 0; i < g.launch; i++)
        if (pthread_create(&th[i], NULL, run_part, &parts[i]) != 0) {
            fprintf(stderr, "partitions: cannot start a thread\n");
            return 1;
        }
    int bad = 0;
    for (int i = 0; i < g.launch; i++) {
        pthread_join(th[i], NULL);
        bad += parts[i].bad;
        double tflops = 2.0 * 4.0 * g.iters * (double)parts[i].blocks * TLS_SAT_THREADS /
                        (parts[i].ms * 1e-3) / 1e12;
        printf("partitions: %s context %d: <<<%lld,%d>>> = %d waves of %u SMs, %.1f ms "
               "(cudaEvent), wall %.1f ms, %.1f FP32 TFLOP/s\n",
               parts[i].green ? "green" : "primary", i, parts[i].blocks, TLS_SAT_THREADS, g.waves,
               parts[i].sms, parts[i].ms, parts[i].wall_ms, tflops);
    }
    for (int i = 0; i < nparts; i++)
        if (parts[i].green)
            CHECK_CU(cuGreenCtxDestroy(parts[i].green));
    if (!green)
        CHECK_CU(cuDevicePrimaryCtxRelease(dev));
    pthread_barrier_destroy(&g.barrier);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
