#include "engine/config/strategy_config.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::expect_config_error;
using testing::Json;
using testing::strategy_file;
using testing::TempDir;

// A strategy file: the shipped tp1_pp1_dp8 config with `patch` applied (RFC 7386: null deletes a key).
StrategyConfig load_patched(const TempDir& dir, const std::string& patch, std::string* path_out = nullptr) {
  Json j = testing::read_json(strategy_file("tp1_pp1_dp8_mbs1.json"));
  j.merge_patch(Json::parse(patch));
  const std::string path = dir.write("strategy.json", j);
  if (path_out != nullptr) *path_out = path;
  return load_strategy_file(path);
}

TEST(StrategyConfig, EveryShippedStrategyLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::shared("simumax-configs/strategy"))) {
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_strategy_file(entry.path().string()));
    ++count;
  }
  EXPECT_EQ(count, 12);
}

TEST(StrategyConfig, ReadsFieldsAndDefaults) {
  const StrategyConfig s = load_strategy_file(strategy_file("ep4_pp2_dp4_mbs1_selective_recompute.json"));
  EXPECT_EQ(s.seq_len, 4096);
  EXPECT_EQ(s.micro_batch_num, 8);
  EXPECT_EQ(s.ep_size, 4);
  EXPECT_EQ(s.pp_size, 2);
  EXPECT_EQ(s.dp_size(), 4);
  EXPECT_EQ(s.edp_size(), 1);
  EXPECT_EQ(s.recompute_granularity, RecomputeGranularity::kSelective);
  EXPECT_EQ(s.recompute_layer_num, 2);
  EXPECT_TRUE(s.attn_recompute && s.mla_rms_recompute && s.mlp_recompute && s.mlp_rms_recompute);
  // Defaults SimuMax's dataclass supplies.
  EXPECT_EQ(s.cp_size, 1);
  EXPECT_EQ(s.dtype, Dtype::kBf16);
  EXPECT_FALSE(s.fp8);
  EXPECT_TRUE(s.pp_comm_async);
  EXPECT_DOUBLE_EQ(s.mem_factor, 0.94);
  EXPECT_EQ(s.te_version, std::nullopt);
  EXPECT_EQ(s.te_cp_a2a_save_pre_posta2a_min_version, (std::vector<int>{2, 8, 0}));
  EXPECT_EQ(s.te_grouped_linear_dummy_wgrad_min_version, (std::vector<int>{2, 10, 0}));
  EXPECT_FALSE(s.deterministic_mode);  // ours: off unless the strategy says so
}

TEST(StrategyConfig, AppliesSanityCheckSideEffects) {
  const StrategyConfig vpp = load_strategy_file(strategy_file("tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt.json"));
  EXPECT_EQ(vpp.interleaving_size, 2);
  EXPECT_EQ(vpp.microbatch_group_size_per_vp_stage, 4);
  TempDir dir;
  EXPECT_FALSE(
      load_patched(dir, R"({"recompute_granularity": "full_block", "recompute_variance": true})").recompute_variance);
  EXPECT_TRUE(load_patched(dir, R"({"recompute_granularity": "selective_recompute", "recompute_variance": true})")
                  .recompute_variance);
  EXPECT_EQ(load_patched(dir, R"({"interleaving_size": 1})").microbatch_group_size_per_vp_stage, std::nullopt);
}

TEST(StrategyConfig, RewritesAll2allSeqWithWarning) {
  testing::CapturedLog log;
  TempDir dir;
  std::string path;
  EXPECT_EQ(load_patched(dir, R"({"moe_dispatcher_policy": "all2all-seq"})", &path).moe_dispatcher_policy, "all2all");
  EXPECT_EQ(log.text(), "warning: " + path +
                            ": /moe_dispatcher_policy: \"all2all-seq\" is no longer supported; using \"all2all\" as "
                            "SimuMax does\n");
}

TEST(StrategyConfig, WarnsOnlyForNonAutoNetworkFields) {
  testing::CapturedLog log;
  TempDir dir;
  std::string path;
  load_patched(dir, R"({"tp_net": "auto", "pp_net": "inter_node"})", &path);
  EXPECT_EQ(log.text(), "warning: " + path +
                            ": /pp_net: \"inter_node\" is ignored; the network of each group is chosen from the "
                            "system config and the rank layout (SimuMax does the same)\n");
}

struct VersionCase {
  const char* json;  // the te_version value
  std::optional<std::vector<int>> expected;
};

class TeVersion : public ::testing::TestWithParam<VersionCase> {};

TEST_P(TeVersion, ParsedLikeSimuMax) {
  TempDir dir;
  EXPECT_EQ(load_patched(dir, std::string(R"({"te_version": )") + GetParam().json + "}").te_version,
            GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(StrategyConfig, TeVersion,
                         ::testing::Values(VersionCase{"\"2.11.0\"", std::vector<int>{2, 11, 0}},
                                           VersionCase{"\"v2.8\"", std::vector<int>{2, 8, 0}},
                                           VersionCase{"\"release_v2.10.0rc1.dev4\"", std::vector<int>{2, 10, 0}},
                                           VersionCase{"\"2\"", std::vector<int>{2, 0, 0}},
                                           VersionCase{"\"main\"", std::nullopt}, VersionCase{"\"\"", std::nullopt},
                                           VersionCase{"null", std::nullopt}));

TEST(StrategyConfig, NullMinimumVersionDisablesTheFeature) {
  TempDir dir;
  Json j = testing::read_json(strategy_file("tp1_pp1_dp8_mbs1.json"));
  j["te_version"] = "2.11";
  j["te_dummy_wgrad_min_version"] = nullptr;  // set directly: a merge patch would delete the key
  const StrategyConfig s = load_strategy_file(dir.write("strategy.json", j));
  EXPECT_EQ(s.te_dummy_wgrad_min_version, std::nullopt);
  EXPECT_FALSE(StrategyConfig::version_at_least(s.te_version, s.te_dummy_wgrad_min_version));
}

TEST(StrategyConfig, ParsesCublasWorkspaceConfigAsPyTorchDoes) {
  EXPECT_EQ(parse_cublas_workspace_config(":4096:8"), 4096 * 1024 * 8);
  EXPECT_EQ(parse_cublas_workspace_config(":4096:2:16:8"), 4096 * 1024 * 2 + 16 * 1024 * 8);  // PyTorch's default
  EXPECT_EQ(parse_cublas_workspace_config(":16:8"), 16 * 1024 * 8);
  for (const char* bad : {"", ":4096", "4096:8", ":4096:8:", ":a:8", ":0:8", ":4096:0", ":4194304:1025",
                          ":99999999999:1", ":4096:8 "}) {
    EXPECT_EQ(parse_cublas_workspace_config(bad), std::nullopt) << bad;
  }
}

TEST(StrategyConfig, VersionAtLeastComparesComponentwise) {
  using V = std::vector<int>;
  EXPECT_TRUE(StrategyConfig::version_at_least(V{2, 11, 0}, V{2, 8, 0}));
  EXPECT_TRUE(StrategyConfig::version_at_least(V{2, 8, 0}, V{2, 8, 0}));
  EXPECT_FALSE(StrategyConfig::version_at_least(V{2, 7, 9}, V{2, 8, 0}));
  EXPECT_FALSE(StrategyConfig::version_at_least(std::nullopt, V{2, 8, 0}));
  EXPECT_FALSE(StrategyConfig::version_at_least(V{3, 0, 0}, std::nullopt));
}

struct StrategyErrorCase {
  const char* name;
  const char* patch;
  const char* expected;  // message after "<file>: "
};

class StrategyError : public ::testing::TestWithParam<StrategyErrorCase> {};

TEST_P(StrategyError, ReportsFieldAndExpectation) {
  TempDir dir;
  std::string path;
  const auto e = expect_config_error([&] { load_patched(dir, GetParam().patch, &path); });
  EXPECT_EQ(std::string(e.what()), path + ": " + GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    StrategyConfig, StrategyError,
    ::testing::Values(
        StrategyErrorCase{"typo", R"({"tp_sise": 2})", "/tp_sise: unknown field; did you mean 'tp_size'?"},
        StrategyErrorCase{"string_int", R"({"tp_size": "2"})", "/tp_size: expected a positive integer, got \"2\""},
        StrategyErrorCase{"fraction", R"({"pp_size": 2.5})", "/pp_size: expected a positive integer, got 2.5"},
        StrategyErrorCase{"bool_int", R"({"world_size": true})", "/world_size: expected a positive integer, got true"},
        StrategyErrorCase{"missing", R"({"seq_len": null})", "/seq_len: required field is missing"},
        StrategyErrorCase{"zero_mbc", R"({"micro_batch_num": 0})",
                          "/micro_batch_num: must be at least 1 (SimuMax accepts 0 and reports a step that trains "
                          "nothing)"},
        StrategyErrorCase{"huge_mbc", R"({"micro_batch_num": 32768})",
                          "/micro_batch_num: expected at most 32767 micro-batches, got 32768"},
        StrategyErrorCase{"dtype_fp8", R"({"dtype": "fp8"})",
                          "/dtype: expected one of \"bf16\", \"fp16\", \"fp32\", got \"fp8\"; fp8 training is the "
                          "separate flag \"fp8\": true (with dtype \"bf16\")"},
        StrategyErrorCase{"dtype", R"({"dtype": "int8"})",
                          "/dtype: expected one of \"bf16\", \"fp16\", \"fp32\", got \"int8\"; valid names: bf16, "
                          "fp16, fp32"},
        StrategyErrorCase{"zero_state", R"({"zero_state": 4})",
                          "/zero_state: expected 0, 1, 2 or 3 (the ZeRO stage), got 4"},
        StrategyErrorCase{"sparse", R"({"attention_sparse_ratio": 1})",
                          "/attention_sparse_ratio: expected a fraction in [0, 1) of attention FLOPs skipped, got 1"},
        StrategyErrorCase{"capacity_factor_huge", R"({"moe_capacity_factor": 1e308})",
                          "/moe_capacity_factor: expected a factor in [0.01, 1000] of the balanced token count per "
                          "expert, got 1e+308"},
        StrategyErrorCase{"sm_contention_huge", R"({"sm_contention": 1e308})",
                          "/sm_contention: expected a slow-down in [0, 10] (10: 11x longer), got 1e+308"},
        StrategyErrorCase{"mem_factor_high", R"({"mem_factor": 1.5})",
                          "/mem_factor: expected a fraction in [0.05, 1] of GPU memory usable, got 1.5"},
        StrategyErrorCase{"mem_factor", R"({"mem_factor": 0})", "/mem_factor: expected a positive number, got 0"},
        StrategyErrorCase{"mem_factor_tiny", R"({"mem_factor": 1e-300})",
                          "/mem_factor: expected a fraction in [0.05, 1] of GPU memory usable, got 1e-300"},
        StrategyErrorCase{"fidelity", R"({"fidelity": "real"})",
                          "/fidelity: expected one of \"megatron\", \"simumax\", got \"real\"; valid names: megatron, "
                          "simumax"},
        StrategyErrorCase{"te_version_x", R"({"te_version": "2.x"})",
                          "/te_version: expected a version with its minor number, such as \"2.11.0\" (null: feature "
                          "off)"},
        StrategyErrorCase{"granularity", R"({"recompute_granularity": "full"})",
                          "/recompute_granularity: expected one of \"full_block\", \"attn_only\", \"mlp_only\", "
                          "\"sdp_only\", \"selective_recompute\", got \"full\"; did you mean 'full_block'?"},
        StrategyErrorCase{"module", R"({"megatron_recompute_modules": ["mlp", "layer_norm"]})",
                          "/megatron_recompute_modules/1: expected one of \"core_attn\", \"layernorm\", "
                          "\"mla_up_proj\", \"moe_act\", \"mlp\", \"moe\", got \"layer_norm\"; did you mean "
                          "'layernorm'?"},
        StrategyErrorCase{"order", R"({"order_of_paralielism": "tp-dp-pp"})",
                          "/order_of_paralielism: expected one of \"tp-cp-ep-dp-pp\", got \"tp-dp-pp\"; valid "
                          "names: tp-cp-ep-dp-pp"},
        StrategyErrorCase{"recipe_without_fp8", R"({"fp8_recipe": "mxfp8"})",
                          "/fp8_recipe: needs fp8 true: it names the recipe of the fp8 GEMMs; set fp8 true or remove "
                          "it"},
        StrategyErrorCase{"recipe", R"({"fp8": true, "fp8_recipe": "fp8_cs"})",
                          "/fp8_recipe: expected one of \"delayed\", \"tensorwise\", \"mxfp8\", \"nvfp4\", got "
                          "\"fp8_cs\"; valid names: delayed, tensorwise, mxfp8, nvfp4"},
        StrategyErrorCase{"graph_scope_without_impl", R"({"cuda_graph_scope": ["attn"]})",
                          "/cuda_graph_scope: needs cuda_graph_impl \"local\" or \"transformer_engine\": without an "
                          "implementation nothing is captured; set one or remove the scope"},
        StrategyErrorCase{"flex_without_backend", R"({"moe_token_dispatcher": "flex"})",
                          "/moe_flex_dispatcher_backend: required with moe_token_dispatcher \"flex\": \"deepep\" or "
                          "\"hybridep\""},
        StrategyErrorCase{"backend_without_flex", R"({"moe_flex_dispatcher_backend": "deepep"})",
                          "/moe_flex_dispatcher_backend: needs moe_token_dispatcher \"flex\" (the backend of the flex "
                          "dispatcher); set it or remove the backend"},
        StrategyErrorCase{"permute_into_hybridep_without_it",
                          R"({"moe_token_dispatcher": "flex", "moe_flex_dispatcher_backend": "deepep",
                              "moe_permute_fusion_into_hybridep": true})",
                          "/moe_permute_fusion_into_hybridep: needs moe_token_dispatcher \"flex\" with "
                          "moe_flex_dispatcher_backend \"hybridep\": it fuses HybridEP's permute; remove it or use "
                          "HybridEP"},
        StrategyErrorCase{"dispatcher", R"({"moe_dispatcher_policy": "alltoall"})",
                          "/moe_dispatcher_policy: expected one of \"all2all\", \"all2all-seq\", got "
                          "\"alltoall\"; did you mean 'all2all'?"},
        StrategyErrorCase{"te_number", R"({"te_version": 2.8})", "/te_version: expected a string, got 2.8"},
        StrategyErrorCase{"ce_impl", R"({"cross_entropy_fusion_impl": "apex"})",
                          "/cross_entropy_fusion_impl: expected one of \"te\", \"native\", got \"apex\"; valid names: "
                          "te, native"},
        StrategyErrorCase{"deterministic_mode", R"({"deterministic_mode": "yes"})",
                          "/deterministic_mode: expected true or false, got \"yes\""},
        StrategyErrorCase{"cublas_config", R"({"cublas_workspace_config": "4096:8"})",
                          "/cublas_workspace_config: expected PyTorch's CUBLAS_WORKSPACE_CONFIG format "
                          "\":SIZE_KiB:COUNT\" (repeatable, e.g. \":4096:8\" or \":4096:2:16:8\"), at most 4 GiB in all, got \"4096:8\""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace simumax::config
