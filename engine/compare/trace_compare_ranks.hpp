// Several ranks of one real run (a folder of rank traces, or several files): each rank's mean step broken down,
// the slowest rank, how far behind the median rank it is (straggler ratio) and which phase makes it slow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/step_breakdown.hpp"

namespace simumax::compare {

struct RankSummary {
  std::string path;
  int64_t rank = -1;           // distributedInfo.rank (-1: the trace does not say)
  size_t steps = 0;
  StepBreakdown mean;          // the mean of its steps (labels, counts: the first step's)
  double busy_ms = 0;          // mean total - mean idle: what the rank itself spent
};

struct Straggler {
  int64_t rank = -1;           // the slowest rank (most busy time)
  std::string path;
  double busy_ms = 0;
  double median_busy_ms = 0;   // over the ranks
  double ratio = 1;            // busy_ms / median_busy_ms
  std::string phase;           // the figure with the largest excess over the ranks' median ("gemm", "exposed comm")
  double phase_excess_ms = 0;
};

// The trace files `paths` name: a folder's *.json / *.json.gz (sorted by name), or the files as given.
// Throws ConfigError(folder, "", what) for a folder with no trace.
std::vector<std::string> rank_trace_files(const std::vector<std::string>& paths);

// Reads every trace (ConfigError as load_kineto_trace; two traces of one rank are an error naming both).
std::vector<RankSummary> load_rank_summaries(const std::vector<std::string>& files, const KernelClassTable& table);

// REQUIRES: !ranks.empty().
Straggler find_straggler(const std::vector<RankSummary>& ranks, const std::vector<KernelClass>& classes);

// The per-rank table and the straggler line.
std::string ranks_table(const std::vector<RankSummary>& ranks, const Straggler& s,
                        const std::vector<KernelClass>& classes);

}  // namespace simumax::compare
