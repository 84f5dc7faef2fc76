// An enum's value from its name, through the enum's own to_string: one table both ways (issue 35). The CLI and
// Python read fidelity, executor, granularity and rank scope with it.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "engine/common/error.hpp"

namespace simumax::common {

// The value of `values` whose to_string (found by argument-dependent lookup, beside the enum) is `name`. Throws
// UsageError "<what>='<name>': expected one of a, b, c".
template <typename E, size_t N>
E enum_from_name(const std::array<E, N>& values, const std::string& name, const std::string& what) {
  std::string names;
  for (const E v : values) {
    if (name == to_string(v)) return v;
    names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw UsageError(what + "='" + name + "': expected one of " + names);
}

}  // namespace simumax::common
