#!/usr/bin/env bash
# fake_gpu.sh: a stand-in GPU for test_verdicts.sh, which runs verdicts.sh on a machine without
# one. Linked under the names of what verdicts.sh calls, it acts by the name it is called by:
#   nvidia-smi               lists one GPU (-L), or prints a driver version and compute mode
#   nvidia-cuda-mps-control  -d: creates CUDA_MPS_PIPE_DIRECTORY/control; `quit` on stdin removes
#                            it; both are appended to FAKE_GPU_CALLS
#   spin, contexts, burst, saturating, python3 .../torch_workers.py:
#                            a CUDA program: writes the trace file(s) the collector would
#                            (TLVIEW_OUTPUT, %p = a made-up pid, with FAKE_GPU_MK = make_trace:
#                            one kernel per --launches, one file per --workers), or with
#                            --profile DIR one Chrome trace per worker (FAKE_GPU_CHROME with its
#                            pid replaced); compute API kind 2 when it is an MPS client, and exit 3
#                            when it is the client of a daemon that is not running
#   python3 (anything else)  FAKE_GPU_PY, the real python3
set -u
prog=$(basename "$0")
case $prog in
nvidia-smi)
    if [ "${1:-}" = -L ]; then echo "GPU 0: Stand-in H200 (UUID: GPU-0)"; else echo "580, Default"; fi
    exit 0 ;;
nvidia-cuda-mps-control)
    if [ "${1:-}" = -d ]; then
        echo "-d" >>"$FAKE_GPU_CALLS"
        touch "$CUDA_MPS_PIPE_DIRECTORY/control"
    else
        read -r cmd
        echo "$cmd" >>"$FAKE_GPU_CALLS"
        rm -f "$CUDA_MPS_PIPE_DIRECTORY/control"
    fi
    exit 0 ;;
python3)
    case ${1:-} in
    *torch_workers.py) prog=torch; shift ;;
    *) exec "$FAKE_GPU_PY" "$@" ;;
    esac ;;
esac

echo "$prog $*"
kind=1
if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then
    [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] || { echo "$prog: no MPS daemon" >&2; exit 3; }
    kind=2
fi
launches=1 workers=1 profile=''
while [ $# -gt 0 ]; do
    case $1 in
    --launches) launches=$2 ;;
    --workers) workers=$2 ;;
    --profile) profile=$2 ;;
    esac
    shift
done
case $prog in # kernel name:duration in ms
spin) k=_Z18testMaxFlopsKernelPfiff:224 ;;
contexts) k=_Z18testMaxFlopsKernelPfiff:448 ;;
burst) k=_Z12burst_kernelPfi:0.045 ;;
saturating) k=_Z8fill_smsPfi:250 ;;
torch) k=gemm:0.01 ;;
*) echo "fake_gpu.sh: called as $prog" >&2; exit 2 ;;
esac
ks=()
for i in $(seq "$launches"); do ks+=("$i:${k#*:}:${k%%:*}:1"); done
for r in $(seq 0 $((workers - 1))); do
    pid=$(($$ * 10 + r))
    if [ -n "$profile" ]; then
        sed "s/4242/$pid/g" "$FAKE_GPU_CHROME" >"$profile/trace.$r.json"
    elif [ -n "${TLVIEW_OUTPUT:-}" ]; then
        "$FAKE_GPU_MK" "${TLVIEW_OUTPUT//%p/$pid}" "$pid" "$kind" "${ks[@]}" || exit 4
    fi
done
echo "Test PASSED"
