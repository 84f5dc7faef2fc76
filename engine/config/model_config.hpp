// SimuMax's model config (models/*.json) as a plain struct, with SimuMax's defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace simumax::config {

enum class AttentionType { kMha, kMla };
enum class GroupLinearMode { kParallel, kSerial };

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
  // Class attributes in SimuMax (not JSON fields there); we accept them in the file.
  int64_t make_vocab_size_divisible_by = 128;
  bool padded_vocab_size = true;

  bool is_moe() const { return model_type == "moe"; }
  int64_t ffn_hidden() const { return moe_ffn_hidden_size.value_or(intermediate_size.value_or(0)); }
  // REQUIRES: tp >= 1. The vocabulary as Megatron pads it: a multiple of divisible_by * tp.
  int64_t padded_vocab(int64_t tp) const;
};

}  // namespace simumax::config
