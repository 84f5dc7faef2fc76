// The host's part of a step (megatron fidelity, docs/host.md): the CPU time to issue each op pass's kernels,
// where the host waits for the GPU, and what CUDA graphs take off it.
#pragma once

#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/model/chunk.hpp"

namespace simumax::cost {

struct OpCost;

// One copy of a block, or one micro-batch of a chunk, like BlockCost's seconds: `bwd` holds the recompute and
// the weight gradient, `wgrad` the weight gradient alone.
struct HostTime {
  double fwd = 0, bwd = 0, wgrad = 0;
  bool sync_fwd = false, sync_bwd = false;  // the pass holds a host synchronisation
  void add(const HostTime& o, int64_t repeat);
};

// True when the host lane is modelled: the megatron fidelity (the simumax fidelity is SimuMax's GPU-only model)
// with a host that costs time (launch_us or op_us above 0; without, the lane and its synchronisations would leave
// every task where it is and only add edges).
bool host_lane(const config::Scenario& s);

// Host seconds of `launches` kernel launches on `sys`'s host (HostConfig: launch_us / cpu_speed).
double launch_seconds(const config::SystemConfig& sys, double launches);

// Sets each op's host_seconds and host_sync (costs[i] is ops[i]'s) and returns the block copy's sums. A pass
// costs the host op_us plus launch_us per kernel it launches (its own, Megatron's extra kernels, its
// collectives), over cpu_speed. An op pass inside a captured CUDA graph (cuda_graph_impl / cuda_graph_scope)
// launches nothing and never synchronises; each run of captured ops costs one graph launch each way. All zero
// when host_lane() is false.
HostTime host_block(const config::Scenario& s, model::BlockKind kind, const model::OpList& ops,
                    std::vector<OpCost>& costs);

}  // namespace simumax::cost
