// The schedule tests' hand-timed step: the default scenario's model on `pp` stages of 4 layers, every pass's time
// set by hand per chunk (F, B the input gradient, W), no transfer time, no DP or optimizer work.
#pragma once

#include <string>
#include <vector>

#include "engine/executor/fast_executor.hpp"
#include "engine/simulate.hpp"

namespace simumax::tests {

// The step time of the chunk-task graph under `schedule`; the schedule must accept the layout. A V-shaped
// schedule cuts the 4 pp layers into 2 pp stages of 2.
inline double unit_step(int pp, int mbc, double f, double b, double w, const std::string& schedule) {
  config::Scenario s = config::load_scenario(std::string(SIMUMAX_SOURCE_DIR) + "/scenarios/default.json");
  s.model.layer_num = 4 * pp;
  s.strategy.pp_size = pp, s.strategy.world_size = pp, s.strategy.micro_batch_num = mbc;
  s.strategy.pipeline_schedule = schedule;
  const model::StepModel m = model::build_step_model(s);
  cost::StepCost c = cost::cost_step(s, m);
  for (auto& cc : c.chunks) {
    cc.fwd_seconds = f, cc.bwd_seconds = b + w, cc.wgrad_seconds = w;
    cc.dense_dp = cc.moe_dp = cost::DpCost{};
    cc.optimizer = cost::OptimizerCost{};
  }
  c.p2p = cost::CommTime{};
  c.straggler_ratio = 1;
  const auto g = graph::lower_step(s, m, c, {graph::Granularity::kChunk, graph::RankScope::kStages});
  return executor::run_fast(g).makespan;
}

// A program's compute steps in order, each overlapped F&B pair (ScheduleStep::paired) read as its forward then its
// whole backward (the order of their data: the pair's two sides are of different micro-batches).
inline std::vector<schedule::ScheduleStep> serial_computes(const schedule::Program& prog) {
  std::vector<schedule::ScheduleStep> out;
  for (const auto& st : prog.steps) {
    if (st.kind) {
      out.push_back(st);
    } else if (st.paired) {
      schedule::ScheduleStep f, b;
      f.kind = schedule::Pass::kForward, f.microbatch = st.microbatch, f.chunk = st.chunk;
      b.kind = schedule::Pass::kBackward, b.microbatch = st.b_microbatch, b.chunk = st.b_chunk;
      if (st.microbatch >= 0) out.push_back(f);
      if (st.b_microbatch >= 0) out.push_back(b);
    }
  }
  return out;
}

}  // namespace simumax::tests
