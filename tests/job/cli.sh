#!/bin/sh
# cli.sh TLVIEW SRC WORK: `tlview job` as a command. 1. --group N is `tlview report` of that
# group's files, byte for byte, on every golden case of report that reads native recordings
# (tests/golden/*.cmd without --compare: those recordings are one GPU each, so group 0 is the
# whole run). 2. The errors: another profiler's file (with the import hint), a group that does
# not exist, options that do not go together.
set -u
tl=$(realpath "$1") src=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
n=0
for cmd in "$src"/tests/golden/*.cmd; do
    args=$(cat "$cmd")
    case "$args" in
    report*--compare*|*kineto*|*torch*) continue ;;
    # fixtures the golden harness generates (@FIX@), and report's time-range options, which
    # `tlview job` does not take (job/README.md)
    *@FIX@*|*--range*|*--from*|*--to*) continue ;;
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
[ $n -ge 10 ] || { echo "FAILED: only $n golden cases found"; fail=1; }
echo "--group 0 = report on $n golden cases"

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
