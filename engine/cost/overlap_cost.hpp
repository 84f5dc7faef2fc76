// What Megatron's overlap options do to the analytical durations (docs/overlap.md): compute slowed by the SMs
// that collectives in flight beside it take (sm_contention), and the shared experts computed while the EP token
// all-to-alls are in flight (moe-shared-expert-overlap).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/model/chunk.hpp"

namespace simumax::cost {

// Overlapped communication in flight on one stream, as compute sees it from now on.
struct InFlight {
  double seconds = 0;  // wall time until it ends
  double share = 0;    // while it runs, compute takes 1 + share times longer (the shares of streams add up)
};

// Wall time of compute that needs `seconds` on idle SMs and starts now beside `streams`; each stream's
// in-flight time is reduced by that wall time. REQUIRES: seconds >= 0, shares >= 0.
double run_beside(std::span<InFlight> streams, double seconds);

// Wall time until both end when compute of `seconds` and a collective of `comm_seconds` with SM share `share`
// start together (a kernel beside its overlapped collective).
double overlapped_seconds(double seconds, double comm_seconds, double share);

// The SM share of each group's overlapped collectives: the strategy's sm_contention, or else the
// processor_usage of the group's network tier.
struct SmShares {
  double tp = 0, pp = 0, ep = 0, dp = 0, edp = 0;
};
SmShares sm_shares(const config::Scenario& s, const Nets& nets);

// An expert-parallel all-to-all (the token dispatch or combine, or their gradients).
bool is_ep_all_to_all(const CommCost& cc);

// Megatron's --moe-shared-expert-overlap in one MoE block (token_dispatcher.py, shared_experts.py): the shared
// experts' fc1 and activation run while the dispatch all-to-all is in flight, fc2 while the combine is; the
// backward pairs them the same way.
struct SharedExperts {
  enum class Behind : int8_t { kNone, kDispatch, kCombine };
  int dispatch = -1;            // the permutation op: its EP all-to-alls dispatch the tokens
  int combine = -1;             // the unpermutation op: its EP all-to-alls combine them
  std::vector<Behind> behind;   // [op]: which all-to-all a shared-expert op runs beside
  bool empty() const { return dispatch < 0; }
};
// Empty when the block has no shared experts or no EP all-to-all to hide them behind (ep 1).
// REQUIRES: c.ops parallel to ops.
SharedExperts shared_experts(const std::vector<model::Op>& ops, const BlockCost& c);

// Fills cc.overlap_seconds and adds it to cc.fwd_seconds / bwd_seconds when an overlap option changes the
// time of a block (shared-expert overlap; SM contention beside tp-comm-overlap's collectives; the exposed part
// of Megatron-FSDP's per-layer parameter gathers and gradient reduce-scatters).
// REQUIRES: cc.blocks parallel to chunk.blocks.
void add_overlap(const config::Scenario& s, const Nets& nets, const model::Chunk& chunk, ChunkCost& cc);

}  // namespace simumax::cost
