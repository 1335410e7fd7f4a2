#!/usr/bin/env bash
# test_capture.sh: the CPU half of tests/gpu/capture.sh (CTest gpu__capture_scripts):
#   the dry run lists the six scenarios in order with their settings, the capture commands in
#   order (start, stop, start, stop; dump), within 4 minutes of GPU time, and creates nothing;
#   bad arguments exit 2, a non-empty output folder too, no GPU exits 77;
#   a whole run on the stand-in (capture_standin: the workers' loop with the collector's real
#   session, control FIFO and flight recorder over a simulated CUPTI), at --scale 0.1: every
#   scenario passes;
#   capture_judge.py fails a file with one kernel missing inside a range, one with a kernel
#   recorded outside every range, one with a kernel moved between two requests (saying how far),
#   one whose start calibration pair is 100 us off (the end pair disagrees), a profiler range
#   whose count differs from the worker's, and a range of the wrong length or reasons.
# Usage: test_capture.sh BUILD_DIR. Fails without python3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "$1" && pwd) || exit 2
W=$(mktemp -d /tmp/tlcapture-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "no python3"
[ -x "$B/tests/gpu/capture_standin" ] || fail "$B/tests/gpu/capture_standin is not built"

# ---- the dry run
out=$(bash "$here/capture.sh" --dry-run "$B" "$W/never") || fail "dry run exit $?"
got=$(echo "$out" | sed -n 's/^== \([a-z]*\):.*/\1/p' | tr '\n' ' ')
[ "$got" = "launch control profiler api delay flight " ] || fail "scenarios: '$got'"
[ -e "$W/never" ] && fail "the dry run created $W/never"
est=$(echo "$out" | sed -n 's/^capture.sh: about \([0-9]*\) s of GPU time$/\1/p')
[ -n "$est" ] && [ "$est" -le 240 ] || fail "GPU time estimate '$est' s, at most 240 wanted"
[ "$(echo "$out" | grep -c "bench/launch' 200000")" = 9 ] || fail "3 rounds x 3 launch runs wanted"
echo "$out" | grep -q "TLVIEW_CAPTURE=control TLVIEW_CONTROL_DIR='$W/never/ctl' TLVIEW_OUTPUT='$W/never/launch/outside.%p.db'" ||
    fail "the launch run outside a range"
caps=$(echo "$out" | sed -n 's/^+ .*tlview capture \([a-z]*\)\( -n [a-z]*\)\{0,1\} PID1 PID2 PID3 PID4 -d .*/\1\2/p' | tr '\n' ',')
[ "$caps" = "start -n first,stop,start -n second,stop,dump -n dump," ] || fail "capture commands: '$caps'"
for want in "TLVIEW_CAPTURE=control $B/tests/gpu/capture_server --seconds 30 " \
    "TLVIEW_CAPTURE=cudaProfilerApi $B/tests/gpu/capture_server --requests 3200 --profiler-ranges 200:1200,2000:3000 " \
    "TLVIEW_CAPTURE_DELAY=2.000s TLVIEW_CAPTURE_DURATION=3.000s $B/tests/gpu/capture_server --seconds 7.000 " \
    "TLVIEW_FLIGHT=30.000s $B/tests/gpu/capture_server --seconds 44 " \
    "CUDA_INJECTION64_PATH=$B/collector/libcollect.so TLVIEW_OUTPUT=$W/never/flight/out.%p.db"; do
    echo "$out" | grep -qF -- "$want" || fail "the dry run lacks '$want'"
done
[ "$(echo "$out" | grep -c 'capture_server --seconds 30 ')" = 4 ] || fail "4 control workers wanted"
echo "$out" | grep -q -- '--name flight-dump --dir '"$W"'/never/flight/dump --logs '"$W"'/never/flight --files 4 --flight 30.000' ||
    fail "the dump's judge"
for bad in "--scale 0" "--scale x" "--workers 0" "--frobnicate"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    bash "$here/capture.sh" --dry-run $bad "$B" "$W/never" >/dev/null 2>&1
    [ $? = 2 ] || fail "$bad: exit 2 wanted"
done
bash "$here/capture.sh" --dry-run "$B" >/dev/null 2>&1
[ $? = 2 ] || fail "no OUTDIR: exit 2 wanted"
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    bash "$here/capture.sh" "$B" "$W/gpu" >/dev/null 2>&1
    [ $? = 77 ] || fail "no GPU: exit 77 wanted"
fi
mkdir -p "$W/full" && touch "$W/full/x"
bash "$here/capture.sh" --standin "$B" "$W/full" >/dev/null 2>&1
[ $? = 2 ] || fail "a non-empty OUTDIR: exit 2 wanted"
echo "dry run: PASS"

# ---- a whole run on the stand-in
S=$W/standin
bash "$here/capture.sh" --standin --scale 0.1 "$B" "$S" >"$W/standin.log" 2>&1
rc=$?
tail -n 8 "$W/standin.log"
[ $rc = 0 ] || { cat "$W/standin.log"; fail "the stand-in run exits $rc"; }
for n in control profiler api delay flight-dump flight-exit; do
    grep -q "^PASS $n: [1-9][0-9]* checks passed, 0 failed$" "$S/results.txt" || fail "$n did not pass"
done
grep -q '^capture.sh: 6 passed, 0 failed: PASS$' "$W/standin.log" || fail "the summary line"
[ "$(ls "$S"/flight/dump/*.db | wc -l)" = 4 ] || fail "4 dumps wanted in $S/flight/dump"
echo "stand-in run: PASS"

# ---- the judge fails what it must
judge() { python3 "$here/capture_judge.py" "$@" >"$W/judge.out" 2>&1; }
C=$W/bad-control
mkdir -p "$C"
f=$(ls "$S"/control/*.db | head -1)
pid=$(basename "$f" .db)
pid=${pid#out.}
cp "$f" "$C/" && cp "$S/control/req.$pid.log" "$C/"
args=(--dir "$C" --name bad --ranges 2 --range-s 1 --tol-s 0.6 --reasons control-control,control-control)
judge "${args[@]}" || { cat "$W/judge.out"; fail "the copied file does not pass to begin with"; }
# one kernel of a request in the middle of range 1 goes
python3 - "$C/out.$pid.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s, d = db.execute("SELECT start, dur FROM capture WHERE id = 1").fetchone()
db.execute("DELETE FROM kernel WHERE rowid = (SELECT rowid FROM kernel WHERE start > ? ORDER BY start LIMIT 1)", (s + d // 2,))
db.commit()
EOF
judge "${args[@]}" && fail "a kernel missing inside range 1 passed"
grep -q "^FAIL bad pid=$pid range 1 .*incomplete" "$W/judge.out" || { cat "$W/judge.out"; fail "the missing kernel's message"; }
# a kernel recorded between the two ranges
cp "$f" "$C/"
python3 - "$C/out.$pid.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(s1, d1), (s2, _) = db.execute("SELECT start, dur FROM capture ORDER BY id").fetchall()
mid = (s1 + d1 + s2) // 2
# the kernel of a request the worker made there: copy a row and move it into the gap
db.execute("INSERT INTO kernel SELECT ?, dur, launch_id, correlation_id FROM kernel LIMIT 1", (mid,))
db.commit()
EOF
judge "${args[@]}" && fail "a kernel outside the ranges passed"
grep -q "^FAIL bad pid=$pid outside the ranges .*recorded [1-9]" "$W/judge.out" ||
    grep -q "kernels outside every request" "$W/judge.out" || { cat "$W/judge.out"; fail "the stray kernel's message"; }
# a kernel of the file moved into the gap between two requests in the middle of range 1 (~250 us
# from either): the judge names it, and how far it lies from a request
cp "$f" "$C/"
python3 - "$C/out.$pid.db" "$C/req.$pid.log" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t0 = int(db.execute("SELECT value FROM meta WHERE key = 't0'").fetchone()[0])
off = db.execute("SELECT realtime - cupti FROM calibration WHERE label = 'start'").fetchone()[0]
s, d = db.execute("SELECT start, dur FROM capture WHERE id = 1").fetchone()
mid = t0 + off + s + d // 2
reqs = sorted((int(a), int(b)) for _, a, b, _ in (line.split() for line in open(sys.argv[2])))
i = next(i for i, r in enumerate(reqs) if r[0] > mid)
gap = (reqs[i][1] + reqs[i + 1][0]) // 2
db.execute("INSERT INTO kernel SELECT ?, dur, launch_id, correlation_id FROM kernel LIMIT 1",
           (gap - off - t0,))
db.commit()
EOF
judge "${args[@]}" && fail "a kernel between two requests passed"
grep -q "^FAIL bad pid=$pid outside the ranges .*; 1 kernels outside every request (the farthest [1-9][0-9]*\.[0-9] us from request" "$W/judge.out" ||
    { cat "$W/judge.out"; fail "the misplaced kernel's message"; }
grep -q "^clock bad pid=$pid: .* 1 strays, the farthest [1-9][0-9]*\.[0-9] us from a request$" "$W/judge.out" ||
    { cat "$W/judge.out"; fail "the misplaced kernel's clock line"; }
# a start pair 100 us off, as the collector wrote it when it bracketed the first (slow)
# cuptiGetTimestamp alone: the end pair disagrees, and tlview would place the kernels 100 us early
cp "$f" "$C/"
python3 - "$C/out.$pid.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE calibration SET realtime = realtime - 100000 WHERE label = 'start'")
db.commit()
EOF
judge "${args[@]}" && fail "a start pair 100 us off passed"
grep -q "the end calibration pair is +100.0 us off the start pair (tolerance 20.0 us)" "$W/judge.out" ||
    { cat "$W/judge.out"; fail "the calibration's message"; }
# the wrong length and the wrong reasons
cp "$f" "$C/"
judge --dir "$C" --name bad --ranges 2 --range-s 5 --tol-s 0.6 && fail "a 1 s range passed as 5 s"
grep -q "s long, 5.0 +- 0.6 expected" "$W/judge.out" || fail "the length's message"
judge --dir "$C" --name bad --ranges 1 && fail "2 ranges passed as 1"
judge --dir "$C" --name bad --reasons delay-duration && fail "control ranges passed as delay-duration"
grep -q "reasons control-control, delay-duration expected" "$W/judge.out" || fail "the reasons' message"
# a profiler range whose count is not the worker's
P=$W/bad-profiler
mkdir -p "$P"
cp "$S"/profiler/*.db "$S"/profiler/req.*.log "$P/"
sed 's/launched \([0-9]*\)$/launched 1\1/' "$S/profiler/stdout.log" >"$P/stdout.log"
judge --dir "$P" --name badprof --profiler-stdout "$P/stdout.log" && fail "a wrong profiler count passed"
grep -q "the worker launched 1[0-9]* between cudaProfilerStart and cudaProfilerStop" "$W/judge.out" ||
    { cat "$W/judge.out"; fail "the profiler count's message"; }
# --api-calls: the stand-in records no API calls, so its file fails; with a launch call per
# kernel it passes; with one query (cudaGetLastError) in range 2 it fails again
A=$W/api
mkdir -p "$A"
cp "$S"/api/*.db "$S"/api/req.*.log "$A/"
judge --dir "$A" --name api --ranges 2 --api-calls && fail "a range without launch calls passed --api-calls"
grep -q "no launch call recorded in it" "$W/judge.out" || { cat "$W/judge.out"; fail "the no-call message"; }
grep -q "[1-9][0-9]* kernels without their launch call" "$W/judge.out" || { cat "$W/judge.out"; fail "the orphans' message"; }
python3 - "$A"/*.db <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO strings(text, demangled) VALUES ('cudaLaunchKernel', 'cudaLaunchKernel')")
sid = db.execute("SELECT max(id) FROM strings").fetchone()[0]
db.execute("INSERT INTO api(start, dur, process_id, thread_id, correlation_id, domain, cbid, name_id)"
           " SELECT start - 2000, 1000, 1, 1, correlation_id, 1, 211, ? FROM kernel", (sid,))
db.commit()
EOF
judge --dir "$A" --name api --ranges 2 --api-calls || { cat "$W/judge.out"; fail "a launch call per kernel failed --api-calls"; }
grep -q "^PASS api pid=.* range 2 .*queries 0" "$W/judge.out" || { cat "$W/judge.out"; fail "range 2's API line"; }
python3 - "$A"/*.db <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO strings(text, demangled) VALUES ('cudaGetLastError_v3020', 'cudaGetLastError_v3020')")
sid = db.execute("SELECT max(id) FROM strings").fetchone()[0]
s, d = db.execute("SELECT start, dur FROM capture WHERE id = 2").fetchone()
db.execute("INSERT INTO api(start, dur, process_id, thread_id, correlation_id, domain, cbid, name_id)"
           " VALUES (?, 100, 1, 1, 999999999, 1, 10, ?)", (s + d // 2, sid))
db.commit()
EOF
judge --dir "$A" --name api --ranges 2 --api-calls && fail "a query inside range 2 passed --api-calls"
grep -q "^FAIL api pid=.* range 2 .*1 queries recorded in it" "$W/judge.out" || { cat "$W/judge.out"; fail "the query's message"; }
echo "judge: PASS"
echo "test_capture.sh: PASS"
