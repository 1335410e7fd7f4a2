#!/usr/bin/env python3
"""verdicts_summary: one line about one scenario folder recorded by tests/gpu/verdicts.sh.

Reads the folder's trace files with python3's sqlite3 module (the GPU machine has no sqlite3
program): tlview files (*.db, one per CUDA process) and PyTorch profiler traces (*.json). Prints
    NAME | N procs (largest file M MB) | K kernels | wall W ms | span S ms | starts ... | ms ... |
    OK or FAIL: why
wall: what verdicts.sh measured around the scenario (start-up included); span: first kernel start
to last kernel end; starts: each file's first kernel, in ms after the earliest; ms: per file and
kernel name (the 3 most frequent), the kernel durations in ms (count x median [min-max] when more
than 4).
The checks (FAIL, exit status 1): the number of trace files is PROCS; every tlview file is
complete with 0 records dropped and its contexts have compute API kind API_KIND (1 plain CUDA, 2
MPS client; 0, a context known only through its kernels, is let through); every --fail reason.
Usage: verdicts_summary.py [--name NAME] [--procs N] [--api-kind K] [--wall-ms W]
                           [--fail TEXT]... DIR
       verdicts_summary.py --median-ms DIR    (the median kernel duration in ms, alone)
"""
import argparse
import glob
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys


def short(name):
    """A kernel name without its template arguments and parameter list, at most 40 characters."""
    name = re.sub(r"\(.*$", "", name or "?")
    depth, out = 0, []
    for ch in name:
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">" and depth > 0
    name = "".join(out).replace("void ", "").strip()
    return name if len(name) <= 40 else name[:37] + "..."


def demangle(names):
    """{mangled: readable} for the C++ names among names, by c++filt (binutils) where it is
    installed: the collector stores names as recorded and leaves demangling to the readers."""
    mangled = sorted({n for n in names if n and n.startswith("_Z")})
    if not mangled:
        return {}
    try:
        out = subprocess.run(["c++filt"], input="\n".join(mangled) + "\n", capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {}
    return dict(zip(mangled, out))


def read_db(path):
    """(kernels [(start, end, name)] in CLOCK_REALTIME ns, problems [str], compute API kinds)
    of one tlview file."""
    problems = []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        # kernel_v is on the file's clock: CUPTI's, in a collector's file; each process's `start`
        # calibration pair puts it on CLOCK_REALTIME, the axis the processes share.
        clock = dict(con.execute("SELECT key, value FROM meta")).get("clock")
        offset = {}
        if clock == "cupti":
            offset = dict(con.execute(
                "SELECT p.pid, c.realtime - c.cupti FROM calibration c "
                "JOIN process p ON p.id = c.process_id WHERE c.label = 'start'"))
        ks = [(s + offset.get(pid, 0), e + offset.get(pid, 0), n) for s, e, pid, n in
              con.execute('SELECT start, "end", pid, name FROM kernel_v')]
        readable = demangle(n for _, _, n in ks)
        ks = [(s, e, readable.get(n, n)) for s, e, n in ks]
        for pid, complete in con.execute("SELECT pid, complete FROM process"):
            if complete != 1:
                problems.append(f"pid {pid} not complete")
        for (dropped,) in con.execute(
                "SELECT value FROM process_meta WHERE key = 'records_dropped'"):
            if int(dropped or 0):
                problems.append(f"{dropped} records dropped")
        kinds = {k for (k,) in con.execute("SELECT compute_api_kind FROM context")}
    finally:
        con.close()
    return ks, problems, kinds


def read_chrome(path):
    """Kernels [(start, end, name)] (CLOCK_REALTIME ns) of a PyTorch profiler (Kineto) trace."""
    with open(path, errors="replace") as f:
        doc = json.load(f)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    # ts is in us after baseTimeNanoseconds when the trace has one, else after the Unix epoch
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    ks = []
    for ev in events:
        if str(ev.get("cat", "")).lower() == "kernel" and ev.get("ph") == "X":
            start = base + int(round(float(ev["ts"]) * 1000))
            ks.append((start, start + int(round(float(ev.get("dur", 0)) * 1000)), ev.get("name")))
    return ks


def fmt_durs(ds):
    ds = sorted(ds)
    if len(ds) <= 4:
        return ", ".join(f"{d / 1e6:.4g}" for d in ds)
    return (f"{len(ds)}x {statistics.median(ds) / 1e6:.4g} "
            f"[{ds[0] / 1e6:.4g}-{ds[-1] / 1e6:.4g}]")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--name")
    p.add_argument("--procs", type=int)
    p.add_argument("--api-kind", type=int)
    p.add_argument("--wall-ms", type=int)
    p.add_argument("--fail", action="append", default=[])
    p.add_argument("--median-ms", action="store_true")
    a = p.parse_args()

    files = sorted(glob.glob(os.path.join(a.dir, "*.db"))) + \
        sorted(glob.glob(os.path.join(a.dir, "*.json")))
    problems = list(a.fail)
    per_file = []  # (label, kernels)
    kinds = set()
    for f in files:
        try:
            if f.endswith(".db"):
                ks, probs, k = read_db(f)
                problems += [f"{os.path.basename(f)}: {x}" for x in probs]
                kinds |= k
            else:
                ks = read_chrome(f)
        except (sqlite3.Error, OSError, ValueError, KeyError) as e:
            problems.append(f"{os.path.basename(f)}: unreadable ({e})")
            ks = []
        per_file.append((os.path.basename(f), ks))

    everything = [k for _, ks in per_file for k in ks]
    if a.median_ms:
        if not everything:
            print(f"verdicts_summary: no kernels in {a.dir}", file=sys.stderr)
            return 1
        print(f"{statistics.median(e - s for s, e, _ in everything) / 1e6:.3f}")
        return 0

    if a.procs is not None and len(files) != a.procs:
        problems.append(f"{len(files)} trace files, {a.procs} wanted")
    if a.api_kind is not None and any(f.endswith(".db") for f in files) and \
            kinds - {0} != {a.api_kind}:
        problems.append(f"compute_api_kind {sorted(kinds)}, {a.api_kind} wanted")
    if not everything:
        problems.append("no kernels")
    begin = min((s for s, _, _ in everything), default=0)
    span = max((e for _, e, _ in everything), default=0) - begin
    starts, durs = [], []
    for label, ks in per_file:
        if not ks:
            continue
        starts.append(f"{(min(s for s, _, _ in ks) - begin) / 1e6:.1f}")
        by_name = {}
        for s, e, n in ks:
            by_name.setdefault(short(n), []).append(e - s)
        top = sorted(by_name.items(), key=lambda kv: -len(kv[1]))
        more = f" +{len(top) - 3} names" if len(top) > 3 else ""
        durs.append(f"{label}: " + "; ".join(f"{n} {fmt_durs(d)}" for n, d in top[:3]) + more)
    largest = max((os.path.getsize(f) for f in files), default=0)
    cols = [a.name or os.path.basename(os.path.normpath(a.dir)),
            f"{len(files)} procs (largest file {largest / 1e6:.1f} MB)",
            f"{len(everything)} kernels",
            f"wall {a.wall_ms} ms" if a.wall_ms is not None else "wall -",
            f"span {span / 1e6:.1f} ms", "starts " + ", ".join(starts),
            "ms " + " / ".join(durs),
            "OK" if not problems else "FAIL: " + "; ".join(problems)]
    print(" | ".join(cols))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
