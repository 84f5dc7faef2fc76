#include "engine/config/validation_case.hpp"

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"

namespace simumax::config {
namespace {

using testing::Json;

std::vector<std::string> validation_files() {
  std::vector<std::string> out;
  for (const char* system : {"b200", "a100"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(testing::shared(std::string("validation/") + system))) {
      if (entry.path().extension() == ".json") out.push_back(entry.path().string());
    }
  }
  return out;
}

TEST(ValidationCase, EveryCaseLoadsAndMatchesItsDerivedSizes) {
  const auto files = validation_files();
  EXPECT_EQ(files.size(), 34U);
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    const ValidationCase v = load_validation_case(path, testing::shared_dir());
    const Json derived = testing::read_json(path).at("derived");
    const StrategyConfig& s = v.scenario.strategy;
    EXPECT_EQ(s.dp_size(), derived.at("dp_size").get<int64_t>());
    EXPECT_EQ(s.edp_size(), derived.at("edp_size").get<int64_t>());
    EXPECT_EQ(s.global_batch_size(), derived.at("global_batch_size").get<int64_t>());
    EXPECT_EQ(v.scenario.model.padded_vocab(s.tp_size), derived.at("padded_vocab_size_at_run").get<int64_t>());
    EXPECT_GT(v.real_ms, 0);
    EXPECT_GT(v.published_perf_ms, 0);
  }
}

TEST(ValidationCase, ReadsMeasuredAndPublishedNumbers) {
  const std::string path = testing::shared("validation/b200/llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef.json");
  const ValidationCase v = load_validation_case(path, testing::shared_dir());
  EXPECT_EQ(v.name, "llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef");
  EXPECT_EQ(v.path, path);
  EXPECT_EQ(v.scenario.name, v.name);
  EXPECT_DOUBLE_EQ(v.real_ms, 11301.9);
  EXPECT_DOUBLE_EQ(v.real_alloc_gib, 147.99);
  EXPECT_EQ(v.real_reserved_gib, 159.65);
  EXPECT_DOUBLE_EQ(v.published_perf_ms, 10515.7);
  EXPECT_DOUBLE_EQ(v.published_perf_alloc_gib, 147.89);
  EXPECT_EQ(v.published_peak_alloc_by_stage_gib, (std::map<std::string, double>{{"first_stage", 147.8862}}));
  EXPECT_EQ(v.scenario.strategy.cp_size, 8);
  EXPECT_EQ(v.scenario.strategy.seq_len, 131072);
  EXPECT_EQ(v.scenario.strategy.te_version, (std::vector<int>{2, 11, 0}));
  EXPECT_TRUE(v.scenario.strategy.cross_entropy_loss_fusion);
  EXPECT_EQ(v.scenario.model.layer_num, 12);
  EXPECT_EQ(v.scenario.system.sys_name, testing::read_json(testing::system_file("b200_bf16_ceperm.json"))["sys_name"]);
  EXPECT_EQ(v.scenario.model_origin.describe(), path + " /model");
}

TEST(ValidationCase, A100CaseFallsBackToV12Prediction) {
  const std::string path = testing::shared("validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc32.json");
  const ValidationCase v = load_validation_case(path, testing::shared_dir());
  EXPECT_DOUBLE_EQ(v.published_perf_ms, 18136.6979);
  EXPECT_DOUBLE_EQ(v.published_perf_alloc_gib, 50.8854);
  EXPECT_DOUBLE_EQ(v.real_ms, 18845.57777992);
  EXPECT_EQ(v.real_reserved_gib, std::nullopt);
  EXPECT_TRUE(v.published_peak_alloc_by_stage_gib.empty());
  EXPECT_TRUE(v.scenario.system.intra_with_pcie);
}

// A validation case as the Megatron-LM importer writes one: without SimuMax's published or v1.2 predictions.
Json imported_case_json() {
  Json j = testing::read_json(testing::shared("validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc32.json"));
  j["published_perf_ms"] = nullptr;
  j["published_perf_alloc_gib"] = nullptr;
  j.erase("v12_perf_ms");
  j.erase("v12_alloc_gib");
  return j;
}

// An imported Megatron-LM test: no SimuMax prediction, the peak of the last rank, a machine and features.
TEST(ValidationCase, ImportedCaseHasNoPredictionAndNamesItsRank) {
  testing::TempDir dir;
  Json j = imported_case_json();
  j["real_alloc_rank"] = "last";
  j["machine"] = "dgx_h100";
  j["features"] = Json::array({"gelu", "tp1_pp2"});
  const ValidationCase v = load_validation_case(dir.write("case.json", j), testing::shared_dir());
  EXPECT_FALSE(v.has_published);
  EXPECT_TRUE(v.alloc_of_last_rank);
  EXPECT_EQ(v.machine, "dgx_h100");
  EXPECT_EQ(v.features, (std::vector<std::string>{"gelu", "tp1_pp2"}));
  j["real_alloc_rank"] = "first";
  const std::string bad = dir.write("bad.json", j);
  const auto e = testing::expect_config_error([&] { load_validation_case(bad, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()),
            bad + ": /real_alloc_rank: expected one of \"max\", \"last\", got \"first\"; valid names: max, last");
}

// An imported case whose logged peak is a start-up transient: its time is compared, its memory is not.
TEST(ValidationCase, ImportedCaseMayExcludeItsPeakWithAReason) {
  testing::TempDir dir;
  Json j = imported_case_json();
  j["real_alloc_gib"] = nullptr;
  j["real_alloc_excluded"] = "reached at iteration 1";
  const ValidationCase v = load_validation_case(dir.write("case.json", j), testing::shared_dir());
  EXPECT_FALSE(v.has_real_alloc);
  EXPECT_EQ(v.real_alloc_excluded, "reached at iteration 1");
  j.erase("real_alloc_excluded");
  const std::string no_reason = dir.write("no_reason.json", j);
  auto e = testing::expect_config_error([&] { load_validation_case(no_reason, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()), no_reason + ": /real_alloc_excluded: required field is missing");
  j["real_alloc_gib"] = 2.5;
  j["real_alloc_excluded"] = "why";
  const std::string both = dir.write("both.json", j);
  e = testing::expect_config_error([&] { load_validation_case(both, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()), both + ": /real_alloc_excluded: only with \"real_alloc_gib\": null (the reason the "
                                          "peak is not compared)");
  // A case with SimuMax's prediction compares memory: its peak cannot be excluded.
  j = testing::read_json(testing::shared("validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc32.json"));
  j["real_alloc_gib"] = nullptr;
  j["real_alloc_excluded"] = "why";
  const std::string published = dir.write("published.json", j);
  e = testing::expect_config_error([&] { load_validation_case(published, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()), published + ": /real_alloc_gib: null only in a case without SimuMax's prediction "
                                                "(\"published_perf_ms\": null)");
}

TEST(ValidationCase, InlineErrorNamesTheCaseFile) {
  testing::TempDir dir;
  Json j = testing::read_json(testing::shared("validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc32.json"));
  j["strategy"]["tp_size"] = true;
  const std::string path = dir.write("case.json", j);
  const auto e = testing::expect_config_error([&] { load_validation_case(path, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()), path + ": /strategy/tp_size: expected a positive integer, got true");
}

// Issue 32: a measured step of 1e308 ms printed "MAPE nan %".
TEST(ValidationCase, AMeasuredStepNoRunTakesIsRefused) {
  testing::TempDir dir;
  Json j = testing::read_json(testing::shared("validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc32.json"));
  j["real_ms"] = 1e308;
  const std::string path = dir.write("case.json", j);
  const auto e = testing::expect_config_error([&] { load_validation_case(path, testing::shared_dir()); });
  EXPECT_EQ(std::string(e.what()), path + ": /real_ms: expected ms in [0.001, 1e9], got 1e+308");
}

// Grid lines SimuMax accepted that Megatron + TransformerEngine refuse. TE's all-to-all context parallelism
// asserts that the query and KV heads of each TP rank divide by cp ("The number of attention heads needs to be
// divisible by CP size!"); SimuMax checks only the global head counts.
const std::map<std::string, std::string> kIllegalGridLines = {
    {"g126_cp_llama3-70b_L4_b200_tp8cp2pp1w16_mbs1mbc4_s16k", "1 KV head per TP rank, cp 2"},
    {"g131_cp_llama3-405b_L4_b200_tp8cp8pp2w128_mbs1mbc8_s64k", "2 KV heads per TP rank, cp 8"},
    {"g282_internode_llama3-70b_L4_a100_tp4cp4pp1w32_mbs1mbc2_s32k", "2 KV heads per TP rank, cp 4"},
    {"g308_random_llama3-70b_L8_a100_tp2cp8pp1w32_mbs4mbc16_s8k", "4 KV heads per TP rank, cp 8"},
    {"g312_random_qwen3-32b_L3_b200_tp8cp2pp1w512_mbs1mbc16_s16k", "1 KV head per TP rank, cp 2"},
};

TEST(GridCase, AllLinesLoadAndAllButTheListedPassChecks) {
  const std::vector<GridCase> grid = load_grid(testing::shared("reference/simumax_grid.jsonl"), testing::shared_dir());
  ASSERT_EQ(grid.size(), 343U);
  size_t illegal = 0;
  for (const GridCase& g : grid) {
    SCOPED_TRACE(g.id);
    if (kIllegalGridLines.count(g.id) == 0) {
      EXPECT_NO_THROW(check_scenario(g.scenario));
      continue;
    }
    ++illegal;
    const auto e = testing::expect_config_error([&] { check_scenario(g.scenario); });
    EXPECT_EQ(e.pointer(), "/input/strategy/cp_size") << kIllegalGridLines.at(g.id);
  }
  EXPECT_EQ(illegal, kIllegalGridLines.size());
}

TEST(GridCase, AllLinesMatchSimuMaxDerivedSizes) {
  const std::string path = testing::shared("reference/simumax_grid.jsonl");
  const std::vector<GridCase> grid = load_grid(path, testing::shared_dir());
  ASSERT_EQ(grid.size(), 343U);
  std::ifstream in(path);
  std::set<std::string> ids;
  for (const GridCase& g : grid) {
    std::string line;
    std::getline(in, line);
    const Json derived = Json::parse(line).at("output").at("derived");
    SCOPED_TRACE(g.id);
    ids.insert(g.id);
    const StrategyConfig& s = g.scenario.strategy;
    EXPECT_EQ(s.dp_size(), derived.at("dp_size").get<int64_t>());
    EXPECT_EQ(s.edp_size(), derived.at("edp_size").get<int64_t>());
    EXPECT_EQ(s.global_batch_size(), derived.at("global_batch_size").get<int64_t>());
    EXPECT_EQ(g.scenario.model.padded_vocab(s.tp_size), derived.at("padded_vocab_size").get<int64_t>());
    EXPECT_EQ(s.recompute_variance, derived.at("recompute_variance_effective").get<bool>());
    const Json& group = derived.at("microbatch_group_size_per_vp_stage");
    EXPECT_EQ(s.microbatch_group_size_per_vp_stage,
              group.is_null() ? std::nullopt : std::optional<int64_t>(group.get<int64_t>()));
    EXPECT_FALSE(g.peak_alloc_bytes_by_stage.empty());
    EXPECT_EQ(g.duration_ms_by_stage.count("first"), 1U);
  }
  EXPECT_EQ(ids.size(), 343U);
}

TEST(GridCase, ReadsOutputsOfOneLine) {
  std::ifstream in(testing::shared("reference/simumax_grid.jsonl"));
  std::string line;
  std::getline(in, line);
  const GridCase g = parse_grid_line(line, testing::shared_dir(), "simumax_grid.jsonl:1");
  EXPECT_EQ(g.id, "g001_tp_sp_llama3-8b_L4_a100_tp4pp1w8_mbs1mbc8");
  EXPECT_EQ(g.family, "tp_sp");
  EXPECT_EQ(g.tags.front(), "system=a100_pcie");
  EXPECT_EQ(g.scenario.name, g.id);
  EXPECT_EQ(g.scenario.strategy_origin.describe(), "simumax_grid.jsonl:1 /input/strategy");
  EXPECT_DOUBLE_EQ(g.step_time_ms, 1223.0037932803473);
  EXPECT_DOUBLE_EQ(g.pp_time_ms, 830.131246139632);
  EXPECT_DOUBLE_EQ(g.mfu, 0.19747225331762822);
  EXPECT_DOUBLE_EQ(g.tflops_per_gpu, 61.6113430351);
  EXPECT_EQ(g.peak_alloc_bytes_by_stage, (std::map<std::string, double>{{"first_stage", 7153041408.0}}));
  EXPECT_EQ(g.peak_reserved_bytes_by_stage, (std::map<std::string, double>{{"first_stage", 7609618519.148936}}));
  EXPECT_EQ(g.duration_ms_by_stage, (std::map<std::string, double>{{"first", 1223.0037932803473}}));
}

TEST(GridCase, ErrorsNameTheLine) {
  EXPECT_EQ(std::string(testing::expect_config_error([] {
                          parse_grid_line("{\"id\": ", testing::shared_dir(), "grid.jsonl:7");
                        }).what()),
            "grid.jsonl:7: invalid JSON at line 1, column 8: syntax error while parsing value - unexpected end of "
            "input; expected '[', '{', or a literal");
  std::ifstream in(testing::shared("reference/simumax_grid.jsonl"));
  std::string line;
  std::getline(in, line);
  Json j = Json::parse(line);
  j["input"]["strategy"]["tp_size"] = "4";
  EXPECT_EQ(std::string(testing::expect_config_error([&] {
                          parse_grid_line(j.dump(), testing::shared_dir(), "grid.jsonl:1");
                        }).what()),
            "grid.jsonl:1: /input/strategy/tp_size: expected a positive integer, got \"4\"");
}

}  // namespace
}  // namespace simumax::config
