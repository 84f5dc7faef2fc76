#include "engine/report/calibrated_system.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"

namespace simumax::report {

namespace {

nlohmann::ordered_json read_object(const std::string& system_path) {
  std::ifstream in(system_path);
  if (!in) throw common::ConfigError(system_path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw common::ConfigError(system_path, "", "is not a JSON object");
  return j;
}

}  // namespace

std::string system_with_efficiencies(const std::string& system_path, const std::string& op,
                                     const std::map<std::string, double>& efficiencies) {
  nlohmann::ordered_json j = read_object(system_path);
  const std::string pointer = "/accelerator/op/" + op;
  if (!j.contains("accelerator") || !j["accelerator"].is_object() || !j["accelerator"].contains("op") ||
      !j["accelerator"]["op"].is_object() || !j["accelerator"]["op"].contains(op) ||
      !j["accelerator"]["op"][op].is_object()) {
    throw common::ConfigError(system_path, pointer, "missing: the learnt " + op + " efficiencies need this entry");
  }
  auto& entry = j["accelerator"]["op"][op];
  if (!entry.contains("accurate_efficient_factor") || !entry["accurate_efficient_factor"].is_object()) {
    entry["accurate_efficient_factor"] = nlohmann::ordered_json::object();
  }
  for (const auto& [key, eff] : efficiencies) entry["accurate_efficient_factor"][key] = eff;
  return j.dump(1) + "\n";
}

std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note) {
  nlohmann::ordered_json j = read_object(system_path);
  nlohmann::ordered_json cal;
  cal["_note"] = note;
  cal["compute_derate"] = c.compute_derate;
  if (c.kernel_floor_us) cal["kernel_floor_us"] = *c.kernel_floor_us;
  j["calibration"] = cal;
  return j.dump(1) + "\n";
}

}  // namespace simumax::report
