// What an executor tells as it runs: each task's start and end, in date order, so that per-rank statistics can
// be folded as the step goes without the per-task start/end arrays of a Timeline (issue #16, item 2).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::executor {

// Receives every task's start and end. CONTRACT (what a sink may rely on): calls come in nondecreasing date
// order over the whole step; a task's started() comes before its ended(); each task gets exactly one of each.
// At one date, starts and ends may interleave in any order.
class TaskSink {
 public:
  virtual ~TaskSink() = default;
  virtual void started(uint32_t task, double seconds) = 0;
  virtual void ended(uint32_t task, double seconds) = 0;
};

// Calls each sink in turn (none may be null).
class SinkFanOut final : public TaskSink {
 public:
  explicit SinkFanOut(std::vector<TaskSink*> sinks) : sinks_(std::move(sinks)) {}
  void started(uint32_t task, double seconds) override {
    for (TaskSink* s : sinks_) s->started(task, seconds);
  }
  void ended(uint32_t task, double seconds) override {
    for (TaskSink* s : sinks_) s->ended(task, seconds);
  }

 private:
  std::vector<TaskSink*> sinks_;
};

// Feeds `sink` a finished timeline in the sink's date order (starts before ends at one date, ties by task id):
// what the `fast` executor, whose list order is not date order, and tests use. Holds two index arrays (8 bytes
// a task) while it runs. REQUIRES: tl is the timeline of g, with start and end of every task.
void replay_timeline(const graph::TaskGraph& g, const Timeline& tl, TaskSink& sink);

}  // namespace simumax::executor
