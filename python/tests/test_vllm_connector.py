"""strata.vllm.StrataConnector driven in vLLM's call order (engines/vllm_harness.py) over a
small paged-attention model in torch, against a real strata-node: the outputs with KV loaded
from strata equal the outputs with the KV recomputed."""
from __future__ import annotations

import uuid

import pytest
import torch

import strata
from conftest import Node
from engines.tiny_model import TinyPagedModel
from engines.vllm_harness import MiniVllm, Request
from strata.vllm import StrataConnector


def conversation(seed: int, turns: int, user_tokens: int = 21):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 101, (user_tokens,), generator=g).tolist() for _ in range(turns)]


def run_turns(engine: MiniVllm, user_turns, max_tokens: int = 9, prefix: str = "r"):
    """A multi-turn conversation: each turn's prompt is the whole history plus new input."""
    history, results = [], []
    for i, user in enumerate(user_turns):
        history = history + user
        r = engine.generate(f"{prefix}{i}", history, max_tokens)
        results.append(r)
        history = history + r.output
    return results


def assert_same_outputs(got, want, atol=1e-4):
    for g, w in zip(got, want):
        assert g.output == w.output, (g.request_id, g.output, w.output)
        for a, b in zip(g.logits, w.logits):
            assert torch.allclose(a, b, atol=atol), (g.request_id, (a - b).abs().max())


@pytest.fixture
def extra(shared_node):
    return {"node": shared_node.address, "tenant": "vllm-tests", "model": f"tiny-{uuid.uuid4().hex[:8]}",
            "timeout": 10}


@pytest.mark.parametrize("layout,dtype", [("flash_attn", torch.float32), ("flashinfer", torch.bfloat16)])
def test_multi_turn_with_strata_equals_recompute(extra, layout, dtype):
    model = TinyPagedModel(seed=1, kv_dtype=dtype, layout=layout)
    turns = conversation(seed=2, turns=4)
    baseline = MiniVllm(model)
    want = run_turns(baseline, turns)
    engine = MiniVllm(model, StrataConnector, extra)
    got = run_turns(engine, turns)
    assert_same_outputs(got, want)
    s, w = engine.scheduler.stats, engine.worker.stats
    # Turns 2..4 loaded their prefix (the earlier turns' prompts and outputs) from strata.
    assert w["loads"] == 3 and w["load_errors"] == 0 and s["hit_pages"] > 0
    assert w["saves"] > 0 and w["save_errors"] == 0
    # Every whole page of the conversation with KV (all but the last output token) is in strata.
    full = got[-1].prompt_token_ids + got[-1].output[:-1]
    client = engine.worker.client()
    m = client.match(engine.worker.namespace, full)
    assert m.readable_pages == len(full) // engine.block_size
    engine.close()


def test_second_engine_reads_what_the_first_wrote(extra):
    """Another engine (a restarted server, another replica) gets the prefix from strata."""
    model = TinyPagedModel(seed=3)
    turns = conversation(seed=4, turns=2)
    first = MiniVllm(model, StrataConnector, extra)
    run_turns(first, turns[:1])
    first.close()
    second = MiniVllm(model, StrataConnector, extra)
    baseline = MiniVllm(model)
    history = turns[0] + run_turns(baseline, turns[:1])[0].output + turns[1]
    want = baseline.generate("b", history, 7)
    got = second.generate("a", history, 7)
    assert_same_outputs([got], [want])
    # The first turn's pages with KV: its prompt and all but its last output token.
    assert second.worker.stats["loads"] == 1
    assert second.scheduler.stats["hit_pages"] == (len(turns[0]) + 9 - 1) // 8
    second.close()


def test_preemption(extra):
    """Two long requests on too few blocks: one is preempted and resumed from strata."""
    model = TinyPagedModel(seed=5)
    prompts = conversation(seed=6, turns=2, user_tokens=40)
    baseline = MiniVllm(model)
    want = [baseline.generate(f"w{i}", p, 20) for i, p in enumerate(prompts)]
    engine = MiniVllm(model, StrataConnector, dict(extra, decode_save_pages=1), num_blocks=13)
    reqs = [Request(f"g{i}", p, 20) for i, p in enumerate(prompts)]
    for r in reqs:
        engine.add_request(r)
    engine.run()
    assert engine.preemptions >= 1
    assert_same_outputs(reqs, want)
    assert engine.worker.stats["loads"] >= 1  # the resumed request loaded what it had saved
    engine.close()


def test_load_error_makes_vllm_recompute(extra):
    """The prefix is evicted between the scheduler's match and the worker's load: the load
    fails (NOT_FOUND), its blocks are reported, and vLLM recomputes instead of serving them."""
    model = TinyPagedModel(seed=7)
    turns = conversation(seed=8, turns=2)
    want = run_turns(MiniVllm(model), turns)
    engine = MiniVllm(model, StrataConnector, extra)
    run_turns(engine, turns[:1], prefix="x")

    def evict_all(eng, so):
        if eng.scheduler.stats["hit_pages"] and not getattr(eng, "evicted", False):
            eng.evicted = True
            eng.worker.client().evict(strata.Tier.DRAM, 1 << 40)  # bytes dropped (no SSD): TEXT

    engine.before_execute = evict_all
    got = run_turns(engine, turns, prefix="y")
    assert engine.evicted and engine.worker.stats["load_errors"] >= 1 and engine.recomputed_requests >= 1
    assert_same_outputs(got, want)
    engine.close()
    # Nothing computed over the KV that never arrived was saved: a fresh engine that loads
    # whatever strata now holds still gives the right outputs.
    fresh = MiniVllm(model, StrataConnector, extra)
    assert_same_outputs(run_turns(fresh, turns, prefix="z"), want)
    fresh.close()


def test_node_killed_before_the_load(extra):
    node = Node()
    try:
        model = TinyPagedModel(seed=9)
        turns = conversation(seed=10, turns=3)
        want = run_turns(MiniVllm(model), turns)
        engine = MiniVllm(model, StrataConnector, dict(extra, node=node.address, timeout=3))
        run_turns(engine, turns[:1], prefix="x")

        def kill(eng, so):
            if eng.scheduler.stats["hit_pages"]:
                node.kill()

        engine.before_execute = kill
        got = run_turns(engine, turns, prefix="y")
        assert engine.worker.stats["load_errors"] >= 1
        assert_same_outputs(got, want)  # served without strata, recomputed
        engine.close()
    finally:
        node.stop()


def test_harness_detects_wrong_kv(extra):
    """The harness has the power to see a bad load: every loaded page scattered into the
    first block (the others keep stale bytes) gives different outputs. (Permuting whole
    blocks would not: attention is a function of the set of (k, v) pairs, positions being
    inside k, in this model as in real ones.)"""
    model = TinyPagedModel(seed=11)
    turns = conversation(seed=12, turns=2)
    want = run_turns(MiniVllm(model), turns)

    class Misplaced(StrataConnector):
        def build_connector_meta(self, scheduler_output):
            meta = super().build_connector_meta(scheduler_output)
            for load in meta.loads:
                load.block_ids = [load.block_ids[0]] * len(load.block_ids)
            return meta

    engine = MiniVllm(model, Misplaced, extra)
    got = run_turns(engine, turns)
    assert engine.worker.stats["loads"] == 1
    assert got[1].output != want[1].output or any(
        not torch.allclose(a, b, atol=1e-4) for a, b in zip(got[1].logits, want[1].logits))
    engine.close()


def test_layout_mismatch_is_refused(extra):
    model = TinyPagedModel(seed=13, head_dim=8)
    engine_extra = dict(extra, layout="layers=4,kv_heads=2,head_dim=16,dtype=fp32,page_tokens=8")
    with pytest.raises(strata.InvalidArgument, match="layout says"):
        MiniVllm(model, StrataConnector, engine_extra)


def test_tensor_parallel_ranks(extra):
    """Two TP ranks, each with its own KV heads in its own namespace: loads and saves per rank."""
    model = TinyPagedModel(seed=14, kv_heads=2)
    turns = conversation(seed=15, turns=3)
    want = run_turns(MiniVllm(model), turns)
    engine = MiniVllm(model, StrataConnector, extra, tp=2)
    got = run_turns(engine, turns)
    assert_same_outputs(got, want)
    for w in engine.workers:
        assert w.stats["loads"] == 2 and w.stats["load_errors"] == 0 and w.stats["save_errors"] == 0
    assert engine.workers[0].namespace != engine.workers[1].namespace
    engine.close()


def test_a_load_failing_on_one_rank_saves_nothing_on_any(extra):
    """Rank 1's blobs are gone when the load runs; rank 0's load succeeds. Both ranks' new
    pages of that step were computed over the missing heads (all-reduced), so neither rank may
    save them; a fresh engine afterwards must still compute the right outputs."""
    model = TinyPagedModel(seed=16, kv_heads=2)
    turns = conversation(seed=17, turns=3)
    want = run_turns(MiniVllm(model), turns)
    engine = MiniVllm(model, StrataConnector, extra, tp=2)
    run_turns(engine, turns[:1], prefix="x")

    def drop_rank1(eng, so):
        if eng.scheduler.stats["hit_pages"] and not getattr(eng, "dropped", False):
            eng.dropped = True
            w1 = eng.workers[1]
            blobs, _ = w1.client().list_blobs(w1.namespace)
            for b in blobs:
                try:
                    w1.client().delete(strata.BlobKey(b["key"]))
                except strata.NotFound:  # deleted with a blob above it (a delete takes what continues it)
                    pass

    engine.before_execute = drop_rank1
    got = run_turns(engine, turns, prefix="y")
    assert engine.dropped
    assert engine.workers[1].stats["load_errors"] >= 1 and engine.workers[0].stats["load_errors"] == 0
    assert engine.workers[0].stats["saves_dropped"] >= 1  # rank 0 dropped its saves of that request
    assert_same_outputs(got, want)
    engine.close()
    fresh = MiniVllm(model, StrataConnector, extra, tp=2)
    assert_same_outputs(run_turns(fresh, turns, prefix="z"), want)
    fresh.close()


def test_requests_strata_must_not_serve(extra):
    """Multimodal requests (their KV is not a function of their token ids) are neither loaded
    nor saved; a LoRA adapter gets a namespace of its own."""
    from strata.vllm.connector import request_model
    plain = Request("p", [1] * 20, 1)
    assert request_model("m", plain) == "m"
    plain.mm_features = [object()]
    assert request_model("m", plain) is None
    lora = Request("l", [1] * 20, 1)
    lora.lora_request = type("Lora", (), {"lora_name": "sql-adapter"})()
    assert request_model("m", lora) == "m|lora=sql-adapter"
    model = TinyPagedModel(seed=18)
    engine = MiniVllm(model, StrataConnector, extra)
    r = Request("mm", conversation(19, 1)[0], 3)
    r.mm_features = [object()]
    engine.add_request(r)
    engine.run()
    assert engine.worker.stats["saves"] == 0 and engine.scheduler.stats["lookups"] == 0
    engine.close()


def test_a_chunk_that_does_not_verify(extra):
    """A load that fails verification part-way (DATA_LOSS at layer 2, as libstrata reports a
    corrupt chunk; injected here after the real read) while its parent blob is intact: the
    blocks are reported, vLLM recomputes, and the step's pages are not saved."""
    model = TinyPagedModel(seed=20)
    turns = conversation(seed=21, turns=3)
    want = run_turns(MiniVllm(model), turns)

    class CorruptOnce(StrataConnector):
        corrupted = 0

        def _run_load(self, job):
            if CorruptOnce.corrupted:
                return super()._run_load(job)
            CorruptOnce.corrupted += 1
            for layer in range(2):
                job.on_layer(layer)
            job.finish(strata.DataLoss("chunk layer 2 page 0 does not match its checksum"))

    engine = MiniVllm(model, CorruptOnce, extra)
    got = run_turns(engine, turns, prefix="y")
    assert CorruptOnce.corrupted == 1 and engine.worker.stats["load_errors"] == 1
    assert engine.worker.stats["saves_dropped"] >= 1
    assert_same_outputs(got, want)
    engine.close()
    fresh = MiniVllm(model, StrataConnector, extra)
    assert_same_outputs(run_turns(fresh, turns, prefix="z"), want)
    assert fresh.worker.stats["load_errors"] == 0
    fresh.close()


def test_with_vllms_local_prefix_cache(extra):
    """vLLM's own prefix cache holds some of the prefix (num_computed_tokens > 0 when the
    connector is asked), strata the rest: two conversations interleaved on few blocks evict
    each other's cached tail blocks, so later turns load from strata past a local hit."""
    model = TinyPagedModel(seed=22)
    turns = {"a": conversation(seed=23, turns=4), "b": conversation(seed=24, turns=4)}
    baseline = MiniVllm(model)
    engine = MiniVllm(model, StrataConnector, extra, num_blocks=16, prefix_cache=True)
    history = {"a": [], "b": []}
    mixed = 0
    for i in range(4):
        for name in ("a", "b"):
            history[name] = history[name] + turns[name][i]
            want = baseline.generate(f"w{name}{i}", history[name], 6)
            local, loaded = engine.local_hit_tokens, engine.scheduler.stats["hit_pages"]
            got = engine.generate(f"{name}{i}", history[name], 6)
            mixed += engine.local_hit_tokens > local and engine.scheduler.stats["hit_pages"] > loaded
            assert_same_outputs([got], [want])
            history[name] = history[name] + got.output
    assert mixed >= 1  # a request whose prefix came partly from vLLM's cache, partly from strata
    assert engine.worker.stats["load_errors"] == 0
    engine.close()
