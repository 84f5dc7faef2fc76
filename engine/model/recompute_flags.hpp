// Which leaves of layer i of a chunk replay their forward in the backward (SimuMax's parse_*_recompute).
#pragma once

#include "engine/config/strategy_config.hpp"

namespace simumax::model {

struct AttnRecompute {
  bool in_ln = false, q_down = false, kv_down = false, q_up = false, kv_up = false, q_ln = false,
       kv_ln = false, rope = false, core = false, out = false, meg_ln = false, meg_mla = false;
};
struct MlpRecompute {
  bool pre_ln = false, shared = false, linear = false, router = false, perm = false, meg_ln = false,
       meg_mlp = false, meg_moe = false, meg_moe_act = false;
};

bool is_megatron_selective(const config::StrategyConfig& st);
// `local_layer` is the layer's index within its chunk (each stage recomputes its own first N layers).
AttnRecompute attn_recompute(const config::StrategyConfig& st, int local_layer);
MlpRecompute mlp_recompute(const config::StrategyConfig& st, int local_layer);

}  // namespace simumax::model
