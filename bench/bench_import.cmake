# bench_import (owned with importers/): nvprof import throughput beside plain sqlite3 on the
# same generated file. Run: build/bench/bench_import [KERNELS] [DIR].
if(TARGET tlview_importers)
  add_executable(bench_import ${CMAKE_CURRENT_SOURCE_DIR}/bench_import.c)
  target_link_libraries(bench_import PRIVATE tlview_importers)
endif()
