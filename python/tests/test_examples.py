"""examples/python run against a real node, as a user runs them."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import strata
from conftest import Node

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run(script: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, str(EXAMPLES / script), *args], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_conversation_then_rebuild_worker():
    node = Node()
    try:
        first = run("conversation.py", node.address).splitlines()
        assert first[0].startswith("turn 0: 0 pages from strata") and first[3].startswith("turn 3: 9 pages")
        again = run("conversation.py", node.address).splitlines()  # all of it cached now
        assert again[3].startswith("turn 3: 12 pages from strata")
        with strata.Client(node.address) as c:
            c.evict(strata.Tier.DRAM, 1 << 40)
            ns = strata.Namespace("demo", "example-model", strata.KvLayout(
                num_layers=8, num_kv_heads=4, head_dim=64, dtype="bf16", page_tokens=16))
            history = [1000 * t + i for t in range(4) for i in range(48)]
            m = c.match(ns, history)
            assert m.readable_pages == 0 and len(m.text_segments) == 4
            c.request_rebuild(m.text_segments[-1].blob, with_prefix=True)
            out = run("rebuild_worker.py", node.address, "--idle-exit", "2")
            assert out.startswith("rebuilt 4 blobs"), out
            assert c.match(ns, history).readable_pages == 12
    finally:
        node.stop()
