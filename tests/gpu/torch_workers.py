#!/usr/bin/env python3
"""torch_workers: torch.multiprocessing 'spawn' workers doing inference, all started together
(tests/gpu/verdicts.sh's torch and kineto scenarios): by default small work that leaves the GPU
mostly idle; with --batch 512 --hidden 4096 matrix products that each fill the GPU.

Each worker builds the same model (fixed seed): a batch-BATCH MLP of 4 Linear(HIDDEN, HIDDEN) +
ReLU layers (8 and 1024 by default), runs it once to warm up, waits at a barrier with the others, then runs ROUNDS rounds of
ITERS forward passes, torch.cuda.synchronize() after each round, one round every PERIOD_MS (about
ROUNDS * PERIOD_MS in all: 8 x 250 ms = 2 s by default). With --profile DIR each worker wraps the
rounds in torch.profiler.profile(activities=[CPU, CUDA]) (started before the barrier) and exports
DIR/trace.<rank>.json; keep ROUNDS * ITERS small (the default 8 x 20 = 160 passes: a trace of
a few MB, by an estimate of ~60 events per pass; a trace over 5 MB is reported).
The parent never touches CUDA, so under an injection only the workers are CUDA processes.
Self-check: each worker's last output equals the CPU model's output on the same input (float32,
TF32 off; close to 1e-4 relative); it prints `pid=<pid> launched=<passes>` and the parent prints
`Test PASSED` when every worker passed (`Test FAILED` and exit 1 otherwise).
Usage: torch_workers.py [--workers N] [--rounds R] [--iters I] [--period-ms P] [--batch B]
                        [--hidden H] [--profile DIR]
"""
import argparse
import os
import sys
import time

import torch
import torch.multiprocessing as mp

TRACE_LIMIT = 5 * 1024 * 1024  # bytes; a bigger trace is reported (verdicts.sh brings it back)
BARRIER_TIMEOUT_S = 120  # a worker that died before the barrier must not hang the others


def build_model(hidden):
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).eval()


def rounds(model, x, args):
    """ROUNDS rounds of ITERS forward passes, one every PERIOD_MS; returns the last output."""
    t0 = time.monotonic()
    y = None
    for r in range(args.rounds):
        wait = t0 + r * args.period_ms / 1000.0 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        for _ in range(args.iters):
            y = model(x)
        torch.cuda.synchronize()
    return y


def worker(rank, args, barrier):
    torch.set_float32_matmul_precision("highest")  # no TF32: the CPU check stays tight
    cpu_model = build_model(args.hidden)
    gen = torch.Generator().manual_seed(1)
    x_cpu = torch.randn(args.batch, args.hidden, generator=gen)
    with torch.inference_mode():
        want = cpu_model(x_cpu)
        model = build_model(args.hidden).cuda()
        x = x_cpu.cuda()
        model(x)  # warm-up: cuBLAS handle, kernels loaded
        torch.cuda.synchronize()
        prof = None
        if args.profile:
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            prof.start()
        barrier.wait(timeout=BARRIER_TIMEOUT_S)
        start = time.monotonic()
        y = rounds(model, x, args)
        ms = (time.monotonic() - start) * 1000
        if prof is not None:
            prof.stop()
            path = os.path.join(args.profile, f"trace.{rank}.json")
            prof.export_chrome_trace(path)
            size = os.path.getsize(path)
            note = " (over the 5 MB limit: fewer --rounds or --iters)" if size > TRACE_LIMIT else ""
            print(f"torch_workers: worker {rank} wrote {path}, {size / 1e6:.1f} MB{note}",
                  flush=True)
    got = y.cpu()
    if not torch.allclose(got, want, rtol=1e-3, atol=1e-4):
        diff = (got - want).abs().max().item()
        print(f"torch_workers: worker {rank} differs from the CPU model by up to {diff:g}",
              file=sys.stderr, flush=True)
        sys.exit(1)
    passes = args.rounds * args.iters
    print(f"torch_workers: worker {rank} pid={os.getpid()} launched={passes} (forward passes, "
          f"{ms:.0f} ms)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--iters", type=int, default=20, help="forward passes per round")
    p.add_argument("--period-ms", type=float, default=250.0)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--profile", metavar="DIR", help="torch.profiler traces into DIR")
    args = p.parse_args()
    if min(args.workers, args.rounds, args.iters, args.batch, args.hidden) < 1 or \
            args.period_ms < 0:
        p.error("--workers, --rounds, --iters, --batch and --hidden want 1 or more, --period-ms 0 "
                "or more")
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(args.workers)
    procs = [ctx.Process(target=worker, args=(r, args, barrier)) for r in range(args.workers)]
    for w in procs:
        w.start()
    for w in procs:
        w.join()
    bad = [w.exitcode for w in procs if w.exitcode != 0]
    if bad:
        print(f"torch_workers: {len(bad)} worker(s) failed: exit codes {bad}", file=sys.stderr)
        print("Test FAILED")
        return 1
    print(f"torch_workers: {args.workers} workers done")
    print("Test PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
