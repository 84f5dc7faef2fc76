#include "engine/cost/kernel_cost.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "engine/common/units.hpp"

namespace simumax::cost {

namespace {

const config::BandwidthConfig& bandwidth_entry(const config::SystemConfig& sys, const std::string& name) {
  auto it = sys.bandwidth.find(name);
  return it != sys.bandwidth.end() ? it->second : sys.bandwidth.at("default");
}

}  // namespace

double memory_seconds(const config::SystemConfig& sys, const std::string& name, double bytes) {
  if (bytes == 0) return 0;
  const auto& bw = bandwidth_entry(sys, name);
  return bytes / (bw.gbps * common::kGiB * bw.efficient_factor) + bw.latency_us * 1e-6;
}

double extra_kernel_seconds(const config::SystemConfig& sys, double bytes) {
  const auto& bw = bandwidth_entry(sys, "default");
  const double floor_us = sys.calibration.kernel_floor_us.value_or(bw.latency_us);
  return bytes / (bw.gbps * common::kGiB * bw.efficient_factor) + floor_us * 1e-6;
}

std::optional<double> nearest_shape_efficiency(const config::ComputeOpConfig& op, const std::string& key) {
  std::string kind;
  std::vector<double> q;
  if (!config::parse_shape_key(key, kind, q)) return std::nullopt;
  const auto same_kind = op.shapes.find(kind);
  if (same_kind == op.shapes.end()) return std::nullopt;
  constexpr size_t kNeighbours = 4;
  std::array<std::pair<double, double>, kNeighbours> best{};  // (squared distance, efficiency), nearest first
  size_t found = 0;
  for (const auto& p : same_kind->second) {
    double d2 = 0;
    for (size_t i = 0; i < q.size(); ++i) d2 += (p.log2_dims[i] - q[i]) * (p.log2_dims[i] - q[i]);
    if (found < kNeighbours) {
      best[found++] = {d2, p.efficiency};
    } else if (d2 < best[kNeighbours - 1].first) {
      best[kNeighbours - 1] = {d2, p.efficiency};
    } else {
      continue;
    }
    // Keep the list sorted; ties keep table (key) order, so the result is deterministic.
    std::stable_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(found),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (found == 0) return std::nullopt;
  double wsum = 0, esum = 0;
  for (size_t i = 0; i < found; ++i) {
    const double w = 1.0 / (best[i].first + 1e-3);  // log2 units: 1e-3 ~ a 2 % difference in one dimension
    wsum += w;
    esum += w * best[i].second;
  }
  return esum / wsum;
}

namespace {

// A shape's efficiency in `op`: its measured entry, else (megatron) the nearest measured shapes, else the flat
// factor. `t` records which.
double shape_efficiency(const config::ComputeOpConfig& op, const std::string& key, config::Fidelity fidelity,
                        KernelTime& t) {
  if (key.empty()) return op.efficient_factor;
  if (auto hit = op.accurate_efficient_factor.find(key); hit != op.accurate_efficient_factor.end()) {
    t.table_hit = true;
    return hit->second;
  }
  if (fidelity == config::Fidelity::kMegatron) {
    if (auto near = nearest_shape_efficiency(op, key)) {
      t.interpolated = true;
      return *near;
    }
  }
  return op.efficient_factor;
}

// An fp8/fp4 entry with nothing measured (efficient_factor 0, no shapes: every datasheet machine) at megatron
// fidelity: the GEMM reaches the fraction of its own peak that the bf16 GEMM of its shape reaches of the bf16
// peak (docs/low-precision.md). The bf16 entry's name and key drop the precision prefix and dtype: `bf16_key`
// gets the key when an entry is returned.
const config::ComputeOpConfig* unmeasured_low_precision(const config::SystemConfig& sys, const std::string& name,
                                                        const config::ComputeOpConfig& op, const std::string& key,
                                                        std::string& bf16_key) {
  if (op.efficient_factor > 0 || !op.accurate_efficient_factor.empty() || !config::is_low_precision_op(name)) {
    return nullptr;
  }
  const auto bf16 = sys.op.find(name.substr(name.find('_') + 1));
  if (bf16 == sys.op.end()) return nullptr;
  bf16_key = key;
  if (const size_t at = bf16_key.find(", dtype=fp8"); at != std::string::npos) {
    bf16_key.replace(at, 11, ", dtype=bf16");
  }
  return &bf16->second;
}

}  // namespace

KernelTime kernel_time(const config::SystemConfig& sys, const model::PassWork& w, config::Fidelity fidelity) {
  KernelTime t;
  if (w.flops != 0) {
    auto it = sys.op.find(w.compute_op);
    const auto& op = it != sys.op.end() ? it->second : sys.op.at("default");
    std::string bf16_key;
    const config::ComputeOpConfig* like = fidelity == config::Fidelity::kMegatron && it != sys.op.end()
                                              ? unmeasured_low_precision(sys, w.compute_op, op, w.shape_key, bf16_key)
                                              : nullptr;
    const double eff = like != nullptr ? shape_efficiency(*like, bf16_key, fidelity, t)
                                       : shape_efficiency(op, w.shape_key, fidelity, t);
    t.compute_seconds = w.flops / (op.tflops * common::kTera * eff);
    if (fidelity == config::Fidelity::kMegatron) t.compute_seconds /= 1.0 - sys.calibration.compute_derate;
  }
  for (double b : w.mem_bytes) t.memory_seconds += memory_seconds(sys, w.compute_op, b);
  if (sys.mode == config::AcceleratorMode::kOnlyCompute) {
    t.seconds = t.compute_seconds != 0 ? t.compute_seconds : t.memory_seconds;
  } else {
    t.seconds = std::max(t.compute_seconds, t.memory_seconds);
  }
  return t;
}

}  // namespace simumax::cost
