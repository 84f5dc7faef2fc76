// Calibration from real profiler traces (`simumax-sim calibrate --trace`): each shaped GEMM's achieved efficiency
// (achieved FLOP/s / the system's matmul peak), keyed as SimuMax keys its matmul table, so that the system config
// times those shapes as the real GPU ran them. The other kind of evidence (step times) is calibrate.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/config/system_config.hpp"
#include "engine/report/gemm_shape.hpp"
#include "engine/report/kineto_insight.hpp"

namespace simumax::calibrate {

// One matmul table entry learnt from the calls of one shape.
struct GemmEntry {
  std::string key;           // "b=1, m=1024, k=1705, n=512, layout=TN, accumulate=False, out_dtype=fp32"
  report::GemmShape shape;
  std::string pass;          // forward / dgrad / wgrad (layout TN / NN / NT)
  int64_t calls = 0;
  double median_us = 0;      // of the calls' kernel time (kernels of one call summed: a GEMM and its split-K reduce)
  double efficiency = 0;     // flops / (median time x peak)
  std::string source;        // the real op and trace ("aten::addmm in rank3.json.gz")
};

struct TraceEvidence {
  std::vector<GemmEntry> gemm;        // in key order
  int64_t gemm_calls = 0;             // GEMM-class calls seen
  int64_t gemm_calls_unshaped = 0;    // without a shape (no Input Dims, or an op gemm_shape does not know)
  int64_t attention_calls = 0;        // attention-class calls seen (attention needs shapes the trace lacks)
  int64_t traces_without_shapes = 0;  // traces with no Input Dims at all (record_shapes=False)
};

// The SimuMax layout of a real GEMM call: forward ops are TN; in the backward a call whose output has the shape
// of a forward GEMM's weight (k x n, or n x k) is the weight gradient (NT, accumulate), else the input gradient
// (NN). `forward_weights` holds every forward GEMM's (k, n).
std::string layout_of(const report::RealOp& op, const std::vector<std::pair<int64_t, int64_t>>& forward_weights);

// "float" -> "fp32", "c10::BFloat16" -> "bf16", "c10::Half" -> "fp16"; "" when unknown.
std::string dtype_of(const std::string& input_type);

// Adds one trace's ops (TraceInsight::ops, GEMM class; their call_us) to the per-key calls in `calls`.
void add_trace(const std::string& trace, const report::TraceInsight& insight,
               std::map<std::string, GemmEntry>& entries, std::map<std::string, std::vector<double>>& calls,
               TraceEvidence& evidence);

// The entries, each with the median over all its calls and its efficiency against `peak_tflops`.
// REQUIRES: peak_tflops > 0.
TraceEvidence finish(std::map<std::string, GemmEntry> entries, const std::map<std::string, std::vector<double>>& calls,
                     TraceEvidence evidence, double peak_tflops);

}  // namespace simumax::calibrate
