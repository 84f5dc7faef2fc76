// Per-rank memory over the executed timeline: static model state plus activations and transients.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::memory {

struct MemoryPoint {
  double seconds = 0;
  int64_t allocated_bytes = 0;
};

struct RankMemory {
  uint32_t rank = 0;                  // graph rank
  graph::RankStatic static_bytes;     // weights, grads, optimizer states, TE buffers
  int64_t peak_allocated_bytes = 0;   // static + activations + transient, at the peak
  double peak_reserved_bytes = 0;     // allocated / mem_factor (SimuMax's allocator model)
  int64_t activation_bytes_at_peak = 0;  // saved activations live when the peak happens
  int64_t transient_bytes_at_peak = 0;   // the running task's temporary buffers at the peak
  double peak_seconds = 0;
  uint32_t peak_task = graph::kNoGroup;  // task running at the peak (kNoGroup: before any task)
  int64_t max_live_activation_bytes = 0;
  // Forward caches other than the running one's live at the peak (SimuMax's cached_micro_batch_num: one per
  // micro-batch and virtual chunk whose forward ended and whose backward has not): MemoryStream fills it,
  // analyze_memory leaves 0.
  int64_t cached_micro_batches = 0;
  std::vector<MemoryPoint> curve;     // when requested: allocated bytes after every change
};

struct MemoryOptions {
  double mem_factor = 0.94;
  bool keep_curves = false;
};

// REQUIRES: tl is the timeline of g. Memory events are the compute tasks' (rank, mem_peak, mem_delta);
// a rank's tasks are walked in start order (ties: program order).
std::vector<RankMemory> analyze_memory(const graph::TaskGraph& g, const executor::Timeline& tl,
                                       const MemoryOptions& options);

}  // namespace simumax::memory
