/* web_int.h: private to the .c files of web/. The viewport index built once per run at start (rows
 * of kernels, interval lists with a bucket grid for O(1)+small-scan range aggregates, the cached
 * concurrency grid), a small JSON text buffer for the hot endpoints, the embedded assets table and
 * the request handlers. Nothing here is part of the public API (web/web.h is). */
#ifndef WEB_INT_H
#define WEB_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "web.h"

/* ---------------------------------------------------------------- interval lists */

/* A list of intervals sorted by start, read in place from an array of structs that begin with
 * `int64_t start, end` (store_kernel, analysis_window): interval i is at base + idx[i] * stride
 * (or base + i * stride when idx is NULL). A uniform grid of buckets over [t0, t0 + nb * bw)
 * keeps, per bucket, where its intervals begin, which earlier ones are still running at its
 * start, and the busy time before it; so "how many started before T, how much busy time before
 * T" costs one bucket lookup plus a scan of that bucket (8 intervals on average: IVL_PER_BUCKET in
 * web_ivl.c). */
typedef struct web_ivl {
    const char *base;    /* first struct */
    size_t stride;       /* struct size */
    const uint32_t *idx; /* positions into base, or NULL for 0..n-1 (not owned) */
    uint32_t n;          /* intervals */
    int64_t t0, bw;      /* grid origin and bucket width (ns, >= 1) */
    uint32_t nb;         /* buckets (>= 1 when n > 0) */
    uint32_t *first;     /* nb + 1: first position whose start >= bucket start */
    uint32_t *carry;     /* nb: first position (started earlier) still running at bucket start */
    int64_t *busy;       /* nb: busy time (overlaps counted twice) before bucket start */
    uint32_t *off;       /* 2n: start and end of each interval minus its bucket's start, by position
                            (UINT32_MAX where that does not fit: read the record); NULL when bw does not
                            fit 32 bits */
    int off_lent;        /* off is the caller's (web_ivl_begin()): not freed with the grid */
    int grid_lent;       /* first, carry and busy are a thawed index's block's (web_freeze.c) */
} web_ivl;

/* What web_ivl_at() tells about an instant T. */
typedef struct web_ivl_pt {
    uint32_t pos;     /* intervals with start < T */
    uint32_t running; /* of those, intervals with end > T */
    int64_t busy;     /* sum over intervals of their time before T */
} web_ivl_pt;

/* Builds the grid over n intervals (sorted by start). Returns 0 or WEB_ENOMEM. */
int web_ivl_build(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n);

/* The same in steps, so that many lists can be built in one pass over interleaved data:
 * web_ivl_begin() with the first and last start, then web_ivl_push() once per interval in order
 * (idx[pos] must be set by then), then web_ivl_end_build(). `off`, when not NULL, is where the
 * list keeps its 2n offsets (the caller's: a slice of one allocation for many lists), else the
 * list allocates its own. */
typedef struct web_ivl_build_state {
    uint32_t pos;   /* intervals pushed */
    uint32_t next;  /* first bucket not filled yet */
    uint32_t carry; /* first pushed interval that may still run at that bucket's start */
    int64_t durs;   /* sum of the pushed intervals' lengths */
} web_ivl_build_state;
int web_ivl_begin(web_ivl *v, const void *base, size_t stride, const uint32_t *idx, uint32_t n,
                  int64_t lo, int64_t hi, uint32_t *off);
void web_ivl_push(web_ivl *v, web_ivl_build_state *b);
void web_ivl_end_build(web_ivl *v, web_ivl_build_state *b);
/* Frees the grid (not the intervals, nor lent offsets, which belong to the caller). */
void web_ivl_free(web_ivl *v);
/* Start, end and array position of the interval at list position i. */
static inline int64_t web_ivl_start(const web_ivl *v, uint32_t i)
{
    return *(const int64_t *)(v->base + (size_t)(v->idx ? v->idx[i] : i) * v->stride);
}
static inline int64_t web_ivl_end(const web_ivl *v, uint32_t i)
{
    return *(const int64_t *)(v->base + (size_t)(v->idx ? v->idx[i] : i) * v->stride + 8);
}
static inline uint32_t web_ivl_item(const web_ivl *v, uint32_t i)
{
    return v->idx ? v->idx[i] : i;
}
/* What the list holds before instant T (see web_ivl_pt). */
web_ivl_pt web_ivl_at(const web_ivl *v, int64_t T);
/* web_ivl_at() at the bucket start nearest to T (exact there, read from the grid without
 * scanning the bucket): for pixel edges when a pixel spans many buckets, so the edge moves by at
 * most half a bucket. */
web_ivl_pt web_ivl_at_grid(const web_ivl *v, int64_t T);
/* web_ivl_at() (snap 0) or web_ivl_at_grid() (snap 1) at n instants T[0..n) into out[0..n): the
 * same values, with the buckets, positions and records of later instants asked for ahead (they are
 * scattered and independent: their cache misses overlap instead of following one another). */
void web_ivl_at_many(const web_ivl *v, const int64_t *T, uint32_t n, int snap, web_ivl_pt *out);
/* Per pixel j of the W pixels [T[j], T[j + 1]) (T: W + 1 increasing instants), what list
 * positions [from, to) hold, exactly as web_ivl_at() at the pixel edges tells it, in one pass over
 * them by start: count[j] (W + 1 entries; NULL: not wanted), the intervals started in the pixel or
 * before it and still running at its start, and ns[j] (W), their time inside it. [from, to) must
 * hold every interval that overlaps [T[0], T[W]) and start before T[W]
 * (web_ivl_scan_from(T[0]) to web_ivl_at(T[W]).pos). cover: W + 1 entries of scratch. */
void web_ivl_sweep(const web_ivl *v, const int64_t *T, uint32_t W, uint32_t from, uint32_t to,
                   int64_t *count, int64_t *ns, int64_t *cover);
/* Start and end of list positions [from, to) into s[0 ..] and e[0 ..], read in list order from
 * the offsets (contiguous) where they fit, else from the records. */
void web_ivl_spans(const web_ivl *v, uint32_t from, uint32_t to, int64_t *s, int64_t *e);
/* The first position that may overlap [a, ...): every interval with end > a and start < T is at
 * a position >= the returned one (some between may have ended; callers filter on end). */
uint32_t web_ivl_scan_from(const web_ivl *v, int64_t a);

/* ---------------------------------------------------------------- shared answers */

/* A prebuilt answer body shared by whoever holds it (a generation, the answer cache, the replies
 * libmicrohttpd is still sending), freed with the last reference: a reply never copies it, and a
 * replaced generation or an evicted cache entry can go while its body is still being sent. */
typedef struct web_blob {
    unsigned refs; /* atomic */
    size_t len;
    char data[]; /* len bytes, then a NUL */
} web_blob;

/* A blob holding a copy of the len bytes at s (one reference, the caller's); NULL when out of
 * memory. */
web_blob *web_blob_new(const char *s, size_t len);
/* Takes one more reference on b. */
void web_blob_hold(web_blob *b);
/* Drops one reference on b (a web_blob *), freeing it with the last; NULL is a no-op. The
 * signature of libmicrohttpd's MHD_ContentReaderFreeCallback. */
void web_blob_release(void *b);

/* ---------------------------------------------------------------- per-run index */

/* What a row shows. Kernel rows come first (their ids do not depend on the other kinds), then
 * copy rows, API rows and NVTX rows; each kind's rows are ordered by lane, process pid, then
 * context and stream (stream kinds) or thread (thread kinds). */
typedef enum web_row_kind {
    WEB_ROW_KERNELS = 0, /* kernels of one CUDA stream */
    WEB_ROW_COPIES,      /* memcpys and memsets of one CUDA stream */
    WEB_ROW_API,         /* CUDA runtime and driver API calls of one thread (nested) */
    WEB_ROW_NVTX,        /* NVTX ranges of one thread (nested) */
    WEB_NROW_KINDS
} web_row_kind;

#define WEB_DEPTH_MAX 32 /* levels of a thread row; deeper calls or ranges share the last one */

/* Whether a kind's rows are a thread's (API calls, NVTX ranges: nested, with levels) rather than
 * a stream's (kernels, copies: one level). */
static inline int web_kind_threaded(int kind)
{
    return kind == WEB_ROW_API || kind == WEB_ROW_NVTX;
}

typedef struct web_row {
    uint8_t kind;              /* web_row_kind */
    uint8_t nlev;              /* levels (depths): 1 for stream rows, deepest + 1 for thread rows */
    uint32_t slot;             /* analysis device slot (lane) */
    store_idx process;         /* index into run->processes */
    store_idx context, stream; /* stream rows; STORE_NONE in thread rows */
    uint64_t thread;           /* thread rows: the thread id; 0 in stream rows */
    uint32_t off, n;           /* its records: items[kind].idx[off .. off + n), level by level */
    web_ivl *lev;              /* nlev: level l over its slice of idx (sorted by start) */
} web_row;

/* One kind of record of the run as the rows and flows see it: the run's array (kernels, copies,
 * apis, ranges), the records' positions grouped by row, and for the kinds that carry a
 * correlation id (kernels, copies, API calls) their positions sorted by (process, correlation). */
typedef struct web_items {
    const char *base;      /* run->kernels, copies, apis or ranges */
    size_t stride;         /* its struct size (each begins with int64_t start, end) */
    uint64_t n;            /* records */
    uint32_t first, nrows; /* its rows: rows[first .. first + nrows) */
    uint32_t *idx;         /* n: positions grouped by row, level by level, by start within */
    uint32_t *off;         /* 2n: the offsets of those lists (web_ivl), in the same order */
    uint8_t *depth;        /* thread kinds, while the index is built: n levels (< WEB_DEPTH_MAX);
                              NULL after (web_item_depth() finds a record's level in its row) */
    uint32_t *by_corr;     /* positions of records with a correlation id other than 0, sorted by
                              (process, correlation id, position); NULL for NVTX */
    uint32_t *corr_off;    /* nprocesses + 1: process p's slice of by_corr */
} web_items;

#define WEB_CONC_LEVELS 65 /* time at 0..64 processes in flight (the last holds 64 and more) */

/* web_lane.win[WEB_WIN_TURNS]: the time-sliced windows decided by the rule took-turns (contexts
 * that switched without overlapping: no overlap, so no overlap window), apart from win[3]. */
#define WEB_WIN_TURNS ANALYSIS_NVERDICTS

typedef struct web_lane {
    const analysis_device *dev;
    web_ivl win[ANALYSIS_NVERDICTS + 1]; /* windows of each verdict (idx into analysis_windows),
                                            those of took-turns in win[WEB_WIN_TURNS] */
    uint32_t *widx;                      /* the idx arrays of win[], one allocation */
    int64_t *sw_t;   /* nsw: the context switches the analysis counted on the lane (analysis_device
                        .switches), found again from the run: when the next share group's kernel
                        started (absolute ns, in order) */
    int64_t *sw_gap; /* nsw: the idle gap before each */
    uint64_t nsw;
    analysis_bin *grid; /* cached concurrency bins over [g0, g0 + ngrid * gw) */
    uint32_t ngrid;
    int64_t g0, gw;
    int grid_state; /* 0 being built, 1 ready (grid NULL: empty lane), 2 failed; atomic */
    int grid_lent;  /* grid lies in a thawed index's block (web_freeze.c): not freed */
    double *work;   /* dev->nwindows + 1: solo work (ns) of the windows before each (web_range.c) */
    double par_max; /* the most solo work per ns of one window: no pixel's parallelism is above
                       it (each window's work is spread evenly over it), the concurrency track's
                       scale */
    int64_t *undef; /* dev->nwindows + 1: their overlap time without a parallelism figure */
    int sw_lent;    /* sw_t and sw_gap are a thawed index's block's (web_freeze.c) */
} web_lane;

typedef struct web_runix {
    char *label;
    const store_run *run;
    const analysis *an;
    int64_t origin; /* API times are ns relative to this (first kernel start) */
    uint32_t nrows;
    web_row *rows;                   /* kernel rows, then copies, API, NVTX (web_row_kind) */
    web_items items[WEB_NROW_KINDS]; /* by web_row_kind */
    uint32_t *stream_row[2];         /* run->nstreams: the kernel / copy row of each stream */
    uint32_t *process_lane;          /* run->nprocesses: the lane of a process's thread rows */
    uint32_t nlanes;
    web_lane *lanes;
    uint32_t *device_lane;      /* run->ndevices + 1: lane of each device (last: unknown device) */
    web_blob *stats_body;       /* GET /api/stats body, prebuilt (NULL until then, or when out of
                                   memory), or thawed with the index */
    unsigned stats_id;          /* the run's position stats_body was built for (it says it) */
    struct web_tl_cache *cache; /* the last GET /api/timeline answers (web_timeline.c) */
    const void *lent;           /* the frozen index it was thawed from (web_lend_index()): its
                                   arrays lie in it, borrowed; NULL when built */
    size_t lent_len;
    int thawed; /* 1: thawed from web_run.index (web_index_thawed()) */
} web_runix;

/* The position in device_lane of run->devices[d] (the last one for STORE_NONE or out of range). */
static inline uint32_t web_device_index(const store_run *run, store_idx d)
{
    return d < run->ndevices ? d : run->ndevices; /* STORE_NONE is UINT32_MAX */
}
/* The lane of run->devices[d] (UINT32_MAX when that device ran no kernel). */
static inline uint32_t web_device_lane(const web_runix *r, store_idx d)
{
    return r->device_lane[web_device_index(r->run, d)];
}
/* Whether the record [s, e) is drawn in [a, b): it overlaps the range, or it has no length and
 * starts inside it (a zero-length record at a counts). */
static inline int web_span_in(int64_t s, int64_t e, int64_t a, int64_t b)
{
    return s < b && (e > a || (s >= a && e <= s));
}
static inline int web_kernel_in(const store_kernel *k, int64_t a, int64_t b)
{
    return web_span_in(k->start, k->end, a, b);
}
/* Start and end of record i of a kind (every record struct begins with int64_t start, end). */
static inline int64_t web_item_start(const web_items *it, uint64_t i)
{
    return *(const int64_t *)(it->base + i * it->stride);
}
static inline int64_t web_item_end(const web_items *it, uint64_t i)
{
    return *(const int64_t *)(it->base + i * it->stride + 8);
}
/* The process of record i of kind `kind`, and its correlation id (0 for NVTX ranges, which have
 * none). Inline: the index calls them once or twice per record. */
static inline store_idx web_item_process(const web_runix *r, int kind, uint64_t i)
{
    const store_run *run = r->run;
    switch (kind) {
    case WEB_ROW_KERNELS:
        return run->contexts[run->streams[run->kernels[i].stream].context].process;
    case WEB_ROW_COPIES: return run->contexts[run->streams[run->copies[i].stream].context].process;
    case WEB_ROW_API: return run->apis[i].process;
    default: return run->ranges[i].process;
    }
}
static inline uint32_t web_item_correlation(const web_runix *r, int kind, uint64_t i)
{
    switch (kind) {
    case WEB_ROW_KERNELS: return r->run->kernels[i].correlation_id;
    case WEB_ROW_COPIES: return r->run->copies[i].correlation_id;
    case WEB_ROW_API: return r->run->apis[i].correlation_id;
    default: return 0;
    }
}
/* The row of record i of kind `kind` (UINT32_MAX when the kind has no rows: a run without
 * kernels shows no other kind). */
uint32_t web_item_row(const web_runix *r, int kind, uint64_t i);
/* The level of record i in its row (0 for stream kinds): searched by its start in the row's
 * levels (a record's level is not kept: 1 B per call or range). */
unsigned web_item_depth(const web_runix *r, int kind, uint64_t i);
/* The records of kind `kind` (kernels, copies or API calls) of process p with correlation id
 * `corr` (not 0): *pFirst receives their first position in items[kind].by_corr, and the count
 * is returned (0 when none). O(log n). */
uint32_t web_flow_find(const web_runix *r, int kind, store_idx p, uint32_t corr,
                       uint32_t *pFirst /* OUT */);

/* Indexes one run for the API: lanes and their windows by verdict, rows and their grids.
 * Returns 0, or WEB_ENOMEM with a message in err (r is then freed). */
int web_runix_build(web_runix *r, const web_run *src, char *err, size_t errlen);
/* web_runix_build() with a frozen index (index_len bytes, web_runix_freeze()'s of this run; NULL:
 * none): the rows thawed from it when it fits, else built. */
int web_runix_build_lent(web_runix *r, const web_run *src, const void *index, size_t index_len,
                         char *err, size_t errlen);
/* Builds the lanes' concurrency grids (after web_runix_build, while the server already answers:
 * queries compute the profile directly or report it pending until a lane's grid_state is set);
 * a lane whose grid came with a thawed index keeps it. Returns 0 or WEB_ENOMEM. */
int web_runix_build_grids(web_runix *r);
/* The concurrency grid lane l gets (build_grid's): its origin, bin width and bins. 0 when the
 * lane spans no time (no grid). */
int web_lane_grid_shape(const web_lane *l, int64_t *pG0, int64_t *pGw, uint32_t *pN);
/* Frees what web_runix_build made (the run and analysis are borrowed). */
void web_runix_free(web_runix *r);

/* The index r as one block of bytes (web_freeze.c; malloc'd into *ppBlob, *pLen bytes), for
 * web_index_freeze(). WEB_OK or WEB_ENOMEM. */
int web_runix_freeze(const web_runix *r, void **ppBlob /* OUT */, size_t *pLen /* OUT */);
/* Fills r's rows, items, stream rows, process lanes and lane switches from a frozen block (r's
 * run, analysis and lanes set: web_runix_build does it), lending their arrays from it. WEB_OK, or
 * WEB_EINVAL when the block does not fit the run (r then holds a part: web_runix_free it). */
int web_runix_thaw(web_runix *r, const void *blob, size_t len);
/* 1 when p lies in the block r was thawed from (not to be freed). */
int web_runix_lent(const web_runix *r, const void *p);
/* Walks the exact concurrency profile of lane `slot` in chunks (a bounded buffer) and writes the
 * time spent with exactly N processes in flight to ns_at[N], and with exactly N contexts in
 * flight to ns_ctx[N] (WEB_CONC_LEVELS entries each, the last holding N and more). Returns 0 or
 * WEB_ENOMEM. */
int web_lane_levels(const web_runix *r, uint32_t slot, int64_t *ns_at, int64_t *ns_ctx);
/* The lane (analysis device slot) of a kernel. */
uint32_t web_kernel_lane(const web_runix *r, const store_kernel *k);
/* The window of lane `lane` (the kernel's, web_kernel_lane()) holding most of kernel k, the
 * first of equals, among the 64 windows from the first one that ends after its start; NULL when
 * the lane is out of range or no window overlaps the kernel. */
const analysis_window *web_kernel_window(const web_runix *r, uint32_t lane, const store_kernel *k);
/* web_kernel_window() for kernels asked in order of start: *hint (0 at first) is where the
 * search for the first window ending after the kernel's start begins, and is moved there (a
 * kernel starting earlier than the previous one is searched from the lane's first window). */
const analysis_window *web_kernel_window_from(const web_runix *r, uint32_t lane,
                                              const store_kernel *k, uint64_t *hint);
/* The verdict shown for a kernel whose web_kernel_window() is w: ANALYSIS_SOLO when w is NULL or
 * idle (the kernel ran alone). */
static inline analysis_verdict web_window_verdict(const analysis_window *w)
{
    return !w || w->verdict == ANALYSIS_IDLE ? ANALYSIS_SOLO : w->verdict;
}
static inline analysis_verdict web_kernel_verdict(const web_runix *r, uint32_t lane,
                                                  const store_kernel *k)
{
    return web_window_verdict(web_kernel_window(r, lane, k));
}

/* The context switches of lane `slot` whose idle gap [t - gap, t] meets [a, b) (t >= a and
 * t - gap < b; absolute ns): *pFirst receives the first one's position in the lane's sw_t, and
 * their count is returned (they follow one another: a position range). O(log n). */
uint64_t web_lane_switches(const web_runix *r, uint32_t slot, int64_t a, int64_t b,
                           uint64_t *pFirst /* OUT */);

/* Builds l->work and l->undef (web_runix_build calls it; web_runix_free frees them). Returns 0 or
 * WEB_ENOMEM. */
int web_lane_work_build(const web_runix *r, web_lane *l);
/* The effective parallelism of lane `slot` over [a, b) (absolute ns; [a, a + 1) when b <= a): the
 * solo work done in it per ns, idle time counting 0, each window's work (its parallelism x its
 * overlap time, plus its time with one context in flight) spread evenly over the window. NaN
 * where windows without a parallelism figure hold half the range or more, or without l->work.
 * Two binary searches over the lane's windows. */
double web_lane_parallelism(const web_runix *r, uint32_t slot, int64_t a, int64_t b);
/* web_lane_parallelism() of each pixel [T[j], T[j + 1]) of W (T: W + 1 instants in order) into
 * out[0 .. W): the same values, each edge's work read once, by a search forward from the last. */
void web_lane_parallelism_many(const web_runix *r, uint32_t slot, const int64_t *T, uint32_t W,
                               double *out);

/* ---------------------------------------------------------------- JSON text */

/* A growing text buffer for the endpoints that emit many numbers: building a jansson tree of
 * millions of nodes would cost more than the query itself. On allocation failure `failed` is
 * set and further writes are dropped. */
typedef struct web_buf {
    char *s;
    size_t len, cap;
    int failed;
} web_buf;

void web_buf_raw(web_buf *b, const char *s, size_t n);
void web_buf_str(web_buf *b, const char *s); /* raw text */
void web_buf_i64(web_buf *b, int64_t v);
void web_buf_num(web_buf *b, double v);           /* 4 significant digits; NaN -> null */
void web_buf_fixed2(web_buf *b, double v);        /* >= 0, 2 decimals at most, no printf */
void web_buf_json_str(web_buf *b, const char *s); /* view_json_quote(): always valid JSON */
static inline void web_buf_ch(web_buf *b, char c)
{
    web_buf_raw(b, &c, 1);
}
/* Appends n bytes left for the caller to fill and returns where they start (NULL, and `failed`
 * set, when out of memory): for binary data. */
char *web_buf_reserve(web_buf *b, size_t n);
/* Makes room for n more bytes (one allocation for an answer whose size is foreseen, instead of a
 * copy at each doubling); `failed` set when out of memory. */
void web_buf_room(web_buf *b, size_t n);
/* The bytes a web_buf's text starts after when it is to become a blob (web_blob_from_buf()): the
 * blob's header, reserved first with web_buf_reserve(). */
#define WEB_BLOB_HEAD offsetof(web_blob, data)
/* The blob of what b holds after its first WEB_BLOB_HEAD bytes, without a copy: b's buffer becomes
 * the blob (one reference, the caller's) and b is left empty. NULL when b failed (b then freed and
 * left empty). */
web_blob *web_blob_from_buf(web_buf *b);

/* ---------------------------------------------------------------- compact answers (web_bin.c) */

#define WEB_BIN_MAGIC "TLVB" /* the first 4 bytes of a compact answer (web/API.md) */

/* Where the viewport answer writes its arrays: as JSON text into b, or for a compact answer
 * (format=bin, web/API.md) a descriptor into b, which then holds the JSON header, and the values
 * as a little-endian typed array into data, the answer itself (the header is appended to it at
 * the end). */
typedef struct web_out {
    web_buf *b;    /* the JSON answer, or the compact answer's header */
    web_buf *data; /* compact: the answer; its typed arrays at offsets from data0, multiples of 8 */
    size_t start;  /* compact: where the answer starts in data (its magic) */
    size_t data0;  /* compact: where its data section starts (start + 8) */
    int compact;   /* 1: the compact answer */
    /* compact: the answer's table of strings (web_out_names()), each distinct string id once */
    uint32_t *sids; /* nstr: the caller's string ids, by their index in the table */
    uint32_t nstr;  /* strings in the table */
    uint32_t *skey; /* scap: string ids, open addressing */
    uint32_t *sval; /* scap: the index in the table of skey's string + 1 (0: a free entry) */
    uint32_t scap;  /* a power of two, more than twice nstr (0 before the first name) */
} web_out;

/* Starts an answer appended to *answer: JSON (compact 0) into answer itself; compact, the magic
 * and room for the header's offset into answer, and the header into *header (the caller's, empty,
 * to free after web_out_finish()). On allocation failure the buffers are marked failed. */
void web_out_begin(web_out *o, web_buf *answer, web_buf *header, int compact);
/* Integers: JSON numbers, or the narrowest typed array that holds them all (u8 ... i32, else f64
 * when every one is within +-2^53, else i64). */
void web_out_ints(web_out *o, const int64_t *v, uint32_t n);
/* Times (ns relative to the run's origin): compact, v - base in an i32 or narrower array with
 * "base": base when every difference fits 32 bits, else as web_out_ints(). */
void web_out_times(web_out *o, const int64_t *v, uint32_t n, int64_t base);
/* Values written with two decimals at most (web_buf_fixed2(); NaN is null): compact, the
 * hundredths as integers with "scale": 100 (and "null": -1 where NaN is). */
void web_out_fixed2(web_out *o, const double *v, uint32_t n);
/* Values written with 4 significant digits (web_buf_num(); not finite is null): compact, float32
 * of the value the JSON text holds, NaN for null, with "digits": 4. */
void web_out_num4(web_out *o, const double *v, uint32_t n);
/* n tuples of ncol integers, [[c0, c1, ...], ...] (cols[c][i]: column c of tuple i; is_time[c]:
 * column c is written by web_out_times() against base): compact, {"@": "tuples", "n": n, "cols":
 * [one array per column]}. */
void web_out_tuples(web_out *o, const int64_t *const *cols, const int *is_time, unsigned ncol,
                    uint32_t n, int64_t base);
/* Names (a row's "names"): JSON, an array of the strings text(ctx, sid[i]); compact, an integer
 * array with "strings": 1 whose elements index the answer's table of strings, which holds each
 * distinct string id once (a name repeated in many rows is sent once), written by
 * web_out_strings(). On allocation failure the buffer is marked failed. */
void web_out_names(web_out *o, const uint32_t *sid, uint32_t n,
                   const char *(*text)(const void *ctx, uint32_t sid), const void *ctx);
/* Compact, when names were written: appends ,"strings":[...] (the table, text(ctx, sid) each) to
 * the header, where the caller's top-level object is still open; JSON: nothing. */
void web_out_strings(web_out *o, const char *(*text)(const void *ctx, uint32_t sid),
                     const void *ctx);
/* Frees what the answer's writer holds besides its buffers (the table of strings); after
 * web_out_finish() or instead of it. */
void web_out_free(web_out *o);
/* Finishes the answer: JSON, nothing to do; compact, appends the header after the data section
 * (at a multiple of 8 bytes from the answer's start, zeros between) and writes its offset after
 * the magic. Returns 0, or WEB_ENOMEM when a buffer failed. */
int web_out_finish(web_out *o);

/* ---------------------------------------------------------------- server side */

typedef struct web_asset {
    const char *path; /* "/main.js" */
    const char *mime;
    const unsigned char *data;
    size_t len;
} web_asset;

extern const web_asset web_assets[]; /* generated from web/assets/ at build time; ends with {0} */

/* An answer: HTTP status and a body: malloc'd, or a held blob, or persistent; the caller lets it
 * go with web_reply_done() once sent. */
typedef struct web_reply {
    unsigned status;
    char *body;
    size_t len;
    int persistent;       /* body is prebuilt and lives as long as the server: do not free */
    web_blob *blob;       /* when set, body is blob->data and the reply holds one reference */
    unsigned retry_after; /* > 0: a Retry-After header with this many seconds */
    const char *mime;     /* Content-Type; NULL: application/json */
    int set_cookie;       /* 1: a Set-Cookie header carrying the server's token */
    int pipe_fd;          /* > 0: the body is read from this pipe as it is written (a stream of
                             unknown length; the response closes it) instead of body */
    char filename[32];    /* "": none; else a Content-Disposition: attachment with this name */
} web_reply;

#define WEB_PARAMS_MAX 16 /* query parameters of one request, at most */

/* Query parameters of one request, as (key, value) pairs, decoded by web_params_parse(). Every
 * key and value is valid UTF-8 without NUL or other control characters. */
typedef struct web_params {
    char *buf; /* the decoded keys and values (owned) */
    const char *key[WEB_PARAMS_MAX], *val[WEB_PARAMS_MAX];
    unsigned n;
} web_params;

/* Splits the raw query `q` (what follows '?' in the request target, not decoded; `len` bytes) into
 * *p: pairs separated by '&' (empty ones skipped), key and value split at the first '=' (a key
 * without one has the value ""), '+' and %HH decoded. Returns 0, or -1 with a message in err
 * (errlen bytes) when there are more than WEB_PARAMS_MAX pairs, a malformed %-escape, or a key or
 * value holding NUL, another control character or invalid UTF-8. Either way free *p with
 * web_params_free(). */
int web_params_parse(web_params *p, const char *q, size_t len, char *err, size_t errlen);
void web_params_free(web_params *p);
/* The value of parameter `key` (NULL when absent). */
const char *web_param(const web_params *p, const char *key);
/* Drops parameter `key` (every occurrence) from *p. */
void web_param_drop(web_params *p, const char *key);

/* One HTTP request as the server sees it before answering: filled by the libmicrohttpd glue
 * (web_server.c) or by a fuzzer. Strings are borrowed; NULL when absent. */
typedef struct web_http_req {
    const char *method;        /* "GET" */
    const char *version;       /* "HTTP/1.1" */
    const char *target;        /* the raw request target, not decoded ("/api/runs?run=0") */
    size_t target_len;         /* its length (it may hold NUL bytes, which are refused) */
    const char *host;          /* the Host header */
    unsigned nhost;            /* Host headers given */
    const char *origin;        /* the Origin header */
    unsigned norigin;          /* Origin headers given */
    const char *cookie;        /* the (first) Cookie header */
    const char *authorization; /* the Authorization header */
} web_http_req;

/* Answers one request: method, Host, Origin and token checks, path and query checks, then a
 * static asset or the JSON API (web_api). Fills *out (see web_reply); never fails: out of memory
 * is a 500 with a persistent body. Hand *out to web_reply_done() once its body is sent. */
void web_request(const web *w, const web_http_req *rq, web_reply *out);
/* Lets the body of *r go: frees a malloc'd one, releases a blob, leaves a persistent one. */
void web_reply_done(web_reply *r);

/* The concurrency grids and the stats bodies are built on a thread of their own after start
 * (they take a while at 10M kernels and the first paint does not need them); GET /api/stats
 * answers 503 until they are done (no request ever waits on a worker thread), GET /api/timeline
 * does without the grids meanwhile. */
typedef struct web_stats_sync {
    pthread_t thread;
    int started; /* the thread was created (join it) */
    pthread_mutex_t lock;
    pthread_cond_t finished; /* signalled when done is set */
    int done;                /* every run's stats_body is built (or NULL after a failure) */
} web_stats_sync;

/* One generation of what the server shows: the runs' indexes and the answers built from them.
 * web_start() makes generation 1; web_update() (tlview serve --follow) builds the next one beside
 * it, makes it current and frees the previous one once no request holds it. A request holds the
 * generation that was current when it came while it computes its answer (web_request()); a reply
 * of a prebuilt body (runs, stats, a cached timeline) holds that body's blob instead, until sent,
 * so that web_update() never waits on a slow client. */
typedef struct web_gen {
    uint64_t id; /* 1, 2, ...: GET /api/generation */
    unsigned nruns;
    web_runix runs[WEB_MAX_RUNS];
    web_blob *runs_body;   /* GET /api/runs, prebuilt */
    web_stats_sync *stats; /* its stats thread; a pointer, so that handlers holding a const
                              generation can lock it */
    unsigned refs;         /* the requests holding it, plus 1 while it is current (web_live) */
} web_gen;

/* Which generation is current, and who holds the old ones. */
typedef struct web_live {
    pthread_mutex_t lock;
    pthread_cond_t released; /* signalled when a generation's refs drop to 0 */
    web_gen *gen;            /* the current one */
    int follow;              /* web_options.follow: the runs may change (GET /api/runs says so) */
    unsigned shows;          /* WEB_SHOW_*: what GET /api/runs says the server does */
    /* before the runs are shown (web_start_loading()): what is being done, for GET /api/status */
    int loading;     /* 1 until web_show(): gen is NULL meanwhile */
    char stage[256]; /* web_progress() */
    uint64_t done, total;
    char *failure;           /* web_failed()'s reason (owned), or NULL */
    int64_t started_ms;      /* CLOCK_MONOTONIC at start, for the time spent */
    unsigned exports;        /* export threads running (web_export.c): web_stop() waits for them */
    pthread_cond_t exported; /* signalled when one ends */
} web_live;

/* What GET /api/runs says the server does (web_gen_new()'s `shows`). */
enum { WEB_SHOW_FOLLOW = 1, WEB_SHOW_CHROME = 2, WEB_SHOW_TEXT = 4, WEB_SHOW_EXPERIMENT = 8 };

/* A job's state (tlview serve --job; web_job.c): what GET /api/job sends and the groups whose
 * timelines are held. Every field is guarded by web_live.lock. */
typedef struct web_job {
    char *index; /* the index's JSON text (owned) */
    uint32_t ngroups;
    char **summary;      /* ngroups: each group's summary text, NULL until made (owned) */
    uint32_t nsummaries; /* summaries made */
    char *report;        /* the job report's text once every summary is in, else NULL (owned) */
    uint8_t *state;      /* ngroups: WEB_JOB_CLOSED, _QUEUED, _LOADING, _OPEN or _FAILED */
    uint8_t *asked;      /* ngroups: its timeline was asked for since the start */
    char **error;        /* ngroups: why it failed to open (owned), or NULL */
    uint32_t *queue;     /* ngroups: groups asked to open, in the order asked (a ring) */
    uint32_t qhead, qlen;
    web_gen *slot[WEB_JOB_OPEN_MAX]; /* the groups held, NULL when free */
    uint32_t slot_group[WEB_JOB_OPEN_MAX];
    uint64_t slot_used[WEB_JOB_OPEN_MAX]; /* `clock` when last asked (least recently out) */
    uint64_t clock;
    uint64_t next_id;    /* generation ids of the groups' runs: 1, 2, ... over every group */
    pthread_cond_t wake; /* a group was queued, or the job closed */
    int closed;          /* web_job_close() was called */
} web_job;

enum { WEB_JOB_CLOSED, WEB_JOB_QUEUED, WEB_JOB_LOADING, WEB_JOB_OPEN, WEB_JOB_FAILED };

/* The one queue of the requests being answered (web_gate.c): each connection has a thread of its
 * own (web_server.c), which reads the request and sends the answer, but at most `slots` requests
 * are answered at once, taken in the order they came (a ticket each): so every request waits in
 * the same queue, whichever connection it came on, and a slow client holds no slot. */
#define WEB_GATE_CONDS 64
typedef struct web_gate {
    pthread_mutex_t lock;
    pthread_cond_t turn[WEB_GATE_CONDS]; /* ticket k waits on turn[k % WEB_GATE_CONDS] */
    uint64_t next;                       /* tickets handed out */
    uint64_t done;                       /* requests answered */
    unsigned slots;                      /* web_options.threads */
} web_gate;
/* A gate of `slots` (0: one per CPU online); NULL when out of memory. */
web_gate *web_gate_new(unsigned slots);
/* Frees g (no thread may be in it). NULL is a no-op. */
void web_gate_free(web_gate *g);
/* Takes the next ticket and waits until fewer than `slots` of the requests that came earlier are
 * still being answered. Pair with web_gate_leave(). */
void web_gate_enter(web_gate *g);
/* One request answered: the ticket whose turn it is now is woken. */
void web_gate_leave(web_gate *g);
/* Gives the calling thread's turn back when it holds one (web_gate_enter() on this thread, not
 * left yet): before it waits for another request's answer. Its web_gate_leave() then does
 * nothing. */
void web_gate_give_back(void);
/* Tickets handed out so far (for tests). */
uint64_t web_gate_tickets(web_gate *g);

struct web {
    struct MHD_Daemon *daemon;
    int (*export_chrome)(FILE *f, const analysis *a); /* web_options' writers (NULL: none) */
    int (*export_text)(FILE *f, const analysis *a);
    char version[32]; /* web_options.version */
    char *experiment; /* web_options.experiment, compact (owned), or NULL */
    web_live *live;   /* a pointer, so that handlers holding a const web can lock it */
    web_gate *gate;   /* a pointer, for the same reason; NULL until started */
    web_job *job;     /* tlview serve --job, else NULL (then live->gen is NULL) */
    int fd;           /* listening socket (owned) */
    unsigned port;
    char *token;          /* required token, or NULL (owned) */
    char cookie_name[32]; /* "tlview_token_<port>=", the cookie that carries the token */
    size_t cookie_name_len;
    char set_cookie[160]; /* the Set-Cookie value answering a right token in the query */
    char **hosts;         /* Host names answered to (lower case; IPv6 in brackets), owned */
    unsigned nhosts;
    int wildcard;                   /* bound to 0.0.0.0 or :: (however spelt): every interface */
    char url_host[256];             /* the host of a printed URL (web_url_host()); one of hosts */
    const void *lend[WEB_MAX_RUNS]; /* web_lend_index(): frozen indexes for the next web_show() */
    size_t lend_len[WEB_MAX_RUNS];
};

/* A cache of GET /api/timeline answers of one run by their query (run, range, width, kmax, rows,
 * format), least recently used out, bounded in entries and bytes, safe between threads: many
 * clients at one view (the full view of a run just opened) cost one query. It holds only answers
 * computed after the concurrency grids were built (before, the same query may answer otherwise).
 * It assumes the run does not change. NULL when out of memory (no cache). */
typedef struct web_tl_cache web_tl_cache;
web_tl_cache *web_tl_cache_new(void);
void web_tl_cache_free(web_tl_cache *c);
/* Answers computed to be cached so far (a query asked again, or while it is being computed, is
 * not computed again): for tests. */
uint64_t web_tl_cache_computed(web_tl_cache *c);

/* Writes the GET /api/timeline body for run r (id run_id) over [t0, t1) (ns relative to the run's
 * origin), `width` pixels, listing kernels one by one in rows holding at most kmax in range;
 * rowsel (nrows flags) picks rows, NULL for all; compact: the compact answer (format=bin) instead
 * of JSON. From r->cache when it holds the same query, else computed (and kept there: the cache
 * and the replies share the one blob). When pAnswer is not NULL, *pAnswer receives the answer as
 * a blob, held (web_blob_release() it; NULL on failure), and b is left as it was; else the answer
 * is appended to b (a copy). Returns 0 or WEB_ENOMEM. */
int web_timeline(const web_runix *r, unsigned run_id, int64_t t0, int64_t t1, uint32_t width,
                 uint32_t kmax, const uint8_t *rowsel, int compact, web_buf *b,
                 web_blob **pAnswer /* OUT */);

/* Writes the GET /api/range body for run r (id run_id) over [t0, t1) (ns relative to the run's
 * origin), over the rows flagged in rowsel (nrows flags; NULL: every row): web/API.md. Costs
 * O(rows + log windows) plus, when the range holds at most scan_max kernels, one read of each
 * (the per-name and per-verdict figures and the stretches; above, "truncated": true), and the
 * selected rows' other records (at most scan_max). Lists names_max names at most. Returns 0 or
 * WEB_ENOMEM. */
int web_range(const web_runix *r, unsigned run_id, int64_t t0, int64_t t1, const uint8_t *rowsel,
              uint64_t scan_max, uint32_t names_max, web_buf *b);

/* Writes the GET /api/search body for run r (id run_id): the records of the kinds in `kinds` (a
 * bit per web_row_kind) whose name contains q (case-insensitive for ASCII; equals it with exact),
 * overlapping [t0, t1) where given (ns relative to the origin), counted per kind and per name (the
 * first names_max names listed, most matches first), and listed in the order of start, kind, id
 * from the `from`-th (or, has_at, from the first starting at or after `at`), `limit` at most
 * (web/API.md). Two passes over the records of those kinds. Returns 0 or WEB_ENOMEM. */
int web_search(const web_runix *r, unsigned run_id, const char *q, int exact, unsigned kinds,
               int64_t t0, int has0, int64_t t1, int has1, int64_t from, int64_t at, int has_at,
               uint32_t limit, uint32_t names_max, web_buf *b);

/* Indexes the runs as generation `id` and starts building its statistics on a thread of its own
 * (web_server.c). NULL on failure, with the message in err. */
web_gen *web_gen_new(uint64_t id, const web_run *runs, unsigned nruns, unsigned shows,
                     const void *const *lend, /* NULL, or nruns frozen indexes (NULL: none) */
                     const size_t *lend_len,  /* their lengths */
                     char *err, size_t errlen);
/* Frees generation g once no request holds it (its stats thread joined). NULL is a no-op. */
void web_gen_free(web_gen *g);
/* Lets go of a generation a request held (web_server.c; the job's groups use it too). */
void web_gen_let_go(const web *w, web_gen *g);

/* Answers GET /api/export?run=R&format=chrome|text|json from generation g (held by the caller
 * until it returns): the JSON report at once (the view's), the Chrome trace and the text report
 * streamed through a pipe (out->pipe_fd) by a thread of their own that holds g until it is
 * written (web_export.c). */
void web_export(const web *w, web_gen *g, const web_params *p, web_reply *out);

/* A job's requests, before the run API (web_job.c). *pT, *pLen: the request's path. Answers
 * GET / (the overview page), GET /api/job and /api/job/open, and refuses the run API outside a
 * group (returns 1: *out filled). For /g/N/REST it moves *pT, *pLen to REST and, when REST is
 * under /api/, holds group N's generation in *pHeld (let it go with web_gen_let_go()); a group
 * not open, or not one of the job's, is answered 404 (returns 1). Returns 0 to go on. */
int web_job_route(const web *w, const char **pT, size_t *pLen, const web_params *p,
                  web_gen **pHeld /* OUT */, web_reply *out);
/* Creates w->job (ngroups groups, the index text copied). WEB_OK or WEB_ENOMEM. */
int web_job_new(web *w, const char *index_json, uint32_t ngroups);
/* Frees w->job and the generations it holds (no request runs any more). */
void web_job_free(web *w);

/* The run API's parameter checks (web_api.c), for the job's endpoints: every parameter in the
 * NULL-terminated `known`, none given twice; and one strict decimal integer in [lo, hi] (when
 * absent: def, or 400 when required). 0, or -1 after a 400 reply in *out. */
int web_api_check_known(const web_params *p, web_reply *out, const char *const *known);
int web_api_get_int(const web_params *p, web_reply *out, const char *key, int64_t lo, int64_t hi,
                    int required, int64_t def, int64_t *v);

/* Answers GET /api/<what> (what without the prefix) from generation g (`follow`: the server
 * follows growing files). Sets an {"error": ...} body with a 4xx status for bad requests
 * (out->body NULL only when out of memory). A prebuilt body comes as a held blob (out->blob), which
 * outlives g. */
void web_api(const web_gen *g, int follow, const char *what, const web_params *p, web_reply *out);
/* Fills *out with status and {"error": MESSAGE} (printf-style; bytes that are not valid UTF-8
 * become U+FFFD, view_string()). out->body is NULL when out of memory. */
void web_reply_error(web_reply *out, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Builds g->runs_body from its runs (after web_runix_build); what the server does (`shows`,
 * WEB_SHOW_*: following the files, the exports it offers) is said in it. Returns 0 or
 * WEB_ENOMEM. */
int web_api_runs_body(web_gen *g, unsigned shows);
/* Builds every run's concurrency grids, then its stats_body (NULL when out of memory), then
 * marks g->stats done; what a thawed index brought (grids, a stats_body built for the same
 * position) is kept. Runs on the stats thread (a void *(*)(void *) taking the web_gen). */
void *web_api_stats_bodies(void *g);

#endif
