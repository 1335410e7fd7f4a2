#!/usr/bin/env bash
# accept.sh [BUILD_DIR]: rewrites every tests/golden/*.out from the current tlview (default
# build/). Run after a deliberate change of the report, export or analysis, then read
# `git diff tests/golden` line by line before committing: the diff is the change users will see.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$dir/../.." && pwd)
build=${1:-$src/build}
for c in "$dir"/*.cmd; do
    "$dir/run.sh" "$build/cli/tlview" "$src" "$(basename "$c" .cmd)" --accept
done
