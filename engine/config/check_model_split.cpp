#include <numeric>

#include <spdlog/fmt/fmt.h>

#include "engine/config/check_rules.hpp"

namespace simumax::config::detail {

namespace {

void check_heads(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const ModelConfig& m = c.md();
  if (m.attention_type == AttentionType::kMla && s.tp_size > 1) {
    c.strategy_error(
        "tp_size",
        fmt::format(
            "{} with MLA attention ({}): SimuMax v1.2 models MLA only without tensor parallelism; use tp_size 1 "
            "and scale with ep_size, cp_size or pp_size",
            s.tp_size, c.model_name()));
  }
  const char* bad = m.head_num % s.tp_size != 0 ? "head_num" : m.kv_head_num % s.tp_size != 0 ? "kv_head_num" : "";
  if (*bad != '\0') {
    c.strategy_error(
        "tp_size",
        fmt::format("{} does not divide {} {} ({}); use a tp_size that divides both head_num {} and kv_head_num {}: {}",
                    s.tp_size, bad, *bad == 'h' ? m.head_num : m.kv_head_num, c.model_name(), m.head_num, m.kv_head_num,
                    join(divisors(std::gcd(m.head_num, m.kv_head_num)))));
  }
  if (s.cp_size == 1) return;
  // TE's all-to-all context parallelism scatters the heads of each TP rank over the CP ranks.
  const int64_t heads = m.head_num / s.tp_size;
  const int64_t kv_heads = m.kv_head_num / s.tp_size;
  if (heads % s.cp_size != 0 || kv_heads % s.cp_size != 0) {
    c.strategy_error(
        "cp_size",
        fmt::format(
            "{} does not divide the attention heads of a TP rank: head_num {} / tp_size {} = {}, kv_head_num {} / "
            "tp_size {} = {} ({}); a2a context parallelism scatters heads over the cp ranks; use a cp_size that "
            "divides {}: {}",
            s.cp_size, m.head_num, s.tp_size, heads, m.kv_head_num, s.tp_size, kv_heads, c.model_name(),
            std::gcd(heads, kv_heads), join(divisors(std::gcd(heads, kv_heads)))));
  }
}

void check_width(const RuleContext& c, const char* what, int64_t width, const char* group_key, int64_t group) {
  if (width % group == 0) return;
  c.strategy_error(
      group_key,
      fmt::format(
          "{} does not divide {} {} ({}): the layer's GEMMs are split column- and row-wise over these ranks; use a "
          "{} that divides {}",
          group, what, width, c.model_name(), group_key, width));
}

void check_ffn_and_vocab(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const ModelConfig& m = c.md();
  if (!m.padded_vocab_size && m.vocab_size % s.tp_size != 0) {
    c.model_error(
        "vocab_size",
        fmt::format(
            "{} is not divisible by tp_size {} and padded_vocab_size is false, so the embedding and the LM head "
            "cannot be split over the TP ranks; set padded_vocab_size true (Megatron pads to a multiple of "
            "make_vocab_size_divisible_by*tp) or use a vocab_size divisible by tp_size",
            m.vocab_size, s.tp_size));
  }
  if (!m.is_moe() || m.dense_layers > 0)
    check_width(c, "intermediate_size", *m.intermediate_size, "tp_size", s.tp_size);
  if (!m.is_moe()) return;
  if (m.moe_shared_expert_intermediate_size) {
    check_width(c, "moe_shared_expert_intermediate_size", *m.moe_shared_expert_intermediate_size, "tp_size", s.tp_size);
  }
  check_width(c, "moe_ffn_hidden_size", m.ffn_hidden(), "etp_size", s.etp_size);
}

void check_experts(const RuleContext& c) {
  const StrategyConfig& s = c.st();
  const ModelConfig& m = c.md();
  if (!m.is_moe()) {
    if (s.ep_size > 1) {
      c.strategy_error("ep_size", fmt::format("{} needs a MoE model, but {} is dense (expert_num 1); use ep_size 1",
                                              s.ep_size, c.model_name()));
    }
    return;
  }
  if (m.expert_num % s.ep_size != 0) {
    c.strategy_error("ep_size", fmt::format("{} does not divide expert_num {} ({}); use an ep_size that divides it: {}",
                                            s.ep_size, m.expert_num, c.model_name(), join(divisors(m.expert_num))));
  }
  if (m.moe_pad_expert_input_to_capacity) return;
  // Without capacity padding the grouped GEMM gives every local expert an equal share of the routed rows
  // (SimuMax's shape model); rows that do not split evenly have no such shape.
  const int64_t local_tokens = s.seq_len / s.cp_size / (s.sp() ? s.tp_size : 1);
  const int64_t rows = *m.topk * s.micro_batch_size * local_tokens * (s.sp() && s.etp_size > 1 ? s.etp_size : 1);
  const int64_t local_experts = m.expert_num / s.ep_size;
  if (rows % local_experts == 0) return;
  c.model_error(
      "moe_pad_expert_input_to_capacity",
      fmt::format(
          "false needs the routed token rows of a rank to split evenly over its local experts, but topk * "
          "micro_batch_size * tokens per rank = {} * {} * {} = {} rows is not divisible by expert_num / ep_size = "
          "{} / {} = {} local experts (the grouped-GEMM shapes give every expert the same rows); set it true, or "
          "choose an ep_size for which expert_num / ep_size divides {}",
          *m.topk, s.micro_batch_size, rows / (*m.topk * s.micro_batch_size), rows, m.expert_num, s.ep_size,
          local_experts, rows));
}

}  // namespace

void check_model_split(const RuleContext& c) {
  check_heads(c);
  check_experts(c);
  check_ffn_and_vocab(c);
}

}  // namespace simumax::config::detail
