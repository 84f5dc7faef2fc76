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
};

// The calibration we ship for `sys_name`, if any.
std::optional<ShippedCalibration> shipped_calibration(const std::string& sys_name);

}  // namespace simumax::config
