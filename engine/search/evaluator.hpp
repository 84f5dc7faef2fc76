// Evaluation of search candidates with the `fast` executor (chunk tasks, one rank per stage), on every core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/model/op_cache.hpp"
#include "engine/search/candidate.hpp"

namespace simumax::search {

enum class Status : uint8_t {
  kEvaluated,  // legal and simulated
  kSkipped,    // illegal: `reason` says which rule
  kFailed,     // legal, but the engine failed on it (`reason` starts with "engine error")
};

struct Evaluation {
  Status status = Status::kSkipped;
  std::string reason;  // kSkipped: reason_key of the rejection; kFailed: the engine's message
  std::string detail;  // kSkipped: the whole rejection message (file: pointer: message)
  double step_time_s = 0;
  int64_t peak_alloc_bytes = 0;    // max over ranks (summary.peak_alloc_bytes_max)
  double peak_reserved_bytes = 0;  // max over ranks (summary.peak_reserved_bytes_max)
  double mfu = 0;                  // as summary.mfu
  double tokens_per_s = 0;         // as summary.tokens_per_s
  size_t tasks = 0;
};

// Evaluates candidates against one base scenario. Holds its own copy of the scenario, so each thread needs one
// Evaluator; not thread-safe itself.
class Evaluator {
 public:
  static constexpr size_t kMaxCachedBlocks = 4096;

  // `base`: the model, system and the strategy fields the search does not vary.
  // `max_cached_blocks`: past this many cached blocks the caches start again (memory per thread).
  Evaluator(const config::Scenario& base, const JobShape& job, bool uneven_pp,
            size_t max_cached_blocks = kMaxCachedBlocks);

  // Legality (search rules, then config::check_scenario), then model, cost, chunk lowering over the stages,
  // fast execution and memory replay. Never throws for a bad candidate: the result says what went wrong.
  Evaluation evaluate(const Candidate& c);

  // The scenario of the last candidate passed to evaluate() (its strategy as built for it).
  const config::Scenario& scenario() const { return scratch_; }

 private:
  config::StrategyConfig base_strategy_;
  JobShape job_;
  bool uneven_pp_;
  size_t max_cached_blocks_;
  config::Scenario scratch_;
  // Layers, embeddings and heads (and their costs) built for earlier candidates that build them alike.
  model::OpCache op_cache_;
  cost::CostCache cost_cache_;
};

// Called from the calling thread at most ten times a second while evaluate_all runs, and once at the end:
// (done, total). It may throw to stop the evaluation (serve's cancel): the other threads stop after their block
// and evaluate_all rethrows it once they have.
using ProgressFn = std::function<void(size_t, size_t)>;

// Evaluates every candidate on `threads` threads (0: one per core). Result i belongs to candidate i whatever
// the number of threads (each thread claims blocks of indices and has its own Evaluator and buffers).
std::vector<Evaluation> evaluate_all(const config::Scenario& base, const JobShape& job, bool uneven_pp,
                                     const std::vector<Candidate>& candidates, int threads,
                                     const ProgressFn& progress = nullptr);

// The thread count evaluate_all uses for `threads` (0: std::thread::hardware_concurrency, at least 1).
int resolve_threads(int threads);

}  // namespace simumax::search
