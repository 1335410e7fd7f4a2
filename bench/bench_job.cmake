# bench_job: the job index and `tlview job` on a synthetic MPI job (bench_job_gen writes it;
# bench_job.sh runs the whole measure). See bench_job.md.
add_executable(bench_job_gen ${CMAKE_CURRENT_LIST_DIR}/bench_job_gen.c)
target_link_libraries(bench_job_gen PRIVATE tlview_store)
if(TARGET tlview_job)
  add_executable(bench_job ${CMAKE_CURRENT_LIST_DIR}/bench_job.c)
  target_link_libraries(bench_job PRIVATE tlview_job PkgConfig::SQLITE3)
  target_include_directories(bench_job PRIVATE ${CMAKE_SOURCE_DIR}/job) # job_int.h: the halves
endif()
