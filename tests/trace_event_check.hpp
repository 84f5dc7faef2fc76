// A strict checker of Chrome's Trace Event Format as simumax-sim writes it: every event's fields and types,
// flow arrows paired and bound to slices, metadata for every process and thread, slices of a thread that
// never overlap.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace simumax::tests {

struct TraceFacts {
  std::vector<std::string> errors;  // empty when the trace passes (at most 50 are kept)
  size_t slices = 0, counters = 0, flows = 0, metadata = 0;
  size_t processes = 0;             // pids with at least one slice
  double last_end_us = 0;           // latest ts + dur over the slices
};

// REQUIRES: doc is the parsed trace.json ({"traceEvents": [...], ...}).
TraceFacts check_trace_event_format(const nlohmann::json& doc);

}  // namespace simumax::tests
