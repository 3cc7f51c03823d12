#!/usr/bin/env bash
# The run command: installs what is missing, builds strata (release), starts a single local
# strata-node on its embedded defaults (gRPC 127.0.0.1:7400, data plane 127.0.0.1:7401,
# DRAM tier sized from free memory, a 2 GiB SSD tier and the metadata store under ./var or
# $STRATA_DATA), drives the reference worker through a multi-turn agent session against it
# (prefill, midfills, a branch, decode), shows the node's tiers, and stops the node.
#
# deploy/quickstart.sh --cluster N: the same agent session against a cluster of N nodes on
# loopback (deploy/cluster.sh up N under ./var/quickstart-cluster: etcd and N strata-nodes),
# then `strata cluster status`; then one node leaves (`strata cluster drain`: its read
# segments go to their new owners), the same session runs again and finds everything
# cached, and the cluster is stopped and removed.
#
# The index and arena benchmarks that used to run here: deploy/bench.sh.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release

CLUSTER_NODES=
case "${1:-}" in
  "") ;;
  --cluster)
    CLUSTER_NODES=${2:-}
    [[ "$CLUSTER_NODES" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [--cluster N]" >&2; exit 2; }
    ;;
  *) echo "usage: $0 [--cluster N]" >&2; exit 2 ;;
esac

"$ROOT/deploy/setup.sh"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSTRATA_MODULES=all -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
TARGETS=(strata-node strata-demo strata)
# The Python module where Python's headers and pybind11 are found (setup.sh installs them).
grep -q 'strata_python' "$BUILD/build.ninja" 2>/dev/null && TARGETS+=(strata_python)
cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]}"

if [[ -n "$CLUSTER_NODES" ]]; then
  export STRATA_CLUSTER_DIR=$ROOT/var/quickstart-cluster STRATA_CLUSTER_BIN=$BUILD/store/node
  export STRATA_CLUSTER_NAME=quickstart STRATA_CLUSTER_SSD=${STRATA_CLUSTER_SSD:-256MiB}
  "$ROOT/deploy/cluster.sh" down --purge >/dev/null 2>&1 || true  # a previous run's leftovers
  trap '"$ROOT/deploy/cluster.sh" down --purge >/dev/null 2>&1 || true' EXIT
  echo
  echo "=== deploy/cluster.sh up $CLUSTER_NODES"
  "$ROOT/deploy/cluster.sh" up "$CLUSTER_NODES"
  # shellcheck disable=SC1091
  source "$STRATA_CLUSTER_DIR/cluster.env"
  export STRATA_CLUSTER="etcd://$ETCD_ENDPOINT/$CLUSTER_NAME"
  STRATA="$BUILD/client/cli/strata"
  echo
  echo "=== agent session across the cluster (strata-demo --cluster $STRATA_CLUSTER)"
  "$BUILD/client/tools/strata-demo" --cluster "$STRATA_CLUSTER"
  echo
  echo "=== strata cluster status"
  "$STRATA" cluster status
  echo
  echo "=== strata capacity --cluster (the nodes' live miss-ratio curves, combined)"
  "$STRATA" capacity || true
  if ((CLUSTER_NODES > 1)); then
    echo
    echo "=== strata cluster drain $NODE1_ID (the node hands its read segments to their new owners, then leaves)"
    "$STRATA" cluster drain "$NODE1_ID"
    echo
    echo "=== the same session again, without node1: every turn finds its context cached"
    "$BUILD/client/tools/strata-demo" --cluster "$STRATA_CLUSTER"
    echo
    "$STRATA" cluster status
  fi
  echo
  echo "=== deploy/cluster.sh down --purge"
  "$ROOT/deploy/cluster.sh" down --purge
  trap - EXIT
  exit 0
fi

# The node keeps its metadata (meta/) and SSD tier (ssd.tier) in its data dir, and a
# restarted node serves them again. The demo starts from an empty node, so in the default
# ./var the previous run's node state is removed first; a STRATA_DATA you set is left as is.
if [[ -z "${STRATA_DATA:-}" ]]; then
  export STRATA_DATA=$ROOT/var
  rm -rf "$STRATA_DATA/meta" "$STRATA_DATA/ssd.tier"
fi
mkdir -p "$STRATA_DATA"
LOG="$STRATA_DATA/quickstart-node.log"
echo
echo "=== starting strata-node (log: $LOG)"
"$BUILD/store/node/strata-node" >"$LOG.out" 2>"$LOG" &
NODE_PID=$!
stop_node() {
  if kill -0 "$NODE_PID" 2>/dev/null; then
    kill -TERM "$NODE_PID"
    wait "$NODE_PID" || true
  fi
}
trap stop_node EXIT
for _ in $(seq 1 100); do
  grep -q "ready" "$LOG.out" 2>/dev/null && break
  kill -0 "$NODE_PID" 2>/dev/null || { cat "$LOG.out" "$LOG" >&2; echo "strata-node exited" >&2; exit 1; }
  sleep 0.1
done
cat "$LOG.out"

echo
echo "=== agent session through the reference worker (client/tools/agent_demo.cc)"
"$BUILD/client/tools/strata-demo"

if [[ -x "$BUILD/client/cli/strata" ]]; then
  echo
  echo "=== strata tiers"
  "$BUILD/client/cli/strata" tiers
  echo
  echo "=== strata capacity (the live miss-ratio curve: expected hit rate at other tier sizes)"
  "$BUILD/client/cli/strata" capacity --tier dram --plot "$STRATA_DATA/capacity.png" || true
fi

HTTP=$(sed -n 's/^strata-node: http listening on //p' "$LOG.out" | head -n 1)
if [[ -n "$HTTP" ]] && command -v curl >/dev/null; then
  echo
  echo "=== http://$HTTP/metrics (Prometheus; lookups by phase and tier), first lines"
  curl -s "http://$HTTP/metrics" | grep -E '^strata_(lookup_pages_total|tier_used_bytes|mrc_expected_hit_ratio)' | head -n 20
  echo "(also http://$HTTP/v1/tiers, /healthz, /readyz; deploy/prometheus and deploy/grafana)"
fi

if [[ -f "$BUILD/python/strata/__init__.py" ]]; then
  echo
  echo "=== one Python call against the demo's node (python/README.md; pip install . for your own venv)"
  echo "PYTHONPATH=$BUILD/python python3 -c 'import strata; strata.Client().tiers()'"
  PYTHONPATH="$BUILD/python" /usr/bin/python3 -c 'import strata
t = strata.Client("127.0.0.1:7400").tiers()
print({x["tier"]: x["used_bytes"] for x in t["tiers"]}, "bytes used;", t["engine"]["blobs"], "blobs,",
      t["text"]["blobs"], "of them TEXT")'
fi

echo
echo "=== stopping strata-node (SIGTERM drains in-flight transfers)"
stop_node
trap - EXIT
tail -n 3 "$LOG"
