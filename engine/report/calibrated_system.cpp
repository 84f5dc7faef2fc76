#include "engine/report/calibrated_system.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"
#include "engine/report/measured_system.hpp"

namespace simumax::report {

namespace {

nlohmann::ordered_json parse_object(const std::string& text, const std::string& label) {
  common::require_json_depth(text, label);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw common::ConfigError(label, "", "is not a JSON object");
  return j;
}

std::string read_text(const std::string& system_path) {
  std::ifstream in(system_path);
  if (!in) throw common::ConfigError(system_path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::ordered_json read_object(const std::string& system_path) {
  return parse_object(read_text(system_path), system_path);
}

// The object at `path` (keys from the root), or a ConfigError naming it.
nlohmann::ordered_json& object_at(nlohmann::ordered_json& j, const std::vector<std::string>& path,
                                  const std::string& system_path, const std::string& why) {
  nlohmann::ordered_json* at = &j;
  std::string pointer;
  for (const auto& key : path) {
    pointer += "/" + key;
    if (!at->contains(key) || !(*at)[key].is_object()) throw common::ConfigError(system_path, pointer, why);
    at = &(*at)[key];
  }
  return *at;
}

void set_table(nlohmann::ordered_json& j, const std::string& system_path, const std::string& op,
               const std::map<std::string, double>& efficiencies) {
  auto& entry = object_at(j, {"accelerator", "op", op}, system_path,
                          "missing: the learnt " + op + " efficiencies need this entry");
  if (!entry.contains("accurate_efficient_factor") || !entry["accurate_efficient_factor"].is_object()) {
    entry["accurate_efficient_factor"] = nlohmann::ordered_json::object();
  }
  for (const auto& [key, eff] : efficiencies) entry["accurate_efficient_factor"][key] = eff;
}

nlohmann::ordered_json host_json(const config::HostConfig& h) {
  nlohmann::ordered_json j;
  j["launch_us"] = h.launch_us;
  j["op_us"] = h.op_us;
  j["cpu_speed"] = h.cpu_speed;
  return j;
}

}  // namespace

std::string system_with_efficiencies(const std::string& system_path, const std::string& op,
                                     const std::map<std::string, double>& efficiencies) {
  return learnt_system_json(system_path, {{op, efficiencies}}, {});
}

std::string learnt_system_json(const std::string& system_path,
                               const std::map<std::string, std::map<std::string, double>>& tables,
                               const std::vector<NetworkOpUpdate>& networks,
                               const config::MeasuredCollectives& curves) {
  nlohmann::ordered_json j = read_object(system_path);
  for (const auto& [op, efficiencies] : tables) set_table(j, system_path, op, efficiencies);
  for (const auto& u : networks) {
    auto& op = object_at(j, {"networks", u.net, "op", u.op}, system_path,
                         "missing: the learnt " + u.op + " bandwidth on " + u.net + " needs this entry");
    op["efficient_factor"] = u.efficient_factor;
    op["latency_us"] = u.latency_us;
    if (!op.contains("fixed_latency_us_by_comm_num") || !op["fixed_latency_us_by_comm_num"].is_object()) {
      op["fixed_latency_us_by_comm_num"] = nlohmann::ordered_json::object();
    }
    for (const auto& [n, us] : u.fixed_latency_us_by_comm_num) op["fixed_latency_us_by_comm_num"][std::to_string(n)] = us;
  }
  put_measured_collectives(j, curves);
  return j.dump(1) + "\n";
}

std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note, const std::optional<config::HostConfig>& host) {
  return calibrated_system_json_text(read_text(system_path), system_path, c, note, host);
}

std::string calibrated_system_json_text(const std::string& system_text, const std::string& label,
                                        const config::Calibration& c, const std::string& note,
                                        const std::optional<config::HostConfig>& host) {
  nlohmann::ordered_json j = parse_object(system_text, label);
  nlohmann::ordered_json cal;
  cal["_note"] = note;
  cal["compute_derate"] = c.compute_derate;
  if (c.kernel_floor_us) cal["kernel_floor_us"] = *c.kernel_floor_us;
  j["calibration"] = cal;
  if (host) j["host"] = host_json(*host);
  return j.dump(1) + "\n";
}

std::string system_with_host_json(const std::string& system_text, const std::string& label,
                                  const config::HostConfig& host) {
  nlohmann::ordered_json j = parse_object(system_text, label);
  j["host"] = host_json(host);
  return j.dump(1) + "\n";
}

}  // namespace simumax::report
