/* grow_trace: a traced process for the browser test of `tlview serve --follow`: writes FILE
 * through the store writer (WAL mode, as libcollect does) one committed batch at a time, as told
 * on stdin, one command a line: "N" adds N kernels of 600 ns every 1 us after the last ones; "c"
 * adds a captured range "peak" over every kernel so far; "q" closes the file and exits. Answers
 * "ok" on stdout after each. Usage: grow_trace FILE PID */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define BASE 1764000000000000000LL /* the first kernel's start, CLOCK_REALTIME ns */

static int fail(store_writer *w, const char *what)
{
    fprintf(stderr, "grow_trace: %s: %s\n", what, w ? store_writer_errmsg(w) : "out of memory");
    store_writer_close(w);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: grow_trace FILE PID\n");
        return 2;
    }
    store_writer *w = NULL;
    int64_t proc, t = BASE, cap;
    store_process_info pi = {atoll(argv[2]), 1, "h", "/bin/grow", "grow", NULL, "libcollect", BASE};
    store_device_info di = {0, "00112233445566778899aabbccddeeff", "NVIDIA H200", 132, 9, 0, 1};
    store_context_info ci = {.context_id = 1, .device_id = 0, .compute_api_kind = 1};
    if (store_writer_open(argv[1], STORE_CLOCK_REALTIME, 0, &w) ||
        store_writer_process(w, &pi, &proc) || store_writer_device(w, proc, &di) ||
        store_writer_context(w, proc, &ci))
        return fail(w, "open");
    char line[64];
    while (fgets(line, sizeof line, stdin) && line[0] != 'q') {
        if (line[0] == 'c') {
            if (store_writer_capture(w, proc, BASE, "peak", "control", &cap) ||
                store_writer_capture_end(w, cap, t, "control"))
                return fail(w, "capture");
        } else {
            int n = atoi(line);
            if (store_writer_begin(w))
                return fail(w, "begin");
            for (int i = 0; i < n; i++, t += 1000) {
                store_kernel_info k = {.start = t,
                                       .end = t + 600,
                                       .context_id = 1,
                                       .stream_id = 7,
                                       .correlation_id = (uint32_t)((t - BASE) / 1000),
                                       .grid = {1, 1, 1},
                                       .block = {32, 1, 1},
                                       .name = "_Z4growv"};
                if (store_writer_kernel(w, proc, &k))
                    return fail(w, "kernel");
            }
            if (store_writer_commit(w))
                return fail(w, "commit");
        }
        printf("ok\n");
        fflush(stdout);
    }
    if (store_writer_process_end(w, proc, t, 1, NULL))
        return fail(w, "end");
    return store_writer_close(w) != 0;
}
