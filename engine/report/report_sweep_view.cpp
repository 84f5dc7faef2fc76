#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/split_text.hpp"
#include "engine/config/config_origin.hpp"
#include "engine/report/report_views.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report::html {

namespace {

using common::ConfigError;

// A case's layout is what these strategy keys set: a sweep over IB bandwidth x platform x tp is three layouts, each
// with its best case; other strategy keys (seq_len, micro_batch_num) change the workload, not the layout.
const std::set<std::string> kLayoutKeys = {"strategy.tp_size",          "strategy.cp_size",  "strategy.pp_size",
                                           "strategy.ep_size",          "strategy.etp_size", "strategy.world_size",
                                           "strategy.interleaving_size"};

// A sweep.json list field: "" is no items.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (std::string_view item : common::split(s, ',')) out.emplace_back(item);
  return out;
}

// The value an override took in a case, as the page shows it: a string as is, anything else as compact JSON.
std::string shown(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// `key` must be present and null or of `kind` (an invalid or failed case has null figures).
Json nullable(const JsonDoc& d, const Json& obj, const std::string& p, const char* key, const char* kind) {
  expect_kind(d, obj, p, "object");
  const auto it = obj.find(key);
  if (it == obj.end()) {
    throw ConfigError(d.path, p + "/" + key,
                      std::string("required field is missing (expected a ") + kind + " or null)");
  }
  if (it->is_null()) return nullptr;
  expect_kind(d, *it, p + "/" + key, kind);
  return *it;
}

// Axes: the key, its column (the key's last part, unless two axes share it) and whether it sets the layout.
Json axes_of(const std::vector<std::string>& keys) {
  std::map<std::string, int> last_parts;
  const auto last = [](const std::string& k) {
    return k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
  };
  for (const std::string& k : keys) ++last_parts[last(k)];
  Json axes = Json::array();
  for (const std::string& k : keys) {
    axes.push_back(
        {{"key", k}, {"column", last_parts[last(k)] > 1 ? k : last(k)}, {"layout", kLayoutKeys.count(k) > 0}});
  }
  return axes;
}

// Best case of each layout: the fastest of its cases that ran and fit (the lowest index of ties); null when none.
Json layouts_of(const Json& cases, const std::vector<std::string>& layout_of_case) {
  std::vector<std::string> names;
  std::map<std::string, size_t> index;
  for (const std::string& l : layout_of_case) {
    if (index.emplace(l, names.size()).second) names.push_back(l);
  }
  std::vector<Json> best(names.size(), nullptr);
  std::vector<int64_t> count(names.size(), 0), fit(names.size(), 0);
  for (size_t i = 0; i < cases.size(); ++i) {
    const size_t l = index[layout_of_case[i]];
    ++count[l];
    const Json& c = cases[i];
    if (c["status"] != "ok" || !c["fits"].is_boolean() || !c["fits"].get<bool>() || !c["step_time_ms"].is_number())
      continue;
    ++fit[l];
    if (best[l].is_null() ||
        c["step_time_ms"].get<double>() < cases[best[l].get<size_t>()]["step_time_ms"].get<double>()) {
      best[l] = i;
    }
  }
  Json out = Json::array();
  for (size_t l = 0; l < names.size(); ++l) {
    out.push_back({{"label", names[l]}, {"cases", count[l]}, {"fit", fit[l]}, {"best", best[l]}});
  }
  return out;
}

}  // namespace

Json sweep_view(const JsonDoc& d) {
  expect_kind(d, d.root, "", "object");
  Json v = Json::object();
  for (const char* k : {"name", "description", "base", "executor", "ranks", "granularity"})
    v[k] = need_string(d, d.root, "", k);
  v["memory_margin_gib"] = need_number(d, d.root, "", "memory_margin_gib");
  for (const char* k : {"case_count", "ok", "invalid", "failed"}) v[k] = need(d, d.root, "", k, "integer");
  const std::vector<std::string> keys = split_commas(need_string(d, d.root, "", "axes"));
  const std::vector<std::string> platforms = split_commas(need_string(d, d.root, "", "platforms"));
  v["axes"] = axes_of(keys);
  v["platforms"] = platforms;
  const Json& list = need(d, d.root, "", "cases", "array");
  if (list.size() != v["case_count"].get<size_t>()) {
    throw ConfigError(d.path, "/cases",
                      "has " + std::to_string(list.size()) + " cases, but /case_count is " + v["case_count"].dump() +
                          " (a sweep.json cut short?)");
  }
  // The chart's bars: one series per value of the fastest-varying axis (the platform, else the last override), one
  // group per combination of the other values, both in order of first appearance (the case order).
  std::vector<std::string> series, groups, layout_of_case;
  std::map<std::string, size_t> series_index, group_index;
  Json cases = Json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = "/cases/" + std::to_string(i);
    const Json& in = list[i];
    expect_kind(d, in, p, "object");
    const Json& index = need(d, in, p, "index", "integer");
    if (index.get<int64_t>() != static_cast<int64_t>(i)) {
      throw ConfigError(d.path, p + "/index", "expected " + std::to_string(i) + " (cases in case order)");
    }
    Json c = {{"index", index},
              {"name", need_string(d, in, p, "name")},
              {"label", need_string(d, in, p, "label")},
              {"status", need_string(d, in, p, "status")},
              {"error", nullable(d, in, p, "error", "string")},
              {"fits", nullable(d, in, p, "fits", "boolean")}};
    for (const char* k :
         {"step_time_ms", "mfu", "tokens_per_s", "peak_reserved_gib", "peak_alloc_gib", "headroom_gib"}) {
      c[k] = nullable(d, in, p, k, "number");
    }
    if (c["status"] == "ok") {
      const auto number = [&c](const char* k) { return c[k].is_number() ? c[k].get<double>() : NAN; };
      const std::string problem = result_figures_problem(number("step_time_ms"), number("mfu"));
      if (!problem.empty()) {
        const size_t colon = problem.find(": ");
        throw ConfigError(d.path, p + problem.substr(0, colon), "an ok case: " + problem.substr(colon + 2));
      }
    }
    Json values = Json::array();
    std::vector<std::string> parts;  // "column=value" of each axis, for the group and layout names
    std::string layout;
    for (size_t a = 0; a < keys.size(); ++a) {
      const auto it = in.find(keys[a]);
      if (it == in.end()) {
        throw ConfigError(d.path, config::json_pointer_append(p, keys[a]), "required field is missing (the axis /axes names)");
      }
      values.push_back(shown(*it));
      parts.push_back(v["axes"][a]["column"].get<std::string>() + "=" + shown(*it));
      if (kLayoutKeys.count(keys[a])) layout += (layout.empty() ? "" : " ") + parts.back();
    }
    c["values"] = std::move(values);
    if (!platforms.empty()) {
      c["platform"] = need_string(d, in, p, "platform");
      parts.push_back(c["platform"].get<std::string>());
    }
    std::string s = parts.empty() ? "" : parts.back(), g;
    if (!parts.empty()) parts.pop_back();
    for (const std::string& part : parts) g += (g.empty() ? "" : " ") + part;
    if (series_index.emplace(s, series.size()).second) series.push_back(s);
    if (group_index.emplace(g, groups.size()).second) groups.push_back(g);
    c["series"] = series_index[s];
    c["group"] = group_index[g];
    layout_of_case.push_back(layout.empty() ? "the base's layout" : layout);
    c["layout"] = layout_of_case.back();
    cases.push_back(std::move(c));
  }
  v["series_axis"] = !platforms.empty() ? "platform"
                     : keys.empty()     ? ""
                                        : v["axes"][keys.size() - 1]["column"].get<std::string>();
  v["series"] = series;
  v["groups"] = groups;
  v["layouts"] = layouts_of(cases, layout_of_case);
  v["cases"] = std::move(cases);
  return v;
}

}  // namespace simumax::report::html
