/* Unit tests of collector/ without a GPU: synthetic CUDA 13 CUPTI records (Kernel10,
 * Context3, Memcpy6, Memset4, Device5, API, Marker2) go through the record sink, the queue and
 * the writer thread into a real tlview file, which is read back with store_run_load() and
 * sqlite3 and compared field by field. CUPTI itself is replaced by the hooks below; a synthetic
 * buffer is records laid end to end, each padded to 8 bytes, as CUPTI lays them out. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector_int.h"
#include "test_help.h"

/* ---------------------------------------------------------------- synthetic CUPTI */

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    default: return sizeof(CUpti_ActivityAPI); /* the stand-in for an unknown kind */
    }
}

static int fake_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    uint8_t *p = buf;
    if (*rec)
        p = (uint8_t *)*rec + ((record_size((*rec)->kind) + 7) & ~(size_t)7);
    if (p >= buf + valid)
        return 1;
    *rec = (CUpti_Activity *)p;
    return 0;
}

/* Appends a record to buf at *off. */
static void put(uint8_t *buf, size_t *off, const void *rec)
{
    size_t n = record_size(((const CUpti_Activity *)rec)->kind);
    memcpy(buf + *off, rec, n);
    *off += (n + 7) & ~(size_t)7;
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The GPU clock stand-in: CLOCK_REALTIME minus 5 ms, so the calibration offset is visible. */
#define FAKE_OFFSET 5000000
static int64_t fake_gpu_clock(void)
{
    return realtime_ns() - FAKE_OFFSET;
}

static int api_name_calls; /* how often the sink asked fake_api_name */

static const char *fake_api_name(store_api_domain domain, uint32_t cbid)
{
    api_name_calls++;
    if (domain == STORE_API_RUNTIME && cbid == 211)
        return "cudaLaunchKernel_v7000";
    if (domain == STORE_API_DRIVER && cbid == 307)
        return "cuLaunchKernel";
    return NULL;
}

static atomic_int fake_flushes, fake_forced; /* written on the writer thread */
static collector_session *flush_session;     /* where fake_flush hands its held buffers */
static uint8_t *flush_buffer, *held[8];
static size_t flush_valid, held_valid[8];
static int nheld;

/* Like cuptiActivityFlushAll: a forced flush hands back the buffers CUPTI still holds, on the
 * writer thread. */
static int fake_flush(int forced)
{
    fake_flushes++;
    if (forced) {
        fake_forced++;
        if (flush_buffer) {
            collector_session_submit(flush_session, flush_buffer, flush_valid);
            flush_buffer = NULL;
        }
        for (int i = 0; i < nheld; i++)
            collector_session_submit(flush_session, held[i], held_valid[i]);
        nheld = 0;
    }
    return 0;
}

static const collector_hooks fake_hooks = {
    .next_record = fake_next,
    .flush = fake_flush,
    .gpu_clock = fake_gpu_clock,
    .api_name = fake_api_name,
};

static CUpti_ActivityKernel10 make_kernel(uint64_t start, uint32_t corr, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = start + 1500;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.correlationId = corr;
    k.gridX = 132;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 4096;
    k.localMemoryPerThread = 16;
    k.name = name;
    return k;
}

/* ---------------------------------------------------------------- helpers */

/* Sets TLVIEW_OUTPUT to DIR/NAME and fills cfg from the environment; the control FIFO goes to
 * DIR/ctl unless the case chose a TLVIEW_CONTROL_DIR. */
static void config_for(collector_config *cfg, const char *name)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/%s", test_tmpdir(), name);
    setenv("TLVIEW_OUTPUT", out, 1);
    snprintf(out, sizeof out, "%s/ctl", test_tmpdir());
    setenv("TLVIEW_CONTROL_DIR", out, 0);
    collector_startup(cfg);
}

/* Runs `sql` (one integer result) on the file. */
static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -999;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "sql_int %s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* The text of process_meta `key` in the file ("" when absent); a static buffer. */
static const char *meta_text(const char *path, const char *key)
{
    static char text[512];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    text[0] = '\0';
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT value FROM process_meta WHERE key = ?", -1, &st, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(text, sizeof text, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return text;
}

static const char *meta_value(const store_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (!strcmp(p->meta_keys[i], key))
            return p->meta_values[i];
    return NULL;
}

static long long meta_int(const store_process *p, const char *key)
{
    const char *v = meta_value(p, key);
    return v ? atoll(v) : -1;
}

/* Redirects stderr to a file for the duration of a check; returns the saved fd. */
static int stderr_to(const char *path)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static void stderr_back(int saved)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

static int count_lines(const char *path, char *first, size_t size)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    char line[2048];
    first[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        if (n++ == 0)
            snprintf(first, size, "%s", line);
    }
    if (f)
        fclose(f);
    return n;
}

/* ---------------------------------------------------------------- cases */

/* Every record kind through the sink into a file, read back field by field. */
int test_collector_records_roundtrip(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rt.db", test_tmpdir());
    int64_t t0 = 1000000000000;
    store_writer *w = NULL;
    TEST_EQ_INT(store_writer_open(path, STORE_CLOCK_CUPTI, t0, &w), 0);
    store_process_info pi = {.pid = 4242, .ppid = 1, .host = "h", .source = "libcollect"};
    int64_t proc = 0;
    TEST_EQ_INT(store_writer_process(w, &pi, &proc), 0);
    TEST_EQ_INT(store_writer_calibration(w, proc, "start", t0, t0 + 777, 5), 0);
    collector_sink *s = NULL;
    TEST_EQ_INT(collector_sink_new(w, proc, fake_api_name, &s), 0);

    static uint8_t buf1[16384], buf2[4096];
    size_t n1 = 0, n2 = 0;
    CUpti_ActivityDevice5 dev;
    memset(&dev, 0, sizeof dev);
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dev.id = 0;
    dev.numMultiprocessors = 132;
    dev.computeCapabilityMajor = 9;
    dev.computeCapabilityMinor = 0;
    dev.globalMemorySize = 150ull << 30;
    dev.name = "NVIDIA H200";
    for (int i = 0; i < 16; i++)
        dev.uuid.bytes[i] = (char)(0xa0 + i);
    put(buf1, &n1, &dev);
    CUpti_ActivityContext3 ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    ctx.contextId = 1;
    ctx.deviceId = 0;
    ctx.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA_MPS;
    ctx.nullStreamId = 7;
    ctx.numMultiprocessors = 99; /* invalid unless isGreenContext (CUPTI): not stored */
    put(buf1, &n1, &ctx);
    /* Two green contexts (cuGreenCtxCreate) on parent context 1, SMs split 66/66 */
    CUpti_ActivityContext3 green = ctx;
    green.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
    green.contextId = 2;
    green.nullStreamId = 8;
    green.parentContextId = 1;
    green.isGreenContext = 1;
    green.numMultiprocessors = 66;
    put(buf1, &n1, &green);
    green.contextId = 3;
    green.nullStreamId = 9;
    put(buf1, &n1, &green);
    CUpti_ActivityKernel10 k = make_kernel(t0 + 2000, 99, "_Z6kernelPfi");
    put(buf1, &n1, &k);
    CUpti_ActivityKernel10 unfinished = make_kernel(t0 + 9000, 100, "_Z6kernelPfi");
    unfinished.end = 0; /* a forced flush hands back kernels still running */
    put(buf1, &n1, &unfinished);
    CUpti_ActivityMemcpy6 mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    mc.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    mc.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    mc.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    mc.bytes = 1 << 20;
    mc.start = (uint64_t)t0 + 100;
    mc.end = (uint64_t)t0 + 600;
    mc.contextId = 1;
    mc.streamId = 7;
    mc.correlationId = 98;
    put(buf1, &n1, &mc);
    CUpti_ActivityMemset4 ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.value = 0xab;
    ms.bytes = 4096;
    ms.start = (uint64_t)t0 + 700;
    ms.end = (uint64_t)t0 + 800;
    ms.contextId = 1;
    ms.streamId = 7;
    ms.correlationId = 97;
    ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    put(buf1, &n1, &ms);
    CUpti_ActivityAPI rt;
    memset(&rt, 0, sizeof rt);
    rt.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    rt.cbid = 211;
    rt.start = (uint64_t)t0 + 1000;
    rt.end = (uint64_t)t0 + 1900;
    rt.threadId = 31337;
    rt.correlationId = 99;
    put(buf1, &n1, &rt);
    CUpti_ActivityAPI drv = rt;
    drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    drv.cbid = 307;
    drv.start += 100;
    drv.end -= 100;
    drv.returnValue = 1;
    put(buf1, &n1, &drv);
    CUpti_ActivityMarker2 start;
    memset(&start, 0, sizeof start);
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = (uint64_t)t0 + 50;
    start.id = 5;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.threadId = 31337;
    start.name = "step";
    start.domain = "train";
    put(buf1, &n1, &start);
    CUpti_ActivityAPI other; /* record_size()'s stand-in size for other kinds */
    memset(&other, 0, sizeof other);
    other.kind = CUPTI_ACTIVITY_KIND_OVERHEAD; /* a kind tlview does not store */
    put(buf1, &n1, &other);
    TEST_EQ_INT(collector_sink_buffer(s, fake_next, buf1, n1), 0);

    /* An API record without an end (end < start) is refused by the store: counted as
     * incomplete, and the sink goes on writing (the range below still lands). Its callback id
     * was named once already: the sink does not ask again. */
    int calls = api_name_calls;
    CUpti_ActivityAPI endless = rt;
    endless.end = 0;
    put(buf2, &n2, &endless);
    /* The range's end arrives in the next buffer. */
    CUpti_ActivityMarker2 end;
    memset(&end, 0, sizeof end);
    end.kind = CUPTI_ACTIVITY_KIND_MARKER;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = (uint64_t)t0 + 5000;
    end.id = 5;
    put(buf2, &n2, &end);
    TEST_EQ_INT(collector_sink_buffer(s, fake_next, buf2, n2), 0);
    TEST_EQ_INT(api_name_calls, calls);
    TEST_EQ_STR(collector_sink_error(s), "");

    collector_counts c;
    collector_sink_counts(s, &c);
    TEST_EQ_INT(c.kernel, 1);
    TEST_EQ_INT(c.incomplete, 2);
    TEST_EQ_INT(c.memcpy, 1);
    TEST_EQ_INT(c.memset, 1);
    TEST_EQ_INT(c.api, 2);
    TEST_EQ_INT(c.range, 1);
    TEST_EQ_INT(c.context, 3);
    TEST_EQ_INT(c.device, 1);
    TEST_EQ_INT(c.unknown, 1);
    TEST_EQ_INT(c.lost, 0);
    TEST_EQ_INT(c.open_ranges, 0);
    collector_sink_free(s);
    TEST_EQ_INT(store_writer_close(w), 0);

    store_run *run = store_run_new();
    TEST_ASSERT(run);
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, 0);
    TEST_EQ_INT(store_run_finish(run), 0);
    int64_t off = 777; /* realtime - cupti of the start calibration pair */
    TEST_EQ_INT(run->nkernels, 1);
    const store_kernel *sk = &run->kernels[0];
    TEST_EQ_INT(sk->start, t0 + 2000 + off);
    TEST_EQ_INT(sk->end, t0 + 3500 + off);
    TEST_EQ_INT(sk->correlation_id, 99);
    const store_launch *la = &run->launches[sk->launch];
    TEST_EQ_STR(run->strings[la->name].text, "_Z6kernelPfi");
    TEST_EQ_STR(run->strings[la->name].demangled, "kernel(float*, int)");
    TEST_EQ_INT(la->grid[0], 132);
    TEST_EQ_INT(la->grid[1], 2);
    TEST_EQ_INT(la->grid[2], 1);
    TEST_EQ_INT(la->block[0], 256);
    TEST_EQ_INT(la->registers, 40);
    TEST_EQ_INT(la->static_smem, 1024);
    TEST_EQ_INT(la->dynamic_smem, 4096);
    const store_stream *st = &run->streams[sk->stream];
    TEST_EQ_INT(st->stream_id, 7);
    const store_context *cx = &run->contexts[st->context];
    TEST_EQ_INT(cx->context_id, 1);
    TEST_EQ_INT(cx->compute_api_kind, 2);
    TEST_EQ_INT(cx->green, 0);
    TEST_EQ_INT(cx->parent_id, 0);
    TEST_EQ_INT(cx->sm_count, 0);
    TEST_EQ_INT(run->ncontexts, 3);
    for (uint32_t i = 0; i < run->ncontexts; i++) {
        const store_context *g = &run->contexts[i];
        if (g->context_id == 1)
            continue;
        TEST_ASSERT(g->context_id == 2 || g->context_id == 3);
        TEST_EQ_INT(g->compute_api_kind, 1);
        TEST_EQ_INT(g->green, 1);
        TEST_EQ_INT(g->parent_id, 1);
        TEST_EQ_INT(g->sm_count, 66);
        TEST_EQ_INT(g->device, cx->device);
    }
    TEST_EQ_INT(sql_int(path, "SELECT sum(null_stream_id) FROM context"), 7 + 8 + 9);
    TEST_ASSERT(cx->device != STORE_NONE);
    const store_device *dv = &run->devices[cx->device];
    TEST_EQ_STR(dv->uuid, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
    TEST_EQ_STR(dv->name, "NVIDIA H200");
    TEST_EQ_INT(dv->sm_count, 132);
    TEST_EQ_INT(dv->cc_major, 9);
    TEST_EQ_INT(dv->cc_minor, 0);
    TEST_EQ_INT(dv->global_memory, 150ull << 30);
    TEST_EQ_INT(run->processes[cx->process].pid, 4242);

    TEST_EQ_INT(run->ncopies, 2);
    const store_copy *cp = &run->copies[0]; /* sorted by start: memcpy first */
    TEST_EQ_INT(cp->type, STORE_COPY_MEMCPY);
    TEST_EQ_INT(cp->start, t0 + 100 + off);
    TEST_EQ_INT(cp->end, t0 + 600 + off);
    TEST_EQ_INT(cp->kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    TEST_EQ_INT(cp->bytes, 1 << 20);
    TEST_EQ_INT(cp->correlation_id, 98);
    TEST_EQ_INT(run->streams[cp->stream].stream_id, 7);
    cp = &run->copies[1];
    TEST_EQ_INT(cp->type, STORE_COPY_MEMSET);
    TEST_EQ_INT(cp->start, t0 + 700 + off);
    TEST_EQ_INT(cp->bytes, 4096);
    TEST_EQ_INT(cp->kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    TEST_EQ_INT(cp->correlation_id, 97);
    TEST_EQ_INT(sql_int(path, "SELECT value FROM memset"), 0xab);
    TEST_EQ_INT(sql_int(path, "SELECT src_kind * 100 + dst_kind FROM memcpy"),
                CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE * 100 + CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);

    TEST_EQ_INT(run->napis, 2);
    const store_api *ap = &run->apis[0];
    TEST_EQ_STR(run->strings[ap->name].text, "cudaLaunchKernel_v7000");
    TEST_EQ_INT(ap->domain, STORE_API_RUNTIME);
    TEST_EQ_INT(ap->start, t0 + 1000 + off);
    TEST_EQ_INT(ap->end, t0 + 1900 + off);
    TEST_EQ_INT(ap->thread_id, 31337);
    TEST_EQ_INT(ap->correlation_id, 99);
    TEST_EQ_INT(ap->status, 0);
    ap = &run->apis[1];
    TEST_EQ_STR(run->strings[ap->name].text, "cuLaunchKernel");
    TEST_EQ_INT(ap->domain, STORE_API_DRIVER);
    TEST_EQ_INT(ap->status, 1);
    TEST_EQ_INT(sql_int(path, "SELECT cbid FROM api WHERE domain = 2"), 307);

    TEST_EQ_INT(run->nranges, 1);
    const store_range *rg = &run->ranges[0];
    TEST_EQ_STR(run->strings[rg->name].text, "step");
    TEST_ASSERT(rg->domain != STORE_NONE);
    TEST_EQ_STR(run->strings[rg->domain].text, "train");
    TEST_EQ_INT(rg->start, t0 + 50 + off);
    TEST_EQ_INT(rg->end, t0 + 5000 + off);
    TEST_EQ_INT(rg->thread_id, 31337);
    store_run_free(run);
    return 0;
}

/* 100,000 kernels through the queue and the writer thread, the last buffer handed back by
 * the forced flush at the end: every one arrives, and the metadata says so. */
int test_collector_queue_100k(void)
{
    collector_config cfg;
    setenv("TLVIEW_BUFFER_SIZE", "1M", 1);
    setenv("TLVIEW_FLUSH_MS", "20", 1);
    config_for(&cfg, "q.%p.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    flush_session = s;
    const int total = 100000;
    int64_t base = fake_gpu_clock();
    const size_t per = cfg.buffer_size / ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7);
    int made = 0;
    while (made < total) {
        uint8_t *buf = collector_session_buffer(s);
        TEST_ASSERT(buf);
        size_t off = 0;
        for (size_t i = 0; i < per && made < total; i++, made++) {
            CUpti_ActivityKernel10 k =
                make_kernel((uint64_t)(base + 2000 * (int64_t)made), (uint32_t)made + 1,
                            made % 2 ? "_Z3oddv" : "_Z4evenv");
            put(buf, &off, &k);
        }
        if (made == total) { /* keep the last one for the forced flush */
            flush_buffer = buf;
            flush_valid = off;
        } else {
            collector_session_submit(s, buf, off);
        }
    }
    TEST_EQ_INT(collector_session_sync(s, 0, 10000), 0);
    TEST_ASSERT(fake_flushes >= 1);
    TEST_EQ_INT(fake_forced, 0);
    TEST_ASSERT(flush_buffer != NULL);
    TEST_EQ_INT(collector_session_finish(s, 0, 60000), 0);
    TEST_EQ_INT(fake_forced, 1);
    TEST_ASSERT(flush_buffer == NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);

    store_run *run = store_run_new();
    int rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, 0);
    TEST_EQ_INT(store_run_finish(run), 0);
    TEST_EQ_INT(run->nkernels, total);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < run->nkernels; i++)
        sum += run->kernels[i].correlation_id;
    TEST_EQ_INT(sum, (uint64_t)total * (total + 1) / 2);
    TEST_EQ_INT(run->kernels[total - 1].end - run->kernels[0].start, 2000LL * (total - 1) + 1500);
    const store_process *p = &run->processes[0];
    TEST_EQ_INT(p->complete, 1);
    TEST_ASSERT(p->error == NULL);
    TEST_EQ_INT(meta_int(p, "count.kernel"), total);
    TEST_EQ_INT(meta_int(p, "records_lost"), 0);
    TEST_EQ_INT(meta_int(p, "records_dropped"), 0);
    TEST_EQ_INT(meta_int(p, "buffers_dropped"), 0);
    long long nbuf = (total + (long long)per - 1) / (long long)per;
    TEST_EQ_INT(meta_int(p, "buffers_requested"), nbuf);
    TEST_EQ_INT(meta_int(p, "buffers_completed"), nbuf);
    store_run_free(run);
    return 0;
}

/* A writer far behind: the queue holds one buffer, the producer never waits; every record is
 * either in the file or counted as lost, and the file says why it is incomplete. */
int test_collector_queue_full_drops(void)
{
    collector_config cfg;
    setenv("TLVIEW_BUFFER_SIZE", "64K", 1);
    setenv("TLVIEW_BUFFER_COUNT", "1", 1);
    config_for(&cfg, "drop.db");
    TEST_EQ_INT(cfg.buffer_count, 1);
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    const size_t per = cfg.buffer_size / ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7);
    int64_t base = fake_gpu_clock();
    int made = 0;
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    int saved = stderr_to(errpath);
    for (int b = 0; b < 200; b++) {
        uint8_t *buf = collector_session_buffer(s);
        size_t off = 0;
        for (size_t i = 0; i < per; i++, made++) {
            CUpti_ActivityKernel10 k =
                make_kernel((uint64_t)(base + 2000 * (int64_t)made), (uint32_t)made + 1, "_Z1kv");
            put(buf, &off, &k);
        }
        collector_session_submit(s, buf, off);
    }
    int rc = collector_session_finish(s, 0, 60000);
    stderr_back(saved);
    TEST_EQ_INT(rc, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    char first[2048];
    TEST_EQ_INT(count_lines(errpath, first, sizeof first), 1);
    TEST_ASSERT(strstr(first, "tlview: the writer falls behind") == first);

    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), 0);
    const store_process *p = &run->processes[0];
    long long lost = meta_int(p, "records_lost");
    TEST_ASSERT(lost > 0);
    TEST_EQ_INT((long long)run->nkernels + lost, made);
    TEST_EQ_INT(meta_int(p, "count.kernel"), (long long)run->nkernels);
    TEST_EQ_INT(meta_int(p, "buffers_dropped") * (long long)per, lost);
    TEST_EQ_INT(p->complete, 0);
    TEST_ASSERT(p->error && strstr(p->error, "records lost"));
    store_run_free(run);
    return 0;
}

/* The final forced flush hands back more buffers than the queue holds: on the writer thread
 * they are written at once, none is dropped. */
int test_collector_final_flush_overflow(void)
{
    collector_config cfg;
    setenv("TLVIEW_BUFFER_SIZE", "64K", 1);
    setenv("TLVIEW_BUFFER_COUNT", "1", 1);
    config_for(&cfg, "overflow.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    flush_session = s;
    int64_t base = fake_gpu_clock();
    int made = 0;
    for (nheld = 0; nheld < 8; nheld++) {
        held[nheld] = collector_session_buffer(s);
        TEST_ASSERT(held[nheld]);
        size_t off = 0;
        for (int i = 0; i < 100; i++, made++) {
            CUpti_ActivityKernel10 k =
                make_kernel((uint64_t)(base + 2000 * (int64_t)made), (uint32_t)made + 1, "_Z1kv");
            put(held[nheld], &off, &k);
        }
        held_valid[nheld] = off;
    }
    TEST_EQ_INT(collector_session_finish(s, 0, 60000), 0);
    TEST_EQ_INT(nheld, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), made);
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'records_lost'"), 0);
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'buffers_completed'"), 8);
    TEST_EQ_INT(sql_int(path, "SELECT complete FROM process"), 1);
    return 0;
}

/* Another CUPTI client (torch.profiler) re-registers the buffer callbacks: the buffers we
 * handed out go to it and never come back. The file says so, complete = 0, one stderr line. */
int test_collector_takeover(void)
{
    collector_config cfg;
    setenv("TLVIEW_BUFFER_SIZE", "64K", 1);
    config_for(&cfg, "takeover.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    uint8_t *ours = collector_session_buffer(s);
    uint8_t *taken = collector_session_buffer(s);
    TEST_ASSERT(ours && taken);
    size_t off = 0;
    CUpti_ActivityKernel10 k = make_kernel((uint64_t)fake_gpu_clock(), 1, "_Z1kv");
    put(ours, &off, &k);
    collector_session_submit(s, ours, off);
    char errpath[4096], line[2048];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    int saved = stderr_to(errpath);
    int rc = collector_session_finish(s, 0, 10000);
    stderr_back(saved);
    TEST_EQ_INT(rc, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    free(taken);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1);
    TEST_ASSERT(strstr(line, "1 of 2 activity buffers never came back"));
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), 0);
    TEST_EQ_INT(run->nkernels, 1);
    TEST_EQ_INT(run->processes[0].complete, 0);
    TEST_ASSERT(run->processes[0].error &&
                strstr(run->processes[0].error, "another CUPTI client (torch.profiler?)"));
    store_run_free(run);
    return 0;
}

static atomic_int fake_dropped_calls;
/* CUPTI lost 3 records each time it is asked (cuptiActivityGetNumDroppedRecords resets). */
static uint64_t fake_dropped(void)
{
    atomic_fetch_add(&fake_dropped_calls, 1);
    return 3;
}

/* Records CUPTI could not place are summed into records_dropped and explained. */
int test_collector_cupti_dropped(void)
{
    collector_hooks hooks = fake_hooks;
    hooks.dropped = fake_dropped;
    collector_config cfg;
    config_for(&cfg, "dropped.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &hooks, &s), 0);
    uint8_t *buf = collector_session_buffer(s);
    collector_session_submit(s, buf, 0); /* an empty buffer: 3 dropped */
    char errpath[4096], line[2048];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    int saved = stderr_to(errpath);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0); /* 3 more */
    stderr_back(saved);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    TEST_EQ_INT(fake_dropped_calls, 2);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1);
    TEST_ASSERT(strstr(line, "CUPTI dropped 6 records"));
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'records_dropped'"), 6);
    TEST_EQ_INT(sql_int(path, "SELECT complete FROM process"), 0);
    return 0;
}

int test_collector_pattern_expand(void)
{
    char out[512], expect[512], host[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    setenv("TLVIEW_TEST_RANK", "3", 1);
    unsetenv("TLVIEW_TEST_UNSET");
    TEST_EQ_INT(collector_pattern_expand("out.%p.db", out, sizeof out), 0);
    snprintf(expect, sizeof expect, "out.%ld.db", (long)getpid());
    TEST_EQ_STR(out, expect);
    TEST_EQ_INT(collector_pattern_expand("%h-%p", out, sizeof out), 0);
    snprintf(expect, sizeof expect, "%s-%ld", host, (long)getpid());
    TEST_EQ_STR(out, expect);
    TEST_EQ_INT(
        collector_pattern_expand("r%q{TLVIEW_TEST_RANK}_%q{TLVIEW_TEST_UNSET}.db", out, sizeof out),
        0);
    TEST_EQ_STR(out, "r3_.db");
    TEST_EQ_INT(collector_pattern_expand("100%%/%x/%q/%q{OPEN", out, sizeof out), 0);
    TEST_EQ_STR(out, "100%/%x/%q/%q{OPEN");
    TEST_EQ_INT(collector_pattern_expand("trailing%", out, sizeof out), 0);
    TEST_EQ_STR(out, "trailing%");
    TEST_EQ_INT(collector_pattern_expand("toolong-%p", out, 8), -1);
    TEST_EQ_STR(out, "toolong");
    return 0;
}

/* An existing file is never touched: the next free numbered name is used, and said once. */
int test_collector_unique_name(void)
{
    char first[4096], one[4096], two[4096];
    snprintf(first, sizeof first, "%s/run.db", test_tmpdir());
    snprintf(one, sizeof one, "%s/run.1.db", test_tmpdir());
    snprintf(two, sizeof two, "%s/run.2.db", test_tmpdir());
    FILE *f = fopen(first, "w");
    TEST_ASSERT(f);
    fputs("not yours", f);
    fclose(f);
    char pattern[4096], errpath[4096], line[2048];
    snprintf(pattern, sizeof pattern, "%s/run.db", test_tmpdir());
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    store_writer *w = NULL;
    int saved = stderr_to(errpath);
    int rc = collector_output_open(pattern, STORE_CLOCK_CUPTI, 0, &w);
    stderr_back(saved);
    TEST_EQ_INT(rc, 0);
    TEST_EQ_STR(store_writer_path(w), one);
    TEST_EQ_INT(store_writer_close(w), 0);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1);
    TEST_ASSERT(strstr(line, "tlview: ") == line && strstr(line, "run.db exists") &&
                strstr(line, "run.1.db"));
    TEST_EQ_INT(collector_output_open(pattern, STORE_CLOCK_CUPTI, 0, &w), 0);
    TEST_EQ_STR(store_writer_path(w), two);
    TEST_EQ_INT(store_writer_close(w), 0);
    f = fopen(first, "r");
    TEST_ASSERT(f);
    char text[64] = "";
    TEST_ASSERT(fgets(text, sizeof text, f));
    fclose(f);
    TEST_EQ_STR(text, "not yours");
    /* No extension: the number is appended. */
    snprintf(pattern, sizeof pattern, "%s/plain", test_tmpdir());
    TEST_EQ_INT(collector_output_open(pattern, STORE_CLOCK_CUPTI, 0, &w), 0);
    TEST_EQ_INT(store_writer_close(w), 0);
    TEST_EQ_INT(collector_output_open(pattern, STORE_CLOCK_CUPTI, 0, &w), 0);
    snprintf(one, sizeof one, "%s/plain.1", test_tmpdir());
    TEST_EQ_STR(store_writer_path(w), one);
    TEST_EQ_INT(store_writer_close(w), 0);
    return 0;
}

/* An output folder that cannot be written: one line naming the path and the reason, no file,
 * no crash, tracing off. */
int test_collector_unwritable_output(void)
{
    char errpath[4096], line[2048], notdir[4096];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    collector_config cfg;
    config_for(&cfg, "missing/folder/out.%p.db");
    collector_session *s = (collector_session *)&cfg; /* must be reset to NULL */
    int saved = stderr_to(errpath);
    int rc = collector_session_open(&cfg, &fake_hooks, &s);
    stderr_back(saved);
    TEST_EQ_INT(rc, -1);
    TEST_ASSERT(s == NULL);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1);
    TEST_ASSERT(strstr(line, "tlview: cannot write ") == line);
    TEST_ASSERT(strstr(line, "missing/folder/out."));
    TEST_ASSERT(strstr(line, "No such file or directory"));

    /* A regular file where the folder should be. */
    snprintf(notdir, sizeof notdir, "%s/afile", test_tmpdir());
    FILE *f = fopen(notdir, "w");
    TEST_ASSERT(f);
    fclose(f);
    config_for(&cfg, "afile/out.db");
    saved = stderr_to(errpath);
    rc = collector_session_open(&cfg, &fake_hooks, &s);
    stderr_back(saved);
    TEST_EQ_INT(rc, -1);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1);
    TEST_ASSERT(strstr(line, "Not a directory"));

    /* TLVIEW_LOG=0: silent. */
    setenv("TLVIEW_LOG", "0", 1);
    config_for(&cfg, "missing/out.db");
    saved = stderr_to(errpath);
    rc = collector_session_open(&cfg, &fake_hooks, &s);
    stderr_back(saved);
    TEST_EQ_INT(rc, -1);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 0);
    return 0;
}

/* The process row, its metadata and both calibration pairs. */
int test_collector_metadata(void)
{
    collector_config cfg;
    setenv("TLVIEW_RUN_ID", "run-17", 1);
    setenv("TLVIEW_API", "1", 1);
    setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/tl-mps-pipe", 1);
    unsetenv("CUDA_MPS_LOG_DIRECTORY");
    config_for(&cfg, "meta.%p.db");
    collector_session *s = NULL;
    int64_t before = realtime_ns();
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    char path[4096], expect[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    snprintf(expect, sizeof expect, "%s/meta.%ld.db", test_tmpdir(), (long)getpid());
    TEST_EQ_STR(path, expect);
    /* Before the finish: the process row is there, complete = 0 (what a SIGKILL leaves). */
    TEST_EQ_INT(sql_int(path, "SELECT complete FROM process"), 0);
    TEST_EQ_INT(collector_session_finish(s, SIGTERM, 10000), 0);
    int64_t after = realtime_ns();
    collector_session_free(s);

    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), 0);
    TEST_EQ_INT(run->nprocesses, 1);
    const store_process *p = &run->processes[0];
    char host[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    TEST_EQ_INT(p->pid, getpid());
    TEST_EQ_INT(p->ppid, getppid());
    TEST_EQ_STR(p->host, host);
    TEST_ASSERT(p->exe && strstr(p->exe, "test_collector"));
    TEST_ASSERT(p->argv && strstr(p->argv, "test_collector")); /* run by CTest or by hand */
    TEST_EQ_STR(p->run_id, "run-17");
    TEST_EQ_STR(p->source, "libcollect");
    TEST_EQ_INT(p->complete, 1);
    TEST_ASSERT(p->error == NULL);
    TEST_ASSERT(p->start_wall >= before && p->start_wall <= after);
    TEST_ASSERT(p->end_wall >= p->start_wall && p->end_wall <= after);
    TEST_NEAR(p->clock_offset, FAKE_OFFSET, 100000);
    TEST_EQ_STR(meta_value(p, "collector_version"), COLLECTOR_VERSION);
    TEST_EQ_STR(meta_value(p, "env.CUDA_MPS_PIPE_DIRECTORY"), "/tmp/tl-mps-pipe");
    TEST_ASSERT(meta_value(p, "env.CUDA_MPS_LOG_DIRECTORY") == NULL);
    TEST_EQ_INT(meta_int(p, "api_tracing"), 1);
    TEST_EQ_INT(meta_int(p, "nvtx_tracing"), 0);
    TEST_EQ_INT(meta_int(p, "buffer_size"), 1 << 23);
    TEST_EQ_INT(meta_int(p, "exit_signal"), SIGTERM);
    TEST_EQ_INT(meta_int(p, "count.kernel"), 0);
    TEST_EQ_INT(meta_int(p, "buffers_requested"), 0);
    /* No CUDA here: the versions found by dlsym are absent rather than invented. */
    TEST_ASSERT(meta_value(p, "driver_version") == NULL);
    store_run_free(run);

    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration"), 2);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration WHERE label IN ('start','end')"),
                2);
    TEST_NEAR(sql_int(path, "SELECT realtime - cupti FROM calibration WHERE label = 'end'"),
              FAKE_OFFSET, 100000);
    TEST_ASSERT(sql_int(path, "SELECT e.monotonic - s.monotonic FROM calibration s, calibration e"
                              " WHERE s.label = 'start' AND e.label = 'end'") >= 0);
    TEST_ASSERT(sql_int(path, "SELECT monotonic FROM calibration WHERE label = 'start'") > 0);
    return 0;
}

/* A GPU clock whose first read is slow, as cuptiGetTimestamp's is (it initialises CUPTI's clock):
 * it takes 2 ms and then reads the clock, at the end of the call. */
static atomic_int slow_reads;
static int64_t slow_first_gpu_clock(void)
{
    if (atomic_fetch_add(&slow_reads, 1) == 0) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return fake_gpu_clock();
}

/* The calibration pairs with a slow first clock read: each pair is as close to the true offset
 * (FAKE_OFFSET) as half its bracket, and the brackets are in process_meta. (One read bracketed,
 * the slow one, put the start pair ~1 ms off: the middle of a 2 ms bracket.) */
int test_collector_calibration_slow_first_read(void)
{
    collector_hooks hooks = fake_hooks;
    hooks.gpu_clock = slow_first_gpu_clock;
    atomic_store(&slow_reads, 0);
    collector_config cfg;
    config_for(&cfg, "calib.%p.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &hooks, &s), 0);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    static const char *const labels[] = {"start", "end"};
    for (int i = 0; i < 2; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT realtime - cupti FROM calibration WHERE label = '%s'",
                 labels[i]);
        int64_t off = sql_int(path, sql);
        snprintf(sql, sizeof sql,
                 "SELECT value FROM process_meta WHERE key = 'calibration_%s_bracket_ns'",
                 labels[i]);
        int64_t bracket = sql_int(path, sql);
        fprintf(stderr, "%s pair: offset %lld ns (true %d), bracket %lld ns\n", labels[i],
                (long long)off, FAKE_OFFSET, (long long)bracket);
        TEST_ASSERT(bracket >= 0 && bracket < 1000000);
        TEST_ASSERT(llabs(off - FAKE_OFFSET) <= bracket / 2 + 1);
    }
    TEST_ASSERT(atomic_load(&slow_reads) >= 2 * 8); /* a warm-up read and 7 brackets, twice */
    return 0;
}

/* A disk that fills up (RLIMIT_FSIZE): writing stops, the application is not disturbed,
 * everything is counted, and one line says so. */
int test_collector_disk_full(void)
{
    collector_config cfg;
    setenv("TLVIEW_BUFFER_SIZE", "256K", 1);
    config_for(&cfg, "full.db");
    collector_session *s = NULL;
    TEST_EQ_INT(collector_session_open(&cfg, &fake_hooks, &s), 0);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim, small;
    TEST_EQ_INT(getrlimit(RLIMIT_FSIZE, &lim), 0);
    small = lim;
    small.rlim_cur = 256 << 10;
    TEST_EQ_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
    const size_t per = cfg.buffer_size / ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7);
    int64_t base = fake_gpu_clock();
    char errpath[4096], line[2048];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    int saved = stderr_to(errpath);
    int made = 0;
    for (int b = 0; b < 40; b++) {
        uint8_t *buf = collector_session_buffer(s);
        TEST_ASSERT(buf);
        size_t off = 0;
        for (size_t i = 0; i < per; i++, made++) {
            CUpti_ActivityKernel10 k =
                make_kernel((uint64_t)(base + 2000 * (int64_t)made), (uint32_t)made, "_Z1kv");
            put(buf, &off, &k);
        }
        collector_session_submit(s, buf, off);
        TEST_EQ_INT(collector_session_sync(s, 0, 10000), 0);
    }
    int rc = collector_session_finish(s, 0, 60000);
    stderr_back(saved);
    TEST_EQ_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
    TEST_EQ_INT(rc, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    int lines = count_lines(errpath, line, sizeof line);
    TEST_ASSERT(lines >= 1 && lines <= 2);
    TEST_ASSERT(strstr(line, "tlview: writing ") == line && strstr(line, "full.db failed"));
    /* What was committed before the disk filled is readable; the file is not complete. */
    store_run *run = store_run_new();
    rc = store_run_load(run, path);
    if (rc)
        fprintf(stderr, "%s\n", store_run_errmsg(run));
    TEST_EQ_INT(rc, 0);
    TEST_EQ_INT(run->processes[0].complete, 0);
    TEST_ASSERT(run->nkernels > 0 && run->nkernels < (uint64_t)made);
    store_run_free(run);
    return 0;
}

int test_collector_config(void)
{
    collector_config cfg;
    const char *vars[] = {"TLVIEW_OUTPUT",
                          "TLVIEW_BUFFER_SIZE",
                          "TLVIEW_BUFFER_COUNT",
                          "TLVIEW_FLUSH_MS",
                          "TLVIEW_API",
                          "TLVIEW_NVTX",
                          "TLVIEW_LOG",
                          "TLVIEW_RUN_ID",
                          "TLVIEW_EXIT_TIMEOUT_MS",
                          "TLVIEW_CALLBACKS",
                          "TLVIEW_CAPTURE",
                          "TLVIEW_CAPTURE_DELAY",
                          "TLVIEW_CAPTURE_DURATION",
                          "TLVIEW_CONTROL_DIR",
                          "TLVIEW_FLIGHT"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    TEST_EQ_INT(collector_startup(&cfg), 0);
    TEST_EQ_STR(cfg.output, "output.%p.db");
    TEST_EQ_INT(cfg.buffer_size, 8 << 20);
    TEST_EQ_INT(cfg.buffer_count, 64);
    TEST_EQ_INT(cfg.flush_ms, 500);
    TEST_EQ_INT(cfg.exit_timeout_ms, 30000);
    TEST_EQ_INT(cfg.api, 0);
    TEST_EQ_INT(cfg.nvtx, 0);
    TEST_EQ_INT(cfg.callbacks, 0);
    TEST_EQ_INT(collector_log_level, 1);
    TEST_EQ_STR(cfg.run_id, "");
    TEST_EQ_INT(cfg.capture, COLLECTOR_CAPTURE_ALL);
    TEST_EQ_INT(cfg.capture_delay_ms, 0);
    TEST_EQ_INT(cfg.capture_duration_ms, 0);
    char ctl[64];
    snprintf(ctl, sizeof ctl, "/tmp/tlview-%u", (unsigned)geteuid());
    TEST_EQ_STR(cfg.control_dir, ctl);
    TEST_EQ_INT(cfg.flight_ms, 0);
    TEST_EQ_INT(cfg.flight_bytes, 0);

    setenv("TLVIEW_OUTPUT", "/tmp/x.%h.db", 1);
    setenv("TLVIEW_BUFFER_SIZE", "32M", 1);
    setenv("TLVIEW_BUFFER_COUNT", "8", 1);
    setenv("TLVIEW_FLUSH_MS", "0", 1);
    setenv("TLVIEW_API", "1", 1);
    setenv("TLVIEW_NVTX", "yes", 1);
    setenv("TLVIEW_CALLBACKS", "1", 1);
    setenv("TLVIEW_LOG", "2", 1);
    setenv("TLVIEW_RUN_ID", "abc", 1);
    TEST_EQ_INT(collector_startup(&cfg), 0);
    TEST_EQ_STR(cfg.output, "/tmp/x.%h.db");
    TEST_EQ_INT(cfg.buffer_size, 32 << 20);
    TEST_EQ_INT(cfg.buffer_count, 8);
    TEST_EQ_INT(cfg.flush_ms, 0);
    TEST_EQ_INT(cfg.api, COLLECTOR_API_CALLS);
    TEST_EQ_INT(cfg.nvtx, 1);
    TEST_EQ_INT(cfg.callbacks, 1);
    TEST_EQ_INT(collector_log_level, 2);
    TEST_EQ_STR(cfg.run_id, "abc");
    setenv("TLVIEW_API", "ALL", 1); /* the queries too */
    TEST_EQ_INT(collector_startup(&cfg), 0);
    TEST_EQ_INT(cfg.api, COLLECTOR_API_ALL);
    setenv("TLVIEW_API", "1", 1);

    /* Malformed values: one warning each, defaults kept. */
    char errpath[4096], line[2048];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    setenv("TLVIEW_LOG", "1", 1);
    setenv("TLVIEW_BUFFER_SIZE", "lots", 1);
    setenv("TLVIEW_BUFFER_COUNT", "0", 1);
    setenv("TLVIEW_FLUSH_MS", "5s", 1);
    int saved = stderr_to(errpath);
    collector_startup(&cfg);
    stderr_back(saved);
    TEST_EQ_INT(cfg.buffer_size, 8 << 20);
    TEST_EQ_INT(cfg.buffer_count, 64);
    TEST_EQ_INT(cfg.flush_ms, 500);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 3);
    TEST_ASSERT(strstr(line, "tlview: TLVIEW_BUFFER_SIZE=lots") == line);
    return 0;
}

/* The runtime version is found in a libcudart the application loaded privately
 * (RTLD_LOCAL), without linking it; skipped where the toolkit's libcudart is absent. */
int test_collector_runtime_version(void)
{
    TEST_EQ_INT(collector_runtime_version(), -1); /* not loaded yet: nothing is loaded for it */
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libcudart.so.13", CUDA_LIBRARY_DIR);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return test_skip("%s cannot be loaded (%s), so the runtime version is not tested", lib,
                         dlerror());
    int (*get)(int *) = NULL;
    *(void **)&get = dlsym(h, "cudaRuntimeGetVersion");
    int v = 0;
    TEST_ASSERT(get && get(&v) == 0);
    TEST_EQ_INT(collector_runtime_version(), v);
    TEST_ASSERT(v >= 13000);
    return 0;
}

int test_collector_shell_quote(void)
{
    char *q = collector_shell_quote("plain-arg_1.txt");
    TEST_EQ_STR(q, "plain-arg_1.txt");
    free(q);
    q = collector_shell_quote("two words");
    TEST_EQ_STR(q, "'two words'");
    free(q);
    q = collector_shell_quote("it's");
    TEST_EQ_STR(q, "'it'\\''s'");
    free(q);
    q = collector_shell_quote("");
    TEST_EQ_STR(q, "''");
    free(q);
    return 0;
}

/* ---------------------------------------------------------------- the real libcollect.so */

/* These run libcollect.so itself in a child process. Without a GPU CUPTI refuses to start, so
 * the file carries that reason and complete = 0, but the lifecycle (exit handler, signals,
 * fork) and the promises to the application (stdout, exit code untouched, one stderr line) are
 * the same. Where a GPU is present the GPU suite covers them instead: skipped. */
#include <sys/wait.h>

static volatile sig_atomic_t app_handled;
static void app_handler(int signo)
{
    (void)signo;
    app_handled = 1;
}

/* LeakSanitizer's exit-time check crashes ("Tracer caught signal 11") in a forked child whose
 * parent had other threads running (the collector's writer thread): the children of
 * run_injected() turn it off for themselves; every other case keeps it. Read by the sanitizer
 * runtime, unused in other builds. */
static int lsan_off;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return lsan_off;
}

/* Runs `mode` in a child whose stdout/stderr go to DIR/out.txt and DIR/err.txt, with
 * TLVIEW_OUTPUT=DIR/inj.%p.db. Returns the wait status; *child gets the child's pid. */
static int run_injected(const char *mode, pid_t *child)
{
    char out[4096], err[4096], pattern[4096], lib[4096];
    snprintf(out, sizeof out, "%s/out.txt", test_tmpdir());
    snprintf(err, sizeof err, "%s/err.txt", test_tmpdir());
    snprintf(pattern, sizeof pattern, "%s/inj.%%p.db", test_tmpdir());
    snprintf(lib, sizeof lib, "%s/collector/libcollect.so", TLVIEW_BINARY_DIR);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        lsan_off = 1;
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        setenv("TLVIEW_OUTPUT", pattern, 1);
        snprintf(pattern, sizeof pattern, "%s/ctl", test_tmpdir());
        setenv("TLVIEW_CONTROL_DIR", pattern, 1);
        if (!strcmp(mode, "sigint-app"))
            signal(SIGINT, app_handler);
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        int (*init)(void) = NULL;
        *(void **)&init = h ? dlsym(h, "InitializeInjection") : NULL;
        if (!init) {
            fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
            _exit(3);
        }
        printf("init %d %d\n", init(), init()); /* idempotent, returns 1 */
        fflush(stdout);
        if (!strcmp(mode, "sigterm"))
            raise(SIGTERM);
        if (!strcmp(mode, "sigint-app")) {
            raise(SIGINT);
            printf("handled %d\n", (int)app_handled);
        }
        if (!strcmp(mode, "wait")) {
            for (int i = 0; i < 10000 && access(getenv("TLVIEW_TEST_GO"), F_OK) != 0; i++)
                usleep(1000);
        }
        if (!strcmp(mode, "fork")) {
            pid_t g = fork();
            if (g == 0)
                exit(7); /* runs the inherited exit handler: it must step aside */
            int st = 0;
            waitpid(g, &st, 0);
            printf("grandchild %d\n", WEXITSTATUS(st));
        }
        exit(42);
    }
    *child = pid;
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static int have_gpu(void)
{
    return access("/dev/nvidiactl", F_OK) == 0;
}

/* The skip of a case that injects the real collector where CUPTI cannot start. */
static int skip_with_gpu(void)
{
    return test_skip("this machine has a GPU (/dev/nvidiactl), and the case needs one without: "
                     "the collector's start where CUPTI cannot start is not tested here");
}

static int read_text(const char *name, char *text, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, size - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    return f ? 0 : -1;
}

/* Exit through exit(): stdout and the exit code are the application's; one line on stderr;
 * the file is finished (end calibration, counts) and says why nothing was traced. */
int test_collector_inject_exit(void)
{
    if (have_gpu())
        return skip_with_gpu();
    pid_t child;
    int status = run_injected("exit", &child);
    char out[256], err[4096], path[4096];
    read_text("out.txt", out, sizeof out);
    read_text("err.txt", err, sizeof err);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 42);
    TEST_EQ_STR(out, "init 1 1\n");
    TEST_ASSERT(strncmp(err, "tlview: cuptiSubscribe failed: ", 31) == 0);
    TEST_EQ_INT(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
    snprintf(path, sizeof path, "%s/inj.%ld.db", test_tmpdir(), (long)child);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, path), 0);
    const store_process *p = &run->processes[0];
    TEST_EQ_INT(p->pid, child);
    TEST_EQ_INT(p->complete, 0);
    TEST_ASSERT(p->error && strstr(p->error, "cuptiSubscribe failed"));
    TEST_ASSERT(p->end_wall > 0);
    TEST_EQ_INT(meta_int(p, "count.kernel"), 0);
    TEST_ASSERT(meta_int(p, "cupti_version") > 0);
    store_run_free(run);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration"), 2);
    return 0;
}

/* SIGTERM with the default action: the file is finished first (exit_signal recorded), then the
 * process dies of SIGTERM as it would have. */
int test_collector_inject_sigterm(void)
{
    if (have_gpu())
        return skip_with_gpu();
    pid_t child;
    int status = run_injected("sigterm", &child);
    TEST_ASSERT(WIFSIGNALED(status));
    TEST_EQ_INT(WTERMSIG(status), SIGTERM);
    char path[4096];
    snprintf(path, sizeof path, "%s/inj.%ld.db", test_tmpdir(), (long)child);
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'exit_signal'"), SIGTERM);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration WHERE label = 'end'"), 1);
    TEST_ASSERT(sql_int(path, "SELECT end_wall FROM process") > 0);
    return 0;
}

/* SIGINT when the application has a handler: it still runs, the process goes on, and the file
 * is finished by the exit handler later (no exit_signal). */
int test_collector_inject_sigint_chained(void)
{
    if (have_gpu())
        return skip_with_gpu();
    pid_t child;
    int status = run_injected("sigint-app", &child);
    char out[256];
    read_text("out.txt", out, sizeof out);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 42);
    TEST_EQ_STR(out, "init 1 1\nhandled 1\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/inj.%ld.db", test_tmpdir(), (long)child);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM process_meta WHERE key = 'exit_signal'"), 0);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration WHERE label = 'end'"), 1);
    return 0;
}

/* fork: the child's exit handler leaves the parent's file alone; the parent finishes it. */
int test_collector_inject_fork(void)
{
    if (have_gpu())
        return skip_with_gpu();
    pid_t child;
    int status = run_injected("fork", &child);
    char out[256], err[4096];
    read_text("out.txt", out, sizeof out);
    read_text("err.txt", err, sizeof err);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 42);
    TEST_EQ_STR(out, "init 1 1\ngrandchild 7\n");
    TEST_EQ_INT(strchr(err, '\n') - err + 1, (long)strlen(err)); /* still one line */
    char path[4096];
    snprintf(path, sizeof path, "%s/inj.%ld.db", test_tmpdir(), (long)child);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM calibration WHERE label = 'end'"), 1);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM process"), 1);
    TEST_EQ_INT(sql_int(path, "SELECT pid FROM process"), child);
    return 0;
}

/* ---------------------------------------------------------------- capture ranges */

int test_collector_parse_ms(void)
{
    static const struct {
        const char *text;
        int bare;
        long long ms; /* -1: refused */
    } cases[] = {
        {"10s", 1, 10000},  {"500ms", 0, 500}, {"2m", 1, 120000}, {"2min", 0, 120000},
        {"1h", 0, 3600000}, {"1.5s", 0, 1500}, {"3", 1, 3000},    {"3", 0, -1},
        {"0", 1, 0},        {"-1s", 1, -1},    {"1e3s", 1, -1},   {"s", 1, -1},
        {"10 s", 1, -1},    {"10x", 1, -1},    {"nan", 1, -1},    {"0x10s", 1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t ms = 777;
        int rc = collector_parse_ms(cases[i].text, cases[i].bare, &ms);
        if (cases[i].ms < 0) {
            if (rc != -1)
                fprintf(stderr, "case %s\n", cases[i].text);
            TEST_EQ_INT(rc, -1);
        } else {
            if (rc != 0 || (long long)ms != cases[i].ms)
                fprintf(stderr, "case %s\n", cases[i].text);
            TEST_EQ_INT(rc, 0);
            TEST_EQ_INT(ms, cases[i].ms);
        }
    }
    return 0;
}

/* Reads the configuration with `n` variables set (name, value pairs), the rest of the capture
 * ones unset; the warnings go to DIR/stderr.txt, their count to *lines and the first to line. */
static void capture_config(collector_config *cfg, const char *const *kv, int n, int *lines,
                           char *line, size_t size)
{
    const char *vars[] = {
        "TLVIEW_CAPTURE", "TLVIEW_CAPTURE_DELAY", "TLVIEW_CAPTURE_DURATION", "TLVIEW_CONTROL_DIR",
        "TLVIEW_FLIGHT",  "TLVIEW_FLUSH_MS",      "TLVIEW_CALLBACKS",        "TLVIEW_LOG"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    for (int i = 0; i < n; i++)
        setenv(kv[2 * i], kv[2 * i + 1], 1);
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    int saved = stderr_to(errpath);
    collector_startup(cfg);
    stderr_back(saved);
    *lines = count_lines(errpath, line, size);
}

int test_collector_config_capture(void)
{
    collector_config cfg;
    char line[2048];
    int lines;
    const char *a[] = {"TLVIEW_CAPTURE",     "CUDAPROFILERAPI", "TLVIEW_CAPTURE_DURATION", "2.5s",
                       "TLVIEW_CONTROL_DIR", "/x/ctl",          "TLVIEW_FLIGHT",           "30s"};
    capture_config(&cfg, a, 4, &lines, line, sizeof line);
    TEST_EQ_INT(lines, 0);
    TEST_EQ_INT(cfg.capture, COLLECTOR_CAPTURE_PROFILER_API);
    TEST_EQ_INT(cfg.callbacks, 1); /* the profiler API is seen through the subscription */
    TEST_EQ_INT(cfg.capture_duration_ms, 2500);
    TEST_EQ_STR(cfg.control_dir, "/x/ctl");
    TEST_EQ_INT(cfg.flight_ms, 30000);
    TEST_EQ_INT(cfg.flight_bytes, 0);
    const char *b[] = {"TLVIEW_CAPTURE",       "control", "TLVIEW_FLIGHT", "64M",
                       "TLVIEW_CAPTURE_DELAY", "10s"};
    capture_config(&cfg, b, 3, &lines, line, sizeof line);
    TEST_EQ_INT(cfg.capture, COLLECTOR_CAPTURE_CONTROL);
    TEST_EQ_INT(cfg.flight_bytes, 64 << 20);
    TEST_EQ_INT(cfg.capture_delay_ms, 0);
    TEST_EQ_INT(lines, 1);
    TEST_EQ_STR(line, "tlview: TLVIEW_CAPTURE_DELAY applies to TLVIEW_CAPTURE=all only; ignored\n");
    const char *c[] = {"TLVIEW_CAPTURE", "all", "TLVIEW_CAPTURE_DELAY", "500ms"};
    capture_config(&cfg, c, 2, &lines, line, sizeof line);
    TEST_EQ_INT(lines, 0);
    TEST_EQ_INT(cfg.capture_delay_ms, 500);
    /* Bad values: one line each, the default kept. */
    static const struct {
        const char *var, *value, *line;
    } bad[] = {
        {"TLVIEW_CAPTURE", "sometimes",
         "tlview: TLVIEW_CAPTURE=sometimes is not all, cudaProfilerApi or control; using all\n"},
        {"TLVIEW_CAPTURE_DELAY", "soon",
         "tlview: TLVIEW_CAPTURE_DELAY=soon is not a time (10s, 500ms, 2m, 1h); ignored\n"},
        {"TLVIEW_CAPTURE_DURATION", "0",
         "tlview: TLVIEW_CAPTURE_DURATION=0 is outside [1 ms, 604800000 ms]; ignored\n"},
        {"TLVIEW_FLIGHT", "30",
         "tlview: TLVIEW_FLIGHT=30 is neither a time (30s, 5m) nor a size (64M, 1G); no flight "
         "recorder\n"},
        {"TLVIEW_FLIGHT", "30m",
         "tlview: TLVIEW_FLIGHT=30m is ambiguous: write 30min (minutes) or 30M (MiB); no flight "
         "recorder\n"},
        {"TLVIEW_FLIGHT", "500ms",
         "tlview: TLVIEW_FLIGHT=500ms: the window must be from 1 s to 7 days; no flight "
         "recorder\n"},
        {"TLVIEW_FLIGHT", "512K",
         "tlview: TLVIEW_FLIGHT=512K: keep at least 1M; no flight recorder\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *kv[] = {bad[i].var, bad[i].value};
        capture_config(&cfg, kv, 1, &lines, line, sizeof line);
        TEST_EQ_INT(lines, 1);
        TEST_EQ_STR(line, bad[i].line);
        TEST_EQ_INT(cfg.capture, COLLECTOR_CAPTURE_ALL);
        TEST_EQ_INT(cfg.capture_delay_ms + cfg.capture_duration_ms, 0);
        TEST_EQ_INT(cfg.flight_ms + cfg.flight_bytes, 0);
    }
    /* control without its channel: all; the flight recorder needs periodic flushes */
    const char *d[] = {"TLVIEW_CAPTURE", "control", "TLVIEW_CONTROL_DIR", "off"};
    capture_config(&cfg, d, 2, &lines, line, sizeof line);
    TEST_EQ_INT(lines, 1);
    TEST_EQ_STR(line, "tlview: TLVIEW_CAPTURE=control needs the control channel "
                      "(TLVIEW_CONTROL_DIR is off); using all\n");
    TEST_EQ_INT(cfg.capture, COLLECTOR_CAPTURE_ALL);
    TEST_EQ_STR(cfg.control_dir, "");
    const char *e[] = {"TLVIEW_FLIGHT", "1G", "TLVIEW_FLUSH_MS", "0"};
    capture_config(&cfg, e, 2, &lines, line, sizeof line);
    TEST_EQ_INT(lines, 1);
    TEST_EQ_STR(line, "tlview: TLVIEW_FLIGHT rotates at each flush: TLVIEW_FLUSH_MS=500 is used "
                      "instead of 0\n");
    TEST_EQ_INT(cfg.flush_ms, 500);
    TEST_EQ_INT(cfg.flight_bytes, 1 << 30);
    return 0;
}

/* ---- a simulated CUPTI: launches make records only while the launch kinds are on */

static atomic_int sim_on;                     /* set_tracing's state */
static atomic_int sim_refuse;                 /* set_tracing(1) fails */
static atomic_int sim_switches;               /* set_tracing calls */
static _Atomic int64_t sim_clock, sim_tick;   /* the GPU clock (0: fake_gpu_clock) and its step */
static _Atomic int64_t sim_on_at, sim_off_at; /* the clock when the kinds went on, off */

static int64_t sim_gpu_clock(void)
{
    int64_t step = atomic_load(&sim_tick);
    if (step)
        return atomic_fetch_add(&sim_clock, step) + step;
    int64_t c = atomic_load(&sim_clock);
    return c ? c : fake_gpu_clock();
}

static int sim_set_tracing(int on)
{
    atomic_fetch_add(&sim_switches, 1);
    if (on && atomic_load(&sim_refuse))
        return -1;
    atomic_store(on ? &sim_on_at : &sim_off_at, sim_gpu_clock());
    atomic_store(&sim_on, on);
    return 0;
}

static const collector_hooks sim_hooks = {
    .next_record = fake_next,
    .gpu_clock = sim_gpu_clock,
    .api_name = fake_api_name,
    .set_tracing = sim_set_tracing,
};

static uint32_t sim_corr; /* correlation ids handed out */

/* `n` launches at `t` (GPU clock; 0: now), 1 ns apart, each 500 ns long: records of them only
 * while the kinds are on, handed to the writer as one completed buffer. Returns how many were
 * recorded. */
static int sim_launch(collector_session *s, int n, int64_t t)
{
    if (!t)
        t = sim_gpu_clock();
    uint8_t *buf = collector_session_buffer(s);
    if (!buf)
        return -1;
    size_t off = 0, room = (1u << 20) / ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7);
    int made = 0;
    for (int i = 0; i < n; i++) {
        sim_corr++;
        if (!atomic_load(&sim_on) || (size_t)made == room)
            continue;
        CUpti_ActivityKernel10 k = make_kernel((uint64_t)(t + i), sim_corr, "_Z4workv");
        k.end = k.start + 500;
        put(buf, &off, &k);
        made++;
    }
    collector_session_submit(s, buf, off);
    return made;
}

/* Opens a session on sim_hooks with 1 MiB buffers, flushing every 20 ms. */
static collector_session *sim_session(const char *name, collector_config *cfg)
{
    atomic_store(&sim_on, 0);
    atomic_store(&sim_refuse, 0);
    setenv("TLVIEW_BUFFER_SIZE", "1M", 1);
    setenv("TLVIEW_FLUSH_MS", "20", 1);
    config_for(cfg, name);
    collector_session *s = NULL;
    if (collector_session_open(cfg, &sim_hooks, &s) != 0)
        return NULL;
    return s;
}

/* Waits up to 3 s for sim_on to become `want`; returns the ms waited, -1 on timeout. */
static int wait_on(int want)
{
    for (int ms = 0; ms < 3000; ms++) {
        if (atomic_load(&sim_on) == want)
            return ms;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* The file's capture rows as "start_reason-end_reason[:name]" joined by spaces. */
static int capture_rows(const char *path, char *out, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT group_concat(coalesce(start_reason, '?') || '-' ||"
                                " coalesce(end_reason, 'open') || coalesce(':' || name, ''), ' ')"
                                " FROM (SELECT * FROM capture ORDER BY id)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The state machine alone: where a range's times are read against the switch (its start after
 * CUPTI is on, its end before CUPTI goes off), the delayed start, the duration's end, what a
 * second start or stop does, a refused start, the end at exit (CUPTI untouched). */
int test_collector_capture_machine(void)
{
    collector_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.capture = COLLECTOR_CAPTURE_ALL;
    cfg.capture_delay_ms = 1000;
    cfg.capture_duration_ms = 500;
    atomic_store(&sim_clock, 100);
    atomic_store(&sim_tick, 1); /* every read of the clock moves it on by 1 */
    atomic_store(&sim_on, 0);
    atomic_store(&sim_switches, 0);
    collector_capture *c = NULL;
    TEST_EQ_INT(collector_capture_new(&cfg, &sim_hooks, NULL, NULL, &c), 0);
    collector_capture_event ev;
    collector_capture_state st;
    collector_capture_begin(c, 5000);
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 0);
    collector_capture_get(c, &st);
    TEST_EQ_INT(st.start_at_ms, 6000);
    collector_capture_tick(c, 5999);
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    collector_capture_tick(c, 6000);
    TEST_EQ_INT(atomic_load(&sim_on), 1);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_INT(ev.open, 1);
    TEST_EQ_INT(ev.range, 1);
    TEST_EQ_STR(ev.reason, "delay");
    TEST_ASSERT(ev.at > atomic_load(&sim_on_at)); /* read after CUPTI went on */
    collector_capture_get(c, &st);
    TEST_EQ_INT(st.switch_max_ns, 2); /* the clock read before, in and after the switch */
    TEST_EQ_INT(collector_capture_start(c, "control", "x", 6100), 1); /* already open */
    collector_capture_tick(c, 6499);
    TEST_EQ_INT(atomic_load(&sim_on), 1);
    collector_capture_tick(c, 6500);
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_INT(ev.open, 0);
    TEST_EQ_STR(ev.reason, "duration");
    TEST_ASSERT(ev.at < atomic_load(&sim_off_at));        /* read before CUPTI went off */
    TEST_EQ_INT(collector_capture_stop(c, "control"), 1); /* none open */
    collector_capture_tick(c, 9000);                      /* the delay does not come back */
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    /* A named range from outside; the duration applies to it too. */
    TEST_EQ_INT(collector_capture_start(c, "control", "slow", 10000), 0);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_STR(ev.name, "slow");
    TEST_EQ_INT(ev.range, 2);
    TEST_EQ_INT(collector_capture_stop(c, "control"), 0);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_STR(ev.reason, "control");
    /* CUPTI refuses: nothing opens, no event. */
    atomic_store(&sim_refuse, 1);
    TEST_EQ_INT(collector_capture_start(c, "control", NULL, 11000), -1);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 0);
    collector_capture_get(c, &st);
    TEST_EQ_INT(st.active, 0);
    atomic_store(&sim_refuse, 0);
    /* The end closes what is open without switching CUPTI (the process is going). */
    TEST_EQ_INT(collector_capture_start(c, "cudaProfilerStart", NULL, 12000), 0);
    int switches = atomic_load(&sim_switches);
    collector_capture_end(c, "exit");
    TEST_EQ_INT(atomic_load(&sim_switches), switches);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_INT(ev.open, 0);
    TEST_EQ_STR(ev.reason, "exit");
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 0);
    collector_capture_free(c);
    /* Modes other than all wait at the start; all without a delay opens at once. */
    cfg.capture = COLLECTOR_CAPTURE_PROFILER_API;
    TEST_EQ_INT(collector_capture_new(&cfg, &sim_hooks, NULL, NULL, &c), 0);
    collector_capture_begin(c, 0);
    collector_capture_tick(c, 100000);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 0);
    collector_capture_free(c);
    cfg.capture = COLLECTOR_CAPTURE_ALL;
    cfg.capture_delay_ms = 0;
    TEST_EQ_INT(collector_capture_new(&cfg, &sim_hooks, NULL, NULL, &c), 0);
    collector_capture_begin(c, 0);
    TEST_EQ_INT(collector_capture_next_event(c, &ev), 1);
    TEST_EQ_STR(ev.reason, "start");
    TEST_EQ_INT(atomic_load(&sim_on), 1);
    collector_capture_free(c);
    atomic_store(&sim_tick, 0);
    atomic_store(&sim_clock, 0);
    return 0;
}

/* TLVIEW_CAPTURE_DELAY and _DURATION on the writer thread: the range opens after the delay and
 * closes after the duration, and only what was launched inside is in the file. */
int test_collector_capture_delay_duration(void)
{
    setenv("TLVIEW_CAPTURE", "all", 1);
    setenv("TLVIEW_CAPTURE_DELAY", "200ms", 1);
    setenv("TLVIEW_CAPTURE_DURATION", "300ms", 1);
    collector_config cfg;
    collector_session *s = sim_session("dd.db", &cfg);
    TEST_ASSERT(s);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    collector_session_begin_capture(s);
    TEST_EQ_INT(sim_launch(s, 10, 0), 0); /* before the delay: off */
    TEST_ASSERT(wait_on(1) >= 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double on_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    TEST_EQ_INT(sim_launch(s, 25, 0), 25);
    TEST_ASSERT(wait_on(0) >= 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    double range_ms = (a.tv_sec - b.tv_sec) * 1e3 + (a.tv_nsec - b.tv_nsec) / 1e6;
    TEST_EQ_INT(sim_launch(s, 10, 0), 0);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    char path[4096], rows[512];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    fprintf(stderr, "on after %.0f ms, off %.0f ms later\n", on_ms, range_ms);
    TEST_ASSERT(on_ms >= 199 && on_ms < 600);
    TEST_ASSERT(range_ms >= 150 && range_ms < 600);
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "delay-duration");
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 25);
    TEST_NEAR(sql_int(path, "SELECT dur FROM capture") / 1e6, 300, 150);
    /* every kernel lies inside the range */
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel k, capture c WHERE k.start < c.start"
                              " OR k.start > c.start + c.dur"),
                0);
    TEST_EQ_STR(meta_text(path, "capture"), "all");
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'capture_delay_ms'"),
                200);
    TEST_ASSERT(sql_int(path, "SELECT value FROM process_meta WHERE key ="
                              " 'capture_switch_max_ns'") >= 0);
    unsetenv("TLVIEW_CAPTURE_DELAY");
    unsetenv("TLVIEW_CAPTURE_DURATION");
    return 0;
}

/* TLVIEW_CAPTURE=cudaProfilerApi: ranges from cudaProfilerStart to cudaProfilerStop (what
 * inject.c's callbacks call), a second start changes nothing, the process's end closes the last
 * one ("exit"), and each range holds exactly the launches made inside it. */
int test_collector_capture_profiler_api(void)
{
    setenv("TLVIEW_CAPTURE", "cudaProfilerApi", 1);
    collector_config cfg;
    collector_session *s = sim_session("prof.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    TEST_EQ_INT(sim_launch(s, 5, 0), 0);
    TEST_EQ_INT(collector_session_capture(s, 1, "cudaProfilerStart"), 0);
    TEST_EQ_INT(collector_session_capture(s, 1, "cudaProfilerStart"), 1); /* cuProfilerStart */
    TEST_EQ_INT(sim_launch(s, 7, 0), 7);
    TEST_EQ_INT(collector_session_capture(s, 0, "cudaProfilerStop"), 0);
    TEST_EQ_INT(collector_session_capture(s, 0, "cudaProfilerStop"), 1);
    TEST_EQ_INT(sim_launch(s, 3, 0), 0);
    TEST_EQ_INT(collector_session_capture(s, 1, "cudaProfilerStart"), 0);
    TEST_EQ_INT(sim_launch(s, 4, 0), 4);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    char path[4096], rows[512];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "cudaProfilerStart-cudaProfilerStop cudaProfilerStart-exit");
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel k, capture c WHERE c.id = 1 AND"
                              " k.start BETWEEN c.start AND c.start + c.dur"),
                7);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel k, capture c WHERE c.id = 2 AND"
                              " k.start BETWEEN c.start AND c.start + c.dur"),
                4);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 11);
    TEST_EQ_STR(meta_text(path, "capture"), "cudaProfilerApi");
    unsetenv("TLVIEW_CAPTURE");
    return 0;
}

/* Runs `tlview capture ARGS...` (TLVIEW_CONTROL_DIR = DIR/ctl) with its stdout and stderr into
 * out; returns its exit status. */
static int capture_cmd(char *out, size_t n, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "TLVIEW_CONTROL_DIR='%s/ctl' '%s' capture %s 2>&1", test_tmpdir(),
             TLVIEW, args);
    FILE *p = popen(cmd, "r");
    size_t got = p ? fread(out, 1, n - 1, p) : 0;
    out[got] = '\0';
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* TLVIEW_CAPTURE=control driven by the tlview binary: nothing before `start`, the range named,
 * status, a dump beside the file (a consistent copy holding what was launched so far, its range
 * closed as 'dump'), `stop`, nothing after; the FIFO goes with the process's end. */
int test_collector_capture_control(void)
{
    setenv("TLVIEW_CAPTURE", "control", 1);
    collector_config cfg;
    collector_session *s = sim_session("ctl.%p.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    TEST_EQ_INT(sim_launch(s, 10, 0), 0);
    char out[4096], want[8192], args[256], fifo[4200], path[4096], abs[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    TEST_ASSERT(realpath(path, abs));
    long pid = (long)getpid();
    snprintf(fifo, sizeof fifo, "%s/ctl/%ld.ctl", test_tmpdir(), pid);
    TEST_EQ_INT(access(fifo, F_OK), 0);
    snprintf(args, sizeof args, "start --name 'the slow one' %ld", pid);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    snprintf(want, sizeof want, "%ld: capturing: range 1 opened\n", pid);
    TEST_EQ_STR(out, want);
    TEST_EQ_INT(atomic_load(&sim_on), 1);
    TEST_EQ_INT(sim_launch(s, 20, 0), 20);
    TEST_EQ_INT(collector_session_sync(s, 0, 5000), 0);
    snprintf(args, sizeof args, "status %ld", pid);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    snprintf(want, sizeof want, "%ld: capturing range 1 for ", pid);
    TEST_ASSERT(strncmp(out, want, strlen(want)) == 0);
    snprintf(want, sizeof want, " s; writing %s\n", abs);
    TEST_ASSERT(strlen(out) > strlen(want) && !strcmp(out + strlen(out) - strlen(want), want));
    snprintf(args, sizeof args, "dump -n at-3am %ld", pid);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    char dumped[4200];
    const char *slash = strrchr(abs, '/');
    snprintf(dumped, sizeof dumped, "%.*s/at-3am%s", (int)(slash - abs), abs, slash);
    snprintf(want, sizeof want, "%ld: dumped 20 kernels to %s\n", pid, dumped);
    TEST_EQ_STR(out, want);
    /* the same name again: the next free numbered name */
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    TEST_ASSERT(strstr(out, "at-3am/ctl.") && strstr(out, ".1.db\n"));
    snprintf(args, sizeof args, "stop %ld", pid);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    snprintf(want, sizeof want, "%ld: stopped: range 1 closed after ", pid);
    TEST_ASSERT(strncmp(out, want, strlen(want)) == 0);
    TEST_EQ_INT(atomic_load(&sim_on), 0);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    snprintf(want, sizeof want, "%ld: not capturing: nothing to stop\n", pid);
    TEST_EQ_STR(out, want);
    TEST_EQ_INT(sim_launch(s, 5, 0), 0);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    collector_session_free(s);
    TEST_EQ_INT(access(fifo, F_OK), -1);
    snprintf(args, sizeof args, "status %ld", pid);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 1);
    TEST_ASSERT(strstr(out, "no collector listening"));

    char rows[512];
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "control-control:the slow one");
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 20);
    store_run *run = store_run_new();
    TEST_EQ_INT(store_run_load(run, dumped), 0);
    TEST_EQ_INT(run->nkernels, 20);
    TEST_EQ_INT(run->ncaptures, 1);
    TEST_EQ_STR(run->captures[0].end_reason, "dump");
    TEST_EQ_STR(run->captures[0].name, "the slow one");
    TEST_EQ_INT(run->processes[0].pid, pid);
    store_run_free(run);
    unsetenv("TLVIEW_CAPTURE");
    return 0;
}

/* ---- a CUPTI that keeps its current buffer while a kernel in it runs: a default flush returns
 * a buffer only when all its records are complete (cuptiActivityFlushAll(0)), a forced one
 * always. The GPU clock moves on by hz_step at each default flush (time passes between them). */

static pthread_mutex_t hz_lock = PTHREAD_MUTEX_INITIALIZER; /* guards hz_buf, hz_used, hz_end */
static collector_session *hz_session;
static uint8_t *hz_buf;                   /* CUPTI's current buffer, NULL none */
static size_t hz_used;                    /* its bytes of records */
static int64_t hz_end;                    /* the latest end of a kernel in it */
static _Atomic int64_t hz_clock, hz_step; /* the GPU clock; its move per default flush */
static atomic_int hz_flushes;             /* default flushes so far */

static int64_t hz_gpu_clock(void)
{
    return atomic_load(&hz_clock);
}

static int hz_flush(int forced)
{
    pthread_mutex_lock(&hz_lock);
    if (hz_buf && (forced || hz_end <= atomic_load(&hz_clock))) {
        collector_session_submit(hz_session, hz_buf, hz_used);
        hz_buf = NULL;
        hz_used = 0;
        hz_end = 0;
    }
    pthread_mutex_unlock(&hz_lock);
    if (!forced) {
        atomic_fetch_add(&hz_flushes, 1);
        atomic_fetch_add(&hz_clock, atomic_load(&hz_step));
    }
    return 0;
}

static const collector_hooks hz_hooks = {
    .next_record = fake_next,
    .flush = hz_flush,
    .gpu_clock = hz_gpu_clock,
    .api_name = fake_api_name,
};

/* `n` kernels into CUPTI's current buffer, the first at `start`, `gap` apart, each `dur` long. */
static void hz_launch(int n, int64_t start, int64_t gap, int64_t dur)
{
    static uint32_t corr;
    pthread_mutex_lock(&hz_lock);
    if (!hz_buf)
        hz_buf = collector_session_buffer(hz_session);
    for (int i = 0; hz_buf && i < n; i++) {
        CUpti_ActivityKernel10 k = make_kernel((uint64_t)(start + i * gap), ++corr, "_Z2hzv");
        k.end = k.start + (uint64_t)dur;
        put(hz_buf, &hz_used, &k);
        if ((int64_t)k.end > hz_end)
            hz_end = (int64_t)k.end;
    }
    pthread_mutex_unlock(&hz_lock);
}

/* A dump of hz_session named `name`: its reply into out, its path into path. */
static int hz_dump(const char *name, const char *abs, char *out, size_t n, char *path, size_t np)
{
    char args[256];
    snprintf(args, sizeof args, "dump -n %s %ld", name, (long)getpid());
    const char *slash = strrchr(abs, '/');
    snprintf(path, np, "%.*s/%s%s", (int)(slash - abs), abs, name, slash);
    int rc = capture_cmd(out, n, args);
    fprintf(stderr, "%s: %s", name, out);
    return rc;
}

/* The end of a file's capture range 1, absolute. */
static int64_t range_end(const char *path)
{
    return sql_int(path, "SELECT start + dur + (SELECT value FROM meta WHERE key = 't0')"
                         " FROM capture WHERE id = 1");
}

/* Dumps and a range's end while CUPTI keeps its current buffer (a kernel in it still running):
 * the dump repeats the default flush until the buffer comes back, and its range then reaches the
 * request; when it does not come back within 100 ms, the dump's range ends where the file is
 * complete (the latest end written), short of the request, and the reply says by how much; a
 * `stop` replies once the range's records are in the file. (Before, the dump's range ended at the
 * flush whatever CUPTI kept: kernels that had ended before it were missing from the copy.) */
int test_collector_capture_horizon(void)
{
    const int64_t T = (int64_t)1 << 50, MS = 1000000;
    atomic_store(&hz_clock, T);
    atomic_store(&hz_step, 0);
    setenv("TLVIEW_BUFFER_SIZE", "1M", 1);
    setenv("TLVIEW_FLUSH_MS", "0", 1); /* no periodic flush: the test says when */
    setenv("TLVIEW_CAPTURE", "all", 1);
    collector_config cfg;
    config_for(&cfg, "hz.%p.db");
    TEST_EQ_INT(collector_session_open(&cfg, &hz_hooks, &hz_session), 0);
    collector_session_begin_capture(hz_session); /* range 1 from T */
    char path[4096], abs[4096], out[4096], dumped[4300];
    snprintf(path, sizeof path, "%s", collector_session_path(hz_session));
    TEST_ASSERT(realpath(path, abs));

    /* A: 10 kernels, over by T+20ms, handed back by a flush then */
    hz_launch(10, T + 1 * MS, MS, MS / 2);
    atomic_store(&hz_clock, T + 20 * MS);
    TEST_EQ_INT(collector_session_sync(hz_session, 0, 5000), 0);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 10);

    /* B: 10 kernels over by T+40ms, and C from T+45ms to T+63ms, still running at the dump
     * (T+60ms): CUPTI hands their buffer back at the 4th flush (T+63ms) */
    hz_launch(10, T + 30 * MS, MS, MS / 2);
    hz_launch(1, T + 45 * MS, 0, 18 * MS);
    atomic_store(&hz_clock, T + 60 * MS);
    atomic_store(&hz_step, MS);
    int before = atomic_load(&hz_flushes);
    TEST_EQ_INT(hz_dump("settled", abs, out, sizeof out, dumped, sizeof dumped), 0);
    int flushes = atomic_load(&hz_flushes) - before;
    char want[8192];
    snprintf(want, sizeof want, "%ld: dumped 21 kernels to %s\n", (long)getpid(), dumped);
    TEST_EQ_STR(out, want);
    TEST_EQ_INT(flushes, 4);
    TEST_EQ_INT(sql_int(dumped, "SELECT count(*) FROM kernel"), 21);
    TEST_EQ_INT(range_end(dumped), T + 63 * MS); /* the flush that got it all */

    /* D: 5 kernels over by T+75ms, E from T+76ms for 100 s: the buffer stays with CUPTI; the dump
     * at T+80ms ends where the file is complete: T+63ms (C's end), 17 ms short */
    hz_launch(5, T + 70 * MS, MS, MS / 2);
    hz_launch(1, T + 76 * MS, 0, 100000 * MS);
    atomic_store(&hz_clock, T + 80 * MS);
    TEST_EQ_INT(hz_dump("short", abs, out, sizeof out, dumped, sizeof dumped), 0);
    snprintf(want, sizeof want,
             "%ld: dumped 21 kernels to %s; complete only to 17.0 ms before the request: CUPTI "
             "still held a buffer after 100 ms of flushes (a kernel running)\n",
             (long)getpid(), dumped);
    TEST_EQ_STR(out, want);
    TEST_EQ_INT(range_end(dumped), T + 63 * MS);
    /* every kernel made that ended by the copy's range end is in it */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel WHERE start + dur <= %lld",
             (long long)(range_end(dumped) - sql_int(dumped, "SELECT value FROM meta WHERE key"
                                                             " = 't0'")));
    TEST_EQ_INT(sql_int(dumped, sql), 21);
    TEST_EQ_INT(sql_int(dumped, "SELECT value FROM process_meta WHERE key = 'snapshot'"), 1);

    /* `stop` at T+200ms, E now ending at T+202ms: the reply comes once E's buffer is written */
    atomic_store(&hz_clock, T + 200 * MS);
    pthread_mutex_lock(&hz_lock);
    hz_end = T + 202 * MS;
    pthread_mutex_unlock(&hz_lock);
    char args[64];
    snprintf(args, sizeof args, "stop %ld", (long)getpid());
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 27);
    TEST_EQ_INT(range_end(path), T + 200 * MS);

    TEST_EQ_INT(collector_session_finish(hz_session, 0, 10000), 0);
    collector_session_free(hz_session);
    hz_session = NULL;
    char rows[512];
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "start-control");
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 27);
    unsetenv("TLVIEW_CAPTURE");
    unsetenv("TLVIEW_FLUSH_MS");
    return 0;
}

/* A range still open is known to reach the latest flush (what a killed process leaves), then
 * closes at the end as "exit". CUPTI refusing: no range, and `start` says so. */
int test_collector_capture_open_and_refused(void)
{
    collector_config cfg;
    collector_session *s = sim_session("open.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    TEST_EQ_INT(sim_launch(s, 3, 0), 3);
    TEST_EQ_INT(collector_session_sync(s, 0, 5000), 0);
    char path[4096], rows[512];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "start-open");
    TEST_ASSERT(sql_int(path, "SELECT dur FROM capture") > 0);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    collector_session_free(s);
    TEST_EQ_INT(capture_rows(path, rows, sizeof rows), 0);
    TEST_EQ_STR(rows, "start-exit");

    s = sim_session("refused.%p.db", &cfg);
    TEST_ASSERT(s);
    atomic_store(&sim_refuse, 1);
    collector_session_begin_capture(s);
    char out[4096], args[64], want[256];
    snprintf(args, sizeof args, "start %ld", (long)getpid());
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 1);
    snprintf(want, sizeof want,
             "tlview capture: %ld: tracing is off (CUPTI refused, or another CUPTI client took it "
             "over): nothing opened\n",
             (long)getpid());
    TEST_EQ_STR(out, want);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM capture"), 0);
    atomic_store(&sim_refuse, 0);
    return 0;
}

/* A control folder others may write: said once, no channel. TLVIEW_CAPTURE=control then traces
 * nothing, and the file says why. 2026-12-07 (issue 28): it fell back to all, so a folder another
 * user pre-created (/tmp/tlview-UID) turned a server's capture-on-demand into full tracing, at
 * full cost, for as long as it ran. */
int test_collector_capture_bad_control_dir(void)
{
    char dir[4200], errpath[4200], line[2048];
    snprintf(dir, sizeof dir, "%s/shared", test_tmpdir());
    TEST_EQ_INT(mkdir(dir, 0777), 0);
    TEST_EQ_INT(chmod(dir, 0777), 0);
    setenv("TLVIEW_CONTROL_DIR", dir, 1);
    setenv("TLVIEW_CAPTURE", "control", 1);
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", test_tmpdir());
    collector_config cfg;
    int saved = stderr_to(errpath);
    collector_session *s = sim_session("bad.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    TEST_EQ_INT(atomic_load(&sim_on), 0); /* nothing traced */
    TEST_EQ_INT(sim_launch(s, 10, 1000), 0);
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    stderr_back(saved);
    TEST_EQ_INT(count_lines(errpath, line, sizeof line), 1); /* said once, at the start */
    char want[8192];
    snprintf(want, sizeof want,
             "tlview: no control channel (control folder refused: %s: every user may write into "
             "the folder (mode 0777)): `tlview capture` cannot reach this process; with "
             "TLVIEW_CAPTURE=control nothing is traced (set TLVIEW_CONTROL_DIR to a folder of "
             "yours)\n",
             dir);
    TEST_EQ_STR(line, want);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    TEST_EQ_STR(meta_text(path, "capture"), "control");
    TEST_EQ_INT(sql_int(path, "SELECT count(*) FROM kernel"), 0);
    TEST_EQ_INT(sql_int(path, "SELECT complete FROM process"), 0);
    TEST_EQ_INT(sql_int(path, "SELECT error LIKE 'TLVIEW_CAPTURE=control without a control "
                              "channel (control folder refused: %): nothing traced' FROM process"),
                1);
    unsetenv("TLVIEW_CAPTURE");
    unsetenv("TLVIEW_CONTROL_DIR");
    return 0;
}

/* The flight recorder on a time window (TLVIEW_FLIGHT=2s) while 6 s of launches go by on a GPU
 * clock the test moves: the file keeps about the last 2 s, every launch after the range's
 * (trimmed) start is in it, a dump says so, and the rows before it were rotated out. */
int test_collector_flight_time(void)
{
    setenv("TLVIEW_FLIGHT", "2s", 1);
    const int64_t T = (int64_t)1 << 50, step = 100000000; /* 100 ms per round */
    atomic_store(&sim_clock, T);
    collector_config cfg;
    collector_session *s = sim_session("flight.%p.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    const int rounds = 60, per = 200;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&sim_clock, T + (int64_t)r * step);
        TEST_EQ_INT(sim_launch(s, per, T + (int64_t)r * step), per);
        TEST_EQ_INT(collector_session_sync(s, 0, 5000), 0); /* a flush: the rotation's turn */
    }
    int64_t end = T + (int64_t)(rounds - 1) * step + step / 2;
    atomic_store(&sim_clock, end);
    char out[4096], args[64];
    snprintf(args, sizeof args, "dump -n fl %ld", (long)getpid());
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 0);
    if (!strstr(out, "(the last 2.") && !strstr(out, "(the last 1."))
        fprintf(stderr, "the dump's reply: %s", out);
    TEST_ASSERT(strstr(out, "(the last 2.") || strstr(out, "(the last 1."));
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    collector_session_free(s);
    atomic_store(&sim_clock, 0);
    unsetenv("TLVIEW_FLIGHT");

    int64_t t0 = sql_int(path, "SELECT value FROM meta WHERE key = 't0'");
    int64_t cap_start = t0 + sql_int(path, "SELECT start FROM capture");
    int64_t kept = sql_int(path, "SELECT count(*) FROM kernel");
    /* the launches at or after the range's start, as the test made them */
    int64_t first_round = (cap_start - T + step - 1) / step;
    int64_t want = (rounds - first_round) * per;
    fprintf(stderr, "flight: range from %.2f s before the end, %lld kernels kept of %d\n",
            (double)(end - cap_start) / 1e9, (long long)kept, rounds * per);
    TEST_ASSERT(end - cap_start >= 2000000000LL - step &&
                end - cap_start <= 2000000000LL + 2 * step);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel WHERE start >= %lld",
             (long long)(cap_start - t0));
    TEST_EQ_INT(sql_int(path, sql), want); /* nothing lost inside the window */
    TEST_ASSERT(kept <= want + 2 * per);   /* and little before it */
    /* one rotation per flush at most, fewer when a turn finds several checkpoints due */
    long long rotations = atoll(meta_text(path, "flight_rotations"));
    fprintf(stderr, "flight_rotations %lld\n", rotations);
    TEST_ASSERT(rotations >= 1 && rotations <= rounds);
    TEST_EQ_INT(sql_int(path, "SELECT value FROM process_meta WHERE key = 'flight_ms'"), 2000);
    return 0;
}

/* The flight recorder on a size (TLVIEW_FLIGHT=1M): ~17 MB of kernels go through, the file
 * stays near 1 MiB all along, and the newest launches are all there. */
int test_collector_flight_size(void)
{
    setenv("TLVIEW_FLIGHT", "1M", 1);
    collector_config cfg;
    collector_session *s = sim_session("fsize.db", &cfg);
    TEST_ASSERT(s);
    collector_session_begin_capture(s);
    char path[4096], wal[4200];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    snprintf(wal, sizeof wal, "%s-wal", path);
    int64_t db_max = 0, wal_max = 0;
    const int rounds = 400, per = 2000;
    for (int r = 0; r < rounds; r++) {
        TEST_EQ_INT(sim_launch(s, per, 0), per);
        TEST_EQ_INT(collector_session_sync(s, 0, 5000), 0);
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > db_max)
            db_max = st.st_size;
        if (stat(wal, &st) == 0 && st.st_size > wal_max)
            wal_max = st.st_size;
    }
    TEST_EQ_INT(collector_session_finish(s, 0, 10000), 0);
    collector_session_free(s);
    unsetenv("TLVIEW_FLIGHT");
    int64_t kept = sql_int(path, "SELECT count(*) FROM kernel");
    fprintf(stderr,
            "flight 1M: file at most %lld bytes, WAL at most %lld, %lld of %d kernels kept\n",
            (long long)db_max, (long long)wal_max, (long long)kept, rounds * per);
    TEST_ASSERT(db_max < (3 << 19)); /* 1.5 MiB: the limit and one flush's rows */
    TEST_ASSERT(wal_max < (5 << 20));
    TEST_ASSERT(kept >= per && kept < rounds * per / 4);
    /* the newest round is whole */
    TEST_EQ_INT(sql_int(path, "SELECT max(correlation_id) FROM kernel"), sim_corr);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel WHERE correlation_id > %u",
             sim_corr - per);
    TEST_EQ_INT(sql_int(path, sql), per);
    return 0;
}

/* The real libcollect.so without a GPU: CUPTI does not start, yet its control FIFO answers
 * (status, and a start it must refuse) while the application runs on, and goes at exit. */
int test_collector_inject_control(void)
{
    if (have_gpu())
        return skip_with_gpu();
    char go[4200];
    snprintf(go, sizeof go, "%s/go", test_tmpdir());
    setenv("TLVIEW_TEST_GO", go, 1);
    int status = -1;
    /* A child runs the injected application (run_injected's mode "wait": it waits for `go`);
     * this process talks to it meanwhile. */
    pid_t pid = fork();
    if (pid == 0) {
        pid_t c;
        int st = run_injected("wait", &c);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 99);
    }
    /* run_injected forks once more: find the grandchild by its FIFO */
    char ctl[4200], out[4096], args[64];
    snprintf(ctl, sizeof ctl, "%s/ctl", test_tmpdir());
    long traced = 0;
    for (int i = 0; i < 3000 && !traced; i++) {
        DIR *d = opendir(ctl);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strstr(e->d_name, ".ctl"))
                traced = atol(e->d_name);
        if (d)
            closedir(d);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    TEST_ASSERT(traced > 0);
    snprintf(args, sizeof args, "status %ld", traced);
    int rc = capture_cmd(out, sizeof out, args);
    char want[256];
    snprintf(want, sizeof want, "%ld: not capturing (0 ranges so far); writing ", traced);
    TEST_ASSERT(strncmp(out, want, strlen(want)) == 0);
    TEST_EQ_INT(rc, 0);
    snprintf(args, sizeof args, "start %ld", traced);
    TEST_EQ_INT(capture_cmd(out, sizeof out, args), 1);
    TEST_ASSERT(strstr(out, "tracing is off"));
    FILE *f = fopen(go, "w");
    TEST_ASSERT(f);
    fclose(f);
    waitpid(pid, &status, 0);
    TEST_ASSERT(WIFEXITED(status));
    TEST_EQ_INT(WEXITSTATUS(status), 42);
    char text[256];
    read_text("out.txt", text, sizeof text);
    TEST_EQ_STR(text, "init 1 1\n");
    char fifo[4300];
    snprintf(fifo, sizeof fifo, "%s/%ld.ctl", ctl, traced);
    TEST_EQ_INT(access(fifo, F_OK), -1);
    unsetenv("TLVIEW_TEST_GO");
    return 0;
}
