#!/usr/bin/env python3
"""triton_single_sm: the seed's Triton benchmark (003, "CUDA Multi-Process Service"): a kernel that
runs on a single SM, launched by several processes at once. Time-sliced, the processes take turns
on the whole GPU and the aggregate throughput stays that of one SM; under MPS their kernels run on
different SMs side by side and the throughput grows with the number of processes.

Two ways to run it:
  python3 triton_single_sm.py --workers 8 --requests 10 --loops 160000
      the seed's form: torch.multiprocessing 'spawn' workers started together behind a barrier
      (under `tlview record`, the spawn workers inherit the collector and each writes its file);
  tlview record --procs 8 [--mps] -- python3 triton_single_sm.py --single --requests 10
      one worker per process, started by tlview record; the copies meet at a file barrier in the
      record folder once CUDA and Triton are ready, so only the timed requests overlap.
Both print the throughput and a line `RESULT {json}` for scripts, check the kernel's arithmetic,
and end with `Test PASSED` (exit 0) or `Test FAILED` (exit 1).

Changes from the seed: the loop count is a runtime argument (not constexpr, not specialised), so
one compiled kernel serves every --loops; it is compiled before the timed part without being
launched (Triton's warmup()), so a trace starts with the timed requests; the arithmetic check runs
after them and launches 2 programs, not 1, so tlview never mistakes it for an instance of the
timed single-program kernel; the MPS pipe folder is taken from the environment
(CUDA_MPS_PIPE_DIRECTORY, as tlview record --mps sets it) instead of being forced to /tmp.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.multiprocessing as mp
import triton
import triton.language as tl

N_ELEMENTS = 1024
CHECK_LOOPS = 16  # steps of the arithmetic check, short enough to replay on the CPU

torch.set_num_threads(1)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


@triton.jit(do_not_specialize=["n_loops"])
def single_sm_compute_kernel(output_ptr, n_loops, N_ELEMENTS: tl.constexpr,
                             BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    acc = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    for i in range(n_loops):
        f_i = i.to(tl.float32)
        acc += tl.sin(acc + f_i) * tl.cos(acc - f_i)
    tl.store(output_ptr + offs, acc, mask=offs < N_ELEMENTS)


def launch(output, n_loops, programs=1):
    """One request: `programs` programs of the kernel (1 = one SM, as in the seed)."""
    single_sm_compute_kernel[(programs, )](output, n_loops, N_ELEMENTS=N_ELEMENTS,
                                           BLOCK_SIZE=N_ELEMENTS)


def cpu_replay(n_loops):
    """The kernel's recurrence for one lane, in double precision."""
    acc = 0.0
    for i in range(n_loops):
        acc += math.sin(acc + i) * math.cos(acc - i)
    return acc


def compile_kernel(device):
    """Compiles the kernel without launching it (Triton's warmup), so that nothing runs on the GPU
    before the timed part: a trace then starts with the timed requests. Falls back to one short
    2-program launch on a Triton without warmup()."""
    out = torch.empty(N_ELEMENTS, device=device, dtype=torch.float32)
    try:
        single_sm_compute_kernel.warmup(out, CHECK_LOOPS, N_ELEMENTS=N_ELEMENTS,
                                        BLOCK_SIZE=N_ELEMENTS, grid=(1, ))
    except Exception:  # an older or newer warmup() signature: a real compile error shows below
        launch(out, CHECK_LOOPS, programs=2)
        torch.cuda.synchronize()


def check_arithmetic(device):
    """Runs the kernel for CHECK_LOOPS steps (2 programs) and compares it with the CPU. Returns an
    error text, or None."""
    out = torch.empty(N_ELEMENTS, device=device, dtype=torch.float32)
    launch(out, CHECK_LOOPS, programs=2)
    torch.cuda.synchronize()
    got = out.cpu()
    want = cpu_replay(CHECK_LOOPS)
    if not bool(torch.isfinite(got).all()):
        return "the check kernel produced non-finite values"
    worst = float((got - want).abs().max())
    if worst > 1e-4 * max(1.0, abs(want)):
        return f"the check kernel computed {float(got[0]):.6g}, the CPU {want:.6g}"
    return None


def timed_requests(device, num_requests, n_loops):
    """Runs the timed requests; returns (start_ns, end_ns, error text or None). The output needs
    no zeroing (every lane is written), so no kernel runs before the first request."""
    output = torch.empty(N_ELEMENTS, device=device, dtype=torch.float32)
    torch.cuda.synchronize()
    start = time.time_ns()
    for _ in range(num_requests):
        launch(output, n_loops)
    torch.cuda.synchronize()
    end = time.time_ns()
    got = output.cpu()
    error = None
    if not bool(torch.isfinite(got).all()):
        error = "the timed kernel produced non-finite values"
    elif not bool((got == got[0]).all()):
        error = "the lanes of the timed kernel disagree (they compute the same recurrence)"
    return start, end, error or check_arithmetic(device)


def rank_barrier(path, rank, nprocs, timeout_s=120.0):
    """Waits until all `nprocs` copies of a tlview record run reached folder `path` (each leaves
    ready.<rank> there): the same protocol as the CUDA samples' rank_barrier()."""
    os.makedirs(path, exist_ok=True)
    open(os.path.join(path, f"ready.{rank}"), "w").close()
    deadline = time.monotonic() + timeout_s
    while True:
        ready = sum(1 for name in os.listdir(path) if name.startswith("ready."))
        if ready >= nprocs:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"barrier: only {ready} of {nprocs} copies reached {path} "
                             f"within {timeout_s:.0f} s")
        time.sleep(0.0001)


def print_result(fields):
    """Prints `RESULT {json}` for scripts in one write(): the copies of a run share one log, and
    a print() of an unbuffered stdout (PYTHONUNBUFFERED) writes the text and its newline apart,
    so two copies' lines could run together."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), ("RESULT " + json.dumps(fields) + "\n").encode())


def mps_status():
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
    if os.path.exists(os.path.join(pipe, "control")):
        return f"ACTIVE (control pipe in {pipe})"
    return f"INACTIVE (no control pipe in {pipe})"


def worker_task(rank, num_requests, n_loops, results_queue, barrier):
    """A spawn worker of the seed's form."""
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    compile_kernel(device)
    barrier.wait()
    start, end, error = timed_requests(device, num_requests, n_loops)
    results_queue.put((rank, num_requests, start, end, error))


def run_single(args):
    """One worker in this process (one per copy under tlview record --procs N)."""
    rank = int(os.environ.get("TLVIEW_RANK", "0"))
    nprocs = int(os.environ.get("TLVIEW_NPROCS", "1"))
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    compile_kernel(device)
    barrier = args.barrier
    if not barrier and nprocs > 1 and os.environ.get("TLVIEW_RECORD_DIR"):
        barrier = os.path.join(os.environ["TLVIEW_RECORD_DIR"],
                               "barrier-" + os.environ.get("TLVIEW_RUN_ID", "run"))
    if barrier:
        rank_barrier(barrier, rank, nprocs)
    start, end, error = timed_requests(device, args.requests, args.loops)
    elapsed = (end - start) / 1e9
    print(f"triton_single_sm: copy {rank} of {nprocs}, pid {os.getpid()}: {args.requests} "
          f"requests of {args.loops} loops in {elapsed:.4f} s = "
          f"{args.requests / elapsed:.2f} requests/sec")
    print_result({
        "mode": "single", "rank": rank, "nprocs": nprocs, "pid": os.getpid(),
        "requests": args.requests, "loops": args.loops, "start_ns": start, "end_ns": end,
        "mps": mps_status().startswith("ACTIVE"), "ok": error is None})
    return error


def run_workers(args):
    """The seed's benchmark: `workers` spawn workers started together."""
    try:
        mp.set_start_method("spawn", force=True)
    except RuntimeError:
        pass
    print("Pre-compiling Triton kernel in main process...")
    device = torch.device("cuda:0")
    compile_kernel(device)
    error = check_arithmetic(device)
    torch.cuda.empty_cache()
    print(f"Launching Single-SM Concurrency Test: {args.workers} Workers, {args.requests} "
          f"Requests Each, {args.loops} Loops")
    results_queue = mp.Queue()
    barrier = mp.Barrier(args.workers)
    workers = []
    wall_start = time.perf_counter()
    for rank in range(args.workers):
        p = mp.Process(target=worker_task,
                       args=(rank, args.requests, args.loops, results_queue, barrier))
        p.start()
        workers.append(p)
    total_reqs, first, last = 0, None, None
    for _ in range(args.workers):
        _, reqs, start, end, worker_error = results_queue.get()
        total_reqs += reqs
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
        error = error or worker_error
    for p in workers:
        p.join()
        if p.exitcode != 0:
            error = error or f"a worker exited with status {p.exitcode}"
    wall_elapsed = time.perf_counter() - wall_start
    timed = (last - first) / 1e9
    print("-" * 60)
    print(f"Total Client Requests Completed : {total_reqs}")
    print(f"Total Wall-clock Time           : {wall_elapsed:.4f} sec")
    print(f"Aggregate System Throughput     : {total_reqs / wall_elapsed:.2f} requests/sec")
    print(f"Throughput Between The Barriers : {total_reqs / timed:.2f} requests/sec "
          "(first timed request to last, as tlview sees it)")
    print("-" * 60)
    print_result({
        "mode": "workers", "workers": args.workers, "requests": total_reqs, "loops": args.loops,
        "wall_s": wall_elapsed, "timed_s": timed, "start_ns": first, "end_ns": last,
        "throughput": total_reqs / timed, "mps": mps_status().startswith("ACTIVE"),
        "ok": error is None})
    if error is None and total_reqs != args.workers * args.requests:
        error = f"{total_reqs} requests completed, {args.workers * args.requests} expected"
    return error


def main():
    parser = argparse.ArgumentParser(
        description="Single-SM Triton Kernel Concurrency Benchmark for NVIDIA MPS")
    parser.add_argument("--workers", type=int, default=16,
                        help="Number of parallel multiprocessing client workers")
    parser.add_argument("--requests", type=int, default=50,
                        help="Number of sequential kernel invocation requests per worker process")
    parser.add_argument("--loops", type=int, default=160000,
                        help="Number of internal arithmetic compute loops per kernel invocation")
    parser.add_argument("--single", action="store_true",
                        help="run one worker in this process (for tlview record --procs N)")
    parser.add_argument("--barrier", default=None,
                        help="--single: folder where the TLVIEW_NPROCS copies meet before the "
                        "timed part (default under tlview record: "
                        "TLVIEW_RECORD_DIR/barrier-TLVIEW_RUN_ID)")
    args = parser.parse_args()
    if args.workers < 1 or args.requests < 1 or args.loops < 1:
        parser.error("--workers, --requests and --loops must be at least 1")
    print("=" * 60)
    print(f"NVIDIA MPS Status : {mps_status()}")
    print("=" * 60)
    error = run_single(args) if args.single else run_workers(args)
    if error:
        print(f"triton_single_sm: {error}", file=sys.stderr)
        print("Test FAILED")
        return 1
    print("Test PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
