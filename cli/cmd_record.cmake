# Build settings of `tlview record` (cli/cmd_record.c), included by cli/CMakeLists.txt: where an
# installed libcollect.so lives (collector/CMakeLists.txt installs it into LIBDIR/tlview), the
# last place record looks for the collector after $TLVIEW_COLLECTOR and the build tree.
target_compile_definitions(tlview PRIVATE
  TLVIEW_COLLECTOR_DIR="${CMAKE_INSTALL_FULL_LIBDIR}/tlview")
