#include <algorithm>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "engine/config/check_rules.hpp"

namespace simumax::config::detail {

namespace {

const char* kModuleChoices = "layernorm, mla_up_proj, moe_act, mlp, moe";

bool has_module(const StrategyConfig& s, const std::string& name) {
  const auto& m = s.megatron_recompute_modules;
  return std::find(m.begin(), m.end(), name) != m.end();
}

std::string module_suffix(const StrategyConfig& s, const std::string& name) {
  const auto& m = s.megatron_recompute_modules;
  std::string suffix = "/";
  suffix += std::to_string(std::find(m.begin(), m.end(), name) - m.begin());
  return suffix;
}

// SimuMax asserts these when it builds a recomputing layer; they hold for any selective legacy setup.
void check_legacy_selective(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (s.recompute_granularity != RecomputeGranularity::kSelective || s.recompute_layer_num == 0) return;
  if (s.mla_rms_recompute && !s.attn_recompute) {
    c.strategy_error("mla_rms_recompute",
                     "true needs attn_recompute true (the norm is recomputed only together "
                     "with the attention it feeds); set attn_recompute true");
  }
  if (s.mlp_rms_recompute && !s.mlp_recompute) {
    c.strategy_error("mlp_rms_recompute",
                     "true needs mlp_recompute true (the norm is recomputed only together "
                     "with the MLP it feeds); set mlp_recompute true");
  }
}

void check_megatron_switches(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (!s.enable_recompute) {
    c.strategy_error("enable_recompute",
                     "false, but megatron_recompute is true; set enable_recompute true or "
                     "megatron_recompute false");
  }
  if (s.recompute_granularity != RecomputeGranularity::kSelective) {
    c.strategy_error("recompute_granularity",
                     "megatron_recompute needs \"selective_recompute\" (Megatron's "
                     "--recompute-modules apply to selective recompute only)");
  }
  if (s.recompute_layer_num == 0) {
    c.strategy_error("recompute_layer_num",
                     "0, but megatron_recompute needs at least one layer per stage chunk "
                     "that recomputes; set how many");
  }
  if (s.megatron_recompute_modules.empty()) {
    c.strategy_error("megatron_recompute_modules",
                     fmt::format("megatron_recompute needs a non-empty list from {}", kModuleChoices));
  }
  if (has_module(s, "core_attn")) {
    c.strategy_error("megatron_recompute_modules",
                     fmt::format("\"core_attn\" is not supported: SimuMax v1.2 does not model Megatron's "
                                 "core-attention recompute; remove it and choose from {}",
                                 kModuleChoices),
                     module_suffix(s, "core_attn"));
  }
  const std::pair<const char*, bool> legacy[] = {{"attn_recompute", s.attn_recompute},
                                                 {"mla_rms_recompute", s.mla_rms_recompute},
                                                 {"mlp_recompute", s.mlp_recompute},
                                                 {"mlp_rms_recompute", s.mlp_rms_recompute},
                                                 {"recompute_variance", s.recompute_variance}};
  for (const auto& [flag, on] : legacy) {
    if (on) {
      c.strategy_error(flag,
                       "true cannot be combined with megatron_recompute (its module list replaces the "
                       "legacy selective flags and the variance model); set it false");
    }
  }
}

void check_megatron_modules_vs_model(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const ModelConfig& m = c.md();
  if (has_module(s, "mla_up_proj") && m.attention_type != AttentionType::kMla) {
    c.strategy_error(
        "megatron_recompute_modules",
        fmt::format("\"mla_up_proj\" needs MLA attention, but {} uses standard attention; remove it", c.model_name()),
        module_suffix(s, "mla_up_proj"));
  }
  if (has_module(s, "moe_act") && m.expert_num <= 1) {
    c.strategy_error("megatron_recompute_modules",
                     fmt::format("\"moe_act\" needs a MoE model, but {} is dense (expert_num {}); use \"mlp\" to "
                                 "recompute a dense MLP",
                                 c.model_name(), m.expert_num),
                     module_suffix(s, "moe_act"));
  }
  if (has_module(s, "moe_act") && m.group_linear_mode != GroupLinearMode::kParallel) {
    c.strategy_error("megatron_recompute_modules",
                     fmt::format("\"moe_act\" needs grouped-GEMM experts, but {} sets group_linear_mode "
                                 "\"serial\"; use \"moe\" or group_linear_mode \"parallel\"",
                                 c.model_name()),
                     module_suffix(s, "moe_act"));
  }
  if (!s.fp8) return;
  for (const char* name : {"layernorm", "moe_act"}) {
    if (!has_module(s, name)) continue;
    c.strategy_error("megatron_recompute_modules",
                     fmt::format("\"{}\" cannot be recomputed with fp8 on (SimuMax v1.2 refuses this "
                                 "combination and has no model for it); remove it or set fp8 false",
                                 name),
                     module_suffix(s, name));
  }
}

}  // namespace

void check_recompute(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (!s.megatron_recompute) {
    if (!s.megatron_recompute_modules.empty()) {
      c.strategy_error("megatron_recompute_modules",
                       "is set but megatron_recompute is false; set megatron_recompute true (with "
                       "recompute_granularity \"selective_recompute\") or remove the list");
    }
    check_legacy_selective(c);
    return;
  }
  check_megatron_switches(c);
  check_megatron_modules_vs_model(c);
}

}  // namespace simumax::config::detail
