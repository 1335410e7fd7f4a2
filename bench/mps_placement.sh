#!/usr/bin/env bash
# mps_placement.sh: where MPS puts the one-block kernels of N client processes, and how much they
# slow each other down. Runs N copies of bench/mps_placement (the seed's Triton single-SM
# recurrence in CUDA, K kernels each, all started at one instant) without MPS for N = 1, 2 and as
# clients of a private MPS daemon (pipe and log folders in a temporary folder; always stopped)
# for N = 1, 2, 4, 8, 16. Prints one row per run: kernel duration (median, min, max), stretch
# (median over the N=1 median of the same mode), the SMs the kernels reported (%smid) and the most
# kernels that ran on one SM at one instant.
# Usage: bench/mps_placement.sh [BUILD_DIR (default ./build)] [LOOPS (default 100000)] [K (3)]
set -u
B=${1:-./build}
LOOPS=${2:-100000}
K=${3:-3}
BIN=$B/bench/mps_placement
[ -x "$BIN" ] || { echo "mps_placement.sh: $BIN not found: build it first" >&2; exit 2; }
source "$(dirname "$0")/../tests/gpu/mps_procs.sh"
DRY=0 # no dry run: mps_start starts the daemon for real
need_gpu mps_placement.sh
W=$(mktemp -d /tmp/mps_placement.XXXXXX)
MPS_LOG=$W/mps-control.log # mps_stop keeps the daemon's log there
mps_guard

# run MODE N: N copies started together 2 s from now (CUDA is up in all of them by then).
run() {
    local mode=$1 n=$2 at r
    at=$(($(date +%s%N) + 2000000000))
    for r in $(seq 0 $((n - 1))); do
        timeout 120 "$BIN" "$LOOPS" "$K" "$at" "$r" | sed "s/^K/$mode $n/" >>"$W/kernels" &
    done
    wait
}
: >"$W/kernels"
echo "mps_placement.sh: $(nvidia-smi -L | head -1); $LOOPS loops, $K kernels per copy; in $W"
run off 1
run off 2
mps_start || exit 1
for n in 1 2 4 8 16; do run mps "$n"; done
mps_stop # gives the daemon and its server up to 10 s to exit after the quit
left=$(mps_procs)
python3 - "$W/kernels" "$left" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mode, n, rank, k, sm, start, dur = line.split()
    runs[(mode, int(n))].append((int(rank), int(sm), int(start), int(dur)))
solo = {m: statistics.median(d for *_, d in runs[(m, 1)]) for m in ("off", "mps") if (m, 1) in runs}
print()
print("| MPS | N | kernels | median ms | min ms | max ms | stretch | SMs reported | most on one SM at once |")
print("|---|---|---|---|---|---|---|---|---|")
for (mode, n), ks in sorted(runs.items(), key=lambda r: (r[0][0] != "off", r[0][1])):
    durs = [d for *_, d in ks]
    sms = collections.Counter(sm for _, sm, _, _ in ks)
    most = 0
    for _, sm, s, d in ks:  # kernels on the same SM in flight at this one's start
        most = max(most, sum(1 for _, sm2, s2, d2 in ks if sm2 == sm and s2 <= s < s2 + d2))
    med = statistics.median(durs)
    print(f"| {'on' if mode == 'mps' else 'off'} | {n} | {len(ks)} | {med / 1e6:.1f} | "
          f"{min(durs) / 1e6:.1f} | {max(durs) / 1e6:.1f} | {med / solo[mode]:.2f} | "
          f"{' '.join(f'{s}:{c}' for s, c in sorted(sms.items()))} | {most} |")
print()
print("SMs reported: smid:kernels; most on one SM at once: kernels with the same smid in flight at"
      " one kernel's start.")
print(f"nvidia-cuda-mps processes left: {sys.argv[2]}")
PY
