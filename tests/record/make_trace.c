/* make_trace: writes a small tlview trace file of one process, for tests/record/test_judge.sh
 * (which stands in for the GPU runs of tests/gpu/record_demos.sh).
 * Usage: make_trace PATH PID API_KIND KERNEL...   KERNEL = start_ms:dur_ms:name:grid_x
 * API_KIND is the context's compute API kind (1 CUDA, 2 MPS client). Exits 1 with a message on
 * error. */
#include <stdio.h>
#include <stdlib.h>

#include "store.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: make_trace PATH PID API_KIND start_ms:dur_ms:name:grid_x...\n");
        return 2;
    }
    const int64_t ms = 1000000, t0 = 1700000000LL * 1000000000LL;
    store_writer *w = NULL;
    int rc = store_writer_open(argv[1], STORE_CLOCK_REALTIME, t0, &w);
    store_process_info pi = {atoll(argv[2]), 1,      "hostA",      "/bin/demo",
                             "demo",         "run1", "libcollect", t0};
    int64_t proc = 0;
    rc = rc ? rc : store_writer_process(w, &pi, &proc);
    store_device_info dev = {
        0, "0123456789abcdef0123456789abcdef", "NVIDIA H200", 132, 9, 0, 150000000000ULL};
    rc = rc ? rc : store_writer_device(w, proc, &dev);
    store_context_info ci = {.context_id = 1,
                             .device_id = 0,
                             .compute_api_kind = (uint32_t)atoi(argv[3]),
                             .null_stream_id = 7};
    rc = rc ? rc : store_writer_context(w, proc, &ci);
    rc = rc ? rc : store_writer_begin(w);
    for (int i = 4; i < argc && !rc; i++) {
        double start, dur;
        char name[128];
        unsigned grid;
        if (sscanf(argv[i], "%lf:%lf:%127[^:]:%u", &start, &dur, name, &grid) != 4) {
            fprintf(stderr, "make_trace: bad kernel '%s'\n", argv[i]);
            store_writer_close(w);
            return 2;
        }
        store_kernel_info k = {.start = t0 + (int64_t)(start * ms),
                               .end = t0 + (int64_t)((start + dur) * ms),
                               .context_id = 1,
                               .stream_id = 7,
                               .correlation_id = (uint32_t)i,
                               .grid = {grid, 1, 1},
                               .block = {1, 1, 1},
                               .name = name};
        rc = store_writer_kernel(w, proc, &k);
    }
    rc = rc ? rc : store_writer_commit(w);
    rc = rc ? rc : store_writer_process_end(w, proc, t0 + 100000 * ms, 1, NULL);
    if (rc)
        fprintf(stderr, "make_trace: %s\n", w ? store_writer_errmsg(w) : "out of memory");
    int rc2 = store_writer_close(w);
    return rc || rc2 ? 1 : 0;
}
