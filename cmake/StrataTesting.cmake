# Helpers for tests and benchmarks.
#
#   strata_add_test(NAME name SOURCES a.cc ... LIBS lib ... [LABELS unit ...])
#     One GoogleTest executable, registered with ctest as one test, labelled
#     "unit" unless LABELS says otherwise. Links strata::base_testing (status
#     assertions). Runs from the build directory.
#
#   strata_add_benchmark(NAME name SOURCES a.cc ... LIBS lib ...)
#     One Google Benchmark program; not run by ctest. Its main() (base/bench_main.cc)
#     prints the command line and the date before the table.
if(STRATA_BUILD_TESTS)
  enable_testing()
endif()

function(strata_add_test)
  if(NOT STRATA_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} strata::base_testing GTest::gmock GTest::gtest_main)
  strata_target_defaults(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --gtest_color=no)
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

function(strata_add_benchmark)
  if(NOT STRATA_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(B "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${B_NAME} ${B_SOURCES})
  target_link_libraries(${B_NAME} PRIVATE ${B_LIBS} strata_bench_main benchmark::benchmark)
  strata_target_defaults(${B_NAME})
endfunction()
