// Options shared by the subcommands: where the configs come from, and how the engine runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

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
  std::string fidelity;  // empty: the strategy's "fidelity" (default megatron)
  double max_tasks = RunOptions{}.max_tasks;
};

void add_config_options(CLI::App& sub, ConfigArgs& a);
void add_engine_options(CLI::App& sub, EngineArgs& a);

// A scenario file, or the three --model/--strategy/--system files. Throws UsageError when neither is complete.
config::Scenario load_scenario_or_configs(const std::string& scenario, const ConfigArgs& a);
RunOptions make_run_options(const EngineArgs& a);
// Every *.json under each folder (recursively) and each file given, sorted. Throws UsageError for a missing path.
std::vector<std::string> case_files(const std::vector<std::string>& paths);
// The shared/ folder validation cases name their system_file from: $SIMUMAX_SHARED_DIR, else ../shared.
std::string default_shared_dir();

// --fidelity: the option (its help text) and, when given (non-empty), its effect: it replaces the strategy's key.
void add_fidelity_option(CLI::App& sub, std::string& fidelity);
void apply_fidelity(config::Scenario& s, const std::string& fidelity);

}  // namespace simumax::tools
