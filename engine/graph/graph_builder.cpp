#include "engine/graph/graph_builder.hpp"

#include <utility>

namespace simumax::graph {

GraphBuilder::GraphBuilder(TaskGraph& g) : g_(g), last_(g.num_ranks * kNumStreams), batch_(g.num_ranks) {}

void GraphBuilder::reserve(size_t tasks) {
  g_.tasks.reserve(tasks);
  edges_.reserve(2 * tasks);
}

uint32_t GraphBuilder::name(std::string_view n) {
  if (auto it = names_.find(n); it != names_.end()) return it->second;
  const auto id = static_cast<uint32_t>(g_.names.size());
  g_.names.emplace_back(n);
  names_.emplace(g_.names.back(), id);
  return id;
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

uint32_t GraphBuilder::pair_group(uint32_t a, uint32_t b) {
  const uint64_t key = (static_cast<uint64_t>(a) << 32) | b;
  auto it = pairs_.find(key);
  if (it != pairs_.end()) return it->second;
  const uint32_t id = group({a, b});
  pairs_.emplace(key, id);
  return id;
}

void GraphBuilder::follow(uint32_t rank, uint32_t task, uint8_t stream) {
  auto& f = frontier(rank, stream);
  for (uint32_t prev : f) edges_.emplace_back(prev, task);
  f.assign(1, task);
}

void GraphBuilder::depend(uint32_t from, uint32_t to) { edges_.emplace_back(from, to); }

void GraphBuilder::also_wait(uint32_t rank, uint32_t task) { frontier(rank, kComputeStream).push_back(task); }

void GraphBuilder::wait_stream(uint32_t rank, uint8_t stream) {
  auto& f = frontier(rank, stream);
  auto& c = frontier(rank, kComputeStream);
  c.insert(c.end(), f.begin(), f.end());
}

void GraphBuilder::after_current(uint32_t rank, uint32_t task) {
  for (uint32_t prev : frontier(rank, kComputeStream)) edges_.emplace_back(prev, task);
}

void GraphBuilder::begin_batch(uint32_t rank) { batch_[rank].clear(); }

void GraphBuilder::join_batch(uint32_t rank, uint32_t task) {
  for (uint32_t prev : frontier(rank, kComputeStream)) edges_.emplace_back(prev, task);
  if (host_lane_) {
    for (uint32_t launch : frontier(rank, kHostStream)) edges_.emplace_back(launch, task);  // its NCCL call
  }
  batch_[rank].push_back(task);
}

void GraphBuilder::end_batch(uint32_t rank) {
  if (!batch_[rank].empty()) frontier(rank, kComputeStream).swap(batch_[rank]);
}

void GraphBuilder::set_seconds(uint32_t id, double seconds) {
  Task t = g_.tasks[id];
  t.seconds = seconds;
  g_.tasks.set(id, t);
}

uint32_t GraphBuilder::append(Task t, bool launched_here) {
  const uint32_t id = g_.tasks.push_back(t);
  g_.for_each_rank(t, [&](uint32_t r) {
    if (host_lane_ && launched_here) {
      for (uint32_t launch : frontier(r, kHostStream)) edges_.emplace_back(launch, id);
    }
    follow(r, id, t.stream);
  });
  return id;
}

uint32_t GraphBuilder::issue(uint32_t rank, Task t) {
  t.kind = TaskKind::kHost;
  t.stream = kHostStream;
  t.rank = rank;
  t.group = kNoGroup;
  t.network = false;
  t.mem_peak_bytes = t.mem_delta_bytes = 0;
  const uint32_t id = g_.tasks.push_back(t);
  follow(rank, id, kHostStream);
  return id;
}

void GraphBuilder::host_waits(uint32_t rank) {
  if (!host_lane_) return;
  auto& c = frontier(rank, kComputeStream);
  auto& h = frontier(rank, kHostStream);
  // GPU tasks an earlier synchronisation left here precede the compute stream's frontier now: drop them, or a
  // lane without host tasks between its synchronisations (every pass captured in a CUDA graph) would gather
  // every synchronisation's and each GPU task would take an edge from all of them.
  std::erase_if(h, [&](uint32_t id) { return g_.tasks[id].kind != TaskKind::kHost; });
  h.insert(h.end(), c.begin(), c.end());
}

uint32_t GraphBuilder::add_detached(Task t) { return g_.tasks.push_back(t); }

// A counting sort of the edges by their source, stable (successors in the order their edges were added, as
// Boost's compressed_sparse_row_graph orders them), written straight into the graph's arrays: no second copy of
// the edges (at 16k GPUs the edge list alone is ~0.4 GB).
void GraphBuilder::finish() {
  const auto n = static_cast<uint32_t>(g_.tasks.size());
  auto& offsets = g_.succ_offsets;
  offsets.assign(n + 1, 0);
  g_.in_degree.assign(n, 0);
  for (const auto& [from, to] : edges_) {
    ++offsets[from];  // out-degree, for now
    ++g_.in_degree[to];
  }
  uint32_t sum = 0;
  for (uint32_t v = 0; v < n; ++v) sum += std::exchange(offsets[v], sum);  // offsets[v]: where v's run starts
  g_.succ.resize(edges_.size());
  for (const auto& [from, to] : edges_) g_.succ[offsets[from]++] = to;  // offsets[v]: where v's run ends
  for (uint32_t v = n; v > 0; --v) offsets[v] = offsets[v - 1];
  offsets[0] = 0;
  std::vector<std::pair<uint32_t, uint32_t>>().swap(edges_);
  g_.tasks.seal();
}

}  // namespace simumax::graph
