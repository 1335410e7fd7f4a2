# mps_procs.sh: the MPS and GPU helpers of the GPU scripts (tests/gpu/*.sh, bench/mps_*.sh).
# need_gpu NAME exits 77, saying "NAME: no GPU here ...: skipped", when nvidia-smi -L lists none.
need_gpu() {
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && return 0
    echo "$1: no GPU here (nvidia-smi -L lists none): skipped"
    exit 77
}
# mps_procs prints how many nvidia-cuda-mps-* processes are alive; zombies waiting for a parent to
# reap them are not counted.
# mps_wait_gone waits, polling every 0.1 s, up to 10 s for mps_procs to reach 0 (the control daemon
# and its server exit a moment after `quit`); it returns at once when none is left.
mps_procs() {
    local f n=0
    for f in /proc/[0-9]*/stat; do
        case $(cat "$f" 2>/dev/null) in *"(nvidia-cuda-mps"*") "[!Z]*) n=$((n + 1)) ;; esac
    done
    echo $n
}
mps_wait_gone() {
    local _
    for _ in $(seq 100); do
        [ "$(mps_procs)" = 0 ] && return 0
        sleep 0.1
    done
}
# mps_start starts a private control daemon as ../../../shared/GPU.md prescribes: pipe and log
# folders under $W (the caller's work folder), exported for the clients it starts next. With DRY=1
# it only prints the commands. Returns 1, saying so, when the daemon does not start.
# mps_stop [LOG] quits the daemon started by mps_start (nothing when none is up), waits for its
# processes to go, keeps its control log as LOG (default $MPS_LOG) and prints how many clients it
# served and how many nvidia-cuda-mps processes are left (0 unless something is wrong).
MPS_UP=0
mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log
    if [ "${DRY:-0}" = 1 ]; then
        echo "+ export CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log"
        echo "+ nvidia-cuda-mps-control -d"
        MPS_UP=1
        return 0
    fi
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if ! nvidia-cuda-mps-control -d; then
        echo "${0##*/}: nvidia-cuda-mps-control -d failed: the MPS runs are skipped"
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        return 1
    fi
    MPS_UP=1
    echo "${0##*/}: MPS control daemon started (pipe $CUDA_MPS_PIPE_DIRECTORY)"
}
mps_stop() {
    [ $MPS_UP = 1 ] || return 0
    MPS_UP=0
    if [ "${DRY:-0}" = 1 ]; then
        echo "+ echo quit | nvidia-cuda-mps-control"
    else
        echo quit | nvidia-cuda-mps-control
        mps_wait_gone
        local log=${1:-$MPS_LOG} clients
        cp "$CUDA_MPS_LOG_DIRECTORY/control.log" "$log" 2>/dev/null
        rm -f "$CUDA_MPS_LOG_DIRECTORY/control.log"
        clients=$(grep -c 'NEW CLIENT' "$log" 2>/dev/null)
        echo "${0##*/}: MPS stopped; ${clients:-0} NEW CLIENT lines in its log;" \
            "nvidia-cuda-mps processes left: $(mps_procs)"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
# mps_guard [CLEANUP] sets the traps of a script that runs MPS clients: CLEANUP on EXIT (default
# mps_cleanup: kills the caller's processes still listed in PIDS, then mps_stop), exit 130 on INT
# and 143 on TERM (through the EXIT trap). Unless DRY=1 it warns when nvidia-cuda-mps processes
# already run: the script's final check counts them too.
PIDS=()
mps_cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    mps_stop
}
mps_guard() {
    # shellcheck disable=SC2064 # the function's name is meant to be expanded now
    trap "${1:-mps_cleanup}" EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    if [ "${DRY:-0}" = 0 ] && [ "$(mps_procs)" != 0 ]; then
        echo "${0##*/}: $(mps_procs) nvidia-cuda-mps process(es) already running; the final" \
            "check counts them too"
    fi
}
# pack_outdir DIR TAR [MAX_MB] packs DIR (under its own name) into TAR and prints its size;
# returns 1 when tar fails or TAR is over MAX_MB MB.
pack_outdir() {
    local size
    tar -czf "$2" -C "$(dirname "$1")" "$(basename "$1")" || return 1
    size=$(stat -c %s "$2")
    echo "${0##*/}: packed $1 into $2 ($((size / 1024)) KiB)"
    if [ -n "${3:-}" ] && [ "$size" -gt $(($3 * 1024 * 1024)) ]; then
        echo "${0##*/}: $2 is over $3 MB"
        return 1
    fi
}
