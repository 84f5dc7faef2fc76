#include <spdlog/fmt/fmt.h>

#include "engine/config/check_rules.hpp"

namespace simumax::config::detail {

namespace {

void check_vp_divides(const RuleContext& c, int64_t layers, const std::string& which) {
  const int64_t vp = c.st().interleaving_size;
  if (vp == 1 || layers % vp == 0) return;
  c.strategy_error(
      "interleaving_size",
      fmt::format("{} does not divide the {} layer{} of {}: every pipeline stage's layers are split evenly into "
                  "interleaving_size virtual chunks; use an interleaving_size that divides {}: {}",
                  vp, layers, layers == 1 ? "" : "s", which, layers, join(divisors(layers))));
}

// Megatron's uneven split: explicit first / last stages, the rest shared evenly by the middle stages.
void check_uneven_split(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const int64_t layer_num = c.md().layer_num;
  const auto& first = s.num_layers_in_first_pipeline_stage;
  const auto& last = s.num_layers_in_last_pipeline_stage;
  const char* key = first ? "num_layers_in_first_pipeline_stage" : "num_layers_in_last_pipeline_stage";
  if (s.account_for_embedding_in_pipeline_split || s.account_for_loss_in_pipeline_split) {
    c.strategy_error(s.account_for_embedding_in_pipeline_split ? "account_for_embedding_in_pipeline_split"
                                                               : "account_for_loss_in_pipeline_split",
                     fmt::format("true cannot be combined with {} (Megatron's uneven pipeline split has no "
                                 "embedding or loss slot); use one or the other",
                                 key));
  }
  if (s.pp_size == 1) c.strategy_error(key, "needs pp_size > 1: with one pipeline stage there is nothing to split");
  const int64_t fixed = first.value_or(0) + last.value_or(0);
  const int64_t stages_left = s.pp_size - (first ? 1 : 0) - (last ? 1 : 0);
  const int64_t left = layer_num - fixed;
  if (left < 0 || (stages_left == 0 && left != 0)) {
    c.strategy_error(
        key,
        fmt::format(
            "the first and last stages take {} layers but the model ({}) has layer_num {}; with pp_size {} they "
            "must {} {}",
            fixed, c.model_name(), layer_num, s.pp_size, stages_left == 0 ? "add up to" : "not exceed", layer_num));
  }
  if (stages_left > 0 && left % stages_left != 0) {
    c.strategy_error(
        key,
        fmt::format("the {} layers left after the first/last stages ({} of layer_num {}) do not split evenly over the "
                    "{} remaining stages of pp_size {}; adjust num_layers_in_first/last_pipeline_stage",
                    left, fixed, layer_num, stages_left, s.pp_size));
  }
  if (first) check_vp_divides(c, *first, "the first pipeline stage (num_layers_in_first_pipeline_stage)");
  if (last) check_vp_divides(c, *last, "the last pipeline stage (num_layers_in_last_pipeline_stage)");
  if (stages_left > 0) check_vp_divides(c, left / stages_left, "each middle pipeline stage");
}

// The even split, where the embedding and the loss may each count as one layer (Megatron's
// account_for_*_in_pipeline_split).
void check_even_split(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const int64_t layer_num = c.md().layer_num;
  const int64_t slots =
      layer_num + (s.account_for_embedding_in_pipeline_split ? 1 : 0) + (s.account_for_loss_in_pipeline_split ? 1 : 0);
  const std::string counted = slots == layer_num ? "" : fmt::format(" (+{} for embedding/loss)", slots - layer_num);
  if (s.pp_size > slots) {
    c.strategy_error(
        "pp_size",
        fmt::format(
            "{} exceeds the {} layers{} of {}: every pipeline stage needs at least one layer; use a pp_size that "
            "divides {}: {}",
            s.pp_size, layer_num, counted, c.model_name(), slots, join(divisors(slots))));
  }
  if (slots % s.pp_size != 0) {
    c.strategy_error("pp_size",
                     fmt::format("{} does not divide layer_num {}{} ({}); use a pp_size that divides {}: {}, or set "
                                 "num_layers_in_first/last_pipeline_stage for an uneven split",
                                 s.pp_size, layer_num, counted, c.model_name(), slots, join(divisors(slots))));
  }
  check_vp_divides(c, slots / s.pp_size, "each pipeline stage");
}

}  // namespace

void check_layer_split(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  if (s.num_layers_in_first_pipeline_stage || s.num_layers_in_last_pipeline_stage) {
    check_uneven_split(c);
  } else {
    check_even_split(c);
  }
}

}  // namespace simumax::config::detail
