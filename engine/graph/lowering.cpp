#include "engine/graph/lowering.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <map>
#include <tuple>

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
    case TaskKind::kHost: return "host";
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
    RankStatic rs;
    for (int ci : m.held_chunks[stage]) {
      const auto& p = m.chunks[ci].params;
      rs.weight_bytes += p.weight_bytes;
      rs.grad_bytes += p.grad_bytes;
      rs.optimizer_state_bytes += static_cast<int64_t>(p.optimizer_state_bytes);
      rs.other_bytes = std::max(rs.other_bytes, p.te_dummy_wgrad_bytes);  // TE's buffers are shared by shape
    }
    rs.workspace_bytes = m.workspace_bytes;
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

// Pipeline programs: every lane set runs its stage's program; each transfer is one node per lane shared by
// its sender and receiver, which both place it in a batch of their own program.
class PipelineEmitter {
 public:
  PipelineEmitter(StageEmitter& em, GraphBuilder& b, const cost::StepCost& c,
                  const std::vector<std::vector<std::vector<uint32_t>>>& sets, double ratio, int max_transfers,
                  bool async)
      : em_(em), b_(b), c_(c), sets_(sets), ratio_(ratio), max_transfers_(max_transfers), async_(async) {
    names_[0] = b.name("pp.send_recv.gradient");
    names_[1] = b.name("pp.send_recv.activation");
    nodes_.assign(4 * sets.size() * sets.front().size() * static_cast<size_t>(max_transfers), kNoGroup);
  }

  void run(const std::vector<Program>& programs) {
    for (size_t r = 0; r < programs.size(); ++r) {
      for (size_t set = 0; set < sets_[r].size(); ++set) run_rank(programs[r], static_cast<int>(r), set);
    }
  }

 private:
  void run_rank(const Program& prog, int r, size_t set) {
    const auto& lanes = sets_[r][set];
    // NCCL matches the sends and receives between two ranks by order, not by content: the n-th send from
    // A to B meets B's n-th receive from A (Megatron relies on it when micro-batch groups exceed pp).
    // A rank sends and receives each pass's transfers with at most one peer on each side (DualPipe with both),
    // so (pass, sending?, towards the higher rank?) names the stream.
    int sequence[2][2][2] = {};
    // A W consumes nothing from the pipeline: an asynchronous receive is waited for by the next other compute.
    std::vector<std::pair<uint32_t, uint32_t>> held;  // (lane, transfer)
    for (size_t i = 0; i < prog.steps.size(); ++i) {
      const ScheduleStep& step = prog.steps[i];
      if (step.paired) {
        em_.pair(r, lanes, step.microbatch, step.chunk, step.b_microbatch, step.b_chunk);
      } else if (step.kind) {
        em_.pass(*step.kind, r, lanes, step.microbatch, step.chunk);
        if (step.kind == schedule::Pass::kWeightGrad) {
          for (const auto& [lane, id] : held) b_.also_wait(lane, id);
          held.clear();
        }
      } else if (async_ || prog.async_p2p) {
        size_t next = i + 1;
        while (next < prog.steps.size() && prog.steps[next].is_comm()) ++next;
        const bool before_w = next < prog.steps.size() && prog.steps[next].kind == schedule::Pass::kWeightGrad;
        // Megatron's overlap_p2p_comm: receives are posted early and waited for by the compute that needs
        // them; sends leave as soon as their data exists and hold nothing up.
        for (uint32_t i = 0; i < step.num_comms; ++i) {
          const P2p& p = prog.comms[step.first_comm + i];
          const int seq = sequence[p.forward][p.sender == r][upward(p)]++;
          const uint32_t first = transfer(p, seq, set);
          for (size_t l = 0; l < lanes.size(); ++l) {
            if (p.sender == r) {
              em_.send_async(lanes[l], first + static_cast<uint32_t>(l));
            } else if (before_w) {
              held.emplace_back(lanes[l], first + static_cast<uint32_t>(l));
            } else {
              b_.also_wait(lanes[l], first + static_cast<uint32_t>(l));
            }
          }
        }
      } else {
        if (step.num_comms > 0) em_.p2p_launches(lanes, step.num_comms, prog.comms[step.first_comm].forward);
        for (uint32_t lane : lanes) b_.begin_batch(lane);
        for (uint32_t i = 0; i < step.num_comms; ++i) {
          const P2p& p = prog.comms[step.first_comm + i];
          const int seq = sequence[p.forward][p.sender == r][upward(p)]++;
          const uint32_t first = transfer(p, seq, set);
          for (size_t l = 0; l < lanes.size(); ++l) b_.join_batch(lanes[l], first + static_cast<uint32_t>(l));
        }
        for (uint32_t lane : lanes) b_.end_batch(lane);
        if (step.num_comms > 0) em_.p2p_sync(lanes);
      }
    }
  }

  // The transfer's node for the first lane of the set (the other lanes' follow it), created by whichever
  // side reaches it first.
  static int upward(const P2p& p) { return p.receiver > p.sender ? 1 : 0; }

  uint32_t transfer(const P2p& p, int seq, size_t set) {
    const size_t stream = static_cast<size_t>(2 * p.forward + upward(p));
    const size_t key = ((stream * sets_.size() + static_cast<size_t>(p.sender)) * sets_.front().size() + set) *
                           static_cast<size_t>(max_transfers_) + static_cast<size_t>(seq);
    uint32_t& first = nodes_[key];
    if (first != kNoGroup) return first;
    const auto& from = sets_[p.sender][set];
    const auto& to = sets_[p.receiver][set];
    first = static_cast<uint32_t>(b_.size());
    for (size_t l = 0; l < from.size(); ++l) {
      Task t;
      t.seconds = c_.p2p.seconds * ratio_;
      t.latency_seconds = c_.p2p.latency_seconds * ratio_;
      t.group = b_.pair_group(from[l], to[l]);
      t.rank = from[l];
      t.kind = TaskKind::kPpComm;
      t.stream = kPpStream;
      t.pattern = CommPattern::kPeer;
      t.network = em_.network_comm();
      t.pass = p.forward ? schedule::Pass::kForward : schedule::Pass::kBackward;
      t.microbatch = p.microbatch;
      t.name = names_[p.forward ? 1 : 0];
      b_.add_detached(t);
    }
    return first;
  }

  StageEmitter& em_;
  GraphBuilder& b_;
  const cost::StepCost& c_;
  const std::vector<std::vector<std::vector<uint32_t>>>& sets_;
  double ratio_;
  int max_transfers_;  // transfers one rank sends in one direction: at most one per (micro-batch, chunk)
  bool async_;         // sends and receives off the compute stream
  uint32_t names_[2];
  std::vector<uint32_t> nodes_;  // [direction][sender][set][sequence] -> first lane's node
};

}  // namespace

TaskGraph lower_step(const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
                     const LoweringOptions& options) {
  const auto& st = s.strategy;
  const Layout lay{st.tp_size, st.cp_size, st.dp_size(), st.pp_size};
  TaskGraph g;
  set_up_ranks(s, m, lay, options.scope, g);
  // Every rank of a stage runs the same steps: their tasks share prototypes (a hash per task, worth it only here).
  g.tasks.set_interning(options.scope == RankScope::kAll);
  GraphBuilder b(g);
  // The estimate (an over-estimate at layer granularity: 27.5 M for 23.3 M tasks at 16k GPUs) instead of
  // growing by doubling: each doubling briefly holds the old and the new array (2 x 1.5 GB at 16k GPUs), and
  // reserved pages that are never written cost no memory.
  const double chunk_tasks = static_cast<double>(4 * st.micro_batch_num * m.virtual_chunks()) * g.num_ranks;
  b.reserve(static_cast<size_t>(std::max(estimate_tasks(s, m, options), chunk_tasks)) + 256);
  const auto sets = lane_sets(lay, options.scope);
  StageEmitter em(b, s, m, c, options);
  const int mbc = static_cast<int>(st.micro_batch_num);
  PipelineEmitter(em, b, c, sets, c.straggler_ratio, mbc * m.virtual_chunks(), st.megatron_overlap_p2p_comm)
      .run(schedule_programs(st));
  em.step_end(lay.tp, sets);
  b.finish();
  return g;
}

double estimate_tasks(const config::Scenario& s, const model::StepModel& m, const LoweringOptions& options) {
  const auto& st = s.strategy;
  const double ranks = static_cast<double>(options.scope == RankScope::kAll ? st.world_size : st.pp_size);
  // Tasks of one pass of the largest chunk: one (chunk), one per layer or block (layer), or one per op and
  // collective (op).
  double per_pass = 1;
  for (const auto& chunk : m.chunks) {
    double n = 0;
    for (const auto& block : chunk.blocks) {
      double unit = 1;
      if (options.granularity == Granularity::kOp) {
        unit = 0;
        for (const auto& op : *block.ops) unit += 1 + static_cast<double>(op.comm[0].size() + op.comm[1].size());
      }
      n += options.granularity == Granularity::kChunk ? 0 : unit * block.repeat;
    }
    per_pass = std::max(per_pass, n);
  }
  // Forward and backward, or forward, B and W (zero-bubble).
  const double kinds = splits_backward(st.pipeline_schedule) ? 3.0 : 2.0;
  const double passes = kinds * static_cast<double>(st.micro_batch_num) * m.virtual_chunks();
  return ranks * (passes * (per_pass + 2) + 16);  // + 2: the send and receive of a chunk; + 16: DP, optimizer
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
