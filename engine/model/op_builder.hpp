// Builds SimuMax's leaf ops (work, communication, memory facts, parameters) for one micro-batch on one rank.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/model/op.hpp"
#include "engine/model/recompute_flags.hpp"

namespace simumax::model {

class OpBuilder {
 public:
  // `padded_vocab`: the vocabulary after Megatron's padding.
  OpBuilder(const config::Scenario& s, int64_t padded_vocab);

  // Each appends ops to `out`. Sequence arguments are rows per micro-batch on this rank.
  // Returns the embedding output rows (S_l).
  int64_t embedding(std::vector<Op>& out, int64_t seq_chunk) const;
  void layer(std::vector<Op>& out, int local_layer, int64_t seq_local, bool dense_mlp) const;
  void head(std::vector<Op>& out, int64_t seq_local) const;
  // Megatron fidelity with deterministic_mode (op_builder_megatron.cpp): each op pass that runs a kernel also
  // fills the output it allocates, a tensor the size of the block's residual stream ([rows, b, h]).
  void megatron_deterministic_fills(std::vector<Op>& out, int64_t rows) const;

 private:
  struct Rec {
    bool on = false;
    bool variance = false;
    bool cached_inputs = false;  // its input is already saved by another op (SimuMax's has_cached_inputs)
    bool break_point = false;    // a recompute segment ends after this op
  };
  bool selective() const;
  // One pass over the rows each way: TE's fused (un)permute, or HybridEP's own permute kernel.
  bool fused_permutation() const { return st_.megatron() && (st_.moe_permute_fusion || st_.hybrid_ep()); }
  // No pass of its own: HybridEP permutes inside its dispatch and combine kernels.
  bool permute_in_dispatch() const { return st_.hybrid_ep() && st_.moe_permute_fusion_into_hybridep; }
  // Linear layers return their output rows (M for a column linear; S_out for a row linear).
  int64_t linear_col(std::vector<Op>& out, const std::string& name, int64_t s_in, int64_t k, int64_t n_total,
                     Rec rec, bool lm_head = false) const;
  int64_t linear_row(std::vector<Op>& out, const std::string& name, int64_t m, int64_t k_total, int64_t n,
                     Rec rec) const;
  void norm(std::vector<Op>& out, const std::string& name, int64_t rows, int64_t size, bool rec) const;
  void quantizer(std::vector<Op>& out, const std::string& name, int64_t numel, bool rec) const;
  void core_attention(std::vector<Op>& out, const std::string& name, int64_t m, int64_t dqk, int64_t dv,
                      Rec rec) const;
  void gqa_attention(std::vector<Op>& out, int64_t s_local, const AttnRecompute& af) const;
  void mla_attention(std::vector<Op>& out, int64_t s_local, const AttnRecompute& af) const;
  void serial_group_linear(std::vector<Op>& out, const std::string& name, int64_t rows, int64_t k, int64_t n_full,
                           int64_t n_key, int64_t k_key, Rec rec) const;
  void moe(std::vector<Op>& out, int64_t s_local, const MlpRecompute& mf) const;
  void router(std::vector<Op>& out, int64_t s_local, const MlpRecompute& mf) const;
  int64_t expert_rows(int64_t s_local, bool etp_gathered) const;
  int64_t router_out_bytes(int64_t s_local) const;  // the router's output, bytes
  void permutation(std::vector<Op>& out, int64_t s_local, int64_t rows, bool rec) const;
  void unpermutation(std::vector<Op>& out, int64_t s_local, int64_t rows, bool rec) const;
  void group_linear(std::vector<Op>& out, const std::string& name, bool col, int64_t rows, int64_t k, int64_t n,
                    Rec rec) const;
  void set_cp_flash_peaks(Op& op, int64_t q, int64_t k, int64_t v, int64_t o, int64_t saved_out) const;
  // `probs_numel` > 0: the MoE expert activation weighted by the router probabilities (dispatch_probs).
  void activation(std::vector<Op>& out, const std::string& name, int64_t numel_in, bool rec,
                  int64_t probs_numel = 0) const;
  void dense_mlp(std::vector<Op>& out, const std::string& prefix, int64_t s_local, int64_t ffn,
                 const MlpRecompute& mf) const;
  void cross_entropy(std::vector<Op>& out, int64_t m, int64_t v_local) const;
  void set_recompute(Op& op, Rec rec, bool comm_too) const;
  // Megatron fidelity (op_builder_megatron.cpp): the kernels SimuMax omits, attached to the ops of one layer
  // (those from index `first` on) or of the head.
  void megatron_layer_kernels(std::vector<Op>& out, size_t first, int64_t s_local) const;
  void megatron_mla_kernels(std::vector<Op>& out, size_t first, double rows, double x) const;
  void megatron_moe_kernels(std::vector<Op>& out, size_t first, int64_t s_local) const;
  void megatron_loss_kernels(std::vector<Op>& out, size_t first) const;
  // Architecture keys beyond SimuMax's schema (op_builder_arch.cpp, docs/architectures.md).
  // The bias a linear of this name carries (its element count on this rank; 0 when none).
  int64_t bias_numel(const std::string& name, int64_t n_local) const;
  // Megatron fidelity: the DDP hook's main_grad.add_ for biases and LayerNorm betas and the separate
  // accumulation of --no-gradient-accumulation-fusion (kernel and bf16 wgrad buffer), for ops [first, end).
  // (Hidden dropout's and RoPE's kernels ride in megatron_layer_kernels.)
  void megatron_arch_kernels(std::vector<Op>& out, size_t first) const;
  // Hidden dropout's masks (one byte per element, both fidelities) on the ops the bias-dropout-adds follow.
  void dropout_masks(std::vector<Op>& out, size_t first, int64_t s_local) const;
  // The learned absolute position table and the embedding dropout, added to the embedding op.
  void embedding_extras(Op& op, int64_t seq_chunk, int64_t s_out) const;
  // DeepSeek-V3's multi-token prediction block after the decoder, its shared head and losses.
  void mtp_block(std::vector<Op>& out, int64_t seq_chunk, int64_t seq_local) const;
  void mtp_heads(std::vector<Op>& out, int64_t seq_local) const;
  // The main head: output layer (shared with the word embedding when tied) and loss.
  void output_head(std::vector<Op>& out, const std::string& prefix, int64_t seq_local, bool owns_weight) const;
  // SimuMax's GEMM shape keys of a linear with input [b, m, k] and n outputs: forward, grad-input, grad-weight.
  std::array<std::string, kNumOpPasses> linear_keys(int64_t b, int64_t m, int64_t k, int64_t n) const;
  PassWork linear_work(int64_t flops, const std::string& key, double bytes) const;
  // A linear's op with its three GEMM passes (input [b, m, k] of `a`-byte elements, n outputs, `ob` output bytes;
  // SimuMax's bytes: input, weight, output, and the fp32 main-grad accumulation in the weight gradient, which
  // also reads the weight when `wgrad_reads_weight`) and its parameters. Communication and memory: the caller's.
  Op linear_op(const std::string& name, OpType type, int64_t m, int64_t k, int64_t n, int64_t a, double ob,
               bool wgrad_reads_weight) const;
  void add_te_dummy(Op& op, int64_t rows, int64_t cols) const;

  const config::ModelConfig& m_;
  const config::StrategyConfig& st_;
  const config::SystemConfig& sys_;
  int64_t vocab_;
  int64_t e_;    // activation element bytes
  int64_t tp_;
  bool sp_;
};

}  // namespace simumax::model
