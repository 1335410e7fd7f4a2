#!/usr/bin/env python3
"""torch_loop: what tracing costs a PyTorch program of small ops, three ways in one go.

ROUNDS interleaved rounds of a loop of OPS tiny in-place adds on a 256-float CUDA tensor, each in a
fresh python process: bare; under libcollect (CUDA_INJECTION64_PATH); under
torch.profiler(activities=[CUDA]), the profiler users already know; with --bare, also under
bench's bare CUPTI injection (the floor). Prints µs per op (the loop and the synchronize that ends
it), their medians and the ratios to bare, and what libcollect recorded.
Usage: bench/torch_loop.py [--collect libcollect.so] [--bare libbare_inject.so] [--ops 50000]
                           [--rounds 3]
"""
import argparse
import glob
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

WARMUP = 1000


def child(mode, ops):
    """One measured run; prints `torch_loop: us_per_op=X`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = torch.ones(256, device="cuda")  # 1 kernel (fill)
    for _ in range(WARMUP):
        x.add_(1.0)
    torch.cuda.synchronize()

    def loop():
        t0 = time.perf_counter()
        for _ in range(ops):
            x.add_(1.0)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    if mode == "profiler":
        t_all = time.perf_counter()
        with profile(activities=[ProfilerActivity.CUDA]):
            dt = loop()
        t_all = time.perf_counter() - t_all
        print(f"torch_loop: profiler session incl. its processing {t_all:.2f} s")
    else:
        dt = loop()
    want = 1.0 + WARMUP + ops
    if x[0].item() != want:
        print(f"torch_loop: result {x[0].item()}, expected {want}", file=sys.stderr)
        return 1
    print(f"torch_loop: us_per_op={dt / ops * 1e6:.3f}")
    return 0


def run(mode, args, out_dir):
    env = dict(os.environ)
    env.pop("CUDA_INJECTION64_PATH", None)
    if mode == "libcollect":
        env["CUDA_INJECTION64_PATH"] = os.path.abspath(args.collect)
        env["TLVIEW_OUTPUT"] = os.path.join(out_dir, "torch.%p.db")
    if mode == "bare-cupti":
        env["CUDA_INJECTION64_PATH"] = os.path.abspath(args.bare)
    child_mode = "profiler" if mode == "profiler" else "plain"
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", child_mode,
                        "--ops", str(args.ops)], env=env, capture_output=True, text=True)
    us = None
    for line in p.stdout.splitlines():
        if line.startswith("torch_loop: us_per_op="):
            us = float(line.split("=")[1])
        if line.startswith("torch_loop: profiler session incl. its processing"):
            whole = float(line.split()[-2]) / args.ops * 1e6
            print(f"torch_loop: profiler round: {whole:.2f} µs per op counting the session's "
                  f"start, stop and event processing")
    if p.returncode != 0 or us is None:
        print(f"torch_loop: {mode} run failed (exit {p.returncode}): {p.stderr.strip()[-800:]}")
    elif mode == "libcollect":
        new = [l for l in p.stderr.splitlines() if l.strip()]
        if new:
            print(f"torch_loop: libcollect stderr: {new[:3]}")
    return us


def recorded(out_dir):
    """(kernels, records_dropped) of each libcollect file."""
    res = []
    for f in sorted(glob.glob(os.path.join(out_dir, "torch.*.db"))):
        db = sqlite3.connect(f)
        k = db.execute("SELECT count(*) FROM kernel").fetchone()[0]
        meta = dict(db.execute("SELECT key, value FROM process_meta").fetchall())
        db.close()
        res.append((k, meta.get("records_dropped")))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collect", help="libcollect.so (without it: bare and profiler only)")
    ap.add_argument("--bare", help="bench's libbare_inject.so: adds a bare-CUPTI round")
    ap.add_argument("--ops", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", choices=["plain", "profiler"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.ops)
    for lib in (args.collect, args.bare):
        if lib and not os.path.isfile(lib):
            print(f"torch_loop: {lib}: no such file")
            return 2
    modes = (["bare"] + (["bare-cupti"] if args.bare else [])
             + (["libcollect"] if args.collect else []) + ["profiler"])
    out_dir = tempfile.mkdtemp(prefix="tltorch.")
    print(f"torch_loop: {args.ops} x add_ on a 256-float tensor, {args.rounds} interleaved rounds, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    us = {m: [] for m in modes}
    for r in range(args.rounds):
        for i in range(len(modes)):
            m = modes[(i + r) % len(modes)]
            v = run(m, args, out_dir)
            if v is not None:
                us[m].append(v)
    print()
    print("| mode | µs per op, each round | median | x bare |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(us["bare"]) if us["bare"] else None
    for m in modes:
        if not us[m]:
            print(f"| {m} | failed | - | - |")
            continue
        med = statistics.median(us[m])
        ratio = f"{med / base:.2f}" if base else "-"
        print(f"| {m} | {', '.join(f'{v:.2f}' for v in us[m])} | {med:.2f} | {ratio} |")
    if args.collect:
        want = 1 + WARMUP + args.ops
        rec = recorded(out_dir)
        print(f"\nlibcollect files: (kernels, records_dropped) {rec}; launched per run {want}")
    return 0 if all(us[m] for m in modes) else 1


if __name__ == "__main__":
    sys.exit(main())
