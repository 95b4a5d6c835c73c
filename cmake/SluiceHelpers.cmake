# Wrappers so that every library, test and binary gets the same flags.

# Warnings for project code only (generated and third-party code is exempt).
set(SLUICE_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND SLUICE_WARNINGS -Wthread-safety)
endif()
# With sanitizer instrumentation GCC 12's -Wmaybe-uninitialized reports
# false positives inside the standard library (std::optional, <regex>); the
# Release build keeps the warning.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE MATCHES "^(asan|tsan)$")
  list(APPEND SLUICE_WARNINGS -Wno-maybe-uninitialized)
endif()

# sluice_library(NAME SRCS a.cc ... DEPS lib ...)
function(sluice_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  sluice_unity_solo(${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# sluice_test(NAME SRCS a_test.cc ... DEPS lib ... LABELS label ...)
# Every test carries the label of its folder; scenarios add `scenario`,
# tests longer than a minute add `long`.
function(sluice_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    message(FATAL_ERROR "sluice_test(${name}) needs LABELS")
  endif()
  add_executable(${name} ${ARG_SRCS})
  sluice_unity_solo(${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# Binaries link jemalloc, except in sanitizer and fuzzing builds.
if(NOT SLUICE_FUZZ AND NOT CMAKE_BUILD_TYPE MATCHES "^(asan|tsan)$")
  set(SLUICE_WITH_JEMALLOC ON)
else()
  set(SLUICE_WITH_JEMALLOC OFF)
endif()

function(sluice_use_jemalloc name)
  if(SLUICE_WITH_JEMALLOC)
    target_link_libraries(${name} PRIVATE PkgConfig::JEMALLOC)
    # Its options (4 KiB pages, no transparent huge pages): common/jemalloc_conf.cc.
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src/common/jemalloc_conf.cc)
  endif()
endfunction()

# sluice_binary(NAME SRCS main.cc DEPS lib ...)
function(sluice_binary name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  sluice_unity_solo(${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  sluice_use_jemalloc(${name})
endfunction()

# sluice_bench(NAME SRCS b.cc DEPS lib ...): Google Benchmark binaries.
function(sluice_bench name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  sluice_unity_solo(${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  sluice_use_jemalloc(${name})
endfunction()

# sluice_fuzzer(NAME SRCS f.cc DEPS lib ...): libFuzzer targets (clang).
function(sluice_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  sluice_unity_solo(${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS}
                         -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()
