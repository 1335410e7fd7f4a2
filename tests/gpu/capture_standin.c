/* capture_standin: capture_server and libcollect.so together, without a GPU, for the CPU half of
 * tests/gpu/capture.sh (test_capture.sh). It runs the same request loop (capture_loop.h) and the
 * collector's own session, configured by the same TLVIEW_* variables, over a simulated CUPTI:
 * a "kernel" becomes an activity record only while the launch kinds are on (set_tracing), its
 * times are those of the simulated launch on a GPU clock 1 ms behind CLOCK_REALTIME, and the
 * records reach the collector when it flushes, as CUPTI hands them over: a default flush returns
 * the buffer only once every kernel in it has ended, a forced one always. cudaProfilerStart/Stop
 * become the capture calls inject.c's callbacks make (TLVIEW_CAPTURE=cudaProfilerApi). So
 * everything but CUPTI itself is the real thing: ranges, the control FIFO, the flight recorder,
 * the file.
 * Usage: capture_standin [capture_loop.h options] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture_loop.h"
#include "collector_int.h"

#define GPU_BEHIND_NS 1000000 /* the simulated GPU clock runs 1 ms behind CLOCK_REALTIME */
#define KERNEL_NS 10000       /* each simulated kernel takes 10 us, back to back */
#define RECORD_SIZE ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7)

static collector_config cfg;
static collector_session *session;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards buf, used, buf_end */
static uint8_t *buf;                                     /* the "CUPTI buffer" being filled */
static size_t used;                                      /* bytes of records in buf */
static int64_t buf_end;                                  /* the latest kernel end in buf */
static atomic_int on;                                    /* the launch kinds */
static uint32_t correlation;

static int64_t gpu_clock(void)
{
    return capture_loop_now() - GPU_BEHIND_NS;
}

static int next_record(uint8_t *b, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = *rec ? (uint8_t *)*rec + RECORD_SIZE : b;
    if (p + RECORD_SIZE > b + valid)
        return 1;
    *rec = (CUpti_Activity *)p;
    return 0;
}

/* Hands the buffer being filled to the collector (lock held). */
static void complete(void)
{
    if (buf)
        collector_session_submit(session, buf, used);
    buf = NULL;
    used = 0;
    buf_end = 0;
}

static int flush(int forced)
{
    pthread_mutex_lock(&lock);
    if (forced || buf_end <= gpu_clock())
        complete();
    pthread_mutex_unlock(&lock);
    return 0;
}

static int set_tracing(int want)
{
    atomic_store(&on, want);
    return 0;
}

static const collector_hooks hooks = {
    .next_record = next_record,
    .flush = flush,
    .gpu_clock = gpu_clock,
    .set_tracing = set_tracing,
};

/* A request: `kernels` launches, each recorded if the kinds are on at its launch, then the wait
 * until the last would have ended. */
static void request(void *arg, int kernels)
{
    (void)arg;
    int64_t t = gpu_clock();
    for (int i = 0; i < kernels; i++) {
        correlation++;
        if (!session || !atomic_load(&on))
            continue;
        pthread_mutex_lock(&lock);
        if (buf && used + RECORD_SIZE > cfg.buffer_size)
            complete();
        if (!buf)
            buf = collector_session_buffer(session);
        if (buf) {
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.start = (uint64_t)(t + (int64_t)i * KERNEL_NS + 100);
            k.end = k.start + KERNEL_NS - 200;
            k.contextId = 1;
            k.streamId = 13;
            k.correlationId = correlation;
            k.gridX = k.gridY = k.gridZ = 1;
            k.blockX = 32;
            k.blockY = k.blockZ = 1;
            k.name = "_Z18testMaxFlopsKernelPfiff";
            memcpy(buf + used, &k, sizeof k);
            used += RECORD_SIZE;
            buf_end = (int64_t)k.end;
        }
        pthread_mutex_unlock(&lock);
    }
    int64_t left = t + (int64_t)kernels * KERNEL_NS - gpu_clock();
    if (left > 0) {
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        nanosleep(&ts, NULL);
    }
}

static void profiler(void *arg, int start)
{
    (void)arg;
    if (session && cfg.capture == COLLECTOR_CAPTURE_PROFILER_API)
        collector_session_capture(session, start, start ? "cudaProfilerStart" : "cudaProfilerStop");
}

int main(int argc, char **argv)
{
    collector_startup(&cfg);
    if (collector_session_open(&cfg, &hooks, &session) == 0)
        collector_session_begin_capture(session);
    capture_loop_ops ops = {"capture_standin", NULL, request, profiler};
    int rc = capture_loop_main(argc, argv, &ops);
    if (session && collector_session_finish(session, 0, cfg.exit_timeout_ms) != 0)
        fprintf(stderr, "capture_standin: the collector did not finish\n");
    return rc;
}
