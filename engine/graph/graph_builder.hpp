// Appends tasks to a TaskGraph in per-rank program order; each new task depends on the ranks' previous tasks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/graph/task_graph.hpp"

namespace simumax::graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(TaskGraph& g);

  uint32_t name(std::string_view n);  // interned into TaskGraph::names
  size_t size() const { return g_.tasks.size(); }
  void reserve(size_t tasks);  // room for `tasks` tasks and twice as many edges
  uint32_t num_ranks() const { return g_.num_ranks; }
  Task task(uint32_t id) const { return g_.tasks[id]; }
  void set_seconds(uint32_t id, double seconds);  // of a task already added
  // The compute stream also waits for everything issued so far on `stream`.
  void wait_stream(uint32_t rank, uint8_t stream);
  uint32_t group(const std::vector<uint32_t>& members);  // interned; one member -> kNoGroup
  uint32_t pair_group(uint32_t a, uint32_t b);            // group(a, b), without building a vector
  uint32_t op_ref(const OpRef& r);                       // interned into TaskGraph::op_refs
  // Appends `t` after the last task of `t.rank` (or of every member of `t.group`) on stream `t.stream`; with
  // the host lane on, a GPU task also waits for the last host task of each of its ranks (its launch), unless
  // `launched_here` is false: work whose launch is not at this point of the host's program (the overlapped DP
  // buckets, launched by backward hooks or prefetched when the step starts, are appended after the pipeline).
  uint32_t append(Task t, bool launched_here = true);
  // Turns the host lane on: append() then orders GPU tasks after their rank's host tasks.
  void enable_host_lane() { host_lane_ = true; }
  bool host_lane() const { return host_lane_; }
  // Appends host task `t` (kind kHost) on `rank`'s host lane, after the rank's previous host task.
  uint32_t issue(uint32_t rank, Task t);
  // A host synchronisation: the rank's next host task also waits for what its compute stream has so far.
  void host_waits(uint32_t rank);
  // An extra dependency between two tasks already added.
  void depend(uint32_t from, uint32_t to);
  // The next task on `rank`'s compute stream also waits for `task` (an asynchronous receive, a collective
  // overlapped on another stream).
  void also_wait(uint32_t rank, uint32_t task);
  // `task` waits for what `rank` has done so far on its compute stream, without holding the stream up.
  void after_current(uint32_t rank, uint32_t task);
  // Adds `t` without ordering it on any rank yet; place it with join() on each rank, in program order.
  uint32_t add_detached(Task t);
  // A batch of transfers on `rank`: each task joined between begin_batch and end_batch depends on what the
  // rank did before the batch (and, with the host lane, on the host having issued it); what the rank does after
  // it depends on all of them.
  void begin_batch(uint32_t rank);
  void join_batch(uint32_t rank, uint32_t task);
  void end_batch(uint32_t rank);
  // Builds the CSR successor arrays and in-degrees. Call once, at the end.
  void finish();

 private:
  void follow(uint32_t rank, uint32_t task, uint8_t stream = kComputeStream);
  std::vector<uint32_t>& frontier(uint32_t rank, uint8_t stream) { return last_[rank * kNumStreams + stream]; }

  TaskGraph& g_;
  bool host_lane_ = false;
  std::vector<std::vector<uint32_t>> last_;   // [rank][stream] frontier (one task, or a finished batch)
  std::vector<std::vector<uint32_t>> batch_;  // tasks of each rank's open batch
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
  // Looked up by string_view (no string is built for a name already interned).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> names_;
  std::map<std::vector<uint32_t>, uint32_t> groups_;
  std::unordered_map<uint64_t, uint32_t> pairs_;
  std::map<decltype(OpRef{}.key()), uint32_t> op_refs_;
};

}  // namespace simumax::graph
