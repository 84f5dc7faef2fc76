// Machine calibrations fitted from public real runs (docs/accuracy.md), applied by the system's sys_name when a
// system config has no "calibration" of its own.
#pragma once

#include <optional>
#include <string>

#include "engine/config/system_config.hpp"

namespace simumax::config {

struct ShippedCalibration {
  Calibration calibration;
  std::string evidence;  // what it was fitted on, and how well
  std::string fitted_on;  // the folder of ../shared holding the runs it was fitted on ("validation/b200")
};

// Whether the validation case at `case_path` is one of the runs `c` was fitted on (its folder is c.fitted_on):
// its error with the shipped calibration is in-sample.
bool fitted_on_case(const ShippedCalibration& c, const std::string& case_path);

// The calibration we ship for `sys_name`, if any.
std::optional<ShippedCalibration> shipped_calibration(const std::string& sys_name);

}  // namespace simumax::config
