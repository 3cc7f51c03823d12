# Every dependency comes from a Debian package (deploy/setup.sh installs them).
# Nothing is downloaded at configure or build time.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(glog CONFIG REQUIRED)

pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
add_library(strata_xxhash INTERFACE)
target_link_libraries(strata_xxhash INTERFACE PkgConfig::XXHASH)
add_library(strata::xxhash ALIAS strata_xxhash)

# Control plane: gRPC + protobuf (store/proto, store/rpc, client).
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(STRATA_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
# Data plane: UCX (store/transport only).
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx)
# Authentication: OpenSSL's libcrypto (store/auth only: SHA-256, HMAC, RAND_bytes).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# Metadata: RocksDB (store/meta only).
find_package(RocksDB CONFIG REQUIRED)
# SSD tier: liburing (tiering/io only).
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
# HTTP endpoint (store/http only): libmicrohttpd serves it (event-driven: a slow client
# holds a connection, not a thread); cpp-httplib is the small GET client of tests and tools.
# Debian builds cpp-httplib as a shared library; its pkg-config flags (TLS, zlib, brotli
# support) must match the library's class layouts.
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# JSON: nlohmann/json (header-only; store/http and client/cli write it, tests read it).
find_package(nlohmann_json 3 CONFIG REQUIRED)
# Plots: cairo draws them and writes the PNG (client/plot only).
pkg_check_modules(CAIRO REQUIRED IMPORTED_TARGET cairo)
find_program(STRATA_PROMTOOL promtool)
message(STATUS "strata: gRPC ${gRPC_VERSION}, protobuf ${Protobuf_VERSION}, UCX ${UCX_VERSION}, "
               "RocksDB ${RocksDB_VERSION}, liburing ${URING_VERSION}, xxHash ${XXHASH_VERSION}")

if(STRATA_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(STRATA_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()

# CUDA is optional and auto-detected: where nvcc exists the CUDA target builds
# and links even on a machine without a GPU.
set(STRATA_HAVE_CUDA OFF)
if(NOT STRATA_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere and Hopper (H100/H200); CUDA 13 no longer targets older chips.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    # CMake 3.25 does not know nvcc 13's C++20 flag; device code is C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(STRATA_HAVE_CUDA ON)
  elseif(STRATA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STRATA_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "strata: CUDA device implementation: ${STRATA_HAVE_CUDA}")
