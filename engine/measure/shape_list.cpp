#include "engine/measure/shape_list.hpp"

#include <algorithm>
#include <tuple>

#include "engine/common/error.hpp"
#include "engine/common/split_text.hpp"
#include "engine/common/logging.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::measure {

namespace {

ShapeKind kind_of(const std::string& compute_op) {
  if (compute_op == "sdp_fwd") return ShapeKind::kSdpFwd;
  if (compute_op == "sdp_bwd") return ShapeKind::kSdpBwd;
  if (compute_op.find("group_matmul") != std::string::npos) return ShapeKind::kGroupedGemm;
  return ShapeKind::kGemm;
}

Shape make_shape(const std::string& compute_op, const std::string& key, double flops) {
  Shape s;
  s.compute_op = compute_op;
  s.key = key;
  s.kind = kind_of(compute_op);
  s.flops = flops;
  for (auto& [name, value] : key_fields(key)) s.fields[name] = value;
  return s;
}

bool key_less(const Shape& a, const Shape& b) { return std::tie(a.compute_op, a.key) < std::tie(b.compute_op, b.key); }

// The key formats of engine/model (OpBuilder::linear_keys, grouped_key, core_attention), for the sweep.
std::string gemm_key(int64_t b, int64_t m, int64_t k, int64_t n, const char* layout, bool accumulate,
                     const char* out_dtype) {
  return "b=" + std::to_string(b) + ", m=" + std::to_string(m) + ", k=" + std::to_string(k) + ", n=" +
         std::to_string(n) + ", layout=" + layout + ", accumulate=" + (accumulate ? "True" : "False") +
         ", out_dtype=" + out_dtype;
}

std::string grouped_key(int64_t ng, int64_t m, int64_t n, int64_t k, bool fp8, int pass) {
  static const char* kStage[] = {
      ", stage=fwd, grad=False, accumulate=False, use_split_accumulator=False, single_output=True",
      ", stage=bwd_grad_act, grad=True, accumulate=False, use_split_accumulator=True, single_output=False",
      ", stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, single_output=False"};
  return "ng=" + std::to_string(ng) + ", M=" + std::to_string(m) + ", N=" + std::to_string(n) + ", K=" +
         std::to_string(k) + ", dtype=" + (fp8 ? "fp8" : "bf16") + ", out_dtype=bf16, main_grad_dtype=fp32" +
         kStage[pass];
}

std::string sdp_key(int64_t b, int64_t s, int64_t h, int64_t hkv, int64_t d) {
  return "batch=" + std::to_string(b) + ", seq_len=" + std::to_string(s) + ", head_num=" + std::to_string(h) +
         ", kv_head_num=" + std::to_string(hkv) + ", qk_head_dim=" + std::to_string(d) +
         ", v_head_dim=" + std::to_string(d) + ", qkv_contiguous=True";
}

}  // namespace

const char* to_string(ShapeKind k) {
  switch (k) {
    case ShapeKind::kGemm: return "gemm";
    case ShapeKind::kGroupedGemm: return "grouped_gemm";
    case ShapeKind::kSdpFwd: return "sdp_fwd";
    case ShapeKind::kSdpBwd: return "sdp_bwd";
  }
  return "?";
}

int64_t Shape::field(const std::string& name) const {
  auto it = fields.find(name);
  if (it == fields.end()) throw common::InternalError("shape key '" + key + "' has no field " + name);
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    throw common::InternalError("shape key '" + key + "': field " + name + " is not an integer");
  }
}

std::vector<std::pair<std::string, std::string>> key_fields(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view piece : common::split(key, ',')) {
    std::string part(piece);
    const size_t first = part.find_first_not_of(' ');
    part = first == std::string::npos ? "" : part.substr(first);
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw common::UsageError("shape key '" + key + "': expected name=value parts separated by ', ', got '" +
                               part + "'");
    }
    out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
  }
  return out;
}

std::vector<Shape> scenario_shapes(const config::Scenario& s) {
  const model::StepModel m = model::build_step_model(s);
  std::map<std::pair<std::string, std::string>, double> flops;
  for (const auto& chunk : m.chunks) {
    for (const auto& blk : chunk.blocks) {
      for (const auto& op : *blk.ops) {
        for (const auto& w : op.work) {
          // The lookups of cost::kernel_time (and summary's miss list): a key, and FLOPs to time.
          if (w.shape_key.empty() || w.flops == 0) continue;
          auto [it, added] = flops.emplace(std::make_pair(w.compute_op, w.shape_key), w.flops);
          if (!added && it->second != w.flops) {
            // One efficiency cannot give both ops their measured time; the first op's FLOPs are kept.
            common::logger("measure")->warn("{} key '{}' is charged {} FLOPs by one op and {} by another; the "
                                            "efficiency is computed with the first",
                                            w.compute_op, w.shape_key, it->second, w.flops);
          }
        }
      }
    }
  }
  std::vector<Shape> out;
  for (const auto& [op_key, f] : flops) out.push_back(make_shape(op_key.first, op_key.second, f));
  return out;  // std::map order: by compute op, then key
}

std::vector<Shape> standard_sweep(bool fp8) {
  static const int64_t kDims[] = {1024, 2048, 4096, 8192, 16384};
  std::vector<Shape> out;
  for (const char* op : {"matmul", "fp8_matmul"}) {
    if (std::string(op) == "fp8_matmul" && !fp8) continue;
    for (int64_t m : kDims) {
      for (int64_t k : kDims) {
        for (int64_t n : kDims) {
          const double f = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
          out.push_back(make_shape(op, gemm_key(1, m, k, n, "TN", false, "bf16"), f));
          out.push_back(make_shape(op, gemm_key(1, m, n, k, "NN", false, "bf16"), f));
          out.push_back(make_shape(op, gemm_key(1, n, m, k, "NT", true, "fp32"), f));
        }
      }
    }
  }
  for (const char* op : {"group_matmul", "fp8_group_matmul"}) {
    const bool is_fp8 = std::string(op) == "fp8_group_matmul";
    if (is_fp8 && !fp8) continue;
    for (int64_t m : {1024, 4096, 16384}) {
      for (int64_t n : {1024, 2048, 4096}) {
        for (int64_t k : {2048, 4096, 7168}) {
          const double f = 8 * 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
          for (int p = 0; p < 3; ++p) out.push_back(make_shape(op, grouped_key(8, m, n, k, is_fp8, p), f));
        }
      }
    }
  }
  for (int64_t seq : {2048, 4096, 8192, 16384}) {
    for (int64_t h : {8, 16, 32, 64}) {
      for (int64_t hkv : {int64_t{8}, h}) {
        if (hkv > h) continue;
        // engine/model core_attention: base = 2*b*h*d*s^2; forward 2*base, flash backward 5*base.
        const double base = 2.0 * static_cast<double>(h) * 128 * static_cast<double>(seq) * static_cast<double>(seq);
        out.push_back(make_shape("sdp_fwd", sdp_key(1, seq, h, hkv, 128), 2 * base));
        out.push_back(make_shape("sdp_bwd", sdp_key(1, seq, h, hkv, 128), 5 * base));
      }
    }
  }
  std::sort(out.begin(), out.end(), key_less);
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Shape& a, const Shape& b) { return a.compute_op == b.compute_op && a.key == b.key; }),
            out.end());
  return out;
}

std::vector<Shape> merge_shapes(const std::vector<Shape>& a, const std::vector<Shape>& b) {
  std::map<std::pair<std::string, std::string>, Shape> all;
  for (const auto& s : b) all[{s.compute_op, s.key}] = s;
  for (const auto& s : a) all[{s.compute_op, s.key}] = s;
  std::vector<Shape> out;
  for (auto& [k, s] : all) out.push_back(std::move(s));
  return out;
}

config::SystemConfig with_table_entries(const config::SystemConfig& sys, const std::vector<Shape>& shapes,
                                        double efficiency) {
  config::SystemConfig out = sys;
  for (const auto& s : shapes) {
    auto [it, added] = out.op.try_emplace(s.compute_op);
    if (added) {
      it->second.tflops = out.op.at("default").tflops;
      it->second.efficient_factor = out.op.at("default").efficient_factor;
    }
    it->second.accurate_efficient_factor[s.key] = efficiency;
    std::string kind;
    std::vector<double> dims;
    if (config::parse_shape_key(s.key, kind, dims)) it->second.shapes[kind].push_back({dims, efficiency});
  }
  return out;
}

}  // namespace simumax::measure
