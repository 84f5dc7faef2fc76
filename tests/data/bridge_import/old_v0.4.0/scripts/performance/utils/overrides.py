"""Fixture (old layout): the workload settings applied to the recipe, and the post overrides."""
from megatron.bridge.training.flex_dispatcher_backend import apply_flex_dispatcher_backend
from utils.utils import get_workload_base_config


def _set_cuda_graph_overrides(recipe, cuda_graph_impl=None, cuda_graph_scope=None):
    if isinstance(cuda_graph_scope, str):
        cuda_graph_scope = [cuda_graph_scope]
    if cuda_graph_impl is not None:
        recipe.model.cuda_graph_impl = cuda_graph_impl
        if cuda_graph_impl != "none":
            recipe.rng.te_rng_tracker = recipe.model.use_te_rng_tracker = True
        if cuda_graph_impl == "transformer_engine":
            assert all(scope in ["attn", "moe_router", "moe_preprocess"] for scope in cuda_graph_scope)
    if cuda_graph_scope is not None:
        recipe.model.cuda_graph_scope = cuda_graph_scope
    return recipe


def _set_moe_a2a_overlap_overrides(recipe, moe_a2a_overlap=False):
    if moe_a2a_overlap:
        recipe.comm_overlap.overlap_moe_expert_parallel_comm = True
        recipe.comm_overlap.delay_wgrad_compute = True
    return recipe


def _set_recompute_overrides(recipe, recompute_modules=None):
    if recompute_modules is not None:
        recipe.model.recompute_modules = recompute_modules
        recipe.model.recompute_granularity = "selective"
    return recipe


def set_workload_base_configs(cfg, settings):
    cfg.model.tensor_model_parallel_size = settings.tensor_model_parallel_size
    cfg.model.pipeline_model_parallel_size = settings.pipeline_model_parallel_size
    cfg.model.context_parallel_size = settings.context_parallel_size
    cfg.model.virtual_pipeline_model_parallel_size = settings.virtual_pipeline_model_parallel_size
    cfg.model.expert_model_parallel_size = settings.expert_model_parallel_size
    cfg.model.expert_tensor_parallel_size = settings.expert_tensor_parallel_size
    cfg.model.sequence_parallel = settings.sequence_parallel
    cfg.train.global_batch_size = settings.global_batch_size
    cfg.train.micro_batch_size = settings.micro_batch_size
    _set_cuda_graph_overrides(cfg, cuda_graph_impl=settings.cuda_graph_impl, cuda_graph_scope=settings.cuda_graph_scope)
    _set_moe_a2a_overlap_overrides(cfg, moe_a2a_overlap=settings.moe_a2a_overlap)
    _set_recompute_overrides(cfg, recompute_modules=settings.recompute_modules)
    cfg.model.apply_rope_fusion = True
    if settings.moe_flex_dispatcher_backend is not None:
        apply_flex_dispatcher_backend(cfg.model, settings.moe_flex_dispatcher_backend)
    else:
        cfg.model.moe_token_dispatcher_type = "alltoall"
    return cfg


def set_post_overrides(recipe, model_family_name, model_recipe_name, gpu, num_gpus, compute_dtype, task,
                       user_gbs=None, config_variant="v1"):
    workload_base_config = get_workload_base_config(model_family_name, model_recipe_name, gpu, compute_dtype, task,
                                                    config_variant)
    if compute_dtype == "bf16" and recipe.optimizer.optimizer == "adam":
        recipe.optimizer.use_precision_aware_optimizer = True
    if user_gbs is None:
        if num_gpus != workload_base_config.num_gpus:
            recipe.train.global_batch_size = int(workload_base_config.gbs_scaling_factor * num_gpus)
    return recipe
