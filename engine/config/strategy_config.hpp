// SimuMax's strategy config (strategy/*.json) as a plain struct, with SimuMax's defaults.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace simumax::config {

enum class Dtype { kBf16, kFp16, kFp32 };
enum class RecomputeGranularity { kNone, kFullBlock, kAttnOnly, kMlpOnly, kSdpOnly, kSelective };
// Which model of the step (docs/accuracy.md). kMegatron, the default: what Megatron-LM + TransformerEngine
// execute (the kernels SimuMax omits, Megatron's DP buckets, shape-aware efficiency fallback, the system's
// calibration). kSimuMax: SimuMax v1.2's analytical model, bit for bit (the parity test runs it).
enum class Fidelity { kMegatron, kSimuMax };
const char* to_string(Fidelity f);
inline constexpr std::array<Fidelity, 2> kFidelities = {Fidelity::kMegatron, Fidelity::kSimuMax};
// TransformerEngine's low-precision recipe of the GEMMs when fp8 is on (Megatron's --fp8-recipe, --fp4-recipe;
// docs/low-precision.md). kDelayed is SimuMax's fp8 model; the others are megatron fidelity only.
enum class Fp8Recipe { kDelayed, kTensorwise, kMxfp8, kNvfp4 };
const char* to_string(Fp8Recipe r);
// Megatron's --cuda-graph-impl: "none", "local" (Megatron's CudaGraphManager) or "transformer_engine".
enum class CudaGraphImpl { kNone, kLocal, kTransformerEngine };
// A version such as "2.11.0" parsed SimuMax's way: the first three runs of digits, zero-padded.
// Absent (nullopt) means "feature disabled".
using Version = std::optional<std::vector<int>>;

struct StrategyConfig {
  int64_t seq_len = 0;             // required
  int64_t micro_batch_size = 0;    // required
  int64_t micro_batch_num = 0;     // required, >= 1 (SimuMax wrongly accepts 0)
  Dtype dtype = Dtype::kBf16;
  bool fp8 = false;
  // Ours (docs/low-precision.md): "fp8_recipe", read only with fp8 true.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  int64_t world_size = 8;
  int64_t tp_size = 1;
  int64_t cp_size = 1;
  int64_t pp_size = 1;
  int64_t ep_size = 1;
  int64_t etp_size = 1;
  std::string cp_comm_type = "a2a";
  std::string cp_a2a_mode = "async_cp";
  std::string moe_dispatcher_policy = "all2all";
  std::optional<int64_t> num_layers_in_first_pipeline_stage;
  std::optional<int64_t> num_layers_in_last_pipeline_stage;
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  bool grad_reduce_in_bf16 = false;
  bool cache_groupgemm_col_fp8_inputs = false;
  bool offload_groupgemm_col_inputs = false;
  bool attn_recompute = false;
  bool mla_rms_recompute = false;
  bool mlp_recompute = false;
  bool mlp_rms_recompute = false;
  bool enable_sequence_parallel = true;
  int64_t interleaving_size = 1;
  std::optional<int64_t> microbatch_group_size_per_vp_stage;  // None -> pp_size when vp > 1
  bool pp_comm_async = true;
  // Ours, beyond SimuMax's schema: a registered schedule's name (engine/schedule/registry.hpp, docs/schedules.md).
  std::string pipeline_schedule = "1f1b";
  bool enable_straggler_model = true;
  int64_t zero_state = 1;
  double attention_sparse_ratio = 0.0;
  bool enable_dropout = false;
  bool use_fp32_accum_grad = true;
  bool use_accm_weight = true;
  bool enable_recompute = true;
  RecomputeGranularity recompute_granularity = RecomputeGranularity::kNone;
  int64_t recompute_layer_num = 0;
  bool recompute_variance = false;
  bool megatron_recompute = false;
  std::vector<std::string> megatron_recompute_modules;
  bool use_flash_sdp = true;
  bool use_math_sdp = false;
  bool use_fused_norm = true;
  bool use_fused_swiglu = true;
  bool use_fused_grad_accumulation = true;
  bool cross_entropy_loss_fusion = false;
  bool overlap_grad_reduce = true;  // SimuMax ignores it (DP comm never overlapped)
  Version te_version;
  Version te_dummy_wgrad_min_version = std::vector<int>{2, 3, 0};
  Version te_cp_a2a_save_pre_posta2a_min_version = std::vector<int>{2, 8, 0};
  Version te_grouped_linear_dummy_wgrad_min_version = std::vector<int>{2, 10, 0};
  bool dispatch_probs = false;
  double mem_factor = 0.94;

  // Ours, beyond SimuMax's schema (docs/overlap.md): Megatron's communication overlaps, all off by default so
  // that the analytical base stays SimuMax's (whose overlap_grad_reduce defaults to true but is never applied).
  bool megatron_overlap_grad_reduce = false;   // DP reduce-scatter bucket by bucket during the last backward
  bool megatron_overlap_param_gather = false;  // DP parameter all-gather overlapped with the first forward
  bool megatron_overlap_p2p_comm = false;      // pipeline send/recv off the compute stream
  bool megatron_tp_comm_overlap = false;       // TP collectives overlapped with their GEMMs
  bool megatron_moe_shared_expert_overlap = false;  // shared experts computed behind the EP token all-to-alls
  // Slow-down of compute while an overlapped collective (DP bucket, TP collective, async pipeline send, EP
  // all-to-all) shares the SMs (0.1 = 10 % longer); absent: the processor_usage of the collective's network
  // tier in the system config.
  std::optional<double> sm_contention;
  // Ours (docs/low-precision.md): Megatron-FSDP (--use-megatron-fsdp, optim_grads_params sharding, with
  // zero_state 3): each layer's parameters all-gathered before its forward and its backward, its gradients
  // reduce-scattered after its backward, beside compute (megatron fidelity); no DP work at the step end.
  bool megatron_fsdp = false;
  // Ours: Megatron's CUDA graphs (--cuda-graph-impl, --cuda-graph-scope). Read and checked; the launches they
  // save belong to the host lane (issue 31), so they change no time or memory yet.
  CudaGraphImpl cuda_graph_impl = CudaGraphImpl::kNone;
  std::vector<std::string> cuda_graph_scope;
  // Ours: Megatron's MoE routing and dispatch settings (--moe-token-dispatcher-type, --moe-flex-dispatcher-
  // backend, --moe-router-force-load-balancing, --moe-expert-capacity-factor). The model routes tokens evenly
  // and moves the same all-to-all bytes with either dispatcher; at the megatron fidelity HybridEP's and
  // force-balanced routing's own kernels are priced (docs/low-precision.md), the capacity factor is read only.
  std::string moe_token_dispatcher = "alltoall";
  std::string moe_flex_dispatcher_backend;  // "deepep" | "hybridep" with the "flex" dispatcher, else empty
  bool moe_router_force_load_balancing = false;
  std::optional<double> moe_capacity_factor;  // absent: dropless
  // Megatron's --moe-permute-fusion: TE's fused permute and unpermute (transformer_engine/pytorch/permutation.py,
  // moe_permute / moe_unpermute): one kernel each way, reading the rows once and writing them once, where
  // SimuMax's (un)permutation prices two. Megatron fidelity only; default false, as in Megatron.
  bool moe_permute_fusion = false;
  // Megatron's --moe-router-fusion: TE's fused top-k with its score function and the fused aux-loss kernels
  // (moe_utils.py topk_routing_with_score_function, compute_routing_scores_for_aux_loss,
  // switch_load_balancing_loss_func with fused=True). Megatron fidelity only; default false, as in Megatron.
  bool moe_router_fusion = false;
  // Megatron's --moe-permute-fusion-into-hybridep: HybridEP's permute inside its dispatch and combine kernels;
  // without it hybrid_ep_dispatch permutes in a kernel of its own, one pass over the rows each way.
  bool moe_permute_fusion_into_hybridep = false;
  // The flex dispatcher with the HybridEP backend (token_dispatcher.py _HybridEPManager): one dispatch call
  // permutes, sends and permutes for the experts, and its combine the reverse (megatron fidelity).
  // Megatron-FSDP as the megatron fidelity prices it (the simumax fidelity prices zero_state 3 as SimuMax does).
  bool fsdp() const { return megatron() && megatron_fsdp; }
  // DP communication overlapped with compute (bucketed reduce-scatter or overlapped parameter all-gather).
  bool overlaps_dp() const { return megatron_overlap_grad_reduce || megatron_overlap_param_gather; }
  bool hybrid_ep() const {
    return megatron() && moe_token_dispatcher == "flex" && moe_flex_dispatcher_backend == "hybridep";
  }
  // Megatron's --cross-entropy-fusion-impl when cross_entropy_loss_fusion is on: "te" (TE's fused kernel, what
  // SimuMax models) or "native" (fusions/fused_cross_entropy.py: the unfused algorithm under torch.compile).
  enum class CeFusionImpl { kTe, kNative };
  CeFusionImpl cross_entropy_fusion_impl = CeFusionImpl::kTe;
  // The run's CUBLAS_WORKSPACE_CONFIG (PyTorch's ":SIZE_KiB:COUNT[:SIZE:COUNT...]"), as bytes per cuBLAS
  // workspace; absent: the system config's default (its "workspaces"). Megatron fidelity only.
  std::optional<int64_t> cublas_workspace_config_bytes;
  // Megatron's --deterministic-mode (training/determinism.py: torch.use_deterministic_algorithms(True)): with
  // PyTorch's torch.utils.deterministic.fill_uninitialized_memory (default True) every torch.empty fills its
  // tensor with NaN, one more kernel (and launch) per output TransformerEngine allocates. Megatron fidelity only.
  bool deterministic_mode = false;
  Fidelity fidelity = Fidelity::kMegatron;  // "fidelity": "megatron" | "simumax" (run --fidelity overrides it)
  bool megatron() const { return fidelity == Fidelity::kMegatron; }
  // The system's compute entry of a (grouped) GEMM: "matmul" / "group_matmul" without fp8; with it SimuMax's
  // "fp8_..." (the simumax fidelity, and the delayed and tensorwise recipes), "mxfp8_..." or "nvfp4_...".
  std::string gemm_op(bool grouped) const;

  int64_t dp_size() const { return world_size / (pp_size * tp_size * cp_size); }
  int64_t edp_size() const { return world_size / (ep_size * etp_size * pp_size); }
  int64_t global_batch_size() const { return micro_batch_size * micro_batch_num * dp_size(); }
  // Activation / communication element size in bytes.
  int64_t element_bytes() const { return dtype == Dtype::kFp32 ? 4 : 2; }
  // Main-gradient element size (Megatron's main_grad buffer).
  int64_t main_grad_bytes() const { return (grad_reduce_in_bf16 || !use_fp32_accum_grad) ? 2 : 4; }
  bool sp() const { return enable_sequence_parallel; }
  // True when `have` >= `threshold` (both set); SimuMax's TE feature gates.
  static bool version_at_least(const Version& have, const Version& threshold);

  bool operator==(const StrategyConfig&) const = default;
};

// PyTorch's CUBLAS_WORKSPACE_CONFIG (ATen CublasHandlePool.cpp parseChosenWorkspaceSize): a run of ":SIZE:COUNT"
// groups, SIZE in KiB, summed as SIZE * 1024 * COUNT. Returns the bytes, or nullopt when `config` is not such a
// run or sums to 0 or more than 4 GiB (PyTorch would warn and fall back to its default).
std::optional<int64_t> parse_cublas_workspace_config(const std::string& config);

}  // namespace simumax::config
