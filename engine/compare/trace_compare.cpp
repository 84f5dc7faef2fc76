#include "engine/compare/trace_compare.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/common/error.hpp"
#include "engine/common/text_case.hpp"
#include "engine/compare/kineto_trace.hpp"

namespace simumax::compare {

namespace {

bool is_log(const std::string& path) {
  const std::string ext = common::lower_ascii(std::filesystem::path(path).extension().string());
  return ext == ".log" || ext == ".txt";
}

// Megatron's first logged interval holds the start-up, and a log's records are interval averages: the log's
// summary is the median of its steady state (SteadyState). Every profiled step counts (the profiler's warm-up
// steps are not recorded), averaged.
RealRun load_real(const std::string& path, const KernelClassTable& table, Comparison& c) {
  RealRun r;
  r.path = path;
  if (is_log(path)) {
    r.kind = "megatron log";
    MegatronLog log = load_megatron_log(path);
    const SteadyState steady = steady_state(log.iterations);
    c.averaged = steady.used;
    c.median = true;
    c.steady_state = steady.description(log.iterations);
    for (const auto& it : log.iterations) {
      StepBreakdown s;
      s.label = it.iteration >= 0 ? "iteration " + std::to_string(it.iteration) : "iteration ?";
      s.has_breakdown = false;
      s.total_ms = it.elapsed_ms;
      r.steps.push_back(std::move(s));
    }
    r.memory = std::move(log.memory);
    return r;
  }
  r.kind = "kineto trace";
  KinetoProfile p = load_kineto_trace(path, table, c.top_n);
  r.rank = p.rank;
  r.world_size = p.world_size;
  r.steps = std::move(p.steps);
  r.gpu_events = p.gpu_events;
  r.unattributed_events = p.unattributed_events;
  r.main_stream = p.main_stream;
  r.insight = std::move(p.insight);
  r.collectives = std::move(p.collectives);
  for (size_t i = 0; i < r.steps.size(); ++i) c.averaged.push_back(i);
  return r;
}


StepBreakdown ours_step(const SimulatedRun& ours) {
  if (ours.step) return *ours.step;
  StepBreakdown s;
  s.label = "summary.json";
  s.has_breakdown = false;
  s.total_ms = ours.summary_step_ms.value_or(0);
  return s;
}

}  // namespace

Comparison compare_runs(const CompareOptions& o) {
  const KernelClassTable table = KernelClassTable::load(o.kernel_classes);
  Comparison c;
  c.classes = table.classes();
  c.classes_path = o.kernel_classes;
  c.top_n = o.top_n;
  std::string real = o.real;
  std::error_code ec;
  if (!o.more_real.empty() || std::filesystem::is_directory(o.real, ec)) {
    std::vector<std::string> paths = {o.real};
    paths.insert(paths.end(), o.more_real.begin(), o.more_real.end());
    for (const auto& p : paths) {
      if (is_log(p)) throw common::ConfigError(p, "", "a Megatron-LM log cannot be one of several rank traces");
    }
    const auto files = rank_trace_files(paths);
    c.ranks = load_rank_summaries(files, table);
    if (c.ranks.size() > 1) c.straggler = find_straggler(c.ranks, table.classes());
    real = c.ranks.front().path;  // the lowest rank is compared op by op
  }
  c.real = load_real(real, table, c);
  c.ours = load_simulated_run(o.ours, RankChoice{o.rank, c.real.rank}, table);
  c.ours_step = ours_step(c.ours);
  if (c.real.insight) c.ops = align_ops(c.ours, *c.real.insight);
  c.workload = check_workload(c);
  return c;
}

WorkloadCheck check_workload(const Comparison& c) {
  WorkloadCheck w;
  std::vector<const StepBreakdown*> real;
  for (size_t i : c.averaged) {
    if (i < c.real.steps.size() && c.real.steps[i].has_breakdown) real.push_back(&c.real.steps[i]);
  }
  if (real.empty()) return w;
  w.judged = true;
  const auto real_mean = [&real](auto field) {
    double sum = 0;
    for (const StepBreakdown* s : real) sum += field(*s);
    return sum / static_cast<double>(real.size());
  };
  for (size_t k = 0; k < c.classes.size(); ++k) {
    const std::string& name = c.classes[k].name;
    if (name == "attention" &&
        real_mean([k](const StepBreakdown& s) { return static_cast<double>(s.class_kernels.at(k)); }) == 0) {
      w.reasons.push_back("no attention kernel in the real steps (a transformer runs one per layer and micro-batch "
                          "at least)");
    }
    if (name == "other") {
      const double compute = real_mean([](const StepBreakdown& s) { return s.compute_ms; });
      const double share = compute > 0 ? real_mean([k](const StepBreakdown& s) { return s.class_ms.at(k); }) / compute : 0;
      if (share > 0.5) {
        w.reasons.push_back(fmt::format("{:.0f} % of the real compute time is in kernels of no known class", 100 * share));
      }
    }
  }
  return w;
}

std::vector<Metric> time_metrics(const StepBreakdown& s, const std::vector<KernelClass>& classes) {
  std::vector<Metric> m{{"total_ms", s.total_ms}};
  const auto known = [&](double v) { return s.has_breakdown ? std::optional<double>(v) : std::nullopt; };
  const auto add_classes = [&](ClassKind kind) {
    for (size_t i = 0; i < classes.size(); ++i) {
      if (classes[i].kind != kind) continue;
      m.emplace_back(classes[i].name + "_ms", known(i < s.class_ms.size() ? s.class_ms[i] : 0));
    }
  };
  m.emplace_back("compute_ms", known(s.compute_ms));
  add_classes(ClassKind::kCompute);
  m.emplace_back("comm_ms", known(s.comm_ms));
  m.emplace_back("exposed_comm_ms", known(s.exposed_comm_ms));
  add_classes(ClassKind::kMemory);
  m.emplace_back("idle_ms", known(s.idle_ms));
  return m;
}

std::vector<std::string> comm_types(const Comparison& c) {
  std::set<std::string> types;
  for (const auto& [t, n] : c.ours_step.comm_kernels) types.insert(t);
  for (const auto& s : c.real.steps) {
    for (const auto& [t, n] : s.comm_kernels) types.insert(t);
  }
  return {types.begin(), types.end()};
}

std::vector<Metric> count_metrics(const StepBreakdown& s, const std::vector<KernelClass>& classes,
                                  const std::vector<std::string>& comm_types) {
  const auto known = [&](int64_t v) {
    return s.has_breakdown ? std::optional<double>(static_cast<double>(v)) : std::nullopt;
  };
  std::vector<Metric> m{{"kernels", known(s.kernels)}};
  for (size_t i = 0; i < classes.size(); ++i) {
    m.emplace_back("kernels." + classes[i].name, known(i < s.class_kernels.size() ? s.class_kernels[i] : 0));
  }
  for (const auto& t : comm_types) {
    const auto it = s.comm_kernels.find(t);
    m.emplace_back("comm." + t, known(it == s.comm_kernels.end() ? 0 : it->second));
  }
  return m;
}

std::vector<Metric> mean_metrics(const std::vector<std::vector<Metric>>& sets) {
  if (sets.empty()) return {};
  std::vector<Metric> mean = sets.front();
  for (size_t k = 0; k < mean.size(); ++k) {
    double sum = 0;
    bool all = true;
    for (const auto& set : sets) {
      all = all && set[k].second.has_value();
      sum += set[k].second.value_or(0);
    }
    mean[k].second = all ? std::optional<double>(sum / static_cast<double>(sets.size())) : std::nullopt;
  }
  return mean;
}

std::vector<Metric> reduce_metrics(const std::vector<std::vector<Metric>>& sets, const std::string& statistic) {
  if (statistic == "mean") return mean_metrics(sets);
  if (sets.empty()) return {};
  std::vector<Metric> out = sets.front();
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<double> v;
    for (const auto& set : sets) {
      if (set[k].second) v.push_back(*set[k].second);
    }
    if (v.size() != sets.size()) {
      out[k].second = std::nullopt;
      continue;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    if (statistic == "min") out[k].second = v.front();
    else if (statistic == "max") out[k].second = v.back();
    else out[k].second = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  return out;
}

std::vector<Metric> summary_metrics(const Comparison& c, const std::vector<std::vector<Metric>>& averaged) {
  return reduce_metrics(averaged, c.median ? "median" : "mean");
}

std::optional<double> error_pct(std::optional<double> ours, std::optional<double> real) {
  if (!ours || !real || *real == 0) return std::nullopt;
  return (*ours - *real) / *real * 100.0;
}

}  // namespace simumax::compare
