#!/usr/bin/env python3
"""Python read and write against the C++ client, same node, same sizes, one run.

    PYTHONPATH=build/release/python python3 python/bench/py_vs_cpp.py \
        [--sizes 256K,1M,4M,16M,64M] [--min-seconds 1.5] [--same-host on,off]

Starts a strata-node (strata.testing.Node, 2 GiB DRAM), then for each same-host setting:
  C++     strata-bench --modes get,put --clients 1 (client/tools/strata_bench.cc)
  Python  the same calls through strata.Client: get = read_ranges of a whole blob, cycling
          over max(2, 256 MiB / size) blobs written before the clock (strata-bench's working
          set), into a numpy buffer; put = write of a
          fresh blob (random tokens: a new key every call) from a numpy buffer.
Both use strata-bench's layout (8 layers x 8 KV heads x 128, bf16, 8-token pages: 256 KiB a
page, 32 KiB checksum chunks). Each row is the median of --rounds alternating C++ and Python runs. Prints a table: GB/s (10^9
B/s of payload) and p50 latency of each, and Python / C++. Target (issue 15): Python within 5 % of C++ at >= 1 MiB.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import io
import os
import pathlib
import random
import statistics
import subprocess
import sys
import time

import numpy as np

import strata
import strata.testing

LAYOUT = strata.KvLayout(num_layers=8, num_kv_heads=8, head_dim=128, dtype="bf16", page_tokens=8)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def cpp_bench(binary: str, node: str, sizes: list, min_seconds: float, same_host: str,
              modes: str) -> dict:
    cmd = [binary, "--node", node, "--modes", modes, "--sizes",
           ",".join(str(s) for s in sizes), "--clients", "1", "--min-seconds", str(min_seconds),
           "--same-host", same_host, "--csv"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = csv.DictReader(io.StringIO("\n".join(l for l in out.splitlines() if not l.startswith("#"))))
    return {(r["mode"], int(r["size"])): (float(r["gbps"]), float(r["p50_us"])) for r in rows}


def py_bench(client: strata.Client, ns: strata.Namespace, mode: str, size: int,
             min_seconds: float, rng: random.Random) -> tuple:
    pages = size // LAYOUT.bytes_per_page
    buf = np.frombuffer(os.urandom(size), dtype=np.uint8).copy()

    # Fresh random tokens for every put, drawn before the clock starts (strata-bench draws
    # them in its loop, with a C++ generator that costs less than a microsecond).
    draws = np.random.default_rng(rng.randrange(1 << 30)).integers(
        0, 1 << 31, size=(4096, pages * LAYOUT.page_tokens), dtype=np.uint32)
    next_draw = iter(range(len(draws)))

    def fresh_tokens():
        return draws[next(next_draw)]

    keys = []
    if mode == "get":
        # strata-bench's working set (--working-set 256M): max(2, 256 MiB / size) blobs cycled.
        blobs = max(2, (256 << 20) // size)
        keys = [client.write(ns, fresh_tokens(), buf).key for _ in range(blobs)]
        ranges = [[strata.ReadRange(k, 0, pages)] for k in keys]
        for r in ranges[:2]:  # set up the connections, as strata-bench's two calls do
            client.read_ranges(ns, r, [buf])
    else:
        token_sets = [fresh_tokens() for _ in range(2)]
        for t in token_sets:
            keys.append(client.write(ns, t, buf).key)
    latencies = []
    ops = 0
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        if mode == "get":
            client.read_ranges(ns, ranges[ops % len(ranges)], [buf])
        else:
            keys.append(client.write(ns, fresh_tokens(), buf).key)
        latencies.append(time.perf_counter() - t0)
        ops += 1
        elapsed = time.perf_counter() - start
        if (elapsed >= min_seconds and ops >= 16) or elapsed >= 10 or ops >= len(draws) - 4:
            break
    for k in keys:
        client.delete(k)
    return size * ops / elapsed / 1e9, statistics.median(latencies) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256K,1M,4M,16M,64M")
    ap.add_argument("--min-seconds", type=float, default=1.5)
    ap.add_argument("--same-host", default="on,off")
    ap.add_argument("--rounds", type=int, default=3, help="alternating C++/Python runs per row (medians)")
    ap.add_argument("--bench", default=None, help="strata-bench binary")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    here = pathlib.Path(__file__).resolve().parents[2]
    bench = args.bench or os.environ.get("STRATA_BENCH_BIN") or str(here / "build/release/client/tools/strata-bench")
    print(f"# command: {' '.join(sys.argv)}")
    print(f"# date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M:%S} UTC; strata-bench: {bench}")
    rng = random.Random(1)
    # --dram_populate: the arena is faulted in at start, so neither side pays first-touch faults.
    with strata.testing.Node("--dram_populate=true", dram_bytes="2GiB") as node:
        print(f"# node {node.address}; 1 client each; GB/s = 10^9 B/s of payload; p50 of single calls")
        print(f"{'path':<9} {'mode':<4} {'size':>7} {'C++ GB/s':>9} {'Py GB/s':>8} {'Py/C++':>7} "
              f"{'C++ p50 us':>11} {'Py p50 us':>10}")
        for same_host in args.same_host.split(","):
            ns = strata.Namespace("bench", f"py-{same_host}", LAYOUT)
            with strata.Client(node.address, same_host=(same_host == "on"), timeout=60) as client:
                for mode in ("get", "put"):
                    for size in sizes:
                        # Alternating rounds, medians: the node, the C++ client and Python share
                        # this machine's cores, and one run swings by 10-20 %.
                        cpp_runs, py_runs = [], []
                        for _ in range(args.rounds):
                            cpp_runs.append(cpp_bench(bench, node.address, [size], args.min_seconds,
                                                      same_host, mode)[(mode, size)])
                            py_runs.append(py_bench(client, ns, mode, size, args.min_seconds, rng))
                        c_gbps = statistics.median(r[0] for r in cpp_runs)
                        c_p50 = statistics.median(r[1] for r in cpp_runs)
                        gbps = statistics.median(r[0] for r in py_runs)
                        p50 = statistics.median(r[1] for r in py_runs)
                        path = "same-host" if same_host == "on" else "ucx"
                        print(f"{path:<9} {mode:<4} {size >> 10:>6}K {c_gbps:>9.3f} {gbps:>8.3f} "
                              f"{gbps / c_gbps:>7.3f} {c_p50:>11.1f} {p50:>10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
