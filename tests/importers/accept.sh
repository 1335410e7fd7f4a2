#!/bin/sh
# Prints what a fixture's import gives, as expected.json or error text, for review before it is
# accepted: tests/importers/accept.sh BUILD_DIR tests/importers/<format>/<case> [--write]
set -e
[ -f "$2/error" ] && rm "$2/error"; [ -f "$2/expected.json" ] && rm "$2/expected.json"
build=$1 case=$2
out=$("$build/tests/importers/imp_fixture" "$case" "$build/tests/importers/fixtures/accept" --print 2>/dev/null || true)
out=$(printf '%s\n' "$out" | grep -v '^ok ')
printf '%s\n' "$out"
if [ "$3" = --write ]; then
    case $out in
    "{"*) printf '%s\n' "$out" > "$case/expected.json" ;;
    *) printf '%s\n' "$out" > "$case/error" ;;
    esac
fi
