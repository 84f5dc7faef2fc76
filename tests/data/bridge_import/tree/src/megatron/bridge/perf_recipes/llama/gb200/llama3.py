"""Fixture: GB200 Llama 3 8B recipes (one per precision; the FP8-CS one with Megatron-FSDP)."""

from megatron.bridge.perf_recipes.environment import COMMON_PERF_ENV_VARS
from megatron.bridge.perf_recipes.llama.common import (
    CommOverlapConfig,
    ConfigContainer,
    _llama_benchmark_common,
    _perf_precision,
    llama3_8b_pretrain_config,
)


def _layout(cfg, mbs):
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.pipeline_model_parallel_size = 1
    cfg.model.context_parallel_size = 1
    cfg.model.virtual_pipeline_model_parallel_size = None
    cfg.model.sequence_parallel = False
    cfg.train.global_batch_size = 128
    cfg.train.micro_batch_size = mbs


def llama3_8b_pretrain_8gpu_gb200_bf16_config() -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("bf16")
    cfg.tokenizer.vocab_size = 128256
    _layout(cfg, 2)
    cfg.model.cuda_graph_impl = "local"
    cfg.model.cuda_graph_scope = ["full_iteration"]
    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)
    _llama_benchmark_common(cfg)
    cfg.env_vars = {**COMMON_PERF_ENV_VARS, "CUDA_DEVICE_MAX_CONNECTIONS": 32}
    return cfg


def llama3_8b_pretrain_8gpu_gb200_fp8mx_config() -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_mx")
    _layout(cfg, 2)
    cfg.model.cuda_graph_impl = "none"
    _llama_benchmark_common(cfg)
    return cfg


def llama3_8b_pretrain_8gpu_gb200_nvfp4_config() -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("nvfp4")
    cfg.mixed_precision.fp8_dot_product_attention = True
    _layout(cfg, 4)
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "block"
    cfg.model.recompute_num_layers = 4
    _llama_benchmark_common(cfg)
    return cfg


def llama3_8b_pretrain_8gpu_gb200_fp8cs_config() -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_cs")
    _layout(cfg, 2)
    cfg.ddp.use_megatron_fsdp = True
    cfg.ddp.data_parallel_sharding_strategy = "optim_grads_params"
    cfg.ddp.fsdp_double_buffer = True
    cfg.model.gradient_accumulation_fusion = False
    _llama_benchmark_common(cfg)
    return cfg
