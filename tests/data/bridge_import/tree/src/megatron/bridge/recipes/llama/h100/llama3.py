"""Fixture: the Llama 3 8B base recipe (the model is the Hub's config of meta-llama/Meta-Llama-3-8B)."""

import torch

from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.comm_overlap import CommOverlapConfig


def llama3_8b_pretrain_2gpu_h100_bf16_config():
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("meta-llama/Meta-Llama-3-8B").get_model_config()
    cfg.tokenizer.vocab_size = 128256
    cfg.dataset.seq_length = 8192
    cfg.model.seq_length = 8192
    cfg.model.tensor_model_parallel_size = 1
    cfg.model.context_parallel_size = 2
    cfg.model.pipeline_dtype = torch.bfloat16
    cfg.model.transformer_impl = "transformer_engine"
    cfg.model.cross_entropy_loss_fusion = True
    cfg.model.cuda_graph_impl = "none"
    cfg.model.cuda_graph_scope = "full"
    cfg.model.recompute_granularity = None
    cfg.optimizer.main_params_dtype = torch.float32
    cfg.ddp.use_megatron_fsdp = False
    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)
    return cfg
