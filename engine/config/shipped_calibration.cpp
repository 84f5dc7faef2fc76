#include "engine/config/shipped_calibration.hpp"

#include <filesystem>

namespace simumax::config {

std::optional<ShippedCalibration> shipped_calibration(const std::string& sys_name) {
  auto make = [](double derate, double floor_us, const char* evidence, const char* fitted_on) {
    ShippedCalibration s;
    s.calibration.compute_derate = derate;
    s.calibration.kernel_floor_us = floor_us;
    s.evidence = evidence;
    s.fitted_on = fitted_on;
    return s;
  };
  // `simumax-sim calibrate ../shared/validation/b200`: 22 real runs (Megatron-LM + TE 2.11, one 8x B200 node).
  if (sys_name == "b200_bf16_ceperm") {
    return make(0.0515, 12.09,
                "fitted on 22 public B200 runs: time MAPE 2.18 % (3.72 % uncalibrated), 2.88 % with each family "
                "of configurations left out",
                "validation/b200");
  }
  // `simumax-sim calibrate ../shared/validation/a100`: 12 runs on one 8x A100-PCIe node, whose real times are
  // derived from SimuMax's published errors.
  if (sys_name == "a100_pcie_bf16") {
    return make(0.0038, 0.0,
                "fitted on 12 public A100-PCIe runs: time MAPE 1.46 % (2.75 % uncalibrated), 2.00 % with each "
                "family of configurations left out",
                "validation/a100");
  }
  return std::nullopt;
}

bool fitted_on_case(const ShippedCalibration& c, const std::string& case_path) {
  const std::string folder = std::filesystem::absolute(case_path).lexically_normal().parent_path().generic_string();
  const std::string tail = "/" + c.fitted_on;
  return !c.fitted_on.empty() && folder.size() >= tail.size() &&
         folder.compare(folder.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace simumax::config
