#!/usr/bin/env bash
# gemm_corun.sh: how much of the GPU the matrix products and convolutions of inference hold when
# clients run them side by side under MPS. For each operation (float32; by default the products
# of BERT and GPT-2 at batch 4 and seq 128, mm:512xKxN, and with --ops any of bench/gemm_corun.py's
# mm:MxKxN, conv:NxCxHxWxKxR, sm:RxC, ln:RxC or gelu:RxC), N = 1 client alone (its launches recorded by libcollect: grid,
# block, registers, shared memory), then N = 2, 4, 8 clients started together without MPS and as
# clients of a private MPS daemon, each running the same ITERS operations back to back
# (bench/gemm_corun.py). Effective parallelism = N x the solo time per product over the
# span of the N clients' loops per product: 1 when they ran one at a time, N when fully side by
# side. The MPS daemon follows ../shared/GPU.md (pipe and log folders in the work folder; always
# quit, also from an EXIT trap); no card setting is changed.
# Prints the table (also OUTDIR/table.md), writes OUTDIR/raw.txt (every client line, prefixed
# "OP MODE N") and the solo recordings OUTDIR/solo-OP/ (the ':' of OP as '-'). Exit status: 0 when every client
# exited 0 and no nvidia-cuda-mps process is left, 1 otherwise, 77 without a GPU, 2 usage.
# --mixes "A+B ...": also N = 2, 4, 8 clients of which half run A and half B (both among --ops,
# whose solo runs are their references): whether different kinds (a GEMM beside a softmax) share
# the GPU better than one kind beside itself. Each side runs as many operations as take the longer
# side's ITERS alone (from the solo runs), so both loops are as long and the two can overlap
# throughout. Their rows: effective parallelism = the clients' solo time per operation times their
# operations, summed, over the span of their loops.
# --graph K: each client replays its operations K at a time from a CUDA graph (ITERS, and a mix's
# operation counts, rounded to multiples of K), so loops of small operations (softmax, layer norm)
# are paced by the GPU rather than by Python's launches.
# Usage: bench/gemm_corun.sh [--iters K] [--graph K] [--ops "mm:MxKxN conv:NxCxHxWxKxR sm:RxC ln:RxC gelu:RxC ..."]
#                            [--mixes "A+B ..."] BUILD_DIR OUTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
ITERS=2000 GRAPH=0 OPS="mm:512x768x768 mm:512x768x3072 mm:512x3072x768 mm:512x768x2304" MIXES='' args=()
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --iters) [ $# -ge 2 ] || usage; ITERS=$2; shift ;;
    --ops) [ $# -ge 2 ] || usage; OPS=$2; shift ;;
    --graph) [ $# -ge 2 ] || usage; GRAPH=$2; shift ;;
    --mixes) [ $# -ge 2 ] || usage; MIXES=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "gemm_corun.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} = 2 ] || usage
case $ITERS in '' | 0 | *[!0-9]*) echo "gemm_corun.sh: --iters wants a positive integer" >&2; exit 2 ;; esac
case $GRAPH in '' | *[!0-9]*) echo "gemm_corun.sh: --graph wants an integer >= 0" >&2; exit 2 ;; esac
[ "$GRAPH" = 0 ] || [ $((ITERS % GRAPH)) = 0 ] ||
    { echo "gemm_corun.sh: --iters must be a multiple of --graph" >&2; exit 2; }
for s in $OPS; do
    [[ $s =~ ^mm:[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$ || $s =~ ^conv:[1-9][0-9]*(x[1-9][0-9]*){5}$ ||
        $s =~ ^(sm|ln|gelu):[1-9][0-9]*x[1-9][0-9]*$ ]] ||
        { echo "gemm_corun.sh: '$s' is not mm:MxKxN, conv:NxCxHxWxKxR, sm:RxC, ln:RxC nor gelu:RxC" >&2; exit 2; }
done
for m in $MIXES; do
    [[ $m == *+* && " $OPS " == *" ${m%%+*} "* && " $OPS " == *" ${m#*+} "* && ${m#*+} != *+* ]] ||
        { echo "gemm_corun.sh: mix '$m' is not A+B of two operations of --ops" >&2; exit 2; }
done
source "$here/../tests/gpu/mps_procs.sh"
need_gpu bench/gemm_corun.sh
LIB=$(cd "${args[0]}" 2>/dev/null && pwd)/collector/libcollect.so
[ -f "$LIB" ] || { echo "gemm_corun.sh: $LIB not found" >&2; exit 2; }
mkdir -p "${args[1]}" || exit 2
OUTD=$(cd "${args[1]}" && pwd)
W=$(mktemp -d /tmp/tlgemm.XXXXXX)
MPS_LOG=$OUTD/mps-control.log
mps_guard
: >"$OUTD/raw.txt"
BAD=0

# solo_us OP: OP's solo time per operation in microseconds (its N = 1 line of raw.txt)
solo_us() {
    awk -v op="$1" '$1 == op && $2 == "off" && $3 == 1 { sub(/.*us_per_op=/, ""); print; exit }' \
        "$OUTD/raw.txt"
}

# run OP MODE N: N clients started together (MODE on: MPS clients; N = 1 off: recorded); OP
# A+B: the odd clients run A, the even ones B, each as many operations as the longer side's ITERS
# take alone
run() {
    local shape=$1 mode=$2 n=$3 i go=$W/go env=() ops iters=() a b
    IFS=+ read -r -a ops <<<"$shape"
    iters=("$ITERS" "$ITERS")
    if [ ${#ops[@]} = 2 ]; then
        a=$(solo_us "${ops[0]}") b=$(solo_us "${ops[1]}")
        if [ -n "$a" ] && [ -n "$b" ]; then
            read -r -a iters < <(awk -v a="$a" -v b="$b" -v k="$ITERS" -v g="$GRAPH" \
                'function r(x) { if (g < 1) return int(x + 0.5); x = int(x / g + 0.5) * g; return x < g ? g : x }
                 BEGIN { m = a > b ? a : b; printf "%d %d\n", r(k * m / a), r(k * m / b) }')
        fi
    fi
    rm -rf "$go" && mkdir -p "$go"
    if [ "$n" = 1 ]; then
        env=("CUDA_INJECTION64_PATH=$LIB" "TLVIEW_OUTPUT=$OUTD/solo-${shape/:/-}/p.%p.db")
        mkdir -p "$OUTD/solo-${shape/:/-}"
    fi
    PIDS=()
    for i in $(seq "$n"); do
        timeout -k 5 150 env "${env[@]}" python3 "$here/gemm_corun.py" --op "${ops[$(((i - 1) % ${#ops[@]}))]}" \
            --iters "${iters[$(((i - 1) % ${#ops[@]}))]}" --graph "$GRAPH" --go "$go" >"$W/out.$i" 2>"$W/err.$i" &
        PIDS+=($!)
    done
    local t=0
    while [ "$(find "$go" -name 'READY.*' | wc -l)" -lt "$n" ] && [ $t -lt 1200 ]; do
        sleep 0.1
        t=$((t + 1))
    done
    touch "$go/GO"
    for i in $(seq "$n"); do
        if ! wait "${PIDS[$((i - 1))]}"; then
            BAD=$((BAD + 1))
            echo "gemm_corun.sh: $shape $mode N=$n client $i failed:" >&2
            tail -n 3 "$W/err.$i" >&2
        fi
        sed "s/^/$shape $mode $n /" "$W/out.$i" >>"$OUTD/raw.txt"
    done
    PIDS=()
}

for s in $OPS; do
    run "$s" off 1
    for n in 2 4 8; do run "$s" off "$n"; done
done
for m in $MIXES; do
    for n in 2 4 8; do run "$m" off "$n"; done
done
if mps_start; then
    for s in $OPS $MIXES; do
        for n in 2 4 8; do run "$s" on "$n"; done
    done
    mps_stop
else
    BAD=$((BAD + 1))
fi
left=$(mps_procs)
echo "gemm_corun.sh: nvidia-cuda-mps processes left: $left"
[ "$left" = 0 ] || BAD=$((BAD + 1))
python3 "$here/gemm_corun_table.py" "$OUTD" | tee "$OUTD/table.md" || BAD=$((BAD + 1))
rm -rf "$W"
[ $BAD = 0 ]
