// ranks.json read back: the inverse of rank_stats.cpp's ranks_json, the one reader the HTML report, serve, sweep and
// the Python module use, so that each of them accepts and refuses the same files with the same message.
#include <algorithm>
#include <numeric>

#include "engine/report/rank_stats.hpp"
#include "engine/report/report_json_read.hpp"

namespace simumax::report {

namespace {

using html::Json;
using html::JsonDoc;
using html::need;
using html::need_int;
using html::need_number;
using html::need_string;

RankRow read_row(const JsonDoc& d, const Json& r, const std::string& p) {
  html::expect_kind(d, r, p, "object");
  RankRow row;
  row.rank = need_int(d, r, p, "rank");
  row.stage = need_int(d, r, p, "stage");
  row.end_ms = need_number(d, r, p, "end_ms");
  row.late_ms = need_number(d, r, p, "late_ms");
  row.compute_ms = need_number(d, r, p, "compute_ms");
  row.comm_ms = need_number(d, r, p, "comm_ms");
  row.exposed_comm_ms = need_number(d, r, p, "exposed_comm_ms");
  for (size_t k = 0; k < executor::kCommKinds; ++k) {
    const std::string kind = executor::kCommKindNames[k];
    row.kind_comm_ms[k] = need_number(d, r, p, (kind + "_comm_ms").c_str());
    row.kind_exposed_ms[k] = need_number(d, r, p, (kind + "_exposed_ms").c_str());
  }
  row.peak_allocated_bytes = need_int(d, r, p, "peak_allocated_bytes");
  row.peak_reserved_bytes = need_number(d, r, p, "peak_reserved_bytes");
  return row;
}

}  // namespace

RankStats read_rank_stats(const std::string& path) {
  const JsonDoc d = html::read_json_doc(path);
  html::expect_kind(d, d.root, "", "object");
  RankStats s;
  s.header.name = need_string(d, d.root, "", "name");
  s.header.executor = need_string(d, d.root, "", "executor");
  s.header.scope = need_string(d, d.root, "", "rank_scope");
  s.step_time_ms = need_number(d, d.root, "", "step_time_ms");
  s.earliest_end_ms = need_number(d, d.root, "", "earliest_end_ms");
  s.latest_end_ms = need_number(d, d.root, "", "latest_end_ms");
  s.slowest_rank = need_int(d, d.root, "", "slowest_rank");
  const Json& ranks = need(d, d.root, "", "ranks", "array");
  s.ranks.reserve(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) s.ranks.push_back(read_row(d, ranks[i], "/ranks/" + std::to_string(i)));
  return s;
}

std::vector<size_t> slowest_ranks(const RankStats& s, size_t n) {
  std::vector<size_t> order(s.ranks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto later = [&](size_t a, size_t b) {
    const RankRow &x = s.ranks[a], &y = s.ranks[b];
    return x.late_ms != y.late_ms ? x.late_ms > y.late_ms : x.rank < y.rank;
  };
  n = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), later);
  order.resize(n);
  return order;
}

}  // namespace simumax::report
