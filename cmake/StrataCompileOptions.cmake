# Warnings, sanitizers and clang's thread-safety analysis, applied to every
# strata target through strata_target_defaults().
add_library(strata_compile_options INTERFACE)
target_compile_options(strata_compile_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers>)
if(STRATA_WERROR)
  target_compile_options(strata_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(STRATA_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(strata_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_san}>)
  target_link_options(strata_compile_options INTERFACE ${_san})
endif()
# STRATA_FUZZ: libFuzzer targets (strata_add_fuzzer) for the parsers of untrusted input.
# Every strata target is instrumented for coverage and built with ASan + UBSan; the fuzzers
# link libFuzzer's driver. clang only (deploy/test.sh's fuzz configuration).
# STRATA_FUZZ_COVERAGE=OFF instruments only the fuzzers' own sources, not the libraries:
# libFuzzer then replays the seeds and regression inputs and mutates with almost no
# coverage feedback. For a build that also runs every other test (deploy/test.sh's asan),
# where coverage callbacks in every library made the ctest 150 s slower.
option(STRATA_FUZZ "Build the libFuzzer targets (clang)" OFF)
option(STRATA_FUZZ_COVERAGE "Instrument every library for libFuzzer's coverage" ON)
if(STRATA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STRATA_FUZZ needs clang (CXX=clang++-14)")
  endif()
  set(_fuzz -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(STRATA_FUZZ_COVERAGE)
    list(APPEND _fuzz -fsanitize=fuzzer-no-link)
  endif()
  target_compile_options(strata_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_fuzz}>)
  target_link_options(strata_compile_options INTERFACE -fsanitize=address,undefined)
endif()
if(STRATA_THREAD_SAFETY)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STRATA_THREAD_SAFETY needs clang (CXX=clang++-14)")
  endif()
  # Not for targets with STRATA_NO_THREAD_SAFETY set (the tests: strata_target_defaults).
  target_compile_options(strata_compile_options INTERFACE
    "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<BOOL:$<TARGET_PROPERTY:STRATA_NO_THREAD_SAFETY>>>>:-Wthread-safety;-Werror=thread-safety>")
endif()

# STRATA_ANALYSIS_ONLY: every translation unit is parsed and analysed (all warnings, clang's
# thread-safety analysis, -Werror) but no code is generated and nothing is linked: objects,
# libraries and programs are empty stamp files. For a configuration whose only check is the
# compiler's analysis (deploy/test.sh's tsa); code generation and linking would be half of
# its time and check nothing more. Generated sources (protoc) are still generated, and so
# are precompiled headers (cmake/analysis_compile.sh compiles a file for real only when it
# is one): every library loads cmake/analysis_pch.h (the standard library, Abseil, glog;
# with gRPC and the generated code, cmake/analysis_grpc_pch.h, where strata_grpc_pch asks),
# which halves the analysis. Programs (-fPIE, which a clang PCH must match) parse theirs.
# What that gives up: a file that uses one of those outside headers without including it
# is not caught here when the precompiled header has it.
option(STRATA_ANALYSIS_ONLY "Compile for diagnostics only (-fsyntax-only), link nothing" OFF)
if(STRATA_ANALYSIS_ONLY)
  if(STRATA_BUILD_TESTS OR STRATA_BUILD_BENCHMARKS)
    message(FATAL_ERROR "STRATA_ANALYSIS_ONLY builds no runnable program: "
                        "set STRATA_BUILD_TESTS=OFF and STRATA_BUILD_BENCHMARKS=OFF")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STRATA_ANALYSIS_ONLY needs clang (its precompiled headers)")
  endif()
  foreach(lang C CXX)
    set(CMAKE_${lang}_COMPILE_OBJECT
        "${CMAKE_CURRENT_LIST_DIR}/analysis_compile.sh <OBJECT> <CMAKE_${lang}_COMPILER> <DEFINES> <INCLUDES> <FLAGS> -o <OBJECT> -c <SOURCE>")
    set(CMAKE_${lang}_LINK_EXECUTABLE "${CMAKE_COMMAND} -E touch <TARGET>")
    set(CMAKE_${lang}_CREATE_SHARED_LIBRARY "${CMAKE_COMMAND} -E touch <TARGET>")
    set(CMAKE_${lang}_CREATE_SHARED_MODULE "${CMAKE_COMMAND} -E touch <TARGET>")
    set(CMAKE_${lang}_ARCHIVE_CREATE "${CMAKE_COMMAND} -E touch <TARGET>")
    set(CMAKE_${lang}_ARCHIVE_APPEND "${CMAKE_COMMAND} -E touch <TARGET>")
    set(CMAKE_${lang}_ARCHIVE_FINISH "")
  endforeach()
  # One precompiled header serves every library, so every file has the same -pthread
  # (a clang PCH must match it; it changes nothing else in an analysis).
  target_compile_options(strata_compile_options INTERFACE -pthread)
  foreach(pch strata_analysis_pch strata_analysis_grpc_pch)
    add_library(${pch} OBJECT ${CMAKE_CURRENT_LIST_DIR}/test_pch_anchor.cc)
    target_link_libraries(${pch} PRIVATE strata_compile_options absl::status absl::statusor
                                         absl::strings absl::synchronization absl::time
                                         absl::span absl::flat_hash_map glog::glog)
  endforeach()
  target_precompile_headers(strata_analysis_pch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/analysis_pch.h)
  target_link_libraries(strata_analysis_grpc_pch PRIVATE strata::proto)
  target_precompile_headers(strata_analysis_grpc_pch
                            PRIVATE ${CMAKE_CURRENT_LIST_DIR}/analysis_grpc_pch.h)
endif()

# strata_target_defaults(target [kind]): warnings, -Werror, sanitizer and thread-safety
# flags. Also records the target, its folder and what it links for the dependency check
# (cmake/check_dependencies.py; kind "test" for test targets, else "lib").
set_property(GLOBAL PROPERTY STRATA_TARGETS "")
function(strata_target_defaults target)
  target_link_libraries(${target} PRIVATE strata_compile_options)
  get_target_property(type ${target} TYPE)
  if(STRATA_ANALYSIS_ONLY AND type MATCHES "^(STATIC|SHARED|OBJECT)_LIBRARY$")
    target_precompile_headers(${target} REUSE_FROM strata_analysis_pch)
  endif()
  set(kind lib)
  if(ARGC GREATER 1)
    set(kind ${ARGV1})
  endif()
  # The analysis covers what ships (libraries and programs); tests reach into fixtures'
  # guarded members without their locks by design (one thread, or a lock the test holds
  # through a helper), so they are not analysed.
  if(kind STREQUAL "test")
    set_property(TARGET ${target} PROPERTY STRATA_NO_THREAD_SAFETY ON)
  endif()
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(GLOBAL APPEND PROPERTY STRATA_TARGETS
               "${target}|${folder}|${kind}|$<JOIN:$<TARGET_PROPERTY:${target},LINK_LIBRARIES>, >")
endfunction()

# strata_grpc_pch(target): compiles `target` with the precompiled header of gRPC and the
# generated strata.v1 code (cmake/grpc_pch.h), for libraries most of whose files include
# them (their parse is most of those files' compile time). Not in a unity build: there the
# headers are parsed once a batch, and a library is one or two batches, while building
# the header costs more than parsing them twice (and loading it, ~3 s a translation unit
# on the 2-core machine, is most of a parse).
function(strata_grpc_pch target)
  if(STRATA_ANALYSIS_ONLY)
    set_property(TARGET ${target} PROPERTY PRECOMPILE_HEADERS_REUSE_FROM strata_analysis_grpc_pch)
    add_dependencies(${target} strata_analysis_grpc_pch)
  elseif(NOT STRATA_UNITY_BUILD)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/grpc_pch.h)
  endif()
endfunction()

# strata_json_pch(target): the same for libraries most of whose files build JSON with
# nlohmann/json (cmake/json_pch.h).
function(strata_json_pch target)
  if(NOT STRATA_UNITY_BUILD AND NOT STRATA_ANALYSIS_ONLY)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/json_pch.h)
  endif()
endfunction()
