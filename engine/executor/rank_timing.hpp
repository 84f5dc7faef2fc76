// Per-rank timing of a step folded from the executor's task starts and ends (a TaskSink): when each rank's work
// ends, its busy compute time, and its communication per kind with the part no compute hides. O(ranks) memory,
// whatever the number of tasks (issue #16, item 2).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/executor/task_sink.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::executor {

// The communication kinds, in TaskKind order (kTpComm .. kDpComm).
inline constexpr size_t kCommKinds = 5;
inline constexpr const char* kCommKindNames[kCommKinds] = {"tp", "cp", "ep", "pp", "dp"};

struct RankTiming {
  double end_s = 0;           // the last task on the rank (its own, or a collective it is a member of) ends
  double pipeline_end_s = 0;  // its last backward task ends (0: none)
  double compute_s = 0;       // the union of its compute tasks (forward, backward, recompute, optimizer)
  double comm_s = 0;          // the union of its communication tasks of every kind
  double exposed_comm_s = 0;  // the part of comm_s with no compute task running on the rank
  std::array<double, kCommKinds> kind_comm_s{};     // the union of each kind's tasks
  std::array<double, kCommKinds> kind_exposed_s{};  // the part of each with no compute running
};

struct StepTiming {
  double makespan_s = 0;      // the latest end
  double pipeline_end_s = 0;  // the latest end of a task outside the optimizer step (std::nullopt)
  std::vector<RankTiming> ranks;  // by graph rank
};

// Which tasks count as compute and which as communication: the trace view's and compare's classes (a
// forward / backward / recompute / step kernel hides communication; a barrier is neither).
bool is_compute_task(const graph::Task& t);
// The kind index (0 .. kCommKinds-1) of a communication task, or -1.
int comm_kind_index(const graph::Task& t);

// A sweep line per rank: between two consecutive events on a rank, the time goes to every class running then.
// Exposed communication is |comm \ compute| on the rank, the definition compare uses for a real trace
// (engine/compare/step_breakdown.cpp) and the report's trace view per traced rank.
class RankTimingSink final : public TaskSink {
 public:
  // REQUIRES: g outlives the sink.
  explicit RankTimingSink(const graph::TaskGraph& g);
  // Throws common::InternalError when a rank's events go back in time (an executor broke TaskSink's contract).
  void started(uint32_t task, double seconds) override;
  void ended(uint32_t task, double seconds) override;
  // After the last task: the step's timing. The sink is empty afterwards.
  StepTiming take();

 private:
  struct Running {  // what runs on a rank now
    double since = 0;
    uint32_t compute = 0, comm = 0;
    std::array<uint32_t, kCommKinds> kind{};
  };
  void advance(uint32_t rank, double now);

  const graph::TaskGraph& g_;
  std::vector<Running> running_;
  StepTiming out_;
};

// The timing of a finished timeline (replay_timeline through a RankTimingSink).
StepTiming step_timing(const graph::TaskGraph& g, const Timeline& tl);

}  // namespace simumax::executor
