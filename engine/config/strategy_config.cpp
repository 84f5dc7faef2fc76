#include "engine/config/strategy_config.hpp"

#include <algorithm>
#include <cctype>

#include <spdlog/fmt/fmt.h>

#include "engine/common/logging.hpp"
#include "engine/config/config_parsers.hpp"
#include "engine/schedule/registry.hpp"

namespace simumax::config {

const char* to_string(Fidelity f) { return f == Fidelity::kSimuMax ? "simumax" : "megatron"; }

namespace {
constexpr const char* kFp8Recipes[] = {"delayed", "tensorwise", "mxfp8", "nvfp4"};  // in Fp8Recipe order
}  // namespace

const char* to_string(Fp8Recipe r) { return kFp8Recipes[static_cast<int>(r)]; }

std::string StrategyConfig::gemm_op(bool grouped) const {
  const char* gemm = grouped ? "group_matmul" : "matmul";
  if (!fp8) return gemm;
  const bool block_scaled = megatron() && (fp8_recipe == Fp8Recipe::kMxfp8 || fp8_recipe == Fp8Recipe::kNvfp4);
  return std::string(block_scaled ? to_string(fp8_recipe) : "fp8") + "_" + gemm;
}

bool StrategyConfig::version_at_least(const Version& have, const Version& threshold) {
  if (!have || !threshold) return false;
  return *have >= *threshold;
}

std::optional<int64_t> parse_cublas_workspace_config(const std::string& config) {
  constexpr int64_t kMax = int64_t{1} << 32;
  int64_t total = 0;
  size_t i = 0;
  auto number = [&](int64_t& out) {
    const size_t start = i;
    out = 0;
    while (i < config.size() && std::isdigit(static_cast<unsigned char>(config[i])) && i - start < 10) {
      out = out * 10 + (config[i++] - '0');
    }
    return i > start && (i == config.size() || !std::isdigit(static_cast<unsigned char>(config[i])));
  };
  while (i < config.size()) {
    int64_t size = 0, count = 0;
    if (config[i++] != ':' || !number(size) || i >= config.size() || config[i++] != ':' || !number(count)) {
      return std::nullopt;
    }
    // Each factor checked before the product, so nothing overflows: the sum stays <= 2 * kMax.
    if (size > kMax / 1024 || (size > 0 && count > kMax / (size * 1024))) return std::nullopt;
    total += size * 1024 * count;
    if (total > kMax) return std::nullopt;
  }
  if (total <= 0) return std::nullopt;
  return total;
}

namespace detail {
namespace {

// SimuMax's _version_tuple: the first three runs of digits, zero-padded; no digits means "disabled".
Version version_from_text(ObjectReader& r, const std::string& key, const std::string& text) {
  // SimuMax reads the first three runs of digits ("v2.8", "release_v2.10.0rc1.dev4", "2"). A major number followed
  // by a dot and no minor number ("2.x", "2.") reads as 2.0.0 there, which is a guess: refuse it.
  const size_t first = text.find_first_of("0123456789");
  if (first != std::string::npos) {
    const size_t major_end = text.find_first_not_of("0123456789", first);
    if (major_end != std::string::npos && text[major_end] == '.' &&
        (major_end + 1 == text.size() || !std::isdigit(static_cast<unsigned char>(text[major_end + 1])))) {
      r.fail(key, "expected a version with its minor number, such as \"2.11.0\" (null: feature off)");
    }
  }
  std::vector<int> parts;
  std::string digits;
  for (size_t i = 0; i <= text.size() && parts.size() < 3; ++i) {
    if (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      digits += text[i];
    } else if (!digits.empty()) {
      if (digits.size() > 9) r.fail(key, "version component " + digits + " is too large");
      parts.push_back(std::stoi(digits));
      digits.clear();
    }
  }
  if (parts.empty()) return std::nullopt;
  parts.resize(3, 0);
  return parts;
}

// Absent means the default; null means "disabled", as None does in SimuMax.
Version read_version(ObjectReader& r, const std::string& key, const char* fallback) {
  if (!r.present(key)) return fallback == nullptr ? Version() : version_from_text(r, key, fallback);
  const auto text = r.optional_string(key);
  return text ? version_from_text(r, key, *text) : Version();
}

void read_batch_and_groups(ObjectReader& r, StrategyConfig& s) {
  s.seq_len = r.required_int("seq_len", Sign::kPositive);
  s.micro_batch_size = r.required_int("micro_batch_size", Sign::kPositive);
  if (r.optional_int("micro_batch_num", Sign::kAny) == 0) {
    r.fail("micro_batch_num", "must be at least 1 (SimuMax accepts 0 and reports a step that trains nothing)");
  }
  s.micro_batch_num = r.required_int("micro_batch_num", Sign::kPositive);
  if (s.micro_batch_num > 32767) {  // graph::Task keeps a micro-batch in 16 bits (23 M tasks at 16k GPUs)
    r.fail("micro_batch_num", "expected at most 32767 micro-batches, got " + std::to_string(s.micro_batch_num));
  }
  if (const auto it = r.json().find("dtype"); it != r.json().end() && *it == "fp8") {
    r.fail("dtype",
           "expected one of \"bf16\", \"fp16\", \"fp32\", got \"fp8\"; fp8 training is the separate "
           "flag \"fp8\": true (with dtype \"bf16\")");
  }
  const std::string dtype = r.choice_or("dtype", "bf16", {"bf16", "fp16", "fp32"});
  s.dtype = dtype == "fp32" ? Dtype::kFp32 : dtype == "fp16" ? Dtype::kFp16 : Dtype::kBf16;
  s.fp8 = r.bool_or_null("fp8", false);
  if (const auto recipe = r.optional_choice("fp8_recipe", {std::begin(kFp8Recipes), std::end(kFp8Recipes)})) {
    if (!s.fp8) r.fail("fp8_recipe", "needs fp8 true: it names the recipe of the fp8 GEMMs; set fp8 true or remove it");
    s.fp8_recipe = static_cast<Fp8Recipe>(std::find(std::begin(kFp8Recipes), std::end(kFp8Recipes), *recipe) -
                                          std::begin(kFp8Recipes));
  }
  s.world_size = r.int_or("world_size", 8, Sign::kPositive);
  s.tp_size = r.int_or("tp_size", 1, Sign::kPositive);
  s.cp_size = r.int_or("cp_size", 1, Sign::kPositive);
  s.pp_size = r.int_or("pp_size", 1, Sign::kPositive);
  s.ep_size = r.int_or("ep_size", 1, Sign::kPositive);
  s.etp_size = r.int_or("etp_size", 1, Sign::kPositive);
  // Megatron's CP flavours; check_scenario explains that only "a2a" is modelled.
  s.cp_comm_type = r.choice_or("cp_comm_type", "a2a", {"a2a", "all_gather", "p2p", "a2a+p2p"});
  s.cp_a2a_mode = r.choice_or("cp_a2a_mode", "async_cp", {"async_cp", "sync_cp"});
  r.choice_or("order_of_paralielism", "tp-cp-ep-dp-pp", {"tp-cp-ep-dp-pp"});
  s.moe_dispatcher_policy = r.choice_or("moe_dispatcher_policy", "all2all", {"all2all", "all2all-seq"});
  if (s.moe_dispatcher_policy == "all2all-seq") {
    const FieldLocation at = r.where("moe_dispatcher_policy");
    common::logger("config")->warn("{}: {}: \"all2all-seq\" is no longer supported; using \"all2all\" as SimuMax does",
                                   at.file, at.pointer);
    s.moe_dispatcher_policy = "all2all";
  }
}

void read_pipeline_and_memory(ObjectReader& r, StrategyConfig& s) {
  s.num_layers_in_first_pipeline_stage = r.optional_int("num_layers_in_first_pipeline_stage", Sign::kNonNegative);
  s.num_layers_in_last_pipeline_stage = r.optional_int("num_layers_in_last_pipeline_stage", Sign::kNonNegative);
  s.account_for_embedding_in_pipeline_split = r.bool_or("account_for_embedding_in_pipeline_split", false);
  s.account_for_loss_in_pipeline_split = r.bool_or("account_for_loss_in_pipeline_split", false);
  s.grad_reduce_in_bf16 = r.bool_or("grad_reduce_in_bf16", false);
  s.cache_groupgemm_col_fp8_inputs = r.bool_or_null("cache_groupgemm_col_fp8_inputs", false);
  s.offload_groupgemm_col_inputs = r.bool_or_null("offload_groupgemm_col_inputs", false);
  s.enable_sequence_parallel = r.bool_or("enable_sequence_parallel", true);
  s.interleaving_size = r.int_or("interleaving_size", 1, Sign::kPositive);
  s.microbatch_group_size_per_vp_stage = r.optional_int("microbatch_group_size_per_vp_stage", Sign::kPositive);
  s.pp_comm_async = r.bool_or("pp_comm_async", true);
  {
    const std::vector<std::string> names = schedule::names();
    s.pipeline_schedule = r.choice_or("pipeline_schedule", names.front(), names);
  }
  s.enable_straggler_model = r.bool_or("enable_straggler_model", true);
  s.zero_state = r.int_or("zero_state", 1, Sign::kNonNegative);
  if (s.zero_state > 3)
    r.fail("zero_state", "expected 0, 1, 2 or 3 (the ZeRO stage), got " + std::to_string(s.zero_state));
  s.attention_sparse_ratio = r.number_or("attention_sparse_ratio", 0.0, Sign::kNonNegative);
  if (s.attention_sparse_ratio >= 1.0) {
    r.fail("attention_sparse_ratio",
           fmt::format("expected a fraction in [0, 1) of attention FLOPs skipped, got {}", s.attention_sparse_ratio));
  }
  s.enable_dropout = r.bool_or("enable_dropout", false);
  s.use_fp32_accum_grad = r.bool_or("use_fp32_accum_grad", true);
  s.use_accm_weight = r.bool_or("use_accm_weight", true);
  s.dispatch_probs = r.bool_or("dispatch_probs", false);
  s.mem_factor = r.number_or("mem_factor", 0.94, Sign::kPositive);
  // Below 5 % usable, the allocator model (reserved = allocated / mem_factor) describes no real run.
  if (s.mem_factor > 1.0 || s.mem_factor < 0.05) {
    r.fail("mem_factor", fmt::format("expected a fraction in [0.05, 1] of GPU memory usable, got {}", s.mem_factor));
  }
}

// FSDP, CUDA graphs and the MoE dispatch settings (docs/low-precision.md).
void read_megatron_extensions(ObjectReader& r, StrategyConfig& s) {
  s.megatron_fsdp = r.bool_or("megatron_fsdp", false);
  const std::string impl = r.choice_or("cuda_graph_impl", "none", {"none", "local", "transformer_engine"});
  s.cuda_graph_impl = impl == "local"                ? CudaGraphImpl::kLocal
                      : impl == "transformer_engine" ? CudaGraphImpl::kTransformerEngine
                                                     : CudaGraphImpl::kNone;
  // Megatron's CudaGraphScope names (megatron/core/transformer/enums.py).
  s.cuda_graph_scope = r.string_list("cuda_graph_scope", {"full_iteration", "attn", "mlp", "moe", "moe_router",
                                                          "moe_preprocess", "mamba", "full_iteration_inference"});
  if (!s.cuda_graph_scope.empty() && s.cuda_graph_impl == CudaGraphImpl::kNone) {
    r.fail("cuda_graph_scope", "needs cuda_graph_impl \"local\" or \"transformer_engine\": without an "
                               "implementation nothing is captured; set one or remove the scope");
  }
  s.moe_token_dispatcher = r.choice_or("moe_token_dispatcher", "alltoall", {"alltoall", "flex"});
  if (const auto backend = r.optional_choice("moe_flex_dispatcher_backend", {"deepep", "hybridep"})) {
    if (s.moe_token_dispatcher != "flex") {
      r.fail("moe_flex_dispatcher_backend", "needs moe_token_dispatcher \"flex\" (the backend of the flex "
                                            "dispatcher); set it or remove the backend");
    }
    s.moe_flex_dispatcher_backend = *backend;
  } else if (s.moe_token_dispatcher == "flex") {
    r.fail("moe_flex_dispatcher_backend", "required with moe_token_dispatcher \"flex\": \"deepep\" or \"hybridep\"");
  }
  s.moe_router_force_load_balancing = r.bool_or("moe_router_force_load_balancing", false);
  s.moe_capacity_factor = r.optional_number("moe_capacity_factor", Sign::kPositive);
  if (s.moe_capacity_factor && (*s.moe_capacity_factor < 0.01 || *s.moe_capacity_factor > 1000)) {
    r.fail("moe_capacity_factor", fmt::format("expected a factor in [0.01, 1000] of the balanced token count per "
                                              "expert, got {}", *s.moe_capacity_factor));
  }
  s.moe_permute_fusion = r.bool_or("moe_permute_fusion", false);
  s.moe_router_fusion = r.bool_or("moe_router_fusion", false);
  s.moe_permute_fusion_into_hybridep = r.bool_or("moe_permute_fusion_into_hybridep", false);
  if (s.moe_permute_fusion_into_hybridep && s.moe_flex_dispatcher_backend != "hybridep") {
    r.fail("moe_permute_fusion_into_hybridep", "needs moe_token_dispatcher \"flex\" with moe_flex_dispatcher_backend "
                                               "\"hybridep\": it fuses HybridEP's permute; remove it or use HybridEP");
  }
}

void read_recompute_and_kernels(ObjectReader& r, StrategyConfig& s) {
  s.attn_recompute = r.bool_or("attn_recompute", false);
  s.mla_rms_recompute = r.bool_or("mla_rms_recompute", false);
  s.mlp_recompute = r.bool_or("mlp_recompute", false);
  s.mlp_rms_recompute = r.bool_or("mlp_rms_recompute", false);
  s.enable_recompute = r.bool_or("enable_recompute", true);
  const auto granularity = r.optional_choice(
      "recompute_granularity", {"full_block", "attn_only", "mlp_only", "sdp_only", "selective_recompute"});
  using G = RecomputeGranularity;
  s.recompute_granularity = !granularity                   ? G::kNone
                            : *granularity == "full_block" ? G::kFullBlock
                            : *granularity == "attn_only"  ? G::kAttnOnly
                            : *granularity == "mlp_only"   ? G::kMlpOnly
                            : *granularity == "sdp_only"   ? G::kSdpOnly
                                                           : G::kSelective;
  s.recompute_layer_num = r.int_or("recompute_layer_num", 0, Sign::kNonNegative);
  s.recompute_variance = r.bool_or("recompute_variance", false);
  s.megatron_recompute = r.bool_or("megatron_recompute", false);
  s.megatron_recompute_modules =
      r.string_list("megatron_recompute_modules", {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe"});
  s.use_flash_sdp = r.bool_or("use_flash_sdp", true);
  s.use_math_sdp = r.bool_or("use_math_sdp", false);
  s.use_fused_norm = r.bool_or("use_fused_norm", true);
  s.use_fused_swiglu = r.bool_or("use_fused_swiglu", true);
  s.use_fused_grad_accumulation = r.bool_or("use_fused_grad_accumulation", true);
  s.cross_entropy_loss_fusion = r.bool_or("cross_entropy_loss_fusion", false);
  s.overlap_grad_reduce = r.bool_or("overlap_grad_reduce", true);
  s.megatron_overlap_grad_reduce = r.bool_or("megatron_overlap_grad_reduce", false);
  s.megatron_overlap_param_gather = r.bool_or("megatron_overlap_param_gather", false);
  s.megatron_overlap_p2p_comm = r.bool_or("megatron_overlap_p2p_comm", false);
  s.megatron_tp_comm_overlap = r.bool_or("megatron_tp_comm_overlap", false);
  s.megatron_moe_shared_expert_overlap = r.bool_or("megatron_moe_shared_expert_overlap", false);
  if (auto f = r.optional_number("sm_contention", Sign::kNonNegative)) {
    if (*f > 10) r.fail("sm_contention", fmt::format("expected a slow-down in [0, 10] (10: 11x longer), got {}", *f));
    s.sm_contention = *f;
  }
  read_megatron_extensions(r, s);
  s.cross_entropy_fusion_impl = r.choice_or("cross_entropy_fusion_impl", "te", {"te", "native"}) == "native"
                                    ? StrategyConfig::CeFusionImpl::kNative
                                    : StrategyConfig::CeFusionImpl::kTe;
  if (auto config = r.optional_string("cublas_workspace_config")) {
    s.cublas_workspace_config_bytes = parse_cublas_workspace_config(*config);
    if (!s.cublas_workspace_config_bytes) {
      r.fail("cublas_workspace_config",
             "expected PyTorch's CUBLAS_WORKSPACE_CONFIG format \":SIZE_KiB:COUNT\" (repeatable, e.g. \":4096:8\" "
             "or \":4096:2:16:8\"), at most 4 GiB in all, got \"" + *config + "\"");
    }
  }
  s.deterministic_mode = r.bool_or("deterministic_mode", false);
  s.fidelity = r.optional_choice("fidelity", {"megatron", "simumax"}).value_or("megatron") == "simumax"
                   ? Fidelity::kSimuMax
                   : Fidelity::kMegatron;
  s.te_version = read_version(r, "te_version", nullptr);
  s.te_dummy_wgrad_min_version = read_version(r, "te_dummy_wgrad_min_version", "2.3.0");
  s.te_cp_a2a_save_pre_posta2a_min_version = read_version(r, "te_cp_a2a_save_pre_posta2a_min_version", "2.8.0");
  s.te_grouped_linear_dummy_wgrad_min_version = read_version(r, "te_grouped_linear_dummy_wgrad_min_version", "2.10.0");
}

// SimuMax overwrites the network of every group from the system config (run_estimate re-analyses them).
void read_ignored_nets(ObjectReader& r) {
  for (const char* key : {"tp_net", "cp_net", "pp_net", "dp_net", "ep_net", "etp_net", "edp_net"}) {
    const auto net = r.optional_string(key);
    if (net && *net != "auto") {
      const FieldLocation at = r.where(key);
      common::logger("config")->warn(
          "{}: {}: \"{}\" is ignored; the network of each group is chosen from the "
          "system config and the rank layout (SimuMax does the same)",
          at.file, at.pointer, *net);
    }
  }
}

}  // namespace

StrategyConfig parse_strategy(const Json& json, const ConfigOrigin& origin) {
  ObjectReader r(json, origin);
  StrategyConfig s;
  read_batch_and_groups(r, s);
  read_pipeline_and_memory(r, s);
  read_recompute_and_kernels(r, s);
  read_ignored_nets(r);
  r.finish(UnknownKeys::kError);
  // sanity_check's side effects: Megatron's full recompute has no variance tail, and the VPP group size
  // defaults to the pipeline size.
  if (s.recompute_granularity == RecomputeGranularity::kFullBlock) s.recompute_variance = false;
  if (s.interleaving_size > 1 && !s.microbatch_group_size_per_vp_stage) {
    s.microbatch_group_size_per_vp_stage = s.pp_size;
  }
  return s;
}

}  // namespace detail
}  // namespace simumax::config
