#!/usr/bin/env bash
# test_workloads.sh: the CPU half of tests/gpu/workloads.sh and workloads.py (CTest
# gpu__workloads_scripts):
#   the dry run of the small plan lists its 23 runs in order (per workload: solo, MPS off, MPS on),
#   each under the collector with TLVIEW_NVTX=1 and its own TLVIEW_OUTPUT folder, the MPS daemon
#   started and stopped around each workload's MPS runs, within the budget; a small --budget
#   skips (and names) the last runs; --only, --plan full and n2, --scale, --batch,
#   --no-collector; bad arguments exit 2;
#   the mix plan (each part's solo run once, then A+B); workloads.py's argument checks and
#   --dry-run, a mix's too (no torch needed);
#   a whole run of the gemm workload on a stand-in GPU (fake_gpu.sh as nvidia-smi and
#   nvidia-cuda-mps-control) with the torch stand-in (stand_in/torch): the spawn workers, their
#   barrier, the NVTX range "timed", one RESULT line each, the table, the tar; a worker that dies
#   fails its run at once instead of leaving the others at the barrier;
#   workloads_table.py on hand-written RESULT lines: the throughputs, gains and makespans.
# Usage: test_workloads.sh. Fails without python3.
# shellcheck disable=SC2015 # `A && B || fail`: fail exits, it never runs after a true B
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/tlworkloads-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "no python3 (scripts/deps.sh installs it)"
mkdir -p "$W/build/collector"
: >"$W/build/collector/libcollect.so"

# ---- the dry run
out=$(bash "$here/workloads.sh" --dry-run "$W/build" "$W/never") || fail "dry run exit $?"
echo "$out" | head -n 8
runs=""
for spec in "resnet18:2 4 8" "gpt2:2 4 8" "resnet50:4" "bert:4" "gemm:4"; do
    w=${spec%%:*}
    runs+="$w-off-n1 "
    for n in ${spec#*:}; do runs+="$w-off-n$n "; done
    for n in ${spec#*:}; do runs+="$w-on-n$n "; done
done
got=$(echo "$out" | sed -n 's/^== \([^ ]*\) (~[0-9]* s)$/\1/p' | tr '\n' ' ')
[ "$got" = "$runs" ] || fail "runs: got '$got', wanted '$runs'"
[ "$(echo "$out" | grep -c '^+ nvidia-cuda-mps-control -d$')" = 5 ] || fail "MPS not started 5 times"
[ "$(echo "$out" | grep -c '^+ echo quit | nvidia-cuda-mps-control$')" = 5 ] ||
    fail "MPS not stopped 5 times"
# the daemon is up from just before each workload's first MPS run to just after its last
echo "$out" | grep -v '^+ timeout' | tr '\n' '~' |
    grep -q '== gpt2-off-n8 (~[0-9]* s)~+ export CUDA_MPS_PIPE_DIRECTORY=[^~]*~+ nvidia-cuda-mps-control -d~== gpt2-on-n2 (~[0-9]* s)~== gpt2-on-n4 (~[0-9]* s)~== gpt2-on-n8 (~[0-9]* s)~+ echo quit | nvidia-cuda-mps-control~== resnet50-off-n1 ' ||
    fail "the daemon is not up exactly around gpt2's MPS runs"
echo "$out" | grep -q "^+ timeout -k 5 150 env CUDA_INJECTION64_PATH=$W/build/collector/libcollect.so TLVIEW_NVTX=1 TLVIEW_OUTPUT=$W/never/gpt2-on-n4/p.%p.db TLVIEW_RUN_ID=gpt2-on-n4 python3 $here/workloads.py gpt2 --workers 4 --iters 50 --warmup 5 --batch 16 > $W/never/gpt2-on-n4/log\$" ||
    fail "gpt2-on-n4's command"
total=$(echo "$out" | sed -n 's/^workloads.sh: 23 runs (~\([0-9]*\) s by the estimates); skipped: none$/\1/p')
[ -n "$total" ] && [ "$total" -le 400 ] || fail "the small plan: 23 runs within 400 s wanted"
[ -e "$W/never" ] && fail "the dry run created $W/never"
out=$(bash "$here/workloads.sh" --dry-run --budget 200 "$W/build" "$W/never")
echo "$out" | grep -q '^== resnet50-off-n1: SKIPPED ([0-9]* s gone + ~[0-9]* s > budget 200 s)$' ||
    fail "--budget 200 did not skip resnet50-off-n1"
echo "$out" | grep -q 'skipped: .*resnet50-off-n1 .*gemm-on-n4$' || fail "skipped runs not listed"
out=$(bash "$here/workloads.sh" --dry-run --only "gemm bert" --no-collector "$W/build" "$W/never")
got=$(echo "$out" | sed -n 's/^== \([^ ]*\) .*/\1/p' | tr '\n' ' ')
[ "$got" = "bert-off-n1 bert-off-n4 bert-on-n4 gemm-off-n1 gemm-off-n4 gemm-on-n4 " ] ||
    fail "--only 'gemm bert' ran '$got'"
echo "$out" | grep -q CUDA_INJECTION64_PATH && fail "--no-collector still injects"
out=$(bash "$here/workloads.sh" --dry-run --plan full "$W/build" "$W/never")
[ "$(echo "$out" | grep -c '^== ')" = 35 ] || fail "--plan full: 35 runs wanted"
out=$(bash "$here/workloads.sh" --dry-run --plan n2 --scale 10 "$W/build" "$W/never")
[ "$(echo "$out" | grep -c -- '--iters 1000 --warmup 10 ')" = 3 ] &&
    [ "$(echo "$out" | grep -c -- '--iters 600 --warmup 5 ')" = 3 ] ||
    fail "--scale 10: resnet18 1000 and resnet50 600 timed iterations wanted in 3 runs each"
out=$(bash "$here/workloads.sh" --dry-run --plan n2 --batch 64 "$W/build" "$W/never")
[ "$(echo "$out" | grep -c -- '--batch 64 > ')" = 6 ] || fail "--batch 64: 6 runs wanted with it"
echo "$out" | grep -q '^== resnet18-off-n2 (~[0-9]* s)$' || fail "--batch 64: no resnet18 N = 2"
# the mix plan: each part's solo run once, before the mix's runs; the mix's workers split by part
out=$(bash "$here/workloads.sh" --dry-run --plan mix --ns "2 4" "$W/build" "$W/never")
got=$(echo "$out" | sed -n 's/^== \([^ ]*\) .*/\1/p' | tr '\n' ' ')
[ "$got" = "resnet50-off-n1 bert-off-n1 resnet50+bert-off-n2 resnet50+bert-off-n4 resnet50+bert-on-n2 resnet50+bert-on-n4 swin_t-off-n1 gpt2-off-n1 swin_t+gpt2-off-n2 swin_t+gpt2-off-n4 swin_t+gpt2-on-n2 swin_t+gpt2-on-n4 convnext_tiny-off-n1 convnext_tiny+bert-off-n2 convnext_tiny+bert-off-n4 convnext_tiny+bert-on-n2 convnext_tiny+bert-on-n4 " ] ||
    fail "--plan mix ran '$got'"
echo "$out" | grep -q -- "workloads.py resnet50+bert --workers 4 --iters 60+40 --warmup 5+5 --batch 16 > $W/never/resnet50+bert-on-n4/log\$" ||
    fail "--plan mix: the mix's command"
bash "$here/workloads.sh" --dry-run --plan mix --ns 3 "$W/build" "$W/never" >/dev/null 2>&1
[ $? = 2 ] || fail "--plan mix --ns 3: exit 2 wanted"
for bad in "--plan big" "--only nope" "--budget soon" "--scale 0" "--scale 1.5" "--batch 0"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    bash "$here/workloads.sh" --dry-run $bad "$W/build" "$W/never" >/dev/null 2>&1
    [ $? = 2 ] || fail "$bad: exit 2 wanted"
done
# workloads.py's arguments, without torch
py() { PYTHONPATH='' python3 "$here/workloads.py" "$@"; }
out=$(py gpt2 --workers 4 --dry-run) || fail "workloads.py --dry-run exit $?"
echo "$out" | grep -q '^workloads: gpt2, 4 worker(s): GPT-2 with 6 layers (LM head) on 16 x 128 tokens, float32, seed 0: 5 warm-up + 50 timed iterations, 800 sequences per worker$' ||
    fail "workloads.py --dry-run: $out"
out=$(py resnet50+bert --workers 2 --iters 6+4 --dry-run) || fail "workloads.py a mix --dry-run exit $?"
echo "$out" | grep -q '^workloads: resnet50+bert, 2 worker(s): worker r with r mod 2 = 0: torchvision resnet50(weights=None) on 16 x 3x224x224, float32, seed 0: 5 warm-up + 6 timed iterations, 96 images per worker; worker r with r mod 2 = 1: BERT base (12 layers) on 16 x 128 tokens, float32, seed 0: 5 warm-up + 4 timed iterations, 64 sequences per worker$' ||
    fail "workloads.py a mix --dry-run: $out"
for bad in "resnet34 --workers 2" "gemm --workers 0" "gemm" "bert --workers 1 --seq 600" \
    "gemm --workers 1 --warmup -1" "gemm --workers 1 --dtype int8" "resnet50+bert --workers 3" \
    "resnet50+resnet50 --workers 2" "resnet50+bert --workers 2 --iters 1+2+3" \
    "resnet50+bert --workers 2 --iters 0" "resnet50+bert --workers 2 --warmup x"; do
    # shellcheck disable=SC2086
    py $bad --dry-run >/dev/null 2>&1
    [ $? = 2 ] || fail "workloads.py $bad: exit 2 wanted"
done
echo "dry run: PASS"

# ---- the gemm workload on a stand-in GPU and torch
F=$W/fake
mkdir -p "$F/bin"
for p in nvidia-smi nvidia-cuda-mps-control; do ln -s "$here/fake_gpu.sh" "$F/bin/$p"; done
FAKE_GPU_CALLS=$F/mps-calls PATH=$F/bin:$PATH PYTHONPATH=$here/stand_in \
    bash "$here/workloads.sh" --only gemm "$W/build" "$F/out" >"$F/log" 2>&1
rc=$?
cat "$F/log"
[ $rc = 0 ] || fail "run on the stand-in: exit $rc"
[ "$(tr '\n' ' ' <"$F/mps-calls")" = "-d quit " ] || fail "MPS calls: $(cat "$F/mps-calls")"
for run in gemm-off-n1:1 gemm-off-n4:4 gemm-on-n4:4; do
    d=$F/out/${run%:*} n=${run#*:}
    [ "$(cat "$d/rc")" = 0 ] || fail "$d/rc"
    # counted as text, not as whole lines (as workloads_table.py reads them): the workers share
    # the log, and a line may run into another worker's (seen in CI under load, 2026-12-02 09:25:
    # 4 RESULT records, one not at a line's start)
    [ "$(grep -oE 'RESULT \{"workload": "gemm", "rank": [0-9]+, "pid": [0-9]+, "items": 12, ' "$d/log" | wc -l)" = "$n" ] ||
        fail "$d: $n RESULT records of 12 items wanted"
    [ "$(grep -o 'torch stand-in: nvtx push timed' "$d/log" | wc -l)" = "$n" ] ||
        fail "$d: NVTX range ($(grep -o 'torch stand-in: nvtx push timed' "$d/log" | wc -l) of $n)"
    grep -q '^Test PASSED$' "$d/log" || fail "$d: no Test PASSED"
done
grep -q '"mps_pipe": ""' "$F/out/gemm-off-n4/log" || fail "an MPS-off worker saw a pipe folder"
grep -q '"mps_pipe": "/' "$F/out/gemm-on-n4/log" || fail "an MPS-on worker saw no pipe folder"
N='[0-9][0-9.]*'
grep -q "^| gemm | 4 | $N | $N | $N | $N | $N | $N | $N | $N |  |\$" "$F/out/table.md" ||
    fail "gemm N=4 row"
grep -q "^| gemm | 1 | $N | - | - | $N | - | - | $N | 1.000 |  |\$" "$F/out/table.md" ||
    fail "gemm solo row"
tar -tzf "$F/out.tar.gz" | grep -q '^out/gemm-on-n4/log$' || fail "the tar"
# one worker dies before the barrier: the run fails within seconds, not at the barrier's timeout
start=$(date +%s)
TORCH_STAND_IN_FAIL=$W/fail-once PYTHONPATH=$here/stand_in \
    python3 "$here/workloads.py" gemm --workers 3 --iters 2 >"$W/die.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^Test FAILED$' "$W/die.log" || fail "a dead worker: exit $rc"
[ $(($(date +%s) - start)) -lt 60 ] || fail "a dead worker held the others at the barrier"
echo "stand-in run: PASS"

# ---- the table on hand-written RESULT lines
O=$W/table
res() { # DIR RANK ITEMS SECONDS START_S END_S
    printf 'RESULT {"rank": %s, "items": %s, "seconds": %s, "t_start_ns": %s, "t_end_ns": %s, "impl": "x"}\n' \
        "$2" "$3" "$4" "$(awk -v s="$5" 'BEGIN { printf "%d", s * 1e9 }')" \
        "$(awk -v s="$6" 'BEGIN { printf "%d", s * 1e9 }')" >>"$O/$1/log"
}
mkdir -p "$O/resnet18-off-n1" "$O/resnet18-off-n2" "$O/resnet18-on-n2" "$O/gpt2-off-n4" \
    "$O/gpt2-off-n1" "$O/notarun"
res resnet18-off-n1 0 100 1.0 0 1.0
res resnet18-off-n2 0 100 2.0 0 2.0
res resnet18-off-n2 1 100 2.0 0.1 2.1
res resnet18-on-n2 0 100 1.0 0 1.0
printf 'noise ' >>"$O/resnet18-on-n2/log" # a line two workers' output ran into
res resnet18-on-n2 1 100 1.25 0 1.25
res gpt2-off-n4 0 10 1.0 0 1.0
echo 'RESULT {"rank": 1, "items": 10' >>"$O/gpt2-off-n4/log" # cut short: skipped
echo 1 >"$O/gpt2-off-n4/rc"
out=$(python3 "$here/workloads_table.py" "$O") || fail "table exit $?"
echo "$out"
row() { echo "$out" | grep -qxF "$1" || fail "no row '$1'"; }
row "| resnet18 | 1 | 100.0 | - | - | 1.000 | - | - | 100.0 | 1.000 |  |"
row "| resnet18 | 2 | 100.0 | 180.0 | 1.800 | 2.100 | 1.250 | 1.680 | 100.0 | 0.500 |  |"
row "| gpt2 | 1 | - | - | - | - | - | - | - | - | off: 0/1 results |"
row "| gpt2 | 4 | 10.0 | - | - | 1.000 | - | - | - | - | off: exit 1, 1/4 results; on not run |"
grep -qx 'resnet18,2,100,180,1.8,2.1,1.25,95.2381,160,1.68,100,x,' "$O/table.csv" ||
    fail "table.csv: $(cat "$O/table.csv")"
echo "PASS"
