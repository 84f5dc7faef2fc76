#include "engine/search/search.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
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

// What the ranking sorts by, smallest first.
using RankKey = std::tuple<double, double, double, size_t>;

RankKey rank_key(const SearchRequest& q, const SearchResult& r, size_t index, const Candidate& c, const Evaluation& e) {
  const double mbs_first = q.mode == SearchMode::kMicroBatch ? -static_cast<double>(c.mbs) : 0;
  return {mbs_first, objective_score(q.objective, e, q.job), -headroom_bytes(e, r), index};
}

// Counts the outcomes as they come, and keeps what the result needs of them: the ranking keys of those that fit,
// the closest misses, and one message per skip reason.
class Tally {
 public:
  Tally(const SearchRequest& q, SearchResult& r) : q_(q), r_(r) {}

  void add(const Outcome& o) {
    const Evaluation& e = o.evaluation;
    if (e.status == Status::kSkipped) {
      // The example is the earliest candidate's: outcomes come in stripes, not in enumeration order.
      Reason& reason = reasons_[e.reason];
      if (reason.count++ == 0 || o.index < reason.example_index) {
        reason.example = e.detail;
        reason.example_index = o.index;
      }
    }
    if (e.status == Status::kFailed) ++r_.failed;
    if (e.status != Status::kEvaluated) return;
    ++r_.evaluated;
    const double headroom = headroom_bytes(e, r_);
    if (headroom >= 0) {
      fits_.push_back(rank_key(q_, r_, o.index, o.candidate, e));
      return;
    }
    ++r_.too_big;
    // The least negative headroom first; among equals, the earlier candidate.
    auto& m = r_.misses;
    auto before = [&](const Outcome& x) {
      const double h = headroom_bytes(x.evaluation, r_);
      return headroom > h || (headroom == h && o.index < x.index);
    };
    if (m.size() == kMisses && !before(m.back())) return;
    auto at = std::find_if(m.begin(), m.end(), before);
    m.insert(at, o);
    if (m.size() > kMisses) m.pop_back();
  }

  void finish() {
    for (const auto& [key, reason] : reasons_) r_.skip_reasons.emplace_back(key, reason.count);
    std::stable_sort(r_.skip_reasons.begin(), r_.skip_reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (!r_.skip_reasons.empty()) r_.skip_example = reasons_.at(r_.skip_reasons.front().first).example;
    std::sort(fits_.begin(), fits_.end());
    r_.ranking.reserve(fits_.size());
    for (const RankKey& k : fits_) r_.ranking.push_back(std::get<3>(k));
    fits_ = {};
  }

 private:
  static constexpr size_t kMisses = 3;
  const SearchRequest& q_;
  SearchResult& r_;
  struct Reason {
    size_t count = 0;
    std::string example;  // the message of the earliest candidate skipped for it
    size_t example_index = 0;
  };
  std::map<std::string, Reason> reasons_;
  std::vector<RankKey> fits_;
};

std::string no_legal_candidate_message(const SearchResult& r) {
  std::string msg = fmt::format("no legal candidate among the {} of the search space", r.candidates);
  for (size_t i = 0; i < r.skip_reasons.size() && i < 3; ++i) {
    msg += fmt::format("{} {} x \"{}\"", i == 0 ? ":" : ",", r.skip_reasons[i].second, r.skip_reasons[i].first);
  }
  return r.skip_example.empty() ? msg : msg + "; e.g. " + r.skip_example;
}

// Which of `stripes` a candidate's enumeration index falls in: a fixed hash (splitmix64's finaliser), so that
// each stripe is an even sample of the whole space, whatever its period.
size_t stripe_of(size_t index, size_t stripes) {
  uint64_t z = static_cast<uint64_t>(index) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>((z ^ (z >> 31)) % stripes);
}

// Evaluates the space a block at a time (the block's candidates, then their outcomes, are all that is held),
// handing each outcome to `tally` and `store`. A space of more than one block is visited in stripes, one
// enumeration pass each: the enumeration puts the deep pipelines, the costly candidates, last, so the blocks in
// enumeration order would run cheap first and the progress rate (and ETA) would lie by the factor between them.
void evaluate_space(const config::Scenario& base, const SearchRequest& q, SearchResult& r, Tally& tally,
                    OutcomeStore& store, const ProgressFn& progress) {
  const size_t block_size = std::max<size_t>(1, q.block);
  const size_t stripes = std::min(kMaxStripes, (r.candidates + block_size - 1) / block_size);
  std::vector<Candidate> block;
  std::vector<size_t> indices;  // of the block's candidates, in enumeration order
  block.reserve(std::min(block_size, r.candidates));
  size_t done = 0;
  auto flush = [&]() {
    ProgressFn block_progress;
    if (progress) block_progress = [&](size_t d, size_t) { progress(done + d, r.candidates); };
    std::vector<Evaluation> evaluations =
        evaluate_all(base, q.job, q.space.uneven_pp, block, r.threads, block_progress);
    Outcome o;
    for (size_t k = 0; k < block.size(); ++k) {
      o.index = indices[k], o.candidate = block[k], o.evaluation = std::move(evaluations[k]);
      tally.add(o);
      store.add(o);
    }
    done += block.size();
    block.clear();
    indices.clear();
  };
  for (size_t stripe = 0; stripe < stripes; ++stripe) {
    size_t index = 0;
    for_each_candidate(q.space, q.mode, base, q.job, [&](const Candidate& c) {
      if (stripes == 1 || stripe_of(index, stripes) == stripe) {
        block.push_back(c);
        indices.push_back(index);
        if (block.size() == block_size) flush();
      }
      ++index;
    });
    if (!block.empty()) flush();
    if (index != r.candidates) {
      throw common::InternalError(fmt::format("search: {} candidates counted, {} enumerated", r.candidates, index));
    }
  }
  if (done != r.candidates) {
    throw common::InternalError(fmt::format("search: {} candidates counted, {} evaluated", r.candidates, done));
  }
}

// Reads the first request.keep of the ranking back from the store.
void collect_best(SearchResult& r, const SearchRequest& q, OutcomeStore& store) {
  const size_t k = std::min(q.keep, r.ranking.size());
  std::vector<std::pair<size_t, size_t>> wanted;  // index, place in the ranking
  for (size_t j = 0; j < k; ++j) wanted.emplace_back(r.ranking[j], j);
  std::sort(wanted.begin(), wanted.end());
  r.best.resize(k);
  auto next = wanted.begin();
  store.for_each([&](const Outcome& o) {
    if (next != wanted.end() && next->first == o.index) r.best[(next++)->second] = o;
  });
}

// Re-runs the best `request.recheck` on SimGrid (several at a time) and re-ranks them by what it measured.
void recheck_best(SearchResult& r, const config::Scenario& base, const SearchRequest& request,
                  const RecheckFn& recheck) {
  const size_t k = std::min<size_t>(static_cast<size_t>(std::max(0, request.recheck)), r.best.size());
  if (k == 0 || !recheck) return;
  std::atomic<size_t> next{0};
  auto work = [&]() {
    Evaluator ev(base, request.job, request.space.uneven_pp);
    for (size_t j = next++; j < k; j = next++) {
      Outcome& o = r.best[j];
      ev.evaluate(o.candidate);  // rebuilds the candidate's scenario (cheap next to a SimGrid run)
      try {
        o.sim = recheck(o.index, o.candidate, ev.scenario());
      } catch (const std::exception& e) {
        // A failed re-check is reported with the candidate; it must not end the search (nor escape a thread).
        o.sim = SimCheck{};
        o.sim.error = e.what();
      }
      o.sim.done = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(r.threads, static_cast<int>(k)); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // The sim's figures replace the fast ones for the re-checked; those that no longer fit, or failed, go last.
  std::vector<std::pair<RankKey, Outcome>> ok;
  std::vector<Outcome> dropped;
  for (size_t j = 0; j < k; ++j) {
    Outcome& o = r.best[j];
    const SimCheck& s = o.sim;
    if (!s.error.empty() || r.gpu_memory_bytes - r.margin_bytes - s.peak_reserved_bytes < 0) {
      dropped.push_back(std::move(o));
      continue;
    }
    Evaluation as_sim = o.evaluation;
    as_sim.step_time_s = s.step_time_s, as_sim.peak_reserved_bytes = s.peak_reserved_bytes;
    as_sim.mfu = s.mfu, as_sim.tokens_per_s = s.tokens_per_s;
    ok.emplace_back(rank_key(request, r, o.index, o.candidate, as_sim), std::move(o));
  }
  std::stable_sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t j = 0;
  for (auto& [key, o] : ok) r.best[j++] = std::move(o);
  for (Outcome& o : dropped) r.best[j++] = std::move(o);
  for (j = 0; j < k; ++j) r.ranking[j] = r.best[j].index;
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

double estimated_seconds(size_t candidates, int threads) {
  return static_cast<double>(candidates) *
         (1.0 / (kCandidatesPerThreadSecond * std::max(1, threads)) + kWriteSecondsPerRecord);
}

void check_request(const config::Scenario& base, const SearchRequest& request) {
  const JobShape& job = request.job;
  if (job.world_size < 1 || job.world_size > kMaxSearchWorldSize) {
    throw UsageError(fmt::format("--world-size: expected 1 to {} (2^24) GPUs, got {}", kMaxSearchWorldSize,
                                 job.world_size));
  }
  if (job.global_batch_size < 1) {
    throw UsageError(fmt::format("--global-batch-size: expected a positive integer, got {}", job.global_batch_size));
  }
  const double margin = request.memory_margin_gib;
  if (!std::isfinite(margin)) throw UsageError(fmt::format("--memory-margin-gib: expected a finite number, got {}", margin));
  if (margin < 0) throw UsageError(fmt::format("--memory-margin-gib must not be negative, got {}", margin));
  if (margin * common::kGiB >= base.system.mem_gbs * common::kGiB) {
    throw UsageError(fmt::format(
        "--memory-margin-gib {} leaves no memory: the GPU of {} has {} GiB (accelerator mem_gbs); use a margin "
        "between 0 and {} GiB (SimuMax's gmi_error is 6 to 10)",
        margin, base.system_path, base.system.mem_gbs, base.system.mem_gbs));
  }
}

SearchResult run_search(const config::Scenario& base, const SearchRequest& request, OutcomeStore& store,
                        const ProgressFn& progress, const RecheckFn& recheck) {
  SearchResult r;
  r.gpu_memory_bytes = base.system.mem_gbs * common::kGiB;
  r.fidelity = config::to_string(base.strategy.fidelity);
  r.margin_bytes = request.memory_margin_gib * common::kGiB;
  check_request(base, request);
  r.threads = resolve_threads(request.threads);
  r.candidates = count_candidates(request.space, request.mode, base, request.job);
  if (r.candidates == 0) throw UsageError("the search space is empty: a list has no values");
  // Say up front how long the space will take, the files included.
  const double eta_s = estimated_seconds(r.candidates, r.threads);
  common::logger("search")->info("{} candidates, about {:.0f} s on {} threads", r.candidates, eta_s, r.threads);
  if (r.candidates > request.max_candidates) {
    throw UsageError(fmt::format(
        "the search space has {} candidates (about {:.0f} s on {} threads), over --max-candidates {}: narrow the "
        "lists (--tp, --pp, --vpp, --recompute, ...) or raise --max-candidates",
        r.candidates, eta_s, r.threads, request.max_candidates));
  }
  const auto t0 = std::chrono::steady_clock::now();
  Tally tally(request, r);
  evaluate_space(base, request, r, tally, store, progress);
  r.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  common::logger("search")->info("evaluated {} candidates in {:.2f} s ({:.0f}/s on {} threads)", r.candidates,
                                 r.eval_seconds, static_cast<double>(r.candidates) / std::max(1e-9, r.eval_seconds),
                                 r.threads);
  tally.finish();
  if (r.evaluated == 0 && r.failed == 0) throw UsageError(no_legal_candidate_message(r));
  if (r.failed > 0) {
    common::logger("search")->warn("{} candidates failed in the engine (see search.csv, status \"failed\")", r.failed);
  }
  collect_best(r, request, store);
  recheck_best(r, base, request, recheck);
  return r;
}

}  // namespace simumax::search
