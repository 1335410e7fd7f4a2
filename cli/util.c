/* util.c: small helpers the subcommands share: durations, device names, the per-device headline,
 * number arguments, paths beside the binary. (Colours: color.c; output files: output.c; safe text
 * and usage errors: text.c.) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "view.h"

const char *cli_fmt_ns(double ns, char *buf, size_t n)
{
    double a = fabs(ns);
    if (isnan(ns))
        snprintf(buf, n, "-");
    else if (a >= 1e9)
        snprintf(buf, n, "%.3g s", ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.3g ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, n, "%.3g us", ns / 1e3);
    else
        snprintf(buf, n, "%.0f ns", ns);
    return buf;
}

void cli_headline(FILE *out, const analysis *a, int color)
{
    if (!analysis_ndevices(a)) {
        char line[64];
        fprintf(out, "%s\n", view_no_kernels_text(a, line, sizeof line));
        return;
    }
    for (uint32_t i = 0; i < analysis_ndevices(a); i++) {
        const analysis_device *d = analysis_get_device(a, i);
        view_headline h;
        view_headline_of(a, i, &h);
        /* head and tail carry the device's name, from the files */
        cli_put_text(out, h.head);
        fprintf(out, "%s%s%s", cli_verdict_color(d->verdict, color), h.verdict,
                cli_color_reset(color));
        cli_put_text(out, h.tail);
        fputc('\n', out);
    }
}

int cli_parse_long(const char *text, long lo, long hi, long *pV)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno == ERANGE || v < lo || v > hi)
        return -1;
    *pV = v;
    return 0;
}

int cli_exe_relative(const char *rel, char *buf, size_t n)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
    char *slash = strrchr(exe, '/');
    buf[0] = 0;
    if (!slash)
        return -1;
    *slash = 0;
    int len = snprintf(buf, n, "%s/%s", exe, rel);
    if (len < 0 || (size_t)len >= n) {
        buf[0] = 0;
        return -1;
    }
    return 0;
}
