#include "engine/measure/shape_list.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/common/error.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::measure {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> validation_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "validation")) {
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The keys the engine looked up and did not find (summary.cpp's list_misses, by the cost's table_hit).
std::vector<std::string> misses(const config::Scenario& s) {
  const model::StepModel m = model::build_step_model(s);
  const cost::StepCost c = cost::cost_step(s, m);
  std::vector<std::string> out;
  for (size_t ci = 0; ci < m.chunks.size(); ++ci) {
    for (size_t k = 0; k < m.chunks[ci].blocks.size(); ++k) {
      const auto& ops = *m.chunks[ci].blocks[k].ops;
      for (size_t o = 0; o < ops.size(); ++o) {
        for (int p = 0; p < schedule::kNumOpPasses; ++p) {
          const auto& w = ops[o].work[p];
          if (!w.shape_key.empty() && w.flops != 0 && !c.chunks[ci].blocks[k]->ops[o].table_hit[p]) {
            out.push_back(w.compute_op + ": " + w.shape_key);
          }
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TEST(ShapeList, EveryValidationScenarioHasZeroMissesWithATableOfItsShapes) {
  const auto paths = validation_scenarios();
  ASSERT_GE(paths.size(), 30u);
  for (const auto& path : paths) {
    config::Scenario s = config::load_scenario(path);
    const auto shapes = scenario_shapes(s);
    ASSERT_FALSE(shapes.empty()) << path;
    s.system = with_table_entries(s.system, shapes, 0.5);
    EXPECT_EQ(misses(s), std::vector<std::string>{}) << path;
  }
}

TEST(ShapeList, ATableMissingOneShapeMissesExactlyThatShape) {
  config::Scenario s = config::load_scenario(fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "default.json");
  auto shapes = scenario_shapes(s);
  ASSERT_GT(shapes.size(), 1u);
  const Shape dropped = shapes.back();
  shapes.pop_back();
  config::Scenario with = s;
  with.system = config::SystemConfig(s.system);
  if (auto it = with.system.op.find(dropped.compute_op); it != with.system.op.end()) {
    it->second.accurate_efficient_factor.erase(dropped.key);
  }
  with.system = with_table_entries(with.system, shapes, 0.5);
  EXPECT_EQ(misses(with), std::vector<std::string>(1, dropped.compute_op + ": " + dropped.key));
}

TEST(ShapeList, ShapesOfTheDefaultScenarioAreItsGemmsAndAttention) {
  const config::Scenario s = config::load_scenario(fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "default.json");
  const auto shapes = scenario_shapes(s);
  int gemm = 0, sdp_fwd = 0, sdp_bwd = 0;
  for (const auto& sh : shapes) {
    gemm += sh.kind == ShapeKind::kGemm, sdp_fwd += sh.kind == ShapeKind::kSdpFwd, sdp_bwd += sh.kind == ShapeKind::kSdpBwd;
    if (sh.kind == ShapeKind::kGemm && sh.compute_op == "matmul") {
      EXPECT_EQ(sh.flops, 2.0 * static_cast<double>(sh.field("b") * sh.field("m") * sh.field("k") * sh.field("n")))
          << sh.key;
    }
  }
  EXPECT_GT(gemm, 0);
  EXPECT_EQ(sdp_fwd, 1);
  EXPECT_EQ(sdp_bwd, 1);
  EXPECT_TRUE(std::is_sorted(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) {
    return std::tie(a.compute_op, a.key) < std::tie(b.compute_op, b.key);
  }));
}

TEST(ShapeList, StandardSweepKeysParseAndAreUnique) {
  const auto bf16 = standard_sweep(false), both = standard_sweep(true);
  EXPECT_LT(bf16.size(), both.size());
  for (const auto& sh : both) {
    std::string kind;
    std::vector<double> dims;
    EXPECT_TRUE(config::parse_shape_key(sh.key, kind, dims)) << sh.key;
    EXPECT_GT(sh.flops, 0) << sh.key;
  }
  EXPECT_EQ(merge_shapes(both, bf16).size(), both.size());
}

TEST(ShapeList, KeyFieldsRejectAPartWithoutAValue) {
  EXPECT_EQ(key_fields("b=1, m=2").size(), 2u);
  EXPECT_THROW(key_fields("b=1, m"), common::UsageError);
}

}  // namespace
}  // namespace simumax::measure
