// Timeline traces of a run: Chrome / Perfetto Trace Event Format (trace.json) or SimuMax's own
// tracing_logs.json layout. Every task of the chosen ranks, lanes as threads, pipeline flow arrows, memory
// counters. The formats are described in docs/memory-artifacts.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::report {

// What a run produced, as the trace and memory writers read it (owned by the caller).
struct RunView {
  const config::Scenario& scenario;
  const model::StepModel& model;
  const cost::StepCost& cost;
  const graph::TaskGraph& graph;
  const executor::Timeline& timeline;
  std::string granularity;  // for the trace's otherData
};

enum class TraceFormat {
  kChrome,   // trace.json: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
  kSimumax,  // tracing_logs.json: a bare event list with SimuMax's lanes, pids "rank{N}" and args
};
const char* trace_file_name(TraceFormat f);

struct TraceOptions {
  TraceFormat format = TraceFormat::kChrome;
  std::vector<uint32_t> ranks;  // graph ranks to trace (select_ranks), ascending
  double max_mib = 512;         // size guard: check_trace_size refuses a larger estimate
};

// Graph ranks named by a --trace-ranks value: "all"; "stages" (per pipeline stage, the rank whose step ends
// last, the lowest of ties; so the last traced event ends at the step time); or job ranks "0,8,16-23".
// Throws common::UsageError for a malformed list or a job rank the graph does not simulate.
std::vector<uint32_t> select_ranks(const graph::TaskGraph& g, const executor::Timeline& tl, const std::string& spec);

struct TraceSize {
  uint64_t bytes = 0;   // estimated file size
  uint64_t events = 0;  // events of every kind
};
// Estimated size of the trace, from the events it would hold (within a few % of the file written).
TraceSize estimate_trace_size(const RunView& v, const TraceOptions& o);

// Writes the trace to `path`. The last slice of the trace ends at the step time (to the nanosecond) when the
// traced ranks include the one that finishes last ("all" and "stages" always do).
// Throws common::UsageError, before creating the file, when the estimate is over o.max_mib: the message names
// the estimate, the --trace-max-mb that would pass and --trace-ranks.
void write_trace(const std::string& path, const RunView& v, const TraceOptions& o);

}  // namespace simumax::report
