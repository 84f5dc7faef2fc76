#include "engine/memory/memory_timeline.hpp"

#include <algorithm>

namespace simumax::memory {

std::vector<std::vector<uint32_t>> tasks_by_rank(const graph::TaskGraph& g, const executor::Timeline& tl,
                                                 const std::vector<uint32_t>& ranks) {
  // slot[r]: where graph rank r's list is in the output, or kNoGroup when r is not asked for.
  std::vector<uint32_t> slot(g.num_ranks, graph::kNoGroup);
  for (size_t i = 0; i < ranks.size(); ++i) slot[ranks[i]] = static_cast<uint32_t>(i);
  std::vector<std::vector<uint32_t>> out(ranks.size());
  for (uint32_t t = 0; t < g.size(); ++t) {
    g.for_each_rank(g.tasks[t], [&](uint32_t r) {
      if (slot[r] != graph::kNoGroup) out[slot[r]].push_back(t);
    });
  }
  for (auto& tasks : out) {
    // Task ids are already in program order, so a stable sort on start alone breaks ties as analyze_memory.
    std::stable_sort(tasks.begin(), tasks.end(), [&](uint32_t a, uint32_t b) { return tl.start[a] < tl.start[b]; });
  }
  return out;
}

MemoryTimeline memory_timeline(const graph::TaskGraph& g, const executor::Timeline& tl, uint32_t rank,
                               const std::vector<uint32_t>& tasks) {
  MemoryTimeline mt;
  mt.rank = rank;
  MemorySample now;
  now.static_bytes = g.rank_static[rank].total();
  mt.samples.push_back(now);
  for (uint32_t t : tasks) {
    const auto& task = g.tasks[t];
    if (!is_memory_task(task, rank)) continue;
    // The task's transient buffers exist while it runs; what it saves or frees takes effect when it ends.
    now.seconds = tl.start[t];
    now.transient_bytes = task.mem_peak_bytes;
    mt.samples.push_back(now);
    now.seconds = tl.end[t];
    now.transient_bytes = 0;
    now.activation_bytes += task.mem_delta_bytes;
    mt.samples.push_back(now);
  }
  for (size_t i = 0; i < mt.samples.size(); ++i) {
    if (mt.samples[i].allocated_bytes() >= mt.peak_bytes) {
      mt.peak_bytes = mt.samples[i].allocated_bytes();
      mt.peak_sample = i;
    }
  }
  return mt;
}

}  // namespace simumax::memory
