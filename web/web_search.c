/* web_search.c: GET /api/search, the search over every record of a run (kernels, copies and
 * memsets, CUDA API calls, NVTX ranges) by name: how many match, per kind and per name, and the
 * matches in one order (by start, then kind, then id), so that the page can say "k of N" and step
 * to the k-th. Each kind's array is sorted by start (store_run_finish()): the matches are counted
 * in one pass over the records and listed by merging the kinds in a second pass that stops after
 * the last one listed. A name is tested once per string (or per copy type and kind), not per
 * record. web/API.md documents the answer. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "view.h"
#include "web_int.h"

#define COPY_NAMES_MAX                                                                             \
    64 /* distinct copy names (type and kind) told apart; more share the last                      \
        */

/* A name a copy shows ("Memcpy HtoD"), by its type and kind, with whether it matches. */
typedef struct copy_name {
    uint32_t key; /* type << 16 | kind */
    uint8_t match;
    uint64_t count; /* matches of this name (in the range) */
    char text[48];
} copy_name;

typedef struct search {
    const web_runix *r;
    const char *q;
    int exact;
    unsigned kinds;     /* bit per web_row_kind searched */
    int64_t a, b;       /* absolute range: records overlapping it */
    uint8_t *match;     /* nstrings: 0 not tested yet, 1 no, 2 yes */
    uint64_t *count[4]; /* per kind, nstrings: matches of each name (NULL for copies) */
    copy_name copy[COPY_NAMES_MAX];
    unsigned ncopy;
} search;

/* name_ok: 1 when text matches the query: contains it (case-insensitive for ASCII), or equals it
 * with exact. */
static int name_ok(const search *s, const char *text)
{
    if (!text)
        return 0;
    if (s->exact)
        return strcasecmp(text, s->q) == 0;
    size_t n = strlen(s->q);
    for (; *text; text++)
        if (strncasecmp(text, s->q, n) == 0)
            return 1;
    return 0;
}

/* string_match: whether string i (its demangled form, or its text when mangled) matches. */
static int string_match(search *s, store_idx i)
{
    const store_run *run = s->r->run;
    if (i >= run->nstrings)
        return 0;
    if (!s->match[i]) {
        const store_string *st = &run->strings[i];
        s->match[i] =
            name_ok(s, st->demangled) || (st->text != st->demangled && name_ok(s, st->text)) ? 2
                                                                                             : 1;
    }
    return s->match[i] == 2;
}

/* copy_slot: the entry of copy c's name in s->copy (made on first sight). */
static copy_name *copy_slot(search *s, const store_copy *c)
{
    uint32_t key = (uint32_t)c->type << 16 | c->kind;
    for (unsigned i = 0; i < s->ncopy; i++)
        if (s->copy[i].key == key)
            return &s->copy[i];
    if (s->ncopy == COPY_NAMES_MAX)
        return &s->copy[COPY_NAMES_MAX - 1];
    copy_name *e = &s->copy[s->ncopy++];
    e->key = key;
    view_copy_name(c, e->text, sizeof e->text);
    e->match = (uint8_t)name_ok(s, e->text);
    return e;
}

/* name_of: the string (kernels, API calls, NVTX ranges) of record i of a kind. */
static store_idx name_of(const store_run *run, int kind, uint64_t i)
{
    switch (kind) {
    case WEB_ROW_KERNELS: return run->launches[run->kernels[i].launch].name;
    case WEB_ROW_API: return run->apis[i].name;
    default: return run->ranges[i].name;
    }
}

/* hit: whether record i of kind matches and overlaps the range (counting it when `tally`). */
static int hit(search *s, int kind, uint64_t i, int tally)
{
    const web_items *it = &s->r->items[kind];
    if (!web_span_in(web_item_start(it, i), web_item_end(it, i), s->a, s->b))
        return 0;
    if (kind == WEB_ROW_COPIES) {
        copy_name *c = copy_slot(s, &s->r->run->copies[i]);
        if (c->match && tally)
            c->count++;
        return c->match;
    }
    store_idx n = name_of(s->r->run, kind, i);
    if (!string_match(s, n))
        return 0;
    if (tally)
        s->count[kind][n]++;
    return 1;
}

/* next_hit: the first position >= *pos of kind that matches (n when none), moved there. */
static uint64_t next_hit(search *s, int kind, uint64_t *pos)
{
    const web_items *it = &s->r->items[kind];
    while (*pos < it->n && web_item_start(it, *pos) < s->b && !hit(s, kind, *pos, 0))
        (*pos)++;
    if (*pos < it->n && web_item_start(it, *pos) >= s->b)
        *pos = it->n;
    return *pos;
}

static const char *const kind_name[WEB_NROW_KINDS] = {"kernel", "copy", "api", "nvtx"};

/* A name in the answer's list, with its kind and count. */
typedef struct name_row {
    int kind;
    const char *text;
    uint64_t count;
} name_row;

static int name_row_cmp(const void *pa, const void *pb)
{
    const name_row *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    return strcmp(a->text, b->text);
}

int web_search(const web_runix *r, unsigned run_id, const char *q, int exact, unsigned kinds,
               int64_t t0, int has0, int64_t t1, int has1, int64_t from, int64_t at, int has_at,
               uint32_t limit, uint32_t names_max, web_buf *b)
{
    const store_run *run = r->run;
    search s = {.r = r, .q = q, .exact = exact, .kinds = kinds};
    s.a = has0 ? r->origin + t0 : INT64_MIN;
    s.b = has1 ? r->origin + t1 : INT64_MAX;
    s.match = calloc(run->nstrings ? run->nstrings : 1, 1);
    int rc = WEB_ENOMEM;
    name_row *rows = NULL;
    int64_t *col = NULL;
    if (!s.match)
        goto out;
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        if (k != WEB_ROW_COPIES && (kinds & 1u << k) &&
            !(s.count[k] = calloc(run->nstrings ? run->nstrings : 1, sizeof **s.count)))
            goto out;
    /* pass 1: the counts, per kind and name, and how many start before `at` */
    uint64_t by_kind[WEB_NROW_KINDS] = {0}, total = 0, before = 0;
    int64_t at_abs = r->origin + at;
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        const web_items *it = &r->items[k];
        if (!(kinds & 1u << k))
            continue;
        for (uint64_t i = 0; i < it->n && web_item_start(it, i) < s.b; i++)
            if (hit(&s, k, i, 1)) {
                by_kind[k]++;
                before += has_at && web_item_start(it, i) < at_abs;
            }
        total += by_kind[k];
    }
    uint64_t first = has_at ? before : (uint64_t)from;
    /* pass 2: the matches [first, first + limit) in order, the kinds merged */
    uint64_t want = first < total ? total - first : 0;
    if (want > limit)
        want = limit;
    col = malloc(sizeof *col * 6 * (want ? want : 1));
    if (!col)
        goto out;
    uint64_t pos[WEB_NROW_KINDS] = {0}, seen = 0, n = 0;
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        pos[k] = kinds & 1u << k ? 0 : r->items[k].n;
    while (n < want) {
        int best = -1;
        int64_t bs = 0;
        for (int k = 0; k < WEB_NROW_KINDS; k++) {
            if (next_hit(&s, k, &pos[k]) >= r->items[k].n)
                continue;
            int64_t st = web_item_start(&r->items[k], pos[k]);
            if (best < 0 || st < bs) {
                best = k;
                bs = st;
            }
        }
        if (best < 0)
            break;
        uint64_t i = pos[best]++;
        if (seen++ < first)
            continue;
        const web_items *it = &r->items[best];
        int64_t st = web_item_start(it, i), en = web_item_end(it, i);
        uint32_t row = web_item_row(r, best, i);
        col[n] = best;
        col[want + n] = (int64_t)i;
        col[2 * want + n] = row == UINT32_MAX ? -1 : (int64_t)row;
        col[3 * want + n] = web_item_depth(r, best, i);
        col[4 * want + n] = st - r->origin;
        col[5 * want + n++] = en > st ? en - st : 0;
    }
    /* the names matched, most matches first */
    size_t nnames = 0, cap = 0;
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        if (!(kinds & 1u << k))
            continue;
        if (k == WEB_ROW_COPIES) {
            for (unsigned c = 0; c < s.ncopy; c++)
                nnames += s.copy[c].count > 0;
            continue;
        }
        for (uint32_t i = 0; i < run->nstrings; i++)
            nnames += s.count[k][i] > 0;
    }
    rows = malloc(sizeof *rows * (nnames ? nnames : 1));
    if (!rows)
        goto out;
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        if (!(kinds & 1u << k))
            continue;
        if (k == WEB_ROW_COPIES) {
            for (unsigned c = 0; c < s.ncopy; c++)
                if (s.copy[c].count)
                    rows[cap++] = (name_row){k, s.copy[c].text, s.copy[c].count};
            continue;
        }
        for (uint32_t i = 0; i < run->nstrings; i++)
            if (s.count[k][i])
                rows[cap++] = (name_row){k, run->strings[i].demangled, s.count[k][i]};
    }
    qsort(rows, nnames, sizeof *rows, name_row_cmp);
    web_buf_str(b, "{\"run\":");
    web_buf_i64(b, run_id);
    web_buf_str(b, ",\"q\":");
    web_buf_json_str(b, q);
    web_buf_str(b, ",\"total\":");
    web_buf_i64(b, (int64_t)total);
    web_buf_str(b, ",\"by_kind\":{");
    for (int k = 0; k < WEB_NROW_KINDS; k++) {
        web_buf_str(b, k ? ",\"" : "\"");
        web_buf_str(b, kind_name[k]);
        web_buf_str(b, "\":");
        web_buf_i64(b, (int64_t)by_kind[k]);
    }
    web_buf_str(b, "},\"first\":");
    web_buf_i64(b, (int64_t)first);
    web_buf_str(b, ",\"nnames\":");
    web_buf_i64(b, (int64_t)nnames);
    web_buf_str(b, ",\"names\":[");
    for (size_t i = 0; i < nnames && i < names_max; i++) {
        web_buf_str(b, i ? ",{\"kind\":\"" : "{\"kind\":\"");
        web_buf_str(b, kind_name[rows[i].kind]);
        web_buf_str(b, "\",\"name\":");
        web_buf_json_str(b, rows[i].text);
        web_buf_str(b, ",\"count\":");
        web_buf_i64(b, (int64_t)rows[i].count);
        web_buf_ch(b, '}');
    }
    web_buf_str(b, "],\"items\":{");
    static const char *const field[6] = {"kind", "id", "row", "depth", "s", "d"};
    for (int f = 0; f < 6; f++) {
        web_buf_str(b, f ? "],\"" : "\"");
        web_buf_str(b, field[f]);
        web_buf_str(b, "\":[");
        for (uint64_t i = 0; i < n; i++) {
            if (i)
                web_buf_ch(b, ',');
            if (f == 0) {
                web_buf_ch(b, '"');
                web_buf_str(b, kind_name[col[i]]);
                web_buf_ch(b, '"');
            } else if (f == 2 && col[2 * want + i] < 0) {
                web_buf_str(b, "null"); /* a record without a row (a run without kernels) */
            } else {
                web_buf_i64(b, col[(uint64_t)f * want + i]);
            }
        }
    }
    web_buf_str(b, "],\"name\":[");
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)col[i];
        uint64_t id = (uint64_t)col[want + i];
        char text[48];
        if (i)
            web_buf_ch(b, ',');
        if (k == WEB_ROW_COPIES)
            web_buf_json_str(b, view_copy_name(&run->copies[id], text, sizeof text));
        else {
            store_idx nm = name_of(run, k, id);
            web_buf_json_str(b, nm < run->nstrings ? run->strings[nm].demangled : "");
        }
    }
    web_buf_str(b, "]}}");
    rc = b->failed ? WEB_ENOMEM : WEB_OK;
out:
    free(s.match);
    for (int k = 0; k < WEB_NROW_KINDS; k++)
        free(s.count[k]);
    free(rows);
    free(col);
    return rc;
}
