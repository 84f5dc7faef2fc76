// Configs from JSON text (the Python module's dicts): the same answer as the files, errors named by the label.
#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/config_text.hpp"

namespace simumax::config::testing {
namespace {

TEST(ConfigText, TextsGiveWhatTheFilesGive) {
  const std::string m = model_file("llama3-8b.json"), st = strategy_file("tp1_pp2_dp4_mbs1.json"),
                    sy = system_file("a100_pcie.json");
  const Scenario files = load_configs(m, st, sy);
  const Scenario texts =
      scenario_from_texts({read_config_json(ConfigKind::kModel, m), "<m>"},
                          ConfigText{read_config_json(ConfigKind::kStrategy, st), "<s>"},
                          {read_config_json(ConfigKind::kSystem, sy), "<y>"}, "n", true);
  EXPECT_EQ(texts.model.hidden_size, files.model.hidden_size);
  EXPECT_EQ(texts.model.padded_vocab(1), files.model.padded_vocab(1));
  EXPECT_EQ(texts.strategy.pp_size, files.strategy.pp_size);
  EXPECT_EQ(texts.strategy.micro_batch_num, files.strategy.micro_batch_num);
  EXPECT_EQ(texts.system.mem_gbs, files.system.mem_gbs);
  EXPECT_EQ(texts.strategy_path, "<s>");
}

TEST(ConfigText, ErrorsNameTheLabelAndField) {
  Json model = read_json(model_file("llama3-8b.json"));
  model["hidden_size"] = "wide";
  const std::string sy = system_file("a100_pcie.json");
  try {
    scenario_from_texts({model.dump(), "<model_config dict>"}, std::nullopt,
                        {read_config_json(ConfigKind::kSystem, sy), sy}, "n", false);
    FAIL() << "a string hidden_size was accepted";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.file(), "<model_config dict>");
    EXPECT_EQ(e.pointer(), "/hidden_size");
  }
}

TEST(ConfigText, ReadConfigJsonChecksTheFileAsItsKind) {
  // A strategy file read as a model: its keys are unknown to the model reader.
  EXPECT_THROW(read_config_json(ConfigKind::kModel, strategy_file("tp1_pp2_dp4_mbs1.json")), common::ConfigError);
  EXPECT_THROW(read_config_json(ConfigKind::kSystem, "/no/such/file.json"), common::ConfigError);
}

TEST(ConfigText, ScenarioTextResolvesPathsAndNamesTheLabel) {
  const std::string text = "{\"model\": \"" + model_file("llama3-8b.json") + "\", \"strategy\": \"" +
                           strategy_file("tp1_pp2_dp4_mbs1.json") + "\", \"system\": \"" +
                           system_file("a100_pcie.json") + "\", \"strategy_overrides\": {\"micro_batch_num\": \"many\"}}";
  try {
    load_scenario_text(text, "<scenario dict>");
    FAIL() << "a string micro_batch_num was accepted";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.file(), "<scenario dict>");
    EXPECT_EQ(e.pointer(), "/strategy_overrides/micro_batch_num");
  }
}

}  // namespace
}  // namespace simumax::config::testing
