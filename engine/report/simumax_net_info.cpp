// SimuMax's net_info.json (PerfLLM.analysis: json.dump(system.real_comm_bw, indent=4)): one record per
// collective and comm_stage of the calls its compute_net_op_time saw, in the order it first saw them, each
// holding the last call's figures.
#include <cmath>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/common/text_case.hpp"
#include "engine/report/simumax_results.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::ordered_json;

// A figure read from a config, as Python's json.dump writes it back: whole numbers as the integer literals the
// shipped configs use (SimuMax keeps the literal's type; we keep only the value).
Json config_number(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return static_cast<int64_t>(v);
  return v;
}

class NetInfo {
 public:
  explicit NetInfo(const config::Scenario& s) : s_(s) {}

  // One compute_net_op_time call; SimuMax records nothing for a group of one.
  void call(model::Coll coll, double bytes, int64_t n, const std::string& net, cost::CommStage stage,
            const std::string& label) {
    if (net.empty()) return;  // a family with no group (FSDP's per-layer DP)
    const auto r = cost::comm_record(s_.system, s_.strategy, coll, bytes, n, net, stage, label);
    if (!r) return;
    const std::string op = model::to_string(coll);
    if (r->fixed_dp) {  // config.py: real_comm_bw[op_name + "_dp"], the bandwidth as an f-string
      const Json bw = config_number(r->real_bw_gbps);
      j_[op + "_dp"] = {{"net", r->net}, {"bw", bw.dump() + " GB/S"}, {"comm_num", r->comm_num}, {"latency", nullptr}};
      return;
    }
    j_[op][common::lower_ascii(label)] = {{"net", r->net},
                            {"base_bw", config_number(r->base_bw_gbps)},
                            {"real_bw", r->real_bw_gbps},
                            {"eff_factor", config_number(r->eff_factor)},
                            {"comm_num", r->comm_num},
                            {"comm_size", r->comm_size_bytes},
                            {"total_time", r->total_time_us},
                            {"latency", config_number(r->latency_us)},
                            {"FC8", r->fc8}};
  }
  const Json& json() const { return j_; }

 private:
  const config::Scenario& s_;
  Json j_ = Json::object();
};

}  // namespace

std::string simumax_net_info_json(const SimumaxView& v) {
  const config::StrategyConfig& st = v.scenario.strategy;
  NetInfo info(v.scenario);
  // PerfLLM.run_estimate: the chunks' modules, first, middle, last, each op's forward, then its backward's
  // activation and weight gradients (dense_module.py, moe_module.py), a repeated block's copies alike.
  for (const cost::ChunkCost& chunk : v.cost.chunks) {
    for (const auto& block : chunk.blocks) {
      for (const cost::OpCost& op : block->ops) {
        for (const auto& pass : op.comm) {
          for (const cost::CommCost& c : pass) {
            info.call(c.comm->coll, c.comm->bytes, c.group_size, c.net, cost::CommStage::kLayer, c.comm->stage);
          }
        }
      }
    }
  }
  // analysis_cost: _compute_dp_time per chunk (compute_dp_helper: the dense family over dp*cp as "dp_cp", the
  // experts over edp as "edp", one bucket each), then the pipeline's p2p (comm_stage left at its default).
  for (const cost::ChunkCost& chunk : v.cost.chunks) {
    for (const auto& [d, stage, label] : {std::tuple{&chunk.dense_dp, cost::CommStage::kDenseDp, "dp_cp"},
                                          std::tuple{&chunk.moe_dp, cost::CommStage::kExpertDp, "edp"}}) {
      if (st.zero_state >= 1) {
        info.call(model::Coll::kReduceScatter, d->bucket_bytes, d->group_size, d->net, stage, label);
        info.call(model::Coll::kAllGather, d->bucket_bytes, d->group_size, d->net, stage, label);
      } else {
        info.call(model::Coll::kAllReduce, d->bucket_bytes, d->group_size, d->net, stage, label);
      }
    }
  }
  if (st.pp_size > 1) {
    info.call(model::Coll::kP2p, v.model.p2p_bytes, 2, v.cost.nets.pp, cost::CommStage::kLayer, "unkonw");
  }
  return info.json().dump(4);
}

}  // namespace simumax::report
