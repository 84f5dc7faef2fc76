// compare.json (`simumax-sim compare ... --json DIR/compare.json`) -> the HTML report's "ours against the real
// run" data: the step breakdown side by side, the op-by-op lines, the per-rank busy time and the straggler.
#include <set>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/report_views.hpp"

namespace simumax::report::html {

namespace {

// compare.json writes null where a side cannot know a figure (a log has no breakdown, real 0 has no error).
std::optional<double> number_or_null(const JsonDoc& d, const Json& obj, const std::string& p, const char* key) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  return need_number(d, obj, p, key);
}

Json null_or(std::optional<double> v) { return v ? Json(*v) : Json(nullptr); }

// The metric order of compare's own table: total, compute, the compute classes, comm, exposed, the other
// (memory) classes, idle; then any count (kernels, kernels.<class>, comm.<type>) in the file's order of classes.
std::vector<std::string> metric_order(const JsonDoc& d, const Json& metrics) {
  std::vector<std::string> compute_classes, other_classes;
  const Json& kc = need(d, d.root, "", "kernel_classes", "object");
  const Json& classes = need(d, kc, "/kernel_classes", "classes", "array");
  for (size_t i = 0; i < classes.size(); ++i) {
    const std::string p = "/kernel_classes/classes/" + std::to_string(i);
    const std::string name = need_string(d, classes[i], p, "name"), kind = need_string(d, classes[i], p, "kind");
    if (kind == "compute") compute_classes.push_back(name);
    else if (kind != "comm") other_classes.push_back(name);
  }
  std::vector<std::string> order = {"total_ms", "compute_ms"};
  for (const auto& c : compute_classes) order.push_back(c + "_ms");
  order.insert(order.end(), {"comm_ms", "exposed_comm_ms"});
  for (const auto& c : other_classes) order.push_back(c + "_ms");
  order.push_back("idle_ms");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& k : order) {
    if (metrics.contains(k) && seen.insert(k).second) out.push_back(k);
  }
  // The counts as compare prints them: kernels, kernels.<class> in the table's class order, then the comm types
  // and anything newer in sorted key order.
  std::vector<std::string> counts = {"kernels"};
  for (const auto& c : compute_classes) counts.push_back("kernels." + c);
  counts.push_back("kernels.comm");
  for (const auto& c : other_classes) counts.push_back("kernels." + c);
  for (const auto& k : counts) {
    if (metrics.contains(k) && seen.insert(k).second) out.push_back(k);
  }
  for (const auto& [k, v] : metrics.items()) {
    if (seen.insert(k).second) out.push_back(k);
  }
  return out;
}

Json metric_rows(const JsonDoc& d, const Json& metrics, const std::string& p) {
  expect_kind(d, metrics, p, "object");
  Json time = Json::array(), counts = Json::array();
  for (const std::string& k : metric_order(d, metrics)) {
    const std::string mp = p + "/" + k;
    const Json& m = metrics[k];
    expect_kind(d, m, mp, "object");
    Json row = {{"name", k}, {"ours", null_or(number_or_null(d, m, mp, "ours"))},
                {"real", null_or(number_or_null(d, m, mp, "real"))},
                {"error_pct", null_or(number_or_null(d, m, mp, "error_pct"))}};
    (k.size() > 3 && k.compare(k.size() - 3, 3, "_ms") == 0 ? time : counts).push_back(std::move(row));
  }
  return {{"time", std::move(time)}, {"counts", std::move(counts)}};
}

Json op_rows(const JsonDoc& d, const Json& ops, size_t max_ops) {
  Json out = Json::array();
  for (size_t i = 0; i < ops.size() && i < max_ops; ++i) {
    const std::string p = "/ops/" + std::to_string(i);
    const Json& ours = need(d, ops[i], p, "ours", "object");
    Json row = {{"name", need_string(d, ours, p + "/ours", "name")},
                {"class", need_string(d, ours, p + "/ours", "class")},
                {"calls", need_number(d, ours, p + "/ours", "calls")},
                {"median_us", need_number(d, ours, p + "/ours", "median_us")},
                {"total_ms", need_number(d, ours, p + "/ours", "total_ms")}};
    const double flops = need_number(d, ours, p + "/ours", "flops");
    const double median_us = row["median_us"];
    if (flops > 0 && median_us > 0) row["tflops"] = flops / (median_us * 1e-6) / 1e12;
    if (ops[i].contains("matched_by") && !ops[i]["matched_by"].is_null()) row["by"] = need_string(d, ops[i], p, "matched_by");
    if (ops[i].contains("real") && !ops[i]["real"].is_null()) {
      const Json& real = need(d, ops[i], p, "real", "object");
      const std::string rp = p + "/real";
      row["real"] = {{"op", need_string(d, real, rp, "op")}, {"input_dims", need_string(d, real, rp, "input_dims")},
                     {"pass", need_string(d, real, rp, "pass")}, {"median_us", need_number(d, real, rp, "median_us")},
                     {"tflops", null_or(number_or_null(d, real, rp, "median_tflops"))}};
      row["error_pct"] = null_or(number_or_null(d, ops[i], p, "error_pct"));
    }
    out.push_back(std::move(row));
  }
  return out;
}

Json rank_rows(const JsonDoc& d, const Json& ranks) {
  Json out = Json::array();
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string p = "/ranks/" + std::to_string(i);
    const Json& step = need(d, ranks[i], p, "mean_step", "object");
    Json row = {{"rank", need(d, ranks[i], p, "rank", "integer")}, {"steps", need_number(d, ranks[i], p, "steps")},
                {"busy_ms", need_number(d, ranks[i], p, "busy_ms")},
                {"total_ms", need_number(d, step, p + "/mean_step", "total_ms")}};
    for (const char* k : {"compute_ms", "exposed_comm_ms", "memory_ms", "idle_ms"}) {
      if (auto v = number_or_null(d, step, p + "/mean_step", k)) row[k] = *v;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

Json compare_view(const JsonDoc& d, size_t max_ops) {
  const Json& r = d.root;
  expect_kind(d, r, "", "object");
  Json v = Json::object();
  const Json& real = need(d, r, "", "real", "object");
  v["real"] = {{"path", need_string(d, real, "/real", "path")}, {"kind", need_string(d, real, "/real", "kind")}};
  const Json& steps = need(d, real, "/real", "steps", "array");
  v["real"]["steps"] = steps.size();
  const Json& ours = need(d, r, "", "ours", "object");
  if (ours.contains("rank") && !ours["rank"].is_null()) v["ours_rank"] = need(d, ours, "/ours", "rank", "integer");
  const Json& rows = need(d, r, "", "comparison", "array");
  if (rows.empty()) throw common::ConfigError(d.path, "/comparison", "expected at least the summary row");
  const std::string last = "/comparison/" + std::to_string(rows.size() - 1);
  expect_kind(d, rows.back(), last, "object");
  v["against"] = need_string(d, rows.back(), last, "real_step");
  v["steps_averaged"] = need_number(d, rows.back(), last, "steps_averaged");
  v["metrics"] = metric_rows(d, need(d, rows.back(), last, "metrics", "object"), last + "/metrics");
  if (const Json* ops = maybe(d, r, "", "ops", "array")) {
    v["ops"] = op_rows(d, *ops, max_ops);
    v["total_ops"] = ops->size();
  }
  if (const Json* ranks = maybe(d, r, "", "ranks", "array")) v["ranks"] = rank_rows(d, *ranks);
  if (const Json* s = maybe(d, r, "", "straggler", "object")) {
    Json st = {{"rank", need(d, *s, "/straggler", "rank", "integer")},
               {"busy_ms", need_number(d, *s, "/straggler", "busy_ms")},
               {"median_busy_ms", need_number(d, *s, "/straggler", "median_busy_ms")},
               {"ratio", need_number(d, *s, "/straggler", "straggler_ratio")},
               {"phase_excess_ms", need_number(d, *s, "/straggler", "phase_excess_ms")}};
    if (s->contains("phase") && !(*s)["phase"].is_null()) st["phase"] = need_string(d, *s, "/straggler", "phase");
    v["straggler"] = std::move(st);
  }
  if (const Json* m = maybe(d, r, "", "memory", "object")) v["memory"] = metric_rows(d, *m, "/memory")["counts"];
  return v;
}

}  // namespace simumax::report::html
