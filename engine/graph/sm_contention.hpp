// SM contention while emitting the DAG (strategy sm_contention, docs/overlap.md): each rank's compute stream,
// in program order, runs slower while the overlapped collectives it issued on other streams are in flight.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/cost/overlap_cost.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::graph {

using InFlightStreams = std::array<cost::InFlight, kNumStreams>;

class SmContention {
 public:
  // `enabled` false (no overlap, or every share 0): run() returns durations unchanged and costs nothing.
  SmContention(uint32_t num_ranks, bool enabled);
  // A collective of `seconds` joins `stream` on each lane (after the stream's earlier ones).
  void issue(const std::vector<uint32_t>& lanes, uint8_t stream, double seconds, double share);
  void issue(uint32_t rank, uint8_t stream, double seconds, double share);
  // The lanes' compute stream waited for everything on `stream`: nothing there is in flight any more.
  void joined(const std::vector<uint32_t>& lanes, uint8_t stream);
  // Compute of `seconds` runs next on the lanes (in lockstep): its wall time.
  double run(const std::vector<uint32_t>& lanes, double seconds);
  double run(uint32_t rank, double seconds);

 private:
  bool enabled_;
  std::vector<InFlightStreams> ranks_;
};

}  // namespace simumax::graph
