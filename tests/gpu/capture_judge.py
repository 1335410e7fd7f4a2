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
    the GPU times are put on CLOCK_REALTIME with both calibration pairs (the offset moves
    linearly from the start pair to the end pair), within a tolerance of half the wider pair's
    bracket (process_meta calibration_*_bracket_ns) plus SLACK_NS for the GPU's own timestamps;
    and tlview, which places a file's times by its start pair alone, must agree: the end pair's
    offset may differ from the start pair's by no more than that tolerance;
  - records_dropped and records_lost are 0;
  - --flight W: one range, W s long (+- --tol-s), the rest as above, except that rows older
    than the window may stay (the rotation goes by flush periods): nothing is judged before it;
  - --profiler-stdout FILE: range K holds exactly the kernels the worker says it launched between
    cudaProfilerStart and cudaProfilerStop ("pid=P profiler range K: ... launched X");
  - --api-calls (a run with TLVIEW_API=1): every kernel's launch call is in the file (an API
    record with its correlation id), each range holds launch calls, and no range holds a query
    (tests/gpu/check.py's QUIET, e.g. the worker's cudaGetLastError per request): the collector
    leaves the queries out again each time a range reopens the API kinds.
Prints one line per file and range, PASS or FAIL and why, one "clock" line per file (the pairs'
brackets and offsets, the tolerance, how close kernels came to their request's edges, the strays
and how far from a request the farthest lies), a "summary" line over the files, and exits 0 when
all passed, 1 when not. Needs only python3's sqlite3 module (the GPU machine has no sqlite3
program).
"""
import argparse
import bisect
import glob
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import quiet_name  # noqa: E402  (the queries TLVIEW_API=1 leaves out)

# the kernels' timestamps against cuptiGetTimestamp's clock: both were within ~0.2 us of
# CLOCK_REALTIME on the H200 (shared/GPU.md); 20 us leaves a hundredfold room
SLACK_NS = 20_000
LEGACY_TOL_NS = 50_000  # files without calibration brackets (an older collector)


class Clock:
    """A file's GPU clock (CUPTI ns) put on CLOCK_REALTIME: the offset realtime - cupti moves
    linearly from the start pair to the end pair (the start pair alone without an end pair)."""

    def __init__(self, pairs, pmeta):
        self.c0, off0 = pairs.get("start", (0, 0))
        self.c1, off1 = pairs.get("end", (self.c0, off0))
        self.off0 = off0
        self.drift = off1 - off0 if self.c1 > self.c0 else 0
        b = [pmeta.get(f"calibration_{k}_bracket_ns") for k in ("start", "end")]
        self.brackets = [int(x) for x in b if x is not None]
        if "start" not in pairs or len(self.brackets) < len(pairs):
            self.tol = LEGACY_TOL_NS
        else:
            self.tol = max(self.brackets) // 2 + SLACK_NS

    def real(self, t):
        """CLOCK_REALTIME ns of GPU time t (absolute)."""
        if not self.drift:
            return t + self.off0
        return t + self.off0 + self.drift * (t - self.c0) // (self.c1 - self.c0)


def read_file(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    t0 = int(meta["t0"])
    pid = db.execute("SELECT pid FROM process").fetchone()[0]
    pmeta = dict(db.execute("SELECT key, value FROM process_meta"))
    pairs = {}
    if meta.get("clock") == "cupti":
        pairs = {label: (c, r - c) for label, c, r in
                 db.execute("SELECT label, cupti, realtime FROM calibration")}
    clock = Clock(pairs, pmeta)
    kernels = sorted(clock.real(t0 + s) for (s,) in db.execute("SELECT start FROM kernel"))
    ranges = [(clock.real(t0 + s), clock.real(t0 + s + d), sr, er, name) for (s, d, sr, er, name)
              in db.execute("SELECT start, dur, start_reason, end_reason, name FROM capture"
                            " ORDER BY id")]
    # API records: (start on CLOCK_REALTIME, is a kernel's launch call, is a query)
    launches = {c for (c,) in db.execute("SELECT correlation_id FROM kernel")}
    api = [(clock.real(t0 + s), c in launches, quiet_name(n)) for (s, c, n) in db.execute(
        "SELECT a.start, a.correlation_id, st.text FROM api a LEFT JOIN strings st"
        " ON st.id = a.name_id")]
    orphans = len(launches - {c for (c,) in db.execute("SELECT correlation_id FROM api")})
    db.close()
    return pid, kernels, ranges, pmeta, clock, (api, orphans)


def us(ns):
    """ns as us with one decimal; "-" for None."""
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def sus(ns):
    """ns as signed us with one decimal; "-" for None."""
    return "-" if ns is None else f"{ns / 1e3:+.1f}"


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
    """Returns (ok, lines, the clock's figures for the summary)."""
    out = []
    pid, kernels, ranges, pmeta, clock, (api, orphans) = read_file(path)
    name = f"{args.name} pid={pid}"
    log = os.path.join(logdir, f"req.{pid}.log")
    if not os.path.exists(log):
        return False, [f"FAIL {name}: no request log {log}"], None
    reqs = read_log(log)
    ok = True
    fails = []
    tol = clock.tol
    # each kernel to its request; how close the kernels come to their request's edges (a
    # launch follows its request's start, its kernel starts before the request's end)
    starts = [r[0] for r in reqs]
    per_req = [0] * len(reqs)
    strays = []  # (distance to the nearest request, ns; that request's index)
    lead = tail = None
    for ks in kernels:
        j = bisect.bisect_right(starts, ks + tol) - 1
        if j >= 0 and ks <= reqs[j][1] + tol:
            per_req[j] += 1
            lead = ks - reqs[j][0] if lead is None else min(lead, ks - reqs[j][0])
            tail = reqs[j][1] - ks if tail is None else min(tail, reqs[j][1] - ks)
            continue
        near = []
        if j >= 0:
            near.append((ks - reqs[j][1], reqs[j][3]))
        if j + 1 < len(reqs):
            near.append((reqs[j + 1][0] - ks, reqs[j + 1][3]))
        strays.append(min(near) if near else (float("inf"), -1))
    if strays:
        far = max(strays)
        fails.append(f"{len(strays)} kernels outside every request (the farthest"
                     f" {far[0] / 1e3:.1f} us from request {far[1]}; beside requests"
                     f" {sorted({r for _, r in strays})[:5]})")
    if abs(clock.drift) > tol:
        fails.append(f"the end calibration pair is {clock.drift / 1e3:+.1f} us off the start pair"
                     f" (tolerance {tol / 1e3:.1f} us): tlview, which places by the start pair,"
                     " is off by that much at the end")
    for key in ("records_dropped", "records_lost"):
        if int(pmeta.get(key, 0) or 0):
            fails.append(f"{key} = {pmeta[key]}")
    want_ranges = 1 if args.flight else args.ranges
    if want_ranges is not None and len(ranges) != want_ranges:
        fails.append(f"{len(ranges)} capture ranges, {want_ranges} expected")
    length = args.flight or args.range_s
    reasons = args.reasons.split(",") if args.reasons else []
    prof = profiler_counts(args.profiler_stdout, pid) if args.profiler_stdout else {}
    m_in = tol
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
        in_range = sum(1 for ks in kernels if cs - tol <= ks <= ce + tol)
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
        if args.api_calls:
            calls = [(lc, q) for t, lc, q in api if cs - tol <= t <= ce + tol]
            nl, nq = sum(lc for lc, _ in calls), sum(q for _, q in calls)
            line += f"; API records {len(calls)}, of them launch calls {nl}, queries {nq}"
            if nl == 0:
                rf.append("no launch call recorded in it")
            if nq:
                rf.append(f"{nq} queries recorded in it (TLVIEW_API=1 leaves them out)")
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
    if args.api_calls:
        line += f"; kernels without their launch call in the file: {orphans}"
        if orphans:
            fails.append(f"{orphans} kernels without their launch call")
    out.append(("FAIL " if fails else "PASS ") + line + "".join("; " + x for x in fails))
    out.append(f"clock {name}: brackets {'/'.join(us(b) for b in clock.brackets) or 'unknown'} us"
               f" (start/end pair), end pair {clock.drift / 1e3:+.1f} us off the start pair,"
               f" tolerance {us(tol)} us; kernel start - its request's start >= {sus(lead)} us,"
               f" request end - kernel start >= {sus(tail)} us; {len(strays)} strays"
               + (f", the farthest {us(max(strays)[0])} us from a request" if strays else ""))
    stats = {"brackets": clock.brackets, "drift": clock.drift, "tol": tol, "lead": lead,
             "strays": len(strays), "far": max(strays)[0] if strays else None}
    return ok and not fails, out, stats


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
    ap.add_argument("--api-calls", action="store_true",
                    help="TLVIEW_API=1: launch calls in every range, no query, no kernel without")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.db")))
    ok = bool(files)
    if args.files is not None and len(files) != args.files:
        print(f"FAIL {args.name}: {len(files)} trace files in {args.dir}, {args.files} expected")
        ok = False
    if not files:
        print(f"FAIL {args.name}: no trace file in {args.dir}")
    stats = []
    for f in files:
        try:
            fok, lines, st = judge(args, f, args.logs or args.dir)
        except (sqlite3.Error, OSError, KeyError, ValueError, TypeError) as e:
            fok, lines, st = False, [f"FAIL {args.name} {f}: {e}"], None
        ok &= fok
        stats += [st] if st else []
        for line in lines:
            print(line)
    if stats:
        def top(key, pick=max):
            vals = [x for st in stats for x in (st[key] if key == "brackets" else [st[key]])
                    if x is not None]
            return pick(vals) if vals else None
        print(f"summary {args.name}: calibration brackets up to {us(top('brackets'))} us, end pair"
              f" off the start pair by up to {sus(top('drift', lambda v: max(v, key=abs)))} us,"
              f" tolerance {us(top('tol'))} us; kernel start - its request's start >="
              f" {sus(top('lead', min))} us; {sum(st['strays'] for st in stats)} strays"
              + (f", the farthest {us(top('far'))} us from a request" if top('far') else ""))
    print(f"capture_judge {args.name}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
