#!/usr/bin/env bash
# Installs what tlview needs to build and test on Debian/Ubuntu (run as root, or with sudo).
# CUDA is optional: without it the collector and the samples are skipped.
# TLVIEW_TEST_TOOLS=0 leaves out the tools only the tests use (clang, libFuzzer, clang-format),
# TLVIEW_BROWSER_TESTS=0 the browser tests' (chromium, wrk, node): scripts/serve sets both.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsqlite3-dev sqlite3 libmicrohttpd-dev libjansson-dev
      zlib1g-dev)
if [ "${TLVIEW_TEST_TOOLS:-1}" = 1 ]; then
  pkgs+=(clang libclang-rt-14-dev # libFuzzer, for scripts/test's fuzz run of the loader
         clang-format             # tests/format (version 14 on Debian 12, the one it wants)
         groff-base               # tests/install renders the man pages (groff -man -ww)
         libopenmpi-dev openmpi-bin) # `mpirun -n R tlview job`: the MPI engine and its tests
fi
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
if [ "${TLVIEW_BROWSER_TESTS:-1}" = 1 ]; then
  pkgs+=(chromium wrk)
  # node and npm may come from another packaging (nodesource ships npm inside nodejs)
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "tlview: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
