/* web_buf.c: the growing JSON text buffer of the hot endpoints (timeline, find): appending
 * numbers and escaped strings without building a jansson tree of millions of nodes; and the
 * reference-counted blobs that prebuilt answers are shared in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "web_int.h"

void web_buf_room(web_buf *b, size_t n)
{
    if (b->failed || b->len + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > cap)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    b->s = p;
    b->cap = cap;
}

char *web_buf_reserve(web_buf *b, size_t n)
{
    web_buf_room(b, n);
    if (b->failed)
        return NULL;
    char *at = b->s + b->len;
    b->len += n;
    b->s[b->len] = 0;
    return at;
}

void web_buf_raw(web_buf *b, const char *s, size_t n)
{
    char *p = web_buf_reserve(b, n);
    if (p)
        memcpy(p, s, n);
}

void web_buf_str(web_buf *b, const char *s)
{
    web_buf_raw(b, s, strlen(s));
}

void web_buf_i64(web_buf *b, int64_t v)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    web_buf_raw(b, p, (size_t)(tmp + sizeof tmp - p));
}

void web_buf_num(web_buf *b, double v)
{
    if (!isfinite(v)) {
        web_buf_raw(b, "null", 4);
        return;
    }
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%.4g", v);
    web_buf_raw(b, tmp, (size_t)n);
}

/* Appends n bytes to the web_buf ctx (view_json_quote()'s sink). */
static void put_buf(void *ctx, const char *p, size_t n)
{
    web_buf_raw(ctx, p, n);
}

void web_buf_json_str(web_buf *b, const char *s)
{
    /* plain printable ASCII (most names) is its own JSON text: one copy, not a call per byte */
    size_t n = 0;
    while (s && s[n] >= 0x20 && s[n] < 0x7f && s[n] != '"' && s[n] != '\\')
        n++;
    if (s && !s[n]) {
        char *p = web_buf_reserve(b, n + 2);
        if (p) {
            p[0] = '"';
            memcpy(p + 1, s, n);
            p[n + 1] = '"';
        }
        return;
    }
    view_json_quote(s, put_buf, b);
}

void web_buf_fixed2(web_buf *b, double v)
{
    if (!isfinite(v) || v < 0 || v > 1e15) {
        web_buf_num(b, v);
        return;
    }
    int64_t c = (int64_t)llround(v * 100);
    web_buf_i64(b, c / 100);
    if (c % 100) {
        char d[3] = {'.', (char)('0' + c % 100 / 10), (char)('0' + c % 10)};
        web_buf_raw(b, d, d[2] == '0' ? 2 : 3);
    }
}

web_blob *web_blob_new(const char *s, size_t len)
{
    web_blob *b = malloc(sizeof *b + len + 1);
    if (!b)
        return NULL;
    b->refs = 1;
    b->len = len;
    if (len)
        memcpy(b->data, s, len);
    b->data[len] = 0;
    return b;
}

web_blob *web_blob_from_buf(web_buf *b)
{
    web_blob *blob = NULL;
    if (!b->failed && b->len >= WEB_BLOB_HEAD) {
        /* its room beyond the text given back (shrinking keeps the place: no copy) */
        char *s = b->len + 1 < b->cap ? realloc(b->s, b->len + 1) : NULL;
        blob = (web_blob *)(s ? s : b->s); /* malloc'd: aligned for it; s[len] is its NUL */
        blob->refs = 1;
        blob->len = b->len - WEB_BLOB_HEAD;
    } else {
        free(b->s);
    }
    *b = (web_buf){0};
    return blob;
}

void web_blob_hold(web_blob *b)
{
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void web_blob_release(void *p)
{
    web_blob *b = p;
    if (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(b);
}
