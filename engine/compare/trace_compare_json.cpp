// The comparison as JSON: both sides in full, then ours against every real step and their
// summary (mean of profiled steps, median of a log's steady state).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/common/version.hpp"
#include "engine/compare/trace_compare.hpp"

namespace simumax::compare {

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
  j["host_ms"] = optional_number(c.ours.host_ms);
  j["host_tasks"] = c.ours.host_tasks;
  return j;
}

OJson insight_json(const TraceInsight& t) {
  OJson j;
  j["steps"] = t.steps;
  OJson top = OJson::array();
  for (const auto& k : t.top_kernels) {
    top.push_back({{"name", k.name}, {"class", k.cls}, {"count", k.count}, {"ms_per_step", k.total_ms},
                   {"mean_us", k.mean_us}});
  }
  j["top_kernels"] = top;
  OJson ops = OJson::array();
  for (const auto& r : t.ops) {
    OJson o = {{"op", r.op}, {"input_dims", r.dims}, {"pass", r.pass}, {"class", r.cls}, {"calls", r.calls},
               {"kernels", r.kernels}, {"ms_per_step", r.total_ms}, {"median_us", r.median_us}, {"min_us", r.min_us}};
    if (r.gemm) {
      o["gemm"] = {{"b", r.gemm->b}, {"m", r.gemm->m}, {"k", r.gemm->k}, {"n", r.gemm->n}};
      o["median_tflops"] = optional_number(r.median_tflops);
    }
    ops.push_back(o);
  }
  j["ops"] = ops;
  j["gemm_calls"] = t.gemm_calls;
  j["gemm_calls_shaped"] = t.gemm_calls_shaped;
  j["shapes_recorded"] = t.shapes_recorded;
  const LaunchStats& l = t.launch;
  j["launch"] = {{"kernels", l.kernels}, {"median_delay_us", l.median_delay_us}, {"p90_delay_us", l.p90_delay_us},
                 {"max_delay_us", l.max_delay_us}, {"median_launch_us", l.median_launch_us},
                 {"short_kernel_us", LaunchStats::kShortUs}, {"short_kernels", l.short_kernels},
                 {"short_ms_per_step", l.short_ms}};
  const IdleSplit& d = t.idle;
  j["main_stream_idle_ms_per_step"] = {{"total", d.idle_ms}, {"host_bound", d.host_bound_ms},
                                       {"waiting_on_another_stream", d.other_stream_ms}, {"other", d.other_ms}};
  const HostThread& h = t.host;
  j["host_thread"] = {{"pid", h.pid}, {"tid", h.tid}, {"busy_ms_per_step", h.busy_ms},
                      {"launches_per_step", h.launches}, {"step_ms", h.step_ms}};
  return j;
}

OJson ops_json(const Comparison& c) {
  OJson out = OJson::array();
  for (const auto& m : c.ops) {
    const OurOp& o = c.ours.ops[m.ours];
    OJson j = {{"ours", {{"name", o.name}, {"class", o.cls}, {"calls", o.calls}, {"total_ms", o.total_ms},
                         {"median_us", o.median_us}, {"flops", o.flops}, {"shape_key", o.shape_key}}}};
    j["matched_by"] = m.by.empty() ? OJson(nullptr) : OJson(m.by);
    if (m.real) {
      const RealOp& r = c.real.insight->ops[*m.real];
      j["real"] = {{"op", r.op}, {"input_dims", r.dims}, {"pass", r.pass}, {"class", r.cls},
                   {"median_us", r.median_us}, {"median_tflops", optional_number(r.median_tflops)}};
      j["error_pct"] = optional_number(error_pct(o.median_us, r.median_us));
    } else {
      j["real"] = nullptr;
    }
    out.push_back(j);
  }
  return out;
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
  if (c.real.collectives) {
    j["nccl_kernels"] = {{"typed_by_cpu_op", OJson(c.real.collectives->by_cpu_type)},
                         {"typed_by_name", OJson(c.real.collectives->by_name_type)},
                         {"retyped", c.real.collectives->retyped}};
  }
  if (c.real.insight) j["insight"] = insight_json(*c.real.insight);
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
    for (auto& x : count_metrics(s, c.classes, types)) m.push_back(std::move(x));
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
  OJson summary = {{"real_step", c.median ? "median" : "mean"}, {"steps_averaged", averaged.size()}};
  if (c.median) {
    OJson used = OJson::array();
    for (size_t i : c.averaged) used.push_back(c.real.steps[i].label);
    summary["steady_state"] = c.steady_state;
    summary["steps"] = used;
    const auto total = [&](const std::string& stat) { return reduce_metrics(averaged, stat).front().second; };
    summary["real_total_ms"] = {{"min", optional_number(total("min"))}, {"median", optional_number(total("median"))},
                                {"max", optional_number(total("max"))}};
  }
  summary["metrics"] = versus(ours, summary_metrics(c, averaged));
  rows.push_back(summary);
  OJson j;
  j["schema"] = "simumax_sim_compare_v1";
  j["version"] = common::version();
  OJson classes = OJson::array();
  for (const auto& k : c.classes) classes.push_back({{"name", k.name}, {"kind", to_string(k.kind)}});
  j["kernel_classes"] = {{"path", c.classes_path}, {"classes", classes}};
  j["ours"] = ours_json(c);
  j["real"] = real_json(c);
  j["comparison"] = rows;
  if (c.workload.judged) {
    OJson reasons = OJson::array();
    for (const auto& r : c.workload.reasons) reasons.push_back(r);
    j["workload"] = {{"matches", c.workload.reasons.empty()}, {"reasons", reasons}};
  }
  if (c.real.insight) j["ops"] = ops_json(c);
  if (c.straggler) {
    OJson ranks = OJson::array();
    for (const auto& r : c.ranks) {
      OJson one = {{"path", r.path}, {"rank", r.rank}, {"steps", r.steps}, {"busy_ms", r.busy_ms}};
      one["mean_step"] = step_json(r.mean, c.classes);
      ranks.push_back(one);
    }
    j["ranks"] = ranks;
    const Straggler& s = *c.straggler;
    j["straggler"] = {{"rank", s.rank}, {"path", s.path}, {"busy_ms", s.busy_ms},
                      {"median_busy_ms", s.median_busy_ms}, {"straggler_ratio", s.ratio},
                      {"phase", s.phase.empty() ? OJson(nullptr) : OJson(s.phase)},
                      {"phase_excess_ms", s.phase_excess_ms}};
  }
  j["memory"] = memory_json(c);
  return j.dump(2) + "\n";
}

}  // namespace simumax::compare
