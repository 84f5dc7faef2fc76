"""Fixture: the Qwen helpers."""

from megatron.bridge.perf_recipes._common import _benchmark_common, _perf_precision
from megatron.bridge.recipes.qwen.h100.qwen3_moe import (
    qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config as qwen3_30b_a3b_pretrain_config,
)
from megatron.bridge.training.comm_overlap import CommOverlapConfig


def _full_iteration_graphs(cfg) -> None:
    cfg.model.cuda_graph_impl = "full_iteration"
    cfg.model.cuda_graph_scope = []
    cfg.model.moe_paged_stash = True
    cfg.comm_overlap = CommOverlapConfig(
        tp_comm_overlap=False, overlap_moe_expert_parallel_comm=True, delay_wgrad_compute=True
    )
