"""Fixture (old layout, v0.4.0): the workload settings, one constant per machine x precision x variant.

V2 of FP8-CS uses 16 GPUs and twice the GBS (a row at 8 GPUs ran --config_variant v1).
"""
from dataclasses import replace

from utils.utils import WorkloadBaseConfig

BASE_QWEN3_30B_A3B_CONFIG = WorkloadBaseConfig(
    expert_model_parallel_size=8,
    expert_tensor_parallel_size=1,
    global_batch_size=512,
)

QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V1 = replace(
    BASE_QWEN3_30B_A3B_CONFIG,
    num_gpus=8,
    micro_batch_size=4,
    moe_flex_dispatcher_backend="hybridep",
    cuda_graph_impl="transformer_engine",
    cuda_graph_scope=["moe_router", "moe_preprocess"],
)

QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 = replace(
    QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V1,
    num_gpus=16,
    micro_batch_size=2,
    global_batch_size=1024,
)

QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 = QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_CS_V1

# Decoys: a reserved model's settings are never evaluated (neither value is one the reader could evaluate).
DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 = replace(BASE_QWEN3_30B_A3B_CONFIG, not_a_field=decoy())
LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 = replace(BASE_QWEN3_30B_A3B_CONFIG, not_a_field=1)
QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_BF16_V1 = LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_MX_V1
