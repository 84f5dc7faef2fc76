// Private to engine/config: SimuMax's three readers over parsed JSON, shared by the file loaders, the
// scenario loader and the validation-case / grid readers. Each throws ConfigError located by `origin`.
#pragma once

#include "engine/config/json_reader.hpp"
#include "engine/config/model_config.hpp"
#include "engine/config/scenario.hpp"
#include "engine/config/strategy_config.hpp"
#include "engine/config/system_config.hpp"

namespace simumax::config::detail {

// SimuMax's ModelConfig fields and defaults; unknown keys are errors (SimuMax raises TypeError).
ModelConfig parse_model(const Json& json, const ConfigOrigin& origin);
// SimuMax's StrategyConfig fields and defaults, with sanity_check's side effects applied
// (the VPP group default, recompute_variance off under full_block, all2all-seq -> all2all).
StrategyConfig parse_strategy(const Json& json, const ConfigOrigin& origin);
// SimuMax's SystemConfig.init_from_dict: unknown keys inside op / bandwidth entries are errors, unknown keys
// at the top level, in "accelerator" and in a network are warnings (SimuMax ignores them).
SystemConfig parse_system(const Json& json, const ConfigOrigin& origin);

// A scenario document read up to its three configs' JSON, the scenario's own overrides applied, not yet parsed:
// what a sweep edits before each case is read.
struct ScenarioDocument {
  Scenario scenario;  // name, paths, platform and origins; the three configs still default
  Json model, strategy, system;
};
// `path` names the document in errors; relative paths inside it are relative to its folder. Throws ConfigError.
ScenarioDocument read_scenario_document(const Json& doc, const std::string& path);
// The three configs parsed into a copy of d.scenario, then check_scenario. Throws ConfigError.
Scenario parse_scenario_document(const ScenarioDocument& d);

}  // namespace simumax::config::detail
