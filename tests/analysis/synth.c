/* synth.c: synthetic runs for tests (see synth.h). */
#include <string.h>

#include "synth.h"

/* The compute_api_kind of a SYNTH_* MPS state. */
static uint32_t kind_of(int mps)
{
    return mps == SYNTH_MPS ? 2 : mps == SYNTH_UNKNOWN ? 0 : 1;
}

store_idx synth_process(store_run *run, int64_t pid, const char *host, const char *run_id, int mps,
                        const char *uuid)
{
    store_process_info pi = {0};
    pi.pid = pid;
    pi.host = host;
    pi.run_id = run_id;
    pi.source = "libcollect";
    store_idx p = store_run_add_process(run, &pi, "synthetic.db");
    store_device_info di = {0};
    di.uuid = uuid ? uuid : "0123456789abcdef0123456789abcdef";
    di.name = "NVIDIA H200";
    di.sm_count = 132;
    store_idx d = store_run_add_device(run, p, &di);
    store_idx c = store_run_context(run, p, 1, d, kind_of(mps));
    run->processes[p].complete = 1;
    return store_run_stream(run, c, 7);
}

store_idx synth_context(store_run *run, store_idx stream, uint32_t context_id, int mps, int green,
                        uint32_t parent_id)
{
    const store_context *c0 = &run->contexts[run->streams[stream].context];
    store_idx c = store_run_context(run, c0->process, context_id, c0->device, kind_of(mps));
    run->contexts[c].green = (uint8_t)green;
    run->contexts[c].parent_id = parent_id;
    return store_run_stream(run, c, 7);
}

int synth_kernel(store_run *run, store_idx stream, const char *name, int64_t start, int64_t end)
{
    store_launch l;
    memset(&l, 0, sizeof l);
    l.name = store_run_intern(run, name);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = l.block[1] = l.block[2] = 1;
    store_kernel k = {start, end, stream, store_run_launch(run, &l), 0, 0};
    return store_run_add_kernel(run, &k);
}

int synth_launched(store_run *run, store_idx stream, const char *name, uint32_t corr, int64_t ret,
                   int64_t start, int64_t end)
{
    store_api api;
    memset(&api, 0, sizeof api);
    api.start = ret - 2000;
    api.end = ret;
    api.process = run->contexts[run->streams[stream].context].process;
    api.correlation_id = corr;
    api.name = store_run_intern(run, "cudaLaunchKernel_v7000");
    api.domain = STORE_API_RUNTIME;
    int rc = synth_kernel(run, stream, name, start, end);
    if (rc)
        return rc;
    run->kernels[run->nkernels - 1].correlation_id = corr;
    return store_run_add_api(run, &api);
}

int64_t synth_train(store_run *run, store_idx stream, const char *name, int64_t t, int n,
                    int64_t dur, int64_t gap)
{
    for (int i = 0; i < n; i++, t += dur + gap)
        synth_kernel(run, stream, name, t, t + dur);
    return t - gap;
}
