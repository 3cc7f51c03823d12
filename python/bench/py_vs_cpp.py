#!/usr/bin/env python3
"""Python reads and writes against the C++ client on the same sizes, in one run.

    PYTHONPATH=build/release/python python3 python/bench/py_vs_cpp.py \
        [--sizes 256K,1M,4M,16M,64M] [--rounds 5] [--seconds 0.3] [--same-host on,off]

Starts a strata-node (strata.testing.Node, 2 GiB DRAM, populated), and for each same-host
setting one strata.Client. Each row interleaves --rounds rounds of
  C++     the C++ client's own loop of calls (Client._time_reads / _time_writes: libstrata's
          Client::Read / Client::Write one after another in C++, GIL released, no Python
          between calls) and
  Python  the same calls made one by one from Python (client.read_ranges / client.write),
on the same client, connection and buffers: what differs is only the binding (argument
conversion, buffer borrowing, the GIL, the result objects). get = a whole blob into a numpy
buffer, cycling over max(2, 256 MiB / size) blobs (strata-bench's working set); put = a
fresh blob (new random tokens every call, drawn before the clock) from a numpy buffer.
strata-bench's layout: 8 layers x 8 KV heads x 128, bf16, 8-token pages (256 KiB a page,
32 KiB checksum chunks). GB/s: 10^9 bytes of payload over the summed call times of all
rounds; p50 of single calls; overhead: Python's p50 minus C++'s.
Target (issue 15): Python within 5 % of C++ at >= 1 MiB.
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time

import numpy as np

import strata
import strata.testing

LAYOUT = strata.KvLayout(num_layers=8, num_kv_heads=8, head_dim=128, dtype="bf16", page_tokens=8)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run_get(client, ns, size, rounds, seconds, rng):
    pages = size // LAYOUT.bytes_per_page
    buf = rng.integers(0, 255, size=size, dtype=np.uint8)
    blobs = max(2, (256 << 20) // size)
    keys = [client.write(ns, rng.integers(0, 1 << 31, size=pages * 8, dtype=np.uint32), buf).key
            for _ in range(blobs)]
    ranges = [strata.ReadRange(k, 0, pages) for k in keys]
    client._time_reads(ns, ranges, buf, 4)  # warm up: connections, registrations
    est = statistics.median(client._time_reads(ns, ranges, buf, 8))
    n = max(8, min(2000, int(seconds / max(est, 1e-6))))
    cpp, py = [], []
    for _ in range(rounds):
        cpp += client._time_reads(ns, ranges, buf, n)
        for i in range(n):
            r = [ranges[i % len(ranges)]]
            py.append(timed(lambda: client.read_ranges(ns, r, [buf])))
    for k in keys:
        client.delete(k)
    return cpp, py


def run_put(client, ns, size, rounds, seconds, rng):
    pages = size // LAYOUT.bytes_per_page
    buf = rng.integers(0, 255, size=size, dtype=np.uint8)
    warm = [rng.integers(0, 1 << 31, size=pages * 8, dtype=np.uint32) for _ in range(4)]
    est = statistics.median(client._time_writes(ns, warm, buf))
    # At most 512 MiB a half: every half writes into an empty tier (no eviction under either).
    n = max(8, min(1000, (512 << 20) // size, int(seconds / max(est, 1e-6))))
    cpp, py = [], []

    def clear(tokens):
        for t in tokens:
            client.delete(ns.key_for(t))

    clear(warm)
    for _ in range(rounds):
        tokens = [rng.integers(0, 1 << 31, size=pages * 8, dtype=np.uint32) for _ in range(2 * n)]
        cpp += client._time_writes(ns, tokens[:n], buf)
        clear(tokens[:n])
        for t in tokens[n:]:
            py.append(timed(lambda: client.write(ns, t, buf)))
        clear(tokens[n:])
    return cpp, py


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256K,1M,4M,16M,64M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3, help="per side per round")
    ap.add_argument("--same-host", default="on,off")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    print(f"# command: {' '.join(sys.argv)}")
    print(f"# date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M:%S} UTC")
    rng = np.random.default_rng(1)
    with strata.testing.Node("--dram_populate=true", dram_bytes="2GiB") as node:
        print(f"# node {node.address}; one client; {args.rounds} interleaved rounds of ~{args.seconds} s a side")
        print(f"{'path':<9} {'mode':<4} {'size':>7} {'C++ GB/s':>9} {'Py GB/s':>8} {'Py/C++':>7} "
              f"{'C++ p50 us':>11} {'Py p50 us':>10} {'overhead us':>11} {'calls':>6}")
        for same_host in args.same_host.split(","):
            ns = strata.Namespace("bench", f"py-vs-cpp-{same_host}", LAYOUT)
            with strata.Client(node.address, same_host=(same_host == "on"), timeout=60) as client:
                for mode in ("get", "put"):
                    for size in sizes:
                        fn = run_get if mode == "get" else run_put
                        cpp, py = fn(client, ns, size, args.rounds, args.seconds, rng)
                        c_gbps = size * len(cpp) / sum(cpp) / 1e9
                        p_gbps = size * len(py) / sum(py) / 1e9
                        c50, p50 = statistics.median(cpp) * 1e6, statistics.median(py) * 1e6
                        path = "same-host" if same_host == "on" else "ucx"
                        print(f"{path:<9} {mode:<4} {size >> 10:>6}K {c_gbps:>9.3f} {p_gbps:>8.3f} "
                              f"{p_gbps / c_gbps:>7.3f} {c50:>11.1f} {p50:>10.1f} {p50 - c50:>11.1f} "
                              f"{len(py):>6}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
