#include "engine/graph/lowering.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include "engine/graph/graph_builder.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/graph/stage_emitter.hpp"

namespace simumax::graph {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::kCompute: return "compute";
    case TaskKind::kRecompute: return "recompute";
    case TaskKind::kTpComm: return "tp_comm";
    case TaskKind::kCpComm: return "cp_comm";
    case TaskKind::kEpComm: return "ep_comm";
    case TaskKind::kPpComm: return "pp_comm";
    case TaskKind::kDpComm: return "dp_comm";
    case TaskKind::kOptimizer: return "optimizer";
    case TaskKind::kBarrier: return "barrier";
  }
  return "?";
}

const char* to_string(Granularity g) {
  switch (g) {
    case Granularity::kChunk: return "chunk";
    case Granularity::kLayer: return "layer";
    case Granularity::kOp: return "op";
  }
  return "?";
}

const char* to_string(RankScope s) { return s == RankScope::kAll ? "all" : "stages"; }

namespace {

// Rank layout tp -> cp -> dp -> pp (tp fastest), as Megatron and SimuMax place ranks.
struct Layout {
  int64_t tp, cp, dp, pp;
  uint32_t rank(int64_t t, int64_t c, int64_t d, int64_t p) const {
    return static_cast<uint32_t>(t + tp * (c + cp * (d + dp * p)));
  }
};

void set_up_ranks(const config::Scenario& s, const model::StepModel& m, const Layout& lay, RankScope scope,
                  TaskGraph& g) {
  const int64_t per_stage = lay.tp * lay.cp * lay.dp;
  g.num_ranks = static_cast<uint32_t>(scope == RankScope::kAll ? s.strategy.world_size : lay.pp);
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    const int64_t stage = scope == RankScope::kAll ? r / per_stage : r;
    g.global_rank.push_back(static_cast<uint32_t>(scope == RankScope::kAll ? r : stage * per_stage));
    g.pp_stage.push_back(static_cast<uint32_t>(stage));
    const auto& p = m.chunks[m.chunk_of_stage[stage]].params;
    RankStatic rs;
    rs.weight_bytes = p.weight_bytes;
    rs.grad_bytes = p.grad_bytes;
    rs.optimizer_state_bytes = static_cast<int64_t>(p.optimizer_state_bytes);
    rs.other_bytes = p.te_dummy_wgrad_bytes;
    g.rank_static.push_back(rs);
  }
}

// The ranks that run one stage program in lockstep (a TP group), per stage.
std::vector<std::vector<std::vector<uint32_t>>> lane_sets(const Layout& lay, RankScope scope) {
  std::vector<std::vector<std::vector<uint32_t>>> sets(lay.pp);
  for (int64_t p = 0; p < lay.pp; ++p) {
    if (scope == RankScope::kStages) {
      sets[p].push_back({static_cast<uint32_t>(p)});
      continue;
    }
    for (int64_t d = 0; d < lay.dp; ++d) {
      for (int64_t c = 0; c < lay.cp; ++c) {
        std::vector<uint32_t> members;
        for (int64_t t = 0; t < lay.tp; ++t) members.push_back(lay.rank(t, c, d, p));
        sets[p].push_back(std::move(members));
      }
    }
  }
  return sets;
}

// Pipeline programs: every lane set runs its stage's 1F1B program; send/recv nodes are shared by both sides.
void emit_pipeline(StageEmitter& em, GraphBuilder& b, const config::Scenario& s, const cost::StepCost& c,
                   const std::vector<std::vector<std::vector<uint32_t>>>& sets, double ratio) {
  const int pp = static_cast<int>(s.strategy.pp_size), mbc = static_cast<int>(s.strategy.micro_batch_num);
  const auto programs = one_f_one_b(pp, mbc);
  // p2p[dir][lower stage][lane set][mb] -> node per lane member
  std::vector<std::vector<std::vector<std::vector<std::vector<uint32_t>>>>> p2p(2);
  for (auto& dir : p2p) {
    dir.resize(pp);
    for (int r = 0; r < pp; ++r) dir[r].assign(sets[r].size(), std::vector<std::vector<uint32_t>>(mbc));
  }
  const uint32_t fwd_name = b.name("pp.send_recv.activation"), bwd_name = b.name("pp.send_recv.gradient");
  auto link = [&](int dir, int lower, size_t set, int mb, const std::vector<uint32_t>& mine, int peer_stage) {
    auto& nodes = p2p[dir][lower][set][mb];
    if (nodes.empty()) {
      for (size_t i = 0; i < mine.size(); ++i) {
        const uint32_t peer = sets[peer_stage][set][i];
        Task t;
        t.seconds = c.p2p.seconds * ratio;
        t.latency_seconds = c.p2p.latency_seconds * ratio;
        const bool forward = dir == 0;
        std::vector<uint32_t> members = forward == (peer_stage > lower) ? std::vector<uint32_t>{mine[i], peer}
                                                                       : std::vector<uint32_t>{peer, mine[i]};
        t.group = b.group(members);
        t.rank = members[0];
        t.kind = TaskKind::kPpComm;
        t.pattern = CommPattern::kPeer;
        t.network = em.network_comm();
        t.pass = forward ? Pass::kForward : Pass::kBackward;
        t.microbatch = mb;
        t.name = forward ? fwd_name : bwd_name;
        nodes.push_back(b.add_detached(t));
      }
    }
    // Each side places the shared node in its own program when it reaches it.
    for (size_t i = 0; i < mine.size(); ++i) b.join(mine[i], nodes[i]);
  };
  for (int r = 0; r < pp; ++r) {
    for (size_t set = 0; set < sets[r].size(); ++set) {
      const auto& lanes = sets[r][set];
      for (const ScheduleStep& step : programs[r]) {
        switch (step.kind) {
          case StepKind::kForward: em.forward(r, lanes, step.microbatch); break;
          case StepKind::kBackward: em.backward(r, lanes, step.microbatch); break;
          case StepKind::kSendNext: link(0, r, set, step.microbatch, lanes, r + 1); break;
          case StepKind::kRecvPrev: link(0, r - 1, set, step.microbatch, lanes, r - 1); break;
          case StepKind::kSendPrev: link(1, r - 1, set, step.microbatch, lanes, r - 1); break;
          case StepKind::kRecvNext: link(1, r, set, step.microbatch, lanes, r + 1); break;
        }
      }
    }
  }
}

}  // namespace

TaskGraph lower_step(const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
                     const LoweringOptions& options) {
  const auto& st = s.strategy;
  const Layout lay{st.tp_size, st.cp_size, st.dp_size(), st.pp_size};
  TaskGraph g;
  set_up_ranks(s, m, lay, options.scope, g);
  GraphBuilder b(g);
  const auto sets = lane_sets(lay, options.scope);
  StageEmitter em(b, s, m, c, options);
  emit_pipeline(em, b, s, c, sets, c.straggler_ratio);
  // SimuMax adds DP communication and the optimizer after the whole pipeline (T_pp), on every stage.
  std::vector<uint32_t> everyone(g.num_ranks);
  for (uint32_t r = 0; r < g.num_ranks; ++r) everyone[r] = r;
  Task barrier;
  barrier.kind = TaskKind::kBarrier;
  barrier.group = b.group(everyone);
  barrier.rank = 0;
  barrier.pass = Pass::kStep;
  barrier.name = b.name("pipeline_flush");
  b.append(barrier);
  em.step_end(lay.tp, sets);
  b.finish();
  return g;
}

bool is_acyclic(const TaskGraph& g) {
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  G bg(g.size());
  for (uint32_t t = 0; t < g.size(); ++t) {
    for (uint32_t i = g.succ_offsets[t]; i < g.succ_offsets[t + 1]; ++i) boost::add_edge(t, g.succ[i], bg);
  }
  std::vector<G::vertex_descriptor> order;
  try {
    boost::topological_sort(bg, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return false;
  }
  return true;
}

}  // namespace simumax::graph
