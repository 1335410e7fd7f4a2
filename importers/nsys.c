/* importers/nsys.c: Nsight Systems SQLite exports (`nsys export --type sqlite`, `--stats=true`)
 * -> one run process per profiled pid. Times are ns since the session start; with
 * TARGET_INFO_SESSION_START_TIME (2022.1+) they become Unix-epoch ns, else they stay relative (a
 * warning says so). Tables exist only when they hold data and columns change between versions,
 * so every table and column is optional; NULL means "not applicable". globalPid/globalTid hold
 * the pid in bits 24..47: pid = (globalPid >> 24) & 0xFFFFFF, tid = globalTid & 0xFFFFFF. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_int.h"

typedef struct ns_proc {
    int64_t pid;
    store_idx idx;
} ns_proc;

/* What TARGET_INFO_CUDA_CONTEXT_INFO (2024.5+) says of a context's SM partition. */
typedef struct ns_green {
    int64_t pid;
    uint32_t context_id, parent_id, sm_count;
    int green;
    uint64_t row; /* read order, so that rows of one context merge in the table's order */
} ns_green;

typedef struct ns_pname {
    int64_t pid;
    char *name;
} ns_pname;

typedef struct nsys {
    sqlite3 *db;
    int64_t t0; /* utcEpochNs of the session start, 0 when unknown */
    char *host;
    imp_strs strings; /* StringIds */
    imp_gpu *gpus;    /* info.name owned here */
    size_t ngpus, capgpus;
    ns_pname *pnames;
    size_t npnames;
    ns_proc *procs;
    size_t nprocs, capprocs;
    ns_green *greens; /* contexts that are green or have a parent, by (pid, context_id) */
    size_t ngreens, capgreens;
    imp_strs domains; /* NVTX domainId -> name */
} nsys;

static const char *const mapped_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL",
                                            "CUPTI_ACTIVITY_KIND_MEMCPY",
                                            "CUPTI_ACTIVITY_KIND_MEMSET",
                                            "CUPTI_ACTIVITY_KIND_RUNTIME",
                                            "NVTX_EVENTS",
                                            NULL};

/* Tables nsys derives from NVTX_EVENTS (already read): not counted as unmapped. */
static const char *const derived_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL",
                                             "CUPTI_ACTIVITY_KIND_MEMCPY",
                                             "CUPTI_ACTIVITY_KIND_MEMSET",
                                             "CUPTI_ACTIVITY_KIND_RUNTIME",
                                             "NVTX_EVENTS",
                                             "NvtxPushPopRanges",
                                             "NvtxStartEndRanges",
                                             NULL};

static int ns_probe(const imp_probe *p)
{
    if (!p->db || !imp_sql_has_table(p->db, "StringIds"))
        return 0;
    if (imp_sql_has_table(p->db, "TARGET_INFO_GPU") || imp_sql_has_table(p->db, "NVTX_EVENTS"))
        return 1;
    return imp_sql_has_cupti_tables(p->db);
}

static int ns_open(imp_reader *r)
{
    nsys *ns = calloc(1, sizeof *ns);
    if (!ns)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    r->state = ns;
    return imp_sql_open(r, &ns->db);
}

static void ns_close(imp_reader *r)
{
    nsys *ns = r->state;
    if (!ns)
        return;
    sqlite3_close(ns->db);
    free(ns->host);
    imp_strs_free(&ns->strings);
    imp_strs_free(&ns->domains);
    for (size_t i = 0; i < ns->ngpus; i++)
        free((char *)ns->gpus[i].info.name);
    free(ns->gpus);
    for (size_t i = 0; i < ns->npnames; i++)
        free(ns->pnames[i].name);
    free(ns->pnames);
    free(ns->procs);
    free(ns->greens);
    free(ns);
    r->state = NULL;
}

/* StringIds(id, value): 846|"void bitonicSortStep(...)". */
static int load_strings(imp_reader *r, nsys *ns)
{
    static const char *const cols[] = {"id", "value", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, ns->db, "StringIds", cols, cols, "", &st);
    return rc ? rc : imp_strs_load(r, st, &ns->strings, 0);
}

/* The interned text of a StringIds id (NULL column -> STORE_NONE with *missing set). */
static store_idx string_col(imp_reader *r, nsys *ns, sqlite3_stmt *st, int col, int *missing)
{
    *missing = 1;
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return STORE_NONE;
    imp_str *s = imp_strs_find(&ns->strings, sqlite3_column_int64(st, col));
    if (!s)
        return STORE_NONE;
    *missing = 0;
    return imp_str_intern(r, s);
}

static char *dup_col(sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    return t ? strdup(t) : NULL;
}

/* TARGET_INFO_SESSION_START_TIME(utcEpochNs): 1737520449517825247; Hostname from
 * TARGET_INFO_SYSTEM_ENV(name, value); PROCESSES(pid, name). */
static int load_session(imp_reader *r, nsys *ns)
{
    sqlite3_stmt *st;
    int rc;
    if (imp_sql_has_table(ns->db, "TARGET_INFO_SESSION_START_TIME")) {
        static const char *const cols[] = {"utcEpochNs", NULL};
        if ((rc = imp_sql_select(r, ns->db, "TARGET_INFO_SESSION_START_TIME", cols, cols, "LIMIT 1",
                                 &st)))
            return rc;
        if ((rc = imp_sql_step(r, st)) == SQLITE_ROW)
            ns->t0 = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (rc < 0)
            return rc;
    }
    if (ns->t0 <= 0) {
        ns->t0 = 0;
        imp_warn(r,
                 "no session start time (nsys before 2022.1): times stay relative to the session "
                 "start and cannot be aligned with other files");
    }
    if (imp_sql_has_table(ns->db, "TARGET_INFO_SYSTEM_ENV")) {
        static const char *const cols[] = {"value", NULL};
        if ((rc = imp_sql_select(r, ns->db, "TARGET_INFO_SYSTEM_ENV", cols, NULL,
                                 "WHERE name = 'Hostname' LIMIT 1", &st)))
            return rc;
        if ((rc = imp_sql_step(r, st)) == SQLITE_ROW)
            ns->host = dup_col(st, 0);
        sqlite3_finalize(st);
        if (rc < 0)
            return rc;
    }
    if (imp_sql_has_table(ns->db, "PROCESSES")) {
        static const char *const cols[] = {"pid", "name", NULL};
        if ((rc = imp_sql_select(r, ns->db, "PROCESSES", cols, cols, "", &st)))
            return rc;
        size_t cap = 0;
        while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
            if ((rc = imp_grow(r, (void **)&ns->pnames, ns->npnames, &cap, sizeof *ns->pnames)))
                break;
            ns->pnames[ns->npnames].pid = sqlite3_column_int64(st, 0);
            ns->pnames[ns->npnames++].name = dup_col(st, 1);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return rc;
    }
    return 0;
}

/* GPUs: TARGET_INFO_GPU 2022+ (id, cuDevice, name, uuid "ac74a997-ee7b-...", smCount,
 * computeMajor/Minor, totalMemory); 2020 (deviceId, name) plus TARGET_INFO_CUDA_GPU (deviceId,
 * name, numMultiprocessors, computeCapabilityMajor/Minor, globalMemorySize). */
static int load_gpus(imp_reader *r, nsys *ns)
{
    static const char *const tables[] = {"TARGET_INFO_CUDA_GPU", "TARGET_INFO_GPU"};
    for (int t = 0; t < 2; t++) {
        if (!imp_sql_has_table(ns->db, tables[t]))
            continue;
        imp_cols have;
        int rc = imp_sql_cols(r, ns->db, tables[t], &have);
        if (rc)
            return rc;
        const char *idcol = imp_sql_col_has(&have, "cuDevice")   ? "cuDevice"
                            : imp_sql_col_has(&have, "deviceId") ? "deviceId"
                                                                 : "id";
        imp_sql_cols_free(&have);
        const char *const cols[] = {idcol,
                                    "name",
                                    "uuid",
                                    "smCount",
                                    "numMultiprocessors",
                                    "computeMajor",
                                    "computeCapabilityMajor",
                                    "computeMinor",
                                    "computeCapabilityMinor",
                                    "totalMemory",
                                    "globalMemorySize",
                                    NULL};
        sqlite3_stmt *st;
        if ((rc = imp_sql_select(r, ns->db, tables[t], cols, NULL, "", &st)))
            return rc;
        while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            int dup = 0;
            for (size_t i = 0; i < ns->ngpus; i++)
                dup |= ns->gpus[i].id == id;
            if (dup)
                continue; /* TARGET_INFO_CUDA_GPU, read first, has more detail */
            if ((rc = imp_grow(r, (void **)&ns->gpus, ns->ngpus, &ns->capgpus, sizeof *ns->gpus)))
                break;
            imp_gpu *g = &ns->gpus[ns->ngpus++];
            memset(g, 0, sizeof *g);
            g->id = id;
            g->info.device_id = (uint32_t)id;
            g->info.name = dup_col(st, 1);
            const char *u = (const char *)sqlite3_column_text(st, 2);
            size_t k = 0;
            for (; u && *u && k < 32; u++)
                if (isxdigit((unsigned char)*u))
                    g->uuid[k++] = (char)tolower((unsigned char)*u);
            g->info.uuid = k == 32 ? g->uuid : NULL;
            g->info.sm_count =
                (uint32_t)(sqlite3_column_int64(st, 3) | sqlite3_column_int64(st, 4));
            g->info.cc_major =
                (uint32_t)(sqlite3_column_int64(st, 5) | sqlite3_column_int64(st, 6));
            g->info.cc_minor =
                (uint32_t)(sqlite3_column_int64(st, 7) | sqlite3_column_int64(st, 8));
            g->info.global_memory =
                (uint64_t)(sqlite3_column_int64(st, 9) | sqlite3_column_int64(st, 10));
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return rc;
    }
    return 0;
}

/* Orders greens by (pid, context_id): what the lookup in stream_idx() compares. */
static int green_key_cmp(const void *a, const void *b)
{
    const ns_green *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->context_id > y->context_id) - (x->context_id < y->context_id);
}

/* green_key_cmp, then read order: qsort is not stable. */
static int green_cmp(const void *a, const void *b)
{
    int c = green_key_cmp(a, b);
    if (c)
        return c;
    const ns_green *x = a, *y = b;
    return (x->row > y->row) - (x->row < y->row);
}

/* Green contexts: TARGET_INFO_CUDA_CONTEXT_INFO(nullStreamId, hwId, vmId, processId, deviceId,
 * contextId, parentContextId, isGreenContext[, numMultiprocessors]) (2024.5+; processId is the
 * plain pid): 7|0|1|56747|0|1|0|0. Only contexts with something to say are kept, sorted by (pid,
 * contextId); several rows of one context are merged into one in the order they are read, as
 * store_run_context_green() would apply them: green if any row says so, and the last non-zero
 * parent and SM count. Nothing in an nsys export says whether a context was an MPS client:
 * compute_api_kind stays 0 (unknown). */
static int load_green(imp_reader *r, nsys *ns)
{
    static const char table[] = "TARGET_INFO_CUDA_CONTEXT_INFO";
    if (!imp_sql_has_table(ns->db, table))
        return 0;
    static const char *const cols[] = {"processId",      "contextId",          "parentContextId",
                                       "isGreenContext", "numMultiprocessors", NULL};
    static const char *const req[] = {"processId", "contextId", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, ns->db, table, cols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_step(r, st)) == SQLITE_ROW) {
        int green = sqlite3_column_int64(st, 3) != 0;
        uint32_t parent = (uint32_t)sqlite3_column_int64(st, 2);
        if (!green && !parent)
            continue;
        if ((rc = imp_grow(r, (void **)&ns->greens, ns->ngreens, &ns->capgreens,
                           sizeof *ns->greens)))
            break;
        ns->greens[ns->ngreens++] = (ns_green){
            .pid = sqlite3_column_int64(st, 0),
            .context_id = (uint32_t)sqlite3_column_int64(st, 1),
            .parent_id = parent,
            .sm_count = green ? (uint32_t)sqlite3_column_int64(st, 4) : 0,
            .green = green,
            .row = ns->ngreens,
        };
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return rc;
    if (ns->ngreens)
        qsort(ns->greens, ns->ngreens, sizeof *ns->greens, green_cmp);
    size_t n = 0;
    for (size_t i = 0; i < ns->ngreens; i++) {
        const ns_green *g = &ns->greens[i];
        ns_green *m = n ? &ns->greens[n - 1] : NULL;
        if (!m || green_key_cmp(m, g)) {
            if (n != i)
                ns->greens[n] = *g;
            n++;
            continue;
        }
        m->green |= g->green;
        if (g->parent_id)
            m->parent_id = g->parent_id;
        if (g->sm_count)
            m->sm_count = g->sm_count;
    }
    ns->ngreens = n;
    return 0;
}

/* The run process of a pid, created on first use. */
static store_idx process_idx(imp_reader *r, nsys *ns, int64_t pid)
{
    for (size_t i = ns->nprocs; i-- > 0;)
        if (ns->procs[i].pid == pid)
            return ns->procs[i].idx;
    if (imp_grow(r, (void **)&ns->procs, ns->nprocs, &ns->capprocs, sizeof *ns->procs))
        return STORE_NONE;
    const char *name = NULL;
    for (size_t i = 0; i < ns->npnames && !name; i++)
        if (ns->pnames[i].pid == pid)
            name = ns->pnames[i].name;
    store_process_info info = {.pid = pid, .host = ns->host, .exe = name, .source = "nsys"};
    store_idx idx = store_run_add_process(r->run, &info, r->path);
    if (idx == STORE_NONE) {
        imp_fail(r, STORE_ENOMEM, "out of memory adding a process");
        return STORE_NONE;
    }
    ns->procs[ns->nprocs++] = (ns_proc){pid, idx};
    return idx;
}

static int64_t pid_of(sqlite3_stmt *st, int col)
{
    return (sqlite3_column_int64(st, col) >> 24) & 0xFFFFFF;
}

static store_idx stream_idx(imp_reader *r, nsys *ns, store_idx process, uint32_t device,
                            uint32_t context, uint32_t stream)
{
    /* the run's own lookup (a hash); a context it had not seen is given its device and what
     * TARGET_INFO_CUDA_CONTEXT_INFO says of it */
    uint32_t known = r->run->ncontexts;
    store_idx c = store_run_context(r->run, process, context, STORE_NONE, 0);
    if (c != STORE_NONE && c >= known) {
        store_idx dev = imp_gpu_device(r, process, ns->gpus, ns->ngpus, device);
        if (dev == STORE_NONE)
            return STORE_NONE;
        store_run_context(r->run, process, context, dev, 0);
        ns_green key = {.pid = r->run->processes[process].pid, .context_id = context};
        const ns_green *g =
            ns->ngreens ? bsearch(&key, ns->greens, ns->ngreens, sizeof key, green_key_cmp) : NULL;
        if (g)
            store_run_context_green(r->run, c, g->green, g->parent_id, g->sm_count);
    }
    if (c == STORE_NONE) {
        imp_fail(r, STORE_ENOMEM, "out of memory adding a context");
        return STORE_NONE;
    }
    store_idx s = store_run_stream(r->run, c, stream);
    if (s == STORE_NONE)
        imp_fail(r, STORE_ENOMEM, "out of memory adding a stream");
    return s;
}

/* Common head of the GPU tables: start|end|deviceId|contextId|streamId|correlationId|globalPid. */
#define GPU_COLS "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid"

/* What row_times() found. */
enum { TIMES_OK, TIMES_NONE, TIMES_OVERFLOW };

/* Start/end (columns 0 and 1) of a row on the common axis: TIMES_OK, TIMES_NONE (NULL, or end
 * before start) or TIMES_OVERFLOW (the record is refused, see imp_refuse()). */
static int row_times(nsys *ns, sqlite3_stmt *st, int64_t *start, int64_t *end)
{
    if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL ||
        sqlite3_column_int64(st, 1) < sqlite3_column_int64(st, 0))
        return TIMES_NONE;
    return store_time_add(sqlite3_column_int64(st, 0), ns->t0, start) &&
                   store_time_add(sqlite3_column_int64(st, 1), ns->t0, end)
               ? TIMES_OK
               : TIMES_OVERFLOW;
}

/* Counts a record of pid refused for its times; 0 or STORE_ENOMEM (error set). */
static int refuse(imp_reader *r, nsys *ns, int64_t pid)
{
    store_idx p = process_idx(r, ns, pid);
    if (p == STORE_NONE)
        return STORE_ENOMEM;
    imp_refuse(r, p);
    return 0;
}

static store_idx gpu_stream(imp_reader *r, nsys *ns, sqlite3_stmt *st)
{
    store_idx p = process_idx(r, ns, pid_of(st, 6));
    if (p == STORE_NONE)
        return STORE_NONE;
    return stream_idx(r, ns, p, (uint32_t)sqlite3_column_int64(st, 2),
                      (uint32_t)sqlite3_column_int64(st, 3), (uint32_t)sqlite3_column_int64(st, 4));
}

/* CUPTI_ACTIVITY_KIND_KERNEL: GPU_COLS|mangledName|demangledName|shortName|grid|block|registers|
 * static/dynamicSharedMemory -> 3905683162|4077931236|0|1|7|123|282427033387008|831|846|847|... */
static int load_kernels(imp_reader *r, nsys *ns)
{
    static const char *const cols[] = {GPU_COLS,
                                       "mangledName",
                                       "demangledName",
                                       "shortName",
                                       "gridX",
                                       "gridY",
                                       "gridZ",
                                       "blockX",
                                       "blockY",
                                       "blockZ",
                                       "registersPerThread",
                                       "staticSharedMemory",
                                       "dynamicSharedMemory",
                                       NULL};
    static const char *const req[] = {"start", "end", NULL};
    const char *table = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!imp_sql_has_table(ns->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, ns->db, table, cols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        store_kernel k = {.correlation_id = (uint32_t)sqlite3_column_int64(st, 5)};
        int times = row_times(ns, st, &k.start, &k.end);
        if (times == TIMES_OVERFLOW && (rc = refuse(r, ns, pid_of(st, 6))))
            break;
        if (times == TIMES_NONE)
            imp_unmapped(r, "kernel_without_time", 1);
        if (times != TIMES_OK)
            continue;
        store_launch l = {.name = STORE_NONE};
        int missing = 1;
        for (int c = 7; c <= 9 && missing; c++)
            l.name = string_col(r, ns, st, c, &missing);
        if (missing)
            l.name = imp_intern(r, NULL);
        for (int i = 0; i < 3; i++) {
            l.grid[i] = (uint32_t)sqlite3_column_int64(st, 10 + i);
            l.block[i] = (uint32_t)sqlite3_column_int64(st, 13 + i);
        }
        l.registers = (uint32_t)sqlite3_column_int64(st, 16);
        l.static_smem = (uint32_t)sqlite3_column_int64(st, 17);
        l.dynamic_smem = (uint32_t)sqlite3_column_int64(st, 18);
        if (l.name == STORE_NONE || (k.stream = gpu_stream(r, ns, st)) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_kernel(r, &l, &k)) != 0)
            break;
    }
    return imp_sql_end(r, st, rc);
}

/* MEMCPY: GPU_COLS|bytes|copyKind -> ...|92928|1. MEMSET: GPU_COLS|bytes|memKind, where memKind
 * counts from 0 = pageable (CUPTI, and so tlview, counts from 1 = pageable). */
static int load_copies(imp_reader *r, nsys *ns, store_copy_type type)
{
    static const char *const mcols[] = {GPU_COLS, "bytes", "copyKind", NULL};
    static const char *const scols[] = {GPU_COLS, "bytes", "memKind", NULL};
    static const char *const req[] = {"start", "end", NULL};
    const char *table =
        type == STORE_COPY_MEMCPY ? "CUPTI_ACTIVITY_KIND_MEMCPY" : "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!imp_sql_has_table(ns->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc =
        imp_sql_select(r, ns->db, table, type == STORE_COPY_MEMCPY ? mcols : scols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        store_copy c = {.correlation_id = (uint32_t)sqlite3_column_int64(st, 5),
                        .type = (uint16_t)type,
                        .bytes = (uint64_t)sqlite3_column_int64(st, 7)};
        int times = row_times(ns, st, &c.start, &c.end);
        if (times == TIMES_OVERFLOW && (rc = refuse(r, ns, pid_of(st, 6))))
            break;
        if (times == TIMES_NONE)
            imp_unmapped(
                r, type == STORE_COPY_MEMCPY ? "memcpy_without_time" : "memset_without_time", 1);
        if (times != TIMES_OK)
            continue;
        /* unsigned: a hostile memKind of INT64_MAX must not overflow */
        uint64_t kind = (uint64_t)sqlite3_column_int64(st, 8);
        if (type == STORE_COPY_MEMSET)
            kind = sqlite3_column_type(st, 8) == SQLITE_NULL ? 0 : kind + 1;
        c.kind = (uint16_t)kind;
        if ((c.stream = gpu_stream(r, ns, st)) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_copy(r, &c)))
            break;
    }
    return imp_sql_end(r, st, rc);
}

/* RUNTIME: start|end|globalTid|correlationId|nameId|returnValue -> 3723481565|3723482405|
 * 282427033443755|1|811 "cudaLaunchKernel_v7000"|0. Driver calls (cu*) share the table. */
static int load_apis(imp_reader *r, nsys *ns)
{
    static const char *const cols[] = {"start",  "end",         "globalTid", "correlationId",
                                       "nameId", "returnValue", NULL};
    static const char *const req[] = {"start", "end", NULL};
    const char *table = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!imp_sql_has_table(ns->db, table))
        return 0;
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, ns->db, table, cols, req, "", &st);
    if (rc)
        return rc;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        store_api a = {.correlation_id = (uint32_t)sqlite3_column_int64(st, 3),
                       .thread_id = (uint64_t)sqlite3_column_int64(st, 2) & 0xFFFFFF,
                       .status = (int32_t)sqlite3_column_int64(st, 5),
                       .domain = STORE_API_RUNTIME};
        int times = row_times(ns, st, &a.start, &a.end);
        if (times == TIMES_OVERFLOW && (rc = refuse(r, ns, pid_of(st, 2))))
            break;
        if (times == TIMES_NONE)
            imp_unmapped(r, "api_without_time", 1);
        if (times != TIMES_OK)
            continue;
        imp_str *s = sqlite3_column_type(st, 4) == SQLITE_NULL
                         ? NULL
                         : imp_strs_find(&ns->strings, sqlite3_column_int64(st, 4));
        if (s && s->idx == STORE_NONE) { /* cudaLaunchKernel_v7000 -> cudaLaunchKernel */
            char name[256];
            snprintf(name, sizeof name, "%s", s->text);
            char *v = strrchr(name, '_');
            if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
                *v = 0;
            s->idx = imp_intern(r, name);
        }
        a.name = s ? s->idx : imp_intern(r, NULL);
        if (s && strncmp(s->text, "cuda", 4) != 0 && strncmp(s->text, "cu", 2) == 0)
            a.domain = STORE_API_DRIVER;
        if (a.name == STORE_NONE || (a.process = process_idx(r, ns, pid_of(st, 2))) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_api(r, &a)))
            break;
    }
    return imp_sql_end(r, st, rc);
}

/* NVTX_EVENTS: start|end|eventType|text|globalTid|textId|domainId -> 1202670957|1202727983|59|
 * "DATAFRAME_INIT"|283799342685487|NULL|1. eventType 59 push/pop and 60 start/end ranges, 34 marks
 * (length 0); 75 (domain create, text = the domain's name) names domainIds; the label is inline
 * (`text`) or a StringIds id (`textId`). */
static int load_nvtx(imp_reader *r, nsys *ns)
{
    static const char *const cols[] = {"start",     "end",    "eventType", "text",
                                       "globalTid", "textId", "domainId",  NULL};
    static const char *const req[] = {"start", "eventType", NULL};
    const char *table = "NVTX_EVENTS";
    if (!imp_sql_has_table(ns->db, table))
        return 0;
    static const char *const dcols[] = {"domainId", "text", NULL};
    sqlite3_stmt *st;
    int rc = imp_sql_select(r, ns->db, table, dcols, NULL, "WHERE eventType = 75", &st);
    if (rc || (rc = imp_strs_load(r, st, &ns->domains, 0)))
        return rc;
    if ((rc = imp_sql_select(r, ns->db, table, cols, req, "", &st)))
        return rc;
    while ((rc = imp_sql_next(r, st)) == SQLITE_ROW) {
        int64_t type = sqlite3_column_int64(st, 2);
        if (type == 75 || type == 76)
            continue; /* domain create/destroy: names, not records */
        store_range g = {.thread_id = (uint64_t)sqlite3_column_int64(st, 4) & 0xFFFFFF,
                         .domain = STORE_NONE};
        if (type != 34 && type != 59 && type != 60) {
            char kind[48];
            snprintf(kind, sizeof kind, "nvtx_event_type_%lld", (long long)type);
            imp_unmapped(r, kind, 1);
            continue;
        }
        int64_t start = sqlite3_column_int64(st, 0), end = start;
        if (type != 34 && (sqlite3_column_type(st, 1) == SQLITE_NULL ||
                           (end = sqlite3_column_int64(st, 1)) < start)) {
            imp_unmapped(r, "nvtx_without_end", 1);
            continue;
        }
        if (!store_time_add(start, ns->t0, &g.start) || !store_time_add(end, ns->t0, &g.end)) {
            if ((rc = refuse(r, ns, pid_of(st, 4))))
                break;
            continue;
        }
        const char *text = (const char *)sqlite3_column_text(st, 3);
        int missing = 1;
        if (text)
            g.name = imp_intern(r, text);
        else if ((g.name = string_col(r, ns, st, 5, &missing)), missing)
            g.name = imp_intern(r, NULL);
        imp_str *d = sqlite3_column_type(st, 6) == SQLITE_NULL
                         ? NULL
                         : imp_strs_find(&ns->domains, sqlite3_column_int64(st, 6));
        g.domain = d ? imp_str_intern(r, d) : STORE_NONE;
        if (g.name == STORE_NONE || (d && g.domain == STORE_NONE) ||
            (g.process = process_idx(r, ns, pid_of(st, 4))) == STORE_NONE) {
            rc = STORE_ENOMEM;
            break;
        }
        if ((rc = imp_add_range(r, &g)))
            break;
    }
    return imp_sql_end(r, st, rc);
}

static int ns_load(imp_reader *r)
{
    nsys *ns = r->state;
    int rc;
    static const char *const meta[] = {"META_DATA_EXPORT", "EXPORT_META_DATA"};
    for (int i = 0; i < 2; i++) {
        if (!imp_sql_has_table(ns->db, meta[i]))
            continue;
        static const char *const cols[] = {"value", NULL};
        sqlite3_stmt *st;
        if ((rc = imp_sql_select(r, ns->db, meta[i], cols, NULL,
                                 "WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR' OR name = "
                                 "'EXPORT_SCHEMA_VERSION' ORDER BY name LIMIT 1",
                                 &st)))
            return rc;
        rc = imp_sql_step(r, st);
        if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 3)
            imp_warn(r, "Nsight Systems export schema %s not seen before: columns read by name",
                     (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (rc < 0)
            return rc;
    }
    r->rows_total = imp_sql_total_rows(ns->db, mapped_tables);
    if ((rc = load_strings(r, ns)) || (rc = load_session(r, ns)) || (rc = load_gpus(r, ns)) ||
        (rc = load_green(r, ns)) || (rc = load_kernels(r, ns)) ||
        (rc = load_copies(r, ns, STORE_COPY_MEMCPY)) ||
        (rc = load_copies(r, ns, STORE_COPY_MEMSET)) || (rc = load_apis(r, ns)) ||
        (rc = load_nvtx(r, ns)))
        return rc;
    imp_progress_end(r, r->rows_total);
    if (ns->nprocs == 0)
        imp_warn(r, "no CUDA or NVTX activity in this export");
    return imp_sql_count_unmapped(r, ns->db, derived_tables);
}

const imp_ops imp_nsys_ops = {"nsys", ns_probe, ns_open, ns_load, ns_close};
