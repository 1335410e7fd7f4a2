/* collector records: the one sink every CUPTI activity record goes through (the role of
 * pPostProcessActivityRecords in CUPTI's helper_cupti_activity.h). It converts the CUDA 13
 * record structs (CUpti_ActivityKernel10, Memcpy6, Memset4, Context3, Device5, API, Marker2)
 * into store_*_info rows and hands them to the store writer. Pure C over the structs: the
 * tests feed it synthetic records. Runs on the writer thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector_int.h"

#define LOG_PREFIX "records"
#define API_NAME_CACHE 2048 /* callback ids cached per domain (CUDA 13: under 1,000 runtime, */
                            /* under 1,000 driver); larger ones are looked up every time */

static const char no_name[] = ""; /* cached: the callback id has no name */

/* An NVTX start marker waiting for its end marker (same id). */
typedef struct open_range {
    uint32_t id;   /* CUPTI marker id */
    int64_t start; /* ns, CUPTI clock */
    uint64_t thread_id;
    char *name, *domain; /* copies: CUPTI's strings may not outlive the buffer */
} open_range;

struct collector_sink {
    store_writer *w; /* not owned */
    int64_t process; /* process row id in w */
    collector_api_name_fn api_name;
    const char *api_names[2][API_NAME_CACHE]; /* by domain and cbid, looked up once */
    collector_counts counts;
    int failed;       /* a write failed: records are only counted now */
    char error[512];  /* the first write error */
    open_range *open; /* NVTX starts not yet ended */
    size_t nopen, capopen;
    int64_t max_end; /* the latest end of a row written (GPU clock), 0 before the first */
};

int collector_sink_new(store_writer *w, int64_t process, collector_api_name_fn api_name,
                       collector_sink **ppS)
{
    collector_sink *s = calloc(1, sizeof *s);
    *ppS = s;
    if (!s)
        return STORE_ENOMEM;
    s->w = w;
    s->process = process;
    s->api_name = api_name;
    return 0;
}

void collector_sink_free(collector_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nopen; i++) {
        free(s->open[i].name);
        free(s->open[i].domain);
    }
    free(s->open);
    free(s);
}

int64_t collector_sink_max_end(const collector_sink *s)
{
    return s->max_end;
}

void collector_sink_lost(collector_sink *s, uint64_t n)
{
    s->counts.lost += n;
}

const char *collector_sink_error(const collector_sink *s)
{
    return s->error;
}

void collector_sink_counts(const collector_sink *s, collector_counts *out)
{
    *out = s->counts;
    out->open_ranges += s->nopen;
}

static void fail(collector_sink *s);

/* Bookkeeping after a store call: counts the row in *counter (and its end in max_end); a row the
 * store refused (STORE_EINVAL: it ends before it starts, e.g. an end CUPTI did not collect) as
 * incomplete, the writer staying usable; any other error fails the sink. */
static void wrote(collector_sink *s, int rc, int64_t end, uint64_t *counter)
{
    if (rc == STORE_OK) {
        (*counter)++;
        if (end > s->max_end)
            s->max_end = end;
    } else if (rc == STORE_EINVAL)
        s->counts.incomplete++;
    else {
        fail(s);
        s->counts.lost++;
    }
}

static void kernel(collector_sink *s, const CUpti_ActivityKernel10 *r)
{
    store_kernel_info k = {
        .start = (int64_t)r->start,
        .end = (int64_t)r->end,
        .device_id = r->deviceId,
        .context_id = r->contextId,
        .stream_id = r->streamId,
        .correlation_id = r->correlationId,
        .grid = {(uint32_t)r->gridX, (uint32_t)r->gridY, (uint32_t)r->gridZ},
        .block = {(uint32_t)r->blockX, (uint32_t)r->blockY, (uint32_t)r->blockZ},
        .registers = r->registersPerThread,
        .static_smem = (uint32_t)r->staticSharedMemory,
        .dynamic_smem = (uint32_t)r->dynamicSharedMemory,
        .local_mem = r->localMemoryPerThread,
        .name = r->name ? r->name : "(unknown)",
    };
    wrote(s, store_writer_kernel(s->w, s->process, &k), k.end, &s->counts.kernel);
}

static void memcpy_rec(collector_sink *s, const CUpti_ActivityMemcpy6 *r)
{
    store_memcpy_info m = {
        .start = (int64_t)r->start,
        .end = (int64_t)r->end,
        .device_id = r->deviceId,
        .context_id = r->contextId,
        .stream_id = r->streamId,
        .correlation_id = r->correlationId,
        .copy_kind = r->copyKind,
        .src_kind = r->srcKind,
        .dst_kind = r->dstKind,
        .bytes = r->bytes,
        .flags = r->flags,
    };
    wrote(s, store_writer_memcpy(s->w, s->process, &m), m.end, &s->counts.memcpy);
}

static void memset_rec(collector_sink *s, const CUpti_ActivityMemset4 *r)
{
    store_memset_info m = {
        .start = (int64_t)r->start,
        .end = (int64_t)r->end,
        .device_id = r->deviceId,
        .context_id = r->contextId,
        .stream_id = r->streamId,
        .correlation_id = r->correlationId,
        .value = r->value,
        .bytes = r->bytes,
        .mem_kind = r->memoryKind,
    };
    wrote(s, store_writer_memset(s->w, s->process, &m), m.end, &s->counts.memset);
}

/* The name of an API callback id (NULL when it has none), asked of s->api_name once per id. */
static const char *api_name(collector_sink *s, store_api_domain domain, uint32_t cbid)
{
    if (!s->api_name)
        return NULL;
    const char **slot =
        cbid < API_NAME_CACHE ? &s->api_names[domain == STORE_API_DRIVER][cbid] : NULL;
    if (slot && *slot)
        return *slot == no_name ? NULL : *slot;
    const char *name = s->api_name(domain, cbid);
    if (slot)
        *slot = name ? name : no_name;
    return name;
}

static void api(collector_sink *s, const CUpti_ActivityAPI *r)
{
    store_api_domain domain =
        r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? STORE_API_RUNTIME : STORE_API_DRIVER;
    const char *name = api_name(s, domain, r->cbid);
    char fallback[32];
    if (!name) {
        snprintf(fallback, sizeof fallback, "cbid %u", (unsigned)r->cbid);
        name = fallback;
    }
    store_api_info a = {
        .start = (int64_t)r->start,
        .end = (int64_t)r->end,
        .thread_id = r->threadId,
        .correlation_id = r->correlationId,
        .domain = domain,
        .cbid = r->cbid,
        .name = name,
        .status = (int32_t)r->returnValue,
    };
    wrote(s, store_writer_api(s->w, s->process, &a), a.end, &s->counts.api);
}

/* A context's MPS state (computeApiKind) and, for a green context (cuGreenCtxCreate), its
 * parent and SM partition: what tells side-by-side contexts from time-sliced ones. */
static void context(collector_sink *s, const CUpti_ActivityContext3 *r)
{
    store_context_info c = {
        .context_id = r->contextId,
        .device_id = r->deviceId,
        .compute_api_kind = r->computeApiKind,
        .null_stream_id = r->nullStreamId,
        .green = r->isGreenContext != 0,
        .parent_context_id = r->parentContextId,
        /* CUPTI: numMultiprocessors is invalid unless isGreenContext */
        .sm_count = r->isGreenContext ? r->numMultiprocessors : 0,
    };
    wrote(s, store_writer_context(s->w, s->process, &c), 0, &s->counts.context);
}

static void device(collector_sink *s, const CUpti_ActivityDevice5 *r)
{
    static const char hex[] = "0123456789abcdef";
    char uuid[33];
    for (int i = 0; i < 16; i++) {
        unsigned char b = (unsigned char)r->uuid.bytes[i];
        uuid[2 * i] = hex[b >> 4];
        uuid[2 * i + 1] = hex[b & 15];
    }
    uuid[32] = '\0';
    store_device_info d = {
        .device_id = r->id,
        .uuid = uuid,
        .name = r->name,
        .sm_count = r->numMultiprocessors,
        .cc_major = r->computeCapabilityMajor,
        .cc_minor = r->computeCapabilityMinor,
        .global_memory = r->globalMemorySize,
    };
    wrote(s, store_writer_device(s->w, s->process, &d), 0, &s->counts.device);
}

/* NVTX: a start marker is kept until the end marker with the same id arrives (possibly in a
 * later buffer); then one range row is written. An instantaneous marker is a range of length
 * 0. Open ranges are few (nesting depth per thread), so a linear search is enough. */
static void marker(collector_sink *s, const CUpti_ActivityMarker2 *r)
{
    uint64_t tid = r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r->objectId.pt.threadId : 0;
    if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        if (s->nopen == s->capopen) {
            size_t cap = s->capopen ? 2 * s->capopen : 16;
            open_range *grown = realloc(s->open, cap * sizeof *grown);
            if (!grown) {
                s->counts.lost++;
                return;
            }
            s->open = grown;
            s->capopen = cap;
        }
        open_range *o = &s->open[s->nopen];
        o->id = r->id;
        o->start = (int64_t)r->timestamp;
        o->thread_id = tid;
        o->name = strdup(r->name ? r->name : "");
        o->domain = r->domain ? strdup(r->domain) : NULL;
        if (!o->name || (r->domain && !o->domain)) {
            free(o->name);
            free(o->domain);
            s->counts.lost++;
            return;
        }
        s->nopen++;
        return;
    }
    if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        for (size_t i = s->nopen; i-- > 0;) {
            open_range o = s->open[i];
            if (o.id != r->id)
                continue;
            s->open[i] = s->open[--s->nopen];
            store_range_info g = {
                .start = o.start,
                .end = (int64_t)r->timestamp,
                .thread_id = o.thread_id,
                .domain = o.domain,
                .name = o.name,
            };
            wrote(s, store_writer_range(s->w, s->process, &g), g.end, &s->counts.range);
            free(o.name);
            free(o.domain);
            return;
        }
        s->counts.unknown++; /* an end without a start: its start came before tracing */
        return;
    }
    if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        store_range_info g = {
            .start = (int64_t)r->timestamp,
            .end = (int64_t)r->timestamp,
            .thread_id = tid,
            .domain = r->domain,
            .name = r->name ? r->name : "",
        };
        wrote(s, store_writer_range(s->w, s->process, &g), g.end, &s->counts.range);
        return;
    }
    s->counts.unknown++;
}

/* Converts one record and writes it (or counts it: lost once the sink failed). */
static void record(collector_sink *s, const CUpti_Activity *rec)
{
    if (s->failed) {
        s->counts.lost++;
        return;
    }
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: kernel(s, (const CUpti_ActivityKernel10 *)rec); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: memcpy_rec(s, (const CUpti_ActivityMemcpy6 *)rec); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: memset_rec(s, (const CUpti_ActivityMemset4 *)rec); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: api(s, (const CUpti_ActivityAPI *)rec); break;
    case CUPTI_ACTIVITY_KIND_CONTEXT: context(s, (const CUpti_ActivityContext3 *)rec); break;
    case CUPTI_ACTIVITY_KIND_DEVICE: device(s, (const CUpti_ActivityDevice5 *)rec); break;
    case CUPTI_ACTIVITY_KIND_MARKER: marker(s, (const CUpti_ActivityMarker2 *)rec); break;
    default: log_dbg("activity kind %d not stored", (int)rec->kind); s->counts.unknown++;
    }
}

uint64_t collector_count_records(collector_next_fn next, uint8_t *buf, size_t valid)
{
    CUpti_Activity *rec = NULL;
    uint64_t n = 0;
    while (next(buf, valid, &rec) == 0)
        n++;
    return n;
}

/* Marks the sink failed with the writer's message (the first failure wins). */
static void fail(collector_sink *s)
{
    if (!s->failed)
        snprintf(s->error, sizeof s->error, "%s", store_writer_errmsg(s->w));
    s->failed = 1;
}

int collector_sink_buffer(collector_sink *s, collector_next_fn next, uint8_t *buf, size_t valid)
{
    CUpti_Activity *rec = NULL;
    uint64_t n = 0;
    if (s->failed) {
        s->counts.lost += collector_count_records(next, buf, valid);
        return STORE_EIO;
    }
    collector_counts before = s->counts;
    int rc = store_writer_begin(s->w);
    if (rc != STORE_OK) {
        fail(s);
        return collector_sink_buffer(s, next, buf, valid);
    }
    int status;
    while ((status = next(buf, valid, &rec)) == 0) {
        n++;
        record(s, rec);
    }
    if (status < 0)
        log_dbg("corrupt activity buffer after %llu records", (unsigned long long)n);
    rc = store_writer_commit(s->w);
    if (rc != STORE_OK) {
        /* The transaction is gone: none of this buffer's rows reached the file. */
        s->counts = before;
        s->counts.lost += n;
        fail(s);
        return rc;
    }
    return s->failed ? STORE_EIO : 0;
}
