// simumax-sim calibrate: fit a machine's named parameters to the user's real runs and write a calibrated system
// config (docs/accuracy.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "engine/calibrate/calibrate.hpp"
#include "engine/calibrate/trace_evidence.hpp"
#include "engine/config/scenario.hpp"
#include "engine/compare/kineto_trace.hpp"
#include "engine/common/error.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/report/calibrated_system.hpp"
#include "engine/compare/megatron_log.hpp"
#include "engine/report/text_file.hpp"
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
    cases.push_back({vc.name, file, calibrate::case_family(vc.scenario), std::move(vc.scenario), vc.real_ms});
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

// One machine per calibration: every case must read the same system config.
void check_one_machine(const std::vector<calibrate::Case>& cases) {
  const auto& first = cases.front().scenario;
  for (const auto& c : cases) {
    const auto& s = c.scenario;
    if (s.system_path != first.system_path || s.system.sys_name != first.system.sys_name) {
      throw common::ConfigError(c.source, "/system_file",
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
  if (!held_out.empty()) line("leave one family out", held_out);
}

int do_calibrate(const CalibrateArgs& a) {
  if (!a.out.empty()) check_output_file(a.out);
  std::vector<calibrate::Param> params;
  for (const auto& p : a.params) params.push_back(calibrate::parse_param(p));
  std::sort(params.begin(), params.end());
  params.erase(std::unique(params.begin(), params.end()), params.end());
  const std::vector<calibrate::Case> cases = load_cases(a);
  if (cases.size() <= params.size()) {
    throw common::UsageError(std::to_string(cases.size()) + " case(s) for " + std::to_string(params.size()) +
                             " parameter(s): calibrate needs more real runs than parameters (give more cases, or "
                             "fewer --params)");
  }
  check_one_machine(cases);
  // From the defaults, not from the system's current calibration (which may have seen these very runs).
  const config::Calibration start;
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
    const double v = calibrate::value_of(fitted.calibration, p, 0);
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
  char note[256];
  std::snprintf(note, sizeof note, "simumax-sim calibrate on %zu real runs: time MAPE %.2f %% fitted, %.2f %% before",
                cases.size(), 100 * calibrate::mape(fitted.errors), 100 * calibrate::mape(before));
  report::write_file_atomically(
      a.out, report::calibrated_system_json(cases.front().scenario.system_path, fitted.calibration, note));
  std::printf("wrote %s\n", a.out.c_str());
  return 0;
}

void print_trace_evidence(const calibrate::TraceEvidence& e, double peak_tflops) {
  if (!e.gemm.empty()) {
    std::printf("%-84s %-7s %6s %10s %8s %6s\n", "matmul shape key", "pass", "calls", "median us", "TFLOPS", "eff.");
  }
  for (const auto& g : e.gemm) {
    std::printf("%-84s %-7s %6lld %10.1f %8.2f %6.3f\n", g.key.c_str(), g.pass.c_str(),
                static_cast<long long>(g.calls), g.median_us, g.efficiency * peak_tflops, g.efficiency);
  }
  std::map<std::string, int> by_pass;
  for (const auto& g : e.gemm) ++by_pass[g.pass];
  std::printf("\nlearnt %zu matmul shapes (%d forward, %d dgrad, %d wgrad) from %lld of %lld GEMM calls",
              e.gemm.size(), by_pass["forward"], by_pass["dgrad"], by_pass["wgrad"],
              static_cast<long long>(e.gemm_calls - e.gemm_calls_unshaped), static_cast<long long>(e.gemm_calls));
  std::printf("; %lld without a shape (no Input Dims, an op with no known GEMM shape, or no input type)\n",
              static_cast<long long>(e.gemm_calls_unshaped));
}

void print_attention_evidence(const calibrate::TraceEvidence& e, double fwd_tflops, double bwd_tflops) {
  if (!e.attention.empty()) {
    std::printf("\n%-112s %-7s %6s %10s %8s %6s\n", "sdp shape key", "table", "calls", "median us", "TFLOPS", "eff.");
  }
  int fwd = 0;
  for (const auto& a : e.attention) {
    const double peak = a.op == "sdp_bwd" ? bwd_tflops : fwd_tflops;
    std::printf("%-112s %-7s %6lld %10.1f %8.2f %6.3f\n", a.key.c_str(), a.op.c_str(), static_cast<long long>(a.calls),
                a.median_us, a.efficiency * peak, a.efficiency);
    fwd += a.op == "sdp_fwd" ? 1 : 0;
  }
  if (e.attention_calls == 0) {
    std::printf("\nattention: nothing learnt: the traces have no attention kernel (flash / fmha / cuDNN SDPA)\n");
    return;
  }
  std::printf("\nlearnt %zu attention shapes (%d sdp_fwd, %zu sdp_bwd) from %lld of %lld attention calls; %lld without "
              "a shape (no Input Dims: record_shapes=True is needed; or not a fused attention op: "
              "aten::_scaled_dot_product_*_attention, aten::_flash_attention_*, flash_attn::_flash_attn_*)\n",
              e.attention.size(), fwd, e.attention.size() - static_cast<size_t>(fwd),
              static_cast<long long>(e.attention_calls - e.attention_calls_unshaped),
              static_cast<long long>(e.attention_calls), static_cast<long long>(e.attention_calls_unshaped));
}

void print_collective_evidence(const calibrate::CollectiveEvidence& c) {
  if (!c.points.empty()) {
    std::printf("\n%-14s %5s %13s %-18s %5s %10s %10s %9s %-9s %10s %8s %11s %8s\n", "collective", "group", "bytes",
                "tier", "calls", "min us", "median us", "busBW GB/s", "line role", "simumax us", "error",
                "megatron us", "error");
  }
  for (const auto& p : c.points) {
    std::printf("%-14s %4lld%s %13.0f %-18s %5lld %10.1f %10.1f %9.2f %-9s %10.1f %+7.2f%%", p.type.c_str(),
                static_cast<long long>(p.group), p.group_is_world ? "*" : " ", p.bytes, p.net.c_str(),
                static_cast<long long>(p.calls), p.min_us, p.median_us, p.bus_gbps, p.role.c_str(), p.model_us,
                100 * (p.model_us / p.min_us - 1));
    if (p.measured) {
      std::printf(" %11.1f %+7.2f%%\n", p.megatron_us, 100 * (p.megatron_us / p.min_us - 1));
    } else {
      std::printf(" %11s %8s\n", "-", "-");
    }
  }
  if (c.calls == 0) {
    std::printf("\ncollectives: nothing learnt: the traces have no NCCL kernel in a profiled step\n");
    return;
  }
  const int64_t sized = c.calls - c.calls_unsized - c.calls_unmodelled;
  std::printf("\nlearnt %zu network ops from %lld of %lld NCCL calls; %lld without a message size or group size",
              c.fits.size(), static_cast<long long>(sized), static_cast<long long>(c.calls),
              static_cast<long long>(c.calls_unsized));
  std::printf("; %lld of a collective SimuMax does not model (broadcast, reduce, barrier, ...)\n",
              static_cast<long long>(c.calls_unmodelled));
  if (c.calls_unsized > 0 && sized == 0) {
    std::printf("collectives: nothing learnt: no NCCL call records its message (profile with "
                "torch.profiler.profile(record_shapes=True), or PyTorch >= 2.1, whose NCCL kernels carry In msg nelems "
                "and Group size)\n");
  }
  if (c.calls_group_assumed > 0) {
    std::printf("* %lld calls record no group size: it is taken as the trace's world size (distributedInfo)\n",
                static_cast<long long>(c.calls_group_assumed));
  }
  if (!c.points.empty()) {
    std::printf("simumax fidelity (the line): the efficiency from each tier's highest bus bandwidth, each group's "
                "fixed latency from its smallest message (both reproduced: latency_us is per hop); \"check\" rows "
                "are the other messages, timed by the learnt line\n");
    std::printf("megatron fidelity: every row's own efficiency in measured_collectives (its fastest call), timed "
                "by the learnt config; \"-\": not learnt (see below)\n");
  }
  for (const auto& f : c.fits) {
    std::printf("networks.%s.op.%s: efficient_factor %.4f, latency_us %.3f, fixed_latency_us_by_comm_num",
                f.net.c_str(), f.op.c_str(), f.efficient_factor, f.latency_us);
    for (const auto& [n, us] : f.fixed_latency_us) std::printf(" %lld: %.2f", static_cast<long long>(n), us);
    std::printf("\n");
  }
  for (const auto& [net, ops] : c.curves) {
    for (const auto& [op, groups] : ops) {
      std::printf("measured_collectives.%s.%s:", net.c_str(), op.c_str());
      for (const auto& [n, curve] : groups) {
        std::printf(" group %lld: %zu size%s", static_cast<long long>(n), curve.size(), curve.size() == 1 ? "" : "s");
      }
      std::printf("\n");
    }
  }
  for (const auto& n : c.notes) std::printf("not learnt: %s\n", n.c_str());
}

double peak_of(const config::SystemConfig& sys, const std::string& op) {
  const auto it = sys.op.find(op);
  return it != sys.op.end() ? it->second.tflops : sys.op.at("default").tflops;
}

int do_calibrate_traces(const CalibrateArgs& a) {
  if (a.system.empty()) {
    throw common::UsageError("--trace needs --system BASE.json: the system config whose matmul peak the learnt "
                             "efficiencies are relative to, and that they are written into");
  }
  if (!a.paths.empty() || !a.logs.empty()) {
    throw common::UsageError("calibrate: give traces (--trace) or step times (cases, --log), not both in one run: "
                             "learn the shapes from the traces first, then fit step times with the config it writes");
  }
  const config::SystemConfig sys = config::load_system_file(a.system);
  const auto matmul = sys.op.find("matmul");
  if (matmul == sys.op.end()) {
    throw common::ConfigError(a.system, "/accelerator/op/matmul", "missing: the learnt efficiencies are relative "
                                                                  "to its tflops");
  }
  const compare::KernelClassTable table =
      compare::KernelClassTable::load(a.kernel_classes.empty() ? default_kernel_classes() : a.kernel_classes);
  const bool qkv_contiguous = sys.sys_name.find("s5000") == std::string::npos;  // SimuMax's sdp key rule
  std::map<std::string, calibrate::GemmEntry> entries;
  std::map<std::string, std::vector<double>> calls;
  std::map<std::string, calibrate::AttentionEntry> attention;
  std::map<std::string, std::vector<double>> attention_calls;
  std::map<calibrate::CollectiveKey, std::vector<double>> collective_calls;
  std::map<calibrate::CollectiveKey, bool> group_is_world;
  calibrate::TraceEvidence evidence;
  calibrate::CollectiveEvidence collectives;
  for (const auto& t : a.traces) {
    const compare::KinetoProfile p = compare::load_kineto_trace(t, table);
    if (!p.insight.shapes_recorded) {
      std::fprintf(stderr, "warning: %s: no Input Dims: profile with torch.profiler.profile(record_shapes=True) "
                           "to learn GEMM and attention shapes\n", t.c_str());
    }
    calibrate::add_trace(t, p.insight, entries, calls, evidence);
    calibrate::add_attention(t, p.insight, qkv_contiguous, attention, attention_calls, evidence);
    calibrate::add_collectives(p, collective_calls, group_is_world, collectives);
  }
  evidence = calibrate::finish(std::move(entries), calls, std::move(evidence), matmul->second.tflops);
  const double fwd_peak = peak_of(sys, "sdp_fwd"), bwd_peak = peak_of(sys, "sdp_bwd");
  calibrate::finish_attention(std::move(attention), attention_calls, fwd_peak, bwd_peak, evidence);
  collectives = calibrate::learn_collectives(collective_calls, group_is_world, std::move(collectives), sys);
  print_trace_evidence(evidence, matmul->second.tflops);
  print_attention_evidence(evidence, fwd_peak, bwd_peak);
  print_collective_evidence(collectives);
  if (evidence.gemm.empty() && evidence.attention.empty() && collectives.fits.empty()) {
    throw common::ConfigError(a.traces.front(), "", "nothing to learn: no GEMM or attention call with a shape and an "
                                                    "input type (profile with torch.profiler.profile("
                                                    "record_shapes=True)) and no collective with a message size");
  }
  std::map<std::string, std::map<std::string, double>> tables;
  auto warn_above_peak = [&](const std::string& key, double eff, const std::string& op, double peak) {
    if (eff > 1) {
      std::fprintf(stderr, "warning: %s runs at %.2f x the %s peak of %s (%g TFLOPS): is the peak for this "
                           "dtype?\n", key.c_str(), eff, op.c_str(), a.system.c_str(), peak);
    }
  };
  for (const auto& g : evidence.gemm) {
    tables["matmul"][g.key] = g.efficiency;
    warn_above_peak(g.key, g.efficiency, "matmul", matmul->second.tflops);
  }
  // SimuMax's attention FLOPs count the full (non-causal) square, so a causal kernel may pass its peak: not warned.
  for (const auto& at : evidence.attention) tables[at.op][at.key] = at.efficiency;
  // Each learnt group's curve merged size by size into the base's (measured_collectives), every other kept.
  const config::MeasuredCollectives curves = calibrate::merged_curves(sys.measured_collectives, collectives.curves);
  size_t measured_points = 0;
  for (const auto& [net, ops] : collectives.curves) {
    for (const auto& [op, groups] : ops) {
      for (const auto& [n, curve] : groups) measured_points += curve.size();
    }
  }
  std::vector<report::NetworkOpUpdate> nets;
  for (const auto& f : collectives.fits) {
    nets.push_back({f.net, f.op, f.efficient_factor, f.latency_us, f.fixed_latency_us});
    if (f.efficient_factor > 1) {
      std::fprintf(stderr, "warning: networks.%s.op.%s runs at %.2f x the tier's bandwidth in %s: is this the "
                           "trace's machine?\n", f.net.c_str(), f.op.c_str(), f.efficient_factor, a.system.c_str());
    }
  }
  report::write_file_atomically(a.out, report::learnt_system_json(a.system, tables, nets, curves));
  std::printf("wrote %s (%s with %zu matmul and %zu sdp entries, %zu network ops and %zu measured_collectives points "
              "added or replaced, every other entry kept)\n", a.out.c_str(), a.system.c_str(), evidence.gemm.size(),
              evidence.attention.size(), nets.size(), measured_points);
  return 0;
}

}  // namespace

std::function<int()> add_calibrate(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "fit a machine's parameters to real runs and write a calibrated system config");
  sub->add_option("cases", args->paths, "validation case files or folders (schema: shared/validation/README.md)");
  sub->add_option("--trace", args->traces, "a real PyTorch profiler trace (.json/.json.gz, record_shapes=True): "
                                           "learn each GEMM and attention shape's efficiency into --system's "
                                           "matmul and sdp tables, and each collective's bus bandwidth per group "
                                           "and size into measured_collectives and its network tier's line "
                                           "(repeatable)");
  sub->add_option("--system", args->system, "with --trace: the base system config the learnt entries go into");
  sub->add_option("--kernel-classes", args->kernel_classes, "with --trace: the kernel class table (default: as "
                                                            "compare's)");
  sub->add_option("--log", args->logs, "SCENARIO=LOG: a scenario and the Megatron-LM log of its real run "
                                       "(steady step: median of the logged intervals after the first)");
  sub->add_option("-o,--out", args->out, "the calibrated system config to write (SimuMax schema + \"calibration\")")
      ->required();
  sub->add_option("--shared", args->shared_dir, "the shared/ folder the cases' system_file is relative to "
                                                "(default: $SIMUMAX_SHARED_DIR, else ../shared)");
  sub->add_option("--params", args->params, "the parameters to fit: compute_derate, kernel_floor_us")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("!--no-leave-out", args->leave_out, "skip the leave-one-family-out check (faster)");
  return [sub, args]() {
    if (!sub->parsed()) return -1;
    if (!args->traces.empty()) return do_calibrate_traces(*args);
    if (args->paths.empty() && args->logs.empty()) {
      throw common::UsageError("calibrate: give validation cases, --log SCENARIO=LOG pairs, or --trace TRACE "
                               "--system BASE.json");
    }
    return do_calibrate(*args);
  };
}

}  // namespace simumax::tools
