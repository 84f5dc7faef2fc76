// The lowered training step: a task DAG over ranks in compact arrays, shared by both executors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/task.hpp"
#include "engine/graph/task_table.hpp"

namespace simumax::graph {

// Static (model-state) memory of one rank, present from the start of the step.
struct RankStatic {
  int64_t weight_bytes = 0;
  int64_t grad_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  int64_t other_bytes = 0;  // TE dummy wgrad buffers
  int64_t workspace_bytes = 0;  // cuBLAS workspaces (model::cublas_workspace_bytes; megatron fidelity)
  int64_t total() const { return weight_bytes + grad_bytes + optimizer_state_bytes + other_bytes + workspace_bytes; }
};

struct TaskGraph {
  uint32_t num_ranks = 0;                  // ranks present in this graph (0 .. num_ranks-1)
  std::vector<uint32_t> global_rank;       // graph rank -> rank in the job (rank layout tp-cp-dp-pp)
  std::vector<uint32_t> pp_stage;          // graph rank -> pipeline stage
  std::vector<RankStatic> rank_static;     // graph rank -> static memory
  TaskTable tasks;
  std::vector<uint32_t> succ_offsets;      // CSR: successors of task t are succ[succ_offsets[t] .. succ_offsets[t+1])
  std::vector<uint32_t> succ;
  std::vector<uint32_t> in_degree;
  std::vector<std::vector<uint32_t>> groups;  // member graph ranks of each communication group
  std::vector<std::string> names;
  std::vector<OpRef> op_refs;                 // distinct OpRefs of the tasks (Task::op_ref)

  size_t size() const { return tasks.size(); }
  // The ranks a task occupies: its group's members, or its own rank.
  template <typename F>
  void for_each_rank(const Task& t, F&& f) const {
    if (t.group == kNoGroup) {
      f(t.rank);
    } else {
      for (uint32_t r : groups[t.group]) f(r);
    }
  }
};

}  // namespace simumax::graph
