// Options shared by the subcommands: where the configs come from, and how the engine runs.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "engine/config/scenario.hpp"
#include "engine/simulate.hpp"

namespace simumax::tools {

struct ConfigArgs {
  std::string model, strategy, system;
};

struct EngineArgs {
  std::string executor = "fast";
  std::string granularity = "layer";
  std::string ranks = "stages";
  std::string platform;
};

void add_config_options(CLI::App& sub, ConfigArgs& a);
void add_engine_options(CLI::App& sub, EngineArgs& a);

// A scenario file, or the three --model/--strategy/--system files. Throws UsageError when neither is complete.
config::Scenario load_scenario_or_configs(const std::string& scenario, const ConfigArgs& a);
RunOptions make_run_options(const EngineArgs& a);

}  // namespace simumax::tools
