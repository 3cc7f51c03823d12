"""strata.vllm.offload.StrataSecondaryTier driven as vLLM's tiering manager drives a secondary
tier (SecondaryTierManager: lookup never blocks, stores and loads reported by get_finished),
over a primary tier of CPU block rows, against a real node."""
from __future__ import annotations

import hashlib
import time
import uuid

import numpy as np
import pytest

from conftest import Node
from strata.vllm.offload import JobMetadata, StrataSecondaryTier


def offload_key(i: int, group: int = 0) -> bytes:  # make_offload_key: block hash + 4-byte group
    return hashlib.sha256(str(i).encode()).digest() + group.to_bytes(4, "big")


def wait_finished(tier, job_ids, timeout=20.0):
    done = {}
    deadline = time.monotonic() + timeout
    while set(done) != set(job_ids):
        for r in tier.get_finished():
            done[r.job_id] = r.success
        assert time.monotonic() < deadline
        time.sleep(0.002)
    return done


def wait_lookup(tier, key, timeout=10.0):
    deadline = time.monotonic() + timeout
    while (answer := tier.lookup(key)) is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    return answer


@pytest.fixture
def model():
    return f"tiny-{uuid.uuid4().hex[:8]}"


def test_store_lookup_load(shared_node, model):
    rows = np.random.default_rng(1).integers(0, 255, size=(16, 4096), dtype=np.uint8)
    tier = StrataSecondaryTier(None, memoryview(rows), "strata", node=shared_node.address, model=model)
    keys = [offload_key(i) for i in range(6)]
    assert tier.lookup(keys[0]) is None  # asked in the background: never blocks
    assert wait_lookup(tier, keys[0]) is False
    tier.submit_store(JobMetadata(1, keys, np.array([3, 4, 5, 6, 7, 8]), False))
    assert wait_finished(tier, [1]) == {1: True}
    assert all(tier.lookup(k) for k in keys)
    fresh = np.zeros_like(rows)
    other = StrataSecondaryTier(None, memoryview(fresh), "strata", node=shared_node.address, model=model)
    assert wait_lookup(other, keys[2]) is True
    other.submit_load(JobMetadata(2, keys, np.array([10, 11, 12, 13, 14, 15]), True))
    assert wait_finished(other, [2]) == {2: True}
    assert np.array_equal(fresh[10:16], rows[3:9])
    # A block this tier never had: the load fails whole, as a JobResult.
    other.submit_load(JobMetadata(3, [offload_key(99)], np.array([0]), True))
    assert wait_finished(other, [3]) == {3: False}
    tier.shutdown()
    other.shutdown()


def test_node_gone(model):
    node = Node()
    rows = np.ones((4, 1024), dtype=np.uint8)
    tier = StrataSecondaryTier(None, memoryview(rows), "strata", node=node.address, model=model, timeout=2)
    node.kill()
    tier.submit_store(JobMetadata(7, [offload_key(1)], np.array([0]), False))
    assert wait_finished(tier, [7]) == {7: False}
    assert wait_lookup(tier, offload_key(1)) is False
    tier.shutdown()
    node.stop()
