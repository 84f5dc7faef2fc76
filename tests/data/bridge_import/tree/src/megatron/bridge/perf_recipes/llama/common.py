"""Fixture: the Llama helpers; the reserved base recipe is imported here and must never be opened."""

from megatron.bridge.perf_recipes._common import _benchmark_common, _perf_precision
from megatron.bridge.recipes.llama.llama3 import llama3_8b_pretrain_config
from megatron.bridge.recipes.llama.llama31 import llama31_405b_pretrain_config
from megatron.bridge.training.comm_overlap import CommOverlapConfig
from megatron.bridge.training.config import ConfigContainer


def _llama_benchmark_common(cfg: ConfigContainer) -> None:
    _benchmark_common(cfg)
    cfg.model.moe_token_dispatcher_type = "alltoall"
