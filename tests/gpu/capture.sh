#!/usr/bin/env bash
# capture.sh: capture ranges and the flight recorder on a real GPU (issue 14). A server-like
# workload (capture_server: N worker processes looping requests of short kernels, each request
# logged) runs under libcollect.so in six scenarios, each judged by capture_judge.py (every
# request inside a range has all its kernels in the file, none outside it has any):
#   launch     launch cost: bench/launch with no injection, under libcollect outside any range
#              (TLVIEW_CAPTURE=control, never started) and inside one; medians of 3 rounds
#   control    4 workers, TLVIEW_CAPTURE=control; `tlview capture start` / `stop` from outside
#              twice, 10 s each
#   profiler   2 workers, TLVIEW_CAPTURE=cudaProfilerApi; ranges = the workers' own
#              cudaProfilerStart/Stop around requests 200-1199 and 2000-2999 (exact counts)
#   api        1 worker, as profiler with TLVIEW_API=1: each range (the second reopens CUPTI's API
#              kinds) holds every kernel's launch call and none of the queries TLVIEW_API=1 leaves
#              out (the worker's cudaGetLastError per request); judged with the real CUPTI only
#   delay      2 workers, TLVIEW_CAPTURE_DELAY=2s TLVIEW_CAPTURE_DURATION=3s
#   flight     4 workers, TLVIEW_FLIGHT=30s for 44 s; `tlview capture dump` at 40 s: the dump and
#              the files left at exit each hold the last 30 s, whole
# About 2 minutes of GPU time. Prints PASS/FAIL lines, per scenario the judge's clock summary
# (calibration brackets, end pair against start pair, tolerance, strays and the farthest one's
# distance) and how far each dump is complete, so a failure can be told without the files, and a
# summary last; exits 0 when all passed, 1 when not, 77 without a GPU.
# Usage: tests/gpu/capture.sh [--dry-run] [--standin] [--scale F] [--workers N] [--no-launch]
#                             BUILD_DIR OUTDIR
#   --dry-run    print the plan and every command; run nothing (no GPU needed)
#   --standin    no GPU: run capture_standin (the same loop and the collector's real session over
#                a simulated CUPTI) instead of capture_server under libcollect.so; no launch cost
#   --scale F    multiply every duration by F (e.g. 0.1 for a quick stand-in run)
#   --workers N  workers of the control and flight scenarios (default 4)
#   --no-launch  skip the launch-cost scenario
set -u
here=$(cd "$(dirname "$0")" && pwd)
dry=0 standin=0 scale=1 workers=4 launch=1
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) dry=1 ;;
    --standin) standin=1 ;;
    --scale) scale=$2; shift ;;
    --workers) workers=$2; shift ;;
    --no-launch) launch=0 ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    -*) echo "capture.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
if [ $# != 2 ]; then
    echo "usage: capture.sh [--dry-run] [--standin] [--scale F] [--workers N] [--no-launch] BUILD_DIR OUTDIR" >&2
    exit 2
fi
awk -v s="$scale" 'BEGIN { exit !(s > 0 && s <= 10) }' || { echo "capture.sh: --scale wants a number in (0, 10]" >&2; exit 2; }
case $workers in '' | *[!0-9]* | 0) echo "capture.sh: --workers wants a whole number >= 1" >&2; exit 2 ;; esac
# shellcheck source=tests/gpu/mps_procs.sh
source "$here/mps_procs.sh"
[ $dry = 1 ] || [ $standin = 1 ] || need_gpu tests/gpu/capture.sh
if ! B=$(cd "$1" 2>/dev/null && pwd); then
    echo "capture.sh: build folder $1 not found" >&2
    exit 2
fi
O=$2
T=$B/tests/gpu
TLVIEW=$B/cli/tlview
LIB=$B/collector/libcollect.so
if [ $standin = 1 ]; then
    WORKER=$T/capture_standin INJECT=() launch=0
else
    WORKER=$T/capture_server INJECT=("CUDA_INJECTION64_PATH=$LIB")
fi
JUDGE=(python3 "$here/capture_judge.py")
CTL=$O/ctl
# sec X: X seconds times --scale (three decimals)
sec() { awk -v x="$1" -v s="$scale" 'BEGIN { printf "%.3f", x * s }'; }
# tol X: the tolerance on a range of X scaled seconds: 0.5 s + 5%
tol() { awk -v x="$(sec "$1")" 'BEGIN { printf "%.3f", 0.5 + 0.05 * x }'; }

need=("$WORKER" "$TLVIEW")
[ $standin = 1 ] || need+=("$LIB")
[ $launch = 0 ] || need+=("$B/bench/launch")
for f in "${need[@]}"; do
    if [ $dry = 0 ] && [ ! -x "$f" ] && [ ! -f "$f" ]; then
        echo "capture.sh: $f not found: build it first (cmake --build $B)" >&2
        exit 2
    fi
done
if [ $dry = 0 ]; then
    if [ -e "$O" ] && [ -n "$(ls -A "$O" 2>/dev/null)" ]; then
        echo "capture.sh: $O is not empty: name a new folder" >&2
        exit 2
    fi
    mkdir -p "$O" || exit 2
    O=$(cd "$O" && pwd) CTL=$O/ctl
fi
RESULTS=$O/results.txt
pass=0 fail=0
# verdict NAME OK DETAIL: one summary line
verdict() {
    if [ "$2" = 0 ]; then pass=$((pass + 1)); v=PASS; else fail=$((fail + 1)); v=FAIL; fi
    echo "$v $1: $3"
    [ $dry = 1 ] || echo "$v $1: $3" >>"$RESULTS"
}
# x CMD...: run (or in a dry run print) a command
x() {
    echo "+ $*"
    [ $dry = 1 ] || "$@"
}
# capture VERB ARGS...: tlview capture with this run's control folder
capture() { x "$TLVIEW" capture "$@" -d "$CTL"; }
# start_workers N DIR ENV...: N workers in the background under the collector; PIDS their pids
start_workers() {
    local n=$1 d=$2 i
    shift 2
    PIDS=()
    [ $dry = 1 ] || mkdir -p "$d"
    for i in $(seq "$n"); do
        echo "+ env ${INJECT[*]} TLVIEW_OUTPUT=$d/out.%p.db TLVIEW_CONTROL_DIR=$CTL $* $WORKER ${WARGS[*]} --log $d/req.%p.log > $d/stdout.$i.log &"
        if [ $dry = 1 ]; then
            PIDS+=("PID$i")
            continue
        fi
        env ${INJECT[@]+"${INJECT[@]}"} TLVIEW_OUTPUT="$d/out.%p.db" TLVIEW_CONTROL_DIR="$CTL" "$@" \
            "$WORKER" "${WARGS[@]}" --log "$d/req.%p.log" >"$d/stdout.$i.log" 2>"$d/stderr.$i.log" &
        PIDS+=($!)
    done
}
# listening: waits (60 s at most) until every worker's collector listens; returns 1 if not
listening() {
    [ $dry = 1 ] && { echo "+ (wait until tlview capture list shows the workers)"; return 0; }
    local _ p got all
    for _ in $(seq 600); do
        got=$("$TLVIEW" capture list -d "$CTL" 2>/dev/null)
        all=1
        for p in "${PIDS[@]}"; do echo "$got" | grep -qx "$p" || { all=0; break; }; done
        [ $all = 1 ] && return 0
        sleep 0.1
    done
    return 1
}
# wait_workers DIR: waits for the workers; RC the first non-zero exit status; stdout.log all
wait_workers() {
    RC=0
    [ $dry = 1 ] && return 0
    local p s
    for p in "${PIDS[@]}"; do
        wait "$p"
        s=$?
        [ $s != 0 ] && [ $RC = 0 ] && RC=$s
    done
    cat "$1"/stdout.*.log >"$1/stdout.log"
    grep -h '^tlview' "$1"/stderr.*.log | sort | uniq -c | head -5 | sed 's/^/  stderr: /'
}
# judge NAME ARGS...: capture_judge.py, its verdict as one summary line
judge() {
    local name=$1 out rc
    shift
    echo "+ ${JUDGE[*]} --name $name $*"
    [ $dry = 1 ] && return 0
    out=$("${JUDGE[@]}" --name "$name" "$@")
    rc=$?
    # shellcheck disable=SC2001 # every line indented
    printf '%s\n' "$out" | sed 's/^/  /'
    echo "$out" | grep -E '^(PASS|FAIL|clock|summary) ' >>"$O/judge.txt"
    verdict "$name" $rc "$(echo "$out" | grep -c '^PASS ') checks passed, $(echo "$out" | grep -c '^FAIL ') failed"
    # the clock over the files: brackets, the end pair against the start pair, strays
    echo "$out" | grep '^summary ' | sed 's/^/  /' | tee -a "$RESULTS"
}
# dump_horizon FILE: how far each dump is complete, from the replies of tlview capture dump in FILE
dump_horizon() {
    local line
    line=$(sed -n 's/^\([0-9]*\): dumped .*; complete only to \([0-9.]*\) ms before the request.*/\1 \2 ms short/p
                s/^\([0-9]*\): dumped [^;]*$/\1 at the request/p' "$1" | paste -sd, - | sed 's/,/, /g')
    echo "  dump horizon (each dump complete to): ${line:-no dump replied}" | tee -a "$RESULTS"
}
pause() { x sleep "$(sec "$1")"; }

WARGS=(--seconds 0)
echo "capture.sh: $([ $standin = 1 ] && echo "stand-in (no GPU)" || echo "$LIB"); scale $scale; $workers workers; output $O"
[ $dry = 1 ] || [ $standin = 1 ] || nvidia-smi -L | head -1 | sed 's/^/capture.sh: /'
est=$(awk -v s="$scale" -v l=$launch 'BEGIN { printf "%.0f", l * 15 + s * (28 + 7 + 42) + 10 }')
echo "capture.sh: about $est s of GPU time"

# ---- launch cost: no injection, outside a range, inside one (3 interleaved rounds, medians)
if [ $launch = 1 ]; then
    echo "== launch: 200000 empty launches, no injection / outside a range / inside one"
    L=$O/launch
    [ $dry = 1 ] || mkdir -p "$L"
    for _ in 1 2 3; do
        x sh -c "'$B/bench/launch' 200000 >>'$L/bare.log'"
        x sh -c "CUDA_INJECTION64_PATH='$LIB' TLVIEW_CAPTURE=control TLVIEW_CONTROL_DIR='$CTL' TLVIEW_OUTPUT='$L/outside.%p.db' '$B/bench/launch' 200000 >>'$L/outside.log'"
        x sh -c "CUDA_INJECTION64_PATH='$LIB' TLVIEW_CONTROL_DIR='$CTL' TLVIEW_OUTPUT='$L/inside.%p.db' '$B/bench/launch' 200000 >>'$L/inside.log'"
    done
    if [ $dry = 0 ]; then
        med() { sed -n 's/.*: \([0-9.]*\) us per launch.*/\1/p' "$L/$1.log" | sort -n | sed -n 2p; }
        b=$(med bare) o=$(med outside) i=$(med inside)
        ok=$(awk -v b="$b" -v o="$o" 'BEGIN { exit !(b > 0 && o <= 1.15 * b) }' && echo 0 || echo 1)
        verdict launch "$ok" "us per launch, medians of 3: no injection $b, outside a range $o, inside $i (outside/none $(awk -v b="$b" -v o="$o" 'BEGIN { if (b > 0) printf "%.2f", o / b }'); PASS when <= 1.15)"
    fi
fi

# ---- control: two 10 s ranges from outside
echo "== control: $workers workers, TLVIEW_CAPTURE=control, two ranges started and stopped from outside"
D=$O/control
# the workers outlast the commands below by 2 s whatever the scale (starting, replies)
WARGS=(--seconds "$(awk -v x="$(sec 28)" 'BEGIN { print x + 2 }')")
start_workers "$workers" "$D" TLVIEW_CAPTURE=control
if listening; then
    pause 2
    capture start -n first "${PIDS[@]}"
    pause 10
    capture stop "${PIDS[@]}"
    pause 3
    capture start -n second "${PIDS[@]}"
    pause 10
    capture stop "${PIDS[@]}"
else
    verdict control-listen 1 "the workers' collectors did not listen within 60 s"
fi
wait_workers "$D"
[ $dry = 1 ] || [ "$RC" = 0 ] || verdict control-exit 1 "a worker exited with status $RC"
judge control --dir "$D" --files "$workers" --ranges 2 --range-s "$(sec 10)" --tol-s "$(tol 10)" \
    --reasons control-control,control-control

# ---- cudaProfilerApi: the workers' own cudaProfilerStart/Stop
echo "== profiler: 2 workers, TLVIEW_CAPTURE=cudaProfilerApi, ranges around requests 200-1199 and 2000-2999"
D=$O/profiler
# shellcheck disable=SC2054 # the commas separate the ranges of one argument
WARGS=(--requests 3200 --profiler-ranges 200:1200,2000:3000)
start_workers 2 "$D" TLVIEW_CAPTURE=cudaProfilerApi
wait_workers "$D"
[ $dry = 1 ] || [ "$RC" = 0 ] || verdict profiler-exit 1 "a worker exited with status $RC"
judge profiler --dir "$D" --files 2 --ranges 2 --profiler-stdout "$D/stdout.log" \
    --reasons cudaProfilerStart-cudaProfilerStop,cudaProfilerStart-cudaProfilerStop

# ---- the same with the API calls (TLVIEW_API=1): the queries stay out when a range reopens
echo "== api: 1 worker, TLVIEW_CAPTURE=cudaProfilerApi TLVIEW_API=1, ranges around requests 200-1199 and 2000-2999"
D=$O/api
start_workers 1 "$D" TLVIEW_CAPTURE=cudaProfilerApi TLVIEW_API=1
wait_workers "$D"
[ $dry = 1 ] || [ "$RC" = 0 ] || verdict api-exit 1 "a worker exited with status $RC"
# the stand-in's simulated CUPTI records no API calls: its ranges are judged, not the calls
API_JUDGE=()
[ $standin = 1 ] || API_JUDGE=(--api-calls)
judge api --dir "$D" --files 1 --ranges 2 --profiler-stdout "$D/stdout.log" \
    --reasons cudaProfilerStart-cudaProfilerStop,cudaProfilerStart-cudaProfilerStop ${API_JUDGE[@]+"${API_JUDGE[@]}"}

# ---- delay and duration
echo "== delay: 2 workers, TLVIEW_CAPTURE_DELAY=$(sec 2)s TLVIEW_CAPTURE_DURATION=$(sec 3)s"
D=$O/delay
WARGS=(--seconds "$(sec 7)")
start_workers 2 "$D" TLVIEW_CAPTURE_DELAY="$(sec 2)s" TLVIEW_CAPTURE_DURATION="$(sec 3)s"
wait_workers "$D"
[ $dry = 1 ] || [ "$RC" = 0 ] || verdict delay-exit 1 "a worker exited with status $RC"
judge delay --dir "$D" --files 2 --ranges 1 --range-s "$(sec 3)" --tol-s "$(tol 3)" --reasons delay-duration

# ---- the flight recorder: the last 30 s, dumped at 40 s and left at exit (44 s)
W=$(sec 30)
W=$(awk -v w="$W" 'BEGIN { printf "%.3f", w < 1 ? 1 : w }')
echo "== flight: $workers workers, TLVIEW_FLIGHT=${W}s for $(sec 44) s, a dump at $(sec 40) s"
D=$O/flight
WARGS=(--seconds "$(awk -v x="$(sec 42)" 'BEGIN { print x + 2 }')")
start_workers "$workers" "$D" TLVIEW_FLIGHT="${W}s"
if listening; then
    pause 40
    if [ $dry = 1 ]; then
        capture dump -n dump "${PIDS[@]}"
    else
        capture dump -n dump "${PIDS[@]}" | tee "$D/dump.txt"
        dump_horizon "$D/dump.txt"
    fi
else
    verdict flight-listen 1 "the workers' collectors did not listen within 60 s"
fi
wait_workers "$D"
[ $dry = 1 ] || [ "$RC" = 0 ] || verdict flight-exit 1 "a worker exited with status $RC"
[ $dry = 1 ] || stat -c '  file at exit: %s bytes %n' "$D"/*.db
# the window is cut at flushes (every 0.5 s): it may run up to about one period longer
judge flight-dump --dir "$D/dump" --logs "$D" --files "$workers" --flight "$W" --tol-s 1.2
judge flight-exit --dir "$D" --files "$workers" --flight "$W" --tol-s 1.2

echo
if [ $dry = 1 ]; then
    echo "capture.sh: dry run, nothing ran"
    exit 0
fi
echo "== results"
cat "$RESULTS"
echo "capture.sh: $pass passed, $fail failed: $([ $fail = 0 ] && echo PASS || echo FAIL)"
[ $fail = 0 ]
