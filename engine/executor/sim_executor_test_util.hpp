// Test helpers for the sim executor: hand-built task graphs and simulations run in a child process.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/executor/sim_executor.hpp"
#include "engine/platform/subprocess_test_util.hpp"

namespace simumax::executor::testing {

using graph::CommPattern;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Builds a TaskGraph by hand: tasks with explicit dependencies, CSR at the end.
class GraphBuilder {
 public:
  explicit GraphBuilder(uint32_t ranks) {
    g_.num_ranks = ranks;
    for (uint32_t r = 0; r < ranks; ++r) g_.global_rank.push_back(r);
  }
  uint32_t compute(uint32_t rank, double seconds, const std::vector<uint32_t>& deps = {}) {
    graph::Task t;
    t.seconds = seconds;
    t.rank = rank;
    return add(t, deps);
  }
  uint32_t comm(const std::vector<uint32_t>& members, CommPattern pattern, double seconds, double latency,
                const std::vector<uint32_t>& deps = {}) {
    graph::Task t;
    t.seconds = seconds;
    t.latency_seconds = latency;
    t.rank = members[0];
    t.group = group_of(members);
    t.pattern = pattern;
    t.network = true;
    t.kind = graph::TaskKind::kTpComm;
    return add(t, deps);
  }
  graph::TaskGraph build() {
    const size_t n = g_.tasks.size();
    g_.succ_offsets.assign(n + 1, 0);
    g_.in_degree.assign(n, 0);
    for (const auto& [from, to] : edges_) {
      ++g_.succ_offsets[from + 1];
      ++g_.in_degree[to];
    }
    for (size_t i = 0; i < n; ++i) g_.succ_offsets[i + 1] += g_.succ_offsets[i];
    g_.succ.resize(edges_.size());
    std::vector<uint32_t> pos(g_.succ_offsets.begin(), g_.succ_offsets.end() - 1);
    for (const auto& [from, to] : edges_) g_.succ[pos[from]++] = to;
    return g_;
  }

 private:
  uint32_t add(graph::Task t, const std::vector<uint32_t>& deps) {
    const auto id = static_cast<uint32_t>(g_.tasks.size());
    t.name = static_cast<uint32_t>(g_.names.size());
    g_.names.push_back("task" + std::to_string(id));
    g_.tasks.push_back(t);
    for (uint32_t d : deps) edges_.emplace_back(d, id);
    return id;
  }
  uint32_t group_of(const std::vector<uint32_t>& members) {
    for (size_t i = 0; i < g_.groups.size(); ++i) {
      if (g_.groups[i] == members) return static_cast<uint32_t>(i);
    }
    g_.groups.push_back(members);
    return static_cast<uint32_t>(g_.groups.size() - 1);
  }
  graph::TaskGraph g_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
};

inline platform::PlatformSpec spec(int64_t nodes) {
  platform::PlatformSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.nvlink_bytes_per_s = 900 * kGiB;
  s.nic_bytes_per_s = 25 * kGiB;
  s.nvlink_latency_s = 35e-6;
  s.nic_latency_s = 35e-6;
  s.source = "sim_executor_test";
  return s;
}

// A Timeline through the pipe of in_child_process: the doubles' bytes.
inline std::string encode(const Timeline& tl) {
  std::string out(sizeof(double) * (1 + 2 * tl.start.size()), '\0');
  char* p = out.data();
  std::memcpy(p, &tl.makespan, sizeof(double));
  std::memcpy(p + sizeof(double), tl.start.data(), sizeof(double) * tl.start.size());
  std::memcpy(p + sizeof(double) * (1 + tl.start.size()), tl.end.data(), sizeof(double) * tl.end.size());
  return out;
}

inline Timeline decode(const std::string& bytes) {
  Timeline tl;
  const size_t n = (bytes.size() / sizeof(double) - 1) / 2;
  tl.start.resize(n);
  tl.end.resize(n);
  std::memcpy(&tl.makespan, bytes.data(), sizeof(double));
  std::memcpy(tl.start.data(), bytes.data() + sizeof(double), sizeof(double) * n);
  std::memcpy(tl.end.data(), bytes.data() + sizeof(double) * (1 + n), sizeof(double) * n);
  tl.executor = "sim";
  return tl;
}

// run_sim in its own process (one SimGrid engine per process).
inline Timeline sim_in_child(const graph::TaskGraph& g, const SimOptions& options) {
  const auto child = platform::testing::in_child_process([&] { return encode(run_sim(g, options)); });
  if (!child.ok) throw std::runtime_error(child.value);
  return decode(child.value);
}

inline SimOptions on(int64_t nodes) {
  SimOptions o;
  o.spec = spec(nodes);
  return o;
}

}  // namespace simumax::executor::testing
