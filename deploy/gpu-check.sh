#!/bin/bash
# The GPU machine's one script (issue 14): the `gpu` tests, then one table of device-memory
# figures, each beside its limit measured in the same run (client/tools/strata_gpu_bench.cc):
# staged and same-host reads into device memory against pinned cudaMemcpy H2D, the paged-KV
# scatter kernel against device-to-device copies, reads from the node's HBM tier (8 GiB,
# shared with same-host readers: CUDA IPC) against device-to-device copies, and a 32K-token
# context of a 70B-like layout (80 layers, 8 KV heads, head dim 128, bf16: 10 GiB) from a
# node into a paged GPU cache; then the MoE reference worker's four phases with its paged
# cache on the GPU. Runs from carried binaries (deploy/gpu-carry.sh packs them with every
# library they load); needs only the GPU's driver. Bounded: every step has a timeout; the whole run
# stays under 8 minutes.
#
#   bash gpu-check.sh [DIR]     DIR holds bin/ and lib/ (default: this script's folder)
#   STRATA_GPU_CHECK_TOKENS=4096 bash gpu-check.sh    a smaller context
set -u
DIR=$(cd "${1:-$(dirname "$0")}" && pwd)
BIN=$DIR/bin
export LD_LIBRARY_PATH=$DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[[ -d $DIR/lib/ucx ]] && export UCX_MODULE_DIR=$DIR/lib/ucx
TOKENS=${STRATA_GPU_CHECK_TOKENS:-32768}
START=$(date +%s)
WORK=$(mktemp -d /tmp/strata-gpu-check.XXXXXX)
NODE=
cleanup() {
  [[ -n $NODE ]] && kill -TERM "$NODE" 2>/dev/null && wait "$NODE" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== host: $(uname -r), $(nproc) cores, $(awk '/MemTotal/ {print int($2/1048576)" GiB"}' /proc/meminfo)"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv,noheader 2>&1 | head -4

echo "== gpu tests"
GPU=1
for t in gpu_tests strata_gpu_tests; do
  echo "-- $t"
  timeout 120 "$BIN/$t" 2>&1 | grep -vE '^\[ RUN|^\[       OK' | tail -30
  rc=${PIPESTATUS[0]}
  echo "rc=$rc ($t; 77 = skipped: no usable device)"
  [[ $t == strata_gpu_tests && $rc == 77 ]] && GPU=0
done

echo "== node"
# An 8 GiB HBM tier shared with same-host readers where a GPU is usable (without one the node
# would refuse to start: a configured tier it cannot open is an error).
HBM=()
[[ $GPU == 1 ]] && HBM=(--hbm_bytes=8GiB --hbm_device=cuda --same_host_share_hbm=true)
# 16 GiB of DRAM tier: the 10 GiB context and the per-size blobs, one context at a time.
"$BIN/strata-node" --grpc_listen=127.0.0.1:0 --dataplane_listen=127.0.0.1:0 --http_listen= \
  --dram_bytes=16GiB --ssd_bytes=0 "${HBM[@]}" --data_dir="$WORK/data" >"$WORK/node.out" 2>"$WORK/node.err" &
NODE=$!
for _ in $(seq 1 300); do
  grep -q "ready" "$WORK/node.out" 2>/dev/null && break
  kill -0 "$NODE" 2>/dev/null || { tail -n 20 "$WORK/node.out" "$WORK/node.err"; exit 1; }
  sleep 0.1
done
GRPC=$(sed -n 's/^strata-node: grpc listening on \([^ ]*\).*/\1/p' "$WORK/node.out")
grep -o "same-host clients connect to [^ ]*" "$WORK/node.err" | head -1
echo "node $GRPC"

echo "== figures (strata-gpu-bench)"
timeout 300 "$BIN/strata-gpu-bench" --node "$GRPC" --device cuda --sizes 4MiB,64MiB,256MiB \
  --seconds 1 --context-tokens "$TOKENS" --blob-tokens 1024
echo "rc=$? (strata-gpu-bench)"
echo "== the MoE reference worker's four phases through the GPU (strata-moe-demo)"
timeout 120 "$BIN/strata-moe-demo" --node "$GRPC" --device cuda --prompt-pages 64 \
  --midfill-pages 8 --decode-steps 2
echo "rc=$? (strata-moe-demo)"
echo "== done in $(( $(date +%s) - START )) s"
