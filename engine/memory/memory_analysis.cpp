#include "engine/memory/memory_analysis.hpp"

#include <algorithm>
#include <numeric>

namespace simumax::memory {

std::vector<RankMemory> analyze_memory(const graph::TaskGraph& g, const executor::Timeline& tl,
                                       const MemoryOptions& options) {
  std::vector<std::vector<uint32_t>> per_rank(g.num_ranks);
  for (uint32_t t = 0; t < g.size(); ++t) {
    const auto& task = g.tasks[t];
    if (task.group != graph::kNoGroup) continue;
    if (task.mem_peak_bytes == 0 && task.mem_delta_bytes == 0 && !options.keep_curves) continue;
    per_rank[task.rank].push_back(t);
  }
  std::vector<RankMemory> out(g.num_ranks);
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    auto& tasks = per_rank[r];
    std::stable_sort(tasks.begin(), tasks.end(), [&](uint32_t a, uint32_t b) {
      return tl.start[a] < tl.start[b] || (tl.start[a] == tl.start[b] && a < b);
    });
    RankMemory& rm = out[r];
    rm.rank = r;
    rm.static_bytes = g.rank_static[r];
    const int64_t base = rm.static_bytes.total();
    rm.peak_allocated_bytes = base;
    int64_t live = 0;
    if (options.keep_curves) rm.curve.push_back({0.0, base});
    for (uint32_t t : tasks) {
      const auto& task = g.tasks[t];
      const int64_t candidate = base + live + task.mem_peak_bytes;
      if (candidate >= rm.peak_allocated_bytes) {  // ties: the later point wins, as in SimuMax's PeakPoint
        rm.peak_allocated_bytes = candidate;
        rm.activation_bytes_at_peak = live;
        rm.transient_bytes_at_peak = task.mem_peak_bytes;
        rm.peak_seconds = tl.start[t];
        rm.peak_task = t;
      }
      if (options.keep_curves && task.mem_peak_bytes != 0) {
        rm.curve.push_back({tl.start[t], candidate});
      }
      live += task.mem_delta_bytes;
      rm.max_live_activation_bytes = std::max(rm.max_live_activation_bytes, live);
      if (options.keep_curves && (task.mem_peak_bytes != 0 || task.mem_delta_bytes != 0)) {
        rm.curve.push_back({tl.end[t], base + live});
      }
    }
    rm.peak_reserved_bytes = static_cast<double>(rm.peak_allocated_bytes) / options.mem_factor;
  }
  return out;
}

}  // namespace simumax::memory
