"""A rebuild worker written in Python: the node drops KV bytes to TEXT, the worker pulls the
tasks, recomputes the blobs and fills them; the node takes only the original's bytes."""
from __future__ import annotations

import pytest

import strata
import strata.rebuild
from conftest import LAYOUT, Node, tokens_for


def test_python_rebuild_worker(ns, model):
    node = Node("--rebuild_task_ttl=1s")
    try:
        with strata.Client(node.address, timeout=20) as c:
            seq = tokens_for(4, start=123)
            first = c.write(ns, seq[:16], model.compute_blob(seq, 0, 2))
            second = c.write(ns, seq[16:], model.compute_blob(seq, 2, 2),
                             parent=strata.Parent(first.key, 2))
            evicted = c.evict(strata.Tier.DRAM, 1 << 30)
            assert evicted["blobs_dropped"] == 2

            m = c.match(ns, seq)
            assert m.matched_pages == 4 and m.readable_pages == 0
            assert [s.tier for s in m.text_segments] == [strata.Tier.TEXT] * 2
            assert m.text_segments[1].tokens == seq[16:]
            with pytest.raises(strata.NotFound):
                c.read(ns, m, bytearray(LAYOUT.pages_bytes(4)), pages=4)  # TEXT has no bytes

            assert c.request_rebuild(second.key, with_prefix=True)["queued"] == 2

            # A worker with the wrong model: its bytes do not match the originals'
            # checksums, so nothing is written and the blobs stay TEXT.
            wrong = strata.ReferenceModel(LAYOUT, seed=8)
            s = strata.rebuild.run_worker(c, wrong.compute_rebuild, max_tasks=2, idle_exit=3)
            assert s.tasks == 2 and s.failed == 2 and s.rebuilt == 0
            assert all(isinstance(e, strata.DataLoss) for _, e in s.errors)
            assert c.match(ns, seq).readable_pages == 0

            # The right model (tasks come back once their 1 s lease expires).
            s = strata.rebuild.run_worker(c, model.compute_rebuild, max_tasks=2, idle_exit=10)
            assert s.rebuilt == 2 and s.failed == 0, s
            assert s.bytes_written == LAYOUT.pages_bytes(4)
            m = c.match(ns, seq)
            assert m.readable_pages == 4
            assert c.read_bytes(ns, m) == model.compute_blob(seq, 0, 4)
    finally:
        node.stop()


def test_rebuild_with_a_python_compute_function(ns, model):
    """compute may be any function of the task: here Python slices a full recomputation."""
    node = Node()
    try:
        with strata.Client(node.address, timeout=20) as c:
            seq = tokens_for(3, start=900)
            w = c.write(ns, seq, model.compute_blob(seq, 0, 3))
            c.evict(strata.Tier.DRAM, 1 << 30)
            c.request_rebuild(w.key)

            def compute(task: strata.RebuildTask) -> bytearray:
                assert task.ns == ns and task.key == w.key and task.pages == 3
                assert task.sequence_tokens == seq and task.own_tokens() == seq
                assert len(task.chunk_checksums) == LAYOUT.num_layers * 3
                return model.compute_blob(task.sequence_tokens, task.first_page, task.pages)

            s = strata.rebuild.run_worker(c, compute, max_tasks=1, idle_exit=5)
            assert s.rebuilt == 1
            assert c.stat(w.key)["tiers"] == ["dram"]
    finally:
        node.stop()
