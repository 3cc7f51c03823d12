"""A local strata-node for tests, examples and benchmarks: ``strata.testing.Node``.

    with strata.testing.Node() as node:            # loopback, kernel-chosen ports, fresh data dir
        client = strata.Client(node.address)

The binary: ``binary=``, else $STRATA_NODE_BIN, else ``strata-node`` on PATH, else the
checkout's build/release/store/node/strata-node. Extra flags go to the node as given
("--rebuild_task_ttl=1s"). Its stderr goes to ``node.log_path``.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Optional


def find_node_binary() -> Optional[str]:
    here = pathlib.Path(__file__).resolve().parents[2]  # a build tree, or the source tree
    candidates = [os.environ.get("STRATA_NODE_BIN"), shutil.which("strata-node"),
                  str(here / "store/node/strata-node"), str(here / "build/release/store/node/strata-node")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None


class Node:
    """One strata-node process on 127.0.0.1; ``address`` is its gRPC "127.0.0.1:PORT"."""

    def __init__(self, *flags: str, dram_bytes: str = "64MiB", binary: Optional[str] = None,
                 start_timeout: float = 30.0) -> None:
        self.binary = binary or find_node_binary()
        if self.binary is None:
            raise FileNotFoundError("no strata-node binary: build it, or set STRATA_NODE_BIN")
        self.dir = tempfile.mkdtemp(prefix="strata-node-")
        self.log_path = os.path.join(self.dir, "node.log")
        self.flags = list(flags)
        self.dram_bytes = dram_bytes
        self.start_timeout = start_timeout
        self.proc: Optional[subprocess.Popen] = None
        self.address = ""
        self.dataplane = ""
        self.start()

    def __enter__(self) -> "Node":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        cmd = [self.binary, "--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0",
               "--http_listen=", f"--dram_bytes={self.dram_bytes}", "--ssd_bytes=0",
               f"--data_dir={self.dir}/data", *self.flags]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        deadline = time.monotonic() + self.start_timeout
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
        raise RuntimeError(f"strata-node printed no ready line in {self.start_timeout} s:\n{self.log()}")

    def log(self) -> str:
        try:
            return pathlib.Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL: the node dies mid-whatever."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def pause(self) -> None:
        """SIGSTOP: the node stops answering (its sockets stay open)."""
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
        shutil.rmtree(self.dir, ignore_errors=True)
