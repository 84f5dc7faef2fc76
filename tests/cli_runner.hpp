// Runs the simumax-sim binary as a subprocess (one simulation per process) and captures what it prints.
#pragma once

#include <string>
#include <vector>

namespace simumax::tests {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the program at path `exe` with `args` (argv[1..]) and waits for it.
CliResult run_program(const std::string& exe, const std::vector<std::string>& args);

// run_program of the built simumax-sim. REQUIRES: SIMUMAX_CLI is defined to its path.
CliResult run_cli(const std::vector<std::string>& args);

// Starts the built simumax-sim with `args` in the background, its stderr to the file `err_path` (stdout kept),
// and returns its pid (-1 when it could not be started); the caller signals it and waits for it.
int spawn_cli(const std::vector<std::string>& args, const std::string& err_path);

std::string read_file(const std::string& path);

// The rows of a CSV text (RFC 4180: a quoted field may hold commas, doubled quotes and newlines), header included.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// The scenario files under <source_root>/scenarios/validation, as paths relative to <source_root>/scenarios, sorted
// (the parameters of the tests that run every validation scenario).
std::vector<std::string> validation_scenarios(const std::string& source_root);

}  // namespace simumax::tests
