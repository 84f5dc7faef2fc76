#include "engine/config/model_config.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::expect_config_error;
using testing::Json;
using testing::model_file;
using testing::TempDir;

TEST(ModelConfig, EveryShippedModelLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::shared("simumax-configs/models"))) {
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_model_file(entry.path().string()));
    ++count;
  }
  EXPECT_EQ(count, 28);
}

TEST(ModelConfig, ReadsMlaMoeModel) {
  const ModelConfig m = load_model_file(model_file("deepseekv2.json"));
  EXPECT_EQ(m.model_name, "deepseek_v2");
  EXPECT_TRUE(m.is_moe());
  EXPECT_EQ(m.attention_type, AttentionType::kMla);
  EXPECT_EQ(m.hidden_size, 5120);
  EXPECT_EQ(m.expert_num, 160);
  EXPECT_EQ(m.topk, 6);
  EXPECT_EQ(m.ffn_hidden(), 1536);
  EXPECT_EQ(m.moe_shared_expert_intermediate_size, 3072);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.dense_layers, 1);
  EXPECT_TRUE(m.use_swiglu);
  EXPECT_TRUE(m.moe_pad_expert_input_to_capacity);
  EXPECT_EQ(m.group_linear_mode, GroupLinearMode::kParallel);
}

TEST(ModelConfig, DerivesTypeAndFfnWhenAbsent) {
  const ModelConfig dense = load_model_file(model_file("aquila2-7b.json"));
  EXPECT_EQ(dense.model_type, "dense");
  EXPECT_EQ(dense.attention_type, AttentionType::kMha);
  EXPECT_EQ(dense.ffn_hidden(), 11008);
  EXPECT_EQ(dense.moe_ffn_hidden_size, 11008);
  const ModelConfig mixtral = load_model_file(model_file("mixtral-8x7b.json"));
  EXPECT_TRUE(mixtral.is_moe());
  EXPECT_EQ(mixtral.ffn_hidden(), 14336);
}

TEST(ModelConfig, UseSwigluNullMeansGelu) {
  TempDir dir;
  Json j = testing::read_json(model_file("llama3-8b.json"));
  j["use_swiglu"] = nullptr;
  EXPECT_FALSE(load_model_file(dir.write("m.json", j)).use_swiglu);
  j.erase("use_swiglu");
  EXPECT_FALSE(load_model_file(dir.write("m.json", j)).use_swiglu);
}

TEST(ModelConfig, AcceptsSimuMaxSerializedFields) {
  TempDir dir;
  Json j = testing::read_json(model_file("llama3-8b.json"));
  j["orig_vocab_size"] = nullptr;
  j["padded_vocab_size"] = false;
  j["make_vocab_size_divisible_by"] = 64;
  j["attention_type"] = "gqa";
  const ModelConfig m = load_model_file(dir.write("m.json", j));
  EXPECT_FALSE(m.padded_vocab_size);
  EXPECT_EQ(m.make_vocab_size_divisible_by, 64);
  EXPECT_EQ(m.attention_type, AttentionType::kMha);
}

TEST(ModelConfig, ArchitectureKeysDefaultToSimuMaxBehaviour) {
  const ModelConfig m = load_model_file(model_file("llama3-8b.json"));
  EXPECT_EQ(m.normalization, Normalization::kRmsNorm);
  EXPECT_FALSE(m.add_bias_linear);
  EXPECT_FALSE(m.has_qkv_bias());
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kRope);
  EXPECT_EQ(m.attention_dropout, 0);
  EXPECT_EQ(m.hidden_dropout, 0);
  EXPECT_TRUE(m.untie_embeddings_and_output_weights);
  EXPECT_EQ(m.mtp_num_layers, 0);
}

TEST(ModelConfig, ReadsGptStyleArchitectureKeys) {
  TempDir dir;
  Json j = testing::read_json(model_file("llama3-8b.json"));
  j.merge_patch(Json::parse(R"({"normalization": "LayerNorm", "add_bias_linear": true, "use_swiglu": false,
      "position_embedding_type": "learned_absolute", "max_position_embeddings": 8192, "attention_dropout": 0.1,
      "hidden_dropout": 0.05, "untie_embeddings_and_output_weights": false, "mtp_num_layers": 2})"));
  const ModelConfig m = load_model_file(dir.write("m.json", j));
  EXPECT_EQ(m.normalization, Normalization::kLayerNorm);
  EXPECT_TRUE(m.add_bias_linear);
  EXPECT_TRUE(m.has_qkv_bias());
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kLearnedAbsolute);
  EXPECT_EQ(m.max_position_embeddings, 8192);
  EXPECT_DOUBLE_EQ(m.attention_dropout, 0.1);
  EXPECT_DOUBLE_EQ(m.hidden_dropout, 0.05);
  EXPECT_FALSE(m.untie_embeddings_and_output_weights);
  EXPECT_EQ(m.mtp_num_layers, 2);
}

struct PadCase {
  int64_t vocab, divisible_by, tp;
  bool pad;
  int64_t expected;
};

class PaddedVocab : public ::testing::TestWithParam<PadCase> {};

TEST_P(PaddedVocab, PadsToMultipleOfDivisorTimesTp) {
  ModelConfig m;
  m.vocab_size = GetParam().vocab;
  m.make_vocab_size_divisible_by = GetParam().divisible_by;
  m.padded_vocab_size = GetParam().pad;
  EXPECT_EQ(m.padded_vocab(GetParam().tp), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(ModelConfig, PaddedVocab,
                         ::testing::Values(PadCase{128257, 128, 1, true, 128384}, PadCase{128256, 128, 1, true, 128256},
                                           PadCase{128256, 128, 8, true, 129024}, PadCase{128257, 128, 4, true, 128512},
                                           PadCase{102400, 64, 2, true, 102400},
                                           PadCase{128257, 128, 2, false, 128257}));

struct ModelErrorCase {
  const char* name;
  const char* patch;  // RFC 7386 merge patch (null deletes) on llama3-8b.json, or deepseekv2.json when `moe`
  bool moe;
  const char* expected;  // message after "<file>: "
};

class ModelError : public ::testing::TestWithParam<ModelErrorCase> {};

TEST_P(ModelError, ReportsFieldAndExpectation) {
  TempDir dir;
  Json j = testing::read_json(model_file(GetParam().moe ? "deepseekv2.json" : "llama3-8b.json"));
  j.merge_patch(Json::parse(GetParam().patch));
  const std::string path = dir.write("model.json", j);
  const auto e = expect_config_error([&] { load_model_file(path); });
  EXPECT_EQ(std::string(e.what()), path + ": " + GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    ModelConfig, ModelError,
    ::testing::Values(
        ModelErrorCase{"typo", R"({"hiden_size": 1})", false,
                       "/hiden_size: unknown field; did you mean 'hidden_size'?"},
        ModelErrorCase{"missing", R"({"hidden_size": null})", false, "/hidden_size: required field is missing"},
        ModelErrorCase{"float", R"({"layer_num": 80.7})", false, "/layer_num: expected a positive integer, got 80.7"},
        ModelErrorCase{"huge_layers", R"({"layer_num": 32768})", false,
                       "/layer_num: expected at most 32767 layers, got 32768"},
        ModelErrorCase{"bool", R"({"head_num": true})", false, "/head_num: expected a positive integer, got true"},
        ModelErrorCase{"swiglu", R"({"use_swiglu": 1})", false, "/use_swiglu: expected true or false, got 1"},
        ModelErrorCase{"mode", R"({"group_linear_mode": "serail"})", false,
                       "/group_linear_mode: expected one of \"parallel\", \"serial\", got \"serail\"; did you mean "
                       "'serial'?"},
        ModelErrorCase{"dense_with_experts", R"({"expert_num": 8})", false,
                       "/model_type: \"dense\" contradicts expert_num 8; use model_type \"moe\" (or leave it out) "
                       "for a mixture-of-experts model"},
        ModelErrorCase{"gqa_groups", R"({"kv_head_num": 5})", false,
                       "/kv_head_num: 5 does not divide head_num 32 (each KV head serves a whole group of query "
                       "heads)"},
        ModelErrorCase{"no_head_size", R"({"head_size": null})", false,
                       "/head_size: required for standard (non-MLA) attention: the per-head dimension"},
        ModelErrorCase{"mla_dims", R"({"kv_lora_rank": null})", true,
                       "/kv_lora_rank: required when attention_type is \"mla\""},
        ModelErrorCase{"no_topk", R"({"topk": null})", true,
                       "/topk: required for a MoE model: the experts each token is routed to"},
        ModelErrorCase{"topk_too_big", R"({"topk": 200})", true, "/topk: 200 exceeds expert_num 160"},
        ModelErrorCase{"dense_layers", R"({"dense_layers": 61})", true, "/dense_layers: 61 exceeds layer_num 60"},
        ModelErrorCase{"normalization", R"({"normalization": "Foo"})", false,
                       "/normalization: expected one of \"RMSNorm\", \"LayerNorm\", got \"Foo\"; valid names: "
                       "RMSNorm, LayerNorm"},
        ModelErrorCase{"position", R"({"position_embedding_type": "learned"})", false,
                       "/position_embedding_type: expected one of \"rope\", \"learned_absolute\", \"none\", got "
                       "\"learned\"; did you mean 'learned_absolute'?"},
        ModelErrorCase{"dropout_one", R"({"hidden_dropout": 1.0})", false,
                       "/hidden_dropout: a dropout probability must lie in [0, 1), got 1.000000"},
        ModelErrorCase{"dropout_negative", R"({"attention_dropout": -0.1})", false,
                       "/attention_dropout: expected a non-negative number, got -0.1"},
        ModelErrorCase{"mtp_negative", R"({"mtp_num_layers": -1})", false,
                       "/mtp_num_layers: expected a non-negative integer, got -1"},
        ModelErrorCase{"table_without_learned", R"({"max_position_embeddings": 4096})", false,
                       "/max_position_embeddings: only a learned_absolute position_embedding_type has a table to "
                       "size"},
        ModelErrorCase{"bias_mla", R"({"add_qkv_bias": true})", true,
                       "/add_qkv_bias: biases are not modelled with attention_type \"mla\"; accepted: false"},
        ModelErrorCase{"untie_type", R"({"untie_embeddings_and_output_weights": "no"})", false,
                       "/untie_embeddings_and_output_weights: expected true or false, got \"no\""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace simumax::config
