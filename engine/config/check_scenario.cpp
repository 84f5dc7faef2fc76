#include <numeric>

#include <spdlog/fmt/fmt.h>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/config/check_rules.hpp"
#include "engine/config/schedule_layout.hpp"

namespace simumax::config {

namespace detail {

using common::ConfigError;

void RuleContext::strategy_error(const std::string& key, const std::string& message, const std::string& suffix) const {
  const FieldLocation at = s_.strategy_origin.locate(key);
  throw ConfigError(at.file, at.pointer + suffix, message);
}

void RuleContext::model_error(const std::string& key, const std::string& message) const {
  const FieldLocation at = s_.model_origin.locate(key);
  throw ConfigError(at.file, at.pointer, message);
}

void RuleContext::system_error(const std::string& key, const std::string& message) const {
  const FieldLocation at = s_.system_origin.locate(key);
  throw ConfigError(at.file, at.pointer, message);
}

std::vector<int64_t> divisors(int64_t n, size_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && out.size() < limit; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::string join(const std::vector<int64_t>& values) { return fmt::format("{}", fmt::join(values, ", ")); }

namespace {

void check_world(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const int64_t shard = s.tp_size * s.cp_size * s.pp_size;
  if (s.world_size % shard != 0) {
    c.strategy_error(
        "world_size",
        fmt::format("{} is not a multiple of tp_size*cp_size*pp_size = {}*{}*{} = {}, so the data-parallel size "
                    "dp = world_size/(tp*cp*pp) is not whole; use a world_size that is a multiple of {}",
                    s.world_size, s.tp_size, s.cp_size, s.pp_size, shard, shard));
  }
  const int64_t expert_shard = s.ep_size * s.etp_size * s.pp_size;
  if (s.world_size % expert_shard == 0) return;
  const int64_t rest = s.etp_size * s.pp_size;
  std::string fix = fmt::format("etp_size*pp_size = {} does not divide it either", rest);
  if (s.world_size % rest == 0 && c.md().is_moe()) {
    const int64_t fits = std::gcd(s.world_size / rest, c.md().expert_num);
    fix = fmt::format("use an ep_size that divides both world_size/(etp*pp) = {} and expert_num {}: {}",
                      s.world_size / rest, c.md().expert_num, join(divisors(fits)));
  } else if (s.world_size % rest == 0) {
    fix = fmt::format("use an ep_size that divides world_size/(etp*pp) = {}: {}", s.world_size / rest,
                      join(divisors(s.world_size / rest)));
  }
  c.strategy_error(
      "ep_size",
      fmt::format("ep_size*etp_size*pp_size = {}*{}*{} = {} does not divide world_size {}, so the expert-data-parallel "
                  "size edp = world_size/(ep*etp*pp) is not whole; {}",
                  s.ep_size, s.etp_size, s.pp_size, expert_shard, s.world_size, fix));
}

void check_sequence(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  // Megatron cuts the sequence into 2*cp chunks and gives each CP rank one from each end, balancing the
  // causal-attention work; SimuMax only asks for seq_len % cp.
  if (s.cp_size > 1 && s.seq_len % (2 * s.cp_size) != 0) {
    c.strategy_error(
        "seq_len",
        fmt::format(
            "{} is not divisible by 2*cp_size = {}: Megatron splits the sequence into 2*cp chunks so that every "
            "context-parallel rank gets an equal share of the causal attention; use a multiple of {}",
            s.seq_len, 2 * s.cp_size, 2 * s.cp_size));
  }
  if (s.sp() && s.tp_size > 1 && (s.seq_len / s.cp_size) % s.tp_size != 0) {
    c.strategy_error(
        "seq_len",
        fmt::format(
            "with sequence parallelism each TP rank holds seq_len/cp_size/tp_size tokens, but {}/{} is not divisible "
            "by tp_size {}; use a seq_len that is a multiple of cp_size*tp_size = {}, or set enable_sequence_parallel "
            "false",
            s.seq_len, s.cp_size, s.tp_size, s.cp_size * s.tp_size));
  }
  if (s.cp_size > 1 && s.cp_comm_type != "a2a") {
    c.strategy_error(
        "cp_comm_type",
        fmt::format(
            "\"{}\" is not modelled: SimuMax v1.2 (and this simulator) implement only \"a2a\" context parallelism "
            "(all-to-all over attention heads); use \"a2a\"",
            s.cp_comm_type));
  }
}

// The strategy's schedule against the layouts its registry entry refuses (engine/schedule/registry.hpp).
void check_schedule(const RuleContext& c) {
  const std::string why = schedule::refusal(c.st().pipeline_schedule, schedule_layout(c.st(), &c.md()));
  if (!why.empty()) c.strategy_error("pipeline_schedule", why);
}

void check_vpp(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const int64_t vp = s.interleaving_size;
  if (vp == 1) return;
  if (s.pp_size == 1) {
    c.strategy_error(
        "interleaving_size",
        fmt::format(
            "{} needs pp_size > 1: virtual stages interleave model chunks over pipeline ranks; set interleaving_size "
            "1 or pp_size of at least 2",
            vp));
  }
  if (!s.pp_comm_async && s.pp_size <= 2) {
    c.strategy_error(
        "pp_comm_async",
        fmt::format(
            "false with interleaving_size {} needs pp_size > 2: with pp_size {} one communication batch would hold "
            "two sends and receives between the same two ranks, which Megatron refuses; set pp_comm_async true or "
            "use pp_size of at least 3",
            vp, s.pp_size));
  }
  const int64_t group = s.microbatch_group_size_per_vp_stage.value_or(s.pp_size);
  if (group < s.pp_size) {
    c.strategy_error(
        "microbatch_group_size_per_vp_stage",
        fmt::format("{} is smaller than pp_size {}; Megatron's interleaved schedule needs pp_size <= group <= "
                    "micro_batch_num",
                    group, s.pp_size));
  }
  if (group > s.micro_batch_num) {
    const bool is_default = group == s.pp_size;
    c.strategy_error(
        is_default ? "micro_batch_num" : "microbatch_group_size_per_vp_stage",
        fmt::format("micro_batch_num {} is smaller than the interleaved schedule's micro-batch group {} "
                    "(microbatch_group_size_per_vp_stage{}); Megatron needs pp_size <= group <= micro_batch_num",
                    s.micro_batch_num, group, is_default ? ", which defaults to pp_size" : ""));
  }
}

void check_feature_flags(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (s.cache_groupgemm_col_fp8_inputs && !s.fp8) {
    c.strategy_error("cache_groupgemm_col_fp8_inputs",
                     "true needs fp8 true: it keeps the fp8 copies of the grouped-GEMM inputs; set fp8 true or "
                     "this flag false");
  }
  if (s.offload_groupgemm_col_inputs && s.recompute_granularity == RecomputeGranularity::kFullBlock) {
    c.strategy_error("offload_groupgemm_col_inputs",
                     "true cannot be combined with recompute_granularity \"full_block\" (a fully recomputed layer "
                     "keeps no grouped-GEMM inputs to offload); set one of them differently");
  }
  const bool shared_experts = c.md().is_moe() && c.md().moe_shared_expert_intermediate_size.value_or(0) > 0;
  if (s.megatron_moe_shared_expert_overlap && (!shared_experts || s.ep_size == 1)) {
    const FieldLocation at = c.strategy_field("megatron_moe_shared_expert_overlap");
    const std::string why =
        shared_experts ? "ep_size is 1: there is no expert-parallel all-to-all to hide the shared experts behind"
                       : "the model (" + c.model_name() + ") has no shared experts";
    common::logger("config")->warn("{}: {}: true has no effect: {}", at.file, at.pointer, why);
  }
}

// Block-scaled recipes need the GPU's block-scaled Tensor Cores (Blackwell on): the machine says so by listing
// the recipe's GEMM entries. Their efficiency may be unmeasured (0): the GEMM then takes the bf16 entry's
// efficiency of its shape (cost::kernel_time, docs/low-precision.md).
void check_low_precision_ops(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  for (const bool grouped : {false, true}) {
    const std::string name = s.gemm_op(grouped);
    if (c.sys().op.count(name) != 0 || name.starts_with("fp8_")) continue;
    c.strategy_error("fp8_recipe",
                     fmt::format("\"{}\" needs the system's /accelerator/op/{} (its GEMM peak; block-scaled Tensor "
                                 "Cores, NVIDIA Blackwell on), which {} does not have; use \"delayed\" or "
                                 "\"tensorwise\", or a system that lists it",
                                 to_string(s.fp8_recipe), name, c.sys_name()));
  }
}

void check_fsdp(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (!s.megatron_fsdp) return;
  if (s.zero_state != 3) {
    c.strategy_error("zero_state", fmt::format("is {} but megatron_fsdp is true: Megatron-FSDP (optim_grads_params) "
                                               "shards parameters, gradients and optimizer state; set zero_state 3",
                                               s.zero_state));
  }
  if (s.use_fused_grad_accumulation) {
    c.strategy_error("use_fused_grad_accumulation",
                     "true cannot be combined with megatron_fsdp: Megatron-FSDP requires "
                     "--no-gradient-accumulation-fusion (Megatron-LM's Megatron-FSDP user guide); set it false");
  }
  if (!s.megatron()) {
    const FieldLocation at = c.strategy_field("megatron_fsdp");
    common::logger("config")->warn("{}: {}: the simumax fidelity prices it as SimuMax's zero_state 3 (no per-layer "
                                   "gathers)", at.file, at.pointer);
  }
}

}  // namespace

void check_parallel_groups(const RuleContext& c) {
  check_world(c);
  check_sequence(c);
  check_schedule(c);
  check_vpp(c);
  check_feature_flags(c);
  check_fsdp(c);
}

void check_system_fit(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const SystemConfig& sys = c.sys();
  std::vector<std::string> tiers;
  if (s.world_size > 1) {
    if (sys.intra_with_pcie) {
      tiers = {"intra_node_pcie_2x", "intra_node_pcie_4x", "intra_node_pcie_8x"};
    } else {
      tiers = {"high_intra_node"};
    }
  }
  if (s.world_size > sys.num_per_node) tiers.push_back("inter_node");
  for (const auto& tier : tiers) {
    if (sys.networks.count(tier) != 0) continue;
    c.system_error(
        "networks",
        fmt::format("has no \"{}\" tier, which world_size {} needs (num_per_node {}, intra_with_pcie {}); add it", tier,
                    s.world_size, sys.num_per_node, sys.intra_with_pcie));
  }
  if (!s.fp8) return;
  if (s.megatron()) {
    check_low_precision_ops(c);
    return;
  }
  if (s.fp8_recipe != Fp8Recipe::kDelayed) {
    const FieldLocation at = c.strategy_field("fp8_recipe");
    common::logger("config")->warn("{}: {}: \"{}\" is priced as SimuMax's fp8 model at the simumax fidelity",
                                   at.file, at.pointer, to_string(s.fp8_recipe));
  }
  for (const char* name : {"fp8_matmul", "fp8_group_matmul"}) {
    const auto it = sys.op.find(name);
    if (it == sys.op.end() || it->second.efficient_factor > 0) continue;
    const FieldLocation at = c.system_field("accelerator");
    common::logger("config")->warn(
        "{}: {}/op/{}: efficient_factor is 0 but fp8 is on: an fp8 GEMM shape missing from its table has no usable "
        "efficiency (SimuMax divides by zero there)",
        at.file, at.pointer, name);
  }
}

}  // namespace detail

void check_scenario(const Scenario& s) {
  const detail::RuleContext c(s);
  detail::check_parallel_groups(c);
  detail::check_recompute(c);
  detail::check_model_split(c);
  detail::check_layer_split(c);
  detail::check_system_fit(c);
}

}  // namespace simumax::config
