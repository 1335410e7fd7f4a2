#!/usr/bin/env python3
"""gemm_corun_table: the table of bench/gemm_corun.sh from OUTDIR/raw.txt and the solo recordings.

Per operation: the kernel that took most of the solo run's time (name, grid, block, registers, shared
memory), the share of the SMs it holds by the occupancy limits (as analysis/verdict.c's
gpu_share() computes it for compute capability 9.0: its blocks over the blocks all SMs hold at
once, the last wave counted as far as it fills) and by blocks alone (one block per SM), the solo
time per operation, and per N and mode the effective parallelism: N x solo time per operation over
the span of the N clients' loops (first start to last end) per operation. The occupancy share lets the
best case run min(N, 1 / share) such kernels at once; the blocks share min(N, SMs / blocks).
Then, for mixes A+B (half the clients run A, half B), the effective parallelism per N and mode: each
client's solo time per operation times its operations, summed, over the span of their loops.
Usage: gemm_corun_table.py OUTDIR
"""
import glob
import math
import os
import re
import sqlite3
import sys


def occupancy_share(grid, threads, regs, smem, sms):
    warps = math.ceil(threads / 32)
    per_sm = min(32, math.floor(2048 / (warps * 32)))
    if regs:
        per_sm = min(per_sm, math.floor(65536 / (math.ceil(regs * 32 / 256) * 256 * warps)))
    if smem > 0:
        per_sm = min(per_sm, math.floor(233472 / smem))
    waves = grid / (max(per_sm, 1) * sms)
    return waves if waves < 1 else waves / math.ceil(waves)


def main_kernel(folder):
    """(name, grid, block, regs, smem, sms) of the kernel with the most time in the solo run."""
    for db in sorted(glob.glob(os.path.join(folder, "*.db"))):
        c = sqlite3.connect(db)
        row = c.execute(
            "SELECT s.text, l.grid_x*l.grid_y*l.grid_z, l.block_x*l.block_y*l.block_z, l.registers,"
            " l.static_smem+l.dynamic_smem, sum(k.dur) FROM kernel k JOIN launch l ON"
            " l.id=k.launch_id JOIN strings s ON s.id=l.name_id GROUP BY l.id ORDER BY 6 DESC"
            " LIMIT 1").fetchone()
        sms = c.execute("SELECT max(sm_count) FROM device").fetchone()[0] or 132
        if row:
            return row[:5] + (sms,)
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    runs = {}
    pat = re.compile(r"^(\S+) (on|off) (\d+) gemm_corun: op=(\S+) shape=(\S+) iters=(\d+) "
                     r"start_ns=(\d+) end_ns=(\d+) us_per_op=([0-9.]+)")
    iters = {}
    for line in open(os.path.join(out, "raw.txt")):
        m = pat.match(line)
        if not m:
            continue
        key = (m.group(1), m.group(2), int(m.group(3)))
        runs.setdefault(key, []).append((int(m.group(7)), int(m.group(8)),
                                         m.group(4) + ":" + m.group(5), int(m.group(6))))
        iters[m.group(1)] = int(m.group(6))
    shapes = sorted({k[0] for k in runs if "+" not in k[0]},
                    key=lambda s: (s.split(":")[0], [int(x) for x in s.split(":")[-1].split("x")]))
    print("| operation | kernel | grid | block | regs | smem | share (occupancy) | share (blocks)"
          " | solo us | off N=2 | off N=4 | off N=8 | MPS N=2 | MPS N=4 | MPS N=8 |"
          " occupancy allows N=2/4/8 | blocks allow N=2/4/8 |")
    print("|" + "---|" * 18)
    solo_ns = {}
    for s in shapes:
        solo = runs.get((s, "off", 1))
        if not solo:
            continue
        t_solo = (solo[0][1] - solo[0][0]) / iters[s]
        solo_ns[s] = t_solo
        k = main_kernel(os.path.join(out, "solo-" + s.replace(":", "-")))
        name, grid, block, regs, smem, sms = k if k else ("?", 0, 0, 0, 0, 132)
        occ = occupancy_share(grid, block, regs, smem, sms) if grid else float("nan")
        blk = min(1.0, grid / sms) if grid else float("nan")
        cells = []
        for mode in ("off", "on"):
            for n in (2, 4, 8):
                r = runs.get((s, mode, n))
                if not r or len(r) != n:
                    cells.append("-")
                    continue
                span = (max(e for _, e, _, _ in r) - min(b for b, _, _, _ in r)) / iters[s]
                cells.append("%.2f" % (n * t_solo / span))
        allow = lambda share: "/".join("%.2g" % min(n, 1 / share) for n in (2, 4, 8))
        print("| %s | %s | %d | %d | %s | %s | %.3f | %.3f | %.1f | %s | %s | %s |"
              % (s, name[:40], grid, block, regs, smem, occ, blk, t_solo / 1e3,
                 " | ".join(cells), allow(occ), allow(blk)))
    mixes = sorted({k[0] for k in runs if "+" in k[0]})
    if mixes:
        print()
        print("| mix | off N=2 | off N=4 | off N=8 | MPS N=2 | MPS N=4 | MPS N=8 |")
        print("|" + "---|" * 7)
    for mix in mixes:
        cells = []
        for mode in ("off", "on"):
            for n in (2, 4, 8):
                r = runs.get((mix, mode, n))
                if not r or len(r) != n or any(op not in solo_ns for _, _, op, _ in r):
                    cells.append("-")
                    continue
                span = max(e for _, e, _, _ in r) - min(b for b, _, _, _ in r)
                cells.append("%.2f" % (sum(solo_ns[op] * k for _, _, op, k in r) / span))
        print("| %s | %s |" % (mix, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
