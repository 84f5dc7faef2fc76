// Helpers of the platform tests: a B200-like system, text edits that find their line, the checker's error as a
// string, and SimGrid loads (routes, mutants) run in child processes (platform_test_util.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/config/system_config.hpp"
#include "engine/platform/platform_check.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/subprocess_test_util.hpp"
#include "engine/platform/temp_file_test_util.hpp"

namespace simumax::platform::testing {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

inline config::SystemConfig b200_like() {
  config::SystemConfig s;
  s.sys_name = "b200";
  s.num_per_node = 8;
  s.networks["high_intra_node"].bandwidth = {900, 1, 35, 0, {}};
  s.networks["low_intra_node"].bandwidth = {900, 1, 130, 0, {}};
  s.networks["inter_node"].bandwidth = {200, 1, 35, 0, {}};
  return s;
}

inline PlatformSpec spec_of(int64_t nodes) { return platform_from_system(b200_like(), nodes * 8); }

inline int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The ConfigError text of checking `text`, or "" if it passes.
inline std::string check_error(const std::string& text, int64_t world, int64_t gpn = 8) {
  try {
    check_platform_text(text, "p.xml", world, gpn);
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "";
}

using HostPairs = std::vector<std::pair<std::string, std::string>>;

// Loads `path` in SimGrid in a child process and returns, for each pair, "link@GiBps link@GiBps ..." of its
// route (pairs separated by " | "), or "FAILED: ..." (an exception, or SimGrid aborting).
std::string routes_in_child(const std::string& path, const HostPairs& pairs);

// Random edits of `base` (its header comment removed, so that elements are mutated, not prose); every one that
// check_platform_text accepts must load in SimGrid without aborting and route every pair (a gtest failure
// otherwise). Returns how many mutants were accepted.
int check_accepted_mutants(std::string base, int64_t world, int64_t gpn, const HostPairs& pairs,
                           const std::vector<std::string>& snippets, int tries, uint64_t seed);

}  // namespace simumax::platform::testing
