// Calibration: fit a machine's small set of named parameters (config::Calibration and the host's
// config::HostConfig) to real step times of the user's own runs, and measure how well the fit generalises (leave
// one family of configurations out).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::calibrate {

// One real run: what to simulate and what was measured.
struct Case {
  std::string name;
  std::string source;  // the file it came from (for messages)
  std::string family;  // case_family(scenario)
  config::Scenario scenario;
  double real_ms = 0;
};

// The family a configuration belongs to, for leave-one-family-out: "moe" (an MoE model), "cp" (cp > 1),
// "pp" (pp > 1), else "tp<N>" (dense, one pipeline stage, no CP).
std::string case_family(const config::Scenario& s);

// What a fit varies: the system's "calibration" and its "host" (docs/host.md).
struct Machine {
  config::Calibration calibration;
  config::HostConfig host;
  bool operator==(const Machine&) const = default;
};

// The parameters `fit` may vary; each has a physical range outside which a fit is refused.
enum class Param { kComputeDerate, kKernelFloorUs, kLaunchUs, kOpUs, kCpuSpeed };
const char* to_string(Param p);
bool is_host(Param p);  // launch_us, op_us, cpu_speed: written as the system's "host"
// Parses "compute_derate" / "kernel_floor_us" / "launch_us" / "op_us" / "cpu_speed". Throws common::UsageError
// listing the valid names.
Param parse_param(const std::string& name);
// Throws common::UsageError when `params` cannot be told apart by step times: cpu_speed divides both launch_us and
// op_us, so at most two of the three.
void check_identifiable(const std::vector<Param>& params);

// The value of `p` in `m`; an absent floor is `fallback_floor_us` (the system's "default" bandwidth latency).
double value_of(const Machine& m, Param p, double fallback_floor_us);

struct Range {
  double lo, hi;
};
Range physical_range(Param p);

// The signed relative error (pred - real) / real of every case with `m` as the system's calibration and host
// (megatron fidelity, fast executor). Throws common::InternalError when a prediction is not a positive finite time.
std::vector<double> relative_errors(const std::vector<Case>& cases, const Machine& m);

struct Fit {
  Machine machine;
  std::vector<double> errors;  // per case, with `calibration`
  int evaluations = 0;         // objective evaluations (each simulates every case)
};

// Least squares over the relative errors of `cases`, varying `params` from `start` (the others stay as in
// `start`): Nelder-Mead, deterministic. The result may lie outside physical_range; the caller checks.
// REQUIRES: !cases.empty(), !params.empty().
Fit fit(const std::vector<Case>& cases, const std::vector<Param>& params, const Machine& start);

// For each family: fit on the cases of the other families, predict the family's cases. The errors are in the
// order of `cases`. REQUIRES: at least two families.
std::vector<double> leave_one_family_out(const std::vector<Case>& cases, const std::vector<Param>& params,
                                         const Machine& start);

double mape(const std::vector<double>& errors);
double mean(const std::vector<double>& errors);
double worst(const std::vector<double>& errors);  // the error of largest magnitude, signed

}  // namespace simumax::calibrate
