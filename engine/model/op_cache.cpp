#include "engine/model/op_cache.hpp"

#include <algorithm>

#include "engine/common/error.hpp"

namespace simumax::model {

config::StrategyConfig op_view(const config::StrategyConfig& st) {
  config::StrategyConfig v = st;
  // The op builder reads neither the pipeline layout (each block's layer index only through "is it among the
  // first recompute_layer_num", which is part of the block key) nor the batch count, ZeRO stage, world and
  // DP size, straggler model, memory factor, pipeline schedule, the overlap of DP, pipeline and shared-expert
  // work (applied per chunk, after the block costs). Ops depend on every other field (TP/CP/EP/ETP sizes,
  // micro-batch size, sequence, recompute flags, fusion, TE version, ...), and so may block costs
  // (cost::CostCache relies on this view): tp-comm-overlap stays.
  v.world_size = 0, v.pp_size = 0, v.micro_batch_num = 0, v.zero_state = 0, v.interleaving_size = 0;
  v.microbatch_group_size_per_vp_stage.reset();
  v.num_layers_in_first_pipeline_stage.reset(), v.num_layers_in_last_pipeline_stage.reset();
  v.account_for_embedding_in_pipeline_split = v.account_for_loss_in_pipeline_split = false;
  v.pp_comm_async = v.enable_straggler_model = v.overlap_grad_reduce = false;
  v.pipeline_schedule = "1f1b";
  v.megatron_overlap_grad_reduce = v.megatron_overlap_param_gather = v.megatron_overlap_p2p_comm = false;
  v.megatron_moe_shared_expert_overlap = v.megatron_fsdp = false;
  v.sm_contention.reset();
  v.cublas_workspace_config_bytes.reset();
  v.mem_factor = 0;
  // A layer depends on recompute_layer_num only through "is it among the first N" (in the block key) and
  // "is N > 0" (Megatron-style selective recompute).
  v.recompute_layer_num = std::min<int64_t>(v.recompute_layer_num, 1);
  return v;
}

namespace {

size_t hash_view(const config::StrategyConfig& v) {
  // The fields a search varies; equal views are then told apart by comparing every field.
  size_t h = 0;
  for (int64_t x : {v.tp_size, v.cp_size, v.ep_size, v.etp_size, v.micro_batch_size, v.seq_len,
                    v.recompute_layer_num, static_cast<int64_t>(v.recompute_granularity),
                    static_cast<int64_t>(v.enable_sequence_parallel), static_cast<int64_t>(v.attn_recompute),
                    static_cast<int64_t>(v.mlp_recompute)}) {
    h = h * 1000003u ^ std::hash<int64_t>{}(x);
  }
  return h;
}

}  // namespace

void OpCache::select(const config::StrategyConfig& st) {
  config::StrategyConfig v = op_view(st);
  const size_t h = hash_view(v);
  for (auto [it, end] = view_of_hash_.equal_range(h); it != end; ++it) {
    if (views_[it->second] == v) {
      current_ = it->second;
      return;
    }
  }
  current_ = static_cast<int>(views_.size());
  views_.push_back(std::move(v));
  view_of_hash_.emplace(h, current_);
}

const OpCache::Entry& OpCache::get(const BlockKey& key, const std::function<Entry()>& build) {
  if (current_ < 0) throw common::InternalError("OpCache::get before select");
  const auto k = std::make_tuple(current_, key);
  if (auto it = entries_.find(k); it != entries_.end()) return it->second;
  return entries_.emplace(k, build()).first->second;  // not inserted when build() throws
}

}  // namespace simumax::model
