// The simumax-sim subcommands: each registers its options on the CLI app and runs after parsing.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace simumax::tools {

// The exit code of `run --require-fit` when a stage does not fit in GPU memory: distinct from 2 (bad input) and
// 3 (our bug).
inline constexpr int kExitDoesNotFit = 4;

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
std::function<int()> add_sweep(CLI::App& app);
// `completion bash|zsh` and `man`: scripts and the man page from `app`'s commands and options (add it last).
std::function<int()> add_completion(CLI::App& app);

// The kernel class table compare and calibrate --trace use by default: $SIMUMAX_KERNEL_CLASSES, else the source
// tree's data/kernel_classes.json.
std::string default_kernel_classes();

}  // namespace simumax::tools
