"""Key-addressed pages in strata's token-addressed index (python/strata/sglang/README.md).

Some engine interfaces hand a store only an opaque key per page — SGLang's HiCache L3 keys
(chained SHA-256 page hashes), vLLM's offloading keys (block hashes) — never the tokens. Such
a page is stored as its own one-page blob from sequence page 0, in a namespace of its own
whose layout is an opaque byte layout of exactly the page's size, and whose "tokens" are 8
words derived from the key (SHA-256 of the key and the part of the page). The key already
names the whole prefix, so one page per blob loses nothing the engine relies on; what strata
cannot do with such pages: rebuild them from text (their tokens are not the model's), match
a prefix across pages in one radix walk (each page is looked up on its own; match_many asks
for many in one round trip).
"""
from __future__ import annotations

import hashlib
from typing import Union

import numpy as np

import strata

KEY_PAGE_TOKENS = 8  # one SHA-256 digest, as 8 32-bit words


def key_tokens(key: Union[str, bytes], part: Union[int, str] = 0) -> np.ndarray:
    raw = key if isinstance(key, bytes) else key.encode()
    digest = hashlib.sha256(raw + b"/" + str(part).encode()).digest()
    return np.frombuffer(digest, dtype="<u4").astype(np.uint32)


def opaque_layout(page_bytes: int, tp_rank: int = 0, tp_world: int = 1) -> strata.KvLayout:
    """A uint8 layout whose page is exactly `page_bytes`: layers x head_dim bytes per token of
    KEY_PAGE_TOKENS tokens (checksum chunks are its layers)."""
    if page_bytes <= 0 or page_bytes % KEY_PAGE_TOKENS:
        raise strata.InvalidArgument(f"a page of {page_bytes} bytes is not a multiple of {KEY_PAGE_TOKENS}")
    per_token = page_bytes // KEY_PAGE_TOKENS
    for layers in range(1, 1025):
        if per_token % layers == 0 and per_token // layers <= 16384:
            return strata.KvLayout(num_layers=layers, num_kv_heads=1, head_dim=per_token // layers, dtype="uint8",
                                   page_tokens=KEY_PAGE_TOKENS, format="mla", tp_rank=tp_rank, tp_world=tp_world)
    raise strata.InvalidArgument(f"a page of {page_bytes} bytes has no layout of at most 1024 x 16384 x "
                                 f"{KEY_PAGE_TOKENS} bytes")
