#include "engine/measure/net_fit.hpp"

#include <cmath>

#include "engine/common/error.hpp"
#include "engine/cost/comm_cost.hpp"

namespace simumax::measure {

namespace {

config::NetOpConfig& op_entry(config::SystemConfig& sys, const std::string& tier, model::Coll coll) {
  auto net = sys.networks.find(tier);
  if (net == sys.networks.end()) {
    std::string names;
    for (const auto& [name, n] : sys.networks) names += (names.empty() ? "" : ", ") + name;
    throw common::UsageError("network tier '" + tier + "' is not in the system config (it has: " + names + ")");
  }
  auto op = net->second.op.find(model::to_string(coll));
  if (op == net->second.op.end()) {
    throw common::UsageError("network tier '" + tier + "' has no op." + model::to_string(coll) +
                             " entry (its scale and offset are needed)");
  }
  return op->second;
}

// The engine's time of `p` with the op's efficiency and latency set, seconds.
double engine_seconds(config::SystemConfig& sys, const std::string& tier, model::Coll coll, const CollectivePoint& p,
                      double eff, double latency_us, double bytes) {
  sys.measured_collectives.clear();  // the formula's own terms, not a curve written earlier
  auto& op = op_entry(sys, tier, coll);
  op.efficient_factor = eff;
  op.latency_us = latency_us;
  op.fixed_latency_us = 0;
  op.fixed_latency_us_by_comm_num.clear();
  const config::StrategyConfig st;
  const char* label = coll == model::Coll::kAllToAll ? "Dispatch_FWD_EP" : "";
  return cost::comm_time(sys, st, coll, bytes, p.ranks, tier, cost::CommStage::kLayer, label).seconds;
}

}  // namespace

double NetFit::worst_error() const {
  double w = 0;
  for (double e : time_errors) {
    if (std::abs(e) > std::abs(w)) w = e;
  }
  return w;
}

NetFit fit_collective(const config::SystemConfig& sys, const std::string& tier, model::Coll coll,
                      const std::vector<CollectivePoint>& points, int64_t min_bytes) {
  config::SystemConfig work = sys;
  op_entry(work, tier, coll);  // names the missing tier or op
  NetFit fit;
  fit.tier = tier;
  fit.coll = coll;
  // t_i / t_i = u * a_i + lat * b_i with a_i, b_i the engine's bandwidth time at efficiency 1 and its latency
  // time at 1 us, both divided by t_i: relative errors, so a 16 KiB message counts as much as a 4 GiB one.
  std::vector<double> a, b;
  std::map<int64_t, std::map<int64_t, std::pair<double, int>>> sums;
  for (const auto& p : points) {
    if (p.ranks < 2 || !(p.time_us > 0) || p.bytes <= 0) {
      throw common::UsageError(p.source + ": expected a collective of more than 0 bytes over 2 or more ranks, with "
                               "a time above 0");
    }
    const double t = p.time_us * 1e-6;
    auto& sum = sums[p.ranks][p.bytes];
    sum.first += engine_seconds(work, tier, coll, p, 1, 0, static_cast<double>(p.bytes)) / t;
    sum.second += 1;
    if (p.bytes < min_bytes) continue;
    a.push_back(engine_seconds(work, tier, coll, p, 1, 0, static_cast<double>(p.bytes)) / t);
    b.push_back(engine_seconds(work, tier, coll, p, 1, 1, 0) / t);
    fit.points.push_back(p);
  }
  if (fit.points.empty()) {
    throw common::UsageError("no " + std::string(model::to_string(coll)) + " measurement of " +
                             std::to_string(min_bytes) + " bytes or more for tier " + tier);
  }
  double saa = 0, sab = 0, sbb = 0, sa = 0, sb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    saa += a[i] * a[i], sab += a[i] * b[i], sbb += b[i] * b[i], sa += a[i], sb += b[i];
  }
  const double det = saa * sbb - sab * sab;
  double u = 0, lat = -1;
  if (a.size() >= 2 && std::abs(det) > 1e-12 * saa * sbb) {
    u = (sa * sbb - sb * sab) / det;
    lat = (saa * sb - sab * sa) / det;
  }
  if (lat < 0 || u <= 0) {  // one point, or the latency would be negative: bandwidth only
    lat = 0;
    u = sa / saa;
  }
  if (!(u > 0) || !std::isfinite(u)) {
    throw common::UsageError("tier " + tier + " " + model::to_string(coll) + ": no positive efficiency fits");
  }
  for (const auto& [ranks, by_bytes] : sums) {
    for (const auto& [bytes, sum] : by_bytes) fit.curve[ranks][bytes] = sum.first / sum.second;
  }
  fit.efficient_factor = 1 / u;
  fit.latency_us = lat;
  for (size_t i = 0; i < a.size(); ++i) fit.time_errors.push_back(u * a[i] + lat * b[i] - 1);
  return fit;
}

double fitted_seconds(const config::SystemConfig& sys, const NetFit& fit, const CollectivePoint& p) {
  const config::SystemConfig work = with_fit(sys, fit);
  config::StrategyConfig st;
  st.fidelity = config::Fidelity::kMegatron;
  const char* label = fit.coll == model::Coll::kAllToAll ? "Dispatch_FWD_EP" : "";
  return cost::comm_time(work, st, fit.coll, static_cast<double>(p.bytes), p.ranks, fit.tier,
                         cost::CommStage::kLayer, label).seconds;
}

config::SystemConfig with_fit(const config::SystemConfig& sys, const NetFit& fit) {
  config::SystemConfig out = sys;
  auto& op = op_entry(out, fit.tier, fit.coll);
  op.efficient_factor = fit.efficient_factor;
  op.latency_us = fit.latency_us;
  op.fixed_latency_us = 0;
  op.fixed_latency_us_by_comm_num.clear();
  for (const auto& [ranks, curve] : fit.curve) out.measured_collectives[fit.tier][model::to_string(fit.coll)][ranks] = curve;
  return out;
}

}  // namespace simumax::measure
