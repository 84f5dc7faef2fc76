#include "engine/search/evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <numeric>
#include <thread>

#include "engine/report/summary.hpp"
#include "engine/simulate.hpp"

namespace simumax::search {

Evaluator::Evaluator(const config::Scenario& base, const JobShape& job, bool uneven_pp, size_t max_cached_blocks)
    : base_strategy_(base.strategy), job_(job), uneven_pp_(uneven_pp), max_cached_blocks_(max_cached_blocks),
      scratch_(base) {}

Evaluation Evaluator::evaluate(const Candidate& c) {
  Evaluation e;
  try {
    apply(c, base_strategy_, uneven_pp_, job_, scratch_);
  } catch (const common::ConfigError& err) {
    e.reason = reason_key(err);
    e.detail = err.what();
    return e;
  }
  if (op_cache_.blocks() > max_cached_blocks_) {
    // A cached block holds tens of KB (ops, program, costs): a huge space would otherwise keep every one it
    // ever built, on every thread. Start again; the costs go too, as they pin the op lists they were made for.
    op_cache_ = model::OpCache{};
    cost_cache_ = cost::CostCache{};
  }
  try {
    const config::Scenario& s = scratch_;
    // Chunk tasks on one rank per stage: the cheapest DAG with the same step time and memory peaks as `run`'s
    // layer tasks. Not with Megatron's overlapped DP buckets: each waits for (or holds up) the tasks that use its
    // parameters, and a chunk task uses all of them, so those candidates are lowered layer by layer, as `run` does.
    const bool dp_overlap = s.strategy.overlaps_dp();
    RunOptions o;
    o.lowering.granularity = dp_overlap ? graph::Granularity::kLayer : graph::Granularity::kChunk;
    o.lowering.scope = graph::RankScope::kStages;
    o.lowering.merge_dp_buckets = true;
    o.log_stages = false;
    o.op_cache = &op_cache_;
    o.cost_cache = &cost_cache_;
    const StepRun run = run_step(s, o);
    for (const auto& rm : run.memory) {
      e.peak_alloc_bytes = std::max(e.peak_alloc_bytes, rm.peak_allocated_bytes);
      e.peak_reserved_bytes = std::max(e.peak_reserved_bytes, rm.peak_reserved_bytes);
    }
    e.step_time_s = run.timeline.makespan;
    e.tasks = run.graph.size();
    const report::StepRates rates = report::step_rates(s, run.model, e.step_time_s);
    e.tokens_per_s = rates.tokens_per_s;
    e.mfu = rates.mfu;
    e.status = Status::kEvaluated;
  } catch (const common::ConfigError& err) {
    // The engine refuses a legal-looking strategy (a feature it does not model yet): a skip, with its reason.
    e.reason = reason_key(err);
    e.detail = err.what();
  } catch (const std::exception& err) {
    e.status = Status::kFailed;
    e.reason = std::string("engine error: ") + err.what();
  }
  return e;
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::vector<Evaluation> evaluate_all(const config::Scenario& base, const JobShape& job, bool uneven_pp,
                                     const std::vector<Candidate>& candidates, int threads,
                                     const ProgressFn& progress) {
  std::vector<Evaluation> out(candidates.size());
  // Small blocks keep the threads busy to the end; each result lands at its own index, so order is fixed.
  constexpr size_t kBlock = 8;
  // Candidates are visited in a fixed scattered order (k -> k * stride mod n, a permutation): the enumeration
  // puts the costly deep pipelines last, which would make the progress rate and ETA lie and leave one thread
  // with the heaviest tail.
  size_t stride = std::max<size_t>(1, candidates.size() * 5 / 8 + 1);
  while (std::gcd(stride, std::max<size_t>(1, candidates.size())) != 1) ++stride;
  using Clock = std::chrono::steady_clock;
  std::atomic<size_t> next{0}, done{0};
  std::exception_ptr stopped;  // what `progress` threw, rethrown once every thread has stopped
  // The calling thread works too, and reports progress between its blocks.
  auto work = [&](bool reporter) {
    Evaluator ev(base, job, uneven_pp);
    auto last_report = Clock::now();
    while (true) {
      const size_t begin = next.fetch_add(kBlock);
      if (begin >= candidates.size()) return;
      const size_t end = std::min(candidates.size(), begin + kBlock);
      for (size_t k = begin; k < end; ++k) {
        const size_t i = static_cast<size_t>(static_cast<uint64_t>(k) * stride % candidates.size());  // n < 2^31
        out[i] = ev.evaluate(candidates[i]);
      }
      done.fetch_add(end - begin);
      if (reporter && progress && Clock::now() - last_report > std::chrono::milliseconds(100)) {
        last_report = Clock::now();
        try {
          progress(done.load(), candidates.size());
        } catch (...) {  // the caller stops the search (serve's cancel): the others end after their block
          stopped = std::current_exception();
          next.store(candidates.size() + kBlock * 1024);
          return;
        }
      }
    }
  };
  const int n = std::min<int>(resolve_threads(threads), static_cast<int>(std::max<size_t>(1, candidates.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work, false);
  work(true);
  for (auto& t : pool) t.join();
  if (stopped) std::rethrow_exception(stopped);
  if (progress) progress(candidates.size(), candidates.size());
  return out;
}

}  // namespace simumax::search
