#include "engine/report/calibrated_system.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"

namespace simumax::report {

std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note) {
  std::ifstream in(system_path);
  if (!in) throw common::ConfigError(system_path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw common::ConfigError(system_path, "", "is not a JSON object");
  nlohmann::ordered_json cal;
  cal["_note"] = note;
  cal["compute_derate"] = c.compute_derate;
  if (c.kernel_floor_us) cal["kernel_floor_us"] = *c.kernel_floor_us;
  j["calibration"] = cal;
  return j.dump(1) + "\n";
}

}  // namespace simumax::report
