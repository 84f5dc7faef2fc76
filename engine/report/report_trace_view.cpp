// trace.json -> the timeline part of the HTML report's data (report_views.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/chrome_trace_reader.hpp"
#include "engine/report/interval_set.hpp"
#include "engine/report/report_views.hpp"

namespace simumax::report::html {

namespace {

// A count as the page reads it: null when unknown (< 0), an integer when integral (no ".0": the 512-GPU page's
// data is 4 MB, and its size is most of the time the browser takes to open it).
Json compact(double v) {
  if (v < 0) return Json(nullptr);
  if (v == std::floor(v) && v < 9007199254740992.0) return Json(static_cast<int64_t>(v));
  return Json(v);
}

// The page colours slices by these kinds (web/report.js keeps the same order).
const char* const kKinds[] = {"forward", "backward",    "recompute", "tp comm",   "cp comm", "ep comm",
                              "pp send/recv", "dp comm", "optimizer", "sync", "host", "other"};
constexpr uint8_t kOther = 11;
constexpr uint8_t kFirstComm = 3, kLastComm = 7;  // tp comm .. dp comm
constexpr uint8_t kOptimizer = 8;

uint8_t kind_of(const ChromeEvent& e) {
  static const std::pair<const char*, uint8_t> by_cat[] = {{"tp_comm", 3},   {"cp_comm", 4},   {"ep_comm", 5},
                                                           {"pp_comm", 6},   {"dp_comm", 7},   {"optimizer", 8},
                                                           {"barrier", 9},   {"host", 10},     {"recompute", 2}};
  // Our task's kind: args.kind (the cat is Kineto's category since issue 34), or the cat of an earlier trace.
  const std::string& ours = e.arg_kind.empty() ? e.cat : e.arg_kind;
  for (const auto& [cat, kind] : by_cat) {
    if (ours == cat) return kind;
  }
  if (e.arg_pass == "recompute") return 2;
  if (e.arg_pass == "backward") return 1;
  if (e.arg_pass == "forward") return 0;
  if (e.arg_pass == "step") return 8;
  return kOther;
}

struct Slice {
  double ts_us, dur_us, flops, bytes;
  uint32_t lane, name, merged;  // merged: how many slices of the trace this one stands for
  uint8_t kind;
};

struct Lane {
  int64_t pid, tid, sort;
  std::string thread;
};

class TraceCollector {
 public:
  void on_event(const ChromeEvent& e) {
    if (!e.pid_numeric) return;
    if (e.ph == "M") {
      if (e.name == "process_name") process_names_[e.pid] = e.arg_name;
      if (e.name == "thread_name" && e.tid_numeric) lane_of(e.pid, e.tid).thread = e.arg_name;
      return;
    }
    if (e.ph != "X" || !e.tid_numeric || !std::isfinite(e.ts_us) || !std::isfinite(e.dur_us)) return;
    const uint32_t lane = lane_index(e.pid, e.tid);
    slices_.push_back({e.ts_us, std::max(0.0, e.dur_us), e.flops, e.arg_bytes, lane, name_index(e.name), 1,
                       kind_of(e)});
  }

  Json view(const std::string& path, size_t max_slices) {
    if (slices_.empty()) throw common::ConfigError(path, "/traceEvents", "no complete events (ph \"X\"): nothing to draw");
    const std::vector<uint32_t> order = lane_order();
    std::vector<uint32_t> rank_of_lane(lanes_.size());
    for (uint32_t i = 0; i < order.size(); ++i) rank_of_lane[order[i]] = i;
    for (Slice& s : slices_) s.lane = rank_of_lane[s.lane];
    std::stable_sort(slices_.begin(), slices_.end(), [](const Slice& a, const Slice& b) {
      return a.lane != b.lane ? a.lane < b.lane : a.ts_us < b.ts_us;
    });
    double end_us = 0;
    for (const Slice& s : slices_) end_us = std::max(end_us, s.ts_us + s.dur_us);
    const size_t total = slices_.size();
    Json comm = comm_by_rank(order);  // from every slice, before decimation merges any
    const double merge_below_us = decimate(max_slices, end_us);

    Json lanes = Json::array();
    for (uint32_t i : order) {
      const Lane& l = lanes_[i];
      const auto p = process_names_.find(l.pid);
      lanes.push_back({{"rank", l.pid},
                       {"process", p == process_names_.end() ? "rank " + std::to_string(l.pid) : p->second},
                       {"thread", l.thread.empty() ? "thread " + std::to_string(l.tid) : l.thread}});
    }
    // Slices are sorted by lane: lane l holds slices lane_start[l] .. lane_start[l + 1] - 1 (one number per lane,
    // not one per slice).
    Json lane_start = Json::array();
    Json cols = {{"ts", Json::array()}, {"dur", Json::array()}, {"kind", Json::array()},
                 {"name", Json::array()}, {"flops", Json::array()}, {"bytes", Json::array()},
                 {"merged", Json::array()}};
    for (size_t i = 0; i < slices_.size(); ++i) {
      const Slice& s = slices_[i];
      while (lane_start.size() <= s.lane) lane_start.push_back(i);
      cols["ts"].push_back(s.ts_us);
      cols["dur"].push_back(std::round(s.dur_us * 1000) / 1000);  // 1 ns: a merged run's length is a difference
      cols["kind"].push_back(s.kind);
      cols["name"].push_back(s.name);
      cols["flops"].push_back(compact(s.flops));
      cols["bytes"].push_back(compact(s.bytes));
      cols["merged"].push_back(s.merged);
    }
    while (lane_start.size() <= lanes_.size()) lane_start.push_back(slices_.size());
    return {{"kinds", kKinds},
            {"lanes", std::move(lanes)},
            {"lane_start", std::move(lane_start)},
            {"names", names_},
            {"slices", std::move(cols)},
            {"end_us", end_us},
            {"comm", std::move(comm)},
            {"total_slices", total},
            {"shown_slices", slices_.size()},
            {"merge_below_us", merge_below_us}};
  }

 private:
  Lane& lane_of(int64_t pid, int64_t tid) { return lanes_[lane_index(pid, tid)]; }

  uint32_t lane_index(int64_t pid, int64_t tid) {
    const auto [it, added] = lane_ids_.try_emplace({pid, tid}, static_cast<uint32_t>(lanes_.size()));
    if (added) lanes_.push_back({pid, tid, tid, ""});
    return it->second;
  }

  uint32_t name_index(const std::string& name) {
    const auto [it, added] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }

  // Lanes by rank, then thread id (our writer numbers lanes in display order; sub-lanes 100·(lane+1)+k sort
  // after their lane).
  std::vector<uint32_t> lane_order() const {
    std::vector<uint32_t> order(lanes_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    auto key = [](const Lane& l) { return l.tid >= 100 ? (l.tid / 100 - 1) * 1000 + 500 + l.tid % 100 : l.tid * 1000; };
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const Lane &x = lanes_[a], &y = lanes_[b];
      return x.pid != y.pid ? x.pid < y.pid : key(x) < key(y);
    });
    return order;
  }

  // Per traced rank: its communication time (the union of its comm slices) and the part of it exposed, i.e.
  // with no compute slice (forward, backward, recompute, optimizer) running on any of the rank's lanes: the
  // definition compare uses for a real trace (step_breakdown.hpp). Columns, by rank.
  Json comm_by_rank(const std::vector<uint32_t>& order) const {
    std::map<int64_t, std::pair<std::vector<Interval>, std::vector<Interval>>> by_rank;  // rank -> (comm, compute)
    for (const Slice& s : slices_) {
      const bool is_comm = s.kind >= kFirstComm && s.kind <= kLastComm;
      const bool is_compute = s.kind < kFirstComm || s.kind == kOptimizer;  // forward, backward, recompute
      if (!is_comm && !is_compute) continue;
      auto& [comm, compute] = by_rank[lanes_[order[s.lane]].pid];
      (is_comm ? comm : compute).push_back({s.ts_us, s.ts_us + s.dur_us});
    }
    Json ranks = Json::array(), comm_us = Json::array(), exposed_us = Json::array();
    for (auto& [rank, lists] : by_rank) {
      const std::vector<Interval> comm = merge_intervals(std::move(lists.first));
      const std::vector<Interval> compute = merge_intervals(std::move(lists.second));
      ranks.push_back(rank);
      comm_us.push_back(std::round(covered_length(comm) * 1000) / 1000);  // 1 ns, as the slices' lengths
      exposed_us.push_back(std::round(uncovered_length(comm, compute) * 1000) / 1000);
    }
    return {{"rank", std::move(ranks)}, {"comm_us", std::move(comm_us)}, {"exposed_us", std::move(exposed_us)}};
  }

  // Merges runs of short slices of one kind on one lane (each shorter than w, gaps shorter than w): w doubles
  // from end/65536 until at most max_slices remain, then is bisected so that as little as needed is merged.
  // Returns the w used (0: nothing merged).
  double decimate(size_t max_slices, double end_us) {
    if (slices_.size() <= max_slices || end_us <= 0) return 0;
    double lo = 0, hi = end_us / 65536;
    std::vector<Slice> out = merged(hi);
    while (out.size() > max_slices && hi <= 4 * end_us) {
      lo = hi;
      hi *= 2;
      out = merged(hi);
    }
    for (int i = 0; i < 8 && lo > 0; ++i) {
      const double mid = (lo + hi) / 2;
      std::vector<Slice> m = merged(mid);
      if (m.size() <= max_slices) {
        hi = mid;
        out = std::move(m);
      } else {
        lo = mid;
      }
    }
    slices_ = std::move(out);
    return hi;
  }

  std::vector<Slice> merged(double w) {
    std::vector<Slice> out;
    out.reserve(slices_.size());
    for (const Slice& s : slices_) {
      Slice* last = out.empty() ? nullptr : &out.back();
      const bool joinable = last && last->lane == s.lane && last->kind == s.kind && s.dur_us < w &&
                            (last->merged > 1 || last->dur_us < w) && s.ts_us - (last->ts_us + last->dur_us) < w;
      if (!joinable) {
        out.push_back(s);
        continue;
      }
      last->dur_us = std::max(last->dur_us, s.ts_us + s.dur_us - last->ts_us);
      last->flops = (last->flops < 0 || s.flops < 0) ? -1 : last->flops + s.flops;
      last->bytes = (last->bytes < 0 || s.bytes < 0) ? -1 : last->bytes + s.bytes;
      last->merged += s.merged;
      last->name = merged_name(last->kind);
    }
    return out;
  }

  uint32_t merged_name(uint8_t kind) { return name_index(std::string("(merged ") + kKinds[kind] + " slices)"); }

  std::vector<Lane> lanes_;
  std::map<std::pair<int64_t, int64_t>, uint32_t> lane_ids_;
  std::map<int64_t, std::string> process_names_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::vector<Slice> slices_;
};

}  // namespace

Json trace_view(const std::string& path, size_t max_slices) {
  TraceCollector c;
  read_chrome_trace(path, [&](const ChromeEvent& e) { c.on_event(e); });
  return c.view(path, max_slices);
}

}  // namespace simumax::report::html
