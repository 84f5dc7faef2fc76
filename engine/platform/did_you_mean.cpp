#include "engine/platform/did_you_mean.hpp"

#include <algorithm>

#include "engine/common/edit_distance.hpp"

namespace simumax::platform {


std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = std::max<size_t>(2, wrong.size() / 3) + 1;
  for (const std::string& name : candidates) {
    const size_t d = common::edit_distance(wrong, name);
    if (d < best_distance || (d == best_distance && best != nullptr && name < *best)) {
      best_distance = d;
      best = &name;
    }
  }
  return best == nullptr ? "" : " (did you mean \"" + *best + "\"?)";
}

}  // namespace simumax::platform
