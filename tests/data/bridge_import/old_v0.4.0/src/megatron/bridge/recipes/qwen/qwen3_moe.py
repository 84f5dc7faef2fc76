"""Fixture (old layout, v0.4.0): the Qwen3 30B-A3B base recipe; the perf script overrides its layout."""

from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.flex_dispatcher_backend import apply_flex_dispatcher_backend


def qwen3_30b_a3b_pretrain_config():
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("Qwen/Qwen3-30B-A3B").to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size = 4
    cfg.model.expert_model_parallel_size = 4
    cfg.model.sequence_parallel = True
    cfg.model.moe_token_dispatcher_type = "alltoall"
    cfg.model.moe_flex_dispatcher_backend = "deepep"
    cfg.model.moe_grouped_gemm = True
    cfg.model.moe_permute_fusion = True
    cfg.model.cross_entropy_loss_fusion = True
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    apply_flex_dispatcher_backend(cfg.model, cfg.model.moe_flex_dispatcher_backend)
    return cfg
