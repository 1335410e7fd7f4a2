#!/usr/bin/env bash
# test_judge.sh: the judging half of tests/gpu/record_demos.sh (--judge) on made-up recordings, so
# that its checks are tested on a CPU: a one-thread kernel 448 ms alone, 2 copies time-sliced
# (~2.1x), 2 copies under MPS (1.0x), the copies' own wall times giving the gain inside the
# interval tlview predicts, must pass; the same under MPS stretched 1.6x must fail with both
# reasons named, and a copy's missing wall time too; Triton's gain from RESULT lines (their
# throughput) inside the predicted interval passes, outside it (MPS clients slower than alone, the
# slowdown printed beside it) fails, and so does a copy without its RESULT line. Last, every
# report is removed and --judge --tlview makes them again, as recording does: the same rows, and
# the seed's form (a parent whose kernel ran before its 8 workers', measured while the workers
# ran together, against the one-copy Triton run) inside its interval.
# Usage: test_judge.sh TLVIEW MAKE_TRACE RECORD_DEMOS_SH. Fails without python3.
set -u
TL=$1 MK=$2 SCRIPT=$3
W=$(mktemp -d /tmp/tljudge.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "no python3 (scripts/deps.sh installs it)"

# manifest DIR MPS FILE...: the run's manifest.json (its files, quoted; MPS on or off) and exit
# status, as `tlview record` leaves them
manifest() {
    local d=$1 started=false
    [ "$2" = on ] && started=true
    shift 2
    printf '{"files": [%s], "mps": {"enabled": %s, "started": %s, "stopped": %s}}\n' \
        "$(IFS=,; echo "$*")" "$started" "$started" "$started" >"$d/manifest.json"
    echo 0 >"$d.rc"
}
# run DEMO MPS N KIND KERNELS_PER_COPY...: one made-up recording (every copy gets the same kernels)
run() {
    local demo=$1 mps=$2 n=$3 kind=$4 d files=() i
    shift 4
    d=$W/$demo/mps-$mps/n$n
    mkdir -p "$d"
    for i in $(seq "$n"); do
        "$MK" "$d/$demo.$((100 + i)).db" $((100 + i)) "$kind" "$@" || fail "make_trace"
        files+=("\"$d/$demo.$((100 + i)).db\"")
    done
    manifest "$d" "$mps" "${files[@]}"
    : >"$d.log"
    local base=()
    [ "$demo/$mps/$n" != "$demo/off/1" ] && base=(--baseline "$W/$demo/mps-off/n1/$demo.101.db")
    "$TL" report --format json "${base[@]}" "$d"/*.db >"$d.report.json" || fail "tlview report $d"
    if [ "$mps" = on ]; then # as record_demos.sh does: the MPS-off run against this one
        local off=$W/$demo/mps-off/n$n cmp=() f
        for f in "$d"/*.db; do cmp+=(--compare "$f"); done
        "$TL" report --format json "${base[@]}" "${cmp[@]}" "$off"/*.db >"$d.compare.json" ||
            fail "tlview report --compare $d"
    fi
}
# walls DIR MS...: each copy's own wall time line, as spin prints it (copies share one log)
walls() {
    local d=$1 ms
    shift
    for ms in "$@"; do echo "spin: wall $ms ms from the start signal (CLOCK_REALTIME 0 ns) to the last kernel's end"; done >"$d.log"
}
K=_Z18testMaxFlopsKernelPfi
run spin off 1 1 "0:448:$K:1"
run spin off 2 1 "0:941:$K:1"
run spin on 2 2 "0:448:$K:1"
walls "$W/spin/mps-off/n1" 448.2
walls "$W/spin/mps-off/n2" 940.6 941.0
walls "$W/spin/mps-on/n2" 448.0 447.9

out=$(bash "$SCRIPT" --judge "$W")
rc=$?
echo "$out"
[ $rc = 0 ] || fail "judge exit $rc on good recordings"
echo "$out" | grep -q '^| spin | off | 2 | 0 | 2 | time-sliced | 2.10 | 2.10 | - | - | - | PASS |$' ||
    fail "time-sliced row"
# 941.0 / 448.0 ms = 2.1004: inside the interval predicted from the time-sliced run (941 / 448)
echo "$out" | grep -q '^| spin | on | 2 | 0 | 2 | concurrent | 1.00 | 1.00 | 2.100-2.100 | 2.100 | 2.100 | PASS |$' ||
    fail "MPS row"

# A copy whose wall time is missing from the log: no gain, the row fails
walls "$W/spin/mps-on/n2" 448.0
out=$(bash "$SCRIPT" --judge "$W")
[ $? = 1 ] || fail "judge passed with a copy's wall time missing"
echo "$out" | grep -q "^| spin | on | 2 | .* | FAIL: no gain: a copy's own measure is missing from a log |\$" ||
    fail "missing wall time row"

rm -rf "$W/spin/mps-on"
run spin on 2 2 "0:720:$K:1"
walls "$W/spin/mps-on/n2" 720.1 720.0
out=$(bash "$SCRIPT" --judge "$W")
rc=$?
echo "$out"
[ $rc = 1 ] || fail "judge exit $rc on a stretched MPS run, 1 expected"
want='^| spin | on | 2 | .* | FAIL: MPS stretch 1.61 (contended), 1.0 +-10% wanted; measured gain 1.307 outside the predicted 2.100-2.100 |$'
echo "$out" | grep -q "$want" ||
    fail "stretched MPS row"

# Triton: 4 requests of 450 ms alone; 2 copies time-sliced (900 ms each) then under MPS (470 ms).
T=_Z24single_sm_compute_kernelPfi
req() { local d=$1 i; for i in 0 1 2 3; do echo "$((i * $2)):$2:$T:1"; done; }
# results DIR END_MS COPIES: each copy's RESULT line, 4 requests from 0 to END_MS
results() {
    local r
    for r in $(seq "$3"); do
        echo "RESULT {\"requests\": 4, \"start_ns\": 0, \"end_ns\": $(($2 * 1000000)), \"ok\": true}"
    done >"$1.log"
}
run triton off 1 1 $(req x 450)
run triton off 2 1 $(req x 900)
run triton on 2 2 $(req x 450)
# 4 copies: time-sliced 1800 ms each, under MPS 675 ms each (the clients slow each other 1.5x)
run triton off 4 1 $(req x 1800)
run triton on 4 2 $(req x 675)
results "$W/triton/mps-off/n1" 1800 1
results "$W/triton/mps-off/n2" 3600 2
results "$W/triton/mps-on/n2" 1800 2
results "$W/triton/mps-off/n4" 7200 4
results "$W/triton/mps-on/n4" 2700 4
out=$(bash "$SCRIPT" --judge "$W")
rc=$?
echo "$out"
[ $rc = 1 ] || fail "judge exit $rc with the stretched runs still there, 1 expected"
# side by side at solo speed: 2.000x, inside the interval 2.000-2.000
want='^| triton | on | 2 | 0 | 2 | concurrent | 1.00 | 1.00 | 2.000-2.000 | 2.000 | 2.000 | PASS |$'
echo "$out" | grep -q "$want" ||
    fail "triton gain row"
# 1.5x slower side by side than alone: 2.667x, under the bottom (one-block kernels: the worst case packs them as well)
want='^| triton | on | 4 | 0 | 4 | contended | 1.50 | 1.50 | 4.000-4.000 | 2.667 | 2.667 | FAIL: measured gain 2.667 outside the predicted 4.000-4.000 |$'
echo "$out" | grep -q "$want" ||
    fail "triton row with MPS clients slowing each other down"

# Copies share one log: two RESULT records run together on one line still count, both.
results "$W/triton/mps-on/n2" 1800 2
printf '%s' "$(head -n 1 "$W/triton/mps-on/n2.log")" >"$W/joined"
tail -n +2 "$W/triton/mps-on/n2.log" >>"$W/joined"
mv "$W/joined" "$W/triton/mps-on/n2.log"
out=$(bash "$SCRIPT" --judge "$W")
echo "$out"
want='^| triton | on | 2 | 0 | 2 | concurrent | 1.00 | 1.00 | 2.000-2.000 | 2.000 | 2.000 | PASS'
echo "$out" | grep -q "$want" ||
    fail "two RESULT records on one line"
# A copy that printed no RESULT: the row fails.
results "$W/triton/mps-on/n2" 1800 1
out=$(bash "$SCRIPT" --judge "$W")
echo "$out"
echo "$out" | grep -q '^| triton | on | 2 | .* | FAIL: no gain: .*; 1 RESULT lines, 2 wanted' ||
    fail "a missing RESULT record"
results "$W/triton/mps-on/n2" 1800 2

# The seed's form, one run of 9 processes each way: a parent with a 1 ms check kernel, then 8
# workers from 1 s with 4 requests each, 8-way time-sliced (3600 ms a request) or under MPS at
# solo speed (450 ms): 8.000x by their throughput; --measure together leaves the parent out
# (over the whole recording, its kernel 1 s before theirs, the top would be ~5.5x).
seed() { # seed MPS REQUEST_MS
    local d=$W/triton_seed/mps-$1/n1 kind=1 i r k files=()
    [ "$1" = on ] && kind=2
    mkdir -p "$d"
    "$MK" "$d/p.100.db" 100 $kind "0:1:$T:1" || fail "make_trace"
    files+=("\"$d/p.100.db\"")
    for i in $(seq 8); do
        k=()
        for r in 0 1 2 3; do k+=("$((1000 + r * $2)):$2:$T:1"); done
        "$MK" "$d/p.$((100 + i)).db" $((100 + i)) $kind "${k[@]}" || fail "make_trace"
        files+=("\"$d/p.$((100 + i)).db\"")
    done
    manifest "$d" "$1" "${files[@]}"
    echo "RESULT {\"requests\": 32, \"start_ns\": 1000000000, \"end_ns\": $(((1000 + 4 * $2) * 1000000)), \"ok\": true}" >"$d.log"
}
seed off 3600
seed on 450
rm -f "$W"/*/mps-*/n*.report.json "$W"/*/mps-*/n*.compare.json
bash "$SCRIPT" --judge "$W" >/dev/null && fail "judge passed without reports"
out=$(bash "$SCRIPT" --judge "$W" --tlview "$TL")
echo "$out"
for want in '^| spin | on | 2 | 0 | 2 | contended | .* | FAIL: MPS stretch 1.61 (contended)' \
    '^| triton | on | 2 | 0 | 2 | concurrent | 1.00 | 1.00 | 2.000-2.000 | 2.000 | 2.000 | PASS |$' \
    '^| triton | on | 4 | 0 | 4 | contended | 1.50 | 1.50 | 4.000-4.000 | 2.667 | 2.667 | FAIL' \
    '^| triton_seed | on | 1 | 0 | 9 | concurrent | 1.00 | 0.97 | 3.101-8.000 | 8.000 | 8.000 | PASS |$'; do
    echo "$out" | grep -q "$want" || fail "after --tlview, no row $want"
done
bash "$SCRIPT" --tlview "$TL" >/dev/null 2>&1
[ $? = 2 ] || fail "--tlview without --judge not refused"
echo "PASS"
