#!/bin/sh
# check.sh SRC: every C source and header of the project is formatted as .clang-format says.
# Prints the files that are not and exits 1; exits 77 (skipped) without clang-format 14, since
# other versions format some constructs differently. Fix with: clang-format -i FILE...
src=$1
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format is not installed"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$major" = 14 ] || { echo "SKIP: clang-format $major here; the style is checked with version 14"; exit 77; }
cd "$src" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
bad=0
for f in $files; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (clang-format -i $f)"
        bad=1
    fi
done
[ $bad = 0 ] && echo "all $(echo "$files" | wc -w) C files formatted"
exit $bad
