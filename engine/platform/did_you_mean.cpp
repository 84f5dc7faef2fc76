#include "engine/platform/did_you_mean.hpp"

#include <algorithm>

namespace simumax::platform {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = std::max<size_t>(2, wrong.size() / 3) + 1;
  for (const std::string& name : candidates) {
    const size_t d = edit_distance(wrong, name);
    if (d < best_distance || (d == best_distance && best != nullptr && name < *best)) {
      best_distance = d;
      best = &name;
    }
  }
  return best == nullptr ? "" : " (did you mean \"" + *best + "\"?)";
}

}  // namespace simumax::platform
