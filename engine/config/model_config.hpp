// SimuMax's model config (models/*.json) as a plain struct, with SimuMax's defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace simumax::config {

enum class AttentionType { kMha, kMla };
enum class GroupLinearMode { kParallel, kSerial };
enum class Normalization { kRmsNorm, kLayerNorm };
enum class PositionEmbedding { kRope, kLearnedAbsolute, kNone };

struct ModelConfig {
  std::string model_name;          // informational
  std::string model_type;          // "dense" or "moe"; empty in the file -> derived from expert_num
  int64_t hidden_size = 0;         // required
  int64_t head_num = 0;            // required
  int64_t kv_head_num = 0;         // required
  std::optional<int64_t> head_size;
  std::optional<int64_t> intermediate_size;
  int64_t layer_num = 0;           // required
  int64_t vocab_size = 0;          // required; as read (unpadded)
  bool use_swiglu = true;          // SimuMax default None (falsy); we require it explicitly or default false
  int64_t expert_num = 1;
  std::optional<int64_t> topk;
  AttentionType attention_type = AttentionType::kMha;
  std::optional<int64_t> moe_ffn_hidden_size;        // None -> intermediate_size
  std::optional<int64_t> moe_shared_expert_intermediate_size;
  std::optional<int64_t> v_head_dim;
  std::optional<int64_t> qk_head_dim;
  std::optional<int64_t> qk_pos_emb_head_dim;
  std::optional<int64_t> q_lora_rank;
  std::optional<int64_t> kv_lora_rank;
  int64_t dense_layers = 0;
  bool moe_pad_expert_input_to_capacity = true;
  int64_t capacity = 1;
  GroupLinearMode group_linear_mode = GroupLinearMode::kParallel;
  // Architecture keys beyond SimuMax's schema (docs/architectures.md), named after Megatron-LM's arguments.
  // Each defaults to what SimuMax models, so SimuMax's files load and simulate unchanged.
  Normalization normalization = Normalization::kRmsNorm;  // "normalization": "RMSNorm" | "LayerNorm" (+ bias)
  bool add_bias_linear = false;   // biases on every linear of a layer (Megatron's --add-bias-linear)
  bool add_qkv_bias = false;      // a bias on the QKV projection only (--add-qkv-bias); implied by the above
  PositionEmbedding position_embedding = PositionEmbedding::kRope;  // "position_embedding_type"
  std::optional<int64_t> max_position_embeddings;  // learned_absolute table rows; absent -> seq_len
  double attention_dropout = 0;   // probability in [0, 1)
  double hidden_dropout = 0;      // probability in [0, 1)
  bool untie_embeddings_and_output_weights = true;  // SimuMax keeps two tables; Megatron's default ties them
  int64_t mtp_num_layers = 0;     // DeepSeek-V3 multi-token prediction depth (--mtp-num-layers)
  // Class attributes in SimuMax (not JSON fields there); we accept them in the file.
  int64_t make_vocab_size_divisible_by = 128;
  bool padded_vocab_size = true;

  bool has_qkv_bias() const { return add_bias_linear || add_qkv_bias; }
  bool is_moe() const { return model_type == "moe"; }
  int64_t ffn_hidden() const { return moe_ffn_hidden_size.value_or(intermediate_size.value_or(0)); }
  // REQUIRES: tp >= 1. The vocabulary as Megatron pads it: a multiple of divisible_by * tp.
  int64_t padded_vocab(int64_t tp) const;
};

}  // namespace simumax::config
