#!/bin/sh
# mutate.sh CC SRC CASES_DIR CFLAGS...: the statistics' tests can fail. Each mutation below makes
# cli/advise_stats.c lie the way a careless change would (a median replaced by one run's value or
# by the mean, Holm's correction dropped, every round in one order); the test program is built
# against the mutated copy and each case named must then fail. The unmutated copy must pass them
# all, and a mutation that no longer applies (the line was changed) fails this test, so that it
# can never pass by matching nothing.
cc=$1 src=$2 cases=$3
shift 3
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
stats=$src/cli/advise_stats.c
bad=0

# build NAME FILE CFLAGS...: the unit-test program of the statistics, FILE as advise_stats.c
build() {
    name=$1 file=$2
    shift 2
    "$cc" -std=c11 -O1 -o "$work/$name" "$file" "$src/tests/advise/test_advise_stats.c" \
        "$src/tests/unit/test_main.c" -I"$src/cli" -I"$src/tests/unit" -I"$cases" \
        -DTLVIEW_SOURCE_DIR="\"$src\"" -DTLVIEW_BINARY_DIR="\"$work\"" \
        -DTLVIEW_SHARED_DIR="\"$work\"" "$@" -lm 2>"$work/$name.log" || {
        echo "FAILED: $name does not build:"
        cat "$work/$name.log"
        return 1
    }
}

build clean "$stats" "$@" || exit 1
for c in median median_interval holm round_order decide_simpler decide_holm decide_thin \
    decide_margin rounds_to_tell decide_failed prefer; do
    "$work/clean" "$c" >/dev/null 2>&1 || { echo "FAILED: case $c fails without a mutation"; bad=1; }
done

# mutate NAME 'SED EXPRESSION' CASE...: each CASE must fail with the mutation applied.
mutate() {
    mname=$1 expr=$2
    shift 2
    sed "$expr" "$stats" >"$work/$mname.c"
    if cmp -s "$stats" "$work/$mname.c"; then
        echo "FAILED: mutation $mname no longer applies to cli/advise_stats.c"
        bad=1
        return
    fi
    build "$mname" "$work/$mname.c" $flags || { bad=1; return; }
    for c in "$@"; do
        if "$work/$mname" "$c" >"$work/$mname.$c.log" 2>&1; then
            echo "FAILED: with mutation $mname, case $c still passes"
            bad=1
        else
            echo "ok: mutation $mname fails case $c: $(grep -m1 'test_advise_stats.c' "$work/$mname.$c.log")"
        fi
    done
}
flags="$*"

# the median of one run (the first) instead of the median of all
mutate median_one_run 's|double m = n % 2 ? s\[n / 2\] : (s\[n / 2 - 1\] + s\[n / 2\]) / 2;|double m = x[0];|' \
    median decide_simpler
# the mean instead of the median: one run far off moves it
mutate median_mean 's|double m = n % 2 ? s\[n / 2\] : (s\[n / 2 - 1\] + s\[n / 2\]) / 2;|double m = 0; for (int i = 0; i < n; i++) m += x[i] / n;|' \
    median decide_simpler
# Holm dropped: each p compared with 0.05 as if it were the only comparison
mutate no_holm 's|double v = (kk - i) \* p\[idx\[i\]\];|double v = p[idx[i]];|' \
    holm decide_holm decide_simpler
# every round in the same order (no turning, no rotation)
mutate one_order 's|int q = round % 2 ? n - 1 - p : p;|int q = p; (void)round;|; s|order\[p\] = (q + shift) % n;|order[p] = q; (void)shift;|' \
    round_order
exit $bad
