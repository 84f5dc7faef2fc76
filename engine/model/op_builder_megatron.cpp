// The kernels Megatron-LM + TransformerEngine launch that SimuMax's op list leaves out (megatron fidelity).
// Each is attached to the op it runs beside, as the bytes it moves (Op::extra_kernel_bytes); the cost stage
// times it as a memory-bound kernel with a per-kernel floor. Paths cited are Megatron-LM core (v0.14/0.15) and
// TransformerEngine 2.x, the versions of the public B200 runs.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/model/op_builder.hpp"

namespace simumax::model {

namespace {

Op* find_op(std::vector<Op>& ops, size_t first, const std::string& name) {
  for (size_t i = first; i < ops.size(); ++i) {
    if (ops[i].name == name) return &ops[i];
  }
  return nullptr;
}

void add(Op* op, Pass pass, const std::vector<double>& kernels) {
  if (op == nullptr) return;
  auto& v = op->extra_kernel_bytes[op_pass_index(pass)];
  v.insert(v.end(), kernels.begin(), kernels.end());
}

// The pass ends with a host synchronisation (Op::host_sync).
void host_waits(Op* op, Pass pass) {
  if (op != nullptr) op->host_sync[op_pass_index(pass)] = true;
}

// A kernel on a handful of scalars (loss reductions, counters): it moves almost nothing, costs its floor.
constexpr double kTiny = 64;

}  // namespace

void OpBuilder::megatron_deterministic_fills(std::vector<Op>& out, int64_t rows) const {
  if (!st_.megatron() || !st_.deterministic_mode) return;
  // ATen's empty_cuda (TensorFactories.cpp) runs fill_empty_deterministic_ on every tensor it allocates while
  // torch.are_deterministic_algorithms_enabled() and torch.utils.deterministic.fill_uninitialized_memory (the
  // default) hold: NaN for floating point. TransformerEngine allocates each module's output (and its backward's
  // input and weight gradients without gradient accumulation fusion) with at::empty / torch.empty; ATen's own
  // structured kernels allocate theirs without the fill. One fill per pass that runs the op's kernel, of the
  // residual stream's size (an output's size within a small factor: the MLP's 4h and the vocabulary's aside).
  const double bytes = static_cast<double>(st_.micro_batch_size * rows * m_.hidden_size * e_);
  for (Op& op : out) {
    for (int p = 0; p < kNumOpPasses; ++p) {
      const PassWork& w = op.work[p];
      const bool into_main_grad = p == op_pass_index(Pass::kWeightGrad) && st_.use_fused_grad_accumulation;
      if ((w.flops > 0 || !w.mem_bytes.empty()) && !into_main_grad) op.extra_kernel_bytes[p].push_back(bytes);
    }
  }
}

void OpBuilder::megatron_layer_kernels(std::vector<Op>& out, size_t first, int64_t s_local) const {
  const double e = static_cast<double>(e_), b = static_cast<double>(st_.micro_batch_size);
  // The residual stream of this rank: [s_local, b, h] (sequence-parallel shard when SP is on).
  const double x = b * static_cast<double>(s_local * m_.hidden_size) * e;
  const int64_t m = sp_ ? s_local * tp_ : s_local;  // rows inside the TP region (after the SP all-gather)
  const double rows = b * static_cast<double>(m);
  const bool mla = m_.attention_type == config::AttentionType::kMla;
  Op* attn_out = find_op(out, first, mla ? "attn.linear_out_proj" : "attn.linear_out");
  // transformer_layer.py, TransformerLayer._forward_attention / _forward_mlp: self_attn_bda and mlp_bda. With
  // --no-bias-dropout-fusion, bias_dropout_add_unfused runs F.dropout (p = 0: no kernel, torch returns its
  // input) and `residual + out`: one add (read two, write one). In the backward, autograd sums the gradient of
  // the layer input from the residual branch and from the block: one more add.
  // With hidden_dropout > 0, bias_dropout_add_fused_train (fused_bias_dropout.py, a jit-fused kernel) also
  // writes the byte mask; its backward scales the gradient by the mask: one more kernel.
  const double mask = m_.hidden_dropout > 0 ? x / e : 0;
  const std::vector<double> bda_fwd = {3 * x + mask};
  std::vector<double> bda_bwd = {3 * x};
  if (mask > 0) bda_bwd.push_back(2 * x + mask);
  add(attn_out, Pass::kForward, bda_fwd);
  add(attn_out, Pass::kInputGrad, bda_bwd);
  if (mla) {
    megatron_mla_kernels(out, first, rows, x);
  } else {
    // attention.py, SelfAttention.get_query_key_value_tensors splits the fused QKV output into views; then
    // Attention.forward applies RoPE (rope_utils.apply_rotary_pos_emb with apply_rope_fusion: TE's
    // fused_apply_rotary_pos_emb, one kernel each for q and k, forward and backward). The backward of the
    // split is a concatenation of the q, k and v gradients into the QKV GEMM's output gradient.
    const double d = static_cast<double>(m_.head_size.value_or(0));
    const double q = rows * static_cast<double>(m_.head_num / tp_) * d * e;
    const double k = rows * static_cast<double>(m_.kv_head_num / tp_) * d * e;
    // TE's get_qkv_layout (dot_product_attention/utils.py) finds v still a strided view of the QKV output and
    // makes q, k, v contiguous: only v copies. fused_attn_fwd unpacks the RNG seed and offset (one tiny kernel).
    // Learned absolute (or no) position embeddings: no rotary kernels (gpt_model.py builds rotary_pos_emb only
    // for position_embedding_type "rope").
    Op* qkv = find_op(out, first, "attn.linear_qkv");
    if (m_.position_embedding == config::PositionEmbedding::kRope) {
      add(qkv, Pass::kForward, {2 * q, 2 * k});
      add(qkv, Pass::kInputGrad, {2 * q, 2 * k});
    }
    add(qkv, Pass::kForward, {2 * k, kTiny});
    add(qkv, Pass::kInputGrad, {2 * (q + 2 * k)});
  }
  // Backward of the two RMSNorm/LayerNorm weights: TE's dgamma finalisation kernel, and the DDP hook's
  // main_grad.add_ (distributed_data_parallel.py, _make_backward_post_hook), since only the GEMM weights
  // accumulate into main_grad inside their kernel (gradient_accumulation_fusion).
  add(find_op(out, first, "input_layernorm"), Pass::kWeightGrad, {kTiny, kTiny});
  add(find_op(out, first, "pre_mlp_layernorm"), Pass::kWeightGrad, {kTiny, kTiny});
  Op* mlp_out = find_op(out, first, "mlp.linear_fc2");
  if (mlp_out == nullptr) mlp_out = find_op(out, first, "mlp.unpermutation");
  add(mlp_out, Pass::kForward, bda_fwd);
  add(mlp_out, Pass::kInputGrad, bda_bwd);
  if (find_op(out, first, "mlp.router") != nullptr) megatron_moe_kernels(out, first, s_local);
}

void OpBuilder::megatron_mla_kernels(std::vector<Op>& out, size_t first, double rows, double x) const {
  // multi_latent_attention.py, MLASelfAttention.get_query_key_value_tensors, with DeepSeek's YaRN RoPE fused
  // (fusions/fused_mla_yarn_rope_apply.py): the latent part of the kv down-projection's split is made
  // contiguous for the kv up-projection (TE prepare_forward); one Triton kernel applies RoPE to q in place
  // (ApplyMLARotaryEmbQ), one builds the key (no-position part + the rotary part broadcast over heads) and the
  // value from the up-projection (ApplyMLARotaryEmbKV); the attention unpacks its RNG seed. Backward: both
  // RoPE kernels, the concatenation that is the kv split's backward, and the sum of the gradients of the
  // normed input, read by both down-projections.
  const double e = static_cast<double>(e_);
  const double n = static_cast<double>(m_.head_num / tp_);
  const double qk = static_cast<double>(m_.qk_head_dim.value_or(0));
  const double pe = static_cast<double>(m_.qk_pos_emb_head_dim.value_or(0));
  const double v = static_cast<double>(m_.v_head_dim.value_or(0));
  const double kv_lora = static_cast<double>(m_.kv_lora_rank.value_or(0));
  const double q_pe = 2 * rows * n * pe * e;
  const double kv_rope = rows * (n * (2 * (qk + v) + (qk + pe) + v) + pe) * e;
  const double kv_down = 2 * rows * (kv_lora + pe) * e;
  add(find_op(out, first, "attn.kv_layernorm"), Pass::kForward, {2 * rows * kv_lora * e});
  Op* core = find_op(out, first, "attn.core_attention");
  add(core, Pass::kForward, {q_pe, kv_rope, kTiny});
  add(core, Pass::kInputGrad, {kv_rope, q_pe, kv_down});
  add(find_op(out, first, "attn.linear_kv_down_proj"), Pass::kInputGrad, {3 * x});
  for (const char* norm_name : {"attn.q_layernorm", "attn.kv_layernorm"}) {
    add(find_op(out, first, norm_name), Pass::kWeightGrad, {kTiny, kTiny});
  }
}

void OpBuilder::megatron_moe_kernels(std::vector<Op>& out, size_t first, int64_t s_local) const {
  const double e = static_cast<double>(e_), b = static_cast<double>(st_.micro_batch_size);
  const double tokens = b * static_cast<double>(s_local);
  const double scores = tokens * static_cast<double>(m_.expert_num) * 4;  // [tokens, experts], fp32
  const double hidden = tokens * static_cast<double>(m_.hidden_size) * e;
  const double routed = tokens * static_cast<double>(m_.topk.value_or(1) * m_.hidden_size) * e;
  auto repeat = [](double bytes, int n) { return std::vector<double>(static_cast<size_t>(n), bytes); };
  // router.py TopKRouter.routing -> moe_utils.topk_routing_with_score_function: softmax, top-k, the zero-filled
  // probability map and the boolean routing map built by scatter (~10 kernels); the aux loss
  // (compute_routing_scores_for_aux_loss, switch_load_balancing_loss_func, save_to_aux_losses_tracker: ~13);
  // all on [tokens, experts]. Backward: MoEAuxLossAutoScaler's ones and product, the aux-loss chain, gather,
  // top-k's scatter into zeros, softmax, the sum of the two logit gradients, the router weight's DDP hook (~15).
  Op* router = find_op(out, first, "mlp.router");
  if (st_.moe_router_fusion) {
    // --moe-router-fusion: TE's fused top-k with its score function, the fused aux-loss scores and the fused aux
    // loss, one kernel each way each; around them the tokens-per-expert count, the aux-loss tracker and the
    // scaler (~5 forward); backward: the scaler's ones and product, the three fused backwards, the sum of the
    // logit gradients and the router weight's DDP hook.
    add(router, Pass::kForward, repeat(scores, 8));
    add(router, Pass::kInputGrad, repeat(scores, 7));
  } else {
    add(router, Pass::kForward, repeat(scores, 23));
    add(router, Pass::kInputGrad, repeat(scores, 15));
  }
  // --moe-router-force-load-balancing: router.py TopKRouter.forward replaces the logits by random ones
  // (moe_utils.py RandomSTE: one kernel forward, a straight-through backward).
  if (st_.moe_router_force_load_balancing) add(router, Pass::kForward, {scores});
  Op* perm = find_op(out, first, "mlp.permutation");
  Op* unperm = find_op(out, first, "mlp.unpermutation");
  const bool sorted = m_.expert_num / st_.ep_size > 1 && st_.ep_size > 1;
  if (st_.hybrid_ep()) {
    // MoEFlexTokenDispatcher.dispatch_preprocess: _initialize_metadata (the routing map widened to the TPxEP
    // domain) and HybridEP's metadata preprocessing; no host synchronisation, no sort, no zero-filled output
    // (the permutes are inside the dispatch and combine kernels).
    add(perm, Pass::kForward, repeat(kTiny, 3));
  } else {
    // token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess: ~6 small reductions and copies, the gather of
    // every rank's token counts over the EP group (a collective of a few hundred bytes), the device-to-host
    // copies of the splits and one host synchronisation before the EP all-to-all (_maybe_dtoh_and_synchronize):
    // the stream drains, and the next kernel waits for its launch: one more floor.
    add(perm, Pass::kForward, repeat(kTiny, 6 + 1 + 1 + 1));
    host_waits(perm, Pass::kForward);
    if (fused_permutation()) {
      // TE's fused permute: its row-id map (~3 small kernels); the permute itself is the op's own pass.
      // fused_sort_chunks_by_index: one kernel over every routed token, each way.
      add(perm, Pass::kForward, repeat(kTiny, 3));
      if (sorted) add(perm, Pass::kForward, {2 * routed});
      add(perm, Pass::kInputGrad, repeat(kTiny, 1));
      if (sorted) add(perm, Pass::kInputGrad, {2 * routed});
      if (sorted) add(unperm, Pass::kForward, {2 * routed});
      if (sorted) add(unperm, Pass::kInputGrad, {2 * routed});
    } else {
      // moe_utils.permute (unfused): the routing map transposed, arange, two masked_select (each a nonzero: ~3
      // kernels, a copy to the host and a host synchronisation). sort_chunks_by_idxs (num_local_experts > 1):
      // torch.cat of every expert's chunk (two launches, a copy of every routed token) and of the probabilities.
      add(perm, Pass::kForward, {scores / 2, kTiny});
      add(perm, Pass::kForward, repeat(kTiny, 2 * (3 + 1 + 1)));
      if (sorted) add(perm, Pass::kForward, {routed, routed, kTiny, kTiny});
      // Backward: index_add_ into zeros and masked_scatter of the probabilities (~5 small), the sort's cat.
      add(perm, Pass::kInputGrad, repeat(kTiny, 5));
      if (sorted) add(perm, Pass::kInputGrad, {routed, routed, kTiny});
      // combine_preprocess: the unsort (cat, every routed token); moe_utils.unpermute: zeros + scatter_add_.
      if (sorted) add(unperm, Pass::kForward, {routed, routed});
      add(unperm, Pass::kForward, {hidden});
      if (sorted) add(unperm, Pass::kInputGrad, {routed, routed});
    }
  }
  // moe_layer.py MoELayer.combine: `output + shared_expert_output`; in the backward the layer input's gradient
  // is summed from the router, the permutation and the shared experts.
  if (m_.moe_shared_expert_intermediate_size) {
    add(unperm, Pass::kForward, {3 * hidden});
    add(perm, Pass::kInputGrad, {3 * hidden});
  }
  add(perm, Pass::kInputGrad, {3 * hidden});
  // MoEAuxLossAutoScaler.set_loss_scale, per micro-batch on every MoE layer's stage (schedules.py).
  add(router, Pass::kInputGrad, repeat(kTiny, 1));
}

void OpBuilder::megatron_loss_kernels(std::vector<Op>& out, size_t first) const {
  // language_module.py compute_language_model_loss: two [b, s] transposes made contiguous. pretrain_gpt.py
  // loss_func: losses times the mask, summed; rerun_state_machine validate_result's isnan and isinf, each
  // tested on the host (a synchronisation: one more floor each); the token count (sum, clone, cast), the
  // loss clone and the report cat. schedules.py forward_step_calc_loss: clamp, / num_tokens,
  // / num_microbatches. Backward: about five small kernels back through the same chain.
  Op* ce = find_op(out, first, "cross_entropy");
  add(ce, Pass::kForward, {kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny, kTiny,
                             kTiny, kTiny, kTiny, kTiny});
  host_waits(ce, Pass::kForward);
  add(ce, Pass::kInputGrad, {kTiny, kTiny, kTiny, kTiny, kTiny});
}

}  // namespace simumax::model
