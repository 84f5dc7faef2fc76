// Parity with SimuMax: every dense grid line without recompute, VPP, CP or FP8 (issue #2), step time and
// per-stage peak allocated memory within 0.5 %. Each line is its own test (its own process under ctest),
// so the sim executor can run once per process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "engine/config/validation_case.hpp"
#include "engine/simulate.hpp"
#include "tests/parity_lines.hpp"

namespace simumax {
namespace {

constexpr double kTolerance = 0.005;

void check_line(const config::GridCase& gc, ExecutorKind executor, graph::RankScope scope) {
  RunOptions o;
  o.executor = executor;
  o.lowering.scope = scope;
  const RunResult r = simulate(gc.scenario, o);
  const auto& sum = r.summary;
  EXPECT_NEAR(sum.step_time_ms / gc.step_time_ms, 1.0, kTolerance)
      << "ours " << sum.step_time_ms << " ms, SimuMax " << gc.step_time_ms << " ms";
  if (tests::memory_difference_reason(gc).empty()) {
    for (const auto& [stage, expected] : gc.peak_alloc_bytes_by_stage) {
      const double ours = tests::stage_peak(sum, stage);
      EXPECT_NEAR(ours / expected, 1.0, kTolerance)
          << stage << ": ours " << ours << " B, SimuMax " << expected << " B";
    }
  }
}

class DenseParity : public ::testing::TestWithParam<config::GridCase> {};

TEST_P(DenseParity, FastExecutorMatchesSimuMax) {
  check_line(GetParam(), ExecutorKind::kFast, graph::RankScope::kStages);
}

TEST_P(DenseParity, SimExecutorMatchesSimuMax) {
  check_line(GetParam(), ExecutorKind::kSim, graph::RankScope::kStages);
}

INSTANTIATE_TEST_SUITE_P(Grid, DenseParity, ::testing::ValuesIn(tests::dense_parity_lines()),
                         [](const ::testing::TestParamInfo<config::GridCase>& info) {
                           return tests::test_name(info.param.id);
                         });

}  // namespace
}  // namespace simumax
