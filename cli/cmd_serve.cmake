# cmd_serve.cmake: `tlview serve` needs web/ (libmicrohttpd + jansson) and the places of the
# bundled demo traces: in the source tree (set by web/CMakeLists.txt) for a build folder, and
# relative to the installed binary (bin/ -> share/tlview/traces, set by the top CMakeLists.txt).
if(NOT TARGET tlview_web)
  message(FATAL_ERROR "cli/cmd_serve.c needs web/: install libmicrohttpd-dev and libjansson-dev")
endif()
target_compile_definitions(tlview PRIVATE
  TLVIEW_DEMO_SOURCE_DIR="${TLVIEW_DEMO_SOURCE_DIR}"
  TLVIEW_DEMO_RELDIR="${TLVIEW_REL_DEMODIR}")
target_link_libraries(tlview PRIVATE tlview_job)
