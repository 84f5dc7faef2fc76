// The grid lines each parity test covers, and the lines excluded on purpose (docs/simumax-differences.md).
#pragma once

#include <string>
#include <vector>

#include "engine/config/validation_case.hpp"
#include "engine/report/summary.hpp"

namespace simumax::tests {

// Dense lines of ../shared/reference/simumax_grid.jsonl without recompute, VPP, CP or FP8.
std::vector<config::GridCase> dense_parity_lines();

// Non-empty when our memory differs from SimuMax's on purpose for this line (the reason, with the doc entry).
std::string memory_difference_reason(const config::GridCase& gc);

// Our peak allocated bytes for SimuMax's stage key (first_stage / middle_stage / last_stage).
double stage_peak(const report::Summary& s, const std::string& stage_key);

// A gtest-safe name for a grid id.
std::string test_name(const std::string& id);

}  // namespace simumax::tests
