"""Fixture: an H100 recipe the reader cannot follow (a loop sets the tensor-parallel size)."""

from megatron.bridge.perf_recipes.llama.common import _llama_benchmark_common, _perf_precision, llama3_8b_pretrain_config


def llama3_8b_pretrain_8gpu_h100_fp8cs_config():
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_cs")
    for size in (1, 2):
        cfg.model.tensor_model_parallel_size = size
    cfg.train.micro_batch_size = 1
    _llama_benchmark_common(cfg)
    return cfg
