/* contexts.cu: several CUDA contexts in ONE process, a one-thread spin kernel in each, released
 * together (tests/gpu/verdicts.sh). Shows whether contexts of one process are time-sliced like
 * processes (plain contexts), run side by side (green contexts on disjoint SMs), or what happens
 * between the primary context and a green one.
 *   contexts plain N        N contexts made with cuCtxCreate
 *   contexts green N        N green contexts on the SMs split N ways (cuDevSmResourceSplitByCount,
 *                           cuGreenCtxCreate, cuCtxFromGreenCtx)
 *   contexts green-primary  one kernel in the primary context, one in a green context of half
 *                           the SMs
 * One thread per context: it makes its context current (cuCtxSetCurrent), allocates, creates a
 * stream (cuGreenCtxStreamCreate in a green context) and launches through the runtime. The
 * threads meet at a barrier and then launch at once (from --start-at NS on, CLOCK_REALTIME, when
 * given). --solo-first: before that, one kernel alone in the first context (a solo reference held
 * by the run itself). The kernel is samples/spin's, same name, arguments and launch shape, so a
 * recording of `spin --iters N` alone is this program's solo reference too.
 * Prints each kernel's cudaEvent time, `pid=<pid> launched=<n>`, then `Test PASSED` when every
 * kernel's result equals the CPU replay (`Test FAILED` and exit 1 otherwise).
 * Usage: contexts plain N | green N | green-primary [--iters N] [--solo-first] [--start-at NS]
 *        [--timeout S] */
#include <cuda.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "tlsample.h"
#include "tlspin.cuh" /* spin's kernel: spin's solo recording is this program's reference */

#define MAX_CTX 16

static const float V1 = 10.0f, V2 = 9.9899f, INIT = 1.0f; /* as in samples/spin */

typedef enum { CTX_PLAIN, CTX_GREEN, CTX_PRIMARY } ctx_kind;

/* One context and the thread that uses it. */
typedef struct slot {
    int index;
    ctx_kind kind;
    CUcontext ctx;
    CUgreenCtx green; /* CTX_GREEN only */
    unsigned sms;     /* SMs the context may use */
    CUstream stream;
    float *d;                    /* d[0]: the together kernel, d[1]: the solo one */
    float result[2], ms[2];      /* as above */
    int64_t launch_wall;         /* CLOCK_REALTIME at the together launch */
    int launches, solo_launched; /* kernels launched in this context; 1 if the solo one was */
} slot;

/* Settings and the barrier every thread shares. */
static struct {
    long long iters;
    int solo_first;
    int64_t start_at;
    double timeout_s;
    pthread_barrier_t barrier;
} g;

static const char *kind_name(ctx_kind k)
{
    return k == CTX_PLAIN ? "plain" : k == CTX_GREEN ? "green" : "primary";
}

/* launch_one: one kernel on the slot's stream into d[which], waited for; its cudaEvent time goes
 * into ms[which]. The slot's context is current. */
static void launch_one(slot *s, int which)
{
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    cudaStream_t st = (cudaStream_t)s->stream;
    if (which == 0)
        s->launch_wall = tls_now_ns(CLOCK_REALTIME);
    CHECK_CUDA(cudaEventRecord(e0, st));
    testMaxFlopsKernel<<<1, 1, 0, st>>>(s->d + which, (int)g.iters, V1, V2);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(e1, st));
    s->launches++;
    CHECK_CUDA(cudaStreamSynchronize(st));
    CHECK_CUDA(cudaEventElapsedTime(&s->ms[which], e0, e1));
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
}

/* The thread of one context: set up, meet the others, (solo kernel,) launch together, read back. */
static void *run_slot(void *arg)
{
    slot *s = (slot *)arg;
    CHECK_CU(cuCtxSetCurrent(s->ctx));
    if (s->kind == CTX_GREEN)
        CHECK_CU(cuGreenCtxStreamCreate(&s->stream, s->green, CU_STREAM_NON_BLOCKING, 0));
    else
        CHECK_CU(cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING));
    float init[2] = {INIT, INIT};
    CHECK_CUDA(cudaMalloc(&s->d, sizeof init));
    CHECK_CUDA(cudaMemcpy(s->d, init, sizeof init, cudaMemcpyHostToDevice));
    cudaFuncAttributes attr; /* loads the kernel into this context before the clock starts */
    CHECK_CUDA(cudaFuncGetAttributes(&attr, testMaxFlopsKernel));
    CHECK_CUDA(cudaDeviceSynchronize());

    pthread_barrier_wait(&g.barrier);
    if (g.solo_first && s->index == 0) {
        launch_one(s, 1);
        s->solo_launched = 1;
    }
    pthread_barrier_wait(&g.barrier);
    if (tls_start_barrier(NULL, g.start_at, g.timeout_s) != 0)
        exit(EXIT_FAILURE);
    launch_one(s, 0);

    CHECK_CUDA(cudaMemcpy(s->result, s->d, sizeof s->result, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(s->d));
    CHECK_CU(cuStreamDestroy(s->stream));
    CHECK_CU(cuCtxSetCurrent(NULL));
    return NULL;
}

/* split_green: n green contexts on disjoint groups of the device's SMs into slots[first ..
 * first+n), each with the SMs of a (first+n)-way split (rounded down to the partition
 * granularity): green N splits N ways; green-primary (first 1, n 1) gives its green half. */
static void split_green(CUdevice dev, slot *slots, int first, int n)
{
    CUdevResource all, groups[MAX_CTX];
    CHECK_CU(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    /* the split rounds a count up to its granularity (8 SMs on compute capability 9.0): round
     * down first, or fewer groups than asked for would fit */
    unsigned align = all.sm.smCoscheduledAlignment > all.sm.minSmPartitionSize
                         ? all.sm.smCoscheduledAlignment
                         : all.sm.minSmPartitionSize;
    if (align < 1)
        align = 1;
    unsigned ways = (unsigned)(first + n); /* green-primary: half the SMs for its one green */
    unsigned per = all.sm.smCount / ways;
    per -= per % align;
    if (per < all.sm.minSmPartitionSize) {
        fprintf(stderr, "contexts: %u SMs cannot be split %u ways (at least %u SMs each)\n",
                all.sm.smCount, ways, all.sm.minSmPartitionSize);
        exit(EXIT_FAILURE);
    }
    unsigned got = (unsigned)n;
    CHECK_CU(cuDevSmResourceSplitByCount(groups, &got, &all, NULL, 0, per));
    if (got < (unsigned)n) {
        fprintf(stderr, "contexts: the SM split gave %u group(s) of %u SMs, %d wanted\n", got, per,
                n);
        exit(EXIT_FAILURE);
    }
    for (int i = 0; i < n; i++) {
        slot *s = &slots[first + i];
        CUdevResourceDesc desc;
        CHECK_CU(cuDevResourceGenerateDesc(&desc, &groups[i], 1));
        CHECK_CU(cuGreenCtxCreate(&s->green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CHECK_CU(cuCtxFromGreenCtx(&s->ctx, s->green));
        s->kind = CTX_GREEN;
        s->sms = groups[i].sm.smCount;
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: contexts plain N | green N | green-primary [--iters N] [--solo-first]\n"
            "                [--start-at NS] [--timeout S]\n"
            "  plain N        N contexts from cuCtxCreate (1 to %d)\n"
            "  green N        N green contexts on disjoint SMs (1 to %d)\n"
            "  green-primary  the primary context and a green context of half the SMs\n"
            "  --iters N      loop iterations per kernel (default 1e8: about 0.22 s on an H200)\n"
            "  --solo-first   first one kernel alone in the first context, then all together\n"
            "  --start-at NS  launch together once CLOCK_REALTIME reaches NS nanoseconds\n"
            "  --timeout S    give up waiting for --start-at after S seconds (default 120)\n",
            MAX_CTX, MAX_CTX);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *mode = argv[1];
    int n = 2, a = 2;
    if (!strcmp(mode, "plain") || !strcmp(mode, "green")) {
        if (argc < 3)
            usage();
        n = (int)tls_parse_count("contexts", mode, argv[2], MAX_CTX);
        a = 3;
    } else if (strcmp(mode, "green-primary") != 0) {
        usage();
    }
    g.iters = 100000000LL;
    g.timeout_s = 120;
    for (; a < argc; a++) {
        if (!strcmp(argv[a], "--solo-first")) {
            g.solo_first = 1;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        if (!strcmp(argv[a], "--iters"))
            g.iters = tls_parse_count("contexts", argv[a], argv[a + 1], INT_MAX);
        else if (!strcmp(argv[a], "--start-at"))
            g.start_at = tls_parse_count("contexts", argv[a], argv[a + 1], LLONG_MAX);
        else if (!strcmp(argv[a], "--timeout"))
            g.timeout_s = (double)tls_parse_count("contexts", argv[a], argv[a + 1], 86400);
        else
            usage();
        a++;
    }

    CHECK_CU(cuInit(0));
    CUdevice dev;
    CHECK_CU(cuDeviceGet(&dev, 0));
    char name[256];
    CHECK_CU(cuDeviceGetName(name, sizeof name, dev));
    int sm_count;
    CHECK_CU(cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

    slot slots[MAX_CTX];
    memset(slots, 0, sizeof slots);
    for (int i = 0; i < n; i++)
        slots[i].index = i;
    if (!strcmp(mode, "plain")) {
        for (int i = 0; i < n; i++) {
            CHECK_CU(cuCtxCreate(&slots[i].ctx, NULL, 0, dev));
            CHECK_CU(cuCtxPopCurrent(NULL)); /* its thread makes it current */
            slots[i].kind = CTX_PLAIN;
            slots[i].sms = (unsigned)sm_count;
        }
    } else if (!strcmp(mode, "green")) {
        split_green(dev, slots, 0, n);
    } else {
        CHECK_CU(cuDevicePrimaryCtxRetain(&slots[0].ctx, dev));
        slots[0].kind = CTX_PRIMARY;
        slots[0].sms = (unsigned)sm_count;
        split_green(dev, slots, 1, 1);
    }
    printf("contexts: pid %d, %s, %d context(s):", (int)getpid(), name, n);
    for (int i = 0; i < n; i++)
        printf(" %s/%u SMs", kind_name(slots[i].kind), slots[i].sms);
    printf("; %lld iterations per kernel%s\n", g.iters, g.solo_first ? ", one solo first" : "");
    fflush(stdout);

    pthread_barrier_init(&g.barrier, NULL, (unsigned)n);
    pthread_t th[MAX_CTX];
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, run_slot, &slots[i]) != 0) {
            fprintf(stderr, "contexts: cannot start thread %d\n", i);
            return 1;
        }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g.barrier);

    float want = tls_spin_replay(INIT, g.iters, V1, V2);
    int bad = 0, launched = 0;
    int64_t first = slots[0].launch_wall;
    for (int i = 1; i < n; i++)
        if (slots[i].launch_wall < first)
            first = slots[i].launch_wall;
    for (int i = 0; i < n; i++) {
        slot *s = &slots[i];
        launched += s->launches;
        if (s->solo_launched)
            printf("contexts: context %d (%s): solo kernel %.1f ms (cudaEvent)\n", i,
                   kind_name(s->kind), s->ms[1]);
        printf("contexts: context %d (%s, %u SMs): kernel %.1f ms (cudaEvent), launched %.3f ms "
               "after the first\n",
               i, kind_name(s->kind), s->sms, s->ms[0], (s->launch_wall - first) / 1e6);
        for (int w = 0; w <= s->solo_launched; w++)
            if (memcmp(&s->result[w], &want, sizeof want) != 0 &&
                !(isnan(s->result[w]) && isnan(want))) {
                fprintf(stderr, "contexts: context %d computed %g, the CPU replay %g\n", i,
                        s->result[w], want);
                bad++;
            }
    }
    for (int i = 0; i < n; i++) {
        if (slots[i].kind == CTX_PLAIN)
            CHECK_CU(cuCtxDestroy(slots[i].ctx));
        else if (slots[i].kind == CTX_GREEN)
            CHECK_CU(cuGreenCtxDestroy(slots[i].green));
        else
            CHECK_CU(cuDevicePrimaryCtxRelease(dev));
    }
    printf("contexts: pid=%d launched=%d\n", (int)getpid(), launched);
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}
