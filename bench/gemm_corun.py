#!/usr/bin/env python3
"""gemm_corun: one client of bench/gemm_corun.sh. Runs ITERS float32 matrix products
(M x K) @ (K x N) with torch on the GPU, back to back on one stream, after WARMUP untimed ones,
starting when the file GO appears (the driver creates it once every client has written
READY.<pid>), and prints one line:
    gemm_corun: m=M k=K n=N iters=ITERS start_ns=T0 end_ns=T1 us_per_gemm=X
(T0, T1: CLOCK_REALTIME ns around the timed loop, ended by a synchronize).
Usage: bench/gemm_corun.py --m M --k K --n N [--iters 2000] [--warmup 50] --go DIR
"""
import argparse
import os
import sys
import time


def main():
    p = argparse.ArgumentParser(description="one client of gemm_corun.sh")
    for name in ("m", "k", "n"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--go", required=True, help="folder of the READY.<pid> and GO files")
    a = p.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 kernels the workloads ran
    x = torch.randn(a.m, a.k, device="cuda")
    w = torch.randn(a.k, a.n, device="cuda")
    y = torch.empty(a.m, a.n, device="cuda")
    for _ in range(a.warmup):
        torch.mm(x, w, out=y)
    torch.cuda.synchronize()
    open(os.path.join(a.go, "READY.%d" % os.getpid()), "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(a.go, "GO")):
        if time.monotonic() > deadline:
            print("gemm_corun: no GO within 120 s", file=sys.stderr)
            return 1
        time.sleep(0.0005)
    t0 = time.time_ns()
    for _ in range(a.iters):
        torch.mm(x, w, out=y)
    torch.cuda.synchronize()
    t1 = time.time_ns()
    print("gemm_corun: m=%d k=%d n=%d iters=%d start_ns=%d end_ns=%d us_per_gemm=%.3f"
          % (a.m, a.k, a.n, a.iters, t0, t1, (t1 - t0) / 1e3 / a.iters))
    return 0


if __name__ == "__main__":
    sys.exit(main())
