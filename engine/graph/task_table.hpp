// The tasks of a graph, 8 bytes each: a prototype (every field but the rank and the group) shared by the ranks of
// a pipeline stage that run the same step, and the rank or group that runs it. Reads return whole Tasks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "engine/graph/task.hpp"

namespace simumax::graph {

// Why: every rank of a pipeline stage runs the same program, so at 16,384 GPUs the 23 M tasks hold a few
// thousand distinct prototypes; 64 bytes per task were most of the run's memory (docs/simgrid.md).
class TaskTable {
 public:
  // With interning on (lower_step turns it on for every-rank graphs), a task equal to an earlier one but for its
  // rank and group shares that one's prototype; off, each task gets its own (no hashing: the search's small
  // graphs). Either way the tasks read back are the ones pushed.
  void set_interning(bool on) { interning_ = on; }
  void reserve(size_t n) {
    proto_of_.reserve(n);
    where_.reserve(n);
  }
  size_t size() const { return proto_of_.size(); }
  bool empty() const { return proto_of_.empty(); }
  size_t num_prototypes() const { return protos_.size(); }

  // Task i (by value: assemble it from its prototype and its rank or group).
  Task operator[](size_t i) const {
    Task t = protos_[proto_of_[i]];
    if (t.group == kNoGroup) {
      t.rank = where_[i];
    } else {
      t.group = where_[i];
      t.rank = rank_of_group(t.group, i);
    }
    return t;
  }
  // The fields of task i that do not depend on its rank (its rank and group fields are meaningless): for loops
  // that read a field or two of every task.
  const Task& proto(size_t i) const { return protos_[proto_of_[i]]; }
  bool has_group(size_t i) const { return proto(i).group != kNoGroup; }
  uint32_t group(size_t i) const { return has_group(i) ? where_[i] : kNoGroup; }

  // Appends `t`; returns its index.
  uint32_t push_back(const Task& t) {
    const auto id = static_cast<uint32_t>(proto_of_.size());
    proto_of_.push_back(0);
    where_.push_back(0);
    set(id, t);
    return id;
  }
  // Task i becomes `t` (other tasks sharing its old prototype are unchanged).
  void set(uint32_t i, const Task& t) {
    Task p = t;
    p.rank = 0;
    p.group = t.group == kNoGroup ? kNoGroup : 0;
    proto_of_[i] = intern(p);
    if (t.group == kNoGroup) {
      where_[i] = t.rank;
      return;
    }
    where_[i] = t.group;
    if (t.group >= group_rank_.size()) group_rank_.resize(t.group + 1, kUnset);
    uint32_t& rank = group_rank_[t.group];
    if (rank == kUnset) rank = t.rank;
    if (rank != t.rank) {
      odd_rank_[i] = t.rank;  // a group task whose rank is not its group's usual one (hand-built graphs)
    } else {
      odd_rank_.erase(i);
    }
  }
  // Frees the interning index (the prototypes stay); later pushes still intern, from scratch.
  void seal() {
    std::unordered_map<Task, uint32_t, ProtoHash, ProtoEqual>().swap(index_);
    last_ = kUnset;
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Task;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Task;
    const_iterator(const TaskTable* table, size_t i) : table_(table), i_(i) {}
    Task operator*() const { return (*table_)[i_]; }
    const_iterator& operator++() { return ++i_, *this; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const TaskTable* table_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  static constexpr uint32_t kUnset = kNoGroup;
  struct ProtoEqual {
    bool operator()(const Task& a, const Task& b) const {
      return a.seconds == b.seconds && a.latency_seconds == b.latency_seconds &&
             a.mem_peak_bytes == b.mem_peak_bytes && a.mem_delta_bytes == b.mem_delta_bytes && a.group == b.group &&
             a.name == b.name && a.op_ref == b.op_ref && a.microbatch == b.microbatch && a.layer == b.layer &&
             a.chunk == b.chunk && a.kind == b.kind && a.pattern == b.pattern && a.pass == b.pass &&
             a.network == b.network && a.stream == b.stream;
    }
  };
  struct ProtoHash {
    size_t operator()(const Task& t) const {
      size_t h = std::hash<double>{}(t.seconds);
      const auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      mix(std::hash<double>{}(t.latency_seconds));
      mix(static_cast<uint64_t>(t.mem_peak_bytes));
      mix(static_cast<uint64_t>(t.mem_delta_bytes));
      mix(static_cast<uint64_t>(t.name) << 32 | t.op_ref);
      mix(static_cast<uint64_t>(static_cast<uint16_t>(t.microbatch)) << 32 |
          static_cast<uint64_t>(static_cast<uint16_t>(t.layer)) << 16 | static_cast<uint16_t>(t.chunk));
      mix(static_cast<uint64_t>(t.kind) << 24 | static_cast<uint64_t>(t.pattern) << 16 |
          static_cast<uint64_t>(t.pass ? 1 + static_cast<int>(*t.pass) : 0) << 8 | t.stream);
      mix(static_cast<uint64_t>(t.network) << 1 | (t.group == kNoGroup ? 1 : 0));
      return h;
    }
  };
  uint32_t intern(const Task& p) {
    const auto next = static_cast<uint32_t>(protos_.size());
    if (!interning_) {
      protos_.push_back(p);
      return next;
    }
    // The lanes of a TP group push the same step one after another: no hash for them.
    if (last_ != kUnset && ProtoEqual{}(protos_[last_], p)) return last_;
    const auto [it, fresh] = index_.try_emplace(p, next);
    if (fresh) protos_.push_back(p);
    return last_ = it->second;
  }
  uint32_t rank_of_group(uint32_t group, size_t i) const {
    if (!odd_rank_.empty()) {
      if (auto it = odd_rank_.find(static_cast<uint32_t>(i)); it != odd_rank_.end()) return it->second;
    }
    return group_rank_[group];
  }

  bool interning_ = false;
  uint32_t last_ = kUnset;  // the prototype interned last
  std::vector<Task> protos_;
  std::vector<uint32_t> proto_of_;  // [task] -> protos_
  std::vector<uint32_t> where_;     // [task] -> its rank, or its group when the prototype has one
  std::vector<uint32_t> group_rank_;  // [group] -> the rank of its tasks (Task::rank: the first member)
  std::unordered_map<uint32_t, uint32_t> odd_rank_;  // task -> rank, where it is not its group's
  std::unordered_map<Task, uint32_t, ProtoHash, ProtoEqual> index_;  // prototype -> protos_
};

}  // namespace simumax::graph
