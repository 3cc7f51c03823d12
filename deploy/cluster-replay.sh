#!/usr/bin/env bash
# The Mooncake trace replayed against a 3-node cluster with one node killed (-9) part-way,
# with and without replicas (issue 13, item 9): page hit rate over wall time, found (KV or
# TEXT) and readable (KV), before and after the kill.
#
#   deploy/cluster-replay.sh [--requests N] [--speedup F] [--kill-after SECONDS] [--out DIR]
#
# Each mode starts a fresh cluster (deploy/cluster.sh up 3: 512 MiB DRAM a node, no SSD),
# runs strata-replay --cluster on the first N requests (default 6000) at F times trace speed
# (default 60), kills (-9) the node holding the most KV after SECONDS (default 15) of wall
# time — the owner of the trace's shared first segment — and stops the cluster:
#   replicas   the defaults: token text on 2 nodes, hot blobs (16 reads) on 2 nodes
#   none       --text-replicas 1 and --cluster_hot_replicas=1
#   no-kill    the defaults, no node killed: the baseline for the same wall windows
# KV layout 1 layer x 1 head x 8 (16 KiB pages, as the single-node replay figure); segments of
# 16 pages (8K tokens: the trace's contexts span a few segments). Writes DIR/<mode>.json (the
# replay's report) and DIR/<mode>/hit_rate_wall.png, and prints a table. Needs a release
# build (deploy/test.sh release, or deploy/quickstart.sh).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release
TRACE=${STRATA_TRACE:-$ROOT/../shared/traces/mooncake_conversation_trace.jsonl}
REQUESTS=6000 SPEEDUP=60 KILL_AFTER=15 OUT=$ROOT/var/cluster-replay
while (($#)); do
  case $1 in
    --requests) REQUESTS=$2; shift 2 ;;
    --speedup) SPEEDUP=$2; shift 2 ;;
    --kill-after) KILL_AFTER=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[[ -x "$BUILD/client/tools/strata-replay" && -x "$BUILD/store/node/strata-node" ]] ||
  { echo "cluster-replay.sh: no release build in $BUILD" >&2; exit 1; }
[[ -f "$TRACE" ]] || { echo "cluster-replay.sh: no trace at $TRACE" >&2; exit 1; }
mkdir -p "$OUT"

run_mode() {
  local mode=$1 text_replicas=$2 node_args=$3 kill=${4:-kill}
  export STRATA_CLUSTER_DIR=$OUT/$mode-cluster STRATA_CLUSTER_BIN=$BUILD/store/node
  export STRATA_CLUSTER_NAME=replay STRATA_CLUSTER_DRAM=512MiB STRATA_CLUSTER_SSD=0
  export STRATA_CLUSTER_NODE_ARGS=$node_args
  "$ROOT/deploy/cluster.sh" down --purge >/dev/null 2>&1 || true
  "$ROOT/deploy/cluster.sh" up 3 >/dev/null
  # shellcheck disable=SC1091
  source "$STRATA_CLUSTER_DIR/cluster.env"
  "$BUILD/client/tools/strata-replay" --cluster "etcd://$ETCD_ENDPOINT/replay" \
    --segment-pages 16 --text-replicas "$text_replicas" --speedup "$SPEEDUP" \
    --max-requests "$REQUESTS" --concurrency 4 --layers 1 --kv-heads 1 --head-dim 8 \
    --timeout-s 10 --windows 40 --json --plot-dir "$OUT/$mode" "$TRACE" >"$OUT/$mode.out" &
  local replay=$!
  sleep "$KILL_AFTER"
  if [[ $kill == kill ]]; then
    # The node holding the most KV: the owner of the trace's shared first segment (every
    # request starts with the same block).
    local victim
    victim=$("$BUILD/client/cli/strata" --cluster "etcd://$ETCD_ENDPOINT/replay" cluster status --json |
      python3 -c 'import json,sys; n=json.load(sys.stdin)["nodes"]; print(max(n, key=lambda x: (x["held"] or {}).get("kv_bytes", 0))["id"])')
    local i
    for i in 1 2 3; do
      local id_var=NODE${i}_ID
      if [[ "${!id_var}" == "$victim" ]]; then
        kill -KILL "$(cat "$STRATA_CLUSTER_DIR/node$i.pid")"
        echo "$mode: node$i ($victim, the most KV) killed after ${KILL_AFTER}s" >&2
      fi
    done
  fi
  wait "$replay"
  # The report is the first line; UCX may add warnings after it at exit (requests to the
  # killed node's endpoint that never completed).
  head -n 1 "$OUT/$mode.out" >"$OUT/$mode.json"
  "$ROOT/deploy/cluster.sh" down --purge >/dev/null
}

run_mode replicas 2 ""
run_mode none 1 "--cluster_hot_replicas=1"
run_mode no-kill 2 "" no-kill

python3 - "$OUT" "$KILL_AFTER" <<'PY'
import json, sys
out, kill = sys.argv[1], float(sys.argv[2])
print(f"the node holding the most KV killed (-9) after {kill:g} s of wall time; page hit rates by wall time")
print(f"{'mode':<9} {'requests':>8} {'failed':>6} {'found before':>12} {'found after':>11} "
      f"{'KV before':>9} {'KV after':>8} {'wall s':>6}")
for mode in ("replicas", "none", "no-kill"):
    r = json.load(open(f"{out}/{mode}.json"))
    def rate(windows, key):
        q = sum(w["queried_pages"] for w in windows)
        return sum(w[key] for w in windows) / q if q else 0.0
    before = [w for w in r["wall_windows"] if w["end_s"] <= kill]
    after = [w for w in r["wall_windows"] if w["end_s"] > kill + 1]  # past the lease's first second
    print(f"{mode:<9} {r['requests']:>8} {r['failed_requests']:>6} "
          f"{rate(before, 'found_pages'):>12.1%} {rate(after, 'found_pages'):>11.1%} "
          f"{rate(before, 'readable_pages'):>9.1%} {rate(after, 'readable_pages'):>8.1%} "
          f"{r['wall_s']:>6.1f}")
print(f"(no-kill: nothing killed; its 'after' columns are the same wall windows)")
print(f"plots: {out}/replicas/hit_rate_wall.png, {out}/none/hit_rate_wall.png, "
      f"{out}/no-kill/hit_rate_wall.png")
PY
