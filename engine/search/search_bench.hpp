// The search's speed: fast evaluations per second on one core over a large dense grid (for `simumax-sim bench`).
#pragma once

#include <cstddef>
#include <string>

#include "engine/config/scenario.hpp"

namespace simumax::search {

struct BenchResult {
  std::string space;  // what was searched, in words
  size_t candidates = 0;
  size_t evaluated = 0;    // legal and simulated, over all passes (skipped ones are not evaluations)
  double cpu_seconds = 0;  // CPU time of the one evaluating thread
  double wall_seconds = 0;
  double per_core_per_s() const { return cpu_seconds > 0 ? static_cast<double>(evaluated) / cpu_seconds : 0; }
};

// Evaluates the grid search's default space (plus mbs 1,2,4,8, ZeRO 0,1, SP on/off) for `base`'s model and system
// on `world_size` GPUs with global batch `global_batch_size`, on one thread, in passes until half a second of CPU
// time. CPU time, not wall time, so that a busy machine does not change the figure.
BenchResult bench_search(const config::Scenario& base, int64_t world_size, int64_t global_batch_size);

// bench_search on 512 GPUs with global batch 1024, as the line `simumax-sim bench` prints (target >= 50,000/s).
std::string bench_search_line(const config::Scenario& base);

}  // namespace simumax::search
