#!/usr/bin/env python3
"""workloads_table: the table of tests/gpu/workloads.sh, from the RESULT lines its runs left in
OUTDIR/<workload>-<off|on>-n<N>/log (one per worker, written by tests/gpu/workloads.py).
Per workload and N (N = 1: the solo run, MPS off):
  items/s (sum)   the sum over workers of items / seconds (each worker's own timed loop)
  makespan        the last worker's t_end_ns - the first worker's t_start_ns (s); items/s (span)
                  is all workers' items over it
  gain            MPS on / MPS off, of items/s (sum) and of items/s (span) (= makespan off / on)
A run whose log holds fewer RESULT lines than N workers, or whose `rc` file is not 0, is noted
(its figures come from the results it has); a run not made is "-".
Prints the table (markdown) and writes it to OUTDIR/table.md, the figures to OUTDIR/table.csv.
Usage: workloads_table.py OUTDIR
"""
import csv
import json
import math
import os
import re
import sys

ORDER = ["resnet18", "gpt2", "resnet50", "bert", "gemm", "mobilenet_v2", "vit_b_16"]
RUN = re.compile(r"^(?P<w>[a-z0-9_+]+)-(?P<mode>off|on)-n(?P<n>[0-9]+)$")  # A+B: a mix


def results(log):
    """The RESULT {json} records in a log, wherever they stand on a line; one that does not parse
    is skipped, not the rest."""
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    dec, out = json.JSONDecoder(), []
    for part in text.split("RESULT ")[1:]:
        try:
            r = dec.raw_decode(part)[0]
        except ValueError:
            continue
        if isinstance(r, dict) and all(k in r for k in ("items", "seconds", "t_start_ns",
                                                        "t_end_ns")):
            out.append(r)
    return out


def summarise(d, n):
    """The figures of one run folder: dict with rate, span, rate_span, results, note."""
    res = results(os.path.join(d, "log"))
    notes = []
    try:
        with open(os.path.join(d, "rc")) as f:
            rc = f.read().strip()
        if rc != "0":
            notes.append(f"exit {rc}")
    except OSError:
        pass
    if len(res) != n:
        notes.append(f"{len(res)}/{n} results")
    out = {"results": len(res), "note": ", ".join(notes), "rate": math.nan, "span": math.nan,
           "rate_span": math.nan, "impl": res[0].get("impl", "") if res else ""}
    if res:
        out["rate"] = sum(r["items"] / r["seconds"] for r in res if r["seconds"] > 0)
        span = (max(r["t_end_ns"] for r in res) - min(r["t_start_ns"] for r in res)) / 1e9
        out["span"] = span
        out["rate_span"] = sum(r["items"] for r in res) / span if span > 0 else math.nan
    return out


def ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def f(x, digits=1):
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: workloads_table.py OUTDIR")
    outdir = sys.argv[1]
    runs = {}
    for name in sorted(os.listdir(outdir)):
        m = RUN.match(name)
        if m and os.path.isdir(os.path.join(outdir, name)):
            runs[(m["w"], m["mode"], int(m["n"]))] = summarise(os.path.join(outdir, name),
                                                               int(m["n"]))
    workloads = sorted({w for w, _, _ in runs},
                       key=lambda w: (ORDER.index(w) if w in ORDER else len(ORDER), w))
    head = ["workload", "N", "items/s off (sum)", "items/s on (sum)", "gain on/off (sum)",
            "makespan off s", "makespan on s", "gain on/off (makespan)", "solo items/s",
            "off / (N x solo)", "note"]
    rows, csv_rows = [], []
    for w in workloads:
        solo = runs.get((w, "off", 1))
        solo_rate = solo["rate"] if solo else math.nan
        ns = sorted({n for ww, _, n in runs if ww == w})
        for n in ns:
            off, on = runs.get((w, "off", n)), runs.get((w, "on", n))
            blank = {"rate": math.nan, "span": math.nan, "rate_span": math.nan, "note": "",
                     "impl": ""}
            o, m = off or blank, on or blank
            g_sum, g_span = ratio(m["rate"], o["rate"]), ratio(o["span"], m["span"])
            scale = ratio(o["rate"], n * solo_rate)
            notes = [f"{mode}: {r['note']}" for mode, r in (("off", o), ("on", m)) if r["note"]]
            if off is None:
                notes.append("off not run")
            if on is None and n > 1:
                notes.append("on not run")
            rows.append([w, n, f(o["rate"]), f(m["rate"]), f(g_sum, 3), f(o["span"], 3),
                         f(m["span"], 3), f(g_span, 3), f(solo_rate), f(scale, 3),
                         "; ".join(notes)])
            csv_rows.append([w, n, o["rate"], m["rate"], g_sum, o["span"], m["span"],
                             o["rate_span"], m["rate_span"], g_span, solo_rate,
                             o["impl"] or m["impl"], "; ".join(notes)])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(outdir, "table.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(outdir, "table.csv"), "w", newline="") as fh:
        wr = csv.writer(fh, lineterminator="\n")
        wr.writerow(["workload", "n", "off_items_per_s_sum", "on_items_per_s_sum", "gain_sum",
                     "makespan_off_s", "makespan_on_s", "off_items_per_s_span",
                     "on_items_per_s_span", "gain_makespan", "solo_items_per_s", "impl", "note"])
        for r in csv_rows:
            wr.writerow([("" if isinstance(x, float) and math.isnan(x) else
                          f"{x:.6g}" if isinstance(x, float) else x) for x in r])
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
