#!/usr/bin/env bash
# run.sh TLVIEW SRC CASE [--accept]: runs the golden case tests/golden/CASE.cmd (one line: the
# arguments of tlview, paths relative to the source tree, @OUT@ for an output file whose content
# is appended, @FIX@ for the folder of the synthetic recordings fixtures.sh writes with tracegen,
# $TLVIEW_TRACEGEN or the build's tests/cli/tracegen beside TLVIEW) in the source tree, so every
# path it prints is relative and the same on every machine, and compares its whole output (the
# temporary folder replaced by OUT/) with CASE.out.
# --accept writes CASE.out instead (accept.sh runs every case that way after a deliberate change;
# review the diff before committing it).
set -euo pipefail
tl=$(realpath "$1") src=$(realpath "$2") case=$3 mode=${4:-}
dir=$(cd "$(dirname "$0")" && pwd)
cmdfile=$dir/$case.cmd
[ -f "$cmdfile" ] || { echo "no case $cmdfile"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read -r -a args <"$cmdfile"
for i in "${!args[@]}"; do
    args[$i]=${args[$i]//@OUT@/$tmp/out}
    args[$i]=${args[$i]//@FIX@/$tmp/fix}
done
if grep -q @FIX@ "$cmdfile"; then
    "$dir/fixtures.sh" "${TLVIEW_TRACEGEN:-$(dirname "$tl")/../tests/cli/tracegen}" "$tmp/fix"
fi
set +e
(cd "$src" && "$tl" "${args[@]}") >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
set -e
{
    cat "$tmp/stdout"
    [ ! -s "$tmp/stderr" ] || { echo "--- stderr"; cat "$tmp/stderr"; }
    [ ! -e "$tmp/out" ] || { echo "--- @OUT@"; cat "$tmp/out"; echo; }
    echo "--- exit $rc"
} | sed -e "s#$tmp/#OUT/#g" >"$tmp/got"
if [ "$mode" = --accept ]; then
    cp "$tmp/got" "$dir/$case.out"
    echo "accepted $case"
    exit 0
fi
if ! diff -u "$dir/$case.out" "$tmp/got"; then
    echo "golden case $case differs (expected: tests/golden/$case.out; after a deliberate change:"
    echo "tests/golden/accept.sh BUILD_DIR, then review the diff)"
    exit 1
fi
echo "golden case $case: same"
