// What simumax-measure records and writes: every raw measurement (CSV), the fits, and the system config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/measure/net_fit.hpp"
#include "engine/measure/nccl_tests.hpp"
#include "engine/measure/shape_list.hpp"
#include "engine/report/measured_system.hpp"

namespace simumax::measure {

// One raw measurement, a row of measurements.csv.
struct RawMeasurement {
  std::string kind;        // gemm, grouped_gemm, sdp_fwd, sdp_bwd, hbm_copy, nccl, table (an imported efficiency)
  std::string name;        // compute op, collective, or "copy"
  std::string key;         // shape key; "<tier> n=<ranks>" for a collective
  int64_t bytes = 0;       // collectives and copies
  double flops = 0;        // compute
  double median_us = 0;    // 0 for an imported efficiency
  double min_us = 0, max_us = 0;
  int repetitions = 0;
  double value = 0;        // efficiency (compute), GiB/s (copy), busbw GB/s (collective)
  std::string source;      // "measured" or "<file>:<line>"
};

// measurements.csv: a header and one line per measurement, in the given order (deterministic).
std::string measurements_csv(const std::vector<RawMeasurement>& rows);

// An nccl-tests output and the network tier it measured.
struct NcclInput {
  std::string path;
  std::string tier;
  NcclTestsOptions options;
};

struct ImportInputs {
  std::string base_system;                     // the system config to merge into
  std::vector<NcclInput> nccl;                 // fitted per (tier, collective)
  std::vector<std::string> efficiency_files;   // SimuMax efficiency-test outputs
  int64_t fit_min_bytes = 0;                   // smaller messages are recorded but not fitted
};

struct Measured {
  report::MeasuredSystem system;
  std::vector<NetFit> fits;
  std::vector<RawMeasurement> raw;
};

// Reads every input, fits each (tier, collective) and rescales imported efficiencies to the base system's peak
// (the same time at a different tflops). Throws common::ConfigError / common::UsageError for bad input.
Measured import_measurements(const ImportInputs& in);

// A compute shape (GEMM, grouped GEMM, attention) timed on the GPU: the efficiency that makes the engine charge
// `median_us` for the shape's FLOPs at `sys`'s peak for its table (efficiency_for over table_tflops) goes into
// m.system.efficiencies, and a "measured" row into m.raw. Returns the efficiency.
double add_compute_timing(const config::SystemConfig& sys, const Shape& s, double median_us, double min_us,
                          double max_us, int repetitions, Measured& m);

// A compute shape that was not timed: a row "not timed: <why>" in m.raw, no efficiency (the engine keeps its
// fallback for that key).
void add_untimed(const Shape& s, const std::string& why, Measured& m);

// Records `fit` in `s`: the tier's op entry and its measured curve.
void add_fit(report::MeasuredSystem& s, const NetFit& fit);

// One line per fit: tier, collective, efficiency, latency, points, worst time error.
std::string fit_report(const std::vector<NetFit>& fits);

// Writes <out_dir>/system.json (measured_system_json over `base_system`) and <out_dir>/measurements.csv, each
// through a temporary file renamed into place. Creates out_dir. Throws common::UsageError when it cannot.
void write_outputs(const std::string& out_dir, const std::string& base_system, const Measured& m);

}  // namespace simumax::measure
