"""Moving pages between an engine's paged KV cache (torch tensors) and strata's blob layout.

strata's bytes of n pages are layer-major: layer l, page p at (l * n + p) * bytes_per_layer_page,
one layer-page being the K block [page_tokens][kv_heads][head_dim] then the V block (MLA: one
latent block). A staging buffer of n pages is one uint8 tensor of pages_bytes(n) bytes on the
engine's device; ``layer_view(l)`` is layer l's n pages as (n, elements of a layer-page) in the
cache's dtype. The adapters gather an engine layer's blocks into such a view and scatter it back.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch

import strata

_DTYPES = {
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.float32: "fp32",
    torch.int8: "int8",
    torch.uint8: "uint8",
}
for _name, _strata_name in (("float8_e4m3fn", "fp8_e4m3"), ("float8_e5m2", "fp8_e5m2")):
    if hasattr(torch, _name):
        _DTYPES[getattr(torch, _name)] = _strata_name


def strata_dtype(dtype: torch.dtype) -> str:
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise strata.InvalidArgument(f"KV cache dtype {dtype} has no strata dtype") from None


class Staging:
    """n pages of every layer in strata's layout, on `device`."""

    def __init__(self, layout: strata.KvLayout, pages: int, dtype: torch.dtype, device: torch.device):
        self.layout = layout
        self.pages = pages
        self.dtype = dtype
        self.buffer = torch.empty(layout.pages_bytes(pages), dtype=torch.uint8, device=device)

    def layer_view(self, layer: int) -> torch.Tensor:
        span = self.pages * self.layout.bytes_per_layer_page
        return self.buffer[layer * span:(layer + 1) * span].view(self.dtype).view(self.pages, -1)


class VllmLayerAdapter:
    """One vLLM layer's paged KV tensor, by the attention backend's shape:

      flash_attn  (2, num_blocks, block_size, kv_heads, head_dim)   K = [0], V = [1]
      flashinfer  (num_blocks, 2, block_size, kv_heads, head_dim)
      mla         (num_blocks, block_size, latent_dim)
    """

    KINDS = ("flash_attn", "flashinfer", "mla")

    def __init__(self, kind: str):
        if kind not in self.KINDS:
            raise strata.InvalidArgument(f"kv_cache_layout {kind!r}: one of {self.KINDS}")
        self.kind = kind

    @staticmethod
    def detect(kv: torch.Tensor) -> str:
        if kv.dim() == 3:
            return "mla"
        if kv.dim() == 5 and kv.shape[0] == 2:
            return "flash_attn"
        if kv.dim() == 5 and kv.shape[1] == 2:
            return "flashinfer"
        raise strata.InvalidArgument(f"KV cache tensor of shape {tuple(kv.shape)}: not a layout strata knows "
                                     "(set kv_connector_extra_config.kv_cache_layout)")

    def page_shape(self, kv: torch.Tensor) -> tuple:
        """(block_size, kv_heads, head_dim) of one block."""
        if self.kind == "mla":
            return (kv.shape[1], 1, kv.shape[2])
        return tuple(kv.shape[2:5])

    # flashinfer and mla keep a block's bytes (K then V, or the latent) together, as strata's
    # layer-page does; flash_attn splits K and V across its first dimension.
    def gather(self, kv: torch.Tensor, blocks: torch.Tensor, out: torch.Tensor) -> None:
        n = blocks.numel()
        if self.kind == "flash_attn":
            out.view(n, 2, -1).copy_(kv[:, blocks].reshape(2, n, -1).transpose(0, 1))
        else:
            out.view(n, -1).copy_(kv[blocks].reshape(n, -1))

    def scatter(self, kv: torch.Tensor, blocks: torch.Tensor, src: torch.Tensor) -> None:
        n = blocks.numel()
        if self.kind == "flash_attn":
            kv[:, blocks] = src.view(n, 2, *kv.shape[2:]).transpose(0, 1)
        else:
            kv[blocks] = src.view(n, *kv.shape[1:])


def block_tensor(ids: Sequence[int], device: torch.device) -> torch.Tensor:
    return torch.as_tensor(list(ids), dtype=torch.long, device=device)


def cut_segments(match: strata.MatchResult, first_page: int, end_page: int) -> List[strata.Segment]:
    """The match's sequence pages [first_page, end_page) as segments re-based to page 0: what a
    read of those pages into a buffer of end_page - first_page pages takes."""
    out = []
    for seg in match.segments:
        lo, hi = max(seg.seq_page_begin, first_page), min(seg.seq_page_begin + seg.page_count, end_page)
        if lo < hi:
            out.append(strata.Segment(seg.blob, seg.blob_page_offset + lo - seg.seq_page_begin, hi - lo,
                                      lo - first_page))
    return out


def parent_at(match: strata.MatchResult, pages: int) -> Optional[strata.Parent]:
    """The Parent of a blob continuing the match's first `pages` pages: the segment with bytes
    that holds page pages - 1; None for pages 0 or when no such segment is matched."""
    for seg in match.segments:
        if pages and seg.tier != strata.Tier.TEXT and seg.seq_page_begin < pages <= seg.seq_page_begin + seg.page_count:
            return strata.Parent(seg.blob, pages)
    return None
