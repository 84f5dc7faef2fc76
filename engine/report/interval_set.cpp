#include "engine/report/interval_set.hpp"

#include <algorithm>

namespace simumax::report {

std::vector<Interval> merge_intervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return !(i.second > i.first); });
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const auto& i : intervals) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double covered_length(const std::vector<Interval>& merged) {
  double sum = 0;
  for (const auto& [s, e] : merged) sum += e - s;
  return sum;
}

double uncovered_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double bare = 0;
  size_t j = 0;
  for (const auto& [start, end] : a) {
    double cur = start;
    // Both lists are sorted, so intervals of b that end before this one starts are never needed again.
    while (j < b.size() && b[j].second <= cur) ++j;
    for (size_t k = j; k < b.size() && b[k].first < end; ++k) {
      if (b[k].first > cur) bare += b[k].first - cur;
      cur = std::max(cur, b[k].second);
      if (cur >= end) break;
    }
    if (cur < end) bare += end - cur;
  }
  return bare;
}

}  // namespace simumax::report
