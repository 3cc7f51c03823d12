#!/usr/bin/env bash
# A local strata cluster on loopback: one etcd (Debian's etcd-server) and N strata-nodes,
# every port chosen free by the kernel, all state under one directory.
#
#   deploy/cluster.sh up N       build if needed, start etcd and N nodes, print how to reach them
#   deploy/cluster.sh add        one more node, joining the running cluster (state joining for
#                                STRATA_CLUSTER_JOIN_WINDOW, default 5m: see docs/operations.md)
#   deploy/cluster.sh status     the nodes as etcd holds them (one JSON record a line), and
#                                whether each process is alive
#   deploy/cluster.sh down       SIGTERM every node (each drains, then leaves the cluster at
#                                once), then etcd; the data stays
#   deploy/cluster.sh down --purge   the same, then remove the directory
#
# Environment: STRATA_CLUSTER_DIR (default ./var/cluster), STRATA_CLUSTER_NAME (local),
# STRATA_CLUSTER_DRAM (256MiB a node), STRATA_CLUSTER_SSD (1GiB a node),
# STRATA_CLUSTER_NODE_ARGS (more strata-node flags, e.g. --cluster_hot_replicas=1), STRATA_CLUSTER_BIN
# (a directory holding strata-node: use it instead of building), STRATA_BUILD_ROOT.
# The directory holds etcd/ (its data), node<i>/ (each node's data dir: node_id, meta/,
# ssd.tier), *.log, *.pid, cluster.env (ETCD_ENDPOINT, NODE<i>_GRPC, ...) and
# prometheus/strata-targets.json (the nodes' HTTP endpoints with cluster and node labels,
# for Prometheus's file service discovery).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR=${STRATA_CLUSTER_DIR:-$ROOT/var/cluster}
NAME=${STRATA_CLUSTER_NAME:-local}

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# wait_for FILE PATTERN PID SECONDS: until FILE has a line matching PATTERN.
wait_for() {
  local file=$1 pattern=$2 pid=$3 deadline=$((SECONDS + $4))
  until grep -q "$pattern" "$file" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "cluster.sh: process $pid exited; its log ($file):" >&2
      tail -n 20 "$file" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "cluster.sh: no \"$pattern\" in $file after $4 s" >&2
      return 1
    fi
    sleep 0.1
  done
}

stop_pid_file() {
  local file=$1
  if alive "$file"; then
    local pid
    pid=$(cat "$file")
    kill -TERM "$pid"
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$file"
}

up() {
  local n=${1:-}
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || usage
  if alive "$DIR/etcd.pid"; then
    echo "cluster.sh: a cluster is already up in $DIR (deploy/cluster.sh down first)" >&2
    exit 1
  fi
  local bin
  if [[ -n "${STRATA_CLUSTER_BIN:-}" ]]; then
    bin=$STRATA_CLUSTER_BIN
  else
    local build=${STRATA_BUILD_ROOT:-$ROOT/build}/release
    "$ROOT/deploy/setup.sh"
    cmake -S "$ROOT" -B "$build" -G Ninja -DSTRATA_MODULES=all -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j "$(nproc)" --target strata-node strata >/dev/null
    bin=$build/store/node
  fi
  command -v etcd >/dev/null || { echo "cluster.sh: no etcd (deploy/setup.sh installs etcd-server)" >&2; exit 1; }
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  : >"$DIR/cluster.env"

  # etcd: one member, client and peer URLs on loopback port 0; its log says the client port.
  setsid etcd --name=strata --data-dir="$DIR/etcd" \
    --listen-client-urls=http://127.0.0.1:0 --advertise-client-urls=http://127.0.0.1:0 \
    --listen-peer-urls=http://127.0.0.1:0 --initial-advertise-peer-urls=http://127.0.0.1:0 \
    --initial-cluster=strata=http://127.0.0.1:0 </dev/null >"$DIR/etcd.log" 2>&1 &
  echo $! >"$DIR/etcd.pid"
  wait_for "$DIR/etcd.log" "serving insecure client requests on" "$(cat "$DIR/etcd.pid")" 30 ||
    { down >/dev/null; exit 1; }
  local etcd
  etcd=$(sed -n 's/.*serving insecure client requests on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$DIR/etcd.log" | tail -n 1)
  echo "ETCD_ENDPOINT=$etcd" >>"$DIR/cluster.env"
  echo "CLUSTER_NAME=$NAME" >>"$DIR/cluster.env"
  echo "etcd           $etcd   (data $DIR/etcd, log $DIR/etcd.log)"

  for i in $(seq 1 "$n"); do
    # Founding members: serving at once (nothing to join).
    start_node "$bin" "$etcd" "$i" 0 || { down >/dev/null; exit 1; }
  done
  write_targets
  echo
  echo "cluster \"$NAME\": etcd $etcd, $n node(s); addresses in $DIR/cluster.env"
  echo "  members:  deploy/cluster.sh status"
  echo "            ETCDCTL_API=3 etcdctl --endpoints=$etcd get --prefix /strata/$NAME/nodes/"
  echo "  a node:   strata --node <grpc address> tiers"
  echo "  grow:     deploy/cluster.sh add          shrink: strata --cluster etcd://$etcd/$NAME cluster drain ID"
  echo "  metrics:  prometheus scrapes $DIR/prometheus/strata-targets.json (job strata-cluster in"
  echo "            deploy/prometheus/prometheus.yml; run it from $DIR)"
  echo "  stop:     deploy/cluster.sh down"
}

# start_node BIN ETCD I JOIN_WINDOW: node I, its addresses appended to cluster.env.
start_node() {
  local bin=$1 etcd=$2 i=$3 window=$4
  local out=$DIR/node$i.out
  setsid "$bin/strata-node" --grpc_listen=127.0.0.1:0 --dataplane_listen=127.0.0.1:0 \
    --http_listen=127.0.0.1:0 --data_dir="$DIR/node$i" \
    --dram_bytes="${STRATA_CLUSTER_DRAM:-256MiB}" --ssd_bytes="${STRATA_CLUSTER_SSD:-1GiB}" \
    --etcd_endpoints="$etcd" --cluster="$NAME" --cluster_join_window="$window" \
    ${STRATA_CLUSTER_NODE_ARGS:-} </dev/null >"$out" 2>"$DIR/node$i.log" &
  echo $! >"$DIR/node$i.pid"
  wait_for "$out" "^strata-node: ready" "$(cat "$DIR/node$i.pid")" 60 ||
    { echo "cluster.sh: node$i did not start" >&2; return 1; }
  local grpc dp http id
  grpc=$(sed -n 's/^strata-node: grpc listening on //p' "$out")
  dp=$(sed -n 's/^strata-node: dataplane listening on //p' "$out")
  http=$(sed -n 's/^strata-node: http listening on //p' "$out")
  id=$(sed -n 's/^strata-node: ready .*node_id=\([0-9a-f]*\).*/\1/p' "$out")
  {
    echo "NODE${i}_ID=$id"
    echo "NODE${i}_GRPC=$grpc"
    echo "NODE${i}_DATAPLANE=$dp"
    echo "NODE${i}_HTTP=$http"
  } >>"$DIR/cluster.env"
  echo "node$i  $id  grpc $grpc  dataplane $dp  http $http"
}

# Prometheus file service discovery (deploy/prometheus/prometheus.yml, job strata-cluster):
# each node's HTTP endpoint, labelled with its cluster and node id (from cluster.env).
write_targets() {
  local targets=() i=1
  # shellcheck disable=SC1091
  source "$DIR/cluster.env"
  while true; do
    local id_var=NODE${i}_ID http_var=NODE${i}_HTTP
    [[ -n "${!id_var:-}" ]] || break
    targets+=("{\"targets\": [\"${!http_var}\"], \"labels\": {\"cluster\": \"$NAME\", \"node\": \"${!id_var}\"}}")
    i=$((i + 1))
  done
  mkdir -p "$DIR/prometheus"
  (IFS=,; echo "[${targets[*]}]") >"$DIR/prometheus/strata-targets.json"
}

add() {
  alive "$DIR/etcd.pid" || { echo "cluster.sh: no cluster up in $DIR (deploy/cluster.sh up N)" >&2; exit 1; }
  # shellcheck disable=SC1091
  source "$DIR/cluster.env"
  local bin=${STRATA_CLUSTER_BIN:-${STRATA_BUILD_ROOT:-$ROOT/build}/release/store/node}
  local i=1
  while [[ -e "$DIR/node$i.pid" || -d "$DIR/node$i" ]]; do i=$((i + 1)); done
  start_node "$bin" "$ETCD_ENDPOINT" "$i" "${STRATA_CLUSTER_JOIN_WINDOW:-5m}" || exit 1
  write_targets
  echo "node$i joins cluster \"$NAME\" (joining for ${STRATA_CLUSTER_JOIN_WINDOW:-5m}, then serving)"
}

status() {
  [[ -f "$DIR/cluster.env" ]] || { echo "cluster.sh: no cluster in $DIR" >&2; exit 1; }
  # shellcheck disable=SC1091
  source "$DIR/cluster.env"
  if alive "$DIR/etcd.pid"; then
    echo "etcd $ETCD_ENDPOINT: up"
    ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINT" get --prefix "/strata/$CLUSTER_NAME/nodes/" \
      --print-value-only
  else
    echo "etcd $ETCD_ENDPOINT: down"
  fi
  for pid_file in "$DIR"/node*.pid; do
    [[ -e "$pid_file" ]] || continue
    local node
    node=$(basename "$pid_file" .pid)
    if alive "$pid_file"; then echo "$node: running (pid $(cat "$pid_file"))"; else echo "$node: stopped"; fi
  done
}

down() {
  [[ -d "$DIR" ]] || { echo "cluster.sh: no cluster in $DIR"; return 0; }
  local stopped=0
  for pid_file in "$DIR"/node*.pid; do
    [[ -e "$pid_file" ]] || continue
    stop_pid_file "$pid_file"
    stopped=$((stopped + 1))
  done
  stop_pid_file "$DIR/etcd.pid"
  echo "cluster.sh: stopped $stopped node(s) and etcd"
  if [[ "${1:-}" == "--purge" ]]; then
    rm -rf "$DIR"
    echo "cluster.sh: removed $DIR"
  fi
}

case "${1:-}" in
  up) shift; up "$@" ;;
  add) add ;;
  status) status ;;
  down) shift; down "$@" ;;
  *) usage ;;
esac
