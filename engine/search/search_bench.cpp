#include "engine/search/search_bench.hpp"

#include <spdlog/fmt/fmt.h>
#include <time.h>

#include <chrono>

#include "engine/common/target.hpp"
#include "engine/search/candidate.hpp"
#include "engine/search/evaluator.hpp"

namespace simumax::search {

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

BenchResult bench_search(const config::Scenario& base, int64_t world_size, int64_t global_batch_size) {
  SpaceArgs args;
  args.mbs = "1,2,4,8";
  args.zero = "0,1";
  args.sp = "on,off";
  const SearchSpace space = build_space(SearchMode::kGrid, args, base, world_size);
  const JobShape job{world_size, global_batch_size, base.strategy.seq_len};
  const std::vector<Candidate> candidates = enumerate(space, SearchMode::kGrid, base, job);
  BenchResult r;
  r.candidates = candidates.size();
  r.space = fmt::format("{} layers, {} GPUs, global batch {}, seq {}: {} candidates", base.model.layer_num, world_size,
                        global_batch_size, job.seq_len, candidates.size());
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();
  // One thread: evaluate_all would spread the work; the Evaluator alone is what one core does. Passes repeat
  // until half a second of CPU time, so that the figure is not noise; each pass starts with a new Evaluator,
  // whose caches are empty, as a search's threads start.
  for (int pass = 0; pass < 50 && r.cpu_seconds < 0.5; ++pass) {
    Evaluator ev(base, job, space.uneven_pp);
    for (const auto& c : candidates) {
      if (ev.evaluate(c).status == Status::kEvaluated) ++r.evaluated;
    }
    r.cpu_seconds = thread_cpu_seconds() - cpu0;
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string bench_search_line(const config::Scenario& base) {
  constexpr double kTarget = 50000;
  const BenchResult r = bench_search(base, 512, 1024);
  return fmt::format("{:<58} {:10.0f} /s  {}\n  ({}; {} evaluations in {:.2f} s CPU)\n",
                     "search: fast evaluations per second per core", r.per_core_per_s(),
                     common::target_verdict(r.per_core_per_s(), kTarget, false), r.space, r.evaluated, r.cpu_seconds);
}

}  // namespace simumax::search
