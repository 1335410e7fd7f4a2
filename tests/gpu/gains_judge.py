#!/usr/bin/env python3
"""gains_judge: tlview's predicted MPS gain against the applications' own, for the recordings of
tests/gpu/workloads.sh.

For every pair OUTDIR/<workload>-off-n<N> and OUTDIR/<workload>-on-n<N> (N > 1) with a solo run
OUTDIR/<workload>-off-n1 (a mix A+B: the solo runs of A and of B, both taken as --baseline), the
truth is the workers' own throughput (their RESULT lines: items over the makespan of the timed
regions, first start to last end) with MPS over without; tlview's prediction comes from the
MPS-off recording alone:
    TLVIEW report --format json --measure range:timed --baseline <solo> <off>
(summary predicted_gain_low and predicted_gain: the interval), and tlview's own measurement from
the two recordings (--compare <on>: comparison measured_gain over the same NVTX ranges).
Prints: workload | N | gain (app) | gain (tlview, measured) | predicted | inside? | half-width |
GPU idle (the summary's idle_share: idle inside the timed ranges besides context switches; "host-paced"
from 2%, where the prediction holds at the hosts' pace only), then the counts inside, also apart
for host-paced pairs and the others.
A run whose log holds fewer RESULT lines than its N workers (or whose `rc` is not 0) is judged
NO, with the reason. Each WORKLOAD-N named after OUTDIR (e.g. resnet18-4) must be among the pairs
judged (CTest gains__judge names the committed ones).
--blind prints the intervals alone (workload | N | predicted | half-width | GPU idle), from the
MPS-off runs, reading neither the MPS runs nor any RESULT line: to write predictions down before
the truth is read. Exit 0 when at least one interval was printed.
Exit status: 0 when at least one pair was judged, every named pair was, and every gain lies inside
its interval; 1 otherwise; 2 for a usage error.
Usage: gains_judge.py [--blind] TLVIEW OUTDIR [WORKLOAD-N ...]
"""
import glob
import json
import os
import re
import subprocess
import sys

from workloads_table import summarise


def report(tlview, args):
    res = subprocess.run([tlview, "report", "--format", "json"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr.strip() or f"tlview exit {res.returncode}")
    return json.loads(res.stdout)


def main():
    argv = sys.argv[1:]
    blind = bool(argv) and argv[0] == "--blind"
    argv = argv[blind:]
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tlview, outdir, wanted = argv[0], argv[1], set(argv[2:])
    rows, bad, judged = [], 0, set()
    for off in sorted(glob.glob(os.path.join(outdir, "*-off-n*"))):
        m = re.match(r"(.*)-off-n(\d+)$", os.path.basename(off))
        w, n = m.group(1), int(m.group(2))
        on = off.replace("-off-", "-on-")
        solos = [os.path.join(outdir, f"{p}-off-n1") for p in w.split("+")]
        if n < 2 or not all(map(os.path.isdir, solos)) or not (blind or os.path.isdir(on)):
            continue
        db = lambda d: sorted(glob.glob(os.path.join(d, "*.db")))
        base = [a for solo in solos for f in db(solo) for a in ("--baseline", f)]
        rep = report(tlview, ["--measure", "range:timed"] + base + db(off))
        lo, hi = rep["summary"]["predicted_gain_low"], rep["summary"]["predicted_gain"]
        mid = (lo + hi) / 2
        idle = (f"{100 * rep['summary']['idle_share']:.0f}%" +
                (" host-paced" if rep["summary"]["host_paced"] else ""))
        if blind:
            rows.append((w, n, f"{lo:.3f}-{hi:.3f}", f"+-{100 * (hi - lo) / 2 / mid:.0f}%", idle))
            continue
        runs = {"on": summarise(on, n), "off": summarise(off, n)}
        notes = [f"{k}: {r['note']}" for k, r in runs.items() if r["note"]]
        app = runs["on"]["rate_span"] / runs["off"]["rate_span"]
        cmp = report(tlview, ["--measure", "range:timed"] + base +
                     [a for f in db(on) for a in ("--compare", f)] + db(off))
        # compared as printed (3 decimals); until 2026-12-01 20:10 with 0.5% of slack each side
        inside = not notes and round(lo, 3) <= round(app, 3) <= round(hi, 3)
        bad += not inside
        judged.add(f"{w}-{n}")
        rows.append((w, n, f"{app:.3f}", f"{cmp['comparison']['measured_gain']:.3f}",
                     f"{lo:.3f}-{hi:.3f}",
                     "yes" if inside else "NO" + (f" ({'; '.join(notes)})" if notes else ""),
                     f"+-{100 * (hi - lo) / 2 / mid:.0f}%", idle))
    head = ("workload", "N", "predicted", "half-width", "GPU idle") if blind else (
        "workload", "N", "gain (app)", "gain (tlview, measured)", "predicted", "inside",
        "half-width", "GPU idle")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    if blind:
        print(f"gains_judge: {len(rows)} intervals (--blind: no truth read)")
        return 0 if rows else 1
    print(f"gains_judge: {len(rows) - bad} inside, {bad} outside")
    paced = [r for r in rows if r[-1].endswith("host-paced")]
    if paced:  # their truth is their hosts' pace, which moves between runs (tests/gpu/RESULTS.md)
        print(f"gains_judge: of which host-paced {len(paced)}, "
              f"{sum(r[5] == 'yes' for r in paced)} inside; not host-paced "
              f"{len(rows) - len(paced)}, {sum(r[5] == 'yes' for r in rows if r not in paced)} inside")
    missing = sorted(wanted - judged)
    if missing:
        print(f"gains_judge: not judged (no off/on/solo runs): {', '.join(missing)}")
    if not rows:
        print(f"gains_judge: no <workload>-off-n<N>/-on-n<N> pair with a -off-n1 solo run in "
              f"{outdir}")
    return 1 if bad or missing or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
