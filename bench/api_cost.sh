#!/usr/bin/env bash
# api_cost.sh: what the collector's API records cost a program whose host sets its pace. One
# worker of tests/gpu/workloads.py (its own timed loop is the figure), ROUNDS rounds, each running
# the same command four ways one after the other: untraced, under libcollect, with TLVIEW_API=1
# (the calls that launch, copy, allocate, synchronise or wait: the queries left out) and with
# TLVIEW_API=all (every call). Prints per arm the loop's seconds in each round and their median,
# and from the traced arms' files the kernels, the API records and, of them, the queries
# (tests/gpu/check.py's list). No MPS, no card setting changed.
# Usage: bench/api_cost.sh [--rounds R] BUILD_DIR OUTDIR WORKLOAD [workloads.py options]
#   e.g. bench/api_cost.sh build-gpu /tmp/ac gpt2 --iters 200 --batch 1
# Writes OUTDIR/raw.txt (each run's RESULT line, prefixed "ROUND ARM"), OUTDIR/ARM.ROUND/ (the
# traced runs' files) and OUTDIR/table.md (bench/api_cost_table.py, also printed). Exit status: 0, 1 when a run failed, 77 without a GPU, 2 usage.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=3 args=()
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 2; }
while [ $# -gt 0 ] && [ ${#args[@]} -lt 3 ]; do
    case $1 in
    --rounds) [ $# -ge 2 ] || usage; ROUNDS=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "api_cost.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} = 3 ] || usage
case $ROUNDS in '' | 0 | *[!0-9]*) echo "api_cost.sh: --rounds wants a positive integer" >&2; exit 2 ;; esac
source "$here/../tests/gpu/mps_procs.sh"
need_gpu bench/api_cost.sh
LIB=$(cd "${args[0]}" 2>/dev/null && pwd)/collector/libcollect.so
[ -f "$LIB" ] || { echo "api_cost.sh: $LIB not found" >&2; exit 2; }
mkdir -p "${args[1]}" || exit 2
OUTD=$(cd "${args[1]}" && pwd)
: >"$OUTD/raw.txt"
BAD=0
for r in $(seq "$ROUNDS"); do
    for arm in untraced collector api api-all; do
        env=()
        case $arm in
        collector) env=("CUDA_INJECTION64_PATH=$LIB") ;;
        api) env=("CUDA_INJECTION64_PATH=$LIB" TLVIEW_API=1) ;;
        api-all) env=("CUDA_INJECTION64_PATH=$LIB" TLVIEW_API=all) ;;
        esac
        d=$OUTD/$arm.$r
        mkdir -p "$d"
        [ $arm = untraced ] || env+=("TLVIEW_OUTPUT=$d/p.%p.db")
        if ! timeout -k 5 300 env "${env[@]}" python3 "$here/../tests/gpu/workloads.py" "${args[2]}" \
            --workers 1 "$@" >"$d/out.log" 2>"$d/err.log"; then
            echo "api_cost.sh: round $r, $arm failed:" >&2
            tail -n 3 "$d/err.log" >&2
            BAD=1
        fi
        grep '^RESULT ' "$d/out.log" | sed "s/^/$r $arm /" >>"$OUTD/raw.txt"
    done
done
python3 "$here/api_cost_table.py" "$OUTD" >"$OUTD/table.md" || BAD=1
cat "$OUTD/table.md"
exit $BAD
