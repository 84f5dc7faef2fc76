#include "engine/search/search_output.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>

#include "engine/common/units.hpp"
#include "engine/config/scenario_writer.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::search {

namespace fs = std::filesystem;
using report::Fields;
using report::FieldSink;

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

std::optional<double> number_if(bool present, double v) { return present ? std::optional<double>(v) : std::nullopt; }

void add_figures(FieldSink& f, const SearchResult& r, const SearchRequest& q, const Outcome& o, int64_t rank) {
  const Evaluation& e = o.evaluation;
  const bool ok = e.status == Status::kEvaluated;
  f.maybe_number("step_time_ms", number_if(ok, common::ms(e.step_time_s)));
  f.maybe_number("tokens_per_s", number_if(ok, e.tokens_per_s));
  f.maybe_number("mfu", number_if(ok, e.mfu));
  f.maybe_number("gpu_seconds_per_token", number_if(ok, objective_value(Objective::kCostPerToken, e, q.job)));
  f.maybe_number("peak_reserved_gib", number_if(ok, common::gib(e.peak_reserved_bytes)));
  f.maybe_number("peak_alloc_gib", number_if(ok, common::gib(static_cast<double>(e.peak_alloc_bytes))));
  f.maybe_number("headroom_gib", number_if(ok, common::gib(headroom_bytes(e, r))));
  f.maybe_boolean("fits", ok ? std::optional<bool>(headroom_bytes(e, r) >= 0) : std::nullopt);
  f.maybe_integer("rank", rank > 0 ? std::optional<int64_t>(rank) : std::nullopt);
  const SimCheck& s = o.sim;
  const bool sim_ok = s.done && s.error.empty();
  f.maybe_number("sim_step_time_ms", number_if(sim_ok, common::ms(s.step_time_s)));
  f.maybe_number("sim_peak_reserved_gib", number_if(sim_ok, common::gib(s.peak_reserved_bytes)));
  f.maybe_number("sim_mfu", number_if(sim_ok, s.mfu));
  f.maybe_text("sim_error", s.done && !s.error.empty() ? std::optional<std::string>(s.error) : std::nullopt);
}

// world / (ep * etp * pp), 0 when not whole (the candidate is then illegal).
int64_t expert_dp(const Candidate& c, const JobShape& job) {
  const int64_t shard = c.ep * c.etp * c.pp;
  return job.world_size % shard == 0 ? job.world_size / shard : 0;
}

void request_fields(FieldSink& f, const SearchResult& r, const SearchRequest& q, const std::string& title,
                    RecordScope scope) {
  const size_t skipped = r.candidates - r.evaluated - r.failed;
  f.text("title", title);
  f.text("records", to_string(scope));
  f.text("mode", to_string(q.mode));
  f.text("objective", to_string(q.objective));
  f.text("fidelity", r.fidelity);
  f.integer("world_size", q.job.world_size);
  f.integer("global_batch_size", q.job.global_batch_size);
  f.integer("seq_len", q.job.seq_len);
  f.number("gpu_memory_gib", common::gib(r.gpu_memory_bytes));
  f.number("memory_margin_gib", q.memory_margin_gib);
  f.integer("candidates", static_cast<int64_t>(r.candidates));
  f.integer("evaluated", static_cast<int64_t>(r.evaluated));
  f.integer("fit", static_cast<int64_t>(r.ranking.size()));
  f.integer("too_big", static_cast<int64_t>(r.too_big));
  f.integer("skipped", static_cast<int64_t>(skipped));
  f.integer("failed", static_cast<int64_t>(r.failed));
  f.maybe_text("best", r.best.empty() ? std::nullopt : std::optional<std::string>(label(r.best[0].candidate)));
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

void candidate_record(FieldSink& f, const SearchResult& r, const SearchRequest& q, const Outcome& o, int64_t rank) {
  const Candidate& c = o.candidate;
  const Evaluation& e = o.evaluation;
  f.integer("index", static_cast<int64_t>(o.index));
  f.text("label", label(c));
  f.text("status", status_name(e.status));
  f.maybe_text("reason", e.reason.empty() ? std::nullopt : std::optional<std::string>(e.reason));
  f.integer("tp", c.tp);
  f.integer("cp", c.cp);
  f.integer("pp", c.pp);
  f.integer("vpp", c.vpp);
  f.integer("dp", c.dp);
  f.integer("ep", c.ep);
  f.integer("etp", c.etp);
  f.integer("edp", expert_dp(c, q.job));
  f.integer("mbs", c.mbs);
  f.integer("mbc", c.mbc);
  f.text("recompute", to_string(c.recompute));
  f.integer("zero", c.zero);
  f.boolean("sp", c.sp);
  add_figures(f, r, q, o, rank);
}

// Every outcome of `store` as its record, in enumeration order, with its rank and (for the re-checked) the sim's
// figures from the result. Holds 16 bytes per candidate that fits while it runs.
void for_each_record(const SearchResult& r, const SearchRequest& q, OutcomeStore& store,
                     const std::function<void(const Fields&)>& fn, RecordScope scope = RecordScope::kAll) {
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
    const bool checked = next_sim != sims.end() && next_sim->first == o.index;
    if (scope == RecordScope::kFit && rank == 0) {
      next_sim += checked;
      return;
    }
    if (checked) {
      with_sim = o;
      with_sim.sim = *(next_sim++)->second;
      fn([&](FieldSink& f) { candidate_record(f, r, q, with_sim, rank); });
    } else {
      fn([&](FieldSink& f) { candidate_record(f, r, q, o, rank); });
    }
  });
}

}  // namespace

void for_each_candidate_record(const SearchResult& r, const SearchRequest& q, OutcomeStore& store,
                               const std::function<void(const Fields&)>& fn) {
  for_each_record(r, q, store, fn);
}

std::string candidates_csv(const SearchResult& r, const SearchRequest& q, OutcomeStore& store) {
  std::string out;
  for_each_record(r, q, store, [&out](const Fields& rec) {
    if (out.empty()) out = report::csv_header(rec);
    out += report::csv_line(rec);
  });
  return out;
}

const char* to_string(RecordScope s) { return s == RecordScope::kFit ? "fit" : "all"; }

void write_search_files(const std::string& dir, const SearchResult& r, const SearchRequest& q, const std::string& title,
                        OutcomeStore& store, RecordScope scope) {
  std::vector<Fields> reasons;
  for (const auto& [reason, n] : r.skip_reasons) {
    reasons.push_back([&reason, n](FieldSink& f) {
      f.text("reason", reason);
      f.integer("count", static_cast<int64_t>(n));
    });
  }
  report::TextFile csv(dir + "/search.csv");
  report::RecordsJsonFile json(
      dir + "/search.json", "simumax_sim_search_v1", [&](FieldSink& f) { request_fields(f, r, q, title, scope); },
      {{"skip_reasons", reasons}}, "candidates");
  bool first = true;
  for_each_record(r, q, store, [&](const Fields& rec) {
    if (first) csv.append(report::csv_header(rec));
    first = false;
    csv.append(report::csv_line(rec));
    json.add(rec);
  }, scope);
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

std::string scenario_text(const config::Scenario& s, const Candidate& c, const config::Scenario& base,
                          const std::string& path, const std::string& description) {
  const fs::path dir = fs::absolute(path).parent_path();
  auto relative = [&](const std::string& p) {
    return fs::absolute(p).lexically_normal().lexically_relative(dir).string();
  };
  config::ScenarioFile f;
  std::string name = fs::path(base.model_path).stem().string() + "_" + label(c);
  std::replace(name.begin(), name.end(), ' ', '_');
  std::replace(name.begin(), name.end(), ':', '-');
  f.name = name;
  f.description = description;
  f.model = relative(base.model_path);
  f.system = relative(base.system_path);
  f.base_strategy_file = base.strategy_path;
  f.strategy = s.strategy;
  f.recompute_keys = c.recompute.kind != RecomputeKind::kAsBase;  // kAsBase: the base file's recompute keys
  return config::scenario_file_json(f);
}

}  // namespace simumax::search
