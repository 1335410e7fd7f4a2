/* collector logging: one line per message on stderr, never stdout.
 * The collector runs inside other people's programs, so it speaks rarely (errors and warnings
 * once each, by default) and always with the "tlview:" prefix a user can grep for. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "collector_int.h"

int collector_log_level = 1;

void collector_log(const char *prefix, int debug, const char *fmt, ...)
{
    char line[1024];
    int n = debug ? snprintf(line, sizeof line, "tlview: %s: ", prefix)
                  : snprintf(line, sizeof line, "tlview: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* One write: lines from processes sharing a terminal stay whole. Nothing to do on error. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
