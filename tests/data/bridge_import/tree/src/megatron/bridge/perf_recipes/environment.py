"""Fixture: the environment every performance recipe starts from."""

COMMON_PERF_ENV_VARS = {
    "TORCH_NCCL_HIGH_PRIORITY": 1,
    "NVTE_FWD_LAYERNORM_SM_MARGIN": 16,
}
