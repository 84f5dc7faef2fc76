#include "engine/executor/fast_executor.hpp"

#include <algorithm>

#include "engine/common/error.hpp"

namespace simumax::executor {

Timeline run_fast(const graph::TaskGraph& g) {
  // Kahn's order over the CSR arrays; `ready` holds the latest predecessor end of each task.
  const size_t n = g.size();
  Timeline tl;
  tl.executor = "fast";
  tl.start.assign(n, 0.0);  // the ready time until the task runs, then its start
  tl.end.assign(n, 0.0);
  std::vector<uint32_t> remaining(g.in_degree.begin(), g.in_degree.end());
  std::vector<uint32_t> queue;
  queue.reserve(n);
  for (uint32_t t = 0; t < n; ++t) {
    if (remaining[t] == 0) queue.push_back(t);
  }
  size_t head = 0;
  while (head < queue.size()) {
    const uint32_t t = queue[head++];
    const double end = tl.start[t] + g.tasks.proto(t).seconds;
    tl.end[t] = end;
    tl.makespan = std::max(tl.makespan, end);
    for (uint32_t i = g.succ_offsets[t]; i < g.succ_offsets[t + 1]; ++i) {
      const uint32_t s = g.succ[i];
      tl.start[s] = std::max(tl.start[s], end);
      if (--remaining[s] == 0) queue.push_back(s);
    }
  }
  if (queue.size() != n) {
    throw common::InternalError("task graph has a cycle: " + std::to_string(n - queue.size()) +
                                " of " + std::to_string(n) + " tasks never became ready");
  }
  return tl;
}

}  // namespace simumax::executor
