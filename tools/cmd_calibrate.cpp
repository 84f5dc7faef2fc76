// simumax-sim calibrate: learn a machine from its real traces and fit its named parameters to the user's real
// step times, either or both in one run, and write a calibrated system config (docs/accuracy.md, docs/compare.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "engine/calibrate/calibrate.hpp"
#include "engine/config/scenario.hpp"
#include "engine/common/error.hpp"
#include "engine/common/version.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/report/calibrated_system.hpp"
#include "engine/compare/megatron_log.hpp"
#include "engine/report/text_file.hpp"
#include "tools/calibrate_traces.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct CalibrateArgs {
  std::vector<std::string> traces;  // real profiler traces (the GEMM-efficiency evidence)
  std::string system;               // with --trace: the base system config
  std::string kernel_classes;
  std::vector<std::string> paths;
  std::vector<std::string> logs;  // SCENARIO=LOG
  std::string shared_dir;
  std::string out;
  std::vector<std::string> params = {"compute_derate", "kernel_floor_us"};
  bool leave_out = true;
};

// Megatron logs "elapsed time per iteration" averaged over each log interval; the first interval holds the
// warm-up (allocator growth, NCCL set-up, first-iteration compilation), so the steady step is the median of the
// steady state (compare::steady_state, as `simumax-sim compare` takes it).
double steady_step_ms(const std::string& log_path) {
  const compare::MegatronLog log = compare::load_megatron_log(log_path);
  if (log.iterations.size() < 2) {
    throw common::ConfigError(log_path, "", "has one \"elapsed time per iteration\" record; calibrate needs at "
                                            "least two (the first, with the warm-up, is not used)");
  }
  const compare::SteadyState s = compare::steady_state(log.iterations);
  std::fprintf(stderr, "%s: steady state %s: min %.1f, median %.1f, max %.1f ms\n", log_path.c_str(),
               s.description(log.iterations).c_str(), s.min_ms, s.median_ms, s.max_ms);
  return s.median_ms;
}

std::vector<calibrate::Case> load_cases(const CalibrateArgs& a) {
  const std::string shared = a.shared_dir.empty() ? default_shared_dir() : a.shared_dir;
  std::vector<calibrate::Case> cases;
  for (const auto& file : case_files(a.paths)) {
    config::ValidationCase vc = config::load_validation_case(file, shared);
    // A case that names its model is left out by model (leave one model out), else by layout family.
    std::string family = vc.model_id.empty() ? calibrate::case_family(vc.scenario) : vc.model_id;
    cases.push_back({vc.name, file, std::move(family), std::move(vc.scenario), vc.real_ms});
  }
  for (const auto& pair : a.logs) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      throw common::UsageError("--log " + pair + ": expected SCENARIO=LOG (a scenario file and its Megatron log)");
    }
    config::Scenario s = config::load_scenario(pair.substr(0, eq));
    const double ms = steady_step_ms(pair.substr(eq + 1));
    cases.push_back({s.name, pair.substr(eq + 1), calibrate::case_family(s), std::move(s), ms});
  }
  return cases;
}

// The file and field that name a case's system config: a validation case's "system_file", a scenario's "system".
std::pair<std::string, std::string> system_field(const calibrate::Case& c) {
  const std::string& file = c.scenario.scenario_path;
  return file == c.source ? std::pair<std::string, std::string>{file, "/system_file"}
                          : std::pair<std::string, std::string>{file, "/system"};
}

// One machine per calibration: every case must read the same system config.
void check_one_machine(const std::vector<calibrate::Case>& cases) {
  const auto& first = cases.front().scenario;
  for (const auto& c : cases) {
    const auto& s = c.scenario;
    if (s.system_path != first.system_path || s.system.sys_name != first.system.sys_name) {
      const auto [file, field] = system_field(c);
      throw common::ConfigError(file, field,
                                "is " + s.system_path + " (" + s.system.sys_name + "), but " + cases.front().source +
                                    " uses " + first.system_path + " (" + first.system.sys_name +
                                    "): calibrate one machine at a time");
    }
  }
}

void print_errors(const std::vector<calibrate::Case>& cases, const std::vector<double>& before,
                  const std::vector<double>& fitted, const std::vector<double>& held_out) {
  std::printf("%-52s %-6s %10s %10s %10s %10s\n", "case", "family", "real ms", "uncalib.", "fitted",
              held_out.empty() ? "" : "held out");
  for (size_t i = 0; i < cases.size(); ++i) {
    std::printf("%-52s %-6s %10.1f %+9.2f%% %+9.2f%%", cases[i].name.c_str(), cases[i].family.c_str(),
                cases[i].real_ms, 100 * before[i], 100 * fitted[i]);
    if (!held_out.empty()) std::printf(" %+9.2f%%", 100 * held_out[i]);
    std::printf("\n");
  }
  auto line = [](const char* what, const std::vector<double>& e) {
    std::printf("%-36s MAPE %6.2f%%  signed mean %+6.2f%%  worst %+6.2f%%\n", what, 100 * calibrate::mape(e),
                100 * calibrate::mean(e), 100 * calibrate::worst(e));
  };
  std::printf("\n");
  line("uncalibrated", before);
  line("fitted on every case", fitted);
  // Cases that name their model (Megatron-Bridge rows) are left out by model, others by layout family.
  const bool by_model = std::any_of(cases.begin(), cases.end(), [](const calibrate::Case& c) {
    return c.family != calibrate::case_family(c.scenario);
  });
  if (!held_out.empty()) line(by_model ? "leave one model out" : "leave one family out", held_out);
}

int do_calibrate_traces(const CalibrateArgs& a) {
  const LearntSystem learnt = learn_from_traces(a.traces, a.system, a.kernel_classes);
  report::write_file_atomically(a.out, learnt.json);
  std::printf("wrote %s (%s with %s added or replaced, every other entry kept)\n", a.out.c_str(), a.system.c_str(),
              learnt.what.c_str());
  return 0;
}

// With --trace, the step times are runs on the machine the traces teach: every case names --system.
void check_cases_on_base(const std::vector<calibrate::Case>& cases, const std::string& system) {
  config::load_system_file(system);  // a missing or broken --system is named as such first
  for (const auto& c : cases) {
    std::error_code ec;
    if (!std::filesystem::equivalent(c.scenario.system_path, system, ec)) {
      const auto [file, field] = system_field(c);
      throw common::ConfigError(file, field, "is " + c.scenario.system_path + ", but --system is " + system +
                                                 ": with --trace, the step times must be runs on the base config the "
                                                 "traces are learnt into (their fit is made on the learnt config)");
    }
  }
}

// Both kinds of evidence: what the traces teach first, then every case runs on that learnt config, parsed from the
// text that is written (the same result as writing it and fitting scenarios that name it).
LearntSystem learn_for_cases(const CalibrateArgs& a, std::vector<calibrate::Case>& cases) {
  check_cases_on_base(cases, a.system);
  std::printf("== from the traces (--trace) ==\n\n");
  LearntSystem learnt = learn_from_traces(a.traces, a.system, a.kernel_classes);
  const config::SystemConfig sys = config::load_system_text(learnt.json, a.system + " (learnt from --trace)");
  for (auto& c : cases) c.scenario.system = sys;
  std::printf("\n== from the step times (%zu real runs), on the learnt config ==\n\n", cases.size());
  return learnt;
}

// Where the fit starts: the calibration's defaults, not the system's current one (which may have seen these very
// runs); the fitted host parameters from their defaults, the others as the system's "host" has them (a launch time
// --trace measured, say), or at their defaults when it has none and a host parameter is fitted (else the lane
// stays free, as the runs were simulated before).
calibrate::Machine start_machine(const config::SystemConfig& sys, const std::vector<calibrate::Param>& params) {
  calibrate::Machine m;
  const bool fits_host = std::any_of(params.begin(), params.end(), calibrate::is_host);
  m.host = sys.host_given || !fits_host ? sys.host : config::HostConfig{};
  const config::HostConfig defaults;
  for (calibrate::Param p : params) {
    if (p == calibrate::Param::kLaunchUs) m.host.launch_us = defaults.launch_us;
    if (p == calibrate::Param::kOpUs) m.host.op_us = defaults.op_us;
    if (p == calibrate::Param::kCpuSpeed) m.host.cpu_speed = defaults.cpu_speed;
  }
  return m;
}

int do_calibrate(const CalibrateArgs& a) {
  if (!a.out.empty()) check_output_file(a.out);
  std::vector<calibrate::Param> params;
  for (const auto& p : a.params) params.push_back(calibrate::parse_param(p));
  std::sort(params.begin(), params.end());
  params.erase(std::unique(params.begin(), params.end()), params.end());
  calibrate::check_identifiable(params);
  std::vector<calibrate::Case> cases = load_cases(a);
  if (cases.size() <= params.size()) {
    throw common::UsageError(std::to_string(cases.size()) + " case(s) for " + std::to_string(params.size()) +
                             " parameter(s): calibrate needs more real runs than parameters (give more cases, or "
                             "fewer --params)");
  }
  check_one_machine(cases);
  std::optional<LearntSystem> learnt;
  if (!a.traces.empty()) learnt = learn_for_cases(a, cases);
  const calibrate::Machine start = start_machine(cases.front().scenario.system, params);
  std::fprintf(stderr, "calibrating %zu parameter(s) on %zu case(s) of %s...\n", params.size(), cases.size(),
               cases.front().scenario.system_path.c_str());
  const auto before = calibrate::relative_errors(cases, start);
  const calibrate::Fit fitted = calibrate::fit(cases, params, start);
  std::set<std::string> families;
  for (const auto& c : cases) families.insert(c.family);
  std::vector<double> held_out;
  if (a.leave_out && families.size() >= 2) {
    std::fprintf(stderr, "leaving each of %zu families out...\n", families.size());
    held_out = calibrate::leave_one_family_out(cases, params, start);
  }
  print_errors(cases, before, fitted.errors, held_out);
  std::printf("\n");
  std::string refused;
  for (auto p : params) {
    const double v = calibrate::value_of(fitted.machine, p, 0);
    const calibrate::Range r = calibrate::physical_range(p);
    std::printf("%-16s %.6g   (physical range [%g, %g])\n", calibrate::to_string(p), v, r.lo, r.hi);
    if (v < r.lo || v > r.hi) refused += std::string(refused.empty() ? "" : ", ") + calibrate::to_string(p);
  }
  if (!refused.empty()) {
    throw common::UsageError("the fitted " + refused +
                             " lies outside its physical range, so nothing was written: these runs disagree with "
                             "the model by more than a machine parameter explains (check the cases' system config "
                             "and measurements, or calibrate fewer --params)");
  }
  const bool host = std::any_of(params.begin(), params.end(), calibrate::is_host);
  const std::optional<config::HostConfig> fitted_host =
      host ? std::optional<config::HostConfig>(fitted.machine.host) : std::nullopt;
  char note[256];
  // A system config (SimuMax's schema, no schema key of ours): the note says which release fitted it.
  std::snprintf(note, sizeof note,
                "simumax-sim %s calibrate on %zu real runs: time MAPE %.2f %% fitted, %.2f %% before",
                common::version(), cases.size(), 100 * calibrate::mape(fitted.errors), 100 * calibrate::mape(before));
  if (!learnt) {
    report::write_file_atomically(
        a.out, report::calibrated_system_json(cases.front().scenario.system_path, fitted.machine.calibration, note,
                                              fitted_host));
    std::printf("wrote %s\n", a.out.c_str());
    return 0;
  }
  report::write_file_atomically(a.out,
                                report::calibrated_system_json_text(learnt->json, a.system,
                                                                    fitted.machine.calibration, note, fitted_host));
  std::printf("wrote %s (%s with %s added or replaced from the traces and \"calibration\" fitted on %zu step times, "
              "every other entry kept)\n", a.out.c_str(), a.system.c_str(), learnt->what.c_str(), cases.size());
  return 0;
}

}  // namespace

std::function<int()> add_calibrate(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "fit a machine's parameters to real runs and write a calibrated system config: from "
                   "traces (--trace), step times (cases, --log), or both in one run (the traces first, then the "
                   "step times fitted on what they taught)");
  sub->add_option("cases", args->paths, "validation case files or folders (schema: shared/validation/README.md)");
  sub->add_option("--trace", args->traces, "a real PyTorch profiler trace (.json/.json.gz, record_shapes=True): "
                                           "learn each GEMM and attention shape's efficiency into --system's "
                                           "matmul and sdp tables, and each collective's bus bandwidth per group "
                                           "and size into measured_collectives and its network tier's line "
                                           "(repeatable)");
  sub->add_option("--system", args->system, "with --trace: the base system config the learnt entries go into "
                                            "(with cases or --log too, the system config those runs name)");
  sub->add_option("--kernel-classes", args->kernel_classes, "with --trace: the kernel class table (default: as "
                                                            "compare's)");
  sub->add_option("--log", args->logs, "SCENARIO=LOG: a scenario and the Megatron-LM log of its real run "
                                       "(steady step: median of the logged intervals after the first)");
  sub->add_option("-o,--out", args->out, "the calibrated system config to write (SimuMax schema + \"calibration\")")
      ->required();
  sub->add_option("--shared", args->shared_dir, "the shared/ folder the cases' system_file is relative to "
                                                "(default: $SIMUMAX_SHARED_DIR, else ../shared)");
  sub->add_option("--params", args->params, "the parameters to fit: compute_derate, kernel_floor_us (the "
                                             "calibration), launch_us, op_us, cpu_speed (the host, docs/host.md; "
                                             "at most two of these three)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("!--no-leave-out", args->leave_out, "skip the leave-one-family-out check (faster)");
  return [sub, args]() {
    if (!sub->parsed()) return -1;
    if (!args->traces.empty() && args->system.empty()) {
      throw common::UsageError("--trace needs --system BASE.json: the system config whose matmul peak the learnt "
                               "efficiencies are relative to, and that they are written into");
    }
    if (!args->traces.empty() && args->paths.empty() && args->logs.empty()) return do_calibrate_traces(*args);
    if (args->paths.empty() && args->logs.empty()) {
      throw common::UsageError("calibrate: give validation cases, --log SCENARIO=LOG pairs, or --trace TRACE "
                               "--system BASE.json");
    }
    return do_calibrate(*args);
  };
}

}  // namespace simumax::tools
