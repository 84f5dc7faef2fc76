#include "engine/report/serve_request.hpp"

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"

namespace simumax::report {

namespace {
using Json = nlohmann::ordered_json;
using common::ConfigError;

const char* const kAccepted = "accepted: model, strategy, system (inline objects), name, model_overrides, strategy_overrides";

// A key is named in the message only when it is short and plain (it comes from the request).
std::string pointer_of(const std::string& key) {
  bool plain = !key.empty() && key.size() <= 64;
  for (char c : key) plain = plain && c > ' ' && c < 127 && c != '/' && c != '~';
  return "/" + (plain ? key : std::string("<key>"));
}
}  // namespace

std::string inline_scenario_text(const std::string& body) {
  common::require_json_depth(body, "request");
  Json j;
  try {
    j = Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw ConfigError("request", "", "invalid JSON at byte " + std::to_string(e.byte));
  }
  if (!j.is_object()) throw ConfigError("request", "", std::string("expected a JSON object; ") + kAccepted);
  for (const char* key : {"model", "strategy", "system"}) {
    const auto it = j.find(key);
    if (it == j.end()) throw ConfigError("request", std::string("/") + key, "required field is missing (expected an object)");
    if (!it->is_object()) throw ConfigError("request", std::string("/") + key, "expected an object (file paths are not accepted)");
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "model" || key == "strategy" || key == "system") continue;
    if (key == "name") {
      if (!value.is_string() || value.get_ref<const std::string&>().size() > 200) {
        throw ConfigError("request", "/name", "expected a string of at most 200 characters");
      }
    } else if (key == "model_overrides" || key == "strategy_overrides") {
      if (!value.is_object()) throw ConfigError("request", "/" + key, "expected an object");
    } else {
      throw ConfigError("request", pointer_of(key), std::string("unknown key; ") + kAccepted);
    }
  }
  return j.dump(1);
}

InlineConfigs inline_config_texts(const std::string& body) {
  Json j = Json::parse(inline_scenario_text(body));
  for (const char* kind : {"model", "strategy"}) {
    const auto it = j.find(std::string(kind) + "_overrides");
    if (it != j.end()) j[kind].update(*it);
  }
  return {j["model"].dump(1), j["strategy"].dump(1), j["system"].dump(1)};
}

}  // namespace simumax::report
