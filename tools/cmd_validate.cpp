// simumax-sim validate: our prediction vs SimuMax's and vs the real run, for every validation case given.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/calibrate/calibrate.hpp"
#include "engine/common/error.hpp"
#include "engine/common/units.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/simulate.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths;
  std::string shared_dir;
  EngineArgs engine;
};

struct ErrorStats {
  std::vector<double> errs;  // relative, signed
  void add(double pred, double real) { errs.push_back((pred - real) / real); }
  double mape() const { return calibrate::mape(errs); }
  double mean() const { return calibrate::mean(errs); }
  double worst() const { return calibrate::worst(errs); }
};

// Cases that name their machine and features (imported Megatron-LM tests) are also summed per machine and per
// machine and feature.
struct Groups {
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> by;  // key -> (time, memory)
  void add(const config::ValidationCase& vc, double ms, double gib) {
    if (vc.machine.empty()) return;
    std::vector<std::string> keys = {vc.machine};
    for (const auto& f : vc.features) keys.push_back(vc.machine + " / " + f);
    for (const auto& k : keys) {
      by[k].first.add(ms, vc.real_ms);
      by[k].second.add(gib, vc.real_alloc_gib);
    }
  }
  template <typename Line>
  void print(Line&& line) const {
    for (const auto& [key, stats] : by) {
      std::printf("\n%s (%zu cases)\n", key.c_str(), stats.first.errs.size());
      line("  time   ours vs real", stats.first);
      line("  memory ours vs real", stats.second);
    }
  }
};

int do_validate(const ValidateArgs& a) {
  const std::string shared = a.shared_dir.empty() ? default_shared_dir() : a.shared_dir;
  const RunOptions o = make_run_options(a.engine);
  ErrorStats ours_t, sm_t, ours_m, sm_m, parity_t, parity_m;
  Groups groups;
  const std::vector<std::string> files = case_files(a.paths);
  if (files.empty()) throw common::UsageError("no validation case (*.json) found in the paths given");
  std::printf("%-52s %10s %10s %10s %8s %8s | %8s %8s %8s %8s %8s\n", "case", "ours ms", "simumax", "real ms",
              "ours err", "sm err", "ours GiB", "simumax", "real GiB", "ours err", "sm err");
  int skipped = 0;
  for (const auto& file : files) {
    config::ValidationCase vc;
    RunResult r;
    try {
      vc = config::load_validation_case(file, shared);
      apply_fidelity(vc.scenario, a.engine.fidelity);
      r = simulate(vc.scenario, o);
    } catch (const common::ConfigError& e) {
      std::printf("%-52s skipped: %s\n", std::filesystem::path(file).stem().c_str(), e.what());
      ++skipped;
      continue;
    }
    const double ms = r.summary.step_time_ms;
    // A case whose real peak was logged by the last rank is compared with the last pipeline stage.
    const int64_t alloc = vc.alloc_of_last_rank && !r.summary.stages.empty() ? r.summary.stages.back().peak_alloc_bytes
                                                                              : r.summary.peak_alloc_bytes_max;
    const double gib = common::gib(static_cast<double>(alloc));
    ours_t.add(ms, vc.real_ms);
    ours_m.add(gib, vc.real_alloc_gib);
    groups.add(vc, ms, gib);
    if (!vc.has_published) {
      std::printf("%-52s %10.1f %10s %10.1f %+7.2f%% %8s | %8.3f %8s %8.3f %+7.2f%% %8s\n", vc.name.c_str(), ms, "-",
                  vc.real_ms, 100 * ours_t.errs.back(), "-", gib, "-", vc.real_alloc_gib, 100 * ours_m.errs.back(),
                  "-");
      continue;
    }
    sm_t.add(vc.published_perf_ms, vc.real_ms);
    sm_m.add(vc.published_perf_alloc_gib, vc.real_alloc_gib);
    parity_t.add(ms, vc.published_perf_ms);
    parity_m.add(gib, vc.published_perf_alloc_gib);
    std::printf("%-52s %10.1f %10.1f %10.1f %+7.2f%% %+7.2f%% | %8.3f %8.3f %8.3f %+7.2f%% %+7.2f%%\n",
                vc.name.c_str(), ms, vc.published_perf_ms, vc.real_ms, 100 * ours_t.errs.back(),
                100 * sm_t.errs.back(), gib, vc.published_perf_alloc_gib, vc.real_alloc_gib,
                100 * ours_m.errs.back(), 100 * sm_m.errs.back());
  }
  if (ours_t.errs.empty()) {
    throw common::UsageError("no validation case could be run (" + std::to_string(skipped) +
                             " skipped, each with its reason above)");
  }
  auto line = [](const char* what, const ErrorStats& s) {
    std::printf("%-34s MAPE %6.2f%%  signed mean %+6.2f%%  worst %+6.2f%%\n", what, 100 * s.mape(), 100 * s.mean(),
                100 * s.worst());
  };
  std::printf("\n%zu cases run, %d skipped (ours: %s fidelity)\n", ours_t.errs.size(), skipped,
              a.engine.fidelity.empty() ? "the cases' (default megatron)" : a.engine.fidelity.c_str());
  line("time   ours vs real", ours_t);
  if (!sm_t.errs.empty()) line("time   SimuMax vs real", sm_t);
  if (!parity_t.errs.empty()) line("time   ours vs SimuMax", parity_t);
  line("memory ours vs real", ours_m);
  if (!sm_m.errs.empty()) line("memory SimuMax vs real", sm_m);
  if (!parity_m.errs.empty()) line("memory ours vs SimuMax", parity_m);
  groups.print(line);
  return 0;
}

}  // namespace

std::function<int()> add_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* sub = app.add_subcommand("validate", "compare predictions with real runs and with SimuMax");
  sub->add_option("cases", args->paths, "validation case files or folders (e.g. ../shared/validation)")->required();
  sub->add_option("--shared", args->shared_dir, "the shared/ folder the cases' system_file is relative to "
                                                "(default: $SIMUMAX_SHARED_DIR, else ../shared)");
  add_engine_options(*sub, args->engine);
  return [sub, args]() { return sub->parsed() ? do_validate(*args) : -1; };
}

}  // namespace simumax::tools
