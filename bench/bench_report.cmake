# bench_report: load + analysis of 10M kernels in 16 files beside a plain SQLite scan of the same
# rows, and peak memory per kernel; bench_report_gen writes the files. See bench_report.md.
add_executable(bench_report_gen ${CMAKE_CURRENT_LIST_DIR}/bench_report_gen.c)
target_link_libraries(bench_report_gen PRIVATE tlview_store)
add_executable(bench_report ${CMAKE_CURRENT_LIST_DIR}/bench_report.c)
target_link_libraries(bench_report PRIVATE tlview_analysis tlview_store PkgConfig::SQLITE3
                      Threads::Threads)
