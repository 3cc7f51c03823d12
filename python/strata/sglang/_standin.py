"""Stand-ins for SGLang's interface types, used only where SGLang is not installed.

strata.sglang subclasses SGLang's own HiCacheStorage and BaseKVConnector when SGLang is
importable. Without it (this repository's tests: SGLang is not installable here) it
subclasses these, which copy the interfaces' shapes as SGLang's sources define them
(python/strata/sglang/README.md names the files and commits): the classes, the dataclasses
the engine passes, and no behaviour.
"""
from __future__ import annotations

import abc
import dataclasses
from typing import Any, List, NamedTuple, Optional


@dataclasses.dataclass
class HiCacheStorageConfig:
    tp_rank: int
    tp_size: int
    is_mla_model: bool
    is_page_first_layout: bool
    model_name: Optional[str]
    pp_rank: int = 0
    pp_size: int = 1
    extra_config: Optional[dict] = None


@dataclasses.dataclass
class HiCacheStorageExtraInfo:
    prefix_keys: Optional[List[str]] = None
    extra_info: Optional[dict] = None


class HiCacheStorage(abc.ABC):
    def register_mem_pool_host(self, mem_pool_host: Any) -> None:
        self.mem_pool_host = mem_pool_host

    @abc.abstractmethod
    def get(self, key, target_location=None, target_sizes=None): ...

    @abc.abstractmethod
    def batch_get(self, keys, target_locations=None, target_sizes=None): ...

    @abc.abstractmethod
    def set(self, key, value=None, target_location=None, target_sizes=None): ...

    @abc.abstractmethod
    def batch_set(self, keys, values=None, target_locations=None, target_sizes=None): ...

    @abc.abstractmethod
    def exists(self, key): ...

    def batch_exists(self, keys, extra_info=None) -> int:
        for i, k in enumerate(keys):
            if not self.exists(k):
                return i
        return len(keys)

    def batch_get_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
        raise NotImplementedError

    def batch_set_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
        raise NotImplementedError

    def clear(self) -> None:
        pass

    def get_stats(self):
        return None


class LoadOperation(NamedTuple):
    rid: str
    device_indices: Any
    node: Any


class BaseKVConnector(abc.ABC):
    def __init__(self, params: Any = None, server_args: Any = None, tp_group: Any = None, tp_rank: int = 0,
                 kvcache: Any = None):
        pass

    @abc.abstractmethod
    def get_new_hit_length(self, token_ids, token_mask, update_state_for_load=False, rid=None) -> int: ...

    @abc.abstractmethod
    def release_load_state(self, rid) -> None: ...

    @abc.abstractmethod
    def start_load_kv(self, task_id, load_ops) -> None: ...

    @abc.abstractmethod
    def check_completed_load_tasks(self) -> List[int]: ...

    @abc.abstractmethod
    def start_store_kv(self, task_id, token_ids, kv_indices) -> None: ...

    @abc.abstractmethod
    def check_completed_store_tasks(self) -> List[int]: ...

    def prefetch(self, rid, token_ids) -> None:
        pass

    def check_prefetch_completed(self, rid) -> bool:
        return True

    def cancel_prefetch(self, rid) -> None:
        pass

    @property
    def layer_done_counter(self):
        return None

    def register_layer_transfer_counter(self, kvcache) -> None:
        pass

    def reset(self) -> None:
        pass

    def shutdown(self) -> None:
        pass
