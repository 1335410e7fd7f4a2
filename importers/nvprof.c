/* importers/nvprof.c: nvprof SQLite databases (`nvprof -o f.nvvp`, `--export-profile`,
 * `--profile-all-processes -o out.%p`) -> one process of the run. Times are Unix-epoch ns already
 * (the common axis). Columns are read by name because they grow with the file's Version (8..22
 * seen); the schema notes with one sample row sit next to each query. Quirks handled: kernels in
 * CONCURRENT_KERNEL and KERNEL, StringTable names, start = 0 kernels (counted, not imported),
 * signed threadIds, GPU clocks seconds away from the CPU clock (shifted back, see gpu_shift()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_int.h"

typedef struct nv_context {
    uint32_t id;     /* contextId */
    uint32_t device; /* deviceId */
    uint32_t kind;   /* computeApiKind */
    store_idx idx;   /* STORE_NONE until used */
    uint32_t parent; /* parentContextId (v22+; 0 before) */
    int green;       /* isGreenContext (v22+; 0 before) */
} nv_context;

typedef struct nvprof {
    sqlite3 *db;
    imp_strs strings; /* StringTable */
    imp_gpu *devices; /* info.name points into strings */
    size_t ndevices;
    nv_context *contexts;
    size_t ncontexts, capcontexts;
    store_idx process;
    int64_t gpu_shift; /* ns added to GPU rows */
    store_idx last_ctx;
    uint32_t last_stream_id;
    store_idx last_stream; /* one-entry cache */
} nvprof;

static const char *const gpu_tables[] = {"CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
                                         "CUPTI_ACTIVITY_KIND_KERNEL",
                                         "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMCPY2",
                                         "CUPTI_ACTIVITY_KIND_MEMSET",
                                         "CUPTI_ACTIVITY_KIND_RUNTIME",
                                         "CUPTI_ACTIVITY_KIND_DRIVER",
                                         "CUPTI_ACTIVITY_KIND_MARKER",
                                         NULL};

static int nv_probe(const imp_probe *p)
{
    if (!p->db || !imp_sql_has_table(p->db, "Version") || !imp_sql_has_table(p->db, "StringTable"))
        return 0;
    return imp_sql_has_cupti_tables(p->db);
}

static int nv_open(imp_reader *r)
{
    nvprof *nv = calloc(1, sizeof *nv);
    if (!nv)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    r->state = nv;
    nv->process = nv->last_ctx = nv->last_stream = STORE_NONE;
    return imp_sql_open(r, &nv->db);
}

static void nv_close(imp_reader *r)
{
    nvprof *nv = r->state;
    if (!nv)
        return;
    sqlite3_close(nv->db);
    imp_strs_free(&nv->strings);
    free(nv->devices);
    free(nv->contexts);
    free(nv);
    r->state = NULL;
}

/* StringTable(_id_, value): 3|_Z20generate_seed_pseudo... ; _id_ 0 is "-- null --". */
static int load_strings(imp_reader *r, nvprof *nv)
{
    static const char *const cols[] = {"_id_", "value", NULL};
    static const char *const req[] = {"_id_", "value", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, "StringTable", cols, req, "ORDER BY _id_", &st);
    return rc ? rc : imp_strs_load(r, st, &nv->strings, 1);
}

/* The text of a StringTable id; NULL for 0 ("-- null --"), absent or unknown ids. */
static const char *string_text(nvprof *nv, int64_t id)
{
    imp_str *s = id > 0 ? imp_strs_find(&nv->strings, id) : NULL;
    return s ? s->text : NULL;
}

static store_idx string_idx(imp_reader *r, nvprof *nv, int64_t id)
{
    imp_str *s = id > 0 ? imp_strs_find(&nv->strings, id) : NULL;
    return s ? imp_str_intern(r, s) : imp_intern(r, NULL);
}

/* The process: NAME(objectKind 1 = process, objectId = LE u32 pid + padding, name = command line):
 * 1|1|8FD71200000000005C2E736F|1 -> pid 1234831, "test.nccl.bistabcg.qcu-np2.py". Fallbacks: the
 * processId of API rows, then the last number in the file name (nvprof's %p). */
static int add_process(imp_reader *r, nvprof *nv)
{
    int64_t pid = -1;
    const char *cmd = NULL;
    sqlite3_stmt *st;
    int rc;
    if (imp_sql_has_table(nv->db, "CUPTI_ACTIVITY_KIND_NAME")) {
        static const char *const cols[] = {"objectKind", "objectId", "name", NULL};
        rc =
            imp_sql_select(r, nv->db, "CUPTI_ACTIVITY_KIND_NAME", cols, cols, "ORDER BY _id_", &st);
        if (rc)
            return rc;
        while (pid < 0 && (rc = imp_sql_step(r, st)) == SQLITE_ROW) {
            const unsigned char *blob = sqlite3_column_blob(st, 1);
            if (sqlite3_column_int64(st, 0) != 1 || sqlite3_column_bytes(st, 1) < 4 || !blob)
                continue;
            pid = (int64_t)((uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 |
                            (uint32_t)blob[3] << 24);
            cmd = string_text(nv, sqlite3_column_int64(st, 2));
        }
        sqlite3_finalize(st);
        if (rc < 0)
            return rc;
    }
    static const char *const api[] = {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"};
    for (int i = 0; pid < 0 && i < 2; i++) {
        if (!imp_sql_has_table(nv->db, api[i]))
            continue;
        static const char *const cols[] = {"processId", NULL};
        if ((rc = imp_sql_select(r, nv->db, api[i], cols, cols, "LIMIT 1", &st)))
            return rc;
        if ((rc = imp_sql_step(r, st)) == SQLITE_ROW)
            pid = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (rc < 0)
            return rc;
    }
    if (pid < 0) { /* log_%h_%p.nvvp, gputrace28706.nvvp */
        const char *base = strrchr(r->path, '/');
        base = base ? base + 1 : r->path;
        const char *digits = NULL;
        for (const char *c = base; *c; c++)
            if (*c >= '0' && *c <= '9' && (c == base || c[-1] < '0' || c[-1] > '9'))
                digits = c;
        pid = digits ? strtoll(digits, NULL, 10) : 0;
        imp_warn(r, "no process id in the file: pid %lld taken from its name", (long long)pid);
    }
    char exe[256] = "";
    if (cmd)
        snprintf(exe, sizeof exe, "%.*s", (int)strcspn(cmd, " "), cmd);
    store_process_info info = {
        .pid = pid, .exe = cmd ? exe : NULL, .argv = cmd, .source = "nvprof"};
    nv->process = store_run_add_process(r->run, &info, r->path);
    if (nv->process == STORE_NONE)
        return imp_fail(r, STORE_ENOMEM, "out of memory adding the process");
    return 0;
}

/* DEVICE(id, name->StringTable, uuid BLOB(16), numMultiprocessors, computeCapabilityMajor/Minor,
 * globalMemorySize): 0|2 "Tesla P100-PCIE-16GB"|<16 bytes>|56|6|0|17179738112. All GPUs of the
 * node are listed; only those used get a run device. */
static int load_devices(imp_reader *r, nvprof *nv)
{
    if (!imp_sql_has_table(nv->db, "CUPTI_ACTIVITY_KIND_DEVICE"))
        return 0;
    static const char *const cols[] = {"id",
                                       "name",
                                       "uuid",
                                       "numMultiprocessors",
                                       "computeCapabilityMajor",
                                       "computeCapabilityMinor",
                                       "globalMemorySize",
                                       NULL};
    static const char *const req[] = {"id", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, "CUPTI_ACTIVITY_KIND_DEVICE", cols, req, "", &st);
    if (rc)
        return rc;
    size_t cap = 0;
    while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
        if ((rc = imp_grow(r, (void **)&nv->devices, nv->ndevices, &cap, sizeof *nv->devices)))
            break;
        imp_gpu *d = &nv->devices[nv->ndevices++];
        memset(d, 0, sizeof *d);
        d->id = sqlite3_column_int64(st, 0);
        d->info.device_id = (uint32_t)d->id;
        d->info.name = string_text(nv, sqlite3_column_int64(st, 1));
        const unsigned char *u = sqlite3_column_blob(st, 2);
        if (u && sqlite3_column_bytes(st, 2) == 16) {
            int zero = 1;
            for (int i = 0; i < 16; i++) {
                snprintf(d->uuid + 2 * i, 3, "%02x", u[i]);
                zero &= u[i] == 0;
            }
            d->info.uuid = zero ? NULL : d->uuid;
        }
        d->info.sm_count = (uint32_t)sqlite3_column_int64(st, 3);
        d->info.cc_major = (uint32_t)sqlite3_column_int64(st, 4);
        d->info.cc_minor = (uint32_t)sqlite3_column_int64(st, 5);
        d->info.global_memory = (uint64_t)sqlite3_column_int64(st, 6);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rc;
}

static nv_context *find_context(nvprof *nv, uint32_t id)
{
    for (size_t i = 0; i < nv->ncontexts; i++)
        if (nv->contexts[i].id == id)
            return &nv->contexts[i];
    return NULL;
}

static nv_context *new_context(imp_reader *r, nvprof *nv, uint32_t id, uint32_t device,
                               uint32_t kind)
{
    if (imp_grow(r, (void **)&nv->contexts, nv->ncontexts, &nv->capcontexts, sizeof *nv->contexts))
        return NULL;
    nv_context *c = &nv->contexts[nv->ncontexts++];
    *c = (nv_context){id, device, kind, STORE_NONE, 0, 0};
    return c;
}

/* CONTEXT(contextId, deviceId, computeApiKind, nullStreamId): 1|0|1|7; computeApiKind is
 * CUpti_ActivityComputeApiKind (1 CUDA, 2 CUDA under MPS). v22 adds parentContextId and
 * isGreenContext: 1|0|1|7|0|0 (no SM count: nvprof has no numMultiprocessors column). */
static int load_contexts(imp_reader *r, nvprof *nv)
{
    if (!imp_sql_has_table(nv->db, "CUPTI_ACTIVITY_KIND_CONTEXT"))
        return 0;
    static const char *const cols[] = {"contextId",       "deviceId",       "computeApiKind",
                                       "parentContextId", "isGreenContext", NULL};
    static const char *const req[] = {"contextId", "deviceId", "computeApiKind", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, "CUPTI_ACTIVITY_KIND_CONTEXT", cols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
        uint32_t id = (uint32_t)sqlite3_column_int64(st, 0);
        nv_context *c = find_context(nv, id);
        if (!c && !(c = new_context(r, nv, id, (uint32_t)sqlite3_column_int64(st, 1),
                                    (uint32_t)sqlite3_column_int64(st, 2)))) {
            rc = STORE_ENOMEM;
            break;
        }
        c->parent = (uint32_t)sqlite3_column_int64(st, 3);
        c->green = sqlite3_column_int64(st, 4) != 0;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rc;
}

/* The run stream of a GPU row; contexts first met here get the row's device and kind 0. */
static store_idx stream_idx(imp_reader *r, nvprof *nv, uint32_t device, uint32_t context,
                            uint32_t stream)
{
    nv_context *c = find_context(nv, context);
    if (!c && !(c = new_context(r, nv, context, device, 0)))
        return STORE_NONE;
    if (c->idx == STORE_NONE) {
        store_idx dev = imp_gpu_device(r, nv->process, nv->devices, nv->ndevices, c->device);
        if (dev == STORE_NONE)
            return STORE_NONE;
        c->idx = store_run_context(r->run, nv->process, context, dev, c->kind);
        if (c->idx == STORE_NONE) {
            imp_fail(r, STORE_ENOMEM, "out of memory adding a context");
            return STORE_NONE;
        }
        store_run_context_green(r->run, c->idx, c->green, c->parent, 0);
    }
    if (c->idx == nv->last_ctx && stream == nv->last_stream_id)
        return nv->last_stream;
    store_idx s = store_run_stream(r->run, c->idx, stream);
    if (s == STORE_NONE)
        imp_fail(r, STORE_ENOMEM, "out of memory adding a stream");
    nv->last_ctx = c->idx;
    nv->last_stream_id = stream;
    nv->last_stream = s;
    return s;
}

/* The smallest kernel-start minus launch-start delay over correlated pairs, over the first
 * `limit` kernels of each table (0: all). *have is 0 when nothing correlates. */
static int min_launch_delay(imp_reader *r, nvprof *nv, int limit, int64_t *best, int *have)
{
    static const char *const kt[] = {"CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
                                     "CUPTI_ACTIVITY_KIND_KERNEL"};
    static const char *const at[] = {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"};
    *have = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if (!imp_sql_has_table(nv->db, kt[i]) || !imp_sql_has_table(nv->db, at[j]))
                continue;
            int rc = imp_sql_table(r, nv->db, kt[i]);
            if (rc || (rc = imp_sql_table(r, nv->db, at[j])))
                return rc;
            char sql[500], lim[32] = "";
            if (limit)
                snprintf(lim, sizeof lim, " LIMIT %d", limit);
            snprintf(sql, sizeof sql,
                     "SELECT min(k.start - a.start) FROM (SELECT start, correlationId FROM \"%s\" "
                     "WHERE start > 0 AND correlationId != 0%s) k JOIN \"%s\" a ON "
                     "a.correlationId = k.correlationId",
                     kt[i], lim, at[j]);
            sqlite3_stmt *st;
            if ((rc = imp_sql_prepare(r, nv->db, sql, &st)))
                return rc;
            rc = imp_sql_step(r, st);
            if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
                int64_t d = sqlite3_column_int64(st, 0);
                if (!*have || d < *best)
                    *best = d;
                *have = 1;
            }
            sqlite3_finalize(st);
            if (rc < 0)
                return rc;
        }
    return 0;
}

static int skewed(int have, int64_t d)
{
    /* beyond ~11 days the file's clocks are garbage rather than skewed: left alone */
    return have && (d > 1000000000LL || d < -10000LL) && d > -1000000000000000LL &&
           d < 1000000000000000LL;
}

/* Some files (the qcu MPI pair) put every kernel ~3832.6 s after the API call that launched it:
 * the GPU timestamps were not normalised to the CPU clock. The earliest kernel-after-launch delay
 * over all correlated pairs is then far from 0; GPU rows are shifted by minus that delay (the
 * quickest launch then starts with its API call) and the shift is recorded in import.* meta.
 * A sample of 10000 kernels tells whether there is a skew (a constant of the file); only then
 * is the exact minimum sought over every kernel (the join costs ~0.4 s per million kernels). */
static int gpu_shift(imp_reader *r, nvprof *nv)
{
    int64_t best = 0;
    int have, rc = min_launch_delay(r, nv, 10000, &best, &have);
    if (rc || !skewed(have, best))
        return rc;
    if ((rc = min_launch_delay(r, nv, 0, &best, &have)) || !skewed(have, best))
        return rc;
    char v[32];
    nv->gpu_shift = -best;
    r->stats->gpu_clock_shift = nv->gpu_shift;
    snprintf(v, sizeof v, "%lld", (long long)nv->gpu_shift);
    imp_warn(r, "GPU timestamps were %.3f s off the CPU clock: GPU records shifted",
             (double)best / 1e9);
    if (store_run_process_meta(r->run, nv->process, "import.gpu_clock_shift_ns", v))
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    return 0;
}

/* CONCURRENT_KERNEL / KERNEL (same columns): start|end|deviceId|contextId|streamId|correlationId
 * |grid|block|registersPerThread|static/dynamicSharedMemory|name -> 1722241565302502180|
 * 1722241565302906783|0|1|7|3853|...|3. Rows with start = 0 or end < start never ran to the end
 * (kernel_without_time). */
static int load_kernels(imp_reader *r, nvprof *nv, const char *table)
{
    static const char *const cols[] = {"start",
                                       "end",
                                       "deviceId",
                                       "contextId",
                                       "streamId",
                                       "correlationId",
                                       "gridX",
                                       "gridY",
                                       "gridZ",
                                       "blockX",
                                       "blockY",
                                       "blockZ",
                                       "registersPerThread",
                                       "staticSharedMemory",
                                       "dynamicSharedMemory",
                                       "name",
                                       NULL};
    static const char *const req[] = {"start", "end", NULL};
    if (!imp_sql_has_table(nv->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, table, cols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        store_kernel k = {.correlation_id = (uint32_t)sqlite3_column_int64(st, 5)};
        if (start <= 0 || end < start) {
            imp_unmapped(r, "kernel_without_time", 1);
            continue;
        }
        if (!store_time_add(start, nv->gpu_shift, &k.start) ||
            !store_time_add(end, nv->gpu_shift, &k.end)) {
            imp_refuse(r, nv->process);
            continue;
        }
        store_launch l = {.name = string_idx(r, nv, sqlite3_column_int64(st, 15))};
        for (int i = 0; i < 3; i++) {
            l.grid[i] = (uint32_t)sqlite3_column_int64(st, 6 + i);
            l.block[i] = (uint32_t)sqlite3_column_int64(st, 9 + i);
        }
        l.registers = (uint32_t)sqlite3_column_int64(st, 12);
        l.static_smem = (uint32_t)sqlite3_column_int64(st, 13);
        l.dynamic_smem = (uint32_t)sqlite3_column_int64(st, 14);
        k.stream = stream_idx(r, nv, (uint32_t)sqlite3_column_int64(st, 2),
                              (uint32_t)sqlite3_column_int64(st, 3),
                              (uint32_t)sqlite3_column_int64(st, 4));
        if (l.name == STORE_NONE || k.stream == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_kernel(r, &l, &k)) != 0)
            break;
    }
    return imp_sql_end(r, st, rc);
}

/* MEMCPY / MEMCPY2: copyKind|bytes|start|end|deviceId|contextId|streamId|correlationId ->
 * 1|92928|...|0|1|7|14. MEMSET: memoryKind (v9+)|bytes|start|end|... (copyKind column absent). */
static int load_copies(imp_reader *r, nvprof *nv, const char *table, store_copy_type type)
{
    static const char *const mcols[] = {"copyKind",  "bytes",    "start",         "end", "deviceId",
                                        "contextId", "streamId", "correlationId", NULL};
    static const char *const scols[] = {"memoryKind", "bytes",         "start",
                                        "end",        "deviceId",      "contextId",
                                        "streamId",   "correlationId", NULL};
    static const char *const req[] = {"start", "end", NULL};
    if (!imp_sql_has_table(nv->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc =
        imp_sql_select(r, nv->db, table, type == STORE_COPY_MEMCPY ? mcols : scols, req, "", &st);
    if (rc)
        return rc;
    const char *bad = type == STORE_COPY_MEMCPY ? "memcpy_without_time" : "memset_without_time";
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 2), end = sqlite3_column_int64(st, 3);
        store_copy c = {.correlation_id = (uint32_t)sqlite3_column_int64(st, 7),
                        .type = (uint16_t)type,
                        .kind = (uint16_t)sqlite3_column_int64(st, 0),
                        .bytes = (uint64_t)sqlite3_column_int64(st, 1)};
        if (start <= 0 || end < start) {
            imp_unmapped(r, bad, 1);
            continue;
        }
        if (!store_time_add(start, nv->gpu_shift, &c.start) ||
            !store_time_add(end, nv->gpu_shift, &c.end)) {
            imp_refuse(r, nv->process);
            continue;
        }
        c.stream = stream_idx(r, nv, (uint32_t)sqlite3_column_int64(st, 4),
                              (uint32_t)sqlite3_column_int64(st, 5),
                              (uint32_t)sqlite3_column_int64(st, 6));
        if (c.stream == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_copy(r, &c)))
            break;
    }
    return imp_sql_end(r, st, rc);
}

/* RUNTIME / DRIVER: cbid|start|end|threadId|correlationId|returnValue -> 211|...|1829437888|3853|0.
 * threadId is a signed 32-bit value in some files (negative in the TensorFlow one): masked. */
static int load_apis(imp_reader *r, nvprof *nv, const char *table, store_api_domain domain)
{
    static const char *const cols[] = {"cbid",          "start",       "end", "threadId",
                                       "correlationId", "returnValue", NULL};
    static const char *const req[] = {"cbid", "start", "end", NULL};
    if (!imp_sql_has_table(nv->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, table, cols, req, "", &st);
    if (rc)
        return rc;
    const char *const *names = domain == STORE_API_RUNTIME ? imp_cbid_runtime : imp_cbid_driver;
    unsigned count = domain == STORE_API_RUNTIME ? imp_cbid_runtime_count : imp_cbid_driver_count;
    store_idx cache[1024];
    for (int i = 0; i < 1024; i++)
        cache[i] = STORE_NONE;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        int64_t cbid = sqlite3_column_int64(st, 0);
        int64_t start = sqlite3_column_int64(st, 1), end = sqlite3_column_int64(st, 2);
        if (start <= 0 || end < start) {
            imp_unmapped(r, "api_without_time", 1);
            continue;
        }
        if (!store_time_add(end, 0, &end)) { /* 0 < start <= end: end alone can be out of range */
            imp_refuse(r, nv->process);
            continue;
        }
        store_idx name;
        if (cbid > 0 && cbid < 1024 && cache[cbid] != STORE_NONE)
            name = cache[cbid];
        else {
            char unknown[48];
            const char *text = cbid > 0 && (uint64_t)cbid < count ? names[cbid] : NULL;
            if (!text) {
                snprintf(unknown, sizeof unknown, "%s cbid %lld",
                         domain == STORE_API_RUNTIME ? "runtime" : "driver", (long long)cbid);
                text = unknown;
            }
            if ((name = imp_intern(r, text)) == STORE_NONE) {
                rc = STORE_ENOMEM;
                break;
            }
            if (cbid > 0 && cbid < 1024)
                cache[cbid] = name;
        }
        store_api a = {.start = start,
                       .end = end,
                       .process = nv->process,
                       .correlation_id = (uint32_t)sqlite3_column_int64(st, 4),
                       .thread_id = (uint64_t)sqlite3_column_int64(st, 3) & 0xFFFFFFFFu,
                       .name = name,
                       .domain = (uint16_t)domain,
                       .status = (int32_t)sqlite3_column_int64(st, 5)};
        if ((rc = imp_add_api(r, &a)))
            break;
    }
    return imp_sql_end(r, st, rc);
}

static uint64_t blob_tid(sqlite3_stmt *st, int col)
{
    const unsigned char *b = sqlite3_column_blob(st, col);
    if (!b || sqlite3_column_bytes(st, col) < 8)
        return 0;
    return (uint64_t)b[4] | (uint64_t)b[5] << 8 | (uint64_t)b[6] << 16 | (uint64_t)b[7] << 24;
}

/* MARKER: flags|timestamp|id|objectKind|objectId|name|domain -> 2|1722237734325940918|1|2|<pid,tid>
 * |18|19 then 4|1722237734508758970|1|2|...|0|19. flags 2 = range start, 4 = its end (same id,
 * name 0), 1 = instantaneous (a range of length 0). Ordered by id, then time, to pair them. */
static int load_markers(imp_reader *r, nvprof *nv)
{
    static const char *const cols[] = {"flags", "timestamp", "id", "objectId",
                                       "name",  "domain",    NULL};
    static const char *const req[] = {"flags", "timestamp", "id", NULL};
    const char *table = "CUPTI_ACTIVITY_KIND_MARKER";
    if (!imp_sql_has_table(nv->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, nv->db, table, cols, req, "ORDER BY id, timestamp, _id_", &st);
    if (rc)
        return rc;
    store_range open = {0};
    int64_t open_id = 0;
    int have_open = 0;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        int64_t flags = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int64_t id = sqlite3_column_int64(st, 2);
        if (flags & 4) { /* end */
            if (have_open && open_id == id && ts >= open.start) {
                if (!store_time_add(ts, 0, &open.end))
                    imp_refuse(r, nv->process);
                else if ((rc = imp_add_range(r, &open)))
                    break;
            } else
                imp_unmapped(r, "marker_unpaired", 1);
            have_open = 0;
            continue;
        }
        if (have_open)
            imp_unmapped(r, "marker_unpaired", 1);
        have_open = 0;
        if (!(flags & 3) || ts <= 0) {
            imp_unmapped(r, "marker_other", 1);
            continue;
        }
        if (!store_time_add(ts, 0, &ts)) {
            imp_refuse(r, nv->process);
            continue;
        }
        store_range g = {.start = ts,
                         .end = ts,
                         .process = nv->process,
                         .thread_id = blob_tid(st, 3),
                         .name = string_idx(r, nv, sqlite3_column_int64(st, 4)),
                         .domain = STORE_NONE};
        int64_t dom = sqlite3_column_int64(st, 5);
        if (string_text(nv, dom))
            g.domain = string_idx(r, nv, dom);
        if (g.name == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if (flags & 2) {
            open = g;
            open_id = id;
            have_open = 1;
        } else if ((rc = imp_add_range(r, &g)))
            break;
    }
    if (rc == SQLITE_DONE && have_open)
        imp_unmapped(r, "marker_unpaired", 1);
    return imp_sql_end(r, st, rc);
}

static int nv_load(imp_reader *r)
{
    nvprof *nv = r->state;
    sqlite3_stmt *st;
    int rc = imp_sql_table(r, nv->db, "Version");
    if (rc || (rc = imp_sql_prepare(r, nv->db, "SELECT version FROM Version", &st)))
        return rc;
    rc = imp_sql_step(r, st);
    int64_t version = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    int null = rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL;
    sqlite3_finalize(st);
    if (rc < 0)
        return rc;
    if (rc == SQLITE_DONE || null || version <= 0)
        return imp_fail(r, STORE_EFORMAT, "nvprof Version table holds no version");
    static const int64_t known[] = {8, 9, 10, 11, 12, 16, 18, 22};
    int seen = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        seen |= known[i] == version;
    if (!seen)
        imp_warn(r, "nvprof version %lld not seen before: columns read by name",
                 (long long)version);

    r->rows_total = imp_sql_total_rows(nv->db, gpu_tables);
    if ((rc = load_strings(r, nv)) || (rc = add_process(r, nv)) || (rc = load_devices(r, nv)) ||
        (rc = load_contexts(r, nv)))
        return rc;
    char v[24];
    snprintf(v, sizeof v, "%lld", (long long)version);
    if (store_run_process_meta(r->run, nv->process, "nvprof.version", v))
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    if ((rc = gpu_shift(r, nv)) ||
        (rc = load_kernels(r, nv, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL")) ||
        (rc = load_kernels(r, nv, "CUPTI_ACTIVITY_KIND_KERNEL")) ||
        (rc = load_copies(r, nv, "CUPTI_ACTIVITY_KIND_MEMCPY", STORE_COPY_MEMCPY)) ||
        (rc = load_copies(r, nv, "CUPTI_ACTIVITY_KIND_MEMCPY2", STORE_COPY_MEMCPY)) ||
        (rc = load_copies(r, nv, "CUPTI_ACTIVITY_KIND_MEMSET", STORE_COPY_MEMSET)) ||
        (rc = load_apis(r, nv, "CUPTI_ACTIVITY_KIND_RUNTIME", STORE_API_RUNTIME)) ||
        (rc = load_apis(r, nv, "CUPTI_ACTIVITY_KIND_DRIVER", STORE_API_DRIVER)) ||
        (rc = load_markers(r, nv)))
        return rc;
    imp_progress_end(r, r->rows_total);
    return imp_sql_count_unmapped(r, nv->db, gpu_tables);
}

const imp_ops imp_nvprof_ops = {"nvprof", nv_probe, nv_open, nv_load, nv_close};
