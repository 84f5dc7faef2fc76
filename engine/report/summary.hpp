// The numbers a run reports: step time, throughput, MFU, per-stage time breakdown and peak memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/executor/rank_timing.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/memory/memory_analysis.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::report {

struct StageSummary {
  int stage = 0;
  std::string kind;               // first / middle / last (SimuMax's chunk names)
  int layers = 0;
  double fwd_ms = 0;              // one micro-batch, TP communication included
  double bwd_ms = 0;              // one micro-batch, TP communication and recompute included
  double p2p_ms = 0;              // one send/recv
  double chunk_time_ms = 0;       // SimuMax's chunk_time: recv + fwd + send + recv + bwd + send
  double bubble_ms = 0;           // pipeline time - mbc * chunk_time
  double pipeline_end_ms = 0;     // when this stage's last backward ended
  double dp_comm_ms = 0;
  double optimizer_ms = 0;
  double duration_ms = 0;         // when this stage's step ended
  int64_t peak_alloc_bytes = 0;   // max over the stage's ranks
  double peak_reserved_bytes = 0;
  int64_t weight_bytes = 0, grad_bytes = 0, optimizer_state_bytes = 0, other_bytes = 0;
  int64_t workspace_bytes = 0;  // cuBLAS workspaces (megatron fidelity, system "workspaces")
  int64_t activation_bytes_at_peak = 0, transient_bytes_at_peak = 0;
  std::string peak_task;          // what ran at the peak
  int64_t cached_micro_batches = 0;  // other forward caches live at the peak (VPP: per micro-batch and chunk)
  // Fit verdict (judge_fit): the stage fits when peak_reserved_bytes + the margin <= the GPU memory.
  bool fits = true;
  double headroom_bytes = 0;      // GPU memory - margin - peak reserved (negative: missing)
};

struct Summary {
  std::string name;
  std::string model_name;               // the model config's model_name (may be empty)
  std::string executor;
  std::string granularity;
  std::string scope;
  std::string pipeline_schedule;  // the strategy's pipeline_schedule
  int64_t world_size = 0, tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, etp = 1, edp = 1;
  int64_t micro_batch_size = 0, micro_batch_num = 0, global_batch_size = 0, seq_len = 0;
  int64_t padded_vocab = 0;
  double step_time_ms = 0;
  double pp_time_ms = 0;          // pipeline (with straggler ratio), before DP and optimizer
  double straggler_ratio = 1;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  int64_t tokens_per_iter = 0;
  double flops_per_token = 0;
  int64_t peak_alloc_bytes_max = 0;
  double peak_reserved_bytes_max = 0;
  double gpu_memory_bytes = 0;
  double gpu_memory_gib = 0;            // the system's mem_gbs as the config gives it (printed as is)
  double memory_margin_bytes = 0;       // kept free on every GPU by the fit verdict (run --memory-margin-gib)
  bool fits = true;                     // every stage fits
  double headroom_bytes = 0;            // the smallest stage headroom
  cost::Nets nets;
  // What the SimuMax-style console lines print: parameters of the whole model (SimuMax's param_numel_info
  // "all"), dtype, recompute status.
  double param_count = 0;
  std::string dtype;                    // "bf16" or "fp8", and the gradient-reduce dtype
  std::string recompute;                // SimuMax's StrategyConfig.recompute_status text
  size_t num_tasks = 0;
  std::string fidelity;                // "megatron" or "simumax" (config::Fidelity)
  // Megatron fidelity: the machine calibration used and where it came from (SystemConfig::calibration_source).
  std::optional<config::Calibration> calibration;
  double kernel_floor_us = 0;           // the floor in force (the calibration's, else the default latency)
  std::string calibration_source;
  // Megatron fidelity with a host that costs time (cost::host_lane): the host lane's parameters, from the system
  // config's "host" (docs/host.md); absent: no host lane.
  std::optional<config::HostConfig> host;
  int64_t efficiency_table_misses = 0;  // GEMM/SDP shapes not found in the tables (fallback efficiency)
  // Each missing shape by compute op (SimuMax's system.miss_efficiency), sorted; `misses_interpolated`: every
  // one was priced from the nearest measured shapes (megatron fidelity) rather than the flat efficient_factor.
  std::map<std::string, std::vector<std::string>> miss_efficiency;
  bool misses_interpolated = false;
  std::vector<StageSummary> stages;
};

// Throughput and MFU of a step of `step_s` seconds, as SimuMax computes them: summarize() and search's
// evaluator both use it.
struct StepRates {
  int64_t tokens_per_iter = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;  // over the system's op "default" peak
  double tokens_per_s = 0;
};
StepRates step_rates(const config::Scenario& s, const model::StepModel& m, double step_s);

// REQUIRES: `timing` and `mem` (with cached_micro_batches, as memory::MemoryStream gives them) are of graph g,
// run by the executor named `executor`.
Summary summarize(const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
                  const graph::TaskGraph& g, const std::string& executor, const executor::StepTiming& timing,
                  const std::vector<memory::RankMemory>& mem);

// The fit verdict of every stage and of the whole step, with `margin_bytes` kept free on each GPU. summarize()
// applies it with no margin; a caller with a margin applies it again. REQUIRES: margin_bytes >= 0.
void judge_fit(Summary& s, double margin_bytes);
// Headroom as a percentage of the GPU memory (0 when the GPU memory is 0).
double headroom_percent(const Summary& s, double headroom_bytes);

// Deterministic JSON (same inputs -> byte-identical text).
std::string summary_json(const Summary& s);
// Writes summary_json(s) as `dir`/summary.json (complete, or not at all); returns its path. Throws
// common::UsageError if the file cannot be written.
std::string write_summary_json(const std::string& dir, const Summary& s);
// summary.json read back, the inverse of summary_json (the one reader: sweep, search's re-check, compare, the HTML
// report): every field summary_json writes is required and type-checked, except those it writes only sometimes
// (calibration, pipeline_schedule, a stage's cublas_workspace_bytes), which take their defaults when absent; the
// derived fields (headroom_percent, fit/rule) are not read. model_name is not in the file (left empty).
// Throws common::ConfigError(path, json-pointer, "expected ...") when the file cannot be read, is not JSON, or a
// field is missing or of another type; the message never quotes the file.
Summary read_summary(const std::string& path);
// The text table the CLI prints.
std::string summary_table(const Summary& s);

// What a file read back (summary.json, a sweep's rows, search.json) must hold to be drawn as a result: a step time
// > 0 and an MFU in (0, max_mfu]. MFU is over the dense bf16 peak: a low-precision run reaches up to the fp4 peak,
// 6x the bf16 one (B300, GB300). Returns "" when both can be a result, else the field and what it must be
// ("/mfu: expected a fraction in (0, 6], got 20"): a file edited or damaged by hand (issue 32).
inline constexpr double kMaxResultMfu = 6;
std::string result_figures_problem(double step_time_ms, double mfu, double max_mfu = kMaxResultMfu);

}  // namespace simumax::report
