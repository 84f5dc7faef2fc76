#include "engine/cost/comm_cost.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "engine/common/text_case.hpp"
#include "engine/common/units.hpp"

namespace simumax::cost {

namespace {

std::string pcie_tier(int64_t x) {
  if (x <= 2) return "intra_node_pcie_2x";
  if (x <= 4) return "intra_node_pcie_4x";
  if (x <= 8) return "intra_node_pcie_8x";
  return "inter_node";
}

const char* coll_key(model::Coll c) { return model::to_string(c); }

std::optional<double> lookup(const std::map<int64_t, double>& values, int64_t n) {
  auto it = values.find(n);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

// The measured efficiency of a `bytes` message over `n` ranks (log2-linear between the measured sizes of the nearest
// measured group size); nullopt outside the measured sizes or without a curve.
std::optional<double> measured_efficiency(const config::SystemConfig& sys, const std::string& net, model::Coll coll,
                                          int64_t n, double bytes) {
  const auto tier = sys.measured_collectives.find(net);
  if (tier == sys.measured_collectives.end()) return std::nullopt;
  const auto by_n = tier->second.find(coll_key(coll));
  if (by_n == tier->second.end() || by_n->second.empty()) return std::nullopt;
  const std::map<int64_t, double>* curve = nullptr;
  double best = 0;
  for (const auto& [ranks, c] : by_n->second) {
    const double gap = std::abs(std::log2(static_cast<double>(ranks) / static_cast<double>(n)));
    if (!curve || gap < best) curve = &c, best = gap;
  }
  if (curve->empty() || bytes < static_cast<double>(curve->begin()->first) ||
      bytes > static_cast<double>(curve->rbegin()->first)) {
    return std::nullopt;
  }
  auto hi = curve->lower_bound(static_cast<int64_t>(std::ceil(bytes)));
  if (hi == curve->begin()) return hi->second;
  auto lo = std::prev(hi);
  if (hi == curve->end()) return lo->second;
  const double x0 = std::log2(static_cast<double>(lo->first)), x1 = std::log2(static_cast<double>(hi->first));
  const double w = (std::log2(bytes) - x0) / (x1 - x0);
  return lo->second + w * (hi->second - lo->second);
}

}  // namespace

Nets select_nets(const config::StrategyConfig& st, const config::SystemConfig& sys) {
  const int64_t tp = st.tp_size, cp = st.cp_size, ep = st.ep_size, etp = st.etp_size, pp = st.pp_size;
  const int64_t dp = st.dp_size(), edp = st.edp_size(), world = st.world_size, npn = sys.num_per_node;
  Nets n;
  if (sys.intra_with_pcie) {
    n.pp = pcie_tier(world);
    n.ep = pcie_tier(ep * etp);
    n.tp = pcie_tier(tp);
    n.cp = pcie_tier(tp * cp);
    n.etp = pcie_tier(etp);
    n.dp = pcie_tier(tp * cp * dp);
    n.edp = pcie_tier(etp * ep * edp);
    return n;
  }
  auto hi = [](bool intra) { return std::string(intra ? "high_intra_node" : "inter_node"); };
  n.pp = hi(world / pp < npn);
  n.ep = hi(ep * etp <= npn);
  n.tp = hi(tp <= npn);
  n.cp = hi(tp * cp <= npn);
  n.etp = hi(etp <= npn);
  n.dp = hi(tp * cp * dp <= npn);
  n.edp = hi(etp * ep * edp <= npn);
  return n;
}

namespace {

// The terms of SimuMax's compute_net_op_time for one call, after its tier rules.
struct CommTerms {
  bool none = false;          // a group of one: no time, nothing recorded
  bool fixed_dp = false;      // the PCIe DP rule: actual / fixed_bw, nothing else
  bool measured = false;      // megatron fidelity: a measured efficiency, latency included in it
  double actual_bytes = 0;    // what crosses the link (scale, offset, the inter-node all-to-all share)
  double bw_gbps = 0;         // the tier's bandwidth after the sharing rules (or the fixed DP bandwidth)
  double eff = 0;
  double latency_us = 0;      // the per-hop latency, scaled on 8-GPU nodes
  double fixed_latency_us = 0;
};

CommTerms comm_terms(const config::SystemConfig& sys, const config::StrategyConfig& st, model::Coll coll,
                     double bytes, int64_t n, const std::string& net, CommStage stage,
                     const std::string& stage_label) {
  const auto& nd = sys.networks.at(net);
  const auto& o = nd.op.at(coll_key(coll));
  CommTerms t;
  t.eff = o.efficient_factor.value_or(nd.bandwidth.efficient_factor);
  t.actual_bytes = bytes * o.scale;
  t.actual_bytes += t.actual_bytes / static_cast<double>(n) * o.offset;
  const bool dense_dp = stage == CommStage::kDenseDp;
  if (net.find("pcie") != std::string::npos && dense_dp) {
    if (auto fixed_bw = lookup(o.dp_fixed_bw, n); fixed_bw && *fixed_bw != 0) {
      t.fixed_dp = true, t.bw_gbps = *fixed_bw;  // measured DP bandwidth, no latency term
      return t;
    }
  }
  if (n == 1) {
    t.none = true;
    return t;
  }
  double bw = nd.bandwidth.gbps;
  const int64_t npn = sys.num_per_node;
  if (sys.fc8 && net == "high_intra_node") bw *= static_cast<double>(n - 1) / 7.0;
  if (net == "inter_node") {
    if (coll == model::Coll::kP2p) bw /= static_cast<double>(npn);
    if (coll == model::Coll::kAllToAll) {
      const std::string low = common::lower_ascii(stage_label);
      if (low.find("ep") != std::string::npos || low.find("cp") != std::string::npos) {
        const double k = std::max(1.0, std::ceil(static_cast<double>(n) / static_cast<double>(npn)));
        t.actual_bytes = (k - 1) / k * t.actual_bytes;
        bw /= static_cast<double>(npn);
      }
    }
    const bool ring = coll == model::Coll::kAllReduce || coll == model::Coll::kAllGather ||
                      coll == model::Coll::kReduceScatter;
    // SimuMax divides the node's bandwidth among the model-parallel peers that share it (cp not counted).
    if (ring && dense_dp) bw /= static_cast<double>(std::min(npn, st.tp_size));
    if (ring && stage == CommStage::kExpertDp) bw /= static_cast<double>(std::min(npn, st.ep_size * st.etp_size));
  }
  t.bw_gbps = bw;
  // Megatron fidelity: a message within the measured sizes takes the measured efficiency, latency included.
  if (st.megatron()) {
    if (auto measured = measured_efficiency(sys, net, coll, n, bytes)) {
      t.measured = true, t.eff = *measured;
      return t;
    }
  }
  const double base = o.latency_us.value_or(nd.bandwidth.latency_us);
  std::optional<double> fixed = lookup(o.fixed_latency_us_by_comm_num, n);
  if (!fixed) fixed = o.fixed_latency_us;
  if (!fixed) fixed = lookup(nd.bandwidth.fixed_latency_us_by_comm_num, n);
  if (!fixed) fixed = nd.bandwidth.fixed_latency;
  t.fixed_latency_us = *fixed;
  t.latency_us = base;
  // SimuMax scales the per-hop latency only on 8-GPU nodes, and never for p2p.
  if (npn == 8 && coll != model::Coll::kP2p) t.latency_us = base * (static_cast<double>(n) + o.offset) * o.scale;
  return t;
}

}  // namespace

CommTime comm_time(const config::SystemConfig& sys, const config::StrategyConfig& st, model::Coll coll,
                   double bytes, int64_t n, const std::string& net, CommStage stage, const std::string& stage_label) {
  const CommTerms t = comm_terms(sys, st, coll, bytes, n, net, stage, stage_label);
  if (t.fixed_dp) return CommTime{t.actual_bytes / (t.bw_gbps * common::kGiB), 0.0};
  if (t.none) return {};
  if (t.measured) return CommTime{t.actual_bytes / (t.bw_gbps * common::kGiB * t.eff), 0.0};
  CommTime c;
  c.latency_seconds = (t.latency_us + t.fixed_latency_us) * 1e-6;
  c.seconds = t.actual_bytes / (t.bw_gbps * common::kGiB * t.eff) + c.latency_seconds;
  return c;
}

std::optional<CommRecord> comm_record(const config::SystemConfig& sys, const config::StrategyConfig& st,
                                      model::Coll coll, double bytes, int64_t n, const std::string& net,
                                      CommStage stage, const std::string& stage_label) {
  const CommTerms t = comm_terms(sys, st, coll, bytes, n, net, stage, stage_label);
  if (t.none) return std::nullopt;
  CommRecord r;
  r.net = net;
  r.comm_num = n;
  r.fixed_dp = t.fixed_dp;
  if (t.fixed_dp) {
    r.real_bw_gbps = t.bw_gbps;
    return r;
  }
  r.base_bw_gbps = sys.networks.at(net).bandwidth.gbps;
  r.real_bw_gbps = t.bw_gbps * t.eff;
  r.eff_factor = t.eff;
  r.comm_size_bytes = t.actual_bytes;
  r.latency_us = t.latency_us;
  // SimuMax's own arithmetic (milliseconds, then times 1e3), so that the figure is its to the last digit.
  r.total_time_us = (t.actual_bytes / (t.bw_gbps * common::kGiB * t.eff) * 1e3 +
                     (t.latency_us + t.fixed_latency_us) / 1e3) * 1e3;
  r.fc8 = sys.fc8;
  return r;
}

}  // namespace simumax::cost
