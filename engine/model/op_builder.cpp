#include "engine/model/op_builder.hpp"

#include <string>

#include "engine/model/low_precision.hpp"

namespace simumax::model {

namespace {

PassWork memory_work(const char* op, double bytes) {
  PassWork w;
  w.compute_op = op;
  if (bytes != 0) w.mem_bytes.push_back(bytes);
  return w;
}

Comm comm(Coll c, CommGroup g, double bytes, const char* stage) {
  // Gathers feed the kernel that follows; reductions and all-to-alls consume its output.
  return Comm{c, g, bytes, stage, c == Coll::kAllGather};
}

}  // namespace

OpBuilder::OpBuilder(const config::Scenario& s, int64_t padded_vocab)
    : m_(s.model),
      st_(s.strategy),
      sys_(s.system),
      vocab_(padded_vocab),
      e_(s.strategy.element_bytes()),
      tp_(s.strategy.tp_size),
      sp_(s.strategy.enable_sequence_parallel) {}

std::array<std::string, kNumOpPasses> OpBuilder::linear_keys(int64_t b, int64_t m, int64_t k, int64_t n) const {
  auto key = [](int64_t bb, int64_t mm, int64_t kk, int64_t nn, const char* layout, bool accumulate,
                const char* out_dtype) {
    return "b=" + std::to_string(bb) + ", m=" + std::to_string(mm) + ", k=" + std::to_string(kk) +
           ", n=" + std::to_string(nn) + ", layout=" + layout + ", accumulate=" + (accumulate ? "True" : "False") +
           ", out_dtype=" + out_dtype;
  };
  return {key(b, m, k, n, "TN", false, "bf16"), key(b, m, n, k, "NN", false, "bf16"),
          key(1, n, b * m, k, "NT", true, st_.grad_reduce_in_bf16 ? "bf16" : "fp32")};
}

PassWork OpBuilder::linear_work(int64_t flops, const std::string& key, double bytes) const {
  PassWork w;
  w.compute_op = st_.gemm_op(false);
  w.flops = static_cast<double>(flops);
  w.shape_key = key;
  if (bytes != 0) w.mem_bytes.push_back(bytes);
  return w;
}

Op OpBuilder::linear_op(const std::string& name, OpType type, int64_t m, int64_t k, int64_t n, int64_t a, double ob,
                       bool wgrad_reads_weight) const {
  const int64_t b = st_.micro_batch_size;
  const int64_t flops = 2 * b * m * k * n;
  const double wb = static_cast<double>(k * n * a), ib = static_cast<double>(b * m * k * a);
  const double mg = st_.use_fused_grad_accumulation ? static_cast<double>(k * n * 4) : 0.0;
  const auto keys = linear_keys(b, m, k, n);
  Op op;
  op.name = name;
  op.type = type;
  op.work[0] = linear_work(flops, keys[0], ib + wb + ob);
  op.work[1] = linear_work(flops, keys[1], wb + ob + ib);
  op.work[2] = linear_work(flops, keys[2], wgrad_reads_weight ? ob + ib + wb + mg : ob + ib + mg);
  op.dense_numel = k * n;
  op.weight_elem_bytes = static_cast<int>(a);
  add_te_dummy(op, n, k);
  return op;
}

bool OpBuilder::selective() const {
  return st_.recompute_granularity == config::RecomputeGranularity::kSelective;
}

void OpBuilder::set_recompute(Op& op, Rec rec, bool comm_too) const {
  // SimuMax charges legacy-granularity recompute time even with enable_recompute = false; Megatron does not
  // recompute then, and neither do we (docs/simumax-differences.md).
  const bool on = rec.on && st_.enable_recompute;
  op.recompute = on;
  op.variance = on && rec.variance;
  op.recompute_comm = on && comm_too;
  op.break_point = on && rec.break_point;
  op.cached_inputs = rec.cached_inputs;
}

void OpBuilder::add_te_dummy(Op& op, int64_t rows, int64_t cols) const {
  // TransformerEngine >= te_dummy_wgrad_min_version keeps a persistent dummy wgrad per distinct shape.
  if (st_.use_fused_grad_accumulation &&
      config::StrategyConfig::version_at_least(st_.te_version, st_.te_dummy_wgrad_min_version)) {
    op.te_dummy_wgrad = {rows, cols, e_};
  }
}

void OpBuilder::quantizer(std::vector<Op>& out, const std::string& name, int64_t numel, bool rec) const {
  Op q;
  q.name = name + ".quantizer";
  q.type = OpType::kQuantizer;
  if (st_.megatron()) {
    // What TE's quantizers move per element (docs/low-precision.md): the forward casts the input, the backward
    // the incoming gradient (taken as the same size); tensorwise scaling reads the tensor once more for its amax.
    const double bytes = static_cast<double>(numel) * quantize_bytes_per_element(st_, e_);
    q.work[0] = memory_work("default", bytes);
    q.work[1] = memory_work("default", bytes);
  } else {
    q.work[0] = memory_work("default", static_cast<double>(numel * e_ + numel));
    q.work[1] = memory_work("default", 0);
  }
  q.work[2] = memory_work("default", 0);
  set_recompute(q, Rec{rec, false}, false);
  q.act_fwd_peak = numel * e_ + numel;
  q.act_in_bytes = numel * e_;
  out.push_back(std::move(q));
}

int64_t OpBuilder::linear_col(std::vector<Op>& out, const std::string& name, int64_t s_in, int64_t k,
                              int64_t n_total, Rec rec, bool lm_head) const {
  const int64_t b = st_.micro_batch_size;
  const int64_t n = n_total / tp_;
  const int64_t m = sp_ ? s_in * tp_ : s_in;
  const bool fp8 = st_.fp8 && !lm_head;
  if (fp8) quantizer(out, name, b * s_in * k, rec.on);
  const int64_t a = fp8 ? 1 : e_;
  Op op = linear_op(name, OpType::kLinearCol, m, k, n, a, static_cast<double>(b * m * n * e_), true);
  op.bias_numel = lm_head ? 0 : bias_numel(name, n);
  op.dense_numel += op.bias_numel;
  if (tp_ > 1) {
    const double c = static_cast<double>(b * m * k * e_);
    if (sp_) {
      op.comm[0].push_back(comm(Coll::kAllGather, CommGroup::kTp, c, "LinearCol_FWD_SP"));
      op.comm[1].push_back(comm(Coll::kReduceScatter, CommGroup::kTp, c, "LinearCol_BWD_ACT_SP"));
      op.comm[2].push_back(comm(Coll::kAllGather, CommGroup::kTp, c, "LinearCol_BWD_W_SP"));
    } else {
      op.comm[1].push_back(comm(Coll::kAllReduce, CommGroup::kTp, c, "LinearCol_BWD_ACT_TP"));
    }
  }
  set_recompute(op, rec, true);
  const int64_t in_b = b * m * k * a, out_b = b * m * n * e_;
  // bf16 keeps only its sequence-parallel shard of the input; fp8 keeps the gathered fp8 copy. The output layer
  // is bf16 even under fp8 and keeps its shard (SimuMax keeps the gathered input: docs/simumax-differences.md 5).
  op.act_cache = rec.cached_inputs ? 0 : ((sp_ && !fp8) ? in_b / tp_ : in_b);
  op.act_fwd_peak = op.act_bwd_peak = in_b + out_b + (st_.use_accm_weight ? 0 : k * n * a);
  op.act_in_bytes = b * s_in * k * a;
  op.wgrad_keep_bytes = in_b + out_b;
  out.push_back(std::move(op));
  return m;
}

int64_t OpBuilder::linear_row(std::vector<Op>& out, const std::string& name, int64_t m, int64_t k_total,
                              int64_t n, Rec rec) const {
  const int64_t b = st_.micro_batch_size;
  const int64_t k = k_total / tp_;
  if (st_.fp8) quantizer(out, name, b * m * k, rec.on);
  const int64_t a = st_.fp8 ? 1 : e_;
  const int64_t s_out = sp_ ? m / tp_ : m;
  const int64_t mo = sp_ ? s_out * tp_ : s_out;
  // SimuMax's row-parallel wgrad bytes have no weight term (kept for parity; see docs/simumax-differences.md).
  Op op = linear_op(name, OpType::kLinearRow, m, k, n, a, static_cast<double>(b * mo * n * e_), false);
  // A row-parallel bias is whole on every TP rank (layers.py RowParallelLinear / TE's Linear, parallel_mode "row").
  op.bias_numel = bias_numel(name, n);
  op.dense_numel += op.bias_numel;
  if (tp_ > 1) {
    const double c = static_cast<double>(b * mo * n * e_);
    if (sp_) {
      op.comm[0].push_back(comm(Coll::kReduceScatter, CommGroup::kTp, c, "LinearROW_FWD_SP"));
      op.comm[1].push_back(comm(Coll::kAllGather, CommGroup::kTp, c, "LinearROW_BWD_SP"));
    } else {
      op.comm[0].push_back(comm(Coll::kAllReduce, CommGroup::kTp, c, "LinearROW_FWD_TP"));
    }
  }
  set_recompute(op, rec, true);
  op.act_cache = rec.cached_inputs ? 0 : b * m * k * a;
  op.act_fwd_peak = op.act_bwd_peak = b * m * k * a + b * m * n * e_ + (st_.use_accm_weight ? 0 : k * n * a);
  op.act_in_bytes = b * m * k * a;
  op.wgrad_keep_bytes = b * m * k * a + b * m * n * e_;  // its output gradient arrives gathered under SP
  out.push_back(std::move(op));
  return s_out;
}

void OpBuilder::norm(std::vector<Op>& out, const std::string& name, int64_t rows, int64_t size, bool rec) const {
  const int64_t b = st_.micro_batch_size;
  const int64_t x = b * rows * size;
  const double in = static_cast<double>(x * e_), o = in, w = static_cast<double>(size * e_);
  const double rstd = static_cast<double>(x) / static_cast<double>(size) * static_cast<double>(e_);
  Op op;
  op.name = name;
  op.type = OpType::kNorm;
  double f, ba, bw;
  if (st_.use_fused_norm) {
    f = in + w + o;
    ba = in + w + o + rstd;
    bw = in + 2 * w;
  } else {
    const double f32 = static_cast<double>(x * 4);
    f = (in + f32) + (f32 + o) + 4 * f32 + 4 * rstd + o + w;
    bw = 2 * o + w;
    ba = (o + f32) + (in + f32) + 11 * f32 + 5 * rstd + in + w;
  }
  // LayerNorm (TE's layernorm_fwd/bwd) also reads its bias, and keeps the fp32 mean beside rsigma.
  const bool layer_norm = m_.normalization == config::Normalization::kLayerNorm;
  const double mu = layer_norm ? rstd : 0, beta = layer_norm ? w : 0;
  f += mu + beta;
  ba += mu + beta;
  bw += layer_norm ? o + w : 0;
  op.work[0] = memory_work("default", f);
  op.work[1] = memory_work("default", ba);
  op.work[2] = memory_work("default", bw);
  set_recompute(op, Rec{rec, false}, false);
  if (st_.use_fused_norm) {
    op.act_cache = x * e_;
    op.act_fwd_peak = 2 * x * e_;
    op.act_bwd_peak = 2 * x * e_ + (x / size) * e_ * (layer_norm ? 2 : 1);
  } else {
    const int64_t f4 = x * 4, r4 = (x / size) * 4;
    op.act_cache = f4 + r4 + (f4 + r4) + x * e_;
    op.act_fwd_peak = op.act_bwd_peak = 3 * f4 + 2 * r4;
  }
  op.act_in_bytes = x * e_;
  op.dense_numel = layer_norm ? 2 * size : size;
  op.weight_elem_bytes = static_cast<int>(e_);
  out.push_back(std::move(op));
}

void OpBuilder::activation(std::vector<Op>& out, const std::string& name, int64_t numel_in, bool rec,
                           int64_t probs_numel) const {
  Op op;
  op.name = name;
  const double in = static_cast<double>(numel_in * e_);
  if (m_.use_swiglu) {
    op.type = OpType::kSwiglu;
    const int64_t n_out = numel_in / 2;
    const double o = static_cast<double>(n_out * e_);
    const double probs = static_cast<double>(probs_numel * e_);
    const double f = (st_.use_fused_swiglu ? in + o : 5 * o) + probs;
    const double ba = (st_.use_fused_swiglu ? in + o : 8 * o) + probs;
    op.work[0] = memory_work("default", f);
    op.work[1] = memory_work("default", ba);
    op.act_cache = (st_.use_fused_swiglu ? 2 : 3) * n_out * e_;
    // The weighted SiLU keeps the routing probabilities (8 bytes per token and expert) while it runs.
    op.act_fwd_peak = op.act_bwd_peak = (numel_in + n_out) * e_ + probs_numel * 8;
  } else {
    op.type = OpType::kGelu;
    op.work[0] = memory_work("default", 2 * in);
    op.work[1] = memory_work("default", 2 * in);
    // SimuMax keeps three copies of the input; Megatron's bias_gelu (fused_bias_gelu.py, save_for_backward(input,
    // bias)) and a plain F.gelu both keep the input alone, and the fc2 that follows keeps the output.
    op.act_cache = (st_.megatron() ? 1 : 3) * numel_in * e_;
    op.act_fwd_peak = op.act_bwd_peak = 2 * numel_in * e_;
  }
  op.work[2] = memory_work("default", 0);
  // With dispatch_probs the expert activation also takes the router's int32 output as an input.
  op.act_in_bytes = numel_in * e_ + probs_numel * 4;
  set_recompute(op, Rec{rec, false}, false);
  out.push_back(std::move(op));
}

}  // namespace simumax::model
