// Strategy search: enumerate a space, evaluate every legal candidate with the fast executor, keep those that fit
// in GPU memory with a margin, rank them by an objective, and re-check the best on SimGrid.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/search/candidate.hpp"
#include "engine/search/evaluator.hpp"
#include "engine/search/outcome_store.hpp"
#include "engine/search/search_space.hpp"

namespace simumax::search {

enum class Objective {
  kStepTime,      // shortest step
  kTokensPerS,    // most tokens per second (the job's)
  kMfu,           // highest model FLOPs utilisation (SimuMax's search objective)
  kCostPerToken,  // fewest GPU-seconds per token: world_size * step time / tokens per step
};
// Throws common::UsageError naming the valid choices.
Objective parse_objective(const std::string& text);
const char* to_string(Objective o);

struct SearchRequest {
  SearchMode mode = SearchMode::kGrid;
  SearchSpace space;
  JobShape job;
  Objective objective = Objective::kStepTime;
  double memory_margin_gib = 6;  // SimuMax's gmi_error default: NCCL buffers, allocator slack, CUDA context
  int threads = 0;               // 0: one per core
  int recheck = 0;               // re-run this many of the best on the sim executor
  // A space with more candidates is refused before any is evaluated (the minutes its evaluation takes, and the
  // files it writes: kRecordFileBytes per candidate).
  size_t max_candidates = 2000000;
  // The best this many that fit are kept whole in memory (the table's rows and the re-checked ones come from
  // them); of the others the search keeps only each fitting one's place in the ranking.
  size_t keep = 100;
  size_t block = 1u << 16;  // candidates enumerated and evaluated at a time (what the search holds of them)
};

// Re-runs candidate `index` (`c`, whose scenario is given) on the sim executor. Called from several threads at once.
using RecheckFn = std::function<SimCheck(size_t index, const Candidate& c, const config::Scenario& scenario)>;

// What a search keeps in memory; every candidate's outcome went to the OutcomeStore.
struct SearchResult {
  size_t candidates = 0;        // the space's size
  std::vector<size_t> ranking;  // indices of the evaluated candidates that fit, best first (re-checked re-ranked)
  std::vector<Outcome> best;    // the first request.keep of the ranking, whole (with the sim's figures if re-checked)
  std::vector<Outcome> misses;  // the three evaluated candidates that miss the memory by the least, closest first
  std::vector<std::pair<std::string, size_t>> skip_reasons;  // reason key -> count, most frequent first
  std::string skip_example;  // the whole message of the first candidate skipped for the most frequent reason
  size_t evaluated = 0, failed = 0, too_big = 0;
  double gpu_memory_bytes = 0;  // the system's accelerator mem_gbs
  std::string fidelity;         // the base strategy's (config::Fidelity), which every candidate keeps
  double margin_bytes = 0;
  double eval_seconds = 0;  // wall time of the fast evaluation
  int threads = 1;
};

// GPU memory left once the peak reserved memory and the margin are taken; negative: over by that much.
double headroom_bytes(const Evaluation& e, const SearchResult& r);
// The objective as a quantity to minimise (step seconds, -tokens/s, -MFU, GPU-seconds per token).
double objective_score(Objective o, const Evaluation& e, const JobShape& job);
// The objective in its own unit, for tables (ms, tokens/s, MFU, GPU-s per token).
double objective_value(Objective o, const Evaluation& e, const JobShape& job);

// The base scenario of a search: the model and system, and the strategy fields the search does not vary (from
// `strategy_path`, or SimuMax's defaults when it is empty), with seq_len replaced when `seq_len` > 0. Not checked
// as a whole (its own layout need not suit the model; each candidate is checked). Throws common::ConfigError for
// a bad file, common::UsageError when there is no seq_len.
config::Scenario load_base(const std::string& model_path, const std::string& system_path,
                           const std::string& strategy_path, int64_t seq_len);

// The largest job a search takes (the CLI's --world-size range): 2^24 GPUs.
inline constexpr int64_t kMaxSearchWorldSize = int64_t{1} << 24;

// What every front end (the CLI, serve, Python) must refuse before it starts a search: a world size outside
// [1, 2^24], a global batch below 1, a memory margin that is negative, not finite or leaves no GPU memory. Throws
// common::UsageError naming the CLI's option. run_search calls it first.
void check_request(const config::Scenario& base, const SearchRequest& request);

// The time a search of `candidates` takes on `threads` threads, its files written: measured on a 55,944-layout
// space (Llama3-70B on 1,024 B200s, tp x cp x pp up to 16 x vpp x mbs x recompute x zero x sp; half of them
// illegal): 30,961 candidates/s on two threads, and 0.56 s to write both files (10 us a record). A space of
// small layouts runs faster (bench: 39,600/s on one core), one of deep pipelines slower.
inline constexpr double kCandidatesPerThreadSecond = 15000;
inline constexpr double kWriteSecondsPerRecord = 1e-5;
inline constexpr double kRecordFileBytes = 930;  // search.csv + search.json per candidate, on the same space
double estimated_seconds(size_t candidates, int threads);

// A space of more than one block is evaluated in up to this many stripes (even samples of it, one enumeration
// pass each), so that its progress rate holds from the start.
inline constexpr size_t kMaxStripes = 8;

// Runs the search: the candidates are enumerated and evaluated a block at a time, in stripes, and each outcome goes
// to `store` (not in enumeration order when there are stripes). The ranking rule: micro-batch mode puts the largest
// micro-batch size first (SimuMax's objective), then every mode the objective, then more memory headroom, then
// enumeration order. Throws common::UsageError when check_request does, when the space is over
// request.max_candidates, or when no candidate is legal (the message gives the most frequent reasons). `recheck` may
// be empty when request.recheck is 0.
SearchResult run_search(const config::Scenario& base, const SearchRequest& request, OutcomeStore& store,
                        const ProgressFn& progress = nullptr, const RecheckFn& recheck = nullptr);

}  // namespace simumax::search
