#!/bin/sh
# check_reader_free.sh LIB: LIB (libcollect.so) must hold none of the reader side of store/ (the
# guard on files from others, the UTF-8 decoder of outputs, the demangler): it is injected into
# every traced process, which only writes. Reads LIB's full symbol table with nm; exits 77
# (skipped) where nm is missing or LIB is stripped.
lib=$1
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
syms=$(nm --defined-only "$lib" 2>/dev/null | awk '{print $NF}')
[ -n "$syms" ] || { echo "$lib has no symbol table (stripped): skipped"; exit 77; }
bad=$(printf '%s\n' "$syms" | grep -E '^(store_guard_|guard_tick$|store_read_|store_utf8_decode$|store_demangle$)' || true)
if [ -n "$bad" ]; then
    echo "FAILED: $lib holds reader-side code:" $bad
    exit 1
fi
echo "ok: $lib holds no reader-side code of store/"
