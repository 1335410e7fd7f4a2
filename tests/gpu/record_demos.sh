#!/usr/bin/env bash
# record_demos.sh: issue 6's GPU check. Runs every demo through `tlview record` with N = 1, 2, 4, 8
# copies, MPS off and on, then checks tlview's figures against the stopwatch:
#   spin, streams_vs_processes (one-thread / one-block kernels): time-sliced stretch within 10% of
#     N and MPS stretch within 10% of 1.0 (tlview report --format json, baseline = the N=1 run);
#   streams_vs_processes --streams 4 in one process: the 4 kernels overlap and are not stretched;
#   spin, streams_vs_processes, saturating, triton_single_sm --single, N >= 2: the gain MPS gave,
#     by the copies' own clocks (the latest copy's wall time from the common start, or the Triton
#     requests' throughput), with MPS over without, inside the interval tlview predicts from the
#     MPS-off run alone (summary predicted_gain_low to predicted_gain, baseline the N=1 run; as
#     gains_judge.py judges it: to 3 decimals); the prediction redone at the MPS run's slowdown
#     (tlview report --compare) is printed beside it; the seed's spawn-worker form: one file
#     per worker;
#   saturating: MPS gains nothing (the hardware queues full-GPU kernels: overlap <= 25% of busy);
#   every run: exit 0, one trace per copy, compute_api_kind 2 under MPS and 1 without, the daemon
#   started and stopped; at the end no nvidia-cuda-mps process is left.
# Prints the results table last; exits 0 when every row passed, 1 otherwise, 77 without a GPU.
# Usage: tests/gpu/record_demos.sh [-o OUT] [--procs "1 2 4 8"] [--demos "spin svp sat triton"]
#                                  [--requests R] [BUILD_DIR (default ./build)]
#        tests/gpu/record_demos.sh --judge OUT [--tlview PATH]
#                                  (only judge recordings made before, no GPU; with --tlview,
#                                  their reports are made again by that tlview first: an
#                                  analysis changed since they were recorded)
#   --traces-tar FILE  also pack the recordings of streams_vs_processes, saturating and
#                      triton_single_sm (trace files + manifest.json, which holds the command) as
#                      samples/<demo>/traces/mps-{off,on}/nN/ into FILE, to commit them
# The recordings stay in OUT (default: a new /tmp/tlrec.XXXXXX) as OUT/<demo>/mps-{off,on}/nN/.
# To stay under a time limit per command, record one demo per call into the same OUT
# (-o OUT --demos spin, then svp, sat, triton), then judge them all with --judge OUT.
# Needs: a build with cli/tlview (no web part needed), collector/libcollect.so, the samples; python3
# (sqlite3 module); torch and triton for the Triton rows (skipped with a note otherwise).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=./build
out=
procs="1 2 4 8"
demos="spin svp sat triton"
requests=5
judge_only=
traces_tar=
retl=
while [ $# -gt 0 ]; do
    case $1 in
    --judge) judge_only=1; out=$2; shift ;;
    --tlview) retl=$2; shift ;;
    -o) out=$2; shift ;;
    --procs) procs=$2; shift ;;
    --demos) demos=$2; shift ;;
    --requests) requests=$2; shift ;;
    --traces-tar) traces_tar=$2; shift ;;
    -h | --help) sed -n '2,29p' "$0"; exit 0 ;;
    -*) echo "record_demos.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
    esac
    shift
done

source "$here/mps_procs.sh"
# baseline DEMO: the run whose kernels are DEMO's solo references, the N=1 MPS-off run (the
# seed's form: the one-process Triton run's, the same kernel alone).
baseline() { echo "$OUT/${1%_seed}/mps-off/n1"; }
# measure DIR: the seed's form is measured while its processes ran together: its parent's
# arithmetic check runs before the spawn workers exist, and its throughput counts the workers'
# timed requests (between the barriers) only.
measure() { case $1 in */triton_seed/*) echo --measure together ;; esac; }
# compare ON OFF BASE: tlview report --format json of OFF against --compare ON (the measured gain
# and the prediction redone at ON's slowdown) into ON.compare.json.
compare() {
    local on=$1 off=$2 base=$3 rep=(--format json $(measure "$1")) f
    [ -d "$off" ] || return 0
    for f in "$base"/*.db; do rep+=(--baseline "$f"); done
    for f in "$on"/*.db; do rep+=(--compare "$f"); done
    "$TL" report "${rep[@]}" "$off"/*.db >"$on.compare.json" 2>"$on.compare.err"
}
# report DIR BASE: tlview report --format json of DIR's trace files (not the folder: its
# manifest.json is JSON too) with BASE's as the baseline, into DIR.report.json.
report() {
    local d=$1 base=$2 rep=(--format json $(measure "$1")) f
    if [ "$d" != "$base" ] && [ -d "$base" ]; then
        for f in "$base"/*.db; do rep+=(--baseline "$f"); done
    fi
    "$TL" report "${rep[@]}" "$d"/*.db >"$d.report.json" 2>"$d.report.err"
}
if [ -n "$judge_only" ]; then
    [ -d "$out" ] || { echo "record_demos.sh: --judge $out: no such folder" >&2; exit 2; }
    OUT=$(cd "$out" && pwd)
    if [ -n "$retl" ]; then # every run's reports made again, as recording made them
        [ -x "$retl" ] || { echo "record_demos.sh: --tlview $retl: not an executable" >&2; exit 2; }
        TL=$retl
        for d in "$OUT"/*/mps-*/n*/; do
            d=${d%/}
            demo=${d#"$OUT"/}
            demo=${demo%%/*}
            base=$(baseline "$demo")
            report "$d" "$base"
            case $d in */mps-on/*) compare "$d" "$OUT/$demo/mps-off/${d##*/}" "$base" ;; esac
        done
    fi
elif [ -n "$retl" ]; then
    echo "record_demos.sh: --tlview goes with --judge" >&2
    exit 2
else # ---- recording (skipped by --judge), then the judge below
need_gpu record_demos.sh
if ! B=$(cd "$build" 2>/dev/null && pwd); then
    echo "record_demos.sh: build folder $build not found" >&2
    exit 2
fi
TL=$B/cli/tlview
SPIN=$B/samples/spin/spin
SVP=$B/samples/streams_vs_processes/streams_vs_processes
SAT=$B/samples/saturating/saturating
TRI=$src/samples/triton_single_sm/triton_single_sm.py
for f in "$TL" "$B/collector/libcollect.so" "$SPIN" "$SVP" "$SAT" "$TRI"; do
    if [ ! -f "$f" ]; then
        echo "record_demos.sh: $f not found: build it first (cmake --build $build)" >&2
        exit 2
    fi
done
if [ -z "$out" ]; then
    out=$(mktemp -d /tmp/tlrec.XXXXXX)
elif ! mkdir -p "$out"; then
    exit 2
fi
OUT=$(cd "$out" && pwd)
case " $procs " in *" 1 "*) ;; *) procs="1 $procs" ;; esac # N=1 is every demo's baseline
echo "record_demos.sh: $(nvidia-smi -L | head -1); tlview $TL; recordings in $OUT"

# Safety net: a daemon of ours still up (record should have stopped it) is asked to quit.
cleanup() {
    for p in "$OUT"/*/mps-on/*/mps-pipe; do
        [ -p "$p/control" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$p nvidia-cuda-mps-control
    done 2>/dev/null
}
mps_guard cleanup

# rec DEMO MPS N CMD...: one `tlview record` run into OUT/DEMO/mps-MPS/nN (log next to it, exit
# status in .rc); the N=1 MPS-off run of the demo is the baseline of the others (the seed's form:
# the one-process Triton run's, the same kernel alone).
rec() {
    local demo=$1 mps=$2 n=$3
    shift 3
    local d=$OUT/$demo/mps-$mps/n$n base args=()
    base=$(baseline "$demo")
    rm -rf "$d" "$d".* # a re-run replaces the old recording rather than mixing with it
    mkdir -p "$(dirname "$d")"
    args=(-o "$d" --procs "$n" --label "$demo")
    [ "$mps" = on ] && args+=(--mps)
    [ "$d" != "$base" ] && [ -d "$base" ] && args+=(--baseline "$base")
    echo "== $demo, MPS $mps, N=$n: $*"
    "$TL" record "${args[@]}" -- "$@" >"$d.log" 2>&1
    echo $? >"$d.rc"
    sed -n '/^GPU /p' "$d.log" | head -n 2 | sed 's/^/   /'
    report "$d" "$base"
    [ "$mps" = on ] && compare "$d" "$OUT/$demo/mps-off/n$n" "$base"
}
start_at() { echo $(($(date +%s%N) + 5000000000)); } # spin's common start, 5 s ahead

for demo in $demos; do
    for mps in off on; do
        for n in $procs; do
            case $demo in
            spin) rec spin $mps "$n" "$SPIN" --iters 2e8 --start-at "$(start_at)" ;;
            svp) rec svp $mps "$n" "$SVP" ;;
            sat) rec sat $mps "$n" "$SAT" ;;
            triton)
                if ! python3 -c 'import torch, triton' 2>/dev/null; then
                    echo "== triton: skipped (python3 cannot import torch and triton)"
                    break 2
                fi
                rec triton $mps "$n" python3 "$TRI" --single --requests "$requests" ;;
            esac
        done
    done
    case $demo in
    svp) rec svp_streams off 1 "$SVP" --streams 4 ;;
    triton)
        if python3 -c 'import torch, triton' 2>/dev/null; then
            rec triton_seed off 1 python3 "$TRI" --workers 8 --requests "$requests"
            rec triton_seed on 1 python3 "$TRI" --workers 8 --requests "$requests"
        fi ;;
    esac
done

mps_wait_gone # the last daemon and its server are given up to 10 s to exit after the quit
left=$(mps_procs)
echo "record_demos.sh: nvidia-cuda-mps processes left: $left"
fi # not --judge: judging old recordings says nothing about the processes running now

# pack_traces FILE: the demos' recordings laid out as in the repository, into FILE (tar.gz).
pack_traces() {
    local stage=$OUT/.pack demo folder d rel
    rm -rf "$stage"
    for demo in svp:streams_vs_processes svp_streams:streams_vs_processes/traces/streams4 \
        sat:saturating triton:triton_single_sm; do
        folder=${demo#*:}
        demo=${demo%%:*}
        for d in "$OUT/$demo"/mps-*/n*/; do
            [ -f "$d/manifest.json" ] || continue
            rel=${d#"$OUT/$demo/"}
            case $folder in
            */traces/*) rel=$folder/${rel#mps-off/n1/} ;; # the one 4-stream run
            *) rel=$folder/traces/$rel ;;
            esac
            mkdir -p "$stage/samples/$rel"
            cp "$d"/*.db "$d/manifest.json" "$stage/samples/$rel/" 2>/dev/null
        done
    done
    tar -czf "$1" -C "$stage" samples && echo "record_demos.sh: recordings packed into $1"
    rm -rf "$stage"
}
[ -n "$traces_tar" ] && pack_traces "$traces_tar"

python3 - "$OUT" "${left:--1}" <<'PY'
"""Judges every recording under OUT and prints the table."""
import glob
import json
import math
import os
import re
import sqlite3
import statistics
import sys

OUT, LEFT = sys.argv[1], int(sys.argv[2])
# The timed kernel of each demo: (name pattern, grid x or None for any).
TARGET = {"spin": ("testMaxFlopsKernel", None), "svp": ("small_work", None),
          "svp_streams": ("small_work", None), "sat": ("fill_sms", None),
          "triton": ("single_sm_compute_kernel", 1), "triton_seed": ("single_sm_compute_kernel", 1)}
rows, failed = [], 0


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def kernels(run_dir, demo):
    """(start, end, pid, api kinds) of the demo's timed kernels in every file of run_dir."""
    name, grid = TARGET[demo]
    ks, kinds = [], set()
    for db in sorted(glob.glob(os.path.join(run_dir, "*.db"))):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        for start, end, pid, gx, n in con.execute(
                "SELECT start, \"end\", pid, grid_x, name FROM kernel_v"):
            if name in n and (grid is None or gx == grid):
                ks.append((start, end, pid))
        kinds |= {k for (k,) in con.execute("SELECT compute_api_kind FROM context")}
        con.close()
    return ks, kinds


def results(log):
    """The RESULT {json} records a run printed, wherever they stand on a line (copies share one
    log); one that does not parse is skipped, not the rest of the log."""
    out = []
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return out
    dec = json.JSONDecoder()
    for part in text.split("RESULT ")[1:]:
        try:
            out.append(dec.raw_decode(part)[0])
        except ValueError:
            pass
    return out


def throughput(res):
    if not res:
        return float("nan")
    reqs = sum(r["requests"] for r in res)
    span = (max(r["end_ns"] for r in res) - min(r["start_ns"] for r in res)) / 1e9
    return reqs / span if span > 0 else float("nan")


# The C demos' own clock: each copy prints "wall X ms" from the common start (spin's start signal,
# the others' rank barrier) to its last kernel's end; the copies of a run share one log.
WALL = re.compile(r"(?:spin|streams_vs_processes|saturating): [^\n]*?wall ([0-9.]+) ms")


def walls(log):
    try:
        with open(log, errors="replace") as f:
            return [float(x) for x in WALL.findall(f.read())]
    except OSError:
        return []


def truth(demo, run_dir):
    """What the copies themselves measured, for the gain: the Triton requests' throughput, or
    1 / the makespan (the latest copy's wall time) of the C demos; NaN when a copy's is missing."""
    n = int(os.path.basename(run_dir)[1:])
    if demo in ("triton", "triton_seed"):
        res = results(run_dir + ".log")
        return throughput(res) if len(res) == n else float("nan")
    w = walls(run_dir + ".log")
    return 1e3 / max(w) if len(w) == n and max(w) > 0 else float("nan")


def near(x, want, tol=0.10):
    return x is not None and not math.isnan(x) and abs(x / want - 1) <= tol


def fmt(x, spec=".2f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


# demo -> median duration of the timed kernel in the N=1 MPS-off run of its solo demo (ns); the
# 4-stream and seed-form runs are compared with the one-copy runs of the same kernel.
SOLO_FROM = {"svp_streams": "svp", "triton_seed": "triton"}
solo = {}
for demo in TARGET:
    ks, _ = kernels(os.path.join(OUT, SOLO_FROM.get(demo, demo), "mps-off", "n1"), demo)
    if ks:
        solo[demo] = statistics.median(e - s for s, e, _ in ks)

runs = {}
for d in sorted(glob.glob(os.path.join(OUT, "*", "mps-*", "n*"))):
    if not os.path.isdir(d):
        continue
    demo, mps, n = d.split(os.sep)[-3], d.split(os.sep)[-2][4:], int(d.split(os.sep)[-1][1:])
    runs[(demo, mps, n)] = d

for (demo, mps, n), d in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
    problems = []
    rc = int(open(d + ".rc").read().strip() or -1) if os.path.exists(d + ".rc") else -1
    man = load(os.path.join(d, "manifest.json")) or {}
    rep = load(d + ".report.json") or {}
    dev = (rep.get("devices") or [{}])[0]
    files = len(man.get("files", []))
    ks, kinds = kernels(d, demo)
    res = results(d + ".log")
    if rc != 0:
        problems.append(f"exit {rc}")
    want_files = 9 if demo == "triton_seed" else n
    if files != want_files:
        problems.append(f"{files} files, {want_files} expected")
    want_kind = 2 if mps == "on" else 1
    if kinds - {0} != {want_kind}:  # 0: a context known only through its kernels
        problems.append(f"compute_api_kind {sorted(kinds)}, {want_kind} expected")
    m = man.get("mps", {})
    if mps == "on" and not (m.get("stopped") or m.get("reused")):
        problems.append("MPS daemon not stopped")
    if not rep:
        problems.append("no report json")
    verdict = dev.get("verdict", "-")
    tl_stretch = dev.get("stretch")
    sw_stretch = (statistics.mean(e - s for s, e, _ in ks) / solo[demo]
                  if ks and demo in solo else float("nan"))
    pred = meas = at_slow = None
    notes = []
    if demo in ("spin", "svp") and n >= 2:
        if mps == "off" and not (verdict == "time-sliced" and near(tl_stretch, n)):
            problems.append(f"time-sliced stretch {fmt(tl_stretch)} ({verdict}), {n} +-10% wanted")
        if mps == "on" and not (verdict == "concurrent" and near(tl_stretch, 1.0)):
            problems.append(f"MPS stretch {fmt(tl_stretch)} ({verdict}), 1.0 +-10% wanted")
    if demo == "svp_streams":
        span = (max(e for _, e, _ in ks) - min(s for s, _, _ in ks)) if ks else 0
        one = statistics.mean(e - s for s, e, _ in ks) if ks else 0
        if len(ks) != 4 or not near(span / one if one else float("nan"), 1.0, 0.2):
            problems.append(f"4 streams: span/kernel {fmt(span / one if one else None)}, ~1 wanted")
        if not near(sw_stretch, 1.0):
            problems.append(f"4 streams: stretch {fmt(sw_stretch)}, 1.0 +-10% wanted")
    if demo == "sat" and n >= 2 and mps == "on":
        # Measured on the H200 (2026-11-29): full-GPU kernels of MPS clients are queued by the
        # hardware, not shared: they overlap only while one kernel's last wave drains (~10% of
        # busy time), unstretched beyond ~1.1x. So "MPS gains nothing" shows as little overlap,
        # not as a contended stretch.
        share = dev.get("overlap_of_busy")
        if share is None or share > 0.25:
            problems.append(f"overlap share {fmt(share)}: the kernels shared the GPU")
    if mps == "on" and (demo in ("spin", "svp", "sat", "triton") and n >= 2 or
                        demo == "triton_seed"):
        off_dir = runs.get((demo, "off", n))
        off_sum = ((load(off_dir + ".report.json") if off_dir else None) or {}).get("summary") or {}
        lo, hi = off_sum.get("predicted_gain_low"), off_sum.get("predicted_gain")
        t_off = truth(demo, off_dir) if off_dir else float("nan")
        meas = truth(demo, d) / t_off if t_off else float("nan")
        cmp = (load(d + ".compare.json") or {}).get("comparison") or {}
        slow, at_slow = cmp.get("compare_stretch"), cmp.get("predicted_gain_at_compare_stretch")
        pred = (lo, hi) if lo is not None and hi is not None else None
        if math.isnan(meas):
            problems.append("no gain: a copy's own measure is missing from a log")
        elif pred is None:
            problems.append("no predicted interval in the MPS-off report")
        elif not round(lo, 3) <= round(meas, 3) <= round(hi, 3):
            problems.append(f"measured gain {meas:.3f} outside the predicted {lo:.3f}-{hi:.3f}")
        if demo == "sat" and meas > 1.25:
            problems.append(f"MPS gained {meas:.2f}x on saturating kernels")
        if slow is not None and slow > 1.1:
            notes.append(f"MPS kernels at {slow:.2f}x their solo time")
    if demo in ("triton", "triton_seed"):
        want_results = 1 if demo == "triton_seed" else n
        if len(res) != want_results or not all(r.get("ok") for r in res):
            problems.append(f"{len(res)} RESULT lines, {want_results} wanted, or a copy's "
                            "self-check failed")
    ok = not problems
    failed += not ok
    rows.append((demo, mps, n, rc, files, verdict, fmt(tl_stretch), fmt(sw_stretch),
                 f"{pred[0]:.3f}-{pred[1]:.3f}" if pred else "-", fmt(at_slow, ".3f"),
                 fmt(meas, ".3f"),
                 ("PASS" + "".join(f" ({x})" for x in notes)) if ok
                 else "FAIL: " + "; ".join(problems)))

if LEFT > 0:
    failed += 1
rows.append(("all", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
             "not checked (--judge)" if LEFT < 0 else
             "PASS" if LEFT == 0 else f"FAIL: {LEFT} nvidia-cuda-mps process(es) left"))

head = ("demo", "mps", "N", "rc", "files", "verdict", "tl stretch", "sw stretch",
        "gain predicted", "pred at MPS stretch", "gain (copies' clocks)", "check")
print()
print("| " + " | ".join(head) + " |")
print("|" + "|".join("---" for _ in head) + "|")
for r in rows:
    print("| " + " | ".join(str(x) for x in r) + " |")
print()
print("tl stretch: tlview's stretch over the device's verdict windows (baseline: the N=1 run);"
      " sw stretch: the stopwatch, mean kernel duration / the N=1 run's median (CUPTI times);"
      " gain (copies' clocks): with MPS over without, the Triton requests' throughput or 1 / the"
      " C demos' makespan (the latest copy's own wall time); gain predicted: the interval tlview"
      " predicts from the MPS-off run alone (baseline: the N=1 run), inside to 3 decimals to pass;"
      " pred at MPS stretch: the prediction redone at the MPS run's stretch (--compare).")
print(f"record_demos.sh: {len(rows) - failed - (LEFT < 0)} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
