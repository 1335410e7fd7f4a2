#!/bin/sh
# cli.sh TLVIEW SRC WORK GEN: `tlview job` as a command. 1. --group N is `tlview report` of that
# group's files, byte for byte, on every golden case of report that reads native recordings
# (tests/golden/*.cmd without --compare: those recordings are one GPU each, so group 0 is the
# whole run), the cases on a time range (--from/--to/--range, on the fixtures the golden harness
# writes) included. 2. Each GPU of the job report on a range holds the figures of `tlview report`
# on that range of its group's files (python3 compares the JSON), and says the range. 3. The
# launcher's ranks a synthetic job's files carry (GEN: bench_job_gen) in report's text, CSV and
# JSON. 4. The errors: another profiler's file (with the import hint), a group that does not
# exist, options that do not go together.
set -u
tl=$(realpath "$1") src=$(realpath "$2") work=$3 gen=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fix=$work/fix
"$src/tests/golden/fixtures.sh" "$(dirname "$tl")/../tests/cli/tracegen" "$fix" || exit 1
fail=0
n=0
for cmd in "$src"/tests/golden/*.cmd; do
    args=$(sed "s|@FIX@|$fix|g" "$cmd")
    case "$args" in
    report*--compare*|*kineto*|*torch*|*@OUT@*) continue ;;
    report*) ;;
    *) continue ;;
    esac
    rest=${args#report }
    # shellcheck disable=SC2086 # the .cmd files are words without spaces inside
    (cd "$src" && "$tl" report $rest) >"$work/report.out" 2>&1
    rc1=$?
    # shellcheck disable=SC2086
    (cd "$src" && "$tl" job --group 0 $rest) >"$work/job.out" 2>&1
    rc2=$?
    if [ $rc1 -ne $rc2 ] || ! cmp -s "$work/report.out" "$work/job.out"; then
        echo "FAILED $(basename "$cmd"): tlview job --group 0 differs from tlview report (exit $rc1, $rc2):"
        diff "$work/report.out" "$work/job.out" | head -20
        fail=1
    fi
    n=$((n + 1))
done
[ $n -ge 15 ] || { echo "FAILED: only $n golden cases found"; fail=1; }
echo "--group 0 = report on $n golden cases"

# 2. the job's summary of a GPU on a range = the report's device on that range, field for field
same_gpu() { # same_gpu RANGE_ARGS...: on the pool fixture (one GPU, one group)
    "$tl" job --format json "$@" "$fix/pool" >"$work/jr.json" || { echo "FAILED job $*"; fail=1; return; }
    "$tl" report --format json "$@" "$fix/pool" >"$work/rr.json" 2>/dev/null ||
        { echo "FAILED report $*"; fail=1; return; }
    if ! python3 - "$work/jr.json" "$work/rr.json" <<'PY'
import json, sys
job, rep = (json.load(open(p)) for p in sys.argv[1:3])
want = rep["devices"][0]
for k in ("gpu", "first_window", "windows"):
    del want[k]
got = job["gpus"][0]
r = got.pop("range")
for k in ("group", "host", "index", "ranks", "pids"):
    del got[k]
if len(job["gpus"]) != 1 or got != want:
    print("job: ", json.dumps(got, sort_keys=True)); print("report:", json.dumps(want, sort_keys=True))
    sys.exit(1)
w = rep["range"]
if (r["kind"], r["t0"], r["t1"], r["origin_ns"]) != (w["kind"], w["t0"], w["t1"], w["origin_ns"]):
    print("range: job", r, "report", w); sys.exit(1)
if job["job"]["kernels"] != rep["summary"]["kernels"]:
    print("kernels: job", job["job"]["kernels"], "report", rep["summary"]["kernels"]); sys.exit(1)
PY
    then
        echo "FAILED: tlview job $* differs from tlview report $* (above)"; fail=1
    fi
}
same_gpu --range calm            # a captured range (one worker alone: solo)
same_gpu --range slow            # captured by both, time-sliced
same_gpu --range step            # an NVTX range
same_gpu --from 0.2s --to 600ms
same_gpu --from 1.1s
same_gpu --from 0.9s --measure all
"$tl" job --color never --from 1.1s --to 1.5s "$fix/pool" >"$work/jt.txt" || fail=1
want="Each GPU on the range from 1.1s to 1.5s, read on its own clock (relative times from its group's first kernel)."
grep -qxF "$want" "$work/jt.txt" || { echo "FAILED: no line '$want' in:"; cat "$work/jt.txt"; fail=1; }
"$tl" job --color never --range nowhere "$fix/pool" >"$work/jn.txt" || fail=1
want="  group 0 (node1): no captured or NVTX range named 'nowhere' in its files"
grep -qxF "$want" "$work/jn.txt" || { echo "FAILED: no line '$want' in:"; cat "$work/jn.txt"; fail=1; }

# 3. ranks: host 0 of a job of 2 hosts x 1 GPU x 2 ranks under mpirun (bench_job_gen)
mkdir -p "$work/ranked" && "$gen" "$work/ranked" -H 2 -g 1 -r 2 -k 40 -m 0 >/dev/null || exit 1
r0=$work/ranked/node001.00002.db r1=$work/ranked/node001.00003.db
"$tl" report --color never "$r0" "$r1" >"$work/rk.txt" || fail=1
for want in \
    "  pid (file)                         kernels  ctx kernel time       busy    overlap  stretch     MPS  rank" \
    "  20000 (node001.00002.db)                40    1    2.24 ms    2.24 ms    1.66 ms    1.60x     off  2 of 4, local 0" \
    "  20001 (node001.00003.db)                40    1    2.24 ms    2.24 ms    1.66 ms    1.60x     off  3 of 4, local 1"; do
    grep -qxF "$want" "$work/rk.txt" || { echo "FAILED: no line '$want' in:"; cat "$work/rk.txt"; fail=1; }
done
"$tl" report --format csv "$r0" "$r1" | cut -d, -f1,2,13- >"$work/rk.csv"
printf 'pid,host,rank,local_rank,world_size,launcher\n20000,node001,2,0,4,openmpi\n20001,node001,3,1,4,openmpi\n' >"$work/rk.want"
cmp -s "$work/rk.csv" "$work/rk.want" || { echo "FAILED: processes CSV:"; diff "$work/rk.want" "$work/rk.csv"; fail=1; }
"$tl" report --format json "$r0" "$r1" | python3 -c '
import json, sys
got = [(p["pid"], p["rank"], p["local_rank"], p["world_size"], p["launcher"]) for p in json.load(sys.stdin)["processes"]]
want = [(20000, 2, 0, 4, "openmpi"), (20001, 3, 1, 4, "openmpi")]
sys.exit(0 if got == want else print("processes[]:", got, "want", want) or 1)' || fail=1

expect() { # expect WANT_RC WANT_STDERR ARGS...
    want_rc=$1 want=$2; shift 2
    (cd "$src" && "$tl" job "$@") >/dev/null 2>"$work/err"
    rc=$?
    if [ $rc -ne "$want_rc" ] || [ "$(cat "$work/err")" != "$want" ]; then
        echo "FAILED tlview job $*: exit $rc (want $want_rc), stderr:"
        cat "$work/err"
        echo "want:"
        echo "$want"
        fail=1
    fi
}
kin=tests/verdicts/kineto-mps-on
kf=$(cd "$src" && ls $kin/* | grep -v -e expected -e log | head -1)
expect 1 "tlview job: $kf: not an SQLite file
tlview job: $kf is a chrome file: convert it first (tlview import -o FILE.db $kf)" "$kf"
expect 1 "tlview job: no group 3 (the job has 1)" --group 3 samples/spin/traces/mps-off/n4
expect 2 "tlview job: --index and --group do not go together
Try 'tlview job --help'." --index --group 0 samples/spin/traces/mps-off/n4
expect 2 "tlview job: --table and --top go with --group
Try 'tlview job --help'." --top 3 samples/spin/traces/mps-off/n4
expect 2 "tlview job: no trace files given
Try 'tlview job --help'." --format json
expect 1 "tlview job: samples/nowhere: No such file or directory" samples/nowhere
[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
