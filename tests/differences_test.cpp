// Each place where we depart from SimuMax on purpose (docs/simumax-differences.md) shows what we do instead.
#include <gtest/gtest.h>

#include "engine/simulate.hpp"
#include "tests/parity_lines.hpp"

namespace simumax {
namespace {

config::GridCase grid_line(const std::string& id) {
  for (const auto& gc : tests::grid_lines()) {
    if (gc.id == id) return gc;
  }
  ADD_FAILURE() << "no grid line " << id;
  return {};
}

int64_t activation_cache_per_micro_batch(const model::Chunk& c) {
  int64_t a = 0;
  for (const auto& blk : c.blocks) {
    for (const auto& op : *blk.ops) a += op.act_cache * blk.repeat;
  }
  return a;
}

// "Phantom in-flight micro-batches": with mbc < pp SimuMax still charges pp - r forward caches on stage r.
// Megatron's 1F1B warm-up runs min(pp - r - 1, mbc) forwards, so at most min(pp - r, mbc) caches are live.
TEST(SimuMaxDifferences, InFlightMicroBatchesAreBoundedByTheMicroBatchCount) {
  const auto gc = grid_line("g037_pp_llama3-70b_L8_b200_tp1pp4w8_mbs1mbc1");
  ASSERT_EQ(gc.scenario.strategy.pp_size, 4);
  ASSERT_EQ(gc.scenario.strategy.micro_batch_num, 1);
  const RunResult r = simulate(gc.scenario, RunOptions{});
  const auto& first = r.summary.stages[0];
  EXPECT_EQ(first.cached_micro_batches, 0);  // the only micro-batch's cache is part of its own peak
  const int64_t a = activation_cache_per_micro_batch(r.model.chunks[0]);
  // SimuMax = ours + the (pp - 1) phantom caches it adds on the first stage.
  EXPECT_NEAR(static_cast<double>(first.peak_alloc_bytes + 3 * a), gc.peak_alloc_bytes_by_stage.at("first_stage"),
              1e-6 * gc.peak_alloc_bytes_by_stage.at("first_stage"));
  // The step time is unaffected.
  EXPECT_NEAR(r.summary.step_time_ms / gc.step_time_ms, 1.0, 1e-9);
}

TEST(SimuMaxDifferences, WithEnoughMicroBatchesTheFirstStageHoldsPpCaches) {
  const auto gc = grid_line("g027_pp_llama3-70b_L16_b200_tp1pp2w8_mbs1mbc4");
  const RunResult r = simulate(gc.scenario, RunOptions{});
  EXPECT_EQ(r.summary.stages[0].cached_micro_batches, 1);  // pp - 1 = 1 other micro-batch live at the peak
  EXPECT_NEAR(static_cast<double>(r.summary.stages[0].peak_alloc_bytes) / gc.peak_alloc_bytes_by_stage.at("first_stage"),
              1.0, 1e-9);
}

// "Recompute charged when it is disabled": with enable_recompute = false SimuMax still adds the legacy
// granularity's recompute time. Megatron recomputes nothing then, and neither do we.
TEST(SimuMaxDifferences, DisabledRecomputeCostsNothing) {
  auto gc = grid_line("g147_recompute_llama3-70b_L8_b200_tp2pp1w8_mbs1mbc4");
  ASSERT_FALSE(gc.scenario.strategy.enable_recompute);
  const double ours = simulate(gc.scenario, RunOptions{}).summary.step_time_ms;
  gc.scenario.strategy.recompute_granularity = config::RecomputeGranularity::kNone;
  gc.scenario.strategy.recompute_layer_num = 0;
  EXPECT_DOUBLE_EQ(ours, simulate(gc.scenario, RunOptions{}).summary.step_time_ms);
  EXPECT_LT(ours, gc.step_time_ms * 0.99);  // SimuMax charged the recompute
}

}  // namespace
}  // namespace simumax
