#include "engine/cost/comm_cost.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

#include "engine/common/units.hpp"

namespace simumax::cost {

namespace {

std::string pcie_tier(int64_t x) {
  if (x <= 2) return "intra_node_pcie_2x";
  if (x <= 4) return "intra_node_pcie_4x";
  if (x <= 8) return "intra_node_pcie_8x";
  return "inter_node";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
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

CommTime comm_time(const config::SystemConfig& sys, const config::StrategyConfig& st, model::Coll coll,
                   double bytes, int64_t n, const std::string& net, CommStage stage, const std::string& stage_label) {
  const auto& nd = sys.networks.at(net);
  const auto& o = nd.op.at(coll_key(coll));
  const double eff = o.efficient_factor.value_or(nd.bandwidth.efficient_factor);
  double actual = bytes * o.scale;
  actual += actual / static_cast<double>(n) * o.offset;
  const bool dense_dp = stage == CommStage::kDenseDp;
  if (net.find("pcie") != std::string::npos && dense_dp) {
    if (auto fixed_bw = lookup(o.dp_fixed_bw, n); fixed_bw && *fixed_bw != 0) {
      return CommTime{actual / (*fixed_bw * common::kGiB), 0.0};  // measured DP bandwidth, no latency term
    }
  }
  if (n == 1) return {};
  double bw = nd.bandwidth.gbps;
  const int64_t npn = sys.num_per_node;
  if (sys.fc8 && net == "high_intra_node") bw *= static_cast<double>(n - 1) / 7.0;
  if (net == "inter_node") {
    if (coll == model::Coll::kP2p) bw /= static_cast<double>(npn);
    if (coll == model::Coll::kAllToAll) {
      const std::string low = lower(stage_label);
      if (low.find("ep") != std::string::npos || low.find("cp") != std::string::npos) {
        const double k = std::max(1.0, std::ceil(static_cast<double>(n) / static_cast<double>(npn)));
        actual = (k - 1) / k * actual;
        bw /= static_cast<double>(npn);
      }
    }
    const bool ring = coll == model::Coll::kAllReduce || coll == model::Coll::kAllGather ||
                      coll == model::Coll::kReduceScatter;
    // SimuMax divides the node's bandwidth among the model-parallel peers that share it (cp not counted).
    if (ring && dense_dp) bw /= static_cast<double>(std::min(npn, st.tp_size));
    if (ring && stage == CommStage::kExpertDp) bw /= static_cast<double>(std::min(npn, st.ep_size * st.etp_size));
  }
  // Megatron fidelity: a message within the measured sizes takes the measured efficiency, latency included.
  if (st.megatron()) {
    if (auto measured = measured_efficiency(sys, net, coll, n, bytes)) {
      return CommTime{actual / (bw * common::kGiB * *measured), 0.0};
    }
  }
  const double base = o.latency_us.value_or(nd.bandwidth.latency_us);
  std::optional<double> fixed = lookup(o.fixed_latency_us_by_comm_num, n);
  if (!fixed) fixed = o.fixed_latency_us;
  if (!fixed) fixed = lookup(nd.bandwidth.fixed_latency_us_by_comm_num, n);
  if (!fixed) fixed = nd.bandwidth.fixed_latency;
  double lat = base;
  // SimuMax scales the per-hop latency only on 8-GPU nodes, and never for p2p.
  if (npn == 8 && coll != model::Coll::kP2p) lat = base * (static_cast<double>(n) + o.offset) * o.scale;
  CommTime t;
  t.latency_seconds = (lat + *fixed) * 1e-6;
  t.seconds = actual / (bw * common::kGiB * eff) + t.latency_seconds;
  return t;
}

}  // namespace simumax::cost
