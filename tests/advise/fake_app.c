/* fake_app: a stand-in for a CUDA program under `tlview advise` (tests/advise/test_advise.c), with
 * a known throughput in each configuration. It reads what advise gave it: TLVIEW_NPROCS (copies
 * sharing the GPU), CUDA_MPS_PIPE_DIRECTORY (MPS when a daemon's control pipe is there: the
 * stand-in nvidia-cuda-mps-control of tests/record makes one), CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
 *
 * The model: a copy's work takes FAKE_WORK_MS alone; N copies time-sliced take N times as long
 * each (the GPU's throughput stays 1 / work); under MPS the GPU does FAKE_GAIN_MPS times as much
 * (under mps:P, FAKE_GAIN_MPS_<P> when set); times 1 + FAKE_NOISE * z, z a standard normal drawn
 * from FAKE_SEED and the run's folder (TLVIEW_RECORD_DIR: the same in every copy of a run, so
 * the results are reproducible). It sleeps that long and prints "items_per_s=R", R = 1000 items
 * over the time of the model (so that --metric is exact), after a line saying what it saw.
 * FAKE_FAIL=CONFIG/rK:RANK:HOW[,...] makes copy RANK of that run fail: segv (killed by SIGSEGV),
 * exit3 (exit status 3), nometric (no items_per_s line), nan (items_per_s=1.2.3), hang (sleeps
 * 60 s; SIGINT/SIGTERM end it), deaf (60 s, ignoring SIGINT and SIGTERM).
 * FAKE_UNEVEN=U: under MPS the copies share the GPU unevenly, each doing the same work: copy
 * RANK takes 1 / (1 + (U - 1) (N - 1 - RANK) / (N - 1)) of the model's time, so the last one
 * the whole of it (the GPU's throughput over the run is unchanged) and the first U times less.
 * FAKE_STARTUP_MS=T: T ms of start-up before the work (not in the trace, not in the rate), the
 * same in every configuration, as a program that loads before it computes.
 * FAKE_FIRST_SLOW=S: the first run of each round (no other configuration has a folder for this
 * round yet) is S slower (0.3: 30%): a GPU that starts each round cold, a position effect.
 * FAKE_TRACE=1 writes a trace file to TLVIEW_OUTPUT (%p: the pid): 10 kernels over the model's
 * time (not the time it slept, which a loaded machine stretches), each
 * busy FAKE_TRACE_BUSY of its tenth (default 1: back to back; less leaves the GPU idle between
 * them, as a program whose CPU sets the pace), its context an MPS client under MPS, so that
 * advise has GPU figures to read. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

static double env_num(const char *name, double dflt)
{
    const char *v = getenv(name);
    return v && *v ? atof(v) : dflt;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* FNV-1a of a text, mixed with a seed: the run's own random stream. */
static uint64_t hash(const char *s, uint64_t seed)
{
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static double uniform(uint64_t *state) /* (0, 1), splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* The last two parts of the run's folder: "n2-mps/r3". */
static const char *run_name(void)
{
    const char *dir = getenv("TLVIEW_RECORD_DIR");
    if (!dir)
        return "";
    const char *last = strrchr(dir, '/');
    if (!last || last == dir)
        return dir;
    const char *p = last - 1;
    while (p > dir && *p != '/')
        p--;
    return *p == '/' ? p + 1 : p;
}

/* 1 when this run is the first of its round: no other configuration's folder holds rK yet. */
static int first_of_round(void)
{
    const char *dir = getenv("TLVIEW_RECORD_DIR"), *round = strrchr(dir ? dir : "", '/');
    char exp[4096], path[8192];
    struct stat st;
    if (!dir || !round)
        return 0;
    snprintf(exp, sizeof exp, "%.*s", (int)(round - dir), dir);
    char *cfg = strrchr(exp, '/');
    if (!cfg)
        return 0;
    *cfg = 0; /* exp is the experiment's folder now */
    DIR *d = opendir(exp);
    int others = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, cfg + 1)) {
            snprintf(path, sizeof path, "%s/%s%s", exp, e->d_name, round);
            others += stat(path, &st) == 0;
        }
    if (d)
        closedir(d);
    return d && !others;
}

/* How this copy is asked to fail ("" when not): FAKE_FAIL entries RUN:RANK:HOW. */
static const char *failure(int rank)
{
    static char how[32];
    const char *list = getenv("FAKE_FAIL"), *run = run_name();
    how[0] = 0;
    while (list && *list) {
        char entry[256];
        size_t len = strcspn(list, ",");
        snprintf(entry, sizeof entry, "%.*s", (int)len, list);
        char *c1 = strchr(entry, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c1 && c2) {
            *c1 = *c2 = 0;
            if (!strcmp(entry, run) && atoi(c1 + 1) == rank)
                snprintf(how, sizeof how, "%s", c2 + 1);
        }
        list += len + (list[len] == ',');
    }
    return how;
}

/* TLVIEW_OUTPUT with %p the pid and %% a '%'. */
static void output_path(char *out, size_t n)
{
    const char *p = getenv("TLVIEW_OUTPUT");
    size_t o = 0;
    for (; p && *p && o + 24 < n; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(out + o, n - o, "%d", (int)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[o++] = '%';
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* The trace a collector would have left: 10 kernels of (t1 - t0) / 10 each, one per slot of that
 * length, from the first slot boundary after t0. */
static int write_trace(int64_t t0, int64_t t1, int mps)
{
    double busy = env_num("FAKE_TRACE_BUSY", 1);
    char path[4096];
    output_path(path, sizeof path);
    if (!path[0])
        return 0;
    store_writer *w = NULL;
    int rc = store_writer_open(path, STORE_CLOCK_REALTIME, t0, &w);
    store_process_info pi = {getpid(),        1,          "hostA",
                             "/bin/fake_app", "fake_app", getenv("TLVIEW_RUN_ID"),
                             "libcollect",    t0};
    int64_t proc = 0;
    rc = rc ? rc : store_writer_process(w, &pi, &proc);
    store_device_info dev = {
        0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 150000000000ULL};
    rc = rc ? rc : store_writer_device(w, proc, &dev);
    store_context_info ci = {
        .context_id = 1, .device_id = 0, .compute_api_kind = mps ? 2 : 1, .null_stream_id = 7};
    rc = rc ? rc : store_writer_context(w, proc, &ci);
    rc = rc ? rc : store_writer_begin(w);
    /* slots on a grid of the absolute clock: the copies of a run, of one length, put their
     * kernels (and the gaps between) at the same instants, whatever their start skew */
    int64_t slot = (t1 - t0) / 10 > 0 ? (t1 - t0) / 10 : 1, base = (t0 / slot + 1) * slot;
    for (int i = 0; i < 10 && !rc; i++) {
        int64_t at = base + slot * i;
        store_kernel_info k = {.start = at,
                               .end = at + (int64_t)(slot * busy),
                               .context_id = 1,
                               .stream_id = 7,
                               .correlation_id = (uint32_t)i + 1,
                               .grid = {8, 1, 1},
                               .block = {128, 1, 1},
                               .name = "_Z4workPf"};
        rc = store_writer_kernel(w, proc, &k);
    }
    rc = rc ? rc : store_writer_commit(w);
    rc = rc ? rc : store_writer_process_end(w, proc, base + 10 * slot, 1, NULL);
    if (rc)
        fprintf(stderr, "fake_app: %s\n", w ? store_writer_errmsg(w) : "cannot write the trace");
    int rc2 = store_writer_close(w);
    return rc || rc2;
}

int main(void)
{
    int64_t start = now_ns();
    int n = (int)env_num("TLVIEW_NPROCS", 1), rank = (int)env_num("TLVIEW_RANK", 0);
    const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    char control[4200];
    struct stat st;
    snprintf(control, sizeof control, "%s/control", pipe ? pipe : "");
    int mps = pipe && stat(control, &st) == 0 && S_ISFIFO(st.st_mode);
    double gain = mps ? env_num("FAKE_GAIN_MPS", 1) : 1;
    if (mps && pct) {
        char name[64];
        snprintf(name, sizeof name, "FAKE_GAIN_MPS_%s", pct);
        gain = env_num(name, gain);
    }
    uint64_t state = hash(run_name(), (uint64_t)env_num("FAKE_SEED", 1));
    double u1 = uniform(&state), u2 = uniform(&state);
    double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    double speed = gain * (1 + env_num("FAKE_NOISE", 0) * z);
    if (first_of_round())
        speed *= 1 - env_num("FAKE_FIRST_SLOW", 0);
    double seconds = n * env_num("FAKE_WORK_MS", 100) / 1e3 / (speed > 0.01 ? speed : 0.01);
    if (mps && n > 1)
        seconds /= 1 + (env_num("FAKE_UNEVEN", 1) - 1) * (n - 1 - rank) / (n - 1);
    const char *how = failure(rank);
    printf("fake_app: mps=%d percentage=%s nprocs=%d rank=%d run=%s pipe=%s\n", mps,
           pct ? pct : "-", n, rank, run_name(), pipe ? pipe : "-");
    fflush(stdout);
    if (!strcmp(how, "hang") || !strcmp(how, "deaf")) {
        if (!strcmp(how, "deaf")) {
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, SIG_IGN);
        }
        sleep_ns(60 * 1000000000LL);
    }
    int64_t startup = (int64_t)(env_num("FAKE_STARTUP_MS", 0) * 1e6);
    sleep_ns(startup);
    sleep_ns((int64_t)(seconds * 1e9));
    start += startup;
    if (env_num("FAKE_TRACE", 0) && write_trace(start, start + (int64_t)(seconds * 1e9), mps))
        return 4;
    if (!strcmp(how, "segv")) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into an exit status */
        raise(SIGSEGV);
    }
    if (!strcmp(how, "exit3"))
        return 3;
    if (!strcmp(how, "nan"))
        printf("items_per_s=1.2.3\n");
    else if (strcmp(how, "nometric"))
        printf("items_per_s=%.9g\n", 1000 / seconds);
    return 0;
}
