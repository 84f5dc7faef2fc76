// Our own trace read back: the hand-written tests/data/compare/ours_trace.json (the layout simulated_trace.hpp
// expects from the trace writer), its numbers worked out by hand in the comments.
#include "engine/compare/simulated_trace.hpp"

#include <gtest/gtest.h>

#include "engine/common/error.hpp"

namespace simumax::compare {
namespace {

const KernelClassTable& table() {
  static const KernelClassTable t = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  return t;
}

const std::string kTrace = SIMUMAX_SOURCE_DIR "/tests/data/compare/ours_trace.json";

double class_ms(const StepBreakdown& s, const char* name) {
  return s.class_ms[static_cast<size_t>(table().class_index(name))];
}

TEST(SimulatedTrace, BreaksDownTheChosenRankOverTheWholeStep) {
  const SimulatedRun run = load_simulated_run(kTrace, RankChoice{std::nullopt, 3}, table());
  EXPECT_EQ(run.rank, 3);
  EXPECT_EQ(run.ranks, (std::vector<int64_t>{0, 3}));
  ASSERT_TRUE(run.step.has_value());
  const StepBreakdown& s = *run.step;
  // The step spans every rank's events: rank 0 runs [0, 2000) µs.
  EXPECT_DOUBLE_EQ(s.total_ms, 2.0);
  // Compute [0, 1000) + optimizer [1500, 1600).
  EXPECT_DOUBLE_EQ(s.compute_ms, 1.1);
  EXPECT_DOUBLE_EQ(class_ms(s, "gemm"), 0.5);       // linear_qkv 300 + linear_out 200
  EXPECT_DOUBLE_EQ(class_ms(s, "attention"), 0.3);
  EXPECT_DOUBLE_EQ(class_ms(s, "elementwise"), 0.2);  // layernorm 100 + activation 100
  EXPECT_DOUBLE_EQ(class_ms(s, "optimizer"), 0.1);
  // TP all-reduce [900, 1100) (compute until 1000), send/recv [1100, 1150), DP [1200, 1500): 550 µs, 450 exposed.
  EXPECT_DOUBLE_EQ(s.comm_ms, 0.55);
  EXPECT_DOUBLE_EQ(s.exposed_comm_ms, 0.45);
  // Busy [0, 1150) + [1200, 1600) = 1550 of 2000 µs.
  EXPECT_DOUBLE_EQ(s.idle_ms, 0.45);
  // Neither the zero-time barrier nor the 40 µs wait on the "sync" lane is GPU work, nor the host lane's two
  // tasks (60 + 30 µs of CPU time, summed apart).
  EXPECT_EQ(s.kernels, 10);
  EXPECT_DOUBLE_EQ(run.host_ms.value_or(-1), 0.09);
  EXPECT_EQ(run.host_tasks, 2);
  // "dp.grad_sync" matches no comm rule but runs on the "dp comm" lane: comm, subclass other.
  EXPECT_EQ(s.comm_kernels,
            (std::map<std::string, int64_t>{{"all_reduce", 1}, {"other", 1}, {"reduce_scatter", 1}, {"send_recv", 1}}));
}

TEST(SimulatedTrace, ARankWithoutAHostLaneHasNoHostTime) {
  const SimulatedRun run = load_simulated_run(kTrace, RankChoice{0, std::nullopt}, table());
  EXPECT_FALSE(run.host_ms.has_value());
  EXPECT_EQ(run.host_tasks, 0);
}

TEST(SimulatedTrace, PreferredRankMissingFallsBackToTheLowest) {
  const SimulatedRun run = load_simulated_run(kTrace, RankChoice{std::nullopt, 5}, table());
  EXPECT_EQ(run.rank, 0);
  EXPECT_DOUBLE_EQ(run.step->idle_ms, 0.0);
}

TEST(SimulatedTrace, AskedRankMissingIsAnErrorListingTheRanks) {
  try {
    load_simulated_run(kTrace, RankChoice{7, std::nullopt}, table());
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "rank 7 is not in the trace; ranks in it: 0, 3");
  }
}

TEST(SimulatedTrace, RunFolderReadsGzipTraceAndSummary) {
  const SimulatedRun run =
      load_simulated_run(SIMUMAX_SOURCE_DIR "/tests/data/compare/run", RankChoice{3, std::nullopt}, table());
  EXPECT_NE(run.trace_path.find("trace.json.gz"), std::string::npos);
  EXPECT_DOUBLE_EQ(run.step->exposed_comm_ms, 0.45);
  EXPECT_EQ(run.summary_step_ms, 2.0);
  EXPECT_EQ(run.peak_alloc_bytes, 16106127360.0);
  EXPECT_EQ(run.peak_reserved_bytes, 17179869184.0);
}

TEST(SimulatedTrace, FolderWithNothingIsAnError) {
  try {
    load_simulated_run(SIMUMAX_SOURCE_DIR "/engine/common", RankChoice{}, table());
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "no trace.json or summary.json in this folder (simumax-sim run --trace writes them)");
  }
}

}  // namespace
}  // namespace simumax::compare
