#!/usr/bin/env bash
# The test command: installs what is missing, then builds and tests strata two ways.
#
#   1. release   g++, -Werror, every test (ctest; GPU tests skip with a reason when no device)
#   2. asan      clang-14, AddressSanitizer + UndefinedBehaviorSanitizer, every test (CUDA
#                off: the release build compiles it; its tests need a GPU anyway; the Python
#                module off: an ASan-built extension cannot load into Debian's uninstrumented
#                python3 without preloading the ASan runtime — release runs its tests), and in
#                the same build:
#                - clang's thread-safety analysis, -Werror=thread-safety, over every
#                  library, binary and test;
#                - the libFuzzer targets of the parsers of untrusted input (wire format,
#                  stream framing, the handshake, namespace encoding, metadata records, gRPC
#                  requests, the config file and flags, the tenants file, data-plane
#                  credentials, HTTP requests): ctest (label fuzz) replays each one's
#                  checked-in seeds and regression inputs and mutates them for
#                  STRATA_FUZZ_SECONDS (5 here; strata_add_fuzzer in
#                  cmake/StrataTesting.cmake). The libraries are not instrumented for
#                  coverage here (STRATA_FUZZ_COVERAGE=OFF: it made every other test slower),
#                  so this is a regression check; coverage-guided fuzzing is the fuzz
#                  configuration's.
#
#   Two more configurations run only when named:
#   3. tsa       clang-14 analysis only (-fsyntax-only, STRATA_ANALYSIS_ONLY): every file
#                compiled on its own, so a file that leans on another's includes fails
#                there (the unity batches of release and asan hide that); ~2 minutes.
#   4. fuzz      the libFuzzer targets alone, 15 s each (longer fuzzing:
#                STRATA_FUZZ_SECONDS at configure time).
#   Until 2026-12-05 the test command ran all four; tsa and fuzz compiled every library
#   twice more, ~5 of its 31 minutes, so asan took both checks over.
#
# Debug information: release builds without it (-O2 -DNDEBUG), asan with line tables only
# (-g1: enough for sanitizer stack traces), tsa without; it is what made the links slow.
# Tests: one executable per module folder (cmake/StrataTesting.cmake), its test sources
# compiled with a shared precompiled header; release compiles the test sources themselves
# at -O0 (STRATA_TEST_CXX_FLAGS), half their compile time: the libraries and programs they
# test stay -O2 with every -O2 warning.
# Unity builds (STRATA_UNITY_BUILD) in release and asan: each target's sources are compiled
# 8 to a translation unit, so the headers they share (Abseil, gRPC, GoogleTest) are parsed
# once a batch instead of once a file; on 2 cores that halves both builds. tsa compiles
# every file on its own (with a precompiled header of the standard library, Abseil and glog
# for the libraries, cmake/analysis_pch.h). strata_test_inventory runs in release only:
# which tests each executable holds does not depend on the configuration.
# Each phase prints its time ("=== [release] build: 312 s"); the summary repeats them.
# Build trees live under build/ (override with STRATA_BUILD_ROOT). Exits non-zero on the
# first failure.
#
#   deploy/test.sh               release and asan (what CI runs)
#   deploy/test.sh release tsa   only the named configurations
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_ROOT=${STRATA_BUILD_ROOT:-$ROOT/build}
JOBS=${STRATA_JOBS:-$(nproc)}
CONFIGS=("$@")
[[ ${#CONFIGS[@]} -eq 0 ]] && CONFIGS=(release asan)

RUN_START=$(date +%s)
phases=()
# phase NAME START: prints and records how long the phase that began at START took.
phase() {
  local took=$(( $(date +%s) - $2 ))
  echo "=== $1: ${took} s"
  phases+=("$1: ${took} s")
}

t=$(date +%s)
"$ROOT/deploy/setup.sh"
mkdir -p "$BUILD_ROOT"
phase setup "$t"

echo "=== clang-format (Google style, .clang-format)"
t=$(date +%s)
if command -v clang-format >/dev/null && git -C "$ROOT" rev-parse >/dev/null 2>&1; then
  git -C "$ROOT" ls-files -z '*.h' '*.cc' '*.cu' | (cd "$ROOT" && xargs -0 -P "$JOBS" -n 40 clang-format --dry-run -Werror)
  echo "formatting ok"
else
  echo "clang-format or git missing: formatting not checked"
fi
phase clang-format "$t"

# Links with lld (setup.sh installs it): GNU ld took 3x as long for the test executables.
LLD="-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld"
declare -A FLAGS=(
  [release]="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 \
             -DCMAKE_CXX_FLAGS=-DNDEBUG -DSTRATA_WERROR=ON -DSTRATA_TEST_CXX_FLAGS=-O0 \
             -DSTRATA_UNITY_BUILD=ON $LLD"
  [asan]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_COMPILER=clang-14 \
          -DCMAKE_CXX_COMPILER=clang++-14 -DSTRATA_SANITIZE=ON -DSTRATA_THREAD_SAFETY=ON \
          -DSTRATA_FUZZ=ON -DSTRATA_FUZZ_COVERAGE=OFF -DSTRATA_FUZZ_SECONDS=5 \
          -DSTRATA_BUILD_BENCHMARKS=OFF \
          -DSTRATA_CUDA=OFF -DSTRATA_PYTHON=OFF -DSTRATA_UNITY_BUILD=ON $LLD"
  [tsa]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_COMPILER=clang-14 \
         -DCMAKE_CXX_COMPILER=clang++-14 -DSTRATA_THREAD_SAFETY=ON -DSTRATA_WERROR=ON \
         -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_BUILD_TESTS=OFF -DSTRATA_CUDA=OFF \
         -DSTRATA_ANALYSIS_ONLY=ON"
  [fuzz]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DCMAKE_C_COMPILER=clang-14 \
          -DCMAKE_CXX_COMPILER=clang++-14 -DSTRATA_FUZZ=ON -DSTRATA_WERROR=ON \
          -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_BUILD_TESTS=OFF -DSTRATA_CUDA=OFF"
)
# Configurations that are built but not tested (see above).
declare -A BUILD_ONLY=([tsa]=1)
# Configurations that build one target instead of everything.
declare -A BUILD_TARGET=([fuzz]=strata_fuzzers)

# protect_shadow_gap=0: the CUDA runtime maps memory where ASan would otherwise guard
# its shadow gap (matters only on machines with a GPU).
# No ThreadSanitizer configuration: Debian's Abseil is not built with TSan, so TSan cannot
# see absl::Mutex's happens-before edges and reports every reader/writer pair as a race.
# Races are ruled out by clang's -Wthread-safety (tsa) and stress tests under ASan.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:protect_shadow_gap=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Third-party caches that live as long as the process (deploy/lsan-suppressions.txt says
# which and why); the child processes the tests start inherit it.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/deploy/lsan-suppressions.txt:print_suppressions=0}

passed=0
failed=0
skipped=0
summary=()
for config in "${CONFIGS[@]}"; do
  [[ -n "${FLAGS[$config]:-}" ]] || { echo "test: unknown configuration '$config'" >&2; exit 2; }
  dir="$BUILD_ROOT/$config"
  echo "=== [$config] configure + build in $dir"
  start=$(date +%s)
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$dir" -G Ninja -DSTRATA_MODULES=all ${FLAGS[$config]} >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; exit 1; }
  phase "[$config] configure" "$start"
  t=$(date +%s)
  cmake --build "$dir" -j "$JOBS" ${BUILD_TARGET[$config]:+--target "${BUILD_TARGET[$config]}"}
  phase "[$config] build" "$t"
  if [[ -n "${BUILD_ONLY[$config]:-}" ]]; then
    summary+=("[$config] built: every library and binary passed the analysis, no tests by design ($(( $(date +%s) - start ))s)")
    continue
  fi
  echo "=== [$config] ctest"
  log="$dir/ctest.log"
  t=$(date +%s)
  set +e
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" --timeout 600) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  phase "[$config] ctest" "$t"
  # "100% tests passed, 0 tests failed out of 12"
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1 || true)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  nfail=$(sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/' <<<"$line")
  if [[ -z "$line" || -z "$total" ]]; then
    echo "test: [$config] ctest printed no summary" >&2
    exit 1
  fi
  # Skipped tests (GPU tests without a device) are neither passed nor failed: say why.
  nskip=0
  while read -r name; do
    [[ -n "$name" ]] || continue
    nskip=$((nskip + 1))
    reason=$(cd "$dir" && ctest -R "^${name}\$" -V 2>&1 | grep -m1 -E 'SKIPPED' | sed -E 's/^[0-9]+: //' || true)
    echo "[$config] skipped $name: ${reason:-no reason printed}"
  done < <(sed -nE 's/^\s+[0-9]+ - (\S+) \(Skipped\)$/\1/p' "$log")
  passed=$((passed + total - nfail - nskip))
  failed=$((failed + nfail))
  skipped=$((skipped + nskip))
  summary+=("[$config] $line, $nskip skipped ($(( $(date +%s) - start ))s)")
  [[ $rc -eq 0 ]] || { echo "test: [$config] ctest failed (exit $rc)" >&2; printf '%s\n' "${summary[@]}"; exit 1; }
done

echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "phases: $(IFS=';'; echo "${phases[*]}" | sed 's/;/, /g'); whole run $(( $(date +%s) - RUN_START )) s"
echo "total: $passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
