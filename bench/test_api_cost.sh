#!/usr/bin/env bash
# test_api_cost.sh: the CPU half of bench/api_cost.sh: its usage errors, and the table builder
# (api_cost_table.py) on a stand-in run: RESULT lines and one traced file with a launch call, a
# query and a kernel.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bash "$here/api_cost.sh" b o >/dev/null 2>&1
[ $? = 2 ] || fail "no WORKLOAD is a usage error"
bash "$here/api_cost.sh" --rounds 0 b o gpt2 >/dev/null 2>&1
[ $? = 2 ] || fail "--rounds 0 is a usage error"
bash "$here/api_cost.sh" --bogus b o gpt2 >/dev/null 2>&1
[ $? = 2 ] || fail "an unknown option is a usage error"
{
    echo '1 untraced RESULT {"seconds": 1.0}'
    echo '1 api RESULT {"seconds": 1.7}'
    echo '2 untraced RESULT {"seconds": 2.0}'
    echo '2 api RESULT {"seconds": 1.9}'
    echo 'not a result line'
} >"$t/raw.txt"
mkdir -p "$t/api.1"
python3 - "$t/api.1/p.1.db" <<'PY' || fail "stand-in file"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL, demangled TEXT);
CREATE TABLE api(start, dur, process_id, thread_id, correlation_id, domain, cbid, name_id, status);
CREATE TABLE kernel(start, dur, launch_id, correlation_id);
INSERT INTO strings VALUES (1, 'cudaLaunchKernel_v7000', NULL), (2, 'cudaGetDevice_v3020', NULL);
INSERT INTO api VALUES (0, 1, 1, 1, 5, 1, 0, 1, 0), (2, 1, 1, 1, 6, 1, 0, 2, 0);
INSERT INTO kernel VALUES (3, 4, 1, 5);
""")
db.commit()
PY
got=$(python3 "$here/api_cost_table.py" "$t") || fail "api_cost_table.py failed"
# untraced median 1.5 s; api median 1.8 s = 1.20x; one kernel, two API records, one a query
echo "$got" | grep -q '^| untraced | 1.000, 2.000 | 1.500 | 1.00x | - | - | - |$' || fail "untraced row: $got"
echo "$got" | grep -q '^| api | 1.700, 1.900 | 1.800 | 1.20x | 1 | 2 | 1 |$' || fail "api row: $got"
echo "$got" | grep -q '^| collector | - | - | - | - | - | - |$' || fail "an arm without runs: $got"
echo "test_api_cost: ok"
