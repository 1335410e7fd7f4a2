#!/bin/bash
# Stand-in for a CUDA program under `tlview record` (tests/record/test_record.c): writes its
# start time (CLOCK_REALTIME µs, taken without forking), how many children its parent (record) has
# at that moment, its pid and the environment record gave it to $STANDIN_DIR/rank.$TLVIEW_RANK,
# then behaves as the test asks:
#   STANDIN_EXIT_RANK/STANDIN_EXIT_CODE  this rank exits with that code
#   STANDIN_SLEEP=S                      sleep S seconds; SIGINT/SIGTERM are logged, then exit 128+n
#   STANDIN_TRACE_DIR=D                  copy D/template.$TLVIEW_RANK.db to TLVIEW_OUTPUT with %p
#                                        set to our pid: a trace file as the collector would leave
start=${EPOCHREALTIME/./}
read -r -a siblings < /proc/$PPID/task/$PPID/children   # record's children alive right now
out="$STANDIN_DIR/rank.$TLVIEW_RANK"
{
    echo "start_us=$start"
    echo "siblings=${#siblings[@]}"
    echo "pid=$$"
    echo "TLVIEW_RANK=$TLVIEW_RANK"
    echo "TLVIEW_NPROCS=$TLVIEW_NPROCS"
    echo "TLVIEW_RUN_ID=$TLVIEW_RUN_ID"
    echo "TLVIEW_OUTPUT=$TLVIEW_OUTPUT"
    echo "TLVIEW_RECORD_DIR=$TLVIEW_RECORD_DIR"
    echo "CUDA_INJECTION64_PATH=$CUDA_INJECTION64_PATH"
    echo "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY"
    echo "CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY"
    echo "args=$*"
} > "$out.tmp"
mv "$out.tmp" "$out"
if [ -n "$STANDIN_TRACE_DIR" ]; then
    cp "$STANDIN_TRACE_DIR/template.$TLVIEW_RANK.db" "${TLVIEW_OUTPUT//%p/$$}"
fi
if [ -n "$STANDIN_SLEEP" ]; then
    trap 'echo "got=SIGINT" >> "$out"; exit 130' INT
    trap 'echo "got=SIGTERM" >> "$out"; exit 143' TERM
    sleep "$STANDIN_SLEEP" &
    wait $!
fi
if [ "$STANDIN_EXIT_RANK" = "$TLVIEW_RANK" ]; then
    exit "$STANDIN_EXIT_CODE"
fi
exit 0
