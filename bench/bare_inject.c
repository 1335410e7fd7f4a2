/* bare_inject: the floor for any CUPTI-based collector. A CUDA injection library
 * (CUDA_INJECTION64_PATH) that enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, hands CUPTI 8 MB
 * buffers (BARE_INJECT_BUFFER_SIZE bytes to change it), counts the kernel records it gets back
 * and does nothing else. At exit it force-flushes and prints one line on stderr:
 *   bare_inject: pid=<pid> kernels=<n> dropped=<n>
 * (tests/gpu/check.py --source bare reads it). A forked child that never used CUDA prints nothing.
 */
#include <cupti.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static size_t g_buffer_size = 8u << 20;
static uint64_t g_kernels, g_dropped; /* updated from CUPTI's thread: atomics */
static pid_t g_pid;                   /* the process that initialised us */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, g_buffer_size);
    *size = *buffer ? g_buffer_size : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    CUpti_Activity *rec = NULL;
    uint64_t kernels = 0;
    size_t dropped = 0;
    (void)size;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            kernels++;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        __atomic_fetch_add(&g_dropped, dropped, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_kernels, kernels, __ATOMIC_RELAXED);
    free(buffer);
}

static void at_exit(void)
{
    if (getpid() != g_pid)
        return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "bare_inject: pid=%d kernels=%llu dropped=%llu\n", (int)getpid(),
            (unsigned long long)__atomic_load_n(&g_kernels, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&g_dropped, __ATOMIC_RELAXED));
}

static void init_once(void)
{
    const char *env = getenv("BARE_INJECT_BUFFER_SIZE");
    if (env && strtoull(env, NULL, 10) >= 4096)
        g_buffer_size = strtoull(env, NULL, 10);
    g_pid = getpid();
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r == CUPTI_SUCCESS)
        r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        const char *msg = "?";
        cuptiGetResultString(r, &msg);
        fprintf(stderr, "bare_inject: pid=%d CUPTI refused: %s\n", (int)getpid(), msg);
        return;
    }
    atexit(at_exit);
}

/* Called by the CUDA driver at the first CUDA call of the process; returns 1 (success). */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
    return 1;
}
