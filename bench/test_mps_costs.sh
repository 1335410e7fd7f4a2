#!/usr/bin/env bash
# test_mps_costs.sh: the CPU half of bench/mps_costs.sh (CTest gpu__mps_costs_scripts):
#   the dry run lists the runs in order (calibration; a; b, c, d, e without MPS; then b-e as
#   clients of one daemon, started once after the last MPS-off run and stopped once), sizes the
#   kernels from the default calibration, stays within the budget, skips (and names) the runs past
#   a small --budget, and creates nothing; --parts a starts no daemon;
#   a whole run on a stand-in GPU (fake_mps_cost.sh as the probe, tests/gpu/fake_gpu.sh as
#   nvidia-smi and nvidia-cuda-mps-control): the start-file protocol, every run's lines in
#   raw.txt, the figures the stand-in's made-up durations imply in costs.csv, the tar;
#   mps_costs_table.py on hand-written lines: a missing solo, a late launch, a malformed line.
# Usage: test_mps_costs.sh. Fails without python3.
# shellcheck disable=SC2015 # `A && B || fail`: fail exits, it never runs after a true B
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
W=$(mktemp -d /tmp/mps-costs-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "no python3 (scripts/deps.sh installs it)"

# ---- the dry run
out=$(bash "$here/mps_costs.sh" --dry-run -o "$W/never" "$W/build") || fail "dry run exit $?"
echo "$out" | head -n 12
runs="calib-off-calib-n1 a-off-spin-n1 a-off-spin-n2 a-off-spin-n4 b-off-alone-n1 b-off-spin-n2 \
b-off-sat-n2 c-off-launch-n1 d-off-kinds-n1 d-off-kinds-n2 d-off-kinds-n4 d-off-kinds-n8 \
e-off-sat20-n1 e-off-sat20-n2 e-off-sat100-n1 e-off-sat100-n2 \
b-mps-alone-n1 b-mps-spin-n2 b-mps-sat-n2 c-mps-launch-n1 d-mps-kinds-n1 d-mps-kinds-n2 \
d-mps-kinds-n4 d-mps-kinds-n8 e-mps-sat20-n2 e-mps-sat100-n2 "
got=$(echo "$out" | sed -n 's/^== \([^ ]*\) .*/\1/p' | tr '\n' ' ')
[ "$got" = "$runs" ] || fail "runs: got '$got', wanted '$runs'"
[ "$(echo "$out" | grep -c '^+ nvidia-cuda-mps-control -d$')" = 1 ] || fail "MPS not started once"
[ "$(echo "$out" | grep -c '^+ echo quit | nvidia-cuda-mps-control$')" = 1 ] ||
    fail "MPS not stopped once"
line() { echo "$out" | grep -n "$1" | head -n 1 | cut -d: -f1; }
[ "$(line '^== e-off-sat100-n2')" -lt "$(line 'nvidia-cuda-mps-control -d')" ] &&
    [ "$(line 'nvidia-cuda-mps-control -d')" -lt "$(line '^== b-mps-alone-n1')" ] &&
    [ "$(line '^== e-mps-sat100-n2')" -lt "$(line 'echo quit')" ] ||
    fail "the daemon is not up exactly around the MPS runs"
# sizes from the default calibration: 2 ms of spin = 2e6 / 2.24 iterations; 100 ms of tile
echo "$out" | grep -q 'sched .*/go-a-off-spin-n2 spin:892857:20:36 spin:8928571:8:82 spin:89285714:4:550 &$' ||
    fail "part a's schedule for N=2"
[ "$(echo "$out" | grep -c 'sched .*/go-d-mps-kinds-n8 spin:44642857:3:1100 sat:359712:3:1100 triad:125:3:1100 tile:12500:3:1100 &$')" = 8 ] ||
    fail "part d: 8 clients with one kernel of each kind"
echo "$out" | grep -q '^+ \[A\] .* stream .*/go-b-mps-sat-n2 sat 179856 40 0 &$' || fail "b's A"
echo "$out" | grep -q '^+ \[B\] .* poke .*/go-b-mps-sat-n2 4464 200 5000 200 &$' || fail "b's B"
echo "$out" | grep -q '^+ \[-\] .* launch 10000 5 &$' || fail "c"
# part e: 20 us of sat = 2e4 / 278 steps, 2000 kernels a chain, two chains together
[ "$(echo "$out" | grep -c 'stream .*/go-e-mps-sat20-n2 sat 72 2000 0 &$')" = 2 ] &&
    [ "$(echo "$out" | grep -c 'stream .*/go-e-off-sat100-n1 sat 360 2000 0 &$')" = 1 ] ||
    fail "part e: chains of 2000 sat kernels, 1 alone and 2 together"
est=$(echo "$out" | sed -n 's/.* runs, estimated \([0-9.]*\) s of runs; skipped: none$/\1/p')
[ -n "$est" ] && awk -v e="$est" 'BEGIN { exit !(e > 60 && e < 200) }' ||
    fail "estimated '$est' s: 60 to 200 wanted, skipped none"
[ -e "$W/never" ] && fail "the dry run created $W/never"
out=$(bash "$here/mps_costs.sh" --dry-run --budget 30 -o "$W/never" "$W/build")
echo "$out" | grep -q '^== b-off-sat-n2 (~[0-9.]* s)$' || fail "--budget 30 skipped b-off-sat-n2"
echo "$out" | grep -q '^== c-off-launch-n1: SKIPPED (30 s gone + ~2 s > budget 30 s)$' ||
    fail "--budget 30 did not skip c-off-launch-n1"
echo "$out" | grep -q '; skipped: .*e-mps-sat100-n2$' || fail "the skipped runs are not listed"
out=$(bash "$here/mps_costs.sh" --dry-run --parts a -o "$W/never" "$W/build")
echo "$out" | grep -q 'nvidia-cuda-mps-control' && fail "--parts a started MPS"
[ "$(echo "$out" | grep -c '^== ')" = 4 ] || fail "--parts a: not calib + 3 runs"
bash "$here/mps_costs.sh" --dry-run --parts "a f" "$W/build" >/dev/null 2>&1
[ $? = 2 ] || fail "--parts f: exit 2 wanted"
echo "dry run: PASS"

# ---- a whole run on a stand-in GPU
F=$W/fake
mkdir -p "$F/bin" "$F/build/bench"
ln -s "$here/fake_mps_cost.sh" "$F/build/bench/mps_cost"
for p in nvidia-smi nvidia-cuda-mps-control; do ln -s "$src/tests/gpu/fake_gpu.sh" "$F/bin/$p"; done
FAKE_GPU_CALLS=$F/mps-calls PATH=$F/bin:$PATH bash "$here/mps_costs.sh" -o "$F/out" "$F/build" \
    >"$F/log" 2>&1
rc=$?
cat "$F/log"
[ $rc = 0 ] || fail "run on the stand-in GPU: exit $rc"
[ "$(tr '\n' ' ' <"$F/mps-calls")" = "-d quit " ] || fail "MPS calls: $(cat "$F/mps-calls")"
# every probe's lines, prefixed: 1+2+4 part-a probes x (20+8+4) kernels
[ "$(grep -c '^a off spin [124] [0-3] - K spin ' "$F/out/raw.txt")" = $((7 * 32)) ] ||
    fail "part a: $(grep -c '^a off ' "$F/out/raw.txt") lines in raw.txt"
[ "$(grep -c '^d mps kinds 8 [0-7] - K ' "$F/out/raw.txt")" = $((8 * 12)) ] || fail "part d N=8"
[ "$(grep -c '^b mps sat 2 1 B L ' "$F/out/raw.txt")" = 200 ] || fail "part b's pokes"
csvrow() { grep -qxF "$1" "$F/out/costs.csv" || fail "costs.csv has no row '$1'"; }
csvrow "a,off,spin 2.0ms,2,stretch_median,2,x"
csvrow "a,off,spin 200.0ms,4,stretch_median,4,x"
csvrow "a,off,spin 20.0ms,4,round_span_over_n_solo,1,x"
csvrow "b,off,alone,1,latency_median,119.5,us"
csvrow "b,off,spin,2,latency_p90,2179,us"
csvrow "b,mps,sat,2,latency_median,129.5,us"
csvrow "b,mps,sat,2,b_inside_a_share,1,"
csvrow "c,off,launch,1,us_per_launch_median,4.2,us"
csvrow "c,mps,launch,1,mps_over_off,1.2381,x"
csvrow "c,mps,launch,1,round_trip_p90,12,us"
csvrow "d,off,tile,4,slowdown_median,4,x"
csvrow "d,mps,tile,8,slowdown_median,1,x"
csvrow "d,mps,sat,8,slowdown_median,8,x"
csvrow "d,mps,triad,2,round_span_over_solo,2,x"
csvrow "calib,off,tile,1,ns_per_unit,8000,ns"
# part e: the stand-in's two chains lie on one time line, fully side by side: half the span of
# two chains one after the other, each kernel saving half its 20.016 us
csvrow "e,mps,sat20,2,span_over_n_solo,0.5,x"
csvrow "e,mps,sat20,2,saved_per_kernel,10.008,us"
grep -q '^| 2 | 2.00 | 40 | 2.00 | 2.00 | 2.00 | +0.000 | 1.000 |  |$' "$F/out/costs.txt" ||
    fail "part a's table row for N=2, 2 ms"
tar -tzf "$F/out.tar.gz" | grep -q '^out/costs.csv$' || fail "the tar"
echo "stand-in GPU run: PASS"

# ---- the table builder on hand-written lines
cat >"$W/raw.txt" <<'EOF'
a off spin 2 0 - K spin 100 0 0 4000000 0
a off spin 2 1 - K spin 100 0 0 4400000 3000000
a off spin 2 1 - K spin oops 0 0 4400000 0
this line is not one
d off kinds 1 0 - K sat 5 0 0 100000000 0
d mps kinds 2 0 - K sat 5 0 0 180000000 0
d mps kinds 2 1 - K sat 5 0 10000000 200000000 0
EOF
out=$(python3 "$here/mps_costs_table.py" "$W/raw.txt" "$W/raw.csv") || fail "table exit $?"
echo "$out"
echo "$out" | grep -q '^| 2 | (100 it.) | 2 | no solo |  |  |  |  | late 3.0 ms |$' ||
    fail "a row without its solo"
echo "$out" | grep -q '^| sat | mps | 2 | no solo | 2 |' || fail "d row without its solo"
echo "$out" | grep -q '^| sat | off | 1 | 100.0 | 1 | 1.00 |' || fail "d solo row"
python3 "$here/mps_costs_table.py" /dev/null "$W/empty.csv" >/dev/null && fail "no figures: exit 0"
echo "PASS"
