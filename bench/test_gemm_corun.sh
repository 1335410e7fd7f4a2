#!/usr/bin/env bash
# test_gemm_corun.sh: the CPU half of bench/gemm_corun.sh: its usage errors, and the table builder
# (gemm_corun_table.py) on a stand-in run: client lines and a solo recording with one launch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bash "$here/gemm_corun.sh" --ops mm:512x768 b o >/dev/null 2>&1
[ $? = 2 ] || fail "a product that is not mm:MxKxN is a usage error"
bash "$here/gemm_corun.sh" --ops conv:32x64x56x56x64 b o >/dev/null 2>&1
[ $? = 2 ] || fail "a convolution that is not conv:NxCxHxWxKxR is a usage error"
bash "$here/gemm_corun.sh" --ops mm:0x768x768 b o >/dev/null 2>&1
[ $? = 2 ] || fail "a zero dimension is a usage error"
bash "$here/gemm_corun.sh" --ops sm:512 b o >/dev/null 2>&1
[ $? = 2 ] || fail "a softmax that is not sm:RxC is a usage error"
bash "$here/gemm_corun.sh" --ops "mm:512x768x768 sm:512x768" --mixes "mm:512x768x768+ln:512x768" b o \
    >/dev/null 2>&1
[ $? = 2 ] || fail "a mix of an operation not among --ops is a usage error"
bash "$here/gemm_corun.sh" --ops "mm:512x768x768 sm:512x768" --mixes "mm:512x768x768" b o \
    >/dev/null 2>&1
[ $? = 2 ] || fail "a mix that is not A+B is a usage error"
bash "$here/gemm_corun.sh" --iters 0 b o >/dev/null 2>&1
[ $? = 2 ] || fail "--iters 0 is a usage error"
bash "$here/gemm_corun.sh" b >/dev/null 2>&1
[ $? = 2 ] || fail "one argument is a usage error"
bash "$here/gemm_corun.sh" --iters 2000 --graph 300 b o >/dev/null 2>&1
[ $? = 2 ] || fail "--iters that is not a multiple of --graph is a usage error"
bash "$here/gemm_corun.sh" --graph x b o >/dev/null 2>&1
[ $? = 2 ] || fail "--graph that is not an integer is a usage error"
python3 "$here/gemm_corun.py" --op mm:4x4x4 --iters 100 --graph 30 --go "$t" >/dev/null 2>&1
[ $? = 2 ] || fail "the client refuses --iters that is not a multiple of --graph"
# solo 100 us per product (2000 in 0.2 s); MPS N = 2 span 0.25 s (2 x 0.2 / 0.25 = 1.6); off N = 2
# span 0.44 s (0.91)
s=mm:512x768x2304
c="gemm_corun: op=mm shape=512x768x2304 iters=2000"
{
    echo "$s off 1 $c start_ns=1000 end_ns=200001000 us_per_op=100.000"
    echo "$s off 2 $c start_ns=0 end_ns=440000000 us_per_op=220.000"
    echo "$s off 2 $c start_ns=5 end_ns=430000000 us_per_op=215.000"
    echo "$s on 2 $c start_ns=0 end_ns=240000000 us_per_op=120.000"
    echo "$s on 2 $c start_ns=10000000 end_ns=250000000 us_per_op=120.000"
    # softmax solo 25 us per operation (2000 in 50 ms); beside the product under MPS, N = 2: the
    # product's client 0.2 s of solo work, the softmax's 0.05 s, in a span of 0.21 s: 1.19
    echo "sm:512x768 off 1 gemm_corun: op=sm shape=512x768 iters=2000 start_ns=0 end_ns=50000000 us_per_op=25.000"
    echo "$s+sm:512x768 on 2 $c start_ns=0 end_ns=210000000 us_per_op=105.000"
    echo "$s+sm:512x768 on 2 gemm_corun: op=sm shape=512x768 iters=2000 start_ns=1000 end_ns=60000000 us_per_op=30.000"
    echo "not a client line"
} >"$t/raw.txt"
mkdir -p "$t/solo-mm-512x768x2304"
python3 - "$t/solo-mm-512x768x2304/p.1.db" <<'PY' || fail "stand-in recording"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL, demangled TEXT);
CREATE TABLE device(process_id, device_id, uuid, name, sm_count, cc_major, cc_minor, global_memory);
CREATE TABLE launch(id INTEGER PRIMARY KEY, context_row, stream_id, name_id, grid_x, grid_y, grid_z,
  block_x, block_y, block_z, registers, static_smem, dynamic_smem, local_mem);
CREATE TABLE kernel(start, dur, launch_id, correlation_id);
INSERT INTO strings VALUES (1, 'sm80_xmma_gemm', NULL), (2, 'fill', NULL);
INSERT INTO device VALUES (1, 0, 'u', 'NVIDIA H200', 132, 9, 0, 0);
INSERT INTO launch VALUES (1, 1, 7, 1, 4, 144, 1, 128, 1, 1, 121, 12672, 0, 0);
INSERT INTO launch VALUES (2, 1, 7, 2, 1, 1, 1, 32, 1, 1, 8, 0, 0, 0);
INSERT INTO kernel VALUES (0, 100000, 1, 1), (200000, 100000, 1, 2), (400000, 5000, 2, 3);
""")
c.commit()
PY
out=$(python3 "$here/gemm_corun_table.py" "$t") || fail "gemm_corun_table.py failed"
# 576 blocks of 128 threads, 121 registers, 12672 B of shared memory: 4 per SM by registers, 1.09
# waves, 0.545 of the SMs on average; one block per SM: all of them
echo "$out" | grep -q "^| $s | sm80_xmma_gemm | 576 | 128 | 121 | 12672 | 0.545 | 1.000 | 100.0 | 0.91 | - | - | 1.60 | - | - | 1.8/1.8/1.8 | 1/1/1 |$" ||
    fail "table row: $out"
echo "$out" | grep -q "^| $s+sm:512x768 | - | - | - | 1.19 | - | - |$" || fail "mix row: $out"
echo "test_gemm_corun: ok"
