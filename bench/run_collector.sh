#!/usr/bin/env bash
# run_collector.sh: what libcollect costs a launch-bound program, against the floor.
# In one invocation, ROUNDS interleaved rounds (the order rotates each round) of `launch N`:
# no injection, bench's bare CUPTI injection (counts kernel records, nothing else), libcollect.
# Prints µs per launch per round, medians, the ratios libcollect/bare and bare/none, records
# dropped, sustained kernels/s and bytes per kernel on disk, against the targets (≤ 1.03x bare,
# 0 dropped, ≤ 32 bytes per kernel). Exits 77 without a GPU, 1 when a target is missed.
# Usage: bench/run_collector.sh [BUILD_DIR (default ./build)] [N (200000)] [ROUNDS (5)]
set -u
build=${1:-./build}
N=${2:-200000}
ROUNDS=${3:-5}
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "bench/run_collector.sh: no GPU here (nvidia-smi -L lists none): skipped"
    exit 77
fi
if ! B=$(cd "$build" 2>/dev/null && pwd) || [ ! -x "$B/bench/launch" ] || [ ! -f "$B/bench/libbare_inject.so" ]; then
    echo "run_collector.sh: $build/bench/launch or libbare_inject.so not found: build first" >&2
    exit 2
fi
modes=(none bare collect)
if [ ! -f "$B/collector/libcollect.so" ]; then
    echo "run_collector.sh: $B/collector/libcollect.so not built: measuring none and bare only"
    modes=(none bare)
fi
W=$(mktemp -d /tmp/tlbench.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "run_collector.sh: $(nvidia-smi -L | head -1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader)"
echo "run_collector.sh: $N empty <<<1,1>>> kernels per run, $ROUNDS interleaved rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"

# One row per run: round, mode, µs per launch, exit status, kernels recorded, dropped, bytes on disk.
: >"$W/rows"
for r in $(seq "$ROUNDS"); do
    n=${#modes[@]}
    for i in $(seq 0 $((n - 1))); do
        m=${modes[$(((i + r - 1) % n))]}
        d=$W/r$r-$m
        mkdir -p "$d"
        case $m in
        none) env -u CUDA_INJECTION64_PATH "$B/bench/launch" "$N" >"$d/out" 2>"$d/err" ;;
        bare) CUDA_INJECTION64_PATH=$B/bench/libbare_inject.so "$B/bench/launch" "$N" >"$d/out" 2>"$d/err" ;;
        collect) CUDA_INJECTION64_PATH=$B/collector/libcollect.so TLVIEW_OUTPUT=$d/bench.%p.db \
            "$B/bench/launch" "$N" >"$d/out" 2>"$d/err" ;;
        esac
        rc=$?
        us=$(sed -n 's/.*: \([0-9.]*\) us per launch.*/\1/p' "$d/out")
        printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$m" "${us:--}" "$rc" "$d" >>"$W/rows"
        [ $rc = 0 ] || { echo "run_collector.sh: round $r $m exited $rc:"; tail -n 5 "$d/err"; }
        grep -h 'dropped\|error\|rror' "$d/err" | head -n 3 | sed "s/^/  round $r $m stderr: /"
    done
done

python3 - "$W/rows" "$N" <<'PY'
import glob, os, sqlite3, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
n = int(sys.argv[2])
modes = [m for m in ("none", "bare", "collect") if any(r[1] == m for r in rows)]
us = {m: {} for m in modes}
disk = []  # (kernels recorded, dropped, bytes, complete) per libcollect run
fails = []
for r, m, u, rc, d in rows:
    if rc != "0" or u == "-":
        fails.append(f"round {r} {m}: exit {rc}")
        continue
    us[m][int(r)] = float(u)
    if m == "bare":
        line = [l for l in open(os.path.join(d, "err")) if l.startswith("bare_inject: pid=")]
        if line:
            kv = dict(p.split("=") for p in line[0].split()[1:])
            if int(kv["dropped"]) or int(kv["kernels"]) != n + 1:
                fails.append(f"round {r} bare: {kv['kernels']} kernels, {kv['dropped']} dropped")
    if m == "collect":
        files = glob.glob(os.path.join(d, "bench.*.db"))
        if len(files) != 1:
            fails.append(f"round {r} libcollect: {len(files)} files")
            continue
        size = sum(os.path.getsize(f) for f in glob.glob(files[0] + "*"))
        db = sqlite3.connect(files[0])
        k = db.execute("SELECT count(*) FROM kernel").fetchone()[0]
        meta = dict(db.execute("SELECT key, value FROM process_meta").fetchall())
        comp = db.execute("SELECT complete FROM process").fetchone()[0]
        db.close()
        drop = int(meta.get("records_dropped", -1))
        disk.append((k, drop, size, comp))
        if k != n + 1 or drop != 0 or comp != 1:
            fails.append(f"round {r} libcollect: {k} of {n + 1} kernels, dropped {drop}, complete {comp}")
names = {"none": "no injection", "bare": "bare CUPTI", "collect": "libcollect"}
print()
print("| round | " + " | ".join(names[m] + " µs/launch" for m in modes) + " |")
print("| --- " * (len(modes) + 1) + "|")
for r in sorted({int(x[0]) for x in rows}):
    print(f"| {r} | " + " | ".join(f"{us[m][r]:.2f}" if r in us[m] else "-" for m in modes) + " |")
med = {m: statistics.median(us[m].values()) for m in modes if us[m]}
print("| median | " + " | ".join(f"{med[m]:.2f}" if m in med else "-" for m in modes) + " |")
print()
if "none" in med and "bare" in med:
    print(f"bare CUPTI / no injection: {med['bare'] / med['none']:.3f}")
ok = True
if "collect" in med and "bare" in med:
    ratio = med["collect"] / med["bare"]
    print(f"libcollect / bare CUPTI: {ratio:.3f} (target <= 1.03: {'met' if ratio <= 1.03 else 'MISSED'})")
    print(f"libcollect / no injection: {med['collect'] / med['none']:.3f}")
    print(f"sustained under libcollect (median round): {1e6 / med['collect']:,.0f} kernels/s")
    ok = ratio <= 1.03
if disk:
    drops = sum(max(d, 0) for _, d, _, _ in disk)
    bpk = statistics.median(s / k for k, _, s, _ in disk if k)
    print(f"libcollect records dropped: {[d for _, d, _, _ in disk]} (target 0: {'met' if drops == 0 else 'MISSED'})")
    print(f"libcollect kernels recorded per run: {[k for k, _, _, _ in disk]} of {n + 1} launched")
    print(f"bytes per kernel on disk (file size / kernels, median): {bpk:.1f} (target <= 32: {'met' if bpk <= 32 else 'MISSED'})")
    ok = ok and drops == 0 and bpk <= 32
for f in fails:
    print("FAIL:", f)
sys.exit(0 if ok and not fails else 1)
PY
