// The machine's kernel model: an op pass's time from the efficiency tables, memory bandwidth and latency.
#pragma once

#include <optional>
#include <string>

#include "engine/config/strategy_config.hpp"
#include "engine/config/system_config.hpp"
#include "engine/model/op.hpp"

namespace simumax::cost {

struct KernelTime {
  double seconds = 0;
  double compute_seconds = 0;  // FLOPs at the table's efficiency
  double memory_seconds = 0;   // bytes at the bandwidth entry's efficiency, plus its latency per call
  bool table_hit = false;      // the exact shape key was found in accurate_efficient_factor
  bool interpolated = false;   // a miss whose efficiency came from the nearest measured shapes (megatron)
};

// SimuMax's compute_op_accuracy_time / compute_mem_access_time / compute_end2end_time for one pass. At megatron
// fidelity a shape missing from the table takes the efficiency of the nearest measured shapes of its kind
// (nearest_shape_efficiency) instead of the flat efficient_factor, and FLOP time is divided by
// 1 - calibration.compute_derate.
// REQUIRES: sys.op and sys.bandwidth contain "default".
KernelTime kernel_time(const config::SystemConfig& sys, const model::PassWork& w, config::Fidelity fidelity);

// Memory-bound time of `bytes` through the bandwidth entry `name` (falling back to "default").
double memory_seconds(const config::SystemConfig& sys, const std::string& name, double bytes);

// One kernel SimuMax omits (megatron fidelity): `bytes` at the "default" bandwidth, plus the per-kernel floor
// (calibration.kernel_floor_us, else the "default" entry's latency_us).
double extra_kernel_seconds(const config::SystemConfig& sys, double bytes);

// The efficiency of an unmeasured shape from the table's shapes of the same kind (equal non-numeric fields):
// inverse-distance weighting, in log2 space of the numeric fields, of the (up to) four nearest. nullopt when the
// key does not parse or no measured shape has its kind.
std::optional<double> nearest_shape_efficiency(const config::ComputeOpConfig& op, const std::string& key);

}  // namespace simumax::cost
