#include "engine/calibrate/trace_evidence.hpp"

#include <algorithm>
#include <filesystem>

namespace simumax::calibrate {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool is_gemm(const report::RealOp& op) { return op.cls == "gemm" || op.cls.starts_with("gemm/"); }

std::string key_of(const report::GemmShape& s, const std::string& layout, const std::string& dtype) {
  return "b=" + std::to_string(s.b) + ", m=" + std::to_string(s.m) + ", k=" + std::to_string(s.k) +
         ", n=" + std::to_string(s.n) + ", layout=" + layout + ", accumulate=" + (layout == "NT" ? "True" : "False") +
         ", out_dtype=" + dtype;
}

const char* pass_of(const std::string& layout) {
  return layout == "TN" ? "forward" : layout == "NN" ? "dgrad" : "wgrad";
}

}  // namespace

std::string dtype_of(const std::string& t) {
  if (t == "float") return "fp32";
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "fp16";
  if (t == "double") return "fp64";
  return "";
}

std::string layout_of(const report::RealOp& op, const std::vector<std::pair<int64_t, int64_t>>& forward_weights) {
  if (op.pass != "backward" || !op.gemm) return "TN";
  const std::pair<int64_t, int64_t> out{op.gemm->m, op.gemm->n};
  for (const auto& [k, n] : forward_weights) {
    if (op.gemm->b == 1 && (out == std::pair{k, n} || out == std::pair{n, k})) return "NT";
  }
  return "NN";
}

void add_trace(const std::string& trace, const report::TraceInsight& insight,
               std::map<std::string, GemmEntry>& entries, std::map<std::string, std::vector<double>>& calls,
               TraceEvidence& evidence) {
  if (!insight.shapes_recorded) ++evidence.traces_without_shapes;
  std::vector<std::pair<int64_t, int64_t>> weights;
  for (const auto& op : insight.ops) {
    if (is_gemm(op) && op.gemm && op.pass == "forward") weights.emplace_back(op.gemm->k, op.gemm->n);
  }
  const std::string file = std::filesystem::path(trace).filename().string();
  for (const auto& op : insight.ops) {
    if (op.cls == "attention" || op.cls.starts_with("attention/")) evidence.attention_calls += op.calls;
    if (!is_gemm(op) || op.pass == "optimizer") continue;
    evidence.gemm_calls += op.calls;
    const std::string dtype = dtype_of(op.dtype);
    if (!op.gemm || dtype.empty()) {
      evidence.gemm_calls_unshaped += op.calls;
      continue;
    }
    const std::string layout = layout_of(op, weights);
    const std::string key = key_of(*op.gemm, layout, dtype);
    GemmEntry& e = entries[key];
    if (e.key.empty()) {
      e.key = key;
      e.shape = *op.gemm;
      e.pass = pass_of(layout);
      e.source = op.op + " in " + file;
    }
    e.calls += op.calls;
    auto& list = calls[key];
    list.insert(list.end(), op.call_us.begin(), op.call_us.end());
  }
}

TraceEvidence finish(std::map<std::string, GemmEntry> entries, const std::map<std::string, std::vector<double>>& calls,
                     TraceEvidence evidence, double peak_tflops) {
  for (auto& [key, e] : entries) {
    e.median_us = median_of(calls.at(key));
    if (!(e.median_us > 0)) {  // zero-length kernels (a profiler artefact) time nothing
      evidence.gemm_calls_unshaped += e.calls;
      continue;
    }
    e.efficiency = e.shape.flops() / (e.median_us * 1e-6) / (peak_tflops * 1e12);
    evidence.gemm.push_back(e);
  }
  return evidence;
}

}  // namespace simumax::calibrate
