// The memory replay of analyze_memory folded as the executor runs (a TaskSink): every rank's peak without the
// per-task start/end arrays, and SimuMax's cached micro-batches at each rank's peak (issue #16, item 2).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/executor/task_sink.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/memory/memory_analysis.hpp"

namespace simumax::memory {

// Gives, for every rank, what analyze_memory(g, tl, {mem_factor, keep_curves = false}) gives (a test checks
// equality), plus RankMemory::cached_micro_batches. A rank's tasks are walked in start order, ties by task id:
// the tasks of one start date are held until a later event of that rank, then sorted.
class MemoryStream final : public executor::TaskSink {
 public:
  // REQUIRES: g outlives the stream.
  MemoryStream(const graph::TaskGraph& g, double mem_factor);
  void started(uint32_t task, double seconds) override;
  void ended(uint32_t task, double seconds) override;
  // After the last task: the ranks' memory (no curves). Call once.
  std::vector<RankMemory> finish();

 private:
  // A (micro-batch, chunk) of a rank: its forward and backward compute tasks, and how many have ended.
  struct Cache {
    uint32_t fwd = 0, fwd_ended = 0, bwd = 0, bwd_ended = 0;
    // SimuMax's cached micro-batch: its forward is done and its backward has not freed it.
    bool cached() const { return fwd + bwd > 0 && fwd_ended == fwd && !(bwd > 0 && bwd_ended == bwd); }
  };
  struct Rank {
    int64_t base = 0, live = 0;
    int64_t cached = 0;  // Caches of the rank with cached() now
    double pending_date = 0;
    std::vector<uint32_t> pending;  // started at pending_date, not walked yet
  };
  // The slot of a task's (micro-batch, chunk) in caches_, or -1.
  int64_t cache_slot(const graph::Task& t) const;
  void walk(uint32_t rank);

  const graph::TaskGraph& g_;
  double mem_factor_;
  int64_t micro_batches_ = 0, chunks_ = 0;  // the caches of rank r: caches_[r * micro_batches_ * chunks_ ...]
  std::vector<Cache> caches_;
  std::vector<Rank> ranks_;
  std::vector<RankMemory> out_;
};

}  // namespace simumax::memory
