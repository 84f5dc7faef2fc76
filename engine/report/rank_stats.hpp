// ranks.json: per-rank statistics of a step — when each rank's work ends and how late against the earliest
// (the straggler), its busy compute time, its communication per kind and the part left exposed, its peak
// memory — for every simulated rank (`--ranks all`: every GPU; `--ranks stages`: one per pipeline stage).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/executor/rank_timing.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/memory/memory_analysis.hpp"

namespace simumax::report {

// What ranks_json writes, besides the ranks: the run's names as summary.json gives them.
struct RankStatsHeader {
  std::string name;       // the scenario
  std::string executor;   // fast | sim
  std::string scope;      // all | stages (summary.json's rank_scope)
};

// ranks.json's text: the header, the earliest and latest end and the slowest rank, then one line per graph rank
// in graph-rank order (job rank, pipeline stage, end_ms, late_ms, compute_ms, comm_ms, exposed_comm_ms, then
// <kind>_comm_ms / <kind>_exposed_ms for tp, cp, ep, pp, dp, then peak memory). Deterministic.
// REQUIRES: timing and memory are of g (one entry per graph rank).
std::string ranks_json(const RankStatsHeader& h, const graph::TaskGraph& g, const executor::StepTiming& timing,
                       const std::vector<memory::RankMemory>& memory);

// Writes ranks_json as `dir`/ranks.json; returns its path. Throws common::UsageError if it cannot be written.
std::string write_ranks_json(const std::string& dir, const RankStatsHeader& h, const graph::TaskGraph& g,
                             const executor::StepTiming& timing, const std::vector<memory::RankMemory>& memory);

// One row of ranks.json read back (times in ms, as written).
struct RankRow {
  int64_t rank = 0;  // job rank
  int64_t stage = 0;
  double end_ms = 0, late_ms = 0, compute_ms = 0, comm_ms = 0, exposed_comm_ms = 0;
  std::array<double, executor::kCommKinds> kind_comm_ms{}, kind_exposed_ms{};  // kCommKindNames' order
  int64_t peak_allocated_bytes = 0;
  double peak_reserved_bytes = 0;
};

// ranks.json read back.
struct RankStats {
  RankStatsHeader header;
  double step_time_ms = 0, earliest_end_ms = 0, latest_end_ms = 0;
  int64_t slowest_rank = 0;
  std::vector<RankRow> ranks;  // as written: graph-rank order
};

// ranks.json read back, the inverse of ranks_json (the one reader: the HTML report, serve, sweep, the Python
// module): every field is required and type-checked. Throws common::ConfigError(path, JSON pointer, ...).
RankStats read_rank_stats(const std::string& path);

// The slowest ranks first: indices into s.ranks sorted by late_ms descending (ties: the lower job rank), at most n.
std::vector<size_t> slowest_ranks(const RankStats& s, size_t n);

}  // namespace simumax::report
