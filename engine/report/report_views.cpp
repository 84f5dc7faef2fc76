// summary.json, memory_timeline.json, memory_snapshot.json, search.json and links.json -> the HTML report's data.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/report_views.hpp"
#include "engine/report/summary.hpp"

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

// The view keeps the number types it always had: counts and bytes as the page's numbers (doubles), the stage index
// and the parallel / batch groups as integers.
Json stage_row(const StageSummary& st) {
  Json row = Json::object();
  row["stage"] = st.stage;
  row["kind"] = st.kind;
  row["layers"] = static_cast<double>(st.layers);
  row["fwd_ms"] = st.fwd_ms;
  row["bwd_ms"] = st.bwd_ms;
  row["bubble_ms"] = st.bubble_ms;
  row["dp_comm_ms"] = st.dp_comm_ms;
  row["optimizer_ms"] = st.optimizer_ms;
  row["duration_ms"] = st.duration_ms;
  row["peak_reserved_bytes"] = st.peak_reserved_bytes;
  row["peak_alloc_bytes"] = static_cast<double>(st.peak_alloc_bytes);
  row["weight_bytes"] = static_cast<double>(st.weight_bytes);
  row["grad_bytes"] = static_cast<double>(st.grad_bytes);
  row["optimizer_state_bytes"] = static_cast<double>(st.optimizer_state_bytes);
  row["te_dummy_wgrad_bytes"] = static_cast<double>(st.other_bytes);
  if (st.workspace_bytes != 0) row["cublas_workspace_bytes"] = static_cast<double>(st.workspace_bytes);
  row["activation_bytes_at_peak"] = static_cast<double>(st.activation_bytes_at_peak);
  row["transient_bytes_at_peak"] = static_cast<double>(st.transient_bytes_at_peak);
  row["peak_task"] = st.peak_task;
  // The stage's verdict as summary.json gives it (with the run's --memory-margin-gib).
  row["headroom_bytes"] = st.headroom_bytes;
  row["fits"] = st.fits;
  row["fit_source"] = "summary.json";
  return row;
}

}  // namespace

Json summary_view(const Summary& s) {
  Json v = Json::object();
  v["name"] = s.name;
  v["fidelity"] = s.fidelity;
  v["executor"] = s.executor;
  v["granularity"] = s.granularity;
  v["rank_scope"] = s.scope;
  v["step_time_ms"] = s.step_time_ms;
  v["pp_time_with_straggler_ms"] = s.pp_time_ms;
  v["tflops_per_gpu"] = s.tflops_per_gpu;
  v["mfu"] = s.mfu;
  v["tokens_per_s"] = s.tokens_per_s;
  v["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
  v["peak_alloc_bytes_max"] = static_cast<double>(s.peak_alloc_bytes_max);
  v["peak_reserved_bytes_max"] = s.peak_reserved_bytes_max;
  v["gpu_memory_bytes"] = s.gpu_memory_bytes;
  v["parallel"] = {{"world_size", s.world_size}, {"tp", s.tp}, {"cp", s.cp}, {"pp", s.pp}, {"dp", s.dp},
                   {"ep", s.ep},                 {"etp", s.etp}, {"edp", s.edp}};
  v["batch"] = {{"micro_batch_size", s.micro_batch_size}, {"micro_batch_num", s.micro_batch_num},
                {"global_batch_size", s.global_batch_size}, {"seq_len", s.seq_len}};
  Json rows = Json::array();
  for (const StageSummary& st : s.stages) rows.push_back(stage_row(st));
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
  for (const char* k : {"title", "objective", "best", "records"}) {  // records: "all" or "fit" (search --records)
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
    if (const std::string problem = result_figures_problem(c["step_time_ms"].get<double>(), c.value("mfu", 0.5));
        !problem.empty()) {
      const size_t colon = problem.find(": ");
      throw common::ConfigError(d.path, p + problem.substr(0, colon), problem.substr(colon + 2));
    }
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
