// SimuMax configs held as JSON text rather than files (what the Python module passes: a file read through our
// checks, or a dict serialised), read into a Scenario with the same checks and error locations as files.
#pragma once

#include <optional>
#include <string>

#include "engine/config/scenario.hpp"

namespace simumax::config {

enum class ConfigKind { kModel, kStrategy, kSystem };

struct ConfigText {
  std::string text;   // a JSON object
  std::string label;  // what errors name as the file: the path it was read from, or e.g. "<model_config dict>"
};

// Reads the file at `path` with the checks every config file gets (size, syntax, keys given twice), reads it as
// `kind` (every field type-checked, unknown keys refused, as load_*_file) and returns the object as compact JSON
// text. Throws common::ConfigError naming `path` and the field at fault.
std::string read_config_json(ConfigKind kind, const std::string& path);

// Each text parsed and read as its kind; `check` also runs check_scenario (the cross-field rules). The paths of
// the scenario are the labels; `name` its name. Without a strategy text the strategy is StrategyConfig's
// defaults (labelled "(SimuMax default strategy)"; for a search base, never checked). Throws
// common::ConfigError naming the label and the field.
Scenario scenario_from_texts(const ConfigText& model, const std::optional<ConfigText>& strategy,
                             const ConfigText& system, const std::string& name, bool check);

}  // namespace simumax::config
