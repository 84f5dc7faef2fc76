// MoE and MLA parts of OpBuilder: router, token (un)permutation, grouped GEMMs, shared experts, MLA attention.
#include <cmath>
#include <string>

#include "engine/model/op_builder.hpp"

namespace simumax::model {

namespace {

PassWork mem_calls(const char* op, std::vector<double> bytes) {
  PassWork w;
  w.compute_op = op;
  for (double b : bytes) {
    if (b != 0) w.mem_bytes.push_back(b);
  }
  return w;
}

std::string grouped_key(int64_t nl, int64_t m, int64_t n, int64_t k, bool fp8, bool bf16_grads, int pass) {
  static const char* kStage[] = {
      ", stage=fwd, grad=False, accumulate=False, use_split_accumulator=False, single_output=True",
      ", stage=bwd_grad_act, grad=True, accumulate=False, use_split_accumulator=True, single_output=False",
      ", stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, single_output=False"};
  return "ng=" + std::to_string(nl) + ", M=" + std::to_string(m) + ", N=" + std::to_string(n) +
         ", K=" + std::to_string(k) + ", dtype=" + (fp8 ? "fp8" : "bf16") +
         ", out_dtype=bf16, main_grad_dtype=" + (bf16_grads ? "bf16" : "fp32") + kStage[pass];
}

}  // namespace

void OpBuilder::mla_attention(std::vector<Op>& out, int64_t s_local, const AttnRecompute& af) const {
  const int64_t hsz = m_.hidden_size, n = m_.head_num;
  const int64_t qk = m_.qk_head_dim.value_or(0), pe = m_.qk_pos_emb_head_dim.value_or(0);
  const int64_t v = m_.v_head_dim.value_or(0), kv_lora = m_.kv_lora_rank.value_or(0), dq = qk + pe;
  const bool var = st_.recompute_variance, tail_ln = af.meg_ln;
  // Megatron's up-projection recompute skips the core attention when CP all-to-all is on.
  const bool cp_bypass = af.meg_mla && st_.cp_size > 1;
  const bool tail_up = af.meg_mla && !cp_bypass, core_rec = af.core && !cp_bypass;
  const bool down_break = selective() && (st_.mla_rms_recompute || tail_ln);
  int64_t m;
  if (!m_.q_lora_rank) {
    m = linear_col(out, "attn.linear_q_proj", s_local, hsz, n * dq, Rec{af.q_up});
  } else {
    const int64_t q_lora = *m_.q_lora_rank;
    m = linear_col(out, "attn.linear_q_down_proj", s_local, hsz, q_lora,
                   Rec{af.q_down, af.q_down && (var || tail_ln), tail_ln, down_break});
    norm(out, "attn.q_layernorm", m, q_lora, af.q_ln);
    linear_col(out, "attn.linear_q_up_proj", m, q_lora, n * dq, Rec{af.q_up});
  }
  // kv_down reads the same normed input q_down already saved.
  m = linear_col(out, "attn.linear_kv_down_proj", s_local, hsz, kv_lora + pe,
                 Rec{af.kv_down, af.kv_down && (var || tail_ln), true, down_break});
  norm(out, "attn.kv_layernorm", m, kv_lora, af.kv_ln);
  // SimuMax splits kv_combined (a leaf recomputed with the core attention, as are the Split and Concats before
  // it): a segment opening at the norm opens at that Split, which holds the whole down-projection output.
  out.back().recompute_lead_in = true;
  out.back().act_in_bytes = st_.micro_batch_size * m * (kv_lora + pe) * e_;
  linear_col(out, "attn.linear_kv_up_proj", m, kv_lora, n * (qk + v), Rec{af.kv_up});
  core_attention(out, "attn.core_attention", m, dq, v, Rec{core_rec, core_rec && (var || tail_up), tail_up});
  linear_col(out, "attn.linear_out_proj", m, v * n, hsz, Rec{af.out, false, false, selective()});
}

void OpBuilder::router(std::vector<Op>& out, int64_t s_local, const MlpRecompute& mf) const {
  const int64_t b = st_.micro_batch_size, hsz = m_.hidden_size, ex = m_.expert_num;
  const int64_t x = b * s_local * hsz;
  const double lin = static_cast<double>(hsz * ex * e_ + x * e_ + b * s_local * ex * e_);
  const double smx = static_cast<double>(b * s_local * ex * e_ * ((sp_ && tp_ > 1) ? tp_ : 1));
  const int64_t flops = 2 * x * ex;
  const int64_t key_m = sp_ ? s_local * tp_ : s_local;  // SimuMax's key uses the gathered rows, FLOPs do not
  const auto keys = linear_keys(b, key_m, hsz, ex);
  Op op;
  op.name = "mlp.router";
  op.type = OpType::kRouter;
  for (int p = 0; p < kNumOpPasses; ++p) {
    op.work[p].compute_op = "matmul";  // the router stays in bf16 under fp8
    op.work[p].flops = static_cast<double>(flops);
  }
  for (int p = 0; p < kNumOpPasses; ++p) op.work[p].shape_key = keys[p];
  op.work[0].mem_bytes = {lin + 2 * smx};
  op.work[1].mem_bytes = {lin + 3 * smx};
  op.work[2].mem_bytes = {lin};
  const bool rec = mf.router || mf.meg_ln || mf.meg_moe;
  set_recompute(op, Rec{rec, rec && mf.meg_ln, mf.meg_ln, selective() && mf.meg_ln}, false);
  op.act_cache = mf.meg_ln ? 0 : b * s_local * hsz * e_;
  op.act_fwd_peak = op.act_bwd_peak = b * s_local * hsz * e_ + b * s_local * ex * e_ + hsz * ex * e_;
  op.act_in_bytes = b * s_local * hsz * e_;
  op.dense_numel = hsz * ex;
  op.weight_elem_bytes = static_cast<int>(e_);
  out.push_back(std::move(op));
}

int64_t OpBuilder::router_out_bytes(int64_t s_local) const {
  // SimuMax types the router's output (probabilities and routing map) as int32, one per token and expert.
  return st_.micro_batch_size * s_local * m_.expert_num * 4;
}

int64_t OpBuilder::expert_rows(int64_t s_local, bool etp_gathered) const {
  const int64_t ex = m_.expert_num;
  int64_t t = m_.topk.value_or(1) * st_.micro_batch_size *
              ((etp_gathered && sp_ && st_.etp_size > 1) ? s_local * st_.etp_size : s_local);
  if (m_.moe_pad_expert_input_to_capacity) t = (t + ex - 1) / ex * ex * m_.capacity;
  return t;
}

void OpBuilder::permutation(std::vector<Op>& out, int64_t s_local, int64_t rows, bool rec) const {
  const int64_t b = st_.micro_batch_size, hsz = m_.hidden_size, ex = m_.expert_num;
  const int64_t ep = st_.ep_size, etp = st_.etp_size;
  const int64_t perm = expert_rows(s_local, false) * hsz, inp = b * s_local * hsz;
  const double c1 = static_cast<double>((inp + perm) * e_), c2 = static_cast<double>(2 * perm * e_);
  Op op;
  op.name = "mlp.permutation";
  op.type = OpType::kPermutation;
  if (permute_in_dispatch()) {
    // HybridEP's dispatch kernel permutes the rows as it sends them (and its backward, the combine, the reverse).
    op.work[0] = op.work[1] = mem_calls("permute_fwd", {});
  } else if (fused_permutation()) {
    // TE's moe_permute: each token's row read once, written to its top-k slots; its backward the reverse.
    op.work[0] = mem_calls("permute_fwd", {c1});
    op.work[1] = mem_calls("permute_bwd", {c1});
  } else {
    op.work[0] = mem_calls("permute_fwd", {c1, c2});  // two kernels, two launch latencies
    op.work[1] = mem_calls("permute_bwd", {c1, c2});
  }
  op.work[2] = mem_calls("default", {});
  const double probs = static_cast<double>(b * s_local * ex * e_);
  if (ep > 1) {
    const double d = static_cast<double>(perm * e_);
    op.comm[0].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, d, "Dispatch_FWD_EP", false});
    op.comm[1].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, d, "Dispatch_BWD_EP", false});
    if (st_.dispatch_probs) {
      op.comm[0].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, probs, "Dispatch_PROB_FWD_EP", false});
      op.comm[1].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, probs, "Dispatch_PROB_BWD_EP", false});
    }
  }
  if (etp > 1) {
    const double g = static_cast<double>(perm * e_ * etp);
    op.comm[0].push_back(Comm{Coll::kAllGather, CommGroup::kEtp, g, "Permutation_FWD_ETP", false});
    op.comm[1].push_back(Comm{Coll::kReduceScatter, CommGroup::kEtp, g, "Permutation_BWD_ETP", false});
  }
  set_recompute(op, Rec{rec}, true);
  op.act_cache = b * s_local * ex * 8;  // routing map and probabilities, 8 bytes per token and expert
  // Its inputs are the hidden states and the router's output (4 bytes per token and expert): a segment opening
  // here (after the router's break point) holds both.
  op.act_in_bytes = inp * e_ + router_out_bytes(s_local);
  (void)rows;
  out.push_back(std::move(op));
}

void OpBuilder::unpermutation(std::vector<Op>& out, int64_t s_local, int64_t rows, bool rec) const {
  const int64_t b = st_.micro_batch_size, hsz = m_.hidden_size;
  const int64_t ep = st_.ep_size, etp = st_.etp_size;
  const int64_t before = rows * hsz, after = b * s_local * hsz;
  const double c1 = static_cast<double>(2 * before * e_), c2 = static_cast<double>((before + after) * e_);
  Op op;
  op.name = "mlp.unpermutation";
  op.type = OpType::kUnpermutation;
  if (permute_in_dispatch()) {
    op.work[0] = op.work[1] = mem_calls("permute_fwd", {});  // inside HybridEP's combine kernel
  } else if (fused_permutation()) {
    // TE's moe_unpermute: each expert row read once, weighted by its probability and summed into its token.
    op.work[0] = mem_calls("permute_fwd", {c2});
    op.work[1] = mem_calls("permute_bwd", {c2});
  } else {
    op.work[0] = mem_calls("permute_fwd", {c1, c2});
    op.work[1] = mem_calls("permute_bwd", {c1, c2});
  }
  op.work[2] = mem_calls("default", {});
  if (etp > 1) {
    const double g = static_cast<double>(before * e_ * etp);
    op.comm[0].push_back(Comm{Coll::kReduceScatter, CommGroup::kEtp, g, "Combine_FWD_ETP", false});
    op.comm[1].push_back(Comm{Coll::kAllGather, CommGroup::kEtp, g, "Combine_BWD_ETP", false});
  }
  if (ep > 1) {
    const double d = static_cast<double>(before * e_);
    op.comm[0].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, d, "Combine_FWD_EP", false});
    op.comm[1].push_back(Comm{Coll::kAllToAll, CommGroup::kEp, d, "Combine_BWD_EP", false});
  }
  set_recompute(op, Rec{rec, false, false, selective()}, true);
  if (st_.dispatch_probs) {
    op.act_fwd_peak = std::max(before, after) * e_;
  } else {
    op.act_cache = before * e_;
    op.act_fwd_peak = op.act_bwd_peak = (before + after) * e_;
  }
  // Without dispatch_probs the combine also reads the router's output.
  op.act_in_bytes = before * e_ + (st_.dispatch_probs ? 0 : router_out_bytes(s_local));
  out.push_back(std::move(op));
}

void OpBuilder::group_linear(std::vector<Op>& out, const std::string& name, bool col, int64_t rows, int64_t k,
                             int64_t n, Rec rec) const {
  const int64_t nl = m_.expert_num / st_.ep_size;
  const int64_t a = st_.fp8 ? 1 : e_;
  const int64_t flops = 2 * rows * k * n;
  const double wb = static_cast<double>(k * n * a * nl), ib = static_cast<double>(rows * k * a),
               ob = static_cast<double>(rows * n * e_);
  // SimuMax's fused main-grad term is one expert's size, not nl of them (kept for parity).
  const double mg = st_.use_fused_grad_accumulation ? static_cast<double>(k * n * 4) : 0.0;
  const double bytes[kNumOpPasses] = {ib + wb + ob, wb + ob + ib, ob + ib + wb + mg};
  Op op;
  op.name = name;
  op.type = col ? OpType::kGroupLinearCol : OpType::kGroupLinearRow;
  for (int p = 0; p < kNumOpPasses; ++p) {
    op.work[p].compute_op = st_.gemm_op(true);
    op.work[p].flops = static_cast<double>(flops);
    op.work[p].shape_key = grouped_key(nl, rows / nl, n, k, st_.fp8, st_.grad_reduce_in_bf16, p);
    op.work[p].mem_bytes = {bytes[p]};
  }
  set_recompute(op, rec, false);
  const bool offload = col && st_.offload_groupgemm_col_inputs && !st_.fp8;
  const int64_t in_b = rows * k * a, out_b = rows * n * e_;
  op.act_cache = (rec.cached_inputs || offload) ? 0 : in_b;
  op.act_fwd_peak = in_b + out_b + (st_.use_accm_weight ? 0 : nl * k * n * a);
  op.act_bwd_peak = in_b + out_b + (st_.fp8 ? nl * k * n * 4 : 0) + (offload ? in_b : 0);
  op.offload_inputs = offload;
  op.act_in_bytes = rows * k * a;  // under fp8 its input is the quantizer's fp8 output
  op.wgrad_keep_bytes = in_b + out_b;
  op.moe_numel = nl * k * n;
  op.weight_elem_bytes = static_cast<int>(a);
  if (st_.use_fused_grad_accumulation &&
      config::StrategyConfig::version_at_least(st_.te_version, st_.te_grouped_linear_dummy_wgrad_min_version)) {
    op.te_dummy_wgrad = {n, k, e_};  // TE keeps one per-expert dummy wgrad per distinct shape
  }
  out.push_back(std::move(op));
}

void OpBuilder::serial_group_linear(std::vector<Op>& out, const std::string& name, int64_t rows, int64_t k,
                                    int64_t n_full, int64_t n_key, int64_t k_key, Rec rec) const {
  // group_linear_mode "serial": one bf16 linear per local expert, timed once as a grouped GEMM with the
  // children's summed FLOPs and bytes (SimuMax's accounting, tp = 1); the weights are dense parameters.
  const int64_t nl = m_.expert_num / st_.ep_size, mx = rows / nl;
  const double wb = static_cast<double>(k * n_full * e_), ib = static_cast<double>(mx * k * e_),
               ob = static_cast<double>(mx * n_full * e_);
  const double mg = st_.use_fused_grad_accumulation ? static_cast<double>(k * n_full * 4) : 0.0;
  const double bytes[kNumOpPasses] = {nl * (ib + wb + ob), nl * (wb + ob + ib), nl * (ob + ib + wb + mg)};
  Op op;
  op.name = name;
  op.type = OpType::kGroupLinearCol;
  for (int p = 0; p < kNumOpPasses; ++p) {
    op.work[p].compute_op = "group_matmul";
    op.work[p].flops = static_cast<double>(nl * 2 * mx * k * n_full);
    op.work[p].shape_key = grouped_key(nl, mx, n_key, k_key, false, st_.grad_reduce_in_bf16, p);
    op.work[p].mem_bytes = {bytes[p]};
  }
  set_recompute(op, rec, false);
  // The experts run one after another: each keeps its input; one expert's buffers are live at a time.
  op.act_cache = nl * mx * k * e_;
  op.act_fwd_peak = nl * mx * k * e_ + mx * n_full * e_;
  op.act_bwd_peak = mx * k * e_ + mx * n_full * e_;
  op.wgrad_keep_bytes = nl * mx * (k + n_full) * e_;
  op.act_in_bytes = rows * k * e_;
  op.dense_numel = nl * k * n_full;
  op.weight_elem_bytes = static_cast<int>(e_);
  add_te_dummy(op, n_full, k);
  out.push_back(std::move(op));
}

void OpBuilder::moe(std::vector<Op>& out, int64_t s_local, const MlpRecompute& mf) const {
  if (m_.moe_shared_expert_intermediate_size) {
    dense_mlp(out, "mlp.shared_experts", s_local, *m_.moe_shared_expert_intermediate_size, mf);
  }
  router(out, s_local, mf);
  const int64_t rows = expert_rows(s_local, true);
  permutation(out, s_local, rows, mf.perm || mf.meg_moe);
  const int64_t hsz = m_.hidden_size, ffn = m_.ffn_hidden(), etp = st_.etp_size;
  const int64_t out1 = (m_.use_swiglu ? 2 * ffn : ffn) / etp;
  const bool lin_rec = mf.linear || mf.meg_moe;
  const bool act_rec = mf.linear || mf.meg_moe || mf.meg_moe_act;
  const bool tail = act_rec && (st_.recompute_variance || mf.meg_moe_act);
  const int64_t probs = st_.dispatch_probs ? st_.micro_batch_size * s_local * m_.expert_num : 0;
  if (m_.group_linear_mode == config::GroupLinearMode::kSerial) {
    const int64_t full1 = m_.use_swiglu ? 2 * ffn : ffn;
    serial_group_linear(out, "mlp.experts.linear_fc1", rows, hsz, full1, out1, hsz, Rec{lin_rec});
    activation(out, "mlp.experts.activation", rows / (m_.expert_num / st_.ep_size) * (m_.expert_num / st_.ep_size) * full1,
               act_rec, probs);
    serial_group_linear(out, "mlp.experts.linear_fc2", rows, ffn, hsz, hsz, ffn / etp, Rec{act_rec, tail});
    unpermutation(out, s_local, rows, mf.perm || mf.meg_moe);
    return;
  }
  if (st_.fp8) quantizer(out, "mlp.experts.linear_fc1", rows * hsz, st_.cache_groupgemm_col_fp8_inputs ? false : lin_rec);
  group_linear(out, "mlp.experts.linear_fc1", true, rows, hsz, out1, Rec{lin_rec});
  activation(out, "mlp.experts.activation", rows * out1, act_rec, probs);
  const int64_t act_w = m_.use_swiglu ? out1 / 2 : out1;
  if (st_.fp8) quantizer(out, "mlp.experts.linear_fc2", rows * act_w, act_rec);
  group_linear(out, "mlp.experts.linear_fc2", false, rows, ffn / etp, hsz, Rec{act_rec, tail, mf.meg_moe_act});
  unpermutation(out, s_local, rows, mf.perm || mf.meg_moe);
}

}  // namespace simumax::model
