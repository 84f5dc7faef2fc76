// Whether a measured figure meets its target, said in words: a ratio alone read the same for "at most" and
// "at least" targets, so a shortfall looked like a pass (issue #14).
#pragma once

#include <cstdio>
#include <string>

namespace simumax::common {

// "target <= 20       met    (ratio 0.450, lower is better)" or "... MISSED (ratio 1.230, lower is better)".
// `at_most`: the value must not exceed the target (a time); else it must reach it (a rate).
inline std::string target_verdict(double value, double target, bool at_most) {
  const bool met = at_most ? value <= target : value >= target;
  char buf[128];
  std::snprintf(buf, sizeof buf, "target %s %-8g %-6s (ratio %.3f, %s is better)", at_most ? "<=" : ">=", target,
                met ? "met" : "MISSED", target != 0 ? value / target : 0.0, at_most ? "lower" : "higher");
  return buf;
}

}  // namespace simumax::common
