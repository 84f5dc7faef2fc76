#include "engine/report/simumax_results.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/common/units.hpp"
#include "engine/report/simumax_strings.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::ordered_json;

// Python's str(float): the shortest text that reads back the same, with ".0" on a whole number.
std::string py_float(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// SimuMax's chunk names (perf_llm.py FIRST_CHUNK, ...) and mem_result's stage keys; the stage each stands for.
struct StageRef {
  const char* chunk;
  const char* mem_key;
  int stage;
};
std::vector<StageRef> stage_refs(int64_t pp) {
  std::vector<StageRef> out = {{"first_stage_chunk", "first_stage", 0}};
  if (pp > 2) out.push_back({"middle_stage_chunk", "middle_stage", 1});
  if (pp > 1) out.push_back({"last_stage_chunk", "last_stage", static_cast<int>(pp - 1)});
  return out;
}

// One micro-batch of a stage, summed over the ops of the chunks it computes (PerfLLM's batch_compute_stat).
struct BatchStat {
  double fwd_flops = 0, recompute_flops = 0, bwd_flops = 0;
  double fwd_mem = 0, recompute_mem = 0, bwd_mem = 0;
  double fwd_compute_s = 0, bwd_compute_s = 0, recompute_compute_s = 0;
  double fwd_net_s = 0, bwd_net_s = 0, recompute_net_s = 0;
  double activation_cache_bytes = 0;  // live after one micro-batch's forward
};

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

double comm_seconds(const std::vector<cost::CommCost>& cs) {
  double s = 0;
  for (const auto& c : cs) s += c.seconds;
  return s;
}

BatchStat batch_stat(const SimumaxView& v, int stage) {
  BatchStat b;
  for (int ci : v.model.compute_chunks[stage]) {
    const auto& chunk = v.model.chunks[ci];
    for (size_t k = 0; k < chunk.blocks.size(); ++k) {
      const auto& blk = chunk.blocks[k];
      const auto& bc = *v.cost.chunks[ci].blocks[k];
      const double n = blk.repeat;
      b.activation_cache_bytes += static_cast<double>(model::span_of(blk.program->forward, blk.repeat).delta);
      for (size_t o = 0; o < blk.ops->size(); ++o) {
        const auto& op = (*blk.ops)[o];
        const auto& oc = bc.ops[o];
        b.fwd_flops += n * op.work[0].flops;
        b.bwd_flops += n * (op.work[1].flops + op.work[2].flops);
        b.fwd_mem += n * sum(op.work[0].mem_bytes);
        b.bwd_mem += n * (sum(op.work[1].mem_bytes) + sum(op.work[2].mem_bytes));
        b.fwd_compute_s += n * oc.seconds[0];
        b.bwd_compute_s += n * (oc.seconds[1] + oc.seconds[2]);
        b.fwd_net_s += n * comm_seconds(oc.comm[0]);
        b.bwd_net_s += n * (comm_seconds(oc.comm[1]) + comm_seconds(oc.comm[2]));
        if (oc.recompute_seconds > 0) {
          b.recompute_flops += n * op.work[0].flops;
          b.recompute_mem += n * sum(op.work[0].mem_bytes);
          b.recompute_compute_s += n * oc.recompute_seconds;
          if (oc.recompute_comm) b.recompute_net_s += n * comm_seconds(oc.comm[0]);
        }
      }
    }
  }
  return b;
}

// Static memory of a stage, split as mem_result's model_mem_detail (model/step_model.cpp chunk_params).
struct StageStatic {
  double dense_w = 0, moe_w = 0, dense_g = 0, moe_g = 0, dense_s = 0, moe_s = 0, dummy = 0;
  double workspaces = 0;  // ours: cuBLAS workspaces (megatron fidelity, system "workspaces"); 0 in SimuMax
  std::set<std::tuple<int64_t, int64_t, int64_t>> dummy_shapes;
  double all() const { return dense_w + moe_w + dense_g + moe_g + dense_s + moe_s + dummy + workspaces; }
};

StageStatic stage_static(const SimumaxView& v, int stage) {
  const auto& st = v.scenario.strategy;
  const auto& chunk = v.model.chunks[v.model.chunk_of_stage[stage]];
  StageStatic s;
  for (const auto& blk : chunk.blocks) {
    for (const auto& op : *blk.ops) {
      s.dense_w += static_cast<double>(op.dense_numel * op.weight_elem_bytes * blk.repeat);
      s.moe_w += static_cast<double>(op.moe_numel * op.weight_elem_bytes * blk.repeat);
      if (op.te_dummy_wgrad[0] > 0) s.dummy_shapes.insert({op.te_dummy_wgrad[0], op.te_dummy_wgrad[1], op.te_dummy_wgrad[2]});
    }
  }
  if (st.zero_state >= 3) {
    s.dense_w /= static_cast<double>(st.dp_size() * st.cp_size);
    s.moe_w /= static_cast<double>(st.dp_size() * st.cp_size);
  }
  const auto& p = chunk.params;
  s.dense_g = static_cast<double>(p.dense_grad_bytes);
  s.moe_g = static_cast<double>(p.moe_grad_bytes);
  s.dense_s = p.dense_state_bytes;
  s.moe_s = p.moe_state_bytes;
  s.dummy = static_cast<double>(p.te_dummy_wgrad_bytes);
  s.workspaces = static_cast<double>(v.model.workspace_bytes);
  return s;
}

Json family_mem(double w, double g, double st) {
  return Json{{"all_mem", human_bytes(w + g + st)},
              {"detail", {{"weight_bytes", human_bytes(w)}, {"grad_bytes", human_bytes(g)}, {"state_bytes", human_bytes(st)}}}};
}

const char* peak_phase(const std::string& task) {
  if (task.find("recompute") != std::string::npos) return "recompute";
  if (task.find(".bwd") != std::string::npos) return "backward";
  if (task.find(".fwd") != std::string::npos) return "forward";
  return "step";
}

Json stage_mem(const SimumaxView& v, int stage) {
  const auto& st = v.scenario.strategy;
  const StageSummary& ss = v.summary.stages[stage];
  const StageStatic s = stage_static(v, stage);
  const BatchStat b = batch_stat(v, stage);
  Json j;
  j["micro_batch_num"] = st.micro_batch_num;
  j["micro_batch_size"] = st.micro_batch_size;
  j["cached_micro_batch_num"] = ss.cached_micro_batches;
  const std::string g = simumax_granularity(st);
  j["parallel_config"] = {
      {"parallelism", simumax_parallelism(st)},
      {"fp8", st.fp8},
      {"recompute_status",
       {{"layer_num", v.scenario.model.layer_num},
        {"actual_layer_num", v.model.chunks[v.model.chunk_of_stage[0]].num_layers},
        {"recompute_layer", st.recompute_layer_num},
        {"recompute_recompute_granularity", g.empty() ? Json(nullptr) : Json(g)}}}};
  j["model_mem"] = human_bytes(s.all());
  Json shapes = Json::array();
  for (const auto& [r, c, e] : s.dummy_shapes) shapes.push_back({r, c, e});
  j["model_mem_detail"] = {
      {"dense", family_mem(s.dense_w, s.dense_g, s.dense_s)},
      {"moe", family_mem(s.moe_w, s.moe_g, s.moe_s)},
      {"te_dummy_wgrad",
       {{"all_mem", human_bytes(s.dummy)},
        {"detail",
         {{"dummy_wgrad_bytes", human_bytes(s.dummy)},
          {"shape_count", static_cast<int64_t>(s.dummy_shapes.size())},
          {"shapes", shapes}}}}}};
  // Not SimuMax's: only where modelled, so a SimuMax config's file keeps SimuMax's keys.
  if (s.workspaces != 0) j["model_mem_detail"]["cublas_workspaces"] = {{"all_mem", human_bytes(s.workspaces)}};
  // With an interleaved pipeline the cached units are virtual-chunk forwards: a chunk's share.
  const double cache_bytes = b.activation_cache_bytes / static_cast<double>(v.model.virtual_chunks());
  char cache[64];
  std::snprintf(cache, sizeof cache, "%.4f GB", cache_bytes / common::kGiB);
  j["fwd_activation_cache_per_micro_batch"] = cache;
  // SimuMax's identity peak = model_mem + (n - 1) * cache + peak_activation: the activation peak is what our
  // peak holds beyond the static memory and the other micro-batches' caches.
  const double peak = static_cast<double>(ss.peak_alloc_bytes);
  j["peak_activation_mem_in_1F1B"] =
      human_bytes(peak - s.all() - static_cast<double>(ss.cached_micro_batches) * cache_bytes);
  j["peak_mem"] = human_bytes(peak);
  j["peak_mem_with_reserved"] = human_bytes(ss.peak_reserved_bytes);
  j["memory_reserved_ratio"] = py_float(st.mem_factor);
  j["peak_path"] = ss.peak_task + ", stage=[" + peak_phase(ss.peak_task) + "]";
  return j;
}


// The DP communication of one parameter family (PerfLLM._compute_dp_time's compute_dp_helper), times in ms.
Json dp_family(const SimumaxView& v, const cost::DpCost& d, double grad_bytes, double param_bytes) {
  const bool moe_model = v.scenario.model.is_moe();
  Json j;
  j["dp_comm_time"] = human_ms(common::ms(d.total_seconds()));
  j["dp_comm_exposed_time"] = human_ms(common::ms(d.total_seconds()));
  j["dp_comm_rs_size"] = d.group_size > 1 ? grad_bytes : 0.0;
  j["dp_comm_ag_size"] = d.group_size > 1 ? param_bytes : 0.0;
  j["dp_comm_num_gather"] = moe_model ? 2 : 1;
  if (v.scenario.strategy.zero_state >= 1) {
    j["details"] = {
        {"reduce_scatter_time", human_ms(common::ms(static_cast<double>(d.reduce_scatter_buckets) * d.reduce_scatter.seconds))},
        {"all_gather_time", human_ms(common::ms(static_cast<double>(d.all_gather_buckets) * d.all_gather.seconds))}};
  }
  return j;
}

// Our optimizer parts under PerfLLM._compute_optim_time's keys (a part SimuMax lacks keeps its name + "_time").
std::string simumax_optimizer_key(const std::string& part) {
  static const std::pair<const char*, const char*> kKeys[] = {
      {"zero_grad", "zero_grad_buffer_time"},       {"l2_norm", "l2_norm_before_reduce_time"},
      {"scale", "mul_before_reduce_time"},          {"l2_norm_after", "l2_norm_after_reduce_time"},
      {"clip", "grads_clip_after_reduce_time"},     {"adam", "adam_time"},
      {"copy_to_bf16", "copy_main_params_to_model_params_time"}};
  for (const auto& [ours, theirs] : kKeys) {
    if (part == ours) return theirs;
  }
  return part + "_time";
}

int p2p_links(int64_t pp, int stage) {
  if (pp == 1) return 0;
  return stage == 0 || stage == pp - 1 ? 2 : 4;
}

struct StageCost {
  Json comm, compute, breakdown;
};

// batch_compute_stat: one micro-batch's FLOPs and bytes (compute_info) and times (cost_info); no communication
// is hidden behind compute in SimuMax's model, so each exposed time is the time.
Json batch_json(const BatchStat& b) {
  const auto ms = [](double s) { return human_ms(common::ms(s)); };
  Json info = {{"fwd_flops", human_count(b.fwd_flops)},           {"recompute_flops", human_count(b.recompute_flops)},
               {"bwd_flops", human_count(b.bwd_flops)},           {"fwd_accessed_mem", human_bytes(b.fwd_mem)},
               {"recompute_accessed_mem", human_bytes(b.recompute_mem)}, {"bwd_accessed_mem", human_bytes(b.bwd_mem)}};
  Json cost = {{"fwd_compute_time", ms(b.fwd_compute_s)},
               {"bwd_compute_time", ms(b.bwd_compute_s)},
               {"recompute_compute_time", ms(b.recompute_compute_s)},
               {"fwd_net_time", ms(b.fwd_net_s)},
               {"bwd_net_time", ms(b.bwd_net_s)},
               {"recompute_net_time", ms(b.recompute_net_s)},
               {"fwd_net_exposed_time", ms(b.fwd_net_s)},
               {"bwd_net_exposed_time", ms(b.bwd_net_s)},
               {"recompute_net_exposed_time", ms(b.recompute_net_s)},
               {"fwd_time", ms(b.fwd_compute_s + b.fwd_net_s)},
               {"bwd_time", ms(b.bwd_compute_s + b.bwd_net_s)},
               {"recompute_time", ms(b.recompute_compute_s + b.recompute_net_s)}};
  return {{"compute_info", info}, {"cost_info", cost}};
}

StageCost stage_cost(const SimumaxView& v, int stage) {
  const auto& st = v.scenario.strategy;
  const double mbc = static_cast<double>(st.micro_batch_num);
  const int ci = v.model.chunk_of_stage[stage];
  const auto& cc = v.cost.chunks[ci];
  const auto& params = v.model.chunks[ci].params;
  const BatchStat b = batch_stat(v, stage);
  const double elem = static_cast<double>(st.element_bytes()), mg = static_cast<double>(st.main_grad_bytes());
  const double dp_s = cc.dense_dp.total_seconds() + cc.moe_dp.total_seconds();
  StageCost out;
  out.comm["dp_comm_time"] = {
      {"dp_comm_exposed_time", human_ms(common::ms(dp_s))},
      {"dense", dp_family(v, cc.dense_dp, static_cast<double>(params.dense_grad_bytes),
                          static_cast<double>(params.dense_grad_bytes) / mg * elem)},
      {"moe", dp_family(v, cc.moe_dp, static_cast<double>(params.moe_grad_bytes),
                        static_cast<double>(params.moe_grad_bytes) / mg * elem)}};
  const double intra_ms = common::ms(b.fwd_net_s + b.bwd_net_s + b.recompute_net_s);
  out.comm["intra_comm_time"] = {{"intra_exposed_time_per_batch", human_ms(intra_ms)},
                                 {"intra_exposed_time", human_ms(intra_ms * mbc)}};
  const double inter_ms = p2p_links(st.pp_size, stage) * common::ms(v.cost.p2p.seconds);
  out.comm["inter_comm_time"] = {{"inter_exposed_time_per_batch", human_ms(inter_ms)},
                                 {"inter_exposed_time", human_ms(inter_ms * mbc)}};
  const auto ms = [](double s) { return human_ms(common::ms(s)); };
  Json optim = {{"optim_time", ms(cc.optimizer.seconds)}, {"optim_exposed_time", ms(cc.optimizer.seconds)}};
  for (const auto& [name, seconds] : cc.optimizer.parts) optim[simumax_optimizer_key(name)] = ms(seconds);
  out.compute = {{"batch_compute_stat", batch_json(b)},
                 {"fwd_compute_time", ms(b.fwd_compute_s * mbc)},
                 {"recompute_time", ms(b.recompute_compute_s * mbc)},
                 {"bwd_compute_time", ms(b.bwd_compute_s * mbc)},
                 {"optim_time", optim},
                 {"fwd_flops", human_count(b.fwd_flops * mbc)},
                 {"recompute_flops", human_count(b.recompute_flops * mbc)},
                 {"bwd_flops", human_count(b.bwd_flops * mbc)},
                 {"model_flops", human_count((b.fwd_flops + b.bwd_flops) * mbc)}};
  out.breakdown = {{"fwd_compute_time", ms(b.fwd_compute_s * mbc)},
                   {"recompute_time", ms(b.recompute_compute_s * mbc)},
                   {"bwd_compute_time", ms(b.bwd_compute_s * mbc)},
                   {"optim_time", ms(cc.optimizer.seconds)},
                   {"intra_exposed_time", human_ms(intra_ms * mbc)},
                   {"inter_exposed_time", human_ms(inter_ms * mbc)},
                   {"dp_exposed_time", human_ms(common::ms(dp_s))}};
  return out;
}

}  // namespace

std::string simumax_compute_result_json(const SimumaxView& v) {
  const auto& st = v.scenario.strategy;
  const Summary& s = v.summary;
  const int64_t pp = st.pp_size;
  const StageCost first = stage_cost(v, 0);
  Json j;
  j["comm_details"] = first.comm;
  j["compute_details"] = first.compute;
  j["breakdown_result"] = first.breakdown;
  if (pp > 1) j["breakdown_result_last_stage"] = stage_cost(v, static_cast<int>(pp - 1)).breakdown;
  j["all_tokens_per_iter"] = s.tokens_per_iter;
  j["straggle_ratio"] = s.straggler_ratio;
  Json chunks;
  for (const StageRef& r : stage_refs(pp)) {
    const StageSummary& ss = s.stages[r.stage];
    chunks[r.chunk] = {
        {"duration_time(chunk_timexmbc+dp_optim+bubble)", human_ms(ss.duration_ms)},
        {"chunk_time(fwd+bwd)", human_ms(ss.chunk_time_ms)},
        {"dp_and_optim_time", human_ms(ss.dp_comm_ms + ss.optimizer_ms)},
        {"bubble_time", human_ms(ss.bubble_ms)},
        {"straggler_time", human_ms(s.pp_time_ms * (s.straggler_ratio - 1) / s.straggler_ratio)}};
  }
  j["all_chunk_times"] = chunks;
  const double step_s = s.step_time_ms / common::kMsPerSecond;
  const ParamCounts pc = param_counts(v.scenario, v.model);
  j["duration_time_per_iter"] = human_ms(s.step_time_ms);
  j["throughput_per_accelerator"] = s.tokens_per_s_per_gpu;
  j["throughput per GPU (TFLOP/s/GPU)"] = s.tflops_per_gpu;
  j["throughput per GPU per token (TFLOP/s/GPU/token)"] = s.flops_per_token / step_s / common::kTera;
  j["mfu_6nd_with_attn"] = s.mfu;
  j["mfu"] = s.mfu;
  j["moe_param_numel"] = billions(pc.moe);
  const double theory = std::floor(s.flops_per_token * static_cast<double>(s.tokens_per_iter) /
                                   static_cast<double>(st.world_size));
  j["flops_info"] = {{"theory_flops", human_count(theory)}, {"model_flops", first.compute["model_flops"]}};
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f%%", pc.all() > 0 ? 100.0 * pc.activated / pc.all() : 100.0);
  j["param_numel_info"] = {{"dense", billions(pc.dense)},
                           {"moe", billions(pc.moe)},
                           {"all", billions(pc.all())},
                           {"activations", billions(pc.activated)},
                           {"activations_ratio", ratio}};
  return j.dump(2);
}

std::string simumax_mem_result_json(const SimumaxView& v) {
  const int64_t pp = v.scenario.strategy.pp_size;
  if (pp == 1) return stage_mem(v, 0).dump(2);
  Json j;
  for (const StageRef& r : stage_refs(pp)) j[r.mem_key] = stage_mem(v, r.stage);
  return j.dump(2);
}

std::string simumax_base_info_json(const SimumaxView& v) {
  std::string arch = "simumax-sim " + v.summary.fidelity + " fidelity:";
  for (const StageRef& r : stage_refs(v.scenario.strategy.pp_size)) {
    const auto& c = v.model.chunks[v.model.chunk_of_stage[r.stage]];
    arch += std::string(" ") + r.chunk + "(" + (c.has_embedding ? "embedding + " : "") +
            std::to_string(c.num_layers) + " layers" + (c.has_head ? " + head" : "") + ")";
  }
  Json j;
  j["arch"] = arch;
  j["all_param"] = static_cast<int64_t>(closed_form_param_numel(v.scenario.model, v.model.padded_vocab, false));
  j["act_param"] = static_cast<int64_t>(closed_form_param_numel(v.scenario.model, v.model.padded_vocab, true));
  return j.dump(2);
}

std::vector<std::string> write_simumax_results(const std::string& dir, const SimumaxView& v) {
  std::vector<std::string> out;
  for (const auto& [name, text] : {std::pair<const char*, std::string>{"compute_result.json", simumax_compute_result_json(v)},
                                   {"mem_result.json", simumax_mem_result_json(v)},
                                   {"base_info.json", simumax_base_info_json(v)},
                                   {"net_info.json", simumax_net_info_json(v)}}) {
    write_file_atomically(dir + "/" + name, text);
    out.push_back(dir + "/" + name);
  }
  return out;
}

}  // namespace simumax::report
