// Two runs' summary.json -> what a what-if page (`simumax-sim report DIR_A DIR_B`) says about how they differ.
#include <string>

#include "engine/report/report_views.hpp"

namespace simumax::report::html {

namespace {

// The fields that define the workload: when the two runs agree on all of them, they ran the same scenario and
// differ only in the platform (the system config or the platform XML). The scenario's name is left out: a
// planner's copy of a scenario for another platform is usually renamed.
const char* const kScenarioFields[] = {"fidelity",  "executor",        "granularity",     "rank_scope",
                                       "parallel",  "batch",           "padded_vocab_size", "param_count",
                                       "flops_per_token", "dtype",     "recompute"};
// The platform's own fields summary.json records (shown, not a reason for the warning).
const char* const kPlatformFields[] = {"gpu_memory_bytes", "nets", "calibration"};

// A scalar as the page shows it: the value, or null when the file has none (or something that is not a scalar).
Json scalar_or_null(const Json& obj, const std::string& key) {
  if (!obj.is_object() || !obj.contains(key)) return Json(nullptr);
  const Json& v = obj[key];
  return v.is_primitive() ? v : Json(nullptr);
}

// Appends {field, a, b} for `key` (each member of it, when either file holds an object there) where they differ.
void compare_field(const Json& a, const Json& b, const std::string& key, Json& out) {
  const Json* ga = a.contains(key) && a[key].is_object() ? &a[key] : nullptr;
  const Json* gb = b.contains(key) && b[key].is_object() ? &b[key] : nullptr;
  if (!ga && !gb) {
    const Json va = scalar_or_null(a, key), vb = scalar_or_null(b, key);
    if (va != vb) out.push_back({{"field", key}, {"a", va}, {"b", vb}});
    return;
  }
  Json keys = Json::object();  // the union of both members' keys, sorted
  for (const Json* g : {ga, gb}) {
    if (!g) continue;
    for (const auto& [k, v] : g->items()) keys[k] = true;
  }
  for (const auto& [k, unused] : keys.items()) {
    const Json va = ga ? scalar_or_null(*ga, k) : Json(nullptr), vb = gb ? scalar_or_null(*gb, k) : Json(nullptr);
    if (va != vb) out.push_back({{"field", key + "/" + k}, {"a", va}, {"b", vb}});
  }
}

}  // namespace

Json whatif_differences(const Summary& a, const Summary& b) {
  // Compared as summary.json holds them (read_summary's inverse, so the same values and number types as the files).
  const Json ja = Json::parse(summary_json(a)), jb = Json::parse(summary_json(b));
  Json scenario = Json::array(), platform = Json::array();
  for (const char* k : kScenarioFields) compare_field(ja, jb, k, scenario);
  for (const char* k : kPlatformFields) compare_field(ja, jb, k, platform);
  return {{"scenario", std::move(scenario)}, {"platform", std::move(platform)}};
}

}  // namespace simumax::report::html
