"""Fixture: the public names of the Llama 3 base recipes."""

from megatron.bridge.recipes.llama.h100.llama3 import (
    llama3_8b_pretrain_2gpu_h100_bf16_config as llama3_8b_pretrain_config,
)
