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

int collector_parse_ms(const char *text, int bare_seconds, uint64_t *ms)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !(v >= 0) || text[0] == '-' || text[0] == '+' ||
        strspn(text, "0123456789.") != (size_t)(end - text))
        return -1; /* no hex, no exponent, no nan/inf, no sign */
    double scale;
    if (!strcmp(end, "ms"))
        scale = 1;
    else if (!strcmp(end, "s") || (!*end && bare_seconds))
        scale = 1e3;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        scale = 60e3;
    else if (!strcmp(end, "h"))
        scale = 3600e3;
    else
        return -1;
    double r = v * scale;
    if (r > 1e15)
        return -1;
    *ms = (uint64_t)(r + 0.5);
    return 0;
}

/* Reads variable `name` as a span of time in [lo_ms, hi_ms] (bare numbers are seconds); keeps
 * *ms (the default) and warns when it is malformed or out of range. */
static void env_ms(const char *name, uint64_t lo_ms, uint64_t hi_ms, uint64_t *ms)
{
    const char *text = getenv(name);
    uint64_t v = 0;
    if (!text || !*text)
        return;
    if (collector_parse_ms(text, 1, &v) != 0)
        log_warn("%s=%s is not a time (10s, 500ms, 2m, 1h); ignored", name, text);
    else if (v < lo_ms || v > hi_ms)
        log_warn("%s=%s is outside [%llu ms, %llu ms]; ignored", name, text,
                 (unsigned long long)lo_ms, (unsigned long long)hi_ms);
    else
        *ms = v;
}

/* TLVIEW_CAPTURE, TLVIEW_CAPTURE_DELAY, TLVIEW_CAPTURE_DURATION, TLVIEW_CONTROL_DIR and
 * TLVIEW_FLIGHT. */
static void capture_config(collector_config *cfg)
{
    const char *mode = getenv("TLVIEW_CAPTURE");
    cfg->capture = COLLECTOR_CAPTURE_ALL;
    if (mode && *mode) {
        if (!strcasecmp(mode, "cudaProfilerApi"))
            cfg->capture = COLLECTOR_CAPTURE_PROFILER_API;
        else if (!strcasecmp(mode, "control"))
            cfg->capture = COLLECTOR_CAPTURE_CONTROL;
        else if (strcasecmp(mode, "all"))
            log_warn("TLVIEW_CAPTURE=%s is not all, cudaProfilerApi or control; using all", mode);
    }
    env_ms("TLVIEW_CAPTURE_DELAY", 0, 7 * 86400000ull, &cfg->capture_delay_ms);
    env_ms("TLVIEW_CAPTURE_DURATION", 1, 7 * 86400000ull, &cfg->capture_duration_ms);
    if (cfg->capture_delay_ms && cfg->capture != COLLECTOR_CAPTURE_ALL) {
        log_warn("TLVIEW_CAPTURE_DELAY applies to TLVIEW_CAPTURE=all only; ignored");
        cfg->capture_delay_ms = 0;
    }
    int cd = collector_control_dir(cfg->control_dir, sizeof cfg->control_dir);
    if (cd < 0) {
        log_warn("TLVIEW_CONTROL_DIR is longer than %zu bytes; no control channel",
                 sizeof cfg->control_dir - 1);
        cfg->control_dir[0] = '\0';
    }
    if (!cfg->control_dir[0] && cfg->capture == COLLECTOR_CAPTURE_CONTROL) {
        log_warn("TLVIEW_CAPTURE=control needs the control channel (TLVIEW_CONTROL_DIR is off); "
                 "using all");
        cfg->capture = COLLECTOR_CAPTURE_ALL;
    }
    if (cfg->capture == COLLECTOR_CAPTURE_PROFILER_API)
        cfg->callbacks = 1; /* the profiler API is seen through the one subscription */

    const char *flight = getenv("TLVIEW_FLIGHT");
    uint64_t v = 0;
    size_t fl = flight ? strlen(flight) : 0;
    if (fl > 1 && flight[fl - 1] == 'm' && strchr("0123456789.", flight[fl - 2])) {
        log_warn("TLVIEW_FLIGHT=%s is ambiguous: write %.*smin (minutes) or %.*sM (MiB); no "
                 "flight recorder",
                 flight, (int)(fl - 1), flight, (int)(fl - 1), flight);
    } else if (flight && *flight) {
        if (collector_parse_ms(flight, 0, &v) == 0) {
            if (v >= 1000 && v <= 7 * 86400000ull)
                cfg->flight_ms = v;
            else
                log_warn("TLVIEW_FLIGHT=%s: the window must be from 1 s to 7 days; no flight "
                         "recorder",
                         flight);
        } else if (parse_size(flight, &v) == 0 && strpbrk(flight, "kKmMgG")) {
            if (v >= (1u << 20))
                cfg->flight_bytes = v;
            else
                log_warn("TLVIEW_FLIGHT=%s: keep at least 1M; no flight recorder", flight);
        } else {
            log_warn("TLVIEW_FLIGHT=%s is neither a time (30s, 5m) nor a size (64M, 1G); no "
                     "flight recorder",
                     flight);
        }
    }
    if ((cfg->flight_ms || cfg->flight_bytes) && !cfg->flush_ms) {
        log_warn("TLVIEW_FLIGHT rotates at each flush: TLVIEW_FLUSH_MS=%u is used instead of 0",
                 COLLECTOR_DEFAULT_FLUSH_MS);
        cfg->flush_ms = COLLECTOR_DEFAULT_FLUSH_MS;
    }
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

    const char *api = getenv("TLVIEW_API");
    cfg->api = api && !strcasecmp(api, "all") ? COLLECTOR_API_ALL
               : env_bool("TLVIEW_API")       ? COLLECTOR_API_CALLS
                                              : 0;
    cfg->nvtx = env_bool("TLVIEW_NVTX");
    cfg->callbacks = env_bool("TLVIEW_CALLBACKS");

    const char *run = getenv("TLVIEW_RUN_ID");
    snprintf(cfg->run_id, sizeof cfg->run_id, "%s", run ? run : "");
    capture_config(cfg);

    log_dbg("output=%s buffer_size=%zu buffer_count=%u flush_ms=%u api=%d nvtx=%d capture=%d"
            " delay=%llu ms duration=%llu ms control=%s flight=%llu ms/%llu bytes",
            cfg->output, cfg->buffer_size, cfg->buffer_count, cfg->flush_ms, cfg->api, cfg->nvtx,
            (int)cfg->capture, (unsigned long long)cfg->capture_delay_ms,
            (unsigned long long)cfg->capture_duration_ms,
            cfg->control_dir[0] ? cfg->control_dir : "off", (unsigned long long)cfg->flight_ms,
            (unsigned long long)cfg->flight_bytes);
    return 0;
}
