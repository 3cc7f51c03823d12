"""StrataConnector: a vLLM v1 KV connector (KVConnectorBase_V1) over strata.

Launch (python/strata/vllm/README.md):

    vllm serve MODEL --kv-transfer-config '{"kv_connector": "StrataConnector",
        "kv_connector_module_path": "strata.vllm", "kv_role": "kv_both",
        "kv_load_failure_policy": "recompute",
        "kv_connector_extra_config": {"node": "127.0.0.1:7400", "tenant": "acme"}}'

One strata page is one vLLM block (block_size tokens). Each TP rank keeps its own KV in its
own namespace (tenant, model, layout with tp_rank); the scheduler matches rank 0's.

Scheduler side (one instance in the engine core):
  get_num_new_matched_tokens  Match on the request's token ids: the pages strata can serve
                              now (TEXT pages are a miss; with rebuild_text, a prefetch queues
                              their rebuild and promotes SSD pages), beyond vLLM's local hit,
                              leaving at least one token to compute. Loads are synchronous
                              (layer by layer inside the forward pass).
  update_state_after_alloc    records the load: those pages into the request's new blocks
  build_connector_meta        the step's loads, and saves of the pages that become full in
                              this step (prompt pages at once; decode pages every
                              decode_save_pages pages)
  request_finished            pages not yet saved (the tail of what the request produced):
                              the blocks are kept until the worker has written them
Worker side (one instance per GPU worker):
  register_kv_caches          the paged KV tensors, by layer (flash_attn, flashinfer or mla)
  start_load_kv               starts ReadLayers of each load into a staging buffer on the
                              cache's device (straight into GPU memory where the transport
                              can, verified there)
  wait_for_layer_load         waits for that layer of every load and scatters it into the blocks
  save_kv_layer               gathers that layer of each save's blocks into its staging buffer
  wait_for_save               writes the saves (two-phase puts, chained to their parents)
  get_finished                writes the finishing requests' pages; reports them as sent
  get_block_ids_with_load_errors  the blocks of every load that failed or did not verify
                              (miss since the match, DATA_LOSS, node gone): vLLM recomputes
                              them (kv_load_failure_policy "recompute") instead of serving them
A failed save only loses cache; it never fails the request.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import logging
import re
import threading
from typing import Any, Dict, List, Optional, Tuple

import torch

import strata
from strata._paged import Staging, VllmLayerAdapter, block_tensor, cut_segments, parent_at, strata_dtype

try:  # vLLM's own base class where vLLM is installed
    from vllm.distributed.kv_transfer.kv_connector.v1.base import (KVConnectorBase_V1, KVConnectorMetadata,
                                                                   KVConnectorRole)
    HAVE_VLLM = True
except ImportError:  # this repository's tests: vLLM is not installable here
    from strata.vllm._standin import KVConnectorBase_V1, KVConnectorMetadata, KVConnectorRole
    HAVE_VLLM = False

logger = logging.getLogger("strata.vllm")


# ------------------------------------------------------------------------ metadata (pickled)

@dataclasses.dataclass
class LoadSpec:
    req_id: str
    model: str  # the namespace's model (the served model, with LoRA / cache-salt / PP suffixes)
    block_ids: List[int]  # the GPU blocks to fill, one per page: sequence pages [first_page, ...)
    first_page: int
    tokens: List[int]  # the request's tokens through the last page to load (each rank matches them)


@dataclasses.dataclass
class SaveSpec:
    req_id: str
    model: str
    block_ids: List[int]  # the GPU blocks of the pages to save, in order
    tokens: List[int]  # their token ids
    first_page: int  # sequence page of the first
    parent_pages: int  # the blob continues the first parent_pages pages (0: from page 0)
    # Tokens of pages [0, parent_pages) when the worker must look the parent up (the first save
    # after a match); None when it continues the worker's previous save of this request.
    prefix_tokens: Optional[List[int]] = None


@dataclasses.dataclass
class StrataConnectorMetadata(KVConnectorMetadata):
    loads: List[LoadSpec] = dataclasses.field(default_factory=list)
    saves: List[SaveSpec] = dataclasses.field(default_factory=list)
    finish_saves: List[SaveSpec] = dataclasses.field(default_factory=list)


# ------------------------------------------------------------------------ configuration

def _extra(vllm_config: Any) -> Dict[str, Any]:
    kv = vllm_config.kv_transfer_config
    return dict(getattr(kv, "kv_connector_extra_config", None) or {})


def layout_from_vllm_config(vllm_config: Any, tp_rank: int = 0) -> strata.KvLayout:
    """The strata layout of one TP rank's KV cache, from vLLM's model and cache config."""
    extra = _extra(vllm_config)
    if "layout" in extra:  # an explicit strata layout spec overrides what is derived
        spec = extra["layout"]
        return strata.KvLayout.from_spec(re.sub(r"tp=\d+/", f"tp={tp_rank}/", spec))
    model = vllm_config.model_config
    parallel = vllm_config.parallel_config
    cache = vllm_config.cache_config
    cache_dtype = getattr(cache, "cache_dtype", "auto")
    dtype = model.dtype if cache_dtype in (None, "auto") else getattr(torch, {
        "fp8": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}.get(cache_dtype, cache_dtype))
    mla = bool(getattr(model, "use_mla", False))
    return strata.KvLayout(
        num_layers=model.get_num_layers(parallel), num_kv_heads=1 if mla else model.get_num_kv_heads(parallel),
        head_dim=model.get_head_size(), dtype=strata_dtype(dtype), page_tokens=cache.block_size,
        format="mla" if mla else "kv", tp_rank=0 if mla else tp_rank,
        tp_world=1 if mla else parallel.tensor_parallel_size)


def _ranks(vllm_config: Any) -> Tuple[int, int]:
    """(TP rank, PP rank) of this worker."""
    parallel = vllm_config.parallel_config
    tp = max(1, int(parallel.tensor_parallel_size))
    try:
        from vllm.distributed import get_pp_group, get_tensor_model_parallel_rank  # type: ignore
        return int(get_tensor_model_parallel_rank()), int(get_pp_group().rank_in_group)
    except Exception:  # no vLLM, or no process groups yet
        rank = int(getattr(parallel, "rank", 0))
        return rank % tp, rank // tp


def _tp_max(flags: List[int]) -> List[int]:
    """Element-wise max of `flags` over the TP group (vLLM's), so that every rank decides alike."""
    try:
        import torch.distributed as dist
        from vllm.distributed import get_tp_group  # type: ignore
        group = get_tp_group()
        if group.world_size <= 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group.cpu_group)
        return t.tolist()
    except ImportError:
        return flags


def request_model(base: str, request: Any) -> Optional[str]:
    """The namespace model of a request, or None when strata must not serve it: KV that token
    ids alone do not determine — multimodal inputs (placeholder tokens), prompt embeddings.
    A LoRA adapter and a cache salt get namespaces of their own."""
    if getattr(request, "mm_features", None) or getattr(request, "prompt_embeds", None) is not None \
            or getattr(request, "prompt_token_ids", []) is None:
        return None
    model = base
    lora = getattr(request, "lora_request", None)
    if lora is not None:
        model += f"|lora={getattr(lora, 'lora_name', None) or getattr(lora, 'name', lora)}"
    salt = getattr(request, "cache_salt", None)
    if salt:
        model += "|salt=" + hashlib.sha256(str(salt).encode()).hexdigest()[:16]
    return model


# ------------------------------------------------------------------------ scheduler-side state

@dataclasses.dataclass
class _RequestState:
    request: Any
    model: str
    block_ids: List[int] = dataclasses.field(default_factory=list)
    saved_pages: int = 0  # sequence pages strata holds for this request (loaded, matched or saved)
    worker_knows_parent: bool = False  # the worker wrote the blob ending at saved_pages


class _LoadJob:
    """One load on the worker: its own Match, then ReadLayers on a thread, layers handed over
    as they land."""

    def __init__(self, spec: LoadSpec, staging: Staging, blocks: torch.Tensor):
        self.spec = spec
        self.staging = staging
        self.blocks = blocks
        self.landed = 0  # layers landed and verified
        self.error: Optional[BaseException] = None
        self.done = False
        self.scattered: set = set()
        self.cv = threading.Condition()

    def on_layer(self, layer: int) -> None:
        with self.cv:
            self.landed = layer + 1
            self.cv.notify_all()

    def finish(self, error: Optional[BaseException]) -> None:
        with self.cv:
            self.error = error
            self.done = True
            self.cv.notify_all()

    def wait_layer(self, layer: int) -> bool:
        """True when `layer` landed; False when the read failed first."""
        with self.cv:
            self.cv.wait_for(lambda: self.landed > layer or self.done)
            return self.landed > layer

    def wait_done(self) -> None:
        with self.cv:
            self.cv.wait_for(lambda: self.done)


class StrataConnector(KVConnectorBase_V1):
    def __init__(self, vllm_config: Any, role: Any, kv_cache_config: Any = None):
        super().__init__(vllm_config, role, kv_cache_config)
        self._extra = _extra(vllm_config)
        self._block_size = int(vllm_config.cache_config.block_size)
        base = str(self._extra.get("model") or getattr(vllm_config.model_config, "model", "model"))
        pp_size = int(getattr(vllm_config.parallel_config, "pipeline_parallel_size", 1) or 1)
        self._tenant = str(self._extra.get("tenant", "default"))
        self._rebuild_text = bool(self._extra.get("rebuild_text", True))
        self._decode_save_pages = int(self._extra.get("decode_save_pages", 16))
        self._lookup_timeout = float(self._extra.get("lookup_timeout", 1.0))
        self._client: Optional[strata.Client] = None
        self._client_lock = threading.Lock()
        self._namespaces: Dict[str, strata.Namespace] = {}
        self.stats = {"lookups": 0, "hit_pages": 0, "loads": 0, "load_errors": 0, "saves": 0,
                      "save_errors": 0, "saved_pages": 0, "saves_dropped": 0}
        if role == KVConnectorRole.SCHEDULER:
            tp_rank, pp_rank = 0, 0  # the scheduler looks in rank 0's (first stage's) namespace
        else:
            tp_rank, pp_rank = _ranks(vllm_config)
        self._base_model = base if pp_size == 1 else f"{base}|pp={pp_rank}/{pp_size}"
        self._layout = layout_from_vllm_config(vllm_config, tp_rank)
        if role == KVConnectorRole.SCHEDULER:
            self._matches: Dict[str, Tuple[Optional[strata.MatchResult], int, int]] = {}
            self._pending_loads: Dict[str, LoadSpec] = {}
            self._requests: Dict[str, _RequestState] = {}
            self._finishing: List[SaveSpec] = []
            self._prefetched: set = set()
        else:
            self._layers: Dict[str, Tuple[int, torch.Tensor]] = {}
            self._adapter: Optional[VllmLayerAdapter] = None
            self._load_jobs: List[_LoadJob] = []
            self._save_staging: Dict[str, Tuple[SaveSpec, Staging, torch.Tensor, set]] = {}
            self._error_blocks: set = set()
            self._tainted: set = set()  # requests whose load failed on some rank: never saved again
            self._last_blob: Dict[str, Tuple[strata.BlobKey, int]] = {}  # per request: its last saved blob
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="strata-vllm")
            self.tp_max = _tp_max  # the harness replaces it to stand in for vLLM's TP group

    # -------------------------------------------------------------------- common

    def client(self) -> strata.Client:
        with self._client_lock:
            if self._client is None:
                self._client = strata.Client.from_config(self._extra)
            return self._client

    def namespace_for(self, model: str) -> strata.Namespace:
        ns = self._namespaces.get(model)
        if ns is None:
            ns = self._namespaces[model] = strata.Namespace(self._tenant, model, self._layout)
        return ns

    @property
    def namespace(self) -> strata.Namespace:
        """The namespace of plain requests (no LoRA, no cache salt)."""
        return self.namespace_for(self._base_model)

    @classmethod
    def requires_piecewise_for_cudagraph(cls, extra_config: Dict[str, Any]) -> bool:
        return True  # wait_for_layer_load and save_kv_layer do real work: they must not be skipped

    def shutdown(self) -> None:
        if self.role == KVConnectorRole.WORKER:
            self._pool.shutdown(wait=True)
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -------------------------------------------------------------------- scheduler side

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> Tuple[Optional[int], bool]:
        model = request_model(self._base_model, request)
        bs = self._block_size
        local_pages = num_computed_tokens // bs
        if model is None:
            self._matches[request.request_id] = (None, local_pages, 0)
            return 0, False
        cached = self._matches.get(request.request_id)
        tokens = None
        if cached is not None and cached[2] == request.num_tokens:  # asked again while it waits: no new lookup
            match = cached[0]
        else:
            tokens = list(request.all_token_ids[:request.num_tokens])
            self.stats["lookups"] += 1
            try:
                match = self.client().match(self.namespace_for(model), tokens, phase=strata.LookupPhase.PREFILL,
                                            timeout=self._lookup_timeout)
            except strata.NotFound:  # a namespace the node has never seen: a cold node
                match = None
            except strata.Error as e:  # the store is slow or down: serve from vLLM alone
                logger.warning("strata match failed for %s: %s", request.request_id, e)
                match = None
        self._matches[request.request_id] = (match, local_pages, request.num_tokens)
        if match is None:
            return 0, False
        if self._rebuild_text and request.request_id not in self._prefetched and (
                match.text_segments or any(s.tier == strata.Tier.SSD for s in match.segments)):
            self._prefetched.add(request.request_id)
            tokens = tokens if tokens is not None else list(request.all_token_ids[:request.num_tokens])
            try:  # TEXT pages queued for rebuild, SSD pages promoted: a later request hits
                self.client().prefetch(self.namespace_for(model), tokens, timeout=self._lookup_timeout)
            except strata.Error as e:
                logger.info("strata prefetch failed for %s: %s", request.request_id, e)
        # At least one token must be left to compute (vLLM asserts it for synchronous loads).
        loadable = min(match.readable_pages, (request.num_tokens - 1) // bs)
        pages = loadable - local_pages
        if pages <= 0:
            return 0, False
        self.stats["hit_pages"] += pages
        return pages * bs, False

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        req_id = request.request_id
        match, local_pages, _ = self._matches.pop(req_id, (None, 0, 0))
        model = request_model(self._base_model, request)
        if model is None:
            return
        state = self._requests.get(req_id)
        if state is None:
            state = self._requests[req_id] = _RequestState(request=request, model=model)
        state.request = request
        block_ids = list(blocks.get_block_ids()[0])
        state.block_ids = block_ids
        if match is not None and match.readable_pages > state.saved_pages:
            # Everything the match can serve is in strata already: saves continue after it.
            state.saved_pages = match.readable_pages
            state.worker_knows_parent = False
        if num_external_tokens <= 0 or match is None:
            return
        pages = num_external_tokens // self._block_size
        tokens = list(request.all_token_ids[:(local_pages + pages) * self._block_size])
        self._pending_loads[req_id] = LoadSpec(req_id, model, block_ids[local_pages:local_pages + pages],
                                               local_pages, tokens)

    def _plan_save(self, state: _RequestState, computed_tokens: int, finishing: bool) -> Optional[SaveSpec]:
        bs = self._block_size
        full = min(computed_tokens, len(state.request.all_token_ids)) // bs
        full = min(full, len(state.block_ids))
        new_pages = full - state.saved_pages
        if new_pages <= 0:
            return None
        in_prompt = computed_tokens <= state.request.num_prompt_tokens
        if not finishing and not in_prompt and (self._decode_save_pages == 0 or new_pages < self._decode_save_pages):
            return None
        all_tokens = state.request.all_token_ids  # only the slices needed are copied (long contexts)
        prefix = None if state.worker_knows_parent or state.saved_pages == 0 \
            else list(all_tokens[:state.saved_pages * bs])
        spec = SaveSpec(state.request.request_id, state.model, state.block_ids[state.saved_pages:full],
                        list(all_tokens[state.saved_pages * bs:full * bs]), state.saved_pages, state.saved_pages,
                        prefix)
        state.saved_pages = full
        state.worker_knows_parent = True
        return spec

    def build_connector_meta(self, scheduler_output: Any) -> StrataConnectorMetadata:
        meta = StrataConnectorMetadata(loads=list(self._pending_loads.values()))
        self._pending_loads.clear()
        num_scheduled = scheduler_output.num_scheduled_tokens
        for new in scheduler_output.scheduled_new_reqs:
            state = self._requests.get(new.req_id)
            if state is None:
                continue
            state.block_ids = list(new.block_ids[0])
            spec = self._plan_save(state, new.num_computed_tokens + num_scheduled.get(new.req_id, 0), False)
            if spec:
                meta.saves.append(spec)
        cached = scheduler_output.scheduled_cached_reqs
        for i, req_id in enumerate(cached.req_ids):
            state = self._requests.get(req_id)
            if state is None:
                continue
            new_blocks = cached.new_block_ids[i]
            if req_id in cached.resumed_req_ids:
                state.block_ids = list(new_blocks[0]) if new_blocks else []
            elif new_blocks:
                state.block_ids.extend(new_blocks[0])
            spec = self._plan_save(state, cached.num_computed_tokens[i] + num_scheduled.get(req_id, 0), False)
            if spec:
                meta.saves.append(spec)
        meta.finish_saves, self._finishing = self._finishing, []
        return meta

    def request_finished(self, request: Any, block_ids: List[int]) -> Tuple[bool, Optional[Dict[str, Any]]]:
        state = self._requests.pop(request.request_id, None)
        self._matches.pop(request.request_id, None)
        self._pending_loads.pop(request.request_id, None)
        self._prefetched.discard(request.request_id)
        if state is None:
            return False, None
        state.block_ids = list(block_ids)
        spec = self._plan_save(state, request.num_computed_tokens, True)
        if spec is None:
            return False, None
        self._finishing.append(spec)
        return True, None  # the blocks stay until the worker reports the save (get_finished)

    # -------------------------------------------------------------------- worker side

    def register_kv_caches(self, kv_caches: Dict[str, torch.Tensor]) -> None:
        layout = self._layout
        names = list(kv_caches)
        if len(names) != layout.num_layers:
            raise strata.InvalidArgument(f"{len(names)} KV cache layers registered, the layout has {layout.num_layers}")

        def layer_index(name: str, position: int) -> int:
            found = re.findall(r"\.(\d+)\.", f".{name}.")
            return int(found[0]) if found else position

        ordered = sorted(enumerate(names), key=lambda p: layer_index(p[1], p[0]))
        first = kv_caches[names[0]]
        kind = self._extra.get("kv_cache_layout") or VllmLayerAdapter.detect(first)
        self._adapter = VllmLayerAdapter(kind)
        shape = self._adapter.page_shape(first)
        expected = (layout.page_tokens, layout.num_kv_heads, layout.head_dim)
        if shape != expected:
            raise strata.InvalidArgument(f"KV cache blocks are {shape} (tokens, heads, head_dim); "
                                         f"the namespace's layout says {expected}")
        dtype = strata.KvLayout(num_layers=1, num_kv_heads=1, head_dim=1, dtype=strata_dtype(first.dtype),
                                page_tokens=1).dtype
        if dtype != layout.dtype:
            raise strata.InvalidArgument(f"KV cache dtype {first.dtype}; the namespace's layout says {layout.dtype}")
        self._layers = {name: (i, kv_caches[name]) for i, (_, name) in enumerate(ordered)}
        self._device = first.device
        self._dtype = first.dtype

    def _staging(self, pages: int) -> Staging:
        return Staging(self._layout, pages, self._dtype, self._device)

    def _sync_device(self) -> None:
        if self._device.type == "cuda":
            torch.cuda.current_stream(self._device).synchronize()

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        meta = self._get_connector_metadata()
        self._load_jobs = []
        if meta.loads:
            self._sync_device()  # staging memory is free of the engine's earlier kernels
        for spec in meta.loads:
            if not spec.block_ids:
                continue
            job = _LoadJob(spec, self._staging(len(spec.block_ids)), block_tensor(spec.block_ids, self._device))
            self._load_jobs.append(job)
            self.stats["loads"] += 1
            self._pool.submit(self._run_load, job)

    def _run_load(self, job: _LoadJob) -> None:
        try:
            spec = job.spec
            pages = len(spec.block_ids)
            ns = self.namespace_for(spec.model)
            # This rank's own blobs: the same pages, under this rank's namespace.
            match = self.client().match(ns, spec.tokens)
            end = spec.first_page + pages
            if match.readable_pages < end:
                raise strata.NotFound(f"this rank holds {match.readable_pages} of the {end} pages")
            segments = cut_segments(match, spec.first_page, end)
            self.client().read_layers(ns, segments, job.staging.buffer, job.on_layer, pages=pages)
            job.finish(None)
        except BaseException as e:  # noqa: BLE001 — every failure is a load error
            job.finish(e)

    def wait_for_layer_load(self, layer_name: str) -> None:
        if not self._load_jobs or layer_name not in self._layers:
            return
        layer, kv = self._layers[layer_name]
        for job in self._load_jobs:
            if job.wait_layer(layer):
                self._adapter.scatter(kv, job.blocks, job.staging.layer_view(layer))
                job.scattered.add(layer)

    def _settle_loads(self) -> set:
        """Waits for this step's loads; their failures become load errors. The requests whose
        load failed on any TP rank (their pages computed this step used KV that never arrived,
        on every rank, through the all-reduces) — every rank agrees on them."""
        flags = []
        for job in self._load_jobs:
            job.wait_done()
            # A layer the forward pass did not wait for (it would have read unloaded blocks) fails
            # the load as surely as an error does.
            failed = job.error is not None or len(job.scattered) != len(self._layers)
            if failed:
                logger.warning("strata load of %s failed: %s", job.spec.req_id, job.error or "layers not waited for")
                self.stats["load_errors"] += 1
            flags.append(1 if failed else 0)
        if not flags:
            return set()
        flags = self.tp_max(flags)
        failed_reqs = set()
        for job, flag in zip(self._load_jobs, flags):
            if flag:
                failed_reqs.add(job.spec.req_id)
                self._error_blocks.update(job.spec.block_ids)
        self._load_jobs = []
        return failed_reqs

    def save_kv_layer(self, layer_name: str, kv_layer: torch.Tensor, attn_metadata: Any, **kwargs: Any) -> None:
        meta = self._get_connector_metadata()
        if not meta.saves or layer_name not in self._layers:
            return
        layer, _ = self._layers[layer_name]
        for spec in meta.saves:
            if spec.req_id in self._tainted:
                continue
            entry = self._save_staging.get(spec.req_id)
            if entry is None or entry[0] is not spec:
                staging = self._staging(len(spec.block_ids))
                entry = self._save_staging[spec.req_id] = (spec, staging, block_tensor(spec.block_ids, self._device), set())
            _, staging, blocks, gathered = entry
            self._adapter.gather(kv_layer, blocks, staging.layer_view(layer))
            gathered.add(layer)

    def _parent(self, ns: strata.Namespace, spec: SaveSpec) -> Optional[strata.Parent]:
        if spec.parent_pages == 0:
            return None
        last = self._last_blob.get(spec.req_id)
        if last is not None and last[1] == spec.parent_pages:
            return strata.Parent(last[0], spec.parent_pages)
        if spec.prefix_tokens is None:
            raise strata.FailedPrecondition(f"the blob before page {spec.parent_pages} of {spec.req_id} was not saved")
        parent = parent_at(self.client().match(ns, spec.prefix_tokens), spec.parent_pages)
        if parent is None:
            raise strata.NotFound(f"pages [0, {spec.parent_pages}) of {spec.req_id} are no longer in strata")
        return parent

    def _write_saves(self, specs: List[SaveSpec], staged: Dict[str, Tuple[SaveSpec, Staging, torch.Tensor, set]]) -> None:
        """Writes `specs` (never raises: a failed save only loses cache)."""
        pending = []
        for spec in specs:
            if spec.req_id in self._tainted:
                self.stats["saves_dropped"] += 1
                continue
            try:
                entry = staged.get(spec.req_id)
                if entry is None or entry[0] is not spec:
                    entry = (spec, self._staging(len(spec.block_ids)), block_tensor(spec.block_ids, self._device), set())
                _, staging, blocks, gathered = entry
                for layer, kv in self._layers.values():
                    if layer not in gathered:
                        self._adapter.gather(kv, blocks, staging.layer_view(layer))
                pending.append((spec, staging))
            except Exception as e:  # noqa: BLE001
                self.stats["save_errors"] += 1
                logger.warning("strata save of %s could not be staged: %s", spec.req_id, e)
        if not pending:
            return
        self._sync_device()
        for spec, staging in pending:  # in order: a request's later save continues its earlier one
            try:
                ns = self.namespace_for(spec.model)
                result = self.client().write(ns, spec.tokens, staging.buffer, parent=self._parent(ns, spec))
                self._last_blob[spec.req_id] = (result.key, spec.first_page + len(spec.block_ids))
                self.stats["saves"] += 1
                self.stats["saved_pages"] += len(spec.block_ids)
            except Exception as e:  # noqa: BLE001 — never raised into vLLM
                self._last_blob.pop(spec.req_id, None)
                self.stats["save_errors"] += 1
                logger.warning("strata save of %s pages [%d, %d) failed: %s", spec.req_id, spec.first_page,
                               spec.first_page + len(spec.block_ids), e)

    def wait_for_save(self) -> None:
        failed = self._settle_loads()
        self._tainted |= failed  # their pages computed this step are wrong on every rank: never saved
        meta = self._get_connector_metadata()
        staged, self._save_staging = self._save_staging, {}
        self._write_saves(meta.saves, staged)

    def get_finished(self, finished_req_ids: set) -> Tuple[Optional[set], Optional[set]]:
        sending: set = set()
        if self.has_connector_metadata():
            meta = self._get_connector_metadata()
            if meta.finish_saves:
                self._write_saves(meta.finish_saves, {})
                sending = {spec.req_id for spec in meta.finish_saves}  # written or not: free the blocks
        for req_id in set(finished_req_ids) | sending:
            self._tainted.discard(req_id)
            self._last_blob.pop(req_id, None)
        return (sending or None), None

    def get_block_ids_with_load_errors(self) -> set:
        errors, self._error_blocks = self._error_blocks, set()
        return errors
