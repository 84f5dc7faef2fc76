#include "engine/measure/kernel_problem.hpp"

#include <cmath>

#include "engine/common/error.hpp"

namespace simumax::measure {

namespace {

const std::string& text_field(const Shape& s, const std::string& name) {
  auto it = s.fields.find(name);
  if (it == s.fields.end()) throw common::UsageError(s.compute_op + " key '" + s.key + "': no field '" + name + "'");
  return it->second;
}

int64_t positive_field(const Shape& s, const std::string& name) {
  const std::string& v = text_field(s, name);
  int64_t x = 0;
  try {
    size_t used = 0;
    x = std::stoll(v, &used);
    if (used != v.size()) x = 0;
  } catch (const std::exception&) {
    x = 0;
  }
  if (x <= 0) {
    throw common::UsageError(s.compute_op + " key '" + s.key + "': field '" + name +
                             "' must be a positive integer, got '" + v + "'");
  }
  return x;
}

// TE's nvte_is_non_tn_fp8_gemm_supported: Blackwell data-centre parts (sm 10x, 11x) and sm >= 130.
bool non_tn_fp8_supported(int sm) { return (sm >= 100 && sm < 120) || sm >= 130; }

}  // namespace

GemmProblem gemm_problem(const Shape& s, int sm) {
  GemmProblem g;
  g.label = s.key;
  g.fp8 = s.compute_op.rfind("fp8_", 0) == 0;
  g.accumulate = text_field(s, "accumulate") == "True";
  if (s.kind == ShapeKind::kGroupedGemm) {
    const int64_t tokens = positive_field(s, "M"), out = positive_field(s, "N"), in = positive_field(s, "K");
    g.groups = positive_field(s, "ng");
    const std::string& stage = text_field(s, "stage");
    if (stage == "fwd") {
      g.m = out, g.n = tokens, g.k = in, g.transa = true;
    } else if (stage == "bwd_grad_act") {
      g.m = in, g.n = tokens, g.k = out;
    } else if (stage == "bwd_grad_w") {
      g.m = in, g.n = out, g.k = tokens, g.transb = true;
      g.out_fp32 = text_field(s, "main_grad_dtype") == "fp32";
    } else {
      throw common::UsageError(s.compute_op + " key '" + s.key + "': stage '" + stage +
                               "' is not fwd, bwd_grad_act or bwd_grad_w");
    }
  } else if (s.kind == ShapeKind::kGemm) {
    const std::string& layout = text_field(s, "layout");
    if (layout.size() != 2 || (layout[0] != 'T' && layout[0] != 'N') || (layout[1] != 'T' && layout[1] != 'N')) {
      throw common::UsageError(s.compute_op + " key '" + s.key + "': layout '" + layout +
                               "' is not two of T and N (TN, NN, NT, TT)");
    }
    g.transa = layout[0] == 'T', g.transb = layout[1] == 'T';
    g.m = positive_field(s, "n");
    g.n = positive_field(s, "b") * positive_field(s, "m");
    g.k = positive_field(s, "k");
    g.out_fp32 = text_field(s, "out_dtype") == "fp32";
  } else {
    throw common::UsageError(s.compute_op + " key '" + s.key + "' is attention, not a GEMM");
  }
  if (g.fp8 && !non_tn_fp8_supported(sm)) g.transa = true, g.transb = false;
  return g;
}

AttentionProblem attention_problem(const Shape& s) {
  if (s.kind != ShapeKind::kSdpFwd && s.kind != ShapeKind::kSdpBwd) {
    throw common::UsageError(s.compute_op + " key '" + s.key + "' is not attention (sdp_fwd or sdp_bwd)");
  }
  AttentionProblem a;
  a.label = s.key;
  a.backward = s.kind == ShapeKind::kSdpBwd;
  a.batch = positive_field(s, "batch");
  a.seq = positive_field(s, "seq_len");
  a.heads = positive_field(s, "head_num");
  a.kv_heads = positive_field(s, "kv_head_num");
  a.d_qk = positive_field(s, "qk_head_dim");
  a.d_v = positive_field(s, "v_head_dim");
  if (a.heads % a.kv_heads != 0) {
    throw common::UsageError(s.compute_op + " key '" + s.key + "': kv_head_num " + std::to_string(a.kv_heads) +
                             " does not divide head_num " + std::to_string(a.heads));
  }
  return a;
}

size_t attention_bytes(const AttentionProblem& a) {
  const size_t q = static_cast<size_t>(a.batch * a.heads * a.seq * a.d_qk);
  const size_t k = static_cast<size_t>(a.batch * a.kv_heads * a.seq * a.d_qk);
  const size_t v = static_cast<size_t>(a.batch * a.kv_heads * a.seq * a.d_v);
  const size_t o = static_cast<size_t>(a.batch * a.heads * a.seq * a.d_v);
  const size_t rows = static_cast<size_t>(a.batch * a.heads * a.seq);
  const size_t forward = 2 * (q + k + v + o) + 4 * rows;
  return a.backward ? forward + 2 * (o + q + k + v) + 4 * rows + 4 * q : forward;
}

double table_tflops(const config::SystemConfig& sys, const std::string& compute_op) {
  auto it = sys.op.find(compute_op);
  return (it != sys.op.end() ? it->second : sys.op.at("default")).tflops;
}

double efficiency_for(double flops, double tflops, double median_us) {
  if (!(flops > 0 && tflops > 0 && median_us > 0) || !std::isfinite(flops * tflops * median_us)) {
    throw common::InternalError("efficiency of " + std::to_string(flops) + " FLOPs at " + std::to_string(tflops) +
                                " TFLOPS in " + std::to_string(median_us) + " us: expected positive finite numbers");
  }
  return flops / (tflops * 1e12 * median_us * 1e-6);
}

}  // namespace simumax::measure
