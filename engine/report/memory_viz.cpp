// memory_snapshot.pickle: our allocations in the structure of PyTorch's torch.cuda.memory._snapshot(), so
// torch.cuda.memory._memory_viz and the memory_viz web page draw them. Field names follow PyTorch's
// torch/cuda/memory.py (_snapshot's docstring) and what torch/utils/viz/MemoryViz.js reads.
#include <algorithm>
#include <map>

#include "engine/report/json_text.hpp"
#include "engine/report/memory_artifacts.hpp"
#include "engine/report/pickle_writer.hpp"

namespace simumax::report {

namespace {

// A device's allocations live in one segment at this address (every device has its own address space). It
// stays below 2^53 so JavaScript numbers hold addresses exactly.
constexpr uint64_t kBase = uint64_t{1} << 40;
constexpr uint64_t kAlign = 512;  // PyTorch's caching allocator rounds blocks to 512 bytes

uint64_t round_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// Best-fit placement with coalescing: addresses such that live allocations never overlap and freed space is
// reused, so the segment is about as large as the peak (a bump allocator would make it the sum of all).
class Placer {
 public:
  uint64_t alloc(uint64_t bytes) {
    const uint64_t size = round_up(std::max<uint64_t>(bytes, 1));
    auto it = by_size_.lower_bound(size);
    if (it == by_size_.end()) return grow(size);
    const auto [block_size, addr] = *it;
    remove(addr, block_size);
    if (block_size > size) insert(addr + size, block_size - size);
    return addr;
  }
  void free(uint64_t addr, uint64_t bytes) {
    uint64_t size = round_up(std::max<uint64_t>(bytes, 1));
    auto next = by_addr_.find(addr + size);
    if (next != by_addr_.end()) {
      size += next->second;
      remove(next->first, next->second);
    }
    auto prev = by_addr_.lower_bound(addr);
    if (prev != by_addr_.begin() && std::prev(prev)->first + std::prev(prev)->second == addr) {
      --prev;
      const auto [paddr, psize] = *prev;
      remove(paddr, psize);
      addr = paddr;
      size += psize;
    }
    insert(addr, size);
  }
  uint64_t high_water() const { return top_; }

 private:
  uint64_t grow(uint64_t size) {
    // Space freed at the top of the segment is extended rather than left behind.
    if (!by_addr_.empty()) {
      const auto last = std::prev(by_addr_.end());
      if (last->first + last->second == top_) {
        const uint64_t addr = last->first;
        remove(last->first, last->second);
        top_ = addr + size;
        return addr;
      }
    }
    const uint64_t addr = top_;
    top_ += size;
    return addr;
  }
  void insert(uint64_t addr, uint64_t size) {
    by_addr_[addr] = size;
    by_size_.emplace(size, addr);
  }
  void remove(uint64_t addr, uint64_t size) {
    by_addr_.erase(addr);
    auto [lo, hi] = by_size_.equal_range(size);
    for (auto it = lo; it != hi; ++it) {
      if (it->second == addr) {
        by_size_.erase(it);
        break;
      }
    }
  }
  std::map<uint64_t, uint64_t> by_addr_;       // free block address -> size
  std::multimap<uint64_t, uint64_t> by_size_;  // free block size -> address
  uint64_t top_ = 0;
};

std::vector<uint64_t> place(const memory::RankAllocations& ra, uint64_t& segment_bytes) {
  std::vector<uint64_t> addr(ra.allocations.size(), 0);
  Placer p;
  for (const auto& e : ra.events) {
    const auto& a = ra.allocations[e.allocation];
    if (e.free) {
      p.free(addr[e.allocation], static_cast<uint64_t>(a.bytes));
    } else {
      addr[e.allocation] = p.alloc(static_cast<uint64_t>(a.bytes));
    }
  }
  segment_bytes = std::max<uint64_t>(p.high_water(), kAlign);
  for (auto& x : addr) x += kBase;
  return addr;
}

constexpr uint32_t kNotWritten = UINT32_MAX;

// An allocation's frames list: written once, then recalled from the pickle's memo (its alloc, free_requested,
// free_completed and segment block share one list, as PyTorch's snapshot shares a traceback).
void frames(PickleWriter& w, const memory::Allocation& a, uint32_t& memo) {
  if (memo != kNotWritten) return w.recall(memo);
  w.begin_list();
  for (int i = 0; i < 2; ++i) {
    w.begin_dict();
    w.str("filename");
    w.str("simumax-sim");
    w.str("line");
    w.integer(0);
    w.str("name");
    if (i == 0) {
      w.str(a.name, a.kind == memory::AllocKind::kStatic);  // activation names are each used once
    } else {
      w.str(memory::to_string(a.kind));
    }
    w.end_dict();
  }
  memo = w.end_list_remembered();
}

void no_frames(PickleWriter& w) {
  w.begin_list();
  w.end_list();
}

void trace_entry(PickleWriter& w, const char* action, uint64_t addr, uint64_t size, double seconds,
                 const memory::Allocation* a, uint32_t* memo) {
  w.begin_dict();
  w.str("action");
  w.str(action);
  w.str("addr");
  w.integer(static_cast<int64_t>(addr));
  w.str("size");
  w.integer(static_cast<int64_t>(size));
  w.str("stream");
  w.integer(0);
  w.str("time_us");
  w.integer(to_ns(seconds) / 1000);
  w.str("frames");
  if (a) {
    frames(w, *a, *memo);
  } else {
    no_frames(w);
  }
  w.end_dict();
}

void device_trace(PickleWriter& w, const memory::RankAllocations& ra, const std::vector<uint64_t>& addr,
                  uint64_t segment_bytes, std::vector<uint32_t>& memo) {
  w.begin_list();
  trace_entry(w, "segment_alloc", kBase, segment_bytes, 0.0, nullptr, nullptr);
  for (const auto& e : ra.events) {
    const uint32_t i = e.allocation;
    const auto& a = ra.allocations[i];
    const auto bytes = static_cast<uint64_t>(a.bytes);
    if (!e.free) {
      trace_entry(w, "alloc", addr[i], bytes, e.seconds, &a, &memo[i]);
      continue;
    }
    trace_entry(w, "free_requested", addr[i], bytes, e.seconds, &a, &memo[i]);
    trace_entry(w, "free_completed", addr[i], bytes, e.seconds, &a, &memo[i]);
  }
  w.end_list();
}

void block(PickleWriter& w, uint64_t addr, uint64_t size, const memory::Allocation* a, uint32_t* memo) {
  w.begin_dict();
  w.str("address");
  w.integer(static_cast<int64_t>(addr));
  w.str("size");
  w.integer(static_cast<int64_t>(size));
  w.str("requested_size");
  w.integer(a ? a->bytes : 0);
  w.str("state");
  w.str(a ? "active_allocated" : "inactive");
  w.str("frames");
  if (a) {
    frames(w, *a, *memo);
  } else {
    no_frames(w);
  }
  w.end_dict();
}

// The segment as it is at the end of the step: live allocations (static memory) and the free gaps between them.
void segment(PickleWriter& w, int64_t device, const memory::RankAllocations& ra, const std::vector<uint64_t>& addr,
             uint64_t segment_bytes, std::vector<uint32_t>& memo) {
  std::vector<uint32_t> live;
  int64_t live_bytes = 0;
  for (uint32_t a = 0; a < ra.allocations.size(); ++a) {
    if (ra.allocations[a].free_event != memory::kNever) continue;
    live.push_back(a);
    live_bytes += ra.allocations[a].bytes;
  }
  std::sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) { return addr[a] < addr[b]; });
  w.begin_dict();
  const std::pair<const char*, int64_t> sizes[] = {
      {"device", device}, {"address", static_cast<int64_t>(kBase)}, {"total_size", static_cast<int64_t>(segment_bytes)},
      {"allocated_size", live_bytes}, {"active_size", live_bytes}, {"requested_size", live_bytes}, {"stream", 0}};
  for (const auto& [key, value] : sizes) {
    w.str(key);
    w.integer(value);
  }
  w.str("segment_type");
  w.str("large");
  w.str("segment_pool_id");
  w.begin_tuple();
  w.integer(0);
  w.integer(0);
  w.end_tuple();
  w.str("is_expandable");
  w.boolean(false);
  w.str("frames");
  no_frames(w);
  w.str("blocks");
  w.begin_list();
  uint64_t at = kBase;
  for (uint32_t a : live) {
    if (addr[a] > at) block(w, at, addr[a] - at, nullptr, nullptr);
    block(w, addr[a], static_cast<uint64_t>(ra.allocations[a].bytes), &ra.allocations[a], &memo[a]);
    at = addr[a] + static_cast<uint64_t>(ra.allocations[a].bytes);
  }
  if (kBase + segment_bytes > at) block(w, at, kBase + segment_bytes - at, nullptr, nullptr);
  w.end_list();
  w.end_dict();
}

}  // namespace

std::string memory_viz_pickle(const RunView& v, const std::vector<memory::RankAllocations>& ranks) {
  std::map<int64_t, size_t> by_device;  // job rank -> index into ranks
  for (size_t i = 0; i < ranks.size(); ++i) by_device[v.graph.global_rank[ranks[i].rank]] = i;
  std::vector<std::vector<uint64_t>> addr(ranks.size());
  std::vector<uint64_t> segment_bytes(ranks.size(), 0);
  std::vector<std::vector<uint32_t>> memo(ranks.size());  // per allocation: its frames list in the pickle's memo
  for (size_t i = 0; i < ranks.size(); ++i) {
    addr[i] = place(ranks[i], segment_bytes[i]);
    memo[i].assign(ranks[i].allocations.size(), kNotWritten);
  }
  PickleWriter w;
  w.begin_dict();
  w.str("segments");
  w.begin_list();
  for (const auto& [device, i] : by_device) segment(w, device, ranks[i], addr[i], segment_bytes[i], memo[i]);
  w.end_list();
  w.str("device_traces");
  w.begin_list();
  const int64_t devices = by_device.empty() ? 0 : by_device.rbegin()->first + 1;
  for (int64_t d = 0; d < devices; ++d) {
    const auto it = by_device.find(d);
    if (it == by_device.end()) {
      w.begin_list();
      w.end_list();
    } else {
      device_trace(w, ranks[it->second], addr[it->second], segment_bytes[it->second], memo[it->second]);
    }
  }
  w.end_list();
  w.end_dict();
  return w.finish();
}

}  // namespace simumax::report
