// The pipeline in one screen: scenario -> model -> cost -> task DAG -> executor -> memory -> summary.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/executor/rank_timing.hpp"
#include "engine/executor/timeline.hpp"
#include "engine/graph/lowering.hpp"
#include "engine/memory/memory_analysis.hpp"
#include "engine/model/op_cache.hpp"
#include "engine/model/step_model.hpp"
#include "engine/report/summary.hpp"

namespace simumax {

enum class ExecutorKind { kFast, kSim };
inline constexpr std::array<ExecutorKind, 2> kExecutorKinds = {ExecutorKind::kFast, ExecutorKind::kSim};

struct RunOptions {
  ExecutorKind executor = ExecutorKind::kFast;
  graph::LoweringOptions lowering;
  std::optional<std::string> platform_xml;  // sim: a user platform (else generated from the system config)
  std::string platform_out;                 // sim: where the generated platform XML is written (may be empty)
  bool keep_memory_curves = false;
  // The info line of each stage (`--log-level info`); search's evaluator turns them off (one per candidate
  // buried the search's own lines under hundreds of thousands).
  bool log_stages = true;
  // simulate() with the sim executor: false leaves the returned Timeline without its per-task start/end arrays
  // (16 bytes a task): the summary and the per-rank statistics are folded as the tasks end (executor::TaskSink),
  // so only outputs that draw every task (trace, memory files) need them. The fast executor always keeps them.
  bool keep_timeline = true;
  // A step whose graph::estimate_tasks is above this is refused (common::UsageError) before it is built: 400 M
  // estimated tasks take ~14 GB on SimGrid without the timeline, ~19 GB with it (estimated_bytes).
  double max_tasks = 400e6;
  // Layers and their costs built by earlier runs that build them alike (search's evaluator keeps one of each
  // per thread); null: built afresh.
  model::OpCache* op_cache = nullptr;
  cost::CostCache* cost_cache = nullptr;
};

// The step without its summary: what search needs (the peaks, the makespan) and what the summary is made from.
struct StepRun {
  model::StepModel model;
  cost::StepCost cost;
  graph::TaskGraph graph;
  executor::Timeline timeline;
  std::vector<memory::RankMemory> memory;
};

struct RunResult : StepRun {
  executor::StepTiming timing;  // per rank: end, compute, communication and its exposed part (ranks.json)
  report::Summary summary;
};

// The stages chained once, for every caller: model, cost, lowering, executor, memory replay. `sim` runs
// SimGrid: one per process (SimGrid keeps global state). Throws common::ConfigError for bad input,
// common::UsageError for a step over `max_tasks`, common::InternalError for our bugs.
StepRun run_step(const config::Scenario& s, const RunOptions& options);

// run_step, then report::summarize: one scenario end to end. The timing and the memory of every rank are folded
// from the executor's task starts and ends (RankTimingSink, memory::MemoryStream: the sim executor feeds them as
// it runs; the fast executor's timeline is replayed into them), so `memory` has cached_micro_batches set.
RunResult simulate(const config::Scenario& s, const RunOptions& options);

// The peak memory of a run of `estimated_tasks` (graph::estimate_tasks) with these options, for the refusal's
// message. Measured at 16,384 GPUs (docs/simgrid.md): 34 bytes per estimated task on SimGrid without the
// timeline, 48 with the per-task start and end times the fast executor and traces keep.
double estimated_bytes(double estimated_tasks, const RunOptions& options);

const char* to_string(ExecutorKind k);

}  // namespace simumax
