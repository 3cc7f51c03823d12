#!/usr/bin/env python3
"""The connectors' cost per request in the engine harnesses, against a real node.

    PYTHONPATH=build/release/python python3 python/bench/connector_overhead.py [--conversations 4]

Runs multi-turn conversations (4 turns of --user-tokens new tokens, --output-tokens
generated each) through python/tests/engines' vLLM and SGLang harnesses over the torch
paged-attention model (8 layers x 4 KV heads x 64, bf16, 16-token pages: 8 KiB of KV a
token), with strata's connectors and without. Per request: time in the connector's
scheduler-side calls (Match and bookkeeping: what every request pays), in its worker-side
calls (the KV moved: loads and saves), the KV bytes moved, and the model's own time. The
model is a CPU stand-in, so "model ms" is not a GPU's: the scheduler-side figure is the one
to read as overhead; the worker side is transfer time (KV moved GB/s: loaded plus saved
bytes over the worker-side time, which includes gathering and scattering the pages).
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import statistics
import sys
import time
import uuid

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import strata  # noqa: E402
import strata.testing  # noqa: E402
from engines.sglang_harness import MiniSGLang  # noqa: E402
from engines.tiny_model import TinyPagedModel  # noqa: E402
from engines.vllm_harness import MiniVllm  # noqa: E402
from strata.sglang import StrataKVConnector  # noqa: E402
from strata.vllm import StrataConnector  # noqa: E402


def conversation(seed, turns, n):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 101, (n,), generator=g).tolist() for _ in range(turns)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--user-tokens", type=int, default=256)
    ap.add_argument("--output-tokens", type=int, default=16)
    args = ap.parse_args()
    print(f"# command: {' '.join(sys.argv)}")
    print(f"# date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M:%S} UTC")
    model = TinyPagedModel(num_layers=8, kv_heads=4, head_dim=64, kv_dtype=torch.bfloat16, seed=1)
    smodel = TinyPagedModel(num_layers=8, kv_heads=4, head_dim=64, kv_dtype=torch.bfloat16, seed=1, layout="sglang")
    kv_per_token = 2 * 8 * 4 * 64 * 2
    with strata.testing.Node(dram_bytes="1GiB") as node:
        rows = []
        for engine_name in ("vllm", "sglang"):
            sched, work, model_s, requests, tokens_loaded, tokens_saved = 0.0, 0.0, 0.0, 0, 0, 0
            for c in range(args.conversations):
                turns = conversation(100 + c, 4, args.user_tokens)
                extra = {"node": node.address, "tenant": "bench", "model": f"m-{uuid.uuid4().hex[:8]}"}
                if engine_name == "vllm":
                    eng = MiniVllm(model, StrataConnector, extra, num_blocks=512, block_size=16, token_budget=512,
                                   chunk=512)
                else:
                    eng = MiniSGLang(smodel, lambda pool: StrataKVConnector(params=extra, kvcache=pool), pages=512,
                                     page=16, chunk=512)
                history = []
                for i, user in enumerate(turns):
                    history = history + user
                    t0 = time.perf_counter()
                    before = eng.connector_seconds
                    split0 = dict(getattr(eng, "connector_split", {}))
                    if engine_name == "vllm":
                        out = eng.generate(f"c{c}t{i}", history, args.output_tokens).output
                    else:
                        out, _ = eng.generate(f"c{c}t{i}", history, args.output_tokens)
                    took = time.perf_counter() - t0
                    conn = eng.connector_seconds - before
                    if engine_name == "vllm":
                        s = eng.connector_split["scheduler"] - split0["scheduler"]
                    else:
                        s = 0.0
                    sched += s
                    work += conn - s
                    model_s += took - conn
                    requests += 1
                    history = history + out
                if engine_name == "vllm":
                    tokens_loaded += eng.scheduler.stats["hit_pages"] * 16
                    tokens_saved += eng.worker.stats["saved_pages"] * 16
                    eng.close()
                else:
                    tokens_loaded += eng.connector.stats["hit_tokens"]
                    tokens_saved += eng.connector.stats["stored_pages"] * 16
                    eng.connector.shutdown()
            moved = (tokens_loaded + tokens_saved) * kv_per_token
            rows.append((engine_name, requests, sched / requests * 1e3, work / requests * 1e3,
                         model_s / requests * 1e3, tokens_loaded / requests, tokens_saved / requests,
                         moved / work / 1e9 if work else 0.0))
        print(f"# node {node.address}; {args.conversations} conversations x 4 turns; "
              f"{args.user_tokens} new tokens and {args.output_tokens} generated per turn; 8 KiB KV a token")
        print(f"{'engine':<7} {'requests':>8} {'sched ms/req':>12} {'worker ms/req':>13} {'model ms/req':>12} "
              f"{'loaded tok/req':>14} {'saved tok/req':>13} {'KV moved GB/s':>13}")
        for r in rows:
            print(f"{r[0]:<7} {r[1]:>8} {r[2]:>12.3f} {r[3]:>13.3f} {r[4]:>12.1f} {r[5]:>14.0f} {r[6]:>13.0f} "
                  f"{r[7]:>13.3f}")
        print("(sglang: the connector is one object; all its time is counted as worker time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
