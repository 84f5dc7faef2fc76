#include "engine/calibrate/trace_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "engine/common/error.hpp"
#include "engine/common/median.hpp"
#include "engine/config/strategy_config.hpp"
#include "engine/cost/comm_cost.hpp"
#include "engine/measure/net_fit.hpp"

namespace simumax::calibrate {

namespace {

using common::median_of;

bool is_gemm(const compare::RealOp& op) { return op.cls == "gemm" || op.cls.starts_with("gemm/"); }

std::string key_of(const compare::GemmShape& s, const std::string& layout, const std::string& dtype) {
  return "b=" + std::to_string(s.b) + ", m=" + std::to_string(s.m) + ", k=" + std::to_string(s.k) +
         ", n=" + std::to_string(s.n) + ", layout=" + layout + ", accumulate=" + (layout == "NT" ? "True" : "False") +
         ", out_dtype=" + dtype;
}

const char* pass_of(const std::string& layout) {
  return layout == "TN" ? "forward" : layout == "NN" ? "dgrad" : "wgrad";
}

}  // namespace

std::string dtype_of(const std::string& t) {
  if (t == "float") return "fp32";
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "fp16";
  if (t == "double") return "fp64";
  return "";
}

std::string layout_of(const compare::RealOp& op, const std::vector<std::pair<int64_t, int64_t>>& forward_weights) {
  if (op.pass != "backward" || !op.gemm) return "TN";
  const std::pair<int64_t, int64_t> out{op.gemm->m, op.gemm->n};
  for (const auto& [k, n] : forward_weights) {
    if (op.gemm->b == 1 && (out == std::pair{k, n} || out == std::pair{n, k})) return "NT";
  }
  return "NN";
}

void add_trace(const std::string& trace, const compare::TraceInsight& insight,
               std::map<std::string, GemmEntry>& entries, std::map<std::string, std::vector<double>>& calls,
               TraceEvidence& evidence) {
  if (!insight.shapes_recorded) ++evidence.traces_without_shapes;
  std::vector<std::pair<int64_t, int64_t>> weights;
  for (const auto& op : insight.ops) {
    if (is_gemm(op) && op.gemm && op.pass == "forward") weights.emplace_back(op.gemm->k, op.gemm->n);
  }
  const std::string file = std::filesystem::path(trace).filename().string();
  for (const auto& op : insight.ops) {
    if (!is_gemm(op) || op.pass == "optimizer") continue;
    evidence.gemm_calls += op.calls;
    const std::string dtype = dtype_of(op.dtype);
    if (!op.gemm || dtype.empty()) {
      evidence.gemm_calls_unshaped += op.calls;
      continue;
    }
    const std::string layout = layout_of(op, weights);
    const std::string key = key_of(*op.gemm, layout, dtype);
    GemmEntry& e = entries[key];
    if (e.key.empty()) {
      e.key = key;
      e.shape = *op.gemm;
      e.pass = pass_of(layout);
      e.source = op.op + " in " + file;
    }
    e.calls += op.calls;
    auto& list = calls[key];
    list.insert(list.end(), op.call_us.begin(), op.call_us.end());
  }
}

TraceEvidence finish(std::map<std::string, GemmEntry> entries, const std::map<std::string, std::vector<double>>& calls,
                     TraceEvidence evidence, double peak_tflops) {
  for (auto& [key, e] : entries) {
    e.median_us = median_of(calls.at(key));
    if (!(e.median_us > 0)) {  // zero-length kernels (a profiler artefact) time nothing
      evidence.gemm_calls_unshaped += e.calls;
      continue;
    }
    e.efficiency = e.shape.flops() / (e.median_us * 1e-6) / (peak_tflops * 1e12);
    evidence.gemm.push_back(e);
  }
  return evidence;
}

double attention_flops(const compare::AttentionShape& s) {
  const double sq = static_cast<double>(s.s) * static_cast<double>(s.s);
  const double base = static_cast<double>(s.b) * static_cast<double>(s.heads) * sq * static_cast<double>(s.dqk + s.dv);
  return (s.backward ? 5 : 2) * base;
}

std::string attention_key(const compare::AttentionShape& s, bool qkv_contiguous) {
  return "batch=" + std::to_string(s.b) + ", seq_len=" + std::to_string(s.s) + ", head_num=" + std::to_string(s.heads) +
         ", kv_head_num=" + std::to_string(s.kv_heads) + ", qk_head_dim=" + std::to_string(s.dqk) +
         ", v_head_dim=" + std::to_string(s.dv) + ", qkv_contiguous=" + (qkv_contiguous ? "True" : "False");
}

void add_attention(const std::string& trace, const compare::TraceInsight& insight, bool qkv_contiguous,
                   std::map<std::string, AttentionEntry>& entries, std::map<std::string, std::vector<double>>& calls,
                   TraceEvidence& evidence) {
  const std::string file = std::filesystem::path(trace).filename().string();
  for (const auto& op : insight.ops) {
    if (op.cls != "attention" && !op.cls.starts_with("attention/")) continue;
    evidence.attention_calls += op.calls;
    // Megatron's fused softmax (attention/softmax) is part of an unfused attention: no flash shape to learn.
    if (!op.attention || op.cls != "attention") {
      evidence.attention_calls_unshaped += op.calls;
      continue;
    }
    const std::string key = attention_key(*op.attention, qkv_contiguous);
    const std::string table = op.attention->backward ? "sdp_bwd" : "sdp_fwd";
    AttentionEntry& e = entries[table + "|" + key];
    if (e.key.empty()) {
      e.key = key;
      e.op = table;
      e.shape = *op.attention;
      e.flops = attention_flops(*op.attention);
      e.source = op.op + " in " + file;
    }
    e.calls += op.calls;
    auto& list = calls[table + "|" + key];
    list.insert(list.end(), op.call_us.begin(), op.call_us.end());
  }
}

void finish_attention(std::map<std::string, AttentionEntry> entries,
                      const std::map<std::string, std::vector<double>>& calls, double fwd_tflops, double bwd_tflops,
                      TraceEvidence& evidence) {
  for (auto& [id, e] : entries) {
    e.median_us = median_of(calls.at(id));
    if (!(e.median_us > 0)) {
      evidence.attention_calls_unshaped += e.calls;
      continue;
    }
    const double peak = e.op == "sdp_bwd" ? bwd_tflops : fwd_tflops;
    e.efficiency = e.flops / (e.median_us * 1e-6) / (peak * 1e12);
    evidence.attention.push_back(e);
  }
}

std::string network_op_of(const std::string& type) {
  if (type == "all_reduce" || type == "all_gather" || type == "reduce_scatter") return type;
  if (type == "all_to_all") return "all2all";
  if (type == "send" || type == "recv" || type == "send_recv") return "p2p";
  return "";
}

double bus_factor(const std::string& op, int64_t group) {
  const double n = static_cast<double>(group);
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "p2p") return 1;
  return (n - 1) / n;
}

void add_collectives(const compare::KinetoProfile& profile, std::map<CollectiveKey, std::vector<double>>& calls,
                     std::map<CollectiveKey, bool>& group_is_world, CollectiveEvidence& evidence) {
  for (const auto& c : profile.collective_calls) {
    ++evidence.calls;
    if (network_op_of(c.type).empty()) {
      ++evidence.calls_unmodelled;
      ++evidence.unlearnt[c.type + ": SimuMax has no network op for this collective"];
      continue;
    }
    // The group first: an all-gather's or reduce-scatter's size may come from its group.
    const char* why = c.group < 0 && c.bytes <= 0
                          ? ": no message size or group size recorded (profile with record_shapes=True, or PyTorch "
                            ">= 2.1, whose NCCL kernels carry In msg nelems and Group size)"
                      : c.group < 0 ? ": no group size recorded, and the trace has no distributedInfo.world_size to "
                                      "take instead"
                      : c.group == 1 ? ": a group of 1 rank (nothing crosses a link)"
                      : c.bytes <= 0 ? ": no message size recorded (no In msg nelems, record_param_comms args or "
                                       "Input Dims: profile with record_shapes=True, or PyTorch >= 2.1)"
                                     : nullptr;
    if (why) {
      ++evidence.calls_unsized;
      ++evidence.unlearnt[c.type + why];
      continue;
    }
    if (c.group_is_world) ++evidence.calls_group_assumed;
    const CollectiveKey key{c.type, c.group, c.bytes};
    calls[key].push_back(c.us);
    group_is_world[key] = group_is_world[key] || c.group_is_world;
  }
}

namespace {

model::Coll coll_of(const std::string& op) {
  if (op == "all_reduce") return model::Coll::kAllReduce;
  if (op == "all_gather") return model::Coll::kAllGather;
  if (op == "reduce_scatter") return model::Coll::kReduceScatter;
  if (op == "all2all") return model::Coll::kAllToAll;
  return model::Coll::kP2p;
}

// The tier SimuMax's analysis_net gives a group of `n` (as select_nets does for one group).
std::string net_of(const config::SystemConfig& sys, int64_t n) {
  if (sys.intra_with_pcie) {
    if (n <= 2) return "intra_node_pcie_2x";
    if (n <= 4) return "intra_node_pcie_4x";
    if (n <= 8) return "intra_node_pcie_8x";
    return "inter_node";
  }
  return n <= sys.num_per_node ? "high_intra_node" : "inter_node";
}

cost::CommTime time_of(const config::SystemConfig& sys, const std::string& net, const std::string& op, int64_t group,
                       double bytes, config::Fidelity fidelity = config::Fidelity::kSimuMax) {
  // All-to-all runs as an EP one (SimuMax's inter-node EP/CP rule); the others at layer stage (no DP division).
  // The simumax fidelity is the formula alone (no measured_collectives).
  config::StrategyConfig st;
  st.fidelity = fidelity;
  return cost::comm_time(sys, st, coll_of(op), bytes, group, net, cost::CommStage::kLayer, op == "all2all" ? "ep" : "");
}

// At efficiency 1 and no latency, the bytes term (seconds); the latency multiplier of the group (SimuMax scales
// the per-hop latency_us by the group on 8-GPU nodes); the base config's whole latency (seconds).
struct Terms {
  double bytes_s = 0, hops = 1, base_latency_s = 0;
};

Terms terms_of(const config::SystemConfig& base, const CollectivePoint& p) {
  config::SystemConfig one = base;
  auto& o = one.networks.at(p.net).op.at(p.op);
  o.efficient_factor = 1;
  o.latency_us = 1;
  o.fixed_latency_us = 0;
  o.fixed_latency_us_by_comm_num.clear();
  const cost::CommTime t = time_of(one, p.net, p.op, p.group, p.bytes);
  const cost::CommTime b = time_of(base, p.net, p.op, p.group, p.bytes);
  return Terms{t.seconds - t.latency_seconds, t.latency_seconds * 1e6, b.latency_seconds};
}

std::string describe(const CollectivePoint& p) {
  char text[160];
  std::snprintf(text, sizeof text, "%s of %.0f B over %lld ranks", p.type.c_str(), p.bytes,
                static_cast<long long>(p.group));
  return text;
}

}  // namespace

double collective_model_us(const config::SystemConfig& sys, const CollectivePoint& p, config::Fidelity fidelity) {
  return time_of(sys, p.net, p.op, p.group, p.bytes, fidelity).seconds * 1e6;
}

config::MeasuredCollectives merged_curves(const config::MeasuredCollectives& base,
                                          const config::MeasuredCollectives& curves) {
  config::MeasuredCollectives out;
  for (const auto& [net, ops] : curves) {
    for (const auto& [op, groups] : ops) {
      for (const auto& [group, curve] : groups) {
        std::map<int64_t, double>& merged = out[net][op][group];
        const auto n = base.find(net);
        if (n != base.end() && n->second.contains(op) && n->second.at(op).contains(group)) {
          merged = n->second.at(op).at(group);
        }
        for (const auto& [bytes, eff] : curve) merged[bytes] = eff;
      }
    }
  }
  return out;
}

config::SystemConfig with_curves(config::SystemConfig sys, const config::MeasuredCollectives& groups) {
  for (const auto& [net, ops] : groups) {
    for (const auto& [op, by_group] : ops) {
      for (const auto& [group, curve] : by_group) sys.measured_collectives[net][op][group] = curve;
    }
  }
  return sys;
}

config::SystemConfig with_network_fits(config::SystemConfig sys, const std::vector<NetworkFit>& fits) {
  for (const auto& f : fits) {
    auto& o = sys.networks.at(f.net).op.at(f.op);
    o.efficient_factor = f.efficient_factor;
    o.latency_us = f.latency_us;
    for (const auto& [n, us] : f.fixed_latency_us) o.fixed_latency_us_by_comm_num[n] = us;
  }
  return sys;
}

namespace {

// One tier and op's fit (learn_collectives); sets each point's role. nullopt (with a note) when no bandwidth fits.
std::optional<NetworkFit> fit_tier(const std::string& net, const std::string& op, std::vector<CollectivePoint>& points,
                                   const config::SystemConfig& base, std::vector<std::string>& notes) {
  std::vector<Terms> terms;
  for (const auto& p : points) terms.push_back(terms_of(base, p));
  // The bandwidth point: the highest bus bandwidth (ties: the first, the smaller group and message).
  size_t bw = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].bus_gbps > points[bw].bus_gbps) bw = i;
  }
  // Each group size's latency point: its smallest message.
  std::map<int64_t, size_t> smallest;
  for (size_t i = 0; i < points.size(); ++i) {
    auto [it, fresh] = smallest.emplace(points[i].group, i);
    if (!fresh && points[i].bytes < points[it->second].bytes) it->second = i;
  }
  // t = bytes_s / eff + latency: the line through the bandwidth and latency points of the bandwidth group.
  const double t_bw = points[bw].min_us * 1e-6;
  const size_t lat = smallest.at(points[bw].group);
  double inv_eff = 0, latency_s = 0;
  bool two_point = false;
  if (lat != bw) {
    const double t_lat = points[lat].min_us * 1e-6;
    inv_eff = (t_bw - t_lat) / (terms[bw].bytes_s - terms[lat].bytes_s);
    latency_s = t_bw - inv_eff * terms[bw].bytes_s;
    two_point = inv_eff > 0 && latency_s >= 0 && std::isfinite(inv_eff);
  }
  if (!two_point) {
    // One message size at this group (or a line with a negative slope or intercept): keep the base's latency
    // when the real time allows it, else none, and take the efficiency from the bandwidth point alone.
    latency_s = terms[bw].base_latency_s < t_bw ? terms[bw].base_latency_s : 0;
    inv_eff = (t_bw - latency_s) / terms[bw].bytes_s;
  }
  if (!(inv_eff > 0) || !std::isfinite(inv_eff)) {
    notes.push_back(describe(points[bw]) + ": no bytes term to fit: " + net + " " + op + " not learnt");
    return std::nullopt;
  }
  // The latency goes into the per-hop latency_us (as SimuMax scales it with the group); each other group's
  // difference into its fixed latency.
  NetworkFit fit{net, op, 1 / inv_eff, latency_s * 1e6 / terms[bw].hops, {}};
  fit.fixed_latency_us[points[bw].group] = 0;
  points[bw].role = "bandwidth";
  for (const auto& [group, i] : smallest) {
    if (i == bw) continue;
    if (group == points[bw].group) {
      points[i].role = two_point ? "latency" : "check";
      continue;
    }
    const double f = points[i].min_us - inv_eff * terms[i].bytes_s * 1e6 - fit.latency_us * terms[i].hops;
    fit.fixed_latency_us[group] = std::max(0.0, f);
    points[i].role = f >= 0 ? "latency" : "check";
    if (f < 0) {
      notes.push_back(describe(points[i]) + " runs faster than the fitted bandwidth and latency allow: its fixed "
                      "latency is 0");
    }
  }
  return fit;
}

// Every point of one (tier, op) into `curves`, through simumax-measure's fit (measure::fit_collective: each point's
// own efficiency, the engine's formula time at efficiency 1 over the real time): the fastest call of each (group,
// size). Sets each point's `measured`; a note for what it cannot take.
void learn_curve(const std::string& net, const std::string& op, std::vector<CollectivePoint>& points,
                 const config::SystemConfig& base, config::MeasuredCollectives& curves,
                 std::vector<std::string>& notes) {
  std::map<std::pair<int64_t, int64_t>, measure::CollectivePoint> fastest;
  for (auto& p : points) {
    if (p.bytes != std::floor(p.bytes) || p.bytes > 9e18) {
      notes.push_back(describe(p) + ": not a whole number of bytes: not in measured_collectives");
      continue;
    }
    const auto bytes = static_cast<int64_t>(p.bytes);
    auto [it, fresh] = fastest.try_emplace({p.group, bytes}, measure::CollectivePoint{bytes, p.group, p.min_us,
                                                                                      describe(p)});
    if (!fresh) it->second.time_us = std::min(it->second.time_us, p.min_us);
    p.measured = true;
  }
  if (fastest.empty()) return;
  std::vector<measure::CollectivePoint> list;
  for (const auto& [key, point] : fastest) list.push_back(point);
  try {
    curves[net][op] = measure::fit_collective(base, net, coll_of(op), list, 0).curve;
  } catch (const common::UsageError& e) {
    for (auto& p : points) p.measured = false;
    notes.push_back(net + " " + op + ": no per-size efficiency: " + e.what());
  }
}

}  // namespace

CollectiveEvidence learn_collectives(const std::map<CollectiveKey, std::vector<double>>& calls,
                                     const std::map<CollectiveKey, bool>& group_is_world, CollectiveEvidence evidence,
                                     const config::SystemConfig& base) {
  for (const auto& [why, n] : evidence.unlearnt) {
    evidence.notes.push_back(std::to_string(n) + (n == 1 ? " call of " : " calls of ") + why);
  }
  std::map<std::pair<std::string, std::string>, std::vector<CollectivePoint>> by_tier;
  for (const auto& [key, us] : calls) {
    CollectivePoint p;
    std::tie(p.type, p.group, p.bytes) = key;
    p.op = network_op_of(p.type);
    p.net = net_of(base, p.group);
    p.group_is_world = group_is_world.at(key);
    p.calls = static_cast<int64_t>(us.size());
    p.min_us = *std::min_element(us.begin(), us.end());
    p.median_us = median_of(us);
    p.role = "check";
    if (p.min_us > 0) p.bus_gbps = p.bytes / (p.min_us * 1e-6) * bus_factor(p.op, p.group) / 1e9;
    const auto net = base.networks.find(p.net);
    if (net == base.networks.end() || !net->second.op.contains(p.op)) {
      evidence.notes.push_back(describe(p) + ": the base config has no networks." + p.net + ".op." + p.op +
                               " to time it: not learnt");
      continue;
    }
    if (!(p.min_us > 0)) {
      evidence.notes.push_back(describe(p) + ": zero-length kernels time nothing: not learnt");
      continue;
    }
    by_tier[{p.net, p.op}].push_back(p);
  }
  for (auto& [tier, points] : by_tier) {
    const auto fit = fit_tier(tier.first, tier.second, points, base, evidence.notes);
    if (!fit) continue;
    evidence.fits.push_back(*fit);
    learn_curve(tier.first, tier.second, points, base, evidence.curves, evidence.notes);
    const config::SystemConfig learnt =
        with_curves(with_network_fits(base, {*fit}), merged_curves(base.measured_collectives, evidence.curves));
    for (auto& p : points) {
      p.model_us = collective_model_us(learnt, p, config::Fidelity::kSimuMax);
      p.megatron_us = collective_model_us(learnt, p, config::Fidelity::kMegatron);
      evidence.points.push_back(p);
    }
  }
  return evidence;
}

}  // namespace simumax::calibrate
