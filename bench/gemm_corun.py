#!/usr/bin/env python3
"""gemm_corun: one client of bench/gemm_corun.sh. Runs ITERS float32 operations with torch on
the GPU, back to back on one stream, after WARMUP untimed ones, starting when the file GO appears
(the driver creates it once every client has written READY.<pid>), and prints one line:
    gemm_corun: op=OP shape=SHAPE iters=ITERS start_ns=T0 end_ns=T1 us_per_op=X
(T0, T1: CLOCK_REALTIME ns around the timed loop, ended by a synchronize). With --graph K the
operations are captured K at a time in a CUDA graph and the loop replays it ITERS / K times (ITERS
a multiple of K): one launch per K operations, so a loop of small operations is paced by the GPU,
not by Python's launches (13-15 us per operation on the H200's host). The operations:
    mm:MxKxN          the matrix product (M x K) @ (K x N)
    conv:NxCxHxWxKxR  a 2-D convolution of an N x C x H x W input by K filters of R x R (padding
                      R / 2, stride 1), as in a ResNet
    sm:RxC            softmax over the C columns of an R x C matrix (attention's)
    ln:RxC            layer norm over the C columns of an R x C matrix (a transformer's)
    gelu:RxC          GELU of each element of an R x C matrix (a transformer's MLP)
Usage: bench/gemm_corun.py --op OP:SHAPE [--iters 2000] [--warmup 50] [--graph K] --go DIR
"""
import argparse
import os
import sys
import time


def main():
    p = argparse.ArgumentParser(description="one client of gemm_corun.sh")
    p.add_argument("--op", required=True,
                   help="mm:MxKxN, conv:NxCxHxWxKxR, sm:RxC, ln:RxC or gelu:RxC")
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--graph", type=int, default=0,
                   help="replay the operations K at a time from a CUDA graph (0: launch each)")
    p.add_argument("--go", required=True, help="folder of the READY.<pid> and GO files")
    a = p.parse_args()
    if a.graph < 0 or a.iters <= 0 or (a.graph and a.iters % a.graph):
        print("gemm_corun: --iters must be a positive multiple of --graph", file=sys.stderr)
        return 2
    kind, _, shape = a.op.partition(":")
    dims = [int(x) for x in shape.split("x")] if shape else []
    want = {"mm": 3, "conv": 6, "sm": 2, "ln": 2, "gelu": 2}
    if want.get(kind) != len(dims) or min(dims) <= 0:
        print("gemm_corun: --op wants mm:MxKxN, conv:NxCxHxWxKxR, sm:RxC, ln:RxC or gelu:RxC, "
              "not '%s'" % a.op, file=sys.stderr)
        return 2
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 kernels the workloads ran
    torch.backends.cudnn.allow_tf32 = False
    if kind == "mm":
        x = torch.randn(dims[0], dims[1], device="cuda")
        w = torch.randn(dims[1], dims[2], device="cuda")
        y = torch.empty(dims[0], dims[2], device="cuda")
        op = lambda: torch.mm(x, w, out=y)
    elif kind in ("sm", "ln", "gelu"):
        x = torch.randn(dims[0], dims[1], device="cuda")
        f = {"sm": lambda: torch.softmax(x, dim=-1),
             "ln": lambda: torch.nn.functional.layer_norm(x, (dims[1],)),
             "gelu": lambda: torch.nn.functional.gelu(x)}
        op = f[kind]
    else:
        n, c, h, wd, k, r = dims
        x = torch.randn(n, c, h, wd, device="cuda")
        f = torch.randn(k, c, r, r, device="cuda")
        op = lambda: torch.nn.functional.conv2d(x, f, padding=r // 2)
    for _ in range(a.warmup):
        op()
    torch.cuda.synchronize()
    step, reps = op, a.iters
    if a.graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(a.graph):
                op()
        g.replay()
        torch.cuda.synchronize()
        step, reps = g.replay, a.iters // a.graph
    open(os.path.join(a.go, "READY.%d" % os.getpid()), "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(a.go, "GO")):
        if time.monotonic() > deadline:
            print("gemm_corun: no GO within 120 s", file=sys.stderr)
            return 1
        time.sleep(0.0005)
    t0 = time.time_ns()
    for _ in range(reps):
        step()
    torch.cuda.synchronize()
    t1 = time.time_ns()
    print("gemm_corun: op=%s shape=%s iters=%d start_ns=%d end_ns=%d us_per_op=%.3f"
          % (kind, shape, a.iters, t0, t1, (t1 - t0) / 1e3 / a.iters))
    return 0


if __name__ == "__main__":
    sys.exit(main())
