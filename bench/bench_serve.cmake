# bench_serve: the `tlview serve` benchmark on a generated 10M-kernel run (first paint, viewport
# query latency at several zoom levels, memory per kernel); bench_serve_wrk.sh adds wrk with 64
# connections. tlview_bench_gen (the generator) is shared with tests/browser's fixture server.
if(TARGET tlview_web)
  add_library(tlview_bench_gen STATIC ${CMAKE_CURRENT_LIST_DIR}/bench_serve_gen.c)
  target_include_directories(tlview_bench_gen PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(tlview_bench_gen PUBLIC tlview_store)
  add_executable(bench_serve ${CMAKE_CURRENT_LIST_DIR}/bench_serve.c)
  target_link_libraries(bench_serve PRIVATE tlview_bench_gen tlview_web)
  # tests/web registers a small run of it as the test bench__serve_1m
endif()
