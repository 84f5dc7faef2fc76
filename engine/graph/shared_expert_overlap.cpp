#include "engine/graph/shared_expert_overlap.hpp"

namespace simumax::graph {

namespace {

using Behind = cost::SharedExperts::Behind;

void place(const std::vector<model::MemStep>& steps, const std::vector<Behind>& behind, std::vector<int>& dispatch,
           std::vector<int>& combine) {
  for (size_t s = 0; s < steps.size(); ++s) {
    const Behind b = behind[static_cast<size_t>(steps[s].op)];
    if (b != Behind::kNone) (b == Behind::kCombine ? combine : dispatch).push_back(static_cast<int>(s));
  }
}

}  // namespace

bool SharedExpertOverlap::moved(int op) const {
  return !empty() && ops.behind[static_cast<size_t>(op)] != Behind::kNone;
}

const std::vector<int>* SharedExpertOverlap::behind(int op, bool forward) const {
  if (op == ops.dispatch) return forward ? &fwd_dispatch : &bwd_dispatch;
  if (op == ops.combine) return forward ? &fwd_combine : &bwd_combine;
  return nullptr;
}

SharedExpertOverlap plan_shared_expert_overlap(cost::SharedExperts se, const model::BlockProgram& p) {
  SharedExpertOverlap plan;
  if (se.empty()) return plan;
  plan.ops = std::move(se);
  // Megatron keeps the pairing in the backward: autograd runs each op on its forward's stream, and the
  // all-to-alls' gradients are ordered to be launched first.
  place(p.forward, plan.ops.behind, plan.fwd_dispatch, plan.fwd_combine);
  place(p.backward, plan.ops.behind, plan.bwd_dispatch, plan.bwd_combine);
  return plan;
}

}  // namespace simumax::graph
