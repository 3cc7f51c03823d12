"""A multi-turn conversation against a strata node, in a dozen lines (python/README.md).

    PYTHONPATH=build/release/python python3 examples/python/conversation.py [HOST:PORT]

Each turn matches the whole history, reads the cached prefix (verified), computes only the
new pages and writes them as a blob continuing the prefix. strata.ReferenceModel stands in for
the inference engine's model.
"""
import sys

import strata

layout = strata.KvLayout(num_layers=8, num_kv_heads=4, head_dim=64, dtype="bf16", page_tokens=16)
ns, model = strata.Namespace("demo", "example-model", layout), strata.ReferenceModel(layout, seed=1)
client, history = strata.Client(sys.argv[1] if len(sys.argv) > 1 else None), []
for turn in range(4):
    history += [1000 * turn + i for i in range(48)]  # this turn's new tokens: 3 pages
    try:
        m = client.match(ns, history)
    except strata.NotFound:  # the node has never seen this namespace
        m = strata.MatchResult()
    cached = m.readable_pages
    prefix_kv = client.read_bytes(ns, m) if cached else b""  # the cached prefix, verified
    new_pages = len(history) // 16 - cached
    if new_pages:  # compute only the new pages, store them as a blob continuing the prefix
        parent = strata.Parent(m.segments[-1].blob, cached) if cached else None
        client.write(ns, history[cached * 16:], model.compute_blob(history, cached, new_pages), parent=parent)
    print(f"turn {turn}: {cached} pages from strata ({len(prefix_kv)} bytes), {new_pages} computed")
