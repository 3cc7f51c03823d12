"""strata for SGLang: a HiCache L3 storage backend and a token-aware KV connector.

    strata.sglang.hicache.StrataHiCacheStorage    --hicache-storage-backend dynamic (keys only)
    strata.sglang.connector.StrataKVConnector     BaseKVConnector (token ids, GPU slot indices)

See python/strata/sglang/README.md: the SGLang version and files they follow, how HiCache's
page-hash keys map onto strata's index and what that loses, and what was tested without SGLang.
"""
from strata.sglang.connector import StrataKVConnector
from strata.sglang.hicache import StrataHiCacheStorage

__all__ = ["StrataHiCacheStorage", "StrataKVConnector"]
