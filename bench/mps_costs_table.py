#!/usr/bin/env python3
"""mps_costs_table: the tables of bench/mps_costs.sh, from its raw.txt (one probe line each,
prefixed "PART MODE SCEN N RANK ROLE"; the probe's lines are described in bench/mps_cost.cu).
Prints readable tables (markdown) on stdout and writes every figure to CSV, one per row:
part,mode,kind,n,metric,value,unit. Durations are the kernels' spans on the GPU (%globaltimer).
  calib  each kind's ns per unit of PARAM and fixed ns (the line through its two sizes)
  a      per N and kernel length: the solo duration (N = 1, median), each kernel's duration over
         it (median, min, max), the overhead (median - N) / N, and the span of a round (first
         start to last end of the N kernels launched together) over N x solo: 1.00 means no time
         lost to switching
  b      per mode and what ran beside B: B's launch-to-end latency (median, p90, max), B's kernel
         duration on the GPU (median), the share of B's kernels that started while A was busy,
         A's kernel duration (median)
  c      per mode: us per launch (median of the rounds, min, max) and the launch + synchronize
         round trip (median, p90)
  d      per mode, kind and N: the solo duration of that mode, each client's duration over it
         (median over the clients and repeats, min, max), and a round's span over solo
  e      per kernel length and mode: a chain of saturating kernels alone (N = 1) and two chains
         started together (N = 2): their span (first start to last end) over twice the solo
         chain's, and the time saved per kernel, (2 x solo span - span) / (2 x kernels): what a
         kernel gains beside another client's by filling the SMs the other's drain frees
Usage: mps_costs_table.py RAW CSV
"""
import collections
import csv
import math
import statistics
import sys

LATE_NS = 1_000_000  # a launch this far past its instant is flagged: the schedule ran over


def pct(values, p):
    """The p-th percentile by nearest rank (p90 of 200 values: the 180th smallest)."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def parse(path):
    """RAW into {part: [(mode, scen, n, rank, role, fields)]}; a malformed line is skipped."""
    parts = collections.defaultdict(list)
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) < 7:
                continue
            try:
                parts[w[0]].append((w[1], w[2], int(w[3]), int(w[4]), w[5], w[6:]))
            except ValueError:
                continue
    return parts


def kernels(rows, tag="K"):
    """(mode, scen, n, rank, role, kind, param, rep, start, end, late) of the K lines."""
    out = []
    for mode, scen, n, rank, role, f in rows:
        if f[0] == tag and len(f) == 7:
            try:
                out.append((mode, scen, n, rank, role, f[1], int(f[2]), int(f[3]), int(f[4]),
                            int(f[5]), int(f[6])))
            except ValueError:
                pass
    return out


def grouped(ks, key):
    """The K lines ks grouped by key(k), in a dict of lists."""
    by = collections.defaultdict(list)
    for k in ks:
        by[key(k)].append(k)
    return by


class Out:
    """The CSV rows and the printed tables."""

    def __init__(self):
        self.rows = []

    def add(self, part, mode, kind, n, metric, value, unit):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return
        self.rows.append([part, mode, kind, n, metric,
                          f"{value:.6g}" if isinstance(value, float) else value, unit])


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()


def part_calib(rows, out):
    lines = []
    for mode, scen, n, rank, role, f in rows:
        if f[0] == "C" and len(f) == 4:
            lines.append([f[1], f[2], f[3]])
            out.add("calib", mode, f[1], 1, "ns_per_unit", float(f[2]), "ns")
            out.add("calib", mode, f[1], 1, "fixed", float(f[3]), "ns")
        elif f[0] == "I" and len(f) >= 3 and f[1] == "triad":
            out.add("calib", mode, "triad", 1, "bandwidth", float(f[2]), "GB/s")
    if lines:
        print("## Calibration (each kind alone: ns per unit of PARAM, fixed ns)\n")
        table(["kind", "ns per unit", "fixed ns"], lines)


def rounds_span(ks):
    """Per (n, param or kind, rep): the span of that round over all ranks."""
    span = collections.defaultdict(lambda: [None, None])
    for k in ks:
        key = (k[0], k[2], k[5], k[6], k[7])
        s = span[key]
        s[0] = k[8] if s[0] is None else min(s[0], k[8])
        s[1] = k[9] if s[1] is None else max(s[1], k[9])
    return span


def part_a(rows, out):
    ks = kernels(rows)
    if not ks:
        return
    solo = {}
    by = collections.defaultdict(list)
    for k in ks:
        by[(k[2], k[6])].append(k)
    for (n, param), group in by.items():
        if n == 1:
            solo[param] = statistics.median(k[9] - k[8] for k in group)
    span = rounds_span(ks)
    lines = []
    for (n, param), group in sorted(by.items(), key=lambda x: (x[0][1], x[0][0])):
        s = solo.get(param)
        late = max(k[10] for k in group)
        note = f"late {late / 1e6:.1f} ms" if late > LATE_NS else ""
        if not s:
            lines.append([n, f"({param} it.)", len(group), "no solo", "", "", "", "", note])
            continue
        st = [(k[9] - k[8]) / s for k in group]
        med = statistics.median(st)
        spans = [(v[1] - v[0]) / (n * s) for key, v in span.items()
                 if key[1] == n and key[3] == param]
        sp = statistics.median(spans)
        over = (med - n) / n
        lines.append([n, f"{s / 1e6:.2f}", len(group), fmt(med), fmt(min(st)), fmt(max(st)),
                      f"{over:+.3f}", fmt(sp, 3), note])
        kind = f"spin {s / 1e6:.1f}ms"
        out.add("a", "off", kind, n, "solo_ms", s / 1e6, "ms")
        out.add("a", "off", kind, n, "stretch_median", med, "x")
        out.add("a", "off", kind, n, "stretch_min", min(st), "x")
        out.add("a", "off", kind, n, "stretch_max", max(st), "x")
        out.add("a", "off", kind, n, "overhead", over, "(stretch-N)/N")
        out.add("a", "off", kind, n, "round_span_over_n_solo", sp, "x")
    print("## a. Time-slicing overhead (one-thread spin kernels, MPS off, N processes together)\n")
    table(["N", "solo ms", "kernels", "stretch median", "min", "max", "(stretch-N)/N",
           "round span / (N x solo)", "note"], lines)


def part_b(rows, out):
    lat = collections.defaultdict(list)
    along = collections.defaultdict(list)
    for mode, scen, n, rank, role, f in rows:
        if f[0] == "L" and len(f) == 6:
            lat[(mode, scen)].append(tuple(int(x) for x in f[1:]))
    for k in kernels(rows):
        along[(k[0], k[1])].append(k)
    if not lat:
        return
    order = {"off": 0, "mps": 1}
    lines = []
    for key in sorted(lat, key=lambda m: (order.get(m[0], 2), m[1] != "alone", m[1])):
        mode, scen = key
        ls = [x[1] / 1e3 for x in lat[key]]
        kd = [(x[3] - x[2]) / 1e3 for x in lat[key]]
        late = max(x[4] for x in lat[key])
        a = along.get(key, [])
        inside = a_ms = "-"
        if a:
            a0, a1 = min(k[8] for k in a), max(k[9] for k in a)
            share = sum(1 for x in lat[key] if a0 <= x[2] <= a1) / len(lat[key])
            inside = f"{share:.2f}"
            a_ms = fmt(statistics.median((k[9] - k[8]) / 1e6 for k in a), 1)
            out.add("b", mode, scen, 2, "b_inside_a_share", share, "")
            out.add("b", mode, scen, 2, "a_kernel_ms", float(a_ms), "ms")
        med, p90 = statistics.median(ls), pct(ls, 90)
        note = f"late {late / 1e6:.1f} ms" if late > LATE_NS else ""
        lines.append([mode, "B alone" if scen == "alone" else f"beside A ({scen})", len(ls),
                      fmt(med, 1), fmt(p90, 1), fmt(max(ls), 1), fmt(statistics.median(kd), 1),
                      inside, a_ms, note])
        for metric, v in (("latency_median", med), ("latency_p90", p90), ("latency_max", max(ls)),
                          ("b_kernel_median", statistics.median(kd))):
            out.add("b", mode, scen, 1 if scen == "alone" else 2, metric, v, "us")
    print("## b. A short kernel's launch-to-end latency (B: ~10 us spin kernels, one every 5 ms)\n")
    table(["MPS", "B ran", "kernels", "latency median us", "p90 us", "max us",
           "B kernel us (GPU)", "B inside A's busy time", "A kernel ms", "note"], lines)


def part_c(rows, out):
    per = collections.defaultdict(list)
    rtt = {}
    for mode, scen, n, rank, role, f in rows:
        if f[0] == "U" and f[1] == "launch" and len(f) == 4:
            per[mode].append(float(f[3]))
        elif f[0] == "U" and f[1] == "rtt" and len(f) == 4:
            rtt[mode] = (float(f[2]), float(f[3]))
    if not per:
        return
    lines = []
    for mode in sorted(per, key=lambda m: m != "off"):
        v = per[mode]
        r = rtt.get(mode, (None, None))
        lines.append([mode, len(v), fmt(statistics.median(v), 3), fmt(min(v), 3),
                      fmt(max(v), 3), fmt(r[0], 1), fmt(r[1], 1)])
        out.add("c", mode, "launch", 1, "us_per_launch_median", statistics.median(v), "us")
        out.add("c", mode, "launch", 1, "us_per_launch_min", min(v), "us")
        out.add("c", mode, "launch", 1, "us_per_launch_max", max(v), "us")
        if r[0] is not None:
            out.add("c", mode, "launch", 1, "round_trip_median", r[0], "us")
            out.add("c", mode, "launch", 1, "round_trip_p90", r[1], "us")
    print("## c. Launch cost (empty <<<1,1>>> kernels, one process)\n")
    table(["MPS", "rounds", "us per launch median", "min", "max", "launch+sync us median",
           "p90"], lines)
    if "off" in per and "mps" in per:
        ratio = statistics.median(per["mps"]) / statistics.median(per["off"])
        out.add("c", "mps", "launch", 1, "mps_over_off", ratio, "x")
        print(f"us per launch, MPS / off: {ratio:.3f}\n")


def part_d(rows, out):
    ks = kernels(rows)
    if not ks:
        return
    by = grouped(ks, lambda k: (k[0], k[5], k[2]))
    solo = {(m, kind): statistics.median(k[9] - k[8] for k in g)
            for (m, kind, n), g in by.items() if n == 1}
    span = rounds_span(ks)
    order = {"off": 0, "mps": 1}
    kinds = ["spin", "sat", "triad", "tile"]
    lines = []
    for (mode, kind, n), group in sorted(by.items(), key=lambda x: (
            kinds.index(x[0][1]) if x[0][1] in kinds else 9, order.get(x[0][0], 2), x[0][2])):
        s = solo.get((mode, kind))
        late = max(k[10] for k in group)
        note = f"late {late / 1e6:.1f} ms" if late > LATE_NS else ""
        if not s:
            lines.append([kind, mode, n, "no solo", len(group), "", "", "", "", note])
            continue
        st = [(k[9] - k[8]) / s for k in group]
        med = statistics.median(st)
        sp = statistics.median((v[1] - v[0]) / s for key, v in span.items()
                               if key[0] == mode and key[1] == n and key[2] == kind)
        lines.append([kind, mode, n, f"{s / 1e6:.1f}", len(group), fmt(med), fmt(min(st)),
                      fmt(max(st)), fmt(sp), note])
        out.add("d", mode, kind, n, "solo_ms", s / 1e6, "ms")
        out.add("d", mode, kind, n, "slowdown_median", med, "x")
        out.add("d", mode, kind, n, "slowdown_min", min(st), "x")
        out.add("d", mode, kind, n, "slowdown_max", max(st), "x")
        out.add("d", mode, kind, n, "round_span_over_solo", sp, "x")
    print("## d. Side by side by kind (N processes, one ~100 ms kernel of each kind in turn)\n")
    table(["kind", "MPS", "N", "solo ms", "kernels", "duration / solo median", "min", "max",
           "round span / solo", "note"], lines)
    for kind in kinds:
        if ("off", kind) in solo and ("mps", kind) in solo:
            r = solo[("mps", kind)] / solo[("off", kind)]
            out.add("d", "mps", kind, 1, "solo_mps_over_off", r, "x")
            print(f"{kind}: solo under MPS / solo without: {r:.3f}")
    print()


def part_e(rows, out):
    ks = kernels(rows)
    if not ks:
        return
    by = grouped(ks, lambda k: (k[0], k[1], k[2]))
    span = {key: max(k[9] for k in g) - min(k[8] for k in g) for key, g in by.items()}
    lines = []
    for (mode, scen, n), group in sorted(by.items(), key=lambda x: (x[0][1], x[0][2], x[0][0])):
        solo = span.get(("off", scen, 1))
        med = statistics.median(k[9] - k[8] for k in group)
        late = max(k[10] for k in group)
        note = f"late {late / 1e6:.1f} ms" if late > LATE_NS else ""
        count = len(group) // max(n, 1)
        if n == 1 or not solo:
            lines.append([scen, mode, n, len(group), f"{med / 1e3:.1f}",
                          f"{span[(mode, scen, n)] / 1e6:.2f}", "-", "-", note])
            out.add("e", mode, scen, n, "kernel_us", med / 1e3, "us")
            out.add("e", mode, scen, n, "span_ms", span[(mode, scen, n)] / 1e6, "ms")
            continue
        ratio = span[(mode, scen, n)] / (n * solo)
        saved = (n * solo - span[(mode, scen, n)]) / (n * count)
        lines.append([scen, mode, n, len(group), f"{med / 1e3:.1f}",
                      f"{span[(mode, scen, n)] / 1e6:.2f}", fmt(ratio, 3), f"{saved / 1e3:.2f}",
                      note])
        out.add("e", mode, scen, n, "kernel_us", med / 1e3, "us")
        out.add("e", mode, scen, n, "span_ms", span[(mode, scen, n)] / 1e6, "ms")
        out.add("e", mode, scen, n, "span_over_n_solo", ratio, "x")
        out.add("e", mode, scen, n, "saved_per_kernel", saved / 1e3, "us")
    print("## e. Kernel tails (chains of saturating kernels back to back, 1 alone, 2 together)\n")
    table(["kernels", "MPS", "N", "count", "kernel us (median)", "span ms", "span / (N x solo)",
           "saved per kernel us", "note"], lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("Usage: ")[1].strip())
    parts = parse(sys.argv[1])
    out = Out()
    part_calib(parts.get("calib", []), out)
    part_a(parts.get("a", []), out)
    part_b(parts.get("b", []), out)
    part_c(parts.get("c", []), out)
    part_d(parts.get("d", []), out)
    part_e(parts.get("e", []), out)
    with open(sys.argv[2], "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["part", "mode", "kind", "n", "metric", "value", "unit"])
        w.writerows(out.rows)
    print(f"mps_costs_table: {len(out.rows)} figures written to {sys.argv[2]}")
    return 0 if out.rows else 1


if __name__ == "__main__":
    sys.exit(main())
