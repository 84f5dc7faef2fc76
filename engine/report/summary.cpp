#include "engine/report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"
#include "engine/cost/host_cost.hpp"
#include "engine/report/simumax_strings.hpp"

namespace simumax::report {

namespace {

// Every shape missing from the efficiency tables, by compute op; `all_interpolated` becomes false when one of them
// was priced at the flat efficient_factor (simumax fidelity, or no measured shape of its kind).
std::map<std::string, std::vector<std::string>> list_misses(const model::StepModel& m, const cost::StepCost& c,
                                                            bool& all_interpolated) {
  std::map<std::string, std::set<std::string>> missed;
  all_interpolated = true;
  for (size_t ci = 0; ci < m.chunks.size(); ++ci) {
    for (size_t k = 0; k < m.chunks[ci].blocks.size(); ++k) {
      const auto& blk = m.chunks[ci].blocks[k];
      for (size_t o = 0; o < blk.ops->size(); ++o) {
        for (int p = 0; p < schedule::kNumOpPasses; ++p) {
          const auto& w = (*blk.ops)[o].work[p];
          const auto& cost = c.chunks[ci].blocks[k]->ops[o];
          if (!w.shape_key.empty() && w.flops != 0 && !cost.table_hit[p]) {
            missed[w.compute_op].insert(w.shape_key);
            all_interpolated = all_interpolated && cost.interpolated[p];
          }
        }
      }
    }
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [op, keys] : missed) out[op].assign(keys.begin(), keys.end());
  return out;
}

void fill_stage_times(StageSummary& ss, const config::Scenario& s, const model::StepModel& m,
                      const cost::StepCost& c, double pp_time_ms) {
  const auto& st = s.strategy;
  const int ci = m.chunk_of_stage[ss.stage];
  ss.kind = model::to_string(m.chunks[ci].stage);
  // A DualPipe rank holds two stages and runs half the micro-batches through each: its mean chunk.
  const auto& held = m.held_chunks[ss.stage];
  double fwd = 0, bwd = 0, dp = 0, opt = 0;
  ss.layers = 0;
  for (int h : held) {
    const auto& cc = c.chunks[h];
    ss.layers += m.chunks[h].num_layers;
    fwd += cc.fwd_seconds, bwd += cc.bwd_seconds;
    dp += cc.dense_dp.total_seconds() + cc.moe_dp.total_seconds();
    opt += cc.optimizer.seconds;
  }
  // Per micro-batch: a V runs each micro-batch through both chunks a rank holds.
  const double share = static_cast<double>(m.microbatch_chunks) / static_cast<double>(held.size());
  ss.fwd_ms = common::ms(fwd * share);
  ss.bwd_ms = common::ms(bwd * share);
  ss.p2p_ms = common::ms(c.p2p.seconds);
  const int links = st.pp_size == 1 ? 0 : (ss.stage == 0 || ss.stage == st.pp_size - 1 ? 2 : 4);
  ss.chunk_time_ms = ss.fwd_ms + ss.bwd_ms + links * ss.p2p_ms;
  ss.bubble_ms = pp_time_ms - static_cast<double>(st.micro_batch_num) * ss.chunk_time_ms;
  ss.dp_comm_ms = common::ms(dp);
  ss.optimizer_ms = common::ms(opt);
}

// A result we cannot stand behind is our bug, never a number to print: throws common::InternalError (exit 3).
// MFU is over the dense bf16 peak (SimuMax's definition); fp8 and fp4 GEMMs may run up to their own peak.
double mfu_bound(const config::Scenario& sc) {
  const auto& ops = sc.system.op;
  const double bf16 = ops.at("default").tflops;
  double bound = 1;
  for (const bool grouped : {false, true}) {
    if (const auto it = ops.find(sc.strategy.gemm_op(grouped)); it != ops.end()) {
      bound = std::max(bound, it->second.tflops / bf16);
    }
  }
  return bound;
}

void check_invariants(const Summary& s, double max_mfu) {
  auto fail = [&](const std::string& what) {
    throw common::InternalError(s.name + ": " + what + " (a result the engine cannot stand behind)");
  };
  auto time_ok = [](double ms) { return std::isfinite(ms) && ms >= 0; };
  if (!time_ok(s.step_time_ms) || s.step_time_ms == 0) fail("step time " + std::to_string(s.step_time_ms) + " ms");
  if (!time_ok(s.pp_time_ms)) fail("pipeline time " + std::to_string(s.pp_time_ms) + " ms");
  if (!(s.mfu > 0 && s.mfu <= max_mfu)) {
    fail("MFU " + std::to_string(s.mfu) + " outside (0, " + std::to_string(max_mfu) + "]");
  }
  if (s.peak_alloc_bytes_max < 0 || !(s.peak_reserved_bytes_max >= 0)) fail("a negative peak memory");
  for (const auto& st : s.stages) {
    for (double ms : {st.fwd_ms, st.bwd_ms, st.dp_comm_ms, st.optimizer_ms, st.duration_ms}) {
      if (!time_ok(ms)) fail("stage " + std::to_string(st.stage) + ": a time of " + std::to_string(ms) + " ms");
    }
    if (st.peak_alloc_bytes < 0) fail("stage " + std::to_string(st.stage) + ": a negative peak memory");
  }
}

}  // namespace

StepRates step_rates(const config::Scenario& s, const model::StepModel& m, double step_s) {
  const auto& st = s.strategy;
  StepRates r;
  r.tokens_per_iter = st.seq_len * st.global_batch_size();
  // SimuMax floors the per-GPU theoretical FLOPs (Python //).
  const double theory = std::floor(m.flops_per_token * static_cast<double>(r.tokens_per_iter) /
                                   static_cast<double>(st.world_size));
  r.tflops_per_gpu = theory / step_s / common::kTera;
  r.mfu = r.tflops_per_gpu / s.system.op.at("default").tflops;
  r.tokens_per_s = static_cast<double>(r.tokens_per_iter) / step_s;
  return r;
}

Summary summarize(const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
                  const graph::TaskGraph& g, const std::string& executor, const executor::StepTiming& timing,
                  const std::vector<memory::RankMemory>& mem) {
  const auto& st = s.strategy;
  Summary out;
  out.name = s.name;
  out.model_name = s.model.model_name;
  out.executor = executor;
  out.world_size = st.world_size;
  out.tp = st.tp_size, out.cp = st.cp_size, out.pp = st.pp_size, out.dp = st.dp_size();
  out.ep = st.ep_size, out.etp = st.etp_size, out.edp = st.edp_size();
  out.micro_batch_size = st.micro_batch_size, out.micro_batch_num = st.micro_batch_num;
  out.global_batch_size = st.global_batch_size(), out.seq_len = st.seq_len;
  out.padded_vocab = m.padded_vocab;
  out.nets = c.nets;
  out.straggler_ratio = c.straggler_ratio;
  out.num_tasks = g.size();
  out.fidelity = config::to_string(s.strategy.fidelity);
  out.pipeline_schedule = s.strategy.pipeline_schedule;
  bool all_interpolated = true;
  out.miss_efficiency = list_misses(m, c, all_interpolated);
  out.misses_interpolated = s.strategy.megatron() && all_interpolated;
  for (const auto& [op, keys] : out.miss_efficiency) out.efficiency_table_misses += static_cast<int64_t>(keys.size());
  if (s.strategy.megatron()) {
    out.calibration = s.system.calibration;
    out.kernel_floor_us = s.system.calibration.kernel_floor_us.value_or(s.system.bandwidth.at("default").latency_us);
    out.calibration_source = s.system.calibration_source;
  }
  if (cost::host_lane(s)) out.host = s.system.host;
  out.step_time_ms = common::ms(timing.makespan_s);
  // The pipeline ends when the last forward, backward or transfer of a micro-batch does (the flush barrier,
  // unless overlapped DP buckets are still in flight: their exposed tail is DP time, not pipeline bubble).
  out.pp_time_ms = common::ms(timing.pipeline_end_s);
  out.flops_per_token = m.flops_per_token;
  const StepRates rates = step_rates(s, m, timing.makespan_s);
  out.tokens_per_iter = rates.tokens_per_iter;
  out.tflops_per_gpu = rates.tflops_per_gpu;
  out.mfu = rates.mfu;
  out.tokens_per_s = rates.tokens_per_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / static_cast<double>(st.world_size);
  out.gpu_memory_bytes = s.system.mem_gbs * common::kGiB;
  out.gpu_memory_gib = s.system.mem_gbs;
  out.param_count = param_counts(s, m).all();
  out.dtype = std::string(simumax_dtype(st)) + ", grad_reduce " + (st.grad_reduce_in_bf16 ? "bf16" : "fp32");
  out.recompute = simumax_recompute_status(st);
  out.stages.resize(st.pp_size);
  for (int64_t p = 0; p < st.pp_size; ++p) {
    out.stages[p].stage = static_cast<int>(p);
    fill_stage_times(out.stages[p], s, m, c, out.pp_time_ms);
  }
  // Per-rank timeline facts, folded into their stage (ranks of a stage are identical without contention).
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    StageSummary& ss = out.stages[g.pp_stage[r]];
    ss.duration_ms = std::max(ss.duration_ms, common::ms(timing.ranks[r].end_s));
    ss.pipeline_end_ms = std::max(ss.pipeline_end_ms, common::ms(timing.ranks[r].pipeline_end_s));
    const auto& rm = mem[r];
    if (rm.peak_allocated_bytes > ss.peak_alloc_bytes) {
      ss.peak_alloc_bytes = rm.peak_allocated_bytes;
      ss.peak_reserved_bytes = rm.peak_reserved_bytes;
      ss.weight_bytes = rm.static_bytes.weight_bytes;
      ss.grad_bytes = rm.static_bytes.grad_bytes;
      ss.optimizer_state_bytes = rm.static_bytes.optimizer_state_bytes;
      ss.other_bytes = rm.static_bytes.other_bytes;
      ss.workspace_bytes = rm.static_bytes.workspace_bytes;
      ss.activation_bytes_at_peak = rm.activation_bytes_at_peak;
      ss.transient_bytes_at_peak = rm.transient_bytes_at_peak;
      ss.peak_task = rm.peak_task == graph::kNoGroup ? "" : g.names[g.tasks[rm.peak_task].name];
      ss.cached_micro_batches = rm.cached_micro_batches;
    }
  }
  for (const auto& ss : out.stages) {
    out.peak_alloc_bytes_max = std::max(out.peak_alloc_bytes_max, ss.peak_alloc_bytes);
    out.peak_reserved_bytes_max = std::max(out.peak_reserved_bytes_max, ss.peak_reserved_bytes);
  }
  judge_fit(out, 0);
  check_invariants(out, mfu_bound(s));
  return out;
}

void judge_fit(Summary& s, double margin_bytes) {
  s.memory_margin_bytes = margin_bytes;
  s.fits = true;
  for (size_t i = 0; i < s.stages.size(); ++i) {
    auto& st = s.stages[i];
    st.headroom_bytes = s.gpu_memory_bytes - margin_bytes - st.peak_reserved_bytes;
    st.fits = st.headroom_bytes >= 0;
    s.fits = s.fits && st.fits;
    if (i == 0 || st.headroom_bytes < s.headroom_bytes) s.headroom_bytes = st.headroom_bytes;
  }
}

double headroom_percent(const Summary& s, double headroom_bytes) {
  return s.gpu_memory_bytes > 0 ? 100.0 * headroom_bytes / s.gpu_memory_bytes : 0.0;
}

}  // namespace simumax::report
