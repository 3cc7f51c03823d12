"""StrataKVConnector: SGLang's BaseKVConnector (token ids and GPU KV slot indices) over strata.

The token-aware path: strata matches the request's token ids (prefix pages across turns and
requests, TEXT pages queued for rebuild), and the bytes go between strata and SGLang's GPU KV
pool (MHATokenToKVPool k_buffer/v_buffer, or MLATokenToKVPool kv_buffer) by slot index.
Interface: sglang/srt/mem_cache/kv_connector.py as ExtendedRadixCache calls it (README.md).

  prefetch(rid, token_ids)      starts matching and reading the cached prefix into a staging
                                buffer, every chunk verified, on a thread
  check_prefetch_completed(rid) whether that finished
  get_new_hit_length(...)       the tokens beyond the device hit that are verified in staging
                                (a prefix that failed to read or verify is not a hit: SGLang
                                computes it); without a prefetch, matches and reads now
  start_load_kv(task, ops)      copies staging into the ops' freshly allocated GPU slots —
                                a local copy that cannot fail, so no corrupt or missing KV ever
                                reaches the pool
  start_store_kv(task, tokens, kv_indices)  gathers the request's whole pages from the pool
                                (what strata has already is skipped) and writes them on a thread
  check_completed_*_tasks()     the tasks done since the last call
"""
from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import torch

import strata
from strata._paged import Staging, cut_segments, parent_at, strata_dtype

try:
    from sglang.srt.mem_cache.kv_connector import BaseKVConnector, LoadOperation  # type: ignore
    HAVE_SGLANG = True
except ImportError:
    from strata.sglang._standin import BaseKVConnector, LoadOperation
    HAVE_SGLANG = False

logger = logging.getLogger("strata.sglang")


class _Prefetch:
    def __init__(self):
        self.done = threading.Event()
        self.tokens = 0  # verified tokens in staging, from `first` on
        self.first = 0  # first token the staging holds (the device hit when matched)
        self.staging: Optional[Staging] = None
        self.match: Optional[strata.MatchResult] = None
        self.cancelled = False


def _config(params: Any, server_args: Any, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    if isinstance(params, dict):
        return dict(params)
    for source in (kwargs.get("extra_config"), getattr(server_args, "kv_connector_extra_config", None)):
        if source:
            return dict(json.loads(source) if isinstance(source, str) else source)
    return json.loads(os.environ.get("STRATA_SGLANG_CONFIG", "{}"))


class StrataKVConnector(BaseKVConnector):
    def __init__(self, params: Any = None, server_args: Any = None, tp_group: Any = None, tp_rank: int = 0,
                 kvcache: Any = None, **kwargs: Any):
        super().__init__(params, server_args, tp_group, tp_rank, kvcache)
        extra = _config(params, server_args, kwargs)
        self.client = strata.Client.from_config(extra)
        self.kvcache = kvcache
        self.mla = hasattr(kvcache, "kv_buffer") and not hasattr(kvcache, "k_buffer")
        first = kvcache.kv_buffer[0] if self.mla else kvcache.k_buffer[0]
        self.page = int(kvcache.page_size)
        self.layers = len(kvcache.kv_buffer if self.mla else kvcache.k_buffer)
        self.device = first.device
        self.dtype = first.dtype
        tp_size = int(extra.get("tp_size", getattr(server_args, "tp_size", 1) or 1))
        model = str(extra.get("model") or getattr(server_args, "served_model_name", None)
                    or getattr(server_args, "model_path", "model"))
        pp_size = int(extra.get("pp_size", getattr(server_args, "pp_size", 1) or 1))
        if pp_size > 1:  # pipeline stages hold different layers: namespaces of their own
            model += f"|pp={int(extra.get('pp_rank', kwargs.get('pp_rank', 0)))}/{pp_size}"
        layout = strata.KvLayout(num_layers=self.layers, num_kv_heads=1 if self.mla else first.shape[1],
                                 head_dim=first.shape[-1], dtype=strata_dtype(self.dtype), page_tokens=self.page,
                                 format="mla" if self.mla else "kv", tp_rank=0 if self.mla else tp_rank,
                                 tp_world=1 if self.mla else tp_size)
        self.ns = strata.Namespace(str(extra.get("tenant", "sglang")), model, layout)
        self.rebuild_text = bool(extra.get("rebuild_text", True))
        self._max_prefetches = int(extra.get("max_prefetches", 256))
        self._lock = threading.Lock()
        self._prefetches: Dict[str, _Prefetch] = {}
        self._done_loads: List[int] = []
        self._done_stores: List[int] = []
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=int(extra.get("threads", 4)),
                                                           thread_name_prefix="strata-sglang")
        self.stats = {"lookups": 0, "hit_tokens": 0, "load_failures": 0, "stores": 0, "store_failures": 0,
                      "stored_pages": 0}

    # ------------------------------------------------------------ pages <-> the GPU pool

    def _gather(self, slots: torch.Tensor, staging: Staging) -> None:
        n = staging.pages
        for l in range(self.layers):
            view = staging.layer_view(l)
            if self.mla:
                view.copy_(self.kvcache.kv_buffer[l][slots].reshape(n, -1))
            else:
                v2 = view.view(n, 2, -1)
                v2[:, 0].copy_(self.kvcache.k_buffer[l][slots].reshape(n, -1))
                v2[:, 1].copy_(self.kvcache.v_buffer[l][slots].reshape(n, -1))

    def _scatter(self, staging: Staging, first_page: int, slots: torch.Tensor) -> None:
        n = slots.numel() // self.page
        for l in range(self.layers):
            view = staging.layer_view(l)[first_page:first_page + n]
            if self.mla:
                buf = self.kvcache.kv_buffer[l]
                buf[slots] = view.reshape(n * self.page, *buf.shape[1:])
            else:
                v2 = view.reshape(n, 2, -1)
                k, v = self.kvcache.k_buffer[l], self.kvcache.v_buffer[l]
                k[slots] = v2[:, 0].reshape(n * self.page, *k.shape[1:])
                v[slots] = v2[:, 1].reshape(n * self.page, *v.shape[1:])

    # ------------------------------------------------------------ lookups and loads

    def _read_prefix(self, p: _Prefetch, token_ids: List[int], first_token: int) -> None:
        """Matches `token_ids` and reads the pages past `first_token` into p.staging."""
        try:
            self.stats["lookups"] += 1
            try:
                match = self.client.match(self.ns, token_ids, phase=strata.LookupPhase.PREFILL)
            except strata.NotFound:
                return
            p.match = match
            if self.rebuild_text and match.text_segments:
                try:
                    self.client.prefetch(self.ns, token_ids)
                except strata.Error:
                    pass
            first_page = first_token // self.page
            last_page = min(match.readable_pages, (len(token_ids) - 1) // self.page)
            pages = last_page - first_page
            if pages <= 0 or p.cancelled:
                return
            segments = cut_segments(match, first_page, last_page)
            staging = Staging(self.ns.layout, pages, self.dtype, self.device)
            self._read_pages(segments, staging, pages)
            p.staging, p.first, p.tokens = staging, first_page * self.page, pages * self.page
        except strata.Error as e:  # not a hit: SGLang computes these tokens
            self.stats["load_failures"] += 1
            logger.warning("strata prefix read failed: %s", e)
        finally:
            p.done.set()

    def _read_pages(self, segments: list, staging: Staging, pages: int) -> None:
        self.client.read(self.ns, segments, staging.buffer, pages=pages)

    def prefetch(self, rid: str, token_ids: List[int]) -> None:
        p = _Prefetch()
        with self._lock:
            self._prefetches[rid] = p
            while len(self._prefetches) > self._max_prefetches:  # prefetches never loaded nor released
                self._prefetches.pop(next(iter(self._prefetches)))
        self._pool.submit(self._read_prefix, p, list(token_ids), 0)

    def check_prefetch_completed(self, rid: str) -> bool:
        with self._lock:
            p = self._prefetches.get(rid)
        return p is None or p.done.is_set()

    def cancel_prefetch(self, rid: str) -> None:
        with self._lock:
            p = self._prefetches.pop(rid, None)
        if p is not None:
            p.cancelled = True

    def get_new_hit_length(self, token_ids: List[int], token_mask: Any, update_state_for_load: bool = False,
                           rid: Optional[str] = None) -> int:
        mask = torch.as_tensor(token_mask, dtype=torch.bool)
        device_hit = int((~mask).to(torch.int64).cumprod(0).sum()) if mask.numel() else 0
        with self._lock:
            p = self._prefetches.get(rid) if rid is not None else None
        usable = p is not None and p.done.is_set() and p.first <= device_hit
        if not usable:
            if not update_state_for_load:  # a question only: the match says, nothing is read
                try:
                    m = self.client.match(self.ns, list(token_ids))
                except strata.Error:
                    return 0
                pages = min(m.readable_pages, (len(token_ids) - 1) // self.page)
                return max(0, pages * self.page - device_hit)
            p = _Prefetch()
            self._read_prefix(p, list(token_ids), device_hit - device_hit % self.page)
        hit = max(0, p.first + p.tokens - device_hit)
        if update_state_for_load and rid is not None:
            with self._lock:
                if hit:
                    p.load_from = device_hit
                    self._prefetches[rid] = p
                else:  # nothing to load: the staging goes now, not at release_load_state
                    self._prefetches.pop(rid, None)
            self.stats["hit_tokens"] += hit
        return hit

    def release_load_state(self, rid: str) -> None:
        with self._lock:
            self._prefetches.pop(rid, None)

    def start_load_kv(self, task_id: int, load_ops: List[Any]) -> None:
        for op in load_ops:
            with self._lock:
                p = self._prefetches.pop(op.rid, None)
            slots = torch.as_tensor(op.device_indices, dtype=torch.long, device=self.device)
            if p is None or p.staging is None:
                raise strata.FailedPrecondition(f"no verified prefix for {op.rid}: get_new_hit_length first")
            first_page = (getattr(p, "load_from", p.first) - p.first) // self.page
            if slots.numel() % self.page or first_page * self.page + slots.numel() > p.tokens:
                raise strata.InvalidArgument(f"{slots.numel()} slots for {op.rid}; {p.tokens} tokens verified")
            self._scatter(p.staging, first_page, slots)
        if self.device.type == "cuda":  # the copies are done before the task is reported
            torch.cuda.current_stream(self.device).synchronize()
        with self._lock:
            self._done_loads.append(task_id)

    def check_completed_load_tasks(self) -> List[int]:
        with self._lock:
            done, self._done_loads = self._done_loads, []
        return done

    # ------------------------------------------------------------ stores

    def start_store_kv(self, task_id: int, token_ids: List[int], kv_indices: Any) -> None:
        tokens = list(token_ids)
        pages = len(tokens) // self.page
        slots = torch.as_tensor(kv_indices, dtype=torch.long, device=self.device)[:pages * self.page]
        if pages == 0:
            with self._lock:
                self._done_stores.append(task_id)
            return
        staging = Staging(self.ns.layout, pages, self.dtype, self.device)
        self._gather(slots, staging)  # now: the slots may be reused once the task completes
        if self.device.type == "cuda":
            torch.cuda.current_stream(self.device).synchronize()
        self._pool.submit(self._store, task_id, tokens[:pages * self.page], staging)

    def _store(self, task_id: int, tokens: List[int], staging: Staging) -> None:
        try:
            try:
                match = self.client.match(self.ns, tokens)
                have = match.readable_pages
                parent = parent_at(match, have)
            except strata.NotFound:
                have, parent = 0, None
            pages = len(tokens) // self.page
            if have < pages:
                n = pages - have
                part = Staging(self.ns.layout, n, self.dtype, self.device)
                for l in range(self.layers):
                    part.layer_view(l).copy_(staging.layer_view(l)[have:])
                self.client.write(self.ns, tokens[have * self.page:], part.buffer, parent=parent)
                self.stats["stored_pages"] += n
            self.stats["stores"] += 1
        except strata.Error as e:  # a failed store only loses cache
            self.stats["store_failures"] += 1
            logger.warning("strata store failed: %s", e)
        finally:
            with self._lock:
                self._done_stores.append(task_id)

    def check_completed_store_tasks(self) -> List[int]:
        with self._lock:
            done, self._done_stores = self._done_stores, []
        return done

    def reset(self) -> None:
        with self._lock:
            self._prefetches.clear()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self.client.close()
