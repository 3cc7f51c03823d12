"""A small paged-attention transformer in torch, for the engine harnesses.

Every layer projects each token to q, k, v, writes k and v into a paged KV cache (per-layer
tensors in vLLM's flash_attn (2, blocks, block_size, heads, head_dim) or flashinfer
(blocks, 2, block_size, heads, head_dim) shape, or SGLang's per-layer k_buffer and v_buffer
[slots, heads, head_dim]), and attends over the whole context gathered
from the cache by slot; an MLP follows. A token's KV in layer l depends on every earlier token
through the attention of the layers below, as a real model's does: KV loaded into the wrong
blocks, the wrong layer or with wrong bytes changes the outputs.

Hooks let a harness act per layer: ``before_attention(layer)`` (vLLM's wait_for_layer_load)
runs before the layer reads the cache, ``after_attention(layer, kv)`` (save_kv_layer) after
it wrote this step's KV.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, List, Optional

import torch


@dataclass
class SeqBatch:
    """One request's tokens in a forward pass."""
    tokens: torch.Tensor      # [n] token ids computed this step
    positions: torch.Tensor   # [n] their positions
    slots: torch.Tensor       # [n] cache slots (block * block_size + offset) they are written to
    context_slots: torch.Tensor  # [positions[-1] + 1] slots of positions 0..last (read by attention)


class TinyPagedModel:
    def __init__(self, num_layers: int = 4, kv_heads: int = 2, head_dim: int = 8, vocab: int = 101,
                 seed: int = 0, kv_dtype: torch.dtype = torch.float32, layout: str = "flash_attn"):
        g = torch.Generator().manual_seed(seed)
        self.num_layers, self.kv_heads, self.head_dim, self.vocab = num_layers, kv_heads, head_dim, vocab
        self.hidden = kv_heads * head_dim
        self.kv_dtype = kv_dtype
        self.layout = layout
        h = self.hidden

        def w(*shape, scale=1.0):
            return torch.randn(*shape, generator=g) * scale / math.sqrt(shape[0])

        self.embed = torch.randn(vocab, h, generator=g)
        self.layers = [dict(q=w(h, h), k=w(h, h), v=w(h, h), o=w(h, h), up=w(h, 2 * h), down=w(2 * h, h))
                       for _ in range(num_layers)]
        self.out = w(h, vocab)

    def new_cache(self, num_blocks: int, block_size: int) -> List[torch.Tensor]:
        if self.layout == "sglang":  # per layer (k_buffer, v_buffer), each [slots, heads, head_dim]
            slots = num_blocks * block_size
            return [(torch.zeros(slots, self.kv_heads, self.head_dim, dtype=self.kv_dtype),
                     torch.zeros(slots, self.kv_heads, self.head_dim, dtype=self.kv_dtype))
                    for _ in range(self.num_layers)]
        shape = ((2, num_blocks, block_size, self.kv_heads, self.head_dim) if self.layout == "flash_attn"
                 else (num_blocks, 2, block_size, self.kv_heads, self.head_dim))
        return [torch.zeros(shape, dtype=self.kv_dtype) for _ in range(self.num_layers)]

    def _write(self, kv: torch.Tensor, slots: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        if self.layout == "sglang":
            kv[0][slots] = k.to(kv[0].dtype)
            kv[1][slots] = v.to(kv[1].dtype)
            return
        bs = kv.shape[2]
        blocks, offsets = slots // bs, slots % bs
        if self.layout == "flash_attn":
            kv[0, blocks, offsets] = k.to(kv.dtype)
            kv[1, blocks, offsets] = v.to(kv.dtype)
        else:
            kv[blocks, 0, offsets] = k.to(kv.dtype)
            kv[blocks, 1, offsets] = v.to(kv.dtype)

    def _read(self, kv: torch.Tensor, slots: torch.Tensor):
        if self.layout == "sglang":
            return kv[0][slots].float(), kv[1][slots].float()
        bs = kv.shape[2]
        blocks, offsets = slots // bs, slots % bs
        if self.layout == "flash_attn":
            return kv[0, blocks, offsets].float(), kv[1, blocks, offsets].float()
        return kv[blocks, 0, offsets].float(), kv[blocks, 1, offsets].float()

    def forward(self, batch: List[SeqBatch], cache: List[torch.Tensor],
                before_attention: Optional[Callable[[int], None]] = None,
                after_attention: Optional[Callable[[int, torch.Tensor], None]] = None) -> List[torch.Tensor]:
        """Logits of the last token of each sequence in `batch`."""
        H, D = self.kv_heads, self.head_dim
        xs = [self.embed[s.tokens] + self._positional(s.positions) for s in batch]
        for l, p in enumerate(self.layers):
            if before_attention:
                before_attention(l)
            kv = cache[l]
            for s, x in zip(batch, xs):
                self._write(kv, s.slots, (x @ p["k"]).view(-1, H, D), (x @ p["v"]).view(-1, H, D))
            if after_attention:
                after_attention(l, kv)
            for i, (s, x) in enumerate(zip(batch, xs)):
                q = (x @ p["q"]).view(-1, H, D)
                k_ctx, v_ctx = self._read(kv, s.context_slots)
                scores = torch.einsum("nhd,thd->hnt", q, k_ctx) / math.sqrt(D)
                t = torch.arange(k_ctx.shape[0])
                scores = scores.masked_fill(t[None, None, :] > s.positions[None, :, None], float("-inf"))
                attn = torch.einsum("hnt,thd->nhd", torch.softmax(scores, dim=-1), v_ctx).reshape(-1, H * D)
                x = x + attn @ p["o"]
                xs[i] = x + torch.tanh(x @ p["up"]) @ p["down"]
        return [x[-1] @ self.out for x in xs]

    def _positional(self, positions: torch.Tensor) -> torch.Tensor:
        i = torch.arange(self.hidden, dtype=torch.float32)
        angle = positions.float()[:, None] / torch.pow(10000.0, i[None, :] / self.hidden)
        return 0.5 * torch.where(i[None, :] % 2 == 0, torch.sin(angle), torch.cos(angle))
