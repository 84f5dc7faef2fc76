// Appends tasks to a TaskGraph in per-rank program order; each new task depends on the ranks' previous tasks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/graph/task_graph.hpp"

namespace simumax::graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(TaskGraph& g);

  uint32_t name(const std::string& n);
  uint32_t group(const std::vector<uint32_t>& members);  // interned; one member -> kNoGroup
  // Appends `t` after the last task of `t.rank` (or of every member of `t.group`).
  uint32_t append(Task t);
  // Adds `t` without ordering it on any rank yet; place it with join() on each rank, in program order.
  uint32_t add_detached(Task t);
  // Makes `task` (already added) the next task of `rank` as well.
  void join(uint32_t rank, uint32_t task);
  // Builds the CSR successor arrays and in-degrees. Call once, at the end.
  void finish();

 private:
  void follow(uint32_t rank, uint32_t task);

  TaskGraph& g_;
  std::vector<uint32_t> last_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
  std::unordered_map<std::string, uint32_t> names_;
  std::map<std::vector<uint32_t>, uint32_t> groups_;
};

}  // namespace simumax::graph
