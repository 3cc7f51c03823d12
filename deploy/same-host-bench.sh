#!/usr/bin/env bash
# The same-host channel beside its limit and its alternative, in one run against one node:
#
#   1. strata-bench --same-host on: GET (a Read copied out of the node's DRAM tier, mapped
#      read-only, every chunk verified) and PUT (a Write through the connection's staging
#      file: the client's copy in, the node's copy into the put, the node's verification);
#   2. strata-bench --same-host off over UCX_TLS=tcp,shm,cma: the same calls over UCX shared
#      memory and CMA (what a same-host client used before the channel);
#   3. strata-bench --modes memcpy: a plain memcpy of the same bytes per client (the limit:
#      a GET or PUT moves each byte once).
# GET and memcpy cycle over 256 MiB per client (--working-set), beyond the CPU caches.
# Then one table: GB/s (10^9 bytes/s) and the ratios GET/memcpy, GET/UCX-shm, PUT/memcpy.
#
#   deploy/same-host-bench.sh [--quick]     --quick: 1M and 16M blobs, 1 client
#   STRATA_BENCH_PREBUILT=1 STRATA_BUILD_ROOT=DIR deploy/same-host-bench.sh   no build
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release
SIZES=262144,1048576,4194304,16777216,67108864
CLIENTS=1,2
# GET and memcpy cycle over this much per client: past the caches, both read cold memory as
# a node's DRAM tier would be read (STRATA_BENCH_WORKING_SET=0: 2 blobs, mostly in cache).
WORKING_SET=${STRATA_BENCH_WORKING_SET:-256M}
if [[ "${1:-}" == "--quick" ]]; then
  SIZES=1048576,16777216
  CLIENTS=1
fi

if [[ -z "${STRATA_BENCH_PREBUILT:-}" ]]; then
  "$ROOT/deploy/setup.sh" --bench
  BUILD_TYPE=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
  [[ -f "$BUILD/CMakeCache.txt" ]] && BUILD_TYPE=()
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSTRATA_MODULES=all "${BUILD_TYPE[@]}" >/dev/null
  cmake --build "$BUILD" -j "$(nproc)" --target strata-node strata-bench
fi

WORK=$(mktemp -d /tmp/strata-same-host-bench.XXXXXX)
NODE_PID=
cleanup() {
  [[ -n "$NODE_PID" ]] && kill "$NODE_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "# command: $0 $*"
echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')  host: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
command -v ucx_info >/dev/null && echo "# $(ucx_info -v | head -1 | sed "s/^# *//")"

# --dram_populate: the DRAM tier's pages are faulted in at start, as on a node that has run
# a while (a never-touched page costs a fault on first store).
UCX_TLS=tcp,shm,cma "$BUILD/store/node/strata-node" --grpc_listen=127.0.0.1:0 \
  --dataplane_listen=127.0.0.1:0 --http_listen= --dram_bytes=4GiB --dram_populate \
  --data_dir="$WORK/data" >"$WORK/stdout" 2>"$WORK/stderr" &
NODE_PID=$!
for _ in $(seq 1 600); do
  grep -q "ready" "$WORK/stdout" 2>/dev/null && break
  kill -0 "$NODE_PID" 2>/dev/null || { cat "$WORK/stdout" "$WORK/stderr" >&2; exit 1; }
  sleep 0.1
done
GRPC=$(sed -n 's/^strata-node: grpc listening on \([^ ]*\).*/\1/p' "$WORK/stdout")
grep -o "hugepage mode [a-z]*, memfd" "$WORK/stderr" | head -1 | sed 's/^/# DRAM tier: /'

bench() {  # $1 label, then strata-bench arguments
  local label=$1
  shift
  echo
  echo "=== $label"
  "$BUILD/client/tools/strata-bench" --node "$GRPC" --sizes "$SIZES" --clients "$CLIENTS" \
    --working-set "$WORKING_SET" --csv "$@" |
    tee "$WORK/$label.csv"
}
bench same-host --same-host on --ucx-tls tcp --modes put,get
bench ucx-shm --same-host off --ucx-tls tcp,shm,cma --modes put,get
bench memcpy --modes memcpy

echo
echo "=== side by side: GB/s (10^9 bytes/s); p50 latency in microseconds"
python3 - "$WORK" <<'PY'
import csv, sys, os
work = sys.argv[1]
def load(label):
    rows = {}
    with open(os.path.join(work, label + ".csv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("mode,"):
                continue
            r = next(csv.reader([line]))
            rows[(r[0], int(r[1]), int(r[2]))] = (float(r[5]), float(r[7]))
    return rows
sh, ucx, mem = load("same-host"), load("ucx-shm"), load("memcpy")
print("| size | clients | memcpy | same-host GET | GET p50 us | UCX shm GET | GET / memcpy | GET / UCX shm | same-host PUT | PUT p50 us | UCX shm PUT | PUT / memcpy | PUT / UCX shm |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
for (mode, size, clients) in sorted(k for k in mem if k[0] == "memcpy"):
    m = mem[(mode, size, clients)][0]
    g, gp = sh.get(("get", size, clients), (0, 0))
    u = ucx.get(("get", size, clients), (0, 0))[0]
    p, pp = sh.get(("put", size, clients), (0, 0))
    up = ucx.get(("put", size, clients), (0, 0))[0]
    ratio = lambda a, b: f"{a / b:.2f}" if b else "-"
    print(f"| {size_name(size)} | {clients} | {m:.2f} | {g:.2f} | {gp:.0f} | {u:.2f} | {ratio(g, m)} | {ratio(g, u)} | {p:.2f} | {pp:.0f} | {up:.2f} | {ratio(p, m)} | {ratio(p, up)} |")
PY
