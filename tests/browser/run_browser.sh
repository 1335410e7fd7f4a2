#!/bin/sh
# run_browser.sh install DIR            : npm install playwright-core into DIR (the build folder)
# run_browser.sh CASE DIR FIXTURE SCRIPT [DEMO_DIR]: runs one case of test_page.js against FIXTURE
#   (serve_fixture, or tlview for the demo case, which needs DEMO_DIR/mps-off/n4 and mps-on/n4)
# Exits 77 (skipped) with a message when chromium, node, npm or the installed packages are missing.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
what=$1 dir=$2
if ! command -v node >/dev/null 2>&1; then echo "SKIP: node is not installed"; exit 77; fi
if [ "$what" = install ]; then
  if [ -d "$dir/node_modules/playwright-core" ]; then echo "playwright-core already installed in $dir"; exit 0; fi
  if ! command -v npm >/dev/null 2>&1; then echo "SKIP: npm is not installed"; exit 77; fi
  cd "$dir" && npm install --no-audit --no-fund --loglevel=error && exit 0
  echo "SKIP: npm install failed (no registry?)"; exit 77
fi
if [ ! -x "$CHROMIUM" ]; then echo "SKIP: $CHROMIUM not found (apt-get install chromium)"; exit 77; fi
if [ ! -d "$dir/node_modules/playwright-core" ]; then
  echo "SKIP: $dir/node_modules/playwright-core missing (run the browser__npm_install test)"; exit 77
fi
if [ "$what" = demo ] && ! ls "$5"/mps-off/n4/*.db "$5"/mps-on/n4/*.db >/dev/null 2>&1; then
  echo "SKIP: no demo traces in $5 (mps-off/n4, mps-on/n4)"; exit 77
fi
exec env TLVIEW_BROWSER_DIR="$dir" TLVIEW_FIXTURE="$3" CHROMIUM="$CHROMIUM" node "$4" "$what"
