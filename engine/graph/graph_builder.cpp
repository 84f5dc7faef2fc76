#include "engine/graph/graph_builder.hpp"

#include <boost/graph/compressed_sparse_row_graph.hpp>

namespace simumax::graph {

GraphBuilder::GraphBuilder(TaskGraph& g) : g_(g), last_(g.num_ranks), batch_(g.num_ranks) {}

uint32_t GraphBuilder::name(const std::string& n) {
  auto [it, inserted] = names_.try_emplace(n, static_cast<uint32_t>(g_.names.size()));
  if (inserted) g_.names.push_back(n);
  return it->second;
}

uint32_t GraphBuilder::group(const std::vector<uint32_t>& members) {
  if (members.size() <= 1) return kNoGroup;
  auto [it, inserted] = groups_.try_emplace(members, static_cast<uint32_t>(g_.groups.size()));
  if (inserted) g_.groups.push_back(members);
  return it->second;
}

uint32_t GraphBuilder::op_ref(const OpRef& r) {
  auto [it, inserted] = op_refs_.try_emplace(r.key(), static_cast<uint32_t>(g_.op_refs.size()));
  if (inserted) g_.op_refs.push_back(r);
  return it->second;
}

void GraphBuilder::follow(uint32_t rank, uint32_t task) {
  for (uint32_t prev : last_[rank]) edges_.emplace_back(prev, task);
  last_[rank].assign(1, task);
}

void GraphBuilder::begin_batch(uint32_t rank) { batch_[rank].clear(); }

void GraphBuilder::join_batch(uint32_t rank, uint32_t task) {
  for (uint32_t prev : last_[rank]) edges_.emplace_back(prev, task);
  batch_[rank].push_back(task);
}

void GraphBuilder::end_batch(uint32_t rank) {
  if (!batch_[rank].empty()) last_[rank].swap(batch_[rank]);
}

uint32_t GraphBuilder::append(Task t) {
  const auto id = static_cast<uint32_t>(g_.tasks.size());
  g_.tasks.push_back(t);
  g_.for_each_rank(t, [&](uint32_t r) { follow(r, id); });
  return id;
}

uint32_t GraphBuilder::add_detached(Task t) {
  g_.tasks.push_back(t);
  return static_cast<uint32_t>(g_.tasks.size() - 1);
}

void GraphBuilder::finish() {
  using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                 boost::no_property, uint32_t, uint32_t>;
  const auto n = static_cast<uint32_t>(g_.tasks.size());
  Csr csr(boost::edges_are_unsorted_multi_pass, edges_.begin(), edges_.end(), n);
  g_.succ_offsets.assign(n + 1, 0);
  g_.succ.clear();
  g_.succ.reserve(edges_.size());
  g_.in_degree.assign(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    g_.succ_offsets[v] = static_cast<uint32_t>(g_.succ.size());
    for (auto [it, end] = boost::out_edges(v, csr); it != end; ++it) {
      const uint32_t s = static_cast<uint32_t>(boost::target(*it, csr));
      g_.succ.push_back(s);
      ++g_.in_degree[s];
    }
  }
  g_.succ_offsets[n] = static_cast<uint32_t>(g_.succ.size());
  edges_.clear();
}

}  // namespace simumax::graph
