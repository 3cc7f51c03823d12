#!/usr/bin/env bash
# Packs what deploy/gpu-check.sh runs on a device machine that has a GPU and its driver but
# none of our Debian packages: the gpu test binaries, strata-node and strata-gpu-bench
# (stripped), every shared library they load from the system (and UCX's transport modules,
# which UCX opens at run time), and gpu-check.sh. Carry build/gpu-carry (the `device` tool's
# `carry`) and run `bash build/gpu-carry/run.sh` there: it unpacks to /tmp and runs the check.
#
#   deploy/gpu-carry.sh            packs from build/release (build it first: deploy/test.sh release)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${STRATA_BUILD_ROOT:-$PWD/build}/release
OUT=${STRATA_BUILD_ROOT:-$PWD/build}/gpu-carry
STAGE=$(mktemp -d /tmp/strata-gpu-carry.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib/ucx"
# One test executable per folder (cmake/StrataTesting.cmake): gpu/'s unit tests (host
# device, paged KV, CUDA status and open) and tests/gpu's CUDA device tests; the node and
# the figures' program.
binaries=(tests/gpu/strata_gpu_tests gpu/gpu_tests store/node/strata-node
          client/tools/strata-gpu-bench client/tools/strata-moe-demo)
libs() {  # the system libraries $1 loads, but the C library and the loader (the device's own)
  ldd "$1" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' || true
}
for b in "${binaries[@]}"; do
  [[ -x "$BUILD/$b" ]] || { echo "gpu-carry: $BUILD/$b is missing: build the release tree" >&2; exit 1; }
  cp "$BUILD/$b" "$STAGE/bin/" && strip "$STAGE/bin/$(basename "$b")"
  libs "$BUILD/$b" | xargs -r -I{} cp -L {} "$STAGE/lib/"
done
UCX_MODULES=/usr/lib/x86_64-linux-gnu/ucx
for m in "$UCX_MODULES"/libuct_*.so.0; do
  cp -L "$m" "$STAGE/lib/ucx/"
  libs "$m" | xargs -r -I{} cp -L {} "$STAGE/lib/"
done
cp deploy/gpu-check.sh "$STAGE/"
rm -rf "$OUT" && mkdir -p "$OUT"
tar -C "$STAGE" -cJf "$OUT/strata-gpu.tar.xz" .
cat >"$OUT/run.sh" <<'RUN'
#!/bin/bash
# Unpacks the carried binaries and libraries and runs gpu-check.sh (deploy/gpu-check.sh).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(mktemp -d /tmp/strata-gpu.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
tar -C "$DIR" -xJf "$HERE/strata-gpu.tar.xz"
bash "$DIR/gpu-check.sh" "$DIR"
RUN
chmod +x "$OUT/run.sh"
echo "gpu-carry: $(du -sh "$OUT" | cut -f1) in $OUT (unpacked $(du -sh "$STAGE" | cut -f1)); on the device: bash ${OUT#$PWD/}/run.sh"
