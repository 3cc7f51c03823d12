"""Stand-ins for vLLM's connector base types, used only where vLLM is not installed.

strata.vllm subclasses vLLM's own ``KVConnectorBase_V1`` when vLLM is importable. Without
vLLM (this repository's tests: vLLM is not installable here) it subclasses these, which
mirror the parts of vLLM's base class the connector relies on — the constructor's
attributes and the metadata binding — as vllm/distributed/kv_transfer/kv_connector/v1/base.py
defines them (vLLM main 9aaf83ef, v0.16-v0.19 compatible). Nothing else of vLLM is imitated
here; the test harness (python/tests/engines/vllm_harness.py) drives the connector in
vLLM's call order.
"""
from __future__ import annotations

import enum
from typing import Any, Optional


class KVConnectorRole(enum.Enum):
    SCHEDULER = 0
    WORKER = 1


class KVConnectorMetadata:
    """Scheduler-to-worker metadata of one step (pickled across processes by vLLM)."""


class KVConnectorBase_V1:
    def __init__(self, vllm_config: Any, role: KVConnectorRole, kv_cache_config: Any = None):
        self._connector_metadata: Optional[KVConnectorMetadata] = None
        self._vllm_config = vllm_config
        self._kv_transfer_config = vllm_config.kv_transfer_config
        if self._kv_transfer_config is None:
            raise ValueError("kv_transfer_config must be set")
        self._kv_cache_config = kv_cache_config
        self._role = role

    @property
    def role(self) -> KVConnectorRole:
        return self._role

    def bind_connector_metadata(self, connector_metadata: KVConnectorMetadata) -> None:
        self._connector_metadata = connector_metadata

    def clear_connector_metadata(self) -> None:
        self._connector_metadata = None

    def has_connector_metadata(self) -> bool:
        return self._connector_metadata is not None

    def _get_connector_metadata(self) -> KVConnectorMetadata:
        assert self._connector_metadata is not None
        return self._connector_metadata
