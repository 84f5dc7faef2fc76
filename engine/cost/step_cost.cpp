#include "engine/cost/step_cost.hpp"

#include <algorithm>
#include <cmath>

#include "engine/common/error.hpp"
#include "engine/cost/kernel_cost.hpp"
#include "engine/cost/overlap_cost.hpp"

namespace simumax::cost {

using model::Coll;
using model::CommGroup;

double OpCost::pass_total(int pass) const {
  double tp = 0, other = 0;
  for (const auto& c : comm[pass]) (c.comm->group == CommGroup::kTp ? tp : other) += c.seconds;
  // Megatron's tp-comm-overlap pipelines the gather / reduce-scatter with the GEMM in chunks.
  return (tp_overlap ? std::max(seconds[pass], tp) : seconds[pass] + tp) + other;
}

double OpCost::fwd_total() const { return pass_total(0); }

double OpCost::bwd_total() const {
  double t = pass_total(1) + pass_total(2) + recompute_seconds;
  if (recompute_comm) {
    double tp = 0;
    for (const auto& c : comm[0]) (tp_overlap && c.comm->group == CommGroup::kTp ? tp : t) += c.seconds;
    // The replay is the forward again: with tp-comm-overlap its TP collectives run beside it (+0 without).
    t += std::max(recompute_seconds, tp) - recompute_seconds;
  }
  return t;
}

double DpCost::total_seconds() const {
  return static_cast<double>(reduce_scatter_buckets) * reduce_scatter.seconds +
         static_cast<double>(all_gather_buckets) * all_gather.seconds +
         static_cast<double>(all_reduce_buckets) * all_reduce.seconds;
}

namespace {

struct GroupInfo {
  int64_t size;
  const std::string* net;
};

GroupInfo group_info(const config::StrategyConfig& st, const Nets& nets, CommGroup g) {
  switch (g) {
    case CommGroup::kTp: return {st.tp_size, &nets.tp};
    case CommGroup::kCp: return {st.cp_size, &nets.cp};
    case CommGroup::kEp: return {st.ep_size, &nets.ep};
    case CommGroup::kEtp: return {st.etp_size, &nets.etp};
  }
  return {1, &nets.tp};
}

// A GEMM whose shape is not in the table falls back to efficient_factor; 0 there (the shipped B200 fp8
// tables) would mean an infinite time, so the user must supply a measured value.
[[noreturn]] void unusable_efficiency(const config::Scenario& s, const model::PassWork& w) {
  const auto where = s.system_origin.locate("accelerator");
  auto it = s.system.op.find(w.compute_op);
  const std::string name = it != s.system.op.end() ? w.compute_op : "default";
  throw common::ConfigError(where.file, where.pointer + "/op/" + name + "/efficient_factor",
                            "is 0 (or tflops is 0) and the shape \"" + w.shape_key +
                                "\" is not in accurate_efficient_factor, so this " + w.compute_op +
                                " kernel has no usable efficiency; add the shape's measured efficiency or a "
                                "fallback efficient_factor > 0");
}

OpCost cost_op(const config::Scenario& s, const Nets& nets, const model::Op& op) {
  OpCost c;
  for (int p = 0; p < schedule::kNumOpPasses; ++p) {
    const KernelTime k = kernel_time(s.system, op.work[p], s.strategy.fidelity);
    if (!std::isfinite(k.seconds)) unusable_efficiency(s, op.work[p]);
    c.seconds[p] = k.seconds;
    c.table_hit[p] = k.table_hit;
    c.interpolated[p] = k.interpolated;
    // Megatron fidelity: the kernels Megatron-LM + TE run beside this op (model/op_builder_megatron.cpp), serial
    // with it on the compute stream.
    for (double bytes : op.extra_kernel_bytes[p]) c.seconds[p] += extra_kernel_seconds(s.system, bytes);
    for (const auto& cm : op.comm[p]) {
      const GroupInfo gi = group_info(s.strategy, nets, cm.group);
      const CommTime t = comm_time(s.system, s.strategy, cm.coll, cm.bytes, gi.size, *gi.net, CommStage::kLayer,
                                   cm.stage);
      c.comm[p].push_back(CommCost{&cm, gi.size, t.seconds, t.latency_seconds, *gi.net});
    }
  }
  c.tp_overlap = s.strategy.megatron_tp_comm_overlap;
  if (op.recompute && !op.variance) {
    c.recompute_seconds = c.seconds[0];
    c.recompute_comm = op.recompute_comm;
  }
  return c;
}

// The collectives of `n_rs` gradient buckets of `rs_bytes` and `n_ag` parameter buckets of `ag_bytes`: a
// reduce-scatter and an all-gather each under ZeRO >= 1 (the distributed optimizer), else an all-reduce per
// gradient bucket.
void set_buckets(const config::Scenario& s, DpCost& d, int64_t n_rs, double rs_bytes, int64_t n_ag, double ag_bytes,
                 CommStage stage) {
  const auto& st = s.strategy;
  if (st.zero_state >= 1) {
    d.reduce_scatter_buckets = n_rs;
    d.all_gather_buckets = n_ag;
    d.reduce_scatter = comm_time(s.system, st, Coll::kReduceScatter, rs_bytes, d.group_size, d.net, stage);
    d.all_gather = comm_time(s.system, st, Coll::kAllGather, ag_bytes, d.group_size, d.net, stage);
  } else {
    d.all_reduce_buckets = n_rs;
    d.all_reduce = comm_time(s.system, st, Coll::kAllReduce, rs_bytes, d.group_size, d.net, stage);
  }
}

DpCost dp_cost(const config::Scenario& s, double grad_bytes, int64_t n, const std::string& net, CommStage stage) {
  const auto& st = s.strategy;
  DpCost d;
  d.group_size = n;
  d.net = net;
  const double ag_bytes = grad_bytes / static_cast<double>(st.main_grad_bytes()) *
                          static_cast<double>(st.element_bytes());
  if (st.megatron() && !st.overlaps_dp()) {
    // distributed_data_parallel.py, DistributedDataParallel.__init__: without overlap_grad_reduce the bucket
    // size is None, so the whole gradient buffer is one bucket, reduced (and its parameters gathered) in one
    // collective each.
    const int64_t count = grad_bytes > 0 ? 1 : 0;
    d.bucket_bytes = grad_bytes;
    set_buckets(s, d, count, grad_bytes, count, ag_bytes, stage);
    return d;
  }
  const double bucket = static_cast<double>(std::max<int64_t>(40000000, 1000000 * n) * 4);
  d.bucket_bytes = bucket;
  // SimuMax charges every bucket in full (the last partial one rounded up).
  auto buckets = [&](double bytes) {
    return static_cast<int64_t>(std::floor((bytes - 1) / bucket)) + 1;
  };
  int64_t n_ag = buckets(ag_bytes);
  if (s.model.is_moe()) n_ag *= 2;  // SimuMax doubles the all-gather count of both families for MoE models
  set_buckets(s, d, buckets(grad_bytes), bucket, n_ag, bucket, stage);
  return d;
}

OptimizerCost optimizer_cost(const config::Scenario& s, const model::ChunkParams& p) {
  const auto& st = s.strategy;
  const double grads = static_cast<double>(p.grad_bytes);
  const double state = p.optimizer_state_bytes;
  const double chunk = st.grad_reduce_in_bf16 ? state / 6 : state / 3;
  const double wbytes = state / 3;
  auto m = [&](double b) { return memory_seconds(s.system, "default", b); };
  OptimizerCost o;
  o.parts = {{"zero_grad", m(grads)},
             {"l2_norm", m(grads)},
             {"scale", st.dp_size() * st.cp_size > 1 ? m(2 * grads) : 0.0},
             {"l2_norm_after", m(chunk)},
             {"clip", m(2 * chunk)},
             {"adam", m(chunk + 3 * state)},
             {"copy_to_bf16", m(1.5 * wbytes)}};
  for (const auto& [name, t] : o.parts) o.seconds += t;
  return o;
}

// The distributed optimizer's step as Megatron runs it (megatron fidelity), per chunk: N_buf gradient-buffer
// elements, N_sh of them in this rank's shard, T parameter tensors (each grouped linear holds one per local
// expert). Kernel counts follow the multi-tensor launchers: multi_tensor_l2norm / scale take 320 blocks of
// 65,536 elements per launch; TE's FusedAdam takes 36 tensors or ~20.97 M elements per launch.
OptimizerCost megatron_optimizer_cost(const config::Scenario& s, const model::Chunk& chunk, const ChunkCost& cc) {
  const auto& st = s.strategy;
  const auto& p = chunk.params;
  int64_t tensors = 0;
  for (size_t b = 0; b < chunk.blocks.size(); ++b) tensors += cc.blocks[b]->param_tensors * chunk.blocks[b].repeat;
  const bool sharded = st.zero_state >= 1;
  const double dense = static_cast<double>(p.dense_numel), moe = static_cast<double>(p.moe_numel);
  const double buf = dense + moe;
  const double shard = sharded ? dense / static_cast<double>(st.dp_size() * st.cp_size) +
                                     moe / static_cast<double>(st.edp_size())
                               : buf;
  const double mg = static_cast<double>(st.main_grad_bytes());
  const double buffers = moe > 0 ? 2 : 1;
  const double shard_tensors = sharded ? std::ceil(static_cast<double>(tensors) / static_cast<double>(st.dp_size())) + 1
                                       : static_cast<double>(tensors);
  double all_launches = 0;
  auto k = [&](double bytes, double launches) {
    all_launches += launches;
    return launches * extra_kernel_seconds(s.system, launches > 0 ? bytes / launches : 0);
  };
  const double mt = std::max(1.0, std::ceil(shard / (320.0 * 65536.0)));
  const double adam = std::max({1.0, std::ceil(shard_tensors / 36.0), std::ceil(shard / 20.97e6)});
  constexpr double kTinyBytes = 64;
  OptimizerCost o;
  // param_and_grad_buffer.py _ParamAndGradBuffer.reset: one memset per buffer.
  o.parts.emplace_back("zero_grad", k(buf * mg, buffers));
  // _ParamAndGradBucketGroup.check_grads: the norm of each buffer, isnan and isinf tested on the host.
  o.parts.emplace_back("check_grads", k(buf * mg, buffers) + k(kTinyBytes, 4 * buffers));
  // start_grad_sync: grad_data *= 1/dp before the reduce-scatter.
  o.parts.emplace_back("scale", st.dp_size() * st.cp_size > 1 ? k(2 * buf * mg, buffers) : 0.0);
  // clip_grads.py get_grad_norm_fp32: multi_tensor_l2norm over the shard, the all-reduce's helpers and .item().
  o.parts.emplace_back("l2_norm", k(4 * shard, mt) + k(kTinyBytes, 4));
  // clip_grad_by_total_norm_fp32: multi_tensor_scale (the norm of a new run is above the clip value).
  o.parts.emplace_back("clip", k(8 * shard, mt));
  // TE FusedAdam over fp32 main parameters: reads parameter, gradient, m, v; writes parameter, m, v.
  o.parts.emplace_back("adam", k(28 * shard, adam));
  // distrib_optimizer.py _copy_main_params_to_model_params: one copy_ per parameter shard, fp32 -> bf16.
  o.parts.emplace_back("copy_to_bf16", k(6 * shard, shard_tensors));
  for (const auto& [name, t] : o.parts) o.seconds += t;
  // Each of them launched by the host, one ATen call each (the multi-tensor launchers: one call per launch).
  o.host_seconds = launch_seconds(s.system, all_launches);
  return o;
}

}  // namespace

double straggler_ratio(const config::Scenario& s) {
  const auto& st = s.strategy;
  if (!st.enable_straggler_model) return 1.0;
  const int64_t npn = std::max<int64_t>(1, s.system.num_per_node);
  const int64_t nodes = (st.world_size + npn - 1) / npn;
  const int64_t n = std::max<int64_t>(1, std::min({nodes, st.dp_size(), st.edp_size()}));
  if (n <= 1) return 1.0;
  const double l2 = std::log2(static_cast<double>(n));
  return 1.0 + l2 / (l2 + 1.0) * 0.09 * std::sqrt(l2);
}

StepCost cost_step(const config::Scenario& s, const model::StepModel& m, CostCache* cache) {
  const auto& st = s.strategy;
  StepCost sc;
  sc.nets = select_nets(st, s.system);
  CostCache own;
  if (cache == nullptr) cache = &own;
  for (const auto& chunk : m.chunks) {
    ChunkCost cc;
    for (const auto& block : chunk.blocks) {
      auto bc = cache->get(block.ops, [&] {
        BlockCost b;
        for (const auto& op : *block.ops) {
          if (op.dense_numel + op.moe_numel != 0) {
            const bool grouped =
                op.type == model::OpType::kGroupLinearCol || op.type == model::OpType::kGroupLinearRow;
            b.param_tensors += grouped ? s.model.expert_num / s.strategy.ep_size : 1;
          }
          b.ops.push_back(cost_op(s, sc.nets, op));
          b.fwd_seconds += b.ops.back().fwd_total();
          b.bwd_seconds += b.ops.back().bwd_total();
          b.wgrad_seconds += b.ops.back().wgrad_seconds();
        }
        b.host = host_block(s, block.kind, *block.ops, b.ops);
        return b;
      });
      cc.fwd_seconds += bc->fwd_seconds * block.repeat;
      cc.bwd_seconds += bc->bwd_seconds * block.repeat;
      cc.wgrad_seconds += bc->wgrad_seconds * block.repeat;
      cc.host.add(bc->host, block.repeat);
      cc.blocks.push_back(std::move(bc));
    }
    add_overlap(s, sc.nets, chunk, cc);
    const auto& p = chunk.params;
    cc.dense_dp = dp_cost(s, static_cast<double>(p.dense_grad_bytes), st.dp_size() * st.cp_size, sc.nets.dp,
                          CommStage::kDenseDp);
    cc.moe_dp = dp_cost(s, static_cast<double>(p.moe_grad_bytes), st.edp_size(), sc.nets.edp, CommStage::kExpertDp);
    if (st.fsdp()) cc.dense_dp = cc.moe_dp = DpCost{};  // FSDP's DP work is per layer
    cc.optimizer = st.megatron() ? megatron_optimizer_cost(s, chunk, cc) : optimizer_cost(s, p);
    sc.chunks.push_back(std::move(cc));
  }
  if (st.pp_size > 1) {
    sc.p2p = comm_time(s.system, st, Coll::kP2p, m.p2p_bytes, 2, sc.nets.pp, CommStage::kLayer);
  }
  // finalize_model_grads.py: `_get_shared_word_embedding_weight` returns the table when it is shared with the
  // output layer or MTP is on; `_allreduce_embedding_grad` all-reduces its whole main_grad (this TP rank's rows)
  // over the embedding group, the first and last stage of each pipeline (parallel_state.py, one member when
  // pp == 1). Position embeddings' group holds the first stage only, so GPT has no second all-reduce.
  const bool shared_table = !s.model.untie_embeddings_and_output_weights || s.model.mtp_num_layers > 0;
  if (st.megatron() && st.pp_size > 1 && shared_table) {
    const double bytes = static_cast<double>(m.padded_vocab / st.tp_size) * static_cast<double>(s.model.hidden_size) *
                         static_cast<double>(st.main_grad_bytes());
    sc.embedding_grads = comm_time(s.system, st, Coll::kAllReduce, bytes, 2, sc.nets.pp, CommStage::kLayer);
  }
  sc.straggler_ratio = straggler_ratio(s);
  return sc;
}

}  // namespace simumax::cost
