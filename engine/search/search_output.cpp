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

void add_figures(JsonFields& f, const SearchResult& r, const SearchRequest& q, const Outcome& o, int64_t rank) {
  const Evaluation& e = o.evaluation;
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
  const SimCheck& s = o.sim;
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
  const size_t skipped = r.candidates - r.evaluated - r.failed;
  return {{"title", title},
          {"mode", std::string(to_string(q.mode))},
          {"objective", std::string(to_string(q.objective))},
          {"fidelity", r.fidelity},
          {"world_size", q.job.world_size},
          {"global_batch_size", q.job.global_batch_size},
          {"seq_len", q.job.seq_len},
          {"gpu_memory_gib", common::gib(r.gpu_memory_bytes)},
          {"memory_margin_gib", q.memory_margin_gib},
          {"candidates", static_cast<int64_t>(r.candidates)},
          {"evaluated", static_cast<int64_t>(r.evaluated)},
          {"fit", static_cast<int64_t>(r.ranking.size())},
          {"too_big", static_cast<int64_t>(r.too_big)},
          {"skipped", static_cast<int64_t>(skipped)},
          {"failed", static_cast<int64_t>(r.failed)},
          {"best", r.best.empty() ? JsonScalar(nullptr) : JsonScalar(label(r.best[0].candidate))}};
}

std::string counts_text(const SearchResult& r, const SearchRequest& q) {
  std::string out = fmt::format(
      "{} candidates: {} evaluated in {:.3f} s on {} threads ({:.0f}/s), {} fit in {:.10g} GiB with a {:g} GiB margin, "
      "{} too big, {} skipped{}\n",
      r.candidates, r.evaluated, r.eval_seconds, r.threads,
      r.eval_seconds > 0 ? static_cast<double>(r.candidates) / r.eval_seconds : 0.0, r.ranking.size(),
      common::gib(r.gpu_memory_bytes), q.memory_margin_gib, r.too_big, r.candidates - r.evaluated - r.failed,
      r.failed > 0 ? fmt::format(", {} failed in the engine", r.failed) : "");
  for (const auto& [reason, n] : r.skip_reasons) out += fmt::format("  skipped {:>7}  {}\n", n, reason);
  for (const Outcome& o : r.misses) {
    out += fmt::format("  too big: {} needs {:.2f} GiB, over by {:.2f} GiB\n", label(o.candidate),
                       common::gib(o.evaluation.peak_reserved_bytes), -common::gib(headroom_bytes(o.evaluation, r)));
  }
  return out;
}

}  // namespace

namespace {

JsonFields candidate_record(const SearchResult& r, const SearchRequest& q, const Outcome& o, int64_t rank) {
  const Candidate& c = o.candidate;
  const Evaluation& e = o.evaluation;
  JsonFields f = {{"index", static_cast<int64_t>(o.index)},
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
  add_figures(f, r, q, o, rank);
  return f;
}

// Every outcome of `store` as its record, in enumeration order, with its rank and (for the re-checked) the sim's
// figures from the result. Holds 16 bytes per candidate that fits while it runs.
void for_each_record(const SearchResult& r, const SearchRequest& q, OutcomeStore& store,
                     const std::function<void(const JsonFields&)>& fn) {
  std::vector<std::pair<size_t, int64_t>> rank_of;  // index, rank; by index
  rank_of.reserve(r.ranking.size());
  for (size_t j = 0; j < r.ranking.size(); ++j) rank_of.emplace_back(r.ranking[j], static_cast<int64_t>(j + 1));
  std::sort(rank_of.begin(), rank_of.end());
  std::vector<std::pair<size_t, const SimCheck*>> sims;  // index, re-check; by index
  for (const Outcome& o : r.best) {
    if (o.sim.done) sims.emplace_back(o.index, &o.sim);
  }
  std::sort(sims.begin(), sims.end());
  auto next_rank = rank_of.begin();
  auto next_sim = sims.begin();
  Outcome with_sim;
  store.for_each([&](const Outcome& o) {
    int64_t rank = 0;
    if (next_rank != rank_of.end() && next_rank->first == o.index) rank = (next_rank++)->second;
    if (next_sim != sims.end() && next_sim->first == o.index) {
      with_sim = o;
      with_sim.sim = *(next_sim++)->second;
      fn(candidate_record(r, q, with_sim, rank));
    } else {
      fn(candidate_record(r, q, o, rank));
    }
  });
}

}  // namespace

std::vector<JsonFields> candidate_records(const SearchResult& r, const SearchRequest& q, OutcomeStore& store) {
  std::vector<JsonFields> out;
  out.reserve(r.candidates);
  for_each_record(r, q, store, [&out](const JsonFields& f) { out.push_back(f); });
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

void write_search_files(const std::string& dir, const SearchResult& r, const SearchRequest& q, const std::string& title,
                        OutcomeStore& store) {
  std::vector<JsonFields> reasons;
  for (const auto& [reason, n] : r.skip_reasons) {
    reasons.push_back({{"reason", reason}, {"count", static_cast<int64_t>(n)}});
  }
  report::TextFile csv(dir + "/search.csv");
  report::RecordsJsonFile json(dir + "/search.json", request_fields(r, q, title), {{"skip_reasons", reasons}},
                               "candidates");
  bool first = true;
  for_each_record(r, q, store, [&](const JsonFields& rec) {
    if (first) csv.append(csv_header(rec));
    first = false;
    csv.append(csv_line(rec));
    json.add(rec);
  });
  csv.close();
  json.close();
}

std::string ranked_table(const SearchResult& r, const SearchRequest& q, const std::string& title, size_t top) {
  std::string out = title + "\n" + counts_text(r, q);
  if (r.ranking.empty()) return out + "no candidate fits in memory\n";
  const bool sim = std::any_of(r.best.begin(), r.best.end(), [](const Outcome& o) { return o.sim.done; });
  const size_t shown = std::min(top, r.best.size());
  size_t width = 9;
  for (size_t j = 0; j < shown; ++j) width = std::max(width, label(r.best[j].candidate).size());
  out += fmt::format("\n{:>4}  {:<{}} {:>11} {:>12} {:>7} {:>9} {:>9}{}\n", "rank", "candidate", width, "step ms",
                     "tokens/s", "MFU", "peak GiB", "free GiB", sim ? "  sim step ms  sim GiB" : "");
  for (size_t j = 0; j < shown; ++j) {
    const Evaluation& e = r.best[j].evaluation;
    out += fmt::format("{:>4}  {:<{}} {:>11.2f} {:>12.0f} {:>7.4f} {:>9.2f} {:>9.2f}", j + 1, label(r.best[j].candidate),
                       width, common::ms(e.step_time_s), e.tokens_per_s, e.mfu, common::gib(e.peak_reserved_bytes),
                       common::gib(headroom_bytes(e, r)));
    const SimCheck& s = r.best[j].sim;
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
