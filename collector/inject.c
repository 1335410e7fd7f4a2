/* collector CUPTI glue: InitializeInjection, the only symbol libcollect.so exports.
 * The CUDA driver calls it at the first CUDA call of every process that has
 * CUDA_INJECTION64_PATH set. It follows the call sequence of CUPTI's cupti_trace_injection
 * sample (subscribe, activity buffer callbacks, enable the kinds, force-flush at exit), except
 * that a failure never ends the process: it is reported once on stderr, recorded in the file,
 * and tracing stops. CUPTI allows one subscriber per process, and an application with its own
 * CUPTI client (torch.profiler) must keep working: so by default the subscription is only
 * probed, at start and at every periodic flush, and tlview steps aside when the application
 * holds it (TLVIEW_CALLBACKS=1 keeps it for the whole run instead, and so does
 * TLVIEW_CAPTURE=cudaProfilerApi, which needs its callbacks). The launch activity kinds are on
 * only inside capture ranges (set_tracing, driven by capture.c). Exit, SIGINT/SIGTERM and fork
 * are handled here; everything else lives in session.c and below. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "collector_int.h"

#define LOG_PREFIX "inject"

/* Calls CUPTI; on failure reports once (later failures at debug level), records the reason in
 * the file and stops tracing. Evaluates to the CUptiResult. Never exits. */
#define CUPTI_CALL(call) cupti_check((call), #call)

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized; /* InitializeInjection ran in this process */
static collector_config cfg;
static collector_session *session; /* NULL when tracing is off */
static pid_t owner;                /* the process that opened the session */
static atomic_int tracing;         /* buffers are handed out and written */
static atomic_int cupti_failures;  /* failed CUPTI calls */
static atomic_int registered;      /* our buffer callbacks are registered with CUPTI */
static atomic_int subscribed;      /* we hold the CUPTI subscription (TLVIEW_CALLBACKS=1) */
static CUpti_SubscriberHandle subscriber;
static struct sigaction old_int, old_term;

static CUptiResult cupti_check(CUptiResult r, const char *what)
{
    if (r == CUPTI_SUCCESS)
        return r;
    const char *text = NULL;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
        text = "unknown error";
    if (atomic_fetch_add(&cupti_failures, 1) != 0)
        log_dbg("%s failed: %s", what, text);
    else if (session)
        collector_session_fail(session, "%s failed: %s; tracing stopped", what, text);
    else
        log_err("%s failed: %s; tracing stopped", what, text);
    atomic_store(&tracing, 0);
    return r;
}

/* ---------------------------------------------------------------- hooks for session.c */

static int next_record(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    CUptiResult r = cuptiActivityGetNextRecord(buf, valid, rec);
    if (r == CUPTI_SUCCESS)
        return 0;
    return r == CUPTI_ERROR_MAX_LIMIT_REACHED ? 1 : -1;
}

static void CUPTIAPI on_probe(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
}

/* 1 when another CUPTI client (torch.profiler's kineto, for one) holds the one subscription
 * CUPTI allows. The probe holds the subscription only between two calls; a client that
 * subscribes in exactly that instant would be refused, a risk taken once per flush period. */
static int other_client(void)
{
    if (atomic_load(&subscribed))
        return 0;
    CUpti_SubscriberHandle probe;
    CUptiResult r = cuptiSubscribe(&probe, on_probe, NULL);
    if (r == CUPTI_SUCCESS)
        cuptiUnsubscribe(probe);
    return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

/* The application took CUPTI over: it has (or is about to have) its own buffer callbacks, so
 * tlview flushes nothing more, lest it hand that client's records to the wrong callbacks. */
static void step_aside(void)
{
    if (!atomic_exchange(&registered, 0))
        return;
    atomic_store(&tracing, 0);
    collector_session_fail(session, "another CUPTI client subscribed (torch.profiler, for one); "
                                    "tlview stepped aside so that it works: kernels from then "
                                    "on are not recorded");
}

static int flush(int forced)
{
    /* Never flush when our callbacks were not registered: the buffers would be someone
     * else's (torch.profiler's, when it subscribed first). */
    if (!atomic_load(&registered) || (!atomic_load(&tracing) && !forced))
        return 0;
    if (other_client()) {
        step_aside();
        return 0;
    }
    CUptiResult r = cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    if (r != CUPTI_SUCCESS && atomic_load(&tracing))
        cupti_check(r, "cuptiActivityFlushAll");
    return r == CUPTI_SUCCESS ? 0 : -1;
}

static int64_t gpu_clock(void)
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return (int64_t)t;
}

static uint64_t dropped(void)
{
    size_t n = 0;
    return cuptiActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS ? n : 0;
}

static int64_t cupti_version(void)
{
    uint32_t v = 0;
    return cuptiGetVersion(&v) == CUPTI_SUCCESS ? (int64_t)v : -1;
}

static const char *api_name(store_api_domain domain, uint32_t cbid)
{
    const char *name = NULL;
    CUpti_CallbackDomain d =
        domain == STORE_API_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    return cuptiGetCallbackName(d, cbid, &name) == CUPTI_SUCCESS ? name : NULL;
}

/* The activity kinds of launches, into kinds[] (room for 8); returns how many. CONTEXT and
 * DEVICE are not among them: they stay on for the whole run (one record per context or device,
 * nothing per launch), so a file whose first range opens late still knows its GPUs and MPS. */
static size_t launch_kinds(CUpti_ActivityKind *kinds)
{
    size_t n = 0;
    /* CONCURRENT_KERNEL, never KERNEL: KERNEL serialises kernels and would erase the very
     * overlap tlview exists to show. */
    kinds[n++] = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    kinds[n++] = CUPTI_ACTIVITY_KIND_MEMCPY;
    kinds[n++] = CUPTI_ACTIVITY_KIND_MEMSET;
    if (cfg.api) {
        kinds[n++] = CUPTI_ACTIVITY_KIND_RUNTIME;
        kinds[n++] = CUPTI_ACTIVITY_KIND_DRIVER;
    }
    if (cfg.nvtx)
        kinds[n++] = CUPTI_ACTIVITY_KIND_MARKER;
    return n;
}

/* The API calls TLVIEW_API=1 leaves out: queries that launch, copy, allocate, synchronise and
 * wait for nothing, which PyTorch makes by the dozen per kernel (111112 cudaGetDevice records
 * for 6933 kernels of BERT, at 391 ns each traced: tests/gpu/RESULTS.md, 2026-12-02 03:05).
 * Leaving them out makes the API records 13x fewer, not the host faster: CUPTI intercepts every
 * call once the API kinds are on (2026-12-02 05:31). TLVIEW_API=all keeps them. */
static const CUpti_CallbackId quiet_runtime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
};
static const CUpti_CallbackId quiet_driver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetApiVersion,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
};

/* With TLVIEW_API=1, once the API kinds are on: their records off for the queries above
 * (cuptiActivityEnableRuntimeApi/DriverApi, CUPTI 12.x and later; an older CUPTI records them
 * all, said once). Returns 0, or -1 when CUPTI refused. */
static int quiet_api(void)
{
    typedef CUptiResult (*enable_fn)(CUpti_CallbackId, uint8_t);
    static int said;
    enable_fn rt = NULL, drv = NULL;
    if (cfg.api != COLLECTOR_API_CALLS)
        return 0;
    *(void **)&rt = dlsym(RTLD_DEFAULT, "cuptiActivityEnableRuntimeApi");
    *(void **)&drv = dlsym(RTLD_DEFAULT, "cuptiActivityEnableDriverApi");
    if (!rt || !drv) {
        if (!said++)
            log_dbg("this CUPTI cannot leave API calls out: every one is recorded");
        return 0;
    }
    for (size_t i = 0; i < sizeof quiet_runtime / sizeof *quiet_runtime; i++)
        if (CUPTI_CALL(rt(quiet_runtime[i], 0)) != CUPTI_SUCCESS)
            return -1;
    for (size_t i = 0; i < sizeof quiet_driver / sizeof *quiet_driver; i++)
        if (CUPTI_CALL(drv(quiet_driver[i], 0)) != CUPTI_SUCCESS)
            return -1;
    return 0;
}

/* A capture range's boundary: the launch kinds on or off (outside ranges the application runs
 * at full speed). Refused (-1) once tracing stopped or tlview stepped aside for another client. */
static int set_tracing(int on)
{
    if (!atomic_load(&registered) || (on && !atomic_load(&tracing)))
        return on ? -1 : 0;
    CUpti_ActivityKind kinds[8];
    size_t n = launch_kinds(kinds);
    for (size_t i = 0; i < n; i++)
        if (CUPTI_CALL(on ? cuptiActivityEnable(kinds[i]) : cuptiActivityDisable(kinds[i])) !=
            CUPTI_SUCCESS)
            return -1;
    /* enabling a kind turns every call of it on again: the queries go after */
    return on ? quiet_api() : 0;
}

static const collector_hooks hooks = {
    .next_record = next_record,
    .flush = flush,
    .gpu_clock = gpu_clock,
    .dropped = dropped,
    .cupti_version = cupti_version,
    .api_name = api_name,
    .set_tracing = set_tracing,
};

/* ---------------------------------------------------------------- CUPTI callbacks */

/* The first buffers hold one record each. When the application's own CUPTI client is what
 * initialised CUDA (torch.profiler started before any CUDA call), that client registers its
 * buffer callbacks right after InitializeInjection returns; a buffer of ours still half empty
 * then would take its records and be completed to it as an unknown buffer, lost to both. */
#define FIRST_SINGLE_RECORD_BUFFERS 16

static atomic_int single_record_buffers = FIRST_SINGLE_RECORD_BUFFERS;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = atomic_load(&tracing) && getpid() == owner ? collector_session_buffer(session) : NULL;
    *size = *buf ? cfg.buffer_size : 0; /* no buffer: CUPTI drops and counts the records */
    *max_records = *buf && atomic_load(&single_record_buffers) > 0 &&
                           atomic_fetch_sub(&single_record_buffers, 1) > 0
                       ? 1
                       : 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                      size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    if (!buf)
        return;
    if (getpid() != owner || !session) {
        free(buf);
        return;
    }
    collector_session_submit(session, buf, valid);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    if (getpid() != owner)
        return;
    if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        const CUpti_StateData *st = data;
        const char *text = NULL;
        cuptiGetResultString(st->notification.result, &text);
        atomic_store(&tracing, 0);
        collector_session_fail(session, "CUPTI fatal error: %s (%s); tracing stopped",
                               text ? text : "unknown",
                               st->notification.message ? st->notification.message : "");
    } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
               cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
        const CUpti_CallbackData *cb = data;
        /* The reset destroys the context: take its completed records first. */
        if (cb->callbackSite == CUPTI_API_ENTER && atomic_load(&tracing))
            CUPTI_CALL(cuptiActivityFlushAll(0));
    } else if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
                 cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)) ||
               (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
                 cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop))) {
        /* TLVIEW_CAPTURE=cudaProfilerApi. On entry: every launch after cudaProfilerStart and
         * before cudaProfilerStop is recorded. cudaProfilerStart calls cuProfilerStart: the
         * second start finds the range open and changes nothing. */
        const CUpti_CallbackData *cb = data;
        int start = cbid == (domain == CUPTI_CB_DOMAIN_RUNTIME_API
                                 ? CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                 : CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
        if (cb->callbackSite == CUPTI_API_ENTER && atomic_load(&tracing))
            collector_session_capture(session, start,
                                      start ? "cudaProfilerStart" : "cudaProfilerStop");
    }
}

/* ---------------------------------------------------------------- lifecycle */

static void at_exit(void)
{
    if (getpid() != owner || !session)
        return;
    if (collector_session_finish(session, 0, cfg.exit_timeout_ms) != 0)
        log_err("%s: the writer did not finish within %u ms at exit; the file keeps what was "
                "committed (complete = 0)",
                collector_session_path(session), cfg.exit_timeout_ms);
    atomic_store(&tracing, 0);
}

/* SIGINT/SIGTERM. When the application left the default action (the process is about to
 * die), the file is finished; when it has a handler of its own (Python's KeyboardInterrupt,
 * for one), the process may go on, so what CUPTI holds is only flushed and written, and the
 * exit handler finishes later. Both waits are bounded; then the old action runs. */
static void on_signal(int signo, siginfo_t *info, void *uctx)
{
    int saved = errno;
    struct sigaction *old = signo == SIGINT ? &old_int : &old_term;
    int dfl = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
    if (getpid() == owner && session) {
        if (dfl) {
            collector_session_finish(session, signo, COLLECTOR_SIGNAL_TIMEOUT_MS);
            atomic_store(&tracing, 0);
        } else {
            collector_session_sync(session, 0, COLLECTOR_SIGNAL_TIMEOUT_MS);
        }
    }
    if (dfl) {
        /* Default action: restore it and re-raise; the signal is blocked while we run, so it
         * is delivered (and ends the process) as this handler returns. */
        struct sigaction def;
        memset(&def, 0, sizeof def);
        def.sa_handler = SIG_DFL;
        sigemptyset(&def.sa_mask);
        sigaction(signo, &def, NULL);
        raise(signo);
    } else if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(signo, info, uctx);
    } else {
        old->sa_handler(signo); /* never SIG_IGN: install_signal leaves ignored signals alone */
    }
    errno = saved;
}

/* Installs on_signal for signo, keeping the old action in *old. An ignored signal is left
 * ignored: a handler would change what exec'd children inherit. */
static void install_signal(int signo, struct sigaction *old)
{
    if (sigaction(signo, NULL, old) != 0 ||
        (!(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_IGN))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, old) != 0)
        log_dbg("sigaction(%d): %s", signo, strerror(errno));
}

/* In a child of fork() the parent's file, SQLite handle and writer thread are not ours: the
 * inherited collector steps aside (owner != getpid() everywhere). CUDA is unusable in such a
 * child; one that execs and uses CUDA gets a fresh InitializeInjection and its own file. */
static void at_fork_child(void)
{
    atomic_store(&tracing, 0);
}

/* NVTX reaches CUPTI only through NVTX_INJECTION64_PATH naming libcupti; set it (before the
 * application's first NVTX call) unless the user did. */
static void point_nvtx_at_cupti(void)
{
    Dl_info info;
    void *sym = NULL;
    *(void **)&sym = dlsym(RTLD_DEFAULT, "cuptiActivityEnable");
    if (getenv("NVTX_INJECTION64_PATH") || !sym || !dladdr(sym, &info) || !info.dli_fname)
        return;
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
    log_dbg("NVTX_INJECTION64_PATH=%s", info.dli_fname);
}

/* The kinds on for the whole run; the launch kinds follow the capture ranges (set_tracing). */
static int enable_kinds(void)
{
    if (CUPTI_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT)) != CUPTI_SUCCESS ||
        CUPTI_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE)) != CUPTI_SUCCESS)
        return -1;
    return 0;
}

/* Probes (or, with TLVIEW_CALLBACKS=1, holds) the subscription and starts activity tracing;
 * when another client holds CUPTI, or on failure, the reason is recorded and tracing is off. */
static void start_cupti(void)
{
    CUptiResult r = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        atomic_store(&cupti_failures, 1);
        atomic_store(&tracing, 0);
        collector_session_fail(session,
                               "another CUPTI client is already subscribed "
                               "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); tlview steps "
                               "aside and records nothing");
        return;
    }
    if (cupti_check(r, "cuptiSubscribe") != CUPTI_SUCCESS)
        return;
    if (!cfg.callbacks) {
        cuptiUnsubscribe(subscriber); /* leave it free for the application's own client */
    } else {
        atomic_store(&subscribed, 1);
        if (CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_STATE,
                                           CUPTI_CBID_STATE_FATAL_ERROR)) != CUPTI_SUCCESS ||
            CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)) !=
                CUPTI_SUCCESS)
            return;
        if (cfg.capture == COLLECTOR_CAPTURE_PROFILER_API &&
            (CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                            CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)) !=
                 CUPTI_SUCCESS ||
             CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                            CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)) !=
                 CUPTI_SUCCESS ||
             CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) !=
                 CUPTI_SUCCESS ||
             CUPTI_CALL(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) !=
                 CUPTI_SUCCESS))
            return;
    }
    if (CUPTI_CALL(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS ||
        CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
            CUPTI_SUCCESS)
        return;
    atomic_store(&registered, 1);
    if (enable_kinds() != 0)
        return;
    if (cfg.flush_ms)
        CUPTI_CALL(cuptiActivityFlushPeriod(cfg.flush_ms));
    if (cfg.nvtx)
        point_nvtx_at_cupti();
}

static void setup(void)
{
    collector_startup(&cfg);
    owner = getpid();
    if (collector_session_open(&cfg, &hooks, &session) != 0)
        return; /* the reason is on stderr; the application runs on untraced */
    atomic_store(&tracing, 1);
    start_cupti();
    /* The first range (TLVIEW_CAPTURE=all) switches the launch kinds on now; the other modes
     * wait for cudaProfilerStart or `tlview capture start`. */
    collector_session_begin_capture(session);
    /* Even when tracing failed, the file is finished at exit so it carries the reason. */
    atexit(at_exit);
    pthread_atfork(NULL, NULL, at_fork_child);
    install_signal(SIGINT, &old_int);
    install_signal(SIGTERM, &old_term);
}

/* Called by the CUDA driver at the first CUDA call (CUDA_INJECTION64_PATH). Idempotent and
 * thread-safe; always returns 1 (success), even when tracing could not start: the reason is
 * on stderr and, where a file could be created, in process.error. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    pthread_mutex_lock(&init_lock);
    if (!initialized) {
        initialized = 1;
        setup();
    }
    pthread_mutex_unlock(&init_lock);
    return 1;
}
