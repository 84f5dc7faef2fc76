"""Fixture (old layout, v0.4.0): the GB200 builder of Qwen3 30B-A3B."""
from utils.overrides import set_workload_base_configs
from utils.precision import get_precision_config
from utils.utils import get_workload_base_config

from megatron.bridge.recipes.qwen.qwen3_moe import qwen3_30b_a3b_pretrain_config
from megatron.bridge.training.comm_overlap import CommOverlapConfig


def set_qwen3_common_configs(cfg):
    cfg.model.bias_activation_fusion = True
    cfg.model.recompute_granularity = None
    cfg.model.recompute_method = None
    cfg.model.moe_router_fusion = True
    cfg.model.seq_length = 4096
    cfg.dataset.sequence_length = 4096
    cfg.model.moe_router_force_load_balancing = True
    cfg.mixed_precision.grad_reduce_in_fp32 = False
    cfg.ddp.grad_reduce_in_fp32 = False


def qwen3_30b_a3b_pretrain_config_gb200(precision="bf16", mock=True, config_variant="v1"):
    base_cfg = get_workload_base_config(
        model_family_name="qwen",
        model_recipe_name="qwen3_30b_a3b",
        gpu="gb200",
        compute_dtype=precision.upper(),
        task="pretrain",
        config_variant=config_variant,
    )
    cfg = qwen3_30b_a3b_pretrain_config()
    cfg.mixed_precision = get_precision_config(precision)
    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=True)
    cfg.model.moe_flex_dispatcher_backend = base_cfg.moe_flex_dispatcher_backend
    cfg.model.moe_token_dispatcher_type = "flex"
    set_qwen3_common_configs(cfg)
    set_workload_base_configs(cfg, base_cfg)
    return cfg


def deepseek_v3_pretrain_config_gb200(precision="bf16", mock=True, config_variant="v1"):
    return decoy_of_a_reserved_model(precision)
