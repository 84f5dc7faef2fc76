// The machine's kernel model: an op pass's time from the efficiency tables, memory bandwidth and latency.
#pragma once

#include "engine/config/system_config.hpp"
#include "engine/model/op.hpp"

namespace simumax::cost {

struct KernelTime {
  double seconds = 0;
  double compute_seconds = 0;  // FLOPs at the table's efficiency
  double memory_seconds = 0;   // bytes at the bandwidth entry's efficiency, plus its latency per call
  bool table_hit = false;      // the exact shape key was found in accurate_efficient_factor
};

// SimuMax's compute_op_accuracy_time / compute_mem_access_time / compute_end2end_time for one pass.
// REQUIRES: sys.op and sys.bandwidth contain "default".
KernelTime kernel_time(const config::SystemConfig& sys, const model::PassWork& w);

// Memory-bound time of `bytes` through the bandwidth entry `name` (falling back to "default").
double memory_seconds(const config::SystemConfig& sys, const std::string& name, double bytes);

}  // namespace simumax::cost
