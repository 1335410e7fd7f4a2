/* wire.c: the byte format of what job/ hands between threads and MPI ranks (job_int.h): fields
 * laid end to end, each ending with a NUL. A typed field starts with its type: 'I' and a decimal
 * integer, 'S' and a text (any bytes but NUL: file strings travel exactly, valid UTF-8 or not),
 * 'N' for a NULL text; a raw field is a text alone (paths, summaries). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_int.h"

void job_wire_bytes(job_wire *w, const char *s, size_t n)
{
    if (w->bad)
        return;
    if (w->n + n > (size_t)INT_MAX) { /* MPI counts are ints */
        w->bad = 1;
        return;
    }
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4096;
        while (cap < w->n + n)
            cap *= 2;
        char *p = realloc(w->p, cap);
        if (!p) {
            w->bad = 1;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->n, s, n);
    w->n += n;
}

void job_wire_raw(job_wire *w, const char *s)
{
    job_wire_bytes(w, s, strlen(s) + 1);
}

void job_wire_str(job_wire *w, const char *s)
{
    job_wire_bytes(w, s ? "S" : "N", 1);
    job_wire_raw(w, s ? s : "");
}

void job_wire_int(job_wire *w, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "I%" PRId64, v);
    job_wire_raw(w, s);
}

void job_wire_free(job_wire *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

const char *job_read_raw(job_reader *r)
{
    const char *s = r->at;
    const char *z = !r->bad && s < r->end ? memchr(s, '\0', (size_t)(r->end - s)) : NULL;
    if (!z) {
        r->bad = 1;
        return NULL;
    }
    r->at = z + 1;
    return s;
}

const char *job_read_str(job_reader *r)
{
    const char *s = job_read_raw(r);
    if (s && *s == 'S')
        return s + 1;
    if (!s || *s != 'N')
        r->bad = 1;
    return NULL;
}

int64_t job_read_int(job_reader *r)
{
    const char *s = job_read_raw(r);
    if (!s || *s != 'I') {
        r->bad = 1;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s + 1, &end, 10);
    if (errno || *end || end == s + 1)
        r->bad = 1;
    return v;
}

int job_read_more(const job_reader *r)
{
    return !r->bad && r->at < r->end;
}
