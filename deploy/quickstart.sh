#!/usr/bin/env bash
# The run command: installs what is missing, builds strata (release), and runs the main job
# on embedded defaults.
#
# Today (foundation issue) the main job is the index and arena benchmark: the radix prefix
# index matching a 128K-token prompt against 10M cached tokens, and the DRAM arena's
# extent allocator. The storage node and its demo workload replace it with the next issue.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release

"$ROOT/deploy/setup.sh"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSTRATA_MODULES=all -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target radix_bench tiering_bench

echo
echo "=== radix prefix index (radix/bench/radix_bench.cc)"
"$BUILD/radix/radix_bench" "$@"
echo
echo "=== DRAM arena and extent allocator (tiering/bench/tiering_bench.cc)"
"$BUILD/tiering/tiering_bench" "$@"
