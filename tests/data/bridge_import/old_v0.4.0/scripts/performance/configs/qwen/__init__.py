"""Fixture (old layout): the family package re-exports the builders and the workload settings."""
try:
    import megatron.bridge  # noqa: F401

    HAVE_MEGATRON_BRIDGE = True
except ModuleNotFoundError:
    HAVE_MEGATRON_BRIDGE = False

if HAVE_MEGATRON_BRIDGE:
    from .qwen3_llm_pretrain import qwen3_30b_a3b_pretrain_config_gb200

from .qwen3_workload_base_configs import (
    QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1,
    QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V1,
    QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V2,
)
from .deepseek_v3_workload_base_configs import DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1
