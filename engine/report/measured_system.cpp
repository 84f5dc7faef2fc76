#include "engine/report/measured_system.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::ordered_json;

Json& child(Json& j, const std::string& key, const std::string& file, const std::string& pointer) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_object()) {
    throw common::ConfigError(file, pointer + "/" + key, "missing: expected an object");
  }
  return j[key];
}

}  // namespace

std::string measured_system_json(const std::string& base_system_path, const MeasuredSystem& m) {
  const std::string& file = base_system_path;
  std::ifstream in(file);
  if (!in) throw common::ConfigError(file, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  common::require_json_depth(text.str(), file);
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw common::ConfigError(file, "", "is not a JSON object");
  Json& acc = child(j, "accelerator", file, "");
  Json& ops = child(acc, "op", file, "/accelerator");
  const Json& def = child(ops, "default", file, "/accelerator/op");
  for (const auto& [op, table] : m.efficiencies) {
    if (!ops.contains(op) || !ops[op].is_object()) {
      ops[op] = Json::object();
      ops[op]["tflops"] = def.value("tflops", 0.0);
      ops[op]["efficient_factor"] = def.value("efficient_factor", 0.0);
    }
    Json& entry = ops[op];
    if (!entry.contains("accurate_efficient_factor") || !entry["accurate_efficient_factor"].is_object()) {
      entry["accurate_efficient_factor"] = Json::object();
    }
    double sum = 0;
    for (const auto& [key, eff] : table) {
      entry["accurate_efficient_factor"][key] = eff;
      sum += eff;
    }
    const Json& ef = entry["efficient_factor"];
    if (!table.empty() && (!ef.is_number() || ef.get<double>() <= 0)) {
      entry["efficient_factor"] = sum / static_cast<double>(table.size());
    }
  }
  if (m.hbm_gibps) {
    Json& bw = child(child(acc, "bandwidth", file, "/accelerator"), "default", file, "/accelerator/bandwidth");
    if (!bw.contains("gbps") || !bw["gbps"].is_number() || bw["gbps"].get<double>() <= 0) {
      throw common::ConfigError(file, "/accelerator/bandwidth/default/gbps", "expected a positive number");
    }
    bw["efficient_factor"] = *m.hbm_gibps / bw["gbps"].get<double>();
  }
  for (const auto& n : m.net_ops) {
    Json& nets = child(j, "networks", file, "");
    Json& tier = child(nets, n.tier, file, "/networks");
    Json& op = child(child(tier, "op", file, "/networks/" + n.tier), n.coll, file, "/networks/" + n.tier + "/op");
    op["efficient_factor"] = n.efficient_factor;
    op["latency_us"] = n.latency_us;
    op["fixed_latency_us"] = 0.0;
    op.erase("fixed_latency_us_by_comm_num");
  }
  put_measured_collectives(j, m.curves);
  if (!m.provenance.empty()) j["_measured"] = m.provenance;
  return j.dump(1) + "\n";
}

void put_measured_collectives(Json& system, const config::MeasuredCollectives& curves) {
  for (const auto& [tier, colls] : curves) {
    for (const auto& [coll, by_n] : colls) {
      for (const auto& [n, curve] : by_n) {
        Json c = Json::object();
        for (const auto& [bytes, eff] : curve) c[std::to_string(bytes)] = eff;
        system["measured_collectives"][tier][coll][std::to_string(n)] = c;
      }
    }
  }
}

}  // namespace simumax::report
