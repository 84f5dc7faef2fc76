// The simumax-sim subcommands: each registers its options on the CLI app and runs after parsing.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace simumax::tools {

// Each returns the action of its subcommand: the exit code, or -1 when another subcommand was chosen.
std::function<int()> add_run(CLI::App& app);
std::function<int()> add_validate(CLI::App& app);
std::function<int()> add_calibrate(CLI::App& app);
std::function<int()> add_platform(CLI::App& app);
std::function<int()> add_bench(CLI::App& app, const char* argv0);
std::function<int()> add_compare(CLI::App& app);
std::function<int()> add_search(CLI::App& app, const char* argv0);
std::function<int()> add_report(CLI::App& app);
std::function<int()> add_serve(CLI::App& app);

}  // namespace simumax::tools
