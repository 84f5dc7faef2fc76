// The end of a step: data-parallel gradient reduction, optimizer, parameter all-gather (Megatron's order),
// either after the whole pipeline (SimuMax) or overlapped bucket by bucket (Megatron's overlap options).
#include <algorithm>

#include "engine/cost/comm_cost.hpp"
#include "engine/graph/stage_emitter.hpp"

namespace simumax::graph {

namespace {

void append_buckets(GraphBuilder& b, const std::vector<uint32_t>& members, int64_t count, const cost::CommTime& t,
                    const std::string& name, bool network, bool merge) {
  if (count == 0 || t.seconds == 0) return;
  Task task;
  task.kind = TaskKind::kDpComm;
  task.pattern = CommPattern::kRing;
  task.pass = std::nullopt;
  task.seconds = t.seconds;
  task.latency_seconds = t.latency_seconds;
  task.group = b.group(members);
  task.rank = members.front();
  task.network = network && members.size() > 1;
  task.name = b.name(name);
  if (merge) {
    task.seconds *= static_cast<double>(count);
    task.latency_seconds *= static_cast<double>(count);
    count = 1;
  }
  for (int64_t i = 0; i < count; ++i) b.append(task);
}

struct DpGroups {
  std::vector<std::vector<uint32_t>> dense, expert;
};

// Dense DP groups: the stage's ranks with the same TP index (dp * cp members). Expert DP groups: the stage's
// ranks with the same expert-parallel position (rank within the stage mod ep * etp; edp members). With one
// representative rank per stage, each is a group of one.
DpGroups dp_groups(const std::vector<std::vector<uint32_t>>& stage_sets, int64_t tp, int64_t expert_width,
                   bool representatives) {
  DpGroups g;
  if (representatives) {
    g.dense.push_back(stage_sets.front());
    g.expert.push_back(stage_sets.front());
    return g;
  }
  g.dense.resize(tp);
  g.expert.resize(expert_width);
  int64_t local = 0;
  for (const auto& lanes : stage_sets) {
    for (int64_t t = 0; t < tp; ++t, ++local) {
      g.dense[t].push_back(lanes[t]);
      g.expert[local % expert_width].push_back(lanes[t]);
    }
  }
  return g;
}

}  // namespace

void StageEmitter::step_end(int64_t tp, const std::vector<std::vector<std::vector<uint32_t>>>& sets) {
  const auto& st = s_.strategy;
  const bool overlap_rs = st.megatron_overlap_grad_reduce, overlap_ag = st.megatron_overlap_param_gather;
  const bool net = network_comm();
  const bool merge = options_.merge_dp_buckets && !net;
  std::vector<DpGroups> groups;
  for (const auto& stage_sets : sets) {
    groups.push_back(dp_groups(stage_sets, tp, st.ep_size * st.etp_size, options_.scope == RankScope::kStages));
  }
  // Every gather before any reduction on the DP stream: an expert gather queued behind a dense reduction would
  // wait for the backward, whose forward waits for that gather (a cycle, with MoE and edp > 1).
  for (const bool gather : {true, false}) {
    if (!(gather ? overlap_ag : overlap_rs)) continue;
    for (const auto& g : groups) {
      for (int expert = 0; expert < 2; ++expert) {
        for (const auto& members : expert ? g.expert : g.dense) overlapped_buckets(members, expert, gather);
      }
    }
  }
  // SimuMax starts DP communication when the whole pipeline has drained; Megatron's grad-norm all-reduce
  // over the model-parallel group also synchronises every rank before the optimizer.
  Task barrier;
  barrier.kind = TaskKind::kBarrier;
  barrier.pass = std::nullopt;
  barrier.name = b_.name("pipeline_flush");
  std::vector<uint32_t> everyone(b_.num_ranks());
  for (uint32_t r = 0; r < b_.num_ranks(); ++r) {
    everyone[r] = r;
    b_.wait_stream(r, kDpStream);
  }
  barrier.group = b_.group(everyone);
  barrier.rank = 0;
  b_.append(barrier);
  // Per stage: the gradients' reduction, then the optimizer and the parameters' gather. Megatron's
  // finalize_model_grads reduces every DP bucket, then all-reduces the shared word-embedding gradient between the
  // first and the last stage; the optimizer follows. With that all-reduce, every stage's reduction comes first.
  // A DualPipe rank reduces, steps and gathers both stages it holds.
  const auto reduce_chunk = [&](size_t stage, const cost::ChunkCost& cc) {
    const auto& d = cc.dense_dp;
    const auto& e = cc.moe_dp;
    for (const auto& g : groups[stage].dense) {
      append_buckets(b_, g, d.all_reduce_buckets, d.all_reduce, "dp.all_reduce grads", net, merge);
      append_buckets(b_, g, d.reduce_scatter_buckets, d.reduce_scatter, "dp.reduce_scatter grads", net, merge);
    }
    for (const auto& g : groups[stage].expert) {
      append_buckets(b_, g, e.all_reduce_buckets, e.all_reduce, "edp.all_reduce grads", net, merge);
      append_buckets(b_, g, e.reduce_scatter_buckets, e.reduce_scatter, "edp.reduce_scatter grads", net, merge);
    }
  };
  const auto reduce = [&](size_t stage) {
    if (overlap_rs) return;
    for (int ci : m_.held_chunks[stage]) reduce_chunk(stage, c_.chunks[ci]);
  };
  const auto update_chunk = [&](size_t stage, const cost::ChunkCost& cc) {
    const auto& d = cc.dense_dp;
    const auto& e = cc.moe_dp;
    Task opt;
    opt.kind = TaskKind::kOptimizer;
    opt.pass = std::nullopt;
    opt.seconds = cc.optimizer.seconds;
    opt.name = b_.name("optimizer.step");
    // optimizer.py: the gradient norm (get_grad_norm_fp32's .item()) and check_for_nan_in_grad read GPU values
    // on the host: it waits for the GPU, then launches the optimizer's kernels.
    Task host = opt;
    host.seconds = cc.optimizer.host_seconds;
    host.name = b_.name("host.optimizer");
    for (const auto& g : groups[stage].dense) {
      for (uint32_t r : g) {
        if (b_.host_lane()) {
          b_.host_waits(r);
          if (host.seconds > 0) b_.issue(r, host);
        }
        opt.rank = r;
        b_.append(opt);
      }
    }
    if (!overlap_ag) {
      for (const auto& g : groups[stage].dense) {
        append_buckets(b_, g, d.all_gather_buckets, d.all_gather, "dp.all_gather params", net, merge);
      }
      for (const auto& g : groups[stage].expert) {
        append_buckets(b_, g, e.all_gather_buckets, e.all_gather, "edp.all_gather params", net, merge);
      }
    }
  };
  const auto update = [&](size_t stage) {
    for (int ci : m_.held_chunks[stage]) update_chunk(stage, c_.chunks[ci]);
  };
  if (c_.embedding_grads.seconds > 0 && sets.size() > 1) {
    for (size_t stage = 0; stage < sets.size(); ++stage) reduce(stage);
    // One 2-member group per (replica, TP lane): the same position on the first and the last stage.
    const auto& first = sets.front();
    const auto& last = sets.back();
    for (size_t i = 0; i < first.size() && i < last.size(); ++i) {
      for (size_t t = 0; t < first[i].size() && t < last[i].size(); ++t) {
        append_buckets(b_, {first[i][t], last[i][t]}, 1, c_.embedding_grads, "embedding.all_reduce grads", net,
                       false);
      }
    }
    for (size_t stage = 0; stage < sets.size(); ++stage) update(stage);
  } else {
    for (size_t stage = 0; stage < sets.size(); ++stage) {
      reduce(stage);
      update(stage);
    }
  }
}

// Megatron's overlapped DP buckets on the DP stream: a gradient bucket's reduce-scatter starts when the last
// backward that fills it ends; a parameter bucket's all-gather (issued when the step starts: the previous
// optimizer's gather, prefetched) must end before the first forward that uses it. The tasks that follow a bucket
// run slower while the DP stream's buckets would still be in flight beside them (SM contention; known only after
// the pipeline has been emitted, so applied to those tasks here).
void StageEmitter::overlapped_buckets(const std::vector<uint32_t>& group, bool expert, bool gather) {
  const auto& st = s_.strategy;
  if (gather && st.zero_state == 0) return;  // without ZeRO there is nothing to gather
  if (st.fsdp()) return;  // Megatron-FSDP gathers and reduces per layer (overlap_cost)
  auto& uses = gather ? params_used_ : grads_ready_;
  const auto& lead = uses[group.front()];
  const int64_t n = expert ? st.edp_size() : st.dp_size() * st.cp_size;
  if (lead.empty() || n == 1) return;
  const std::string& net = expert ? c_.nets.edp : c_.nets.dp;
  const auto stage = expert ? cost::CommStage::kExpertDp : cost::CommStage::kDenseDp;
  const model::Coll coll = gather ? model::Coll::kAllGather
                                  : (st.zero_state >= 1 ? model::Coll::kReduceScatter : model::Coll::kAllReduce);
  const double bytes_per_param = static_cast<double>(gather ? st.element_bytes() : st.main_grad_bytes());
  const double bucket = static_cast<double>(std::max<int64_t>(40000000, 1000000 * n)) * 4.0 /
                        static_cast<double>(st.main_grad_bytes()) * bytes_per_param;
  InFlightStreams flight{};  // the DP stream's buckets still in flight, as the tasks in `lead` run
  flight[kDpStream].share = expert ? shares_.edp : shares_.dp;
  Task task;
  task.kind = TaskKind::kDpComm;
  task.pattern = CommPattern::kRing;
  task.pass = std::nullopt;
  task.stream = kDpStream;
  task.group = b_.group(group);
  task.rank = group.front();
  task.network = network_comm() && group.size() > 1;
  task.name = b_.name(std::string(expert ? "edp." : "dp.") + model::to_string(coll) +
                      (gather ? " params (overlapped)" : " grads (overlapped)"));
  double acc = 0;
  size_t start = 0;
  for (size_t k = 0; k < lead.size(); ++k) {
    acc += static_cast<double>(expert ? lead[k].moe_numel : lead[k].dense_numel) * bytes_per_param;
    if (flight[kDpStream].seconds > 0) {
      const double wall = cost::run_beside(flight, b_.task(lead[k].task).seconds);
      for (uint32_t r : group) b_.set_seconds(uses[r][k].task, wall);
    }
    if (acc < bucket && k + 1 < lead.size()) continue;
    if (acc > 0) {
      const auto t = cost::comm_time(s_.system, st, coll, acc, n, net, stage);
      task.seconds = t.seconds;
      task.latency_seconds = t.latency_seconds;
      const uint32_t id = b_.append(task, false);
      for (uint32_t r : group) {
        if (gather) {
          b_.depend(id, uses[r][start].task);
        } else {
          b_.depend(uses[r][k].task, id);
        }
      }
      flight[kDpStream].seconds += t.seconds;
    }
    acc = 0;
    start = k + 1;
  }
}

}  // namespace simumax::graph
