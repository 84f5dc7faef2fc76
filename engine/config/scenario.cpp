#include "engine/config/scenario.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/common/error.hpp"
#include "engine/config/config_parsers.hpp"

namespace simumax::config {

namespace fs = std::filesystem;
using common::ConfigError;
using detail::Json;
using detail::ObjectReader;
using detail::ScenarioDocument;

namespace {

constexpr const char* kSharedPrefix = "${SHARED}/";

std::string resolve_path(const ObjectReader& r, const std::string& key, const std::string& raw) {
  const std::string prefix = kSharedPrefix;
  if (raw.compare(0, prefix.size(), prefix) == 0) {
    const std::optional<std::string> shared = shared_dir();
    if (!shared) {
      r.fail(key, "\"" + raw + "\" uses ${SHARED}, but SIMUMAX_SHARED_DIR is not set and ../shared is not a "
                  "folder; set SIMUMAX_SHARED_DIR to the shared/ folder");
    }
    return (fs::path(*shared) / raw.substr(prefix.size())).lexically_normal().string();
  }
  const fs::path path(raw);
  if (path.is_absolute()) return raw;
  const fs::path base = fs::path(r.origin().file).parent_path();
  return (base / path).lexically_normal().string();
}

std::string checked_path(ObjectReader& r, const std::string& key, const std::string& raw) {
  const std::string path = resolve_path(r, key, raw);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) r.fail(key, "file not found: " + path);
  return path;
}

// One of "model" / "strategy" / "system": a path to a SimuMax config, or the config inline.
Json load_part(ObjectReader& r, const Json& doc, const std::string& key, std::string& path, ConfigOrigin& origin) {
  if (!r.present(key)) r.fail(key, "required field is missing: a path to the " + key + " config, or the config inline");
  const Json& value = doc.at(key);
  if (value.is_object()) {
    path = r.origin().file;
    origin = ConfigOrigin::of(r.origin().file, r.where(key).pointer);
    return value;
  }
  if (!value.is_string()) {
    r.fail(key, "expected a path (string) or an inline config object, got " + detail::json_repr(value));
  }
  path = checked_path(r, key, value.get<std::string>());
  origin = ConfigOrigin::of(path);
  return detail::parse_json_file(path);
}

// Overrides replace whole top-level keys, like SimuMax's own model_overrides / strategy_overrides.
void apply_overrides(ObjectReader& r, const Json& doc, const std::string& key, Json& target, ConfigOrigin& origin) {
  if (!r.given(key)) return;
  const Json& overrides = doc.at(key);
  if (!overrides.is_object())
    r.fail(key, "expected an object of fields to replace, got " + detail::json_repr(overrides));
  if (!target.is_object()) return;  // the reader of the part reports it
  origin.overrides_file = r.origin().file;
  origin.overrides_pointer = r.where(key).pointer;
  for (const auto& item : overrides.items()) {
    if (!item.key().empty() && item.key()[0] == '_') continue;
    target[item.key()] = item.value();
    origin.overridden_keys.insert(item.key());
  }
}

}  // namespace

detail::ScenarioDocument detail::read_scenario_document(const Json& doc, const std::string& path) {
  ObjectReader r(doc, ConfigOrigin::of(path));
  ScenarioDocument d;
  Scenario& s = d.scenario;
  s.scenario_path = path;
  s.name = r.optional_string("name").value_or(fs::path(path).stem().string());
  // The name is the default output folder out/<name>: one path component, never a way out of out/.
  const bool component = !s.name.empty() && s.name != "." && s.name != ".." &&
                         std::none_of(s.name.begin(), s.name.end(), [](unsigned char c) {
                           return c == '/' || c == '\\' || c < 0x20 || c == 0x7f;
                         });
  if (!component) {
    r.fail("name", "must be one path component (it names the output folder out/<name>): no '/', '\\', control "
                   "characters, and not \".\" or \"..\"");
  }
  r.optional_string("description");
  if (const auto platform = r.optional_string("platform")) s.platform_path = checked_path(r, "platform", *platform);
  r.given("model_overrides");
  r.given("strategy_overrides");
  for (const char* part : {"model", "strategy", "system"}) r.present(part);
  r.finish(detail::UnknownKeys::kError);
  d.model = load_part(r, doc, "model", s.model_path, s.model_origin);
  d.strategy = load_part(r, doc, "strategy", s.strategy_path, s.strategy_origin);
  d.system = load_part(r, doc, "system", s.system_path, s.system_origin);
  apply_overrides(r, doc, "model_overrides", d.model, s.model_origin);
  apply_overrides(r, doc, "strategy_overrides", d.strategy, s.strategy_origin);
  return d;
}

Scenario detail::parse_scenario_document(const ScenarioDocument& d) {
  Scenario s = d.scenario;
  s.model = detail::parse_model(d.model, s.model_origin);
  s.strategy = detail::parse_strategy(d.strategy, s.strategy_origin);
  s.system = detail::parse_system(d.system, s.system_origin);
  check_scenario(s);
  return s;
}

namespace {

// `path` names the document in errors; relative paths inside it are relative to its folder.
Scenario scenario_from_document(const Json& doc, const std::string& path) {
  return detail::parse_scenario_document(detail::read_scenario_document(doc, path));
}

}  // namespace

std::optional<std::string> shared_dir() {
  const char* env = std::getenv("SIMUMAX_SHARED_DIR");
  if (env != nullptr && *env != '\0') return std::string(env);
  std::error_code ec;
  if (fs::is_directory("../shared", ec)) return std::string("../shared");
  return std::nullopt;
}

Scenario load_scenario(const std::string& path) { return scenario_from_document(detail::parse_json_file(path), path); }

Scenario load_scenario_text(const std::string& text, const std::string& label) {
  return scenario_from_document(detail::parse_json_text(text, label), label);
}

Scenario load_configs(const std::string& model_path, const std::string& strategy_path, const std::string& system_path) {
  Scenario s;
  s.name = fs::path(model_path).stem().string() + "_" + fs::path(strategy_path).stem().string();
  s.model_path = model_path;
  s.strategy_path = strategy_path;
  s.system_path = system_path;
  s.model_origin = ConfigOrigin::of(model_path);
  s.strategy_origin = ConfigOrigin::of(strategy_path);
  s.system_origin = ConfigOrigin::of(system_path);
  s.model = load_model_file(model_path);
  s.strategy = load_strategy_file(strategy_path);
  s.system = load_system_file(system_path);
  check_scenario(s);
  return s;
}

ModelConfig load_model_file(const std::string& path) {
  return detail::parse_model(detail::parse_json_file(path), ConfigOrigin::of(path));
}

StrategyConfig load_strategy_file(const std::string& path) {
  return detail::parse_strategy(detail::parse_json_file(path), ConfigOrigin::of(path));
}

SystemConfig load_system_file(const std::string& path) {
  return detail::parse_system(detail::parse_json_file(path), ConfigOrigin::of(path));
}

SystemConfig load_system_text(const std::string& text, const std::string& label) {
  return detail::parse_system(detail::parse_json_text(text, label), ConfigOrigin::of(label));
}

}  // namespace simumax::config
