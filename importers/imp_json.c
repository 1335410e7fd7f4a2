/* importers/imp_json.c: a streaming JSON reader with bounded memory, for traces of hundreds of MB.
 * The caller walks the outer structure (imp_json_peek/expect/skip) and parses one element at a
 * time (one trace event) into a small arena that is reset between elements. Every token has a size
 * limit (IMP_JSON_MAX_STRING) and every element a node limit, so a 100 MB string or a deeply
 * nested value fails with a line number instead of eating memory; the arena counts toward the
 * import's memory limit (imp_charge). Numbers keep their text, so microsecond timestamps with
 * fractions convert to ns exactly.
 * Input: plain, or gzip inflated here (zlib's inflate, not gzread, which would take data after the
 * gzip stream silently). Concatenated gzip members are legal gzip (RFC 1952 2.2, `cat a.gz b.gz`)
 * and are read as one text, as gzip -d does; anything else after the last member is refused with
 * its byte offset. A UTF-8 byte order mark at the start of the text is skipped.
 * Strings reach the caller as the file holds them, never refused for their bytes: bytes that are
 * not valid UTF-8 stay as they are, a \u escape of a lone surrogate becomes its 3-byte form
 * (WTF-8) and \u0000 the 2 bytes C0 80 (modified UTF-8), so strings stay NUL-terminated and two
 * different strings of the file never become one; view_string() shows such bytes as U+FFFD. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
    imp_reader *r; /* for errors (row = line) and the memory limit */
    FILE *f;
    uint64_t size;  /* file size in bytes */
    int gz;         /* the file is gzip: inflated through zs */
    int zs_ready;   /* zs initialised (inflateEnd owed) */
    int member_end; /* inflate ended a gzip member: what follows is another member or nothing */
    uint64_t member_start; /* file offset of the gzip member being inflated */
    char gz_fail[128]; /* a problem of the gzip data, reported once the text before it is read */
    z_stream zs;
    uint64_t in_total;          /* bytes of the file read so far */
    unsigned char in[1 << 16];  /* file bytes not inflated yet: zs.next_in, zs.avail_in */
    unsigned char buf[1 << 16]; /* the text */
    size_t pos, len;
    int eof;
    uint64_t offset; /* bytes of the file consumed when buf was last filled */
    jnode *nodes;
    uint32_t nnodes, capnodes;
    char *pool;
    size_t npool, cappool;
};

static int fail(imp_json *j, const char *fmt, const char *arg)
{
    return imp_fail(j->r, STORE_EFORMAT, fmt, arg);
}

/* Reads more of the file into j->in; the count (0 at its end), or -1 on a read error (reported). */
static long read_in(imp_json *j)
{
    size_t n = fread(j->in, 1, sizeof j->in, j->f);
    if (n == 0 && ferror(j->f))
        return fail(j, "cannot read: %s", strerror(errno ? errno : EIO)), -1;
    j->zs.next_in = j->in;
    j->zs.avail_in = (uInt)n;
    j->in_total += n;
    return (long)n;
}

/* Keeps the gzip data's problem for inflate_some() to report (printf-style). */
static void gz_problem(imp_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gz_problem(imp_json *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->gz_fail, sizeof j->gz_fail, fmt, ap);
    va_end(ap);
}

/* Inflates into buf until it is full or the input ends; the bytes made, or -1 (reported). A
 * problem met after some bytes were made is reported on the next call, once the reader has
 * reached it: its line is then the line where the good data ends. */
static long inflate_some(imp_json *j)
{
    z_stream *zs = &j->zs;
    zs->next_out = j->buf;
    zs->avail_out = sizeof j->buf;
    int trailing = 0; /* what follows the last member is not gzip */
    while (zs->avail_out > 0 && !j->gz_fail[0] && !trailing) {
        if (zs->avail_in == 0) {
            long n = read_in(j);
            if (n < 0)
                return -1;
            if (n == 0) {
                if (!j->member_end) /* the stream ended before its gzip trailer */
                    gz_problem(j, "truncated gzip data: unexpected end of file");
                break;
            }
        }
        if (j->member_end) { /* after a member: another member (1f 8b ...), or not gzip */
            j->member_start = j->in_total - zs->avail_in;
            j->member_end = 0;
            inflateReset(zs);
            trailing = zs->next_in[0] != 0x1f;
            if (trailing)
                break;
        }
        int zrc = inflate(zs, Z_NO_FLUSH);
        if (zrc == Z_STREAM_END)
            j->member_end = 1;
        else if (zrc == Z_MEM_ERROR)
            return imp_fail(j->r, STORE_ENOMEM, "out of memory"), -1;
        else if (zrc == Z_DATA_ERROR && zs->msg && strcmp(zs->msg, "incorrect header check") == 0)
            trailing = 1; /* 1f, then not the rest of the gzip magic (the first member's was
                             checked by imp_json_open) */
        else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            gz_problem(j, "corrupt gzip data: %s", zs->msg ? zs->msg : "inflate failed");
    }
    if (trailing)
        gz_problem(j, "trailing data after the gzip stream at byte %llu (of %llu)",
                   (unsigned long long)j->member_start, (unsigned long long)j->size);
    long made = (long)(sizeof j->buf - zs->avail_out);
    if (made == 0 && j->gz_fail[0])
        return fail(j, "%s", j->gz_fail), -1;
    return made;
}

/* Refills the buffer; 0 at the end of input, -1 on a read error (reported). */
static int fill(imp_json *j)
{
    if (j->eof)
        return 0;
    long n;
    if (j->gz) {
        if ((n = inflate_some(j)) < 0)
            return -1;
        j->offset = j->in_total - j->zs.avail_in;
    } else {
        n = (long)fread(j->buf, 1, sizeof j->buf, j->f);
        if (n == 0 && ferror(j->f))
            return fail(j, "cannot read: %s", strerror(errno ? errno : EIO)), -1;
        j->offset = j->in_total += (uint64_t)n;
    }
    if (n == 0) {
        j->eof = 1;
        return 0;
    }
    j->pos = 0;
    j->len = (size_t)n;
    return 1;
}

int imp_json_open(imp_reader *r, imp_json **pj)
{
    imp_json *j = calloc(1, sizeof *j);
    *pj = j;
    if (!j)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    j->r = r;
    r->row = 1;
    int fd, rc = imp_open(r, &fd);
    if (rc)
        return rc;
    if (!(j->f = fdopen(fd, "rb"))) {
        close(fd);
        return imp_fail(r, STORE_EIO, "cannot open: %s", strerror(errno ? errno : ENOMEM));
    }
    struct stat sb;
    if (fstat(fileno(j->f), &sb) == 0)
        j->size = (uint64_t)sb.st_size;
    int c0 = getc(j->f), c1 = c0 == EOF ? EOF : getc(j->f);
    j->gz = c0 == 0x1f && c1 == 0x8b;
    rewind(j->f);
    if (j->gz) {
        int zrc = inflateInit2(&j->zs, 16 + MAX_WBITS); /* gzip only */
        if (zrc != Z_OK)
            return imp_fail(r, STORE_ENOMEM, "out of memory");
        j->zs_ready = 1;
    }
    if (fill(j) < 0)
        return STORE_EFORMAT;
    if (j->len - j->pos >= 3 && memcmp(j->buf + j->pos, "\xEF\xBB\xBF", 3) == 0)
        j->pos += 3; /* a UTF-8 byte order mark (buf is full unless the text is shorter) */
    return 0;
}

void imp_json_close(imp_json *j)
{
    if (!j)
        return;
    if (j->f)
        fclose(j->f);
    if (j->zs_ready)
        inflateEnd(&j->zs);
    free(j->nodes);
    free(j->pool);
    free(j);
}

uint64_t imp_json_charged(const imp_json *j)
{
    return j ? j->cappool + (uint64_t)j->capnodes * sizeof(jnode) : 0;
}

uint64_t imp_json_offset(imp_json *j)
{
    return j->offset;
}

uint64_t imp_json_size(imp_json *j)
{
    return j->size;
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
        int rc;
        if (cap > (size_t)UINT32_MAX)
            return fail(j, "%s", "element too large");
        if ((rc = imp_charge(j->r, cap - j->cappool)))
            return rc;
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
        int rc = imp_charge(j->r, (uint64_t)(cap - j->capnodes) * sizeof(jnode));
        if (rc)
            return rc;
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

/* Appends code point cp (keep) in UTF-8, surrogates in their 3-byte form, 0 as C0 80; returns
 * the bytes it takes, or a negative STORE_E* code (error set). */
static int put_utf8(imp_json *j, uint32_t cp, int keep)
{
    unsigned char b[4];
    int n;
    if (cp == 0) /* modified UTF-8: the string stays NUL-terminated */
        b[0] = 0xC0, b[1] = 0x80, n = 2;
    else if (cp < 0x80)
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
    int rc;
    for (int i = 0; keep && i < n; i++)
        if ((rc = pool_put(j, b[i])))
            return rc;
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

/* Reads a string after its opening quote. keep: store it in the pool (NUL-terminated) at *off.
 * \u escapes: a surrogate pair is one code point; a lone surrogate is kept as its own 3 bytes
 * (WTF-8) and \u0000 as C0 80 (put_utf8), not refused: the text is the file's. */
static int read_string(imp_json *j, int keep, uint32_t *off, uint32_t *len)
{
    size_t start = j->npool, n = 0;
    size_t hi_end = SIZE_MAX; /* n just after the last \u escape of a high surrogate, */
    uint32_t hi = 0;          /* and that surrogate */
    int rc;
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
                if ((rc = pool_grow(j, run)))
                    return rc;
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
                if (cp >= 0xDC00 && cp < 0xE000 && hi_end == n) {
                    /* the low half right after a high half: one code point, 4 bytes instead of
                     * the high half's 3 */
                    n -= 3;
                    if (keep)
                        j->npool -= 3;
                    cp = 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00);
                }
                {
                    int w = put_utf8(j, cp, keep);
                    if (w < 0)
                        return w;
                    n += (size_t)w;
                }
                if (cp >= 0xD800 && cp < 0xDC00) /* a high half: a low half may follow */
                    hi = cp, hi_end = n;
                if (n > IMP_JSON_MAX_STRING)
                    return fail(j, "%s", "string longer than 1048576 bytes");
                continue;
            default: return fail(j, "%s", "invalid JSON: bad escape in a string");
            }
        }
        if (++n > IMP_JSON_MAX_STRING)
            return fail(j, "%s", "string longer than 1048576 bytes");
        if (keep && (rc = pool_put(j, c)))
            return rc;
    }
    if (keep) {
        if ((rc = pool_put(j, 0)))
            return rc;
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
    int digits = 0, lead_zero = 0, rc;
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
        if (keep && (rc = pool_put(j, c)))
            return rc;
    }
    if (!digits || state == 2 || state == 4 || state == 5)
        return fail(j, "%s", "invalid JSON: malformed number");
    if (keep) {
        if ((rc = pool_put(j, 0)))
            return rc;
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

imp_jref imp_json_first(const imp_json *j, imp_jref v)
{
    return imp_json_type(j, v) >= IMP_JARR ? j->nodes[v].first : IMP_JNONE;
}

imp_jref imp_json_next(const imp_json *j, imp_jref v)
{
    return v < j->nnodes ? j->nodes[v].next : IMP_JNONE;
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
