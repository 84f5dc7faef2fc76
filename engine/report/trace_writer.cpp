#include "engine/report/trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "engine/common/error.hpp"
#include "engine/common/split_text.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/trace_internal.hpp"

namespace simumax::report {

const char* trace_file_name(TraceFormat f) { return f == TraceFormat::kSimumax ? "tracing_logs.json" : "trace.json"; }

namespace {

std::vector<double> rank_ends(const graph::TaskGraph& g, const executor::Timeline& tl) {
  std::vector<double> end(g.num_ranks, 0.0);
  for (uint32_t t = 0; t < g.size(); ++t) {
    g.for_each_rank(g.tasks[t], [&](uint32_t r) { end[r] = std::max(end[r], tl.end[t]); });
  }
  return end;
}

std::vector<uint32_t> stage_ranks(const graph::TaskGraph& g, const executor::Timeline& tl) {
  const std::vector<double> end = rank_ends(g, tl);
  std::vector<uint32_t> best;  // per stage
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    const uint32_t s = g.pp_stage[r];
    if (best.size() <= s) best.resize(s + 1, graph::kNoGroup);
    if (best[s] == graph::kNoGroup || end[r] > end[best[s]]) best[s] = r;
  }
  std::erase(best, graph::kNoGroup);
  return best;
}

std::string simulated_ranks_text(const graph::TaskGraph& g) {
  std::string s;
  for (uint32_t r = 0; r < g.num_ranks && r < 8; ++r) s += (r ? ", " : "") + std::to_string(g.global_rank[r]);
  if (g.num_ranks > 8) s += ", ... " + std::to_string(g.global_rank.back());
  return s;
}

uint32_t parse_rank(const std::string& text, const std::string& item) {
  size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-' || text[0] == '+' || v > UINT32_MAX) {
    throw common::UsageError("--trace-ranks: '" + item +
                             "' is not a rank or a range of ranks; expected all, stages, or a list like 0,8,16-23");
  }
  return static_cast<uint32_t>(v);
}

std::vector<uint32_t> listed_ranks(const graph::TaskGraph& g, const std::string& spec) {
  std::unordered_map<uint32_t, uint32_t> graph_rank;  // job rank -> graph rank
  for (uint32_t r = 0; r < g.num_ranks; ++r) graph_rank[g.global_rank[r]] = r;
  std::vector<uint32_t> out;
  for (std::string_view piece : common::split(spec, ',')) {
    const std::string item(piece);
    const size_t dash = item.find('-', 1);
    const uint32_t lo = parse_rank(item.substr(0, dash), item);
    const uint32_t hi = dash == std::string::npos ? lo : parse_rank(item.substr(dash + 1), item);
    if (hi < lo) throw common::UsageError("--trace-ranks: '" + item + "' is an empty range; write it low-high");
    for (uint64_t job = lo; job <= hi; ++job) {
      const auto it = graph_rank.find(static_cast<uint32_t>(job));
      if (it == graph_rank.end()) {
        throw common::UsageError("--trace-ranks: rank " + std::to_string(job) +
                                 " is not simulated in this run (simulated ranks: " + simulated_ranks_text(g) +
                                 "); --ranks all simulates every rank");
      }
      out.push_back(it->second);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<uint32_t> select_ranks(const graph::TaskGraph& g, const executor::Timeline& tl, const std::string& spec) {
  if (spec == "all") {
    std::vector<uint32_t> all(g.num_ranks);
    for (uint32_t r = 0; r < g.num_ranks; ++r) all[r] = r;
    return all;
  }
  if (spec == "stages") return stage_ranks(g, tl);
  return listed_ranks(g, spec);
}

namespace trace {

TracePlan plan_trace(const RunView& v, const TraceOptions& o) {
  TracePlan p;
  p.ranks = o.ranks;
  p.traced.assign(v.graph.num_ranks, false);
  for (uint32_t r : p.ranks) p.traced[r] = true;
  p.tasks = memory::tasks_by_rank(v.graph, v.timeline, p.ranks);
  return p;
}

RankSlices rank_slices(const RunView& v, uint32_t rank, const std::vector<uint32_t>& tasks, LaneOf lane_of,
                       uint16_t num_lanes) {
  RankSlices rs;
  rs.rank = rank;
  rs.subs_per_lane.assign(num_lanes, 0);
  std::vector<std::vector<int64_t>> sub_end(num_lanes);  // when the last slice of each sub-lane ends
  rs.slices.reserve(tasks.size());
  for (uint32_t t : tasks) {
    const uint16_t lane = lane_of(v.graph.tasks[t]);
    if (lane == kSkip) continue;
    Slice s{t, lane, 0, to_ns(v.timeline.start[t]), 0};
    s.dur_ns = to_ns(v.timeline.end[t]) - s.ts_ns;
    auto& ends = sub_end[lane];
    while (s.sub < ends.size() && ends[s.sub] > s.ts_ns) ++s.sub;
    if (s.sub == ends.size()) ends.push_back(0);
    ends[s.sub] = s.ts_ns + s.dur_ns;
    rs.subs_per_lane[lane] = static_cast<uint16_t>(ends.size());
    rs.slices.push_back(s);
  }
  return rs;
}

RankCoords coords_of(const config::Scenario& s, uint32_t job_rank) {
  const auto& st = s.strategy;
  const int64_t dp = st.dp_size();
  RankCoords c;
  c.tp = job_rank % st.tp_size;
  c.cp = job_rank / st.tp_size % st.cp_size;
  c.dp = job_rank / (st.tp_size * st.cp_size) % dp;
  c.pp = job_rank / (st.tp_size * st.cp_size * dp);
  return c;
}

std::string process_label(const RunView& v, uint32_t graph_rank) {
  const uint32_t job = v.graph.global_rank[graph_rank];
  const RankCoords c = coords_of(v.scenario, job);
  char buf[160];
  std::snprintf(buf, sizeof buf, "rank %u (pp stage %lld, tp %lld, cp %lld, dp %lld%s)", job,
                static_cast<long long>(c.pp), static_cast<long long>(c.tp), static_cast<long long>(c.cp),
                static_cast<long long>(c.dp),
                v.graph.num_ranks < v.scenario.strategy.world_size ? "; stands for its stage" : "");
  return buf;
}

}  // namespace trace

TraceSize estimate_trace_size(const RunView& v, const TraceOptions& o) {
  const trace::TracePlan p = trace::plan_trace(v, o);
  return o.format == TraceFormat::kSimumax ? trace::estimate_simumax(v, p) : trace::estimate_chrome(v, p);
}

namespace {

void refuse_if_too_big(const TraceSize& size, const TraceOptions& o) {
  const double mib = static_cast<double>(size.bytes) / (1024.0 * 1024.0);
  if (mib <= o.max_mib) return;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s would be about %.0f MiB (%llu events over %zu ranks), over the limit of %g MiB; raise the "
                "limit with --trace-max-mb %.0f, or trace fewer ranks with --trace-ranks stages or a list such "
                "as 0,8,16-23",
                trace_file_name(o.format), mib, static_cast<unsigned long long>(size.events), o.ranks.size(),
                o.max_mib, std::ceil(mib * 1.1));
  throw common::UsageError(buf);
}

}  // namespace

void write_trace(const std::string& path, const RunView& v, const TraceOptions& o) {
  const trace::TracePlan p = trace::plan_trace(v, o);
  if (o.format == TraceFormat::kSimumax) {
    refuse_if_too_big(trace::estimate_simumax(v, p), o);
    trace::write_simumax(path, v, p);
  } else {
    refuse_if_too_big(trace::estimate_chrome(v, p), o);
    trace::write_chrome(path, v, p);
  }
}

}  // namespace simumax::report
