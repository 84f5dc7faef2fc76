// The median of a sample (the mean of the middle two when it has an even count; 0 when it is empty).
#pragma once

#include <algorithm>
#include <vector>

namespace simumax::common {

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace simumax::common
