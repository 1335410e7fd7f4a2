#!/usr/bin/env bash
# mps_costs.sh: what sharing one GPU costs, with and without MPS, measured with bench/mps_cost
# (the probe; its modes and kernels are described at the top of mps_cost.cu). Four parts:
#   a  time-slicing overhead: N = 1 (solo, first), 2, 4 processes, MPS off, each launching the
#      one-thread spin kernel at common instants, ~2, ~20 and ~200 ms long (20, 8, 4 times):
#      each kernel's duration over its solo duration, (stretch - N) / N, and the span of the N
#      kernels over N x solo
#   b  how long a short kernel waits behind another context: process A launches 40 kernels of
#      ~50 ms back to back (spin: one thread; sat: every SM), process B 200 spin kernels of ~10 us,
#      one every 5 ms from 200 ms after A's start, each waited for; B's launch-to-end latency
#      (median, p90) alone, beside A without MPS and beside A under MPS
#   c  launch cost: 5 rounds of 10,000 empty <<<1,1>>> launches back to back (us per launch) and
#      1000 launch + synchronize round trips, one process, without and with MPS
#   d  slowdown side by side by kind: N = 1, 2, 4, 8 processes started together, each running one
#      ~100 ms kernel of each kind in turn (spin: one thread; sat: every SM; triad: memory-bound
#      over 1 GiB arrays; tile: GEMM-like on 1/8 of the SMs), 3 times; without MPS and under MPS:
#      each kernel's duration over the solo one of its mode (median over the clients)
#   e  kernel tails: one chain of 2000 saturating kernels back to back (~20 and ~100 us each,
#      every SM, 8 waves), then two such chains in two processes started together, without and
#      under MPS: the two chains' span over twice one chain's, and the time saved per kernel, what
#      a client's kernels gain by filling the SMs another's kernel leaves as it drains
# The kernel sizes come from a calibration run first (mps_cost calib: each kind alone at two
# sizes), so the targets hold on any GPU. The probes of one run start together: each creates
# GO.ready.<pid> once set up, and the script then writes the start instant (now + 20 ms) into GO.
# MPS: one private control daemon (pipe and log folders in the work folder) for all the MPS parts,
# started after the MPS-off runs and always stopped (`echo quit | nvidia-cuda-mps-control`, EXIT
# trap); no card setting is changed (nvidia-smi is only read). Runs that would end past --budget
# seconds are skipped and listed. Every probe runs under `timeout`.
# Writes OUTDIR/raw.txt (every probe line, prefixed "PART MODE SCEN N RANK ROLE"), costs.csv and
# costs.txt (the tables, from mps_costs_table.py, also printed), logs/ (each probe's stderr),
# mps-control.log, and OUTDIR.tar.gz. Exit status: 0 when every run passed its self-check, 1
# otherwise, 77 without a GPU, 2 usage.
# Usage: bench/mps_costs.sh [--dry-run] [--parts "a b c d e"] [--budget S] [-o OUTDIR] [BUILD_DIR]
#   --dry-run  print the plan (commands, estimated seconds) and touch nothing; no GPU needed
#   --parts    the parts to run (default all five)
#   --budget   seconds; a run that would end after it is skipped (default 240)
#   -o         output folder (default ./mps-costs-YYYYmmdd-HHMMSS); BUILD_DIR default ./build
set -u
here=$(cd "$(dirname "$0")" && pwd)
DRY=0 PARTS="a b c d e" BUDGET=240 OUT='' args=()
usage() { sed -n '2,41p' "$0"; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) DRY=1 ;;
    --parts) [ $# -ge 2 ] || usage; PARTS=$2; shift ;;
    --budget) [ $# -ge 2 ] || usage; BUDGET=$2; shift ;;
    -o) [ $# -ge 2 ] || usage; OUT=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "mps_costs.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} -le 1 ] || usage
for p in $PARTS; do
    case $p in a | b | c | d | e) ;; *) echo "mps_costs.sh: no part '$p' (a b c d e)" >&2; exit 2 ;; esac
done
case $BUDGET in '' | *[!0-9]*) echo "mps_costs.sh: --budget wants seconds" >&2; exit 2 ;; esac
B=${args[0]:-./build}
PROBE=$B/bench/mps_cost
TABLE=$here/mps_costs_table.py
source "$here/../tests/gpu/mps_procs.sh"
if [ $DRY = 0 ]; then
    need_gpu mps_costs.sh
    [ -x "$PROBE" ] || { echo "mps_costs.sh: $PROBE not found: build it first" >&2; exit 2; }
fi
[ -n "$OUT" ] || OUT=./mps-costs-$(date +%Y%m%d-%H%M%S)
has() { [[ " $PARTS " == *" $1 "* ]]; }

# ---- the plan's constants
A_LENS_MS=(2 20 200) A_REPS=(20 8 4) A_NS=(1 2 4)
B_SHORT_MS=0.010 B_COUNT=200 B_PERIOD_US=5000 B_DELAY_MS=200 B_LONG_MS=50 B_LONG_COUNT=40
C_N=10000 C_ROUNDS=5
D_KINDS=(spin sat triad tile) D_MS=100 D_REPS=3 D_NS=(1 2 4 8)
E_US=(20 100) E_COUNT=2000
START_S=1.5   # estimated seconds for one run's processes to start and set up (CUDA, buffers)
T_RUN=60      # timeout of one probe, seconds
# default calibration (H200 estimates: spin 2e8 iterations ~448 ms; saturating 1.8e6 steps
# ~500 ms; triad ~3 GiB per pass at ~4 TB/s; tile a guess), replaced by the measured one
declare -A SLOPE=([spin]=2.24 [sat]=278 [triad]=800000 [tile]=8000)
declare -A FIXED=([spin]=0 [sat]=0 [triad]=0 [tile]=0)

# units KIND MS: the PARAM that makes a KIND kernel last about MS milliseconds alone
units() {
    awk -v s="${SLOPE[$1]}" -v f="${FIXED[$1]}" -v ms="$2" -v k="$1" 'BEGIN {
        u = (ms * 1e6 - f) / s; u = u < 1 ? 1 : int(u + 0.5)
        if (k == "tile" && u > 65536) u = 65536
        if (u > 2147483647) u = 2147483647
        print u }'
}
ceil() { awk -v x="$1" 'BEGIN { printf "%d", (x == int(x)) ? x : int(x) + 1 }'; }

if [ $DRY = 0 ]; then
    mkdir -p "$OUT/logs" || exit 2
    OUT=$(cd "$OUT" && pwd)
    W=$(mktemp -d /tmp/mps_costs.XXXXXX)
    RAW=$OUT/raw.txt
    : >"$RAW"
    {
        nvidia-smi -L | head -n 1
        nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader | head -n 1
    } | sed 's/^/mps_costs.sh: /' | tee "$OUT/gpu.txt"
    echo "mps_costs.sh: parts $PARTS; budget $BUDGET s; results in $OUT; work folder $W"
else
    W=/tmp/mps_costs.DRYRUN RAW=/dev/null
    echo "mps_costs.sh: dry run: probe $PROBE, parts $PARTS, budget $BUDGET s, results in $OUT"
fi
T0=$(date +%s)
EST_TOTAL=0 BAD=0 SKIPPED=() RUNS=0

# ---- MPS: one private control daemon (../shared/GPU.md), always stopped; on exit the probes
# still running (PIDS) are killed first.
MPS_LOG=$OUT/mps-control.log
mps_guard

# run PART MODE SCEN N EST_S SPEC...: one run. Each SPEC is "ROLE ARGS..." (words), one probe
# process `mps_cost ARGS`, GO in ARGS standing for this run's start file. Skipped when it would
# end after the budget. Starts the probes, waits for every probe that has GO to be ready, writes
# the start instant, waits for all, and appends their lines to RAW as "PART MODE SCEN N RANK
# ROLE LINE". A probe that exits non-zero or without "Test PASSED" counts in BAD. A dry run
# prints the commands and counts time by the estimates.
run() {
    local part=$1 mode=$2 scen=$3 n=$4 est=$5
    shift 5
    local name=$part-$mode-$scen-n$n elapsed=$(($(date +%s) - T0))
    [ $DRY = 0 ] || elapsed=$(printf '%.0f' "$EST_TOTAL") # a dry run's clock: the estimates
    if [ "$(awk -v e="$elapsed" -v t="$est" -v b="$BUDGET" 'BEGIN { print (e + t > b) }')" = 1 ]
    then
        echo "== $name: SKIPPED (${elapsed} s gone + ~${est} s > budget $BUDGET s)"
        SKIPPED+=("$name")
        return 0
    fi
    RUNS=$((RUNS + 1))
    EST_TOTAL=$(awk -v a="$EST_TOTAL" -v b="$est" 'BEGIN { print a + b }')
    echo "== $name (~$est s)"
    local go=$W/go-$name spec rank=0 want=0 words pids=() roles=()
    for spec in "$@"; do
        read -r -a words <<<"$spec"
        local role=${words[0]} cmd=("${words[@]:1}") i
        for i in "${!cmd[@]}"; do
            [ "${cmd[$i]}" = GO ] && cmd[i]=$go && want=$((want + 1))
        done
        if [ $DRY = 1 ]; then
            printf '+ [%s] timeout %s %s' "$role" "$T_RUN" "$PROBE"
            printf ' %s' "${cmd[@]}"
            printf ' &\n'
        else
            timeout -k 5 "$T_RUN" "$PROBE" "${cmd[@]}" >"$W/$name.$rank.out" \
                2>"$OUT/logs/$name.$rank.err" &
            pids+=($!)
            PIDS+=($!)
        fi
        roles+=("$role")
        rank=$((rank + 1))
    done
    if [ $DRY = 1 ]; then
        [ $want = 0 ] || echo "+ (once $want probes are ready) echo \$((now + 20 ms)) > $go"
        return 0
    fi
    if [ $want -gt 0 ]; then # wait for the ready files (or a probe that died), then GO
        local ready=0 tries=0 alive p f
        while [ $tries -lt 6000 ]; do
            ready=0
            for f in "$go".ready.*; do [ -e "$f" ] && ready=$((ready + 1)); done
            [ $ready -ge $want ] && break
            alive=0
            for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
            [ $alive -lt $rank ] && break
            sleep 0.01
            tries=$((tries + 1))
        done
        [ $ready -ge $want ] || echo "   only $ready of $want probes ready; starting anyway"
        echo $(($(date +%s%N) + 20000000)) >"$go.tmp" && mv "$go.tmp" "$go"
    fi
    local r s
    for r in "${!pids[@]}"; do
        wait "${pids[$r]}"
        s=$?
        if [ $s != 0 ] || ! grep -q '^Test PASSED$' "$W/$name.$r.out"; then
            echo "   probe $r (${roles[$r]}) exited $s$(grep -q '^Test PASSED$' \
                "$W/$name.$r.out" || echo ', no Test PASSED'):"
            tail -n 3 "$OUT/logs/$name.$r.err" | sed 's/^/     /'
            BAD=$((BAD + 1))
        fi
        sed "s/^/$part $mode $scen $n $r ${roles[$r]} /" "$W/$name.$r.out" >>"$RAW"
    done
    PIDS=()
    rm -f "$go" "$go".ready.*
}

# ---- calibration: each kind alone at two sizes
run calib off calib 1 3 "- calib"
if [ $DRY = 0 ]; then
    while read -r _ _ _ _ _ _ tag kind slope fixed; do
        [ "$tag" = C ] || continue
        SLOPE[$kind]=$slope FIXED[$kind]=$fixed
    done <"$RAW"
    grep ' C \| I ' "$RAW" >"$OUT/calib.txt"
fi
for k in spin sat triad tile; do
    echo "mps_costs.sh: $k: ${SLOPE[$k]} ns per unit + ${FIXED[$k]} ns"
done

# ---- part a: time-slicing overhead of the one-thread kernel, MPS off
part_a() {
    local n i groups=() est
    for n in "${A_NS[@]}"; do
        groups=() est=$START_S
        for i in "${!A_LENS_MS[@]}"; do
            local ms=${A_LENS_MS[$i]} reps=${A_REPS[$i]} per
            per=$(($(ceil "$(awk -v n="$n" -v m="$ms" 'BEGIN { print n * m * 1.3 }')") + 30))
            groups+=("spin:$(units spin "$ms"):$reps:$per")
            est=$(awk -v e="$est" -v r="$reps" -v p="$per" 'BEGIN { print e + r * p / 1000 }')
        done
        local specs=() r
        for r in $(seq "$n"); do specs+=("- sched GO ${groups[*]}"); done
        run a off spin "$n" "$est" "${specs[@]}"
    done
}
# ---- part b: a short kernel's latency behind another context
part_b() {
    local mode=$1 short long_s long_t est
    short=$(units spin "$B_SHORT_MS")
    est=$(awk -v s="$START_S" -v c="$B_LONG_COUNT" -v l="$B_LONG_MS" \
        'BEGIN { print s + c * l / 1000 + 0.3 }')
    local poke="B poke GO $short $B_COUNT $B_PERIOD_US"
    run b "$mode" alone 1 "$(awk -v s="$START_S" 'BEGIN { print s + 1.3 }')" "$poke 0"
    long_s=$(units spin "$B_LONG_MS") long_t=$(units sat "$B_LONG_MS")
    run b "$mode" spin 2 "$est" "A stream GO spin $long_s $B_LONG_COUNT 0" "$poke $B_DELAY_MS"
    run b "$mode" sat 2 "$est" "A stream GO sat $long_t $B_LONG_COUNT 0" "$poke $B_DELAY_MS"
}
# ---- part c: launch cost
part_c() {
    run c "$1" launch 1 "$(awk -v s="$START_S" 'BEGIN { print s + 0.5 }')" \
        "- launch $C_N $C_ROUNDS"
}
# ---- part d: side-by-side slowdown by kind
part_d() {
    local mode=$1 n k groups est specs r per
    for n in "${D_NS[@]}"; do
        groups=() est=$START_S specs=()
        per=$(($(ceil "$(awk -v n="$n" -v m="$D_MS" 'BEGIN { print n * m * 1.3 }')") + 60))
        for k in "${D_KINDS[@]}"; do
            groups+=("$k:$(units "$k" "$D_MS"):$D_REPS:$per")
            est=$(awk -v e="$est" -v r="$D_REPS" -v p="$per" 'BEGIN { print e + r * p / 1000 }')
        done
        for r in $(seq "$n"); do specs+=("- sched GO ${groups[*]}"); done
        run d "$mode" kinds "$n" "$est" "${specs[@]}"
    done
}

# ---- part e: kernel tails: one chain alone (off only), two chains without and under MPS
part_e() {
    local mode=$1 us n est specs r param
    for us in "${E_US[@]}"; do
        param=$(units sat "$(awk -v u="$us" 'BEGIN { print u / 1000 }')")
        for n in 1 2; do
            [ "$mode" = off ] || [ "$n" = 2 ] || continue
            est=$(awk -v s="$START_S" -v n="$n" -v c="$E_COUNT" -v u="$us" \
                'BEGIN { print s + n * c * u / 1e6 + 0.3 }')
            specs=()
            for r in $(seq "$n"); do specs+=("- stream GO sat $param $E_COUNT 0"); done
            run e "$mode" "sat$us" "$n" "$est" "${specs[@]}"
        done
    done
}

has a && part_a
has b && part_b off
has c && part_c off
has d && part_d off
has e && part_e off
if has b || has c || has d || has e; then
    if mps_start; then
        has b && part_b mps
        has c && part_c mps
        has d && part_d mps
        has e && part_e mps
        mps_stop
    else
        BAD=$((BAD + 1))
    fi
fi

echo "mps_costs.sh: $RUNS runs, estimated $EST_TOTAL s of runs; skipped: ${SKIPPED[*]:-none}"
if [ $DRY = 1 ]; then
    echo "+ mps_costs_table.py $RAW $OUT/costs.csv > $OUT/costs.txt"
    exit 0
fi
left=$(mps_procs)
echo "mps_costs.sh: $(($(date +%s) - T0)) s; $BAD probe(s) failed; nvidia-cuda-mps processes" \
    "left: $left"
[ "$left" = 0 ] || BAD=$((BAD + 1))
{
    cat "$OUT/gpu.txt"
    echo "skipped runs: ${SKIPPED[*]:-none}"
    python3 "$TABLE" "$RAW" "$OUT/costs.csv"
} | tee "$OUT/costs.txt"
[ "${PIPESTATUS[0]}" = 0 ] || BAD=$((BAD + 1))
rm -rf "$W"
pack_outdir "$OUT" "$OUT.tar.gz" || BAD=$((BAD + 1))
[ $BAD = 0 ]
