// The stage emitter's overlapped communication (docs/overlap.md): collectives around each kernel, and the
// shared experts behind the EP all-to-alls (Megatron's --moe-shared-expert-overlap) at op granularity.
#include <algorithm>

#include "engine/graph/stage_emitter.hpp"

namespace simumax::graph {

bool StageEmitter::contention_on(const config::StrategyConfig& st, const cost::SmShares& shares) {
  // The DP buckets' contention is applied after the pipeline (step_end.cpp), not while emitting.
  return (st.megatron_tp_comm_overlap && shares.tp > 0) || (st.megatron_overlap_p2p_comm && shares.pp > 0) ||
         (st.megatron_moe_shared_expert_overlap && shares.ep > 0);
}

void StageEmitter::plan_overlap() {
  for (size_t ci = 0; ci < m_.chunks.size(); ++ci) {
    const auto& blocks = m_.chunks[ci].blocks;
    auto& plans = shared_plans_.emplace_back(blocks.size());
    if (!s_.strategy.megatron_moe_shared_expert_overlap || options_.granularity != Granularity::kOp) continue;
    for (size_t k = 0; k < blocks.size(); ++k) {
      plans[k] = plan_shared_expert_overlap(cost::shared_experts(*blocks[k].ops, *c_.chunks[ci].blocks[k]),
                                            *blocks[k].program);
    }
  }
}

double StageEmitter::block_seconds(int ci, size_t k, schedule::Pass kind) const {
  const cost::ChunkCost& cc = c_.chunks[ci];
  const cost::BlockCost& bc = *cc.blocks[k];
  const auto extra = cc.overlap_seconds.empty() ? std::pair{0.0, 0.0} : cc.overlap_seconds[k];
  switch (kind) {
    case schedule::Pass::kForward: return bc.fwd_seconds + extra.first;
    case schedule::Pass::kInputGrad: return bc.bwd_seconds - bc.wgrad_seconds + extra.second;
    case schedule::Pass::kWeightGrad: return bc.wgrad_seconds;
    default: return bc.bwd_seconds + extra.second;
  }
}

void StageEmitter::emit_block(const std::vector<uint32_t>& lanes, int ci, size_t k, schedule::Pass kind,
                              const Task& t) {
  const model::Block& blk = m_.chunks[ci].blocks[k];
  const model::BlockProgram& prog = *blk.program;
  const std::vector<model::MemStep>& steps = kind == schedule::Pass::kForward     ? prog.forward
                                             : kind == schedule::Pass::kInputGrad  ? split_[ci][k].input_grad
                                             : kind == schedule::Pass::kWeightGrad ? split_[ci][k].weight
                                                                             : prog.backward;
  // W runs every weight gradient in order: the shared-expert plan moves B's steps, not W's.
  const SharedExpertOverlap& plan = shared_plans_[ci][k];
  const bool planned = !plan.empty() && kind != schedule::Pass::kWeightGrad;
  now_ = BlockNow{&blk, c_.chunks[ci].blocks[k].get(), planned ? &plan : nullptr, &steps};
  if (const auto& fsdp = c_.chunks[ci].fsdp_seconds; !fsdp.empty() && kind != schedule::Pass::kWeightGrad) {
    const double exposed = kind == schedule::Pass::kForward ? fsdp[k].first : fsdp[k].second;
    if (exposed > 0) {
      Task wait = t;
      wait.seconds = exposed * ratio_;
      wait.name = b_.name("fsdp.exposed_gather");
      compute(lanes, wait);
    }
  }
  // Each recompute segment is replayed right before its own backward (Megatron's checkpointed regions).
  for (const auto& step : steps) {
    if (!planned || !plan.moved(step.op)) emit_step(lanes, step, t);
  }
}

void StageEmitter::emit_step(const std::vector<uint32_t>& lanes, const model::MemStep& step, const Task& t) {
  const model::Op& op = (*now_.block->ops)[step.op];
  const cost::OpCost& oc = now_.cost->ops[step.op];
  switch (step.kind) {
    case schedule::Pass::kForward: op_forward(lanes, op, oc, step, t); break;
    case schedule::Pass::kRecompute: op_recompute(lanes, op, oc, step, t); break;
    case schedule::Pass::kBackward:
    case schedule::Pass::kInputGrad: op_backward(lanes, op, oc, step, t); break;
    case schedule::Pass::kWeightGrad: op_weight_grad(lanes, op, oc, step, t); break;
  }
}

void StageEmitter::comms_before(const std::vector<uint32_t>& lanes, const std::vector<cost::CommCost>& comms,
                                const Task& base) {
  for (const auto& cc : comms) {
    if (cc.comm->before_compute || overlapped_tp(cc)) comm(lanes, cc, base);
  }
}

void StageEmitter::comms_after(const std::vector<uint32_t>& lanes, const std::vector<cost::CommCost>& comms,
                               const Task& base, const model::MemStep& mem, bool hide) {
  const auto after = [&](const cost::CommCost& cc) {
    if (defer_ep_ && cost::is_ep_all_to_all(cc)) return;  // an overlapped pair issues it on the EP stream
    if (!cc.comm->before_compute && !overlapped_tp(cc)) comm(lanes, cc, base);
  };
  const bool forward = mem.kind == schedule::Pass::kForward;
  const std::vector<int>* behind = (hide && now_.plan && mem.kind != schedule::Pass::kRecompute)
                                       ? now_.plan->behind(mem.op, forward)
                                       : nullptr;
  auto next = comms.begin();
  if (behind != nullptr) {
    // Megatron's order: what precedes the all-to-alls (the combine's ETP reduce-scatter), the all-to-alls on
    // the EP stream, the shared experts on the compute stream beside them, then what needs their tokens.
    const auto first = std::find_if(comms.begin(), comms.end(), cost::is_ep_all_to_all);
    for (; next != first; ++next) after(*next);
    std::vector<uint32_t> in_flight;
    for (; next != comms.end() && cost::is_ep_all_to_all(*next); ++next) {
      if (const uint32_t id = comm(lanes, *next, base, kEpStream); id != kNoGroup) in_flight.push_back(id);
    }
    for (int s : *behind) emit_step(lanes, (*now_.steps)[static_cast<size_t>(s)], base);
    for (uint32_t id : in_flight) {
      for (uint32_t r : lanes) b_.also_wait(r, id);
    }
    contention_.joined(lanes, kEpStream);
  }
  for (; next != comms.end(); ++next) after(*next);
}

void StageEmitter::send_async(uint32_t lane, uint32_t transfer) {
  b_.after_current(lane, transfer);
  contention_.issue(lane, kPpStream, b_.task(transfer).seconds, shares_.pp);
}

}  // namespace simumax::graph
