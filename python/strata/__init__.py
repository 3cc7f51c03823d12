"""strata: a tiered, distributed KV-cache store for LLM inference.

The Python face of libstrata (python/README.md). A client finds the longest cached prefix of
a token sequence and moves KV bytes between the store and any buffer: numpy arrays, torch
tensors on the CPU or a GPU, bytearrays, anything with the buffer protocol or DLPack.

    import strata
    layout = strata.KvLayout(num_layers=32, num_kv_heads=8, head_dim=128,
                             dtype="bf16", page_tokens=16)
    ns = strata.Namespace("acme", "llama-3-8b", layout)
    with strata.Client("127.0.0.1:7400") as client:
        m = client.match(ns, tokens)                    # longest cached prefix
        kv = torch.empty(layout.pages_bytes(m.readable_pages), dtype=torch.uint8)
        client.read(ns, m, kv)                          # verified against its checksums
        client.write(ns, new_tokens, new_kv, parent=strata.Parent(m.segments[-1].blob, m.readable_pages))

Every call releases the GIL while bytes move; errors are strata.Error subclasses named
after their status code (strata.NotFound is a miss, strata.DataLoss bytes that did not
verify, ...). The connectors for inference engines are strata.vllm and strata.sglang.
"""
from __future__ import annotations

import atexit
import concurrent.futures
import threading
import weakref
from typing import Any, Optional

from . import _strata
from ._strata import (
    Aborted,
    AlreadyExists,
    BlobKey,
    Cancelled,
    DataLoss,
    DeadlineExceeded,
    DeviceBuffer,
    DeviceMemory,
    DType,
    Error,
    FailedPrecondition,
    InternalError,
    InvalidArgument,
    KvFormat,
    KvLayout,
    LookupPhase,
    MatchResult,
    Namespace,
    NotFound,
    OutOfRange,
    Parent,
    PermissionDenied,
    ReadRange,
    RebuildTask,
    ReferenceModel,
    ResourceExhausted,
    Segment,
    Tier,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    UnknownError,
    WriteResult,
)

__version__ = "0.1.0"

__all__ = [
    "Aborted", "AlreadyExists", "BlobKey", "Cancelled", "Client", "DataLoss", "DeadlineExceeded",
    "DeviceBuffer", "DeviceMemory", "DType", "Error", "FailedPrecondition", "InternalError",
    "InvalidArgument", "KvFormat", "KvLayout", "LookupPhase", "MatchResult", "Namespace",
    "NotFound", "OutOfRange", "Parent", "PermissionDenied", "ReadRange", "RebuildTask",
    "ReferenceModel", "ResourceExhausted", "Segment", "Tier", "Unauthenticated", "Unavailable",
    "Unimplemented", "UnknownError", "WriteResult",
]

# Clients still open at interpreter exit are closed first: their async callbacks need the
# GIL, which is gone once the interpreter finalizes.
_open_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_open_clients() -> None:
    for client in list(_open_clients):
        client.close()


class Client(_strata._Client):
    """A client of one strata node, or of a cluster.

    ``Client("host:port")`` talks to one node; ``Client(cluster="etcd://host:2379/name")`` or
    ``Client(cluster_nodes=[...])`` to a cluster (no argument: $STRATA_CLUSTER, else
    $STRATA_NODE, else 127.0.0.1:7400). Keyword options are libstrata's ClientOptions:
    ``token``, ``timeout`` (the default deadline of a call, seconds), ``ucx_transports``,
    ``same_host``, ``device_direct``, ``async_threads``, ``reads_in_flight``,
    ``wait_for_node``, ``segment_pages``, ``text_replicas``; ``host_device=True`` serves
    "device" memory from host memory (machines without a GPU, tests).

    Thread-safe. Close it (or use it as a context manager) to wait for its async calls. The
    futures of ``write_async`` and ``read_ranges_async`` are resolved on libstrata's threads,
    where their done-callbacks run: a callback must not close the client.
    """

    def __init__(self, node: Optional[str] = None, **options: Any) -> None:
        super().__init__(node, **options)
        self._pool_lock = threading.Lock()
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._closing = False
        _open_clients.add(self)

    # Keys of an engine's connector configuration that are Client options.
    CONFIG_KEYS = ("cluster", "cluster_nodes", "token", "same_host", "device_direct", "host_device",
                   "ucx_transports", "async_threads", "reads_in_flight")

    @classmethod
    def from_config(cls, config: dict, default_timeout: float = 10.0) -> "Client":
        """A client from an engine connector's configuration dict: "node", "timeout" (seconds,
        default `default_timeout`) and any of CONFIG_KEYS; other keys are ignored."""
        options = {k: config[k] for k in cls.CONFIG_KEYS if k in config}
        return cls(config.get("node"), timeout=float(config.get("timeout", default_timeout)), **options)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Waits for the calls in flight and closes the client; later calls raise."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
            self._closing = True
        if pool is not None:
            pool.shutdown(wait=True)
        super().close()

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:
            if self._closing:
                raise FailedPrecondition("the client is closed")
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=4, thread_name_prefix="strata-client")
            return self._pool

    def read_async(self, ns: Namespace, match: Any, destination: Any, *,
                   pages: Optional[int] = None,
                   timeout: Optional[float] = None) -> "concurrent.futures.Future[None]":
        """``read`` on a worker thread (the GIL is released while it moves bytes)."""
        return self._executor().submit(self.read, ns, match, destination, pages=pages,
                                       timeout=timeout)

    def match_async(self, ns: Namespace, tokens: Any, *, phase: LookupPhase = LookupPhase.UNSPECIFIED,
                    timeout: Optional[float] = None) -> "concurrent.futures.Future[MatchResult]":
        """``match`` on a worker thread."""
        return self._executor().submit(self.match, ns, tokens, phase=phase, timeout=timeout)

    def read_bytes(self, ns: Namespace, match: Any, *, pages: Optional[int] = None,
                   timeout: Optional[float] = None) -> bytearray:
        """The KV of ``pages`` pages of a match (default: its readable pages) in a new bytearray."""
        if pages is None:
            if not isinstance(match, MatchResult):
                raise InvalidArgument("pages: required when reading a list of segments")
            pages = match.readable_pages
        out = bytearray(ns.layout.pages_bytes(pages))
        if pages:
            self.read(ns, match, out, pages=pages, timeout=timeout)
        return out

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("cluster" if self.on_cluster else self.node)
        return f"strata.Client({state})"
