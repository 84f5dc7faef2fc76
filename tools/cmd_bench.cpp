// simumax-sim bench: measured speed of the three paths users wait on, printed against their targets.
#include <sys/wait.h>
#include <unistd.h>
#include <spawn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/target.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/search/search_bench.hpp"
#include "engine/simulate.hpp"
#include "tools/bench_fabric.hpp"
#include "tools/commands.hpp"

extern char** environ;

namespace simumax::tools {

namespace {

struct BenchArgs {
  std::string self;
  std::string scenario = "scenarios/default.json";
  std::string big_scenario = "scenarios/bench/llama3_70b_512gpu_tp8_pp4_dp16.json";
  std::string fabric_scenario = "scenarios/bench/llama3_70b_4096gpu_tp8_pp8_dp64.json";
  std::string scale_scenario = "scenarios/bench/llama3_70b_16384gpu_tp8_pp8_dp256.json";
  std::string scale131k_scenario = "scenarios/bench/llama3_405b_131072gpu_tp8_pp16_dp1024.json";
  std::string grid = "../shared/reference/simumax_grid.jsonl";
  int repeats = 5;
  std::vector<std::string> only;  // sections to run; empty: all

  bool runs(const char* section) const { return only.empty() || named(section); }
  bool named(const char* section) const { return std::find(only.begin(), only.end(), section) != only.end(); }
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs `self args...` as a child process; returns its wall time in seconds.
double time_process(const std::string& self, std::vector<std::string> args) {
  args.insert(args.begin(), self);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto t0 = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    throw common::UsageError("cannot start " + self);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const double t = seconds_since(t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw common::UsageError("benchmark child failed: " + args[1] + " " + (args.size() > 2 ? args[2] : ""));
  }
  return t;
}

void report(const char* what, double value, const char* unit, double target) {
  std::printf("%-58s %10.3f %-3s %s\n", what, value, unit, common::target_verdict(value, target, true).c_str());
}

// What search does for one candidate without its caches: simulate's run_step with the fast executor over chunk
// tasks, one rank per stage (model, cost, lowering, execution, memory replay).
RunOptions fast_evaluation() {
  RunOptions o;
  o.lowering.granularity = graph::Granularity::kChunk;
  o.lowering.scope = graph::RankScope::kStages;
  return o;
}

// The fast evaluation of the grid line whose lowered step has the most tasks.
void bench_largest_grid_line(const std::string& grid) {
  const auto lines = config::load_grid(grid, std::filesystem::path(grid).parent_path().parent_path().string());
  const RunOptions o = fast_evaluation();
  size_t most = 0;
  const config::GridCase* largest = nullptr;
  for (const auto& line : lines) {
    const auto m = model::build_step_model(line.scenario);
    const size_t tasks = graph::lower_step(line.scenario, m, cost::cost_step(line.scenario, m), o.lowering).size();
    if (tasks > most) most = tasks, largest = &line;
  }
  if (largest == nullptr) throw common::UsageError("--grid " + grid + ": no grid line in the file");
  const int evals = 200;
  const auto t0 = Clock::now();
  for (int i = 0; i < evals; ++i) run_step(largest->scenario, o);
  report("fast evaluation of the largest grid line", seconds_since(t0) / evals * 1e3, "ms", 1);
  std::printf("  (%s, %zu tasks)\n", largest->id.c_str(), most);
}

int do_bench(const BenchArgs& a) {
  // Per process: two benches at once (a long `--only scale` and another) must not share an output folder.
  const std::string out =
      (std::filesystem::temp_directory_path() / ("simumax-bench-" + std::to_string(::getpid()))).string();
  // 1. A whole process: start, read configs, simulate, write the summary, exit.
  if (a.runs("process")) {
    double best = 1e30;
    for (int i = 0; i < a.repeats; ++i) {
      best = std::min(best, time_process(a.self, {"run", a.scenario, "-q", "-o", out}));
    }
    report("whole process, default B200 scenario (best of runs)", best * 1e3, "ms", 20);
  }
  // 2. One fast evaluation in-process: model, cost, lowering (chunk tasks), execution, memory replay.
  const config::Scenario s = config::load_scenario(a.scenario);
  double sink = 1;
  if (a.runs("fast")) {
    const RunOptions o = fast_evaluation();
    const int evals = 2000;
    const auto t0 = Clock::now();
    for (int i = 0; i < evals; ++i) sink += run_step(s, o).timeline.makespan;
    const double per_eval = seconds_since(t0) / evals;
    report("one fast evaluation in-process (chunk tasks)", per_eval * 1e6, "us", 100);
    std::printf("%-58s %10.0f /s\n", "  fast evaluations per second per core", 1.0 / per_eval);
  }
  if (a.runs("grid") && !a.grid.empty() && std::filesystem::exists(a.grid)) bench_largest_grid_line(a.grid);
  if (a.runs("search")) std::fputs(search::bench_search_line(s).c_str(), stdout);
  // 3. Every rank of a 512-GPU step on SimGrid, in its own process.
  if (a.runs("sim")) {
    const double sim = time_process(a.self, {"run", a.big_scenario, "-q", "-o", out, "--executor", "sim",
                                             "--ranks", "all"});
    report("sim, every rank of 512 GPUs (llama3-70b tp8 pp4 dp16 mbc32)", sim, "s", 10);
  }
  // 4. Every rank of a 4,096-GPU step (llama3-70b tp8 pp8 dp64 mbc64) on a rail-optimised fat-tree.
  if (a.runs("fabric")) bench_rail_fabric(a.self, a.fabric_scenario, out, 60, 4);
  // 5. The same at 16,384 GPUs (dp 256): minutes on two cores, so only when named (--only scale).
  if (a.named("scale")) bench_rail_fabric(a.self, a.scale_scenario, out, 20, 1.5);
  // 6. Every rank of 131,072 GPUs (llama3-405b tp8 pp16 dp1024 mbc128), 2:1 at the spine: only when named.
  if (a.named("scale131k")) bench_rail_fabric(a.self, a.scale131k_scenario, out, 600, 16, 2);
  std::error_code ec;
  std::filesystem::remove_all(out, ec);  // the children's outputs: only their timings matter
  return sink > 0 ? 0 : 3;
}

}  // namespace

std::function<int()> add_bench(CLI::App& app, const char* argv0) {
  auto args = std::make_shared<BenchArgs>();
  args->self = std::filesystem::absolute(argv0).string();
  CLI::App* sub = app.add_subcommand("bench", "measure the speed of a process, a fast evaluation and a 512-GPU sim");
  sub->add_option("--scenario", args->scenario, "scenario for the process and fast timings")->capture_default_str();
  sub->add_option("--big-scenario", args->big_scenario, "scenario for the 512-GPU sim timing")->capture_default_str();
  sub->add_option("--fabric-scenario", args->fabric_scenario, "scenario for the 4,096-GPU rail fat-tree sim")
      ->capture_default_str();
  sub->add_option("--scale-scenario", args->scale_scenario,
                  "scenario for the 16,384-GPU rail fat-tree sim (run only with --only scale)")
      ->capture_default_str();
  sub->add_option("--scale131k-scenario", args->scale131k_scenario,
                  "scenario for the 131,072-GPU rail fat-tree sim, 2:1 at the spine (run only with --only scale131k)")
      ->capture_default_str();
  sub->add_option("--grid", args->grid, "SimuMax grid for the largest-line timing (skipped if absent)")
      ->capture_default_str();
  sub->add_option("--repeats", args->repeats, "process runs (the best is reported)")->capture_default_str()->check(CLI::Range(1, 100));
  sub->add_option("--only", args->only,
                  "sections to run (default: all but scale and scale131k, which run only when named)")
      ->delimiter(',')
      ->check(CLI::IsMember({"process", "fast", "grid", "search", "sim", "fabric", "scale", "scale131k"}));
  return [sub, args]() { return sub->parsed() ? do_bench(*args) : -1; };
}

}  // namespace simumax::tools
