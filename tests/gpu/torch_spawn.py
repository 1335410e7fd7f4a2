#!/usr/bin/env python3
"""torch_spawn: torch.multiprocessing 'spawn' workers, each launching a known number of kernels.

Each worker fills one small tensor (1 kernel: fill_) and adds to it K times (K kernels: add_), then
reads one element back (a copy, not a kernel) to check the arithmetic, and prints
`pid=<pid> launched=<K+1>`. The parent never touches CUDA, so only the workers are CUDA processes.
Usage: torch_spawn.py [WORKERS [K]]   (defaults 4 and 1000)
"""
import os
import sys

import torch
import torch.multiprocessing as mp


def worker(rank, k):
    x = torch.empty(4096, device="cuda")
    x.fill_(1.0)
    for _ in range(k):
        x.add_(1.0)
    got = x[0].item()
    if got != 1.0 + k:
        print(f"torch_spawn: worker {rank} computed {got}, expected {1.0 + k}", file=sys.stderr)
        sys.exit(1)
    print(f"torch_spawn: worker {rank} pid={os.getpid()} launched={k + 1}", flush=True)


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r, k)) for r in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    if bad:
        print(f"torch_spawn: {len(bad)} worker(s) failed: exit codes {bad}", file=sys.stderr)
        return 1
    print(f"torch_spawn: {workers} workers done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
