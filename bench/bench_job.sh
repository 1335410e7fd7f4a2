#!/bin/sh
# bench_job.sh BUILD JOB: what `tlview job` costs on a job folder (bench/bench_job.md).
#   1. bench_job: the index, the two ways of counting a file's kernels, a plain SQLite scan;
#   2. wall time and peak RSS (GNU time) of: `tlview job` in one process; `mpirun -n 1` and
#      `-n 2` of it (each rank's peak, from its last run); `tlview report` of the largest group's files alone
#      (what the job's memory should follow); `tlview report` of the whole job at once (what it
#      must not follow). Each twice (BENCH_REPEAT), the fastest kept (the machine is shared).
# The reports of one process and of the MPI runs are compared byte for byte.
set -eu
build=$1 job=$2
tl=$build/cli/tlview
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
"$build/bench/bench_job" "$job"

# the largest group's files
"$tl" job --index "$job" >"$tmp/index.json"
python3 - "$tmp/index.json" >"$tmp/largest" <<'EOF'
import json, sys
groups = json.load(open(sys.argv[1]))["groups"]
g = max(groups, key=lambda g: (g["kernels"], -g["group"]))
print("\n".join(g["files"]))
EOF
largest_kernels=$(python3 -c "import json,sys; print(max(g['kernels'] for g in json.load(open(sys.argv[1]))['groups']))" "$tmp/index.json")

measure() { # measure LABEL OUT CMD...: the better of two runs: wall s, peak MB, CPU s
    label=$1 out=$2; shift 2
    best=""
    for i in $(seq 1 "${BENCH_REPEAT:-2}"); do
        /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$@" >"$out" 2>"$tmp/err" || {
            cat "$tmp/err"; exit 1; }
        t=$(cat "$tmp/time")
        if [ -z "$best" ] || [ "$(echo "$t $best" | awk '{print ($1 < $5)}')" = 1 ]; then best=$t; fi
    done
    echo "$best" | awk -v l="$label" \
        '{printf "  %-46s %8.2f s %9.1f MB %8.2f s CPU\n", l, $1, $2 / 1024, $3 + $4}'
}
printf "  %-46s %10s %12s %12s\n" "run" "wall" "peak RSS" "CPU"
echo "  largest group: $(wc -l <"$tmp/largest") files, $largest_kernels kernels"
measure "tlview job (one process)" "$tmp/one" "$tl" job --color never "$job"
# under mpirun, each rank's own peak (GNU time around each rank; mpirun's own is not tlview's)
export BENCH_TMP=$tmp
for n in 1 2; do
    measure "mpirun -n $n tlview job (wall; mpirun's RSS)" "$tmp/m$n" mpirun -n $n sh -c \
        '/usr/bin/time -f "%M" -o "$BENCH_TMP/rank.$OMPI_COMM_WORLD_RANK" "$@"' sh \
        "$tl" job --color never "$job"
    for r in $(seq 0 $((n - 1))); do
        awk -v r="$r" '{printf "    rank %d peak RSS %27s %9.1f MB\n", r, "", $1 / 1024}' \
            "$tmp/rank.$r"
    done
done
# shellcheck disable=SC2046 # paths without spaces (bench_job_gen's)
measure "tlview report, the largest group's files" "$tmp/g" "$tl" report --color never \
    $(cat "$tmp/largest")
measure "tlview report, the whole job at once" "$tmp/all" "$tl" report --color never "$job"
for m in m1 m2; do
    cmp -s "$tmp/one" "$tmp/$m" || { echo "FAILED: $m differs from one process"; exit 1; }
done
echo "  the reports of 1 process, mpirun -n 1 and -n 2: the same $(wc -c <"$tmp/one") bytes"
