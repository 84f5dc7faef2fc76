#include "engine/executor/task_sink.hpp"

#include <algorithm>
#include <numeric>

namespace simumax::executor {

void replay_timeline(const graph::TaskGraph& g, const Timeline& tl, TaskSink& sink) {
  const auto n = static_cast<uint32_t>(g.size());
  std::vector<uint32_t> by_start(n), by_end(n);
  std::iota(by_start.begin(), by_start.end(), 0u);
  std::iota(by_end.begin(), by_end.end(), 0u);
  std::stable_sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) { return tl.start[a] < tl.start[b]; });
  std::stable_sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return tl.end[a] < tl.end[b]; });
  // A merge of the two orders; at one date starts go first, so that a zero-length task starts before it ends.
  size_t s = 0, e = 0;
  while (s < n || e < n) {
    if (s < n && (e == n || tl.start[by_start[s]] <= tl.end[by_end[e]])) {
      sink.started(by_start[s], tl.start[by_start[s]]);
      ++s;
    } else {
      sink.ended(by_end[e], tl.end[by_end[e]]);
      ++e;
    }
  }
}

}  // namespace simumax::executor
