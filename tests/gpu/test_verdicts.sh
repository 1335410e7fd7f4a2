#!/usr/bin/env bash
# test_verdicts.sh: the CPU half of tests/gpu/verdicts.sh, so its logic is tested without a GPU:
#   the dry run lists every scenario, starts and stops the MPS daemon once, puts the second
#   process of offset-P P% of a kernel (224 ms) after the first, and creates nothing; --only
#   records only what it names (no daemon when it names no MPS scenario);
#   a whole run on a stand-in GPU (fake_gpu.sh as nvidia-smi, nvidia-cuda-mps-control and the
#   CUDA programs, which write their trace files with MAKE_TRACE): every scenario recorded with its
#   `expected` file, log and summary line, the MPS daemon started and stopped once, the offsets
#   taken from solo-spin's kernel, the judge's table, the saved reports, the tar;
#   verdicts_judge.py on an OUTDIR made from the committed spin recordings
#   (samples/spin/traces) passes the right rows, fails a wrong verdict and a stretch out of bounds
#   (exit 1), reads a Chrome trace, and takes the stretch from the view's `stretch`;
#   verdicts_summary.py counts files and kernels and checks the compute API kind.
# Usage: test_verdicts.sh TLVIEW BUILD_DIR MAKE_TRACE. Fails without python3.
# shellcheck disable=SC2015 # `A && B || fail`: fail exits, it never runs after a true B
set -u
TL=$1 B=$2 MK=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
W=$(mktemp -d /tmp/tlverdicts-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "no python3 (scripts/deps.sh installs it)"

# ---- the dry run
out=$(bash "$here/verdicts.sh" --dry-run "$B" "$W/never") || fail "dry run exit $?"
echo "$out" | head -n 40
all="solo-spin solo-sat solo-uneven ctx-plain-2 ctx-plain-2-solo-first ctx-plain-4 \
ctx-plain-4-solo-first ctx-green-2 ctx-green-2-solo-first ctx-green-primary ctx-plain-3 \
ctx-green-3 green-proc-mps-off offset-25-mps-off offset-50-mps-off offset-75-mps-off uneven-mps-off streams-procs-mps-off solo-torch torch-mps-off \
solo-kineto kineto-mps-off solo-torch-heavy torch-heavy-mps-off solo-kineto-heavy \
kineto-heavy-mps-off solo-sat50 mps-pct50 mps-sat-2 offset-25-mps-on offset-50-mps-on \
offset-75-mps-on uneven-mps-on streams-procs-mps-on torch-mps-on kineto-mps-on torch-heavy-mps-on kineto-heavy-mps-on "
got=$(echo "$out" | sed -n 's/^== //p' | tr '\n' ' ')
[ "$got" = "$all" ] || fail "scenarios: got '$got', wanted '$all'"
[ "$(echo "$out" | grep -c '^+ nvidia-cuda-mps-control -d$')" = 1 ] || fail "MPS not started once"
[ "$(echo "$out" | grep -c '^+ echo quit | nvidia-cuda-mps-control$')" = 1 ] ||
    fail "MPS not stopped once"
mps_line=$(echo "$out" | grep -n 'nvidia-cuda-mps-control -d' | cut -d: -f1)
first_on=$(echo "$out" | grep -n '^== solo-sat50$' | cut -d: -f1)
last_off=$(echo "$out" | grep -n '^== kineto-mps-off$' | cut -d: -f1)
[ "$last_off" -lt "$mps_line" ] && [ "$mps_line" -lt "$first_on" ] ||
    fail "MPS started at line $mps_line, not between the MPS-off and MPS-on scenarios"
[ -e "$W/never" ] && fail "the dry run created $W/never"
for p in 25 50 75; do
    for m in off on; do
        starts=$(echo "$out" | sed -n "/^== offset-$p-mps-$m\$/,/^== /p" |
            sed -n 's/.*--start-at \([0-9]*\) &$/\1/p' | tr '\n' ' ')
        read -r a b <<<"$starts"
        [ -n "${b:-}" ] && [ $((b - a)) = $((224000 * 10 * p)) ] ||
            fail "offset-$p-mps-$m starts '$starts': $((224000 * 10 * p)) ns apart wanted"
    done
done
echo "$out" | grep -q 'contexts green-primary --iters 1e8 &$' || fail "green-primary command"
echo "$out" | grep -q 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 TLVIEW_NPROCS=2 TLVIEW_RANK=1 ' ||
    fail "the second 50% MPS client"
echo "$out" | grep -q 'env python3 .*torch_workers.py --workers 4 --profile .*/kineto-mps-on &$' ||
    fail "kineto runs without the collector"
out=$(bash "$here/verdicts.sh" --dry-run --only "ctx-plain-2 offset-50-mps-off" "$B" "$W/never")
got=$(echo "$out" | sed -n 's/^== //p' | tr '\n' ' ')
[ "$got" = "ctx-plain-2 offset-50-mps-off " ] || fail "--only ran '$got'"
echo "$out" | grep -q 'nvidia-cuda-mps-control' && fail "--only without MPS scenarios started MPS"
out=$(bash "$here/verdicts.sh" --dry-run --only "mps-sat-2" "$B" "$W/never")
[ "$(echo "$out" | grep -c 'nvidia-cuda-mps-control')" = 2 ] || fail "--only mps-sat-2: no MPS"
echo "dry run: PASS"

# ---- a whole run on a stand-in GPU (fake_gpu.sh under the names of the tools and programs)
F=$W/fake
mkdir -p "$F/bin" "$F/build/collector" "$F/build/cli" "$F/build/samples/spin" \
    "$F/build/samples/saturating" "$F/build/tests/gpu"
: >"$F/build/collector/libcollect.so"
ln -s "$(cd "$(dirname "$TL")" && pwd)/$(basename "$TL")" "$F/build/cli/tlview"
for p in bin/nvidia-smi bin/nvidia-cuda-mps-control bin/python3 build/samples/spin/spin \
    build/samples/saturating/saturating build/tests/gpu/contexts build/tests/gpu/burst; do
    ln -s "$here/fake_gpu.sh" "$F/$p"
done
FAKE_GPU_CALLS=$F/mps-calls FAKE_GPU_MK=$MK FAKE_GPU_PY=$(command -v python3) \
    FAKE_GPU_CHROME=$src/tests/importers/chrome/basic/input.json PATH=$F/bin:$PATH \
    bash "$here/verdicts.sh" --tar "$F/run.tar.gz" "$F/build" "$F/run" >"$F/out.txt" 2>&1
rc=$?
cat "$F/out.txt"
# 1 is fine: the judge may fail the made-up kernels; 2 or 77 are not
[ $rc = 0 ] || [ $rc = 1 ] || fail "run on the stand-in GPU: exit $rc"
for n in $all; do
    [ -s "$F/run/$n/expected" ] && [ -s "$F/run/$n/log" ] || fail "$n: no expected file or log"
    grep -q "^$n | .* | OK\$" "$F/run/summary.txt" || fail "$n: no OK line in summary.txt"
    grep -q "^| $n | " "$F/run/judge.txt" || fail "$n: no row in the judge's table"
done
[ "$(grep -c '^| ' "$F/run/judge.txt")" = 39 ] || fail "judge.txt: not a head and 38 rows"
[ "$(tr '\n' ' ' <"$F/mps-calls")" = "-d quit " ] || fail "MPS calls: $(cat "$F/mps-calls")"
grep -q 'nvidia-cuda-mps processes left at the end: 0' "$F/out.txt" || fail "no final MPS check"
# the clients of the daemon are the MPS scenarios' (compute API kind 2), the others not
grep -q '^mps-sat-2 | .*p\.[0-9]*\.db: fill_sms' "$F/run/summary.txt" || fail "mps-sat-2 line"
# the offsets are taken from solo-spin's kernel (224 ms here): 50% is 112 ms
starts=$(sed -n 's/^spin --iters 1e8 --start-at \([0-9]*\)$/\1/p' "$F/run/offset-50-mps-on/log" |
    sort -n | tr '\n' ' ')
read -r a b <<<"$starts"
[ -n "${b:-}" ] && [ $((b - a)) = 112000000 ] || fail "offset-50-mps-on starts: '$starts'"
grep -q '^torch --workers 4 --profile .*/kineto-mps-on$' "$F/run/kineto-mps-on/log" ||
    fail "kineto-mps-on command"
tar -tzf "$F/run.tar.gz" | grep -q '^run/ctx-green-primary/expected$' || fail "the tar"
[ -s "$F/run/reports/mps-sat-2.json" ] || fail "no saved reports"
echo "stand-in GPU run: PASS"

# ---- the judge on the committed spin recordings (2e8 iterations: 448 ms alone)
O=$W/out
T=$src/samples/spin/traces
scen() { # NAME SOURCE_FOLDER EXPECTED_LINES...
    local name=$1 from=$2
    shift 2
    mkdir -p "$O/$name"
    cp "$from"/*.db "$O/$name/"
    printf '%s\n' "$@" >"$O/$name/expected"
    echo "a log line" >"$O/$name/log"
}
scen solo-spin "$T/mps-off/n1" "verdict: solo"
scen spin-2-off "$T/mps-off/n2" "# two processes, time-sliced" "verdict: time-sliced" \
    "stretch: 1.7 2.3" "baseline: solo-spin"
scen spin-4-on "$T/mps-on/n4" "verdict: concurrent|contended" "stretch: 0.9 1.15" \
    "baseline: solo-spin"
scen spin-4-any "$T/mps-off/n4" "verdict: any" "baseline: solo-spin"
scen wrong-verdict "$T/mps-off/n2" "verdict: concurrent" "baseline: solo-spin"
scen wrong-stretch "$T/mps-off/n4" "verdict: time-sliced" "stretch: 1.7 2.3" "baseline: solo-spin"
mkdir -p "$O/chrome-1"
cp "$src/tests/importers/chrome/basic/input.json" "$O/chrome-1/trace.0.json"
echo "verdict: solo" >"$O/chrome-1/expected"

out=$(python3 "$here/verdicts_judge.py" "$TL" "$O")
rc=$?
echo "$out"
[ $rc = 1 ] || fail "judge exit $rc with two wrong rows, 1 wanted"
# Rows from the real tlview: its numbers may move as its rules change, the judge's logic not.
N='[0-9]*\.[0-9][0-9]'
row() { echo "$out" | grep -qx "$1" || fail "no row matching '$1'"; }
row "| solo-spin | solo | solo | - | $N | PASS |"
row "| spin-2-off | time-sliced 1.7-2.3 | time-sliced | 2\.[0-2][0-9] | $N | PASS |"
row "| spin-4-on | concurrent or contended 0.9-1.15 | concurrent | 1\.0[0-9] | $N | PASS |"
row "| spin-4-any | any | time-sliced | 4\.[0-9]* | $N | record |"
row "| wrong-verdict | concurrent | time-sliced | $N | $N | FAIL: verdict time-sliced, concurrent wanted |"
row "| wrong-stretch | time-sliced 1.7-2.3 | time-sliced | 4\.[0-9]* | $N | FAIL: stretch 4\.[0-9]* outside 1.7-2.3 |"
row "| chrome-1 | solo | solo | - | $N | PASS |"
row "verdicts_judge: 5 passed, 2 failed"
out=$(python3 "$here/verdicts_judge.py" --only spin-2-off --only chrome-1 --save "$W/rep" "$TL" \
    "$O") || fail "judge exit $? on passing rows only: $out"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))["devices"]' "$W/rep/spin-2-off.json" ||
    fail "--save wrote no report"
# A missing baseline and a broken expected file are failed rows, not crashes.
echo "baseline: nowhere" >>"$O/spin-4-any/expected"
echo "nonsense" >"$O/chrome-1/expected"
out=$(python3 "$here/verdicts_judge.py" --only spin-4-any --only chrome-1 "$TL" "$O")
[ $? = 1 ] || fail "judge exit 0 with a missing baseline"
echo "$out" | grep -q '^| spin-4-any | .* | FAIL: baseline nowhere has no trace files |$' ||
    fail "missing baseline row: $out"
echo "$out" | grep -q "^| chrome-1 | ? | .* | FAIL: .*not \`key: value\`" ||
    fail "broken expected row: $out"

# The verdict, stretch and overlap share of the JSON view (a stand-in tlview prints the report).
cat >"$W/fake-tlview" <<'EOF'
#!/bin/sh
echo '{"devices": [{"verdict": "queued", "stretch": 1.05, "overlap_of_busy": 0.1}]}'
EOF
chmod +x "$W/fake-tlview"
printf 'verdict: queued|contended\nstretch: 1 1.1\n' >"$O/spin-4-any/expected"
out=$(python3 "$here/verdicts_judge.py" --only spin-4-any "$W/fake-tlview" "$O")
echo "$out" | grep -qxF "| spin-4-any | queued or contended 1-1.1 | queued | 1.05 | 0.10 | PASS |" ||
    fail "the view's stretch: $out"
echo "judge: PASS"

# ---- the summary line
out=$(python3 "$here/verdicts_summary.py" --name n4 --procs 4 --api-kind 2 --wall-ms 5 \
    "$T/mps-on/n4") || fail "summary of mps-on/n4: $out"
echo "$out"
echo "$out" | grep -q '^n4 | 4 procs (largest file 0.1 MB) | 4 kernels | wall 5 ms | span 44[0-9].[0-9] ms | starts 0.0, 0.0, 0.0, 0.0 | ms .*: testMaxFlopsKernel 44[0-9].[0-9] | OK$' ||
    fail "summary line"
out=$(python3 "$here/verdicts_summary.py" --procs 3 --api-kind 1 --fail "a process exited 1" \
    "$T/mps-on/n4")
[ $? = 1 ] || fail "summary exit 0 on a wrong run"
echo "$out" | grep -q 'FAIL: a process exited 1; 4 trace files, 3 wanted; compute_api_kind \[2\], 1 wanted$' ||
    fail "summary problems: $out"
# the recording's one kernel, read here with sqlite3 (re-recordings change it by microseconds)
solo_ms=$(python3 -c 'import glob, sqlite3, sys
(d,) = sqlite3.connect(glob.glob(sys.argv[1] + "/*.db")[0]).execute("SELECT dur FROM kernel").fetchone()
print(f"{d / 1e6:.3f}")' "$T/mps-off/n1")
[ "$(python3 "$here/verdicts_summary.py" --median-ms "$T/mps-off/n1")" = "$solo_ms" ] ||
    fail "median of the solo kernel ($solo_ms ms)"
echo "PASS"
