// Fits a network tier's per-collective bandwidth efficiency and latency (SimuMax's networks.<tier>.op.<coll>) to
// measured collective times, through the engine's own collective formula.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/config/system_config.hpp"
#include "engine/model/op.hpp"

namespace simumax::measure {

// One measured collective.
struct CollectivePoint {
  int64_t bytes = 0;   // nccl-tests' size: the whole buffer (SimuMax's size argument)
  int64_t ranks = 0;
  double time_us = 0;
  std::string source;  // where it came from ("file:line" or "measured")
};

struct NetFit {
  std::string tier;
  model::Coll coll = model::Coll::kAllReduce;
  double efficient_factor = 0;  // of the tier's bandwidth.gbps
  double latency_us = 0;        // SimuMax's per-hop latency (scaled by (n+offset)*scale when num_per_node is 8)
  // Every point's own efficiency (group size -> bytes -> efficiency: the engine's bandwidth time at efficiency 1
  // over the measured time), written as the system's measured_collectives: within the measured sizes the engine
  // gives back the measured times; the two parameters above serve SimuMax and the sizes outside.
  std::map<int64_t, std::map<int64_t, double>> curve;
  std::vector<CollectivePoint> points;  // those fitted
  std::vector<double> time_errors;      // per point: (model - measured) / measured
  double worst_error() const;           // of largest magnitude, signed
};

// Least squares in relative time error of t = bandwidth_time(eff) + latency(n) (cost::comm_time with this op's
// fixed latency set to 0), over the points with bytes >= min_bytes. `sys` gives the tier's gbps, the op's
// scale/offset and num_per_node; all-to-all is timed as the EP all-to-all (SimuMax's inter-node rule for it).
// A negative latency is refitted as 0. The curve covers every point, whatever its size (several points of one
// size and group size: the mean of their efficiencies). Throws common::UsageError when `sys` has no such tier or op, when fewer
// than one point remains, or when no positive efficiency fits.
NetFit fit_collective(const config::SystemConfig& sys, const std::string& tier, model::Coll coll,
                      const std::vector<CollectivePoint>& points, int64_t min_bytes);

// The time cost::comm_time gives `p` (megatron fidelity) with the fit written into `sys` (what the engine will
// charge), seconds.
double fitted_seconds(const config::SystemConfig& sys, const NetFit& fit, const CollectivePoint& p);

// `sys` with the fit written in: networks.<tier>.op.<coll> efficient_factor, latency_us, fixed_latency_us = 0,
// no fixed_latency_us_by_comm_num, and the curve in measured_collectives (replacing those group sizes' curves).
config::SystemConfig with_fit(const config::SystemConfig& sys, const NetFit& fit);

}  // namespace simumax::measure
