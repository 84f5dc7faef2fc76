// The comparison as JSON: both sides in full, then ours against every real step and their mean.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/report/trace_compare.hpp"

namespace simumax::report {

namespace {

using OJson = nlohmann::ordered_json;

OJson optional_number(std::optional<double> v) { return v ? OJson(*v) : OJson(nullptr); }

OJson step_json(const StepBreakdown& s, const std::vector<KernelClass>& classes) {
  OJson j;
  j["label"] = s.label;
  if (s.cpu_ms) j["cpu_ms"] = *s.cpu_ms;
  j["total_ms"] = s.total_ms;
  if (!s.has_breakdown) return j;
  j["compute_ms"] = s.compute_ms;
  OJson by_class = OJson::object();
  for (size_t i = 0; i < classes.size() && i < s.class_ms.size(); ++i) by_class[classes[i].name] = s.class_ms[i];
  j["class_ms"] = by_class;
  j["comm_ms"] = s.comm_ms;
  j["comm_ms_by_type"] = OJson(s.comm_ms_by_type);
  j["exposed_comm_ms"] = s.exposed_comm_ms;
  j["memory_ms"] = s.memory_ms;
  j["idle_ms"] = s.idle_ms;
  j["kernels"] = s.kernels;
  j["comm_kernels"] = OJson(s.comm_kernels);
  return j;
}

OJson ours_json(const Comparison& c) {
  OJson j;
  j["trace"] = c.ours.trace_path.empty() ? OJson(nullptr) : OJson(c.ours.trace_path);
  j["summary"] = c.ours.summary_path.empty() ? OJson(nullptr) : OJson(c.ours.summary_path);
  j["rank"] = c.ours.rank >= 0 ? OJson(c.ours.rank) : OJson(nullptr);
  j["ranks"] = c.ours.ranks;
  j["summary_step_time_ms"] = optional_number(c.ours.summary_step_ms);
  j["peak_alloc_bytes"] = optional_number(c.ours.peak_alloc_bytes);
  j["peak_reserved_bytes"] = optional_number(c.ours.peak_reserved_bytes);
  j["step"] = step_json(c.ours_step, c.classes);
  return j;
}

OJson real_json(const Comparison& c) {
  OJson j;
  j["path"] = c.real.path;
  j["kind"] = c.real.kind;
  j["rank"] = c.real.rank ? OJson(*c.real.rank) : OJson(nullptr);
  j["world_size"] = c.real.world_size ? OJson(*c.real.world_size) : OJson(nullptr);
  if (c.real.kind == "kineto trace") {
    j["gpu_events"] = c.real.gpu_events;
    j["unattributed_gpu_events"] = c.real.unattributed_events;
    j["main_stream"] = c.real.main_stream;
  }
  OJson steps = OJson::array();
  for (const auto& s : c.real.steps) steps.push_back(step_json(s, c.classes));
  j["steps"] = steps;
  OJson memory = OJson::array();
  for (const auto& m : c.real.memory) {
    memory.push_back({{"rank", m.rank}, {"when", m.when}, {"allocated_mib", m.allocated_mib},
                      {"max_allocated_mib", m.max_allocated_mib}, {"reserved_mib", m.reserved_mib},
                      {"max_reserved_mib", m.max_reserved_mib}});
  }
  j["memory"] = memory;
  return j;
}

OJson versus(const std::vector<Metric>& ours, const std::vector<Metric>& real) {
  OJson j = OJson::object();
  for (size_t k = 0; k < ours.size(); ++k) {
    j[ours[k].first] = {{"ours", optional_number(ours[k].second)},
                        {"real", optional_number(real[k].second)},
                        {"error_pct", optional_number(error_pct(ours[k].second, real[k].second))}};
  }
  return j;
}

// Our peak memory (summary.json) against the largest a Megatron-LM log reports over its ranks.
OJson memory_json(const Comparison& c) {
  std::optional<double> alloc, reserved;
  constexpr double kBytesPerMib = 1024.0 * 1024.0;
  for (const auto& m : c.real.memory) {
    alloc = std::max(alloc.value_or(0), m.max_allocated_mib * kBytesPerMib);
    reserved = std::max(reserved.value_or(0), m.max_reserved_mib * kBytesPerMib);
  }
  return versus({{"peak_alloc_bytes", c.ours.peak_alloc_bytes}, {"peak_reserved_bytes", c.ours.peak_reserved_bytes}},
                {{"peak_alloc_bytes", alloc}, {"peak_reserved_bytes", reserved}});
}

}  // namespace

std::string comparison_json(const Comparison& c) {
  const auto types = comm_types(c);
  const auto metrics = [&](const StepBreakdown& s) {
    auto m = time_metrics(s, c.classes);
    for (auto& x : count_metrics(s, types)) m.push_back(std::move(x));
    return m;
  };
  const auto ours = metrics(c.ours_step);
  OJson rows = OJson::array();
  std::vector<std::vector<Metric>> averaged;
  for (size_t i = 0; i < c.real.steps.size(); ++i) {
    const auto real = metrics(c.real.steps[i]);
    rows.push_back({{"real_step", c.real.steps[i].label}, {"metrics", versus(ours, real)}});
    if (std::find(c.averaged.begin(), c.averaged.end(), i) != c.averaged.end()) averaged.push_back(real);
  }
  rows.push_back({{"real_step", "mean"}, {"steps_averaged", averaged.size()},
                  {"metrics", versus(ours, mean_metrics(averaged))}});
  OJson j;
  OJson classes = OJson::array();
  for (const auto& k : c.classes) classes.push_back({{"name", k.name}, {"kind", to_string(k.kind)}});
  j["kernel_classes"] = {{"path", c.classes_path}, {"classes", classes}};
  j["ours"] = ours_json(c);
  j["real"] = real_json(c);
  j["comparison"] = rows;
  j["memory"] = memory_json(c);
  return j.dump(2) + "\n";
}

}  // namespace simumax::report
