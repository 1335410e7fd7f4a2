#!/usr/bin/env bash
# workloads.sh: real PyTorch inference (tests/gpu/workloads.py: resnet18, gpt2, resnet50, bert,
# gemm, mobilenet_v2, vit_b_16, convnext_tiny, swin_t, densenet121, efficientnet_b0; batch 16, random weights, N spawn workers behind a barrier) run under the collector with
# MPS off and on, so that tlview's MPS prediction from the time-sliced run can be checked against
# the applications' own throughput. Per workload, in this order: N = 1 alone (the solo reference),
# then each N of the plan without MPS, then the same N as clients of a private MPS daemon (pipe and
# log folders in a work folder; started before the workload's first MPS run, always stopped after
# its last: `echo quit | nvidia-cuda-mps-control`, also from an EXIT trap; no card setting is
# changed). Each run goes into OUTDIR/<workload>-<off|on>-n<N>/: the trace files
# (CUDA_INJECTION64_PATH=BUILD_DIR/collector/libcollect.so, TLVIEW_NVTX=1 for the "timed" range,
# TLVIEW_OUTPUT=that folder/p.%p.db), `log` (the workers' output and RESULT lines), `cmd`, `rc`
# and `wall_s`. At the end: the table (workloads_table.py: items/s summed over workers MPS off and
# on, the measured gain, the makespans; also OUTDIR/table.md and table.csv) and OUTDIR packed into
# one tar.gz (it should stay under 60 MB).
# Plans (the timed iterations K and warm-up W per workload are in ITERS and WARM below):
#   small  resnet18 and gpt2 at N = 2 4 8; resnet50, bert and gemm at N = 4 (one GPU call of
#          8 minutes: 23 runs, ~366 s by the estimates the dry run prints)
#   full   every workload at N = 2 4 8
#   n2     resnet18 and resnet50 at N = 2 only (the launch-bound pair, for repeats)
#   more   mobilenet_v2 and vit_b_16 at N = 2 4 8 (kinds of kernels the others lack: depthwise
#          convolutions; attention over image patches)
#   more2  convnext_tiny and swin_t at N = 2 4 8 (held out from every rule: 7x7 depthwise
#          convolutions beside large MLP products; shifted-window attention)
#   more3  densenet121 and efficientnet_b0 at N = 4 8 (held out: concatenated feature maps;
#          squeeze-and-excitation's tiny kernels)
#   mix    different applications sharing the GPU: resnet50+bert, swin_t+gpt2, convnext_tiny+bert
#          at N = 2 4 8
#          (half the workers run each; workloads.py A+B), after each part's solo run (the
#          references: gains_judge.py passes both as --baseline)
# --api records the CUDA API calls (TLVIEW_API=1) in every run: the MPS-off runs' launch times show
# how long kernels waited behind other contexts' time slices. Both sides are recorded alike
# because the records cost the host time: on the H200 (2026-12-02 03:05) a solo BERT loop in
# float16 took 0.61-0.67 s untraced, 0.68-0.77 s traced, 0.88-0.99 s with API records, and a
# host-paced loop pays that in full; until then the MPS runs went without, which made MPS look
# better than it was wherever the hosts set the pace.
# --scale F multiplies every workload's timed iterations by F (an integer): longer timed loops, so
# that start-up skew between the workers weighs less in their makespan (the steady state).
# Budget: a run that would end after --budget seconds (by its estimate) is not started; the
# skipped runs are listed. Each run is killed after min(150, budget + 50 - elapsed) seconds.
# Exit status: 0 when every run exited 0 and no nvidia-cuda-mps process is left, 1 otherwise,
# 77 without a GPU, 2 usage.
# Usage: tests/gpu/workloads.sh [--dry-run] [--plan small|full|n2|more|more2|more3|mix] [--only "NAME..."] [--ns "N..."] [--budget S]
#                               [--scale F] [--batch B] [--dtype T] [--api] [--tar FILE]
#                               [--no-collector]
#                               BUILD_DIR OUTDIR
#   --dry-run       print the runs (commands, estimated seconds, what the budget skips); no GPU
#   --only          only these workloads (of the plan's)
#   --ns "N..."     these numbers of workers instead of the plan's (each with its solo run)
#   --budget S      seconds (default 400)
#   --scale F       timed iterations x F (default 1)
#   --batch B       the batch size (default 16)
#   --dtype T       float32 (default), float16 or bfloat16 (workloads.py --dtype)
#   --api           API calls recorded in every run (TLVIEW_API=1)
#   --tar FILE      the tar.gz of OUTDIR (default OUTDIR.tar.gz)
#   --no-collector  run without libcollect (to see what it costs the workloads)
# Environment: WORKLOADS_PYTHON (default python3).
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRY=0 PLAN=small ONLY='' NS='' BUDGET=400 SCALE=1 BATCH=16 DTYPE=float32 API=0 TAR='' COLLECT=1 args=()
CMD_TIMEOUT=150 GRACE=50
PY=${WORKLOADS_PYTHON:-python3}
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) DRY=1 ;;
    --plan) [ $# -ge 2 ] || usage; PLAN=$2; shift ;;
    --only) [ $# -ge 2 ] || usage; ONLY=" $2 "; shift ;;
    --ns) [ $# -ge 2 ] || usage; NS=$2; shift ;;
    --budget) [ $# -ge 2 ] || usage; BUDGET=$2; shift ;;
    --scale) [ $# -ge 2 ] || usage; SCALE=$2; shift ;;
    --batch) [ $# -ge 2 ] || usage; BATCH=$2; shift ;;
    --dtype) [ $# -ge 2 ] || usage; DTYPE=$2; shift ;;
    --api) API=1 ;;
    --tar) [ $# -ge 2 ] || usage; TAR=$2; shift ;;
    --no-collector) COLLECT=0 ;;
    -h | --help) usage ;;
    -*) echo "workloads.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} = 2 ] || usage
case $BUDGET in '' | *[!0-9]*) echo "workloads.sh: --budget wants seconds" >&2; exit 2 ;; esac
case $SCALE in '' | 0 | *[!0-9]*) echo "workloads.sh: --scale wants a positive integer" >&2; exit 2 ;; esac
case $BATCH in '' | 0 | *[!0-9]*) echo "workloads.sh: --batch wants a positive integer" >&2; exit 2 ;; esac

# ---- the plans: WORKLOAD:N... in the order they run (the first ones matter most)
case $PLAN in
small) PLAN_RUNS=("resnet18:2 4 8" "gpt2:2 4 8" "resnet50:4" "bert:4" "gemm:4") ;;
full) PLAN_RUNS=("resnet18:2 4 8" "gpt2:2 4 8" "resnet50:2 4 8" "bert:2 4 8" "gemm:2 4 8") ;;
n2) PLAN_RUNS=("resnet18:2" "resnet50:2") ;;
more) PLAN_RUNS=("mobilenet_v2:2 4 8" "vit_b_16:2 4 8") ;;
more2) PLAN_RUNS=("convnext_tiny:2 4 8" "swin_t:2 4 8") ;;
more3) PLAN_RUNS=("densenet121:4 8" "efficientnet_b0:4 8") ;;
mix) PLAN_RUNS=("resnet50+bert:2 4 8" "swin_t+gpt2:2 4 8" "convnext_tiny+bert:2 4 8") ;;
*) echo "workloads.sh: --plan small, full, n2, more, more2, more3 or mix, not '$PLAN'" >&2; exit 2 ;;
esac
declare -A ITERS=([resnet18]=100 [resnet50]=60 [gpt2]=50 [bert]=40 [gemm]=12 [mobilenet_v2]=100
    [vit_b_16]=30 [convnext_tiny]=40 [swin_t]=40 [densenet121]=40 [efficientnet_b0]=60)
for w in "${!ITERS[@]}"; do ITERS[$w]=$((ITERS[$w] * SCALE)); done
declare -A WARM=([resnet18]=10 [resnet50]=5 [gpt2]=5 [bert]=5 [gemm]=2 [mobilenet_v2]=10 [vit_b_16]=5
    [convnext_tiny]=5 [swin_t]=5 [densenet121]=5 [efficientnet_b0]=5)
# Estimates for the budget: seconds to start (python, spawn, torch and model imports, CUDA and
# the collector, model build, warm-up) and ms per timed iteration alone (H200, float32, batch 16).
declare -A START_S=([resnet18]=10 [resnet50]=11 [gpt2]=14 [bert]=14 [gemm]=9 [mobilenet_v2]=10
    [vit_b_16]=11 [convnext_tiny]=11 [swin_t]=11 [densenet121]=12 [efficientnet_b0]=11)
declare -A ITER_MS=([resnet18]=3 [resnet50]=6 [gpt2]=8 [bert]=10 [gemm]=30 [mobilenet_v2]=4
    [vit_b_16]=12 [convnext_tiny]=8 [swin_t]=9 [densenet121]=12 [efficientnet_b0]=6)
for n in $NS; do
    case $n in '' | 0 | 1 | *[!0-9]*) echo "workloads.sh: --ns wants numbers of 2 or more, not '$n'" >&2; exit 2 ;; esac
    [ "$PLAN" != mix ] || [ $((n % 2)) = 0 ] || { echo "workloads.sh: --ns of a mix of two wants even numbers, not '$n'" >&2; exit 2; }
done
# each workload's part of a mix A+B (a single workload: itself), one per line
parts() { tr '+' '\n' <<<"$1"; }
# joined WORKLOAD ARRAY: the array's values for the parts of WORKLOAD, joined by '+' (workloads.py)
joined() {
    local -n arr=$2
    local p out=()
    for p in $(parts "$1"); do out+=("${arr[$p]}"); done
    (IFS=+; echo "${out[*]}")
}
for w in $ONLY; do
    [[ " ${PLAN_RUNS[*]} " == *" $w:"* ]] || { echo "workloads.sh: --only: no '$w' in the $PLAN plan" >&2; exit 2; }
done

source "$here/mps_procs.sh"
[ $DRY = 1 ] || need_gpu tests/gpu/workloads.sh
if ! B=$(cd "${args[0]}" 2>/dev/null && pwd); then
    echo "workloads.sh: build folder ${args[0]} not found" >&2
    exit 2
fi
LIB=$B/collector/libcollect.so
if [ $COLLECT = 1 ] && [ ! -f "$LIB" ]; then
    if [ $DRY = 1 ]; then
        echo "workloads.sh: (dry run) $LIB not built"
    else
        echo "workloads.sh: $LIB not found: build it first (cmake --build ${args[0]})" >&2
        exit 2
    fi
fi
OUTD=${args[1]}
if [ $DRY = 0 ]; then
    mkdir -p "$OUTD" || exit 2
    OUTD=$(cd "$OUTD" && pwd)
    W=$(mktemp -d /tmp/tlworkloads.XXXXXX)
    : >"$OUTD/summary.txt"
    {
        nvidia-smi -L | head -n 1
        nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader | head -n 1
    } | sed 's/^/workloads.sh: /' | tee -a "$OUTD/summary.txt"
    echo "workloads.sh: plan $PLAN${ONLY:+, only$ONLY}; scale $SCALE; batch $BATCH; $DTYPE; API $API; budget $BUDGET s; runs in $OUTD"
else
    W=/tmp/tlworkloads.DRYRUN
    echo "workloads.sh: dry run: plan $PLAN${ONLY:+, only$ONLY}; scale $SCALE; batch $BATCH; budget $BUDGET s; build $B;" \
        "runs in $OUTD"
fi
[ -n "$TAR" ] || TAR=$OUTD.tar.gz
T0=$(date +%s)
CLOCK=0 BAD=0 RUNS=0 SKIPPED=() SOLOS=()

# ---- MPS: one private control daemon per workload's MPS runs (../../../shared/GPU.md); on exit
# the run still going (PIDS) is killed first.
MPS_LOG=$OUTD/mps-control-end.log # each workload keeps its own: mps-control-NAME.log
mps_guard

# est WORKLOAD N: the estimated seconds of one run (its timed loop as if time-sliced: N x; an
# iteration's time grown with the batch beyond 16; a mix: the slowest part's start, the parts'
# loops each run by their share of the N workers)
est() {
    local p s=0 loop=0 np
    np=$(parts "$1" | wc -l)
    for p in $(parts "$1"); do
        [ "${START_S[$p]}" -le $s ] || s=${START_S[$p]}
        loop=$(awk -v l="$loop" -v k="${ITERS[$p]}" -v ms="${ITER_MS[$p]}" -v np="$np" \
            'BEGIN { print l + k * ms / np }')
    done
    awk -v s="$s" -v n="$2" -v l="$loop" -v b="$BATCH" \
        'BEGIN { if (b > 16) l *= b / 16; printf "%.0f", s + 0.5 * n + l * n / 1000 + 1 }'
}
# run_one WORKLOAD MODE N: one run into OUTD/WORKLOAD-MODE-nN, unless the budget is spent (MODE
# on: the daemon is started first when it is not up).
run_one() {
    local w=$1 mode=$2 n=$3 name=$1-$2-n$3 e elapsed t
    e=$(est "$w" "$n")
    elapsed=$(($(date +%s) - T0))
    [ $DRY = 0 ] || elapsed=$CLOCK
    if [ $((elapsed + e)) -gt "$BUDGET" ]; then
        echo "== $name: SKIPPED (${elapsed} s gone + ~$e s > budget $BUDGET s)" | tee_summary
        SKIPPED+=("$name")
        return 0
    fi
    if [ "$mode" = on ] && [ $MPS_UP = 0 ] && ! mps_start; then
        echo "== $name: SKIPPED (no MPS daemon)" | tee_summary
        SKIPPED+=("$name")
        BAD=$((BAD + 1))
        return 0
    fi
    t=$((BUDGET + GRACE - elapsed))
    [ $t -lt $CMD_TIMEOUT ] || t=$CMD_TIMEOUT
    [ $t -ge 30 ] || t=30
    local d=$OUTD/$name env=()
    [ $COLLECT = 0 ] || env=("CUDA_INJECTION64_PATH=$LIB" TLVIEW_NVTX=1
        "TLVIEW_OUTPUT=$d/p.%p.db" "TLVIEW_RUN_ID=$name")
    [ $COLLECT = 0 ] || [ $API = 0 ] || env+=(TLVIEW_API=1)
    local cmd=(timeout -k 5 "$t" env "${env[@]}" "$PY" "$here/workloads.py" "$w" --workers "$n"
        --iters "$(joined "$w" ITERS)" --warmup "$(joined "$w" WARM)" --batch "$BATCH")
    [ "$DTYPE" = float32 ] || cmd+=(--dtype "$DTYPE")
    RUNS=$((RUNS + 1))
    CLOCK=$((CLOCK + e))
    echo "== $name (~$e s)"
    if [ $DRY = 1 ]; then
        printf '+'
        printf ' %q' "${cmd[@]}"
        printf ' > %s/log\n' "$d"
        return 0
    fi
    rm -rf "$d"
    mkdir -p "$d"
    printf '%q ' "${cmd[@]}" >"$d/cmd"
    local t1 rc wall
    t1=$(date +%s%N)
    "${cmd[@]}" >"$d/log" 2>&1 &
    PIDS=($!)
    wait "${PIDS[0]}"
    rc=$?
    PIDS=()
    wall=$(awk -v a="$t1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    echo $rc >"$d/rc"
    echo "$wall" >"$d/wall_s"
    [ $rc = 0 ] || BAD=$((BAD + 1))
    echo "$name | exit $rc | ${wall} s (est. $e) | $(find "$d" -name 'p.*.db' | wc -l) trace files |" \
        "$(grep -m 1 '^workloads: .* x [0-9]*:' "$d/log" | sed 's/^workloads: //')" | tee_summary
    [ $rc = 0 ] || tail -n 5 "$d/log" | sed 's/^/  log: /'
}
tee_summary() { if [ $DRY = 1 ]; then cat; else tee -a "$OUTD/summary.txt"; fi; }

for spec in "${PLAN_RUNS[@]}"; do
    w=${spec%%:*}
    [ -z "$NS" ] || spec="$w:$NS"
    [[ -z $ONLY || $ONLY == *" $w "* ]] || continue
    for p in $(parts "$w"); do # the solo references (a mix: each part's, once)
        [[ " ${SOLOS[*]} " == *" $p "* ]] && continue
        SOLOS+=("$p")
        run_one "$p" off 1
    done
    for n in ${spec#*:}; do run_one "$w" off "$n"; done
    for n in ${spec#*:}; do run_one "$w" on "$n"; done
    mps_stop "$OUTD/mps-control-$w.log"
done

echo "workloads.sh: $RUNS runs (~$CLOCK s by the estimates); skipped: ${SKIPPED[*]:-none}" |
    tee_summary
if [ $DRY = 1 ]; then
    echo "+ workloads_table.py $OUTD"
    echo "+ tar -czf $TAR -C $(dirname "$OUTD") $(basename "$OUTD")"
    exit 0
fi
left=$(mps_procs)
echo "workloads.sh: $(($(date +%s) - T0)) s; $BAD run(s) failed; nvidia-cuda-mps processes left:" \
    "$left" | tee_summary
[ "$left" = 0 ] || BAD=$((BAD + 1))
echo
python3 "$here/workloads_table.py" "$OUTD" || BAD=$((BAD + 1))
rm -rf "$W"
pack_outdir "$OUTD" "$TAR" 60 || BAD=$((BAD + 1))
[ $BAD = 0 ]
