#include "engine/model/recompute_flags.hpp"

#include <algorithm>

namespace simumax::model {

using config::RecomputeGranularity;

namespace {
bool has_module(const config::StrategyConfig& st, const char* name) {
  return std::find(st.megatron_recompute_modules.begin(), st.megatron_recompute_modules.end(), name) !=
         st.megatron_recompute_modules.end();
}
bool layer_eligible(const config::StrategyConfig& st, int local_layer) {
  // SimuMax does not look at enable_recompute here: legacy granularities recompute even when it is false.
  return st.recompute_granularity != RecomputeGranularity::kNone && local_layer < st.recompute_layer_num;
}
}  // namespace

bool is_megatron_selective(const config::StrategyConfig& st) {
  return st.enable_recompute && st.recompute_layer_num > 0 &&
         st.recompute_granularity == RecomputeGranularity::kSelective && st.megatron_recompute &&
         !st.megatron_recompute_modules.empty();
}

AttnRecompute attn_recompute(const config::StrategyConfig& st, int local_layer) {
  AttnRecompute f;
  if (!layer_eligible(st, local_layer)) return f;
  if (is_megatron_selective(st)) {
    const bool ln = has_module(st, "layernorm");
    const bool up = has_module(st, "mla_up_proj");
    f.meg_ln = f.in_ln = f.q_down = f.kv_down = ln;
    f.meg_mla = f.q_up = f.kv_up = f.q_ln = f.kv_ln = f.rope = f.core = up;
    return f;
  }
  switch (st.recompute_granularity) {
    case RecomputeGranularity::kFullBlock:
      f.in_ln = f.q_down = f.kv_down = f.q_up = f.kv_up = f.q_ln = f.kv_ln = f.rope = f.core = f.out = true;
      break;
    case RecomputeGranularity::kAttnOnly:
      f.q_down = f.kv_down = f.q_up = f.kv_up = f.q_ln = f.kv_ln = f.rope = f.core = f.out = true;
      break;
    case RecomputeGranularity::kSdpOnly:
      f.core = true;
      break;
    case RecomputeGranularity::kSelective:
      f.in_ln = f.q_down = f.kv_down = st.mla_rms_recompute;
      f.q_up = f.kv_up = f.q_ln = f.kv_ln = f.rope = f.core = st.attn_recompute;
      break;
    default:
      break;
  }
  return f;
}

MlpRecompute mlp_recompute(const config::StrategyConfig& st, int local_layer) {
  MlpRecompute f;
  if (!layer_eligible(st, local_layer)) return f;
  if (is_megatron_selective(st)) {
    const bool moe = has_module(st, "moe");
    f.pre_ln = f.meg_ln = has_module(st, "layernorm");
    f.meg_mlp = has_module(st, "mlp");
    f.meg_moe = moe;
    f.meg_moe_act = has_module(st, "moe_act") && !moe;
    return f;
  }
  switch (st.recompute_granularity) {
    case RecomputeGranularity::kFullBlock:
    case RecomputeGranularity::kMlpOnly:
      f.pre_ln = f.shared = f.linear = f.router = f.perm = true;
      break;
    case RecomputeGranularity::kSelective:
      f.pre_ln = f.shared = f.router = st.mlp_rms_recompute;
      f.linear = st.mlp_recompute;
      break;
    default:
      break;
  }
  return f;
}

}  // namespace simumax::model
