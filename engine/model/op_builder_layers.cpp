// Attention, MLP, embedding and head: the composite parts of OpBuilder.
#include <algorithm>
#include <string>

#include "engine/model/op_builder.hpp"

namespace simumax::model {

namespace {

PassWork mem_work(const char* op, double bytes) {
  PassWork w;
  w.compute_op = op;
  if (bytes != 0) w.mem_bytes.push_back(bytes);
  return w;
}

}  // namespace

void OpBuilder::core_attention(std::vector<Op>& out, const std::string& name, int64_t m, int64_t dqk,
                               int64_t dv, Rec rec) const {
  const int64_t b = st_.micro_batch_size, cp = st_.cp_size;
  const bool mla = m_.attention_type == config::AttentionType::kMla;
  const int64_t h = m_.head_num / tp_, hkv = m_.kv_head_num / tp_;
  const int64_t s_full = cp > 1 ? m * cp : m;
  const int64_t hc = cp > 1 ? h / cp : h, kvc = cp > 1 ? hkv / cp : hkv;
  double base = mla ? static_cast<double>(b * hc * dqk * s_full * s_full + b * hc * dv * s_full * s_full)
                    : static_cast<double>(2 * b * hc * dqk * s_full * s_full);
  base *= 1 - st_.attention_sparse_ratio;
  const double ff = 2 * base, bf = 4 * base + (st_.use_flash_sdp ? base : 0);
  const bool contiguous = sys_.sys_name.find("s5000") == std::string::npos;
  const std::string key = "batch=" + std::to_string(b) + ", seq_len=" + std::to_string(s_full) +
                          ", head_num=" + std::to_string(hc) + ", kv_head_num=" + std::to_string(kvc) +
                          ", qk_head_dim=" + std::to_string(dqk) + ", v_head_dim=" + std::to_string(dv) +
                          ", qkv_contiguous=" + (contiguous ? "True" : "False");
  // SimuMax's byte model uses the local query heads for q, k and v alike (GQA is ignored in the bytes).
  const double e = static_cast<double>(e_);
  const double q = static_cast<double>(b * h * m * dqk), k = q;
  const double v = static_cast<double>(b * h * m * (mla ? dv : dqk)), o = v;
  const double lse = static_cast<double>(b * h * m);
  double fm, bm;
  if (st_.use_flash_sdp) {
    fm = (q + k + v + o + lse) * e;
    bm = (2 * q + 2 * k + 2 * v + o + lse) * e;
  } else {
    const double smx = static_cast<double>(b * h * m * m);
    fm = (q + k + smx) * e + 2 * smx * e + (smx + v + o) * e;
    bm = 2 * (smx + v + o) * e + 2 * smx * e + 2 * (q + k + smx) * e;
  }
  Op op;
  op.name = name;
  op.type = OpType::kCoreAttention;
  op.work[0] = mem_work("sdp_fwd", fm);
  op.work[0].flops = ff;
  op.work[0].shape_key = key;
  op.work[1] = mem_work("sdp_bwd", bm);
  op.work[1].flops = bf;
  op.work[1].shape_key = key;
  op.work[2] = mem_work("sdp_bwd", 0);
  const bool te_saves_out =
      cp > 1 && config::StrategyConfig::version_at_least(st_.te_version, st_.te_cp_a2a_save_pre_posta2a_min_version);
  if (cp > 1) {
    const double qm = static_cast<double>(b * h * m * dqk * e_), km = static_cast<double>(b * hkv * m * dqk * e_);
    const double vm = static_cast<double>(b * hkv * m * dv * e_), om = static_cast<double>(b * h * m * dv * e_);
    auto a2a = [](double bytes, const char* stage, bool before) {
      return Comm{Coll::kAllToAll, CommGroup::kCp, bytes, stage, before};
    };
    op.comm[0] = {a2a(qm, "Attention_FWD_CP1_Q", true), a2a(km, "Attention_FWD_CP1_K", true),
                  a2a(vm, "Attention_FWD_CP1_V", true), a2a(om, "Attention_FWD_CP2", false)};
    op.comm[1] = {a2a(qm, "Attention_BWD_CP1_DQ", false), a2a(km, "Attention_BWD_CP1_DK", false),
                  a2a(vm, "Attention_BWD_CP1_DV", false)};
    // TE >= 2.8 keeps the pre-post-a2a output, so the backward does not redo its a2a.
    if (!te_saves_out) op.comm[1].push_back(a2a(om, "Attention_BWD_CP2_OUT", true));
    op.comm[1].push_back(a2a(om, "Attention_BWD_CP2_DOUT", true));
  }
  set_recompute(op, rec, false);  // the CP a2a is not replayed by SimuMax's recompute
  // Memory facts: local heads, local sequence m.
  const int64_t qe = b * h * m * dqk, ke = mla ? qe : b * hkv * m * dqk;
  const int64_t ve = mla ? b * h * m * dv : b * hkv * m * dqk, le = b * h * m, oe = b * m * h * dv;
  const int64_t qkv_b = (qe + ke + ve) * e_, lse_b = le * e_, o_b = oe * e_;
  const int64_t saved_out = ((st_.fp8 && st_.use_flash_sdp) || te_saves_out) ? o_b : 0;
  if (st_.use_flash_sdp) {
    op.act_cache = (rec.cached_inputs ? 0 : qkv_b) + lse_b + saved_out;
    if (cp > 1) {
      set_cp_flash_peaks(op, qe * e_, ke * e_, ve * e_, o_b, saved_out);
    } else {
      op.act_fwd_peak = qkv_b + lse_b + o_b;
      op.act_bwd_peak = (2 * qe + 2 * ke + 2 * ve + le + oe) * e_ - saved_out;
    }
  } else {
    const int64_t p = b * h * m * m;
    // Unfused attention (dot_product_attention.py) drops the probabilities with torch dropout: autograd keeps
    // its byte mask, and the dropped copy (a new tensor) is what the probabilities-by-value bmm saves, beside
    // the softmax output the softmax backward keeps. The fused kernels regenerate their mask from the Philox
    // seed and keep nothing.
    const int64_t mask = m_.attention_dropout > 0 ? p + p * e_ : 0;
    op.act_cache = (qe + ke + ve + p) * e_ + mask - ((rec.cached_inputs && h == hkv) ? qkv_b : 0);
    op.act_fwd_peak = 2 * p * e_;
    int f = 3 + (sys_.backend == "cuda" ? 1 : 0) - ((st_.use_math_sdp && sys_.backend == "musa") ? 1 : 0);
    op.act_bwd_peak = f * p * e_;
  }
  // What a segment opening at the core attention holds. MLA: SimuMax's K_pos_emb and QKV Concat leaves run
  // just before it, recomputed with it, so the segment opens at the key Concat and holds its inputs, the key's
  // two parts (as large as the query). GQA: the QKV projection's output (a lone recomputed core attention opens
  // no segment, so this is never held).
  op.recompute_lead_in = mla;
  op.act_in_bytes = mla ? ke * e_ : qkv_b;
  out.push_back(std::move(op));
}

void OpBuilder::set_cp_flash_peaks(Op& op, int64_t q, int64_t k, int64_t v, int64_t o, int64_t saved_out) const {
  // TransformerEngine's a2a context parallelism: buffers around the pre- and post-attention all-to-alls.
  const bool sync = st_.cp_a2a_mode == "sync_cp";
  const int64_t t = q + k + v;
  auto three = [&]() { return sync ? 2 * t + (k + v) + (q + k) : 4 * t; };
  auto two = [&](int64_t a, int64_t c) { return sync ? 3 * (a + c) + std::max(a, c) : 4 * (a + c); };
  op.act_fwd_peak = std::max({three(), 3 * t + o, 2 * t + 4 * o, t + op.act_cache});
  const int64_t bwd_pre = saved_out > 0 ? saved_out + 4 * o : two(o, o);
  const int64_t base = saved_out > 0 ? saved_out + 2 * o : 4 * o;
  const int64_t bwd_fa = std::max(t + base, 2 * t + base + q + k);
  const int64_t bwd_post = base + three();
  op.act_bwd_peak = std::max({bwd_pre, bwd_fa, bwd_post}) - saved_out;
}

void OpBuilder::gqa_attention(std::vector<Op>& out, int64_t s_local, const AttnRecompute& af) const {
  const int64_t hsz = m_.hidden_size, h = m_.head_num, kv = m_.kv_head_num, d = m_.head_size.value_or(0);
  const bool tail = af.meg_ln;
  // Megatron's layernorm recompute makes the QKV projection a tail: its input is the recomputed norm output.
  const int64_t m =
      linear_col(out, "attn.linear_qkv", s_local, hsz, h * d + 2 * kv * d, Rec{af.q_up || tail, tail, tail});
  core_attention(out, "attn.core_attention", m, d, d, Rec{af.core, st_.recompute_variance && af.core});
  linear_row(out, "attn.linear_out", m, h * d, hsz, Rec{af.out, false});
}

void OpBuilder::dense_mlp(std::vector<Op>& out, const std::string& prefix, int64_t s_local, int64_t ffn,
                          const MlpRecompute& mf) const {
  const bool shared = prefix != "mlp";
  const bool rec = shared ? (mf.shared || mf.meg_moe) : (mf.linear || mf.meg_mlp);
  // Megatron's layernorm recompute makes the dense fc1 a tail that reads the recomputed norm output. SimuMax
  // clears that setting for the shared expert (ExpertMLP), so its fc1 keeps its input, is no tail and ends no
  // segment: under "moe" + "layernorm" the shared expert lies inside the segment the pre-MLP norm opens, as
  // everything does inside Megatron's MoE checkpoint.
  const bool tail = mf.meg_ln && !shared;
  const int64_t width = m_.use_swiglu ? 2 * ffn : ffn;
  const bool brk = selective() && tail && rec;
  const int64_t m =
      linear_col(out, prefix + ".linear_fc1", s_local, m_.hidden_size, width, Rec{rec || tail, tail, tail, brk});
  activation(out, prefix + ".activation", st_.micro_batch_size * m * (width / tp_), rec);
  linear_row(out, prefix + ".linear_fc2", m, ffn, m_.hidden_size, Rec{rec, rec && st_.recompute_variance});
}

void OpBuilder::layer(std::vector<Op>& out, int local_layer, int64_t seq_local, bool dense_mlp_layer) const {
  const AttnRecompute af = attn_recompute(st_, local_layer);
  const MlpRecompute mf = mlp_recompute(st_, local_layer);
  const size_t first = out.size();
  norm(out, "input_layernorm", seq_local, m_.hidden_size, af.in_ln);
  if (m_.attention_type == config::AttentionType::kMla) {
    mla_attention(out, seq_local, af);
  } else {
    gqa_attention(out, seq_local, af);
  }
  norm(out, "pre_mlp_layernorm", seq_local, m_.hidden_size, mf.pre_ln);
  if (m_.expert_num == 1 || dense_mlp_layer) {
    dense_mlp(out, "mlp", seq_local, m_.intermediate_size.value_or(0), mf);
  } else {
    moe(out, seq_local, mf);
  }
  dropout_masks(out, first, seq_local);
  if (st_.megatron()) {
    megatron_layer_kernels(out, first, seq_local);
    megatron_arch_kernels(out, first);
  }
}

int64_t OpBuilder::embedding(std::vector<Op>& out, int64_t seq_chunk) const {
  const int64_t b = st_.micro_batch_size, hsz = m_.hidden_size, v = vocab_ / tp_;
  const int64_t s_out = sp_ ? seq_chunk / tp_ : seq_chunk;
  Op op;
  op.name = "embedding";
  op.type = OpType::kEmbedding;
  // SimuMax reads the whole local table and writes the un-sharded rows (S_c, not S_l).
  op.work[0] = mem_work("default", static_cast<double>(b * seq_chunk * 4 + v * hsz * e_ + b * seq_chunk * hsz * e_));
  op.work[1] = mem_work("default", 0);
  op.work[2] = mem_work("default", static_cast<double>(2 * v * hsz * 4));
  if (tp_ > 1) {
    const double c = static_cast<double>(b * s_out * hsz * e_);
    op.comm[0].push_back(Comm{Coll::kAllReduce, CommGroup::kTp, c, "Embedding", false});
    if (sp_) op.comm[2].push_back(Comm{Coll::kAllGather, CommGroup::kTp, c, "Embedding", false});
  }
  op.act_fwd_peak = b * seq_chunk * 4 + b * seq_chunk * hsz * e_ + (st_.use_accm_weight ? 0 : v * hsz * e_);
  op.act_bwd_peak = v * hsz * e_;
  op.dense_numel = v * hsz;
  op.weight_elem_bytes = static_cast<int>(e_);
  embedding_extras(op, seq_chunk, s_out);
  out.push_back(std::move(op));
  return s_out;
}

void OpBuilder::cross_entropy(std::vector<Op>& out, int64_t m, int64_t v_local) const {
  const int64_t b = st_.micro_batch_size;
  const int64_t bs = b * m, lg = bs * v_local;
  Op op;
  op.name = "cross_entropy";
  op.type = OpType::kCrossEntropy;
  // Megatron's native fusion (megatron fidelity; fusions/fused_cross_entropy.py) runs the unfused algorithm of
  // tensor_parallel/cross_entropy.py in three torch.compile'd functions: the unfused kernels' bytes are kept.
  const bool native = st_.megatron() && st_.cross_entropy_loss_fusion &&
                      st_.cross_entropy_fusion_impl == config::StrategyConfig::CeFusionImpl::kNative;
  const bool fused = st_.cross_entropy_loss_fusion && !native;
  const char* name = fused ? "ce_fusion" : "ce";
  double f, ba;
  if (fused) {
    f = ba = static_cast<double>(2 * lg * e_ + bs * 4);
  } else {
    // SimuMax's unfused formula adds the batch size alone (+B) in two terms; kept for parity.
    f = static_cast<double>(lg * 4 + lg * 2 + (lg + bs) * 4 + (lg + bs + lg) * 4 + 2 * lg * 4 + (lg + b) * 4 +
                            (lg + b + lg) * 4);
    ba = static_cast<double>((lg + b + lg) * 4 + lg * 4 + lg * 2);
  }
  op.work[0] = mem_work(name, f);
  op.work[1] = mem_work(name, ba);
  op.work[2] = mem_work("default", 0);
  if (tp_ > 1) {
    const double c = static_cast<double>(bs * 4);
    op.comm[0].push_back(Comm{Coll::kAllReduce, CommGroup::kTp, c, "ParallelCE_FWD_TP", false});
    // The fused kernels (TE's and Megatron's native one) reduce the predicted logits and the exp sums as one
    // concatenated all-reduce.
    op.comm[0].push_back(
        Comm{Coll::kAllReduce, CommGroup::kTp, fused || native ? 2 * c : c, "ParallelCE_FWD_TP", false});
    if (!fused && !native) op.comm[0].push_back(Comm{Coll::kAllReduce, CommGroup::kTp, c, "ParallelCE_FWD_TP", false});
  }
  if (fused) {
    op.act_cache = lg * e_;
    op.act_fwd_peak = lg * e_ + bs * 4 + 3 * bs * 4 + (tp_ > 1 ? 3 * bs * tp_ * 4 : 0);
  } else {
    op.act_cache = lg * 4;
    op.act_fwd_peak = lg * 4 + lg * e_;
    // calculate_predicted_logits mutates its fp32 input in place (logits - max, then exp) and returns it. The
    // compiled graph is functionalized (AOTAutograd): the new values are computed into a fresh buffer, the
    // exp-sum and the target gather read it, and it is copied back into the input at the end: one more fp32
    // copy of the logits live at once (measured: +0.38 GiB = logits x 4 B on DGX H100, GB200 and A100-LTS).
    if (native) op.act_fwd_peak += lg * 4;
  }
  op.act_in_bytes = lg * e_;
  out.push_back(std::move(op));
}

void OpBuilder::head(std::vector<Op>& out, int64_t seq_local) const {
  const size_t first = out.size();
  norm(out, "final_layernorm", seq_local, m_.hidden_size, false);
  if (st_.megatron()) megatron_arch_kernels(out, first);
  // gpt_model.py: the MTP block runs on the decoder's output before the main head; its losses follow.
  if (m_.mtp_num_layers > 0) mtp_block(out, st_.seq_len / st_.cp_size, seq_local);
  // Tied embeddings: with one stage the output layer uses the embedding's table; with more the last stage
  // keeps its own copy, and finalize_model_grads all-reduces the two gradients.
  output_head(out, "", seq_local, m_.untie_embeddings_and_output_weights || st_.pp_size > 1);
  if (m_.mtp_num_layers > 0) mtp_heads(out, seq_local);
}

}  // namespace simumax::model
