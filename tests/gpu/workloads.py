#!/usr/bin/env python3
"""workloads: real PyTorch inference in N spawn workers started together, whose own throughput is
the truth that tlview's "what MPS would gain" is checked against (tests/gpu/workloads.sh runs it
with MPS off and on, under the collector).

WORKLOAD (random weights from a fixed seed, eval mode, inference_mode, nothing downloaded):
  resnet18, resnet50, mobilenet_v2, vit_b_16, convnext_tiny, swin_t, densenet121, efficientnet_b0
                      torchvision.models.<name>(weights=None), BATCH images of 3x224x224
  gpt2                transformers GPT2LMHeadModel(GPT2Config(n_layer=6)), BATCH sequences of SEQ
                      tokens, the logits computed (use_cache=False: no key/value cache kept)
  bert                transformers BertModel(BertConfig()) (12 layers), BATCH sequences of SEQ
  gemm                one sweep of torch.matmul of square matrices 512, 1024, 2048, 4096, 8192
                      per iteration (items: sweeps; BATCH unused)
Without transformers, gpt2 and bert use a built-in transformer of the same shape (GPT-2: pre-norm,
causal, tied LM head; BERT: post-norm, GELU), and say so (`impl`); --impl picks one.
Each worker builds the model and its input (the same seed in every worker), runs WARMUP
iterations, torch.cuda.synchronize(), waits at a barrier with the others, then runs ITERS timed
iterations inside the NVTX range "timed" (torch.cuda.nvtx.range_push/pop around the whole loop,
torch.cuda.synchronize() inside it at the end: the collector records it with TLVIEW_NVTX=1) and
prints, in one write() (the workers share one log), a line
  RESULT {"workload", "rank", "pid", "items", "seconds", "t_start_ns", "t_end_ns", ...}
with items = ITERS x BATCH (gemm: ITERS), seconds = the timed loop's length (perf_counter),
t_start_ns/t_end_ns = time.time_ns() (CLOCK_REALTIME) at its start and end, and a checksum of the
last output (sum of |y|). With --profile DIR each worker wraps its timed loop in
torch.profiler.profile(activities=[CPU, CUDA]) (started after the warm-up, before the barrier) and
writes DIR/trace.RANK.json.gz (gzip -9 of export_chrome_trace's file): the Kineto traces that do
not say whether MPS was on (tests/gpu/kineto_matrix.sh). With --sync-copies the copies of one
`tlview record`/`advise` run (TLVIEW_RECORD_DIR, TLVIEW_NPROCS, TLVIEW_RANK) start their timed
loops together too: each worker, warmed up, leaves a file .copies-sync.COPY.RANK in the run's
folder and waits (at most SYNC_TIMEOUT_S) until every copy's workers have: the start jitter of
the copies' imports (~0.5 s) would otherwise decide how much short loops overlap. The parent uses the 'spawn' start method (as torch.multiprocessing does)
but never imports torch nor touches CUDA: only the workers are CUDA processes, and a run starts
sooner. Self-check: every worker reports, the checksums are finite and agree (relative 1e-3);
the parent then prints the throughput and `Test PASSED` (`Test FAILED`, exit 1, otherwise).
--dry-run prints what each worker would do, without torch.
A mix A+B (e.g. resnet50+bert: different applications sharing the GPU): worker r runs the
(r mod parts)-th workload, with its own defaults; --iters and --warmup then take one value for
all or one per part (K1+K2), and the checksums are compared within each workload. The parent's
line then counts items of every kind together: the truth for a mix is its makespan.
Usage: workloads.py WORKLOAD[+WORKLOAD...] --workers N [--iters K] [--warmup W] [--batch B] [--seq S]
                    [--dtype float32|float16|bfloat16] [--impl auto|transformers|builtin]
                    [--seed S] [--profile DIR] [--sync-copies] [--dry-run]
"""
import argparse
import gzip
import json
import math
import multiprocessing as mp
import os
import queue
import sys
import time

# Per workload: default timed iterations and warm-up iterations (a timed loop of ~0.3-0.5 s alone
# on an H200 by estimate: resnet18 ~3 ms, resnet50 ~6 ms, gpt2 ~8 ms, bert ~10 ms per batch of
# 16, gemm ~30 ms per sweep in float32), and what an item is.
WORKLOADS = {
    "resnet18": {"iters": 100, "warmup": 10, "unit": "images"},
    "resnet50": {"iters": 60, "warmup": 5, "unit": "images"},
    "mobilenet_v2": {"iters": 100, "warmup": 10, "unit": "images"},
    "vit_b_16": {"iters": 30, "warmup": 5, "unit": "images"},
    "convnext_tiny": {"iters": 40, "warmup": 5, "unit": "images"},
    "swin_t": {"iters": 40, "warmup": 5, "unit": "images"},
    "densenet121": {"iters": 40, "warmup": 5, "unit": "images"},
    "efficientnet_b0": {"iters": 60, "warmup": 5, "unit": "images"},
    "gpt2": {"iters": 50, "warmup": 5, "unit": "sequences"},
    "bert": {"iters": 40, "warmup": 5, "unit": "sequences"},
    "gemm": {"iters": 12, "warmup": 2, "unit": "sweeps"},
}
GEMM_SIZES = (512, 1024, 2048, 4096, 8192)
VISION = ("resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "convnext_tiny", "swin_t",
          "densenet121", "efficientnet_b0")  # torchvision models on images
BARRIER_TIMEOUT_S = 300  # the parent breaks the barrier sooner when a worker dies
CHECK_RTOL = 1e-3
SYNC_TIMEOUT_S = 120  # --sync-copies: how long a worker waits for the other copies


def positive(text):
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text}: 1 or more wanted")
    return v


def workload_spec(text):
    """WORKLOAD or a mix A+B+...: the text, checked."""
    parts = text.split("+")
    bad = [w for w in parts if w not in WORKLOADS]
    if bad or len(parts) != len(set(parts)):
        raise argparse.ArgumentTypeError(
            f"{text}: one of {', '.join(WORKLOADS)} or a mix of different ones (A+B)")
    return text


def per_part(text, parts, name, least):
    """--iters/--warmup of a mix: one value for every part or one per part (K1+K2); a list."""
    try:
        vals = [int(x) for x in text.split("+")]
    except ValueError:
        vals = []
    if len(vals) == 1:
        vals *= len(parts)
    if len(vals) != len(parts) or min(vals) < least:
        raise argparse.ArgumentTypeError(
            f"{name} {text}: {least} or more, once or once per workload of {'+'.join(parts)}")
    return vals


def part_args(args, rank):
    """The arguments of worker `rank`: its own workload of the mix, its iterations."""
    i = rank % len(args.parts)
    return argparse.Namespace(**{**vars(args), "workload": args.parts[i], "parts": [args.parts[i]],
                                 "iters": args.iters_of[i], "warmup": args.warmup_of[i],
                                 "iters_of": [args.iters_of[i]], "warmup_of": [args.warmup_of[i]]})


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="workloads.py", description=__doc__.split("\n")[0],
        epilog="WORKLOAD: " + ", ".join(WORKLOADS))
    p.add_argument("workload", type=workload_spec, help="WORKLOAD or a mix A+B")
    p.add_argument("--workers", type=positive, required=True)
    p.add_argument("--iters", help="timed iterations (default per workload; a mix: K or K1+K2)")
    p.add_argument("--warmup", help="warm-up iterations (default per workload; a mix: W or W1+W2)")
    p.add_argument("--batch", type=positive, default=16)
    p.add_argument("--seq", type=positive, default=128, help="tokens per sequence (gpt2, bert)")
    p.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    p.add_argument("--impl", choices=("auto", "transformers", "builtin"), default="auto",
                   help="gpt2 and bert: transformers' model or the built-in one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--profile", metavar="DIR", help="torch.profiler traces of the timed loops into DIR")
    p.add_argument("--sync-copies", action="store_true",
                   help="the copies of a tlview record/advise run start their timed loops together")
    p.add_argument("--dry-run", action="store_true", help="print the plan; no torch, no GPU")
    args = p.parse_args(argv)
    args.parts = args.workload.split("+")
    if len(args.parts) > 1 and args.workers % len(args.parts):
        p.error(f"--workers: a multiple of {len(args.parts)} for the mix {args.workload}")
    try:
        args.iters_of = (per_part(args.iters, args.parts, "--iters", 1) if args.iters is not None
                         else [WORKLOADS[w]["iters"] for w in args.parts])
        args.warmup_of = (per_part(args.warmup, args.parts, "--warmup", 0)
                          if args.warmup is not None else [WORKLOADS[w]["warmup"] for w in args.parts])
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    args.iters, args.warmup = args.iters_of[0], args.warmup_of[0]
    if args.seq > 1024 and "gpt2" in args.parts:
        p.error("--seq: GPT-2 holds at most 1024 positions")
    if args.seq > 512 and "bert" in args.parts:
        p.error("--seq: BERT holds at most 512 positions")
    return args


def items_per_iter(args):
    return 1 if args.workload == "gemm" else args.batch


def describe(args):
    """One line: what each worker runs (a mix: each workload's, joined)."""
    if len(args.parts) > 1:
        return "; ".join(f"worker r with r mod {len(args.parts)} = {i}: " + describe(part_args(args, i))
                         for i in range(len(args.parts)))
    w = args.workload
    if w in VISION:
        what = f"torchvision {w}(weights=None) on {args.batch} x 3x224x224"
    elif w == "gpt2":
        what = f"GPT-2 with 6 layers (LM head) on {args.batch} x {args.seq} tokens"
    elif w == "bert":
        what = f"BERT base (12 layers) on {args.batch} x {args.seq} tokens"
    else:
        what = "torch.matmul sweep " + ", ".join(str(n) for n in GEMM_SIZES)
    return (f"{what}, {args.dtype}, seed {args.seed}: {args.warmup} warm-up + {args.iters} timed "
            f"iterations, {args.iters * items_per_iter(args)} {WORKLOADS[w]['unit']} per worker")


# ---- the built-in transformer (used when transformers is missing or with --impl builtin)
def builtin_transformer(torch, vocab, dim, heads, layers, positions, causal, lm_head):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def attention(self, x):
            b, t, _ = x.shape
            q, k, v = (z.view(b, t, heads, dim // heads).transpose(1, 2)
                       for z in self.qkv(x).split(dim, dim=2))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return self.proj(a.transpose(1, 2).reshape(b, t, dim))

        def forward(self, x):
            if causal:  # GPT-2: pre-norm, tanh GELU
                x = x + self.attention(self.ln1(x))
                return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
            x = self.ln1(x + self.attention(x))  # BERT: post-norm, exact GELU
            return self.ln2(x + self.out(F.gelu(self.fc(x))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(dim)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device)
            x = self.tok(ids) + self.pos(pos)
            if not causal:
                x = self.ln(x)
            for blk in self.blocks:
                x = blk(x)
            if causal:
                x = self.ln(x)
            return x @ self.tok.weight.t() if lm_head else x

    return Model()


def build(args, torch):
    """(step, impl): step() runs one iteration on the GPU and returns its output."""
    dev, dtype = "cuda", getattr(torch, args.dtype)
    gen = torch.Generator().manual_seed(args.seed + 1)
    torch.manual_seed(args.seed)
    w = args.workload
    if w == "gemm":  # drawn on the GPU: 2 x 8192^2 numbers would take a second on the CPU
        gen_dev, mats = torch.Generator(device=dev).manual_seed(args.seed + 1), []
        for n in GEMM_SIZES:
            a = torch.randn(n, n, generator=gen_dev, device=dev, dtype=dtype)
            b = torch.randn(n, n, generator=gen_dev, device=dev, dtype=dtype)
            mats.append((a, b, torch.empty(n, n, device=dev, dtype=dtype)))

        def sweep():
            for a, b, c in mats:
                torch.matmul(a, b, out=c)
            return mats[-1][2]
        return sweep, "torch.matmul"
    if w in VISION:
        import torchvision
        model = getattr(torchvision.models, w)(weights=None)
        x = torch.randn(args.batch, 3, 224, 224, generator=gen).to(dev, dtype)
        impl = "torchvision " + torchvision.__version__
    else:
        gpt = w == "gpt2"
        ids = torch.randint(0, 50257 if gpt else 30522, (args.batch, args.seq), generator=gen)
        x = ids.to(dev)
        model = None
        if args.impl != "builtin":
            try:
                import transformers
                if gpt:
                    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=6))
                else:
                    model = transformers.BertModel(transformers.BertConfig())
                impl = "transformers " + transformers.__version__
            except ImportError:
                if args.impl == "transformers":
                    raise
        if model is None:
            model = builtin_transformer(torch, 50257 if gpt else 30522, 768, 12, 6 if gpt else 12,
                                        1024 if gpt else 512, gpt, gpt)
            impl = "builtin"
    model = model.to(dev, dtype).eval()
    if w in VISION or impl == "builtin":
        return (lambda: model(x)), impl
    if w == "gpt2":
        return (lambda: model(input_ids=x, use_cache=False).logits), impl
    return (lambda: model(input_ids=x).last_hidden_state), impl


def emit(fields):
    """`RESULT {json}` in one write(): the workers share one log, and print() may write the text
    and its newline apart, so two workers' lines could run together."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), ("RESULT " + json.dumps(fields) + "\n").encode())


def sync_copies(rank, workers):
    """--sync-copies: waits until every worker of every copy of this run is ready (a file each in
    TLVIEW_RECORD_DIR); without those variables, or after SYNC_TIMEOUT_S, goes on (saying so)."""
    folder, copies = os.environ.get("TLVIEW_RECORD_DIR"), int(os.environ.get("TLVIEW_NPROCS", "1"))
    if not folder or copies <= 1:
        return
    copy = os.environ.get("TLVIEW_RANK", "0")
    open(os.path.join(folder, f".copies-sync.{copy}.{rank}"), "w").close()
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while time.monotonic() < deadline:
        if sum(n.startswith(".copies-sync.") for n in os.listdir(folder)) >= copies * workers:
            return
        time.sleep(0.001)
    print(f"workloads: --sync-copies: not every copy was ready after {SYNC_TIMEOUT_S} s",
          file=sys.stderr)


def worker(rank, args, barrier, results):
    args = part_args(args, rank)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded, ever
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    step, impl = build(args, torch)
    prof = None
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with torch.inference_mode():
        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize()
        if prof:
            prof.start()
        if args.sync_copies:
            sync_copies(rank, args.workers)
        barrier.wait(timeout=BARRIER_TIMEOUT_S)
        t_start, p0 = time.time_ns(), time.perf_counter_ns()
        torch.cuda.nvtx.range_push("timed")
        for _ in range(args.iters):
            y = step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        p1, t_end = time.perf_counter_ns(), time.time_ns()
        checksum = y.double().abs().sum().item()
    if prof:
        prof.stop()
        path = os.path.join(args.profile, f"trace.{rank}.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
            g.write(f.read())
        os.unlink(path)
    fields = {"workload": args.workload, "rank": rank, "pid": os.getpid(),
              "items": args.iters * items_per_iter(args), "seconds": (p1 - p0) / 1e9,
              "t_start_ns": t_start, "t_end_ns": t_end, "iters": args.iters,
              "batch": items_per_iter(args), "dtype": args.dtype, "impl": impl,
              "torch": torch.__version__, "mps_pipe": os.environ.get("CUDA_MPS_PIPE_DIRECTORY", ""),
              "checksum": checksum}
    emit(fields)
    results.put(fields)


def collect(procs, barrier, results):
    """The workers' results; breaks the barrier as soon as a worker has died, so the others do not
    wait for it."""
    got = []
    while len(got) < len(procs):
        try:
            got.append(results.get(timeout=0.5))
            continue
        except queue.Empty:
            pass
        if any(p.exitcode not in (None, 0) for p in procs):
            barrier.abort()
            break
        if all(p.exitcode is not None for p in procs):
            break
    while True:  # what a worker put just before it exited
        try:
            got.append(results.get(timeout=0.5))
        except queue.Empty:
            break
    for p in procs:
        p.join()
    return got


def check(args, procs, got):
    """The problems of a run (empty when it passed)."""
    problems = [f"worker {r} exited {p.exitcode}" for r, p in enumerate(procs) if p.exitcode]
    if len(got) != args.workers:
        problems.append(f"{len(got)} results of {args.workers} workers")
    for w in args.parts:  # the same model and input give the same output, within a workload
        sums = [r["checksum"] for r in got if r["workload"] == w]
        if any(not math.isfinite(s) for s in sums):
            problems.append(f"{w}: checksums not finite: {sums}")
        elif sums and max(sums) - min(sums) > CHECK_RTOL * max(abs(s) for s in sums):
            problems.append(f"{w}: the workers' outputs differ: checksums {sums}")
    return problems


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    print(f"workloads: {args.workload}, {args.workers} worker(s): {describe(args)}", flush=True)
    if args.dry_run:
        print(f"workloads: (dry run) would spawn {args.workers} worker(s), barrier, NVTX range "
              f"'timed', one RESULT line each")
        return 0
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(args.workers), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args, barrier, results))
             for r in range(args.workers)]
    for p in procs:
        p.start()
    got = collect(procs, barrier, results)
    problems = check(args, procs, got)
    if got:
        items = sum(r["items"] for r in got)
        rate = sum(r["items"] / r["seconds"] for r in got if r["seconds"] > 0)
        span = (max(r["t_end_ns"] for r in got) - min(r["t_start_ns"] for r in got)) / 1e9
        unit = WORKLOADS[args.workload]["unit"] if len(args.parts) == 1 else "items"
        print(f"workloads: {args.workload} x {len(got)}: {rate:.1f} {unit}"
              f"/s (sum over workers), {items / span if span > 0 else float('nan'):.1f}/s over the "
              f"makespan of {span:.3f} s; impl {got[0]['impl']}", flush=True)
    for msg in problems:
        print(f"workloads: {msg}", file=sys.stderr)
    print("Test FAILED" if problems else "Test PASSED", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
