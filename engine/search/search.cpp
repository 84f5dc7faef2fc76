#include "engine/search/search.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/common/units.hpp"

namespace simumax::search {

using common::UsageError;
namespace fs = std::filesystem;

Objective parse_objective(const std::string& text) {
  if (text == "step-time") return Objective::kStepTime;
  if (text == "tokens-per-s") return Objective::kTokensPerS;
  if (text == "mfu") return Objective::kMfu;
  if (text == "cost-per-token") return Objective::kCostPerToken;
  throw UsageError("--objective: unknown objective '" + text +
                   "'; choose from step-time, tokens-per-s, mfu, "
                   "cost-per-token");
}

const char* to_string(Objective o) {
  switch (o) {
    case Objective::kStepTime:
      return "step-time";
    case Objective::kTokensPerS:
      return "tokens-per-s";
    case Objective::kMfu:
      return "mfu";
    case Objective::kCostPerToken:
      return "cost-per-token";
  }
  return "?";
}

double headroom_bytes(const Evaluation& e, const SearchResult& r) {
  return r.gpu_memory_bytes - r.margin_bytes - e.peak_reserved_bytes;
}

double objective_value(Objective o, const Evaluation& e, const JobShape& job) {
  switch (o) {
    case Objective::kStepTime:
      return common::ms(e.step_time_s);
    case Objective::kTokensPerS:
      return e.tokens_per_s;
    case Objective::kMfu:
      return e.mfu;
    case Objective::kCostPerToken:
      return static_cast<double>(job.world_size) * e.step_time_s /
             static_cast<double>(job.seq_len * job.global_batch_size);
  }
  return 0;
}

double objective_score(Objective o, const Evaluation& e, const JobShape& job) {
  const double v = objective_value(o, e, job);
  return o == Objective::kTokensPerS || o == Objective::kMfu ? -v : v;
}

namespace {

// Sorts by the ranking rule, reading candidate i's figures from eval(i).
template <typename EvalOf>
void rank_with(std::vector<size_t>& indices, const SearchRequest& request, const SearchResult& r, EvalOf&& eval) {
  auto key = [&](size_t i) {
    const Evaluation& e = eval(i);
    const double mbs_first = request.mode == SearchMode::kMicroBatch ? -static_cast<double>(r.candidates[i].mbs) : 0;
    return std::tuple(mbs_first, objective_score(request.objective, e, request.job), -headroom_bytes(e, r), i);
  };
  std::sort(indices.begin(), indices.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
}

}  // namespace

void rank(std::vector<size_t>& indices, const SearchRequest& request, const SearchResult& r) {
  rank_with(indices, request, r, [&](size_t i) -> const Evaluation& { return r.evaluations[i]; });
}

namespace {

void count_outcomes(SearchResult& r) {
  std::map<std::string, size_t> reasons;
  for (size_t i = 0; i < r.evaluations.size(); ++i) {
    const Evaluation& e = r.evaluations[i];
    if (e.status == Status::kSkipped) ++reasons[e.reason];
    if (e.status == Status::kFailed) ++r.failed;
    if (e.status != Status::kEvaluated) continue;
    ++r.evaluated;
    if (headroom_bytes(e, r) >= 0) {
      r.ranking.push_back(i);
    } else {
      ++r.too_big;
    }
  }
  r.skip_reasons.assign(reasons.begin(), reasons.end());
  std::stable_sort(r.skip_reasons.begin(), r.skip_reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

std::string no_legal_candidate_message(const SearchResult& r) {
  std::string msg = fmt::format("no legal candidate among the {} of the search space", r.candidates.size());
  for (size_t i = 0; i < r.skip_reasons.size() && i < 3; ++i) {
    msg += fmt::format("{} {} x \"{}\"", i == 0 ? ":" : ",", r.skip_reasons[i].second, r.skip_reasons[i].first);
  }
  for (const auto& e : r.evaluations) {
    if (e.status == Status::kSkipped && e.reason == r.skip_reasons.front().first) return msg + "; e.g. " + e.detail;
  }
  return msg;
}

// Re-runs the best `request.recheck` on SimGrid (several at a time) and re-ranks them by what it measured.
void recheck_best(SearchResult& r, const config::Scenario& base, const SearchRequest& request,
                  const RecheckFn& recheck) {
  const size_t k = std::min<size_t>(static_cast<size_t>(std::max(0, request.recheck)), r.ranking.size());
  if (k == 0 || !recheck) return;
  std::atomic<size_t> next{0};
  auto work = [&]() {
    Evaluator ev(base, request.job, request.space.uneven_pp);
    for (size_t j = next++; j < k; j = next++) {
      const size_t i = r.ranking[j];
      ev.evaluate(r.candidates[i]);  // rebuilds the candidate's scenario (cheap next to a SimGrid run)
      try {
        r.sim[i] = recheck(i, r.candidates[i], ev.scenario());
      } catch (const std::exception& e) {
        // A failed re-check is reported with the candidate; it must not end the search (nor escape a thread).
        r.sim[i] = SimCheck{};
        r.sim[i].error = e.what();
      }
      r.sim[i].done = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(r.threads, static_cast<int>(k)); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // The sim's figures replace the fast ones for the re-checked; those that no longer fit, or failed, go last.
  std::vector<size_t> ok, dropped;
  for (size_t j = 0; j < k; ++j) {
    const size_t i = r.ranking[j];
    const SimCheck& s = r.sim[i];
    const bool fits = s.error.empty() && r.gpu_memory_bytes - r.margin_bytes - s.peak_reserved_bytes >= 0;
    (fits ? ok : dropped).push_back(i);
  }
  std::map<size_t, Evaluation> as_sim;
  for (size_t i : ok) {
    Evaluation e = r.evaluations[i];
    e.step_time_s = r.sim[i].step_time_s, e.peak_reserved_bytes = r.sim[i].peak_reserved_bytes;
    e.mfu = r.sim[i].mfu, e.tokens_per_s = r.sim[i].tokens_per_s;
    as_sim.emplace(i, e);
  }
  rank_with(ok, request, r, [&](size_t i) -> const Evaluation& { return as_sim.at(i); });
  ok.insert(ok.end(), dropped.begin(), dropped.end());
  std::copy(ok.begin(), ok.end(), r.ranking.begin());
}

}  // namespace

config::Scenario load_base(const std::string& model_path, const std::string& system_path,
                           const std::string& strategy_path, int64_t seq_len) {
  config::Scenario s;
  s.model_path = model_path, s.system_path = system_path, s.strategy_path = strategy_path;
  s.model_origin = config::ConfigOrigin::of(model_path);
  s.system_origin = config::ConfigOrigin::of(system_path);
  s.model = config::load_model_file(model_path);
  s.system = config::load_system_file(system_path);
  if (!strategy_path.empty()) {
    s.strategy_origin = config::ConfigOrigin::of(strategy_path);
    s.strategy = config::load_strategy_file(strategy_path);
  } else {
    s.strategy_origin = config::ConfigOrigin::of("(SimuMax default strategy)");
    s.strategy.micro_batch_size = 1, s.strategy.micro_batch_num = 1;
  }
  if (seq_len > 0) s.strategy.seq_len = seq_len;
  if (s.strategy.seq_len <= 0) throw UsageError("--seq-len is required without --strategy");
  s.name = fs::path(model_path).stem().string() + "_search";
  return s;
}

SearchResult run_search(const config::Scenario& base, const SearchRequest& request, const ProgressFn& progress,
                        const RecheckFn& recheck) {
  SearchResult r;
  r.gpu_memory_bytes = base.system.mem_gbs * common::kGiB;
  r.fidelity = config::to_string(base.strategy.fidelity);
  r.margin_bytes = request.memory_margin_gib * common::kGiB;
  if (request.memory_margin_gib < 0) {
    throw UsageError(fmt::format("--memory-margin-gib must not be negative, got {}", request.memory_margin_gib));
  }
  if (r.margin_bytes >= r.gpu_memory_bytes) {
    throw UsageError(fmt::format(
        "--memory-margin-gib {} leaves no memory: the GPU of {} has {} GiB (accelerator mem_gbs); use a margin "
        "between 0 and {} GiB (SimuMax's gmi_error is 6 to 10)",
        request.memory_margin_gib, base.system_path, base.system.mem_gbs, base.system.mem_gbs));
  }
  r.threads = resolve_threads(request.threads);
  r.candidates = enumerate(request.space, request.mode, base, request.job);
  if (r.candidates.empty()) throw UsageError("the search space is empty: a list has no values");
  // Roughly 50,000 evaluations per second per core (bench): say up front how long the space will take.
  const double eta_s = static_cast<double>(r.candidates.size()) / (50000.0 * r.threads);
  common::logger("search")->info("{} candidates, about {:.0f} s on {} threads", r.candidates.size(), eta_s, r.threads);
  if (r.candidates.size() > request.max_candidates) {
    throw UsageError(fmt::format(
        "the search space has {} candidates (about {:.0f} s on {} threads), over --max-candidates {}: narrow the "
        "lists (--tp, --pp, --vpp, --recompute, ...) or raise --max-candidates",
        r.candidates.size(), eta_s, r.threads, request.max_candidates));
  }
  const auto t0 = std::chrono::steady_clock::now();
  r.evaluations = evaluate_all(base, request.job, request.space.uneven_pp, r.candidates, r.threads, progress);
  r.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  count_outcomes(r);
  if (r.evaluated == 0 && r.failed == 0) throw UsageError(no_legal_candidate_message(r));
  if (r.failed > 0) {
    common::logger("search")->warn("{} candidates failed in the engine (see search.csv, status \"failed\")", r.failed);
  }
  rank(r.ranking, request, r);
  r.sim.resize(r.candidates.size());
  recheck_best(r, base, request, recheck);
  return r;
}

}  // namespace simumax::search
