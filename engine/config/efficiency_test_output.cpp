#include "engine/config/efficiency_test_output.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/config/json_reader.hpp"

namespace simumax::config {

std::map<std::string, EfficiencyTable> read_efficiency_test_output(const std::string& path) {
  const detail::Json j = detail::parse_json_file(path);
  if (!j.is_object()) throw common::ConfigError(path, "", "expected an object of compute op tables");
  std::map<std::string, EfficiencyTable> out;
  for (const auto& [op, entry] : j.items()) {
    if (!op.empty() && op[0] == '_') continue;
    const std::string at = "/" + op;
    if (!entry.is_object()) throw common::ConfigError(path, at, "expected an object {tflops, accurate_efficient_factor}");
    EfficiencyTable t;
    if (!entry.contains("tflops") || !entry["tflops"].is_number() || !(entry["tflops"].get<double>() > 0)) {
      throw common::ConfigError(path, at + "/tflops", "expected a positive number (the peak the efficiencies are of)");
    }
    t.tflops = entry["tflops"].get<double>();
    if (entry.contains("accurate_efficient_factor")) {
      const auto& table = entry["accurate_efficient_factor"];
      if (!table.is_object()) throw common::ConfigError(path, at + "/accurate_efficient_factor", "expected an object");
      for (const auto& [key, eff] : table.items()) {
        if (!eff.is_number() || !(eff.get<double>() > 0) || !std::isfinite(eff.get<double>())) {
          throw common::ConfigError(path, at + "/accurate_efficient_factor/" + key,
                                    "expected a positive efficiency, got " + eff.dump());
        }
        t.efficiencies[key] = eff.get<double>();
      }
    }
    out[op] = std::move(t);
  }
  return out;
}

}  // namespace simumax::config
