#!/usr/bin/env bash
# Builds (release) and runs strata's benchmark programs; each prints the command that made
# it and the date before its table. Results go to docs/benchmarks.md.
#
#   deploy/bench.sh [google-benchmark flags...]
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release

"$ROOT/deploy/setup.sh"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSTRATA_MODULES=all -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target radix_bench tiering_bench tiering_mrc_bench \
  store_core_match_bench

echo
echo "=== radix prefix index (radix/bench/radix_bench.cc)"
"$BUILD/radix/radix_bench" "$@"
echo
echo "=== DRAM arena and extent allocator (tiering/bench/tiering_bench.cc)"
"$BUILD/tiering/tiering_bench" "$@"
echo
echo "=== live miss-ratio curves: SHARDS cost and accuracy (tiering/mrc/bench/mrc_bench.cc)"
"$BUILD/tiering/mrc/tiering_mrc_bench" "$@"
echo
echo "=== Match with and without the live curve (store/core/bench/match_bench.cc; own flags)"
"$BUILD/store/core/store_core_match_bench" --page_tokens=16
"$BUILD/store/core/store_core_match_bench" --page_tokens=512
