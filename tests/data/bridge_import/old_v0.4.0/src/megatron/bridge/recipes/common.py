"""Fixture: the base pre-training config every recipe starts from."""

from megatron.bridge.recipes.utils.optimizer_utils import distributed_fused_adam_with_cosine_annealing
from megatron.bridge.training.config import (
    CheckpointConfig,
    ConfigContainer,
    DistributedDataParallelConfig,
    GPTDatasetConfig,
    RNGConfig,
    TokenizerConfig,
    TrainingConfig,
)


def _pretrain_common() -> ConfigContainer:
    opt_cfg, scheduler_cfg = distributed_fused_adam_with_cosine_annealing(lr_warmup_iters=500, max_lr=3e-4)
    cfg = ConfigContainer(
        model=None,
        train=TrainingConfig(train_iters=300000, global_batch_size=32, micro_batch_size=2, manual_gc=True),
        optimizer=opt_cfg,
        scheduler=scheduler_cfg,
        ddp=DistributedDataParallelConfig(
            grad_reduce_in_fp32=True,
            overlap_grad_reduce=True,
            overlap_param_gather=True,
            use_distributed_optimizer=True,
        ),
        dataset=GPTDatasetConfig(seq_length=4096, blend=None),
        checkpoint=CheckpointConfig(save_interval=500),
        tokenizer=TokenizerConfig(tokenizer_type="HuggingFaceTokenizer", tokenizer_model=None),
        rng=RNGConfig(seed=1234),
        comm_overlap=None,
        mixed_precision="bf16_mixed",
    )
    return cfg
