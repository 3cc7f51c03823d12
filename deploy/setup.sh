#!/usr/bin/env bash
# Installs exactly the Debian packages strata's build and tests need. Idempotent:
# when everything is already installed it changes nothing and needs no network.
# The CUDA toolkit is optional and not installed here (the build auto-detects nvcc).
#
#   deploy/setup.sh            install what is missing
#   deploy/setup.sh --list     print the package list and exit
#   deploy/setup.sh --bench    also what deploy/bench-compare.sh compares against
#                              (redis-server, redis-benchmark, ucx_perftest, python3) and
#                              fio (tiering/io's ssd_bench measures the SSD against it)
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build pkg-config g++ clang-14 clang-format git
  # clang's runtime libraries: libFuzzer and the sanitizers (the test command's fuzz build)
  libclang-rt-14-dev
  # the test command links with lld (deploy/test.sh: a third of GNU ld's time)
  lld
  # libraries strata links (found by cmake/StrataDependencies.cmake)
  libabsl-dev libgoogle-glog-dev libxxhash-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libucx-dev librocksdb-dev liburing-dev
  # store/auth: SHA-256 of tokens, HMAC of data-plane credentials (OpenSSL's libcrypto);
  # the openssl program makes the TLS tests' certificates
  libssl-dev openssl
  # store/http's server (libmicrohttpd: event-driven, so slow clients cannot hold its
  # workers) and HTTP client (cpp-httplib); client/plot draws with cairo, its text in DejaVu Sans
  libmicrohttpd-dev libcpp-httplib-dev libcairo2-dev fonts-dejavu-core
  # JSON writing (store/http, client/cli) and reading (tests): nlohmann/json
  nlohmann-json3-dev
  # the cluster's coordination engine (store/cluster talks to its v3 gRPC API; the tests
  # start their own etcd on loopback port 0) and etcdctl. Debian also enables an etcd
  # service on 127.0.0.1:2379 where systemd runs; strata does not use it
  etcd-server etcd-client
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # promtool: the tests check /metrics and deploy/prometheus with Prometheus's own parser
  prometheus
  # the Python module (python/): Debian's Python headers, pybind11 and DLPack's header; its
  # tests run under pytest with NumPy and PyTorch (CPU), and `pip install .` into a venv
  python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest python3-torch
  python3-venv python3-pip
)

if [[ "${1:-}" == "--bench" ]]; then
  PACKAGES+=(redis-server redis-tools ucx-utils python3 fio)
  shift
fi

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != "installed" ]]; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
