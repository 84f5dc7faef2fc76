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

// REQUIRES: SIMUMAX_CLI is defined to the path of the built simumax-sim.
CliResult run_cli(const std::vector<std::string>& args);

std::string read_file(const std::string& path);

}  // namespace simumax::tests
