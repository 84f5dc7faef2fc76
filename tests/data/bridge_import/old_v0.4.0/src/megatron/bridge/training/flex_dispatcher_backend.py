"""Fixture: the flex dispatcher switch, which asks the device what it is."""
import torch


def apply_flex_dispatcher_backend(model_config, moe_flex_dispatcher_backend=None):
    num_moe_experts = getattr(model_config, "num_moe_experts", None)
    if num_moe_experts is None or num_moe_experts == 0:
        return
    device_properties = torch.cuda.get_device_properties(0)
    if moe_flex_dispatcher_backend == "deepep":
        if not (device_properties.major in [8, 9] or device_properties.name.startswith(("NVIDIA B200",))):
            return
    elif moe_flex_dispatcher_backend == "hybridep":
        if not device_properties.major in [8, 9, 10]:
            return
    else:
        return
    model_config.moe_token_dispatcher_type = "flex"
    model_config.moe_flex_dispatcher_backend = moe_flex_dispatcher_backend
    model_config.moe_shared_expert_overlap = False
