// The HTML report's slowest-ranks view of ranks.json (docs/report.md): a top-N table and a lateness histogram, so
// that a 131,072-rank run's page stays small.
#include <algorithm>

#include "engine/report/report_views.hpp"

namespace simumax::report::html {

Json ranks_view(const RankStats& s, size_t top, size_t bins) {
  Json v = Json::object();
  v["name"] = s.header.name;
  v["executor"] = s.header.executor;
  v["rank_scope"] = s.header.scope;
  v["ranks"] = s.ranks.size();
  v["step_time_ms"] = s.step_time_ms;
  v["earliest_end_ms"] = s.earliest_end_ms;
  v["latest_end_ms"] = s.latest_end_ms;
  v["slowest_rank"] = s.slowest_rank;
  Json kinds = Json::array();
  for (const char* k : executor::kCommKindNames) kinds.push_back(k);
  v["kinds"] = kinds;
  Json rows = Json::array();
  for (size_t i : slowest_ranks(s, top)) {
    const RankRow& r = s.ranks[i];
    Json exposed = Json::array();
    for (double x : r.kind_exposed_ms) exposed.push_back(x);
    rows.push_back({{"rank", r.rank},
                    {"stage", r.stage},
                    {"late_ms", r.late_ms},
                    {"end_ms", r.end_ms},
                    {"exposed_comm_ms", r.exposed_comm_ms},
                    {"kind_exposed_ms", exposed},
                    {"peak_allocated_bytes", r.peak_allocated_bytes},
                    {"peak_reserved_bytes", r.peak_reserved_bytes}});
  }
  v["slowest"] = rows;
  double max_late = 0;
  for (const RankRow& r : s.ranks) max_late = std::max(max_late, r.late_ms);
  bins = std::max<size_t>(bins, 1);
  std::vector<int64_t> counts(bins, 0);
  for (const RankRow& r : s.ranks) {
    const size_t b = max_late > 0 ? static_cast<size_t>(r.late_ms / max_late * static_cast<double>(bins)) : 0;
    ++counts[std::min(b, bins - 1)];
  }
  v["histogram"] = {{"max_late_ms", max_late}, {"counts", counts}};
  return v;
}

}  // namespace simumax::report::html
