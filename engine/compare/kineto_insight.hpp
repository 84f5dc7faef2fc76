// What a performance engineer looks at in one real trace beyond the step breakdown (as HTA does): the kernels that
// cost the most, the ops behind them with their shapes and achieved TFLOPS, kernel launch statistics, and the
// main stream's idle time split by its cause. Computed over the GPU work the profiled steps launched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/compare/gemm_shape.hpp"
#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/kineto_events.hpp"

namespace simumax::compare {

struct KernelStat {
  std::string name;
  std::string cls;           // class/subclass
  int64_t count = 0;
  double total_ms = 0;       // per profiled step (total over the steps / steps)
  double mean_us = 0;
};

// The calls of one CPU op with one set of input shapes, in one pass, and the kernels of one class they launched.
struct RealOp {
  std::string op;            // "aten::mm"; "(no CPU op)" when the launch is not inside one
  std::string dims;          // Input Dims text ("" when not recorded)
  std::string dtype;         // its first input's type ("float", "c10::BFloat16"; "" when not recorded)
  std::string pass;          // "forward", "backward" (an autograd function encloses it) or "optimizer"
  std::string cls;           // class/subclass of its kernels
  int64_t calls = 0;         // per trace
  int64_t kernels = 0;
  double total_ms = 0;       // per profiled step
  double median_us = 0;      // of the calls' kernel time (a call's kernels of this class, summed)
  double min_us = 0;
  std::optional<GemmShape> gemm;
  std::optional<AttentionShape> attention;  // attention class: the fused attention op's shape
  std::optional<double> median_tflops;  // gemm only: flops / median time
  std::vector<double> call_us;          // every call's kernel time, in trace order
};

struct LaunchStats {
  int64_t kernels = 0;          // kernels with a launch in the trace
  double median_delay_us = 0;   // kernel start - its launch's start (queueing behind earlier work)
  double p90_delay_us = 0;
  double max_delay_us = 0;
  double median_launch_us = 0;  // the CPU time of the launch call itself
  static constexpr double kShortUs = 10;
  int64_t short_kernels = 0;    // kernels shorter than kShortUs: launch overhead dominates them
  double short_ms = 0;          // their time, per step
};

// The main stream's idle time inside the profiled steps, per step: host-bound (the next kernel was not launched
// yet), waiting on another stream (something else runs meanwhile: a collective, a copy), and the rest.
struct IdleSplit {
  double idle_ms = 0;
  double host_bound_ms = 0;
  double other_stream_ms = 0;
  double other_ms = 0;
};

// The host thread that launched the most of the profiled steps' GPU work (the one our host lane models): how long
// it was busy inside the steps' CPU ranges (the union of its operators and launch calls, per step; blocking
// calls such as a synchronising copy count as busy) and how many launches it made.
struct HostThread {
  int64_t pid = -1, tid = -1;  // -1: no launch in a profiled step
  double busy_ms = 0;          // per step
  double launches = 0;         // per step
  double step_ms = 0;          // the steps' CPU range, per step
};

struct TraceInsight {
  int64_t steps = 0;
  std::vector<KernelStat> top_kernels;  // by total time, the first `top_n`
  std::vector<RealOp> ops;              // by total time, every group
  int64_t gemm_calls = 0;               // calls of GEMM-class kernels
  int64_t gemm_calls_shaped = 0;        // of those, the ones with a known GEMM op and its Input Dims
  bool shapes_recorded = false;         // any CPU op carries Input Dims (record_shapes=True)
  LaunchStats launch;
  IdleSplit idle;
  HostThread host;
};

// REQUIRES: `events` read with `table`, steps attributed; `index` over events.ops; `main_stream` as KinetoProfile's.
TraceInsight analyse_trace(const KinetoEvents& events, const CpuOpIndex& index, const KernelClassTable& table,
                           int64_t main_stream,
                           size_t top_n);

}  // namespace simumax::compare
