// summary.json, memory_timeline.json, memory_snapshot.json, search.json and links.json -> the HTML report's data.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/report_views.hpp"

namespace simumax::report::html {

namespace {

constexpr size_t kMaxLinkBuckets = 4096;  // links.json has at most 128; more is not a file run wrote

// Copies the scalar members named in `keys` that `obj` has (type-checked as numbers) into `out`.
void copy_numbers(const JsonDoc& d, const Json& obj, const std::string& pointer, std::initializer_list<const char*> keys,
                  Json& out) {
  for (const char* k : keys) {
    if (auto v = maybe_number(d, obj, pointer, k)) out[k] = *v;
  }
}

Json stage_row(const JsonDoc& d, const Json& st, const std::string& p, std::optional<double> gpu_bytes) {
  Json row = Json::object();
  row["stage"] = need(d, st, p, "stage", "integer");
  if (const Json* k = maybe(d, st, p, "kind", "string")) row["kind"] = *k;
  copy_numbers(d, st, p, {"layers", "fwd_ms", "bwd_ms", "bubble_ms", "dp_comm_ms", "optimizer_ms", "duration_ms"}, row);
  const std::string mp = p + "/memory";
  const Json& m = need(d, st, p, "memory", "object");
  const double reserved = need_number(d, m, mp, "peak_reserved_bytes");
  row["peak_reserved_bytes"] = reserved;
  row["peak_alloc_bytes"] = need_number(d, m, mp, "peak_alloc_bytes");
  copy_numbers(d, m, mp, {"weight_bytes", "grad_bytes", "optimizer_state_bytes", "te_dummy_wgrad_bytes",
                          "cublas_workspace_bytes", "activation_bytes_at_peak", "transient_bytes_at_peak"}, row);
  if (const Json* t = maybe(d, m, mp, "peak_task", "string")) row["peak_task"] = *t;
  // A stage's verdict and headroom as summary.json gives them (with the run's --memory-margin-gib); a summary.json
  // of an older run has neither, and the verdict is judged from the system's GPU memory.
  const Json* fits = maybe(d, st, p, "fits", "boolean");
  std::optional<double> headroom;
  if (const auto gib = maybe_number(d, st, p, "headroom_gib")) headroom = *gib * 1024.0 * 1024.0 * 1024.0;
  if (!headroom && gpu_bytes) headroom = *gpu_bytes - reserved;
  if (headroom) row["headroom_bytes"] = *headroom;
  if (fits) {
    row["fits"] = *fits;
    row["fit_source"] = "summary.json";
  } else if (headroom) {
    row["fits"] = *headroom >= 0;
    row["fit_source"] = "GPU memory - peak reserved";
  }
  return row;
}

}  // namespace

Json summary_view(const JsonDoc& d) {
  const Json& r = d.root;
  expect_kind(d, r, "", "object");
  Json v = Json::object();
  for (const char* k : {"name", "fidelity", "executor", "granularity", "rank_scope"}) {
    if (const Json* s = maybe(d, r, "", k, "string")) v[k] = *s;
  }
  v["step_time_ms"] = need_number(d, r, "", "step_time_ms");
  copy_numbers(d, r, "", {"pp_time_with_straggler_ms", "tflops_per_gpu", "mfu", "tokens_per_s", "tokens_per_s_per_gpu",
                          "peak_alloc_bytes_max", "peak_reserved_bytes_max", "gpu_memory_bytes"}, v);
  for (const char* group : {"parallel", "batch"}) {
    if (const Json* g = maybe(d, r, "", group, "object")) {
      Json out = Json::object();
      for (const auto& [k, x] : g->items()) {
        if (x.is_number_integer()) out[k] = x;
      }
      v[group] = std::move(out);
    }
  }
  const std::optional<double> gpu = maybe_number(d, r, "", "gpu_memory_bytes");
  Json rows = Json::array();
  const Json& stages = need(d, r, "", "stages", "array");
  for (size_t i = 0; i < stages.size(); ++i) rows.push_back(stage_row(d, stages[i], "/stages/" + std::to_string(i), gpu));
  v["stages"] = std::move(rows);
  return v;
}

Json memory_view(const JsonDoc& d, const JsonDoc* snapshot, size_t max_points) {
  expect_kind(d, d.root, "", "object");
  const Json& ranks = need(d, d.root, "", "ranks", "array");
  std::map<int64_t, Json> live_at_peak;  // rank -> the largest allocations live at its peak
  if (snapshot) {
    expect_kind(*snapshot, snapshot->root, "", "object");
    const Json& sr = need(*snapshot, snapshot->root, "", "ranks", "array");
    for (size_t i = 0; i < sr.size(); ++i) {
      const std::string p = "/ranks/" + std::to_string(i);
      const Json& peak = need(*snapshot, sr[i], p, "peak", "object");
      Json live = need(*snapshot, peak, p + "/peak", "live", "array");
      Json top = Json::array();
      for (size_t j = 0; j < live.size(); ++j) {
        const std::string lp = p + "/peak/live/" + std::to_string(j);
        top.push_back({{"name", need_string(*snapshot, live[j], lp, "name")},
                       {"bytes", need_number(*snapshot, live[j], lp, "bytes")}});
      }
      std::stable_sort(top.begin(), top.end(), [](const Json& a, const Json& b) { return a["bytes"] > b["bytes"]; });
      if (top.size() > 12) top.erase(top.begin() + 12, top.end());
      Json entry = {{"task", need_string(*snapshot, peak, p + "/peak", "task")}, {"live", std::move(top)}};
      live_at_peak[need(*snapshot, sr[i], p, "rank", "integer").get<int64_t>()] = std::move(entry);
    }
  }
  // One curve per pipeline stage: the rank with the highest peak (the lowest rank of ties); ranks of a stage
  // differ little, and 512 curves would make the page slow to open. Ranks without a stage are all drawn.
  std::map<int64_t, size_t> drawn_of_stage;
  std::vector<size_t> drawn;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string p = "/ranks/" + std::to_string(i);
    const double peak = need_number(d, ranks[i], p, "peak_allocated_bytes");
    const Json* stage = maybe(d, ranks[i], p, "pp_stage", "integer");
    if (!stage) {
      drawn.push_back(i);
      continue;
    }
    const auto [it, added] = drawn_of_stage.try_emplace(stage->get<int64_t>(), i);
    if (!added && peak > ranks[it->second]["peak_allocated_bytes"].get<double>()) it->second = i;
  }
  for (const auto& [stage, i] : drawn_of_stage) drawn.push_back(i);
  std::sort(drawn.begin(), drawn.end());
  Json out = Json::array();
  for (size_t i : drawn) {
    const std::string p = "/ranks/" + std::to_string(i);
    const Json& rk = ranks[i];
    const int64_t rank = need(d, rk, p, "rank", "integer").get<int64_t>();
    const Json& samples = need(d, rk, p, "samples", "array");
    size_t peak_i = 0;
    for (size_t j = 0; j < samples.size(); ++j) {
      const std::string sp = p + "/samples/" + std::to_string(j);
      expect_kind(d, samples[j], sp, "array");
      if (samples[j].size() != 5) throw common::ConfigError(d.path, sp, "expected 5 numbers (time_us, allocated, static, activation, transient)");
      for (size_t k = 0; k < 5; ++k) expect_kind(d, samples[j][k], sp + "/" + std::to_string(k), "number");
      if (samples[j][1].get<double>() > samples[peak_i][1].get<double>()) peak_i = j;
    }
    // A step curve decimated by keeping, per bucket of consecutive samples, the highest one (and the peak).
    Json kept = Json::array();
    const size_t per = samples.size() <= max_points ? 1 : (samples.size() + max_points - 1) / max_points;
    for (size_t b = 0; b < samples.size(); b += per) {
      size_t best = b;
      for (size_t j = b; j < std::min(samples.size(), b + per); ++j) {
        if (j == peak_i || (best != peak_i && samples[j][1].get<double>() > samples[best][1].get<double>())) best = j;
      }
      kept.push_back(samples[best]);
    }
    Json e = {{"rank", rank},
              {"peak_allocated_bytes", need_number(d, rk, p, "peak_allocated_bytes")},
              {"peak_time_us", need_number(d, rk, p, "peak_time_us")},
              {"samples", std::move(kept)},
              {"total_samples", samples.size()}};
    if (const Json* st = maybe(d, rk, p, "pp_stage", "integer")) e["pp_stage"] = *st;
    if (auto it = live_at_peak.find(rank); it != live_at_peak.end()) e["at_peak"] = it->second;
    out.push_back(std::move(e));
  }
  return {{"ranks", std::move(out)}, {"traced_ranks", ranks.size()}};
}

Json search_view(const JsonDoc& d) {
  expect_kind(d, d.root, "", "object");
  Json v = Json::object();
  for (const char* k : {"title", "objective", "best"}) {
    if (const Json* s = maybe(d, d.root, "", k, "string")) v[k] = *s;
  }
  copy_numbers(d, d.root, "", {"gpu_memory_gib", "memory_margin_gib", "evaluated", "fit", "too_big", "skipped", "failed"}, v);
  const Json& list = need(d, d.root, "", "candidates", "array");  // search.json repeats the key: the list is last
  Json cands = Json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = "/candidates/" + std::to_string(i);
    if (need_string(d, list[i], p, "status") != "evaluated") continue;
    Json c = {{"label", need_string(d, list[i], p, "label")},
              {"step_time_ms", need_number(d, list[i], p, "step_time_ms")},
              {"peak_reserved_gib", need_number(d, list[i], p, "peak_reserved_gib")},
              {"fits", need(d, list[i], p, "fits", "boolean")}};
    copy_numbers(d, list[i], p, {"mfu", "tokens_per_s", "headroom_gib"}, c);
    const Json& rank = list[i].contains("rank") ? list[i]["rank"] : Json(nullptr);
    if (!rank.is_null()) c["rank"] = need(d, list[i], p, "rank", "integer");
    const Json& sim = list[i].contains("sim_step_time_ms") ? list[i]["sim_step_time_ms"] : Json(nullptr);
    if (!sim.is_null()) c["sim_step_time_ms"] = need_number(d, list[i], p, "sim_step_time_ms");
    cands.push_back(std::move(c));
  }
  // Pareto front of the candidates that fit: none is both faster and smaller. Sorted by step time, a candidate
  // is on the front when its memory is below every faster one's.
  std::vector<size_t> fit;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (cands[i]["fits"].get<bool>()) fit.push_back(i);
  }
  std::stable_sort(fit.begin(), fit.end(), [&](size_t a, size_t b) {
    const double ta = cands[a]["step_time_ms"], tb = cands[b]["step_time_ms"];
    return ta != tb ? ta < tb : cands[a]["peak_reserved_gib"].get<double>() < cands[b]["peak_reserved_gib"].get<double>();
  });
  Json front = Json::array();
  double best_mem = 0;
  for (size_t i : fit) {
    const double mem = cands[i]["peak_reserved_gib"];
    if (front.empty() || mem < best_mem) {
      front.push_back(i);
      best_mem = mem;
    }
  }
  v["candidates"] = std::move(cands);
  v["pareto"] = std::move(front);
  return v;
}

Json links_view(const JsonDoc& d) {
  expect_kind(d, d.root, "", "object");
  Json v = Json::object();
  copy_numbers(d, d.root, "", {"makespan_s"}, v);
  const Json& links = need(d, d.root, "", "links", "array");
  Json out = Json::array();
  for (size_t i = 0; i < links.size() && i < 20; ++i) {
    const std::string p = "/links/" + std::to_string(i);
    expect_kind(d, links[i], p, "object");
    Json row = Json::object();
    for (const auto& [k, x] : links[i].items()) {
      if (x.is_string() || x.is_number() || x.is_boolean()) row[k] = x;
    }
    // The course over time (links.json of a run since the series were added; older ones have totals only).
    for (const char* key : {"busy_series", "utilisation_series"}) {
      const Json* series = maybe(d, links[i], p, key, "array");
      if (!series) continue;
      const std::string sp = p + "/" + key;
      if (series->size() > kMaxLinkBuckets) {
        throw common::ConfigError(d.path, sp, "expected at most " + std::to_string(kMaxLinkBuckets) + " buckets");
      }
      if (!v.contains("series")) {
        v["series"] = {{"bucket_s", need_number(d, d.root, "", "series_bucket_s")}, {"buckets", series->size()}};
      } else if (v["series"]["buckets"] != series->size()) {
        throw common::ConfigError(d.path, sp, "expected " + v["series"]["buckets"].dump() + " buckets, as the links before");
      }
      for (size_t b = 0; b < series->size(); ++b) expect_kind(d, (*series)[b], sp + "/" + std::to_string(b), "number");
      row[key] = *series;
    }
    out.push_back(std::move(row));
  }
  v["links"] = std::move(out);
  return v;
}

}  // namespace simumax::report::html
