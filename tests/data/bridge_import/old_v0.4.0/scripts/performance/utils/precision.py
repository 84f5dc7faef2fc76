"""Fixture (old layout): --compute_dtype -> the mixed-precision recipe."""
from megatron.bridge.training.mixed_precision import (
    bf16_mixed,
    bf16_with_fp8_current_scaling_mixed,
    bf16_with_mxfp8_mixed,
)


def get_precision_config(compute_dtype: str):
    if compute_dtype == "fp8_cs":
        cfg = bf16_with_fp8_current_scaling_mixed()
        cfg.first_last_layers_bf16 = False
        return cfg
    elif compute_dtype == "fp8_mx":
        return bf16_with_mxfp8_mixed()
    elif compute_dtype == "bf16":
        return bf16_mixed()
    raise ValueError(compute_dtype)
