// Megatron's --moe-shared-expert-overlap at op granularity: where each step of a MoE block's program is emitted
// when the shared experts run beside the token dispatch and combine all-to-alls (cost::SharedExperts).
#pragma once

#include <vector>

#include "engine/cost/overlap_cost.hpp"
#include "engine/model/memory_walk.hpp"

namespace simumax::graph {

struct SharedExpertOverlap {
  cost::SharedExperts ops;
  // Program steps (indices into BlockProgram::forward / backward, recompute replays included, in program order)
  // emitted right after the all-to-alls of the dispatch and of the combine are issued, instead of in place.
  std::vector<int> fwd_dispatch, fwd_combine, bwd_dispatch, bwd_combine;

  bool empty() const { return ops.empty(); }
  bool moved(int op) const;
  // The steps behind `op`'s all-to-alls in the forward or the backward (activation gradient), or nullptr.
  const std::vector<int>* behind(int op, bool forward) const;
};

// REQUIRES: p = model::block_program(ops) for the ops `se` was made from.
SharedExpertOverlap plan_shared_expert_overlap(cost::SharedExperts se, const model::BlockProgram& p);

}  // namespace simumax::graph
