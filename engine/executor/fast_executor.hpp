// The in-process executor: list scheduling of the DAG with analytical durations, no contention.
#pragma once

#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"

namespace simumax::executor {

// Every task starts when its last predecessor ends and takes Task::seconds.
// Throws common::InternalError if the DAG has a cycle (some task never becomes ready).
Timeline run_fast(const graph::TaskGraph& g);

}  // namespace simumax::executor
