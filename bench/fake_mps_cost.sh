#!/usr/bin/env bash
# fake_mps_cost.sh: a stand-in for bench/mps_cost, so test_mps_costs.sh can run mps_costs.sh
# without a GPU. It speaks the probe's protocol (GO.ready.<pid>, then the start instant in GO) and
# prints its lines with made-up but known figures: a kernel of KIND and PARAM lasts PARAM x the
# default calibration's ns per unit, stretched N times (N = the probes ready for the same GO)
# without MPS, and under MPS (CUDA_MPS_PIPE_DIRECTORY/control exists) only for sat and triad;
# poke latencies are BASE + 1000 i ns (BASE: 20 us alone, 2 ms beside A without MPS, 30 us
# with); launch: 4.0/4.1/... us per launch (5.0/5.1/... under MPS), round trip 10 and 12 us.
set -u
declare -A SLOPE=([spin]=2.24 [sat]=278 [triad]=800000 [tile]=8000)
T=1000000000000000 # the made-up %globaltimer at the start instant
mps=0
[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && mps=1
N=1
go() { # announce, wait for the start file, count the probes that were ready for it
    touch "$1.ready.$$"
    local i ready
    for i in $(seq 1000); do
        [ -s "$1" ] && break
        sleep 0.01
        [ "$i" = 1000 ] && { echo "fake_mps_cost: no $1" >&2; exit 1; }
    done
    ready=("$1".ready.*)
    N=${#ready[@]}
}
dur() { # KIND PARAM: the made-up duration in ns
    local s=$N
    [ $mps = 1 ] && case $1 in spin | tile) s=1 ;; esac
    awk -v a="${SLOPE[$1]}" -v p="$2" -v s="$s" 'BEGIN { printf "%d", a * p * s }'
}
echo "I pid $$ sms 132 name Stand-in"
case ${1:-} in
calib)
    for k in spin sat triad tile; do echo "C $k ${SLOPE[$k]} 0"; done
    echo "I triad 4000 GB/s (3 arrays of 1024 MiB)" ;;
sched)
    go "$2"
    shift 2
    at=$T
    for g in "$@"; do
        IFS=: read -r kind param reps period <<<"$g"
        d=$(dur "$kind" "$param")
        for r in $(seq 0 $((reps - 1))); do
            s=$((at + r * period * 1000000))
            echo "K $kind $param $r $s $((s + d)) 0"
        done
        at=$((at + reps * period * 1000000))
    done ;;
stream) # GO KIND PARAM COUNT DELAY_MS: A, alone on its own time line
    go "$2"
    d=$(awk -v a="${SLOPE[$3]}" -v p="$4" 'BEGIN { printf "%d", a * p }')
    for i in $(seq 0 $(($5 - 1))); do
        echo "K $3 $4 $i $((T + i * d)) $((T + (i + 1) * d)) 0"
    done ;;
poke) # GO ITERS COUNT PERIOD_US DELAY_MS
    go "$2"
    base=20000
    [ "$N" -gt 1 ] && base=2000000 && [ $mps = 1 ] && base=30000
    for i in $(seq 0 $(($4 - 1))); do
        s=$((T + $6 * 1000000 + i * $5 * 1000))
        echo "L $i $((base + 1000 * i)) $s $((s + 10000)) 0"
    done ;;
launch)
    for r in $(seq 0 $(($3 - 1))); do echo "U launch $r $((4 + mps)).$r"; done
    echo "U rtt 10.0 12.0" ;;
*) echo "fake_mps_cost: $*?" >&2; exit 2 ;;
esac
echo "Test PASSED"
