/* Unit tests of cli/text.c, the terminal-safe printing of strings from files: every control
 * character and invalid UTF-8 byte is escaped visibly, valid UTF-8 passes unchanged, table cells
 * are cut at character boundaries and padded by terminal columns. */
#include <stdlib.h>

#include "cli.h"
#include "test_help.h"

/* What cli_put_text() writes for s (static buffer). */
static const char *put(const char *s)
{
    static char out[4096];
    memset(out, 0, sizeof out); /* fmemopen() writes no NUL when nothing is written */
    FILE *f = fmemopen(out, sizeof out, "w");
    if (!f)
        return "(fmemopen failed)";
    cli_put_text(f, s);
    fclose(f);
    return out;
}

int test_cli_text_ordinary_unchanged(void)
{
    const char *plain = "_Z4spinPfi void spin<float, 4>(float*, int) [x] {y} ~ \\ node1:/a b.db";
    TEST_EQ_STR(put(plain), plain);
    TEST_EQ_STR(put("カーネル名 Ünïcödé 😀 ok"), "カーネル名 Ünïcödé 😀 ok");
    TEST_EQ_STR(put(""), "");
    TEST_EQ_STR(put(NULL), "");
    return 0;
}

int test_cli_text_controls_escaped(void)
{
    TEST_EQ_STR(put("a\033]0;title\007b"), "a\\x1b]0;title\\x07b");
    TEST_EQ_STR(put("\033[2J\033[31mred"), "\\x1b[2J\\x1b[31mred");
    TEST_EQ_STR(put("line\r\nGPU 0 (fake)\tx"), "line\\r\\nGPU 0 (fake)\\tx");
    TEST_EQ_STR(put("del\177 bell\a nul-less \001"), "del\\x7f bell\\x07 nul-less \\x01");
    /* C1 controls as characters (CSI U+009B, NEL U+0085) and as raw bytes */
    TEST_EQ_STR(put("c1 \302\233 \302\205"), "c1 \\u009b \\u0085");
    TEST_EQ_STR(put("raw \233[2J"), "raw \\x9b[2J");
    /* line/paragraph separators and bidi overrides */
    TEST_EQ_STR(put("a\342\200\250b\342\200\251c"), "a\\u2028b\\u2029c");
    TEST_EQ_STR(put("evil\342\200\256gnp.exe"), "evil\\u202egnp.exe");
    return 0;
}

int test_cli_text_invalid_utf8_bytes(void)
{
    TEST_EQ_STR(put("a\377b"), "a\\xffb");
    TEST_EQ_STR(put("cut \303"), "cut \\xc3");                    /* truncated */
    TEST_EQ_STR(put("\303("), "\\xc3(");                          /* bad continuation */
    TEST_EQ_STR(put("\300\257"), "\\xc0\\xaf");                   /* overlong '/' */
    TEST_EQ_STR(put("\355\240\200"), "\\xed\\xa0\\x80");          /* surrogate U+D800 */
    TEST_EQ_STR(put("\364\220\200\200"), "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    TEST_EQ_STR(put("\342\202"), "\\xe2\\x82");                   /* cut 3-byte sequence */
    TEST_EQ_STR(put("\200x\277"), "\\x80x\\xbf");                 /* stray continuations */
    TEST_EQ_STR(put("\360\237\230\200\360\237"), "😀\\xf0\\x9f");  /* good then cut */
    return 0;
}

int test_cli_text_cell_width(void)
{
    char b[4 * 40 + 1];
    /* ASCII: exactly what "%-10.10s" prints */
    char ref[64];
    snprintf(ref, sizeof ref, "%-10.10s", "abcdefghijklmnop");
    TEST_EQ_STR(cli_text_cell("abcdefghijklmnop", 10, b, sizeof b), ref);
    snprintf(ref, sizeof ref, "%-10.10s", "abc");
    TEST_EQ_STR(cli_text_cell("abc", 10, b, sizeof b), ref);
    /* wide characters take two columns; never cut inside a character */
    TEST_EQ_STR(cli_text_cell("カーネル", 5, b, sizeof b), "カー ");
    TEST_EQ_STR(cli_text_cell("カーネル", 8, b, sizeof b), "カーネル");
    TEST_EQ_STR(cli_text_cell("ab\303\251cd", 4, b, sizeof b), "ab\303\251c");
    /* an escape is not split: it does not fit, the cell is padded */
    TEST_EQ_STR(cli_text_cell("ab\033cd", 4, b, sizeof b), "ab  ");
    TEST_EQ_STR(cli_text_cell("ab\033cd", 6, b, sizeof b), "ab\\x1b");
    /* width < 0: the whole escaped string */
    TEST_EQ_STR(cli_text_cell("a\nb", -1, b, sizeof b), "a\\nb");
    /* a small buffer cuts at a piece boundary */
    char small[5];
    TEST_EQ_STR(cli_text_cell("a\033bcdef", -1, small, sizeof small), "a");
    return 0;
}

int test_cli_text_msg_keeps_final_newline_only(void)
{
    static char out[256];
    FILE *f = fmemopen(out, sizeof out, "w");
    TEST_ASSERT(f);
    cli_msg(f, "tlview x: %s: %d\n", "evil\nname\033[2J", 3);
    cli_msg(f, "no newline %s", "\r");
    fclose(f);
    TEST_EQ_STR(out, "tlview x: evil\\nname\\x1b[2J: 3\nno newline \\r");
    return 0;
}
