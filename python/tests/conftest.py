"""Fixtures of the Python tests: real strata-node processes on loopback port 0
(strata.testing.Node: $STRATA_NODE_BIN, which ctest sets, else the release build's)."""
from __future__ import annotations

import uuid
from typing import Iterator, List

import pytest

import strata
import strata.testing


def _require_node_binary() -> None:
    if strata.testing.find_node_binary() is None:
        pytest.skip("no strata-node binary (build it, or set STRATA_NODE_BIN)")


def Node(*flags: str, **kwargs) -> strata.testing.Node:
    _require_node_binary()
    return strata.testing.Node(*flags, **kwargs)


@pytest.fixture(scope="session")
def shared_node() -> Iterator[strata.testing.Node]:
    """One node for the tests that only add their own namespaces."""
    node = Node()
    yield node
    node.stop()


@pytest.fixture
def fresh_node() -> Iterator[strata.testing.Node]:
    """A node of this test's own (tests that kill, pause or evict)."""
    node = Node()
    yield node
    node.stop()


@pytest.fixture
def client(shared_node: strata.testing.Node) -> Iterator[strata.Client]:
    with strata.Client(shared_node.address, timeout=20) as c:
        yield c


LAYOUT = strata.KvLayout(num_layers=4, num_kv_heads=2, head_dim=16, dtype="bf16", page_tokens=8)


@pytest.fixture
def ns() -> strata.Namespace:
    """A namespace no other test uses (its own model name)."""
    return strata.Namespace("py-tests", f"model-{uuid.uuid4().hex[:12]}", LAYOUT)


@pytest.fixture(scope="session")
def model() -> strata.ReferenceModel:
    return strata.ReferenceModel(LAYOUT, seed=7)


def tokens_for(pages: int, start: int = 1000, page_tokens: int = 8) -> List[int]:
    return list(range(start, start + pages * page_tokens))
