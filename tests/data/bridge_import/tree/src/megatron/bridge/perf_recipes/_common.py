"""Fixture: the shared helpers of the performance recipes, in the shape Megatron-Bridge writes them."""

from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.mixed_precision import (
    bf16_mixed,
    bf16_with_fp8_current_scaling_mixed,
    bf16_with_mxfp8_mixed,
    bf16_with_nvfp4_mixed,
)


def _benchmark_common(cfg: ConfigContainer, cross_entropy_impl: str = "te") -> None:
    cfg.train.train_iters = 50
    cfg.train.manual_gc = True
    cfg.checkpoint.save = None
    cfg.rerun_state_machine.check_for_nan_in_loss = False
    if hasattr(cfg.model, "use_transformer_engine_op_fuser") and cfg.model.use_transformer_engine_op_fuser:
        cfg.model.use_transformer_engine_op_fuser = False
    cfg.model.apply_rope_fusion = True
    cfg.model.cross_entropy_fusion_impl = cross_entropy_impl
    cfg.ddp.grad_reduce_in_fp32 = False
    cuda_impl = getattr(cfg.model, "cuda_graph_impl", None)
    cuda_scope = getattr(cfg.model, "cuda_graph_scope", None) or []
    scope_names = {s for s in cuda_scope}
    if cuda_impl == "none":
        cfg.model.cuda_graph_scope = []
    if cuda_impl is not None or scope_names:
        cfg.rng.te_rng_tracker = True


def _perf_precision(compute_dtype: str):
    if compute_dtype == "bf16":
        cfg = bf16_mixed()
    elif compute_dtype == "fp8_cs":
        cfg = bf16_with_fp8_current_scaling_mixed()
        cfg.first_last_layers_bf16 = False
    elif compute_dtype == "fp8_mx":
        cfg = bf16_with_mxfp8_mixed()
    elif compute_dtype == "nvfp4":
        cfg = bf16_with_nvfp4_mixed()
    else:
        raise ValueError(f"Unknown compute_dtype: {compute_dtype}")
    cfg.grad_reduce_in_fp32 = False
    return cfg
