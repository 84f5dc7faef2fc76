// Megatron-LM training log lines as a real reference when no profiler trace exists: the iteration time
// ("elapsed time per iteration (ms): X") and report_memory's lines ("[Rank N] (after N iterations) memory (MB) |
// allocated: A | max allocated: B | reserved: C | max reserved: D").
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace simumax::compare {

struct MegatronIteration {
  int64_t iteration = 0;  // the "iteration N/M" the record ends (-1 when the line has none)
  double elapsed_ms = 0;  // Megatron's average over its log interval
  int64_t line = 0;       // 1-based line of the log
};

struct MegatronMemory {
  int64_t rank = -1;             // -1 when the line has no "[Rank N]" (torch.distributed not initialised)
  std::string when;              // "(after 10 iterations)", "(before save_checkpoint for iteration 100)"
  double allocated_mib = 0;      // Megatron prints MB meaning 2^20 bytes
  double max_allocated_mib = 0;
  double reserved_mib = 0;
  double max_reserved_mib = 0;
};

struct MegatronLog {
  std::vector<MegatronIteration> iterations;  // in log order
  std::vector<MegatronMemory> memory;
};

// Finds every record in the text, several per physical line included (ranks printing at once interleave their
// output), whatever precedes them (timestamps, torchrun's "[default0]:" prefixes). Throws
// ConfigError(label, "line N", what) for an iteration time or a memory figure that is not a finite number (nan,
// inf, 1e999) or is negative (an iteration time of 0 too): a log that says so is broken, not slow.
MegatronLog parse_megatron_log(std::istream& in, const std::string& label);

// The steady state of a log's iteration times. Megatron's first logged interval holds iteration 1's start-up
// (allocator growth, NCCL set-up, compilation) whatever --log-interval is; it is skipped, and so is each next
// leading record more than kWarmupFactor x the median of the records after it (warm-up may last a few intervals).
struct SteadyState {
  static constexpr double kWarmupFactor = 1.25;
  size_t warmup_records = 0;  // leading records skipped
  std::vector<size_t> used;   // indices into the iterations, in log order
  double min_ms = 0, median_ms = 0, max_ms = 0;
  // "iterations 4-10 (4 records; the first 2 skipped as warm-up)"
  std::string description(const std::vector<MegatronIteration>& iterations) const;
};
// REQUIRES: !iterations.empty(). With one record, that record is the steady state.
SteadyState steady_state(const std::vector<MegatronIteration>& iterations);

// Reads a regular file, plain or gzip. Throws ConfigError(path, "", what) when it is not a regular file, cannot
// be read or holds no "elapsed time per iteration (ms)",
// and parse_megatron_log's errors.
MegatronLog load_megatron_log(const std::string& path);

}  // namespace simumax::compare
