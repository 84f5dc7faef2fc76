#include "engine/cost/host_cost.hpp"

#include <algorithm>
#include <string_view>

#include "engine/cost/step_cost.hpp"

namespace simumax::cost {

namespace {

bool has_scope(const config::StrategyConfig& st, std::string_view scope) {
  return std::find(st.cuda_graph_scope.begin(), st.cuda_graph_scope.end(), scope) != st.cuda_graph_scope.end();
}

// What a pass of `op` leaves to the host under Megatron's CUDA graphs (transformer_config.py
// cuda_graph_modules): "attn" captures TransformerLayer._forward_attention (the input norm and attention),
// "mlp" / "moe" _forward_mlp of a dense / MoE layer, "moe_router" the MoE layer up to its router,
// "moe_preprocess" MoELayer.preprocess (the dispatcher's token counts: the permutation's own preparation,
// without its host synchronisation), no module the whole layer; "full_iteration" the whole forward and
// backward of every micro-batch (the optimizer is not captured).
enum class Capture { kNone, kPreprocess, kWhole };

Capture capture_of(const config::StrategyConfig& st, model::BlockKind kind, bool moe, const model::Op& op) {
  if (st.cuda_graph_impl == config::CudaGraphImpl::kNone) return Capture::kNone;
  if (has_scope(st, "full_iteration")) return Capture::kWhole;
  if (kind != model::BlockKind::kLayer) return Capture::kNone;
  if (st.cuda_graph_scope.empty()) return Capture::kWhole;
  const std::string_view n = op.name;
  const bool attn = n == "input_layernorm" || n.starts_with("attn.");
  const bool mlp = n == "pre_mlp_layernorm" || n.starts_with("mlp.");
  if ((attn && has_scope(st, "attn")) || (mlp && has_scope(st, moe ? "moe" : "mlp"))) return Capture::kWhole;
  if (moe && (n == "pre_mlp_layernorm" || n == "mlp.router") && has_scope(st, "moe_router")) return Capture::kWhole;
  if (moe && n == "mlp.permutation" && has_scope(st, "moe_preprocess")) return Capture::kPreprocess;
  return Capture::kNone;
}

bool has_kernel(const model::PassWork& w) { return w.flops > 0 || !w.mem_bytes.empty(); }

}  // namespace

void HostTime::add(const HostTime& o, int64_t repeat) {
  const auto r = static_cast<double>(repeat);
  fwd += o.fwd * r, bwd += o.bwd * r, wgrad += o.wgrad * r;
  sync_fwd = sync_fwd || o.sync_fwd;
  sync_bwd = sync_bwd || o.sync_bwd;
}

bool host_lane(const config::Scenario& s) {
  return s.strategy.megatron() && (s.system.host.launch_us > 0 || s.system.host.op_us > 0);
}

double launch_seconds(const config::SystemConfig& sys, double launches) {
  return launches * sys.host.launch_us * 1e-6 / sys.host.cpu_speed;
}

HostTime host_block(const config::Scenario& s, model::BlockKind kind, const model::OpList& ops,
                    std::vector<OpCost>& costs) {
  HostTime sum;
  if (!host_lane(s)) return sum;
  const config::HostConfig& h = s.system.host;
  const bool moe = std::any_of(ops.begin(), ops.end(), [](const model::Op& op) { return op.name == "mlp.router"; });
  const double op_s = h.op_us * 1e-6 / h.cpu_speed;
  bool in_run = false;  // the previous op was captured whole
  for (size_t i = 0; i < ops.size(); ++i) {
    const model::Op& op = ops[i];
    OpCost& c = costs[i];
    const Capture cap = capture_of(s.strategy, kind, moe, op);
    bool dispatched = false;  // op_us once per direction: the module's forward, its autograd node's backward
    for (int p = 0; p < schedule::kNumOpPasses; ++p) {
      const double kernel = has_kernel(op.work[p]) ? 1 : 0;
      const auto extra = static_cast<double>(op.extra_kernel_bytes[p].size());
      const auto comms = static_cast<double>(op.comm[p].size());
      double launches = 0;
      if (cap == Capture::kNone) launches = kernel + extra + comms;
      if (cap == Capture::kPreprocess && p == 0) launches = kernel + comms + 1;  // the preparation: one graph
      if (cap == Capture::kPreprocess && p > 0) launches = kernel + extra + comms;
      if (launches == 0) continue;
      const bool charge = p == 0 || !dispatched;
      if (p > 0) dispatched = true;
      c.host_seconds[p] = (charge ? op_s : 0) + launch_seconds(s.system, launches);
      c.host_sync[p] = op.host_sync[p] && cap == Capture::kNone;
    }
    // A run of captured ops replays one graph forward (charged on its first op) and one backward (its last).
    const bool whole = cap == Capture::kWhole;
    const bool run_ends = whole && (i + 1 == ops.size() || capture_of(s.strategy, kind, moe, ops[i + 1]) !=
                                                               Capture::kWhole);
    if (whole && !in_run && !has_scope(s.strategy, "full_iteration")) c.host_seconds[0] += launch_seconds(s.system, 1);
    if (run_ends && !has_scope(s.strategy, "full_iteration")) c.host_seconds[1] += launch_seconds(s.system, 1);
    in_run = whole;
    const double recompute = c.recompute_seconds > 0 ? c.host_seconds[0] : 0;
    sum.fwd += c.host_seconds[0];
    sum.bwd += c.host_seconds[1] + c.host_seconds[2] + recompute;
    sum.wgrad += c.host_seconds[2];
    sum.sync_fwd = sum.sync_fwd || c.host_sync[0];
    sum.sync_bwd = sum.sync_bwd || c.host_sync[1] || c.host_sync[2] || (recompute > 0 && c.host_sync[0]);
  }
  return sum;
}

}  // namespace simumax::cost
