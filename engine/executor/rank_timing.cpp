#include "engine/executor/rank_timing.hpp"

#include <algorithm>

#include "engine/common/error.hpp"

namespace simumax::executor {

bool is_compute_task(const graph::Task& t) {
  // The trace view's classes (report_trace_view.cpp kind_of): a compute task of no pass is "other" there.
  switch (t.kind) {
    case graph::TaskKind::kRecompute:
    case graph::TaskKind::kOptimizer: return true;
    case graph::TaskKind::kCompute: return t.pass != std::nullopt;
    default: return false;
  }
}

int comm_kind_index(const graph::Task& t) {
  const int k = static_cast<int>(t.kind) - static_cast<int>(graph::TaskKind::kTpComm);
  return k >= 0 && k < static_cast<int>(kCommKinds) ? k : -1;
}

RankTimingSink::RankTimingSink(const graph::TaskGraph& g) : g_(g), running_(g.num_ranks) {
  out_.ranks.resize(g.num_ranks);
}

void RankTimingSink::advance(uint32_t rank, double now) {
  Running& r = running_[rank];
  if (now < r.since) {
    throw common::InternalError("rank timing: rank " + std::to_string(rank) + " got an event at " +
                                std::to_string(now) + " s after one at " + std::to_string(r.since) +
                                " s (the executor must report tasks in date order)");
  }
  const double dt = now - r.since;
  r.since = now;
  if (dt == 0) return;
  RankTiming& t = out_.ranks[rank];
  const bool hidden = r.compute > 0;
  if (hidden) t.compute_s += dt;
  if (r.comm > 0) {
    t.comm_s += dt;
    if (!hidden) t.exposed_comm_s += dt;
  }
  for (size_t k = 0; k < kCommKinds; ++k) {
    if (r.kind[k] == 0) continue;
    t.kind_comm_s[k] += dt;
    if (!hidden) t.kind_exposed_s[k] += dt;
  }
}

void RankTimingSink::started(uint32_t task, double seconds) {
  const graph::Task& t = g_.tasks[task];
  const bool compute = is_compute_task(t);
  const int kind = comm_kind_index(t);
  if (!compute && kind < 0) return;
  g_.for_each_rank(t, [&](uint32_t r) {
    advance(r, seconds);
    Running& run = running_[r];
    if (compute) ++run.compute;
    if (kind >= 0) ++run.comm, ++run.kind[kind];
  });
}

void RankTimingSink::ended(uint32_t task, double seconds) {
  const graph::Task& t = g_.tasks[task];
  const bool compute = is_compute_task(t);
  const int kind = comm_kind_index(t);
  out_.makespan_s = std::max(out_.makespan_s, seconds);
  if (t.pass != std::nullopt) out_.pipeline_end_s = std::max(out_.pipeline_end_s, seconds);
  g_.for_each_rank(t, [&](uint32_t r) {
    RankTiming& rt = out_.ranks[r];
    rt.end_s = std::max(rt.end_s, seconds);
    if (t.pass == schedule::Pass::kBackward) rt.pipeline_end_s = std::max(rt.pipeline_end_s, seconds);
    if (!compute && kind < 0) return;
    advance(r, seconds);
    Running& run = running_[r];
    if (compute) --run.compute;
    if (kind >= 0) --run.comm, --run.kind[kind];
  });
}

StepTiming RankTimingSink::take() {
  running_.assign(running_.size(), Running{});
  StepTiming out = std::move(out_);
  out_ = StepTiming{};
  out_.ranks.resize(running_.size());
  return out;
}

StepTiming step_timing(const graph::TaskGraph& g, const Timeline& tl) {
  RankTimingSink sink(g);
  replay_timeline(g, tl, sink);
  return sink.take();
}

}  // namespace simumax::executor
