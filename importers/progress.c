/* importers/progress.c: the progress bar `tlview import` (and anything else that imports) can hand
 * to imp_load_ex(): one line on stderr redrawn in place, drawn only when stderr is a terminal so
 * that logs and pipes stay clean. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "importers.h"

void imp_progress_tty(void *ctx, const char *path, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (!isatty(STDERR_FILENO))
        return;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (done == total) { /* the end (also of a file with nothing to count) */
        fprintf(stderr, "\r\033[K");
        return;
    }
    if (total == 0) { /* size unknown: a count */
        fprintf(stderr, "\r%-32.32s %llu\033[K", base, (unsigned long long)done);
        return;
    }
    int width = 30, fill = (int)(done * (uint64_t)width / total);
    char bar[31];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(width - fill));
    bar[width] = 0;
    fprintf(stderr, "\r%-32.32s [%s] %3d%%", base, bar, (int)(done * 100 / total));
}
