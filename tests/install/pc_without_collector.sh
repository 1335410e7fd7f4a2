#!/bin/sh
# pc_without_collector.sh SRC WORK [CMAKE]: configures SRC without CUDA (TLVIEW_WITH_CUPTI=OFF,
# no tests: configuring is enough, tlview.pc is written then) into WORK and checks that tlview.pc
# says the collector was not built, where pkg-config would otherwise print an empty line; whatever
# this machine has. (2026-12, issue 28.)
set -u
src=$1 work=$2 cmake=${3:-cmake}
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "SKIP: pkg-config is not installed, so tlview.pc cannot be read"
    exit 77
fi
rm -rf "$work"
if ! "$cmake" -S "$src" -B "$work" -DTLVIEW_WITH_CUPTI=OFF -DTLVIEW_BUILD_TESTS=OFF \
    >"$work.log" 2>&1; then
    cat "$work.log"
    echo "FAILED: configuring without CUDA"
    exit 1
fi
want="none: tlview was built without CUDA/CUPTI, so libcollect.so was not built"
got=$(PKG_CONFIG_PATH=$work pkg-config --variable=collector tlview)
if [ "$got" != "$want" ]; then
    echo "FAILED: pkg-config --variable=collector tlview: expected '$want', got '$got'"
    exit 1
fi
echo "pkg-config --variable=collector tlview: $got"
rm -rf "$work" "$work.log"
