"""Fixture: the optimizer and scheduler a base config gets."""

from megatron.bridge.training.config import OptimizerConfig, SchedulerConfig


def distributed_fused_adam_with_cosine_annealing(lr_warmup_iters=2000, max_lr=1e-4, min_lr=None):
    optimizer = OptimizerConfig(optimizer="adam", lr=max_lr, min_lr=min_lr if min_lr is not None else 0.1 * max_lr,
                                bf16=True, fp16=False, use_distributed_optimizer=True)
    scheduler = SchedulerConfig(lr_warmup_iters=lr_warmup_iters, lr_decay_style="cosine")
    return optimizer, scheduler
