// Shared by the trace writers (not a public interface): each traced rank's slices placed on lanes, and the
// names of ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/memory/memory_timeline.hpp"
#include "engine/report/trace_writer.hpp"

namespace simumax::report::trace {

inline constexpr uint16_t kSkip = 0xffff;

// One task as drawn on one rank: its lane (a thread of the trace) and sub-lane. Tasks that overlap on a lane
// (pipeline transfers batched together) go to extra sub-lanes, because Trace Event Format viewers require the
// slices of one thread to nest.
struct Slice {
  uint32_t task = 0;
  uint16_t lane = 0;
  uint16_t sub = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

struct RankSlices {
  uint32_t rank = 0;                    // graph rank
  std::vector<Slice> slices;            // in start order
  std::vector<uint16_t> subs_per_lane;  // sub-lanes used on each lane (0: lane unused)
};

// `lane_of` maps a task to its lane (< num_lanes) or kSkip. `tasks`: the rank's tasks in start order.
using LaneOf = uint16_t (*)(const graph::Task&);
RankSlices rank_slices(const RunView& v, uint32_t rank, const std::vector<uint32_t>& tasks, LaneOf lane_of,
                       uint16_t num_lanes);

// Position of a job rank in the tp-cp-dp-pp layout.
struct RankCoords {
  int64_t tp = 0, cp = 0, dp = 0, pp = 0;
};
RankCoords coords_of(const config::Scenario& s, uint32_t job_rank);

// "rank 8 (pp stage 1, tp 0, cp 0, dp 0)"; with one simulated rank per stage, says that it stands for the stage.
std::string process_label(const RunView& v, uint32_t graph_rank);

// The receiving side of a pipeline transfer (kPpComm: members[0] sends to members[1]).
inline uint32_t pp_sender(const graph::TaskGraph& g, const graph::Task& t) { return g.groups[t.group][0]; }
inline uint32_t pp_receiver(const graph::TaskGraph& g, const graph::Task& t) { return g.groups[t.group][1]; }

// What both formats draw: per traced rank, its tasks in start order.
struct TracePlan {
  std::vector<uint32_t> ranks;               // graph ranks, ascending
  std::vector<bool> traced;                  // graph rank -> traced
  std::vector<std::vector<uint32_t>> tasks;  // per traced rank
};
TracePlan plan_trace(const RunView& v, const TraceOptions& o);

// The two formats (trace_chrome.cpp, trace_simumax.cpp): a size estimate, and the writer.
TraceSize estimate_chrome(const RunView& v, const TracePlan& p);
void write_chrome(const std::string& path, const RunView& v, const TracePlan& p);
TraceSize estimate_simumax(const RunView& v, const TracePlan& p);
void write_simumax(const std::string& path, const RunView& v, const TracePlan& p);

}  // namespace simumax::report::trace
