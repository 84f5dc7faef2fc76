// The network model: each group's tier (from group sizes, as SimuMax picks it) and a collective's time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/config/scenario.hpp"
#include "engine/model/op.hpp"

namespace simumax::cost {

// Network tier names (keys of SystemConfig::networks) of every parallel group.
struct Nets {
  std::string tp, cp, pp, dp, ep, etp, edp;
};

// SimuMax's analysis_net: tiers from group sizes (not placement); user *_net fields are ignored.
Nets select_nets(const config::StrategyConfig& st, const config::SystemConfig& sys);

struct CommTime {
  double seconds = 0;          // total
  double latency_seconds = 0;  // the latency part (per-hop latency scaling + fixed latency)
};

// Which of SimuMax's special inter-node rules applies (its comm_stage argument).
enum class CommStage { kLayer, kDenseDp, kExpertDp };

// SimuMax's compute_net_op_time. `stage_label` matters for inter-node all-to-all (EP/CP rule). At megatron fidelity a
// message within the sizes of the system's measured_collectives curve for (net, coll) takes the measured efficiency
// (of the nearest measured group size) and no latency term: the measurement holds it.
// REQUIRES: sys.networks contains `net` with an entry for `coll`; n >= 1.
CommTime comm_time(const config::SystemConfig& sys, const config::StrategyConfig& st, model::Coll coll,
                   double bytes, int64_t n, const std::string& net, CommStage stage,
                   const std::string& stage_label = "");

// What SimuMax's compute_net_op_time records of one call (SystemConfig.record_net_bw, its net_info.json): the
// tier, its bandwidth before and after the sharing rules and the efficiency, the message as it crosses the link,
// the time with latency, and the scaled per-hop latency. Under SimuMax's PCIe DP rule (`fixed_dp`) it records only
// the tier, the fixed bandwidth (real_bw_gbps) and the group size. nullopt for a group of one, which SimuMax does
// not record.
struct CommRecord {
  std::string net;
  bool fixed_dp = false;
  double base_bw_gbps = 0;
  double real_bw_gbps = 0;
  double eff_factor = 0;
  int64_t comm_num = 0;
  double comm_size_bytes = 0;
  double total_time_us = 0;
  double latency_us = 0;
  bool fc8 = false;
};
std::optional<CommRecord> comm_record(const config::SystemConfig& sys, const config::StrategyConfig& st,
                                      model::Coll coll, double bytes, int64_t n, const std::string& net,
                                      CommStage stage, const std::string& stage_label = "");

}  // namespace simumax::cost
