// A real PyTorch profiler (Kineto) trace, plain or gzip, as one StepBreakdown per ProfilerStep#N.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/kineto_collectives.hpp"
#include "engine/compare/kineto_insight.hpp"
#include "engine/compare/step_breakdown.hpp"

namespace simumax::compare {

struct KinetoProfile {
  std::string path;
  std::optional<int64_t> rank;        // distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
  std::vector<StepBreakdown> steps;   // in time order
  int64_t gpu_events = 0;             // kernels, memcpys and memsets in the trace
  int64_t unattributed_events = 0;    // GPU events no profiled step launched (work queued before the first step)
  int64_t main_stream = -1;           // the stream with the most compute time: it delimits the steps on the GPU
  CollectiveLabels collectives;       // the trace's NCCL kernels typed by the CPU op that launched them
  std::vector<CollectiveCall> collective_calls;  // the profiled steps' NCCL kernels with their messages
  TraceInsight insight;               // top kernels, ops with shapes, launch statistics, idle split
};

// NCCL kernels are typed by the collective their CPU op called (kineto_collectives.hpp), not by their name.
// Steps: the CPU-side ProfilerStep#N annotations. A GPU event belongs to the step whose time range contains the
// CUDA runtime call that launched it (matched by args.correlation); a step's window on the GPU runs from its first
// event on the main stream to the next step's (the last step: to its last event's end), and the breakdown counts
// everything that runs in that window. docs/compare.md explains why.
// Throws ConfigError(path, "", what) for an unreadable or non-trace file, a trace with no ProfilerStep#N
// annotation, or one whose steps launched no GPU work.
// `top_n`: how many kernels TraceInsight::top_kernels keeps.
KinetoProfile load_kineto_trace(const std::string& path, const KernelClassTable& table, size_t top_n = 10);

}  // namespace simumax::compare
