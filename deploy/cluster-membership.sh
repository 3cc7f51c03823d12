#!/usr/bin/env bash
# Bytes moved by a join and by a drain, against the ideal 1/N (issue 13, item 9).
#
#   deploy/cluster-membership.sh [--nodes N] [--sequences K] [--pages P] [--out DIR]
#
# A fresh cluster of N nodes (default 4; deploy/cluster.sh up, 512 MiB DRAM a node, no SSD)
# gets K sequences of P pages (default 256 x 64, 16 KiB pages: 256 MiB of KV in segments of
# 16 pages), written and read once (strata-cluster-bench --workload). Then:
#   join   deploy/cluster.sh add: node N+1 joins (joining for 5 min); every sequence is read
#          again — lookups also ask the previous owners, what is read there moves to the
#          joiner — and again (now from the joiner). Ideal: 1/(N+1) of the KV moves.
#   drain  strata cluster drain on node1: it hands the segments it holds that were read to
#          their new owners, then leaves; every sequence is read again. Ideal: 1/(N+1) of the
#          KV (its share) moves.
# Prints one table; writes DIR/*.json. Needs a release build (deploy/test.sh release).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release
NODES=4 SEQUENCES=256 PAGES=64 OUT=$ROOT/var/cluster-membership
while (($#)); do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --sequences) SEQUENCES=$2; shift 2 ;;
    --pages) PAGES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
BENCH=$BUILD/client/tools/strata-cluster-bench
STRATA=$BUILD/client/cli/strata
[[ -x "$BENCH" && -x "$BUILD/store/node/strata-node" ]] ||
  { echo "cluster-membership.sh: no release build in $BUILD" >&2; exit 1; }
mkdir -p "$OUT"
export STRATA_CLUSTER_DIR=$OUT/cluster STRATA_CLUSTER_BIN=$BUILD/store/node
export STRATA_CLUSTER_NAME=membership STRATA_CLUSTER_DRAM=512MiB STRATA_CLUSTER_SSD=0
"$ROOT/deploy/cluster.sh" down --purge >/dev/null 2>&1 || true
trap '"$ROOT/deploy/cluster.sh" down --purge >/dev/null 2>&1 || true' EXIT
"$ROOT/deploy/cluster.sh" up "$NODES" >/dev/null
# shellcheck disable=SC1091
source "$STRATA_CLUSTER_DIR/cluster.env"
URL="etcd://$ETCD_ENDPOINT/membership"
bench() {
  "$BENCH" --cluster "$URL" --workload "$1" --sequences "$SEQUENCES" --pages "$PAGES" \
    --segment-pages 16 --seed 7
}
bench write >&2
bench read >"$OUT/before.json"
STRATA_CLUSTER_JOIN_WINDOW=5m "$ROOT/deploy/cluster.sh" add >&2
sleep 2  # the client's view follows etcd's watch
bench read >"$OUT/join.json"
bench read >"$OUT/after-join.json"
"$STRATA" --cluster "$URL" cluster drain "$NODE1_ID" --json >"$OUT/drain.json"
sleep 1
bench read >"$OUT/after-drain.json"

python3 - "$OUT" "$NODES" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
j = {k: json.load(open(f"{out}/{k}.json")) for k in ("before", "join", "after-join", "drain", "after-drain")}
kv = j["before"]["kv_bytes"]
print(f"{n} nodes, {j['before']['sequences']} sequences x {j['before']['pages'] // j['before']['sequences']} pages, "
      f"{kv / 2**20:.0f} MiB of KV, {j['before']['segments']} segments")
print(f"{'step':<24} {'found':>7} {'readable':>8} {'from previous':>13} {'bytes moved':>12} {'of KV':>7} {'ideal':>7}")
def row(name, r, moved, ideal):
    print(f"{name:<24} {r['found_pages'] / r['pages']:>7.1%} {r['readable_pages'] / r['pages']:>8.1%} "
          f"{r['segments_from_previous']:>13} {moved / 2**20:>10.1f} M {moved / kv:>7.1%} {ideal:>7.1%}")
row("before", j["before"], 0, 0)
row(f"join (node {n + 1})", j["join"], j["join"]["bytes_moved"], 1 / (n + 1))
row("after the join", j["after-join"], j["after-join"]["bytes_moved"], 0)
d = j["drain"]
row("drain (node 1)", j["after-drain"], d["bytes"], 1 / (n + 1))
print(f"drain: {d['segments']} segments handed over, {d['blobs_existing']} blobs their owner had, "
      f"{d['cold_segments']} cold, {d['over_budget_segments']} over budget, {d['text_blobs']} TEXT "
      f"blobs left, {d['failures']} failures; held {d['held_bytes'] / 2**20:.1f} MiB")
PY
