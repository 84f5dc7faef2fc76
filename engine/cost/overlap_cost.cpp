#include "engine/cost/overlap_cost.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

namespace simumax::cost {

namespace {

using Behind = SharedExperts::Behind;
using Seconds = std::pair<double, double>;  // forward, backward

// The op builder names the shared experts' MLP "mlp.shared_experts.{linear_fc1,activation,linear_fc2}".
Behind behind_of(const model::Op& op) {
  const std::string_view name = op.name;
  if (!name.starts_with("mlp.shared_experts.")) return Behind::kNone;
  return name.ends_with(".linear_fc2") ? Behind::kCombine : Behind::kDispatch;
}

bool has_all_to_all(const OpCost& c) {
  return std::any_of(c.comm[0].begin(), c.comm[0].end(), is_ep_all_to_all) &&
         std::any_of(c.comm[1].begin(), c.comm[1].end(), is_ep_all_to_all);
}

double all_to_all_seconds(const std::vector<CommCost>& comms) {
  double t = 0;
  for (const auto& cc : comms) {
    if (is_ep_all_to_all(cc)) t += cc.seconds;
  }
  return t;
}

// tp-comm-overlap runs each kernel beside its pass's TP collectives (pass_total's max): contention slows it.
Seconds tp_overlap_extra(const OpCost& oc, double share) {
  if (!oc.tp_overlap || share == 0) return {0, 0};
  const auto extra = [&](double kernel, int pass) {
    double tp = 0;
    for (const auto& cc : oc.comm[pass]) {
      if (cc.comm->group == model::CommGroup::kTp) tp += cc.seconds;
    }
    return tp > 0 ? overlapped_seconds(kernel, tp, share) - std::max(kernel, tp) : 0.0;
  };
  const double replay = oc.recompute_comm ? extra(oc.recompute_seconds, 0) : 0.0;
  return {extra(oc.seconds[0], 0), extra(oc.seconds[1], 1) + extra(oc.seconds[2], 2) + replay};
}

// What one copy of the block saves when the shared experts run beside the all-to-alls; `extra`: each op's
// contention time beside its own TP collectives.
Seconds shared_expert_savings(const SharedExperts& se, const BlockCost& c, const std::vector<Seconds>& extra,
                              double share) {
  if (se.empty()) return {0, 0};
  double work[2][2] = {};  // [beside the combine?][backward?]
  for (size_t o = 0; o < se.behind.size(); ++o) {
    if (se.behind[o] == Behind::kNone) continue;
    const int side = se.behind[o] == Behind::kCombine ? 1 : 0;
    work[side][0] += c.ops[o].fwd_total() + extra[o].first;
    work[side][1] += c.ops[o].bwd_total() + extra[o].second;
  }
  double saved[2] = {};
  for (int side = 0; side < 2; ++side) {
    const OpCost& a2a = c.ops[static_cast<size_t>(side ? se.combine : se.dispatch)];
    for (int bwd = 0; bwd < 2; ++bwd) {
      const double w = work[side][bwd], t = all_to_all_seconds(a2a.comm[bwd]);
      saved[bwd] += w + t - overlapped_seconds(w, t, share);
    }
  }
  return {saved[0], saved[1]};
}

// Megatron-FSDP (megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py, optim_grads_params): before a
// layer's forward and again before its backward its parameters are all-gathered (bf16) over the DP group, the
// experts' over the expert-DP group, prefetched on the FSDP streams while the layer before runs; after its
// backward its gradients are reduce-scattered. Per layer, the compute hides them up to its own length, slowed by
// the SMs they take; what they exceed it by is exposed.
Seconds fsdp_exposed(const config::Scenario& s, const Nets& nets, const SmShares& shares,
                     const std::vector<model::Op>& ops, const BlockCost& bc) {
  const auto& st = s.strategy;
  int64_t dense = 0, moe = 0;
  for (const auto& op : ops) dense += op.dense_numel, moe += op.moe_numel;
  const auto family = [&](int64_t numel, int64_t n, const std::string& net, CommStage stage) {
    if (numel == 0 || n == 1) return Seconds{0, 0};
    const double params = static_cast<double>(numel);
    const double ag = comm_time(s.system, st, model::Coll::kAllGather, params * static_cast<double>(st.element_bytes()),
                                n, net, stage).seconds;
    const double rs = comm_time(s.system, st, model::Coll::kReduceScatter,
                                params * static_cast<double>(st.main_grad_bytes()), n, net, stage).seconds;
    return Seconds{ag, ag + rs};
  };
  const Seconds d = family(dense, st.dp_size() * st.cp_size, nets.dp, CommStage::kDenseDp);
  const Seconds e = family(moe, st.edp_size(), nets.edp, CommStage::kExpertDp);
  const double share = std::max(shares.dp, shares.edp);
  const auto exposed = [&](double compute, double comm) {
    return comm > 0 ? overlapped_seconds(compute, comm, share) - compute : 0.0;
  };
  return {exposed(bc.fwd_seconds, d.first + e.first), exposed(bc.bwd_seconds, d.second + e.second)};
}

}  // namespace

double run_beside(std::span<InFlight> streams, double seconds) {
  // Piecewise constant speed: between two stream ends, compute runs at 1 / (1 + the shares still in flight).
  double wall = 0, work = seconds;
  while (work > 0) {
    double share = 0, next = std::numeric_limits<double>::infinity();
    for (const InFlight& f : streams) {
      if (f.seconds > wall && f.share > 0) {
        share += f.share;
        next = std::min(next, f.seconds);
      }
    }
    const double need = work * (1 + share);
    if (wall + need <= next) {
      wall += need;
      break;
    }
    work -= (next - wall) / (1 + share);
    wall = next;
  }
  for (InFlight& f : streams) f.seconds = std::max(0.0, f.seconds - wall);
  return wall;
}

double overlapped_seconds(double seconds, double comm_seconds, double share) {
  std::array<InFlight, 1> s{InFlight{comm_seconds, share}};
  return std::max(run_beside(s, seconds), comm_seconds);
}

SmShares sm_shares(const config::Scenario& s, const Nets& nets) {
  const auto share = [&](const std::string& net) {
    if (s.strategy.sm_contention) return *s.strategy.sm_contention;
    const auto it = s.system.networks.find(net);
    return it == s.system.networks.end() ? 0.0 : it->second.processor_usage;
  };
  return SmShares{share(nets.tp), share(nets.pp), share(nets.ep), share(nets.dp), share(nets.edp)};
}

bool is_ep_all_to_all(const CommCost& cc) {
  return cc.comm->group == model::CommGroup::kEp && cc.comm->coll == model::Coll::kAllToAll;
}

SharedExperts shared_experts(const std::vector<model::Op>& ops, const BlockCost& c) {
  SharedExperts se;
  se.behind.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    se.behind[i] = behind_of(ops[i]);
    if (!has_all_to_all(c.ops[i])) continue;
    if (ops[i].type == model::OpType::kPermutation) se.dispatch = static_cast<int>(i);
    if (ops[i].type == model::OpType::kUnpermutation) se.combine = static_cast<int>(i);
  }
  const bool any = std::any_of(se.behind.begin(), se.behind.end(), [](Behind b) { return b != Behind::kNone; });
  return se.dispatch >= 0 && se.combine >= 0 && any ? se : SharedExperts{};
}

void add_overlap(const config::Scenario& s, const Nets& nets, const model::Chunk& chunk, ChunkCost& cc) {
  const auto& st = s.strategy;
  const SmShares shares = sm_shares(s, nets);
  const double tp_share = st.megatron_tp_comm_overlap ? shares.tp : 0.0;
  const bool fsdp = st.fsdp();
  if (!st.megatron_moe_shared_expert_overlap && tp_share == 0 && !fsdp) return;
  for (size_t k = 0; k < chunk.blocks.size(); ++k) {
    const BlockCost& bc = *cc.blocks[k];
    std::vector<Seconds> extra(bc.ops.size());
    Seconds sum{};
    for (size_t o = 0; o < bc.ops.size(); ++o) {
      extra[o] = tp_overlap_extra(bc.ops[o], tp_share);
      sum.first += extra[o].first;
      sum.second += extra[o].second;
    }
    if (st.megatron_moe_shared_expert_overlap) {
      const Seconds saved = shared_expert_savings(shared_experts(*chunk.blocks[k].ops, bc), bc, extra, shares.ep);
      sum.first -= saved.first;
      sum.second -= saved.second;
    }
    if (fsdp) {
      const Seconds f = fsdp_exposed(s, nets, shares, *chunk.blocks[k].ops, bc);
      sum.first += f.first;
      sum.second += f.second;
      cc.fsdp_seconds.push_back(f);
    }
    cc.overlap_seconds.push_back(sum);
    cc.fwd_seconds += sum.first * chunk.blocks[k].repeat;
    cc.bwd_seconds += sum.second * chunk.blocks[k].repeat;
  }
}

}  // namespace simumax::cost
