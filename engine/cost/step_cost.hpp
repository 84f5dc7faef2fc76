// Durations of everything in a step: each op's passes and collectives, p2p, DP buckets, optimizer.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/cost/comm_cost.hpp"
#include "engine/cost/host_cost.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::cost {

struct CommCost {
  const model::Comm* comm = nullptr;  // what it is (points into the StepModel)
  int64_t group_size = 1;
  double seconds = 0;
  double latency_seconds = 0;
  std::string net;
};

struct OpCost {
  std::array<double, schedule::kNumOpPasses> seconds{};   // kernel time of F / B / W (schedule::op_pass_index)
  std::array<bool, schedule::kNumOpPasses> table_hit{};
  std::array<bool, schedule::kNumOpPasses> interpolated{};  // a table miss priced from the nearest shapes (megatron)
  std::array<std::vector<CommCost>, schedule::kNumOpPasses> comm;
  double recompute_seconds = 0;           // kernel time replayed in the backward
  bool recompute_comm = false;            // the replay repeats comm[forward]
  bool tp_overlap = false;                // TP collectives run alongside their pass's kernel (tp-comm-overlap)
  // The host's time to issue each pass (the recompute replays the forward's), and whether the pass ends with
  // the host waiting for the GPU (host_cost.hpp; zero at the simumax fidelity).
  std::array<double, schedule::kNumOpPasses> host_seconds{};
  std::array<bool, schedule::kNumOpPasses> host_sync{};
  // One pass: its kernel and collectives, serial, or with TP collectives hidden behind the kernel.
  double pass_total(int pass) const;
  double fwd_total() const;               // kernel + forward comm
  double bwd_total() const;               // kernels + comm of both backward passes + recompute
  // Of bwd_total, the weight-gradient kernel: a zero-bubble schedule's W (its collectives stay in B).
  double wgrad_seconds() const { return seconds[2]; }
};

struct BlockCost {
  std::vector<OpCost> ops;
  int64_t param_tensors = 0;  // parameter tensors of one copy (a grouped linear holds one per local expert)
  double fwd_seconds = 0;  // one copy of the block
  double bwd_seconds = 0;
  double wgrad_seconds = 0;  // of bwd_seconds, the ops' weight-gradient kernels (W); the rest is B
  HostTime host;             // the host's time to issue one copy
};

// Data-parallel communication of one parameter family (dense over dp*cp, experts over edp).
struct DpCost {
  int64_t group_size = 1;
  std::string net;
  int64_t reduce_scatter_buckets = 0;
  int64_t all_gather_buckets = 0;
  int64_t all_reduce_buckets = 0;
  double bucket_bytes = 0;
  CommTime reduce_scatter, all_gather, all_reduce;  // per bucket
  double total_seconds() const;
};

struct OptimizerCost {
  double seconds = 0;
  double host_seconds = 0;  // the host's time to launch its kernels (megatron fidelity)
  std::vector<std::pair<std::string, double>> parts;  // zero_grad, l2_norm, scale, ..., copy
};

struct ChunkCost {
  std::vector<std::shared_ptr<const BlockCost>> blocks;  // parallel to model::Chunk::blocks; shared like them
  double fwd_seconds = 0;   // one micro-batch, all blocks, comm included
  double bwd_seconds = 0;   // one micro-batch, comm and recompute included
  double wgrad_seconds = 0;  // of bwd_seconds, the weight-gradient kernels (W; overlap_seconds count in B)
  HostTime host;             // the host's time to issue one micro-batch
  // [block]: what Megatron's overlap options add to one copy's forward / backward (negative: hide), already in
  // fwd_seconds / bwd_seconds; empty when they change nothing (overlap_cost.hpp).
  std::vector<std::pair<double, double>> overlap_seconds;
  // [block]: of overlap_seconds, Megatron-FSDP's exposed gathers and reduce-scatters (op-sized tasks, which
  // model the other overlaps themselves, take this part as a task of its own); empty without FSDP.
  std::vector<std::pair<double, double>> fsdp_seconds;
  DpCost dense_dp, moe_dp;
  OptimizerCost optimizer;
};

struct StepCost {
  Nets nets;
  std::vector<ChunkCost> chunks;  // parallel to StepModel::chunks
  CommTime p2p;                   // one pipeline send/recv (zero when pp == 1)
  // Megatron's all-reduce of the word-embedding gradient between the first and the last pipeline stage, once per
  // step after the DP reduction (finalize_model_grads.py `_allreduce_word_embedding_grads`): the table is held
  // twice when it is tied to the output layer or MTP's last stage builds its own. Megatron fidelity, pp > 1;
  // zero otherwise.
  CommTime embedding_grads;
  double straggler_ratio = 1;
};

// Block costs shared by the steps whose blocks share op lists (model::OpCache): a block's cost depends only on
// its ops, the system, the TP/CP/EP/ETP sizes and tp-comm-overlap, and an op list is shared only between
// strategies that agree on all of them (model::op_view). One system per cache; not thread-safe.
class CostCache {
 public:
  template <typename Build>
  std::shared_ptr<const BlockCost> get(const std::shared_ptr<const model::OpList>& ops, Build&& build) {
    auto& slot = by_ops_[ops.get()];
    if (!slot.second) slot = {ops, std::make_shared<const BlockCost>(build())};  // `ops` pinned: its address stays
    return slot.second;
  }

 private:
  std::unordered_map<const model::OpList*,
                     std::pair<std::shared_ptr<const model::OpList>, std::shared_ptr<const BlockCost>>>
      by_ops_;
};

// REQUIRES: m = model::build_step_model(s) (with the OpCache that goes with `cache`, if any).
StepCost cost_step(const config::Scenario& s, const model::StepModel& m, CostCache* cache = nullptr);

// SimuMax's straggler ratio: 1 + log2(n)/(log2(n)+1) * 0.09 * sqrt(log2(n)), n = min(nodes, dp, edp).
double straggler_ratio(const config::Scenario& s);

}  // namespace simumax::cost
