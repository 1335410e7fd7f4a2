/* calibration.c: what MPS costs and how much its clients slow each other, per GPU model, as
 * measured by bench/mps_costs.sh (bench/RESULTS.md has the runs). The predicted gain's
 * pessimistic bound reads them (verdict.c); analysis/README.md says how. */
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
 *   measured, no more than its share (2.9%). */
static const analysis_calibration h200 = {
    "NVIDIA H200", 877.0, {1.0, 1.0, 2.58, 2.9}, 210.0, 0.0155, 0.029,
};

const analysis_calibration *analysis_calibration_for(const char *gpu, int *pExact)
{
    int exact = gpu && !strncmp(gpu, h200.gpu, strlen(h200.gpu));
    if (pExact)
        *pExact = exact;
    return &h200; /* the only GPU measured so far stands in for the others */
}

double analysis_calibration_slowdown(const analysis_calibration *c, double clients)
{
    if (clients <= 2.5)
        return c->slowdown[0];
    if (clients <= 4.5)
        return c->slowdown[1];
    return clients <= 8.5 ? c->slowdown[2] : c->slowdown[3];
}
