// The configurations SimuMax refuses only because of its own limits run here, as Megatron runs them; the
// one with no usable fp8 efficiency fails with exit-2 material naming the system field.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/simulate.hpp"

namespace simumax {
namespace {

// Line `n` (1-based) of simumax_grid_rejected.jsonl as a scenario, through the grid-line reader.
config::Scenario rejected_line(int n) {
  std::ifstream in(SIMUMAX_SHARED_DIR "/reference/simumax_grid_rejected.jsonl");
  std::string line;
  for (int i = 0; i < n && std::getline(in, line);) ++i;
  nlohmann::json j = nlohmann::json::parse(line);
  nlohmann::json grid = {{"id", "rejected" + std::to_string(n)}, {"family", j["family"]}, {"tags", nlohmann::json::array()},
                         {"input", j["input"]},
                         {"output", {{"step_time_ms", 1}, {"pp_time_ms", 1}, {"mfu", 0}, {"tflops_per_gpu", 0},
                                     {"mem_stages", nlohmann::json::object()}, {"time_stages", nlohmann::json::object()}}}};
  auto s = config::parse_grid_line(grid.dump(), SIMUMAX_SHARED_DIR, "rejected:" + std::to_string(n)).scenario;
  config::check_scenario(s);
  return s;
}

struct Runs {
  int line;
  const char* why;
};

class RejectedBySimuMaxOnly : public ::testing::TestWithParam<Runs> {};

TEST_P(RejectedBySimuMaxOnly, RunsLikeMegatron) {
  const auto s = rejected_line(GetParam().line);
  const auto r = simulate(s, RunOptions{});
  EXPECT_TRUE(std::isfinite(r.summary.step_time_ms));
  EXPECT_GT(r.summary.step_time_ms, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, RejectedBySimuMaxOnly,
    ::testing::Values(Runs{3, "VPP pp4 mbc6: SimuMax's sync scheduler deadlocks; Megatron's batched p2p does not"},
                      Runs{4, "async VPP: SimuMax's perf path refuses it; we run it with blocking p2p"},
                      Runs{6, "VPP with 8 micro-batches per group (> pp): Megatron matches p2p in order"}),
    [](const ::testing::TestParamInfo<Runs>& i) { return "line" + std::to_string(i.param.line); });

TEST(RejectedBySimuMax, Fp8WithoutEfficiencyNamesTheSystemField) {
  const auto s = rejected_line(8);
  try {
    simulate(s, RunOptions{});
    FAIL() << "expected a ConfigError";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/accelerator/op/fp8_matmul/efficient_factor");
    EXPECT_NE(std::string(e.what()).find("b200_bf16_ceperm.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace simumax
