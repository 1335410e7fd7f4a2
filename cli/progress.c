/* progress.c: the progress bar of the commands that import files (tlview import), handed to the
 * importers as their progress callback (imp_options.progress): one line on stderr redrawn in
 * place, drawn only when stderr is a terminal so that logs and pipes stay clean. The file name is
 * escaped as every name from outside is (cli/text.c). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define NAME_COLS 32 /* terminal columns of the file name, cut or padded */

void cli_progress_tty(void *ctx, const char *path, uint64_t done, uint64_t total)
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
    char name[4 * NAME_COLS + 1];
    cli_text_cell(base, NAME_COLS, name, sizeof name);
    if (total == 0) { /* size unknown: a count */
        fprintf(stderr, "\r%s %llu\033[K", name, (unsigned long long)done);
        return;
    }
    int width = 30, fill = (int)(done * (uint64_t)width / total);
    char bar[31];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(width - fill));
    bar[width] = 0;
    fprintf(stderr, "\r%s [%s] %3d%%", name, bar, (int)(done * 100 / total));
}
