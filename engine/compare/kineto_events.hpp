// The events of a PyTorch profiler (Kineto) trace that compare and calibrate use, read once into compact arrays:
// GPU work, the CUDA runtime calls that launched it, the CPU ops around those calls, and the ProfilerStep#N ranges.
// kineto_trace (steps), kineto_collectives (NCCL types) and kineto_insight (per-op table) all read this.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/report/chrome_trace_reader.hpp"
#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/step_breakdown.hpp"

namespace simumax::compare {

// Distinct strings stored once; an id is an index into `text` (id 0 is the empty string).
class StringPool {
 public:
  StringPool() { text_.emplace_back(); }
  uint32_t id(const std::string& s);
  const std::string& operator[](uint32_t id) const { return text_[id]; }

 private:
  std::vector<std::string> text_;
  std::unordered_map<std::string, uint32_t> ids_;
};

struct CpuStep {
  double start_us = 0, end_us = 0;
  int64_t pid = 0;
  std::string label;
};

// A CUDA runtime or driver call that launched GPU work (cudaLaunchKernel, cudaMemcpyAsync, ...).
struct Launch {
  double ts_us = 0, dur_us = 0;
  int64_t pid = 0, tid = 0;
  int64_t correlation = 0;
};

// A CPU-side op or annotation (cat cpu_op / user_annotation): aten::mm, nccl:all_reduce, ## forward ##, ...
struct CpuOp {
  double start_us = 0, end_us = 0;
  int64_t pid = 0, tid = 0;
  uint32_t name = 0;        // StringPool id
  uint32_t dims = 0;        // StringPool id of its Input Dims text (0: none recorded)
  uint32_t collective = 0;  // StringPool id of its "Collective name" arg (0: none)
  uint32_t dtype = 0;       // StringPool id of its first "Input type" ("float", "c10::BFloat16"; 0: none)
  bool annotation = false;  // a user_annotation (a record_function range), not an operator
};

struct GpuEvent {
  TimedEvent timed;
  int64_t stream = 0;
  int64_t correlation = -1;
  uint32_t name = 0;        // StringPool id of the kernel name
  uint32_t collective = 0;  // the kernel's own "Collective name" arg (0: none)
  int step = -1;            // index into KinetoEvents::steps of the step that launched it (-1: none)
};

// A collective's message as PyTorch >= 2.1 records it (record_param_comms args, also on the NCCL kernel): element
// counts in and out, the group size (-1: not recorded) and the element type ("Float", "BFloat16"; 0: none).
struct CommArgs {
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  uint32_t dtype = 0;  // StringPool id
};

struct KinetoEvents {
  std::vector<CpuStep> steps;  // sorted by start
  std::vector<Launch> launches;
  std::vector<CpuOp> ops;
  std::vector<GpuEvent> gpu;   // in file order
  StringPool strings;
  report::ChromeTraceInfo info;
  std::unordered_map<int64_t, size_t> launch_of;  // correlation -> index into launches
  // Only the few events that carry one (NCCL kernels, record_param_comms): by index into gpu / ops.
  std::unordered_map<size_t, CommArgs> gpu_comm;
  std::unordered_map<size_t, CommArgs> op_comm;
};

// Reads `path` (ConfigError as report::read_chrome_trace), classifies each GPU event with `table`, and attributes each GPU
// event to the ProfilerStep#N whose CPU range holds its launch (same process; any thread).
KinetoEvents read_kineto_events(const std::string& path, const KernelClassTable& table);

// The innermost-first chain of CPU ops on a launch's thread that enclose it in time.
class CpuOpIndex {
 public:
  // REQUIRES: `ops` outlives the index.
  explicit CpuOpIndex(const std::vector<CpuOp>& ops);
  // The innermost op of thread (pid, tid) whose range holds [ts, ts + dur], or -1.
  int64_t innermost(int64_t pid, int64_t tid, double ts_us, double dur_us) const;
  // The op enclosing op `i` (-1 at the top).
  int64_t parent(int64_t i) const { return parent_[static_cast<size_t>(i)]; }

 private:
  const std::vector<CpuOp>& ops_;
  std::vector<uint32_t> order_;   // op indices sorted by (pid, tid, start, longest first)
  std::vector<int64_t> parent_;   // by op index
};

}  // namespace simumax::compare
