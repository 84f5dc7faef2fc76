// calibrate --trace: what real profiler traces teach a system config, printed as it is learnt
// (docs/compare.md).
#include "tools/calibrate_traces.hpp"

#include <cstdio>
#include <map>
#include <optional>

#include "engine/calibrate/trace_evidence.hpp"
#include "engine/common/error.hpp"
#include "engine/common/median.hpp"
#include "engine/config/scenario.hpp"
#include "engine/report/calibrated_system.hpp"
#include "engine/compare/kineto_trace.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

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

}  // namespace

LearntSystem learn_from_traces(const std::vector<std::string>& traces, const std::string& system,
                               const std::string& kernel_classes) {
  const config::SystemConfig sys = config::load_system_file(system);
  const auto matmul = sys.op.find("matmul");
  if (matmul == sys.op.end()) {
    throw common::ConfigError(system, "/accelerator/op/matmul", "missing: the learnt efficiencies are relative "
                                                                  "to its tflops");
  }
  const compare::KernelClassTable table =
      compare::KernelClassTable::load(kernel_classes.empty() ? default_kernel_classes() : kernel_classes);
  const bool qkv_contiguous = sys.sys_name.find("s5000") == std::string::npos;  // SimuMax's sdp key rule
  std::map<std::string, calibrate::GemmEntry> entries;
  std::map<std::string, std::vector<double>> calls;
  std::map<std::string, calibrate::AttentionEntry> attention;
  std::map<std::string, std::vector<double>> attention_calls;
  std::map<calibrate::CollectiveKey, std::vector<double>> collective_calls;
  std::map<calibrate::CollectiveKey, bool> group_is_world;
  calibrate::TraceEvidence evidence;
  calibrate::CollectiveEvidence collectives;
  std::vector<double> launch_us;  // each trace's median launch call
  int64_t launches = 0;
  for (const auto& t : traces) {
    const compare::KinetoProfile p = compare::load_kineto_trace(t, table);
    if (!p.insight.shapes_recorded) {
      std::fprintf(stderr, "warning: %s: no Input Dims: profile with torch.profiler.profile(record_shapes=True) "
                           "to learn GEMM and attention shapes\n", t.c_str());
    }
    calibrate::add_trace(t, p.insight, entries, calls, evidence);
    calibrate::add_attention(t, p.insight, qkv_contiguous, attention, attention_calls, evidence);
    calibrate::add_collectives(p, collective_calls, group_is_world, collectives);
    if (p.insight.launch.kernels > 0) {
      launch_us.push_back(p.insight.launch.median_launch_us);
      launches += p.insight.launch.kernels;
      // What the launching thread spends per kernel in all (its operators' dispatch included): what launch_us
      // would be with op_us 0, read as an upper bound (its blocking calls count as busy).
      const compare::HostThread& h = p.insight.host;
      if (h.launches > 0) {
        std::printf("%s: host thread %lld busy %.3f of %.3f ms per step for %.0f launches: %.1f us per launch in "
                    "all (an upper bound of launch_us with op_us 0)\n", t.c_str(), static_cast<long long>(h.tid),
                    h.busy_ms, h.step_ms, h.launches, 1e3 * h.busy_ms / h.launches);
      }
    }
  }
  evidence = calibrate::finish(std::move(entries), calls, std::move(evidence), matmul->second.tflops);
  const double fwd_peak = peak_of(sys, "sdp_fwd"), bwd_peak = peak_of(sys, "sdp_bwd");
  calibrate::finish_attention(std::move(attention), attention_calls, fwd_peak, bwd_peak, evidence);
  collectives = calibrate::learn_collectives(collective_calls, group_is_world, std::move(collectives), sys);
  print_trace_evidence(evidence, matmul->second.tflops);
  print_attention_evidence(evidence, fwd_peak, bwd_peak);
  print_collective_evidence(collectives);
  // The host's launch time: the median launch call (the middle of the traces' medians: one per host measured), from
  // a step's worth of launches at least.
  constexpr int64_t kMinLaunches = 100;
  std::optional<config::HostConfig> host;
  if (launches < kMinLaunches) {
    std::printf("host: nothing learnt: %lld kernel launch call%s in the profiled steps (at least %lld needed)\n",
                static_cast<long long>(launches), launches == 1 ? "" : "s", static_cast<long long>(kMinLaunches));
  } else {
    host = sys.host_given ? sys.host : config::HostConfig{};
    host->launch_us = common::median_of(launch_us);
    std::printf("host.launch_us: %.2f us (the median launch call of %lld kernels in %zu trace%s)\n", host->launch_us,
                static_cast<long long>(launches), launch_us.size(), launch_us.size() == 1 ? "" : "s");
  }
  if (evidence.gemm.empty() && evidence.attention.empty() && collectives.fits.empty() && !host) {
    throw common::ConfigError(traces.front(), "", "nothing to learn: no GEMM or attention call with a shape and an "
                                                    "input type (profile with torch.profiler.profile("
                                                    "record_shapes=True)), no collective with a message size and "
                                                    "too few kernel launches for the host's launch time");
  }
  std::map<std::string, std::map<std::string, double>> tables;
  auto warn_above_peak = [&](const std::string& key, double eff, const std::string& op, double peak) {
    if (eff > 1) {
      std::fprintf(stderr, "warning: %s runs at %.2f x the %s peak of %s (%g TFLOPS): is the peak for this "
                           "dtype?\n", key.c_str(), eff, op.c_str(), system.c_str(), peak);
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
                           "trace's machine?\n", f.net.c_str(), f.op.c_str(), f.efficient_factor, system.c_str());
    }
  }
  char what[200];
  std::snprintf(what, sizeof what,
                "%zu matmul and %zu sdp entries, %zu network ops and %zu measured_collectives points%s",
                evidence.gemm.size(), evidence.attention.size(), nets.size(), measured_points,
                host ? " and host.launch_us" : "");
  std::string json = report::learnt_system_json(system, tables, nets, curves);
  if (host) json = report::system_with_host_json(json, system, *host);
  return {std::move(json), what};
}

}  // namespace simumax::tools
