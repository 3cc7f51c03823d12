"""Fixtures of the Python tests: real strata-node processes on loopback port 0.

The node binary: $STRATA_NODE_BIN (ctest sets it), else the release build's. Each node
gets a fresh data directory; its stderr goes to a log file the failing test prints.
"""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import tempfile
import time
import uuid
from typing import Iterator, List, Optional

import pytest

import strata

REPO = pathlib.Path(__file__).resolve().parents[2]


def node_binary() -> str:
    path = os.environ.get("STRATA_NODE_BIN") or str(REPO / "build/release/store/node/strata-node")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no strata-node binary at {path} (build it, or set STRATA_NODE_BIN)")
    return path


class Node:
    """One strata-node process; ``address`` is its gRPC "127.0.0.1:PORT"."""

    def __init__(self, *flags: str, dram_bytes: str = "64MiB") -> None:
        self.dir = tempfile.mkdtemp(prefix="strata-py-node-")
        self.log_path = os.path.join(self.dir, "node.log")
        self.flags = list(flags)
        self.dram_bytes = dram_bytes
        self.proc: Optional[subprocess.Popen] = None
        self.address = ""
        self.dataplane = ""
        self.start()

    def start(self) -> None:
        cmd = [node_binary(), "--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0",
               "--http_listen=", f"--dram_bytes={self.dram_bytes}", "--ssd_bytes=0",
               f"--data_dir={self.dir}/data", *self.flags]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        deadline = time.monotonic() + 30
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"strata-node exited before it was ready:\n{self.log()}")
            if line.startswith("strata-node: grpc listening on "):
                self.address = line.split()[-1]
            elif line.startswith("strata-node: dataplane listening on "):
                self.dataplane = line.split()[-1]
            elif line.startswith("strata-node: ready"):
                return
        raise RuntimeError(f"strata-node printed no ready line in 30 s:\n{self.log()}")

    def log(self) -> str:
        try:
            return pathlib.Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()


@pytest.fixture(scope="session")
def shared_node() -> Iterator[Node]:
    """One node for the tests that only add their own namespaces."""
    node = Node()
    yield node
    node.stop()


@pytest.fixture
def fresh_node() -> Iterator[Node]:
    """A node of this test's own (tests that kill, pause or evict)."""
    node = Node()
    yield node
    node.stop()


@pytest.fixture
def client(shared_node: Node) -> Iterator[strata.Client]:
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
