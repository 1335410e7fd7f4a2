#!/usr/bin/env python3
"""api_cost_table: the table of bench/api_cost.sh from OUTDIR/raw.txt and the traced runs' files.

Per arm (untraced, collector, api, api-all): the timed loop's seconds in each round, their median
and that median over the untraced one; from the arm's first round's file, the kernels, the API
records and, of them, the queries TLVIEW_API=1 leaves out (tests/gpu/check.py's QUIET).
Usage: api_cost_table.py OUTDIR
"""
import glob
import json
import os
import sqlite3
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from check import quiet_name  # noqa: E402

ARMS = ("untraced", "collector", "api", "api-all")


def records(path):
    """(kernels, API records, queries among them) of one collector file."""
    db = sqlite3.connect(path)
    try:
        k = db.execute("SELECT count(*) FROM kernel").fetchone()[0]
        names = [t for (t,) in db.execute(
            "SELECT s.text FROM api a LEFT JOIN strings s ON s.id = a.name_id")]
        return k, len(names), sum(1 for n in names if quiet_name(n))
    finally:
        db.close()


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    secs = {}
    for line in open(os.path.join(out, "raw.txt")):
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[1] in ARMS and parts[2] == "RESULT":
            secs.setdefault(parts[1], []).append(float(json.loads(parts[3])["seconds"]))
    base = statistics.median(secs["untraced"]) if secs.get("untraced") else None
    print("| arm | loop s per round | median s | over untraced | kernels | API records"
          " | of them queries |")
    print("|---|---|---|---|---|---|---|")
    for arm in ARMS:
        s = secs.get(arm, [])
        med = statistics.median(s) if s else None
        dbs = sorted(glob.glob(os.path.join(out, arm + ".1", "*.db")))
        k, a, q = records(dbs[0]) if dbs else ("-", "-", "-")
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            arm, ", ".join("%.3f" % x for x in s) or "-", "%.3f" % med if med else "-",
            "%.2fx" % (med / base) if med and base else "-", k, a, q))
    return 0


if __name__ == "__main__":
    sys.exit(main())
