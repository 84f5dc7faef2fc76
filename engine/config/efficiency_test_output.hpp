// SimuMax's own efficiency-test output (simu_tools/efficency_test: gemm_efficiency.json,
// grouped_gemm_efficiency.json, fa_efficiency_test.json): {"<compute op>": {"tflops", "efficient_factor",
// "accurate_efficient_factor": {key: efficiency}}}, read for simumax-measure's import.
#pragma once

#include <map>
#include <string>

namespace simumax::config {

struct EfficiencyTable {
  double tflops = 0;  // the peak its efficiencies are relative to
  std::map<std::string, double> efficiencies;
};

// Compute op -> its table. Throws common::ConfigError(path, pointer, what) when the file is not such an object,
// a table has no positive tflops, or an efficiency is not a positive number.
std::map<std::string, EfficiencyTable> read_efficiency_test_output(const std::string& path);

}  // namespace simumax::config
