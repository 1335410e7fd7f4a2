#!/bin/sh
# check_exports.sh LIB: LIB must define exactly one dynamic symbol, InitializeInjection.
# Exits 77 (skipped) where nm is missing.
lib=$1
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
got=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort | tr '\n' ' ')
if [ "$got" != "InitializeInjection " ]; then
    echo "$lib exports: $got"
    echo "expected:  InitializeInjection"
    exit 1
fi
echo "$lib exports only InitializeInjection"
