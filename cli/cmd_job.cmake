# cmd_job.cmake: `tlview job` needs job/ (and, through it, MPI when job/ was built with it).
if(NOT TARGET tlview_job)
  message(FATAL_ERROR "cli/cmd_job.c needs job/")
endif()
target_link_libraries(tlview PRIVATE tlview_job)
