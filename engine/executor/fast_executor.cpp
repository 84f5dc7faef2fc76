#include "engine/executor/fast_executor.hpp"

#include <algorithm>

#include "engine/common/error.hpp"

namespace simumax::executor {

namespace {

// Kahn's order over the CSR arrays; `ready` holds the latest predecessor end of each task.
template <typename OnTask>
void schedule(const graph::TaskGraph& g, std::vector<double>& ready, OnTask&& on_task) {
  const size_t n = g.size();
  ready.assign(n, 0.0);
  std::vector<uint32_t> remaining(g.in_degree.begin(), g.in_degree.end());
  std::vector<uint32_t> queue;
  queue.reserve(n);
  for (uint32_t t = 0; t < n; ++t) {
    if (remaining[t] == 0) queue.push_back(t);
  }
  size_t head = 0;
  while (head < queue.size()) {
    const uint32_t t = queue[head++];
    const double end = ready[t] + g.tasks[t].seconds;
    on_task(t, ready[t], end);
    for (uint32_t i = g.succ_offsets[t]; i < g.succ_offsets[t + 1]; ++i) {
      const uint32_t s = g.succ[i];
      ready[s] = std::max(ready[s], end);
      if (--remaining[s] == 0) queue.push_back(s);
    }
  }
  if (queue.size() != n) {
    throw common::InternalError("task graph has a cycle: " + std::to_string(n - queue.size()) +
                                " of " + std::to_string(n) + " tasks never became ready");
  }
}

}  // namespace

Timeline run_fast(const graph::TaskGraph& g) {
  Timeline tl;
  tl.executor = "fast";
  tl.start.assign(g.size(), 0.0);
  tl.end.assign(g.size(), 0.0);
  std::vector<double> ready;
  schedule(g, ready, [&](uint32_t t, double s, double e) {
    tl.start[t] = s;
    tl.end[t] = e;
    tl.makespan = std::max(tl.makespan, e);
  });
  return tl;
}

double makespan_fast(const graph::TaskGraph& g, std::vector<double>& scratch_ready) {
  double makespan = 0;
  schedule(g, scratch_ready, [&](uint32_t, double, double e) { makespan = std::max(makespan, e); });
  return makespan;
}

}  // namespace simumax::executor
