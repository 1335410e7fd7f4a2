/* calibration.c: what MPS costs and how much its clients slow each other, per GPU model, as
 * measured by bench/mps_costs.sh (bench/RESULTS.md has the runs). The predicted gain's
 * pessimistic bound reads them (verdict.c); analysis/README.md says how. */
#include <stdio.h>
#include <string.h>

#include "analysis_int.h"

/* Measured on an NVIDIA H200 (driver 580.159.04), 2026-12-01 12:51 UTC, bench/mps_costs.sh:
 * - launch: 10,000 empty <<<1,1>>> kernels, median of 5 rounds: 4.686 us per launch as an MPS
 *   client against 3.809 us without MPS: 877 ns more per kernel;
 * - side by side: N clients, one ~100 ms kernel each, kernels that fit the GPU together (a
 *   one-thread chain, 16 blocks of 256 threads): 1.00x their solo time for N = 2, 4, 8; but
 *   one-block kernels of 128 threads (bench/mps_placement.sh, 2026-11-29, three runs) ran 1.0x at
 *   N <= 4, 1.59-2.58x at N = 8 and 1.0-2.9x at N = 16, all placed on the same two SMs, and
 *   samples/triton_single_sm's at N = 8 1.14-1.50x: the worst of each is the bound;
 * - kernel tails (2026-12-01 21:58 UTC, part e): chains of 2000 kernels filling every SM back to
 *   back, two clients under MPS against twice one chain alone: 2.03 us saved per kernel of
 *   15.9 us, 3.40 us per kernel of 97.8 us. Of that, the solo chain's idle between kernels
 *   (1.57 and 1.68 us) is not kernel time, which the best case's SM bound counts; the rest, 0.46
 *   and 1.72 us, is the drain of each kernel's last wave that the other client's blocks fill: the
 *   line through the two, 0.21 us + 1.55% of the kernel's duration, is what the best case lets a
 *   kernel gain beside another client's beyond the SMs' occupancy; below the shorter kernel
 *   measured, no more than its share (2.9%);
 * - time slice (tests/gpu/record_demos.sh, 2026-12-02 10:59 UTC, no MPS): N processes started
 *   together, their first kernels starting one slice apart: 2.248 ms beside one-block kernels
 *   (spin, N = 8: 0, 2.247, 4.495, ... 15.740 ms), 2.30 ms beside kernels filling the GPU
 *   (saturating); the longer is the bound. A context's first kernel waited up to 1.53 rounds of
 *   the others' slices (14:39, spin: 10.55 ms at N = 4, 24.48 ms at N = 8, where one round is
 *   6.9 and 16.1 ms; svp and sat at most 1.04 rounds): the first launch of a module loads it
 *   (CUDA's lazy loading), which waits for a slice of its own; two rounds are the bound. The
 *   contexts' last kernels ended at most 0.6 rounds apart;
 * - launch latency (2026-12-01 23:36 UTC, tests/gpu/workloads.sh --api, GPT-2 at batch 4 alone,
 *   5842 of its 6438 kernels starting after their launch call returned and their stream's
 *   previous kernel ended): 1.5 us from the later of the two to the start at the median, 2.6 us
 *   at the 99th percentile; 3 us is the most a ready kernel waits on a free GPU;
 * - packing (2026-12-02 05:42 UTC, tlview report --baseline on the 87 MPS runs of
 *   tests/gpu/workloads.sh recorded 2026-12-01/02): the effective parallelism of MPS clients'
 *   overlapped windows was never below 1.02 at 2 and 4 clients; at 8, 0.794 (GPT-2 in float16),
 *   0.887, 0.934, 0.964 (convnext_tiny, whose 8 clients gained 1.065x where one after another at
 *   solo speed said at least 1.126x). 16 clients were not measured: the 8-client figure. Since
 *   2026-12-02 09:25 UTC, different applications sharing the GPU (workloads.sh --plan mix): at 4
 *   clients 0.988 (convnext_tiny beside BERT) and 0.995 (resnet50 beside BERT); at 2, 1.09-1.22;
 *   at 8, 0.916-1.21.
 * - context switch (the timing signature, analysis/README.md "When the file does not say"): the
 *   GPU idle between one context's last kernel and another's first, without MPS, on the
 *   committed recordings placed by their end calibration pairs (tests/analysis/calibrate.c):
 *   135.1-143.2 us (kineto-mps-off, torch-mps-off, resnet18 and GPT-2 at N = 4, the heavy torch
 *   runs: p10 135.5-142.7, median 138.3-143.2), longer only where the next context's host
 *   launched late; no turn of one context shorter than 136 us. The mark is 110-220 us (the
 *   switch, up to 1.5x for a late launch); a turn under 100 us is quicker than any switch.
 * - handover (2026-12-07, `calibrate -g` over tests/analysis/signature.list: the 56 H200
 *   recordings and the 18 H100 Kineto ones of tests/gpu/kineto_matrix.sh): from a kernel end to
 *   the next start of another context, and from a start to the next end of another context.
 *   Without MPS (37 recordings, 253,148 such events) never under 135.1 us (kineto-mps-off;
 *   torch-mps-off 135.3, the H100's 137.6-148.0), none under 100 us: a switch lies between any
 *   two contexts' work. With MPS most are within microseconds (resnet18 at N = 4 on the H200:
 *   85,768 of 103,224 under 20 us), and the GEMM sweeps whose clients each fill the H100, one at
 *   a time, whose turns are neither quick nor marked: 29 of 292 (N = 2), 115 of 592 (N = 4),
 *   265 of 1196 (N = 8) under 20 us. The bound is 20 us, 6.7x under the fastest switch. */
static const analysis_calibration h200 = {
    .gpu = "NVIDIA H200",
    .launch_ns = 877.0,
    .slowdown = {1.0, 1.0, 2.58, 2.9},
    .packing = {1.0, 0.988, 0.794, 0.794},
    .tail_ns = 210.0,
    .tail_share = 0.0155,
    .tail_max = 0.029,
    .wait_latency_ns = 3000.0,
    .slice_ns = 2.30e6,
    .first_rounds = 2.0,
    .switch_lo_ns = 110e3,
    .switch_hi_ns = 220e3,
    .quick_ns = 100e3,
    .handover_ns = 20e3,
};

const analysis_calibration *analysis_calibration_for(const char *gpu, int *pExact)
{
    int exact = gpu && !strncmp(gpu, h200.gpu, strlen(h200.gpu));
    if (pExact)
        *pExact = exact;
    return &h200; /* the only GPU measured so far stands in for the others */
}

/* The index of the first measured count (2, 4, 8, 16) at or above `clients` (x.5 down). */
static int clients_index(double clients)
{
    return clients <= 2.5 ? 0 : clients <= 4.5 ? 1 : clients <= 8.5 ? 2 : 3;
}

double analysis_calibration_slowdown(const analysis_calibration *c, double clients)
{
    return c->slowdown[clients_index(clients)];
}

double analysis_calibration_packing(const analysis_calibration *c, double clients)
{
    return c->packing[clients_index(clients)];
}

const char *analysis_gain_bound_text(const char *gpu, int worst, char *buf, size_t n)
{
    int exact;
    const analysis_calibration *c = analysis_calibration_for(gpu, &exact);
    char from[96];
    snprintf(from, sizeof from, exact ? "measured on the %s" : "measured on the %s, not this GPU",
             c->gpu);
    if (!worst)
        snprintf(buf, n,
                 "at best: no context switches (their idle gaps gone), every kernel at its solo "
                 "speed, as many side by side as were in flight or waiting behind another "
                 "context's slice (the idle in one context's slice filled by them; at the "
                 "time-sliced stretch's start and end, a context's first kernel up to %.3g "
                 "rounds of the others' %.2f ms slices late and its last up to one round early "
                 "taken as waiting) but no more than the SMs hold by their occupancy limits, "
                 "and each kernel's last wave drained into by another client's blocks (%.2f us "
                 "+ %.2f%% of its duration, at most %.1f%%; %s)",
                 c->first_rounds, c->slice_ns / 1e6, c->tail_ns / 1e3, 100 * c->tail_share,
                 100 * c->tail_max, from);
    else
        snprintf(buf, n,
                 "at worst: kernels that fit the GPU together on SMs of their own side by side, "
                 "slowed as much as MPS clients were ever measured to slow each other (%.2gx at 2 "
                 "clients, %.2gx at 4, %.3gx at 8, %.2gx at 16); the others side by side at the "
                 "lowest parallelism measured of MPS clients (%.3g at 2, %.3g at 4, %.3g at 8, "
                 "%.3g at 16; 1: one after another at solo speed); every kernel %.0f ns later for "
                 "the MPS server's launch path; idle gaps and kernels' waits as they were (%s)",
                 c->slowdown[0], c->slowdown[1], c->slowdown[2], c->slowdown[3], c->packing[0],
                 c->packing[1], c->packing[2], c->packing[3], c->launch_ns, from);
    return buf;
}
