#include "engine/graph/lowering.hpp"

#include <gtest/gtest.h>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/memory/memory_analysis.hpp"

namespace simumax::graph {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;

struct Fixture {
  config::Scenario s;
  model::StepModel m;
  cost::StepCost c;
  explicit Fixture(const std::string& strategy = "tp1_pp2_dp4_mbs1.json",
                   const std::string& system = "a100_pcie.json") {
    s = config::load_configs(kShared + "/simumax-configs/models/llama3-8b.json",
                             kShared + "/simumax-configs/strategy/" + strategy,
                             kShared + "/simumax-configs/system/" + system);
    m = model::build_step_model(s);
    c = cost::cost_step(s, m);
  }
  TaskGraph lower(Granularity gr, RankScope sc) const { return lower_step(s, m, c, LoweringOptions{gr, sc}); }
};

// SimuMax's README example (time spec §12): T_pp 4641.20707 ms, step 5554.67697 ms.
TEST(Lowering, OneFOneBMatchesSimuMaxExample) {
  Fixture f;
  const auto g = f.lower(Granularity::kLayer, RankScope::kStages);
  const auto tl = executor::run_fast(g);
  EXPECT_NEAR(tl.makespan * 1e3, 5554.67697, 1e-4);
}

TEST(Lowering, GranularityDoesNotChangeTheStepTime) {
  Fixture f;
  const double chunk = executor::run_fast(f.lower(Granularity::kChunk, RankScope::kStages)).makespan;
  for (Granularity gr : {Granularity::kLayer, Granularity::kOp}) {
    for (RankScope sc : {RankScope::kStages, RankScope::kAll}) {
      const auto g = f.lower(gr, sc);
      EXPECT_NEAR(executor::run_fast(g).makespan / chunk, 1.0, 1e-12) << to_string(gr) << " " << to_string(sc);
    }
  }
}

TEST(Lowering, TensorParallelOpGraphMatchesStagesGraph) {
  Fixture f("tp2_pp1_dp4_mbs1.json");
  const double stages = executor::run_fast(f.lower(Granularity::kOp, RankScope::kStages)).makespan;
  const auto all = f.lower(Granularity::kOp, RankScope::kAll);
  EXPECT_EQ(all.num_ranks, 8u);
  EXPECT_NEAR(executor::run_fast(all).makespan / stages, 1.0, 1e-12);
}

TEST(Lowering, GraphIsAcyclicAndEveryTaskRuns) {
  Fixture f;
  for (Granularity gr : {Granularity::kChunk, Granularity::kLayer, Granularity::kOp}) {
    const auto g = f.lower(gr, RankScope::kAll);
    EXPECT_TRUE(is_acyclic(g));
    EXPECT_EQ(g.succ_offsets.size(), g.size() + 1);
  }
}

// SimuMax's memory check (memory spec §3.6): llama3-8b tp1 pp2 mbc 8 -> first 50.8854, last 45.1637 GiB.
TEST(Lowering, PeakMemoryMatchesSimuMaxExample) {
  Fixture f;
  for (Granularity gr : {Granularity::kChunk, Granularity::kLayer, Granularity::kOp}) {
    const auto g = f.lower(gr, RankScope::kStages);
    const auto mem = memory::analyze_memory(g, executor::run_fast(g), {});
    ASSERT_EQ(mem.size(), 2u);
    EXPECT_NEAR(mem[0].peak_allocated_bytes / 1073741824.0, 50.8854, 1e-4) << to_string(gr);
    EXPECT_NEAR(mem[1].peak_allocated_bytes / 1073741824.0, 45.1637, 1e-4) << to_string(gr);
  }
}

TEST(PipelineSchedule, EveryStageRunsEveryMicroBatchOnce) {
  for (int pp : {1, 2, 3, 4, 8}) {
    for (int mbc : {1, 2, 3, 8, 13}) {
      const auto programs = one_f_one_b(pp, mbc);
      for (int r = 0; r < pp; ++r) {
        int fwd = 0, bwd = 0, sends = 0;
        for (const auto& step : programs[r]) {
          fwd += step.kind == StepKind::kForward;
          bwd += step.kind == StepKind::kBackward;
          sends += step.kind == StepKind::kSendNext || step.kind == StepKind::kSendPrev;
        }
        EXPECT_EQ(fwd, mbc);
        EXPECT_EQ(bwd, mbc);
        EXPECT_EQ(sends, (r > 0 ? mbc : 0) + (r < pp - 1 ? mbc : 0));
      }
    }
  }
}

}  // namespace
}  // namespace simumax::graph
