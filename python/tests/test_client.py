"""strata.Client against a real strata-node: reads and writes through every kind of buffer,
errors by status code, async and batch forms, the GIL released while bytes move."""
from __future__ import annotations

import array
import threading
import time

import numpy as np
import pytest
import torch

import strata
from conftest import LAYOUT, Node, tokens_for


def expected(model: strata.ReferenceModel, tokens, first_page: int, pages: int) -> bytes:
    return bytes(model.compute_blob(tokens, first_page, pages))


def test_write_match_read_numpy(client, ns, model):
    tokens = tokens_for(3)
    data = np.frombuffer(model.compute_blob(tokens, 0, 3), dtype=np.uint8)
    result = client.write(ns, tokens, data)
    assert not result.existed and result.indexed_pages == 3
    again = client.write(ns, tokens, data)
    assert again.existed and again.key == result.key

    m = client.match(ns, tokens + [1, 2, 3])  # a trailing partial page is ignored
    assert m.matched_pages == 3 and m.readable_pages == 3
    assert [s.tier for s in m.segments] == [strata.Tier.DRAM]
    assert m.segments[0].blob == result.key
    out = np.zeros(LAYOUT.pages_bytes(3), dtype=np.uint8)
    client.read(ns, m, out)
    assert out.tobytes() == data.tobytes()
    # A prefix of the match: the first page of every layer.
    first = np.zeros(LAYOUT.pages_bytes(1), dtype=np.uint8)
    client.read(ns, m, first, pages=1)
    assert first.tobytes() == expected(model, tokens, 0, 1)
    assert client.read_bytes(ns, m) == data.tobytes()


def test_multi_turn_conversation_with_parents(client, ns, model):
    conversation = tokens_for(2, start=50)
    previous = None
    for turn in range(4):  # each turn adds two pages onto the cached prefix
        if turn == 0:
            with pytest.raises(strata.NotFound, match="not known"):  # a namespace the node never saw
                client.match(ns, conversation, phase=strata.LookupPhase.PREFILL)
            first_page = 0
        else:
            m = client.match(ns, conversation, phase=strata.LookupPhase.MIDFILL)
            assert m.readable_pages == 2 * turn
            assert client.read_bytes(ns, m) == expected(model, conversation, 0, 2 * turn)
            first_page = m.readable_pages
        new_pages = len(conversation) // LAYOUT.page_tokens - first_page
        kv = model.compute_blob(conversation, first_page, new_pages)
        parent = strata.Parent(previous, first_page) if previous else None
        w = client.write(ns, conversation[first_page * 8:], kv, parent=parent)
        previous = w.key
        conversation = conversation + tokens_for(2, start=5000 + 100 * turn)
    m = client.match(ns, conversation)
    assert m.readable_pages == 8 and len(m.segments) == 4
    assert [s.seq_page_begin for s in m.segments] == [0, 2, 4, 6]


def test_torch_tensors_and_other_buffers(client, ns, model):
    tokens = tokens_for(2, start=7)
    kv = model.compute_blob(tokens, 0, 2)
    # Written from a torch tensor (DLPack), read into several kinds of memory.
    source = torch.frombuffer(bytearray(kv), dtype=torch.uint8)
    client.write(ns, torch.tensor(tokens, dtype=torch.int64), source)
    m = client.match(ns, np.array(tokens, dtype=np.uint32))
    assert m.readable_pages == 2
    as_bf16 = torch.empty(len(kv) // 2, dtype=torch.bfloat16)  # the layout's own dtype
    client.read(ns, m, as_bf16)
    assert as_bf16.view(torch.uint8).numpy().tobytes() == bytes(kv)
    shaped = torch.zeros((LAYOUT.num_layers, 2, LAYOUT.bytes_per_layer_page), dtype=torch.uint8)
    client.read(ns, m, shaped)
    assert shaped.numpy().tobytes() == bytes(kv)
    ba = bytearray(len(kv))
    client.read(ns, m, memoryview(ba))
    assert ba == kv
    arr = array.array("B", bytes(len(kv)))
    client.read(ns, m, arr)
    assert arr.tobytes() == bytes(kv)


def test_token_forms_give_the_same_key(client, ns, model):
    tokens = tokens_for(1, start=300)
    kv = model.compute_blob(tokens, 0, 1)
    keys = {client.write(ns, form, kv).key for form in (
        tokens, tuple(tokens), np.array(tokens, dtype=np.int64), np.array(tokens, dtype=np.uint32),
        torch.tensor(tokens, dtype=torch.int32), array.array("I", tokens))}
    assert len(keys) == 1


def test_read_layers_in_order_with_bytes_landed(client, ns, model):
    tokens = tokens_for(3, start=900)
    kv = bytes(model.compute_blob(tokens, 0, 3))
    client.write(ns, tokens, kv)
    m = client.match(ns, tokens)
    out = np.zeros(len(kv), dtype=np.uint8)
    seen = []
    span = 3 * LAYOUT.bytes_per_layer_page

    def on_layer(layer: int) -> None:
        # Layer `layer` has landed and verified when its callback runs.
        assert out[layer * span:(layer + 1) * span].tobytes() == kv[layer * span:(layer + 1) * span]
        seen.append(layer)

    client.read_layers(ns, m, out, on_layer)
    assert seen == list(range(LAYOUT.num_layers))

    class Stop(Exception):
        pass

    def stop_at_two(layer: int) -> None:
        if layer == 2:
            raise Stop("enough")

    with pytest.raises(Stop):
        client.read_layers(ns, m, out, stop_at_two)
    client.read(ns, m, out)  # the client is fine afterwards
    assert out.tobytes() == kv


def test_errors_map_status_codes(client, ns, model):
    tokens = tokens_for(2, start=4000)
    kv = model.compute_blob(tokens, 0, 2)
    w = client.write(ns, tokens, kv)
    m = client.match(ns, tokens)

    with pytest.raises(strata.InvalidArgument) as e:
        client.read(ns, m, bytearray(len(kv) - 1))  # one byte short
    assert e.value.code == "INVALID_ARGUMENT" and isinstance(e.value, ValueError)
    with pytest.raises(strata.InvalidArgument, match="writable"):
        client.read(ns, m, bytes(len(kv)))  # read-only
    with pytest.raises(strata.InvalidArgument, match="contiguous"):
        client.read(ns, m, torch.zeros((len(kv), 2), dtype=torch.uint8)[:, 0])
    with pytest.raises(strata.InvalidArgument, match="requires grad"):
        client.read(ns, m, torch.zeros(len(kv) // 4, dtype=torch.float32, requires_grad=True))
    with pytest.raises(strata.InvalidArgument, match="neither the buffer protocol"):
        client.read(ns, m, object())
    with pytest.raises(strata.InvalidArgument, match="tokens"):
        client.match(ns, [1, -1, 2])
    with pytest.raises(strata.InvalidArgument, match="tokens"):
        client.match(ns, [2**32])
    with pytest.raises(strata.InvalidArgument, match="tokens"):
        client.match(ns, "hello")
    with pytest.raises(strata.InvalidArgument):
        client.write(ns, tokens[:5], kv)  # not whole pages
    with pytest.raises(strata.InvalidArgument):
        client.write(ns, tokens, kv[:-8])  # bytes do not match the pages
    with pytest.raises(strata.InvalidArgument):
        strata.BlobKey("xyz")
    with pytest.raises(strata.NotFound) as e:
        client.stat(strata.BlobKey("0" * 31 + "1"))
    assert isinstance(e.value, LookupError) and e.value.code == "NOT_FOUND"
    # An unknown parent.
    with pytest.raises(strata.FailedPrecondition):
        client.write(ns, tokens_for(1, start=1), kv[:LAYOUT.bytes_per_page],
                     parent=strata.Parent(strata.BlobKey("ab" * 16), 1))
    # A miss after the match: the blob was deleted.
    client.delete(w.key)
    with pytest.raises(strata.NotFound):
        client.read(ns, m, bytearray(len(kv)))
    # Another layout is another namespace: nothing cached there.
    other = strata.Namespace(ns.tenant, ns.model, strata.KvLayout.from_spec(
        "layers=4,kv_heads=2,head_dim=16,dtype=fp16,page_tokens=8"))
    with pytest.raises(strata.NotFound):
        client.match(other, tokens)


def test_async_and_batch_forms(client, ns, model):
    seqs = [tokens_for(2, start=10000 + 100 * i) for i in range(6)]
    blobs = [model.compute_blob(t, 0, 2) for t in seqs]
    futures = [client.write_async(ns, t, b) for t, b in zip(seqs, blobs)]
    keys = [f.result(timeout=30).key for f in futures]
    assert len(set(keys)) == 6

    dests = [bytearray(len(b)) for b in blobs]
    ranges = [strata.ReadRange(k, 0, 2) for k in keys]
    assert client.read_ranges_async(ns, ranges, dests).result(timeout=30) is None
    assert dests == blobs

    m = client.match(ns, seqs[0])
    out = bytearray(len(blobs[0]))
    client.read_async(ns, m, out).result(timeout=30)
    assert out == blobs[0]
    assert client.match_async(ns, seqs[1]).result(timeout=30).readable_pages == 2

    # One miss does not fail the other items.
    client.delete(keys[5])
    outs = [bytearray(len(blobs[4])), bytearray(len(blobs[5]))]
    results = client.read_batch(ns, [(ranges[4], outs[0]), (ranges[5], outs[1])])
    assert results[0] is None and isinstance(results[1], strata.NotFound)
    assert outs[0] == blobs[4]
    failed = client.read_ranges_async(ns, [ranges[5]], [bytearray(len(blobs[5]))])
    with pytest.raises(strata.NotFound):
        failed.result(timeout=30)

    # A chain written as one batch: item 1 continues item 0.
    seq = tokens_for(4, start=20000)
    first = model.compute_blob(seq, 0, 2)
    second = model.compute_blob(seq, 2, 2)
    res = client.write_batch(ns, [(seq[:16], first), (seq[16:], second, 0)])
    assert all(isinstance(r, strata.WriteResult) for r in res)
    assert client.match(ns, seq).readable_pages == 4
    bad = client.write_batch(ns, [(seq[:3], first)])
    assert isinstance(bad[0], strata.InvalidArgument)


def test_admin_calls(client, ns, model):
    tokens = tokens_for(2, start=31000)
    w = client.write(ns, tokens, model.compute_blob(tokens, 0, 2))
    info = client.stat(w.key, include_tokens=True)
    assert info["key"] == w.key.hex and info["pages"] == 2 and info["tokens"] == tokens
    blobs, _ = client.list_blobs(ns)
    assert [b["key"] for b in blobs] == [w.key.hex]
    client.pin(w.key)
    with pytest.raises(strata.FailedPrecondition):
        client.delete(w.key)
    client.unpin(w.key)
    tiers = client.tiers()
    assert tiers["tiers"][0]["tier"] == "dram" and tiers["engine"]["blobs"] >= 1
    health = client.health()
    assert not health["draining"] and health["data_plane"]
    stats = client.stats()
    assert stats["writes_committed"] >= 1 and stats["bytes_written"] >= LAYOUT.pages_bytes(2)
    assert client.delete(w.key)["blobs_unlinked"] == 1


def test_closed_client_raises(shared_node):
    c = strata.Client(shared_node.address)
    c.close()
    assert c.closed
    with pytest.raises(strata.FailedPrecondition, match="closed"):
        c.health()
    c.close()  # twice is fine


def test_gil_released_while_the_node_does_not_answer(fresh_node, ns):
    with strata.Client(fresh_node.address, timeout=20) as c:
        c.health()
        fresh_node.pause()  # the node stops answering: the call waits for its deadline
        outcome = {}

        def call() -> None:
            try:
                c.match(ns, tokens_for(1), timeout=1.5)
            except strata.Error as e:
                outcome["error"] = e

        t = threading.Thread(target=call)
        t.start()
        time.sleep(0.1)  # the call is under way
        iterations = 0
        while t.is_alive():
            iterations += 1  # Python code runs only while the call has the GIL released
        t.join()
        fresh_node.resume()
        assert isinstance(outcome.get("error"), (strata.DeadlineExceeded, strata.Unavailable))
        assert iterations > 10000


def test_node_killed(fresh_node, ns, model):
    with strata.Client(fresh_node.address, timeout=5) as c:
        tokens = tokens_for(1, start=77)
        c.write(ns, tokens, model.compute_blob(tokens, 0, 1))
        fresh_node.kill()
        with pytest.raises((strata.Unavailable, strata.DeadlineExceeded)) as e:
            c.match(ns, tokens, timeout=3)
        assert isinstance(e.value, (ConnectionError, TimeoutError))


def test_device_memory_on_the_host_device(shared_node, ns, model):
    # host_device=True: host memory plays device memory, and the client takes the device
    # path (staged or same-host DMA) for it, as it would for a GPU.
    with strata.Client(shared_node.address, host_device=True, timeout=20) as c:
        tokens = tokens_for(2, start=41000)
        kv = bytes(model.compute_blob(tokens, 0, 2))
        src = c.allocate_device(len(kv))
        src.copy_from_host(kv)
        c.write(ns, tokens, src)  # from device memory
        m = c.match(ns, tokens)
        dst = c.allocate_device(len(kv))
        c.read(ns, m, dst)
        back = bytearray(len(kv))
        dst.copy_to_host(back)
        assert back == kv
        dst2 = c.allocate_device(len(kv))
        c.read(ns, m, dst2.memory())  # the same as a DeviceMemory
        dst2.copy_to_host(back)
        assert back == kv
        s = c.stats()
        assert s["device_writes"] >= 1
        assert s["device_reads_staged"] + s["device_reads_direct"] + s["device_reads_received"] >= 2
        with pytest.raises(strata.InvalidArgument):
            c.read(ns, m, c.allocate_device(len(kv) - 1))
        with pytest.raises(strata.InvalidArgument, match="kind"):
            strata.DeviceMemory(1, 2, kind="gpu")


def test_cluster_of_two_nodes(ns, model):
    a, b = Node(), Node()
    try:
        with strata.Client(cluster_nodes=[a.address, b.address], segment_pages=2, timeout=20) as c:
            assert c.on_cluster and len(c.cluster_nodes()) == 2
            tokens = tokens_for(8, start=60000)
            kv = model.compute_blob(tokens, 0, 8)
            c.write(ns, tokens, kv)
            m = c.match(ns, tokens)
            assert m.readable_pages == 8
            assert c.read_bytes(ns, m) == kv
    finally:
        a.stop()
        b.stop()


def test_key_for_match_many_and_cut_segments(client, ns, model):
    seqs = [tokens_for(1, start=70000 + 10 * i) for i in range(3)]
    keys = [client.write(ns, t, model.compute_blob(t, 0, 1)).key for t in seqs[:2]]
    assert [ns.key_for(t) for t in seqs[:2]] == keys  # computed here, equal to the node's
    answers = client.match_many(ns, seqs)
    assert [a.readable_pages for a in answers] == [1, 1, 0]
    short = client.match_many(ns, [seqs[0], seqs[2], seqs[1]], stop_at_first_short=True)
    assert [a.readable_pages for a in short] == [1, 0]  # stopped at the first miss

    # Pages [1, 3) of a 3-page blob read as pages [0, 2) of a destination.
    t = tokens_for(3, start=80000)
    kv = model.compute_blob(t, 0, 3)
    w = client.write(ns, t, kv)
    seg = strata.Segment(w.key, blob_page_offset=1, page_count=2, seq_page_begin=0, blob_pages=3)
    out = bytearray(LAYOUT.pages_bytes(2))
    client.read(ns, [seg], out, pages=2)
    lp = LAYOUT.bytes_per_layer_page
    assert out == b"".join(bytes(kv[(l * 3 + 1) * lp:(l * 3 + 3) * lp]) for l in range(LAYOUT.num_layers))
