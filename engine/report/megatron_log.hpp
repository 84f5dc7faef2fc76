// Megatron-LM training log lines as a real reference when no profiler trace exists: the iteration time
// ("elapsed time per iteration (ms): X") and report_memory's lines ("[Rank N] (after N iterations) memory (MB) |
// allocated: A | max allocated: B | reserved: C | max reserved: D").
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace simumax::report {

struct MegatronIteration {
  int64_t iteration = 0;
  double elapsed_ms = 0;  // Megatron's average over its log interval
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
// output), whatever precedes them (timestamps, torchrun's "[default0]:" prefixes). Never throws.
MegatronLog parse_megatron_log(std::istream& in);

// Throws ConfigError(path, "", what) when the file cannot be read or holds no "elapsed time per iteration (ms)".
MegatronLog load_megatron_log(const std::string& path);

}  // namespace simumax::report
