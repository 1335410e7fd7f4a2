/* text.c: text from files made safe for a terminal. Kernel names, file names, hosts, device names
 * and messages quoting them come from files others wrote; printed raw, an ESC in them could set
 * the window title, clear the screen or forge lines (CR, LF). Every such string goes out through
 * cli_put_text(), cli_text_cell() or cli_msg(): valid printable UTF-8 (Japanese names too) passes
 * unchanged, anything else is escaped visibly:
 *   TAB, LF, CR                        \t \n \r
 *   other C0 controls (ESC ...), DEL   \xNN          (\x1b, \x7f)
 *   C1 controls U+0080..U+009F, U+2028/U+2029 (line/paragraph separators), bidi controls
 *   (U+061C, U+200E/F, U+202A..E, U+2066..9: they reorder what follows on the line)
 *                                      \uNNNN        (\u009b, \u202e)
 *   each byte of invalid UTF-8 (stray continuation, overlong, surrogate, truncated, > U+10FFFF)
 *                                      \xNN          (\xff, \xc3 of a cut "é")
 * A backslash itself is left alone: the aim is a terminal that shows what the file said, not a
 * reversible encoding (the JSON output is that). Usage errors quote arguments: cli_usage_error()
 * is here for that. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

/* One unit of the text: a character (copied) or an escape; at most 6 bytes of text. */
typedef struct piece {
    char text[12];
    size_t len;  /* bytes of text */
    size_t used; /* bytes of the input it stands for */
    int cols;    /* terminal columns it takes */
} piece;

/* Characters that are valid but move or reorder text on a terminal. */
static int is_format_control(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0x061c ||
           cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Terminal columns of a printable character: 2 for East Asian wide and fullwidth ones, 0 for
 * combining marks and zero-width characters, else 1. A table of the main blocks rather than
 * wcwidth(), which depends on the locale the user happens to run in. */
static int char_cols(uint32_t cp)
{
    if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x1ab0 && cp <= 0x1aff) ||
        (cp >= 0x1dc0 && cp <= 0x1dff) || (cp >= 0x200b && cp <= 0x200d) ||
        (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe20 && cp <= 0xfe2f) || cp == 0xfeff)
        return 0;
    if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0x303e) ||
        (cp >= 0x3041 && cp <= 0x33ff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
        (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xa000 && cp <= 0xa4cf) ||
        (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
        (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
        (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
        (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
        return 2;
    return 1;
}

/* The piece that starts at p (not at the terminating NUL). */
static piece next_piece(const unsigned char *p)
{
    piece x = {.used = 1};
    uint32_t cp = 0;
    size_t n = store_utf8_decode((const char *)p, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f) {
        if (n && (cp == '\t' || cp == '\n' || cp == '\r'))
            snprintf(x.text, sizeof x.text, "\\%c", cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r');
        else
            snprintf(x.text, sizeof x.text, "\\x%02x", p[0]);
    } else if (is_format_control(cp)) {
        snprintf(x.text, sizeof x.text, "\\u%04x", (unsigned)cp);
        x.used = n;
    } else {
        memcpy(x.text, p, n);
        x.text[n] = 0;
        x.used = n;
        x.len = n;
        x.cols = char_cols(cp);
        return x;
    }
    x.len = strlen(x.text);
    x.cols = (int)x.len;
    return x;
}

void cli_put_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        const unsigned char *run = p; /* plain printable ASCII goes out in one piece */
        while (*p >= 0x20 && *p < 0x7f)
            p++;
        fwrite(run, 1, (size_t)(p - run), out);
        if (!*p)
            break;
        piece x = next_piece(p);
        fwrite(x.text, 1, x.len, out);
        p += x.used;
    }
}

const char *cli_text_cell(const char *s, int width, char *buf, size_t n)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = 0;
    int cols = 0;
    if (!n)
        return "";
    while (*p) {
        piece x = next_piece(p);
        if ((width >= 0 && cols + x.cols > width) || len + x.len >= n)
            break;
        memcpy(buf + len, x.text, x.len);
        len += x.len;
        cols += x.cols;
        p += x.used;
    }
    while (cols < width && len + 1 < n) {
        buf[len++] = ' ';
        cols++;
    }
    buf[len] = 0;
    return buf;
}

void cli_msg(FILE *out, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = strlen(text), flen = strlen(fmt); /* a longer message is cut, not lost */
    int nl = flen && fmt[flen - 1] == '\n';
    if (nl && len && text[len - 1] == '\n')
        text[len - 1] = 0;
    cli_put_text(out, text);
    if (nl)
        fputc('\n', out);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char text[2048]; /* usage errors quote arguments: escaped like names from files */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tlview %s: ", cmd);
    cli_put_text(stderr, text);
    fprintf(stderr, "\nTry 'tlview %s --help'.\n", cmd);
    return 2;
}
