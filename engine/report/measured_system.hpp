// The system config simumax-measure writes (issue #18, docs/measure.md): a SimuMax system JSON with measured
// efficiency tables, network fits and memory bandwidth merged in, plus our "_measured" provenance comment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/config/system_config.hpp"

namespace simumax::report {

struct MeasuredNetOp {
  std::string tier;  // networks.<tier>
  std::string coll;  // all_reduce, all_gather, reduce_scatter, all2all, p2p
  double efficient_factor = 0;
  double latency_us = 0;
};

struct MeasuredSystem {
  // accelerator.op.<compute op>.accurate_efficient_factor[key] = efficiency
  std::map<std::string, std::map<std::string, double>> efficiencies;
  std::vector<MeasuredNetOp> net_ops;
  config::MeasuredCollectives curves;  // our top-level "measured_collectives" (system_config.hpp)
  std::optional<double> hbm_gibps;  // measured copy bandwidth: accelerator.bandwidth.default efficient_factor
  std::vector<std::string> provenance;  // lines of the "_measured" comment (tool, GPU, clocks, sources)
};

// `base_system_path`'s JSON with `m` merged in, every other key kept in order:
// - a compute op table missing from the base is added with "default"'s tflops and efficient_factor; a table
//   whose efficient_factor is 0 (the B200 fp8 tables) gets the mean of its measured entries;
// - networks.<tier>.op.<coll> gets efficient_factor, latency_us and fixed_latency_us = 0 (its
//   fixed_latency_us_by_comm_num removed: the fit already holds the latency);
// - accelerator.bandwidth.default.efficient_factor = hbm_gibps / its gbps;
// - measured_collectives.<tier>.<coll>.<group size> replaced by each curve of `curves`.
// Throws common::ConfigError(base_system_path, pointer, what) when the base is not a JSON object, lacks
// accelerator.op.default / accelerator.bandwidth.default, or lacks a fitted tier or op.
std::string measured_system_json(const std::string& base_system_path, const MeasuredSystem& m);

// Sets measured_collectives.<tier>.<coll>."<group size>" of the system JSON `system` to each curve of `curves`
// (replacing that group size's curve; every other tier, collective and group size kept). The one writer of the
// key: simumax-measure's system.json and calibrate --trace's config both go through it.
void put_measured_collectives(nlohmann::ordered_json& system, const config::MeasuredCollectives& curves);

}  // namespace simumax::report
