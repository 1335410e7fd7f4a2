#!/usr/bin/env bash
# fixtures.sh TRACEGEN DIR: writes the synthetic recordings the golden cases name as @FIX@/...
# (run.sh calls it when a case does), through the store writer (tests/cli/tracegen.c), so no
# binary file is kept in git and none is ever edited by hand.
#
# DIR/pool: a worker pool on one GPU without MPS, two files. Worker 101 runs 10 ms kernels alone
# for the first second (every other 10 ms: the solo references); at 1 s worker 102 joins and for
# a second both run the same kernel at once, each taking 20 ms (time-sliced, stretch 2). Captured
# ranges, as `tlview capture start --name` leaves them: "calm" (0.2-0.6 s, worker 101) and
# "slow" (1.21-1.6 s, both: the kernel at 1.2-1.22 s straddles its start), and an unnamed one of
# worker 102 never closed (1.7 s to its last write at 2 s: a killed process). NVTX ranges:
# "step" (1.0-1.5 s, worker 101), and "slow" (1.8-1.9 s, worker 102), which the captured name
# outranks. Times are on CLOCK_REALTIME from B = 1764000000 s.
set -euo pipefail
tg=$1 dir=$2
B=1764000000000000000 ms=1000000
mkdir -p "$dir/pool"
"$tg" "$dir/pool/w101.db" --pid 101 --train $B,50,$((10 * ms)),$((10 * ms)) \
    --train $((B + 1000 * ms)),25,$((20 * ms)),$((20 * ms)) \
    --capture $((B + 200 * ms)),$((B + 600 * ms)),calm,control,control \
    --capture $((B + 1210 * ms)),$((B + 1600 * ms)),slow,control,control \
    --range $((B + 1000 * ms)),$((500 * ms)),1,step
"$tg" "$dir/pool/w102.db" --pid 102 --train $((B + 1000 * ms)),25,$((20 * ms)),$((20 * ms)) \
    --capture $((B + 1210 * ms)),$((B + 1600 * ms)),slow,control,control \
    --capture $((B + 1700 * ms)),$((B + 2000 * ms)),-,start,- \
    --range $((B + 1800 * ms)),$((100 * ms)),1,slow
