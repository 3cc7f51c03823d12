"""The SGLang connectors against a real strata-node, driven in SGLang's call order
(engines/sglang_harness.py) over a paged-attention model in torch: outputs with KV from
strata equal outputs with the KV recomputed; the HiCache backend's pages round-trip byte for
byte and serve a second instance."""
from __future__ import annotations

import uuid

import pytest
import torch

import strata
from conftest import Node
from engines.sglang_harness import DevicePool, HostPool, LayerFirstHostPool, MiniSGLang, sglang_page_hashes
from engines.tiny_model import TinyPagedModel
from strata.sglang import StrataHiCacheStorage, StrataKVConnector
from strata.sglang._standin import HiCacheStorageConfig


def turns(seed: int, n: int, length: int = 21):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 101, (length,), generator=g).tolist() for _ in range(n)]


def converse(engine: MiniSGLang, user_turns, max_tokens: int = 9):
    history, results = [], []
    for i, user in enumerate(user_turns):
        history = history + user
        out, logits = engine.generate(f"r{i}", history, max_tokens)
        results.append((out, logits))
        history = history + out
    return results


def assert_same(got, want, atol=1e-4):
    for (go, gl), (wo, wl) in zip(got, want):
        assert go == wo
        for a, b in zip(gl, wl):
            assert torch.allclose(a, b, atol=atol), (a - b).abs().max()


@pytest.fixture
def config(shared_node):
    return {"node": shared_node.address, "tenant": "sglang-tests", "model": f"tiny-{uuid.uuid4().hex[:8]}",
            "timeout": 10}


def factory(config):
    return lambda pool: StrataKVConnector(params=config, tp_rank=0, kvcache=pool)


# ---------------------------------------------------------------- BaseKVConnector

@pytest.mark.parametrize("use_prefetch", [True, False])
def test_kv_connector_multi_turn_equals_recompute(config, use_prefetch):
    model = TinyPagedModel(seed=21, layout="sglang")
    user = turns(22, 4)
    want = converse(MiniSGLang(model), user)
    engine = MiniSGLang(model, factory(config), use_prefetch=use_prefetch)
    got = converse(engine, user)
    assert_same(got, want)
    st = engine.connector.stats
    assert st["hit_tokens"] > 0 and st["load_failures"] == 0 and st["store_failures"] == 0
    # Each turn stored only the pages strata did not have (the previous turns' are matched).
    total_pages = (sum(len(u) for u in user) + 4 * 9 - 1) // 8
    assert st["stored_pages"] == total_pages
    engine.connector.shutdown()


def test_kv_connector_failed_read_is_not_a_hit(config):
    """The node dies while the prefix is read: no hit is reported, SGLang computes it all."""
    node = Node()
    try:
        model = TinyPagedModel(seed=23, layout="sglang")
        user = turns(24, 2)
        want = converse(MiniSGLang(model), user)
        cfg = dict(config, node=node.address, timeout=3)

        class KillFirst(StrataKVConnector):
            killed = False

            def _read_pages(self, segments, staging, pages):
                if not KillFirst.killed:
                    KillFirst.killed = True
                    node.kill()
                return super()._read_pages(segments, staging, pages)

        engine = MiniSGLang(model, lambda pool: KillFirst(params=cfg, kvcache=pool))
        got = converse(engine, user)
        assert KillFirst.killed and engine.connector.stats["load_failures"] >= 1
        assert_same(got, want)
        engine.connector.shutdown()
    finally:
        node.stop()


def test_kv_connector_text_pages_are_a_miss_and_queue_rebuild(config):
    model = TinyPagedModel(seed=25, layout="sglang")
    user = turns(26, 2)
    engine = MiniSGLang(model, factory(config))
    converse(engine, user[:1])
    c = engine.connector
    c.client.evict(strata.Tier.DRAM, 1 << 40)  # the bytes are dropped, the tokens kept
    mask = torch.ones(len(user[0]), dtype=torch.bool)
    assert c.get_new_hit_length(user[0], mask, True, "q") == 0
    assert c.client.tiers()["rebuild"]["queued"] >= 1  # the TEXT pages were queued for rebuild
    want = converse(MiniSGLang(model), user)
    assert_same(converse(engine, user), want)
    c.shutdown()


# ---------------------------------------------------------------- HiCache L3 backend

def storage(config, tp_rank=0, tp_size=1, mla=False) -> StrataHiCacheStorage:
    cfg = HiCacheStorageConfig(tp_rank=tp_rank, tp_size=tp_size, is_mla_model=mla, is_page_first_layout=True,
                               model_name=config["model"], extra_config=dict(config, interface_v1=1))
    return StrataHiCacheStorage(cfg, {})


def test_hicache_prefill_on_one_instance_decode_on_another(config):
    model = TinyPagedModel(seed=31, layout="sglang")
    page = 8
    prompt = turns(32, 1, length=43)[0]
    keys = sglang_page_hashes(prompt, page)
    pages = len(keys)

    # Instance A computes the prompt, backs its pages up to the host pool, then to strata.
    a = MiniSGLang(model)
    want_out, want_logits = a.generate("a", prompt, 8)  # the reference continuation
    dev_a = DevicePool(model, 32, page)
    a.pool = dev_a
    row = dev_a.alloc(len(prompt))[:len(prompt)]
    a._forward(prompt, row, 0, len(prompt))
    host_a = HostPool(model.num_layers, page, 16, model.kv_heads, model.head_dim, dtype=model.kv_dtype)
    host_idx_a = host_a.alloc(pages * page)
    host_a.backup(dev_a, row[:pages * page], host_idx_a)
    sa = storage(config)
    sa.register_mem_pool_host(host_a)
    assert sa.batch_exists(keys) == 0
    assert sa.batch_set_v1(keys, host_idx_a) == [True] * pages
    assert sa.batch_set_v1(keys[:2], host_idx_a[:2 * page]) == [True, True]  # existing keys succeed

    # Instance B: the L3 prefetch (batch_exists, batch_get_v1) into its own host pool, loaded to
    # its device pool; it computes only the last partial page and decodes.
    sb = storage(config)
    host_b = HostPool(model.num_layers, page, 16, model.kv_heads, model.head_dim, dtype=model.kv_dtype)
    sb.register_mem_pool_host(host_b)
    hit = sb.batch_exists(keys)
    assert hit == pages
    host_idx_b = host_b.alloc(hit * page)
    assert sb.batch_get_v1(keys, host_idx_b) == [True] * pages
    assert torch.equal(host_b.kv_buffer[:, host_idx_b], host_a.kv_buffer[:, host_idx_a])  # byte for byte
    b = MiniSGLang(model, pages=64)
    slots = b.pool.alloc(hit * page)
    host_b.load(b.pool, host_idx_b, slots)
    tokens, out, logits = list(prompt), [], []
    row_b = torch.cat([slots, b._extend(slots, len(tokens))])
    lg = b._forward(tokens, row_b, hit * page, len(tokens))
    for _ in range(8):
        out.append(int(torch.argmax(lg)))
        logits.append(lg)
        tokens.append(out[-1])
        row_b = torch.cat([row_b, b._extend(row_b, len(tokens))])
        lg = b._forward(tokens, row_b, len(tokens) - 1, len(tokens))
    assert_same([(out, logits)], [(want_out, want_logits)])
    sa.close()
    sb.close()


def test_hicache_partial_hits_and_misses(config):
    host = HostPool(4, 8, 16, dtype=torch.float16)
    host.kv_buffer.copy_(torch.randn_like(host.kv_buffer.float()).to(torch.float16))
    s = storage(config)
    s.register_mem_pool_host(host)
    keys = sglang_page_hashes(list(range(48)), 8)  # 6 pages
    idx = host.alloc(6 * 8)
    assert s.batch_set_v1(keys[:4], idx[:32]) == [True] * 4
    assert s.batch_exists(keys) == 4  # consecutive from the start
    # Page 1's V part is deleted: batch_exists stops before it; a get reports it False.
    from strata._keyspace import key_tokens
    s.client.delete(s.namespace.key_for(key_tokens(keys[1], 1)))
    assert s.batch_exists(keys) == 1
    dest = host.alloc(4 * 8)
    assert s.batch_get_v1(keys[:4], dest) == [True, False, True, True]
    assert torch.equal(host.kv_buffer[:, dest[:8]], host.kv_buffer[:, idx[:8]])
    s.close()


def test_hicache_tp_ranks_and_mla(config):
    keys = sglang_page_hashes(list(range(16)), 8)
    pools = [HostPool(2, 8, 4, dtype=torch.bfloat16) for _ in range(2)]
    for r, p in enumerate(pools):
        p.kv_buffer.fill_(r + 1)
    ranks = [storage(config, tp_rank=r, tp_size=2) for r in range(2)]
    for st, p in zip(ranks, pools):
        st.register_mem_pool_host(p)
        assert st.batch_set_v1(keys, p.alloc(16)) == [True, True]
    for r, st in enumerate(ranks):  # each rank reads its own heads' pages under the same keys
        back = HostPool(2, 8, 4, dtype=torch.bfloat16)
        st.register_mem_pool_host(back)
        assert st.batch_get_v1(keys, back.alloc(16)) == [True, True]
        assert torch.all(back.kv_buffer[:, :16] == r + 1)
        st.close()
    # MLA: one part per page, written by rank 0 and read by every rank.
    mla = HostPool(3, 8, 4, head_dim=64, mla=True, dtype=torch.bfloat16)
    mla.kv_buffer.normal_()
    writer, reader = storage(config, 0, 2, mla=True), storage(config, 1, 2, mla=True)
    writer.register_mem_pool_host(mla)
    assert writer.batch_set_v1(keys, mla.alloc(16)) == [True, True]
    other = HostPool(3, 8, 4, head_dim=64, mla=True, dtype=torch.bfloat16)
    reader.register_mem_pool_host(other)
    assert reader.batch_exists(keys) == 2
    assert reader.batch_get_v1(keys, other.alloc(16)) == [True, True]
    assert torch.equal(other.kv_buffer[:16], mla.kv_buffer[:16])
    writer.close()
    reader.close()


def test_hicache_layer_first_beyond_one_lookup_call(config):
    """layer_first: a blob per layer and side, 80 parts a page; 60 pages are 4800 lookups, more
    than one match_many call takes. (Each 256-byte part takes a whole DRAM extent on the node:
    4800 of them need more than the shared 64 MiB node; layer_first is the wasteful layout.)"""
    node = Node(dram_bytes="1GiB")
    config = dict(config, node=node.address)
    host = LayerFirstHostPool(40, 8, 64, dtype=torch.float16)
    host.kv_buffer.copy_(torch.randn(host.kv_buffer.shape).to(torch.float16))
    s = storage(config)
    s.register_mem_pool_host(host)
    keys = sglang_page_hashes(list(range(480)), 8)
    idx = host.alloc(60 * 8)
    assert s.batch_set_v1(keys, idx) == [True] * 60
    assert s.batch_exists(keys) == 60
    other = LayerFirstHostPool(40, 8, 64, dtype=torch.float16)
    s.register_mem_pool_host(other)
    dest = other.alloc(60 * 8)
    assert s.batch_get_v1(keys, dest) == [True] * 60
    assert torch.equal(other.kv_buffer[:, :, dest], host.kv_buffer[:, :, idx])
    s.close()
    node.stop()


def test_hicache_on_a_static_cluster(config):
    """On a cluster client match_many is a node's own call: batch_exists asks key by key."""
    a, b = Node(), Node()
    try:
        cfg = {k: v for k, v in config.items() if k != "node"}
        cfg["cluster_nodes"] = [a.address, b.address]
        host = HostPool(2, 8, 8, dtype=torch.bfloat16)
        host.kv_buffer.normal_()
        s = storage(cfg)
        s.register_mem_pool_host(host)
        keys = sglang_page_hashes(list(range(40)), 8)
        assert s.batch_set_v1(keys[:4], host.alloc(32)) == [True] * 4
        assert s.batch_exists(keys) == 4
        back = HostPool(2, 8, 8, dtype=torch.bfloat16)
        s.register_mem_pool_host(back)
        assert s.batch_get_v1(keys[:4], back.alloc(32)) == [True] * 4
        assert torch.equal(back.kv_buffer[:, :32], host.kv_buffer[:, :32])
        s.close()
    finally:
        a.stop()
        b.stop()
