#!/usr/bin/env bash
# strata GET/PUT beside what bounds it and what a user would pick instead, in one run:
#
#   1. strata-bench (client/tools/strata_bench.cc) against a fresh strata-node, PUT then GET,
#      blob sizes x client counts, once over UCX_TLS=tcp and once over tcp,shm,cma (same-host
#      shared memory + CMA for the bulk bytes);
#   2. ucx_perftest -t ucp_am_bw (UCX's own active-message bandwidth test between two
#      processes) at the same sizes and transports, in UCX's busy-poll mode and in its sleep
#      mode (-E sleep, as strata's progress threads wait); the better of the two is the limit;
#   3. redis-benchmark GET and SET against Debian's redis-server on loopback at the same value
#      sizes and client counts;
#   4. Match over gRPC of a 32K-token prompt (strata-bench --modes match), beside Health.
#
# Prints each tool's raw rows, then one table per transport with the ratios
# (strata / ucx_perftest, strata / redis). GB/s are 10^9 bytes/s throughout (ucx_perftest's
# MB/s are MiB/s and are converted).
#
#   deploy/bench-compare.sh [--quick]      --quick: 1M and 16M blobs, 1 and 8 clients
#   STRATA_BENCH_PREBUILT=1 STRATA_BUILD_ROOT=DIR deploy/bench-compare.sh
#                                          use DIR/release's binaries as they are (no build)
#   STRATA_BENCH_SIZES=1048576,4194304 STRATA_BENCH_CLIENTS=1,4 deploy/bench-compare.sh
#                                          these sizes (bytes) and client counts instead
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${STRATA_BUILD_ROOT:-$ROOT/build}/release
SIZES=(262144 1048576 4194304 16777216)
CLIENTS=(1 2 4 8)
if [[ "${1:-}" == "--quick" ]]; then
  SIZES=(1048576 16777216)
  CLIENTS=(1 8)
fi
# Rows of another tool's run, to put them side by side (e.g. Mooncake Store's 1, 4 threads).
[[ -n "${STRATA_BENCH_SIZES:-}" ]] && read -r -a SIZES <<<"${STRATA_BENCH_SIZES//,/ }"
[[ -n "${STRATA_BENCH_CLIENTS:-}" ]] && read -r -a CLIENTS <<<"${STRATA_BENCH_CLIENTS//,/ }"
join() { local IFS=,; echo "$*"; }

"$ROOT/deploy/setup.sh" --bench
if [[ -n "${STRATA_BENCH_PREBUILT:-}" ]]; then
  # Binaries built elsewhere (e.g. an earlier commit's, to compare two builds in one
  # session): $BUILD/store/node/strata-node and $BUILD/client/tools/strata-bench as they are.
  for bin in store/node/strata-node client/tools/strata-bench; do
    [[ -x "$BUILD/$bin" ]] || { echo "bench-compare: $BUILD/$bin is missing" >&2; exit 1; }
  done
else
  BUILD_TYPE=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
  [[ -f "$BUILD/CMakeCache.txt" ]] && BUILD_TYPE=()  # keep an existing tree's type
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSTRATA_MODULES=all "${BUILD_TYPE[@]}" >/dev/null
  cmake --build "$BUILD" -j "$(nproc)" --target strata-node strata-bench
fi

WORK=$(mktemp -d /tmp/strata-bench-compare.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000))
}

echo "# command: $0 $*"
echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')  host: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(ucx_info -v | head -1 | sed 's/^# *//'); $(redis-server --version | cut -d' ' -f1-3)"

# ---------------------------------------------------------------- strata
run_strata() {  # $1 label, $2 UCX_TLS
  local label=$1 tls=$2 out="$WORK/node-$1"
  mkdir -p "$out"
  # --dram_populate: the DRAM tier's pages are faulted in at start, as on a node that has
  # run a while; on this project's VMs a never-touched page costs a host fault on its first
  # store (~4 ms per MiB), which a fresh node's PUTs would otherwise measure (issue 12).
  UCX_TLS=$tls "$BUILD/store/node/strata-node" --grpc_listen=127.0.0.1:0 \
    --dataplane_listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --dram_bytes=3GiB --dram_populate \
    --same_host=false --data_dir="$out/data" \
    >"$out/stdout" 2>"$out/stderr" &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 300); do
    grep -q "ready" "$out/stdout" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$out/stdout" "$out/stderr" >&2; exit 1; }
    sleep 0.1
  done
  local grpc
  grpc=$(sed -n 's/^strata-node: grpc listening on \([^ ]*\).*/\1/p' "$out/stdout")
  echo
  echo "=== strata-bench over $label (node $grpc)"
  local modes=put,get
  [[ $label == tcp ]] && modes=put,get,match
  # UCX only: the same-host channel has its own comparison (deploy/same-host-bench.sh).
  "$BUILD/client/tools/strata-bench" --node "$grpc" --ucx-tls "$tls" --same-host off --modes "$modes" \
    --sizes "$(join "${SIZES[@]}")" --clients "$(join "${CLIENTS[@]}")" --csv |
    tee "$WORK/strata-$label.csv"
  kill -TERM "$pid"
  wait "$pid" || true
}

# ---------------------------------------------------------------- ucx_perftest
run_perftest() {  # $1 label, $2 UCX_TLS
  local label=$1 tls=$2
  echo
  echo "=== ucx_perftest -t ucp_am_bw over $label (UCX_TLS=$tls, 8 sends in flight)"
  echo "size,mode,mib_per_s,gbps"
  for size in "${SIZES[@]}"; do
    local iters=$((1073741824 / size))
    ((iters > 2000)) && iters=2000
    for mode in poll sleep; do
      local extra=()
      [[ $mode == sleep ]] && extra=(-E sleep)
      local port
      port=$(free_port)
      UCX_TLS=$tls ucx_perftest -p "$port" "${extra[@]}" >/dev/null 2>&1 &
      local spid=$!
      PIDS+=("$spid")
      sleep 0.5
      local line
      line=$(UCX_TLS=$tls timeout 120 ucx_perftest 127.0.0.1 -p "$port" -t ucp_am_bw -s "$size" \
        -n "$iters" -w 20 -O 8 -v "${extra[@]}" 2>/dev/null | tail -1) || true
      wait "$spid" 2>/dev/null || true
      # iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
      local mibs
      mibs=$(echo "$line" | awk -F, '{gsub(/ /,""); print $6}')
      [[ -z $mibs ]] && mibs=0
      echo "$size,$mode,$mibs,$(awk -v m="$mibs" 'BEGIN{printf "%.3f", m*1048576/1e9}')" |
        tee -a "$WORK/perftest-$label.csv"
    done
  done
}

# ---------------------------------------------------------------- redis
run_redis() {
  local port
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --proto-max-bulk-len 64mb --client-query-buffer-limit 64mb >"$WORK/redis.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo
  echo "=== redis-benchmark against redis-server on 127.0.0.1:$port (one key per test)"
  echo "op,size,clients,requests,rps,gbps,p50_ms,p99_ms"
  for size in "${SIZES[@]}"; do
    for c in "${CLIENTS[@]}"; do
      local n=$((536870912 / size))
      ((n < 16 * c)) && n=$((16 * c))
      ((n > 20000)) && n=20000
      # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
      redis-benchmark -p "$port" -t set,get -d "$size" -n "$n" -c "$c" --csv 2>/dev/null |
        tr -d '"' | awk -F, -v size="$size" -v c="$c" -v n="$n" \
          'NR>1 {printf "%s,%s,%s,%s,%.1f,%.3f,%s,%s\n", tolower($1), size, c, n, $2, $2*size/1e9, $5, $7}' |
        tee -a "$WORK/redis.csv"
    done
  done
  kill -TERM "$pid"
  wait "$pid" || true
}

run_strata tcp tcp
run_perftest tcp tcp
run_strata shm tcp,shm,cma
run_perftest shm tcp,shm,cma
run_redis

# ---------------------------------------------------------------- side by side
for label in tcp shm; do
  echo
  echo "=== side by side, $label: GB/s (strata p50/p99 in ms); limit = best ucx_perftest mode"
  awk -F, -v sizes="${SIZES[*]}" -v clients="${CLIENTS[*]}" '
    FILENAME ~ /perftest/ { if ($4 + 0 > limit[$1]) limit[$1] = $4 + 0; next }
    FILENAME ~ /redis/    { redis[$1 "," $2 "," $3] = $6; next }
    FNR > 1 && ($1 == "put" || $1 == "get") { key = $2 "," $3; seen[key] = 1;
      bw[$1 "," key] = $6; lat[$1 "," key] = sprintf("%.2f/%.2f", $8 / 1000, $9 / 1000) }
    END {
      printf "| size | clients | strata GET | GET p50/p99 ms | strata PUT | PUT p50/p99 ms | ucx_perftest | redis GET | redis SET | GET/perftest | PUT/perftest | GET/redis GET |\n"
      printf "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
      ns = split(sizes, S, " "); nc = split(clients, C, " ")
      for (i = 1; i <= ns; i++) for (j = 1; j <= nc; j++) {
        size = S[i]; c = C[j]; key = size "," c
        if (!(key in seen)) continue
        g = bw["get," key]; p = bw["put," key]; l = limit[size]
        rg = redis["get," size "," c]; rs = redis["set," size "," c]
        printf "| %s | %s | %.2f | %s | %.2f | %s | %.2f | %.2f | %.2f | %s | %s | %s |\n",
          (size >= 1048576 ? size / 1048576 "M" : size / 1024 "K"), c, g, lat["get," key],
          p, lat["put," key], l, rg, rs,
          (l > 0 ? sprintf("%.2f", g / l) : "-"), (l > 0 ? sprintf("%.2f", p / l) : "-"),
          (rg > 0 ? sprintf("%.2f", g / rg) : "-")
      }
    }' "$WORK/perftest-$label.csv" "$WORK/redis.csv" "$WORK/strata-$label.csv"
done
echo
echo "=== Match over gRPC (tcp run): a 32K-token cached prompt + 512 new tokens, one client"
grep -E '^(health|match),' "$WORK/strata-tcp.csv" |
  awk -F, '{printf "%-6s ops %s  p50 %.1f us  p99 %.1f us\n", $1, $4, $8, $9}'
