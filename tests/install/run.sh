#!/usr/bin/env bash
# run.sh BUILD SRC [CMAKE]: installs the build into a temporary prefix (cmake --install BUILD
# --prefix P) and uses tlview from there, with no help from the build or source tree: --help (the
# command table, every summary whole), the man pages and tlview.pc, `record` finding the installed
# libcollect.so (a stand-in command reports the CUDA_INJECTION64_PATH it got; without CUDA,
# tlview.pc and record say the collector was not built), `report` on the
# installed demo traces (the output of tests/golden/spin-off-n4), and `serve --port 0` with no
# files answering /api/runs with the installed demo. Then the tree is moved to a deeper path and
# everything is checked again: nothing may depend on the prefix it was installed to.
# Each failed check prints what was expected and what came; the exit status is 1 if any failed.
set -uo pipefail
build=$(realpath "$1") src=$(realpath "$2") cmake=${3:-cmake}
tmp=$(realpath "$(mktemp -d)")
serve_pid=
cleanup() {
    [ -z "$serve_pid" ] || { kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; }
    rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL [$phase]: $*"
    fails=$((fails + 1))
}
# expect_eq WHAT EXPECTED GOT
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# The build's own view of what should be there.
have_collector=0
[ -f "$build/collector/libcollect.so" ] && have_collector=1
have_serve=0
"$build/cli/tlview" --help | grep -q '^  serve ' && have_serve=1

phase=install
if ! "$cmake" --install "$build" --prefix "$tmp/a" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL: cmake --install $build --prefix $tmp/a"
    exit 1
fi
unset TLVIEW_COLLECTOR TLVIEW_DEMO_DIR CUDA_INJECTION64_PATH
mkdir -p "$tmp/cwd" # run from a folder that holds nothing of tlview's

# check PREFIX: every check on the tree installed (or moved) to PREFIX.
check() {
    local p=$1 tl=$1/bin/tlview
    cd "$tmp/cwd" || exit 1

    # the command table: each summary whole, as written after tlview-summary: in cli/cmd_*.c
    "$tl" --help >"$tmp/help" 2>&1 || fail "tlview --help exited $?"
    local f name want got
    for f in "$src"/cli/cmd_*.c; do
        name=$(basename "$f" .c)
        name=${name#cmd_}
        [ "$name" != serve ] || [ $have_serve = 1 ] || continue
        want=$(awk '/tlview-summary:/ { on = 1; sub(/.*tlview-summary:[ \t]*/, "") }
                    on && /^[ \t]*\*(\/|[ \t]*$)/ { exit } # end of the comment or paragraph
                    on { sub(/^[ \t]*\*[ \t]*/, ""); e = sub(/[ \t]*\*\/.*$/, "")
                         s = s (s == "" ? "" : " ") $0; if (e) exit }
                    END { print s }' "$f")
        got=$(awk -v c="$name" '$1 == c && /^  [^ ]/ { on = 1; sub(/^  [^ ]+ +/, ""); s = $0; next }
                               on && /^             +[^ ]/ { sub(/^ +/, ""); s = s " " $0; next }
                               { on = 0 } END { print s }' "$tmp/help")
        expect_eq "tlview --help, summary of $name" "$want" "$got"
        [ -f "$p/share/man/man1/tlview-$name.1" ] || fail "no man page share/man/man1/tlview-$name.1"
    done
    local long
    long=$(awk '/^Commands:/ { on = 1 } on && length($0) > 80' "$tmp/help")
    [ -z "$long" ] || fail "tlview --help: the command table has lines over 80 columns: $long"

    # man pages: present, and clean for groff (scripts/deps.sh installs it: groff-base; without
    # it the check is skipped, saying so, and fails under CI=true)
    [ -f "$p/share/man/man1/tlview.1" ] || fail "no man page share/man/man1/tlview.1"
    local nogroff="groff is not installed (scripts/deps.sh: groff-base): man pages not rendered"
    if ! command -v groff >/dev/null 2>&1; then
        if [ "${CI:-}" = true ]; then fail "$nogroff (CI=true)"; else echo "skip [$phase]: $nogroff"; fi
    else
        local page warn
        for page in "$p"/share/man/man1/tlview*.1; do
            warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
            [ -z "$warn" ] || fail "groff warns on $page: $warn"
        done
        groff -man -Tutf8 "$p/share/man/man1/tlview-report.1" 2>/dev/null | grep -q -- '--baseline' ||
            fail "tlview-report.1 does not render --baseline"
    fi

    "$tl" record --help >"$tmp/rhelp" 2>&1 || fail "tlview record --help exited $?"
    grep -q '^usage: tlview record' "$tmp/rhelp" || fail "tlview record --help: $(head -1 "$tmp/rhelp")"

    # tlview.pc names the installed collector and the version
    local pc
    pc=$(find "$p" -name tlview.pc)
    [ -n "$pc" ] || fail "no tlview.pc installed"
    if [ -n "$pc" ] && command -v pkg-config >/dev/null 2>&1; then
        export PKG_CONFIG_PATH=$(dirname "$pc")
        expect_eq "pkg-config --modversion tlview" "$("$tl" --version | awk '{print $2}')" \
            "$(pkg-config --modversion tlview 2>&1)"
        expect_eq "pkg-config --variable=tlview tlview" "$(realpath "$tl")" \
            "$(realpath -m "$(pkg-config --variable=tlview tlview)")"
        if [ $have_collector = 1 ]; then
            expect_eq "pkg-config --variable=collector tlview" \
                "$(realpath "$(find "$p" -name libcollect.so)")" \
                "$(realpath -m "$(pkg-config --variable=collector tlview)")"
        else
            expect_eq "pkg-config --variable=collector tlview" \
                "none: tlview was built without CUDA/CUPTI, so libcollect.so was not built" \
                "$(pkg-config --variable=collector tlview)"
        fi
        unset PKG_CONFIG_PATH
    fi

    # record finds the installed collector (the stand-in gets no CUDA, so no trace: status 1)
    if [ $have_collector = 1 ]; then
        local lib rc
        lib=$(realpath "$(find "$p" -name libcollect.so)")
        printf '#!/bin/sh\necho "$CUDA_INJECTION64_PATH" > "%s/injected"\n' "$tmp" >"$tmp/standin"
        chmod +x "$tmp/standin"
        rm -rf "$tmp/rec" "$tmp/injected"
        # (TLVIEW_GPU_CHECK=0: machines without a GPU too)
        TLVIEW_GPU_CHECK=0 "$tl" record -o "$tmp/rec" -- "$tmp/standin" >"$tmp/record.out" 2>&1
        rc=$?
        expect_eq "tlview record's exit status (no trace from the stand-in)" 1 "$rc"
        if grep -q 'libcollect.so not found' "$tmp/record.out"; then
            fail "tlview record: $(cat "$tmp/record.out")"
        fi
        expect_eq "CUDA_INJECTION64_PATH that record gave" "$lib" "$(cat "$tmp/injected" 2>&1)"
    else # without CUDA: record says the build has no collector
        TLVIEW_GPU_CHECK=0 "$tl" record -o "$tmp/rec" -- /bin/true >"$tmp/record.out" 2>&1
        expect_eq "tlview record's exit status (no collector)" 1 "$?"
        grep -q 'this tlview was built without CUDA/CUPTI, so it has no collector of its own' \
            "$tmp/record.out" || fail "tlview record: $(cat "$tmp/record.out")"
    fi

    # report on the installed demo traces: the output of the golden case spin-off-n4
    local traces=$p/share/tlview/traces
    [ -d "$traces/mps-off/n4" ] || fail "no demo traces in $traces/mps-off/n4"
    local golden=$src/tests/golden/spin-off-n4
    if [ -d "$traces/mps-off/n4" ] && [ -f "$golden.cmd" ]; then
        local args
        read -r -a args <"$golden.cmd"
        args=("${args[@]//samples\/spin\/traces\//}") # paths relative to the traces folder
        (cd "$traces" && "$tl" "${args[@]}") >"$tmp/report" 2>"$tmp/report.err"
        rc=$?
        {
            cat "$tmp/report"
            [ ! -s "$tmp/report.err" ] || { echo "--- stderr"; cat "$tmp/report.err"; }
            echo "--- exit $rc"
        } >"$tmp/report.got"
        diff -u "$golden.out" "$tmp/report.got" >"$tmp/report.diff" ||
            fail "tlview ${args[*]} on the installed traces differs from $golden.out:
$(head -40 "$tmp/report.diff")"
    fi

    # serve with no files: the installed demo, on a port of its own
    if [ $have_serve = 1 ]; then
        "$tl" serve --port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
        serve_pid=$!
        local port="" token="" i
        for i in $(seq 1 300); do # up to 30 s: its URL, printed before the demo is read
            port=$(sed -n 's#.*http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p' "$tmp/serve.out")
            token=$(sed -n 's#.*http://127\.0\.0\.1:[0-9]*/?token=\([0-9a-f]*\) .*#\1#p' \
                "$tmp/serve.out")
            [ -n "$port" ] && break
            kill -0 "$serve_pid" 2>/dev/null || break
            sleep 0.1
        done
        if [ -z "$port" ] || [ ${#token} -ne 48 ]; then
            fail "tlview serve --port 0 printed no URL with a token: $(cat "$tmp/serve.out" "$tmp/serve.err")"
        else
            # it answers at once and reads the demo meanwhile: wait until it shows it (30 s)
            for i in $(seq 1 300); do
                if command -v python3 >/dev/null 2>&1; then
                    python3 -c 'import sys, urllib.request as u; sys.exit(b"\"state\":\"loading\"" not in u.urlopen("http://127.0.0.1:%s/api/status?token=%s" % (sys.argv[1], sys.argv[2]), timeout=5).read())' \
                        "$port" "$token" 2>/dev/null || break
                else
                    curl -s --max-time 5 "http://127.0.0.1:$port/api/status?token=$token" |
                        grep -q '"state":"loading"' || break
                fi
                sleep 0.1
            done
            local demo_at="$p/bin/$(realpath -m --relative-to="$p/bin" "$traces")"
            grep -q "showing the demo traces $demo_at/mps-off/n4 and $demo_at/mps-on/n4" \
                "$tmp/serve.err" ||
                fail "tlview serve did not open the installed demo ($demo_at): $(cat "$tmp/serve.err")"
            local runs
            if command -v python3 >/dev/null 2>&1; then
                runs=$(python3 - "$port" "$token" <<'EOF'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("GET", "/api/runs", headers={"Authorization": "Bearer " + sys.argv[2]})
r = c.getresponse()
body = r.read()
if r.status != 200:
    print("HTTP %d: %s" % (r.status, body[:200]))
else:
    print(" | ".join("%s: %d kernels" % (x["label"], x["summary"]["kernels"]) for x in json.loads(body)["runs"]))
EOF
                )
            else
                runs=$(curl -s --max-time 30 "http://127.0.0.1:$port/api/runs?token=$token" |
                    grep -o '"label": *"[^"]*"' | sed 's/"label": *"\([^"]*\)"/\1/' | paste -sd'|')
            fi
            case $runs in
            *"mps-off/n4 (demo, H200)"*"mps-on/n4 (demo, H200)"*) ;;
            *) fail "GET /api/runs: expected the runs mps-off/n4 and mps-on/n4 of the demo, got: $runs" ;;
            esac
            echo "[$phase] /api/runs on port $port: $runs"
        fi
        kill "$serve_pid" 2>/dev/null
        wait "$serve_pid"
        rc=$?
        serve_pid=
        expect_eq "tlview serve's exit status on SIGTERM" 0 "$rc"
    fi
    echo "[$phase] checked $p"
}

phase="installed to $tmp/a"
check "$tmp/a"
# moved: another path, another depth; the old one is gone
mkdir -p "$tmp/moved/deeper"
mv "$tmp/a" "$tmp/moved/deeper/b"
phase="moved to $tmp/moved/deeper/b"
check "$tmp/moved/deeper/b"

if [ $fails -gt 0 ]; then
    echo "$fails checks failed"
    exit 1
fi
echo "all install checks passed (collector: $have_collector, serve: $have_serve)"
