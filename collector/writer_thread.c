/* collector writer thread: completed CUPTI buffers go through a bounded queue to one thread,
 * the only one that touches SQLite, so the application's threads never wait on the disk.
 * When the queue is full the buffer is dropped and counted, never waited for. The thread also
 * flushes CUPTI every flush_ms (so a killed process leaves recent data behind), on request
 * (signal handlers, cudaDeviceReset), and once forcibly at the end, then runs the session's
 * finish work; on every turn (at least every 0.1 s) it runs the session's tick (capture ranges,
 * the control channel, the flight recorder). Requests from signal handlers use only atomics,
 * sem_post and nanosleep. */
#define _GNU_SOURCE /* sem_clockwait */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector_int.h"

#define LOG_PREFIX "writer"
#define POOL_MAX 4u       /* empty buffers kept for reuse (8 MiB each by default) */
#define IDLE_WAKE_MS 100u /* the thread checks its requests at least this often */
#define SETTLE_STEP_MS 2u /* collector_writer_settle: the default flush's retry period */

typedef struct queued {
    uint8_t *buf;
    size_t valid; /* bytes of records in buf */
} queued;

struct collector_writer {
    collector_writer_config cfg;
    pthread_t thread;
    pthread_mutex_t lock; /* guards ring, pool, stopped */
    sem_t wake;           /* posted for each queued buffer and each request */
    queued *ring;         /* cfg.capacity slots */
    uint32_t head, count;
    uint8_t *pool[POOL_MAX];
    uint32_t npool;
    int stopped; /* the final drain is done: submits are dropped */
    atomic_uint_fast64_t requested, completed, dropped, written;
    atomic_uint_fast64_t lost; /* records in dropped buffers, added to the sink at the end */
    atomic_int warned_full;
    atomic_uint sync_req, sync_done; /* request generations */
    atomic_int sync_forced;
    atomic_int stop_req;
    atomic_int finished;            /* the thread has run cfg.finish and no longer touches *w */
    _Atomic int64_t last_flush_gpu; /* hooks->gpu_clock() before the latest flush, 0 none */
    _Atomic int64_t horizon;        /* the written records are complete up to it, 0 none */
};

/* The writer this thread runs, so a buffer completed inside hooks->flush is written at once. */
static __thread collector_writer *on_writer;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Sleeps in 1 ms steps until request generation `gen` is done (gen_done given) or the thread
 * has finished (gen_done NULL), at most timeout_ms; async-signal-safe. Returns 0 when reached,
 * -1 on timeout or when the thread finished before serving the request. */
static int wait_for(atomic_uint *gen_done, unsigned gen, atomic_int *finished, uint32_t timeout_ms)
{
    struct timespec step = {0, 1000000};
    for (uint32_t waited = 0;; waited++) {
        if (gen_done && (int)(atomic_load(gen_done) - gen) >= 0)
            return 0;
        if (atomic_load(finished))
            return gen_done ? -1 : 0;
        if (waited >= timeout_ms)
            return -1;
        nanosleep(&step, NULL);
    }
}

static void recycle(collector_writer *w, uint8_t *buf)
{
    pthread_mutex_lock(&w->lock);
    if (w->npool < POOL_MAX && !w->stopped) {
        w->pool[w->npool++] = buf;
        buf = NULL;
    }
    pthread_mutex_unlock(&w->lock);
    free(buf);
}

/* Writes one buffer (writer thread only) and gives it back to the pool. */
static void write_buffer(collector_writer *w, uint8_t *buf, size_t valid)
{
    if (valid > 0) {
        int was_ok = collector_sink_error(w->cfg.sink)[0] == '\0';
        int rc = collector_sink_buffer(w->cfg.sink, w->cfg.hooks->next_record, buf, valid);
        if (rc != 0 && was_ok)
            log_err("writing %s failed: %s; tracing stopped, later records are counted as lost",
                    store_writer_path(w->cfg.store), collector_sink_error(w->cfg.sink));
    }
    atomic_fetch_add(&w->written, 1);
    recycle(w, buf);
}

/* Writes everything queued. */
static void drain(collector_writer *w)
{
    for (;;) {
        pthread_mutex_lock(&w->lock);
        if (w->count == 0) {
            pthread_mutex_unlock(&w->lock);
            return;
        }
        queued q = w->ring[w->head];
        w->head = (w->head + 1) % w->cfg.capacity;
        w->count--;
        pthread_mutex_unlock(&w->lock);
        write_buffer(w, q.buf, q.valid);
    }
}

/* How far the written records are complete after a flush read at `at` was drained (writer
 * thread). When every buffer CUPTI took has come back (written, or dropped and counted), CUPTI
 * holds no record: every kernel that had ended by `at` is written. Otherwise CUPTI keeps a buffer
 * back: a default flush returns a buffer only once all its records are complete, so under a
 * steady stream of kernels the newest ones can stay in it for a flush period or more. The file is
 * then complete only to the latest end written (the records come in launch order: exact for the
 * kernels of one stream). The written count is read before the requested one, and only this
 * thread writes, so a buffer handed out meanwhile can only make the answer the cautious one. */
static int64_t complete_to(collector_writer *w, int64_t at)
{
    uint64_t back = atomic_load(&w->written) + atomic_load(&w->dropped);
    if (back >= atomic_load(&w->requested))
        return at;
    int64_t end = collector_sink_max_end(w->cfg.sink);
    return end < at ? end : at;
}

static void flush(collector_writer *w, int forced)
{
    int64_t at = w->cfg.hooks->gpu_clock ? w->cfg.hooks->gpu_clock() : 0;
    atomic_store(&w->last_flush_gpu, at);
    if (w->cfg.hooks->flush)
        w->cfg.hooks->flush(forced);
    drain(w);
    int64_t h = complete_to(w, at);
    if (h > atomic_load(&w->horizon))
        atomic_store(&w->horizon, h);
}

static void *writer_main(void *arg)
{
    collector_writer *w = arg;
    on_writer = w;
    uint64_t next_flush = now_ms() + w->cfg.flush_ms;
    while (!atomic_load(&w->stop_req)) {
        uint64_t now = now_ms();
        uint64_t wait = IDLE_WAKE_MS;
        if (w->cfg.flush_ms && next_flush > now && next_flush - now < wait)
            wait = next_flush - now;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)(wait / 1000u);
        until.tv_nsec += (long)(wait % 1000u) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (sem_clockwait(&w->wake, CLOCK_MONOTONIC, &until) != 0 && errno == EINTR)
            ;
        drain(w);
        unsigned req = atomic_load(&w->sync_req);
        int flushed = 1;
        if (req != atomic_load(&w->sync_done)) {
            flush(w, atomic_exchange(&w->sync_forced, 0));
            atomic_store(&w->sync_done, req);
        } else if (w->cfg.flush_ms && now_ms() >= next_flush) {
            flush(w, 0);
            next_flush = now_ms() + w->cfg.flush_ms;
        } else {
            flushed = 0;
        }
        if (w->cfg.tick && !atomic_load(&w->stop_req))
            w->cfg.tick(w->cfg.finish_arg, w, flushed);
    }
    flush(w, 1);
    pthread_mutex_lock(&w->lock);
    w->stopped = 1;
    pthread_mutex_unlock(&w->lock);
    drain(w); /* what raced in before `stopped` was set */
    collector_sink_lost(w->cfg.sink, atomic_load(&w->lost));
    if (w->cfg.finish)
        w->cfg.finish(w->cfg.finish_arg);
    atomic_store(&w->finished, 1); /* last touch of *w by this thread */
    return NULL;
}

int collector_writer_start(const collector_writer_config *cfg, collector_writer **ppW)
{
    *ppW = NULL;
    collector_writer *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->cfg = *cfg;
    /* Nothing was launched before the collector started (the driver calls it at the first CUDA
     * call): the file is complete to now. */
    if (cfg->hooks->gpu_clock)
        atomic_store(&w->horizon, cfg->hooks->gpu_clock());
    if (w->cfg.capacity == 0)
        w->cfg.capacity = 1;
    w->ring = calloc(w->cfg.capacity, sizeof *w->ring);
    if (!w->ring || sem_init(&w->wake, 0, 0) != 0) {
        free(w->ring);
        free(w);
        return -1;
    }
    pthread_mutex_init(&w->lock, NULL);
    /* Signals go to the application's threads, never to the one holding SQLite. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        log_err("cannot start the writer thread: %s; tracing disabled", strerror(rc));
        sem_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w->ring);
        free(w);
        return -1;
    }
    *ppW = w;
    return 0;
}

uint8_t *collector_writer_buffer(collector_writer *w)
{
    uint8_t *buf = NULL;
    pthread_mutex_lock(&w->lock);
    int stopped = w->stopped;
    if (!stopped && w->npool > 0)
        buf = w->pool[--w->npool];
    pthread_mutex_unlock(&w->lock);
    if (stopped)
        return NULL;
    if (!buf) {
        void *p = NULL;
        if (posix_memalign(&p, 8, w->cfg.buffer_size) != 0)
            return NULL;
        buf = p;
    }
    atomic_fetch_add(&w->requested, 1);
    return buf;
}

int collector_writer_submit(collector_writer *w, uint8_t *buf, size_t valid)
{
    atomic_fetch_add(&w->completed, 1);
    pthread_mutex_lock(&w->lock);
    int full = w->stopped || w->count == w->cfg.capacity;
    if (!full) {
        w->ring[(w->head + w->count) % w->cfg.capacity] = (queued){buf, valid};
        w->count++;
    }
    int stopped = w->stopped;
    pthread_mutex_unlock(&w->lock);
    if (!full) {
        sem_post(&w->wake);
        return 0;
    }
    /* Completed inside hooks->flush on the writer thread itself, with the queue full: write it
     * now rather than drop it. (Only then: CUPTI may hold its locks while it calls us.) */
    if (on_writer == w && !stopped) {
        write_buffer(w, buf, valid);
        return 0;
    }
    uint64_t n = collector_count_records(w->cfg.hooks->next_record, buf, valid);
    free(buf);
    atomic_fetch_add(&w->dropped, 1);
    atomic_fetch_add(&w->lost, n);
    if (!stopped && !atomic_exchange(&w->warned_full, 1))
        log_warn("the writer falls behind (%u buffers queued): dropping records rather than "
                 "slowing the application; raise TLVIEW_BUFFER_COUNT or TLVIEW_BUFFER_SIZE",
                 w->cfg.capacity);
    else if (stopped && n)
        log_dbg("buffer of %llu records completed after the end; dropped", (unsigned long long)n);
    return -1;
}

int collector_writer_sync(collector_writer *w, int forced, uint32_t timeout_ms)
{
    if (atomic_load(&w->stop_req))
        return -1;
    if (forced)
        atomic_store(&w->sync_forced, 1);
    unsigned gen = atomic_fetch_add(&w->sync_req, 1) + 1;
    sem_post(&w->wake);
    return wait_for(&w->sync_done, gen, &w->finished, timeout_ms);
}

int collector_writer_stop(collector_writer *w, uint32_t timeout_ms)
{
    atomic_store(&w->stop_req, 1);
    sem_post(&w->wake);
    return wait_for(NULL, 0, &w->finished, timeout_ms);
}

void collector_writer_get_stats(collector_writer *w, collector_writer_stats *out)
{
    out->buffers_requested = atomic_load(&w->requested);
    out->buffers_completed = atomic_load(&w->completed);
    out->buffers_dropped = atomic_load(&w->dropped);
    out->buffers_written = atomic_load(&w->written);
}

void collector_writer_wake(collector_writer *w)
{
    sem_post(&w->wake);
}

void collector_writer_flush_now(collector_writer *w)
{
    if (on_writer == w)
        flush(w, 0);
}

int64_t collector_writer_last_flush(collector_writer *w)
{
    return atomic_load(&w->last_flush_gpu);
}

int64_t collector_writer_horizon(collector_writer *w)
{
    return atomic_load(&w->horizon);
}

int64_t collector_writer_settle(collector_writer *w, int64_t target, uint32_t timeout_ms)
{
    if (on_writer != w)
        return atomic_load(&w->horizon);
    uint64_t until = now_ms() + timeout_ms;
    while (atomic_load(&w->horizon) < target && now_ms() < until) {
        struct timespec step = {0, (long)SETTLE_STEP_MS * 1000000L};
        nanosleep(&step, NULL);
        flush(w, 0);
    }
    return atomic_load(&w->horizon);
}

void collector_writer_free(collector_writer *w)
{
    if (!w)
        return;
    pthread_join(w->thread, NULL);
    for (uint32_t i = 0; i < w->npool; i++)
        free(w->pool[i]);
    sem_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->ring);
    free(w);
}
