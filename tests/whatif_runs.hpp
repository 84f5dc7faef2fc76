// The what-if report's test runs: the default scenario on the shipped B200 system and on a copy of it with the
// NVLink and InfiniBand bandwidths halved (the default scenario is one node: NVLink carries its DP and PP traffic).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace simumax::tests {

struct WhatIfRuns {
  std::filesystem::path a;  // <root>/full-bandwidth: scenarios/default.json as shipped
  std::filesystem::path b;  // <root>/half-bandwidth: the same scenario, system with half the bandwidths
  std::string error;        // what failed, empty when both runs succeeded
};

// Writes the halved system and its scenario under `root` (removed first) and runs both with `extra`
// (e.g. {"--trace", "--memory"}). REQUIRES: the working directory is the source root.
WhatIfRuns run_default_on_two_systems(const std::filesystem::path& root, const std::vector<std::string>& extra);

}  // namespace simumax::tests
