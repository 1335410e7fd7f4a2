#!/bin/sh
# fuzz/run.sh DURATION [TARGET...]: builds the libFuzzer targets of the importers and of the
# tlview loader (clang, -fsanitize=fuzzer,address,undefined) and runs each for DURATION seconds,
# one after another. scripts/test runs `store` for 20 s. Seeds: for the importers the fixtures of
# tests/importers (SQL run through sqlite3, JSON as is, also gzipped, NVVP sessions written by
# tests/importers/make_nvvp.py) and the files of
# ../shared/corpus when present; for the loader fuzz/store_seeds/*.sql applied to a committed
# sample recording. Findings are left as crash-*, leak-*, timeout-* and oom-* files in
# $FUZZ_WORK/<target>/ (default /tmp/tlview-fuzz), the fuzzer's output in $FUZZ_WORK/<target>/log;
# exit status 1 if any, or if a fuzzer failed or did not run. Needs clang with libclang-rt (Debian: clang,
# libclang-rt-14-dev), sqlite3, gzip, python3.
set -eu
duration=${1:?usage: fuzz/run.sh DURATION [nvprof|nsys|chrome|nvvp|store ...]}
shift
targets=${*:-nvprof nsys chrome nvvp store}
src=$(cd "$(dirname "$0")/.." && pwd)
work=${FUZZ_WORK:-/tmp/tlview-fuzz}
mkdir -p "$work/bin"

flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
objs=""
for c in "$src"/store/*.c "$src"/importers/*.c; do
    o="$work/bin/$(basename "$(dirname "$c")")_$(basename "$c" .c).o"
    clang $flags -fsanitize=fuzzer-no-link -c -std=gnu11 -I"$src/store" -I"$src/importers" "$c" -o "$o" \
        2>/dev/null || clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
        -c -std=gnu11 -I"$src/store" -I"$src/importers" "$c" -o "$o"
    objs="$objs $o"
done

# The loader's seeds: each store_seeds/NAME.sql run on a copy of a small real recording (API
# and range rows added, 1 KiB pages so that the file stays small).
store_seeds() {
    base="$work/store/base.db"
    rm -f "$base"
    cp "$src/samples/triton_single_sm/traces/mps-off/n1/triton.2015.db" "$base"
    sqlite3 "$base" "INSERT INTO api(start, dur, process_id, thread_id, correlation_id, domain,
        cbid, name_id, status) VALUES (1000, 500, 1, 7, 1, 1, 211, 1, 0);
        INSERT INTO \"range\"(start, dur, process_id, thread_id, domain_id, name_id)
        VALUES (900, 5000, 1, 7, NULL, 1); PRAGMA page_size = 1024; VACUUM;"
    for s in "$src"/fuzz/store_seeds/*.sql; do
        name=$(basename "$s" .sql)
        rm -f "$1/$name.db"
        cp "$base" "$1/$name.db"
        sqlite3 "$1/$name.db" < "$s"
    done
}

status=0
for t in $targets; do
    clang $flags -std=gnu11 -I"$src/store" -I"$src/importers" "$src/fuzz/fuzz_$t.c" $objs \
        -lsqlite3 -lz -lstdc++ -lpthread -o "$work/bin/fuzz_$t"
    seeds="$work/$t/seeds"
    mkdir -p "$seeds" "$work/$t/corpus"
    [ "$t" = store ] && store_seeds "$seeds"
    for d in "$src"/tests/importers/"$t"/*/; do
        [ -d "$d" ] || continue
        name=$(basename "$d")
        if [ -f "$d/input.sql" ]; then
            rm -f "$seeds/$name.db"
            sqlite3 "$seeds/$name.db" < "$d/input.sql" 2>/dev/null || true
        elif [ -f "$d/input.json" ]; then
            cp "$d/input.json" "$seeds/$name.json"
            gzip -c "$d/input.json" > "$seeds/$name.json.gz"
        elif [ -f "$d/session" ]; then
            python3 "$src/tests/importers/make_nvvp.py" "$d/session" "$seeds/$name.nvvp" || true
        fi
    done
    # real files as seeds, when small: libFuzzer mutates every byte of them (gzip seeds are
    # decompressed: a mutated gzip stream only tests zlib's checksum)
    corpus_dir="$src/../shared/corpus/$t"
    for f in "$corpus_dir"/*; do
        [ -f "$f" ] || continue
        case $f in
        *.gz) gzip -dc "$f" > "$seeds/$(basename "$f" .gz)" ;;
        *) cp "$f" "$seeds/" ;;
        esac
    done
    find "$seeds" -type f -size +300k -delete
    dict=""
    [ -f "$src/fuzz/$t.dict" ] && dict="-dict=$src/fuzz/$t.dict"
    echo "== fuzz_$t for ${duration}s ($(ls "$seeds" | wc -l) seeds)"
    # the status is the fuzzer's own (not tail's); a fuzzer that ends without its "Done N runs"
    # line never fuzzed
    (cd "$work/$t" && "$work/bin/fuzz_$t" -max_total_time="$duration" -max_len=307200 $dict \
        -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 corpus "$seeds") \
        > "$work/$t/log" 2>&1 || { echo "fuzz_$t: exit status $?"; status=1; }
    tail -25 "$work/$t/log"
    if ! grep -q '^Done [0-9]* runs' "$work/$t/log"; then
        echo "fuzz_$t: no 'Done N runs' line in $work/$t/log"
        status=1
    fi
    # (not `ls a* b*`: that fails whenever one of the patterns matches nothing)
    for f in "$work/$t"/crash-* "$work/$t"/leak-* "$work/$t"/timeout-* "$work/$t"/oom-*; do
        [ -e "$f" ] || continue
        echo "fuzz_$t: finding $f"
        status=1
    done
done
exit $status
