#include "engine/memory/memory_stream.hpp"

#include <algorithm>

namespace simumax::memory {

namespace {

// A task whose end changes a rank's cached micro-batches: a forward or backward compute task of a micro-batch.
bool caches(const graph::Task& t) {
  return t.group == graph::kNoGroup && t.microbatch >= 0 &&
         (t.pass == schedule::Pass::kForward || t.pass == schedule::Pass::kBackward);
}

// A task analyze_memory walks (without curves).
bool walked(const graph::Task& t) {
  return t.group == graph::kNoGroup && (t.mem_peak_bytes != 0 || t.mem_delta_bytes != 0);
}

}  // namespace

MemoryStream::MemoryStream(const graph::TaskGraph& g, double mem_factor)
    : g_(g), mem_factor_(mem_factor), ranks_(g.num_ranks), out_(g.num_ranks) {
  for (const graph::Task& t : g.tasks) {
    if (!caches(t)) continue;
    micro_batches_ = std::max<int64_t>(micro_batches_, t.microbatch + 1);
    chunks_ = std::max<int64_t>(chunks_, std::max<int>(t.chunk, 0) + 1);
  }
  caches_.resize(static_cast<size_t>(g.num_ranks * micro_batches_ * chunks_));
  for (const graph::Task& t : g.tasks) {
    if (!caches(t)) continue;
    Cache& c = caches_[cache_slot(t)];
    ++(t.pass == schedule::Pass::kForward ? c.fwd : c.bwd);
  }
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    RankMemory& rm = out_[r];
    rm.rank = r;
    rm.static_bytes = g.rank_static[r];
    ranks_[r].base = rm.peak_allocated_bytes = rm.static_bytes.total();
    const int64_t per_rank = micro_batches_ * chunks_;
    for (int64_t i = 0; i < per_rank; ++i) ranks_[r].cached += caches_[r * per_rank + i].cached();
  }
}

int64_t MemoryStream::cache_slot(const graph::Task& t) const {
  const int64_t chunk = std::max<int>(t.chunk, 0);
  if (t.microbatch < 0 || t.microbatch >= micro_batches_ || chunk >= chunks_) return -1;
  return (static_cast<int64_t>(t.rank) * micro_batches_ + t.microbatch) * chunks_ + chunk;
}

void MemoryStream::started(uint32_t task, double seconds) {
  const graph::Task& t = g_.tasks[task];
  if (!walked(t)) return;
  Rank& r = ranks_[t.rank];
  if (!r.pending.empty() && r.pending_date != seconds) walk(t.rank);
  r.pending_date = seconds;
  r.pending.push_back(task);
}

void MemoryStream::ended(uint32_t task, double seconds) {
  const graph::Task& t = g_.tasks[task];
  if (!caches(t)) return;
  Rank& r = ranks_[t.rank];
  // Tasks that started before this date see the cache as it was: an end at their own date counts as done.
  if (!r.pending.empty() && r.pending_date < seconds) walk(t.rank);
  Cache& c = caches_[cache_slot(t)];
  const bool before = c.cached();
  ++(t.pass == schedule::Pass::kForward ? c.fwd_ended : c.bwd_ended);
  r.cached += static_cast<int64_t>(c.cached()) - static_cast<int64_t>(before);
}

// analyze_memory's walk over the tasks of one start date, and summary's cached micro-batches at a new peak.
void MemoryStream::walk(uint32_t rank) {
  Rank& r = ranks_[rank];
  RankMemory& rm = out_[rank];
  std::sort(r.pending.begin(), r.pending.end());
  for (uint32_t t : r.pending) {
    const graph::Task& task = g_.tasks[t];
    const int64_t candidate = r.base + r.live + task.mem_peak_bytes;
    if (candidate >= rm.peak_allocated_bytes) {  // ties: the later point wins, as in analyze_memory
      rm.peak_allocated_bytes = candidate;
      rm.activation_bytes_at_peak = r.live;
      rm.transient_bytes_at_peak = task.mem_peak_bytes;
      rm.peak_seconds = r.pending_date;
      rm.peak_task = t;
      const int64_t slot = cache_slot(task);  // the running micro-batch's own cache is not "cached"
      rm.cached_micro_batches = r.cached - (slot >= 0 && caches_[slot].cached() ? 1 : 0);
    }
    r.live += task.mem_delta_bytes;
    rm.max_live_activation_bytes = std::max(rm.max_live_activation_bytes, r.live);
  }
  r.pending.clear();
}

std::vector<RankMemory> MemoryStream::finish() {
  for (uint32_t r = 0; r < ranks_.size(); ++r) {
    if (!ranks_[r].pending.empty()) walk(r);
    out_[r].peak_reserved_bytes = static_cast<double>(out_[r].peak_allocated_bytes) / mem_factor_;
  }
  return std::move(out_);
}

}  // namespace simumax::memory
