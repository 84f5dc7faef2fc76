// Pipeline schedules beyond 1F1B (issue #15, docs/schedules.md): ZB-H1's program, its step time against the
// zero-bubble paper's formula (Qi et al. 2024, section 3.1) on hand-set pass times and on real cases, and its
// memory from the same event replay as 1F1B's.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/simulate.hpp"

namespace simumax {
namespace {

using graph::Program;
using graph::StepKind;

const std::string kRoot = SIMUMAX_SOURCE_DIR;

// ---- The program ----

// Every micro-batch runs F, B and W once on every stage, in that order; stage r holds at most r deferred W's
// once its B's have passed r; the last B is followed by min(r + 1, mbc) W's; every transfer is named twice.
TEST(ZbH1Program, RunsEachPassOnceAndDefersTheFirstRWeightGradients) {
  for (int pp : {1, 2, 3, 4, 8, 16}) {
    for (int mbc : {1, 2, 3, 8, 13, 32}) {
      const auto programs = graph::zb_h1(pp, mbc);
      std::map<graph::P2p, int> seen;
      for (int r = 0; r < pp; ++r) {
        std::map<std::pair<StepKind, int>, int> at;  // (pass, micro-batch) -> step index
        int pending = 0, most = 0, after_last_b = 0;
        for (size_t i = 0; i < programs[r].steps.size(); ++i) {
          const auto& st = programs[r].steps[i];
          if (st.kind == StepKind::kComm) continue;
          ASSERT_NE(st.kind, StepKind::kBackward) << "ZB-H1 splits every backward";
          EXPECT_TRUE(at.emplace(std::pair{st.kind, st.microbatch}, static_cast<int>(i)).second);
          if (st.kind == StepKind::kInputGrad) ++pending, after_last_b = 0;
          if (st.kind == StepKind::kWeightGrad) --pending, ++after_last_b;
          if (st.kind == StepKind::kForward) most = std::max(most, pending);
        }
        for (int mb = 0; mb < mbc; ++mb) {
          const int f = at.at({StepKind::kForward, mb}), b = at.at({StepKind::kInputGrad, mb}),
                    w = at.at({StepKind::kWeightGrad, mb});
          EXPECT_LT(f, b);
          EXPECT_LT(b, w);
        }
        EXPECT_LE(most, r) << "pp " << pp << " mbc " << mbc << " stage " << r;
        EXPECT_EQ(after_last_b, std::min(r + 1, mbc)) << "pp " << pp << " mbc " << mbc << " stage " << r;
        for (const auto& p : programs[r].comms) ++seen[p];
      }
      for (const auto& [p, n] : seen) EXPECT_EQ(n, 2);
    }
  }
}

// ZB-H1 is 1F1B with the backward split: without its W steps, and with B read as the whole backward, the
// programs are 1F1B's step for step, transfers included.
TEST(ZbH1Program, IsOneFOneBWithTheBackwardSplit) {
  for (auto [pp, mbc] : {std::pair{4, 8}, {2, 8}, {8, 3}, {16, 32}}) {
    const auto zb = graph::zb_h1(pp, mbc), base = graph::one_f_one_b(pp, mbc);
    for (int r = 0; r < pp; ++r) {
      std::vector<std::tuple<StepKind, int, uint32_t>> a, b;
      for (const auto& st : zb[r].steps) {
        if (st.kind == StepKind::kWeightGrad) continue;
        const StepKind k = st.kind == StepKind::kInputGrad ? StepKind::kBackward : st.kind;
        a.emplace_back(k, st.kind == StepKind::kComm ? -1 : st.microbatch, st.num_comms);
      }
      for (const auto& st : base[r].steps) {
        b.emplace_back(st.kind, st.kind == StepKind::kComm ? -1 : st.microbatch, st.num_comms);
      }
      EXPECT_EQ(a, b) << "pp " << pp << " mbc " << mbc << " stage " << r;
      EXPECT_EQ(zb[r].comms, base[r].comms);
    }
  }
}

// ---- Step time against the formula ----

// The default scenario's model on `pp` stages of 4 layers, with every pass's time set by hand: F, B and W per
// chunk, no transfer time, no DP or optimizer work. Returns the step time of the chunk-task graph.
double unit_step(int pp, int mbc, double f, double b, double w, config::PipelineSchedule schedule) {
  config::Scenario s = config::load_scenario(kRoot + "/scenarios/default.json");
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

// The paper's hand-computed case (its Figure 3 with pp 4): pp 4, 8 micro-batches, unit F, B and W. 1F1B takes
// m (F+B+W) + (p-1)(F+B+W) = 24 + 9; ZB-H1 m (F+B+W) + (p-1)(F+B-W) = 24 + 3.
TEST(ZbH1Time, UnitPassesMatchThePapersFormula) {
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, config::PipelineSchedule::k1F1B), 33.0);
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, config::PipelineSchedule::kZbH1), 27.0);
  // Other shapes, while T_W <= T_F and T_W <= T_B (the paper's assumption for H1).
  for (auto [pp, mbc, f, b, w] : {std::tuple{4, 8, 1.0, 1.5, 0.5}, {8, 16, 1.0, 1.0, 1.0}, {16, 32, 1.0, 1.2, 0.8},
                                  {2, 8, 2.0, 2.0, 1.0}, {16, 64, 1.0, 1.0, 0.9}}) {
    const double full = mbc * (f + b + w);
    EXPECT_NEAR(unit_step(pp, mbc, f, b, w, config::PipelineSchedule::k1F1B), full + (pp - 1) * (f + b + w), 1e-9)
        << pp << " " << mbc;
    EXPECT_NEAR(unit_step(pp, mbc, f, b, w, config::PipelineSchedule::kZbH1), full + (pp - 1) * (f + b - w), 1e-9)
        << pp << " " << mbc << " " << f << " " << b << " " << w;
  }
}

// A real case with the formula evaluated from each stage's own pass times. The slowest stage s* computes m
// micro-batches (each F, B and W with its transfers) and idles while the other stages run their warm-up forwards
// and cool-down backwards: its bubble is, summed over the p - 1 other stages, T_F + T_B + T_W under 1F1B and
// T_F + T_B - T_W under ZB-H1, plus their two transfers (the paper's (p - 1)(...) when stages are identical).
// Under 1F1B the slowest stage's own transfers block it; ZB-H1's are asynchronous (graph::zb_h1).
struct FormulaCheck {
  double simulated_ms = 0, formula_ms = 0;
};

FormulaCheck formula_check(const std::string& path, config::PipelineSchedule schedule) {
  config::Scenario s = config::load_scenario(kRoot + "/" + path);
  s.strategy.pipeline_schedule = schedule;
  RunOptions o;
  o.lowering = {graph::Granularity::kChunk, graph::RankScope::kStages};
  const RunResult r = simulate(s, o);
  const int p = static_cast<int>(s.strategy.pp_size), m = static_cast<int>(s.strategy.micro_batch_num);
  const double k = r.cost.straggler_ratio, link = r.cost.p2p.seconds * k;
  std::vector<double> f(p), b(p), w(p);
  int slowest = 0;
  for (int st = 0; st < p; ++st) {
    const auto& cc = r.cost.chunks[r.model.chunk_of_stage[st]];
    f[st] = cc.fwd_seconds * k, b[st] = (cc.bwd_seconds - cc.wgrad_seconds) * k, w[st] = cc.wgrad_seconds * k;
    if (f[st] + b[st] + w[st] > f[slowest] + b[slowest] + w[slowest]) slowest = st;
  }
  const bool zb = schedule == config::PipelineSchedule::kZbH1;
  const double sign = zb ? -1 : 1;
  const int links = (p == 1 || zb) ? 0 : (slowest == 0 || slowest == p - 1 ? 2 : 4);
  double t = m * (f[slowest] + b[slowest] + w[slowest] + links * link);
  for (int st = 0; st < p; ++st) {
    if (st != slowest) t += f[st] + b[st] + sign * w[st] + 2 * link;
  }
  return {r.summary.pp_time_ms, t * 1e3};
}

TEST(ZbH1Time, DefaultB200AndSixteenStagesMatchTheFormulaWithinOnePercent) {
  for (const char* path : {"scenarios/default.json", "tests/data/schedules/llama3_405b_tp8_pp16_mbc32.json"}) {
    for (auto schedule : {config::PipelineSchedule::k1F1B, config::PipelineSchedule::kZbH1}) {
      const FormulaCheck c = formula_check(path, schedule);
      const char* name = schedule == config::PipelineSchedule::kZbH1 ? "zb-h1" : "1f1b";
      std::printf("%-55s %-6s pipeline %.2f ms, formula %.2f ms (%+.3f %%)\n", path, name, c.simulated_ms,
                  c.formula_ms, 100 * (c.simulated_ms / c.formula_ms - 1));
      EXPECT_NEAR(c.simulated_ms / c.formula_ms, 1.0, 0.01) << path << " " << name;
    }
  }
}

// ---- Memory ----

// The paper's memory claim for ZB-H1 (same peak as 1F1B) needs what a deferred W keeps (M_W) to be at most what
// a forward holds (M_B): stage r then holds (p - r) M_B + r M_W. Without tensor parallelism stage 0, which defers
// nothing, keeps 1F1B's peak. With tensor and sequence parallelism a linear's W keeps whole-sequence tensors
// (its gathered input, its output gradient), M_W > M_B, and the later stages rise above 1F1B's peak.
struct Peaks {
  std::vector<double> gib;  // per stage
  double max = 0;
};

Peaks peaks(const std::string& path, config::PipelineSchedule schedule) {
  config::Scenario s = config::load_scenario(kRoot + "/" + path);
  s.strategy.pipeline_schedule = schedule;
  RunOptions o;
  o.lowering = {graph::Granularity::kLayer, graph::RankScope::kStages};
  const RunResult r = simulate(s, o);
  Peaks p;
  for (const auto& st : r.summary.stages) p.gib.push_back(static_cast<double>(st.peak_alloc_bytes) / (1 << 30));
  p.max = *std::max_element(p.gib.begin(), p.gib.end());
  return p;
}

TEST(ZbH1Memory, StageZeroKeepsOneFOneBsPeakAndLaterStagesHoldTheDeferredWeightGradients) {
  for (const char* path : {"scenarios/default.json", "tests/data/schedules/llama3_405b_tp8_pp16_mbc32.json"}) {
    const Peaks base = peaks(path, config::PipelineSchedule::k1F1B), zb = peaks(path, config::PipelineSchedule::kZbH1);
    std::printf("%-55s peak GiB 1f1b %.2f zb-h1 %.2f; stage 0: %.2f -> %.2f, last: %.2f -> %.2f\n", path, base.max,
                zb.max, base.gib.front(), zb.gib.front(), base.gib.back(), zb.gib.back());
    // Stage 0 defers no W: only B's gathered copies, held until its W right after, add to its peak.
    EXPECT_NEAR(zb.gib.front() / base.gib.front(), 1.0, 0.05) << path;
    for (size_t st = 1; st < base.gib.size(); ++st) EXPECT_GT(zb.gib[st], base.gib[st]) << path << " stage " << st;
  }
}

}  // namespace
}  // namespace simumax
