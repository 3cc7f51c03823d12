"""StrataHiCacheStorage: an SGLang HiCache L3 storage backend (HiCacheStorage) over strata.

    python -m sglang.launch_server ... --enable-hierarchical-cache --hicache-mem-layout page_first \
        --hicache-storage-backend dynamic \
        --hicache-storage-backend-extra-config '{"backend_name": "strata",
            "module_path": "strata.sglang.hicache", "class_name": "StrataHiCacheStorage",
            "interface_v1": 1, "node": "127.0.0.1:7400", "tenant": "acme"}'

Zero-copy v1 methods on the registered host pool (get_page_buffer_meta gives each page's
pointers: K and V for MHA page_first, one for MLA, per layer for layer_first):
  batch_exists  one match_many round trip with stop_at_first_short: the consecutive pages
                (all their parts) that exist;
  batch_get_v1  one read_batch straight into the host pool pages, every chunk verified;
                a page whose read missed or did not verify is False (SGLang keeps the
                leading Trues and recomputes the rest);
  batch_set_v1  one write_batch straight from the host pool pages (two-phase puts with
                checksums); a key already stored is a success.

Keys are opaque chained page hashes, not tokens: each (key, part) is a one-page blob in the
namespace (tenant, "sglang-hicache/" + model, an opaque layout of the part's size, this TP
rank — rank 0 for MLA, whose pages every rank reads). What that loses: rebuild from text
(strata never sees the tokens) and one-walk prefix matching; StrataKVConnector
(strata.sglang.connector) is the token-aware path. See strata/_keyspace.py.
"""
from __future__ import annotations

import logging
from typing import Any, List, Optional

import torch

import strata
from strata._keyspace import key_tokens, opaque_layout

try:
    from sglang.srt.mem_cache.hicache_storage import HiCacheStorage, HiCacheStorageConfig  # type: ignore
    HAVE_SGLANG = True
except ImportError:
    from strata.sglang._standin import HiCacheStorage, HiCacheStorageConfig
    HAVE_SGLANG = False

logger = logging.getLogger("strata.sglang")


class StrataHiCacheStorage(HiCacheStorage):
    def __init__(self, storage_config: Any, kwargs: Optional[dict] = None):
        self.config = storage_config
        extra = dict(getattr(storage_config, "extra_config", None) or {})
        self._extra = extra
        self.client = strata.Client.from_config(extra)
        self._tenant = str(extra.get("tenant", "sglang"))
        model = str(getattr(storage_config, "model_name", None) or extra.get("model") or "model")
        pp_size = int(getattr(storage_config, "pp_size", 1) or 1)
        if pp_size > 1:
            model = f"{model}/pp{getattr(storage_config, 'pp_rank', 0)}of{pp_size}"
        self._model = f"sglang-hicache/{model}"
        self._mla = bool(getattr(storage_config, "is_mla_model", False))
        self._tp_rank = 0 if self._mla else int(getattr(storage_config, "tp_rank", 0))
        self._tp_size = 1 if self._mla else int(getattr(storage_config, "tp_size", 1))
        self.mem_pool_host = None
        self._ns: Optional[strata.Namespace] = None
        self._parts = 0
        self.stats = {"exists_calls": 0, "hits": 0, "get_pages": 0, "get_failures": 0, "set_pages": 0,
                      "set_failures": 0}

    # ------------------------------------------------------------ host pool

    def register_mem_pool_host(self, mem_pool_host: Any) -> None:
        super().register_mem_pool_host(mem_pool_host)
        page = mem_pool_host.page_size
        ptrs, sizes = mem_pool_host.get_page_buffer_meta(torch.arange(0, page, dtype=torch.int64))  # one page
        if not sizes or len(set(sizes)) != 1:
            raise strata.InvalidArgument(f"host pool pages of parts {sizes}: strata needs equal parts")
        self._parts = len(sizes)
        # The host pool's layout and dtype name the namespace: pages of equal size but another
        # byte order are never read as these.
        layout = getattr(mem_pool_host, "layout", "page_first")
        dtype = str(getattr(mem_pool_host, "dtype", getattr(getattr(mem_pool_host, "kv_buffer", None), "dtype", "")))
        self._ns = strata.Namespace(self._tenant, f"{self._model}|{layout}|{dtype}|parts={self._parts}",
                                    opaque_layout(sizes[0], self._tp_rank, self._tp_size))

    @property
    def namespace(self) -> strata.Namespace:
        if self._ns is None:
            raise strata.FailedPrecondition("no host pool registered (register_mem_pool_host)")
        return self._ns

    def _page_memory(self, host_indices: Any, pages: int):
        ptrs, sizes = self.mem_pool_host.get_page_buffer_meta(host_indices)
        if len(ptrs) != pages * self._parts:
            raise strata.InvalidArgument(f"{len(ptrs)} buffers for {pages} pages of {self._parts} parts")
        return [strata.DeviceMemory(p, s, kind="host") for p, s in zip(ptrs, sizes)]

    # ------------------------------------------------------------ zero-copy v1

    def batch_exists(self, keys: List[str], extra_info: Any = None) -> int:
        if not keys:
            return 0
        try:
            self.stats["exists_calls"] += 1
            ns = self.namespace
            queries = [key_tokens(k, j) for k in keys for j in range(self._parts)]
            present = 0
            # One match_many round trip per 4096 queries (its limit), stopping at the first miss.
            for start in range(0, len(queries), 4096):
                chunk = queries[start:start + 4096]
                found = self._leading_present(ns, chunk)
                present += found
                if found < len(chunk):
                    break
            hits = present // self._parts
            self.stats["hits"] += hits
            return hits
        except strata.NotFound:  # a namespace the node has never seen
            return 0
        except Exception as e:  # noqa: BLE001 — an exception would stop SGLang's storage thread for good
            logger.warning("strata batch_exists failed: %s", e)
            return 0

    def _leading_present(self, ns: strata.Namespace, queries: list) -> int:
        try:
            answers = self.client.match_many(ns, queries, stop_at_first_short=True)
        except strata.Unimplemented:  # a cluster client: one lookup at a time, in order
            answers = []
            for q in queries:
                answers.append(self.client.match(ns, q))
                if answers[-1].readable_pages != 1:
                    break
        present = 0
        for a in answers:
            if a.readable_pages != 1:
                break
            present += 1
        return present

    def batch_get_v1(self, keys: List[str], host_indices: Any, extra_info: Any = None) -> List[bool]:
        if not keys:
            return []
        try:
            ns = self.namespace
            memory = self._page_memory(host_indices, len(keys))
            items = [(strata.ReadRange(ns.key_for(key_tokens(k, j)), 0, 1), memory[i * self._parts + j])
                     for i, k in enumerate(keys) for j in range(self._parts)]
            results = self.client.read_batch(ns, items)
        except Exception as e:  # noqa: BLE001 — an exception would stop SGLang's storage thread for good
            logger.warning("strata batch_get_v1 failed: %s", e)
            return [False] * len(keys)
        out = [all(r is None for r in results[i * self._parts:(i + 1) * self._parts]) for i in range(len(keys))]
        self.stats["get_pages"] += sum(out)
        self.stats["get_failures"] += len(out) - sum(out)
        return out

    def batch_set_v1(self, keys: List[str], host_indices: Any, extra_info: Any = None) -> List[bool]:
        if not keys:
            return []
        try:
            ns = self.namespace
            memory = self._page_memory(host_indices, len(keys))
            items = [(key_tokens(k, j), memory[i * self._parts + j]) for i, k in enumerate(keys)
                     for j in range(self._parts)]
            results = self.client.write_batch(ns, items)
        except Exception as e:  # noqa: BLE001 — an exception would stop SGLang's storage thread for good
            logger.warning("strata batch_set_v1 failed: %s", e)
            return [False] * len(keys)
        out = [all(isinstance(r, strata.WriteResult) for r in results[i * self._parts:(i + 1) * self._parts])
               for i in range(len(keys))]
        self.stats["set_pages"] += sum(out)
        self.stats["set_failures"] += len(out) - sum(out)
        return out

    # ------------------------------------------------------------ the copying interface (abstract in SGLang)

    def exists(self, key: str) -> bool:
        return self.batch_exists([key]) == 1

    def get(self, key: str, target_location: Any = None, target_sizes: Any = None) -> Any:
        """Into `target_location` (a flat page: host.get_dummy_flat_data_page()); None on a miss."""
        return self.batch_get([key], [target_location])[0]

    def batch_get(self, keys: List[str], target_locations: Any = None, target_sizes: Any = None) -> List[Any]:
        flat = self._flat_ns(target_locations[0]) if keys else None
        items = [(strata.ReadRange(flat.key_for(key_tokens(k, "flat")), 0, 1), t) for k, t in zip(keys, target_locations)]
        try:
            results = self.client.read_batch(flat, items) if items else []
        except strata.Error:
            return [None] * len(keys)
        return [t if r is None else None for r, t in zip(results, target_locations)]

    def set(self, key: str, value: Any = None, target_location: Any = None, target_sizes: Any = None) -> bool:
        return self.batch_set([key], [value])

    def batch_set(self, keys: List[str], values: Any = None, target_locations: Any = None,
                  target_sizes: Any = None) -> bool:
        if not keys:
            return True
        flat = self._flat_ns(values[0])
        try:
            results = self.client.write_batch(flat, [(key_tokens(k, "flat"), v) for k, v in zip(keys, values)])
        except strata.Error:
            return False
        return all(isinstance(r, strata.WriteResult) for r in results)

    def _flat_ns(self, page: Any) -> strata.Namespace:
        nbytes = page.numel() * page.element_size() if hasattr(page, "numel") else len(memoryview(page).cast("B"))
        return strata.Namespace(self._tenant, self._model + "/flat", opaque_layout(nbytes, self._tp_rank, self._tp_size))

    # ------------------------------------------------------------ admin

    def clear(self) -> None:
        """Deletes every blob of this backend's namespace on the node."""
        if self._ns is None:
            return
        token = ""
        while True:
            blobs, token = self.client.list_blobs(self._ns, page_token=token, limit=1000)
            for b in blobs:
                try:
                    self.client.delete(strata.BlobKey(b["key"]))
                except strata.NotFound:
                    pass
            if not token:
                break

    def get_stats(self) -> None:
        return None  # SGLang's StorageMetrics; strata's own counters: self.stats, the node's /metrics

    def close(self) -> None:
        self.client.close()

