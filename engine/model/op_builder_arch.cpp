// The architecture keys beyond SimuMax's schema (docs/architectures.md): linear biases, learned absolute
// position embeddings, embedding dropout, tied embeddings, --no-gradient-accumulation-fusion and DeepSeek-V3's
// multi-token prediction. Shapes (parameters, ops, saved bytes) apply at both fidelities; the kernels that
// only Megatron-LM + TransformerEngine launch are added at the megatron fidelity. Paths cited are
// Megatron-LM core (github:NVIDIA/Megatron-LM, the commit in data/megatron/SOURCE) and TransformerEngine 2.x.
#include <string>
#include <vector>

#include "engine/model/op_builder.hpp"

namespace simumax::model {

namespace {

void add(Op& op, Pass pass, const std::vector<double>& kernels) {
  auto& v = op.extra_kernel_bytes[op_pass_index(pass)];
  v.insert(v.end(), kernels.begin(), kernels.end());
}

bool is_gemm_linear(const Op& op) {
  return op.type == OpType::kLinearCol || op.type == OpType::kLinearRow || op.type == OpType::kGroupLinearCol ||
         op.type == OpType::kGroupLinearRow;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

int64_t OpBuilder::bias_numel(const std::string& name, int64_t n_local) const {
  // gpt_layer_specs / transformer_config: add_bias_linear puts a bias on linear_qkv, linear_proj, linear_fc1 and
  // linear_fc2; add_qkv_bias on linear_qkv alone. The output layer and MTP's eh_proj never carry one
  // (gpt_model.py output_layer bias=False; multi_token_prediction.py eh_proj bias=False).
  if (ends_with(name, "attn.linear_qkv")) return m_.has_qkv_bias() ? n_local : 0;
  const bool layer_linear =
      ends_with(name, "attn.linear_out") || ends_with(name, ".linear_fc1") || ends_with(name, ".linear_fc2");
  return m_.add_bias_linear && layer_linear ? n_local : 0;
}

void OpBuilder::megatron_arch_kernels(std::vector<Op>& out, size_t first) const {
  const double e = static_cast<double>(e_);
  for (size_t i = first; i < out.size(); ++i) {
    Op& op = out[i];
    // distributed_data_parallel.py _make_backward_post_hook: a parameter whose gradient did not go into
    // main_grad inside its GEMM (grad_added_to_main_grad unset) gets `main_grad.add_(grad)`: read bf16 and
    // fp32, write fp32. Biases and LayerNorm betas always take this path (TE's wgrad GEMM accumulates only the
    // weight; the bias gradient comes from its epilogue). Without gradient accumulation fusion every GEMM
    // weight does too, after TE wrote its wgrad to a fresh bf16 tensor (module/linear.py with
    // fuse_wgrad_accumulation=False) that lives until the hook has added it.
    if (op.bias_numel > 0) add(op, Pass::kWeightGrad, {static_cast<double>(op.bias_numel) * (e + 8)});
    if (op.type == OpType::kNorm && m_.normalization == config::Normalization::kLayerNorm) {
      add(op, Pass::kWeightGrad, {static_cast<double>(op.dense_numel / 2) * (e + 8)});
    }
    if (!is_gemm_linear(op) || st_.use_fused_grad_accumulation) continue;
    const int64_t weight = op.dense_numel - op.bias_numel + op.moe_numel;
    add(op, Pass::kWeightGrad, {static_cast<double>(weight) * (e + 8)});
    op.act_bwd_peak += weight * e_;
  }
}

void OpBuilder::dropout_masks(std::vector<Op>& out, size_t first, int64_t s_local) const {
  if (m_.hidden_dropout <= 0) return;
  // transformer_layer.py self_attn_bda / mlp_bda: bias_dropout_add (fused_bias_dropout.py) drops the block's
  // output before the residual add; autograd keeps the boolean mask of the [s, b, h] residual stream (the
  // sequence-parallel shard), one byte per element, until the backward. It is saved beside the block's last op.
  const int64_t mask = st_.micro_batch_size * s_local * m_.hidden_size;
  for (size_t i = first; i < out.size(); ++i) {
    const std::string& n = out[i].name;
    if (n == "attn.linear_out" || n == "attn.linear_out_proj" || n == "mlp.linear_fc2" ||
        n == "mlp.unpermutation") {
      out[i].act_cache += mask;
    }
  }
}

void OpBuilder::embedding_extras(Op& op, int64_t seq_chunk, int64_t s_out) const {
  const int64_t b = st_.micro_batch_size, h = m_.hidden_size;
  const double x_full = static_cast<double>(b * seq_chunk * h * e_);
  if (m_.position_embedding == config::PositionEmbedding::kLearnedAbsolute) {
    // language_model_embedding.py: position_embeddings is a plain torch.nn.Embedding, replicated over TP (one
    // table of max_position_embeddings rows); forward: its lookup and the add to the word embeddings; backward:
    // embedding_dense_backward fills a dense fp32-accumulated gradient of the table.
    const int64_t rows = m_.max_position_embeddings.value_or(st_.seq_len);
    op.dense_numel += rows * h;
    op.work[0].mem_bytes.push_back(2 * x_full + 3 * x_full);
    op.work[2].mem_bytes.push_back(static_cast<double>(2 * rows * h * 4));
    op.act_fwd_peak += 2 * b * seq_chunk * h * e_;
  }
  if (m_.hidden_dropout > 0) {
    // LanguageModelEmbedding.forward: embedding_dropout after the scatter to the sequence-parallel region;
    // autograd keeps its boolean mask (one byte per element) until the backward.
    const int64_t mask = b * s_out * h;
    op.act_cache += mask;
    if (st_.megatron()) {
      const double x = static_cast<double>(mask * e_);
      add(op, Pass::kForward, {2 * x + static_cast<double>(mask)});
      add(op, Pass::kInputGrad, {2 * x + static_cast<double>(mask)});
    }
  }
}

void OpBuilder::output_head(std::vector<Op>& out, const std::string& prefix, int64_t seq_local,
                            bool owns_weight) const {
  const size_t first = out.size();
  const int64_t m = linear_col(out, prefix + "output_layer", seq_local, m_.hidden_size, vocab_, Rec{}, true);
  // gpt_model.py: with shared embeddings and output weights the output layer allocates no weight on the stage
  // that holds the embedding (skip_weight_param_allocation); MTP heads reuse the main head's weight.
  if (!owns_weight) {
    out[out.size() - 1].dense_numel = 0;
    out[out.size() - 1].te_dummy_wgrad = {0, 0, 0};
  }
  cross_entropy(out, m, vocab_ / tp_);
  if (st_.megatron()) megatron_loss_kernels(out, first);
  out.back().name = prefix + "cross_entropy";
}

void OpBuilder::mtp_block(std::vector<Op>& out, int64_t seq_chunk, int64_t seq_local) const {
  const int64_t b = st_.micro_batch_size, h = m_.hidden_size;
  for (int64_t k = 0; k < m_.mtp_num_layers; ++k) {
    const std::string p = "mtp" + std::to_string(k) + ".";
    const size_t first = out.size();
    // multi_token_prediction.py MultiTokenPredictionBlock.forward: roll_tensor shifts the input ids, and the
    // shared embedding looks them up again. On a stage without the pre-process the MTP stage still builds the
    // word embeddings (gpt_model.py `pre_process or mtp_process`): the first MTP layer holds that table.
    embedding(out, seq_chunk);
    Op& emb = out.back();
    emb.name = p + "embedding";
    if (k > 0 || st_.pp_size == 1) emb.dense_numel = 0;
    // MultiTokenPredictionLayer._concat_embeddings: enorm and hnorm, the [s, b, 2h] concatenation, eh_proj
    // (column parallel 2h -> h, no bias), gather_from_tensor_model_parallel_region over the hidden dimension
    // and, with sequence parallelism, the scatter back (whose backward is an all-gather).
    norm(out, p + "enorm", seq_local, h, false);
    norm(out, p + "hnorm", seq_local, h, false);
    const int64_t rows = linear_col(out, p + "eh_proj", seq_local, 2 * h, h, Rec{});
    Op& proj = out.back();
    const double cat = static_cast<double>(2 * b * seq_local * h * e_);
    proj.act_fwd_peak += 2 * b * seq_local * h * e_;
    if (st_.megatron()) {
      add(proj, Pass::kForward, {2 * cat});
      add(proj, Pass::kInputGrad, {2 * cat});
    }
    if (tp_ > 1) {
      const double gathered = static_cast<double>(b * rows * h * e_);
      proj.comm[0].push_back(Comm{Coll::kAllGather, CommGroup::kTp, gathered, "MTP_EH_GATHER", false});
      if (sp_) proj.comm[1].push_back(Comm{Coll::kAllGather, CommGroup::kTp, gathered, "MTP_SP_SCATTER_BWD", true});
    }
    if (st_.megatron()) megatron_arch_kernels(out, first);
    // The GPT path's transformer layer, built from the decoder's layer spec (MoE when the model is), then the
    // MTP layer's own final_layernorm before the shared head.
    std::vector<Op> layer_ops;
    layer(layer_ops, 0, seq_local, !m_.is_moe());
    for (Op& op : layer_ops) {
      op.name = p + op.name;
      out.push_back(std::move(op));
    }
    norm(out, p + "final_layernorm", seq_local, h, false);
    if (st_.megatron()) megatron_arch_kernels(out, out.size() - 1);
  }
}

void OpBuilder::mtp_heads(std::vector<Op>& out, int64_t seq_local) const {
  // multi_token_prediction.py process_mtp_loss: for each depth, the shared output layer on that depth's hidden
  // states, compute_language_model_loss on the labels rolled once more, scaled by MTPLossAutoScaler.
  for (int64_t k = 0; k < m_.mtp_num_layers; ++k) output_head(out, "mtp" + std::to_string(k) + ".", seq_local, false);
}

}  // namespace simumax::model
