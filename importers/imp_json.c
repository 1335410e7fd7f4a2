/* importers/imp_json.c: a streaming JSON reader with bounded memory, for traces of hundreds of MB.
 * The caller walks the outer structure (imp_json_peek/expect/skip) and parses one element at a
 * time (one trace event) into a small arena that is reset between elements. Every token has a size
 * limit (IMP_JSON_MAX_STRING) and every element a node limit, so a 100 MB string or a deeply
 * nested value fails with a line number instead of eating memory. Numbers keep their text, so
 * microsecond timestamps with fractions convert to ns exactly. Input is read through zlib, which
 * reads gzip and plain files alike. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "imp_int.h"

typedef struct jnode {
    uint8_t type;         /* imp_jtype */
    uint32_t text;        /* pool offset of a string/number's text */
    uint32_t len;         /* children of an array/object; bytes of a string/number */
    uint32_t key;         /* pool offset of the member's key, UINT32_MAX outside objects */
    uint32_t first, next; /* first child; next sibling (IMP_JNONE ends) */
} jnode;

struct imp_json {
    imp_reader *r; /* for errors (row = line) */
    gzFile gz;
    uint64_t size; /* file size in bytes */
    unsigned char buf[1 << 16];
    size_t pos, len;
    int eof;
    uint64_t offset; /* gzoffset() after the last fill: asked once per event, a syscall */
    jnode *nodes;
    uint32_t nnodes, capnodes;
    char *pool;
    size_t npool, cappool;
};

int imp_json_open(imp_reader *r, imp_json **pj)
{
    imp_json *j = calloc(1, sizeof *j);
    *pj = j;
    if (!j)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    j->r = r;
    r->row = 1;
    struct stat sb;
    if (stat(r->path, &sb) == 0)
        j->size = (uint64_t)sb.st_size;
    if (!(j->gz = gzopen(r->path, "rb")))
        return imp_fail(r, STORE_EIO, "cannot open: %s", strerror(errno ? errno : ENOMEM));
    gzbuffer(j->gz, 1 << 17);
    return 0;
}

void imp_json_close(imp_json *j)
{
    if (!j)
        return;
    if (j->gz)
        gzclose(j->gz);
    free(j->nodes);
    free(j->pool);
    free(j);
}

uint64_t imp_json_offset(imp_json *j)
{
    return j->offset;
}

uint64_t imp_json_size(imp_json *j)
{
    return j->size;
}

static int fail(imp_json *j, const char *fmt, const char *arg)
{
    return imp_fail(j->r, STORE_EFORMAT, fmt, arg);
}

/* zlib's message for the stream, without the path it starts with. */
static const char *gz_message(imp_json *j, int *zerr)
{
    const char *msg = gzerror(j->gz, zerr);
    size_t pl = strlen(j->r->path);
    if (strncmp(msg, j->r->path, pl) == 0 && msg[pl] == ':')
        msg += pl + (msg[pl + 1] == ' ' ? 2 : 1);
    return msg;
}

/* Refills the buffer; 0 at the end of input, -1 on a read error (reported). */
static int fill(imp_json *j)
{
    if (j->eof)
        return 0;
    int n = gzread(j->gz, j->buf, sizeof j->buf);
    if (n < 0) {
        int zerr;
        return fail(j, "corrupt gzip data: %s", gz_message(j, &zerr)), -1;
    }
    if (n == 0) {
        int zerr;
        const char *msg = gz_message(j, &zerr);
        if (zerr == Z_BUF_ERROR) /* the stream ended before its gzip trailer */
            return fail(j, "truncated gzip data: %s", msg), -1;
        if (zerr != Z_OK)
            return fail(j, "corrupt gzip data: %s", msg), -1;
        j->eof = 1;
        return 0;
    }
    j->pos = 0;
    j->len = (size_t)n;
    z_off_t off = gzoffset(j->gz);
    j->offset = off > 0 ? (uint64_t)off : j->offset;
    return 1;
}

/* The next raw byte, consumed; -1 at the end, -2 after a read error. */
static inline int getb(imp_json *j)
{
    if (j->pos == j->len) {
        int f = fill(j);
        if (f <= 0)
            return f < 0 ? -2 : -1;
    }
    int c = j->buf[j->pos++];
    if (c == '\n')
        j->r->row++;
    return c;
}

static inline int peekb(imp_json *j)
{
    if (j->pos == j->len) {
        int f = fill(j);
        if (f <= 0)
            return f < 0 ? -2 : -1;
    }
    return j->buf[j->pos];
}

static int skip_ws(imp_json *j)
{
    for (;;) {
        int c = peekb(j);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return c;
        getb(j);
    }
}

int imp_json_peek(imp_json *j)
{
    int c = skip_ws(j);
    return c == -2 ? -1 : c;
}

static const char *show(int c, char *buf)
{
    if (c < 0)
        return "the end of the file";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 8, "'%c'", c);
    else
        snprintf(buf, 8, "0x%02x", (unsigned)c & 0xffu);
    return buf;
}

int imp_json_expect(imp_json *j, int want)
{
    int c = skip_ws(j);
    if (c == -2)
        return STORE_EFORMAT;
    if (c != want) {
        char b[8], msg[64];
        snprintf(msg, sizeof msg, "invalid JSON: expected '%c', found %%s", want);
        return fail(j, msg, show(c, b));
    }
    getb(j);
    return 0;
}

void imp_json_reset(imp_json *j)
{
    j->nnodes = 0;
    j->npool = 0;
}

static int pool_grow(imp_json *j, size_t need);

static inline int pool_put(imp_json *j, int c)
{
    int rc;
    if (j->npool == j->cappool && (rc = pool_grow(j, 1)))
        return rc;
    j->pool[j->npool++] = (char)c;
    return 0;
}

/* Makes room for `need` more bytes in the pool. */
static int pool_grow(imp_json *j, size_t need)
{
    while (j->npool + need > j->cappool) {
        size_t cap = j->cappool ? j->cappool * 2 : 1 << 14;
        if (cap > (size_t)UINT32_MAX)
            return fail(j, "%s", "element too large");
        char *g = realloc(j->pool, cap);
        if (!g)
            return imp_fail(j->r, STORE_ENOMEM, "out of memory");
        j->pool = g;
        j->cappool = cap;
    }
    return 0;
}

static int new_node(imp_json *j, imp_jtype type, uint32_t *out)
{
    if (j->nnodes == IMP_JSON_MAX_NODES)
        return fail(j, "%s", "element has more than 1048576 values");
    if (j->nnodes == j->capnodes) {
        uint32_t cap = j->capnodes ? j->capnodes * 2 : 256;
        jnode *g = realloc(j->nodes, (size_t)cap * sizeof *g);
        if (!g)
            return imp_fail(j->r, STORE_ENOMEM, "out of memory");
        j->nodes = g;
        j->capnodes = cap;
    }
    *out = j->nnodes++;
    j->nodes[*out] = (jnode){(uint8_t)type, 0, 0, UINT32_MAX, IMP_JNONE, IMP_JNONE};
    return 0;
}

static int put_utf8(imp_json *j, uint32_t cp, int keep)
{
    unsigned char b[4];
    int n;
    if (cp < 0x80)
        b[0] = (unsigned char)cp, n = 1;
    else if (cp < 0x800)
        b[0] = (unsigned char)(0xC0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        b[0] = (unsigned char)(0xE0 | cp >> 12), b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)), n = 3;
    else
        b[0] = (unsigned char)(0xF0 | cp >> 18), b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F)),
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
        b[3] = (unsigned char)(0x80 | (cp & 0x3F)), n = 4;
    for (int i = 0; keep && i < n; i++)
        if (pool_put(j, b[i]))
            return -1;
    return n;
}

static int hex4(imp_json *j, uint32_t *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        int c = getb(j);
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0)
            return fail(j, "%s", "invalid JSON: bad \\u escape");
        *cp = *cp << 4 | (uint32_t)v;
    }
    return 0;
}

/* Reads a string after its opening quote. keep: store it in the pool (NUL-terminated) at *off. */
static int read_string(imp_json *j, int keep, uint32_t *off, uint32_t *len)
{
    size_t start = j->npool, n = 0;
    for (;;) {
        /* the plain bytes up to the next quote, escape or control byte, at once */
        const unsigned char *b = j->buf + j->pos;
        size_t run = 0, avail = j->len - j->pos;
        while (run < avail && b[run] != '"' && b[run] != '\\' && b[run] >= 0x20)
            run++;
        if (run) {
            if ((n += run) > IMP_JSON_MAX_STRING)
                return fail(j, "%s", "string longer than 1048576 bytes");
            if (keep) {
                if (pool_grow(j, run))
                    return STORE_ENOMEM;
                memcpy(j->pool + j->npool, b, run);
                j->npool += run;
            }
            j->pos += run;
            continue;
        }
        int c = getb(j);
        if (c < 0)
            return c == -2 ? STORE_EFORMAT : fail(j, "%s", "invalid JSON: unterminated string");
        if (c == '"')
            break;
        if (c < 0x20)
            return fail(j, "%s", "invalid JSON: control character in a string");
        if (c == '\\') {
            c = getb(j);
            uint32_t cp;
            switch (c) {
            case '"':
            case '\\':
            case '/': break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u':
                if (hex4(j, &cp))
                    return STORE_EFORMAT;
                if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
                    uint32_t lo;
                    if (getb(j) != '\\' || getb(j) != 'u' || hex4(j, &lo) || lo < 0xDC00 ||
                        lo > 0xDFFF)
                        return fail(j, "%s", "invalid JSON: unpaired surrogate in \\u escape");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp < 0xE000)
                    return fail(j, "%s", "invalid JSON: unpaired surrogate in \\u escape");
                if (cp == 0)
                    cp = 0xFFFD; /* keep strings NUL-free */
                {
                    int w = put_utf8(j, cp, keep);
                    if (w < 0)
                        return STORE_ENOMEM;
                    n += (size_t)w;
                }
                if (n > IMP_JSON_MAX_STRING)
                    return fail(j, "%s", "string longer than 1048576 bytes");
                continue;
            default: return fail(j, "%s", "invalid JSON: bad escape in a string");
            }
        }
        if (++n > IMP_JSON_MAX_STRING)
            return fail(j, "%s", "string longer than 1048576 bytes");
        if (keep && pool_put(j, c))
            return STORE_ENOMEM;
    }
    if (keep) {
        if (pool_put(j, 0))
            return STORE_ENOMEM;
        *off = (uint32_t)start;
        *len = (uint32_t)n;
    }
    return 0;
}

/* Reads a number starting with c (already peeked, not consumed), validating JSON's grammar. */
static int read_number(imp_json *j, int keep, uint32_t *off, uint32_t *len)
{
    size_t start = j->npool, n = 0;
    int state = 0; /* 0 sign, 1 int, 2 frac start, 3 frac, 4 exp sign, 5 exp start, 6 exp */
    int digits = 0, lead_zero = 0;
    for (;;) {
        int c = peekb(j);
        int ok = 0;
        if (c == '-' && (state == 0 || state == 4))
            ok = 1, state = state == 0 ? 1 : 5;
        else if (c == '+' && state == 4)
            ok = 1, state = 5;
        else if (c >= '0' && c <= '9') {
            if (state == 0)
                state = 1;
            if (state == 1 && lead_zero)
                return fail(j, "%s", "invalid JSON: leading zero in a number");
            if (state == 1 && digits == 0 && c == '0')
                lead_zero = 1;
            ok = 1;
            digits++;
            state = state == 2 ? 3 : state == 4 || state == 5 ? 6 : state;
        } else if (c == '.' && state == 1 && digits)
            ok = 1, state = 2, digits = 0;
        else if ((c == 'e' || c == 'E') && (state == 1 || state == 3) && digits)
            ok = 1, state = 4, digits = 0;
        if (!ok)
            break;
        getb(j);
        if (++n > 64)
            return fail(j, "%s", "invalid JSON: number longer than 64 characters");
        if (keep && pool_put(j, c))
            return STORE_ENOMEM;
    }
    if (!digits || state == 2 || state == 4 || state == 5)
        return fail(j, "%s", "invalid JSON: malformed number");
    if (keep) {
        if (pool_put(j, 0))
            return STORE_ENOMEM;
        *off = (uint32_t)start;
        *len = (uint32_t)n;
    }
    return 0;
}

static int read_literal(imp_json *j, const char *word)
{
    for (const char *w = word; *w; w++)
        if (getb(j) != *w)
            return fail(j, "%s", "invalid JSON: unexpected word");
    return 0;
}

/* Parses (keep) or skips one value. Recursion is bounded by IMP_JSON_MAX_DEPTH. */
static int value(imp_json *j, int keep, int depth, uint32_t *out)
{
    char b[8];
    if (depth > IMP_JSON_MAX_DEPTH)
        return fail(j, "%s", "JSON nested deeper than 64 levels");
    int c = skip_ws(j);
    if (c == -2)
        return STORE_EFORMAT;
    uint32_t me = IMP_JNONE;
    int rc;
    switch (c) {
    case '{':
    case '[': {
        int obj = c == '{';
        getb(j);
        if (keep && (rc = new_node(j, obj ? IMP_JOBJ : IMP_JARR, &me)))
            return rc;
        uint32_t last = IMP_JNONE, count = 0;
        if (skip_ws(j) == (obj ? '}' : ']')) {
            getb(j);
            break;
        }
        for (;;) {
            uint32_t key = UINT32_MAX, klen, child;
            if (obj) {
                if ((c = skip_ws(j)) != '"')
                    return c == -2 ? STORE_EFORMAT
                                   : fail(j, "invalid JSON: expected a member name, found %s",
                                          show(c, b));
                getb(j);
                if ((rc = read_string(j, keep, &key, &klen)) || (rc = imp_json_expect(j, ':')))
                    return rc;
            }
            if ((rc = value(j, keep, depth + 1, &child)))
                return rc;
            if (keep) {
                j->nodes[child].key = key;
                if (last == IMP_JNONE)
                    j->nodes[me].first = child;
                else
                    j->nodes[last].next = child;
                last = child;
                j->nodes[me].len = ++count;
            }
            c = skip_ws(j);
            getb(j);
            if (c == (obj ? '}' : ']'))
                break;
            if (c != ',')
                return c == -2 ? STORE_EFORMAT
                               : fail(j,
                                      obj ? "invalid JSON: expected ',' or '}', found %s"
                                          : "invalid JSON: expected ',' or ']', found %s",
                                      show(c, b));
        }
        break;
    }
    case '"': {
        getb(j);
        uint32_t off = 0, len = 0;
        if ((rc = read_string(j, keep, &off, &len)))
            return rc;
        if (keep) {
            if ((rc = new_node(j, IMP_JSTR, &me)))
                return rc;
            j->nodes[me].text = off;
            j->nodes[me].len = len;
        }
        break;
    }
    case 't':
    case 'f':
    case 'n':
        if ((rc = read_literal(j, c == 't' ? "true" : c == 'f' ? "false" : "null")))
            return rc;
        if (keep && (rc = new_node(j,
                                   c == 't'   ? IMP_JTRUE
                                   : c == 'f' ? IMP_JFALSE
                                              : IMP_JNULL,
                                   &me)))
            return rc;
        break;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            uint32_t off = 0, len = 0;
            if ((rc = read_number(j, keep, &off, &len)))
                return rc;
            if (keep) {
                if ((rc = new_node(j, IMP_JNUM, &me)))
                    return rc;
                j->nodes[me].text = off;
                j->nodes[me].len = len;
            }
            break;
        }
        return fail(j, "invalid JSON: unexpected %s", show(c, b));
    }
    if (out)
        *out = me;
    return 0;
}

int imp_json_parse(imp_json *j, imp_jref *out)
{
    return value(j, 1, 0, out);
}

int imp_json_skip(imp_json *j)
{
    return value(j, 0, 0, NULL);
}

imp_jtype imp_json_type(const imp_json *j, imp_jref v)
{
    return v < j->nnodes ? (imp_jtype)j->nodes[v].type : IMP_JNULL;
}

uint32_t imp_json_len(const imp_json *j, imp_jref v)
{
    return v < j->nnodes && j->nodes[v].type >= IMP_JARR ? j->nodes[v].len : 0;
}

imp_jref imp_json_at(const imp_json *j, imp_jref arr, uint32_t i)
{
    if (imp_json_type(j, arr) != IMP_JARR)
        return IMP_JNONE;
    imp_jref c = j->nodes[arr].first;
    while (c != IMP_JNONE && i--)
        c = j->nodes[c].next;
    return c;
}

static imp_jref get(const imp_json *j, imp_jref obj, const char *key, int nocase)
{
    if (imp_json_type(j, obj) != IMP_JOBJ)
        return IMP_JNONE;
    for (imp_jref c = j->nodes[obj].first; c != IMP_JNONE; c = j->nodes[c].next) {
        const char *k = j->pool + j->nodes[c].key;
        if (nocase ? strcasecmp(k, key) == 0 : strcmp(k, key) == 0)
            return c;
    }
    return IMP_JNONE;
}

imp_jref imp_json_get(const imp_json *j, imp_jref obj, const char *key)
{
    return get(j, obj, key, 0);
}

imp_jref imp_json_geti(const imp_json *j, imp_jref obj, const char *key)
{
    return get(j, obj, key, 1);
}

const char *imp_json_str(const imp_json *j, imp_jref v)
{
    imp_jtype t = imp_json_type(j, v);
    return v < j->nnodes && (t == IMP_JSTR || t == IMP_JNUM) ? j->pool + j->nodes[v].text : NULL;
}

int imp_json_int(const imp_json *j, imp_jref v, int64_t *out)
{
    const char *s = imp_json_str(j, v);
    if (!s)
        return 0;
    if (imp_json_type(j, v) == IMP_JSTR) { /* "stream 7", "4093687616" */
        size_t n = strlen(s), k = n;
        while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
            k--;
        if (k == n || n - k > 18)
            return 0;
        *out = strtoll(s + k, NULL, 10);
        return 1;
    }
    if (strpbrk(s, ".eE")) {
        double d = strtod(s, NULL);
        if (!(d > -9.2e18 && d < 9.2e18))
            return 0;
        *out = (int64_t)d;
        return 1;
    }
    errno = 0;
    long long x = strtoll(s, NULL, 10);
    if (errno)
        return 0;
    *out = x;
    return 1;
}

int imp_json_milli(const imp_json *j, imp_jref v, int64_t *out)
{
    const char *s = imp_json_str(j, v);
    if (!s || imp_json_type(j, v) != IMP_JNUM)
        return 0;
    if (strpbrk(s, "eE")) {
        double d = strtod(s, NULL) * 1000.0;
        if (!(d > -9.2e18 && d < 9.2e18))
            return 0;
        *out = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
        return 1;
    }
    int neg = *s == '-';
    s += neg;
    uint64_t whole = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (whole > (UINT64_C(9200000000000000000) / 1000 - 9) / 10)
            return 0; /* beyond int64 ns */
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    uint64_t frac = 0;
    int fd = 0, round = 0;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, fd++) {
            if (fd < 3)
                frac = frac * 10 + (uint64_t)(*s - '0');
            else if (fd == 3)
                round = *s >= '5';
        }
    for (; fd < 3; fd++)
        frac *= 10;
    int64_t ns = (int64_t)(whole * 1000 + frac + (uint64_t)round);
    *out = neg ? -ns : ns;
    return 1;
}
