"""A Megatron-Bridge table row + its recipe's settings -> simumax-sim model and strategy (docs/bridge-import.md).

Every setting the recipe makes falls in one class: translated (EXPRESSED), without effect on step time or memory
(NO_EFFECT, by key or by section), with an effect the engine does not price (MINOR: listed on the case), or one
that changes time or memory and is not expressible (BLOCKING, or any key not classified: the row is skipped and
the setting named). A row's layout (GPUs, GBS, MBS, sequence, TP/PP/CP/VP/EP, FSDP) must be its recipe's: a row
whose layout differs from the recipe read for it (its release's version, or the given tree) ran another one.
"""

# The Hub's config.json of each model the recipes load (AutoBridge.from_hf_pretrained): the checkout does not
# hold them. Values from huggingface.co/<id>/blob/main/config.json.
HF_MODELS = {
    "meta-llama/Meta-Llama-3-8B": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
                                   "ffn": 14336, "vocab": 128256},
    "meta-llama/Meta-Llama-3-70B": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128,
                                    "ffn": 28672, "vocab": 128256},
    "Qwen/Qwen3-30B-A3B": {"layers": 48, "hidden": 2048, "heads": 32, "kv_heads": 4, "head_dim": 128,
                           "ffn": 6144, "vocab": 151936, "experts": 128, "topk": 8, "moe_ffn": 768,
                           "qk_norm": True},
    "Qwen/Qwen3-235B-A22B": {"layers": 94, "hidden": 4096, "heads": 64, "kv_heads": 4, "head_dim": 128,
                             "ffn": 12288, "vocab": 151936, "experts": 128, "topk": 8, "moe_ffn": 1536,
                             "qk_norm": True},
}

# Table precision -> the recipe name's suffix and the strategy's fp8_recipe (None: bf16).
PRECISIONS = {"BF16": ("bf16", None), "FP8-CS": ("fp8cs", "tensorwise"), "FP8": ("fp8cs", "tensorwise"),
              "FP8-DS": ("fp8ds", "delayed"), "MXFP8": ("fp8mx", "mxfp8"), "FP8-MX": ("fp8mx", "mxfp8"),
              "NVFP4": ("nvfp4", "nvfp4")}

EXPRESSED = {
    "model.hf_model_id", "model.num_moe_experts", "model.tensor_model_parallel_size",
    "model.pipeline_model_parallel_size",
    "model.context_parallel_size", "model.virtual_pipeline_model_parallel_size", "model.expert_model_parallel_size",
    "model.expert_tensor_parallel_size", "model.sequence_parallel", "model.seq_length", "dataset.seq_length",
    "train.global_batch_size", "train.micro_batch_size", "mixed_precision.recipe", "model.recompute_granularity",
    "model.recompute_method", "model.recompute_num_layers", "model.recompute_modules",
    "ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer", "ddp.overlap_grad_reduce",
    "ddp.overlap_param_gather", "ddp.use_megatron_fsdp", "ddp.data_parallel_sharding_strategy",
    "model.gradient_accumulation_fusion", "model.cuda_graph_impl", "model.cuda_graph_scope",
    "model.moe_token_dispatcher_type", "model.moe_flex_dispatcher_backend", "model.moe_router_force_load_balancing",
    "model.moe_grouped_gemm", "model.moe_permute_fusion", "model.moe_router_fusion",
    "model.moe_permute_fusion_into_hybridep", "model.cross_entropy_loss_fusion", "model.cross_entropy_fusion_impl",
    "model.account_for_embedding_in_pipeline_split", "model.account_for_loss_in_pipeline_split",
    "model.should_pad_vocab", "tokenizer.vocab_size", "model.transformer_impl", "model.attention_backend",
    "model.pipeline_model_parallel_layout", "comm_overlap.tp_comm_overlap",
    "comm_overlap.overlap_moe_expert_parallel_comm", "comm_overlap.delay_wgrad_compute", "model.cpu_offloading",
    "model.cpu_offloading_num_layers",
    "model.cpu_offloading_weights", "model.fine_grained_activation_offloading", "model.offload_modules",
    "optimizer.main_grads_dtype", "optimizer.main_params_dtype", "optimizer.exp_avg_dtype",
    "optimizer.exp_avg_sq_dtype", "optimizer.use_precision_aware_optimizer", "optimizer.bf16", "optimizer.fp16",
    "optimizer.optimizer", "ddp.grad_reduce_in_fp32", "mixed_precision.grad_reduce_in_fp32",
    "mixed_precision.first_last_layers_bf16",
}

# Whole sections that only set up data, logging, checkpoints, the learning-rate schedule and the RNG seed.
NO_EFFECT_SECTIONS = ("checkpoint.", "dataset.", "logger.", "validation.", "scheduler.", "dist", "tokenizer.",
                      "rerun_state_machine.")
NO_EFFECT = {
    "train.train_iters", "train.eval_iters", "train.eval_interval", "train.manual_gc_eval", "rng.seed", "optimizer.lr",
    "optimizer.min_lr",
    "optimizer.adam_beta1", "optimizer.adam_beta2", "optimizer.adam_eps", "optimizer.weight_decay",
    "optimizer.clip_grad", "model.init_method_std", "model.init_model_with_meta_device", "model.pipeline_dtype",
    "model.cuda_graph_warmup_steps", "ddp.check_for_nan_in_grad", "ddp.check_for_large_grads",
}

MINOR = {
    "train.manual_gc": "Python garbage collection at fixed steps only",
    "train.manual_gc_interval": "Python garbage collection at fixed steps only",
    "model.apply_rope_fusion": "fused RoPE kernel (the engine prices RoPE fused)",
    "model.bias_activation_fusion": "fused bias + SwiGLU kernel (the engine prices the activation fused)",
    "model.use_te_rng_tracker": "TE's RNG tracker (needed by CUDA graphs; no dropout in these models)",
    "rng.te_rng_tracker": "TE's RNG tracker (needed by CUDA graphs; no dropout in these models)",
    "model.use_transformer_engine_op_fuser": "TE operation fuser (fused MoE MLP kernels): priced as TE's "
                                             "grouped GEMMs",
    "mixed_precision.fp8_dot_product_attention": "FP8 attention (cuDNN FP8 SDPA): priced as bf16 attention",
    "ddp.average_in_collective": "the 1/dp gradient scale done by the reduction: one scaling kernel fewer",
    "ddp.fsdp_double_buffer": "Megatron-FSDP double-buffered all-gather (the prefetch the FSDP model assumes)",
    "ddp.suggested_communication_unit_size": "Megatron-FSDP bucket size (the engine gathers per layer)",
    "ddp.keep_fp8_transpose_cache": "FSDP: the FP8 transpose cache is dropped after use (memory only)",
    "ddp.nccl_ub": "NCCL user buffers for the data-parallel collectives (faster NVLS/SHARP paths)",
    "ddp.fsdp_manual_registration": "NCCL user buffers registered by hand for FSDP",
    "comm_overlap.tp_comm_overlap_cfg": "userbuffers' per-GEMM overlap method (see tp_comm_overlap)",
    "comm_overlap.overlap_param_gather_with_optimizer_step": "the first parameter all-gather overlapped with "
                                                             "the optimizer step",
    "optimizer.overlap_param_gather_with_optimizer_step": "the first parameter all-gather overlapped with the "
                                                          "optimizer step",
    "model.moe_a2a_overlap": "EP all-to-all overlapped with another micro-batch's compute: priced exposed here",
    "model.high_priority_a2a_comm_stream": "the all-to-all on a high-priority stream",
    "model.moe_hybridep_num_sms": "SMs HybridEP's kernels take from compute",
    "model.moe_hybridep_num_sms_preprocessing": "SMs HybridEP's preprocessing takes from compute",
    "model.moe_router_padding_for_fp8": "router output padded for FP8 GEMM alignment",
    "model.moe_shared_expert_overlap": "shared-expert overlap (these models have no shared expert)",
    "model.moe_mlp_glu_interleave_size": "GLU weight interleaving of the fused MoE MLP",
    "model.moe_pad_experts_for_cuda_graph_inference": "expert inputs padded to static shapes for CUDA graphs",
    "model.moe_paged_stash": "paged stash of MoE activations (static buffers for full-iteration graphs)",
    "model.moe_paged_stash_buffer_size_factor_cuda": "paged-stash buffer size on the GPU",
    "model.moe_paged_stash_buffer_size_factor_cpu": "paged-stash buffer size on the host",
    "model.moe_expert_rank_capacity_factor": "the paged stash's per-rank buffer (1.5x the balanced share; the "
                                             "run stays dropless)",
}

# Switches whose off position is what the engine prices anyway: off, they are not listed.
OFF_IS_PRICED = ("comm_overlap.", "model.moe_a2a_overlap", "model.moe_shared_expert_overlap",
                 "model.high_priority_a2a_comm_stream", "model.moe_paged_stash",
                 "model.use_transformer_engine_op_fuser",
                 "mixed_precision.fp8_dot_product_attention", "ddp.fsdp_double_buffer", "ddp.nccl_ub",
                 "ddp.fsdp_manual_registration", "model.moe_router_padding_for_fp8")

# Environment variables the recipes set: process tuning the engine does not price.
ENV_PREFIXES = ("NCCL_", "NVTE_", "TORCH_", "PYTORCH_", "CUDA_", "CUDNN", "NUM_OF_", "NVLINK_", "USE_MNNVL",
                "TRITON_", "NVIDIA_", "TOKENIZERS_", "OMP_", "HF_")

DTYPE_FP32 = "torch.float32"


def classify(key):
    """"expressed", "no_effect", "minor" or None (not classified: the row is skipped)."""
    if key in EXPRESSED:
        return "expressed"
    if key in NO_EFFECT or key.startswith(NO_EFFECT_SECTIONS):
        return "no_effect"
    if "." not in key and key != "env_vars":
        return "no_effect"  # a config object itself (its fields are classified one by one)
    if key in MINOR:
        return "minor"
    if key == "env_vars" or key.startswith("env_vars."):
        return "env"
    return None


class Result:
    def __init__(self):
        self.model, self.strategy, self.features = {}, {}, []
        self.listed, self.blocking = [], []


def value(settings, key, default=None):
    v = settings.get(key)
    return default if v is None or v[0] is None else v[0]


def translate(row, settings, unread):
    """REQUIRES: row from tables.parse with its numbers checked; settings from recipe.flatten; unread from the
    Reader. Returns a Result (blocking non-empty: the row is skipped)."""
    r = Result()
    for key in sorted(settings):
        kind = classify(key)
        if kind is None:
            r.blocking.append(f"recipe setting {key} is not classified")
        elif kind == "minor" and not (settings[key][0] in (False, None) and key.startswith(OFF_IS_PRICED)):
            r.listed.append(f"{key}: {MINOR[key]}")
    env = value(settings, "env_vars", {})
    if isinstance(env, dict):
        names = sorted(env)
        odd = [n for n in names if not n.startswith(ENV_PREFIXES)]
        if odd:
            r.blocking.append(f"recipe environment variable {odd[0]} is not classified")
        if names:
            r.listed.append("env_vars " + ", ".join(names) + ": process tuning (streams, NCCL, allocator, TE SM "
                            "margins, HybridEP topology)")
    elif "env_vars" in settings:
        r.blocking.append("recipe env_vars not read")
    for where, keys, why in unread:
        # A helper's assignment names its own parameter (`model_config.x`): matched on the field's name.
        known = [k for k in keys if classify(k) == "expressed" or any(e.endswith("." + k) for e in EXPRESSED)]
        if known:
            r.blocking.append(f"recipe statement {where} not read ({why}): it sets {known[0]}")
        elif "not read" in why:
            r.listed.append(f"{where}: {why}")
        else:
            r.listed.append(f"{where}: not read ({why}); it sets only {', '.join(keys) or 'local names'}")
    if r.blocking:
        return r
    _model(settings, r)
    _strategy(row, settings, r)
    r.listed = sorted(set(r.listed))
    return r


def _model(settings, r):
    model_id = value(settings, "model.hf_model_id")
    hf = HF_MODELS.get(model_id)
    if hf is None:
        r.blocking.append(f"model {model_id} is not in the importer's table of Hub configs")
        return
    m = {
        "model_name": model_id.split("/")[-1], "model_type": "moe" if "experts" in hf else "dense",
        "hidden_size": hf["hidden"], "head_num": hf["heads"], "kv_head_num": hf["kv_heads"],
        "head_size": hf["head_dim"], "intermediate_size": hf["ffn"], "layer_num": hf["layers"],
        "vocab_size": hf["vocab"], "use_swiglu": True, "make_vocab_size_divisible_by": 128,
        "normalization": "RMSNorm", "add_bias_linear": False, "add_qkv_bias": False,
        "position_embedding_type": "rope", "attention_dropout": 0.0, "hidden_dropout": 0.0,
        "untie_embeddings_and_output_weights": True, "mtp_num_layers": 0,
    }
    if "experts" in hf:
        m.update(expert_num=hf["experts"], topk=hf["topk"], moe_ffn_hidden_size=hf["moe_ffn"],
                 moe_pad_expert_input_to_capacity=False)
        r.features.append(f"moe_e{hf['experts']}_top{hf['topk']}")
        if value(settings, "model.moe_grouped_gemm", True) is not True:
            r.blocking.append("MoE experts without grouped GEMM are not modelled")
    if hf.get("qk_norm"):
        r.listed.append("qk_layernorm (Hub config): RMSNorm over each query and key head, two small kernels a "
                        "layer not priced")
    r.model = m


def _strategy(row, settings, r):
    if r.blocking:
        return
    tp, pp, cp = (int(row[k]) for k in ("tp", "pp", "cp"))
    ep = int(row["ep"]) if row["ep"] != "n/a" else 1
    vp = int(row["vp"]) if row["vp"] != "n/a" else 1
    world, gbs, mbs, seq = (int(row[k]) for k in ("gpus", "gbs", "mbs", "seq"))
    fsdp_row = int(row.get("fsdp", "0") or 0)
    if world % (tp * pp * cp):
        r.blocking.append(f"#-GPUs {world} is not a multiple of TP*PP*CP = {tp * pp * cp}")
        return
    dp = world // (tp * pp * cp)
    if gbs % (mbs * dp):
        r.blocking.append(f"GBS {gbs} is not a multiple of MBS x DP = {mbs * dp}")
        return
    recipe_layout = {
        "tp": value(settings, "model.tensor_model_parallel_size", 1), "pp": value(settings,
        "model.pipeline_model_parallel_size", 1), "cp": value(settings, "model.context_parallel_size", 1),
        "vp": value(settings, "model.virtual_pipeline_model_parallel_size", 1),
        "ep": value(settings, "model.expert_model_parallel_size", 1), "mbs": value(settings,
        "train.micro_batch_size"), "gbs": value(settings, "train.global_batch_size"),
        "seq": value(settings, "model.seq_length"),
    }
    row_layout = {"tp": tp, "pp": pp, "cp": cp, "vp": vp, "ep": ep if r.model["model_type"] == "moe" else 1,
                  "mbs": mbs, "gbs": gbs, "seq": seq}
    differs = [k for k in row_layout if recipe_layout[k] != row_layout[k]]
    if differs:
        # The row ran another version of the recipe: this one's other settings would be a guess.
        r.blocking.append(f"the row's layout differs from its recipe's in {', '.join(differs)} "
                          "(another recipe version)")
        return
    fsdp = value(settings, "ddp.use_megatron_fsdp", False) is True
    if fsdp != (fsdp_row > 0):
        r.blocking.append("the row's FSDP column and the recipe's ddp.use_megatron_fsdp disagree")
    if fsdp and value(settings, "ddp.data_parallel_sharding_strategy") != "optim_grads_params":
        r.blocking.append("Megatron-FSDP other than optim_grads_params (ZeRO-3) is not modelled")
    if value(settings, "model.transformer_impl", "transformer_engine") != "transformer_engine":
        r.blocking.append("a transformer implementation other than TransformerEngine is not modelled")
    if value(settings, "model.pipeline_model_parallel_layout") is not None:
        r.blocking.append("a custom pipeline_model_parallel_layout is not expressible")
    if value(settings, "model.cpu_offloading", False):
        r.blocking.append("activation CPU offloading (model.cpu_offloading) is not modelled")
    if value(settings, "model.fine_grained_activation_offloading", False) or value(settings,
                                                                                   "model.offload_modules"):
        r.blocking.append("fine-grained activation offloading is not modelled")
    for key in ("optimizer.main_grads_dtype", "optimizer.main_params_dtype", "optimizer.exp_avg_dtype",
                "optimizer.exp_avg_sq_dtype"):
        if value(settings, key, DTYPE_FP32) != DTYPE_FP32:
            r.blocking.append(f"{key} other than fp32 is not modelled")
    if value(settings, "optimizer.optimizer", "adam") != "adam" or value(settings, "optimizer.fp16", False):
        r.blocking.append("an optimizer other than Adam in bf16 mixed precision is not modelled")
    if value(settings, "ddp.grad_reduce_in_fp32", False) or value(settings, "mixed_precision.grad_reduce_in_fp32",
                                                                  False):
        r.blocking.append("gradient reduction in fp32 is not expressed")
    suffix, fp8_recipe = PRECISIONS[row["precision"]]
    if value(settings, "mixed_precision.recipe") != suffix:
        r.blocking.append(f"the recipe's precision {value(settings, 'mixed_precision.recipe')} is not the row's")
    if value(settings, "mixed_precision.first_last_layers_bf16", False):
        r.listed.append("mixed_precision.first_last_layers_bf16: the first and last layers in bf16, priced in the "
                        "recipe's precision")
    if r.blocking:
        return
    sp_recipe = value(settings, "model.sequence_parallel", False) is True
    s = {
        "seq_len": seq, "micro_batch_size": mbs, "micro_batch_num": gbs // (mbs * dp), "dtype": "bf16",
        "fp8": fp8_recipe is not None, "world_size": world, "tp_size": tp, "cp_size": cp, "pp_size": pp,
        "ep_size": row_layout["ep"],
        "etp_size": value(settings, "model.expert_tensor_parallel_size", tp) if r.model["model_type"] == "moe"
        else 1,
        # With TP > 1 Megatron-Bridge's recipes run sequence parallelism; a row's TP the recipe does not have
        # takes the same rule.
        "enable_sequence_parallel": tp > 1 and (sp_recipe or recipe_layout["tp"] != tp),
        # training/comm_overlap.py CommOverlap.setup: with PP > 1 and VP > 1 the P2P transfers overlap compute
        # (overlap_p2p_comm), else they are batched.
        "interleaving_size": vp, "pp_comm_async": pp > 1 and vp > 1, "enable_straggler_model": False,
        "zero_state": 3 if fsdp else (1 if value(settings, "ddp.use_distributed_optimizer", False) else 0),
        "use_flash_sdp": True,
        "use_fused_grad_accumulation": (not fsdp) and value(settings, "model.gradient_accumulation_fusion", True)
        is True,
        # Unset by the recipe (v0.3.0's base recipes): the provider's default, True (models/gpt_provider.py).
        "cross_entropy_loss_fusion": value(settings, "model.cross_entropy_loss_fusion", True) is True,
        "megatron_overlap_grad_reduce": value(settings, "ddp.overlap_grad_reduce", False) is True,
        "megatron_overlap_param_gather": value(settings, "ddp.overlap_param_gather", False) is True,
        "account_for_embedding_in_pipeline_split":
            value(settings, "model.account_for_embedding_in_pipeline_split", False) is True,
        "account_for_loss_in_pipeline_split": value(settings, "model.account_for_loss_in_pipeline_split", False)
        is True,
        "enable_recompute": False,
    }
    if fp8_recipe is not None:
        s["fp8_recipe"] = fp8_recipe
    if s["cross_entropy_loss_fusion"]:
        s["cross_entropy_fusion_impl"] = value(settings, "model.cross_entropy_fusion_impl", "native")
    # training/comm_overlap.py CommOverlap.setup turns userbuffers off below TP 2 or without SP.
    if value(settings, "comm_overlap.tp_comm_overlap", False) and tp >= 2 and s["enable_sequence_parallel"]:
        s["megatron_tp_comm_overlap"] = True
        r.features.append("tp_comm_overlap")
    if value(settings, "comm_overlap.overlap_moe_expert_parallel_comm", False) and "expert_num" in r.model:
        # --overlap-moe-expert-parallel-comm with --delay-wgrad-compute: Megatron's combined 1F1B schedule
        # (docs/overlap.md); Megatron asserts what the engine refuses (no full recompute, a virtual pipeline
        # with PP > 1).
        if not value(settings, "comm_overlap.delay_wgrad_compute", False):
            r.blocking.append("EP communication overlap without delay_wgrad_compute is not modelled")
            return
        s["pipeline_schedule"] = "combined-1f1b"
        r.features.append("combined_1f1b")
    if fsdp:
        s["megatron_fsdp"] = True
        r.features.append("megatron_fsdp")
    _recompute(settings, s, vp, r)
    _cuda_graphs(settings, s, r)
    _moe_dispatch(settings, s, r)
    r.strategy = s
    r.features.append(f"tp{tp}_pp{pp}" + (f"_vp{vp}" if vp > 1 else "") + (f"_cp{cp}" if cp > 1 else "")
                      + (f"_ep{row_layout['ep']}" if row_layout["ep"] > 1 else ""))
    r.features.append(suffix)


def _recompute(settings, s, vp, r):
    granularity = value(settings, "model.recompute_granularity")
    if granularity is None:
        return
    if granularity == "full" and value(settings, "model.recompute_method") == "block" and vp == 1:
        # Megatron's block method recomputes the first recompute_num_layers layers of each stage.
        s.update(enable_recompute=True, recompute_granularity="full_block",
                 recompute_layer_num=int(value(settings, "model.recompute_num_layers", 1)))
        r.features.append("full_recompute_block")
        return
    if granularity == "selective":
        modules = value(settings, "model.recompute_modules") or ["core_attn"]
        s.update(enable_recompute=True, recompute_granularity="selective_recompute", megatron_recompute=True,
                 megatron_recompute_modules=list(modules))
        r.features.append("selective_recompute")
        return
    r.blocking.append(f"recompute {granularity} with method {value(settings, 'model.recompute_method')} "
                      f"{'and interleaving ' if vp > 1 else ''}is not mapped")


def _cuda_graphs(settings, s, r):
    impl = value(settings, "model.cuda_graph_impl", "none")
    scope = value(settings, "model.cuda_graph_scope", [])
    scope = [] if impl == "none" or not isinstance(scope, list) else list(scope)
    if impl == "full_iteration":
        # mcore promotes a full_iteration scope to this implementation; it is the local capture of the whole step.
        impl, scope = "local", ["full_iteration"]
    if impl not in ("none", "local", "transformer_engine"):
        r.blocking.append(f"cuda_graph_impl {impl} is not known")
        return
    if impl != "none":
        s["cuda_graph_impl"] = impl
        if scope:
            s["cuda_graph_scope"] = scope
        r.features.append("cuda_graphs_" + ("_".join(scope) if scope else "layers"))


def _moe_dispatch(settings, s, r):
    if "expert_num" not in r.model:
        return
    dispatcher = value(settings, "model.moe_token_dispatcher_type", "alltoall")
    if dispatcher not in ("alltoall", "flex"):
        r.blocking.append(f"MoE token dispatcher {dispatcher} is not modelled")
        return
    s["moe_token_dispatcher"] = dispatcher
    if dispatcher == "flex":
        backend = value(settings, "model.moe_flex_dispatcher_backend")
        if backend not in ("deepep", "hybridep"):
            r.blocking.append(f"flex dispatcher backend {backend} is not known")
            return
        s["moe_flex_dispatcher_backend"] = backend
        r.features.append(f"flex_{backend}")
    for key, feature in (("moe_permute_fusion", "permute_fusion"), ("moe_router_fusion", "router_fusion"),
                         ("moe_permute_fusion_into_hybridep", "permute_in_hybridep")):
        if value(settings, "model." + key, False):
            if key == "moe_permute_fusion_into_hybridep" and s.get("moe_flex_dispatcher_backend") != "hybridep":
                continue  # token_dispatcher.py reads it only in _HybridEPManager
            s[key] = True
            r.features.append(feature)
    if value(settings, "model.moe_router_force_load_balancing", False):
        s["moe_router_force_load_balancing"] = True
        r.features.append("force_balanced")
