"""strata as a secondary tier of vLLM's OffloadingConnector (vLLM main: vllm/v1/kv_offload/tiering).

The low-effort path: vLLM's own OffloadingConnector keeps offloaded blocks in a CPU tier and
cascades them to secondary tiers; strata is one of those:

    --kv-transfer-config '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both",
        "kv_connector_extra_config": {"spec_name": "StrataTieringSpec",
            "spec_module_path": "strata.vllm.offload", "cpu_bytes_to_use": 8000000000,
            "secondary_tiers": [{"type": "strata", "node": "127.0.0.1:7400", "tenant": "acme"}]}}'

(Importing this module registers the tier type "strata" with vLLM's SecondaryTierFactory;
StrataTieringSpec is vLLM's TieringOffloadingSpec under a name whose module does that.)

StrataSecondaryTier follows SecondaryTierManager's contract: every method runs in the
scheduler process and returns at once; stores and loads run on the tier's threads and are
reported by get_finished(). A block is keyed by vLLM's OffloadKey (block hash + group), not by
tokens, so each block row is a one-page blob keyed by that hash (strata/_keyspace.py: what
that loses — rebuild from text, one-walk prefix matching; the token-aware path is
StrataConnector). A row is the primary (CPU) tier's block: every worker's pages of it.
"""
from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any, Collection, Dict, Iterable, List, Optional

import numpy as np

import strata
from strata._keyspace import key_tokens, opaque_layout

try:
    from vllm.v1.kv_offload.tiering.base import JobMetadata, JobResult, SecondaryTierManager  # type: ignore
    from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory  # type: ignore
    from vllm.v1.kv_offload.tiering.spec import TieringOffloadingSpec  # type: ignore
    HAVE_VLLM_TIERING = True
except ImportError:  # vLLM absent, or a vLLM without tiering (v0.19 and earlier)
    import dataclasses

    HAVE_VLLM_TIERING = False

    @dataclasses.dataclass
    class JobMetadata:  # vllm/v1/kv_offload/tiering/base.py
        job_id: int
        keys: Collection[bytes]
        block_ids: Any
        is_promotion: bool
        req_context: Any = None

    @dataclasses.dataclass
    class JobResult:
        job_id: int
        success: bool

    class SecondaryTierManager:
        def __init__(self, vllm_config: Any, primary_kv_view: memoryview, tier_type: str) -> None:
            self._vllm_config = vllm_config
            self._primary_kv_view = primary_kv_view
            self.tier_type = tier_type

    SecondaryTierFactory = None
    TieringOffloadingSpec = None

logger = logging.getLogger("strata.vllm")


class StrataSecondaryTier(SecondaryTierManager):
    def __init__(self, vllm_config: Any, primary_kv_view: memoryview, tier_type: str, node: Optional[str] = None,
                 tenant: str = "vllm", model: Optional[str] = None, timeout: float = 10.0, threads: int = 4,
                 **client_options: Any) -> None:
        super().__init__(vllm_config, primary_kv_view, tier_type)
        # Block b is row b of the view (num_blocks, row bytes); numpy rows are buffers strata takes.
        blocks = primary_kv_view.shape[0]
        self._rows = np.frombuffer(primary_kv_view, dtype=np.uint8).reshape(blocks, -1)
        row_bytes = self._rows.shape[1]
        if model is None:
            model = str(getattr(getattr(vllm_config, "model_config", None), "model", "model"))
        self.client = strata.Client(node, timeout=timeout, **client_options)
        self.ns = strata.Namespace(tenant, f"vllm-offload/{model}", opaque_layout(row_bytes))
        self._lock = threading.Lock()
        self._known: Dict[bytes, bool] = {}  # lookups answered, and blocks this tier stored
        self._asking: set = set()
        self._finished: List[JobResult] = []
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="strata-tier")
        self.stats = {"lookups": 0, "stores": 0, "store_failures": 0, "loads": 0, "load_failures": 0}

    # ------------------------------------------------------------ lookups (never block)

    def lookup(self, key: bytes, req_context: Any = None) -> Optional[bool]:
        key = bytes(key)
        with self._lock:
            if self._known.get(key):
                return True
            if key in self._known:  # a miss is answered once: the next lookup asks again
                return self._known.pop(key)
            if key in self._asking:
                return None
            self._asking.add(key)
        self.stats["lookups"] += 1
        self._pool.submit(self._ask, key)
        return None

    def _ask(self, key: bytes) -> None:
        try:
            found = self.client.match(self.ns, key_tokens(key)).readable_pages == 1
        except Exception:  # noqa: BLE001 — a miss
            found = False
        with self._lock:
            self._asking.discard(key)
            self._known[key] = found

    # ------------------------------------------------------------ stores and loads (on threads)

    def submit_store(self, job_metadata: Any) -> None:
        self._pool.submit(self._store, job_metadata)

    def submit_load(self, job_metadata: Any) -> None:
        self._pool.submit(self._load, job_metadata)

    def _store(self, job: Any) -> None:
        ok = False
        try:
            items = [(key_tokens(bytes(k)), self._rows[int(b)]) for k, b in zip(job.keys, job.block_ids)]
            results = self.client.write_batch(self.ns, items)
            ok = all(isinstance(r, strata.WriteResult) for r in results)
            with self._lock:
                for k, r in zip(job.keys, results):
                    if isinstance(r, strata.WriteResult):
                        self._known[bytes(k)] = True
        except Exception as e:  # noqa: BLE001 — reported as a failed job, never raised in vLLM's thread
            logger.warning("strata tier store failed: %s", e)
        self.stats["stores" if ok else "store_failures"] += 1
        with self._lock:
            self._finished.append(JobResult(job.job_id, ok))

    def _load(self, job: Any) -> None:
        ok = False
        try:
            items = [(strata.ReadRange(self.ns.key_for(key_tokens(bytes(k))), 0, 1), self._rows[int(b)])
                     for k, b in zip(job.keys, job.block_ids)]
            ok = all(r is None for r in self.client.read_batch(self.ns, items))
        except Exception as e:  # noqa: BLE001
            logger.warning("strata tier load failed: %s", e)
        if not ok:
            with self._lock:
                for k in job.keys:
                    self._known.pop(bytes(k), None)
        self.stats["loads" if ok else "load_failures"] += 1
        with self._lock:
            self._finished.append(JobResult(job.job_id, ok))

    def get_finished(self) -> Iterable[Any]:
        with self._lock:
            done, self._finished = self._finished, []
        return done

    def touch(self, keys: Collection[bytes], req_context: Any = None) -> None:
        pass  # strata's own policy sees every read

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self.client.close()


if HAVE_VLLM_TIERING:
    SecondaryTierFactory.register_tier("strata", __name__, "StrataSecondaryTier")

    class StrataTieringSpec(TieringOffloadingSpec):  # type: ignore[misc,valid-type]
        """vLLM's TieringOffloadingSpec; its module registers the "strata" tier type."""
