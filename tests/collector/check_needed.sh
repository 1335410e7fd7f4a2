#!/bin/sh
# check_needed.sh LIB: LIB (libcollect.so) must not need the C++ runtime, nor the viewer's
# libraries (jansson, libmicrohttpd): it is loaded into every traced process, which should get
# nothing more than CUPTI, SQLite and the C library from it (ARCHITECTURE.md). Reads the dynamic
# section with readelf -d, else objdump -p; exits 77 (skipped) where neither is installed,
# except under CI=true, where that fails.
lib=$1
if command -v readelf >/dev/null 2>&1; then
    needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
elif command -v objdump >/dev/null 2>&1; then
    needed=$(objdump -p "$lib" | awk '$1 == "NEEDED" {print $2}')
else
    if [ "${CI:-}" = true ]; then
        echo "FAILED: neither readelf nor objdump is installed (binutils), and CI=true"
        exit 1
    fi
    echo "SKIP: neither readelf nor objdump is installed (binutils)"
    exit 77
fi
[ -n "$needed" ] || { echo "FAILED: no NEEDED entries read from $lib"; exit 1; }
echo "$lib needs:" $needed
bad=$(echo "$needed" | grep -E '^lib(stdc\+\+|jansson|microhttpd)\.' || true)
if [ -n "$bad" ]; then
    echo "FAILED: $lib needs" $bad "(every traced process would load it)"
    exit 1
fi
echo "ok: no C++ runtime, no viewer library"
