/* text.c: the one UTF-8 check of the reader side. Strings from files are kept as their bytes;
 * every output (view/ for JSON, cli/ for the terminal, the importers' test dump) decodes them with
 * store_utf8_decode(). Reader side only: built into tlview_store, never into the collector. */
#include "store.h"

size_t store_utf8_decode(const char *s, uint32_t *pCp)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char b = p[0];
    if (b < 0x80) {
        *pCp = b;
        return 1;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (b >= 0xc2 && b <= 0xdf)
        n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        lo = b == 0xe0 ? 0xa0 : 0x80;
        hi = b == 0xed ? 0x9f : 0xbf;
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        lo = b == 0xf0 ? 0x90 : 0x80;
        hi = b == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = b & (0x7f >> n);
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    *pCp = cp;
    return n;
}
