/* imp_fixture: runs one importer fixture directory (tests/importers/<format>/<case>/), the way
 * jansson's test/bin/json_process.c runs its suites. The input is built at test time: input.sql is
 * executed into a fresh SQLite file, input.json is copied; an optional `mutate` file then damages
 * it ("truncate BYTES", "poke OFFSET BYTE COUNT", "gzip", "gzip OFFSET": two gzip members split
 * at OFFSET, "append TEXT": TEXT with \xHH escapes added at the end). An optional `env` file
 * holds NAME=VALUE lines set before the import (TLVIEW_MAX_EVENTS=2). The run is dumped as JSON
 * and compared with expected.json, or the error with `error` ("<row> <message>", the file name
 * left out). Strings that are not valid UTF-8 are dumped with each bad byte as the 4 characters
 * \xHH (jansson refuses them as they are).
 * An NVVP case holds `session` instead, the spec from which make_nvvp.py writes the session file.
 * Usage: imp_fixture CASE_DIR WORK_DIR [--print]   (--print shows what the import gives) */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "importers.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *g = realloc(buf, (cap *= 2) + 1);
            if (!g) {
                free(buf);
                buf = NULL;
            }
            buf = g;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static int spit(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

/* Writes data as one gzip member to path (mode "wb" or "ab"); 0 or -1. */
static int gzip_member(const char *path, const char *mode, const char *data, size_t len)
{
    gzFile g = gzopen(path, mode);
    return !g || gzwrite(g, data, (unsigned)len) != (int)len || gzclose(g) != Z_OK ? -1 : 0;
}

/* Applies the mutate file's lines to the built input. */
static int mutate(const char *dir, const char *input)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/mutate", dir);
    FILE *m = fopen(path, "r");
    if (!m)
        return 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, m)) {
        long a = 0, b = 0, c = 0;
        size_t len;
        char *data = slurp(input, &len);
        if (!data)
            rc = -1;
        else if (sscanf(line, "truncate %ld", &a) == 1)
            rc = spit(input, data, (size_t)a < len ? (size_t)a : len);
        else if (sscanf(line, "poke %ld %ld %ld", &a, &b, &c) == 3) {
            for (long i = a; i < a + c && (size_t)i < len; i++)
                data[i] = (char)b;
            rc = spit(input, data, len);
        } else if (strncmp(line, "gzip", 4) == 0) {
            size_t cut = sscanf(line, "gzip %ld", &a) == 1 && (size_t)a < len ? (size_t)a : len;
            rc = gzip_member(input, "wb", data, cut) ||
                 (cut < len && gzip_member(input, "ab", data + cut, len - cut));
        } else if (strncmp(line, "append ", 7) == 0) {
            FILE *f = fopen(input, "ab");
            for (const char *t = line + 7; f && *t && *t != '\n'; t++) {
                unsigned x;
                if (t[0] == '\\' && t[1] == 'x' && sscanf(t + 2, "%2x", &x) == 1)
                    fputc((int)x, f), t += 3;
                else
                    fputc(*t, f);
            }
            rc = !f || fclose(f) != 0 ? -1 : 0;
        } else if (line[0] != '#' && line[0] != '\n') {
            fprintf(stderr, "mutate: unknown line: %s", line);
            rc = -1;
        }
        free(data);
    }
    fclose(m);
    return rc;
}

/* Builds WORK_DIR/input.db from input.sql, WORK_DIR/input.json from input.json, or
 * WORK_DIR/input.nvvp from the NVVP session spec `session` (make_nvvp.py). */
static int build_input(const char *dir, const char *work, char *input, size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/session", dir);
    if (access(path, R_OK) == 0) {
        char cmd[13000];
        snprintf(input, cap, "%s/input.nvvp", work);
        snprintf(cmd, sizeof cmd, "python3 '%s' '%s' '%s'", MAKE_NVVP, path, input);
        if (system(cmd) != 0) {
            fprintf(stderr, "%s: make_nvvp.py failed\n", path);
            return -1;
        }
        return mutate(dir, input);
    }
    snprintf(path, sizeof path, "%s/input.sql", dir);
    char *text = slurp(path, NULL);
    if (text) {
        snprintf(input, cap, "%s/input.db", work);
        remove(input);
        sqlite3 *db;
        char *msg = NULL;
        int rc = sqlite3_open(input, &db);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(db, text, NULL, NULL, &msg);
        if (rc != SQLITE_OK)
            fprintf(stderr, "%s: %s\n", path, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_close(db);
        free(text);
        return rc == SQLITE_OK ? mutate(dir, input) : -1;
    }
    snprintf(path, sizeof path, "%s/input.json", dir);
    size_t len;
    if (!(text = slurp(path, &len))) {
        fprintf(stderr, "%s: no input.sql or input.json\n", dir);
        return -1;
    }
    snprintf(input, cap, "%s/input.json", work);
    int rc = spit(input, text, len);
    free(text);
    return rc ? rc : mutate(dir, input);
}

/* s as a JSON string, each byte that is not valid UTF-8 (store_utf8_decode) written as the text
 * \xHH. */
static json_t *str_or_null(const char *s)
{
    if (!s)
        return json_null();
    size_t n = strlen(s);
    char *buf = malloc(4 * n + 1), *o = buf;
    for (const char *p = s; *p;) {
        uint32_t cp;
        size_t k = store_utf8_decode(p, &cp);
        if (k) {
            memcpy(o, p, k);
            o += k;
            p += k;
        } else
            o += sprintf(o, "\\x%02x", (unsigned char)*p++);
    }
    json_t *j = json_stringn(buf, (size_t)(o - buf));
    free(buf);
    return j;
}

static json_t *text_of(const store_run *run, store_idx s)
{
    return s == STORE_NONE ? json_null() : str_or_null(run->strings[s].text);
}

/* Sets the NAME=VALUE lines of the case's `env` file; 0 or -1. */
static int set_env(const char *dir)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/env", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !line[0])
            continue;
        if (!eq) {
            fprintf(stderr, "%s: not NAME=VALUE: %s\n", path, line);
            rc = -1;
        } else {
            *eq = 0;
            rc = setenv(line, eq + 1, 1);
        }
    }
    fclose(f);
    return rc;
}

static json_t *dump(const store_run *run, const imp_stats *st)
{
    json_t *root = json_object(), *a;
    json_object_set_new(root, "format", json_string(st->format));
    json_object_set_new(root, "processes", a = json_array());
    for (uint32_t i = 0; i < run->nprocesses; i++) {
        const store_process *p = &run->processes[i];
        json_t *meta = json_object();
        for (uint32_t m = 0; m < p->nmeta; m++)
            json_object_set_new(meta, p->meta_keys[m], str_or_null(p->meta_values[m]));
        json_t *pj = json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "pid", (json_int_t)p->pid, "source",
                               str_or_null(p->source), "exe", str_or_null(p->exe), "argv",
                               str_or_null(p->argv), "host", str_or_null(p->host), "meta", meta);
        if (p->rows_refused) /* only when set: older expected files stay as they were */
            json_object_set_new(pj, "rows_refused", json_integer((json_int_t)p->rows_refused));
        json_array_append_new(a, pj);
    }
    json_object_set_new(root, "devices", a = json_array());
    for (uint32_t i = 0; i < run->ndevices; i++) {
        const store_device *d = &run->devices[i];
        json_t *dj = json_pack("{s:o,s:o,s:i,s:i,s:i,s:I}", "uuid", str_or_null(d->uuid), "name",
                               str_or_null(d->name), "sm_count", (int)d->sm_count, "cc_major",
                               (int)d->cc_major, "cc_minor", (int)d->cc_minor, "global_memory",
                               (json_int_t)d->global_memory);
        if (d->inferred) /* only when set: older expected files stay as they were */
            json_object_set_new(dj, "inferred", json_true());
        json_array_append_new(a, dj);
    }
    json_object_set_new(root, "contexts", a = json_array());
    for (uint32_t i = 0; i < run->ncontexts; i++) {
        const store_context *c = &run->contexts[i];
        json_t *cj =
            json_pack("{s:I,s:i,s:i,s:i}", "pid", (json_int_t)run->processes[c->process].pid,
                      "context", (int)c->context_id, "device", (int)c->device, "compute_api_kind",
                      (int)c->compute_api_kind);
        if (c->green || c->parent_id || c->sm_count) { /* only when known, as above */
            json_object_set_new(cj, "green", json_integer(c->green));
            json_object_set_new(cj, "parent_context", json_integer(c->parent_id));
            json_object_set_new(cj, "sm_count", json_integer(c->sm_count));
        }
        json_array_append_new(a, cj);
    }
    json_object_set_new(root, "kernels", a = json_array());
    for (uint64_t i = 0; i < run->nkernels; i++) {
        const store_kernel *k = &run->kernels[i];
        const store_stream *s = &run->streams[k->stream];
        const store_context *c = &run->contexts[s->context];
        const store_launch *l = &run->launches[k->launch];
        json_array_append_new(
            a,
            json_pack("{s:I,s:I,s:o,s:I,s:i,s:i,s:i,s:i,s:[iii],s:[iii],s:i,s:i,s:i}", "start",
                      (json_int_t)k->start, "end", (json_int_t)k->end, "name",
                      text_of(run, l->name), "pid", (json_int_t)run->processes[c->process].pid,
                      "device", (int)c->device, "context", (int)c->context_id, "stream",
                      (int)s->stream_id, "correlation", (int)k->correlation_id, "grid",
                      (int)l->grid[0], (int)l->grid[1], (int)l->grid[2], "block", (int)l->block[0],
                      (int)l->block[1], (int)l->block[2], "registers", (int)l->registers,
                      "static_smem", (int)l->static_smem, "dynamic_smem", (int)l->dynamic_smem));
    }
    json_object_set_new(root, "copies", a = json_array());
    for (uint64_t i = 0; i < run->ncopies; i++) {
        const store_copy *k = &run->copies[i];
        const store_stream *s = &run->streams[k->stream];
        const store_context *c = &run->contexts[s->context];
        json_array_append_new(
            a, json_pack("{s:I,s:I,s:s,s:i,s:I,s:I,s:i,s:i,s:i}", "start", (json_int_t)k->start,
                         "end", (json_int_t)k->end, "type",
                         k->type == STORE_COPY_MEMCPY ? "memcpy" : "memset", "kind", (int)k->kind,
                         "bytes", (json_int_t)k->bytes, "pid",
                         (json_int_t)run->processes[c->process].pid, "context", (int)c->context_id,
                         "stream", (int)s->stream_id, "correlation", (int)k->correlation_id));
    }
    json_object_set_new(root, "apis", a = json_array());
    for (uint64_t i = 0; i < run->napis; i++) {
        const store_api *k = &run->apis[i];
        json_array_append_new(
            a, json_pack("{s:I,s:I,s:I,s:I,s:i,s:o,s:s,s:i}", "start", (json_int_t)k->start, "end",
                         (json_int_t)k->end, "pid", (json_int_t)run->processes[k->process].pid,
                         "thread", (json_int_t)k->thread_id, "correlation", (int)k->correlation_id,
                         "name", text_of(run, k->name), "domain",
                         k->domain == STORE_API_DRIVER ? "driver" : "runtime", "status",
                         (int)k->status));
    }
    json_object_set_new(root, "ranges", a = json_array());
    for (uint64_t i = 0; i < run->nranges; i++) {
        const store_range *k = &run->ranges[i];
        json_array_append_new(a, json_pack("{s:I,s:I,s:I,s:I,s:o,s:o}", "start",
                                           (json_int_t)k->start, "end", (json_int_t)k->end, "pid",
                                           (json_int_t)run->processes[k->process].pid, "thread",
                                           (json_int_t)k->thread_id, "domain",
                                           text_of(run, k->domain), "name", text_of(run, k->name)));
    }
    json_t *un = json_object();
    for (uint32_t i = 0; i < st->nunmapped; i++)
        json_object_set_new(un, st->unmapped[i].kind,
                            json_integer((json_int_t)st->unmapped[i].count));
    json_object_set_new(root, "unmapped", un);
    json_object_set_new(root, "warning", json_string(st->warning));
    return root;
}

static void mkdir_p(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: imp_fixture CASE_DIR WORK_DIR [--print]\n");
        return 2;
    }
    const char *dir = argv[1], *work = argv[2];
    int print = argc > 3 && strcmp(argv[3], "--print") == 0;
    char input[4200], path[4200];
    mkdir_p(work);
    if (build_input(dir, work, input, sizeof input) || set_env(dir))
        return 1;

    store_run *run = store_run_new();
    imp_stats st;
    imp_error err;
    int rc = imp_load_ex(run, input, NULL, &st, &err);
    if (rc == 0)
        rc = store_run_finish(run);
    snprintf(path, sizeof path, "%s/error", dir);
    char *want_error = slurp(path, NULL);
    int fail = 0;
    if (rc) {
        char got[800];
        snprintf(got, sizeof got, "%lld %s", (long long)err.row, err.text);
        if (print)
            printf("%s\n", got);
        if (strncmp(err.message, input, strlen(input)) != 0) {
            fprintf(stderr, "FAIL: the message does not start with the file name: %s\n",
                    err.message);
            fail = 1;
        }
        if (strcmp(store_run_errmsg(run), err.message) != 0) {
            fprintf(stderr, "FAIL: run message \"%s\" != \"%s\"\n", store_run_errmsg(run),
                    err.message);
            fail = 1;
        }
        if (!want_error) {
            fprintf(stderr, "FAIL: import failed: %s\n", err.message);
            fail = 1;
        } else {
            want_error[strcspn(want_error, "\n")] = 0;
            if (strcmp(want_error, got) != 0) {
                fprintf(stderr, "FAIL: error\n  want: %s\n  got:  %s\n", want_error, got);
                fail = 1;
            }
        }
    } else {
        json_t *got = dump(run, &st);
        if (print)
            json_dumpf(got, stdout, JSON_INDENT(1) | JSON_SORT_KEYS), printf("\n");
        snprintf(path, sizeof path, "%s/expected.json", dir);
        json_error_t jerr;
        json_t *want = json_load_file(path, 0, &jerr);
        if (want_error) {
            fprintf(stderr, "FAIL: import succeeded, expected error: %s", want_error);
            fail = 1;
        } else if (!want) {
            fprintf(stderr, "FAIL: %s: %s\n", path, jerr.text);
            fail = 1;
        } else if (!json_equal(want, got)) {
            char *g = json_dumps(got, JSON_INDENT(1) | JSON_SORT_KEYS);
            fprintf(stderr, "FAIL: result differs from %s; got:\n%s\n", path, g);
            free(g);
            fail = 1;
        }
        json_decref(want);
        json_decref(got);
    }
    free(want_error);
    store_run_free(run);
    if (!fail)
        printf("ok %s\n", dir);
    return fail;
}
