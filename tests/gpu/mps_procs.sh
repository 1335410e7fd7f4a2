# mps_procs.sh: sourced by the GPU scripts (tests/gpu/run.sh, tests/gpu/record_demos.sh,
# bench/mps_placement.sh).
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
