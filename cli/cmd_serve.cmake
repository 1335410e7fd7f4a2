# cmd_serve.cmake: `tlview serve` needs web/ (libmicrohttpd + jansson) and the places of the
# bundled demo traces (set by web/CMakeLists.txt).
if(NOT TARGET tlview_web)
  message(FATAL_ERROR "cli/cmd_serve.c needs web/: install libmicrohttpd-dev and libjansson-dev")
endif()
target_compile_definitions(tlview PRIVATE
  TLVIEW_DEMO_SOURCE_DIR="${TLVIEW_DEMO_SOURCE_DIR}"
  TLVIEW_DEMO_INSTALL_DIR="${TLVIEW_DEMO_INSTALL_DIR}")
