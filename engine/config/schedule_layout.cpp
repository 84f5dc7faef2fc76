#include "engine/config/schedule_layout.hpp"

namespace simumax::config {

schedule::Layout schedule_layout(const StrategyConfig& st, const ModelConfig* model) {
  schedule::Layout l;
  l.pp = st.pp_size;
  l.vp = st.interleaving_size;
  l.micro_batches = st.micro_batch_num;
  l.group = st.microbatch_group_size_per_vp_stage.value_or(st.pp_size);
  if (model != nullptr) {
    l.layers = model->layer_num;
    l.layer_slots = model->layer_num + (st.account_for_embedding_in_pipeline_split ? 1 : 0) +
                    (st.account_for_loss_in_pipeline_split ? 1 : 0);
  }
  l.custom_end_stages = st.num_layers_in_first_pipeline_stage || st.num_layers_in_last_pipeline_stage;
  l.overlapped_dp = st.overlaps_dp();
  l.ep = st.ep_size;
  if (model != nullptr) l.experts = model->expert_num;
  l.full_recompute = st.recompute_granularity == RecomputeGranularity::kFullBlock && st.recompute_layer_num > 0;
  l.shared_expert_overlap = st.megatron_moe_shared_expert_overlap;
  return l;
}

}  // namespace simumax::config
