// summary.json: names follow SimuMax's compute_result.json / mem_result.json where a counterpart exists.
#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/common/units.hpp"
#include "engine/common/version.hpp"
#include "engine/report/summary.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

nlohmann::ordered_json stage_json(const StageSummary& s, double headroom_pct) {
  nlohmann::ordered_json j;
  j["stage"] = s.stage;
  j["kind"] = s.kind;
  j["layers"] = s.layers;
  j["fwd_ms"] = s.fwd_ms;
  j["bwd_ms"] = s.bwd_ms;
  j["p2p_ms"] = s.p2p_ms;
  j["chunk_time_ms"] = s.chunk_time_ms;
  j["bubble_ms"] = s.bubble_ms;
  j["pipeline_end_ms"] = s.pipeline_end_ms;
  j["dp_comm_ms"] = s.dp_comm_ms;
  j["optimizer_ms"] = s.optimizer_ms;
  j["duration_ms"] = s.duration_ms;
  nlohmann::ordered_json m;
  m["peak_alloc_bytes"] = s.peak_alloc_bytes;
  m["peak_reserved_bytes"] = s.peak_reserved_bytes;
  m["weight_bytes"] = s.weight_bytes;
  m["grad_bytes"] = s.grad_bytes;
  m["optimizer_state_bytes"] = s.optimizer_state_bytes;
  m["te_dummy_wgrad_bytes"] = s.other_bytes;
  // Only where modelled (megatron fidelity, a system with "workspaces"): SimuMax's configs keep their summary.
  if (s.workspace_bytes != 0) m["cublas_workspace_bytes"] = s.workspace_bytes;
  m["activation_bytes_at_peak"] = s.activation_bytes_at_peak;
  m["transient_bytes_at_peak"] = s.transient_bytes_at_peak;
  m["cached_micro_batch_num"] = s.cached_micro_batches;
  m["peak_task"] = s.peak_task;
  j["memory"] = m;
  j["fits"] = s.fits;
  j["headroom_gib"] = common::gib(s.headroom_bytes);
  j["headroom_percent"] = headroom_pct;
  return j;
}

}  // namespace

std::string summary_json(const Summary& s) {
  nlohmann::ordered_json j;
  j["schema"] = "simumax_sim_summary_v1";
  j["version"] = common::version();
  j["name"] = s.name;
  j["fidelity"] = s.fidelity;
  if (s.calibration) {
    j["calibration"] = {{"compute_derate", s.calibration->compute_derate},
                        {"kernel_floor_us", s.kernel_floor_us},
                        {"source", s.calibration_source}};
  }
  if (s.host) {
    j["host"] = {{"launch_us", s.host->launch_us}, {"op_us", s.host->op_us}, {"cpu_speed", s.host->cpu_speed}};
  }
  j["executor"] = s.executor;
  j["granularity"] = s.granularity;
  j["rank_scope"] = s.scope;
  // Ours, beyond SimuMax's schedules: written only for them, so a 1F1B run's file keeps its keys.
  if (s.pipeline_schedule != "1f1b") j["pipeline_schedule"] = s.pipeline_schedule;
  j["parallel"] = {{"world_size", s.world_size}, {"tp", s.tp}, {"cp", s.cp}, {"pp", s.pp}, {"dp", s.dp},
                   {"ep", s.ep},                 {"etp", s.etp}, {"edp", s.edp}};
  j["batch"] = {{"micro_batch_size", s.micro_batch_size}, {"micro_batch_num", s.micro_batch_num},
                {"global_batch_size", s.global_batch_size}, {"seq_len", s.seq_len}};
  j["padded_vocab_size"] = s.padded_vocab;
  j["step_time_ms"] = s.step_time_ms;
  j["pp_time_with_straggler_ms"] = s.pp_time_ms;
  j["straggler_ratio"] = s.straggler_ratio;
  j["tflops_per_gpu"] = s.tflops_per_gpu;
  j["mfu"] = s.mfu;
  j["tokens_per_s"] = s.tokens_per_s;
  j["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
  j["tokens_per_iter"] = s.tokens_per_iter;
  j["flops_per_token"] = s.flops_per_token;
  j["peak_alloc_bytes_max"] = s.peak_alloc_bytes_max;
  j["peak_reserved_bytes_max"] = s.peak_reserved_bytes_max;
  j["gpu_memory_bytes"] = s.gpu_memory_bytes;
  j["gpu_memory_gib"] = s.gpu_memory_gib;
  // The verdict: every stage's peak reserved memory plus the margin within the GPU memory.
  j["fit"] = {{"fits", s.fits},
              {"memory_margin_gib", common::gib(s.memory_margin_bytes)},
              {"headroom_gib", common::gib(s.headroom_bytes)},
              {"headroom_percent", headroom_percent(s, s.headroom_bytes)},
              {"rule", "peak reserved + margin <= gpu memory, on every stage"}};
  j["param_count"] = static_cast<int64_t>(std::llround(s.param_count));
  j["dtype"] = s.dtype;
  j["recompute"] = s.recompute;
  j["nets"] = {{"tp_net", s.nets.tp}, {"cp_net", s.nets.cp}, {"pp_net", s.nets.pp}, {"dp_net", s.nets.dp},
               {"ep_net", s.nets.ep}, {"etp_net", s.nets.etp}, {"edp_net", s.nets.edp}};
  j["num_tasks"] = s.num_tasks;
  j["efficiency_table_misses"] = s.efficiency_table_misses;
  j["miss_efficiency"] = nlohmann::ordered_json::object();
  for (const auto& [op, keys] : s.miss_efficiency) j["miss_efficiency"][op] = keys;
  j["miss_efficiency_fallback"] = s.misses_interpolated ? "nearest measured shapes" : "efficient_factor";
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& st : s.stages) stages.push_back(stage_json(st, headroom_percent(s, st.headroom_bytes)));
  j["stages"] = stages;
  return j.dump(2) + "\n";
}

std::string write_summary_json(const std::string& dir, const Summary& s) {
  const std::string path = dir + "/summary.json";
  write_file_atomically(path, summary_json(s));
  return path;
}

}  // namespace simumax::report
