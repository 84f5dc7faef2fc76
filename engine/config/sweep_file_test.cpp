#include "engine/config/sweep_file.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/config/config_test_util.hpp"

namespace simumax::config {
namespace {

using testing::TempDir;

// A sweep file in `dir` over the repository's default scenario.
std::string sweep_file(const TempDir& dir, const std::string& body) {
  const std::string path = dir.path("sweep.json");
  std::ofstream(path) << "{\"base\": \"" << SIMUMAX_SOURCE_DIR << "/scenarios/default.json\"" << body << "}";
  return path;
}

TEST(SweepFile, CasesAreTheProductFirstKeySlowestPlatformsFastest) {
  TempDir dir;
  const Sweep s = load_sweep(sweep_file(dir, R"(, "name": "s", "overrides": {"strategy.tp_size": [1, 2],
      "model.layer_num": [4, 8, 12]}, "platforms": [{"name": "a"}, {"topology": "fat-tree", "oversubscription": 2}],
      "run": {"executor": "sim"})"),
                             100);
  ASSERT_EQ(s.cases, 12u);
  EXPECT_EQ(s.platforms[1].name, "fat-tree-2to1");
  const SweepCase c = s.case_at(7);  // tp 2 (7 / 6), layer_num 4 ((7 / 2) % 3 = 0), platform 1
  EXPECT_EQ(c.name, "c0007");
  EXPECT_EQ(c.label, "tp_size=2 layer_num=4 platform=fat-tree-2to1");
  EXPECT_EQ(c.values, (std::vector<std::string>{"2", "4"}));
  EXPECT_EQ(c.platform, 1u);
  const Scenario sc = s.scenario(c);
  EXPECT_EQ(sc.name, "s_c0007");
  EXPECT_EQ(sc.strategy.tp_size, 2);
  EXPECT_EQ(sc.model.layer_num, 4);
}

TEST(SweepFile, NestedSystemKeysReachTheParsedSystem) {
  TempDir dir;
  const Sweep s = load_sweep(
      sweep_file(dir, R"(, "overrides": {"system.networks.inter_node.bandwidth.gbps": [100, 800]})"), 100);
  EXPECT_EQ(s.axes[0].column, "gbps");
  EXPECT_EQ(s.scenario(s.case_at(1)).system.networks.at("inter_node").bandwidth.gbps, 800);
}

TEST(SweepFile, SharedLastPartsAreLabelledByTheWholeKey) {
  TempDir dir;
  const Sweep s = load_sweep(sweep_file(dir, R"(, "overrides": {"system.networks.inter_node.bandwidth.gbps": [100],
      "system.networks.high_intra_node.bandwidth.gbps": [900]})"),
                             100);
  EXPECT_EQ(s.case_at(0).label,
            "system.networks.inter_node.bandwidth.gbps=100 system.networks.high_intra_node.bandwidth.gbps=900");
}

TEST(SweepFile, AValueThatDoesNotSuitTheBaseNamesTheCase) {
  TempDir dir;
  const Sweep s = load_sweep(sweep_file(dir, R"(, "overrides": {"strategy.tp_size": [1, 3]})"), 100);
  try {
    s.scenario(s.case_at(1));
    FAIL() << "tp 3 of 8 GPUs was accepted";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/strategy/world_size");
    EXPECT_EQ(e.message().rfind("case c0001 (tp_size=3): 8 is not a multiple of", 0), 0u) << e.message();
  }
}

TEST(SweepFile, AKeyTheReaderKnowsIsAcceptedThoughTheBaseLeavesItOut) {
  TempDir dir;
  const Sweep s = load_sweep(sweep_file(dir, R"(, "overrides": {"strategy.fidelity": ["simumax"]})"), 100);
  EXPECT_EQ(s.scenario(s.case_at(0)).strategy.fidelity, Fidelity::kSimuMax);
}

TEST(SweepFile, AProductBeyondTheLimitIsRefusedWithItsSize) {
  TempDir dir;
  try {
    load_sweep(sweep_file(dir, R"(, "overrides": {"model.layer_num": [4, 8, 12]})"), 2);
    FAIL() << "3 cases passed --max-cases 2";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "the sweep has 3 cases, more than --max-cases 2; raise --max-cases to run them all");
  }
}

}  // namespace
}  // namespace simumax::config
