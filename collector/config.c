/* collector configuration: every TLVIEW_* environment variable is read here, once, by
 * collector_startup(). `tlview record` and users configure the collector only through the
 * environment (the way uftrace's record sets UFTRACE_* for libmcount); a unit test can setenv()
 * and call collector_startup() directly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "collector_int.h"

#define LOG_PREFIX "config"

/* Parses "123", "64K", "8M", "1G" (binary units). Returns 0 or -1. */
static int parse_size(const char *text, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* Reads variable `name` as an unsigned value in [lo, hi] (sizes with units when `size`); keeps
 * *value (the default) and warns when it is malformed or out of range. */
static void env_uint(const char *name, uint64_t lo, uint64_t hi, int size, uint64_t *value)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return;
    uint64_t v = 0;
    if (parse_size(text, &v) != 0 || (!size && strspn(text, "0123456789") != strlen(text))) {
        log_warn("%s=%s is not a%s number; using %llu", name, text, size ? " size or" : "n",
                 (unsigned long long)*value);
        return;
    }
    if (v < lo || v > hi) {
        log_warn("%s=%s is outside [%llu, %llu]; using %llu", name, text, (unsigned long long)lo,
                 (unsigned long long)hi, (unsigned long long)*value);
        return;
    }
    *value = v;
}

/* 0/1 switches: "1", "yes", "on", "true" turn on; "0", "no", "off", "false", "" turn off. */
static int env_bool(const char *name)
{
    const char *t = getenv(name);
    if (!t || !*t)
        return 0;
    if (!strcmp(t, "1") || !strcasecmp(t, "yes") || !strcasecmp(t, "on") || !strcasecmp(t, "true"))
        return 1;
    if (strcmp(t, "0") && strcasecmp(t, "no") && strcasecmp(t, "off") && strcasecmp(t, "false"))
        log_warn("%s=%s is not 0 or 1; taken as 0", name, t);
    return 0;
}

int collector_startup(collector_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);

    /* The log level first, so the warnings below obey it. */
    const char *lt = getenv("TLVIEW_LOG");
    int valid = lt && (!strcmp(lt, "0") || !strcmp(lt, "1") || !strcmp(lt, "2"));
    collector_log_level = valid ? lt[0] - '0' : 1;
    if (lt && *lt && !valid)
        log_warn("TLVIEW_LOG=%s is not 0, 1 or 2; using 1", lt);

    const char *out = getenv("TLVIEW_OUTPUT");
    if (out && strlen(out) >= sizeof cfg->output) {
        log_warn("TLVIEW_OUTPUT is longer than %zu bytes; using %s", sizeof cfg->output - 1,
                 COLLECTOR_DEFAULT_OUTPUT);
        out = NULL;
    }
    snprintf(cfg->output, sizeof cfg->output, "%s", out && *out ? out : COLLECTOR_DEFAULT_OUTPUT);

    uint64_t v = COLLECTOR_DEFAULT_BUFFER_SIZE;
    env_uint("TLVIEW_BUFFER_SIZE", 64u << 10, 1u << 30, 1, &v);
    cfg->buffer_size = (size_t)(v & ~(uint64_t)7); /* CUPTI records are 8-byte aligned */
    v = COLLECTOR_DEFAULT_BUFFER_COUNT;
    env_uint("TLVIEW_BUFFER_COUNT", 1, 65536, 0, &v);
    cfg->buffer_count = (uint32_t)v;
    v = COLLECTOR_DEFAULT_FLUSH_MS;
    env_uint("TLVIEW_FLUSH_MS", 0, 3600000, 0, &v);
    cfg->flush_ms = (uint32_t)v;
    v = COLLECTOR_DEFAULT_EXIT_TIMEOUT_MS;
    env_uint("TLVIEW_EXIT_TIMEOUT_MS", 100, 3600000, 0, &v);
    cfg->exit_timeout_ms = (uint32_t)v;

    cfg->api = env_bool("TLVIEW_API");
    cfg->nvtx = env_bool("TLVIEW_NVTX");
    cfg->callbacks = env_bool("TLVIEW_CALLBACKS");

    const char *run = getenv("TLVIEW_RUN_ID");
    snprintf(cfg->run_id, sizeof cfg->run_id, "%s", run ? run : "");

    log_dbg("output=%s buffer_size=%zu buffer_count=%u flush_ms=%u api=%d nvtx=%d", cfg->output,
            cfg->buffer_size, cfg->buffer_count, cfg->flush_ms, cfg->api, cfg->nvtx);
    return 0;
}
