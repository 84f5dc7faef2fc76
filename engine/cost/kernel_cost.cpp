#include "engine/cost/kernel_cost.hpp"

#include <algorithm>

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

KernelTime kernel_time(const config::SystemConfig& sys, const model::PassWork& w) {
  KernelTime t;
  if (w.flops != 0) {
    auto it = sys.op.find(w.compute_op);
    const auto& op = it != sys.op.end() ? it->second : sys.op.at("default");
    double eff = op.efficient_factor;
    if (!w.shape_key.empty()) {
      auto hit = op.accurate_efficient_factor.find(w.shape_key);
      if (hit != op.accurate_efficient_factor.end()) {
        eff = hit->second;
        t.table_hit = true;
      }
    }
    t.compute_seconds = w.flops / (op.tflops * common::kTera * eff);
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
