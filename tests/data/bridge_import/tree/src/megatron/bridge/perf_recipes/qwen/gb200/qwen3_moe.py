"""Fixture: a GB200 Qwen3 30B-A3B recipe (HybridEP, force-balanced routing, full-iteration CUDA graphs)."""

from megatron.bridge.perf_recipes.qwen.common import (
    _benchmark_common,
    _full_iteration_graphs,
    _perf_precision,
    qwen3_30b_a3b_pretrain_config,
)


def qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config():
    cfg = qwen3_30b_a3b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_mx")
    cfg.model.moe_router_force_load_balancing = True
    cfg.model.expert_model_parallel_size = 8
    cfg.train.global_batch_size = 512
    cfg.train.micro_batch_size = 4
    cfg.model.seq_length = 4096
    cfg.model.moe_token_dispatcher_type = "flex"
    cfg.model.moe_flex_dispatcher_backend = "hybridep"
    _benchmark_common(cfg)
    _full_iteration_graphs(cfg)
    return cfg
