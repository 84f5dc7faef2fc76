// Options shared by the subcommands: where the configs come from, and how the engine runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/config/scenario.hpp"
#include "engine/report/run_outputs.hpp"
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
// --trace, --trace-ranks, --trace-max-mb, --trace-format, --max-output-mb, --simumax-outputs and --memory.
void add_output_options(CLI::App& sub, report::RunOutputOptions& a);

// A scenario file, or the three --model/--strategy/--system files. Throws UsageError when neither is complete.
config::Scenario load_scenario_or_configs(const std::string& scenario, const ConfigArgs& a);
RunOptions make_run_options(const EngineArgs& a);
// Every *.json under each folder (recursively) and each file given, sorted. Throws UsageError for a missing path.
std::vector<std::string> case_files(const std::vector<std::string>& paths);
// The shared/ folder validation cases name their system_file from: $SIMUMAX_SHARED_DIR, else ../shared.
std::string default_shared_dir();

// Every command's -o behaves alike: an output folder is created (with its parents) before any work, and a
// path that is an existing file, or that cannot be created, is a UsageError (exit 2) naming the option.
void make_output_folder(const std::string& dir, const char* option = "-o");
// An output file: not an existing folder, and its folder exists or is created. Throws UsageError otherwise.
void check_output_file(const std::string& path, const char* option = "-o");

// --fidelity: the option (its help text) and, when given (non-empty), its effect: it replaces the strategy's key.
void add_fidelity_option(CLI::App& sub, std::string& fidelity);
void apply_fidelity(config::Scenario& s, const std::string& fidelity);

}  // namespace simumax::tools
