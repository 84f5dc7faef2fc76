// The end of a step: data-parallel gradient reduction, optimizer, parameter all-gather (Megatron's order).
#include "engine/graph/stage_emitter.hpp"

namespace simumax::graph {

namespace {

void append_buckets(GraphBuilder& b, const std::vector<uint32_t>& members, int64_t count, const cost::CommTime& t,
                    const std::string& name, bool network) {
  if (count == 0 || t.seconds == 0) return;
  Task task;
  task.kind = TaskKind::kDpComm;
  task.pattern = CommPattern::kRing;
  task.pass = Pass::kStep;
  task.seconds = t.seconds;
  task.latency_seconds = t.latency_seconds;
  task.group = b.group(members);
  task.rank = members.front();
  task.network = network && members.size() > 1;
  task.name = b.name(name);
  for (int64_t i = 0; i < count; ++i) b.append(task);
}

}  // namespace

void StageEmitter::step_end(int64_t tp, const std::vector<std::vector<std::vector<uint32_t>>>& sets) {
  const auto& st = s_.strategy;
  const int64_t expert_width = st.ep_size * st.etp_size;
  const bool net = network_comm();
  for (size_t stage = 0; stage < sets.size(); ++stage) {
    const auto& cc = c_.chunks[m_.chunk_of_stage[stage]];
    // Dense DP groups: the stage's ranks with the same TP index (dp * cp members). Expert DP groups: the
    // stage's ranks with the same expert-parallel position (rank within the stage mod ep * etp; edp members).
    // With one representative rank per stage, each is a group of one.
    std::vector<std::vector<uint32_t>> dense, expert;
    if (options_.scope == RankScope::kStages) {
      dense.push_back(sets[stage].front());
      expert.push_back(sets[stage].front());
    } else {
      dense.resize(tp);
      expert.resize(expert_width);
      int64_t local = 0;
      for (const auto& lanes : sets[stage]) {
        for (int64_t t = 0; t < tp; ++t, ++local) {
          dense[t].push_back(lanes[t]);
          expert[local % expert_width].push_back(lanes[t]);
        }
      }
    }
    const auto& d = cc.dense_dp;
    const auto& e = cc.moe_dp;
    for (const auto& g : dense) {
      append_buckets(b_, g, d.all_reduce_buckets, d.all_reduce, "dp.all_reduce grads", net);
      append_buckets(b_, g, d.reduce_scatter_buckets, d.reduce_scatter, "dp.reduce_scatter grads", net);
    }
    for (const auto& g : expert) {
      append_buckets(b_, g, e.all_reduce_buckets, e.all_reduce, "edp.all_reduce grads", net);
      append_buckets(b_, g, e.reduce_scatter_buckets, e.reduce_scatter, "edp.reduce_scatter grads", net);
    }
    Task opt;
    opt.kind = TaskKind::kOptimizer;
    opt.pass = Pass::kStep;
    opt.seconds = cc.optimizer.seconds;
    opt.name = b_.name("optimizer.step");
    for (const auto& g : dense) {
      for (uint32_t r : g) {
        opt.rank = r;
        b_.append(opt);
      }
    }
    for (const auto& g : dense) {
      append_buckets(b_, g, d.all_gather_buckets, d.all_gather, "dp.all_gather params", net);
    }
    for (const auto& g : expert) {
      append_buckets(b_, g, e.all_gather_buckets, e.all_gather, "edp.all_gather params", net);
    }
  }
}

}  // namespace simumax::graph
