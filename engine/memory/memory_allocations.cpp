#include "engine/memory/memory_allocations.hpp"

#include <map>
#include <tuple>

#include "engine/memory/memory_timeline.hpp"

namespace simumax::memory {

const char* to_string(AllocKind k) {
  switch (k) {
    case AllocKind::kStatic: return "static";
    case AllocKind::kActivation: return "activation";
    case AllocKind::kTransient: return "transient";
  }
  return "?";
}

namespace {

// Which saved activations a release belongs to: the same op (or block / chunk), micro-batch, layer and chunk.
using Key = std::tuple<int32_t, int32_t, int32_t, int32_t, int32_t, int32_t>;

Key key_of(const graph::TaskGraph& g, const graph::Task& t) {
  graph::OpRef r;
  if (t.op_ref != graph::kNoOpRef) r = g.op_refs[t.op_ref];
  return {r.chunk, r.block, r.op, t.microbatch, t.layer, t.chunk};
}

std::string label(const graph::TaskGraph& g, const graph::Task& t) {
  std::string s = g.names[t.name];
  if (t.microbatch >= 0) s += " mb" + std::to_string(t.microbatch);
  if (t.layer >= 0) s += " L" + std::to_string(t.layer);
  if (t.chunk > 0) s += " vc" + std::to_string(t.chunk);
  return s;
}

class Builder {
 public:
  explicit Builder(RankAllocations& ra) : ra_(ra) {}

  uint32_t alloc(std::string name, AllocKind kind, int64_t bytes, uint32_t task, double seconds) {
    const auto a = static_cast<uint32_t>(ra_.allocations.size());
    ra_.allocations.push_back({std::move(name), kind, bytes, task, ra_.events.size(), kNever});
    event(seconds, a, false, bytes);
    return a;
  }
  void free(uint32_t a, double seconds) {
    ra_.allocations[a].free_event = ra_.events.size();
    event(seconds, a, true, -ra_.allocations[a].bytes);
  }
  void save(const Key& key, std::string name, int64_t bytes, uint32_t task, double seconds) {
    const uint32_t a = alloc(std::move(name), AllocKind::kActivation, bytes, task, seconds);
    saved_[key].push_back(a);
    live_.push_back(a);
    key_of_[a] = key;
  }
  void release(const Key& key, int64_t bytes, double seconds) {
    auto& own = saved_[key];
    while (bytes > 0 && !own.empty()) bytes = take(pop(own), bytes, seconds);
    // A release the op's own saves do not cover takes the newest live activations (never seen in the
    // lowered graphs, where each backward frees what its own forward or recompute saved).
    while (bytes > 0 && !live_.empty()) bytes = take(pop(live_), bytes, seconds);
  }

  void set_task(uint32_t t) { task_ = t; }

 private:
  // The newest still-live allocation of a stack (entries already freed through the other stack are skipped).
  uint32_t pop(std::vector<uint32_t>& stack) {
    while (!stack.empty()) {
      const uint32_t a = stack.back();
      stack.pop_back();
      if (ra_.allocations[a].free_event == kNever) return a;
    }
    return graph::kNoOpRef;
  }
  int64_t take(uint32_t a, int64_t bytes, double seconds) {
    if (a == graph::kNoOpRef) return bytes;
    const Allocation& al = ra_.allocations[a];
    const int64_t size = al.bytes;
    const Key key = key_of_[a];
    std::string name = al.name;
    const uint32_t task = al.task;
    free(a, seconds);
    if (size <= bytes) return bytes - size;
    if (!name.ends_with(" (rest)")) name += " (rest)";
    save(key, std::move(name), size - bytes, task, seconds);
    return 0;
  }
  void event(double seconds, uint32_t a, bool is_free, int64_t change) {
    ra_.events.push_back({seconds, a, is_free, task_});
    total_ += change;
    if (total_ >= ra_.peak_bytes) {  // ties: the later point, as analyze_memory
      ra_.peak_bytes = total_;
      ra_.peak_event = ra_.events.size() - 1;
    }
  }

  RankAllocations& ra_;
  uint32_t task_ = graph::kNoOpRef;  // the task whose events are being added
  int64_t total_ = 0;
  std::map<Key, std::vector<uint32_t>> saved_;  // live activations by what saved them, newest last
  std::vector<uint32_t> live_;                  // every activation in allocation order, newest last
  std::map<uint32_t, Key> key_of_;
};

void add_static(Builder& b, const graph::RankStatic& s) {
  const std::pair<const char*, int64_t> parts[] = {{"weights", s.weight_bytes},
                                                   {"gradients", s.grad_bytes},
                                                   {"optimizer states", s.optimizer_state_bytes},
                                                   {"TE dummy wgrad buffers", s.other_bytes},
                                                   {"cuBLAS workspaces", s.workspace_bytes}};
  for (const auto& [name, bytes] : parts) {
    if (bytes != 0) b.alloc(name, AllocKind::kStatic, bytes, graph::kNoOpRef, 0.0);
  }
}

}  // namespace

RankAllocations rank_allocations(const graph::TaskGraph& g, const executor::Timeline& tl, uint32_t rank,
                                 const std::vector<uint32_t>& tasks) {
  RankAllocations ra;
  ra.rank = rank;
  Builder b(ra);
  add_static(b, g.rank_static[rank]);
  for (uint32_t t : tasks) {
    const auto& task = g.tasks[t];
    if (!is_memory_task(task, rank)) continue;
    const std::string name = label(g, task);
    b.set_task(t);
    uint32_t transient = graph::kNoOpRef;
    if (task.mem_peak_bytes > 0) {
      transient = b.alloc(name + " (transient)", AllocKind::kTransient, task.mem_peak_bytes, t, tl.start[t]);
    }
    if (transient != graph::kNoOpRef) b.free(transient, tl.end[t]);
    if (task.mem_delta_bytes > 0) b.save(key_of(g, task), name + " (saved)", task.mem_delta_bytes, t, tl.end[t]);
    if (task.mem_delta_bytes < 0) b.release(key_of(g, task), -task.mem_delta_bytes, tl.end[t]);
  }
  return ra;
}

}  // namespace simumax::memory
