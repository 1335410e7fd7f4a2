#!/usr/bin/env bash
# kineto_matrix.sh: Kineto (torch.profiler) traces of real workloads shared by 2, 4 and 8 workers,
# MPS off and on: the files users bring, which never say whether MPS was on (issue 30). Each
# scenario is `workloads.py WORKLOAD --workers N --profile OUTDIR/kineto-WORKLOAD-nN-mps-STATE`
# (no collector: torch.profiler and libcollect would both be CUPTI clients); the MPS-on scenarios
# run under one private control daemon (mps_procs.sh, as ../../../shared/GPU.md says), always
# quit at the end. Each folder gets `log` (what the workers printed) and `expected` (the verdicts
# the physics allows, written here before the run: time-sliced or undecided without MPS; side
# by side, queued, or undecided with it), for verdicts_judge.py.
# Workloads: gemm (saturating: matmul sweeps up to 8192^2), resnet18 (batch 16: light kernels,
# the GPU mostly idle under the profiler) and gpt2 (6 layers, built-in: transformers' import is
# not needed to shape the kernels), with few timed iterations so that the traces stay small.
# Usage: tests/gpu/kineto_matrix.sh OUTDIR [WORKLOAD...]     (exit 77 without a GPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/gpu/mps_procs.sh
. "$here/mps_procs.sh"
need_gpu kineto_matrix
OUT=${1:?usage: kineto_matrix.sh OUTDIR [WORKLOAD...]}
shift
WLS=("$@")
[ ${#WLS[@]} -gt 0 ] || WLS=(gemm resnet18 gpt2)
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kmx.XXXXXX)
MPS_LOG=$OUT/mps-control.log
mps_guard

# Per workload: workloads.py's timed iterations under the profiler.
declare -A ITERS=([gemm]=12 [resnet18]=10 [gpt2]=10 [bert]=10)

one() { # one WORKLOAD N STATE
    local wl=$1 n=$2 state=$3 d
    d=$OUT/kineto-$wl-n$n-mps-$state
    rm -rf "$d"
    mkdir -p "$d"
    # Without MPS the contexts take turns, each handover costing a context switch: time-sliced,
    # or (light work that leaves one context at a time) explicitly undecided. With MPS the clients
    # hand over within microseconds or overlap: side by side or queued, or undecided; the
    # saturating GEMMs of one client fill the GPU, so the other's queue (contended or queued).
    case $state-$wl in
    off-gemm) echo 'verdict: time-sliced' ;;
    off-*) echo 'verdict: time-sliced|unknown' ;;
    on-gemm) echo 'verdict: contended|queued|concurrent' ;;
    on-*) echo 'verdict: concurrent|contended|queued|unknown' ;;
    esac >"$d/expected"
    local t0=$SECONDS
    python3 "$here/workloads.py" "$wl" --workers "$n" --iters "${ITERS[$wl]}" --impl builtin \
        --profile "$d" >"$d/log" 2>&1
    local rc=$?
    echo "kineto_matrix: $wl n=$n mps $state: exit $rc, $((SECONDS - t0)) s," \
        "$(ls "$d"/trace.*.json.gz 2>/dev/null | wc -l) traces, $(du -sk "$d" | cut -f1) KiB;" \
        "$(grep -E '^workloads: .* x [0-9]+:' "$d/log" | head -1)"
}

for state in off on; do
    if [ "$state" = on ]; then
        mps_start || break
    fi
    for wl in "${WLS[@]}"; do
        for n in 2 4 8; do
            one "$wl" "$n" "$state"
        done
    done
    [ "$state" = on ] && mps_stop
done
rm -rf "$W"
echo "kineto_matrix: nvidia-cuda-mps processes left: $(mps_procs)"
