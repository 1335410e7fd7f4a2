#!/usr/bin/env bash
# two_gpus.sh: issue 7's GPU check, on a machine with two GPUs or more. Under libcollect:
#   off   2 spin processes on GPU 0 and 2 on GPU 1 (CUDA_VISIBLE_DEVICES), started together;
#   on    the same as clients of a private MPS daemon (pipe and log folders in the work folder,
#         always stopped);
#   dual  one process with a kernel on GPU 0 and one on GPU 1 at the same instants;
# with one spin process alone on GPU 0 as the baseline. Judges tlview report --format json of
# each: two GPU lanes with different UUIDs, each judged on its own (off: time-sliced, stretch
# within 10% of 2; on: concurrent, within 10% of 1), and for dual the process on both lanes with
# no overlap claimed on either although its two kernels ran at once. Prints a table last; exits
# 0 when every row passed, 1 otherwise, 77 with fewer than two GPUs.
# Usage: tests/gpu/two_gpus.sh [BUILD_DIR (default ./build)] [ITERS (default 2e8)]
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-./build}" 2>/dev/null && pwd) || { echo "two_gpus.sh: no build folder" >&2; exit 2; }
ITERS=${2:-2e8}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -lt 2 ]; then
    echo "two_gpus.sh: $ngpu GPU(s) here, 2 needed: skipped"
    exit 77
fi
LIB=$B/collector/libcollect.so TL=$B/cli/tlview SPIN=$B/samples/spin/spin
TWO=$B/tests/gpu/two_devices
for f in "$LIB" "$TL" "$SPIN" "$TWO"; do
    [ -f "$f" ] || { echo "two_gpus.sh: $f not found: build it first" >&2; exit 2; }
done
source "$here/mps_procs.sh"
DRY=0 # no dry run: mps_start starts the daemon for real
W=$(mktemp -d /tmp/tl2gpu.XXXXXX)
echo "two_gpus.sh: $ngpu GPUs; work folder $W"
nvidia-smi -L | head -2 | sed 's/^/two_gpus.sh: /'
MPS_LOG=$W/mps-control.log # mps_stop keeps the daemon's log there
mps_guard

at() { echo $(($(date +%s%N) + 3000000000)); } # CUDA is up in every copy by then
# traced NAME GPUS CMD...: CMD under libcollect with CUDA_VISIBLE_DEVICES=GPUS, files in W/NAME
traced() {
    local name=$1 gpus=$2
    shift 2
    mkdir -p "$W/$name"
    CUDA_VISIBLE_DEVICES=$gpus CUDA_INJECTION64_PATH=$LIB TLVIEW_OUTPUT="$W/$name/p.%p.db" \
        "$@" >>"$W/$name.log" 2>&1
}
four() { # NAME: 2 spin processes per GPU, together
    local t
    t=$(at)
    for g in 0 0 1 1; do traced "$1" $g "$SPIN" --iters "$ITERS" --start-at "$t" & done
    wait
}
traced base 0 "$SPIN" --iters "$ITERS"
four off
mps_start && four on
mps_stop # waits for the daemon's processes to go
traced dual 0,1 "$TWO" --iters "$ITERS" --start-at "$(at)"
for r in off on dual; do
    "$TL" report --format json --baseline "$W/base" "$W/$r" >"$W/$r.json" 2>"$W/$r.err"
    "$TL" report --baseline "$W/base" "$W/$r" 2>&1 | sed -n '1,2p' | sed "s/^/$r: /"
done
python3 - "$W" "$(mps_procs)" <<'PY'
import json, sys
W, left = sys.argv[1], int(sys.argv[2])
rows, failed = [], 0
def load(r):
    try:
        return json.load(open(f"{W}/{r}.json"))
    except (OSError, ValueError):
        return {}
for r in ("off", "on", "dual"):
    rep = load(r)
    devs = rep.get("devices") or []
    procs = (rep.get("summary") or {}).get("processes", 0)
    problems = []
    if len(devs) != 2 or len({d.get("uuid") for d in devs}) != 2:
        problems.append(f"{len(devs)} GPU lanes, 2 with different UUIDs wanted")
    for d in devs:
        verdict, st = d.get("verdict"), d.get("stretch")
        if r == "dual":
            if d.get("processes") != 1 or d.get("overlap_ns") != 0 or verdict != "solo":
                problems.append(f"GPU {d['gpu']}: {d.get('processes')} processes, overlap "
                                f"{d.get('overlap_ns')} ns, {verdict}: 1, 0, solo wanted")
        else:
            want, wv = (2.0, "time-sliced") if r == "off" else (1.0, "concurrent")
            if d.get("processes") != 2 or verdict != wv or st is None or abs(st / want - 1) > 0.1:
                problems.append(f"GPU {d['gpu']}: {d.get('processes')} processes, {verdict} "
                                f"{st}: 2, {wv} {want} +-10% wanted")
        rows.append((r, d.get("gpu"), (d.get("uuid") or "?")[:8], d.get("processes"),
                     d.get("kernels"), verdict, "-" if st is None else f"{st:.2f}",
                     f"{d.get('overlap_ns', 0) / 1e6:.1f}"))
    if r == "dual" and len(devs) == 2:
        a, b = devs
        both = min(a["t_end"], b["t_end"]) - max(a["t_begin"], b["t_begin"])
        if procs != 1 or both <= 0:
            problems.append(f"{procs} processes, kernels at once on the two GPUs for "
                            f"{both / 1e6:.1f} ms: 1 process, > 0 wanted")
        rows.append(("dual", "both", "", procs, "", "same instants", "", f"{both / 1e6:.1f} ms"))
    if r != "dual" and procs != 4:
        problems.append(f"{procs} processes, 4 wanted")
    failed += bool(problems)
    rows.append((r, "check", "", "", "", "", "", "PASS" if not problems else
                 "FAIL: " + "; ".join(problems)))
failed += left != 0
rows.append(("all", "", "", "", "", "", "", f"nvidia-cuda-mps left: {left}"))
head = ("run", "GPU", "uuid", "processes", "kernels", "verdict", "stretch", "overlap ms / check")
print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
for row in rows:
    print("| " + " | ".join(str(x) for x in row) + " |")
print(f"two_gpus.sh: {'all passed' if not failed else f'{failed} failed'}")
sys.exit(1 if failed else 0)
PY
