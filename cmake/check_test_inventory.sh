#!/usr/bin/env bash
# strata_test_inventory (cmake/StrataTesting.cmake): each ctest test runs one folder's test
# executable with a --gtest_filter naming its suites. This checks, for every executable,
# that each of its GoogleTest tests is selected by exactly one ctest test, and that no
# ctest test selects nothing. Input: lines "ctest_name|executable|filter".
set -euo pipefail
inventory=$1

# Prints "Suite.Test" for each test `--gtest_list_tests` shows (comments "  # ..." cut).
list_tests() {
  "$@" --gtest_list_tests 2>/dev/null | awk '
    /^[^ ]/ { sub(/  #.*/, ""); suite = $0; next }
    /^  [^ ]/ { sub(/^  /, ""); sub(/  #.*/, ""); if (suite ~ /\.$/) print suite $0 }' || true
}

declare -A selected  # "exe|test" -> ctest names that select it
declare -A exes
fail=0
while IFS='|' read -r name exe filter; do
  [[ -n "$name" ]] || continue
  exes[$exe]=1
  mapfile -t tests < <(list_tests "$exe" "--gtest_filter=$filter")
  if [[ ${#tests[@]} -eq 0 ]]; then
    echo "FAIL: ctest test $name selects no test of $(basename "$exe") (filter $filter)"
    fail=1
  fi
  for t in "${tests[@]}"; do
    selected["$exe|$t"]+="$name "
  done
done <"$inventory"

total=0
for exe in "${!exes[@]}"; do
  mapfile -t tests < <(list_tests "$exe")
  for t in "${tests[@]}"; do
    total=$((total + 1))
    owners=${selected["$exe|$t"]:-}
    set -- $owners
    if [[ $# -eq 0 ]]; then
      echo "FAIL: $(basename "$exe"): $t is run by no ctest test"
      fail=1
    elif [[ $# -gt 1 ]]; then
      echo "FAIL: $(basename "$exe"): $t is run by $# ctest tests: $owners"
      fail=1
    fi
  done
done
echo "test inventory: ${#exes[@]} executables, $total tests, $(grep -c . "$inventory") ctest tests"
exit $fail
