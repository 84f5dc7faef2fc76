#include "engine/config/scenario.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"

namespace simumax::config {
namespace {

using testing::expect_config_error;
using testing::Json;
using testing::TempDir;

// ctest sets it; running the binary by hand does not.
void ensure_shared_env() { ::setenv("SIMUMAX_SHARED_DIR", SIMUMAX_SHARED_DIR, 0); }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

struct FixtureCase {
  const char* file;      // under tests/data/config_errors/
  const char* loader;    // "scenario" or "strategy"
  const char* expected;  // exact message; {dir} is the fixture folder, {shared} the shared folder
};

class ErrorFixture : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(ErrorFixture, ReportsExactMessage) {
  ensure_shared_env();
  const std::string path = testing::error_fixture(GetParam().file);
  const auto e = expect_config_error([&] {
    if (std::string(GetParam().loader) == "scenario") {
      load_scenario(path);
    } else {
      load_strategy_file(path);
    }
  });
  std::string expected = replace_all(GetParam().expected, "{dir}",
                                     testing::error_fixture("").substr(0, testing::error_fixture("").size() - 1));
  expected = replace_all(expected, "{shared}", testing::shared_dir());
  EXPECT_EQ(std::string(e.what()), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Scenario, ErrorFixture,
    ::testing::Values(
        FixtureCase{"invalid_json.json", "strategy",
                    "{dir}/invalid_json.json: invalid JSON at line 4, column 19: syntax error while parsing object - "
                    "unexpected string literal; expected '}'"},
        FixtureCase{"tp_string.json", "strategy",
                    "{dir}/tp_string.json: /tp_size: expected a positive integer, got \"2\""},
        FixtureCase{"tp_sise.json", "strategy", "{dir}/tp_sise.json: /tp_sise: unknown field; did you mean 'tp_size'?"},
        FixtureCase{"scenario_unknown_key.json", "scenario",
                    "{dir}/scenario_unknown_key.json: /stratgy: unknown field; did you mean 'strategy'?"},
        FixtureCase{"scenario_override_type.json", "scenario",
                    "{dir}/scenario_override_type.json: /strategy_overrides/tp_size: expected a positive integer, "
                    "got 2.5"},
        FixtureCase{"scenario_override_rule.json", "scenario",
                    "{dir}/scenario_override_rule.json: /strategy_overrides/tp_size: 16 does not divide kv_head_num 8 "
                    "({shared}/simumax-configs/models/llama3-70b.json); use a tp_size that divides both head_num 64 "
                    "and kv_head_num 8: 1, 2, 4, 8"},
        FixtureCase{"scenario_model_override_typo.json", "scenario",
                    "{dir}/scenario_model_override_typo.json: /model_overrides/layer_nums: unknown field; did you "
                    "mean 'layer_num'?"},
        FixtureCase{"scenario_missing_file.json", "scenario",
                    "{dir}/scenario_missing_file.json: /model: file not found: {dir}/no_such_model.json"},
        FixtureCase{"scenario_inline_rule.json", "scenario",
                    "{dir}/scenario_inline_rule.json: /strategy/world_size: 12 is not a multiple of "
                    "tp_size*cp_size*pp_size = 8*1*1 = 8, so the data-parallel size dp = world_size/(tp*cp*pp) is "
                    "not whole; use a world_size that is a multiple of 8"}),
    [](const auto& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(Scenario, StrategyFileErrorNamesTheStrategyFile) {
  const std::string strategy = testing::error_fixture("tp16_kv8.json");
  const auto e = expect_config_error([&] {
    load_configs(testing::model_file("llama3-70b.json"), strategy, testing::system_file("b200_bf16_ceperm.json"));
  });
  EXPECT_EQ(e.file(), strategy);
  EXPECT_EQ(e.pointer(), "/tp_size");
  EXPECT_EQ(e.message(), "16 does not divide kv_head_num 8 (" + testing::model_file("llama3-70b.json") +
                             "); use a tp_size that divides both head_num 64 and kv_head_num 8: 1, 2, 4, 8");
}

TEST(Scenario, LoadsPathsRelativeToItsFolder) {
  TempDir dir;
  dir.write("configs/model.json", testing::read_json(testing::model_file("llama3-8b.json")));
  dir.write("configs/strategy.json", testing::read_json(testing::strategy_file("tp2_pp1_dp4_mbs1.json")));
  dir.write("configs/system.json", testing::read_json(testing::system_file("a100_pcie.json")));
  dir.write_text("platforms/a100.xml", "<platform/>");
  const std::string path = dir.write_text("scenarios/run.json", std::string(R"({
    "_comment": "comments are keys starting with an underscore",
    "model": "../configs/model.json", "strategy": "../configs/strategy.json",
    "system": "../configs/system.json", "platform": "../platforms/a100.xml"})"));
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.name, "run");
  EXPECT_EQ(s.scenario_path, path);
  EXPECT_EQ(s.model_path, dir.path("configs/model.json"));
  EXPECT_EQ(s.strategy_origin.file, dir.path("configs/strategy.json"));
  EXPECT_EQ(s.platform_path, dir.path("platforms/a100.xml"));
  EXPECT_EQ(s.strategy.tp_size, 2);
  EXPECT_EQ(s.model.hidden_size, 4096);
  EXPECT_TRUE(s.system.intra_with_pcie);
}

TEST(Scenario, InlineConfigsWithOverrides) {
  ensure_shared_env();
  TempDir dir;
  Json scenario = {{"name", "inline"},
                   {"model", testing::read_json(testing::model_file("llama3-8b.json"))},
                   {"strategy", "${SHARED}/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json"},
                   {"system", "${SHARED}/simumax-configs/system/a100_pcie.json"},
                   {"model_overrides", {{"layer_num", 4}}},
                   {"strategy_overrides", {{"micro_batch_num", 32}, {"_comment", "ignored"}}}};
  const std::string path = dir.write("s.json", scenario);
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.name, "inline");
  EXPECT_EQ(s.model.layer_num, 4);
  EXPECT_EQ(s.strategy.micro_batch_num, 32);
  EXPECT_EQ(s.strategy.pp_size, 2);
  EXPECT_EQ(s.model_path, path);
  EXPECT_EQ(s.model_origin.describe(), path + " /model");
  EXPECT_EQ(s.model_origin.locate("layer_num").pointer, "/model_overrides/layer_num");
  EXPECT_EQ(s.strategy_origin.locate("micro_batch_num").file, path);
  EXPECT_EQ(s.strategy_origin.locate("pp_size").file, testing::strategy_file("tp1_pp2_dp4_mbs1.json"));
}

TEST(Scenario, SharedPrefixNeedsTheEnvironmentVariable) {
  const char* saved = std::getenv("SIMUMAX_SHARED_DIR");
  const std::string restore = saved == nullptr ? SIMUMAX_SHARED_DIR : saved;
  ::unsetenv("SIMUMAX_SHARED_DIR");
  const std::string path = testing::error_fixture("scenario_override_rule.json");
  const auto e = expect_config_error([&] { load_scenario(path); });
  ::setenv("SIMUMAX_SHARED_DIR", restore.c_str(), 1);
  EXPECT_EQ(std::string(e.what()),
            path +
                ": /model: \"${SHARED}/simumax-configs/models/llama3-70b.json\" uses ${SHARED}, but "
                "SIMUMAX_SHARED_DIR is not set and ../shared is not a folder; set SIMUMAX_SHARED_DIR to the shared/ folder");
}

TEST(Scenario, MissingPartAndBadPlatformAreErrors) {
  ensure_shared_env();
  TempDir dir;
  const std::string no_system =
      dir.write_text("a.json", std::string(R"({"model": "${SHARED}/simumax-configs/models/llama3-8b.json",
      "strategy": "${SHARED}/simumax-configs/strategy/tp1_pp1_dp8_mbs1.json"})"));
  EXPECT_EQ(std::string(expect_config_error([&] { load_scenario(no_system); }).what()),
            no_system + ": /system: required field is missing: a path to the system config, or the config inline");
  const std::string bad_platform =
      dir.write_text("b.json", std::string(R"({"model": "${SHARED}/simumax-configs/models/llama3-8b.json",
      "strategy": "${SHARED}/simumax-configs/strategy/tp1_pp1_dp8_mbs1.json",
      "system": "${SHARED}/simumax-configs/system/a100_pcie.json", "platform": "p.xml"})"));
  EXPECT_EQ(std::string(expect_config_error([&] { load_scenario(bad_platform); }).what()),
            bad_platform + ": /platform: file not found: " + dir.path("p.xml"));
  const std::string number = dir.write_text("c.json", std::string(R"({"model": 5})"));
  EXPECT_EQ(std::string(expect_config_error([&] { load_scenario(number); }).what()),
            number + ": /model: expected a path (string) or an inline config object, got 5");
}

TEST(LoadConfigs, BuildsACheckedScenarioFromThreeFiles) {
  const Scenario s =
      load_configs(testing::model_file("llama3-70b.json"), testing::strategy_file("tp8_pp1_dp1_mbs1.json"),
                   testing::system_file("b200_bf16_ceperm.json"));
  EXPECT_EQ(s.name, "llama3-70b_tp8_pp1_dp1_mbs1");
  EXPECT_TRUE(s.scenario_path.empty());
  EXPECT_EQ(s.strategy.tp_size, 8);
  EXPECT_EQ(s.strategy.dp_size(), 1);
  EXPECT_EQ(s.model.padded_vocab(s.strategy.tp_size), 129024);
  EXPECT_EQ(s.system_origin.file, testing::system_file("b200_bf16_ceperm.json"));
}

}  // namespace
}  // namespace simumax::config
