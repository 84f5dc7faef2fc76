// A rank's allocated memory over the executed step, sample by sample, split into static, activation and
// transient bytes: what the trace's counter track and memory_timeline.json show.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::memory {

// The tasks each of `ranks` (graph ranks) takes part in: its compute tasks and the collectives of its groups,
// sorted by start time, ties in program order (the order analyze_memory walks).
// REQUIRES: tl is the timeline of g; every rank < g.num_ranks.
std::vector<std::vector<uint32_t>> tasks_by_rank(const graph::TaskGraph& g, const executor::Timeline& tl,
                                                 const std::vector<uint32_t>& ranks);

struct MemorySample {
  double seconds = 0;
  int64_t static_bytes = 0;      // weights, gradients, optimizer states, TE buffers
  int64_t activation_bytes = 0;  // saved for backward
  int64_t transient_bytes = 0;   // the running task's temporary buffers
  int64_t allocated_bytes() const { return static_bytes + activation_bytes + transient_bytes; }
};

struct MemoryTimeline {
  uint32_t rank = 0;                  // graph rank
  std::vector<MemorySample> samples;  // the step's start, then when each memory task starts and ends
  int64_t peak_bytes = 0;             // max allocated over the samples (equals RankMemory::peak_allocated_bytes)
  size_t peak_sample = 0;             // the sample at the peak (the last one of ties, as analyze_memory)
};

// REQUIRES: `tasks` = tasks_by_rank(g, tl, {rank})[0] (any superset of the rank's compute tasks in that order).
MemoryTimeline memory_timeline(const graph::TaskGraph& g, const executor::Timeline& tl, uint32_t rank,
                               const std::vector<uint32_t>& tasks);

// True when task t is one of `rank`'s memory events (a compute task of its own that allocates or frees).
inline bool is_memory_task(const graph::Task& t, uint32_t rank) {
  return t.group == graph::kNoGroup && t.rank == rank && (t.mem_peak_bytes != 0 || t.mem_delta_bytes != 0);
}

}  // namespace simumax::memory
