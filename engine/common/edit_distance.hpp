// Levenshtein distance for "did you mean" suggestions in error messages.
#pragma once

#include <cstddef>
#include <string>

namespace simumax::common {

// Insertions, deletions and substitutions turning `a` into `b`; letters compared case-insensitively when asked.
size_t edit_distance(const std::string& a, const std::string& b, bool ignore_case = false);

}  // namespace simumax::common
