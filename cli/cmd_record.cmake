# Build settings of `tlview record` and `tlview advise` (cli/record_env.c), included by
# cli/CMakeLists.txt: where an installed libcollect.so lives relative to the installed binary
# (bin/ -> lib/tlview/, set by the top CMakeLists.txt), the last place they look for the collector
# after $TLVIEW_COLLECTOR and the build tree. Relative, so an install tree works under any prefix
# and after a move. And whether this build made a collector at all (collector/ is configured
# before cli/): without CUDA it did not, and record says so when it finds none.
if(TARGET collect)
  set(collector_built 1)
else()
  set(collector_built 0)
endif()
target_compile_definitions(tlview PRIVATE TLVIEW_COLLECTOR_RELDIR="${TLVIEW_REL_COLLECTORDIR}"
                                          TLVIEW_COLLECTOR_BUILT=${collector_built})
