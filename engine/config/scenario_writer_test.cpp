// The scenario writer against its reader: a scenario written and loaded back has every field the writer sets.
#include "engine/config/scenario_writer.hpp"

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::TempDir;

// Every key the writer sets, compared one by one (a key written but read back otherwise fails here by name).
void expect_written_keys_equal(const StrategyConfig& back, const StrategyConfig& st, bool recompute) {
  EXPECT_EQ(back.seq_len, st.seq_len);
  EXPECT_EQ(back.micro_batch_size, st.micro_batch_size);
  EXPECT_EQ(back.micro_batch_num, st.micro_batch_num);
  EXPECT_EQ(back.world_size, st.world_size);
  EXPECT_EQ(back.tp_size, st.tp_size);
  EXPECT_EQ(back.cp_size, st.cp_size);
  EXPECT_EQ(back.pp_size, st.pp_size);
  EXPECT_EQ(back.ep_size, st.ep_size);
  EXPECT_EQ(back.etp_size, st.etp_size);
  EXPECT_EQ(back.interleaving_size, st.interleaving_size);
  EXPECT_EQ(back.microbatch_group_size_per_vp_stage, st.microbatch_group_size_per_vp_stage);
  EXPECT_EQ(back.num_layers_in_first_pipeline_stage, st.num_layers_in_first_pipeline_stage);
  EXPECT_EQ(back.num_layers_in_last_pipeline_stage, st.num_layers_in_last_pipeline_stage);
  EXPECT_EQ(back.zero_state, st.zero_state);
  EXPECT_EQ(back.enable_sequence_parallel, st.enable_sequence_parallel);
  EXPECT_EQ(back.fidelity, st.fidelity);
  if (!recompute) return;
  EXPECT_EQ(back.enable_recompute, st.enable_recompute);
  EXPECT_EQ(back.recompute_granularity, st.recompute_granularity);
  EXPECT_EQ(back.recompute_layer_num, st.recompute_layer_num);
  EXPECT_EQ(back.recompute_variance, st.recompute_variance);
  EXPECT_EQ(back.attn_recompute, st.attn_recompute);
  EXPECT_EQ(back.mla_rms_recompute, st.mla_rms_recompute);
  EXPECT_EQ(back.mlp_recompute, st.mlp_recompute);
  EXPECT_EQ(back.mlp_rms_recompute, st.mlp_rms_recompute);
  EXPECT_EQ(back.megatron_recompute, st.megatron_recompute);
}

ScenarioFile llama_file() {
  ScenarioFile f;
  f.name = "llama3-8b_written";
  f.description = "written by scenario_writer_test";
  f.model = testing::model_file("llama3-8b.json");  // absolute: the scenario lives in a temporary folder
  f.system = testing::system_file("a100_pcie.json");
  StrategyConfig& st = f.strategy;
  st.seq_len = 2048, st.micro_batch_size = 2, st.micro_batch_num = 8, st.world_size = 32;
  st.tp_size = 2, st.cp_size = 1, st.pp_size = 4, st.interleaving_size = 1;
  st.num_layers_in_first_pipeline_stage = 7, st.num_layers_in_last_pipeline_stage = 9;
  st.zero_state = 0, st.enable_sequence_parallel = false, st.fidelity = Fidelity::kSimuMax;
  st.enable_recompute = true, st.recompute_granularity = RecomputeGranularity::kSelective;
  st.recompute_layer_num = 3, st.recompute_variance = true, st.attn_recompute = true;
  st.mlp_recompute = true, st.mlp_rms_recompute = true;
  return f;
}

TEST(ScenarioWriter, WrittenScenarioLoadsBackToTheSameFields) {
  const TempDir dir;
  const ScenarioFile f = llama_file();
  const std::string path = dir.write_text("written.json", scenario_file_json(f));
  const Scenario back = load_scenario(path);
  EXPECT_EQ(back.name, f.name);
  EXPECT_EQ(back.model_path, f.model);
  EXPECT_EQ(back.system_path, f.system);
  expect_written_keys_equal(back.strategy, f.strategy, true);
}

TEST(ScenarioWriter, VppLayoutOverABaseFileKeepsTheBaseKeysAndRecomputeWhenAsked) {
  const TempDir dir;
  ScenarioFile f = llama_file();
  // The base's own keys survive; the layout keys it also has are replaced.
  const std::string base = dir.write_text(
      "base.json", R"({"use_flash_sdp": false, "enable_straggler_model": false, "tp_size": 8,
                       "enable_recompute": true, "recompute_granularity": "full_block", "recompute_layer_num": 4})");
  f.base_strategy_file = base;
  f.description = "";
  StrategyConfig& st = f.strategy;
  st.pp_size = 2, st.interleaving_size = 2, st.microbatch_group_size_per_vp_stage = 2;
  st.num_layers_in_first_pipeline_stage.reset(), st.num_layers_in_last_pipeline_stage.reset();
  st.fidelity = Fidelity::kMegatron, st.enable_sequence_parallel = true;
  for (bool recompute : {true, false}) {
    f.recompute_keys = recompute;
    const std::string path = dir.write_text("vpp.json", scenario_file_json(f));
    const Scenario back = load_scenario(path);
    EXPECT_FALSE(back.strategy.use_flash_sdp);
    EXPECT_FALSE(back.strategy.enable_straggler_model);
    expect_written_keys_equal(back.strategy, f.strategy, recompute);
    if (!recompute) {  // the base file's recompute keys are kept
      EXPECT_EQ(back.strategy.recompute_granularity, RecomputeGranularity::kFullBlock);
      EXPECT_EQ(back.strategy.recompute_layer_num, 4);
    }
  }
}

TEST(ScenarioWriter, BaseStrategyThatIsNotAnObjectIsAnErrorNamingIt) {
  const TempDir dir;
  ScenarioFile f = llama_file();
  f.base_strategy_file = dir.write_text("list.json", "[1, 2]");
  const auto e = testing::expect_config_error([&] { scenario_file_json(f); });
  EXPECT_EQ(std::string(e.what()), common::ConfigError(f.base_strategy_file, "", "expected a JSON object").what());
}

}  // namespace
}  // namespace simumax::config
