/* importers/nvvp.c: NVIDIA Visual Profiler session files -> the processes of the nvprof databases
 * they hold. NVVP saves a session (File > Save: a .nvvp, named like nvprof's own files) as XML:
 *   <session version="2" name="NewSession1.nvvp" ...> <executable file=... args=.../> ...
 *   <timelinepdm><pdm><split>H4sIAAAAAAAAAOydCWAT...</split></pdm></timelinepdm>
 *   <analysispdm></analysispdm></session>
 * Each <pdm> of <timelinepdm> is one nvprof database (what `nvprof -o` writes), gzip-compressed,
 * base64-encoded and cut into <split> pieces. Each is decoded in memory and read by the nvprof
 * importer (nvprof.c, through imp_sql_open's r->image) as its own process; messages about it read
 * "FILE:LINE: nvprof database N: ...", LINE where the problem was met (the nvprof importer's: the
 * <pdm>'s, with the database's row in the text). Version 1 sessions (2013) put
 * the text straight into a <pdm> under <session> and hold the pre-SQLite nvprof format, refused by
 * name. The <pdm>s of <analysispdm> (the guided analysis' extra runs that collect metrics, not
 * the timeline's run) are skipped and counted as unmapped nvvp.analysis_database.
 * The file (plain, or gzip through gzread) is streamed through a small XML reader that keeps only
 * the names of the open elements: no DTD, no entity expanded, names and nesting bounded. One
 * database is held at a time and its inflated bytes count toward the import's memory limit
 * (imp_charge, TLVIEW_MAX_MEMORY), so a gzip bomb stops at the limit with its message. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "imp_int.h"

#define VP_MAX_DEPTH 64 /* open elements; NVVP writes 5 */
#define VP_MAX_NAME 64  /* bytes of an element or attribute name */

/* What an open element is to the reader. */
typedef enum {
    EL_OTHER,    /* anything else: skipped with its text */
    EL_SESSION,  /* the root */
    EL_TIMELINE, /* <timelinepdm> */
    EL_ANALYSIS, /* <analysispdm> */
    EL_DB,       /* a <pdm> holding a timeline database: its text and its <split>s' text */
    EL_SPLIT,    /* a <split> of an EL_DB */
} vp_kind;

/* State of one session file. */
typedef struct vp {
    gzFile f;
    uint64_t size;                             /* bytes of the file, for progress */
    unsigned char buf[1 << 16];                /* read ahead */
    size_t nbuf, at;                           /* bytes in buf, next one to hand out */
    int eof;                                   /* the file has ended (or failed) */
    int ioerr;                                 /* reading failed: the error is set */
    char names[VP_MAX_DEPTH][VP_MAX_NAME + 1]; /* the open elements, outermost first */
    uint8_t kinds[VP_MAX_DEPTH];               /* their vp_kind */
    unsigned depth;                            /* open elements */
    int root_seen;                             /* <session> has opened */
    uint32_t ndb;     /* timeline databases met (the one being read included) */
    uint32_t nloaded; /* of them, imported */
    int64_t db_line;  /* line of the <pdm> being read */
    /* base64 of the database being read */
    uint32_t quad;           /* 6-bit digits of the current group */
    unsigned nquad;          /* digits in it (0-3) */
    int pad;                 /* a second '=' may follow ("xx==") */
    unsigned char dec[4096]; /* decoded bytes not inflated yet */
    size_t ndec;
    uint64_t ndecoded; /* decoded bytes of this database */
    /* gzip of the database being read */
    z_stream z;
    int zinit; /* inflateEnd owed */
    int zend;  /* a gzip member has ended: what follows is another member or nothing */
    /* the database, inflated: sqlite3_malloc'd, for sqlite3_deserialize */
    unsigned char *image;
    size_t nimage, cap;
    uint64_t charged; /* bytes of it counted by imp_charge, given back when it is imported */
    int head_checked; /* its first 16 bytes were looked at */
} vp;

/* Looks for needle in [h, end); NULL when absent. */
static const unsigned char *find(const unsigned char *h, const unsigned char *end,
                                 const char *needle)
{
    size_t n = strlen(needle);
    for (; h + n <= end; h++)
        if (memcmp(h, needle, n) == 0)
            return h;
    return NULL;
}

/* An NVVP session: XML whose root element, after the prolog's declarations and comments, is
 * <session>. */
static int vp_probe(const imp_probe *p)
{
    const unsigned char *h = p->head, *end = p->head + p->nhead;
    if (p->nhead >= 3 && memcmp(h, "\xEF\xBB\xBF", 3) == 0)
        h += 3; /* a UTF-8 byte order mark */
    for (;;) {
        while (h < end && isspace(*h))
            h++;
        const char *close = end - h >= 2 && memcmp(h, "<?", 2) == 0     ? "?>"
                            : end - h >= 4 && memcmp(h, "<!--", 4) == 0 ? "-->"
                                                                        : NULL;
        if (!close)
            break;
        if (!(h = find(h + 2, end, close)))
            return 0;
        h += strlen(close);
    }
    return end - h > 8 && memcmp(h, "<session", 8) == 0 &&
           (isspace(h[8]) || h[8] == '>' || h[8] == '/');
}

static int vp_open(imp_reader *r)
{
    vp *v = calloc(1, sizeof *v);
    if (!v)
        return imp_fail(r, STORE_ENOMEM, "out of memory");
    r->state = v;
    int rc = imp_limits(r);
    if (rc)
        return rc;
    struct stat st;
    if (stat(r->path, &st) == 0)
        v->size = (uint64_t)st.st_size;
    int fd;
    if ((rc = imp_open(r, &fd)) != 0)
        return rc;
    errno = 0;
    if (!(v->f = gzdopen(fd, "rb"))) {
        close(fd);
        return imp_fail(r, STORE_EIO, "cannot open: %s", strerror(errno ? errno : ENOMEM));
    }
    gzbuffer(v->f, 1 << 17);
    return 0;
}

static void vp_close(imp_reader *r)
{
    vp *v = r->state;
    if (!v)
        return;
    if (v->f)
        gzclose(v->f);
    if (v->zinit)
        inflateEnd(&v->z);
    sqlite3_free(v->image);
    r->memory -= v->charged;
    free(v);
    r->state = NULL;
}

/* The next byte of the file, or -1 at its end (v->ioerr: reading failed, the error is set).
 * Counts lines in r->row. */
static int next(imp_reader *r, vp *v)
{
    if (v->at == v->nbuf) {
        if (v->eof)
            return -1;
        int n = gzread(v->f, v->buf, sizeof v->buf), zerr = Z_OK;
        const char *msg = n <= 0 ? gzerror(v->f, &zerr) : "";
        if (n <= 0) {
            v->eof = 1;
            if (zerr != Z_OK) {
                size_t pl = strlen(r->path); /* zlib's message starts with the path */
                if (strncmp(msg, r->path, pl) == 0 && msg[pl] == ':')
                    msg += pl + (msg[pl + 1] == ' ' ? 2 : 1);
                v->ioerr = 1;
                imp_fail(r, zerr == Z_ERRNO ? STORE_EIO : STORE_EFORMAT, "%s%s",
                         zerr == Z_ERRNO ? "cannot read: " : "corrupt gzip data: ",
                         zerr == Z_ERRNO ? strerror(errno) : msg);
            }
            return -1;
        }
        v->nbuf = (size_t)n;
        v->at = 0;
        imp_progress(r, (uint64_t)gzoffset(v->f), v->size);
    }
    int c = v->buf[v->at++];
    if (c == '\n')
        r->row++;
    return c;
}

/* The file ended inside `where`: its read error, or "truncated". */
static int truncated(imp_reader *r, vp *v, const char *where)
{
    if (v->ioerr)
        return STORE_EIO;
    return imp_fail(r, STORE_EFORMAT, "truncated: the file ends inside %s", where);
}

/* Fails naming the database being read: "nvprof database N: ..." (printf-style). */
static int db_fail(imp_reader *r, vp *v, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int db_fail(imp_reader *r, vp *v, int code, const char *fmt, ...)
{
    char text[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return imp_fail(r, code, "nvprof database %u: %s", v->ndb, text);
}

/* Makes room for more of the database: 1 MiB, then half again what it has, counted toward the
 * memory limit. */
static int grow(imp_reader *r, vp *v)
{
    size_t add = v->cap < (1u << 20) ? (1u << 20) : v->cap / 2;
    int rc = imp_charge(r, add);
    if (rc)
        return rc;
    v->charged += add;
    unsigned char *g = sqlite3_realloc64(v->image, (sqlite3_uint64)v->cap + add);
    if (!g)
        return db_fail(r, v, STORE_ENOMEM, "out of memory inflating it");
    v->image = g;
    v->cap += add;
    return 0;
}

static const unsigned char legacy_magic[] = {0x00, 0x04, 0x00, 0x00, 0x04,
                                             0x00, 0x00, 0x00, 0x01, 0x04};

/* The first bytes of the database: SQLite, else why not (the pre-SQLite nvprof format of
 * version 1 sessions is named). Looked at as soon as they are inflated, so that a foreign blob is
 * refused before it is inflated whole. */
static int check_head(imp_reader *r, vp *v)
{
    v->head_checked = 1;
    const unsigned char *h = v->image;
    if (v->nimage >= sizeof legacy_magic && memcmp(h, legacy_magic, sizeof legacy_magic) == 0)
        return db_fail(r, v, STORE_EFORMAT,
                       "a legacy (pre-SQLite, 2013-2015) nvprof profile: not supported");
    if (v->nimage < 16 || memcmp(h, "SQLite format 3", 16) != 0)
        return db_fail(r, v, STORE_EFORMAT,
                       "not an SQLite database (its first bytes are %02x %02x %02x %02x)",
                       v->nimage > 0 ? h[0] : 0, v->nimage > 1 ? h[1] : 0, v->nimage > 2 ? h[2] : 0,
                       v->nimage > 3 ? h[3] : 0);
    return 0;
}

/* Inflates the decoded bytes into the image. Concatenated gzip members are one stream (as gzip -d
 * reads them); other bytes after the last member are refused. */
static int inflate_bytes(imp_reader *r, vp *v, const unsigned char *p, size_t n)
{
    int rc;
    if (n == 0)
        return 0;
    if (v->ndecoded == 0) {
        if (n < 2 || p[0] != 0x1f || p[1] != 0x8b)
            return db_fail(r, v, STORE_EFORMAT,
                           "not gzip data (base64 of bytes %02x %02x...; NVVP writes each database "
                           "gzip-compressed)",
                           p[0], n > 1 ? p[1] : 0);
        memset(&v->z, 0, sizeof v->z);
        if (inflateInit2(&v->z, 16 + MAX_WBITS) != Z_OK) /* gzip only */
            return db_fail(r, v, STORE_ENOMEM, "out of memory starting zlib");
        v->zinit = 1;
    }
    v->ndecoded += n;
    v->z.next_in = (unsigned char *)p;
    v->z.avail_in = (uInt)n;
    for (;;) {
        if (v->zend && v->z.avail_in) {
            if (v->z.next_in[0] != 0x1f)
                return db_fail(r, v, STORE_EFORMAT, "data after the end of its gzip data");
            inflateReset(&v->z);
            v->zend = 0;
        }
        if (v->nimage == v->cap && (rc = grow(r, v)))
            return rc;
        v->z.next_out = v->image + v->nimage;
        v->z.avail_out = (uInt)(v->cap - v->nimage < (1u << 30) ? v->cap - v->nimage : 1u << 30);
        uInt room = v->z.avail_out;
        int zrc = inflate(&v->z, Z_NO_FLUSH);
        v->nimage += room - v->z.avail_out;
        if (!v->head_checked && v->nimage >= 16 && (rc = check_head(r, v)))
            return rc;
        if (zrc == Z_STREAM_END) {
            v->zend = 1;
            if (!v->z.avail_in)
                return 0;
            continue;
        }
        if (zrc == Z_MEM_ERROR)
            return db_fail(r, v, STORE_ENOMEM, "out of memory inflating it");
        if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return db_fail(r, v, STORE_EFORMAT, "corrupt gzip data: %s",
                           v->z.msg ? v->z.msg : "inflate failed");
        if (!v->z.avail_in && v->z.avail_out)
            return 0; /* all taken, nothing pending */
    }
}

static int flush_dec(imp_reader *r, vp *v)
{
    size_t n = v->ndec;
    v->ndec = 0;
    return inflate_bytes(r, v, v->dec, n);
}

static int emit(imp_reader *r, vp *v, unsigned byte)
{
    v->dec[v->ndec++] = (unsigned char)byte;
    return v->ndec == sizeof v->dec ? flush_dec(r, v) : 0;
}

/* The bytes of a group cut short by padding or by the end of the text (2 or 3 digits: 1 or 2
 * bytes). */
static int emit_partial(imp_reader *r, vp *v)
{
    unsigned n = v->nquad;
    int rc = 0;
    v->nquad = 0;
    if (n == 2)
        rc = emit(r, v, v->quad >> 4 & 0xff);
    else if (n == 3 && (rc = emit(r, v, v->quad >> 10 & 0xff)) == 0)
        rc = emit(r, v, v->quad >> 2 & 0xff);
    return rc;
}

/* One character of a database's text: base64 (RFC 4648, whitespace between groups allowed; each
 * <split> may end with its own padding). */
static int base64_char(imp_reader *r, vp *v, int c)
{
    static signed char digit[256];
    int rc = 0;
    if (!digit['B']) {
        memset(digit, -1, sizeof digit);
        const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int i = 0; i < 64; i++)
            digit[(unsigned char)a[i]] = (signed char)i;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
        return 0;
    if (c == '=') {
        if (v->nquad == 0 && v->pad) {
            v->pad = 0; /* the second '=' of "xx==" */
            return 0;
        }
        if (v->nquad < 2)
            return db_fail(r, v, STORE_EFORMAT, "invalid base64: '=' where a digit belongs");
        v->pad = v->nquad == 2;
        return emit_partial(r, v);
    }
    if (digit[c] < 0)
        return db_fail(r, v, STORE_EFORMAT, "invalid base64: byte 0x%02x ('%c')", (unsigned)c,
                       isprint(c) ? c : '?');
    v->pad = 0;
    v->quad = v->quad << 6 | (uint32_t)digit[c];
    if (++v->nquad < 4)
        return 0;
    v->nquad = 0;
    if ((rc = emit(r, v, v->quad >> 16 & 0xff)) || (rc = emit(r, v, v->quad >> 8 & 0xff)))
        return rc;
    return emit(r, v, v->quad & 0xff);
}

/* A <pdm> of the timeline opens: a new database. */
static void begin_db(imp_reader *r, vp *v)
{
    v->ndb++;
    v->db_line = r->row;
    v->quad = 0;
    v->nquad = 0;
    v->pad = 0;
    v->ndec = 0;
    v->ndecoded = 0;
    v->zend = 0;
    v->nimage = 0;
    v->head_checked = 0;
}

/* Reads the inflated database through the nvprof importer, which takes the image. */
static int import_db(imp_reader *r, vp *v)
{
    int rc = v->head_checked ? 0 : check_head(r, v);
    int64_t line = r->row; /* where the reading goes on */
    if (rc)
        return rc;
    sqlite3 *db = NULL;
    int is_nvprof = 0, corrupt = 0;
    char why[200] = "out of memory";
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_deserialize(db, "main", v->image, (sqlite3_int64)v->nimage,
                            (sqlite3_int64)v->nimage, SQLITE_DESERIALIZE_READONLY) == SQLITE_OK) {
        imp_probe p = {r->path, v->image, v->nimage, db};
        is_nvprof = imp_nvprof_ops.probe(&p);
        if (!is_nvprof &&
            sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
            corrupt = 1;
            snprintf(why, sizeof why, "%s", sqlite3_errmsg(db));
        }
    } else
        corrupt = 1;
    sqlite3_close(db);
    r->row = v->db_line;
    if (corrupt)
        return db_fail(r, v, STORE_EFORMAT, "corrupt or truncated SQLite database (%s)", why);
    if (!is_nvprof)
        return db_fail(r, v, STORE_EFORMAT,
                       "an SQLite database that is not an nvprof profile (no Version, StringTable "
                       "and CUPTI_ACTIVITY_KIND_* tables)");
    imp_error e;
    memset(&e, 0, sizeof e);
    imp_options o = *r->opt;
    o.progress = NULL; /* the session's bytes are the progress */
    imp_reader s = {.ops = &imp_nvprof_ops,
                    .path = r->path,
                    .run = r->run,
                    .err = &e,
                    .stats = r->stats,
                    .opt = &o,
                    .image = v->image,
                    .nimage = v->nimage};
    v->image = NULL; /* the sub-reader's, then SQLite's */
    v->nimage = v->cap = 0;
    rc = s.ops->open(&s);
    if (rc == 0)
        rc = s.ops->load(&s);
    s.ops->close(&s);
    sqlite3_free(s.image); /* when the open failed before imp_sql_open took it */
    r->memory -= v->charged;
    v->charged = 0;
    if (rc) {
        char row[40] = "";
        if (e.row > 0)
            snprintf(row, sizeof row, "row %lld: ", (long long)e.row);
        return db_fail(r, v, rc, "%s%s", row, e.text[0] ? e.text : "import failed");
    }
    r->row = line;
    v->nloaded++;
    return 0;
}

/* The <pdm> closes: the database is complete. An empty one is skipped and counted. */
static int end_db(imp_reader *r, vp *v)
{
    int rc;
    if (v->nquad == 1)
        return db_fail(r, v, STORE_EFORMAT, "invalid base64: the text ends inside a group");
    if ((rc = emit_partial(r, v)) || (rc = flush_dec(r, v)))
        return rc;
    if (v->ndecoded == 0) {
        imp_unmapped(r, "nvvp.empty_database", 1);
        return 0;
    }
    if (!v->zend)
        return db_fail(r, v, STORE_EFORMAT, "truncated gzip data (no gzip trailer)");
    inflateEnd(&v->z);
    v->zinit = 0;
    return import_db(r, v);
}

static int name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

static int name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':' || c == '.' || c == '-';
}

/* Reads a name whose first byte is c into name[VP_MAX_NAME + 1]; returns the byte after it (-1
 * at the end of the file). */
static int read_name(imp_reader *r, vp *v, int c, char *name, int *rc)
{
    size_t n = 0;
    *rc = 0;
    while (c >= 0 && name_char(c)) {
        if (n == VP_MAX_NAME) {
            name[n] = 0;
            *rc = imp_fail(r, STORE_EFORMAT, "invalid XML: a name longer than %d bytes (%.20s...)",
                           VP_MAX_NAME, name);
            return -1;
        }
        name[n++] = (char)c;
        c = next(r, v);
    }
    name[n] = 0;
    return c;
}

static int skip_space(imp_reader *r, vp *v, int c)
{
    while (c >= 0 && isspace(c))
        c = next(r, v);
    return c;
}

/* Skips to the end of `close` ("?>", "-->"); feeds what is skipped to the database when `text`
 * (CDATA of a <pdm> or <split>). */
static int skip_to(imp_reader *r, vp *v, const char *close, const char *where, int text)
{
    size_t n = strlen(close), have = 0;
    char tail[4] = "";
    for (;;) {
        int c = next(r, v), rc;
        if (c < 0)
            return truncated(r, v, where);
        if (have == n) {
            if (text && (rc = base64_char(r, v, (unsigned char)tail[0])))
                return rc;
            memmove(tail, tail + 1, n - 1);
            have--;
        }
        tail[have++] = (char)c;
        if (have == n && memcmp(tail, close, n) == 0)
            return 0;
    }
}

/* An element opens (its name read): what it is where it stands, pushed unless empty ("<x/>"). */
static int open_element(imp_reader *r, vp *v, const char *name, int empty, const char *version)
{
    vp_kind parent = v->depth ? (vp_kind)v->kinds[v->depth - 1] : EL_OTHER, kind = EL_OTHER;
    if (v->depth == 0) {
        if (v->root_seen)
            return imp_fail(r, STORE_EFORMAT, "invalid XML: a second root element <%s>", name);
        if (strcmp(name, "session") != 0)
            return imp_fail(r, STORE_EFORMAT,
                            "the root element is <%s>, not <session>: not an NVVP session", name);
        v->root_seen = 1;
        kind = EL_SESSION;
        if (strcmp(version, "1") != 0 && strcmp(version, "2") != 0)
            imp_warn(r, "NVVP session version \"%s\" not seen before: read as version 2", version);
    } else if (parent == EL_SESSION && strcmp(name, "timelinepdm") == 0)
        kind = EL_TIMELINE;
    else if (parent == EL_SESSION && strcmp(name, "analysispdm") == 0)
        kind = EL_ANALYSIS;
    else if ((parent == EL_SESSION || parent == EL_TIMELINE) && strcmp(name, "pdm") == 0)
        kind = EL_DB; /* version 1 put its database straight under <session> */
    else if (parent == EL_DB && strcmp(name, "split") == 0)
        kind = EL_SPLIT;
    else if (parent == EL_ANALYSIS && strcmp(name, "pdm") == 0)
        imp_unmapped(r, "nvvp.analysis_database", 1);
    if (kind == EL_DB)
        begin_db(r, v);
    if (empty)
        return kind == EL_DB ? end_db(r, v) : 0;
    if (v->depth == VP_MAX_DEPTH)
        return imp_fail(r, STORE_EFORMAT, "invalid XML: elements nested deeper than %d",
                        VP_MAX_DEPTH);
    snprintf(v->names[v->depth], sizeof v->names[0], "%s", name);
    v->kinds[v->depth++] = (uint8_t)kind;
    return 0;
}

/* A start tag, its first byte c read: name, attributes (only <session>'s version is kept). */
static int start_tag(imp_reader *r, vp *v, int c)
{
    char name[VP_MAX_NAME + 1], attr[VP_MAX_NAME + 1], version[16] = "";
    int rc;
    if (!name_start(c))
        return c < 0 ? truncated(r, v, "a tag")
                     : imp_fail(r, STORE_EFORMAT, "invalid XML: '<' followed by byte 0x%02x",
                                (unsigned)c);
    c = read_name(r, v, c, name, &rc);
    for (;;) {
        if (rc)
            return rc;
        c = skip_space(r, v, c);
        if (c == '>')
            return open_element(r, v, name, 0, version);
        if (c == '/') {
            if ((c = next(r, v)) != '>')
                return c < 0 ? truncated(r, v, "a tag")
                             : imp_fail(r, STORE_EFORMAT, "invalid XML: '/' inside <%s>", name);
            return open_element(r, v, name, 1, version);
        }
        if (c < 0)
            return truncated(r, v, "a tag");
        if (!name_start(c))
            return imp_fail(r, STORE_EFORMAT, "invalid XML: byte 0x%02x inside <%s>", (unsigned)c,
                            name);
        c = read_name(r, v, c, attr, &rc);
        if (rc)
            return rc;
        if ((c = skip_space(r, v, c)) != '=')
            return c < 0
                       ? truncated(r, v, "a tag")
                       : imp_fail(r, STORE_EFORMAT,
                                  "invalid XML: attribute %s of <%s> without a value", attr, name);
        int q = skip_space(r, v, next(r, v));
        if (q != '"' && q != '\'')
            return q < 0 ? truncated(r, v, "a tag")
                         : imp_fail(r, STORE_EFORMAT,
                                    "invalid XML: attribute %s of <%s> without quotes", attr, name);
        int keep = v->depth == 0 && strcmp(attr, "version") == 0;
        size_t n = 0;
        while ((c = next(r, v)) != q) {
            if (c < 0)
                return truncated(r, v, "a tag");
            if (c == '<')
                return imp_fail(r, STORE_EFORMAT, "invalid XML: '<' in attribute %s of <%s>", attr,
                                name);
            if (keep && n + 1 < sizeof version)
                version[n++] = (char)c, version[n] = 0;
        }
        c = next(r, v);
    }
}

/* An end tag, after "</": it must close the innermost open element. */
static int end_tag(imp_reader *r, vp *v)
{
    char name[VP_MAX_NAME + 1];
    int rc, c = next(r, v);
    if (c < 0)
        return truncated(r, v, "a tag");
    if (!name_start(c))
        return imp_fail(r, STORE_EFORMAT, "invalid XML: '</' followed by byte 0x%02x", (unsigned)c);
    c = skip_space(r, v, read_name(r, v, c, name, &rc));
    if (rc)
        return rc;
    if (c != '>')
        return c < 0 ? truncated(r, v, "a tag")
                     : imp_fail(r, STORE_EFORMAT, "invalid XML: byte 0x%02x inside </%s>",
                                (unsigned)c, name);
    if (v->depth == 0)
        return imp_fail(r, STORE_EFORMAT, "invalid XML: </%s> closes no element", name);
    if (strcmp(name, v->names[v->depth - 1]) != 0)
        return imp_fail(r, STORE_EFORMAT, "invalid XML: </%s> where </%s> belongs", name,
                        v->names[v->depth - 1]);
    vp_kind kind = (vp_kind)v->kinds[--v->depth];
    return kind == EL_DB ? end_db(r, v) : 0;
}

/* Text in the innermost open element: a database's base64 in a <pdm> or its <split>s, else
 * skipped; outside the root only white space (and a byte order mark before it) may stand. */
static int text_char(imp_reader *r, vp *v, int c)
{
    vp_kind kind = v->depth ? (vp_kind)v->kinds[v->depth - 1] : EL_OTHER;
    if (kind == EL_DB || kind == EL_SPLIT)
        return base64_char(r, v, c);
    if (v->depth == 0 && !isspace(c) &&
        !(!v->root_seen && r->row == 1 && (c == 0xEF || c == 0xBB || c == 0xBF)))
        return imp_fail(r, STORE_EFORMAT, "invalid XML: text outside the root element");
    return 0;
}

/* After "<": a declaration, comment, CDATA section, end tag or start tag. */
static int markup(imp_reader *r, vp *v)
{
    int c = next(r, v);
    if (c == '?')
        return skip_to(r, v, "?>", "a processing instruction", 0);
    if (c != '!')
        return c == '/' ? end_tag(r, v) : start_tag(r, v, c);
    char open[8] = "";
    size_t n = 0;
    while (n < 7 && (c = next(r, v)) >= 0) {
        open[n++] = (char)c;
        if (n == 2 && memcmp(open, "--", 2) == 0)
            return skip_to(r, v, "-->", "a comment", 0);
        if (n == 7 && memcmp(open, "[CDATA[", 7) == 0) {
            vp_kind kind = v->depth ? (vp_kind)v->kinds[v->depth - 1] : EL_OTHER;
            if (v->depth == 0)
                return imp_fail(r, STORE_EFORMAT, "invalid XML: CDATA outside the root element");
            return skip_to(r, v, "]]>", "a CDATA section", kind == EL_DB || kind == EL_SPLIT);
        }
        if (n == 7 && memcmp(open, "DOCTYPE", 7) == 0)
            return imp_fail(r, STORE_EFORMAT,
                            "a DOCTYPE declaration: NVVP sessions have none (not read)");
    }
    return c < 0 ? truncated(r, v, "a declaration")
                 : imp_fail(r, STORE_EFORMAT, "invalid XML: '<!%s' is no comment or CDATA", open);
}

static int vp_load(imp_reader *r)
{
    vp *v = r->state;
    int c, rc = 0;
    r->row = 1;
    while (rc == 0 && (c = next(r, v)) >= 0)
        rc = c == '<' ? markup(r, v) : text_char(r, v, c);
    if (rc)
        return rc;
    if (v->depth) {
        char where[VP_MAX_NAME + 3];
        snprintf(where, sizeof where, "<%s>", v->names[v->depth - 1]);
        return truncated(r, v, where);
    }
    if (v->ioerr)
        return STORE_EIO;
    r->row = 0; /* what follows is about the whole file */
    if (!v->root_seen)
        return imp_fail(r, STORE_EFORMAT, "no <session> element: not an NVVP session");
    imp_progress_end(r, v->size);
    if (v->nloaded == 0)
        return imp_fail(r, STORE_EFORMAT,
                        "the session holds no profile data (no nvprof database in a <pdm> of "
                        "<timelinepdm>): nothing to import");
    return 0;
}

const imp_ops imp_nvvp_ops = {"nvvp", vp_probe, vp_open, vp_load, vp_close};
