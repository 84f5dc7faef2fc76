// SimuMax's simulator memory files (core/simu_memory.py SimuMemoryTracker): simu_memory_result.json (static and
// peak allocated bytes by rank) and simu_memory_snapshot.json (schema "simumax_memory_snapshot_v1": a counter
// sample at the start, peak and end of every memory task, and a record per activation cache allocated and
// freed), so that SimuMax's own summarize_snapshot reads ours.
#pragma once

#include <string>
#include <vector>

#include "engine/report/trace_writer.hpp"

namespace simumax::report {

// The JSON texts for the graph ranks `ranks` (select_ranks), indent 4 as SimuMax writes them. Deterministic.
std::string simu_memory_result_json(const RunView& v, const std::vector<uint32_t>& ranks);
std::string simu_memory_snapshot_json(const RunView& v, const std::vector<uint32_t>& ranks);

// Writes both into the existing folder `dir`; returns their paths. Throws common::UsageError when a file cannot
// be written.
std::vector<std::string> write_simu_memory(const std::string& dir, const RunView& v, const std::vector<uint32_t>& ranks);

}  // namespace simumax::report
