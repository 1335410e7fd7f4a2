/* collector capture ranges: the state machine that decides when the launch activity kinds are
 * on. A range opens at the start (TLVIEW_CAPTURE=all), after TLVIEW_CAPTURE_DELAY, at
 * cudaProfilerStart (TLVIEW_CAPTURE=cudaProfilerApi) or on `tlview capture start`, and closes
 * at cudaProfilerStop, on `tlview capture stop`, after TLVIEW_CAPTURE_DURATION or at the
 * process's end. CUPTI is switched where the decision is made (hooks->set_tracing, on whatever
 * thread), and the boundary times are taken on the safe side of the switch: a range's start is
 * read after CUPTI is on and its end before CUPTI goes off, so every launch inside [start, end]
 * is recorded. A kernel launched inside that is still running at the end is kept whole (its
 * record arrives at a later flush), and a launch in the microseconds of the switch itself may be
 * recorded too; nothing launched before it began or after it ended is. The file's rows are
 * written by the writer thread from the events queued here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

#define LOG_PREFIX "capture"

struct collector_capture {
    pthread_mutex_t lock;         /* guards everything below; CUPTI is switched under it */
    collector_capture_mode mode;  /* TLVIEW_CAPTURE */
    uint64_t delay_ms;            /* TLVIEW_CAPTURE_DELAY */
    uint64_t duration_ms;         /* TLVIEW_CAPTURE_DURATION, 0 no limit */
    const collector_hooks *hooks; /* set_tracing, gpu_clock (not owned) */
    void (*wake)(void *);         /* pokes the writer thread; may be NULL */
    void *wake_arg;               /* wake's argument */
    int active;                   /* a range is open */
    uint32_t range;               /* the open (or last) range's number */
    uint64_t open_ms;             /* monotonic ms the open range opened */
    uint64_t start_at_ms;         /* the delayed start (monotonic ms), 0 none or done */
    int64_t switch_max_ns;        /* the longest CUPTI switch (set_tracing) seen, ns */
    collector_capture_event *ev;  /* events not yet written, oldest first */
    size_t nev, capev;            /* events held, room */
};

int collector_capture_new(const collector_config *cfg, const collector_hooks *hooks,
                          void (*wake)(void *), void *wake_arg, collector_capture **ppC)
{
    collector_capture *c = calloc(1, sizeof *c);
    *ppC = c;
    if (!c)
        return -1;
    pthread_mutex_init(&c->lock, NULL);
    c->mode = cfg->capture;
    c->delay_ms = cfg->capture_delay_ms;
    c->duration_ms = cfg->capture_duration_ms;
    c->hooks = hooks;
    c->wake = wake;
    c->wake_arg = wake_arg;
    return 0;
}

void collector_capture_free(collector_capture *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c->ev);
    free(c);
}

/* Queues an event (lock held). Out of memory, the event is lost and said once at debug level:
 * the range still switched CUPTI, only its row is missing. */
static void push(collector_capture *c, int open, int64_t at, const char *reason, const char *name)
{
    if (c->nev == c->capev) {
        size_t cap = c->capev ? 2 * c->capev : 8;
        collector_capture_event *grown = realloc(c->ev, cap * sizeof *grown);
        if (!grown) {
            log_dbg("out of memory: range %u's %s is not written", c->range,
                    open ? "start" : "end");
            return;
        }
        c->ev = grown;
        c->capev = cap;
    }
    collector_capture_event *e = &c->ev[c->nev++];
    memset(e, 0, sizeof *e);
    e->open = open;
    e->range = c->range;
    e->at = at;
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    snprintf(e->name, sizeof e->name, "%s", name ? name : "");
}

static int64_t gpu_now(const collector_capture *c)
{
    return c->hooks && c->hooks->gpu_clock ? c->hooks->gpu_clock() : 0;
}

/* Opens a range (lock held). */
static int open_range(collector_capture *c, const char *reason, const char *name, uint64_t now_ms)
{
    if (c->active)
        return 1;
    int64_t before = gpu_now(c);
    if (c->hooks && c->hooks->set_tracing && c->hooks->set_tracing(1) != 0)
        return -1;
    int64_t at = gpu_now(c); /* after CUPTI is on: every launch from here is recorded */
    if (at - before > c->switch_max_ns)
        c->switch_max_ns = at - before;
    c->active = 1;
    c->range++;
    c->open_ms = now_ms;
    c->start_at_ms = 0; /* a range opened otherwise replaces a delayed start still to come */
    push(c, 1, at, reason, name);
    log_dbg("range %u opened (%s)", c->range, reason);
    return 0;
}

/* Closes the open range (lock held); `cupti` 0 leaves CUPTI as it is (the process ends). */
static int close_range(collector_capture *c, const char *reason, int cupti)
{
    if (!c->active)
        return 1;
    int64_t at = gpu_now(c); /* before CUPTI goes off: every launch until here is recorded */
    if (cupti && c->hooks && c->hooks->set_tracing) {
        c->hooks->set_tracing(0); /* a failure stops tracing altogether (inject.c) */
        int64_t after = gpu_now(c);
        if (after - at > c->switch_max_ns)
            c->switch_max_ns = after - at;
    }
    c->active = 0;
    push(c, 0, at, reason, NULL);
    log_dbg("range %u closed (%s)", c->range, reason);
    return 0;
}

static void wake(collector_capture *c)
{
    if (c->wake)
        c->wake(c->wake_arg);
}

void collector_capture_begin(collector_capture *c, uint64_t now_ms)
{
    if (c->mode != COLLECTOR_CAPTURE_ALL)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->delay_ms)
        c->start_at_ms = now_ms + c->delay_ms;
    else if (open_range(c, "start", NULL, now_ms) < 0)
        log_dbg("the first range could not open: CUPTI refused");
    pthread_mutex_unlock(&c->lock);
    wake(c);
}

int collector_capture_start(collector_capture *c, const char *reason, const char *name,
                            uint64_t now_ms)
{
    pthread_mutex_lock(&c->lock);
    int rc = open_range(c, reason, name, now_ms);
    pthread_mutex_unlock(&c->lock);
    if (rc == 0)
        wake(c);
    return rc;
}

int collector_capture_stop(collector_capture *c, const char *reason)
{
    pthread_mutex_lock(&c->lock);
    int rc = close_range(c, reason, 1);
    pthread_mutex_unlock(&c->lock);
    if (rc == 0)
        wake(c);
    return rc;
}

void collector_capture_tick(collector_capture *c, uint64_t now_ms)
{
    pthread_mutex_lock(&c->lock);
    if (c->start_at_ms && now_ms >= c->start_at_ms && open_range(c, "delay", NULL, now_ms) < 0)
        c->start_at_ms = 0; /* CUPTI refused: not retried (the reason is in the file) */
    if (c->active && c->duration_ms && now_ms - c->open_ms >= c->duration_ms)
        close_range(c, "duration", 1);
    pthread_mutex_unlock(&c->lock);
}

void collector_capture_end(collector_capture *c, const char *reason)
{
    pthread_mutex_lock(&c->lock);
    close_range(c, reason, 0);
    c->start_at_ms = 0;
    pthread_mutex_unlock(&c->lock);
}

int collector_capture_next_event(collector_capture *c, collector_capture_event *ev)
{
    pthread_mutex_lock(&c->lock);
    int got = c->nev > 0;
    if (got) {
        *ev = c->ev[0];
        memmove(c->ev, c->ev + 1, (c->nev - 1) * sizeof *c->ev);
        c->nev--;
    }
    pthread_mutex_unlock(&c->lock);
    return got;
}

void collector_capture_get(collector_capture *c, collector_capture_state *out)
{
    pthread_mutex_lock(&c->lock);
    out->active = c->active;
    out->range = c->range;
    out->open_ms = c->open_ms;
    out->start_at_ms = c->start_at_ms;
    out->switch_max_ns = c->switch_max_ns;
    pthread_mutex_unlock(&c->lock);
}
