"""A harness that drives a vLLM v1 KV connector in vLLM's call order, without vLLM.

What it imitates (vLLM main 9aaf83ef; python/strata/vllm/README.md lists the files):
  - the Scheduler: requests with prompt/all token ids and num_computed_tokens; a paged block
    allocator; chunked prefill under a token budget; preemption when blocks run out (the
    victim's blocks are freed, num_computed_tokens reset to 0, and it is rescheduled later
    as a resumed request); for a request with num_computed_tokens == 0,
    get_num_new_matched_tokens(request, local_hit) then update_state_after_alloc(request,
    blocks, num_external_tokens); build_connector_meta(scheduler_output) once per step;
    request_finished(request, block_ids) at the end (blocks kept while it returns True,
    until the worker reports the request in finished_sending); invalid blocks reported by the
    worker truncate num_computed_tokens to the first invalid block and discard the step's
    output for that request (kv_load_failure_policy "recompute");
  - the model runner: bind_connector_metadata, start_load_kv, per layer wait_for_layer_load
    before attention and save_kv_layer after the layer's KV is written, wait_for_save,
    get_finished(finished_req_ids), get_block_ids_with_load_errors, clear_connector_metadata;
  - the shapes: SchedulerOutput (scheduled_new_reqs, scheduled_cached_reqs with
    resumed_req_ids / new_block_ids / num_computed_tokens, num_scheduled_tokens,
    finished_req_ids, preempted_req_ids), KVCacheBlocks.get_block_ids(), the ForwardContext's
    no_compile_layers / attn_metadata, and the vllm_config fields the connector reads.
  - tensor parallelism: one worker connector per TP rank, each registered with its rank's KV
    heads (views of the model's cache), their wait_for_save side by side on threads (the
    connector's TP all-reduce meets there), a request freed once every rank reported it.
  - with prefix_cache: vLLM's local prefix cache — full blocks of finished and preempted
    requests stay cached by their chained page hashes, a new request shares the longest run
    (leaving a token to compute) and get_num_new_matched_tokens sees it as num_computed_tokens;
    unreferenced cached blocks are evicted when blocks run out.
Not imitated: async loads, CUDA graphs, speculative decoding, pipeline parallelism, HMA.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import time
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Set

import torch

from engines.tiny_model import SeqBatch, TinyPagedModel


# ---------------------------------------------------------------- vLLM-shaped configuration

class _ModelConfig:
    def __init__(self, model: TinyPagedModel, name: str, tp: int = 1):
        self._m = model
        self._tp = tp
        self.model = name
        self.dtype = model.kv_dtype
        self.use_mla = False

    def get_num_layers(self, parallel_config: Any) -> int:
        return self._m.num_layers

    def get_num_kv_heads(self, parallel_config: Any) -> int:
        return self._m.kv_heads // self._tp

    def get_head_size(self) -> int:
        return self._m.head_dim


def make_vllm_config(model: TinyPagedModel, block_size: int, extra: Dict[str, Any], name: str = "tiny-model",
                     tp: int = 1, rank: int = 0):
    return SimpleNamespace(
        model_config=_ModelConfig(model, name, tp),
        cache_config=SimpleNamespace(block_size=block_size, cache_dtype="auto"),
        parallel_config=SimpleNamespace(tensor_parallel_size=tp, pipeline_parallel_size=1, rank=rank),
        kv_transfer_config=SimpleNamespace(kv_connector="StrataConnector", kv_connector_module_path="strata.vllm",
                                           kv_role="kv_both", kv_connector_extra_config=extra,
                                           kv_load_failure_policy="recompute"))


# ---------------------------------------------------------------- requests and scheduler output

class Request:
    def __init__(self, request_id: str, prompt: List[int], max_tokens: int):
        self.request_id = request_id
        self.prompt_token_ids = list(prompt)
        self._all = list(prompt)
        self.num_prompt_tokens = len(prompt)
        self.num_computed_tokens = 0
        self.max_tokens = max_tokens
        self.output: List[int] = []
        self.logits: List[torch.Tensor] = []
        self.preempted = False

    @property
    def all_token_ids(self) -> List[int]:
        return list(self._all)

    @property
    def num_tokens(self) -> int:
        return len(self._all)

    def append(self, token: int, logits: torch.Tensor) -> None:
        self._all.append(token)
        self.output.append(token)
        self.logits.append(logits)


class _Blocks:
    def __init__(self, ids: List[int]):
        self._ids = list(ids)

    def get_block_ids(self, allow_none: bool = False):
        return (list(self._ids),)


@dataclasses.dataclass
class NewRequestData:
    req_id: str
    prompt_token_ids: List[int]
    block_ids: tuple
    num_computed_tokens: int


@dataclasses.dataclass
class CachedRequestData:
    req_ids: List[str]
    resumed_req_ids: Set[str]
    new_block_ids: List[Optional[tuple]]
    num_computed_tokens: List[int]


@dataclasses.dataclass
class SchedulerOutput:
    scheduled_new_reqs: List[NewRequestData]
    scheduled_cached_reqs: CachedRequestData
    num_scheduled_tokens: Dict[str, int]
    finished_req_ids: Set[str]
    preempted_req_ids: Set[str]


class _Layer:
    def __init__(self, kv: torch.Tensor):
        self.kv_cache = kv


class TpGroup:
    """Stands in for vLLM's TP group: an all-reduce (max) between the workers' threads."""

    def __init__(self, size: int):
        self.size = size
        self._barrier = threading.Barrier(size)
        self._parts: List[List[int]] = []
        self._lock = threading.Lock()
        self._result: List[int] = []

    def max(self, flags: List[int]) -> List[int]:
        if self.size == 1:
            return flags
        with self._lock:
            self._parts.append(list(flags))
        if self._barrier.wait() == 0:
            self._result = [max(col) for col in zip(*self._parts)]
            self._parts = []
        self._barrier.wait()
        return list(self._result)


# ---------------------------------------------------------------- the engine

class MiniVllm:
    """vLLM's scheduler and model runner around TinyPagedModel, with or without a connector."""

    def __init__(self, model: TinyPagedModel, connector_cls: Optional[type] = None, extra: Optional[dict] = None,
                 num_blocks: int = 64, block_size: int = 8, token_budget: int = 48, chunk: int = 24, tp: int = 1,
                 prefix_cache: bool = False):
        self.model = model
        self.block_size = block_size
        self.token_budget = token_budget
        self.chunk = chunk
        self.cache = model.new_cache(num_blocks, block_size)
        self.layer_names = [f"model.layers.{l}.self_attn.attn" for l in range(model.num_layers)]
        self.free_blocks = list(range(num_blocks))
        self.prefix_cache = prefix_cache
        self.cached: Dict[Any, int] = {}  # page hash chain -> block (vLLM's prefix cache)
        self.block_hash: Dict[int, Any] = {}
        self.refs: Dict[int, int] = {}
        self.evictable: "collections.OrderedDict[int, None]" = collections.OrderedDict()
        self.local_hit_tokens = 0
        self.block_table: Dict[str, List[int]] = {}
        self.waiting: List[Request] = []
        self.running: List[Request] = []
        self.held: Dict[str, Request] = {}  # finished, blocks kept for the connector
        self.finished_ids: Set[str] = set()
        self.done: List[Request] = []
        self.before_execute: Optional[Callable[["MiniVllm", SchedulerOutput], None]] = None
        self.steps = 0
        self.preemptions = 0
        self.recomputed_requests = 0
        self.connector_seconds = 0.0
        self.connector_split = {"scheduler": 0.0, "worker": 0.0}
        self.scheduler = self.worker = None
        self.workers: List[Any] = []
        self.tp = tp
        if connector_cls is not None:
            from strata.vllm.connector import KVConnectorRole  # the role enum the connector uses
            self.scheduler = connector_cls(make_vllm_config(model, block_size, extra or {}, tp=tp),
                                           KVConnectorRole.SCHEDULER, None)
            group = TpGroup(tp)
            heads = model.kv_heads // tp
            for rank in range(tp):
                w = connector_cls(make_vllm_config(model, block_size, extra or {}, tp=tp, rank=rank),
                                  KVConnectorRole.WORKER, None)
                w.tp_max = group.max
                # TP rank r holds KV heads [r * heads, (r + 1) * heads): views of the model's cache.
                caches = [kv[:, :, :, rank * heads:(rank + 1) * heads] for kv in self.cache]  # dim 3: heads
                self._timed(w.register_kv_caches, dict(zip(self.layer_names, caches)))
                self.workers.append(w)
            self.worker = self.workers[0]

    def _timed(self, fn, *args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            took = time.perf_counter() - t
            self.connector_seconds += took
            side = "scheduler" if getattr(fn, "__self__", None) is self.scheduler else "worker"
            self.connector_split[side] += took

    def close(self) -> None:
        for c in [self.scheduler, *self.workers]:
            if c is not None:
                c.shutdown()

    # ------------------------------------------------------------ public

    def add_request(self, request: Request) -> None:
        self.waiting.append(request)

    def run(self, max_steps: int = 10000) -> List[Request]:
        while self.waiting or self.running or self.held:
            self.step()
            assert self.steps < max_steps, "the harness did not finish"
        return self.done

    def generate(self, request_id: str, prompt: List[int], max_tokens: int) -> Request:
        r = Request(request_id, prompt, max_tokens)
        self.add_request(r)
        self.run()
        return r

    # ------------------------------------------------------------ scheduler

    def _allocate(self, r: Request, tokens: int) -> Optional[List[int]]:
        """Blocks for `tokens` tokens of r: the new block ids, or None when there are too few.
        Unreferenced cached blocks are evicted (least recently freed first) when no block is free."""
        have = self.block_table.setdefault(r.request_id, [])
        need = -(-tokens // self.block_size) - len(have)
        if need <= 0:
            return []
        if need > len(self.free_blocks) + len(self.evictable):
            return None
        new = []
        for _ in range(need):
            if self.free_blocks:
                b = self.free_blocks.pop(0)
            else:
                b, _ = self.evictable.popitem(last=False)
                del self.cached[self.block_hash.pop(b)]
            self.refs[b] = 1
            new.append(b)
        have.extend(new)
        return new

    def _page_hashes(self, tokens: List[int]) -> List[Any]:
        out, prev = [], None
        for i in range(len(tokens) // self.block_size):
            prev = hash((prev, tuple(tokens[i * self.block_size:(i + 1) * self.block_size])))
            out.append(prev)
        return out

    def _local_hit(self, r: Request) -> int:
        """vLLM's prefix cache: the longest run of cached full blocks of r's tokens (leaving a
        token to compute), shared into r's block table. The hit in tokens."""
        if not self.prefix_cache:
            return 0
        usable = (r.num_tokens - 1) // self.block_size * self.block_size
        blocks = []
        for h in self._page_hashes(r.all_token_ids[:usable]):
            if h not in self.cached:
                break
            blocks.append(self.cached[h])
        for b in blocks:
            if self.refs.get(b, 0) == 0:
                self.evictable.pop(b, None)
            self.refs[b] = self.refs.get(b, 0) + 1
        self.block_table[r.request_id] = blocks
        return len(blocks) * self.block_size

    def _free(self, req_id: str, r: Optional[Request] = None) -> None:
        """Frees a request's blocks; with the prefix cache, its full computed blocks stay cached."""
        table = self.block_table.pop(req_id, [])
        if self.prefix_cache and r is not None:
            computed = r.num_computed_tokens // self.block_size
            for h, b in zip(self._page_hashes(r.all_token_ids[:computed * self.block_size]), table):
                if h not in self.cached and b not in self.block_hash:
                    self.cached[h] = b
                    self.block_hash[b] = h
        for b in reversed(table):  # as vLLM frees: the tail blocks are evicted first
            self.refs[b] = self.refs.get(b, 1) - 1
            if self.refs[b] == 0:
                if b in self.block_hash:
                    self.evictable[b] = None
                else:
                    self.free_blocks.append(b)

    def _preempt(self, r: Request) -> None:
        self.running.remove(r)
        self._free(r.request_id, r)
        r.num_computed_tokens = 0
        r.preempted = True
        self.waiting.insert(0, r)
        self.preemptions += 1

    def schedule(self) -> SchedulerOutput:
        budget = self.token_budget
        new_reqs: List[NewRequestData] = []
        cached = CachedRequestData([], set(), [], [])
        num_scheduled: Dict[str, int] = {}
        preempted: Set[str] = set()
        for r in list(self.running):
            if r not in self.running:
                continue
            n = min(r.num_tokens - r.num_computed_tokens, self.chunk, budget)
            if n <= 0:
                continue
            new = self._allocate(r, r.num_computed_tokens + n)
            while new is None and len(self.running) > 1:
                victim = self.running[-1]
                self._preempt(victim)
                preempted.add(victim.request_id)
                if victim is r:
                    break
                new = self._allocate(r, r.num_computed_tokens + n)
            if r not in self.running or new is None:
                continue
            cached.req_ids.append(r.request_id)
            cached.new_block_ids.append((new,) if new else None)
            cached.num_computed_tokens.append(r.num_computed_tokens)
            num_scheduled[r.request_id] = n
            budget -= n
        while self.waiting and budget > 0 and not preempted:
            r = self.waiting[0]
            local = self._local_hit(r)
            external = 0
            if self.scheduler is not None:
                external, load_async = self._timed(self.scheduler.get_num_new_matched_tokens, r, local)
                assert not load_async and external % self.block_size == 0
            n = min(r.num_tokens - local - external, self.chunk, budget)
            assert n > 0, "a synchronous load must leave a token to compute"
            new = self._allocate(r, local + external + n)
            if new is None:
                self._free(r.request_id)  # the shared blocks go back to the cache
                break
            self.local_hit_tokens += local
            external += local  # num_computed_tokens: the local hit and the loaded tokens
            self.waiting.pop(0)
            if self.scheduler is not None:
                self._timed(self.scheduler.update_state_after_alloc, r,
                            _Blocks(self.block_table[r.request_id]), external - local)
            r.num_computed_tokens = external
            self.running.append(r)
            if r.preempted:
                cached.req_ids.append(r.request_id)
                cached.resumed_req_ids.add(r.request_id)
                cached.new_block_ids.append((list(self.block_table[r.request_id]),))
                cached.num_computed_tokens.append(external)
                r.preempted = False
            else:
                new_reqs.append(NewRequestData(r.request_id, r.prompt_token_ids,
                                               (list(self.block_table[r.request_id]),), external))
            num_scheduled[r.request_id] = n
            budget -= n
        out = SchedulerOutput(new_reqs, cached, num_scheduled, self.finished_ids, preempted)
        self.finished_ids = set()
        return out

    # ------------------------------------------------------------ model runner

    def execute(self, so: SchedulerOutput, meta: Any):
        batch, reqs = [], []
        for r in self.running:
            n = so.num_scheduled_tokens.get(r.request_id)
            if not n:
                continue
            start = r.num_computed_tokens
            table = torch.tensor(self.block_table[r.request_id])
            pos = torch.arange(start, start + n)
            ctx = torch.arange(0, start + n)
            slot = lambda p: table[p // self.block_size] * self.block_size + p % self.block_size  # noqa: E731
            batch.append(SeqBatch(torch.tensor(r.all_token_ids[start:start + n]), pos, slot(pos), slot(ctx)))
            reqs.append(r)
        before = after = None
        if self.workers:
            forward_context = SimpleNamespace(
                no_compile_layers={n: _Layer(kv) for n, kv in zip(self.layer_names, self.cache)},
                attn_metadata={n: SimpleNamespace() for n in self.layer_names})
            for w in self.workers:
                self._timed(w.bind_connector_metadata, meta)
                if batch:  # vLLM's no-forward steps skip the load and save hooks
                    self._timed(w.start_load_kv, forward_context)

            def before(l):
                for w in self.workers:
                    self._timed(w.wait_for_layer_load, self.layer_names[l])

            def after(l, kv):
                for w in self.workers:
                    self._timed(w.save_kv_layer, self.layer_names[l], w._layers[self.layer_names[l]][1], None)
        logits = self.model.forward(batch, self.cache, before, after) if batch else []
        sending, errors = set(), set()
        if self.workers:
            if batch:  # the ranks' wait_for_save meet in their TP all-reduce: run them side by side
                threads = [threading.Thread(target=self._timed, args=(w.wait_for_save,)) for w in self.workers]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            finished = []
            for w in self.workers:
                sent, _ = self._timed(w.get_finished, so.finished_req_ids)
                finished.append(sent or set())
                errors |= self._timed(w.get_block_ids_with_load_errors)
                self._timed(w.clear_connector_metadata)
            # A request's blocks are freed once every worker reported it (KVOutputAggregator).
            sending = set.intersection(*finished) if finished else set()
        return reqs, logits, sending, errors

    def step(self) -> None:
        self.steps += 1
        so = self.schedule()
        meta = self._timed(self.scheduler.build_connector_meta, so) if self.scheduler is not None else None
        if self.before_execute is not None:
            self.before_execute(self, so)
        reqs, logits, sending, errors = self.execute(so, meta)
        for req_id in sending:
            r = self.held.pop(req_id)
            self._free(req_id, r)
        for r, lg in zip(reqs, logits):
            n = so.num_scheduled_tokens[r.request_id]
            table = self.block_table.get(r.request_id, [])
            bad = [i for i, b in enumerate(table) if b in errors]
            if bad:  # kv_load_failure_policy "recompute": from the first invalid block
                r.num_computed_tokens = min(r.num_computed_tokens, bad[0] * self.block_size)
                self.recomputed_requests += 1
                continue
            r.num_computed_tokens += n
            if r.num_computed_tokens == r.num_tokens:
                r.append(int(torch.argmax(lg)), lg)
                if len(r.output) >= r.max_tokens:
                    self._finish(r)

    def _finish(self, r: Request) -> None:
        self.running.remove(r)
        self.done.append(r)
        self.finished_ids.add(r.request_id)
        delay = False
        if self.scheduler is not None:
            delay, _ = self._timed(self.scheduler.request_finished, r, list(self.block_table[r.request_id]))
        if delay:
            self.held[r.request_id] = r
        else:
            self._free(r.request_id, r)
