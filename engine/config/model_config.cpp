#include "engine/config/model_config.hpp"

#include <string>

#include "engine/common/logging.hpp"
#include "engine/config/config_parsers.hpp"

namespace simumax::config {

int64_t ModelConfig::padded_vocab(int64_t tp) const {
  if (!padded_vocab_size) return vocab_size;
  // Megatron's tokenizer padding: a multiple of divisible_by * tp, so every TP shard is GPU friendly.
  const int64_t multiple = make_vocab_size_divisible_by * tp;
  return (vocab_size + multiple - 1) / multiple * multiple;
}

namespace detail {
namespace {

void read_sizes(ObjectReader& r, ModelConfig& m) {
  m.model_name = r.optional_string("model_name").value_or("");
  m.hidden_size = r.required_int("hidden_size", Sign::kPositive);
  m.head_num = r.required_int("head_num", Sign::kPositive);
  m.kv_head_num = r.required_int("kv_head_num", Sign::kPositive);
  m.head_size = r.optional_int("head_size", Sign::kPositive);
  m.intermediate_size = r.optional_int("intermediate_size", Sign::kPositive);
  m.layer_num = r.required_int("layer_num", Sign::kPositive);
  if (m.layer_num > 32767) {  // graph::Task keeps a layer index in 16 bits (23 M tasks at 16k GPUs)
    r.fail("layer_num", "expected at most 32767 layers, got " + std::to_string(m.layer_num));
  }
  m.vocab_size = r.required_int("vocab_size", Sign::kPositive);
  // SimuMax pads from orig_vocab_size when it is set (it records the unpadded size there).
  const auto orig_vocab = r.optional_int("orig_vocab_size", Sign::kPositive);
  m.make_vocab_size_divisible_by = r.int_or("make_vocab_size_divisible_by", 128, Sign::kPositive);
  m.padded_vocab_size = r.bool_or("padded_vocab_size", true);
  if (orig_vocab && m.padded_vocab_size && *orig_vocab != m.vocab_size) {
    const FieldLocation at = r.where("orig_vocab_size");
    common::logger("config")->warn(
        "{}: {}: orig_vocab_size {} differs from vocab_size {}; padding from {} as SimuMax does", at.file, at.pointer,
        *orig_vocab, m.vocab_size, *orig_vocab);
    m.vocab_size = *orig_vocab;
  }
  // SimuMax's default is None, which it tests for truthiness: absent or null means GeLU.
  m.use_swiglu = r.bool_or_null("use_swiglu", false);
}

void read_attention_and_moe(ObjectReader& r, ModelConfig& m) {
  // SimuMax compares attention_type with 'mla' only; every other value is standard MHA/GQA attention.
  const auto attention = r.optional_string("attention_type");
  m.attention_type = attention == "mla" ? AttentionType::kMla : AttentionType::kMha;
  m.v_head_dim = r.optional_int("v_head_dim", Sign::kPositive);
  m.qk_head_dim = r.optional_int("qk_head_dim", Sign::kPositive);
  m.qk_pos_emb_head_dim = r.optional_int("qk_pos_emb_head_dim", Sign::kPositive);
  m.q_lora_rank = r.optional_int("q_lora_rank", Sign::kPositive);
  m.kv_lora_rank = r.optional_int("kv_lora_rank", Sign::kPositive);
  m.expert_num = r.int_or("expert_num", 1, Sign::kPositive);
  m.topk = r.optional_int("topk", Sign::kPositive);
  m.moe_ffn_hidden_size = r.optional_int("moe_ffn_hidden_size", Sign::kPositive);
  if (!m.moe_ffn_hidden_size) m.moe_ffn_hidden_size = m.intermediate_size;
  m.moe_shared_expert_intermediate_size = r.optional_int("moe_shared_expert_intermediate_size", Sign::kPositive);
  m.dense_layers = r.int_or("dense_layers", 0, Sign::kNonNegative);
  m.moe_pad_expert_input_to_capacity = r.bool_or("moe_pad_expert_input_to_capacity", true);
  m.capacity = r.int_or("capacity", 1, Sign::kPositive);
  const std::string mode = r.choice_or("group_linear_mode", "parallel", {"parallel", "serial"});
  m.group_linear_mode = mode == "serial" ? GroupLinearMode::kSerial : GroupLinearMode::kParallel;
  const auto type = r.optional_choice("model_type", {"dense", "moe"});
  m.model_type = type.value_or(m.expert_num > 1 ? "moe" : "dense");
}

// The keys of docs/architectures.md. Megatron's spellings, so the importer writes its arguments through.
void read_architecture(ObjectReader& r, ModelConfig& m) {
  const std::string norm = r.choice_or("normalization", "RMSNorm", {"RMSNorm", "LayerNorm"});
  m.normalization = norm == "LayerNorm" ? Normalization::kLayerNorm : Normalization::kRmsNorm;
  m.add_bias_linear = r.bool_or("add_bias_linear", false);
  m.add_qkv_bias = r.bool_or("add_qkv_bias", false);
  const std::string pos = r.choice_or("position_embedding_type", "rope", {"rope", "learned_absolute", "none"});
  m.position_embedding = pos == "learned_absolute" ? PositionEmbedding::kLearnedAbsolute
                         : pos == "none"           ? PositionEmbedding::kNone
                                                   : PositionEmbedding::kRope;
  m.max_position_embeddings = r.optional_int("max_position_embeddings", Sign::kPositive);
  auto probability = [&r](const char* key) {
    const double p = r.number_or(key, 0.0, Sign::kNonNegative);
    if (p >= 1) r.fail(key, "a dropout probability must lie in [0, 1), got " + std::to_string(p));
    return p;
  };
  m.attention_dropout = probability("attention_dropout");
  m.hidden_dropout = probability("hidden_dropout");
  m.untie_embeddings_and_output_weights = r.bool_or("untie_embeddings_and_output_weights", true);
  m.mtp_num_layers = r.int_or("mtp_num_layers", 0, Sign::kNonNegative);
}

// Fields SimuMax needs but only discovers missing deep inside a module (as a TypeError on None).
void check_model_fields(ObjectReader& r, const ModelConfig& m) {
  if (m.model_type == "moe" && m.expert_num <= 1) {
    r.fail("model_type", "\"moe\" needs expert_num > 1, but expert_num is " + std::to_string(m.expert_num) +
                             "; set expert_num or use model_type \"dense\"");
  }
  if (m.model_type == "dense" && m.expert_num > 1) {
    r.fail("model_type", "\"dense\" contradicts expert_num " + std::to_string(m.expert_num) +
                             "; use model_type \"moe\" (or leave it out) for a mixture-of-experts model");
  }
  if (m.attention_type == AttentionType::kMha) {
    if (!m.head_size) r.fail("head_size", "required for standard (non-MLA) attention: the per-head dimension");
    if (m.head_num % m.kv_head_num != 0) {
      r.fail("kv_head_num", std::to_string(m.kv_head_num) + " does not divide head_num " + std::to_string(m.head_num) +
                                " (each KV head serves a whole group of query heads)");
    }
  } else {
    for (const char* key : {"qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "kv_lora_rank"}) {
      if (!r.given(key)) r.fail(key, "required when attention_type is \"mla\"");
    }
  }
  if (m.max_position_embeddings && m.position_embedding != PositionEmbedding::kLearnedAbsolute) {
    r.fail("max_position_embeddings", "only a learned_absolute position_embedding_type has a table to size");
  }
  // Biases are modelled on the standard attention and dense MLP linears only.
  for (const char* key : {"add_bias_linear", "add_qkv_bias"}) {
    const bool on = std::string(key) == "add_bias_linear" ? m.add_bias_linear : m.add_qkv_bias;
    if (on && m.attention_type == AttentionType::kMla) {
      r.fail(key, "biases are not modelled with attention_type \"mla\"; accepted: false");
    }
  }
  if (m.add_bias_linear && m.is_moe()) {
    r.fail("add_bias_linear", "biases on MoE expert linears are not modelled; accepted for a dense model only");
  }
  const bool needs_dense_mlp = !m.is_moe() || m.dense_layers > 0;
  if (needs_dense_mlp && !m.intermediate_size) r.fail("intermediate_size", "required: the dense MLP width");
  if (m.dense_layers > m.layer_num) {
    r.fail("dense_layers", std::to_string(m.dense_layers) + " exceeds layer_num " + std::to_string(m.layer_num));
  }
  if (!m.is_moe()) return;
  if (!m.moe_ffn_hidden_size) r.fail("moe_ffn_hidden_size", "required for a MoE model (or set intermediate_size)");
  if (!m.topk) r.fail("topk", "required for a MoE model: the experts each token is routed to");
  if (*m.topk > m.expert_num) {
    r.fail("topk", std::to_string(*m.topk) + " exceeds expert_num " + std::to_string(m.expert_num));
  }
}

}  // namespace

ModelConfig parse_model(const Json& json, const ConfigOrigin& origin) {
  ObjectReader r(json, origin);
  ModelConfig m;
  read_sizes(r, m);
  read_attention_and_moe(r, m);
  read_architecture(r, m);
  r.finish(UnknownKeys::kError);
  check_model_fields(r, m);
  return m;
}

}  // namespace detail
}  // namespace simumax::config
