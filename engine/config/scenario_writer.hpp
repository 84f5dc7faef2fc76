// A scenario file written (the inverse of load_scenario, beside it): what `search` writes for its winner and for each
// candidate it re-checks on SimGrid.
#pragma once

#include <string>

#include "engine/config/strategy_config.hpp"

namespace simumax::config {

// A scenario file whose strategy is inline.
struct ScenarioFile {
  std::string name;
  std::string description;  // "" = no "description" key
  std::string model;        // path as written: relative to the scenario file's folder, or absolute
  std::string system;
  std::string base_strategy_file;  // the inline strategy starts as this SimuMax strategy file's object; "" = {}
  StrategyConfig strategy;         // then the layout keys (strategy_layout_keys) are set from it, added or replaced
  bool recompute_keys = true;      // and the recompute keys; false keeps the base file's
};

// The scenario file's text (two-space indent, keys in the order name, description, model, strategy, system; the
// base strategy's keys keep their order). load_scenario of it gives back `strategy`'s values of the keys written
// (scenario_writer_test checks every one). REQUIRES: base_strategy_file, when given, is a readable JSON object (it
// was loaded before). Throws common::ConfigError naming it when it is not.
std::string scenario_file_json(const ScenarioFile& f);

}  // namespace simumax::config
