# mps_procs.sh: sourced by the GPU scripts (tests/gpu/record_demos.sh, bench/mps_placement.sh).
# mps_procs prints how many nvidia-cuda-mps-* processes are alive; zombies waiting for a parent to
# reap them are not counted.
mps_procs() {
    local f n=0
    for f in /proc/[0-9]*/stat; do
        case $(cat "$f" 2>/dev/null) in *"(nvidia-cuda-mps"*") "[!Z]*) n=$((n + 1)) ;; esac
    done
    echo $n
}
