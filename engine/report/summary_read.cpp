// summary.json read back: the inverse of summary_json.cpp, the one reader sweep, search, compare and the HTML
// report use, so that every one of them accepts and refuses the same files with the same message.
#include <cmath>
#include <string>

#include "engine/common/error.hpp"
#include "engine/common/number_text.hpp"
#include "engine/common/units.hpp"
#include "engine/report/report_json_read.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {

namespace {

using html::Json;
using html::JsonDoc;
using html::need;
using html::need_int;
using html::need_number;
using html::need_string;

StageSummary read_stage(const JsonDoc& d, const Json& st, const std::string& p) {
  StageSummary s;
  s.stage = static_cast<int>(need_int(d, st, p, "stage"));
  s.kind = need_string(d, st, p, "kind");
  s.layers = static_cast<int>(need_int(d, st, p, "layers"));
  s.fwd_ms = need_number(d, st, p, "fwd_ms");
  s.bwd_ms = need_number(d, st, p, "bwd_ms");
  s.p2p_ms = need_number(d, st, p, "p2p_ms");
  s.chunk_time_ms = need_number(d, st, p, "chunk_time_ms");
  s.bubble_ms = need_number(d, st, p, "bubble_ms");
  s.pipeline_end_ms = need_number(d, st, p, "pipeline_end_ms");
  s.dp_comm_ms = need_number(d, st, p, "dp_comm_ms");
  s.optimizer_ms = need_number(d, st, p, "optimizer_ms");
  s.duration_ms = need_number(d, st, p, "duration_ms");
  const std::string mp = p + "/memory";
  const Json& m = need(d, st, p, "memory", "object");
  s.peak_alloc_bytes = need_int(d, m, mp, "peak_alloc_bytes");
  s.peak_reserved_bytes = need_number(d, m, mp, "peak_reserved_bytes");
  s.weight_bytes = need_int(d, m, mp, "weight_bytes");
  s.grad_bytes = need_int(d, m, mp, "grad_bytes");
  s.optimizer_state_bytes = need_int(d, m, mp, "optimizer_state_bytes");
  s.other_bytes = need_int(d, m, mp, "te_dummy_wgrad_bytes");
  // Written only where modelled (summary_json): absent is none.
  if (const Json* w = html::maybe(d, m, mp, "cublas_workspace_bytes", "integer")) s.workspace_bytes = w->get<int64_t>();
  s.activation_bytes_at_peak = need_int(d, m, mp, "activation_bytes_at_peak");
  s.transient_bytes_at_peak = need_int(d, m, mp, "transient_bytes_at_peak");
  s.cached_micro_batches = need_int(d, m, mp, "cached_micro_batch_num");
  s.peak_task = need_string(d, m, mp, "peak_task");
  s.fits = need(d, st, p, "fits", "boolean").get<bool>();
  s.headroom_bytes = need_number(d, st, p, "headroom_gib") * common::kGiB;  // exact: a power of two
  return s;
}

void read_groups(const JsonDoc& d, Summary& s) {
  const Json& par = need(d, d.root, "", "parallel", "object");
  for (auto [key, slot] : {std::pair<const char*, int64_t*>{"world_size", &s.world_size}, {"tp", &s.tp}, {"cp", &s.cp},
                           {"pp", &s.pp}, {"dp", &s.dp}, {"ep", &s.ep}, {"etp", &s.etp}, {"edp", &s.edp}}) {
    *slot = need_int(d, par, "/parallel", key);
  }
  const Json& batch = need(d, d.root, "", "batch", "object");
  for (auto [key, slot] : {std::pair<const char*, int64_t*>{"micro_batch_size", &s.micro_batch_size},
                           {"micro_batch_num", &s.micro_batch_num},
                           {"global_batch_size", &s.global_batch_size},
                           {"seq_len", &s.seq_len}}) {
    *slot = need_int(d, batch, "/batch", key);
  }
  const Json& nets = need(d, d.root, "", "nets", "object");
  for (auto [key, slot] : {std::pair<const char*, std::string*>{"tp_net", &s.nets.tp}, {"cp_net", &s.nets.cp},
                           {"pp_net", &s.nets.pp}, {"dp_net", &s.nets.dp}, {"ep_net", &s.nets.ep},
                           {"etp_net", &s.nets.etp}, {"edp_net", &s.nets.edp}}) {
    *slot = need_string(d, nets, "/nets", key);
  }
}

// What no run writes (an edited or damaged file): the report and serve would draw it as a result.
void check_figures(const JsonDoc& d, const Summary& s) {
  const double max_mfu = s.dtype.rfind("bf16", 0) == 0 ? 1 : kMaxResultMfu;
  if (const std::string problem = result_figures_problem(s.step_time_ms, s.mfu, max_mfu); !problem.empty()) {
    const size_t colon = problem.find(": ");
    throw common::ConfigError(d.path, problem.substr(0, colon), problem.substr(colon + 2) + " for dtype " + s.dtype);
  }
  if (!(s.pp_time_ms >= 0)) throw common::ConfigError(d.path, "/pp_time_with_straggler_ms", "expected a time >= 0");
  // tokens_per_s is tokens_per_iter over the step: a step time edited alone no longer matches it.
  const double tokens_per_s = static_cast<double>(s.tokens_per_iter) / (s.step_time_ms * 1e-3);
  if (!(std::abs(s.tokens_per_s - tokens_per_s) <= 1e-6 * tokens_per_s)) {
    throw common::ConfigError(d.path, "/tokens_per_s", "does not match tokens_per_iter / step_time_ms (the file was edited?)");
  }
}

void read_figures(const JsonDoc& d, Summary& s) {
  const Json& r = d.root;
  s.padded_vocab = need_int(d, r, "", "padded_vocab_size");
  s.step_time_ms = need_number(d, r, "", "step_time_ms");
  s.pp_time_ms = need_number(d, r, "", "pp_time_with_straggler_ms");
  s.straggler_ratio = need_number(d, r, "", "straggler_ratio");
  s.tflops_per_gpu = need_number(d, r, "", "tflops_per_gpu");
  s.mfu = need_number(d, r, "", "mfu");
  s.tokens_per_s = need_number(d, r, "", "tokens_per_s");
  s.tokens_per_s_per_gpu = need_number(d, r, "", "tokens_per_s_per_gpu");
  s.tokens_per_iter = need_int(d, r, "", "tokens_per_iter");
  s.flops_per_token = need_number(d, r, "", "flops_per_token");
  s.peak_alloc_bytes_max = need_int(d, r, "", "peak_alloc_bytes_max");
  s.peak_reserved_bytes_max = need_number(d, r, "", "peak_reserved_bytes_max");
  s.gpu_memory_bytes = need_number(d, r, "", "gpu_memory_bytes");
  s.gpu_memory_gib = need_number(d, r, "", "gpu_memory_gib");
  check_figures(d, s);
  const Json& fit = need(d, r, "", "fit", "object");
  s.fits = need(d, fit, "/fit", "fits", "boolean").get<bool>();
  s.memory_margin_bytes = need_number(d, fit, "/fit", "memory_margin_gib") * common::kGiB;
  s.headroom_bytes = need_number(d, fit, "/fit", "headroom_gib") * common::kGiB;
  s.param_count = static_cast<double>(need_int(d, r, "", "param_count"));
  s.num_tasks = static_cast<size_t>(need(d, r, "", "num_tasks", "integer").get<uint64_t>());
  s.efficiency_table_misses = need_int(d, r, "", "efficiency_table_misses");
}

void read_misses(const JsonDoc& d, Summary& s) {
  const Json& misses = need(d, d.root, "", "miss_efficiency", "object");
  for (const auto& [op, keys] : misses.items()) {
    const std::string p = "/miss_efficiency/" + op;
    html::expect_kind(d, keys, p, "array");
    std::vector<std::string>& out = s.miss_efficiency[op];
    for (size_t i = 0; i < keys.size(); ++i) {
      html::expect_kind(d, keys[i], p + "/" + std::to_string(i), "string");
      out.push_back(keys[i].get<std::string>());
    }
  }
  const std::string fallback = need_string(d, d.root, "", "miss_efficiency_fallback");
  if (fallback != "nearest measured shapes" && fallback != "efficient_factor") {
    throw common::ConfigError(d.path, "/miss_efficiency_fallback",
                              "expected \"nearest measured shapes\" or \"efficient_factor\"");
  }
  s.misses_interpolated = fallback == "nearest measured shapes";
}

}  // namespace

Summary read_summary(const std::string& path) {
  const JsonDoc d = html::read_json_doc(path);
  html::expect_kind(d, d.root, "", "object");
  const Json& r = d.root;
  Summary s;
  // A file of an earlier release has no schema key (its fields are checked one by one below); a later schema's
  // keys may mean something else.
  if (const Json* schema = html::maybe(d, r, "", "schema", "string");
      schema && schema->get<std::string>() != "simumax_sim_summary_v1") {
    throw common::ConfigError(d.path, "/schema",
                              "\"" + schema->get<std::string>() + "\": this simumax-sim reads simumax_sim_summary_v1");
  }
  s.name = need_string(d, r, "", "name");
  s.fidelity = need_string(d, r, "", "fidelity");
  if (const Json* c = html::maybe(d, r, "", "calibration", "object")) {
    s.calibration = config::Calibration{};
    s.calibration->compute_derate = need_number(d, *c, "/calibration", "compute_derate");
    s.kernel_floor_us = need_number(d, *c, "/calibration", "kernel_floor_us");
    s.calibration_source = need_string(d, *c, "/calibration", "source");
  }
  if (const Json* h = html::maybe(d, r, "", "host", "object")) {
    s.host = config::HostConfig{};
    s.host->launch_us = need_number(d, *h, "/host", "launch_us");
    s.host->op_us = need_number(d, *h, "/host", "op_us");
    s.host->cpu_speed = need_number(d, *h, "/host", "cpu_speed");
  }
  s.executor = need_string(d, r, "", "executor");
  s.granularity = need_string(d, r, "", "granularity");
  s.scope = need_string(d, r, "", "rank_scope");
  const Json* schedule = html::maybe(d, r, "", "pipeline_schedule", "string");
  s.pipeline_schedule = schedule ? schedule->get<std::string>() : "1f1b";  // written only for the others
  read_groups(d, s);
  s.dtype = need_string(d, r, "", "dtype");
  read_figures(d, s);
  s.recompute = need_string(d, r, "", "recompute");
  read_misses(d, s);
  const Json& stages = need(d, r, "", "stages", "array");
  for (size_t i = 0; i < stages.size(); ++i) {
    s.stages.push_back(read_stage(d, stages[i], "/stages/" + std::to_string(i)));
  }
  return s;
}

std::string result_figures_problem(double step_time_ms, double mfu, double max_mfu) {
  if (!(step_time_ms > 0 && std::isfinite(step_time_ms))) {
    return "/step_time_ms: expected a positive step time, got " + common::format_number("%g", step_time_ms);
  }
  if (!(mfu > 0 && mfu <= max_mfu)) {
    return "/mfu: expected a fraction in (0, " + common::format_number("%g", max_mfu) + "], got " +
           common::format_number("%g", mfu);
  }
  return "";
}

}  // namespace simumax::report
