// A rank's memory as named allocations with alloc / free times, derived from its tasks' memory events: what
// memory_snapshot.json and the PyTorch memory_viz pickle show.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::memory {

inline constexpr size_t kNever = std::numeric_limits<size_t>::max();

enum class AllocKind : uint8_t {
  kStatic,      // weights, gradients, optimizer states, TE buffers: live for the whole step
  kActivation,  // saved by a forward (or recompute) task, freed by the matching backward
  kTransient,   // a task's temporary buffers, allocated when it starts and freed when it ends
};
const char* to_string(AllocKind k);

struct Allocation {
  std::string name;      // e.g. "attn.linear_qkv.fwd mb3 L5 (saved)"
  AllocKind kind = AllocKind::kStatic;
  int64_t bytes = 0;
  uint32_t task = graph::kNoOpRef;  // the task that allocated it (kNoOpRef: static)
  size_t alloc_event = 0;           // index into RankAllocations::events
  size_t free_event = kNever;       // kNever: still live at the end of the step
};

struct MemoryEvent {
  double seconds = 0;
  uint32_t allocation = 0;  // index into RankAllocations::allocations
  bool free = false;
  uint32_t task = graph::kNoOpRef;  // the memory task whose start or end this is (kNoOpRef: static)
};

struct RankAllocations {
  uint32_t rank = 0;                     // graph rank
  std::vector<Allocation> allocations;
  std::vector<MemoryEvent> events;       // in execution order; allocated bytes change by one allocation each
  int64_t peak_bytes = 0;                // max of the allocated total after an event
  size_t peak_event = 0;                 // the event after which the peak holds (the last of ties)
  // True when allocation a is live right after event e.
  bool live_after(size_t a, size_t e) const {
    return allocations[a].alloc_event <= e && (allocations[a].free_event == kNever || allocations[a].free_event > e);
  }
};

// Static memory first (at time 0), then per memory task: its transient buffers when it starts; at its end the
// transients freed, then what it saves allocated or what it releases freed. A release frees the allocations
// that the same op, micro-batch, layer and chunk saved (newest first), and falls back to the rank's newest live
// activations when those do not cover it (an allocation freed in part is re-allocated as "(rest)").
// The allocated total after each event follows memory_timeline() exactly, so peak_bytes is the same peak.
// REQUIRES: `tasks` = tasks_by_rank(g, tl, {rank})[0].
RankAllocations rank_allocations(const graph::TaskGraph& g, const executor::Timeline& tl, uint32_t rank,
                                 const std::vector<uint32_t>& tasks);

}  // namespace simumax::memory
