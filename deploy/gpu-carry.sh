#!/usr/bin/env bash
# Packs the GPU tests for a device machine that has a GPU and its driver but none of our
# Debian packages: the test binaries (stripped) plus every shared library they load from
# the system, and run.sh, which runs them with those libraries. Carry the folder to the
# device (the `device` tool's `carry`), then run `bash build/gpu-carry/run.sh` there.
#
#   deploy/gpu-carry.sh            packs from build/release (build it first: deploy/test.sh release)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_ROOT:-$PWD/build}/release
OUT=${STRATA_BUILD_ROOT:-$PWD/build}/gpu-carry
rm -rf "$OUT" && mkdir -p "$OUT/lib"
# One test executable per folder (cmake/StrataTesting.cmake): gpu/'s unit tests (host
# device, CUDA status and open) and tests/gpu's CUDA device tests.
tests=(tests/gpu/strata_gpu_tests gpu/gpu_tests)
for t in "${tests[@]}"; do
  [[ -x "$BUILD/$t" ]] || { echo "gpu-carry: $BUILD/$t is missing: build the release tree" >&2; exit 1; }
  cp "$BUILD/$t" "$OUT/" && strip "$OUT/$(basename "$t")"
  # The C library and the loader stay the device machine's own.
  ldd "$BUILD/$t" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    xargs -r -I{} cp -L {} "$OUT/lib/"
done
cat >"$OUT/run.sh" <<'RUN'
#!/bin/bash
# Runs the packed GPU tests with the packed libraries; prints the host, the GPUs and each
# test's tail and exit code.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
echo "== host"; uname -a; head -2 /etc/os-release 2>/dev/null; ldd --version | head -1
nvidia-smi -L 2>&1 | head -4
for t in gpu_tests strata_gpu_tests; do
  echo "== $t"; timeout 120 "./$t" 2>&1 | grep -vE '^\[ RUN|^\[       OK' | tail -25
  echo "rc=${PIPESTATUS[0]}"
done
RUN
chmod +x "$OUT/run.sh"
echo "gpu-carry: $(du -sh "$OUT" | cut -f1) in $OUT; on the device: bash ${OUT#$PWD/}/run.sh"
