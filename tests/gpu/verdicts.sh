#!/usr/bin/env bash
# verdicts.sh: records, on one GPU, the scenarios that tlview's overlap verdicts are checked on
# (time-sliced, concurrent, contended, queued), each into OUTDIR/<scenario>/ (trace files, the
# programs' output in `log`, the outcome wanted in `expected`), then judges them with
# verdicts_judge.py (BUILD_DIR/cli/tlview) and packs OUTDIR into one tar.gz. Scenarios (the kernel
# is samples/spin's one-thread kernel at 1e8 iterations, ~224 ms on an H200, unless said):
#   solo-spin, solo-sat, solo-sat50 (one MPS client at 50%), solo-uneven, solo-torch, solo-kineto:
#       one process alone, the solo references (--baseline) of the others
#   ctx-plain-{2,4}[-solo-first]     one process, N cuCtxCreate contexts (tests/gpu/contexts)
#   ctx-green-2[-solo-first]         one process, 2 green contexts on 2 x half the SMs
#   ctx-green-primary                the primary context and a green one: side by side (measured)
#   ctx-plain-3, ctx-green-3         3 contexts of one process (patterns no rule was written from)
#   green-proc-mps-off               2 green contexts of one process beside a spin process
#   offset-{25,50,75}-mps-{off,on}   2 spin processes, the second p% of a kernel after the first
#   uneven-mps-{off,on}              spin --iters 2e8 beside burst (4000 kernels of 2e4 steps)
#   streams-procs-mps-{off,on}       spin --streams 4 (4 kernels side by side) + 2 spin processes
#   mps-pct50, mps-sat-2             2 saturating MPS clients at 50% of the SMs each / unlimited
#   torch-mps-{off,on}               tests/gpu/torch_workers.py, 4 workers, under the collector
#   kineto-mps-{off,on}              the same with --profile (torch.profiler traces; no collector)
# MPS runs one private control daemon (pipe and log folders in a work folder) for all the MPS
# scenarios and always stops it (`echo quit | nvidia-cuda-mps-control`, EXIT trap); no card
# setting is ever changed. Every command runs under `timeout`; scenarios that would start after
# --budget seconds are skipped, so the tar is written within one call of the GPU machine.
# Prints one line per scenario (verdicts_summary.py), then the judge's table. Exit status: 0 when
# every scenario recorded cleanly and every row passed, 1 otherwise, 77 without a GPU, 2 usage.
# Usage: tests/gpu/verdicts.sh [--dry-run] [--tar FILE] [--only "NAME..."] [--no-judge]
#                              [--budget S] BUILD_DIR OUTDIR
#   --dry-run   print the commands and `expected` files instead of running anything (no GPU)
#   --tar FILE  the tar.gz of OUTDIR (default OUTDIR.tar.gz); it should stay under 16 MB
#   --only      record only these scenarios (the solo ones they use must be in OUTDIR already)
#   --no-judge  record only
#   --budget S  start no scenario after S seconds (default 300)
# shellcheck disable=SC2317 # the scenario bodies are called indirectly
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRY=0 TAR='' ONLY='' JUDGE=1 BUDGET=300
LEAD_MS=3000    # common start instants this far ahead: CUDA and the collector are up by then
CMD_TIMEOUT=60  # seconds, any one command (the torch runs take ~15 s)
SPIN_ITERS=1e8
SAT_ARGS=(--iters 9e5) # saturating: ~0.25 s per launch on the H200 with every SM
usage() { sed -n '2,30p' "$0"; exit 2; }
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) DRY=1 ;;
    --tar) [ $# -ge 2 ] || usage; TAR=$2; shift ;;
    --only) [ $# -ge 2 ] || usage; ONLY=" $2 "; shift ;;
    --no-judge) JUDGE=0 ;;
    --budget) [ $# -ge 2 ] || usage; BUDGET=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "verdicts.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} = 2 ] || usage

source "$here/mps_procs.sh"
[ $DRY = 1 ] || need_gpu tests/gpu/verdicts.sh
if ! B=$(cd "${args[0]}" 2>/dev/null && pwd); then
    echo "verdicts.sh: build folder ${args[0]} not found" >&2
    exit 2
fi
OUTD=${args[1]}
LIB=$B/collector/libcollect.so TL=$B/cli/tlview
SPIN=$B/samples/spin/spin SAT=$B/samples/saturating/saturating
CTX=$B/tests/gpu/contexts BURST=$B/tests/gpu/burst TORCH=$here/torch_workers.py
for f in "$LIB" "$SPIN" "$SAT" "$CTX" "$BURST"; do
    [ -f "$f" ] && continue
    if [ $DRY = 1 ]; then
        echo "verdicts.sh: (dry run) $f not built"
    else
        echo "verdicts.sh: $f not found: build it first (cmake --build ${args[0]})" >&2
        exit 2
    fi
done
if [ $DRY = 0 ]; then
    mkdir -p "$OUTD" || exit 2
    OUTD=$(cd "$OUTD" && pwd)
    W=$(mktemp -d /tmp/tlverdicts.XXXXXX)
    : >"$OUTD/summary.txt"
    echo "verdicts.sh: $(nvidia-smi -L | head -1); recordings in $OUTD; work folder $W"
    nvidia-smi --query-gpu=driver_version,compute_mode --format=csv,noheader |
        sed 's/^/verdicts.sh: driver, compute mode: /'
else
    W=/tmp/tlverdicts.DRYRUN
    echo "verdicts.sh: dry run: build $B, recordings in $OUTD"
fi
[ -n "$TAR" ] || TAR=$OUTD.tar.gz
BAD=0 # scenarios whose recording failed
T_START=$(date +%s)

# ---- MPS: one private control daemon, always stopped (../../../shared/GPU.md); on exit our own
# processes still running (PIDS, an interrupted run) are killed first.
MPS_LOG=$OUTD/mps-control.log
mps_guard

# ---- one scenario: scenario NAME PROCS API_KIND FUNC ARGS... records NAME into OUTD/NAME by
# calling FUNC ARGS (it writes `expected` with `expect` and starts processes with `launch`), waits
# for the processes and prints the scenario's line: PROCS trace files wanted, their contexts of
# compute API kind API_KIND (- for no check). Skipped with --only or past the time budget.
SCEN='' D='' FAILS=()
scenario() {
    local name=$1 procs=$2 api=$3
    shift 3
    wanted "$name" || return 0
    local t0 elapsed=$(($(date +%s) - T_START))
    if [ "$elapsed" -gt "$BUDGET" ]; then
        echo "$name | SKIP: ${elapsed} s gone, budget $BUDGET s" | tee_summary
        return 0
    fi
    SCEN=$name D=$OUTD/$name FAILS=()
    echo "== $name"
    if [ $DRY = 0 ]; then
        rm -rf "$D"
        mkdir -p "$D"
    fi
    t0=$(date +%s%N)
    "$@"
    wait_all
    local wall=$((($(date +%s%N) - t0) / 1000000)) line sargs=(--name "$name" --procs "$procs")
    [ "$api" = - ] || sargs+=(--api-kind "$api")
    local f
    for f in "${FAILS[@]}"; do sargs+=(--fail "$f"); done
    if [ $DRY = 1 ]; then
        echo "+ verdicts_summary.py ${sargs[*]} --wall-ms WALL $D"
        return 0
    fi
    if ! line=$(python3 "$here/verdicts_summary.py" "${sargs[@]}" --wall-ms "$wall" "$D"); then
        BAD=$((BAD + 1))
        tail -n 4 "$D/log" 2>/dev/null | sed 's/^/  log: /'
    fi
    echo "$line" | tee_summary
}
# wanted NAME...: true when --only is not given or names one of NAME...
wanted() {
    local n
    [ -z "$ONLY" ] && return 0
    for n in "$@"; do [[ $ONLY == *" $n "* ]] && return 0; done
    return 1
}
tee_summary() { if [ $DRY = 1 ]; then cat; else tee -a "$OUTD/summary.txt"; fi; }

# expect KEY VALUE...: a line of the scenario's `expected` file (read by verdicts_judge.py).
expect() {
    if [ "$DRY" = 1 ]; then
        echo "  expected: $1: ${*:2}"
    else
        echo "$1: ${*:2}" >>"$D/expected"
    fi
}
# launch [--bare] [VAR=VALUE...] CMD ARGS...: starts CMD in the background under the collector
# (its files into the scenario folder; --bare: without it) and `timeout`, its output appended to
# the scenario's log; its pid joins PIDS.
launch() {
    local env=("CUDA_INJECTION64_PATH=$LIB" "TLVIEW_OUTPUT=$D/p.%p.db" "TLVIEW_RUN_ID=$SCEN")
    if [ "$1" = --bare ]; then
        env=()
        shift
    fi
    local cmd=(timeout -k 5 "$CMD_TIMEOUT" env "${env[@]}" "$@")
    if [ "$DRY" = 1 ]; then
        printf '+'
        printf ' %q' "${cmd[@]}"
        printf ' &\n'
        return 0
    fi
    "${cmd[@]}" >>"$D/log" 2>&1 &
    PIDS+=($!)
}
# wait_all: waits for every launched process; a non-zero exit status joins FAILS.
wait_all() {
    local p s
    for p in "${PIDS[@]}"; do
        wait "$p"
        s=$?
        [ $s = 0 ] || FAILS+=("a process exited $s")
    done
    PIDS=()
}
# start_at: a common start instant (CLOCK_REALTIME ns), LEAD_MS from now, into AT.
start_at() { AT=$(($(date +%s%N) + LEAD_MS * 1000000)); }

# ---- the scenario bodies
solo() { # CMD...: one process alone
    expect verdict solo
    launch "$@"
}
solo_uneven() {
    expect verdict solo
    launch "$SPIN" --iters 2e8
    wait_all
    launch "$BURST" --iters 2e4 --launches 4000
}
ctx() { # MODE N_OR_EMPTY VERDICT LO HI [--solo-first]: contexts in one process
    local mode=$1 n=$2 verdict=$3 lo=$4 hi=$5
    shift 5
    expect verdict "$verdict"
    [ "$lo" = - ] || expect stretch "$lo" "$hi"
    [ $# -gt 0 ] || expect baseline solo-spin # --solo-first: the run holds its own reference
    # shellcheck disable=SC2086 # n is empty for green-primary
    launch "$CTX" "$mode" $n --iters "$SPIN_ITERS" "$@"
}
offset() { # PERCENT MPS: 2 spin processes, the second PERCENT% of a kernel after the first
    local p=$1
    if [ "$2" = off ]; then
        expect verdict time-sliced
        # the kernels' whole stretch is 2 - p/100, the overlap's ~2: both are let through
        expect stretch "$(awk -v p="$p" 'BEGIN { printf "%.2f", 0.9 * (2 - p / 100) }')" 2.3
    else
        expect verdict concurrent
        expect stretch 0.9 1.15
    fi
    expect baseline solo-spin
    start_at
    launch "$SPIN" --iters "$SPIN_ITERS" --start-at "$AT"
    launch "$SPIN" --iters "$SPIN_ITERS" --start-at $((AT + SPIN_US * 10 * p))
}
uneven() { # MPS
    if [ "$1" = off ]; then expect verdict time-sliced; else expect verdict concurrent; fi
    expect baseline solo-uneven
    start_at
    launch "$SPIN" --iters 2e8 --start-at "$AT"
    launch "$BURST" --iters 2e4 --launches 4000 --start-at "$AT"
}
streams_procs() { # MPS
    if [ "$1" = off ]; then
        expect verdict time-sliced
        expect stretch 2.5 3.5 # 3 contexts; the 4 streams of one run side by side in its slices
    else # 6 one-thread kernels of 3 MPS clients fit the GPU together
        expect verdict concurrent
        expect stretch 0.9 1.15
    fi
    expect baseline solo-spin
    start_at
    launch "$SPIN" --iters "$SPIN_ITERS" --streams 4 --launches 4 --start-at "$AT"
    launch "$SPIN" --iters "$SPIN_ITERS" --start-at "$AT"
    launch "$SPIN" --iters "$SPIN_ITERS" --start-at "$AT"
}
green_proc() { # 2 green contexts of one process (side by side) and a plain process: no MPS, so
    # the two processes take turns: each kernel ~2x, as for 2 plain contexts
    expect verdict time-sliced
    expect stretch 1.7 2.5
    expect baseline solo-spin
    start_at
    launch "$CTX" green 2 --iters "$SPIN_ITERS" --start-at "$AT"
    launch "$SPIN" --iters "$SPIN_ITERS" --start-at "$AT"
}
sat_pair() { # PERCENT_OR_EMPTY VERDICT [LO HI]: 2 saturating MPS clients behind their barrier
    local pct=$1 verdict=$2 env=() r
    expect verdict "$verdict"
    [ $# -lt 4 ] || expect stretch "$3" "$4"
    if [ -n "$pct" ]; then
        env=("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct")
        expect baseline solo-sat50
    else
        expect baseline solo-sat
    fi
    for r in 0 1; do
        launch "${env[@]}" TLVIEW_NPROCS=2 TLVIEW_RANK="$r" "$SAT" "${SAT_ARGS[@]}" \
            --barrier "$W/barrier-$SCEN"
    done
}
# torch_run torch|kineto VERDICT WORKERS BASELINE_OR_- ASSUME_OR_- [torch_workers.py ARGS...]:
# ASSUME is what a user who knows the setup tells tlview of the Chrome traces, which do not say
# whether MPS was on (`args: --assume-mps on|off`; - judges them as they are).
torch_run() {
    expect verdict "$2"
    [ "$4" = - ] || expect baseline "$4"
    [ "$5" = - ] || expect args --assume-mps "$5"
    local kind=$1 n=$3
    shift 5
    if [ "$kind" = torch ]; then
        launch python3 "$TORCH" --workers "$n" "$@"
    else # torch.profiler and the collector would both be CUPTI clients: no collector here
        launch --bare python3 "$TORCH" --workers "$n" --profile "$D" "$@"
    fi
}
HEAVY=(--batch 512 --hidden 4096) # matrix products that each fill the GPU

# ---- the run: MPS off, then the MPS scenarios under one daemon
scenario solo-spin 1 1 solo "$SPIN" --iters "$SPIN_ITERS"
SPIN_US=224000 # one spin kernel alone (us): measured in solo-spin when it is there
if [ $DRY = 0 ] && ms=$(python3 "$here/verdicts_summary.py" --median-ms "$OUTD/solo-spin" \
    2>/dev/null); then
    SPIN_US=$(awk -v ms="$ms" 'BEGIN { printf "%d", ms * 1000 }')
fi
echo "verdicts.sh: one spin kernel alone: $((SPIN_US / 1000)) ms (the offsets' unit)"
scenario solo-sat 1 1 solo "$SAT" "${SAT_ARGS[@]}"
scenario solo-uneven 2 1 solo_uneven
scenario ctx-plain-2 1 1 ctx plain 2 time-sliced 1.7 2.3
scenario ctx-plain-2-solo-first 1 1 ctx plain 2 time-sliced 1.7 2.3 --solo-first
scenario ctx-plain-4 1 1 ctx plain 4 time-sliced 3.4 4.6
scenario ctx-plain-4-solo-first 1 1 ctx plain 4 time-sliced 3.4 4.6 --solo-first
scenario ctx-green-2 1 1 ctx green 2 concurrent 0.9 1.15
scenario ctx-green-2-solo-first 1 1 ctx green 2 concurrent 0.9 1.15 --solo-first
# measured 2026-12-01: a green context's kernel and its parent's ran side by side, unstretched
scenario ctx-green-primary 1 1 ctx green-primary "" concurrent 0.9 1.15
# written 2026-12-01 14:10, before they ran: 3 plain contexts take turns (2 gave 2.15x, 4 gave
# 4.28x: ~7% beyond the count); 3 green ones on a third of the SMs each run side by side
scenario ctx-plain-3 1 1 ctx plain 3 time-sliced 2.8 3.5
scenario ctx-green-3 1 1 ctx green 3 concurrent 0.9 1.15
scenario green-proc-mps-off 2 1 green_proc
for p in 25 50 75; do scenario "offset-$p-mps-off" 2 1 offset "$p" off; done
scenario uneven-mps-off 2 1 uneven off
scenario streams-procs-mps-off 3 1 streams_procs off
# light work: the GPU mostly idle, so the contexts may take turns without ever overlapping
scenario solo-torch 1 1 torch_run torch solo 1 - -
scenario torch-mps-off 4 1 torch_run torch "time-sliced|solo" 4 solo-torch -
scenario solo-kineto 1 - torch_run kineto solo 1 - -
scenario kineto-mps-off 4 - torch_run kineto "time-sliced|solo" 4 solo-kineto off
# heavy work: the GPU busy; the Kineto traces judged as they are (MPS state unknown)
scenario solo-torch-heavy 1 1 torch_run torch solo 1 - - "${HEAVY[@]}"
scenario torch-heavy-mps-off 4 1 torch_run torch time-sliced 4 solo-torch-heavy - "${HEAVY[@]}"
scenario solo-kineto-heavy 1 - torch_run kineto solo 1 - - "${HEAVY[@]}"
scenario kineto-heavy-mps-off 4 - torch_run kineto time-sliced 4 solo-kineto-heavy - "${HEAVY[@]}"

MPS_SCENARIOS=(solo-sat50 mps-pct50 mps-sat-2 offset-25-mps-on offset-50-mps-on offset-75-mps-on
    uneven-mps-on streams-procs-mps-on torch-mps-on kineto-mps-on torch-heavy-mps-on kineto-heavy-mps-on)
if ! wanted "${MPS_SCENARIOS[@]}"; then
    : # --only names none of them: no daemon
elif mps_start; then
    scenario solo-sat50 1 2 solo CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "$SAT" "${SAT_ARGS[@]}"
    scenario mps-pct50 2 2 sat_pair 50 concurrent 0.8 1.25
    scenario mps-sat-2 2 2 sat_pair "" "queued|contended"
    for p in 25 50 75; do scenario "offset-$p-mps-on" 2 2 offset "$p" on; done
    scenario uneven-mps-on 2 2 uneven on
    scenario streams-procs-mps-on 3 2 streams_procs on
    scenario torch-mps-on 4 2 torch_run torch "concurrent|contended|queued" 4 solo-torch -
    scenario kineto-mps-on 4 - torch_run kineto "concurrent|contended|queued" 4 solo-kineto on
    scenario torch-heavy-mps-on 4 2 torch_run torch "contended|queued" 4 solo-torch-heavy - \
        "${HEAVY[@]}"
    scenario kineto-heavy-mps-on 4 - torch_run kineto "contended|queued" 4 solo-kineto-heavy on \
        "${HEAVY[@]}"
    mps_stop
else
    BAD=$((BAD + 1))
fi

RC=0
if [ $DRY = 1 ]; then
    echo "+ verdicts_judge.py $TL $OUTD"
    echo "+ tar -czf $TAR -C $(dirname "$OUTD") $(basename "$OUTD")"
    exit 0
fi
left=$(mps_procs)
echo "verdicts.sh: nvidia-cuda-mps processes left at the end: $left" | tee_summary
[ "$left" = 0 ] || BAD=$((BAD + 1))
echo "verdicts.sh: $BAD scenario(s) not recorded cleanly; $(($(date +%s) - T_START)) s" |
    tee_summary
[ $BAD = 0 ] || RC=1
if [ $JUDGE = 1 ]; then
    if [ -x "$TL" ]; then
        echo
        python3 "$here/verdicts_judge.py" --save "$OUTD/reports" "$TL" "$OUTD" |
            tee "$OUTD/judge.txt"
        [ "${PIPESTATUS[0]}" = 0 ] || RC=1
    else
        echo "verdicts.sh: $TL not built: not judged"
        RC=1
    fi
fi
rm -rf "$W"
pack_outdir "$OUTD" "$TAR" 16 || RC=1
exit $RC
