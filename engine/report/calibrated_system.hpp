// The calibrated system config that `simumax-sim calibrate` writes: the user's SimuMax system JSON as it was,
// plus our "calibration" key (docs/accuracy.md).
#pragma once

#include <map>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/system_config.hpp"

namespace simumax::report {

// `system_path`'s JSON with "calibration" set to `c` (its compute_derate and, when set, kernel_floor_us) and
// `note` as its "_note" comment, and, when `host` is given, "host" set to it (launch_us, op_us, cpu_speed); every
// other key kept, in order. Throws common::ConfigError when the file cannot be read as JSON.
std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note, const std::optional<config::HostConfig>& host = {});
// The same from the system config's JSON text (`label` names it in errors): a config learnt in memory
// (learnt_system_json) gets its calibration byte for byte as when it was written and read back.
std::string calibrated_system_json_text(const std::string& system_text, const std::string& label,
                                        const config::Calibration& c, const std::string& note,
                                        const std::optional<config::HostConfig>& host = {});
// `system_text`'s JSON with "host" set to `host` (the launch time a trace measured), every other key kept.
std::string system_with_host_json(const std::string& system_text, const std::string& label,
                                  const config::HostConfig& host);

// `system_path`'s JSON with accelerator.op.<op>.accurate_efficient_factor[key] = efficiency for each entry (added
// or replaced); every other key and entry kept, in order. Throws common::ConfigError(system_path, pointer, what)
// when the file is not a JSON object or has no accelerator.op.<op> object.
std::string system_with_efficiencies(const std::string& system_path, const std::string& op,
                                     const std::map<std::string, double>& efficiencies);

// A network op's learnt efficiency and fixed latencies (calibrate --trace's collectives).
struct NetworkOpUpdate {
  std::string net, op;
  double efficient_factor = 0;
  double latency_us = 0;
  std::map<int64_t, double> fixed_latency_us_by_comm_num;
};

// `system_path`'s JSON with each accelerator.op.<op>.accurate_efficient_factor[key] of `tables` ({op: {key: eff}})
// set, each network op's efficient_factor, latency_us and fixed_latency_us_by_comm_num[group] set, and each group
// size's curve of `curves` written as measured_collectives (put_measured_collectives: the caller passes the whole
// merged curve of each group size it learnt); every other key and entry kept, in order. Throws
// common::ConfigError(system_path, pointer, what) when the file is not a JSON object or lacks an object an update
// goes into.
std::string learnt_system_json(const std::string& system_path,
                               const std::map<std::string, std::map<std::string, double>>& tables,
                               const std::vector<NetworkOpUpdate>& networks,
                               const config::MeasuredCollectives& curves = {});

}  // namespace simumax::report
