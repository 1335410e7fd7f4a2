#!/usr/bin/env python3
"""capture_judge.py: judges one scenario of tests/gpu/capture.sh from the trace files and the
workers' request logs (capture_loop.h: "<index> <start ns> <end ns> <kernels>", CLOCK_REALTIME).

For every file (one per worker process; its pid names its log req.<pid>.log):
  - its capture ranges (table capture) are as many as --ranges, each as long as --range-s
    (+- --tol-s), with the reasons --reasons (start-end, e.g. control-control);
  - every request made wholly inside a range has all its kernels in the file (recorded ==
    launched, the sum printed per range), and every request made wholly outside the ranges
    (--outside-ms away from them) has none; requests on a boundary are counted, not judged;
  - no kernel lies outside every request (a stray would be a wrong time or a foreign kernel);
  - records_dropped and records_lost are 0;
  - --flight W: one range, W s long (+- --tol-s), the rest as above, except that rows older
    than the window may stay (the rotation goes by flush periods): nothing is judged before it;
  - --profiler-stdout FILE: range K holds exactly the kernels the worker says it launched between
    cudaProfilerStart and cudaProfilerStop ("pid=P profiler range K: ... launched X").
Prints one line per file and range, PASS or FAIL and why, and exits 0 when all passed, 1 when
not. Needs only python3's sqlite3 module (the GPU machine has no sqlite3 program).
"""
import argparse
import bisect
import glob
import os
import re
import sqlite3
import sys

CLOCK_TOL_NS = 50_000  # GPU clock vs CLOCK_REALTIME after calibration (GPU.md: ~0.2 us)


def read_file(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    t0 = int(meta["t0"])
    pid = db.execute("SELECT pid FROM process").fetchone()[0]
    offset = 0
    if meta.get("clock") == "cupti":
        row = db.execute(
            "SELECT realtime - cupti FROM calibration WHERE label = 'start'").fetchone()
        offset = row[0] if row else 0
    base = t0 + offset
    kernels = sorted(s + base for (s,) in db.execute("SELECT start FROM kernel"))
    ranges = [(s + base, s + d + base, sr, er, name) for (s, d, sr, er, name) in db.execute(
        "SELECT start, dur, start_reason, end_reason, name FROM capture ORDER BY id")]
    pmeta = dict(db.execute("SELECT key, value FROM process_meta"))
    db.close()
    return pid, kernels, ranges, pmeta


def read_log(path):
    reqs = []
    with open(path) as f:
        for line in f:
            i, ts, te, k = line.split()
            reqs.append((int(ts), int(te), int(k), int(i)))
    reqs.sort()
    return reqs


def profiler_counts(path, pid):
    counts = {}
    pat = re.compile(r"pid=%d profiler range (\d+): requests \d+-\d+ launched (\d+)" % pid)
    with open(path) as f:
        for line in f:
            m = pat.search(line)
            if m:
                counts[int(m.group(1))] = int(m.group(2))
    return counts


def judge(args, path, logdir):
    """Returns (ok, lines)."""
    out = []
    pid, kernels, ranges, pmeta = read_file(path)
    name = f"{args.name} pid={pid}"
    log = os.path.join(logdir, f"req.{pid}.log")
    if not os.path.exists(log):
        return False, [f"FAIL {name}: no request log {log}"]
    reqs = read_log(log)
    ok = True
    fails = []
    # each kernel to its request
    starts = [r[0] for r in reqs]
    per_req = [0] * len(reqs)
    strays = 0
    for ks in kernels:
        j = bisect.bisect_right(starts, ks + CLOCK_TOL_NS) - 1
        if j >= 0 and ks <= reqs[j][1] + CLOCK_TOL_NS:
            per_req[j] += 1
        else:
            strays += 1
    if strays:
        fails.append(f"{strays} kernels outside every request")
    for key in ("records_dropped", "records_lost"):
        if int(pmeta.get(key, 0) or 0):
            fails.append(f"{key} = {pmeta[key]}")
    want_ranges = 1 if args.flight else args.ranges
    if want_ranges is not None and len(ranges) != want_ranges:
        fails.append(f"{len(ranges)} capture ranges, {want_ranges} expected")
    length = args.flight or args.range_s
    reasons = args.reasons.split(",") if args.reasons else []
    prof = profiler_counts(args.profiler_stdout, pid) if args.profiler_stdout else {}
    m_in = CLOCK_TOL_NS
    # a launch made while CUPTI was being switched may or may not be recorded: the outside
    # margin covers the longest switch the collector saw
    switch = int(pmeta.get("capture_switch_max_ns", 0) or 0)
    m_out = max(int(args.outside_ms * 1e6), 2 * switch + 1_000_000)
    for k, (cs, ce, sr, er, rname) in enumerate(ranges, 1):
        inside = [j for j, r in enumerate(reqs) if r[0] >= cs + m_in and r[1] <= ce - m_in]
        launched = sum(reqs[j][2] for j in inside)
        recorded = sum(per_req[j] for j in inside)
        short = [reqs[j][3] for j in inside if per_req[j] != reqs[j][2]]
        boundary = sum(1 for r in reqs if r[0] < cs + m_in < r[1] or r[0] < ce - m_in < r[1])
        in_range = sum(1 for ks in kernels if cs - CLOCK_TOL_NS <= ks <= ce + CLOCK_TOL_NS)
        secs = (ce - cs) / 1e9
        line = (f"{name} range {k} ({sr}-{er or 'open'}{', ' + rname if rname else ''},"
                f" {secs:.2f} s): {len(inside)} requests inside, launched {launched},"
                f" recorded {recorded}; {boundary} on its edges")
        rf = []
        if short:
            rf.append(f"requests {short[:5]} incomplete")
        if launched == 0:
            rf.append("no request inside it")
        if length is not None and abs(secs - length) > args.tol_s:
            rf.append(f"{secs:.2f} s long, {length} +- {args.tol_s} expected")
        if k <= len(reasons) and reasons[k - 1] != f"{sr}-{er}":
            rf.append(f"reasons {sr}-{er}, {reasons[k - 1]} expected")
        if prof:
            if k not in prof:
                rf.append("the worker names no such profiler range")
            elif prof[k] != in_range:
                rf.append(f"{in_range} kernels in it, the worker launched {prof[k]} between"
                          " cudaProfilerStart and cudaProfilerStop")
            else:
                line += f"; the worker's own count {prof[k]} == {in_range} in the range"
        out.append(("FAIL " if rf else "PASS ") + line + ("".join("; " + x for x in rf)))
        ok &= not rf
    # outside every range, by --outside-ms: nothing (flight: only after the window's end)
    outside = []
    for j, (ts, te, kk, idx) in enumerate(reqs):
        if args.flight and ranges and te <= ranges[0][0]:
            continue
        if all(te <= cs - m_out or ts >= ce + m_out for cs, ce, *_ in ranges):
            outside.append(j)
    rec_out = sum(per_req[j] for j in outside)
    bad = [reqs[j][3] for j in outside if per_req[j]][:5]
    line = (f"{name} outside the ranges (by {m_out / 1e6:.1f} ms; the longest CUPTI switch took"
            f" {switch / 1e3:.0f} us): {len(outside)} requests, launched"
            f" {sum(reqs[j][2] for j in outside)}, recorded {rec_out}")
    if rec_out:
        fails.append(f"recorded outside the ranges (requests {bad})")
    out.append(("FAIL " if fails else "PASS ") + line + "".join("; " + x for x in fails))
    return ok and not fails, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="folder of the trace files (*.db)")
    ap.add_argument("--logs", help="folder of the request logs (default: --dir)")
    ap.add_argument("--name", default="capture")
    ap.add_argument("--files", type=int, help="trace files expected")
    ap.add_argument("--ranges", type=int)
    ap.add_argument("--range-s", type=float)
    ap.add_argument("--tol-s", type=float, default=1.0)
    ap.add_argument("--reasons", help="start-end of each range, comma separated")
    ap.add_argument("--flight", type=float, help="the flight recorder's window, s")
    ap.add_argument("--outside-ms", type=float, default=5.0)
    ap.add_argument("--profiler-stdout")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.db")))
    ok = bool(files)
    if args.files is not None and len(files) != args.files:
        print(f"FAIL {args.name}: {len(files)} trace files in {args.dir}, {args.files} expected")
        ok = False
    if not files:
        print(f"FAIL {args.name}: no trace file in {args.dir}")
    for f in files:
        try:
            fok, lines = judge(args, f, args.logs or args.dir)
        except (sqlite3.Error, OSError, KeyError, ValueError, TypeError) as e:
            fok, lines = False, [f"FAIL {args.name} {f}: {e}"]
        ok &= fok
        for line in lines:
            print(line)
    print(f"capture_judge {args.name}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
