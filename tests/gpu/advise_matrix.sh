#!/usr/bin/env bash
# advise_matrix.sh: `tlview advise` on the real inference loops of tests/gpu/workloads.py, for
# issue 29's Done-when (each cell twice, independently). Each experiment is NAME=WORKLOAD:N:ITERS:
# BUDGET[:REPEAT]; it runs `tlview advise -n N --configs sliced,mps --repeat REPEAT (4 unless given)
# --budget BUDGET --metric ...
# -- python3 workloads.py WORKLOAD --workers 1 --iters ITERS --impl builtin --sync-copies` (advise
# starts and stops its own private MPS daemon) and leaves in OUTDIR: NAME.txt (advise's text),
# NAME.json (advise.json) and NAME.log (its stderr), written as each experiment ends, so that a call
# cut short still brings back what finished. Every nvidia-cuda-mps process must be gone after each
# experiment; the count is printed.
# Usage: tests/gpu/advise_matrix.sh BUILD OUTDIR NAME=WORKLOAD:N:ITERS:BUDGET[:REPEAT]...
# (exit 77 without a GPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/gpu/mps_procs.sh
. "$here/mps_procs.sh"
need_gpu advise_matrix
BUILD=$(cd "${1:?usage: advise_matrix.sh BUILD OUTDIR NAME=WORKLOAD:N:ITERS:BUDGET...}" && pwd)
OUT=${2:?usage: advise_matrix.sh BUILD OUTDIR NAME=WORKLOAD:N:ITERS:BUDGET...}
shift 2
mkdir -p "$OUT"
W=$(mktemp -d /tmp/advmx.XXXXXX)
trap 'rm -rf "$W"' EXIT

for spec in "$@"; do
    name=${spec%%=*}
    IFS=: read -r wl n iters budget repeat <<<"${spec#*=}"
    t0=$SECONDS
    "$BUILD/cli/tlview" advise -n "$n" --configs sliced,mps --repeat "${repeat:-4}" --budget "${budget}s" \
        -o "$W/$name" --metric "x 1: ([0-9.]+) " -- \
        python3 "$here/workloads.py" "$wl" --workers 1 --iters "$iters" --impl builtin \
        --sync-copies >"$OUT/$name.txt" 2>"$OUT/$name.log"
    rc=$?
    cp "$W/$name/advise.json" "$OUT/$name.json" 2>/dev/null
    echo "advise_matrix: $name ($wl N=$n, $iters iterations): exit $rc in $((SECONDS - t0)) s;" \
        "nvidia-cuda-mps processes left: $(mps_procs)"
    rm -rf "${W:?}/$name"
done
