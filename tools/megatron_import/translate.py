"""Megatron-LM training arguments -> simumax-sim model and strategy (SimuMax's schema + docs/architectures.md).

Every argument falls in one class: translated (EXPRESSED), without effect on step time or memory (NO_EFFECT),
with a small effect we cannot express (MINOR: listed on the case), or one that changes time or memory and is not
expressible (anything else: the case is skipped, the argument named in the reason). Defaults are Megatron's
(megatron/training/arguments.py and megatron/core/transformer/transformer_config.py at the imported commit).
"""

GPT2_BPE_VOCAB = 50257
ONE_NODE = 8  # GPUs of one DGX A100/H100 node; a GB200 NVL72 domain holds 72  # the GPT-2 BPE vocabulary (vocab.json) every --vocab-file test uses

EXPRESSED = {
    "--num-layers", "--hidden-size", "--num-attention-heads", "--group-query-attention", "--num-query-groups",
    "--kv-channels", "--ffn-hidden-size", "--seq-length", "--max-position-embeddings", "--micro-batch-size",
    "--global-batch-size", "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
    "--context-parallel-size", "--sequence-parallel", "--num-layers-per-virtual-pipeline-stage",
    "--num-virtual-stages-per-pipeline-rank", "--use-distributed-optimizer", "--overlap-grad-reduce",
    "--overlap-param-gather", "--bf16", "--fp16", "--disable-bias-linear", "--add-qkv-bias", "--swiglu",
    "--normalization", "--position-embedding-type", "--use-rotary-position-embeddings", "--attention-dropout",
    "--hidden-dropout", "--untie-embeddings-and-output-weights", "--no-gradient-accumulation-fusion",
    "--attention-backend", "--transformer-impl", "--deterministic-mode", "--recompute-granularity",
    "--recompute-method", "--recompute-num-layers", "--cross-entropy-loss-fusion", "--make-vocab-size-divisible-by",
    "--vocab-size", "--vocab-file", "--merge-file", "--decoder-first-pipeline-num-layers",
    "--decoder-last-pipeline-num-layers", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--mtp-num-layers",
    "--use-mcore-models", "--use-flash-attn", "--cross-entropy-fusion-impl",
}

# Mixture of experts as SimuMax models it (all-to-all dispatcher, TE grouped GEMM, top-k routing with an
# auxiliary load-balancing loss); `_moe` checks each value and blocks what it does not model.
MOE = {
    "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size",
    "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--moe-grouped-gemm",
    "--moe-token-dispatcher-type", "--moe-router-load-balancing-type",
}

NO_EFFECT = {
    "--log-interval", "--log-timers-to-tensorboard", "--log-memory-to-tensorboard",
    "--log-validation-ppl-to-tensorboard", "--tensorboard-dir", "--load", "--save", "--ckpt-format",
    "--timing-log-level", "--distributed-backend", "--save-interval", "--clip-grad", "--lr", "--eval-interval",
    "--dist-ckpt-strictness", "--data-cache-path", "--data-path", "--split", "--eval-iters", "--weight-decay",
    "--min-lr", "--lr-decay-style", "--train-iters", "--lr-warmup-fraction", "--lr-decay-iters",
    "--use-checkpoint-opt_param-scheduler", "--no-load-optim", "--use-checkpoint-args",
    "--dist-ckpt-optim-fully-reshardable", "--init-method-std", "--adam-beta1", "--adam-beta2", "--adam-eps",
    "--exit-interval", "--lr-warmup-samples", "--seed", "--num-workers", "--distributed-timeout-minutes",
    "--ckpt-fully-parallel-load", "--ckpt-fully-parallel-save", "--no-ckpt-fully-parallel-save",
    "--ckpt-assume-constant-structure", "--auto-detect-ckpt-format", "--norm-epsilon", "--rotary-base",
    "--async-save", "--use-persistent-ckpt-worker", "--tensorboard-log-interval", "--exit-duration-in-mins",
    "--no-mmap-bin-files", "--save-retain-interval", "--logging-level", "--attention-softmax-in-fp32",
    "--apply-query-key-layer-scaling", "--no-use-tokenizer-model-from-checkpoint-args", "--finetune",
    "--override-opt_param-scheduler", "--train-samples", "--lr-decay-samples", "--wandb-project",
    "--wandb-entity", "--wandb-exp-name", "--wandb-save-dir", "--decoupled-lr", "--decoupled-min-lr",
    "--lr-warmup-init", "--async-ckpt-use-cpu-shm", "--tokenizer-type",
    # checkpointing.py: load_checkpoint re-hashes the checkpoint files (verify_integrity); async_utils.py: the
    # backend of asynchronous checkpoint saves. Neither runs inside a training step.
    "--verify-integrity", "--async-strategy",
    # The auxiliary loss's weight: a scalar in the same kernels.
    "--moe-aux-loss-coeff",
}

# Small effects on time that no config key expresses: listed on the case, not a reason to skip.
MINOR = {
    "--log-params-norm": "one extra norm over the parameters per step",
    "--log-num-zeros-in-grad": "one extra count over the gradients per step",
    "--no-bias-gelu-fusion": "bias + GeLU as separate kernels",
    "--no-bias-dropout-fusion": "bias, dropout and residual add as separate kernels",
    "--no-rope-fusion": "rotary embedding as unfused torch kernels",
    "--no-masked-softmax-fusion": "unfused masked softmax (unfused attention only)",
    "--no-persist-layer-norm": "non-persistent LayerNorm kernel",
    "--manual-gc": "Python garbage collection at fixed steps",
    "--manual-gc-interval": "Python garbage collection at fixed steps",
    "--calculate-per-token-loss": "the loss normalised per token (a few scalar kernels)",
    "--no-check-for-nan-in-loss-and-grad": "skips the NaN check (a few scalar kernels fewer)",
    "--rerun-mode": "the rerun state machine's checks",
    "--log-throughput": "logging only",
    "--rotary-percent": "rotary embedding on part of each head (the same kernels)",
    "--microbatch-group-size-per-virtual-pipeline-stage": "interleaving group size (default: pp)",
    "--rotary-interleaved": "RoPE on interleaved pairs (the same rotary kernels, another layout)",
    "--ddp-average-in-collective": "the 1/dp gradient scale done by the reduction (NCCL avg): one scaling kernel "
                                   "fewer per step",
    "--no-create-attention-mask-in-dataloader": "no [b, 1, s, s] attention mask built on the host and copied to "
                                                "the GPU per micro-batch (causal attention does not read it)",
    "--moe-router-dtype": "router scores and probabilities in fp32 ([tokens, experts]: a few kernels, a few KiB)",
}

TRUE = (True, "true", "True", 1)


def _int(args, key, default=None):
    v = args.get(key, default)
    return int(v) if v is not None else None


class Result:
    def __init__(self):
        self.model, self.strategy, self.features = {}, {}, []
        self.listed, self.blocking = [], []
        self.tp_pp_dp_order = False
        self.container, self.container_effects = None, []


def translate(config, world_size, family, machine=None, container=None):
    """REQUIRES: config is a parsed model_config.yaml; world_size > 0; container is None (the environment's
    current container) or a key of CONTAINERS (the one the golden values were recorded in). Returns a Result."""
    r = Result()
    args = {k: v for k, v in (config.get("MODEL_ARGS") or {}).items()}
    test_type = config.get("TEST_TYPE", "regular")
    if test_type not in ("regular", "ckpt-resume", "frozen-resume", "release"):
        r.blocking.append(f"TEST_TYPE {test_type} is not a training run")
    for key, value in args.items():
        if key in EXPRESSED or key in NO_EFFECT or (key in MOE and "--num-experts" in args):
            continue
        if key == "--expert-tensor-parallel-size" and "--num-experts" not in args:
            continue  # no expert layer: the expert tensor-parallel group is built and never used
        if key == "--use-tp-pp-dp-mapping" and args.get(key) in TRUE and world_size <= ONE_NODE:
            # parallel_state.py RankGenerator(order="tp-pp-dp"): which rank holds which (tp, pp, dp) coordinate.
            # Inside one NVLink domain every group costs the same wherever it lies, and rank world_size - 1 (the
            # one that logs memory) is still on the last pipeline stage.
            r.tp_pp_dp_order = True
            continue
        if key in MINOR:
            r.listed.append(f"{key}: {MINOR[key]}")
        else:
            r.blocking.append(f"argument {key} is not expressible")
    if r.blocking:
        r.blocking = sorted(set(r.blocking))
        return r
    _model(args, r)
    _moe(args, r)
    _strategy(args, world_size, r)
    _environment(config.get("ENV_VARS") or {}, r)
    if container is not None:
        _recorded_in(container, config.get("ENV_VARS") or {}, machine, r)
    r.listed.sort()
    return r


def _model(args, r):
    h = _int(args, "--hidden-size")
    heads = _int(args, "--num-attention-heads")
    layers = _int(args, "--num-layers")
    swiglu = args.get("--swiglu") in TRUE
    ffn = _int(args, "--ffn-hidden-size")
    if ffn is None:
        # arguments.py: SwiGLU's default width keeps the parameter count of a 4h GeLU MLP.
        ffn = int((4 * h * 2 / 3) / 64) * 64 if swiglu else 4 * h
    groups = _int(args, "--num-query-groups") if args.get("--group-query-attention") in TRUE else heads
    vocab = _int(args, "--vocab-size")
    if vocab is None:
        if "--vocab-file" in args and str(args.get("--tokenizer-type", "GPT2BPETokenizer")) == "GPT2BPETokenizer":
            vocab = GPT2_BPE_VOCAB
        else:
            r.blocking.append("tokenizer vocabulary size not known without its files (no --vocab-size)")
            return
    position = str(args.get("--position-embedding-type", "learned_absolute"))
    if args.get("--use-rotary-position-embeddings") in TRUE:
        position = "rope"
    if position not in ("learned_absolute", "rope", "none"):
        r.blocking.append(f"--position-embedding-type {position} is not modelled")
        return
    m = {
        "model_name": "megatron_functional_test", "model_type": "dense", "hidden_size": h, "head_num": heads,
        "kv_head_num": groups, "head_size": _int(args, "--kv-channels", h // heads), "intermediate_size": ffn,
        "layer_num": layers, "vocab_size": vocab, "use_swiglu": swiglu,
        "make_vocab_size_divisible_by": _int(args, "--make-vocab-size-divisible-by", 128),
        "normalization": str(args.get("--normalization", "LayerNorm")),
        "add_bias_linear": args.get("--disable-bias-linear") not in TRUE,
        "add_qkv_bias": args.get("--add-qkv-bias") in TRUE,
        "position_embedding_type": position,
        "attention_dropout": float(args.get("--attention-dropout", 0.1)),
        "hidden_dropout": float(args.get("--hidden-dropout", 0.1)),
        "untie_embeddings_and_output_weights": args.get("--untie-embeddings-and-output-weights") in TRUE,
        "mtp_num_layers": _int(args, "--mtp-num-layers", 0),
    }
    if position == "learned_absolute":
        m["max_position_embeddings"] = _int(args, "--max-position-embeddings", _int(args, "--seq-length"))
    r.model = m
    f = r.features
    f.append("swiglu" if swiglu else "gelu")
    f.append("rmsnorm" if m["normalization"] == "RMSNorm" else "layernorm")
    f.append("bias" if m["add_bias_linear"] else "no_bias")
    f.append(position)
    if m["hidden_dropout"] > 0 or m["attention_dropout"] > 0:
        f.append("dropout")
    f.append("untied" if m["untie_embeddings_and_output_weights"] else "tied")
    if m["mtp_num_layers"]:
        f.append("mtp")


def _strategy(args, world, r):
    if r.blocking:
        return
    tp = _int(args, "--tensor-model-parallel-size", 1)
    pp = _int(args, "--pipeline-model-parallel-size", 1)
    cp = _int(args, "--context-parallel-size", 1)
    if world % (tp * pp * cp):
        r.blocking.append(f"world size {world} is not a multiple of tp*pp*cp = {tp * pp * cp}")
        return
    dp = world // (tp * pp * cp)
    if cp > 1:
        # arguments.py --cp-comm-type defaults to p2p: TE's ring attention (AttnFuncWithCPAndKVP2P). The model
        # has SimuMax's a2a context parallelism only (docs/host.md: these cases stay fast once the host is fitted).
        r.listed.append("--cp-comm-type p2p (Megatron's default): TE's ring attention, priced as a2a")
    mbs = _int(args, "--micro-batch-size", 1)
    gbs = _int(args, "--global-batch-size", mbs * dp)
    if gbs % (mbs * dp):
        r.blocking.append(f"global batch {gbs} is not a multiple of micro batch x dp = {mbs * dp}")
        return
    layers = r.model["layer_num"]
    vp = 1
    if "--num-layers-per-virtual-pipeline-stage" in args:
        per = _int(args, "--num-layers-per-virtual-pipeline-stage")
        vp = layers // (pp * per)
    if "--num-virtual-stages-per-pipeline-rank" in args:
        vp = _int(args, "--num-virtual-stages-per-pipeline-rank")
    impl = str(args.get("--transformer-impl", "transformer_engine"))
    if impl != "transformer_engine":
        r.blocking.append(f"--transformer-impl {impl} is not modelled (TransformerEngine only)")
        return
    backend = str(args.get("--attention-backend", "auto"))
    s = {
        "seq_len": _int(args, "--seq-length"), "micro_batch_size": mbs, "micro_batch_num": gbs // (mbs * dp),
        "dtype": "fp16" if args.get("--fp16") in TRUE else "bf16", "fp8": False, "world_size": world,
        "tp_size": tp, "cp_size": cp, "pp_size": pp,
        "ep_size": _int(args, "--expert-model-parallel-size", 1) if "--num-experts" in args else 1,
        "etp_size": _int(args, "--expert-tensor-parallel-size", tp) if "--num-experts" in args else 1,
        "enable_sequence_parallel": args.get("--sequence-parallel") in TRUE and tp > 1,
        "interleaving_size": vp, "pp_comm_async": False, "enable_straggler_model": False,
        "zero_state": 1 if args.get("--use-distributed-optimizer") in TRUE else 0,
        "use_flash_sdp": backend != "unfused",
        "use_fused_grad_accumulation": args.get("--no-gradient-accumulation-fusion") not in TRUE,
        # SimuMax's fused loss is TE's kernel (bf16 logits kept). Megatron's default "native" fusion
        # (fusions/fused_cross_entropy.py) runs the unfused algorithm under torch.compile (docs/architectures.md).
        "cross_entropy_loss_fusion": args.get("--cross-entropy-loss-fusion") in TRUE,
        "megatron_overlap_grad_reduce": args.get("--overlap-grad-reduce") in TRUE,
        "megatron_overlap_param_gather": args.get("--overlap-param-gather") in TRUE,
        "account_for_embedding_in_pipeline_split": args.get("--account-for-embedding-in-pipeline-split") in TRUE,
        "account_for_loss_in_pipeline_split": args.get("--account-for-loss-in-pipeline-split") in TRUE,
        "enable_recompute": False,
        # training/determinism.py: torch.use_deterministic_algorithms(True), so every torch.empty fills its tensor
        # (the strategy key's fill kernels; NCCL_ALGO=Ring, the test's environment, is not modelled).
        "deterministic_mode": args.get("--deterministic-mode") in TRUE,
    }
    if s["cross_entropy_loss_fusion"]:
        s["cross_entropy_fusion_impl"] = str(args.get("--cross-entropy-fusion-impl", "native"))
        if s["cross_entropy_fusion_impl"] not in ("native", "te"):
            r.blocking.append(f"--cross-entropy-fusion-impl {s['cross_entropy_fusion_impl']} is not modelled")
            return
    for key, field in (("--decoder-first-pipeline-num-layers", "num_layers_in_first_pipeline_stage"),
                       ("--decoder-last-pipeline-num-layers", "num_layers_in_last_pipeline_stage")):
        if key in args:
            s[field] = _int(args, key)
    granularity = args.get("--recompute-granularity")
    if granularity == "full":
        if str(args.get("--recompute-method", "uniform")) != "uniform" or _int(args, "--recompute-num-layers", 1) != 1:
            r.blocking.append("full recompute other than uniform over single layers is not mapped")
            return
        s.update(enable_recompute=True, recompute_granularity="full_block", recompute_layer_num=layers // pp)
        r.features.append("full_recompute")
    elif granularity == "selective":
        s.update(enable_recompute=True, recompute_granularity="selective_recompute", megatron_recompute=True,
                 megatron_recompute_modules=["core_attn"], recompute_layer_num=layers // pp)
        r.features.append("selective_recompute")
    elif granularity is not None:
        r.blocking.append(f"--recompute-granularity {granularity} is not mapped")
        return
    if "--recompute-method" in args and granularity is None:
        r.blocking.append("--recompute-method without a granularity is not mapped")
        return
    r.strategy = s
    f = r.features
    f.append(f"tp{tp}_pp{pp}" + (f"_vp{vp}" if vp > 1 else "") + (f"_cp{cp}" if cp > 1 else ""))
    if r.tp_pp_dp_order:
        f.append("tp_pp_dp_order")
    if s["zero_state"]:
        f.append("dist_optimizer")
    if not s["use_flash_sdp"]:
        f.append("unfused_attention")
    if args.get("--cross-entropy-loss-fusion") in TRUE:
        f.append("ce_fusion_" + str(args.get("--cross-entropy-fusion-impl", "native")))
    if not s["use_fused_grad_accumulation"]:
        f.append("no_grad_accum_fusion")
    if s["deterministic_mode"]:
        f.append("deterministic")


def _environment(env, r):
    """The test's environment variables that change what is allocated: PyTorch's cuBLAS workspace size."""
    if r.blocking:
        return
    config = env.get("CUBLAS_WORKSPACE_CONFIG")
    if config is not None:
        r.strategy["cublas_workspace_config"] = str(config)


# Containers a golden file can have been recorded in other than its environment's current one (the importer
# says which, tools/import_megatron_tests `recorded_in`), with the TransformerEngine version they hold.
CONTAINERS = {
    # The lts image until Megatron-LM 23a1dcaf (2025-11-06, "ci: Bump LTS container": .gitlab/stages/01.build.yml
    # BASE_IMAGE nvcr.io/nvidia/pytorch:24.01-py3 -> 25.09-py3, Dockerfile.ci.lts installs no TE of its own).
    # Released in January 2024, it holds a TE no later than v1.2.1 (2024-01-19; v1.3 is 2024-02-02).
    "pytorch:24.01": "nvcr.io/nvidia/pytorch:24.01-py3 (TransformerEngine <= 1.2.1)",
}
SM80_MACHINES = {"dgx_a100"}


def _recorded_in(container, env, machine, r):
    """What the older container runs differently, where it changes what we model: its attention backend.

    TE <= 1.2.1, transformer_engine/pytorch/attention.py DotProductAttention: with
    NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 (`self.deterministic`), __init__ disables FlashAttention 2 ("version 2 does
    not support deterministic execution"), and forward's determinism filter drops FusedAttention's
    F16_arbitrary_seqlen backend on any GPU but sm90. cuDNN's F16_max512_seqlen backend needs
    max_seqlen <= 512 (common/fused_attn/fused_attn.cpp nvte_get_fused_attn_backend). So on sm80 with a longer
    sequence the attention is UnfusedDotProductAttention (its [b, h, s, s] scores, softmax and dropout mask kept
    for the backward). From TE 1.3 on FlashAttention >= 2.4.1 runs deterministically, which is what the tests'
    current containers run."""
    if r.blocking:
        return
    r.container = CONTAINERS[container]
    r.features.append("lts_" + container.split(":")[1])
    deterministic = str(env.get("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1")) == "0"
    s = r.strategy
    if deterministic and machine in SM80_MACHINES and s["seq_len"] > 512 and s["use_flash_sdp"]:
        s["use_flash_sdp"] = False
        r.features.append("unfused_attention")
        r.container_effects.append(
            "NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 on sm80 with seq_len > 512: TE <= 1.2.1 runs "
            "UnfusedDotProductAttention (FlashAttention 2 and cuDNN's arbitrary-seqlen backend are not "
            "deterministic there), so use_flash_sdp is false")


def _moe(args, r):
    """--num-experts: SimuMax's MoE keys, or the reason the test's MoE is not what SimuMax models."""
    if r.blocking or "--num-experts" not in args:
        return
    dispatcher = str(args.get("--moe-token-dispatcher-type", "allgather"))
    if dispatcher != "alltoall":
        r.blocking.append(f"MoE token dispatcher {dispatcher} is not modelled (all-to-all only)")
    if args.get("--moe-grouped-gemm") not in TRUE:
        r.blocking.append("MoE experts as SequentialMLP (no --moe-grouped-gemm) are not modelled")
    balancing = str(args.get("--moe-router-load-balancing-type", "aux_loss"))
    if balancing not in ("aux_loss", "seq_aux_loss"):
        r.blocking.append(f"MoE router load balancing {balancing} is not modelled")
    if r.blocking:
        return
    m = r.model
    m["model_type"] = "moe"
    m["expert_num"] = _int(args, "--num-experts")
    m["topk"] = _int(args, "--moe-router-topk", 2)
    if "--moe-ffn-hidden-size" in args:
        m["moe_ffn_hidden_size"] = _int(args, "--moe-ffn-hidden-size")
    if "--moe-shared-expert-intermediate-size" in args:
        m["moe_shared_expert_intermediate_size"] = _int(args, "--moe-shared-expert-intermediate-size")
    # Megatron's dropless MoE: no capacity padding; SimuMax gives every local expert an equal share.
    m["moe_pad_expert_input_to_capacity"] = False
    r.features.append(f"moe_e{m['expert_num']}_top{m['topk']}")
