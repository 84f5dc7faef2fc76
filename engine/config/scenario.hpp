// A scenario: the three SimuMax configs (+ optional platform XML) that one run reads, loaded and checked.
#pragma once

#include <optional>
#include <string>

#include "engine/config/config_origin.hpp"
#include "engine/config/model_config.hpp"
#include "engine/config/strategy_config.hpp"
#include "engine/config/system_config.hpp"

namespace simumax::config {

struct Scenario {
  std::string name;             // scenario "name", or the scenario file's stem
  std::string scenario_path;    // empty when built from --model/--strategy/--system
  std::string model_path;       // the file each config was read from (the scenario file when inline)
  std::string strategy_path;
  std::string system_path;
  std::optional<std::string> platform_path;  // user platform XML
  ModelConfig model;
  StrategyConfig strategy;
  SystemConfig system;
  // Where each config came from (a file, an inline object, overridden keys), for error messages.
  ConfigOrigin model_origin;
  ConfigOrigin strategy_origin;
  ConfigOrigin system_origin;
};

// Reads a scenario file (JSON): {"name"?, "description"?, "model": path or inline object, "strategy": ...,
// "system": ..., "platform"?: path, "model_overrides"?: {...}, "strategy_overrides"?: {...}}.
// Paths are relative to the scenario file's folder; a path starting with "${SHARED}/" is relative to
// shared_dir() (an error if there is none). Overrides replace
// top-level keys of the loaded model / strategy JSON before it is read. Keys starting with '_' are comments
// (in every file this stage reads). `name` defaults to the scenario file's stem. Runs check_scenario.
// Throws common::ConfigError naming the file and field (an override's error names the scenario file and
// "/strategy_overrides/<key>").
Scenario load_scenario(const std::string& path);
// The same from JSON text that came from `label` (errors name it; relative paths are relative to its folder, the
// working directory when it has none): a scenario built in memory, e.g. a Python dict.
Scenario load_scenario_text(const std::string& text, const std::string& label);

// The shared/ folder that "${SHARED}/" in a scenario and the validation cases' system_file refer to, one rule
// for every command: $SIMUMAX_SHARED_DIR when set (not empty), else ../shared when it is a folder (from the
// current folder: the checkout's sibling when run from the repository root), else nullopt.
std::optional<std::string> shared_dir();

// Same, from three config files directly (no scenario file); `name` is "<model stem>_<strategy stem>".
// Runs check_scenario.
Scenario load_configs(const std::string& model_path, const std::string& strategy_path,
                      const std::string& system_path);

// Each file alone (for tests and tools); no cross-field checks. Throw ConfigError.
ModelConfig load_model_file(const std::string& path);
StrategyConfig load_strategy_file(const std::string& path);
SystemConfig load_system_file(const std::string& path);
// A system config's JSON text that came from `label` (errors name it): a config built in memory, e.g. the one
// `calibrate --trace` learnt before its step times are fitted on it.
SystemConfig load_system_text(const std::string& text, const std::string& label);

// Cross-field rules over the three configs: divisibility, group sizes, layer split, legal schedules.
// Throws ConfigError naming the strategy (or model) file and the field at fault, with the fix.
void check_scenario(const Scenario& s);

}  // namespace simumax::config
