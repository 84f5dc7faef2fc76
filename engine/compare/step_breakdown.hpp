// One training step's GPU time broken down the way compare shows it: total, compute by class, communication,
// communication left exposed (not overlapped by compute on any stream), copies, idle, and kernel counts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/compare/kernel_classes.hpp"

namespace simumax::compare {

// One GPU event (kernel, copy, our task) on some stream, classified.
struct TimedEvent {
  double start_us = 0;
  double end_us = 0;
  Classification cls;
};

struct StepBreakdown {
  std::string label;              // "ProfilerStep#1009", "iteration 12", "simulated step"
  bool has_breakdown = true;      // false: only total_ms is known (a Megatron-LM log line)
  double total_ms = 0;            // the step's window on the GPU timeline
  double compute_ms = 0;          // union of compute-kind events
  std::vector<double> class_ms;   // union of each class's events, by class index
  double comm_ms = 0;             // union of comm-kind events
  double exposed_comm_ms = 0;     // comm time with no compute event running on any stream
  double memory_ms = 0;           // union of memory-kind events (memcpy / memset)
  double idle_ms = 0;             // nothing running on any stream
  std::map<std::string, double> comm_ms_by_type;  // union per comm subclass (all_reduce, send_recv, ...)
  int64_t kernels = 0;                            // events belonging to the step
  std::vector<int64_t> class_kernels;             // the same per class, by class index
  std::map<std::string, int64_t> comm_kernels;    // comm events belonging to the step, per subclass
  std::optional<double> cpu_ms;   // the profiler's CPU-side step annotation, when there is one
};

// REQUIRES: window_end_us >= window_start_us. Times come from `timed` clipped to the window [start, end); counts
// from `owned` (the events the step launched, which may run partly outside its window).
StepBreakdown break_down_step(const std::vector<TimedEvent>& timed, const std::vector<TimedEvent>& owned,
                              double window_start_us, double window_end_us, const KernelClassTable& table);

}  // namespace simumax::compare
