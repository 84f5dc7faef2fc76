"""Fixture (old layout): the workload settings' dataclass and its lookup by name."""
import importlib
from dataclasses import dataclass
from typing import List, Optional


@dataclass
class WorkloadBaseConfig:
    num_gpus: int = 1
    tensor_model_parallel_size: int = 1
    pipeline_model_parallel_size: int = 1
    context_parallel_size: int = 1
    virtual_pipeline_model_parallel_size: int | None = None
    expert_model_parallel_size: int = 1
    expert_tensor_parallel_size: int | None = None
    global_batch_size: int = 1
    micro_batch_size: int = 1
    cuda_graph_impl: Optional[str] = None
    cuda_graph_scope: Optional[str] = None
    recompute_modules: Optional[List[str]] = None
    moe_flex_dispatcher_backend: Optional[str] = None
    moe_a2a_overlap: Optional[bool] = False

    @property
    def sequence_parallel(self) -> bool:
        return bool(self.tensor_model_parallel_size > 1)

    @property
    def gbs_scaling_factor(self) -> float:
        return self.global_batch_size / self.num_gpus


def get_workload_base_config(model_family_name, model_recipe_name, gpu, compute_dtype, task, config_variant="v1"):
    module = importlib.import_module(f"configs.{model_family_name}")
    name = f"{model_recipe_name}_{task}_config_{gpu}_{compute_dtype}_{config_variant}".upper()
    return getattr(module, name)
