"""strata for vLLM: the KV connector (StrataConnector) and an offloading tier.

    --kv-transfer-config '{"kv_connector": "StrataConnector", "kv_connector_module_path": "strata.vllm",
                           "kv_role": "kv_both", "kv_load_failure_policy": "recompute",
                           "kv_connector_extra_config": {"node": "127.0.0.1:7400"}}'

See python/strata/vllm/README.md for what each call does, the vLLM version and files the
connector follows, and what was tested without vLLM.
"""
from strata.vllm.connector import (HAVE_VLLM, LoadSpec, SaveSpec, StrataConnector, StrataConnectorMetadata,
                                   layout_from_vllm_config)

__all__ = ["HAVE_VLLM", "LoadSpec", "SaveSpec", "StrataConnector", "StrataConnectorMetadata",
           "layout_from_vllm_config"]
