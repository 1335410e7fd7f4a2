#!/usr/bin/env bash
# run.sh: the collector's end-to-end check on a real GPU (issue 2), and the spin demo's recordings.
# Runs every scenario program under CUDA_INJECTION64_PATH=libcollect.so, judges each with check.py
# (kernels recorded == launched, 0 dropped, complete flag, compute_api_kind, one file per process)
# and prints the results table last; exits 1 when a row failed, 77 when there is no GPU.
# Usage: tests/gpu/run.sh [--reference] [--traces-tar FILE] [BUILD_DIR (default ./build)]
#   --reference   use bench's bare CUPTI injection (it only counts kernels) instead of libcollect:
#                 checks the scenario programs' own counts, needs no collector
#   --traces-tar  pack the spin recordings (N = 1, 2, 4; MPS off and on) as
#                 samples/spin/traces/mps-{off,on}/nN/*.db (+ spin.log, the programs' output) into FILE
# MPS runs a private control daemon (pipe and log folders in the work folder) and always stops it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source_kind=db
traces_tar=
build=./build
while [ $# -gt 0 ]; do
    case $1 in
    --reference) source_kind=bare ;;
    --traces-tar) traces_tar=$2; shift ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
    esac
    shift
done

source "$here/mps_procs.sh"
DRY=0 # no dry run: mps_start starts the daemon for real
need_gpu tests/gpu/run.sh
if ! B=$(cd "$build" 2>/dev/null && pwd); then
    echo "run.sh: build folder $build not found" >&2
    exit 2
fi
if [ $source_kind = bare ]; then LIB=$B/bench/libbare_inject.so; else LIB=$B/collector/libcollect.so; fi
for f in "$LIB" "$B/tests/gpu/empty_launch" "$B/tests/gpu/threads_streams" "$B/tests/gpu/fork_child" \
    "$B/tests/gpu/exit_modes" "$B/samples/spin/spin"; do
    if [ ! -f "$f" ]; then
        echo "run.sh: $f not found: build it first (cmake --build $build)" >&2
        exit 2
    fi
done
T=$B/tests/gpu
W=$(mktemp -d /tmp/tlgpu.XXXXXX)
RESULTS=$W/results.tsv
: >"$RESULTS"
echo "run.sh: $(nvidia-smi -L | head -1); injection $LIB; work folder $W"
nvidia-smi --query-gpu=driver_version,compute_mode --format=csv,noheader | sed 's/^/run.sh: driver, compute mode: /'

# ---- MPS: a private control daemon (mps_start, pipe and log folders under $W), always stopped
# (trap), as ../shared/GPU.md says; its control log is kept as $MPS_LOG unless named.
MPS_LOG=$W/mps-control.log
mps_guard

# inject DIR CMD...: runs CMD under the injection, files into DIR, stdout/stderr into DIR/*.log;
# sets RC to its exit status.
inject() {
    local d=$1
    shift
    mkdir -p "$d"
    CUDA_INJECTION64_PATH=$LIB TLVIEW_OUTPUT=$d/output.%p.db "$@" >>"$d/stdout.log" 2>>"$d/stderr.log"
    RC=$?
}
# check NAME DIR [check.py options]: judges DIR and adds the row.
check() {
    local name=$1 d=$2
    shift 2
    python3 "$here/check.py" --name "$name" --dir "$d" --results "$RESULTS" --source $source_kind \
        --stdout "$d/stdout.log" --stderr "$d/stderr.log" "$@"
    tail -n 3 "$d/stderr.log" 2>/dev/null | sed "s/^/  stderr: /"
}
# rcfail WANT: sets RCF to check's --fail option when RC differs from WANT, else to nothing.
rcfail() {
    RCF=()
    [ "$RC" = "$1" ] || RCF=(--fail "exit status $RC, expected $1")
}
# together N DIR CMD...: N copies of CMD (which takes --wait-file) started together; sets RC to the
# first non-zero exit status.
together() {
    local n=$1 d=$2 go=$2/../go.$(basename "$2").$$ pids=() i
    shift 2
    mkdir -p "$d"
    for i in $(seq "$n"); do
        CUDA_INJECTION64_PATH=$LIB TLVIEW_OUTPUT=$d/output.%p.db "$@" --wait-file "$go" \
            >>"$d/stdout.$i.log" 2>>"$d/stderr.log" &
        pids+=($!)
    done
    # Until all are ready; a copy that died before the barrier ends the wait (its status says why).
    for _ in $(seq 1200); do
        [ "$(ls "$go".ready.* 2>/dev/null | wc -l)" -ge "$n" ] && break
        for i in "${pids[@]}"; do kill -0 "$i" 2>/dev/null || break 2; done
        sleep 0.05
    done
    touch "$go"
    RC=0
    for i in "${pids[@]}"; do
        wait "$i"
        local s=$?
        [ $s != 0 ] && [ $RC = 0 ] && RC=$s
    done
    cat "$d"/stdout.*.log >"$d/stdout.log"
    rm -f "$go" "$go".ready.*
}

S=$W/scenarios
echo "== one process, 100000 empty kernels"
inject "$S/one-process" "$T/empty_launch" 100000
rcfail 0
check one-process "$S/one-process" --procs 1 --api-kind 1 "${RCF[@]}"

echo "== 4 processes at once, no MPS"
together 4 "$S/four-no-mps" "$T/empty_launch" 50000
rcfail 0
check four-no-mps "$S/four-no-mps" --procs 4 --api-kind 1 "${RCF[@]}"

echo "== 4 processes at once, MPS"
if mps_start; then
    together 4 "$S/four-mps" "$T/empty_launch" 50000
    mps_stop "$W/mps-four.log"
    clients=$(grep -c 'NEW CLIENT' "$W/mps-four.log" 2>/dev/null)
    rcfail 0
    [ "${clients:-0}" -ge 4 ] || RCF+=(--fail "MPS saw ${clients:-0} clients, expected 4")
    check four-mps "$S/four-mps" --procs 4 --api-kind 2 "${RCF[@]}"
else
    check four-mps "$S/four-mps" --procs 4 --fail "the MPS daemon did not start"
fi

echo "== 8 threads x 4 streams in one process"
inject "$S/threads-streams" "$T/threads_streams" 8 4 1000
rcfail 0
check threads-streams "$S/threads-streams" --procs 1 --api-kind 1 --streams 32 "${RCF[@]}"

echo "== fork: a CUDA child before the parent starts CUDA"
inject "$S/fork-cuda-child" "$T/fork_child" cuda-child
rcfail 0
check fork-cuda-child "$S/fork-cuda-child" --procs 2 --api-kind 1 "${RCF[@]}"

echo "== fork: a CUDA parent forks a child that uses no CUDA"
inject "$S/fork-nocuda-child" "$T/fork_child" nocuda-child
rcfail 0
check fork-nocuda-child "$S/fork-nocuda-child" --procs 1 --api-kind 1 "${RCF[@]}"

echo "== torch.multiprocessing spawn, 4 workers"
inject "$S/torch-spawn" python3 "$here/torch_spawn.py" 4 1000
rcfail 0
check torch-spawn "$S/torch-spawn" --procs 4 --api-kind 1 "${RCF[@]}"

echo "== torch spawn with API records: TLVIEW_API=1 (launches, not queries), then TLVIEW_API=all"
for a in 1:calls all:all; do
    TLVIEW_API=${a%%:*} inject "$S/torch-api-${a#*:}" python3 "$here/torch_spawn.py" 2 1000
    rcfail 0
    check "torch-api-${a#*:}" "$S/torch-api-${a#*:}" --procs 2 --api-kind 1 --api "${a#*:}" "${RCF[@]}"
done

echo "== exit modes"
for m in exit:0 return:0 reset:0 sigterm:143 sigint:130 sigterm-handler:7; do
    mode=${m%%:*}
    inject "$S/exit-$mode" "$T/exit_modes" "$mode" 5000
    skip=()
    [ $source_kind = bare ] && [ "${m#*:}" != 0 ] && skip=(--skip "a bare injection writes nothing when killed")
    rcfail "${m#*:}"
    check "exit-$mode" "$S/exit-$mode" --procs 1 --api-kind 1 "${skip[@]}" "${RCF[@]}"
done
echo "== cudaDeviceReset with the CUPTI subscription held (TLVIEW_CALLBACKS=1)"
TLVIEW_CALLBACKS=1 inject "$S/exit-reset-callbacks" "$T/exit_modes" reset 5000
rcfail 0
check exit-reset-callbacks "$S/exit-reset-callbacks" --procs 1 --api-kind 1 "${RCF[@]}"
echo "== SIGKILL after 5000 kernels and 2 s asleep (flush period 200 ms)"
TLVIEW_FLUSH_MS=200 inject "$S/exit-sigkill" "$T/exit_modes" sigkill 5000 2000
skip=()
[ $source_kind = bare ] && skip=(--skip "a bare injection writes nothing when killed")
rcfail 137
check exit-sigkill "$S/exit-sigkill" --procs 1 --api-kind 1 --complete 0 "${skip[@]}" "${RCF[@]}"

# profiler_case NAME ARGS...: torch_profiler_app.py bare, then under the injection; its exit status
# and stdout (which counts the GPU events its profiler saw) must not change, and the collector must
# say on stderr (a `tlview:` line) and in the file why it stepped aside.
profiler_case() {
    local name=$1 P=$S/$1
    shift
    mkdir -p "$P/bare"
    python3 "$here/torch_profiler_app.py" "$@" >"$P/bare/stdout.log" 2>"$P/bare/stderr.log"
    local bare_rc=$?
    inject "$P" python3 "$here/torch_profiler_app.py" "$@"
    local fails=()
    [ "$bare_rc" = 0 ] || fails+=("--fail=the app exits $bare_rc even without the injection")
    [ "$RC" = "$bare_rc" ] || fails+=("--fail=exit status $RC under the injection, $bare_rc bare")
    cmp -s "$P/bare/stdout.log" "$P/stdout.log" || fails+=("--fail=stdout differs from the bare run")
    echo "  bare stdout: $(tr '\n' '|' <"$P/bare/stdout.log")"
    echo "  injected stdout: $(tr '\n' '|' <"$P/stdout.log")"
    grep -vxF -f "$P/bare/stderr.log" "$P/stderr.log" | head -n 6 | sed 's/^/  stderr only when injected: /'
    if [ $source_kind = db ] && ! grep -q '^tlview' "$P/stderr.log"; then
        fails+=("--fail=no tlview line on stderr")
    fi
    check "$name" "$P" --stepaside --launched 301 "${fails[@]}"
}
echo "== an app running torch.profiler after its first CUDA work: bare, then under the injection"
profiler_case torch-profiler
echo "== an app starting torch.profiler before any CUDA call: bare, then under the injection"
profiler_case torch-profiler-first --profile-first

echo "== spin: the seed's one-thread kernel, 1 launch of 2e8 iterations per process (API, NVTX)"
TR=$W/samples/spin/traces
spin_set() {
    local label=$1 n=$2 d=$TR/$1/n$2
    # API calls and NVTX ranges too: the bundled demo shows them beside the kernels
    TLVIEW_API=1 TLVIEW_NVTX=1 TLVIEW_RUN_ID=spin-$label-n$n together "$n" "$d" "$B/samples/spin/spin" --iters 2e8
    grep -h 'cudaEvent' "$d/stdout.log" | sed "s/^/  $label n$n: /"
    local api=1
    [ "$label" = mps-on ] && api=2
    rcfail 0
    check "spin-$label-n$n" "$d" --procs "$n" --api-kind $api --durations "${RCF[@]}"
    # Only the recordings and the programs' own output stay beside them.
    mv "$d/stdout.log" "$d/spin.log"
    mkdir -p "$W/spin-logs"
    mv "$d/stderr.log" "$W/spin-logs/$label-n$n.stderr.log"
    rm -f "$d"/stdout.*.log
}
for n in 1 2 4; do spin_set mps-off $n; done
if mps_start; then
    for n in 1 2 4; do spin_set mps-on $n; done
    mps_stop
else
    check spin-mps-on "$TR/mps-on" --fail "the MPS daemon did not start"
fi
if [ -n "$traces_tar" ] && [ $source_kind = db ]; then
    tar -czf "$traces_tar" -C "$W" samples && echo "run.sh: spin traces packed into $traces_tar"
fi

left=$(mps_procs)
[ "$left" = 0 ] && v=PASS || v=FAIL
printf 'no-mps-left\t-\t-\t-\t-\t-\t%s\n' "$v" >>"$RESULTS"
echo "run.sh: nvidia-cuda-mps processes left at the end: $left"
echo
echo "== results ($source_kind)"
python3 "$here/check.py" --print-table "$RESULTS"
