// The calibrated system config that `simumax-sim calibrate` writes: the user's SimuMax system JSON as it was,
// plus our "calibration" key (docs/accuracy.md).
#pragma once

#include <map>
#include <string>

#include "engine/config/system_config.hpp"

namespace simumax::report {

// `system_path`'s JSON with "calibration" set to `c` (its compute_derate and, when set, kernel_floor_us) and
// `note` as its "_note" comment; every other key kept, in order. Throws common::ConfigError when the file cannot
// be read as JSON.
std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note);

// `system_path`'s JSON with accelerator.op.<op>.accurate_efficient_factor[key] = efficiency for each entry (added
// or replaced); every other key and entry kept, in order. Throws common::ConfigError(system_path, pointer, what)
// when the file is not a JSON object or has no accelerator.op.<op> object.
std::string system_with_efficiencies(const std::string& system_path, const std::string& op,
                                     const std::map<std::string, double>& efficiencies);

}  // namespace simumax::report
