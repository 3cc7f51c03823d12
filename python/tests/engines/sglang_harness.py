"""Harnesses that drive the SGLang connectors in SGLang's call order, without SGLang.

MiniSGLang: ExtendedRadixCache's use of a BaseKVConnector (sglang/srt/mem_cache/
kv_connector.py and extended_radix_cache.py, README.md names the commits): prefetch(rid,
tokens) when a request is queued, check_prefetch_completed, match_prefix's
get_new_hit_length(token_ids, mask, update_state_for_load=True, rid), init_load_back's slot
allocation and start_load_kv(task_id, [LoadOperation(rid, slots, node)]) (release_load_state
when nothing is loaded), check_completed_load_tasks before the forward uses them, and at the
end cache_finished_req's start_store_kv(task_id, (input + output)[:-1], req_to_token row)
then check_completed_store_tasks before the slots are freed. The GPU pool is SGLang's shape:
per-layer k_buffer / v_buffer [slots + page, heads, head_dim], slot 0 a dummy, page-aligned
allocation. The device radix tree keeps nothing across requests here (every request's device
hit is 0), so every reuse goes through the connector.

HostPool: MHATokenToKVPoolHost / MLATokenToKVPoolHost with layout page_first
(sglang/srt/mem_cache/pool_host/{mha,mla}.py): kv_buffer (2, S, L, H, D) or (S, L, 1, C),
get_page_buffer_meta(indices) per SGLang's formula, slot allocation by pages. sglang_page_hashes
is SGLang's get_hash_str chain.
"""
from __future__ import annotations

import hashlib
import time
from typing import Callable, List, Optional

import torch

from engines.tiny_model import SeqBatch, TinyPagedModel


def sglang_page_hashes(tokens: List[int], page: int, prior: Optional[str] = None) -> List[str]:
    """SGLang's chained page hashes (get_hash_str): SHA-256 of the previous digest and the page's
    tokens as 4-byte little-endian words."""
    out = []
    for i in range(len(tokens) // page):
        h = hashlib.sha256()
        if prior:
            h.update(bytes.fromhex(prior))
        for t in tokens[i * page:(i + 1) * page]:
            h.update(int(t).to_bytes(4, "little", signed=False))
        prior = h.hexdigest()
        out.append(prior)
    return out


class DevicePool:
    """MHATokenToKVPool's shape: k_buffer[l], v_buffer[l] of [slots + page, heads, head_dim]."""

    def __init__(self, model: TinyPagedModel, pages: int, page: int):
        self.page_size = page
        cache = model.new_cache(pages + 1, page)  # page 0 is the dummy
        self.k_buffer = [k for k, _ in cache]
        self.v_buffer = [v for _, v in cache]
        self.free_pages = list(range(1, pages + 1))

    def cache(self):
        return list(zip(self.k_buffer, self.v_buffer))

    def alloc(self, tokens: int) -> torch.Tensor:
        n = -(-tokens // self.page_size)
        assert n <= len(self.free_pages), "out of device pages"
        pages = [self.free_pages.pop(0) for _ in range(n)]
        slots = torch.cat([torch.arange(p * self.page_size, (p + 1) * self.page_size) for p in pages]) if pages \
            else torch.zeros(0, dtype=torch.long)
        return slots

    def free(self, slots: torch.Tensor) -> None:
        pages = sorted({int(s) // self.page_size for s in slots})
        self.free_pages.extend(pages)


class MiniSGLang:
    def __init__(self, model: TinyPagedModel, connector_factory: Optional[Callable] = None, pages: int = 128,
                 page: int = 8, chunk: int = 24, use_prefetch: bool = True):
        self.model, self.page, self.chunk, self.use_prefetch = model, page, chunk, use_prefetch
        self.pool = DevicePool(model, pages, page)
        self.connector = connector_factory(self.pool) if connector_factory else None
        self.task_id = 0
        self.connector_seconds = 0.0
        self.before_load: Optional[Callable[["MiniSGLang"], None]] = None

    def _timed(self, fn, *args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.connector_seconds += time.perf_counter() - t

    def _wait(self, poll, task: int) -> None:
        deadline = time.monotonic() + 30
        while task not in self._timed(poll):
            assert time.monotonic() < deadline, "task never completed"
            time.sleep(0.001)

    def _forward(self, tokens: List[int], row: torch.Tensor, start: int, end: int) -> torch.Tensor:
        pos = torch.arange(start, end)
        batch = [SeqBatch(torch.tensor(tokens[start:end]), pos, row[start:end], row[:end])]
        return self.model.forward(batch, self.pool.cache())[0]

    def generate(self, rid: str, prompt: List[int], max_tokens: int):
        c = self.connector
        tokens = list(prompt)
        row = torch.zeros(0, dtype=torch.long)  # req_to_token[req_pool_idx]
        hit = 0
        if c is not None:
            if self.use_prefetch:
                self._timed(c.prefetch, rid, tokens)
                deadline = time.monotonic() + 30
                while not self._timed(c.check_prefetch_completed, rid):
                    assert time.monotonic() < deadline
                    time.sleep(0.001)
            mask = torch.ones(len(tokens), dtype=torch.bool)  # device hit 0: check every position
            hit = self._timed(c.get_new_hit_length, tokens, mask, True, rid)
            assert hit % self.page == 0 and hit < len(tokens)
            if hit:
                slots = self.pool.alloc(hit)
                if self.before_load:
                    self.before_load(self)
                from strata.sglang.connector import LoadOperation
                self.task_id += 1
                self._timed(c.start_load_kv, self.task_id, [LoadOperation(rid, slots, None)])
                self._wait(c.check_completed_load_tasks, self.task_id)
                row = slots
            else:
                self._timed(c.release_load_state, rid)
        # Prefill the rest in chunks, then decode greedily.
        logits, outputs = [], []
        computed = hit
        lg = None
        while computed < len(tokens):
            end = min(len(tokens), computed + self.chunk)
            row = torch.cat([row, self._extend(row, end)])
            lg = self._forward(tokens, row, computed, end)
            computed = end
        for _ in range(max_tokens):
            nxt = int(torch.argmax(lg))
            outputs.append(nxt)
            logits.append(lg)
            tokens.append(nxt)
            if len(outputs) == max_tokens:
                break
            row = torch.cat([row, self._extend(row, len(tokens))])
            lg = self._forward(tokens, row, len(tokens) - 1, len(tokens))
        if c is not None:
            self.task_id += 1
            kv_tokens = tokens[:-1]  # the last output token has no KV
            self._timed(c.start_store_kv, self.task_id, kv_tokens, row[:len(kv_tokens)])
            self._wait(c.check_completed_store_tasks, self.task_id)
        self.pool.free(row)
        return outputs, logits

    def _extend(self, row: torch.Tensor, tokens: int) -> torch.Tensor:
        """Slots for positions [len(row), tokens): the current page's rest, then new pages."""
        have = row.numel()
        if tokens <= have:
            return torch.zeros(0, dtype=torch.long)
        out = []
        if have % self.page:
            last = int(row[-1])
            out = list(range(last + 1, last + 1 + min(self.page - have % self.page, tokens - have)))
        need = tokens - have - len(out)
        if need > 0:
            out += self.pool.alloc(-(-need // self.page) * self.page)[:need].tolist()
        return torch.tensor(out, dtype=torch.long)


class HostPool:
    """SGLang's host KV pool with layout page_first (MHA: (2, S, L, H, D); MLA: (S, L, 1, C))."""

    def __init__(self, layers: int, page: int, pages: int, heads: int = 2, head_dim: int = 8, mla: bool = False,
                 dtype: torch.dtype = torch.bfloat16):
        self.page_size, self.layer_num, self.mla, self.layout = page, layers, mla, "page_first"
        self.size = page * pages
        shape = (self.size, layers, 1, head_dim) if mla else (2, self.size, layers, heads, head_dim)
        self.kv_buffer = torch.zeros(shape, dtype=dtype)
        self.token_bytes = layers * (1 if mla else heads) * head_dim * self.kv_buffer.element_size()
        self.free_pages = list(range(pages))

    def alloc(self, tokens: int) -> torch.Tensor:
        n = tokens // self.page_size
        pages = [self.free_pages.pop(0) for _ in range(n)]
        return torch.cat([torch.arange(p * self.page_size, (p + 1) * self.page_size) for p in pages]).to(torch.int64)

    def get_page_buffer_meta(self, indices: torch.Tensor):
        assert len(indices) % self.page_size == 0
        ptrs, sizes = [], []
        base = self.kv_buffer.data_ptr()
        v_offset = self.size * self.token_bytes
        for i in range(0, len(indices), self.page_size):
            k_ptr = base + int(indices[i]) * self.token_bytes
            ptrs.append(k_ptr)
            sizes.append(self.token_bytes * self.page_size)
            if not self.mla:
                ptrs.append(k_ptr + v_offset)
                sizes.append(self.token_bytes * self.page_size)
        return ptrs, sizes

    # device <-> host, as HiCacheController's backup_from_device_all_layer / load_to_device_per_layer
    def backup(self, device: DevicePool, device_slots: torch.Tensor, host_slots: torch.Tensor) -> None:
        for l in range(self.layer_num):
            self.kv_buffer[0, host_slots, l] = device.k_buffer[l][device_slots]
            self.kv_buffer[1, host_slots, l] = device.v_buffer[l][device_slots]

    def load(self, device: DevicePool, host_slots: torch.Tensor, device_slots: torch.Tensor) -> None:
        for l in range(self.layer_num):
            device.k_buffer[l][device_slots] = self.kv_buffer[0, host_slots, l]
            device.v_buffer[l][device_slots] = self.kv_buffer[1, host_slots, l]


class LayerFirstHostPool(HostPool):
    """MHATokenToKVPoolHost with layout layer_first: kv_buffer (2, L, S, H, D); a page's meta is
    [k_ptr, v_ptr] per layer, each P*H*D*itemsize bytes."""

    def __init__(self, layers: int, page: int, pages: int, heads: int = 2, head_dim: int = 8,
                 dtype: torch.dtype = torch.bfloat16):
        self.page_size, self.layer_num, self.mla, self.layout = page, layers, False, "layer_first"
        self.size = page * pages
        self.kv_buffer = torch.zeros((2, layers, self.size, heads, head_dim), dtype=dtype)
        self.slot_bytes = heads * head_dim * self.kv_buffer.element_size()
        self.free_pages = list(range(pages))

    def get_page_buffer_meta(self, indices: torch.Tensor):
        assert len(indices) % self.page_size == 0
        ptrs, sizes = [], []
        base = self.kv_buffer.data_ptr()
        layer_bytes = self.size * self.slot_bytes
        v_offset = self.layer_num * layer_bytes
        for i in range(0, len(indices), self.page_size):
            for layer in range(self.layer_num):
                k_ptr = base + int(indices[i]) * self.slot_bytes + layer * layer_bytes
                ptrs += [k_ptr, k_ptr + v_offset]
                sizes += [self.page_size * self.slot_bytes] * 2
        return ptrs, sizes
