// Lowering: the step's model and costs become a task DAG per rank (the schedule as dependency edges).
#pragma once

#include <array>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::graph {

// How finely compute is split into tasks. Coarser is faster; the step time is the same without overlap.
enum class Granularity {
  kChunk,  // one forward and one backward task per micro-batch and stage
  kLayer,  // one task per layer (embedding, head) and pass; TP communication folded in
  kOp,     // every op's kernels and every collective as its own task
};

// Which ranks get tasks.
enum class RankScope {
  kStages,  // one representative rank per pipeline stage; TP/CP/DP peers are identical, so collectives
            // are analytical delays on that rank (what SimuMax computes)
  kAll,     // every rank of the job; PP send/recv and DP collectives join the ranks that take part
};

struct LoweringOptions {
  Granularity granularity = Granularity::kLayer;
  RankScope scope = RankScope::kStages;
  // One task for a group's run of equal, back-to-back DP buckets (when they are not overlapped): the same
  // step for the fast executor, fewer tasks (the search); traces and SimGrid flows want every bucket.
  bool merge_dp_buckets = false;
};

// REQUIRES: m = model::build_step_model(s), c = cost::cost_step(s, m).
TaskGraph lower_step(const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
                     const LoweringOptions& options);

// About how many tasks lower_step makes (within a factor of ~2), from the step model alone: ranks in scope x
// micro-batches x (forward + backward) x tasks per chunk, plus transfers and the step's end. Cheap: no graph is
// built, so a caller can refuse a step too large for the machine before building it.
double estimate_tasks(const config::Scenario& s, const model::StepModel& m, const LoweringOptions& options);

// True when the DAG has no cycle (Boost.Graph topological sort). For tests and --check.
bool is_acyclic(const TaskGraph& g);

const char* to_string(Granularity g);
const char* to_string(RankScope s);
inline constexpr std::array<Granularity, 3> kGranularities = {Granularity::kChunk, Granularity::kLayer, Granularity::kOp};
inline constexpr std::array<RankScope, 2> kRankScopes = {RankScope::kStages, RankScope::kAll};

}  // namespace simumax::graph
