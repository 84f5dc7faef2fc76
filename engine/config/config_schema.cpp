#include "engine/config/config_schema.hpp"

#include "engine/config/json_reader.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {

std::string scenario_schema_json(const std::string& path) {
  detail::SchemaRecording recording;
  load_scenario(path);
  detail::Json out = detail::Json::object();
  for (const auto& [pointer, f] : recording.fields()) {
    detail::Json field = {{"kind", f.kind}};
    if (f.sign == detail::Sign::kPositive) field["sign"] = "positive";
    if (f.sign == detail::Sign::kNonNegative) field["sign"] = "non-negative";
    if (!f.choices.empty()) field["choices"] = f.choices;
    if (f.required) field["required"] = true;
    if (!f.fallback.empty()) field["default"] = detail::Json::parse(f.fallback);
    out[pointer] = std::move(field);
  }
  return out.dump();
}

}  // namespace simumax::config
