#!/bin/sh
# mpi.sh TLVIEW GEN MPIEXEC RANKS WORK: `mpirun -n RANKS tlview job` against one `tlview job`
# process on a synthetic job written by GEN (bench_job_gen: 3 hosts x 2 GPUs x 2 ranks, every
# other GPU under MPS; and the same without UUIDs): the text, JSON and CSV reports must be the
# same bytes, and with --baseline and on a time range (--from/--to) too; --index and --group
# (rank 0 answers alone) too, and --group N on a range is `tlview report` on it. A file
# that breaks only when its group is loaded (the index reads no kernel), and a file the index
# refuses (read by another rank than 0), give the same error and exit status 1 from any number
# of ranks. Colour (--color auto, the default): none in a report written to a file, though Open
# MPI gives each rank a pty (2026-12, issue 28), and colour when mpirun's own stdout is a terminal
# (under script(1), where it is installed).
# MPIEXEC "none": tlview was built without MPI; skipped (77), or failed under CI=true.
set -u
tl=$1 gen=$2 mpiexec=$3 ranks=$4 work=$5
if [ "$mpiexec" = none ]; then
    if [ "${CI:-}" = true ]; then
        echo "FAILED: tlview was built without MPI, and CI=true (scripts/deps.sh installs libopenmpi-dev)"
        exit 1
    fi
    echo "SKIP: tlview was built without MPI (Open MPI's libopenmpi-dev not found)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$gen" "$work/job" -H 3 -g 2 -r 2 -k 60 -m 2 >/dev/null || exit 1
"$gen" "$work/nouuid" -H 2 -g 2 -r 2 -k 40 -m 0 -u >/dev/null || exit 1
fail=0
same() { # same NAME ARGS...: one process and RANKS ranks print the same bytes, exit 0
    name=$1; shift
    "$tl" job "$@" >"$work/$name.one" 2>"$work/$name.one.err"; rc1=$?
    "$mpiexec" --oversubscribe -n "$ranks" "$tl" job "$@" >"$work/$name.mpi" 2>"$work/$name.mpi.err"
    rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        echo "FAILED $name: exit $rc1 (one process), $rc2 ($ranks ranks)"
        cat "$work/$name.one.err" "$work/$name.mpi.err"; fail=1; return
    fi
    if ! cmp -s "$work/$name.one" "$work/$name.mpi"; then
        echo "FAILED $name: $ranks ranks differ from one process:"
        diff "$work/$name.one" "$work/$name.mpi" | head -20; fail=1; return
    fi
    [ -s "$work/$name.one" ] || { echo "FAILED $name: empty report"; fail=1; return; }
    echo "same: $name ($(wc -c <"$work/$name.one") bytes)"
}
same text --color never "$work/job"
same text_auto "$work/job" # --color auto, the default: stdout is a file
esc=$(printf '\033')
if grep -q "$esc" "$work/text_auto.mpi"; then
    echo "FAILED text_auto: $ranks ranks wrote colour codes into a file"; fail=1
fi
if command -v script >/dev/null 2>&1; then
    script -qec "'$mpiexec' --oversubscribe -n $ranks '$tl' job '$work/job'" /dev/null \
        >"$work/text_tty.mpi" 2>&1
    if grep -q "$esc\[1mGPUs by time-sliced share" "$work/text_tty.mpi"; then
        echo "same: text_tty (coloured: mpirun's stdout is a terminal)"
    else
        echo "FAILED text_tty: no colour though mpirun's stdout is a terminal:"
        head -5 "$work/text_tty.mpi"; fail=1
    fi
fi
same json --format json "$work/job"
same csv --format csv "$work/job"
same baseline --format json --baseline "$work/job/node000.00000.db" "$work/job"
same nouuid --format json "$work/nouuid"
same index --index "$work/job"            # answered by rank 0 alone
same group --group 1 --color never "$work/job"
# on a range of each GPU's own clock (relative to its group's first kernel), and its --group N =
# `tlview report` on that range of the group's files (2 files a GPU: group 1 is node000's ranks 2, 3)
same range --format json --from 0.5ms --to 1.5ms "$work/job"
same range_text --color never --from 0.5ms --to 1.5ms "$work/job"
same range_csv --format csv --from 0.5ms "$work/job"
same range_group --group 1 --format json --from 0.5ms --to 1.5ms "$work/job"
"$tl" report --format json --from 0.5ms --to 1.5ms "$work/job/node000.00002.db" \
    "$work/job/node000.00003.db" >"$work/range_report" 2>&1
if ! cmp -s "$work/range_report" "$work/range_group.one"; then
    echo "FAILED range_group: tlview job --group 1 --from --to differs from tlview report:"
    diff "$work/range_report" "$work/range_group.one" | head -20; fail=1
fi
cmp -s "$work/range.one" "$work/json.one" && { echo "FAILED: the range changed nothing"; fail=1; }
grep -q '"verdict": "time-sliced"' "$work/json.one" && grep -q '"verdict": "concurrent"' "$work/json.one" ||
    { echo "FAILED: the job report lacks its time-sliced or concurrent GPUs"; fail=1; }
# a kernel row that breaks the load of one group only
cp -r "$work/job" "$work/broken"
sqlite3 "$work/broken/node002.00009.db" "UPDATE kernel SET dur = -5 WHERE rowid = 3" || exit 1
"$tl" job "$work/broken" >/dev/null 2>"$work/broken.one"; rc1=$?
"$mpiexec" --oversubscribe -n "$ranks" "$tl" job "$work/broken" >/dev/null 2>"$work/broken.mpi.all"
rc2=$?
grep '^tlview' "$work/broken.mpi.all" >"$work/broken.mpi"
want="tlview job: $work/broken/node002.00009.db: truncated or corrupt (a kernel with a negative duration, -5 ns)"
if [ $rc1 -ne 1 ] || [ $rc2 -ne 1 ] || [ "$(cat "$work/broken.one")" != "$want" ] ||
    ! cmp -s "$work/broken.one" "$work/broken.mpi"; then
    echo "FAILED broken: exit $rc1 and $rc2 (want 1 and 1); messages:"
    cat "$work/broken.one" "$work/broken.mpi.all"; echo "want: $want"; fail=1
else
    echo "same: broken (exit 1, one message)"
fi
# a file the index refuses, read by a rank other than 0 when there are several
cp -r "$work/job" "$work/foreign"
sqlite3 "$work/foreign/node001.zzz.db" "CREATE TABLE StringIds(id, value)" || exit 1
"$tl" job "$work/foreign" >/dev/null 2>"$work/foreign.one"; rc1=$?
"$mpiexec" --oversubscribe -n "$ranks" "$tl" job "$work/foreign" >/dev/null 2>"$work/foreign.mpi.all"
rc2=$?
grep '^tlview' "$work/foreign.mpi.all" >"$work/foreign.mpi"
want="tlview job: $work/foreign/node001.zzz.db: an SQLite database but not a tlview file (no meta table)"
if [ $rc1 -ne 1 ] || [ $rc2 -ne 1 ] || [ "$(cat "$work/foreign.one")" != "$want" ] ||
    ! cmp -s "$work/foreign.one" "$work/foreign.mpi"; then
    echo "FAILED foreign: exit $rc1 and $rc2 (want 1 and 1); messages:"
    cat "$work/foreign.one" "$work/foreign.mpi.all"; echo "want: $want"; fail=1
else
    echo "same: foreign (exit 1, one message)"
fi
[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
