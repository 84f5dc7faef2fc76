// Interval arithmetic over time ranges (µs): union, covered length, and the part of one set another leaves bare.
// What compare needs to turn kernels on several streams into busy, overlapped and exposed time.
#pragma once

#include <utility>
#include <vector>

namespace simumax::report {

using Interval = std::pair<double, double>;  // [start, end)

// The union of `intervals` as sorted, disjoint, non-empty intervals. Touching intervals merge; empty or inverted
// ones are dropped.
std::vector<Interval> merge_intervals(std::vector<Interval> intervals);

// REQUIRES: `merged` came from merge_intervals. Its total length.
double covered_length(const std::vector<Interval>& merged);

// REQUIRES: both came from merge_intervals. The length of `a` not covered by `b` (|a \ b|).
double uncovered_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace simumax::report
