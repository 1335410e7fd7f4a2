# cmd_capture.cmake: `tlview capture` is the client of the collector's control channel, whose
# both sides live in collector/control.c (plain POSIX, no CUDA: built into tlview even where the
# collector is not).
target_sources(tlview PRIVATE ${CMAKE_SOURCE_DIR}/collector/control.c)
target_include_directories(tlview PRIVATE ${CMAKE_SOURCE_DIR}/collector)
