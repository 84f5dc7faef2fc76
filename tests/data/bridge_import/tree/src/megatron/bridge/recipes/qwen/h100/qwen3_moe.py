"""Fixture: the Qwen3 30B-A3B base recipe (the model is the Hub's config of Qwen/Qwen3-30B-A3B)."""

from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import _pretrain_common

_MODEL_ID = "Qwen/Qwen3-30B-A3B"


def qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config():
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained(_MODEL_ID, revision="main").to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.pipeline_model_parallel_size = 1
    cfg.model.expert_model_parallel_size = 4
    cfg.model.expert_tensor_parallel_size = 1
    cfg.model.sequence_parallel = False
    cfg.model.moe_grouped_gemm = True
    cfg.model.moe_permute_fusion = True
    cfg.model.cross_entropy_loss_fusion = True
    return cfg
