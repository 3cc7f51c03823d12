# Helpers for tests and benchmarks.
#
#   strata_add_test(NAME name SOURCES a.cc ... LIBS lib ... [LABELS unit ...] [TIMEOUT s]
#                   [DEFINITIONS D=v ...] [INCLUDE_DIRECTORIES dir ...]
#                   [COMPILE_OPTIONS opt ...] [DEPENDS target ...])
#     One ctest test named `name`, labelled "unit" unless LABELS says otherwise.
#
#     Tests are linked into one GoogleTest executable per folder (one per module, and one
#     for tests/integration): `<folder>_tests` (store_core_tests; tests/integration:
#     strata_integration_tests). The test sources of a folder are one OBJECT library,
#     `<folder>_test_objects`, which the executable links; ctest runs the executable with a
#     --gtest_filter naming the test suites found in `name`'s sources, so each ctest test
#     runs exactly the tests it ran when it was a binary of its own, in a process of its
#     own. A source listed by several tests of one folder is compiled once. Every test
#     suite name must be unique within a folder (configure fails otherwise), and at most one
#     source of a folder may define main() (it replaces gtest_main's; see
#     client_recovery_test.cc). The test `strata_test_inventory` checks, after the build,
#     that every test of every executable is run by exactly one ctest test.
#
#     What a test needs beyond LIBS is said in the call, since it has no target of its own:
#     DEFINITIONS and INCLUDE_DIRECTORIES apply to the folder's test objects (name the
#     macros so that they cannot clash: STRATA_CLI_BINARY, ...); COMPILE_OPTIONS apply to
#     the test's own sources only (such a source is compiled on its own, outside the unity
#     batches); DEPENDS are targets built with the folder's executable (a program the test
#     starts).
#
#     Every test object is compiled with a shared precompiled header, built once per build
#     tree: GoogleTest, GoogleMock and Abseil (cmake/test_pch.h), or those with gRPC and the
#     generated strata.v1 code where the folder sets STRATA_TEST_PCH to grpc
#     (cmake/test_grpc_pch.h). STRATA_TEST_CXX_FLAGS are added to every test object
#     (deploy/test.sh compiles release's tests with -O0: the code under test stays -O2).
#     With STRATA_UNITY_BUILD (deploy/test.sh's release and asan) the folder's test
#     sources are compiled in unity batches (CMake's UNITY_BUILD), like every other target:
#     each test file's helpers then share a translation unit with the others of its batch,
#     so file-local names must not clash within a folder (keep them in the file's own
#     named namespace or make them distinct).
#
#   strata_add_benchmark(NAME name SOURCES a.cc ... LIBS lib ...)
#     One Google Benchmark program; not run by ctest. Its main() (base/bench_main.cc)
#     prints the command line and the date before the table.
set(STRATA_TEST_CXX_FLAGS "" CACHE STRING
    "Extra compile flags of test sources and their precompiled headers (e.g. -O0)")
separate_arguments(STRATA_TEST_CXX_FLAGS_LIST UNIX_COMMAND "${STRATA_TEST_CXX_FLAGS}")
set(STRATA_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# _strata_test_pch_target(out kind): the OBJECT library whose precompiled header test
# objects reuse, created on first use. kind "": GoogleTest, GoogleMock, Abseil
# (cmake/test_pch.h); kind "grpc": those and gRPC with strata's generated messages and
# services (cmake/test_grpc_pch.h), for folders whose tests include them (a folder sets
# STRATA_TEST_PCH to grpc before its strata_add_test calls). OBJECT libraries, like the
# tests, so that their flags (-fPIC, warnings, sanitizers, STRATA_TEST_CXX_FLAGS) are the
# tests' own: a precompiled header is used only by compilations with the same flags.
function(_strata_test_pch_target out kind)
  if(kind STREQUAL "grpc")
    set(target strata_test_grpc_pch)
    set(header ${STRATA_CMAKE_DIR}/test_grpc_pch.h)
    set(libs strata::proto)
  else()
    set(target strata_test_pch)
    set(header ${STRATA_CMAKE_DIR}/test_pch.h)
    set(libs "")
  endif()
  if(NOT TARGET ${target})
    add_library(${target} OBJECT ${STRATA_CMAKE_DIR}/test_pch_anchor.cc)
    target_link_libraries(${target} PRIVATE ${libs} GTest::gmock GTest::gtest absl::status
                                            absl::statusor absl::strings absl::time
                                            nlohmann_json::nlohmann_json)
    target_compile_options(${target} PRIVATE ${STRATA_TEST_CXX_FLAGS_LIST})
    target_precompile_headers(${target} PRIVATE ${header})
    strata_target_defaults(${target} test)
  endif()
  set(${out} ${target} PARENT_SCOPE)
endfunction()

#   strata_add_fuzzer(NAME name SOURCES a.cc ... LIBS lib ... CORPUS dir
#                     [INCLUDE_DIRECTORIES dir ...])
#     With STRATA_FUZZ only: a libFuzzer program `name` (LLVMFuzzerTestOneInput), part of
#     the target strata_fuzzers, and a ctest test `name` (label "fuzz") that fuzzes for
#     STRATA_FUZZ_SECONDS starting from the checked-in seed corpus `dir` (and
#     `dir`/regressions, inputs that once crashed), writing what it learns to a corpus of the
#     build tree, never to the source tree. A crash fails the test and leaves the input as
#     crash-* in the build tree's fuzz/<name>/; fix it and add it to `dir`/regressions.
set(STRATA_FUZZ_SECONDS 15 CACHE STRING "Seconds each fuzz test fuzzes")
if(STRATA_FUZZ)
  add_custom_target(strata_fuzzers)
endif()

function(strata_add_fuzzer)
  if(NOT STRATA_FUZZ)
    return()
  endif()
  cmake_parse_arguments(F "" "NAME;CORPUS" "SOURCES;LIBS;INCLUDE_DIRECTORIES" ${ARGN})
  add_executable(${F_NAME} ${F_SOURCES})
  target_link_libraries(${F_NAME} PRIVATE ${F_LIBS})
  target_include_directories(${F_NAME} PRIVATE ${F_INCLUDE_DIRECTORIES})
  target_compile_options(${F_NAME} PRIVATE -fsanitize=fuzzer-no-link)
  target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer)
  strata_target_defaults(${F_NAME})
  add_dependencies(strata_fuzzers ${F_NAME})
  set(work ${CMAKE_BINARY_DIR}/fuzz/${F_NAME})
  file(MAKE_DIRECTORY ${work}/corpus)
  set(seeds ${F_CORPUS})
  if(EXISTS ${F_CORPUS}/regressions)
    list(APPEND seeds ${F_CORPUS}/regressions)
  endif()
  add_test(NAME ${F_NAME}
           COMMAND ${F_NAME} -max_total_time=${STRATA_FUZZ_SECONDS} -rss_limit_mb=2048
                   -timeout=10 -print_final_stats=1 corpus ${seeds}
           WORKING_DIRECTORY ${work})
  math(EXPR limit "${STRATA_FUZZ_SECONDS} * 3 + 60")
  set_tests_properties(${F_NAME} PROPERTIES LABELS fuzz TIMEOUT ${limit})
endfunction()

if(STRATA_BUILD_TESTS OR STRATA_FUZZ)
  enable_testing()
  set_property(GLOBAL PROPERTY STRATA_TEST_INVENTORY "")
endif()

# The gtest filter that selects the suites defined or instantiated in `sources`:
# TEST/TEST_F/TEST_P/TYPED_TEST(Suite, ...) -> Suite.* and */Suite.* (value-parameterized
# instances are Prefix/Suite.Test/N); INSTANTIATE_*_TEST_SUITE_P(Prefix, Suite, ...) ->
# Prefix/Suite.*; TYPED_TEST_SUITE(Suite, ...) instances are Suite/N.Test -> Suite/*.
function(_strata_test_suites out_suites out_filter)
  set(suites "")
  set(patterns "")
  foreach(src IN LISTS ARGN)
    file(STRINGS ${src} lines REGEX
         "^[ \t]*(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|INSTANTIATE_TEST_SUITE_P|INSTANTIATE_TYPED_TEST_SUITE_P)[ \t]*\\(")
    foreach(line IN LISTS lines)
      if(line MATCHES "^[ \t]*INSTANTIATE_(TYPED_)?TEST_SUITE_P[ \t]*\\([ \t]*([A-Za-z0-9_]+)[ \t]*,[ \t]*([A-Za-z0-9_]+)")
        list(APPEND patterns "${CMAKE_MATCH_2}/${CMAKE_MATCH_3}.*" "${CMAKE_MATCH_2}/${CMAKE_MATCH_3}/*")
        list(APPEND suites "${CMAKE_MATCH_2}/${CMAKE_MATCH_3}")
      elseif(line MATCHES "^[ \t]*[A-Z_]+[ \t]*\\([ \t]*([A-Za-z0-9_]+)")
        list(APPEND patterns "${CMAKE_MATCH_1}.*" "*/${CMAKE_MATCH_1}.*" "${CMAKE_MATCH_1}/*")
        list(APPEND suites "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES suites)
  list(REMOVE_DUPLICATES patterns)
  list(JOIN patterns ":" filter)
  set(${out_suites} "${suites}" PARENT_SCOPE)
  set(${out_filter} "${filter}" PARENT_SCOPE)
endfunction()

function(strata_add_test)
  if(NOT STRATA_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "NAME;TIMEOUT"
                        "SOURCES;LIBS;LABELS;DEFINITIONS;INCLUDE_DIRECTORIES;COMPILE_OPTIONS;DEPENDS"
                        ${ARGN})

  # The folder's executable and test objects: store/core -> store_core_tests and
  # store_core_test_objects, tests/integration -> strata_integration_tests.
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  string(REGEX REPLACE "^tests/" "strata/" group "${folder}")
  string(REPLACE "/" "_" group "${group}")
  set(exe ${group}_tests)
  set(objects ${group}_test_objects)
  if(NOT TARGET ${exe})
    add_executable(${exe})
    target_link_libraries(${exe} PRIVATE strata::base_testing GTest::gmock GTest::gtest_main)
    strata_target_defaults(${exe} test)
    add_library(${objects} OBJECT)
    target_link_libraries(${objects} PUBLIC strata::base_testing GTest::gmock GTest::gtest)
    target_compile_options(${objects} PRIVATE ${STRATA_TEST_CXX_FLAGS_LIST})
    _strata_test_pch_target(pch "${STRATA_TEST_PCH}")
    target_precompile_headers(${objects} REUSE_FROM ${pch})
    strata_target_defaults(${objects} test)
    target_link_libraries(${exe} PRIVATE ${objects})
  endif()

  # Sources, each compiled once per folder.
  get_property(seen GLOBAL PROPERTY STRATA_TEST_SOURCES_${group})
  set(own "")
  set(all "")
  foreach(src IN LISTS T_SOURCES)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    list(APPEND all ${src})
    if(NOT src IN_LIST seen)
      list(APPEND own ${src})
      list(APPEND seen ${src})
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY STRATA_TEST_SOURCES_${group} "${seen}")

  target_sources(${objects} PRIVATE ${own})
  target_link_libraries(${objects} PUBLIC ${T_LIBS})
  # Also straight to the executable: objects of an OBJECT library in LIBS (a shared test
  # suite) are linked only into targets that name it directly.
  target_link_libraries(${exe} PRIVATE ${T_LIBS})
  if(T_DEFINITIONS)
    target_compile_definitions(${objects} PRIVATE ${T_DEFINITIONS})
  endif()
  if(T_INCLUDE_DIRECTORIES)
    target_include_directories(${objects} PRIVATE ${T_INCLUDE_DIRECTORIES})
  endif()
  if(T_COMPILE_OPTIONS AND own)
    set_property(SOURCE ${own} TARGET_DIRECTORY ${objects} APPEND
                 PROPERTY COMPILE_OPTIONS ${T_COMPILE_OPTIONS})
    # Not in a unity batch: the options are this test's alone.
    set_property(SOURCE ${own} TARGET_DIRECTORY ${objects}
                 PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  if(T_DEPENDS)
    add_dependencies(${exe} ${T_DEPENDS})
  endif()

  # Which suites are this test's; no suite may belong to two tests of a folder. The
  # filter is read from the sources, so editing one re-runs the configure step (a new
  # suite is then run; strata_test_inventory fails if one is ever left out).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${all})
  _strata_test_suites(suites filter ${all})
  if(NOT suites)
    message(FATAL_ERROR "strata_add_test(${T_NAME}): no TEST/TEST_F/TEST_P/INSTANTIATE_* in its sources")
  endif()
  get_property(owners GLOBAL PROPERTY STRATA_TEST_SUITES_${group})
  foreach(suite IN LISTS suites)
    foreach(owner IN LISTS owners)
      if(owner MATCHES "^([^=]+)=(.+)$" AND CMAKE_MATCH_1 STREQUAL suite
         AND NOT CMAKE_MATCH_2 STREQUAL T_NAME)
        message(FATAL_ERROR "strata_add_test(${T_NAME}): test suite '${suite}' is also in "
                            "${CMAKE_MATCH_2}; suite names must be unique within ${folder}/")
      endif()
    endforeach()
    list(APPEND owners "${suite}=${T_NAME}")
  endforeach()
  set_property(GLOBAL PROPERTY STRATA_TEST_SUITES_${group} "${owners}")

  add_test(NAME ${T_NAME} COMMAND ${exe} --gtest_color=no "--gtest_filter=${filter}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  set_property(GLOBAL APPEND PROPERTY STRATA_TEST_INVENTORY
               "${T_NAME}|$<TARGET_FILE:${exe}>|${filter}")
endfunction()

# strata_finish_tests(): after every folder is added (the top-level CMakeLists calls it).
# Registers strata_test_inventory, which fails when a test of some executable is run by no
# ctest test or by more than one, or when a ctest test's filter selects nothing.
function(strata_finish_tests)
  if(NOT STRATA_BUILD_TESTS)
    return()
  endif()
  get_property(inventory GLOBAL PROPERTY STRATA_TEST_INVENTORY)
  string(REPLACE ";" "\n" lines "${inventory}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/strata_test_inventory.txt CONTENT "${lines}\n")
  # Not in a sanitizer build: which tests an executable holds does not depend on the
  # configuration, and listing them under ASan took 33 s.
  if(NOT STRATA_SANITIZE)
    add_test(NAME strata_test_inventory
             COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/check_test_inventory.sh
                     ${CMAKE_BINARY_DIR}/strata_test_inventory.txt)
    set_tests_properties(strata_test_inventory PROPERTIES LABELS unit TIMEOUT 120)
  endif()

  # The module graph of docs/architecture.md ("Dependency rules"), checked on every
  # include and every link of every target.
  get_property(targets GLOBAL PROPERTY STRATA_TARGETS)
  string(REPLACE ";" "\n" lines "${targets}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/strata_targets.txt CONTENT "${lines}\n")
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME strata_dependency_check
           COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_dependencies.py
                   --root ${PROJECT_SOURCE_DIR} --links ${CMAKE_BINARY_DIR}/strata_targets.txt)
  set_tests_properties(strata_dependency_check PROPERTIES LABELS unit TIMEOUT 120)
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
