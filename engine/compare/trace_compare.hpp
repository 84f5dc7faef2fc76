// `simumax-sim compare`: our simulated step (trace.json / summary.json) against a real run (a PyTorch profiler
// trace or a Megatron-LM log), per real step, as a side-by-side table and JSON. docs/compare.md has the details.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/kineto_collectives.hpp"
#include "engine/compare/kineto_insight.hpp"
#include "engine/compare/megatron_log.hpp"
#include "engine/compare/simulated_trace.hpp"
#include "engine/compare/trace_compare_ranks.hpp"
#include "engine/compare/step_breakdown.hpp"

namespace simumax::compare {

struct CompareOptions {
  std::string ours;            // our trace.json, summary.json, or run folder
  std::string real;            // a Kineto trace (.json / .json.gz), a folder of rank traces, or a Megatron-LM log
  std::vector<std::string> more_real;  // more rank traces (or folders) of the same run
  std::string kernel_classes;  // the classification table file
  std::optional<int64_t> rank; // our rank to compare; default: the real trace's rank when ours has it, else the lowest
  size_t top_n = 10;           // rows of the top-kernel and per-op tables (the JSON has every op)
};

struct RealRun {
  std::string path;
  std::string kind;                    // "kineto trace" or "megatron log"
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  std::vector<StepBreakdown> steps;    // a log's steps carry only total_ms
  int64_t gpu_events = 0;
  int64_t unattributed_events = 0;
  int64_t main_stream = -1;
  std::vector<MegatronMemory> memory;  // a log's report_memory lines
  std::optional<TraceInsight> insight;          // a trace: top kernels, ops, launches, idle split
  std::optional<CollectiveLabels> collectives;  // a trace: its NCCL kernels typed by their CPU op
};

// One of our ops lined up with a real op: by GEMM shape (and pass) where both have one, else by class and rank
// of cost (our i-th costliest op of a class against the real i-th).
struct OpMatch {
  size_t ours = 0;                  // index into SimulatedRun::ops
  std::optional<size_t> real;       // index into TraceInsight::ops
  std::string by;                   // "shape", "class order", or "" (nothing left to match)
};

// One named figure of a step, in the order the table shows them; absent when the side cannot know it.
using Metric = std::pair<std::string, std::optional<double>>;

// Whether the real run is a transformer's training step, as the simulated job is, judged from the kernels of its
// steps: a trace of another workload (a recommender: no attention, embedding-bag kernels) gives errors that
// compare different work (issue 34: +1917 % against HTA's train_8gpu trace, with nothing said). A log is not
// judged (no kernels).
struct WorkloadCheck {
  bool judged = false;
  std::vector<std::string> reasons;  // empty: the kernels look like the simulated job's
};

struct Comparison {
  std::vector<KernelClass> classes;
  std::string classes_path;
  SimulatedRun ours;
  StepBreakdown ours_step;      // from our trace, or only the total from summary.json
  RealRun real;
  std::vector<size_t> averaged;  // the real steps the summary row stands for (a log: its steady state)
  bool median = false;           // the summary row is the median (a log), else the mean (profiled steps)
  std::string steady_state;      // a log: which iterations make the steady state (SteadyState::description)
  std::vector<OpMatch> ops;      // our ops against the real trace's (empty without both)
  std::vector<RankSummary> ranks;  // several rank traces: each rank's mean step (the lowest rank is `real`)
  std::optional<Straggler> straggler;
  size_t top_n = 10;
  WorkloadCheck workload;
};

// The check of `c`'s real steps (those averaged): no kernel of the class "attention", or more than half the compute
// time in the class "other" (kernels no rule of the kernel-class table knows).
WorkloadCheck check_workload(const Comparison& c);

// Lines our ops up with the real ones (see OpMatch); every op of ours appears once, in our cost order.
std::vector<OpMatch> align_ops(const SimulatedRun& ours, const TraceInsight& real);
// The pass our op name says: "backward" for *.bwd / *.dgrad / *.wgrad, "optimizer" for optimizer*, else forward.
std::string pass_of_our_op(const std::string& name);
// The real trace's insight and the op alignment as text tables ("" for a log).
std::string insight_tables(const Comparison& c);

// Loads both sides. Throws ConfigError(file, "", what) for any bad input (missing file, not a trace, no steps).
Comparison compare_runs(const CompareOptions& options);

// The time figures of a step: total_ms, compute_ms, <compute class>_ms..., comm_ms, exposed_comm_ms,
// <memory class>_ms..., idle_ms (only total_ms for a step without a breakdown).
std::vector<Metric> time_metrics(const StepBreakdown& s, const std::vector<KernelClass>& classes);
// The comm kernel types (subclasses) either side launched, sorted.
std::vector<std::string> comm_types(const Comparison& c);
// The counts: kernels, kernels.<class> for each class (our tasks against real kernels means little in total; class
// by class it shows what the model leaves out), then comm.<type> for each of `comm_types`.
std::vector<Metric> count_metrics(const StepBreakdown& s, const std::vector<KernelClass>& classes,
                                  const std::vector<std::string>& comm_types);
// Element-wise mean of the metrics of several steps (a figure absent from any is absent).
std::vector<Metric> mean_metrics(const std::vector<std::vector<Metric>>& sets);
// Element-wise statistic: "mean", "median", "min" or "max" (a figure absent from any is absent).
std::vector<Metric> reduce_metrics(const std::vector<std::vector<Metric>>& sets, const std::string& statistic);
// The summary row's metrics: the median of the steady steps of a log, the mean of profiled steps.
std::vector<Metric> summary_metrics(const Comparison& c, const std::vector<std::vector<Metric>>& averaged);
// (ours - real) / real in percent; absent when either is absent or real is 0.
std::optional<double> error_pct(std::optional<double> ours, std::optional<double> real);

// The side-by-side text table.
std::string comparison_table(const Comparison& c);
// The same as JSON (deterministic).
std::string comparison_json(const Comparison& c);

}  // namespace simumax::compare
