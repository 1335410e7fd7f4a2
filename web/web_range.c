/* web_range.c: GET /api/range, the statistics of a selected time range (its kernels per process
 * and per name: count, time inside, stretch; per GPU the time of each verdict and the effective
 * parallelism), and the per-pixel effective parallelism that GET /api/timeline returns for each
 * lane. Both read a prefix sum of solo work over each lane's windows, built once at start
 * (web_lane_work_build), so a pixel or a range costs two binary searches over the windows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "web_int.h"

/* ---------------------------------------------------------------- solo work per lane */

/* window_work: the solo work done in window w (ns of work at solo speed) and its overlap time
 * without a parallelism figure (*undef). The overlap did parallelism x overlap_ns; the time with
 * one context in flight ran at solo speed, one ns of work per busy ns. */
static double window_work(const analysis_window *w, int64_t *undef)
{
    int64_t alone = w->busy_ns - w->overlap_ns;
    *undef = 0;
    if (w->overlap_ns <= 0)
        return (double)w->busy_ns;
    if (isnan(w->parallelism)) {
        *undef = w->overlap_ns;
        return (double)(alone > 0 ? alone : 0);
    }
    return (double)w->parallelism * (double)w->overlap_ns + (double)(alone > 0 ? alone : 0);
}

int web_lane_work_build(const web_runix *r, web_lane *l)
{
    const analysis_window *w = analysis_windows(r->an) + l->dev->first_window;
    uint64_t n = l->dev->nwindows;
    l->work = malloc(sizeof *l->work * (n + 1));
    l->undef = malloc(sizeof *l->undef * (n + 1));
    if (!l->work || !l->undef)
        return WEB_ENOMEM;
    l->work[0] = 0;
    l->undef[0] = 0;
    l->par_max = 0;
    for (uint64_t i = 0; i < n; i++) {
        int64_t u;
        double work = window_work(&w[i], &u);
        l->work[i + 1] = l->work[i] + work;
        l->undef[i + 1] = l->undef[i] + u;
        if (w[i].t1 > w[i].t0 && work / (double)(w[i].t1 - w[i].t0) > l->par_max)
            l->par_max = work / (double)(w[i].t1 - w[i].t0);
    }
    return WEB_OK;
}

/* windows_before: how many of the n windows w (sorted by start) start before T, knowing that the
 * first lo do: steps forward from lo that double, then halving (O(log) of how far it goes, so
 * that instants in order cost little more than their count). */
static uint64_t windows_before(const analysis_window *w, uint64_t n, uint64_t lo, int64_t T)
{
    uint64_t hi = lo, step = 1; /* w[k].t0 < T for every k < lo */
    while (hi < n && w[hi].t0 < T) {
        lo = hi + 1;
        hi = lo + step < n ? lo + step : n;
        step *= 2;
    }
    while (lo < hi) { /* hi is n, or w[hi].t0 >= T */
        uint64_t mid = lo + (hi - lo) / 2;
        if (w[mid].t0 < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* work_at: the lane's solo work and undefined overlap time before instant T (absolute ns), each
 * window's spread evenly over its length; lo: windows_before(w, ..., T), w the lane's windows. */
static double work_at(const web_lane *l, const analysis_window *w, uint64_t lo, int64_t T,
                      double *undef)
{
    if (lo == 0) {
        *undef = 0;
        return 0;
    }
    const analysis_window *x = &w[lo - 1];
    double f = T >= x->t1 ? 1.0 : (double)(T - x->t0) / (double)(x->t1 - x->t0);
    *undef = (double)l->undef[lo - 1] + f * (double)(l->undef[lo] - l->undef[lo - 1]);
    return l->work[lo - 1] + f * (l->work[lo] - l->work[lo - 1]);
}

/* parallelism: of a range `len` ns long, from the work and undefined time before its ends. */
static double parallelism(double wa, double ua, double wb, double ub, int64_t len)
{
    double u = ub - ua;
    if (2 * u >= (double)len)
        return NAN;
    return (wb - wa) / ((double)len - u);
}

double web_lane_parallelism(const web_runix *r, uint32_t slot, int64_t a, int64_t b)
{
    const web_lane *l = &r->lanes[slot];
    if (!l->work)
        return NAN;
    if (b <= a)
        b = a + 1;
    const analysis_window *w = analysis_windows(r->an) + l->dev->first_window;
    uint64_t n = l->dev->nwindows, la = windows_before(w, n, 0, a);
    double ua, ub;
    double wa = work_at(l, w, la, a, &ua), wb = work_at(l, w, windows_before(w, n, la, b), b, &ub);
    return parallelism(wa, ua, wb, ub, b - a);
}

void web_lane_parallelism_many(const web_runix *r, uint32_t slot, const int64_t *T, uint32_t W,
                               double *out)
{
    const web_lane *l = &r->lanes[slot];
    for (uint32_t j = 0; !l->work && j < W; j++)
        out[j] = NAN;
    if (!l->work || !W)
        return;
    const analysis_window *w = analysis_windows(r->an) + l->dev->first_window;
    uint64_t n = l->dev->nwindows, lo = windows_before(w, n, 0, T[0]);
    double ua, wa = work_at(l, w, lo, T[0], &ua);
    for (uint32_t j = 0; j < W; j++) {
        if (T[j + 1] <= T[j]) { /* a pixel of no length: [T[j], T[j] + 1), the next edge T[j] */
            out[j] = web_lane_parallelism(r, slot, T[j], T[j + 1]);
            continue;
        }
        lo = windows_before(w, n, lo, T[j + 1]);
        double ub, wb = work_at(l, w, lo, T[j + 1], &ub);
        out[j] = parallelism(wa, ua, wb, ub, T[j + 1] - T[j]);
        wa = wb, ua = ub;
    }
}

/* ---------------------------------------------------------------- GET /api/range */

/* What the range holds of one process or one name. */
typedef struct range_acc {
    uint64_t kernels; /* overlapping the range */
    int64_t ns;       /* their time inside */
    double ref_ns;    /* time inside with a stretch, at that stretch: its solo work */
    int64_t with_ns;  /* time inside of the kernels with a stretch */
} range_acc;

static void acc_add(range_acc *a, int64_t ns, float x)
{
    a->kernels++;
    a->ns += ns;
    if (isfinite(x) && x > 0) {
        a->ref_ns += (double)ns / x;
        a->with_ns += ns;
    }
}

/* acc_stretch: the stretch of a set as the view defines it (view/README.md): a ratio of sums,
 * the time inside over the solo work in it, over the kernels with a stretch, and only when those
 * hold at least min_cov of the time inside; NaN otherwise. */
static double acc_stretch(const range_acc *a, double min_cov)
{
    if (a->with_ns <= 0 || a->ref_ns <= 0 || (double)a->with_ns < min_cov * (double)a->ns)
        return NAN;
    return (double)a->with_ns / a->ref_ns;
}

static void emit_acc(web_buf *b, const range_acc *a, double min_cov, int scanned)
{
    web_buf_str(b, ",\"kernels\":");
    web_buf_i64(b, (int64_t)a->kernels);
    web_buf_str(b, ",\"ns\":");
    web_buf_i64(b, a->ns);
    web_buf_str(b, ",\"stretch\":");
    web_buf_num(b, scanned ? acc_stretch(a, min_cov) : NAN);
}

/* A name with kernels in the range, for sorting. */
typedef struct name_rank {
    int64_t ns;    /* its time inside */
    uint32_t name; /* string index */
} name_rank;

/* name_cmp: by time inside, most first, then by string index. */
static int name_cmp(const void *pa, const void *pb)
{
    const name_rank *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

/* first_start: the first kernel of the run (sorted by start) that starts at or after T. */
static uint64_t first_start(const store_run *run, int64_t T)
{
    uint64_t lo = 0, hi = run->nkernels;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (run->kernels[mid].start < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The tallies of one range query. */
typedef struct range_sum {
    const web_runix *r;
    const uint8_t *rowsel;                 /* nrows flags, or NULL: every row */
    int64_t a, e;                          /* absolute */
    range_acc *proc;                       /* nprocesses */
    range_acc *name;                       /* nstrings */
    range_acc verdict[ANALYSIS_NVERDICTS]; /* by each kernel's verdict (its window's) */
    range_acc all;
    uint64_t *hint; /* nlanes: where each lane's window search starts (kernels come in order) */
} range_sum;

/* range_add: kernel k's time inside [a, e) into its process's, its name's, its verdict's and the
 * range's tallies, when it is drawn in the range (web_kernel_in) and its row is selected. */
static void range_add(range_sum *t, uint64_t k)
{
    const web_runix *r = t->r;
    const store_run *run = r->run;
    const store_kernel *kk = &run->kernels[k];
    if (!web_kernel_in(kk, t->a, t->e))
        return;
    uint32_t row = r->stream_row[WEB_ROW_KERNELS][kk->stream];
    if (t->rowsel && !t->rowsel[row])
        return;
    int64_t s = kk->start > t->a ? kk->start : t->a, f = kk->end < t->e ? kk->end : t->e;
    int64_t ns = f > s ? f - s : 0;
    float x = analysis_stretch(r->an)[k];
    uint32_t lane = r->rows[row].slot;
    analysis_verdict v = web_window_verdict(
        web_kernel_window_from(r, lane, kk, &t->hint[lane < r->nlanes ? lane : 0]));
    acc_add(&t->proc[r->rows[row].process], ns, x);
    acc_add(&t->name[run->launches[kk->launch].name], ns, x);
    acc_add(&t->verdict[v], ns, x);
    acc_add(&t->all, ns, x);
}

/* A name of the other kinds' records (copies, API calls, NVTX ranges) in the selected rows. */
typedef struct item_name {
    int kind;
    const char *text; /* the run's string, or copy_text */
    char copy_text[48];
    uint32_t key; /* string index; copies: type << 16 | kind */
    uint64_t count;
    int64_t ns;
} item_name;

/* item_tally: the records of the selected rows of the other kinds overlapping [a, e), per kind
 * and name: a list (*pItems, *pN) grown as names come. At most scan_max records are read; 1 when
 * more would be (the list then partial), 0 when all were, -1 when out of memory. */
static int item_tally(const range_sum *t, uint64_t scan_max, item_name **pItems, uint32_t *pN)
{
    const web_runix *r = t->r;
    const store_run *run = r->run;
    uint32_t cap = 0, n = 0, hcap = 64;
    item_name *it = NULL;
    uint32_t *slot = calloc(hcap, sizeof *slot); /* open addressing: index + 1 into it, 0 free */
    uint64_t read = 0;
    int partial = 0;
    if (!slot)
        return -1;
    for (uint32_t ri = 0; ri < r->nrows && t->rowsel; ri++) {
        const web_row *row = &r->rows[ri];
        if (!t->rowsel[ri] || row->kind == WEB_ROW_KERNELS)
            continue;
        const web_items *ik = &r->items[row->kind];
        for (uint32_t l = 0; l < row->nlev; l++) {
            const web_ivl *v = &row->lev[l];
            uint32_t from = web_ivl_scan_from(v, t->a), to = web_ivl_at(v, t->e).pos;
            if (read + (to - from) > scan_max) {
                partial = 1;
                continue;
            }
            read += to - from;
            for (uint32_t p = from; p < to; p++) {
                uint64_t id = web_ivl_item(v, p); /* its position in the run's array */
                int64_t s = web_item_start(ik, id), f = web_item_end(ik, id);
                if (!web_span_in(s, f, t->a, t->e))
                    continue;
                int64_t ss = s > t->a ? s : t->a, ff = f < t->e ? f : t->e;
                uint32_t key;
                if (row->kind == WEB_ROW_COPIES)
                    key = (uint32_t)run->copies[id].type << 16 | run->copies[id].kind;
                else
                    key = row->kind == WEB_ROW_API ? run->apis[id].name : run->ranges[id].name;
                uint32_t h = (key * 2654435761u ^ (uint32_t)row->kind) & (hcap - 1), k;
                while ((k = slot[h]) && !(it[k - 1].kind == row->kind && it[k - 1].key == key))
                    h = (h + 1) & (hcap - 1);
                if (k) {
                    k--;
                } else {
                    if (n == cap) {
                        cap = cap ? 2 * cap : 16;
                        item_name *g = realloc(it, sizeof *g * cap);
                        if (!g) {
                            free(it);
                            free(slot);
                            return -1;
                        }
                        it = g;
                    }
                    if (2 * (n + 1) > hcap) { /* the table at most half full: grow it */
                        uint32_t nc = hcap * 2, *ns = calloc(nc, sizeof *ns);
                        if (!ns) {
                            free(it);
                            free(slot);
                            return -1;
                        }
                        for (uint32_t j = 0; j < n; j++) {
                            uint32_t g =
                                (it[j].key * 2654435761u ^ (uint32_t)it[j].kind) & (nc - 1);
                            while (ns[g])
                                g = (g + 1) & (nc - 1);
                            ns[g] = j + 1;
                        }
                        free(slot);
                        slot = ns;
                        hcap = nc;
                        h = (key * 2654435761u ^ (uint32_t)row->kind) & (hcap - 1);
                        while (slot[h])
                            h = (h + 1) & (hcap - 1);
                    }
                    slot[h] = n + 1;
                    k = n;
                    it[n] = (item_name){.kind = row->kind, .key = key};
                    if (row->kind == WEB_ROW_COPIES) {
                        view_copy_name(&run->copies[id], it[n].copy_text, sizeof it[n].copy_text);
                        it[n].text = NULL;
                    } else {
                        it[n].text = key < run->nstrings ? run->strings[key].demangled : "";
                    }
                    n++;
                }
                it[k].count++;
                it[k].ns += ff > ss ? ff - ss : 0;
            }
        }
    }
    free(slot);
    *pItems = it;
    *pN = n;
    return partial;
}

/* item_cmp: by time inside, most first, then by kind. */
static int item_cmp(const void *pa, const void *pb)
{
    const item_name *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return a->kind - b->kind;
}

int web_range(const web_runix *r, unsigned run_id, int64_t t0, int64_t t1, const uint8_t *rowsel,
              uint64_t scan_max, uint32_t names_max, web_buf *b)
{
    const store_run *run = r->run;
    double min_cov = analysis_get_options(r->an)->min_reference_coverage;
    int64_t a = r->origin + t0, e = r->origin + t1;
    size_t np = run->nprocesses ? run->nprocesses : 1, nn = run->nstrings ? run->nstrings : 1;
    range_sum t = {.r = r, .rowsel = rowsel, .a = a, .e = e};
    t.proc = calloc(np, sizeof *t.proc);
    t.hint = calloc(r->nlanes ? r->nlanes : 1, sizeof *t.hint);
    name_rank *rank = NULL;
    item_name *items = NULL;
    uint32_t nitems = 0;
    int rc = WEB_ENOMEM;
    if (!t.proc || !t.hint)
        goto out;
    /* counts and time inside per process from the rows' grids: exact, O(rows) */
    uint64_t total = 0;
    uint32_t nsel = 0;
    const web_items *ki = &r->items[WEB_ROW_KERNELS];
    for (uint32_t i = ki->first; i < ki->first + ki->nrows; i++) { /* the kernel rows */
        const web_row *row = &r->rows[i];
        if (rowsel && !rowsel[i])
            continue;
        web_ivl_pt pa = web_ivl_at(&row->lev[0], a), pb = web_ivl_at(&row->lev[0], e);
        uint64_t n = pb.pos - pa.pos + pa.running;
        t.proc[row->process].kernels += n;
        t.proc[row->process].ns += pb.busy - pa.busy;
        total += n;
    }
    for (uint32_t i = 0; rowsel && i < r->nrows; i++)
        nsel += rowsel[i] != 0;
    int scanned = total <= scan_max;
    uint32_t nnames = 0;
    if (scanned) { /* per name and verdict, and the stretches: each kernel in range once */
        t.name = calloc(nn, sizeof *t.name);
        if (!t.name)
            goto out;
        memset(t.proc, 0, sizeof *t.proc * np);
        /* those that started before a, from each row's grid (a bucket's worth each) */
        for (uint32_t i = ki->first; i < ki->first + ki->nrows; i++) {
            const web_row *row = &r->rows[i];
            if (rowsel && !rowsel[i])
                continue;
            uint32_t from = web_ivl_scan_from(&row->lev[0], a),
                     to = web_ivl_at(&row->lev[0], a).pos;
            for (uint32_t p = from; p < to; p++)
                range_add(&t, ki->idx[row->off + p]);
        }
        memset(t.hint, 0, sizeof *t.hint * (r->nlanes ? r->nlanes : 1));
        /* then those that start inside, in one pass over the run's kernels (sorted by start) */
        for (uint64_t k = first_start(run, a); k < run->nkernels && run->kernels[k].start < e; k++)
            range_add(&t, k);
        for (uint32_t i = 0; i < run->nstrings; i++)
            nnames += t.name[i].kernels > 0;
        rank = malloc(sizeof *rank * (nnames ? nnames : 1));
        if (!rank)
            goto out;
        nnames = 0;
        for (uint32_t i = 0; i < run->nstrings; i++)
            if (t.name[i].kernels)
                rank[nnames++] = (name_rank){t.name[i].ns, i};
        qsort(rank, nnames, sizeof *rank, name_cmp);
    } else {
        for (size_t p = 0; p < np; p++)
            t.all.kernels += t.proc[p].kernels, t.all.ns += t.proc[p].ns;
    }
    int items_partial = item_tally(&t, scan_max, &items, &nitems);
    if (items_partial < 0)
        goto out;
    if (nitems) /* items is NULL without any */
        qsort(items, nitems, sizeof *items, item_cmp);
    web_buf_str(b, "{\"run\":");
    web_buf_i64(b, run_id);
    web_buf_str(b, ",\"t0\":");
    web_buf_i64(b, t0);
    web_buf_str(b, ",\"t1\":");
    web_buf_i64(b, t1);
    web_buf_str(b, ",\"rows\":");
    if (rowsel)
        web_buf_i64(b, nsel);
    else
        web_buf_str(b, "null");
    emit_acc(b, &t.all, min_cov, scanned);
    web_buf_str(b, ",\"truncated\":");
    web_buf_str(b, scanned ? "false" : "true");
    web_buf_str(b, ",\"processes\":[");
    int first = 1;
    for (uint32_t p = 0; p < run->nprocesses; p++) {
        if (!t.proc[p].kernels)
            continue;
        web_buf_str(b, first ? "{\"process\":" : ",{\"process\":");
        first = 0;
        web_buf_i64(b, p);
        web_buf_str(b, ",\"pid\":");
        web_buf_i64(b, run->processes[p].pid);
        emit_acc(b, &t.proc[p], min_cov, scanned);
        web_buf_ch(b, '}');
    }
    web_buf_str(b, "],\"by_verdict\":[");
    first = 1;
    for (int v = 0; v < ANALYSIS_NVERDICTS && scanned; v++) {
        if (!t.verdict[v].kernels)
            continue;
        web_buf_str(b, first ? "{\"verdict\":" : ",{\"verdict\":");
        first = 0;
        web_buf_i64(b, v);
        emit_acc(b, &t.verdict[v], min_cov, 1);
        web_buf_ch(b, '}');
    }
    web_buf_str(b, "],\"nnames\":");
    web_buf_i64(b, nnames);
    web_buf_str(b, ",\"names\":[");
    for (uint32_t i = 0; i < nnames && i < names_max; i++) {
        const store_string *s = &run->strings[rank[i].name];
        web_buf_str(b, i ? ",{\"name\":" : "{\"name\":");
        web_buf_json_str(b, s->demangled);
        emit_acc(b, &t.name[rank[i].name], min_cov, 1);
        web_buf_ch(b, '}');
    }
    static const char *const kind_word[WEB_NROW_KINDS] = {"kernel", "copy", "api", "nvtx"};
    web_buf_str(b, "],\"items_truncated\":");
    web_buf_str(b, items_partial ? "true" : "false");
    web_buf_str(b, ",\"items\":[");
    for (uint32_t i = 0; i < nitems && i < names_max; i++) {
        web_buf_str(b, i ? ",{\"kind\":\"" : "{\"kind\":\"");
        web_buf_str(b, kind_word[items[i].kind]);
        web_buf_str(b, "\",\"name\":");
        web_buf_json_str(b, items[i].text ? items[i].text : items[i].copy_text);
        web_buf_str(b, ",\"count\":");
        web_buf_i64(b, (int64_t)items[i].count);
        web_buf_str(b, ",\"ns\":");
        web_buf_i64(b, items[i].ns);
        web_buf_ch(b, '}');
    }
    web_buf_str(b, "],\"lanes\":[");
    for (uint32_t i = 0; i < r->nlanes; i++) {
        const web_lane *l = &r->lanes[i];
        web_buf_str(b, i ? ",{\"lane\":" : "{\"lane\":");
        web_buf_i64(b, i);
        web_buf_str(b, ",\"verdict_ns\":[");
        for (int v = 0; v < ANALYSIS_NVERDICTS; v++) {
            int64_t ns =
                l->win[v].n ? web_ivl_at(&l->win[v], e).busy - web_ivl_at(&l->win[v], a).busy : 0;
            const web_ivl *tt = &l->win[WEB_WIN_TURNS]; /* took turns: time-sliced too */
            if (v == ANALYSIS_TIME_SLICED && tt->n)
                ns += web_ivl_at(tt, e).busy - web_ivl_at(tt, a).busy;
            if (v)
                web_buf_ch(b, ',');
            web_buf_i64(b, ns);
        }
        web_buf_str(b, "],\"parallelism\":");
        web_buf_num(b, web_lane_parallelism(r, i, a, e));
        web_buf_ch(b, '}');
    }
    web_buf_str(b, "]}");
    rc = b->failed ? WEB_ENOMEM : WEB_OK;
out:
    free(t.proc);
    free(t.name);
    free(t.hint);
    free(rank);
    free(items);
    return rc;
}
