#include "engine/search/search_output.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>

#include "engine/common/units.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::search {

namespace fs = std::filesystem;
using report::JsonFields;
using report::JsonScalar;

namespace {

const char* status_name(Status s) {
  switch (s) {
    case Status::kEvaluated:
      return "evaluated";
    case Status::kSkipped:
      return "skipped";
    case Status::kFailed:
      return "failed";
  }
  return "?";
}

JsonScalar number_or_null(bool present, double v) { return present ? JsonScalar(v) : JsonScalar(nullptr); }

void add_figures(JsonFields& f, const SearchResult& r, const SearchRequest& q, size_t i, int64_t rank) {
  const Evaluation& e = r.evaluations[i];
  const bool ok = e.status == Status::kEvaluated;
  f.emplace_back("step_time_ms", number_or_null(ok, common::ms(e.step_time_s)));
  f.emplace_back("tokens_per_s", number_or_null(ok, e.tokens_per_s));
  f.emplace_back("mfu", number_or_null(ok, e.mfu));
  f.emplace_back("gpu_seconds_per_token", number_or_null(ok, objective_value(Objective::kCostPerToken, e, q.job)));
  f.emplace_back("peak_reserved_gib", number_or_null(ok, common::gib(e.peak_reserved_bytes)));
  f.emplace_back("peak_alloc_gib", number_or_null(ok, common::gib(static_cast<double>(e.peak_alloc_bytes))));
  f.emplace_back("headroom_gib", number_or_null(ok, common::gib(headroom_bytes(e, r))));
  f.emplace_back("fits", ok ? JsonScalar(headroom_bytes(e, r) >= 0) : JsonScalar(nullptr));
  f.emplace_back("rank", rank > 0 ? JsonScalar(rank) : JsonScalar(nullptr));
  const SimCheck& s = r.sim.empty() ? SimCheck{} : r.sim[i];
  const bool sim_ok = s.done && s.error.empty();
  f.emplace_back("sim_step_time_ms", number_or_null(sim_ok, common::ms(s.step_time_s)));
  f.emplace_back("sim_peak_reserved_gib", number_or_null(sim_ok, common::gib(s.peak_reserved_bytes)));
  f.emplace_back("sim_mfu", number_or_null(sim_ok, s.mfu));
  f.emplace_back("sim_error", s.done && !s.error.empty() ? JsonScalar(s.error) : JsonScalar(nullptr));
}

// world / (ep * etp * pp), 0 when not whole (the candidate is then illegal).
int64_t expert_dp(const Candidate& c, const JobShape& job) {
  const int64_t shard = c.ep * c.etp * c.pp;
  return job.world_size % shard == 0 ? job.world_size / shard : 0;
}

JsonFields request_fields(const SearchResult& r, const SearchRequest& q, const std::string& title) {
  const size_t skipped = r.candidates.size() - r.evaluated - r.failed;
  return {{"title", title},
          {"mode", std::string(to_string(q.mode))},
          {"objective", std::string(to_string(q.objective))},
          {"fidelity", r.fidelity},
          {"world_size", q.job.world_size},
          {"global_batch_size", q.job.global_batch_size},
          {"seq_len", q.job.seq_len},
          {"gpu_memory_gib", common::gib(r.gpu_memory_bytes)},
          {"memory_margin_gib", q.memory_margin_gib},
          {"candidates", static_cast<int64_t>(r.candidates.size())},
          {"evaluated", static_cast<int64_t>(r.evaluated)},
          {"fit", static_cast<int64_t>(r.ranking.size())},
          {"too_big", static_cast<int64_t>(r.too_big)},
          {"skipped", static_cast<int64_t>(skipped)},
          {"failed", static_cast<int64_t>(r.failed)},
          {"threads", static_cast<int64_t>(r.threads)},
          {"eval_seconds", r.eval_seconds},
          {"best", r.ranking.empty() ? JsonScalar(nullptr) : JsonScalar(label(r.candidates[r.ranking[0]]))}};
}

// The candidates that do not fit, by how little they miss.
std::vector<size_t> closest_misses(const SearchResult& r, size_t n) {
  std::vector<size_t> misses;
  for (size_t i = 0; i < r.evaluations.size(); ++i) {
    const Evaluation& e = r.evaluations[i];
    if (e.status == Status::kEvaluated && headroom_bytes(e, r) < 0) misses.push_back(i);
  }
  std::stable_sort(misses.begin(), misses.end(), [&](size_t a, size_t b) {
    return headroom_bytes(r.evaluations[a], r) > headroom_bytes(r.evaluations[b], r);
  });
  if (misses.size() > n) misses.resize(n);
  return misses;
}

std::string counts_text(const SearchResult& r, const SearchRequest& q) {
  std::string out = fmt::format(
      "{} candidates: {} evaluated in {:.3f} s on {} threads ({:.0f}/s), {} fit in {:.10g} GiB with a {:g} GiB margin, "
      "{} too big, {} skipped{}\n",
      r.candidates.size(), r.evaluated, r.eval_seconds, r.threads,
      r.eval_seconds > 0 ? static_cast<double>(r.candidates.size()) / r.eval_seconds : 0.0, r.ranking.size(),
      common::gib(r.gpu_memory_bytes), q.memory_margin_gib, r.too_big, r.candidates.size() - r.evaluated - r.failed,
      r.failed > 0 ? fmt::format(", {} failed in the engine", r.failed) : "");
  for (const auto& [reason, n] : r.skip_reasons) out += fmt::format("  skipped {:>7}  {}\n", n, reason);
  for (size_t i : closest_misses(r, 3)) {
    out += fmt::format("  too big: {} needs {:.2f} GiB, over by {:.2f} GiB\n", label(r.candidates[i]),
                       common::gib(r.evaluations[i].peak_reserved_bytes),
                       -common::gib(headroom_bytes(r.evaluations[i], r)));
  }
  return out;
}

}  // namespace

namespace {

std::vector<int64_t> ranks_of(const SearchResult& r) {
  std::vector<int64_t> rank_of(r.candidates.size(), 0);
  for (size_t j = 0; j < r.ranking.size(); ++j) rank_of[r.ranking[j]] = static_cast<int64_t>(j + 1);
  return rank_of;
}

JsonFields candidate_record(const SearchResult& r, const SearchRequest& q, size_t i, const std::vector<int64_t>& rank_of) {
  const Candidate& c = r.candidates[i];
  const Evaluation& e = r.evaluations[i];
  JsonFields f = {{"index", static_cast<int64_t>(i)},
                  {"label", label(c)},
                  {"status", std::string(status_name(e.status))},
                  {"reason", e.reason.empty() ? JsonScalar(nullptr) : JsonScalar(e.reason)},
                  {"tp", c.tp},
                  {"cp", c.cp},
                  {"pp", c.pp},
                  {"vpp", c.vpp},
                  {"dp", c.dp},
                  {"ep", c.ep},
                  {"etp", c.etp},
                  {"edp", expert_dp(c, q.job)},
                  {"mbs", c.mbs},
                  {"mbc", c.mbc},
                  {"recompute", to_string(c.recompute)},
                  {"zero", c.zero},
                  {"sp", c.sp}};
  add_figures(f, r, q, i, rank_of[i]);
  return f;
}

}  // namespace

std::vector<JsonFields> candidate_records(const SearchResult& r, const SearchRequest& q) {
  const auto rank_of = ranks_of(r);
  std::vector<JsonFields> out;
  out.reserve(r.candidates.size());
  for (size_t i = 0; i < r.candidates.size(); ++i) out.push_back(candidate_record(r, q, i, rank_of));
  return out;
}

using report::csv_header;
using report::csv_line;

std::string records_csv(const std::vector<JsonFields>& records) {
  if (records.empty()) return "";
  std::string out = csv_header(records[0]);
  for (const auto& rec : records) out += csv_line(rec);
  return out;
}

void write_search_files(const std::string& dir, const SearchResult& r, const SearchRequest& q,
                        const std::string& title) {
  const auto rank_of = ranks_of(r);
  {
    report::TextFile csv(dir + "/search.csv");
    for (size_t i = 0; i < r.candidates.size(); ++i) {
      const JsonFields rec = candidate_record(r, q, i, rank_of);
      if (i == 0) csv.append(csv_header(rec));
      csv.append(csv_line(rec));
    }
    csv.close();
  }
  std::vector<JsonFields> reasons;
  for (const auto& [reason, n] : r.skip_reasons) {
    reasons.push_back({{"reason", reason}, {"count", static_cast<int64_t>(n)}});
  }
  report::write_records_json(dir + "/search.json", request_fields(r, q, title), {{"skip_reasons", reasons}},
                             "candidates", r.candidates.size(),
                             [&](size_t i) { return candidate_record(r, q, i, rank_of); });
}

std::string ranked_table(const SearchResult& r, const SearchRequest& q, const std::string& title, size_t top) {
  std::string out = title + "\n" + counts_text(r, q);
  if (r.ranking.empty()) return out + "no candidate fits in memory\n";
  const bool sim = std::any_of(r.sim.begin(), r.sim.end(), [](const SimCheck& s) { return s.done; });
  const size_t shown = std::min(top, r.ranking.size());
  size_t width = 9;
  for (size_t j = 0; j < shown; ++j) width = std::max(width, label(r.candidates[r.ranking[j]]).size());
  out += fmt::format("\n{:>4}  {:<{}} {:>11} {:>12} {:>7} {:>9} {:>9}{}\n", "rank", "candidate", width, "step ms",
                     "tokens/s", "MFU", "peak GiB", "free GiB", sim ? "  sim step ms  sim GiB" : "");
  for (size_t j = 0; j < shown; ++j) {
    const size_t i = r.ranking[j];
    const Evaluation& e = r.evaluations[i];
    out += fmt::format("{:>4}  {:<{}} {:>11.2f} {:>12.0f} {:>7.4f} {:>9.2f} {:>9.2f}", j + 1, label(r.candidates[i]),
                       width, common::ms(e.step_time_s), e.tokens_per_s, e.mfu, common::gib(e.peak_reserved_bytes),
                       common::gib(headroom_bytes(e, r)));
    const SimCheck& s = r.sim[i];
    if (s.done && s.error.empty()) {
      out += fmt::format("  {:>11.2f} {:>8.2f}", common::ms(s.step_time_s), common::gib(s.peak_reserved_bytes));
    } else if (s.done) {
      out += "  sim failed: " + s.error;
    }
    out += "\n";
  }
  return out;
}

report::JsonFields strategy_fields(const config::StrategyConfig& st, RecomputeKind recompute) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? JsonScalar(*v) : JsonScalar(nullptr); };
  JsonFields f = {{"seq_len", st.seq_len},
                  {"micro_batch_size", st.micro_batch_size},
                  {"micro_batch_num", st.micro_batch_num},
                  {"world_size", st.world_size},
                  {"tp_size", st.tp_size},
                  {"cp_size", st.cp_size},
                  {"pp_size", st.pp_size},
                  {"ep_size", st.ep_size},
                  {"etp_size", st.etp_size},
                  {"interleaving_size", st.interleaving_size},
                  {"microbatch_group_size_per_vp_stage", opt(st.microbatch_group_size_per_vp_stage)},
                  {"num_layers_in_first_pipeline_stage", opt(st.num_layers_in_first_pipeline_stage)},
                  {"num_layers_in_last_pipeline_stage", opt(st.num_layers_in_last_pipeline_stage)},
                  {"zero_state", st.zero_state},
                  {"enable_sequence_parallel", st.enable_sequence_parallel},
                  {"fidelity", std::string(config::to_string(st.fidelity))}};
  if (recompute == RecomputeKind::kAsBase) return f;
  using G = config::RecomputeGranularity;
  const JsonScalar granularity = st.recompute_granularity == G::kFullBlock ? JsonScalar(std::string("full_block"))
                                 : st.recompute_granularity == G::kSelective
                                     ? JsonScalar(std::string("selective_recompute"))
                                     : JsonScalar(nullptr);
  const JsonFields rec = {{"enable_recompute", st.enable_recompute},
                          {"recompute_granularity", granularity},
                          {"recompute_layer_num", st.recompute_layer_num},
                          {"recompute_variance", st.recompute_variance},
                          {"attn_recompute", st.attn_recompute},
                          {"mla_rms_recompute", st.mla_rms_recompute},
                          {"mlp_recompute", st.mlp_recompute},
                          {"mlp_rms_recompute", st.mlp_rms_recompute},
                          {"megatron_recompute", st.megatron_recompute},
                          {"megatron_recompute_modules", nullptr}};
  f.insert(f.end(), rec.begin(), rec.end());
  return f;
}

std::string scenario_text(const config::Scenario& s, const Candidate& c, const config::Scenario& base,
                          const std::string& path, const std::string& description) {
  const fs::path dir = fs::absolute(path).parent_path();
  auto relative = [&](const std::string& p) {
    return fs::absolute(p).lexically_normal().lexically_relative(dir).string();
  };
  report::ScenarioFile f;
  std::string name = fs::path(base.model_path).stem().string() + "_" + label(c);
  std::replace(name.begin(), name.end(), ' ', '_');
  std::replace(name.begin(), name.end(), ':', '-');
  f.name = name;
  f.description = description;
  f.model = relative(base.model_path);
  f.system = relative(base.system_path);
  f.base_strategy_file = base.strategy_path;
  f.strategy_fields = strategy_fields(s.strategy, c.recompute.kind);
  return report::scenario_file_json(f);
}

}  // namespace simumax::search
