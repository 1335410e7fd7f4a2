#!/usr/bin/env python3
"""check.py: judges one GPU scenario of tests/gpu/run.sh and keeps the results table.

The scenario programs print `pid=<pid> launched=<n>` for every process that used CUDA. check.py
compares that with what was recorded, and appends one row to the results file:
  --source db    (default) the collector's files in --dir (*.db): one file per process, kernels
                 recorded == launched, records_dropped 0, `complete` and compute_api_kind as expected;
  --source bare  the `bare_inject: pid=.. kernels=.. dropped=..` lines that bench/bare_inject prints
                 on stderr: a reference count taken with a bare CUPTI injection, to check the
                 scenario programs themselves.
--api calls   also: every kernel's launch call is recorded in its file (an API record with the
                 kernel's correlation id), and none of the queries TLVIEW_API=1 leaves out
                 (collector/inject.c, quiet_runtime and quiet_driver; --api all: some are recorded).
--print-table RESULTS prints the table and exits 1 when a row failed. Needs only python3's sqlite3.
"""
import argparse
import glob
import os
import re
import sqlite3
import sys

PID_RE = re.compile(r"\bpid=(\d+) launched=(\d+)")
BARE_RE = re.compile(r"^bare_inject: pid=(\d+) kernels=(\d+) dropped=(\d+)")
COLUMNS = ["scenario", "processes", "launched", "recorded", "dropped", "complete", "verdict"]


def launched_by_pid(logs):
    """pid -> kernels launched, from the programs' own output."""
    want = {}
    for path in filter(os.path.exists, logs):
        with open(path, errors="replace") as f:
            for line in f:
                m = PID_RE.search(line)
                if m:
                    want[int(m.group(1))] = int(m.group(2))
    return want


# The queries TLVIEW_API=1 leaves out (collector/inject.c), by the names CUPTI gives them.
QUIET = ("cudaGetDevice", "cudaGetDeviceCount", "cudaGetLastError", "cudaPeekAtLastError",
         "cudaDeviceGetAttribute", "cudaGetDeviceProperties", "cudaStreamIsCapturing",
         "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaFuncGetAttributes",
         "cudaPointerGetAttributes", "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxGetApiVersion",
         "cuCtxGetFlags", "cuDevicePrimaryCtxGetState", "cuDeviceGet", "cuDeviceGetAttribute",
         "cuDeviceGetCount", "cuDriverGetVersion", "cuKernelGetAttribute", "cuKernelGetName",
         "cuFuncGetAttribute", "cuFuncGetName", "cuGetErrorString", "cuGetErrorName",
         "cuGetProcAddress", "cuStreamIsCapturing")


def quiet_name(name):
    """Whether an API record's name is one of QUIET (CUPTI may add a version suffix: _v2, _v3020)."""
    return re.sub(r"_v\d+$", "", name or "") in QUIET


def read_api(path):
    """(API records, kernels without a launch call in the file, queries among the records)."""
    db = sqlite3.connect(path)
    try:
        names = [r[0] for r in db.execute(
            "SELECT s.text FROM api a LEFT JOIN strings s ON s.id = a.name_id")]
        orphans = db.execute("SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM api a"
                             " WHERE a.correlation_id = k.correlation_id)").fetchone()[0]
        return len(names), orphans, sum(1 for n in names if quiet_name(n))
    finally:
        db.close()


def read_db(path):
    """What one collector file holds; raises sqlite3.Error or ValueError when it is unreadable."""
    db = sqlite3.connect(path)
    try:
        procs = db.execute("SELECT id, pid, complete, error FROM process").fetchall()
        if len(procs) != 1:
            raise ValueError(f"{len(procs)} rows in table process, expected 1")
        pid_row, pid, complete, error = procs[0]
        meta = dict(db.execute("SELECT key, value FROM process_meta WHERE process_id = ?",
                               (pid_row,)).fetchall())
        kinds = sorted({r[0] for r in db.execute("SELECT compute_api_kind FROM context")})
        streams = db.execute("SELECT count(DISTINCT l.context_row || ':' || l.stream_id) "
                             "FROM kernel k JOIN launch l ON k.launch_id = l.id").fetchone()[0]
        durs = [r[0] for r in db.execute("SELECT dur FROM kernel ORDER BY start")]
        return {"pid": pid, "complete": complete, "error": error, "meta": meta,
                "kernels": len(durs), "kinds": kinds, "streams": streams, "durs": durs}
    finally:
        db.close()


def meta_int(meta, key):
    try:
        return int(meta[key])
    except (KeyError, TypeError, ValueError):
        return None


def judge_db(args, want, fails):
    """Checks the files in args.dir; returns (processes, recorded, dropped, complete) cells."""
    files = sorted(glob.glob(os.path.join(args.dir, "*.db")))
    seen, recorded, dropped, completes = {}, 0, 0, set()
    for path in files:
        name = os.path.basename(path)
        try:
            r = read_db(path)
        except (sqlite3.Error, ValueError) as e:
            fails.append(f"{name}: unreadable: {e}")
            continue
        pid, meta = r["pid"], r["meta"]
        drop = meta_int(meta, "records_dropped")
        durs = ", ".join(f"{d / 1e6:.1f}" for d in r["durs"][:8])
        print(f"  {name}: pid {pid}, kernels {r['kernels']} (count.kernel {meta.get('count.kernel')}),"
              f" dropped {drop}, complete {r['complete']}, compute_api_kind {r['kinds']},"
              f" streams {r['streams']}, error {r['error']!r}"
              + (f", kernel ms {durs}" if args.durations else ""))
        if pid in seen:
            fails.append(f"two files for pid {pid}: {seen[pid]} and {name}")
        seen[pid] = name
        recorded += r["kernels"]
        dropped += drop or 0
        completes.add(r["complete"])
        if args.stepaside:
            if not r["error"]:
                fails.append(f"{name}: no error text although the app held CUPTI")
            continue
        if pid not in want:
            fails.append(f"{name}: pid {pid} is not a process the scenario ran")
        elif r["kernels"] != want[pid]:
            fails.append(f"{name}: {r['kernels']} kernels recorded, {want[pid]} launched")
        cnt = meta_int(meta, "count.kernel")
        if cnt is not None and cnt != r["kernels"]:
            fails.append(f"{name}: count.kernel {cnt} but {r['kernels']} kernel rows")
        if drop is None and args.complete == 1:
            fails.append(f"{name}: no records_dropped in process_meta")
        elif drop:
            fails.append(f"{name}: {drop} records dropped")
        if r["complete"] != args.complete:
            fails.append(f"{name}: complete = {r['complete']}, expected {args.complete}")
        if args.api_kind is not None and r["kinds"] != [args.api_kind]:
            fails.append(f"{name}: compute_api_kind {r['kinds']}, expected [{args.api_kind}]")
        if args.api:
            calls, orphans, quiet = read_api(path)
            print(f"  {name}: API records {calls}, of them queries {quiet};"
                  f" kernels without their launch call {orphans}")
            if orphans:
                fails.append(f"{name}: {orphans} kernels without their launch call's API record")
            if args.api == "calls" and quiet:
                fails.append(f"{name}: {quiet} query records, which TLVIEW_API=1 leaves out")
            if args.api == "all" and not quiet:
                fails.append(f"{name}: no query records, which TLVIEW_API=all keeps")
        if args.streams is not None and r["streams"] != args.streams:
            fails.append(f"{name}: kernels on {r['streams']} streams, expected {args.streams}")
    if args.stepaside:
        if len(files) > 1:
            fails.append(f"{len(files)} files for one process")
    else:
        for pid in sorted(set(want) - set(seen)):
            fails.append(f"no file for pid {pid}")
    comp = ",".join(str(c) for c in sorted(completes, key=str)) or "-"
    return len(seen), recorded, dropped, comp


def judge_bare(args, want, fails):
    """Checks bench/bare_inject's counts printed on stderr."""
    seen = {}
    for path in filter(os.path.exists, args.stderr):
        with open(path, errors="replace") as f:
            for line in f:
                m = BARE_RE.match(line)
                if m:
                    seen[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    for pid, (k, d) in sorted(seen.items()):
        print(f"  bare_inject: pid {pid}, kernels {k}, dropped {d}")
        if args.stepaside:
            continue
        if pid not in want:
            fails.append(f"pid {pid} is not a process the scenario ran")
        elif k != want[pid]:
            fails.append(f"pid {pid}: {k} kernels counted, {want[pid]} launched")
        if d:
            fails.append(f"pid {pid}: {d} records dropped")
    if not args.stepaside:
        for pid in sorted(set(want) - set(seen)):
            fails.append(f"no bare_inject count for pid {pid}")
    recorded = sum(k for k, _ in seen.values())
    dropped = sum(d for _, d in seen.values())
    return len(seen), recorded, dropped, "-"


def print_table(path):
    rows = []
    with open(path) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    widths = [max(len(c) for c in col) for col in zip(COLUMNS, *rows)]
    for row in [COLUMNS] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    failed = [r[0] for r in rows if r[-1] == "FAIL"]
    skipped = sum(1 for r in rows if r[-1] == "SKIP")
    print(f"{len(rows) - len(failed) - skipped} passed, {skipped} skipped, {len(failed)} failed"
          + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--print-table", metavar="RESULTS")
    ap.add_argument("--name")
    ap.add_argument("--results", help="the table file a row is appended to")
    ap.add_argument("--source", choices=["db", "bare"], default="db")
    ap.add_argument("--dir", help="the scenario's folder holding the collector's *.db files")
    ap.add_argument("--stdout", nargs="+", default=[], help="the programs' stdout logs")
    ap.add_argument("--stderr", nargs="+", default=[], help="their stderr logs (--source bare)")
    ap.add_argument("--procs", type=int, required=False, help="CUDA processes the scenario ran")
    ap.add_argument("--complete", type=int, default=1, help="the expected complete flag")
    ap.add_argument("--api-kind", type=int, help="the expected context.compute_api_kind")
    ap.add_argument("--api", choices=["calls", "all"],
                    help="the API records as TLVIEW_API=1 (calls) or TLVIEW_API=all left them")
    ap.add_argument("--streams", type=int, help="the expected number of streams with kernels")
    ap.add_argument("--launched", type=int, help="kernels launched, when no pid line says it")
    ap.add_argument("--stepaside", action="store_true",
                    help="the app held CUPTI: judge only that the collector said why it stopped")
    ap.add_argument("--skip", metavar="WHY", help="record the row as SKIP (with --source bare)")
    ap.add_argument("--durations", action="store_true", help="print the kernel durations")
    ap.add_argument("--fail", action="append", default=[], help="a failure seen by run.sh")
    args = ap.parse_args()
    if args.print_table:
        return print_table(args.print_table)
    if not (args.name and args.results and args.dir):
        ap.error("--name, --results and --dir are needed")

    want = launched_by_pid(args.stdout)
    fails = list(args.fail)
    if args.procs is not None and len(want) != args.procs and not args.stepaside:
        fails.append(f"{len(want)} processes reported their launches, expected {args.procs}")
    print(f"check {args.name}:")
    if args.skip:
        cells = ("-", "-", "-", "-")
        print(f"  skipped: {args.skip}")
    elif args.source == "bare":
        cells = judge_bare(args, want, fails)
    else:
        cells = judge_db(args, want, fails)
    launched = args.launched if args.launched is not None else sum(want.values())
    verdict = "FAIL" if fails else ("SKIP" if args.skip else "PASS")
    for why in fails:
        print(f"  FAIL: {why}")
    procs = args.procs if args.procs is not None else (1 if args.stepaside else len(want))
    row = [args.name, f"{cells[0]}/{procs}", str(launched), str(cells[1]), str(cells[2]), cells[3], verdict]
    with open(args.results, "a") as f:
        f.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
