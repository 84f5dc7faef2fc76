// The 4,096- and 16,384-GPU lines of `simumax-sim bench`: every rank of a Llama3-70B step on a rail-optimised
// fat-tree.
#pragma once

#include <string>

namespace simumax::tools {

// Writes the rail-optimised platform of `scenario`'s system for its world size (`oversubscription` at the spine,
// 1: full bisection) to a temporary file, runs `self run <scenario> --executor sim --ranks all --platform <it>`
// as a child process and prints its wall time and peak resident memory against the targets (`target_s`
// seconds, `target_gb` GB). Prints only; asserts nothing. Throws common::UsageError if the child fails.
void bench_rail_fabric(const std::string& self, const std::string& scenario, const std::string& out_dir,
                       double target_s, double target_gb, double oversubscription = 1);

}  // namespace simumax::tools
